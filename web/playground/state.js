// The playground's state: one plain object described by a declarative table of
// properties (name, type, allowed values), plus the token list and matrices,
// whose shapes follow from n (tokens), d (dims) and h (additive hidden size).
// Everything here is validated; the URL hash and JSON import go through
// validate(), UI edits through the setters and fixup(). No DOM.
import { PRESETS, PRESET_IDS } from './presets.js';
import { randomMatrix, round } from './rng.js';

export const LIMITS = Object.freeze({ tokens: 128, dims: 64, name: 24, hidden: 64, heads: 16, value: 1000, seed: 2 ** 31 - 1 });
export const SCORES = ['dot', 'scaled_dot', 'general', 'additive', 'cosine', 'location'];
/** The scores engine.selfAttention supports. */
export const SELF_SCORES = ['dot', 'scaled_dot', 'cosine'];
export const SCORE_LABELS = {
  dot: 'Dot product', scaled_dot: 'Scaled dot product', general: 'General (bilinear)',
  additive: 'Additive (Bahdanau)', cosine: 'Cosine (Graves)', location: 'Location-based',
};

/** Scalar properties: name, type, allowed values or range, default. */
export const PROPS = [
  { name: 'preset', type: 'enum', values: PRESET_IDS, def: 'tutorial' },
  { name: 'dataSeed', type: 'int', min: 0, max: LIMITS.seed, def: 1 },
  { name: 'mode', type: 'enum', values: ['attend', 'self'], def: 'attend' },
  { name: 'score', type: 'enum', values: SCORES, def: 'dot' },
  { name: 'normalize', type: 'enum', values: ['softmax', 'sum'], def: 'softmax' },
  { name: 'temperature', type: 'number', min: 0.05, max: 20, def: 1 },
  { name: 'mask', type: 'enum', values: ['none', 'causal', 'padding'], def: 'none' },
  { name: 'padLength', type: 'int', min: 0, max: LIMITS.tokens, def: 3 },
  { name: 'paramSeed', type: 'int', min: 0, max: LIMITS.seed, def: 1 },
  { name: 'hidden', type: 'int', min: 1, max: LIMITS.hidden, def: 4 },
  { name: 'beta', type: 'number', min: -100, max: 100, def: 1 },
  { name: 'trainable', type: 'bool', def: false },
  { name: 'heads', type: 'int', min: 1, max: LIMITS.heads, def: 1 },
  { name: 'head', type: 'int', min: 0, max: LIMITS.heads - 1, def: 0 },
  { name: 'compare', type: 'enum', values: ['none', ...SCORES], def: 'none' },
  { name: 'px', type: 'int', min: 0, max: LIMITS.dims - 1, def: 0 },
  { name: 'py', type: 'int', min: 0, max: LIMITS.dims - 1, def: 1 },
];

/** Parameter matrices: name -> shape from the state, and the scale of their random initial values. */
export const PARAMS = {
  W: { shape: (s) => [dims(s), dims(s)], about: 'general: qᵀ W k (d × d)' },
  Wq: { shape: (s) => [s.hidden, dims(s)], about: 'additive: h × d' },
  Wk: { shape: (s) => [s.hidden, dims(s)], about: 'additive: h × d' },
  v: { shape: (s) => [1, s.hidden], about: 'additive: length h', vector: true },
  L: { shape: (s) => [s.tokens.length, dims(s)], about: 'location: W (n_k × d)' },
  wq: { shape: (s) => [dims(s), dims(s)], about: 'self-attention: Q = X·Wq (d × d)' },
  wk: { shape: (s) => [dims(s), dims(s)], about: 'self-attention: K = X·Wk (d × d)' },
  wv: { shape: (s) => [dims(s), dims(s)], about: 'self-attention: V = X·Wv (d × d)' },
};
export const PARAM_NAMES = Object.keys(PARAMS);

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

/** The seeded initial value of a parameter matrix (nested rows; a vector is one row). */
export function generatedParam(s, name) {
  const [rows, cols] = PARAMS[name].shape(s);
  const d = Math.max(1, dims(s));
  const scale = name === 'v' ? 1 : Math.min(1, 2 / Math.sqrt(d));
  return randomMatrix(s.paramSeed, name, rows, cols, { lo: -scale, hi: scale, places: 2 });
}

/** The heads that split width d evenly (up to the limit). */
export function headChoices(d) {
  return Array.from({ length: Math.min(d, LIMITS.heads) }, (_, i) => i + 1).filter((h) => d % h === 0);
}

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
    const m = s[name];
    if (!m || m.length !== rows || m[0]?.length !== cols) s[name] = resized(m, generatedParam(s, name));
  }
  if (s.mode === 'self') {
    if (!SELF_SCORES.includes(s.score)) s.score = 'dot';
    if (s.mask === 'padding') s.mask = 'none';
  }
  if (d % s.heads) s.heads = Math.max(...headChoices(d).filter((h) => h <= s.heads));
  s.head = Math.min(s.head, s.heads - 1);
  s.padLength = Math.min(s.padLength, n);
  s.px = Math.min(s.px, d - 1);
  s.py = Math.min(s.py, d - 1);
  return s;
}

/** A state from a preset (with `base`'s options where the preset sets none). */
export function fromPreset(id, dataSeed = 1, base = null) {
  const s = base ? { ...base } : Object.fromEntries(PROPS.map((p) => [p.name, p.def]));
  const { tokens, x, ...options } = PRESETS[id].make(dataSeed);
  Object.assign(s, { preset: id, dataSeed, tokens, x }, options);
  if (!base) s.py = Math.min(1, x[0].length - 1);
  for (const name of PARAM_NAMES) delete s[name];
  s.mode = options.mode ?? s.mode;
  if (s.mode === 'self') fixup(s);
  return fixup(s);
}

export const defaults = () => fromPreset('tutorial', 1);

const clone = (s) => JSON.parse(JSON.stringify(s));
export const copyState = clone;

function sameMatrix(a, b) {
  return a.length === b.length && a.every((r, i) => r.length === b[i].length && r.every((v, j) => v === b[i][j]));
}

/**
 * The compact form kept in links and files: every scalar property, and the
 * tokens, embeddings and parameters only where they differ from what the
 * preset and the seeds regenerate.
 */
// The seeded matrices serialize() compares against, kept for the last seeds and shapes
// (links are written several times a second while a user drags; regenerating is not free).
const seeded = new Map();
function memo(key, make) {
  if (!seeded.has(key)) {
    if (seeded.size > 64) seeded.clear();
    seeded.set(key, make());
  }
  return seeded.get(key);
}

export function serialize(s) {
  const out = { version: 1 };
  for (const p of PROPS) out[p.name] = s[p.name];
  const made = memo(`preset|${s.preset}|${s.dataSeed}`, () => PRESETS[s.preset].make(s.dataSeed));
  if (!(made.tokens.length === s.tokens.length && made.tokens.every((t, i) => t === s.tokens[i]))) out.tokens = s.tokens;
  if (!sameMatrix(made.x, s.x)) out.x = s.x;
  for (const name of PARAM_NAMES) {
    const fresh = memo(`${name}|${s.paramSeed}|${PARAMS[name].shape(s)}|${dims(s)}`, () => generatedParam(s, name));
    if (!sameMatrix(fresh, s[name])) out[name] = PARAMS[name].vector ? s[name][0] : s[name];
  }
  return out;
}

class StateError extends Error {}
const fail = (msg) => { throw new StateError(msg); };

function checkScalar(p, v) {
  const where = `“${p.name}”`;
  switch (p.type) {
    case 'enum': if (!p.values.includes(v)) fail(`${where} must be one of ${p.values.join(', ')}`); break;
    case 'bool': if (typeof v !== 'boolean') fail(`${where} must be true or false`); break;
    case 'int':
      if (!Number.isInteger(v) || v < p.min || v > p.max) fail(`${where} must be an integer from ${p.min} to ${p.max}`);
      break;
    default:
      if (typeof v !== 'number' || !Number.isFinite(v) || v < p.min || v > p.max) fail(`${where} must be a number from ${p.min} to ${p.max}`);
  }
  return v;
}

function checkMatrix(name, m, rows, cols) {
  if (!Array.isArray(m) || m.length !== rows) fail(`“${name}” must have ${rows} rows`);
  return m.map((row, i) => {
    if (!Array.isArray(row) || row.length !== cols) fail(`“${name}” row ${i + 1} must have ${cols} values`);
    return row.map((v, j) => {
      if (typeof v !== 'number' || !Number.isFinite(v) || Math.abs(v) > LIMITS.value) {
        fail(`“${name}”[${i + 1}][${j + 1}] must be a number between −${LIMITS.value} and ${LIMITS.value}`);
      }
      return round(v);
    });
  });
}

/**
 * Strictly validates an untrusted object (from a link or a file): types,
 * ranges, sizes and shapes. Missing fields take their defaults; a bad field
 * rejects the whole state. Returns { state } or { error }.
 */
export function validate(raw) {
  try {
    if (!raw || typeof raw !== 'object' || Array.isArray(raw)) fail('the state is not an object');
    if (raw.version !== 1) fail(`unknown state version ${String(JSON.stringify(raw.version)).slice(0, 20)} (expected 1)`);
    const s = {};
    for (const p of PROPS) s[p.name] = raw[p.name] === undefined ? p.def : checkScalar(p, raw[p.name]);
    const made = PRESETS[s.preset].make(s.dataSeed);
    const tokens = raw.tokens ?? made.tokens;
    if (!Array.isArray(tokens) || tokens.length < 1 || tokens.length > LIMITS.tokens) {
      fail(`“tokens” must be a list of 1 to ${LIMITS.tokens} names`);
    }
    tokens.forEach((t, i) => { const e = nameError(t); if (e) fail(`token ${i + 1} ${e}`); });
    s.tokens = [...tokens];
    const x = raw.x ?? made.x;
    const d = Array.isArray(x) && Array.isArray(x[0]) ? x[0].length : 0;
    if (d < 1 || d > LIMITS.dims) fail(`embeddings must have 1 to ${LIMITS.dims} dimensions`);
    s.x = checkMatrix('x', x, tokens.length, d);
    if (s.mode === 'self' && !SELF_SCORES.includes(s.score)) fail(`self-attention supports the scores ${SELF_SCORES.join(', ')}`);
    if (s.mode === 'self' && s.mask === 'padding') fail('self-attention supports the masks none and causal');
    if (d % s.heads) fail(`${s.heads} heads do not divide the ${d} dimensions`);
    if (s.head >= s.heads) fail(`head ${s.head + 1} does not exist (${s.heads} heads)`);
    if (s.padLength > tokens.length) fail(`padding length ${s.padLength} is past the ${tokens.length} tokens`);
    if (s.px >= d || s.py >= d) fail(`projection axes must be below ${d}`);
    for (const name of PARAM_NAMES) {
      const [rows, cols] = PARAMS[name].shape(s);
      if (raw[name] === undefined) s[name] = generatedParam(s, name);
      else s[name] = checkMatrix(name, PARAMS[name].vector ? [raw[name]] : raw[name], rows, cols);
    }
    return { state: s };
  } catch (err) {
    if (err instanceof StateError) return { error: err.message };
    throw err;
  }
}
