// Float64 references for the attention engine's tests: scores, masks,
// softmax / sum normalisation, context and multi-head self-attention, written
// as the formulas read (row-major nested arrays, one token per row). Inputs
// are meant to be float32 values (Math.fround) so a comparison measures only
// the engine's float32 arithmetic.
export const dot = (a, b) => {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
};
export const norm = (a) => Math.sqrt(dot(a, a));
export const matvec = (W, x) => W.map((r) => dot(r, x)); // W x, W (m, n), x (n)
export const matmul = (A, B) => A.map((r) => B[0].map((_, c) => r.reduce((s, x, k) => s + x * B[k][c], 0)));
export const cols = (A, c0, w) => A.map((r) => r.slice(c0, c0 + w));
export const toNested = (m) => Array.from({ length: m.rows }, (_, i) => Array.from(m.data.subarray(i * m.cols, (i + 1) * m.cols)));
export const toData = (rows) => ({ rows: rows.length, cols: rows[0].length, data: Float32Array.from(rows.flat()) });

export function score64(score, q, k, j, params, dk) {
  switch (score) {
    case 'dot':
      return dot(q, k);
    case 'scaled_dot':
      return dot(q, k) / Math.sqrt(dk);
    case 'general':
      return dot(q, matvec(params.W.map((r) => r), k)); // q^T (W k)
    case 'additive': {
      const a = matvec(params.Wq, q), b = matvec(params.Wk, k);
      return params.v.reduce((s, vu, u) => s + vu * Math.tanh(a[u] + b[u]), 0);
    }
    case 'cosine': {
      const den = norm(q) * norm(k);
      return den > 0 ? (params?.beta ?? 1) * dot(q, k) / den : 0;
    }
    case 'location':
      return dot(params.W[j], q); // (W q)_j
    default:
      throw new Error(`reference: unknown score ${score}`);
  }
}

export function visibleKeys(mask, i, nk) {
  let L = nk;
  if (mask === 'causal') L = Math.min(L, i + 1);
  else if (mask && typeof mask === 'object') L = Math.min(L, mask.keyLengths[i]);
  return L;
}

/** float64 attention: { scores, weights, context } as nested arrays; masked scores -Infinity. */
export function attend64({ queries, keys, values = keys, score = 'dot', params = {}, normalize = 'softmax', temperature = 1, mask = 'none' }) {
  const nk = keys.length, dk = keys[0].length;
  const scores = [], weights = [], context = [];
  queries.forEach((q, i) => {
    const L = visibleKeys(mask, i, nk);
    const e = keys.map((k, j) => (j < L ? score64(score, q, k, j, params, dk) : -Infinity));
    const a = new Array(nk).fill(0);
    if (L > 0) {
      if (normalize === 'softmax') {
        const m = Math.max(...e.slice(0, L).map((x) => x / temperature));
        let s = 0;
        for (let j = 0; j < L; j++) s += a[j] = Math.exp(e[j] / temperature - m);
        for (let j = 0; j < L; j++) a[j] /= s;
      } else {
        const s = e.slice(0, L).reduce((x, y) => x + y, 0);
        for (let j = 0; j < L; j++) a[j] = e[j] / s;
      }
    }
    scores.push(e);
    weights.push(a);
    context.push(values[0].map((_, c) => a.reduce((s, w, j) => s + w * values[j][c], 0)));
  });
  return { scores, weights, context };
}

/** float64 self-attention, row-vector convention, heads over contiguous column blocks. */
export function selfAttention64({ x, wq, wk, wv, wo, heads = 1, causal = false, score }) {
  const q = wq ? matmul(x, wq) : x;
  const k = wk ? matmul(x, wk) : x;
  const v = wv ? matmul(x, wv) : x;
  score ??= wq || wk ? 'scaled_dot' : 'dot';
  const hk = q[0].length / heads, hv = v[0].length / heads;
  const scores = [], weights = [];
  const context = x.map(() => []);
  for (let h = 0; h < heads; h++) {
    const r = attend64({
      queries: cols(q, h * hk, hk), keys: cols(k, h * hk, hk), values: cols(v, h * hv, hv),
      score, mask: causal ? 'causal' : 'none',
    });
    scores.push(r.scores);
    weights.push(r.weights);
    r.context.forEach((z, i) => context[i].push(...z));
  }
  const output = wo ? matmul(context, wo) : context;
  return { q, k, v, scores, weights, context, output };
}
