// The documentation keeps its word: every code sample in README.md, docs/*.md
// and the tests' READMEs runs, printing what its comments say it prints, and
// every relative link points at a file (and heading) that exists.
//  - ```js blocks run in a child Node process as ES modules importing
//    'attnlab' (a block without an import line first gets
//    `const engine = await loadEngine()`); each `console.log(...); // text`
//    is checked against `text` (tests/lib/doc-samples.mjs says how).
//  - ```c blocks are compiled against build/libattnlab.a (make lib) with the
//    public headers and run; the next ```text block is their whole output.
//  - ```sh blocks are commands to type (builds, servers, benches): not run,
//    listed in this test's output. ```text blocks are output and listings.
//  - `<!-- docs-test: needs engine.NAME -->` before a block skips it, as a
//    visible todo, while the engine has no method NAME.
//  - `<!-- docs-test: output of node ARGS -->` before a ```text block: that
//    command, run from the repository's root, prints the block.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { deserialize } from 'node:v8';
import { promisify } from 'node:util';
import { loadEngine } from '../../web/engine/index.js';
import { anchors, codeBlocks, links } from '../lib/markdown.mjs';
import { check, instrument } from '../lib/doc-samples.mjs';
import { checkerCases } from '../lib/doc-samples-cases.mjs';

const run = promisify(execFile);
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const OUT = join(ROOT, 'build/docs-samples');

const DOCS = ['README.md', 'tests/README.md', 'tests/bench/README.md', 'tests/bench/RESULTS.md',
  ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)]
  .filter((f) => existsSync(join(ROOT, f)));

const LANGS = new Set(['js', 'c', 'sh', 'text']);

const engine = await loadEngine({ threads: 1 });
/** Why a block is skipped for now (its marker names a method the engine lacks), or null. */
function missing(marker) {
  if (!marker || marker.startsWith('output of ')) return null;
  const needs = /^needs engine\.(\w+)$/.exec(marker);
  assert.ok(needs, `unknown docs-test marker "${marker}"`);
  return typeof engine[needs[1]] === 'function' ? null : `engine.${needs[1]} does not exist yet`;
}

// Records each console.log call as a line "\x01<line> <base64 of v8.serialize(args)>" on stdout.
const LOGGER = `import { serialize as __serialize } from 'node:v8';
import { inspect as __inspect } from 'node:util';
const __docsLog = (line, ...args) => {
  let bytes;
  try { bytes = __serialize(args); } catch { bytes = __serialize(args.map((a) => __inspect(a))); }
  process.stdout.write('\\u0001' + line + ' ' + bytes.toString('base64') + '\\n');
};
`;
const ENGINE = "import { loadEngine } from 'attnlab';\nconst engine = await loadEngine();\n";

async function runSample(file, block) {
  const { code, expectations } = instrument(block.code);
  const imports = /^import\s/m.test(block.code);
  const prelude = LOGGER + (imports ? '' : ENGINE);
  // the prelude on the sample's first line, so an error's line number is the sample's
  const source = `${prelude.replace(/\n/g, ' ')}${code}`;
  const path = join(OUT, `${file.replace(/[/.]/g, '_')}_${block.line}.mjs`);
  writeFileSync(path, source);
  let stdout;
  try {
    ({ stdout } = await run(process.execPath, [path], { cwd: ROOT, timeout: 180_000, maxBuffer: 64 << 20 }));
  } catch (err) {
    assert.fail(`${file}:${block.line}: the sample failed (${path}):\n${err.stderr || err.message}`);
  }
  const seen = new Set();
  for (const record of stdout.split('\n').filter((l) => l.startsWith('\u0001'))) {
    const [line, data] = record.slice(1).split(' ');
    const at = Number(line);
    seen.add(at);
    if (!expectations.has(at)) continue;
    const why = check(deserialize(Buffer.from(data, 'base64')), expectations.get(at));
    assert.equal(why, null, `${file}:${block.line + at - 1}: ${why}`);
  }
  for (const at of expectations.keys()) {
    assert.ok(seen.has(at), `${file}:${block.line + at - 1}: this console.log never ran`);
  }
  return expectations.size;
}

/** Builds build/libattnlab.a once; null when there is no C compiler. */
let library;
function buildLibrary() {
  library ??= run('nice', ['make', '-s', 'lib'], { cwd: ROOT, timeout: 600_000 })
    .then(() => join(ROOT, 'build/libattnlab.a'), (err) => {
      if (err.code === 'ENOENT' || /cc: (command )?not found|No such file/.test(err.stderr ?? '')) return null;
      throw err;
    });
  return library;
}

async function runC(t, file, block, expected) {
  const lib = await buildLibrary();
  if (!lib) return t.skip('no C compiler to build the library');
  const src = join(OUT, `${file.replace(/[/.]/g, '_')}_${block.line}.c`);
  const bin = src.replace(/\.c$/, '');
  writeFileSync(src, `${block.code}\n`);
  const cc = process.env.CC ?? 'cc';
  await run(cc, ['-std=c11', '-Wall', '-Wextra', '-Werror', `-I${join(ROOT, 'include')}`, src, lib, '-o', bin, '-lm']);
  const { stdout } = await run(bin, []);
  assert.equal(stdout.trimEnd(), expected.trimEnd(), `${file}:${block.line}: the program's output`);
}

mkdirSync(OUT, { recursive: true });
const shell = [];

for (const file of DOCS) {
  const text = readFileSync(join(ROOT, file), 'utf8');
  const blocks = codeBlocks(text);
  describe(`${file}: samples`, () => {
    blocks.forEach((block, i) => {
      if (!LANGS.has(block.lang)) {
        test(`line ${block.line}: a code block says what it is`, () => {
          assert.fail(`${file}:${block.line}: a \`\`\`${block.lang} block; use one of ${[...LANGS].join(', ')}`);
        });
        return;
      }
      if (block.lang === 'sh') shell.push(`${file}:${block.line}: ${block.code.split('\n')[0]}`);
      const command = /^output of (node \S+(?: \S+)*)$/.exec(block.marker ?? '');
      if (command) {
        test(`line ${block.line}: the output of ${command[1]}`, async () => {
          const [, ...args] = command[1].split(' ');
          const { stdout } = await run(process.execPath, args, { cwd: ROOT, timeout: 60_000 });
          assert.equal(stdout.trimEnd(), block.code.trimEnd(), `${file}:${block.line}`);
        });
        return;
      }
      if (block.lang !== 'js' && block.lang !== 'c') return;
      const todo = missing(block.marker);
      if (todo) {
        test(`${block.lang} sample at line ${block.line}`, { todo }, () => {});
        return;
      }
      if (block.lang === 'js') {
        test(`js sample at line ${block.line} prints what its comments say`, async (t) => {
          const checked = await runSample(file, block);
          t.diagnostic(`${checked} printed values checked`);
        });
      } else {
        const next = blocks[i + 1];
        test(`C sample at line ${block.line} prints the block after it`, async (t) => {
          assert.equal(next?.lang, 'text', `${file}:${block.line}: a C sample is followed by a \`\`\`text block of its output`);
          await runC(t, file, block, next.code);
        });
      }
    });
  });
}

test('shell blocks: commands to type, not run', (t) => {
  assert.ok(shell.length > 0, 'the README shows its two commands');
  for (const s of shell) t.diagnostic(s);
});

describe('relative links', () => {
  const anchorsOf = new Map();
  const anchorsIn = (path) => {
    if (!anchorsOf.has(path)) anchorsOf.set(path, anchors(readFileSync(path, 'utf8')));
    return anchorsOf.get(path);
  };
  for (const file of DOCS) {
    test(`${file}: every relative link and anchor exists`, () => {
      const here = join(ROOT, file);
      const broken = [];
      for (const { target, line } of links(readFileSync(here, 'utf8'))) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
        const [path, anchor] = target.split('#');
        const to = path ? resolve(dirname(here), decodeURIComponent(path)) : here;
        if (!to.startsWith(ROOT) || !existsSync(to)) {
          broken.push(`line ${line}: ${target} (no file ${relative(ROOT, to)})`);
        } else if (anchor !== undefined && (!statSync(to).isFile() || !to.endsWith('.md') || !anchorsIn(to).has(anchor))) {
          broken.push(`line ${line}: ${target} (no heading #${anchor} in ${relative(ROOT, to)})`);
        }
      }
      assert.deepEqual(broken, [], `${file}: broken links`);
    });
  }
});

// The checker itself: a wrong comment, a missing key, a broken link must each fail.
describe('the checker catches what it should', () => {
  for (const { args, comment, ok } of checkerCases) {
    test(`${ok ? 'accepts' : 'rejects'} ${comment}`, () => {
      const why = check(args, comment);
      if (ok) assert.equal(why, null);
      else assert.notEqual(why, null, 'a wrong comment must be reported');
    });
  }
  test('instrument: the comment of each console.log, continued by indented comment lines', () => {
    const { code, expectations } = instrument("const a = 1;\nconsole.log(a); // 1\nconsole.log(a, a);\n    // 1 1\n// prose\nconsole.log(2);");
    assert.deepEqual([...expectations], [[2, '1'], [3, '1 1']]);
    assert.match(code, /__docsLog\(6, 2\)/);
  });
  test('links and anchors: GitHub slugs, links outside code only', () => {
    const md = "# A `code` title: with, punctuation\n## Same\n## Same\n[x](a.md#b) `[y](no.md)`\n```text\n[z](no.md)\n```\n";
    assert.deepEqual([...anchors(md)], ['a-code-title-with-punctuation', 'same', 'same-1']);
    assert.deepEqual(links(md), [{ target: 'a.md#b', line: 4 }]);
    assert.deepEqual(codeBlocks(md).map((b) => [b.lang, b.line, b.code]), [['text', 6, '[z](no.md)']]);
  });
});
