// Engine calls: turns the state into every step's matrices through the WASM
// engine (attend or selfAttention, with positions from positions.js). Synchronous, no DOM.
import { selfAttentionWith } from '../ui/positions.js';

/** Nested rows -> the engine's { rows, cols, data }. */
export function toMatrix(rows) {
  const r = rows.length;
  const c = rows[0].length;
  const data = new Float32Array(r * c);
  // a plain loop: TypedArray.set from a JS array of mixed small integers and doubles takes
  // V8's slow path (~0.2 µs a value, 0.8 ms for 64 × 64 on every edit)
  for (let i = 0, p = 0; i < r; i++) {
    const row = rows[i];
    for (let j = 0; j < c; j++, p++) data[p] = row[j];
  }
  return { rows: r, cols: c, data };
}

function scoreParams(s, score) {
  switch (score) {
    case 'general': return { W: s.W };
    case 'additive': return { Wq: s.Wq, Wk: s.Wk, v: s.v };
    case 'cosine': return { beta: s.beta };
    case 'location': return { W: s.L };
    default: return undefined;
  }
}

function maskOption(s) {
  if (s.mask === 'causal') return 'causal';
  if (s.mask === 'padding') return { keyLengths: new Array(s.tokens.length).fill(s.padLength) };
  return 'none';
}

/** engine.attend over the embeddings (queries = keys = values = X) with score `score`. */
function attendWith(engine, s, X, score, outputs) {
  return engine.attend({
    queries: X, keys: X, values: X, score, params: scoreParams(s, score),
    normalize: s.normalize, mask: maskOption(s), outputs,
    // the temperature divides softmax's exponent; the naive sum has none
    ...(s.normalize === 'softmax' ? { temperature: s.temperature } : {}),
  });
}

/**
 * The range of the weights of a naive-sum row set when its scores have mixed signs
 * ({ lo, hi }), or null when every row's finite scores share one sign: e / Σe is only
 * a distribution for scores of one sign, which is the tutorial's case.
 */
export function mixedSignRange(scores, weights) {
  const { rows, cols } = scores;
  let mixed = false;
  for (let i = 0; i < rows && !mixed; i++) {
    let pos = false;
    let neg = false;
    for (let j = 0; j < cols; j++) {
      const e = scores.data[i * cols + j];
      if (e > 0) pos = true;
      else if (e < 0 && e !== -Infinity) neg = true;
    }
    mixed = pos && neg;
  }
  if (!mixed) return null;
  let lo = Infinity;
  let hi = -Infinity;
  for (const w of weights.data) { if (w < lo) lo = w; if (w > hi) hi = w; }
  return { lo, hi };
}

/**
 * Every step for the state: { mode, q, k, v, scores: [per head], weights: [per head],
 * context, output (self-attention with W: Z·Wo, else null), headSize, term (self-attention with
 * positions: [per head] what they add to the scores, else null),
 * compare?: { weights, diff } (of the enlarged head) }. Throws the engine's AttnlabError.
 */
export function computeSteps(engine, s) {
  const X = toMatrix(s.x);
  let r;
  if (s.mode === 'self') {
    const sa = selfAttentionWith(engine, {
      x: X, heads: s.heads, causal: s.mask === 'causal', score: s.score,
      ...(s.trainable ? { wq: s.wq, wk: s.wk, wv: s.wv, wo: s.wo } : {}),
    }, s.positions);
    r = {
      mode: 'self', x: X, q: sa.q, k: sa.k, v: sa.v, scores: sa.scores, weights: sa.weights, context: sa.context,
      output: s.trainable ? sa.output : null, headSize: sa.q.cols / s.heads, term: sa.term,
    };
  } else {
    const a = attendWith(engine, s, X, s.score);
    r = { mode: 'attend', x: X, q: X, k: X, v: X, scores: [a.scores], weights: [a.weights], context: a.context, output: null, headSize: X.cols };
  }
  if (s.compare !== 'none') r.compare = compareWith(engine, s, r);
  return r;
}

/** Columns [from, to) of a matrix (one head's slice of Q, K or V). */
function columns(m, from, to) {
  const w = to - from;
  const data = new Float32Array(m.rows * w);
  for (let i = 0; i < m.rows; i++) data.set(m.data.subarray(i * m.cols + from, i * m.cols + to), i * w);
  return { rows: m.rows, cols: w, data };
}

/**
 * The compare view: the weights the second score gives the same queries and keys, and their
 * difference from the first's. Scoring functions: the embeddings (q = k = v = x) with the same
 * normalisation, temperature and mask. Self-attention: the enlarged head's own slice of Q and K
 * (after the projections), softmax at τ = 1 and the same mask, as self-attention scores them.
 */
function compareWith(engine, s, r) {
  let weights;
  if (s.mode === 'self') {
    const lo = s.head * r.headSize;
    const hi = lo + r.headSize;
    ({ weights } = engine.attend({
      queries: columns(r.q, lo, hi), keys: columns(r.k, lo, hi), values: columns(r.v, lo, hi),
      score: s.compare, params: s.compare === 'cosine' ? { beta: 1 } : undefined,
      normalize: 'softmax', mask: s.mask === 'causal' ? 'causal' : 'none', outputs: ['weights'],
    }));
  } else {
    ({ weights } = attendWith(engine, s, r.x, s.compare, ['weights']));
  }
  const base = r.weights[s.mode === 'self' ? s.head : 0];
  const diff = new Float32Array(weights.data.length);
  for (let p = 0; p < diff.length; p++) diff[p] = weights.data[p] - base.data[p];
  return { weights, diff: { rows: weights.rows, cols: weights.cols, data: diff } };
}
