// Why divide by √d: for random q, k with independent standard-normal entries,
// q·k has variance d, so unscaled scores spread like √d and softmax saturates
// (its weights approach one-hot, their entropy falls toward 0); dividing by √d
// keeps the spread at 1. Scores and weights from the engine; summaries here. No DOM.
import { mulberry32, normal } from './rng.js';

export const QUERIES = 32;
export const KEYS = 16;

/** QUERIES × d and KEYS × d standard-normal matrices from a fixed seed. */
export function draw(d, seed = 7) {
  const rand = mulberry32(seed * 1000003 + d);
  const m = (rows) => {
    const data = new Float32Array(rows * d);
    for (let p = 0; p < data.length; p++) data[p] = normal(rand);
    return { rows, cols: d, data };
  };
  return { q: m(QUERIES), k: m(KEYS) };
}

/** Standard deviation of all entries. */
export function spread(data) {
  let s = 0;
  for (const v of data) s += v;
  const mean = s / data.length;
  let v2 = 0;
  for (const v of data) v2 += (v - mean) ** 2;
  return Math.sqrt(v2 / data.length);
}

/** Mean entropy of the rows of a weights matrix, as a fraction of its maximum ln(cols). */
export function entropyRatio({ rows, cols, data }) {
  let total = 0;
  for (let i = 0; i < rows; i++) {
    let e = 0;
    for (let j = 0; j < cols; j++) {
      const p = data[i * cols + j];
      if (p > 0) e -= p * Math.log(p);
    }
    total += e;
  }
  return total / rows / Math.log(cols);
}

/** The experiment at width d (temperature τ on the unscaled scores). */
export function measure(engine, d, temperature = 1) {
  const { q, k } = draw(d);
  const dot = engine.attend({ queries: q, keys: k, score: 'dot', outputs: ['scores', 'weights'] });
  const scaled = engine.attend({ queries: q, keys: k, score: 'scaled_dot', outputs: ['weights'] });
  const tempered = temperature === 1 ? dot : engine.attend({ queries: q, keys: k, score: 'dot', temperature, outputs: ['weights'] });
  return {
    d,
    spread: spread(dot.scores.data),
    entropyDot: entropyRatio(dot.weights),
    entropyScaled: entropyRatio(scaled.weights),
    entropyTempered: entropyRatio(tempered.weights),
  };
}
