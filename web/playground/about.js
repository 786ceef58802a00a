// The line under the control bar that says what is on screen. While the state is
// still its preset's, that is the preset's own description (which may promise
// something, e.g. that the weights reproduce the tutorial's numbers); after an
// edit it names what changed from the preset and describes the setting shown now,
// so it never vouches for numbers that are no longer there. No DOM.
import { fixed } from '../ui/format.js';
import { POSITION_NAMES } from '../ui/positions.js';
import { PRESETS } from './presets.js';
import { PARAMS, dims, fromPreset, generatedParam, scoreName } from './state.js';

// The preset states compared against, by preset and data seed (one or two are in use at a time).
const made = new Map();
function presetState(id, seed) {
  const key = `${id}|${seed}`;
  if (!made.has(key)) {
    if (made.size > 8) made.clear();
    made.set(key, fromPreset(id, seed));
  }
  return made.get(key);
}

// The seeded parameter matrices, read only here (generatedParam hands out a fresh copy per call).
const seeded = new Map();
function seededParam(s, name) {
  const key = `${name}|${s.paramSeed}|${PARAMS[name].shape(s).join('x')}`;
  if (!seeded.has(key)) {
    if (seeded.size > 32) seeded.clear();
    seeded.set(key, generatedParam(s, name));
  }
  return seeded.get(key);
}

const sameMatrix = (a, b) => a.length === b.length && a.every((row, i) => row.length === b[i].length && row.every((v, j) => v === b[i][j]));
const count = (n, one, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
const NORM = { softmax: 'softmax', sum: 'the naive sum' };
const MODE = { attend: 'scoring functions', self: 'self-attention' };
const MASK = { none: 'no mask', causal: 'a causal mask', padding: 'a padding mask' };

// The parameter matrices the current setting reads (its own grids, which a preset seeds).
function paramsInUse(s) {
  if (s.mode === 'self') return s.trainable ? ['wq', 'wk', 'wv', 'wo'] : [];
  return { general: ['W'], additive: ['Wq', 'Wk', 'v'], location: ['L'] }[s.score] ?? [];
}
const PARAM_LABEL = { W: 'W', Wq: 'Wq', Wk: 'Wk', v: 'v', L: 'the location W', wq: 'Wq', wk: 'Wk', wv: 'Wv', wo: 'Wo' };

/** What differs from the preset p, in a learner's words (first the options, then the data). */
export function changesFrom(s, p) {
  const out = [];
  const was = (what, a, b) => out.push(`${what}: ${a} → ${b}`);
  if (s.mode !== p.mode) was('mode', MODE[p.mode], MODE[s.mode]);
  if (s.score !== p.score) was('score', scoreName(p.score), scoreName(s.score));
  if (s.mode === 'attend' && s.normalize !== p.normalize) was('normalisation', NORM[p.normalize], NORM[s.normalize]);
  if (s.mode === 'attend' && s.normalize === 'softmax' && s.temperature !== p.temperature) was('τ', fixed(p.temperature, 2), fixed(s.temperature, 2));
  if (s.mask !== p.mask) was('mask', p.mask, s.mask);
  else if (s.mask === 'padding' && s.padLength !== p.padLength) was('L', p.padLength, s.padLength);
  if (s.mode === 'self' && s.heads !== p.heads) was('h', p.heads, s.heads);
  if (s.mode === 'self' && s.positions !== p.positions) was('positions', POSITION_NAMES[p.positions], POSITION_NAMES[s.positions]);
  if (s.mode === 'self' && s.trainable !== p.trainable) out.push(s.trainable ? 'trainable projections on' : 'no projections (Q = K = V = X)');
  if (s.compare !== p.compare) out.push(s.compare === 'none' ? 'no comparison' : `compared with ${scoreName(s.compare)}`);
  if (s.mode === 'attend' && s.score === 'additive' && s.hidden !== p.hidden) was('dₐ', p.hidden, s.hidden);
  if (s.mode === 'attend' && s.score === 'cosine' && s.beta !== p.beta) was('β', p.beta, s.beta);

  const n = s.tokens.length;
  const d = dims(s);
  if (n !== p.tokens.length) was('tokens', p.tokens.length, n);
  if (d !== dims(p)) was('dims', dims(p), d);
  if (n === p.tokens.length) {
    const renamed = s.tokens.filter((t, i) => t !== p.tokens[i]).length;
    if (renamed) out.push(`${count(renamed, 'token')} renamed`);
  }
  if (n === p.tokens.length && d === dims(p)) {
    let edited = 0;
    for (let i = 0; i < n; i++) for (let j = 0; j < d; j++) if (s.x[i][j] !== p.x[i][j]) edited++;
    if (edited) out.push(`${count(edited, 'embedding value')} edited`);
  }
  if (s.paramSeed !== p.paramSeed) was('parameter seed', p.paramSeed, s.paramSeed);
  const edited = paramsInUse(s).filter((name) => !sameMatrix(Array.isArray(s[name][0]) ? s[name] : [s[name]], seededParam(s, name)));
  if (edited.length) out.push(`${edited.map((name) => PARAM_LABEL[name]).join(', ')} edited`);
  return out;
}

/** The setting on screen, in one sentence (a comparison has its own cards, which name it). */
export function settingNow(s) {
  const size = `${count(s.tokens.length, 'token')} × ${count(dims(s), 'dim')}`;
  const mask = s.mask === 'padding' ? `${MASK.padding} (${s.padLength ? `keys 0…${s.padLength - 1}` : 'no keys'})` : MASK[s.mask];
  if (s.mode === 'self') {
    const proj = s.trainable ? 'Q = XWq, K = XWk, V = XWv' : 'Q = K = V = X';
    const heads = s.heads === 1 ? 'one head' : `h = ${s.heads} heads of width ${dims(s) / s.heads}`;
    return `Now: self-attention over ${size}, ${proj}, ${heads}, ${POSITION_NAMES[s.positions]}, ${scoreName(s.score)} scores, softmax, ${mask}.`;
  }
  const norm = s.normalize === 'sum' ? 'the naive sum e / Σe' : `softmax at τ = ${fixed(s.temperature, 2)}`;
  return `Now: ${scoreName(s.score)} scores of ${size} (q = k = v = x), ${norm}, ${mask}.`;
}

/** The description of state s: its preset's while unchanged, else what changed and what is shown. */
export function describeState(s) {
  const preset = PRESETS[s.preset];
  // another data seed is another draw of the same preset, not a change to it
  const changes = changesFrom(s, presetState(s.preset, s.dataSeed));
  if (!changes.length) return preset.about;
  const shown = changes.length > 4 ? [...changes.slice(0, 4), `${changes.length - 4} more`] : changes;
  return `Changed from the preset ${preset.name}: ${shown.join('; ')}. ${settingNow(s)}`;
}
