// Engine calls: turns the state into every step's matrices through the WASM
// engine (attend or selfAttention). Synchronous, no DOM.

/** Nested rows -> the engine's { rows, cols, data }. */
export function toMatrix(rows) {
  const r = rows.length;
  const c = rows[0].length;
  const data = new Float32Array(r * c);
  for (let i = 0; i < r; i++) data.set(rows[i], i * c);
  return { rows: r, cols: c, data };
}

function scoreParams(s, score) {
  switch (score) {
    case 'general': return { W: s.W };
    case 'additive': return { Wq: s.Wq, Wk: s.Wk, v: s.v[0] };
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
    normalize: s.normalize, temperature: s.temperature, mask: maskOption(s), outputs,
  });
}

/**
 * Every step for the state: { mode, q, k, v, scores: [per head], weights: [per head],
 * context, headSize, compare?: { weights, diff } }. Throws the engine's AttnlabError.
 */
export function computeSteps(engine, s) {
  const X = toMatrix(s.x);
  let r;
  if (s.mode === 'self') {
    const sa = engine.selfAttention({
      x: X, heads: s.heads, causal: s.mask === 'causal', score: s.score,
      ...(s.trainable ? { wq: s.wq, wk: s.wk, wv: s.wv } : {}),
    });
    r = { mode: 'self', x: X, q: sa.q, k: sa.k, v: sa.v, scores: sa.scores, weights: sa.weights, context: sa.context, headSize: sa.q.cols / s.heads };
  } else {
    const a = attendWith(engine, s, X, s.score);
    r = { mode: 'attend', x: X, q: X, k: X, v: X, scores: [a.scores], weights: [a.weights], context: a.context, headSize: X.cols };
  }
  if (s.compare !== 'none') r.compare = compareWith(engine, s, X, r.weights[s.mode === 'self' ? s.head : 0]);
  return r;
}

/** The compare view: weights under the second score (attend over X) and their difference from `base`. */
function compareWith(engine, s, X, base) {
  const { weights } = attendWith(engine, s, X, s.compare, ['weights']);
  const diff = new Float32Array(weights.data.length);
  for (let p = 0; p < diff.length; p++) diff[p] = weights.data[p] - base.data[p];
  return { weights, diff: { rows: weights.rows, cols: weights.cols, data: diff } };
}
