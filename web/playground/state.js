// The playground's state: one plain object described by a declarative table of
// properties (PROPS, read by the shared URL codec in ui/url-state.js), plus the
// rules that keep it consistent after an edit (fixup). Shapes follow from n
// (tokens), d (dims) and dₐ (the additive score's hidden size; h is the number of
// heads, as on every page). No DOM.
//
// Link format, version 2: "#ver=2&name=value&..." with only the fields that differ
// from what the preset and seeds give (matrices as "1,2;3,4", token names URL-encoded).
// Version 1 links ("#s=" + base64url JSON of every field) and version 1 JSON files are
// migrated (MIGRATIONS[1]); a bad field falls back to its default on its own.
import { createUrlState } from '../ui/url-state.js';
import { PRESETS, PRESET_IDS, presetOptions } from './presets.js';
import { POSITIONS } from '../ui/positions.js';
import { randomMatrix } from './rng.js';

export const LIMITS = Object.freeze({ tokens: 128, dims: 64, name: 24, hidden: 64, heads: 16, value: 1000, seed: 2 ** 31 - 1, from: 160 });
export const SCORES = ['dot', 'scaled_dot', 'general', 'additive', 'cosine', 'location'];
/** The scores engine.selfAttention supports. */
export const SELF_SCORES = ['dot', 'scaled_dot', 'cosine'];
export const SCORE_LABELS = {
  dot: 'Dot product', scaled_dot: 'Scaled dot product', general: 'General (bilinear)',
  additive: 'Additive (Bahdanau)', cosine: 'Cosine (Graves)', location: 'Location-based',
};

/** A score's label inside a sentence: “cosine (Graves)”. */
export const scoreName = (score) => SCORE_LABELS[score][0].toLowerCase() + SCORE_LABELS[score].slice(1);

export const dims = (s) => s.x[0]?.length ?? 0;

const NAME_RE = /^[^\u0000-\u001f\u007f<>]+$/u;
/** A token name is 1..24 characters of plain text (no control characters, no < or >). */
export function nameError(name) {
  if (typeof name !== 'string') return 'is not text';
  if (name !== '' && !NAME_RE.test(name)) return 'may not contain < > or control characters';
  const len = [...name].length;
  if (len < 1 || len > LIMITS.name) return `must be 1 to ${LIMITS.name} characters`;
  return null;
}

/** Parameter matrices: name -> shape from the state. */
export const PARAMS = {
  W: { shape: (s) => [dims(s), dims(s)], about: 'general: qᵀ W k (d × d)' },
  Wq: { shape: (s) => [s.hidden, dims(s)], about: 'additive: dₐ × d' },
  Wk: { shape: (s) => [s.hidden, dims(s)], about: 'additive: dₐ × d' },
  v: { shape: (s) => [1, s.hidden], about: 'additive: length dₐ', vector: true },
  L: { shape: (s) => [s.tokens.length, dims(s)], about: 'location: W (n_k × d)' },
  wq: { shape: (s) => [dims(s), dims(s)], about: 'self-attention: Q = X·Wq (d × d)' },
  wk: { shape: (s) => [dims(s), dims(s)], about: 'self-attention: K = X·Wk (d × d)' },
  wv: { shape: (s) => [dims(s), dims(s)], about: 'self-attention: V = X·Wv (d × d)' },
  wo: { shape: (s) => [dims(s), dims(s)], about: 'self-attention: O = Z·Wo (d × d)' },
};
export const PARAM_NAMES = Object.keys(PARAMS);

// Seeded matrices are regenerated often (defaults of a link, each link write); keep the last ones.
const seeded = new Map();
function memo(key, make) {
  if (!seeded.has(key)) {
    if (seeded.size > 96) seeded.clear();
    seeded.set(key, make());
  }
  return structuredClone(seeded.get(key));
}
const presetData = (id, seed) => memo(`preset|${id}|${seed}`, () => PRESETS[id].make(seed));

/** The seeded initial value of a parameter matrix (nested rows; a vector is one row). */
export function generatedParam(s, name) {
  const [rows, cols] = PARAMS[name].shape(s);
  return memo(`${name}|${s.paramSeed}|${rows}x${cols}`, () => {
    const scale = name === 'v' ? 1 : Math.min(1, 2 / Math.sqrt(Math.max(1, cols)));
    return randomMatrix(s.paramSeed, name, rows, cols, { lo: -scale, hi: scale, places: 2 });
  });
}

/** The heads that split width d evenly (up to the limit). */
export function headChoices(d) {
  return Array.from({ length: Math.min(d, LIMITS.heads) }, (_, i) => i + 1).filter((h) => d % h === 0);
}

/** The preset's embeddings, or seeded ones when a link's tokens are not the preset's count. */
function defaultX(s) {
  const made = presetData(s.preset, s.dataSeed);
  if (made.x.length === s.tokens.length) return made.x;
  return memo(`x|${s.dataSeed}|${s.tokens.length}x${made.x[0].length}`, () => randomMatrix(s.dataSeed, 'x', s.tokens.length, made.x[0].length));
}

// self-attention compares its own Q and K under a second score, so only a score it supports
const selfCompareError = (v, s) => (s.mode === 'self' && v !== 'none' && !SELF_SCORES.includes(v) ? `self-attention compares with ${SELF_SCORES.join(', ')}` : null);

const opt = (name) => (s) => presetOptions(s.preset)[name];
const shapeCheck = (name) => (m, s) => {
  const [rows, cols] = PARAMS[name].shape(s);
  if (m.length !== rows || m.some((r) => r.length !== cols)) return `must be ${rows} × ${cols}`;
  return null;
};

/** The declarative table: name, type, allowed values or range, default (read in this order). */
export const PROPS = [
  { name: 'preset', type: 'enum', values: PRESET_IDS, def: 'tutorial' },
  { name: 'dataSeed', type: 'int', min: 0, max: LIMITS.seed, def: 1 },
  { name: 'tokens', type: 'list', maxItems: LIMITS.tokens, item: nameError, def: (s) => presetData(s.preset, s.dataSeed).tokens },
  {
    name: 'x', type: 'matrix', max: LIMITS.value, def: defaultX,
    check: (m, s) => {
      const d = m[0]?.length ?? 0;
      if (d < 1 || d > LIMITS.dims) return `must have 1 to ${LIMITS.dims} dimensions`;
      if (m.length !== s.tokens.length || m.some((r) => r.length !== d)) return `must be ${s.tokens.length} rows of ${d} values`;
      return null;
    },
  },
  { name: 'mode', type: 'enum', values: ['attend', 'self'], def: opt('mode') },
  {
    name: 'score', type: 'enum', values: SCORES, def: (s) => (s.mode === 'self' && !SELF_SCORES.includes(opt('score')(s)) ? 'scaled_dot' : opt('score')(s)),
    check: (v, s) => (s.mode === 'self' && !SELF_SCORES.includes(v) ? `self-attention supports ${SELF_SCORES.join(', ')}` : null),
  },
  { name: 'normalize', type: 'enum', values: ['softmax', 'sum'], def: opt('normalize') },
  { name: 'temperature', type: 'number', min: 0.05, max: 20, def: opt('temperature') },
  {
    name: 'mask', type: 'enum', values: ['none', 'causal', 'padding'], def: (s) => (s.mode === 'self' && opt('mask')(s) === 'padding' ? 'none' : opt('mask')(s)),
    check: (v, s) => (s.mode === 'self' && v === 'padding' ? 'self-attention supports the masks none and causal' : null),
  },
  {
    name: 'padLength', type: 'int', min: 0, max: LIMITS.tokens, def: (s) => Math.min(opt('padLength')(s), s.tokens.length),
    check: (v, s) => (v > s.tokens.length ? `is past the ${s.tokens.length} tokens` : null),
  },
  { name: 'trainable', type: 'bool', def: opt('trainable') },
  {
    name: 'heads', type: 'int', min: 1, max: LIMITS.heads, def: (s) => (dims(s) % opt('heads')(s) ? 1 : opt('heads')(s)),
    check: (v, s) => (dims(s) % v ? `${v} heads do not divide the ${dims(s)} dimensions` : null),
  },
  { name: 'head', type: 'int', min: 0, max: LIMITS.heads - 1, def: 0, check: (v, s) => (v >= s.heads ? `there are ${s.heads} heads` : null) },
  // none by default, as the tutorial: self-attention alone does not know the order of its tokens
  { name: 'positions', type: 'enum', values: POSITIONS, def: 'none', check: (v, s) => (s.mode !== 'self' && v !== 'none' ? 'positions apply to self-attention only' : null) },
  {
    name: 'compare', type: 'enum', values: ['none', ...SCORES], def: (s) => (selfCompareError(opt('compare')(s), s) ? 'none' : opt('compare')(s)),
    check: (v, s) => selfCompareError(v, s),
  },
  { name: 'lock', type: 'bool', def: false },
  { name: 'hidden', type: 'int', min: 1, max: LIMITS.hidden, def: opt('hidden') },
  { name: 'beta', type: 'number', min: -100, max: 100, def: opt('beta') },
  { name: 'paramSeed', type: 'int', min: 0, max: LIMITS.seed, def: opt('paramSeed') },
  { name: 'px', type: 'int', min: 0, max: LIMITS.dims - 1, def: 0, check: (v, s) => (v >= dims(s) ? `must be below ${dims(s)}` : null) },
  { name: 'py', type: 'int', min: 0, max: LIMITS.dims - 1, def: (s) => Math.min(1, dims(s) - 1), check: (v, s) => (v >= dims(s) ? `must be below ${dims(s)}` : null) },
  ...PARAM_NAMES.map((name) => ({
    name, type: PARAMS[name].vector ? 'vector' : 'matrix', max: LIMITS.value,
    def: (s) => (PARAMS[name].vector ? generatedParam(s, name)[0] : generatedParam(s, name)),
    check: PARAMS[name].vector ? (v, s) => (v.length !== s.hidden ? `must have ${s.hidden} values` : null) : shapeCheck(name),
  })),
  // where the state came from, said over the figures as plain text (the lab's head: "layer 1, head 1 of the induction model, step 1,675")
  { name: 'from', type: 'string', maxLength: LIMITS.from, pattern: /^[^\u0000-\u001f\u007f<>]*$/u, def: '' },
];

function fromBase64Url(text) {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) throw new Error('the version 1 link is not base64url text');
  const bin = atob(text.replace(/-/g, '+').replace(/_/g, '/'));
  return new TextDecoder('utf-8', { fatal: true }).decode(Uint8Array.from(bin, (c) => c.charCodeAt(0)));
}

/**
 * Version 1 -> 2. A version 1 link is "#s=" + base64url(JSON of every field, version: 1);
 * a version 1 JSON file is that object. The field names and meanings carry over (padLength
 * was and is the number of visible keys L: keys 0…L − 1, positions counted from 0); Wo and lock are new and take their defaults.
 */
export const MIGRATIONS = {
  1: (entries) => {
    if (typeof entries.s !== 'string') return entries;
    let raw;
    try {
      raw = JSON.parse(fromBase64Url(decodeURIComponent(entries.s)));
    } catch {
      throw new Error('the version 1 link is not valid encoded JSON');
    }
    if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new Error('the version 1 link holds no state');
    const out = Object.assign(Object.create(null), raw);
    delete out.version;
    return out;
  },
};

export const codec = createUrlState({ version: 2, props: PROPS, migrations: MIGRATIONS, fix: (s) => fixup(s) });

/** A whole state from a preset (every option it promises) and a data seed. */
export function fromPreset(id, dataSeed = 1) {
  return codec.fromObject({ ver: 2, preset: id, dataSeed }).state;
}

export const defaults = () => fromPreset('tutorial', 1);

function resized(old, fresh) {
  if (!old) return fresh;
  return fresh.map((row, i) => row.map((v, j) => (old[i] && old[i][j] !== undefined ? old[i][j] : v)));
}

/**
 * Restores every invariant after a UI edit: parameter shapes follow n, d and h
 * (overlapping values kept, new ones seeded), options fit the mode and sizes.
 */
export function fixup(s) {
  const n = s.tokens.length;
  const d = dims(s);
  for (const name of PARAM_NAMES) {
    const [rows, cols] = PARAMS[name].shape(s);
    const m = PARAMS[name].vector && s[name] && !Array.isArray(s[name][0]) ? [s[name]] : s[name];
    const ok = m && m.length === rows && m.every((r) => r.length === cols);
    const next = ok ? m : resized(m, generatedParam(s, name));
    s[name] = PARAMS[name].vector ? next[0] : next;
  }
  if (s.mode === 'self') {
    if (!SELF_SCORES.includes(s.score)) s.score = 'scaled_dot';
    if (s.mask === 'padding') s.mask = 'none';
    if (selfCompareError(s.compare, s)) s.compare = 'none';
  } else {
    s.positions = 'none';
  }
  if (d % s.heads) s.heads = Math.max(...headChoices(d).filter((h) => h <= s.heads));
  s.head = Math.min(s.head, s.heads - 1);
  s.padLength = Math.min(s.padLength, n);
  s.px = Math.min(s.px, d - 1);
  s.py = Math.min(s.py, d - 1);
  return s;
}

/** Switching to self-attention starts from its standard form: scaled dot product, trainable W. */
export function enterMode(s, mode) {
  if (s.mode === mode) return;
  s.mode = mode;
  if (mode === 'self') {
    s.score = 'scaled_dot';
    s.trainable = true;
    if (s.mask === 'padding') s.mask = 'none';
    if (selfCompareError(s.compare, s)) s.compare = 'none';
  }
}

export const copyState = (s) => structuredClone(s);

/** The state as a plain object for a JSON file (every field; version 2). */
export function serialize(s) {
  const out = { ver: 2 };
  for (const p of PROPS) out[p.name] = s[p.name];
  return structuredClone(out);
}
