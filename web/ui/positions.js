// Positions for self-attention (the playground's view, Learn's chapter 9): where
// each token sits, put into the computation in one of the three ways transformers
// do it. No DOM.
//   sinusoidal (Vaswani et al. 2017)  X + P before the projections
//   rope (Su et al. 2021)             each head's q and k rotated pair by pair by an angle i·θₖ
//   alibi (Press et al. 2022)         −m·|i − j| added to each head's scores (a slope m per head)
// The engine's selfAttention takes no position and its attend takes no additive bias, so
// the positional step happens here around engine calls: sinusoidal changes X, RoPE
// rotates the Q and K the engine projected and scores each head with engine.attend;
// ALiBi adds its bias to the scores the engine gave and normalises them here
// (softmax over the unmasked keys, the engine's own rule).

export const POSITIONS = ['none', 'sinusoidal', 'rope', 'alibi'];
export const POSITION_LABELS = { none: 'None', sinusoidal: 'Sinusoidal (added to X)', rope: 'RoPE (rotates q, k)', alibi: 'ALiBi (bias on scores)' };
/** A kind's name inside a sentence. */
export const POSITION_NAMES = { none: 'no positions', sinusoidal: 'sinusoidal positions', rope: 'RoPE', alibi: 'ALiBi' };

const matrix = (rows, cols) => ({ rows, cols, data: new Float32Array(rows * cols) });

/** Vaswani's table P (n × d): P[i][2k] = sin(i / 10000^(2k/d)), P[i][2k+1] = cos(same); positions from 0. */
export function sinusoidTable(n, d) {
  const p = matrix(n, d);
  for (let i = 0; i < n; i++) {
    for (let c = 0; c < d; c++) {
      const angle = i / 10000 ** ((c - (c % 2)) / d);
      p.data[i * d + c] = c % 2 ? Math.cos(angle) : Math.sin(angle);
    }
  }
  return p;
}

/** x + P, as a new matrix. */
export function addSinusoids(x) {
  const p = sinusoidTable(x.rows, x.cols);
  for (let k = 0; k < p.data.length; k++) p.data[k] += x.data[k];
  return p;
}

/**
 * RoPE on one head's columns [from, from + width) of every row: the pair (2k, 2k+1) of row i
 * turns by i·θₖ, θₖ = 10000^(−2k/width); an odd width leaves its last column as it is.
 * Returns a new matrix of width `width`.
 */
export function rotateHead(m, from, width) {
  const out = matrix(m.rows, width);
  for (let i = 0; i < m.rows; i++) {
    const src = i * m.cols + from;
    const dst = i * width;
    for (let c = 0; c < width; c++) out.data[dst + c] = m.data[src + c];
    for (let c = 0; c + 1 < width; c += 2) {
      const angle = i * 10000 ** (-c / width);
      const cos = Math.cos(angle);
      const sin = Math.sin(angle);
      const a = m.data[src + c];
      const b = m.data[src + c + 1];
      out.data[dst + c] = a * cos - b * sin;
      out.data[dst + c + 1] = a * sin + b * cos;
    }
  }
  return out;
}

/**
 * ALiBi's slope m for head h (0-based) of `heads`. Press et al. give head h of H (counted from 1)
 * the slope 2^(−8h/H): for 8 heads ½, ¼, …, 1/256, each half the one before; for 16 heads
 * 2^(−½), 2^(−1), …, each 1/√2 of the one before. That rule holds here for H ≥ 8; fewer heads
 * take the first slopes of the 8-head set (½, ¼, …), so that one head's bias is still large
 * enough to see on a handful of tokens (the rule would give one head 1/256). The engine's
 * transformer (C, tf_create) follows the rule for every H.
 */
export const alibiSlope = (h, heads) => 2 ** (-8 * (h + 1) / Math.max(heads, 8));

/** Every head's slope (alibiSlope), head 0 first. */
export const alibiSlopes = (heads) => Array.from({ length: heads }, (_, h) => alibiSlope(h, heads));

/** −m·|i − j| for n tokens, m = slope (equal to Press et al.'s −m·(i − j) on the keys a causal mask keeps). */
export function alibiBias(n, slope) {
  const b = matrix(n, n);
  for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) b.data[i * n + j] = -slope * Math.abs(i - j) || 0;
  return b;
}

/** Softmax of each row over its finite scores (masked cells, −∞, get 0). */
export function softmaxRows(scores) {
  const { rows, cols } = scores;
  const w = matrix(rows, cols);
  for (let i = 0; i < rows; i++) {
    let max = -Infinity;
    for (let j = 0; j < cols; j++) max = Math.max(max, scores.data[i * cols + j]);
    if (max === -Infinity) continue;
    let sum = 0;
    for (let j = 0; j < cols; j++) {
      const e = Math.exp(scores.data[i * cols + j] - max);
      w.data[i * cols + j] = e;
      sum += e;
    }
    for (let j = 0; j < cols; j++) w.data[i * cols + j] /= sum;
  }
  return w;
}

/** a·b for row-major matrices. */
export function matmul(a, b) {
  const out = matrix(a.rows, b.cols);
  for (let i = 0; i < a.rows; i++) {
    for (let k = 0; k < a.cols; k++) {
      const v = a.data[i * a.cols + k];
      if (v === 0) continue;
      for (let j = 0; j < b.cols; j++) out.data[i * b.cols + j] += v * b.data[k * b.cols + j];
    }
  }
  return out;
}

function columns(m, from, width) {
  const out = matrix(m.rows, width);
  for (let i = 0; i < m.rows; i++) out.data.set(m.data.subarray(i * m.cols + from, i * m.cols + from + width), i * width);
  return out;
}

function setColumns(m, part, from) {
  for (let i = 0; i < m.rows; i++) m.data.set(part.data.subarray(i * part.cols, (i + 1) * part.cols), i * m.cols + from);
}

/** Scores minus scores, cell by cell; a cell masked in both stays masked (−∞). */
export function scoreDifference(a, b) {
  const d = matrix(a.rows, a.cols);
  for (let p = 0; p < d.data.length; p++) d.data[p] = a.data[p] === -Infinity && b.data[p] === -Infinity ? -Infinity : a.data[p] - b.data[p];
  return d;
}

/**
 * Self-attention with positions. args: { x, wq, wk, wv, wo (row-major matrices or undefined),
 * heads, causal, score }, positions one of POSITIONS. Returns engine.selfAttention's
 * { q, k, v, scores, weights, context, output } (q and k as scored: rotated under RoPE) plus
 * term: [per head] the scores with positions minus the scores without (what positions add).
 */
export function selfAttentionWith(engine, args, positions) {
  const plain = engine.selfAttention(args);
  if (positions === 'none') return { ...plain, term: null };
  if (positions === 'sinusoidal') {
    const r = engine.selfAttention({ ...args, x: addSinusoids(args.x) });
    return { ...r, term: r.scores.map((s, h) => scoreDifference(s, plain.scores[h])) };
  }
  const n = plain.q.rows;
  const dh = plain.q.cols / args.heads;
  const dv = plain.v.cols / args.heads;
  const q = positions === 'rope' ? matrix(n, plain.q.cols) : plain.q;
  const k = positions === 'rope' ? matrix(n, plain.k.cols) : plain.k;
  const context = matrix(n, plain.v.cols);
  const scores = [];
  const weights = [];
  for (let h = 0; h < args.heads; h++) {
    const v = columns(plain.v, h * dv, dv);
    let e;
    let w;
    if (positions === 'rope') {
      const qh = rotateHead(plain.q, h * dh, dh);
      const kh = rotateHead(plain.k, h * dh, dh);
      setColumns(q, qh, h * dh);
      setColumns(k, kh, h * dh);
      const a = engine.attend({
        queries: qh, keys: kh, values: v, score: args.score, params: args.score === 'cosine' ? { beta: 1 } : undefined,
        normalize: 'softmax', mask: args.causal ? 'causal' : 'none',
      });
      e = a.scores;
      w = a.weights;
      setColumns(context, a.context, h * dv);
    } else {
      const bias = alibiBias(n, alibiSlope(h, args.heads));
      e = matrix(n, n);
      for (let p = 0; p < e.data.length; p++) e.data[p] = plain.scores[h].data[p] + bias.data[p];
      w = softmaxRows(e);
      setColumns(context, matmul(w, v), h * dv);
    }
    scores.push(e);
    weights.push(w);
  }
  const output = args.wo ? matmul(context, toRows(args.wo)) : context;
  return { q, k, v: plain.v, scores, weights, context, output, term: scores.map((s, h) => scoreDifference(s, plain.scores[h])) };
}

/** A matrix argument as { rows, cols, data } (nested rows are accepted, as the engine does). */
function toRows(m) {
  if (!Array.isArray(m)) return m;
  const out = matrix(m.length, m[0].length);
  m.forEach((row, i) => out.data.set(row, i * out.cols));
  return out;
}
