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
import { makeCommand } from '../lib/make.mjs';
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
  const [cmd, args] = makeCommand('lib');
  library ??= run('nice', [cmd, ...args], { cwd: ROOT, timeout: 600_000 })
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

// Sentences a fact-check corrected, held to the code and the measurements they quote.
describe('corrected facts stay correct', () => {
  const read = (file) => readFileSync(join(ROOT, file), 'utf8').replace(/\s+/g, ' ');
  const api = read('docs/api.md');
  const pages = read('docs/pages.md');
  const images = read('docs/images.md');
  test('api.md: the vision sample quotes the scaled-dot model’s 95.7%, not the dot model’s 96.3%', () => {
    assert.doesNotMatch(api, /1,450 steps reach 96%/);
    assert.doesNotMatch(api, /trained longer: 96\.3%/);
    assert.match(api, /createVisionModel\(\{ task: 'cluttered', attention: 'scaled_dot'/);
    assert.match(api, /wider and 3,500 steps: 95\.7% \(96\.3% with 'dot'\), docs\/images\.md/);
    // images.md: 96.3% is the dot model's (the target row), 95.7% the scaled-dot one's
    assert.match(images, /hidden 64, `attention: 'dot'`, 1 glimpse; 3,600 steps, peak lr 0\.004 \(the other columns: 3,500 steps, peak lr 0\.005, in rounds\) \| \*\*the defaults in one call 96\.0% \[95\.1, 96\.8\]\*\* \(2026-11-28\); earlier settings 96\.3%/);
    assert.match(images, /the same model with scaled-dot scores learned to read that mean too: it keeps 85% of its 95\.7%/);
  });
  test('api.md: the induction prose and table each name how many sequences their head scores are over', () => {
    const plot = readFileSync(join(ROOT, 'scripts/induction-plot.mjs'), 'utf8');
    const bench = readFileSync(join(ROOT, 'tests/bench/transformer.mjs'), 'utf8');
    const figure = Number(/const SCORE_COUNT = (\d+);/.exec(plot)[1]);
    const table = Number(/m\.headScores\(\{ count: (\d+) \}\)/.exec(bench)[1]);
    assert.match(api, new RegExp(`head scores on ${figure} sequences; numbers in \\[induction\\.json\\]`));
    assert.match(api, new RegExp(`head scores on ${table} sequences, so they may differ from the figure's`));
  });
  test('pages.md: ALiBi’s slopes by Press et al.’s rule, with what the playground does under 8 heads, and m for the slope', () => {
    assert.match(pages, /Press et al\. give head h of H \(h = 1 … H\) the slope m = 2\^\(−8h\/H\)/);
    assert.match(pages, /with 16 each slope is 1\/√2 of the one before/);
    assert.match(pages, /fewer heads take the first slopes of the 8-head set/);
    assert.doesNotMatch(pages, /−s·|slope s\b/);
    // api.md states the engine's rule, and the C code computes it for every head count
    assert.match(api, /head h, counted from 0, adds −m·\(i − j\) to its scores, with m = 2\^\(−8\(h \+ 1\)\/H\) for every head count H/);
    assert.match(readFileSync(join(ROOT, 'src/models/transformer.c'), 'utf8'), /m->slopes\[h\] = \(nn_real\)pow\(2\.0, -8\.0 \* \(h \+ 1\) \/ c->heads\);/);
  });
  test('pages.md: the lab\'s image settings, as the table has them, and why they are not the cluttered defaults', async () => {
    const { DEFAULTS, defaultsOf } = await import('../../web/engine/defaults.js');
    const base = DEFAULTS.vision.model;
    const s2s = DEFAULTS.seq2seq;
    const cluttered = defaultsOf('vision', { task: 'cluttered' });
    assert.ok(DEFAULTS.vision.lab.train.schedule === 'constant' && DEFAULTS.vision.lab.model.steps === 1);
    assert.match(pages, new RegExp(`the form starts from channels ${base.channels.join(', ')}, scaled-dot scores, and the text form's cell, hidden ${s2s.model.hidden}, lr ${s2s.train.lr} and batch ${s2s.model.batch}, and trains at that constant rate, one glimpse on a one-digit task`));
    assert.equal(base.attention, 'scaled_dot');
    assert.match(pages, new RegExp(`Those defaults \\(channels ${cluttered.model.channels.join(', ')}, unscaled dot, a warm-up and cosine over ${cluttered.train.steps.toLocaleString('en')} steps, two glimpses`));
    assert.equal(cluttered.model.attention, 'dot');
    assert.equal(defaultsOf('vision', { task: 'cluttered', mode: 'hard' }).model.steps, 2);
    // a task with a pretrained model opens on its recipe (models.json), in the lab's text and image families alike
    const { models } = JSON.parse(readFileSync(join(ROOT, 'web/models/models.json'), 'utf8'));
    for (const name of ['cluttered-soft', 'cluttered-hard']) {
      const m = models[name];
      assert.match(pages, new RegExp(`hidden ${m.options.hidden}, lr ${m.lr}, batch ${m.batch}, three glimpses`), name);
      assert.equal(m.options.steps, 3, name);
    }
    const reverse = models['reverse-attention'];
    assert.match(pages, new RegExp(`"trained ${reverse.steps.toLocaleString('en')} steps ahead of time \\(lr ${reverse.lr}, batch ${reverse.batch}\\)"`));
  });
  test('pages.md: each shipped model\'s recorded accuracy as models.json has it', () => {
    const { models } = JSON.parse(readFileSync(join(ROOT, 'web/models/models.json'), 'utf8'));
    const pct = (name, key = 'sequenceAccuracy') => `${(100 * models[name][key]).toFixed(1)}%`;
    const para = pages.slice(pages.indexOf('**Pretrained models.**'), pages.indexOf('**Code** (`web/learn/`)'));
    assert.match(para, new RegExp(`reverse with attention ${pct('reverse-attention')}, the bottleneck ${pct('reverse-bottleneck')}, dates ${pct('dates')}`));
    assert.match(para, new RegExp(`soft attention ${pct('cluttered-soft', 'accuracy')} and with hard attention ${pct('cluttered-hard', 'accuracy')}`));
    assert.match(para, new RegExp(`to ${pct('cluttered-retina', 'accuracy')}; the induction transformer ${pct('induction', 'accuracy')} of the scored positions`));
  });
  test('pages.md: the circuit and the logit lens cited; √d models as built; heads named from 0', () => {
    assert.match(pages, /Elhage et al\., 2021, “A Mathematical Framework for Transformer Circuits”/);
    assert.match(pages, /nostalgebraist, 2020, “interpreting GPT: the logit lens”/);
    assert.match(pages, /two attention-only layers of one head of width 64/);
    for (const file of ['README.md', 'docs/api.md', 'docs/pages.md']) {
      assert.doesNotMatch(read(file), /\bL\d H\d\b/, `${file}: heads are written L1H0, with no space`);
      assert.doesNotMatch(read(file), /layer \d's head/, `${file}: heads are written “layer 1, head 0”`);
    }
  });
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
