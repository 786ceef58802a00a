// How a documentation sample says what it prints, and how the test checks it.
//
// A `console.log(...)` statement on one line, ending in `; // text`, declares
// that the call prints `text`; indented comment-only lines right below it
// continue `text` (a comment at the start of a line is prose). The sample runs with console.log replaced by a recorder that knows
// the line of each call, and each call's arguments are matched to the text:
//  - arguments that are all strings, numbers or booleans: the text is what
//    console.log prints (runs of spaces count as one; `...` or `…` stands for
//    anything);
//  - one object argument: the text is its shape, JS-like: `{ a, b: 2, ... }`
//    (key `a` present with any value, `b` matching 2; without `...` no other
//    key may be there), `[x, y, ...]`, `Float32Array(36)` (that type and
//    length), a bare type name, numbers (equal to the decimals written),
//    'strings', true, false, null, -Infinity.
import { format } from 'node:util';

/** Instruments a sample: console.log( -> __docsLog(<line>, ; returns { code, expectations: Map<line, text> }. */
export function instrument(code) {
  const lines = code.split('\n');
  const expectations = new Map();
  let last = -1; // the line of the console.log that comment-only lines continue
  const out = lines.map((line, i) => {
    const comment = /^\s+\/\/\s?(.*)$/.exec(line);
    if (comment && last >= 0) {
      if (expectations.has(last)) expectations.set(last, `${expectations.get(last)} ${comment[1]}`);
      else expectations.set(last, comment[1]);
      return line;
    }
    last = -1;
    if (!/^\s*console\.log\(/.test(line)) return line;
    last = i + 1;
    const said = /;\s*\/\/\s?(.*)$/.exec(line);
    if (said) expectations.set(last, said[1]);
    return line.replace('console.log(', `__docsLog(${last}, `);
  });
  return { code: out.join('\n'), expectations };
}

const squash = (s) => s.replace(/\s+/g, ' ').trim();
const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

function matchText(actual, expected) {
  const pattern = squash(expected).split(/\.\.\.|…/).map(escape).join('.*');
  return new RegExp(`^${pattern}$`, 's').test(squash(actual));
}

/** Parses a shape comment into a tree of { kind, ... } nodes. */
export function parseShape(text) {
  let at = 0;
  const space = () => { while (/\s/.test(text[at] ?? '')) at++; };
  const fail = (why) => { throw new Error(`shape comment "${text}": ${why} at ${at}`); };
  const eat = (s) => {
    space();
    if (text.startsWith(s, at)) { at += s.length; return true; }
    return false;
  };
  const word = () => {
    space();
    const m = /^[A-Za-z_$][\w$]*/.exec(text.slice(at));
    if (m) at += m[0].length;
    return m ? m[0] : null;
  };
  function list(close, item) {
    const items = [];
    let rest = false;
    while (!eat(close)) {
      if (items.length || rest) { if (!eat(',')) fail(`expected ',' or '${close}'`); if (eat(close)) break; }
      if (eat('...') || eat('…')) rest = true;
      else items.push(item());
    }
    return { items, rest };
  }
  function value() {
    space();
    if (eat('{')) {
      const { items, rest } = list('}', () => {
        const key = word() ?? fail('expected a key');
        return { key, shape: eat(':') ? value() : null };
      });
      return { kind: 'object', entries: items, rest };
    }
    if (eat('[')) {
      const { items, rest } = list(']', value);
      return { kind: 'array', items, rest };
    }
    if (eat("'")) {
      const end = text.indexOf("'", at);
      if (end < 0) fail('unclosed string');
      const s = text.slice(at, end);
      at = end + 1;
      return { kind: 'string', value: s };
    }
    const num = /^-?(\d+(\.\d+)?(e-?\d+)?|Infinity)/.exec(text.slice(at));
    if (num) {
      at += num[0].length;
      const decimals = num[2] && !num[3] ? num[2].length - 1 : 0;
      return { kind: 'number', value: Number(num[0]), decimals };
    }
    const w = word() ?? fail('expected a value');
    if (w === 'true' || w === 'false') return { kind: 'literal', value: w === 'true' };
    if (w === 'null' || w === 'undefined') return { kind: 'literal', value: w === 'null' ? null : undefined };
    if (w === 'NaN') return { kind: 'number', value: NaN, decimals: 0 };
    if (eat('(')) {
      const n = /^\d+/.exec(text.slice(at)) ?? fail('expected a length');
      at += n[0].length;
      if (!eat(')')) fail("expected ')'");
      return { kind: 'type', name: w, length: Number(n[0]) };
    }
    return { kind: 'type', name: w, length: null };
  }
  const shape = value();
  space();
  if (at !== text.length) fail('unexpected text');
  return shape;
}

const typeName = (v) => (v === null || typeof v !== 'object' ? typeof v : v.constructor?.name ?? 'Object');

/** Why `actual` does not have `shape`, or null when it does. `path` names the place. */
export function mismatch(actual, shape, path = 'value') {
  switch (shape.kind) {
    case 'number': {
      if (typeof actual !== 'number') return `${path} is ${typeName(actual)}, not a number`;
      if (Number.isNaN(shape.value)) return Number.isNaN(actual) ? null : `${path} is ${actual}, not NaN`;
      if (!Number.isFinite(shape.value)) return actual === shape.value ? null : `${path} is ${actual}, not ${shape.value}`;
      const tolerance = 0.5 * 10 ** -shape.decimals + 1e-12;
      return Math.abs(actual - shape.value) <= tolerance ? null : `${path} is ${actual}, not ${shape.value}`;
    }
    case 'string':
      return actual === shape.value ? null : `${path} is ${format('%o', actual)}, not '${shape.value}'`;
    case 'literal':
      return actual === shape.value ? null : `${path} is ${format('%o', actual)}, not ${shape.value}`;
    case 'type': {
      if (typeName(actual) !== shape.name) return `${path} is a ${typeName(actual)}, not a ${shape.name}`;
      if (shape.length !== null && actual.length !== shape.length) return `${path} has length ${actual.length}, not ${shape.length}`;
      return null;
    }
    case 'array': {
      if (!Array.isArray(actual)) return `${path} is ${typeName(actual)}, not an array`;
      if (shape.rest ? actual.length < shape.items.length : actual.length !== shape.items.length) {
        return `${path} has ${actual.length} items, not ${shape.rest ? 'at least ' : ''}${shape.items.length}`;
      }
      for (let i = 0; i < shape.items.length; i++) {
        const why = mismatch(actual[i], shape.items[i], `${path}[${i}]`);
        if (why) return why;
      }
      return null;
    }
    case 'object': {
      if (actual === null || typeof actual !== 'object') return `${path} is ${typeName(actual)}, not an object`;
      const keys = Object.keys(actual);
      for (const { key, shape: inner } of shape.entries) {
        if (!(key in actual)) return `${path} has no key '${key}' (it has ${keys.join(', ')})`;
        const why = inner ? mismatch(actual[key], inner, `${path}.${key}`) : null;
        if (why) return why;
      }
      const extra = keys.filter((k) => !shape.entries.some((e) => e.key === k));
      if (!shape.rest && extra.length) return `${path} has keys the comment does not show: ${extra.join(', ')}`;
      return null;
    }
    default:
      return `unknown shape ${shape.kind}`;
  }
}

/** Why one console.log call's arguments do not match its comment, or null. */
export function check(args, expected) {
  const plain = args.every((a) => ['string', 'number', 'boolean'].includes(typeof a) || a === null || a === undefined);
  if (plain) {
    const actual = format(...args);
    return matchText(actual, expected) ? null : `printed "${actual}", the comment says "${expected}"`;
  }
  if (args.length !== 1) return `printed ${args.length} values, one of them an object: show an object alone to check its shape`;
  const why = mismatch(args[0], parseShape(expected));
  return why ? `${why} (the comment says ${expected})` : null;
}
