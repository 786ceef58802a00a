// One source per fact (the house style's rule 11; issue 29): the optimiser's rules are defined once, in
// src/layers/optim.c (their enum in src/layers/optim.h), and every model, page, script and bench
// asks the engine for them instead of writing them again. This test reads the code of src/, web/,
// scripts/ and tests/bench/ (comments and string contents blanked, so a comment quoting a formula
// does not count) and fails when a fact has a second definition or lost its one:
//   - AdamW's update: its constants (ADAM_BETA1, ADAMW_BETA2, ADAM_EPS, ...);
//   - the weights' initial kinds (OptInit): the enum of OPT_INIT_ kinds, and the code that reads
//     a tensor's kind to draw its values (naming a kind to opt_add is using it, not defining it);
//   - the cosine learning-rate schedule: cos of pi times a progress fraction (`Math.cos(Math.PI * x)`
//     in JS; Box-Muller's cos(2 pi u) is another formula).
// ONE_DEFINITION_ROOT=dir checks another checkout (how this test was seen failing on the tree
// where scripts and benches computed their own cosine).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = process.env.ONE_DEFINITION_ROOT ? resolve(process.env.ONE_DEFINITION_ROOT) : fileURLToPath(new URL('../..', import.meta.url));
const DIRS = ['src', 'web', 'scripts', 'tests/bench'];
/** Built, downloaded or data folders: no code of ours. */
const SKIP = new Set(['web/wasm', 'web/vendor', 'web/data', 'web/models', 'node_modules', 'dist', 'build']);
const CODE = /\.(c|h|js|mjs|cjs)$/;

function* files(dir) {
  for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
    const path = `${dir}/${entry.name}`;
    if (SKIP.has(path) || SKIP.has(entry.name)) continue;
    if (entry.isDirectory()) yield* files(path);
    else if (entry.isFile() && CODE.test(entry.name)) yield path;
  }
}

/**
 * The text with every comment and the inside of every string, template and regular expression
 * literal replaced by spaces (newlines kept, so offsets keep their lines). C and JS alike; a `/`
 * starts a regular expression where an operand is expected (after an operator, a bracket or a
 * keyword such as return), as JS reads it.
 */
function codeOnly(text) {
  const out = text.split('');
  const blank = (from, to) => {
    for (let k = from; k < to; k++) if (out[k] !== '\n') out[k] = ' ';
  };
  let i = 0;
  let last = ''; // the last significant character outside comments, or a keyword's mark
  while (i < text.length) {
    const c = text[i], next = text[i + 1];
    if (c === '/' && next === '/') {
      const end = text.indexOf('\n', i);
      const stop = end < 0 ? text.length : end;
      blank(i, stop);
      i = stop;
    } else if (c === '/' && next === '*') {
      const end = text.indexOf('*/', i + 2);
      const stop = end < 0 ? text.length : end + 2;
      blank(i, stop);
      i = stop;
    } else if (c === '"' || c === "'" || c === '`' || (c === '/' && (last === '' || /[(,=:[!&|?{};+\-*%<>~^]|kw/.test(last)))) {
      let j = i + 1;
      let inClass = false;
      while (j < text.length) {
        const d = text[j];
        if (d === '\\') { j += 2; continue; }
        if (c === '/' && d === '[') inClass = true;
        else if (c === '/' && d === ']') inClass = false;
        else if (d === c && !inClass) break;
        else if (d === '\n' && c !== '`') break; // an unterminated line: stop there
        j++;
      }
      blank(i + 1, j);
      i = j + 1;
      last = 'x';
    } else {
      if (/\s/.test(c)) {
        i++;
        continue;
      }
      if (/[A-Za-z_$]/.test(c)) {
        let j = i;
        while (j < text.length && /[\w$]/.test(text[j])) j++;
        last = /^(return|typeof|case|in|of|delete|void|throw|new|else|do|yield|await)$/.test(text.slice(i, j)) ? 'kw' : 'x';
        i = j;
        continue;
      }
      last = c;
      i++;
    }
  }
  return out.join('');
}

const PI = String.raw`(?:M_PI|[A-Z_]*PI|3\.14159\d*)`;
/** Each fact: the pattern that defines it, and the files that must hold that definition, once each. */
const FACTS = [
  {
    fact: "AdamW's update (its constants)",
    pattern: /(?:#\s*define\s+|\b(?:const|let|var)\s+)ADAMW?_[A-Z0-9_]+\b/g,
    home: ['src/layers/optim.c'],
  },
  {
    fact: "AdamW's update (the code reading its constants)",
    pattern: /\bADAMW?_(?:BETA\d|EPS)\w*\b/g,
    home: ['src/layers/optim.c'],
  },
  {
    fact: 'the initial kinds of the weights (the OptInit enum)',
    pattern: /\benum\s*\w*\s*\{[^}]*\bOPT_INIT_\w+/g,
    home: ['src/layers/optim.h'],
  },
  {
    fact: 'the initial kinds of the weights (what each draws)',
    pattern: /(?:[!=]=\s*OPT_INIT_\w+|\bOPT_INIT_\w+\s*[!=]=|\bcase\s+OPT_INIT_\w+|\bswitch\s*\([^)]*\binit\b)/g,
    home: ['src/layers/optim.c'],
  },
  {
    fact: 'the cosine learning-rate schedule',
    pattern: new RegExp(String.raw`\bcosf?\s*\(\s*${PI}\s*\*|\bcosf?\s*\([^()]*\*\s*${PI}\s*\)|Math\.cos\(\s*Math\.PI\s*\*|Math\.cos\([^()]*\*\s*Math\.PI\s*\)`, 'g'),
    home: ['src/layers/optim.c'],
  },
];

const sources = DIRS.flatMap((d) => [...files(d)]).map((path) => {
  const text = readFileSync(join(ROOT, path), 'utf8');
  return { path, text, code: codeOnly(text) };
});

test('the scan reads the tree, and blanks comments and strings only', () => {
  assert.ok(sources.length > 100, `${sources.length} files under ${DIRS.join(', ')} (${relative(process.cwd(), ROOT) || '.'})`);
  const sample = [
    'const a = 1; // Math.cos(Math.PI * x)',
    '/* cos(M_PI * x) */ int b = 2;',
    "const s = 'Math.cos(Math.PI * x)', r = /Math.cos\\(Math.PI/g, t = `#define ADAM_EPS ${1}`;",
    'double c = x / y / z; return cos(3.14159 * f);',
    "const q = a / b; const u = 'http://x'; Math.cos(Math.PI * q);",
  ].join('\n');
  const code = codeOnly(sample).split('\n');
  assert.equal(code[0].trim(), 'const a = 1;');
  assert.equal(code[1].trim(), 'int b = 2;');
  assert.doesNotMatch(code[2], /cos|ADAM/);
  assert.match(code[3], /x \/ y \/ z; return cos\(3\.14159 \* f\);/);
  assert.match(code[4], /Math\.cos\(Math\.PI \* q\);$/);
  assert.equal(codeOnly(sample).length, sample.length);
});

for (const { fact, pattern, home } of FACTS) {
  test(`one definition: ${fact}, in ${home.join(', ')}`, () => {
    const found = [];
    for (const { path, text, code } of sources) {
      for (const m of code.matchAll(pattern)) {
        const line = code.slice(0, m.index).split('\n').length;
        found.push({ path, where: `${path}:${line}: ${text.split('\n')[line - 1].trim()}` });
      }
    }
    const where = found.map((f) => f.where).join('\n  ');
    const outside = found.filter((f) => !home.includes(f.path));
    assert.equal(outside.length, 0, `${fact} is defined again outside ${home.join(', ')} (ask the engine for it instead):\n  ${where}`);
    for (const path of home) assert.ok(found.some((f) => f.path === path), `${fact}: no definition left in ${path}`);
  });
}

test('one definition: the cosine is written once in its home, too', () => {
  const [cosine] = FACTS.filter((f) => f.fact.startsWith('the cosine'));
  const { code } = sources.find((s) => s.path === cosine.home[0]);
  assert.equal([...code.matchAll(cosine.pattern)].length, 1);
});
