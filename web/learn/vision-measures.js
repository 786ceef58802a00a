// The figures chapters 7 and 8 quote about the image models, and the sampling of
// hard glimpses, as pure functions of an engine model (no DOM), so the browser
// test recomputes them in Node and compares.
//   testImage(model, k)          test image k: model.examples({ split: 'test', seed: k })
//   tauByImage(model, count)     Kendall's τ between attention and saliency at the last
//                                glimpse, for test images 1..count (VisionModel.compareAttention)
//   meanPeak(model, count)       the mean largest attention weight at the last glimpse
//   sampleGlimpses(w, n, seed)   n locations drawn from the weights w (hard attention's draw)
//   totalVariation(counts, w)    ½ Σ |counts_j / n − w_j|: how far the draws' frequencies are from w
import { mulberry32 } from '../ui/rng.js';

/** Chapter 7's challenge: a test image whose saliency ranks the cells against the attention (τ below this). */
export const TAU_TARGET = 0;
/** How many test images the prose's averages are over. */
export const MEASURE_IMAGES = 24;

export const testImage = (model, k) => model.examples({ split: 'test', count: 1, seed: k })[0];

export function tauByImage(model, count = MEASURE_IMAGES) {
  const taus = [];
  for (let k = 1; k <= count; k++) {
    const { steps } = model.compareAttention(testImage(model, k).image);
    taus.push(steps[steps.length - 1].tau);
  }
  return taus;
}

export const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;

export function meanPeak(model, count = MEASURE_IMAGES) {
  const peaks = [];
  for (let k = 1; k <= count; k++) {
    const { steps } = model.predict(testImage(model, k).image);
    peaks.push(Math.max(...steps[steps.length - 1].weights.data));
  }
  return mean(peaks);
}

/** Draws n locations from the weights (a categorical distribution): { cells, counts }. */
export function sampleGlimpses(weights, n, seed) {
  const rand = mulberry32(seed);
  const counts = new Float32Array(weights.length);
  const cells = [];
  for (let s = 0; s < n; s++) {
    const u = rand();
    let cum = 0;
    let pick = -1;
    for (let j = 0; j < weights.length; j++) {
      if (weights[j] > 0) pick = j;
      cum += weights[j];
      if (u < cum) { pick = j; break; }
    }
    counts[pick]++;
    cells.push(pick);
  }
  return { cells, counts };
}

export function totalVariation(counts, weights) {
  const n = counts.reduce((a, b) => a + b, 0);
  let d = 0;
  for (let j = 0; j < weights.length; j++) d += Math.abs(counts[j] / n - weights[j]);
  return d / 2;
}

/**
 * A canvas of the model's size with `count` 8 × 8 pieces of test digits at random
 * places, as the cluttered task makes its clutter: pieces are cut where a test
 * image has ink (at least `ink` grey in the piece) and laid on by maximum.
 */
export function makeClutter(model, count, seed, ink = 8) {
  const { rows, cols } = model.config.canvas;
  const rand = mulberry32(seed);
  const data = new Float32Array(rows * cols);
  const P = 8;
  const sources = model.examples({ split: 'test', count: 2 * count, seed: 100000 + seed });
  let placed = 0;
  for (let tries = 0; placed < count && tries < 400; tries++) {
    const src = sources[tries % sources.length].image.data;
    const r0 = Math.floor(rand() * (rows - P));
    const c0 = Math.floor(rand() * (cols - P));
    let sum = 0;
    for (let r = 0; r < P; r++) for (let c = 0; c < P; c++) sum += src[(r0 + r) * cols + c0 + c];
    if (sum < ink) continue;
    const r1 = Math.floor(rand() * (rows - P));
    const c1 = Math.floor(rand() * (cols - P));
    for (let r = 0; r < P; r++) {
      for (let c = 0; c < P; c++) {
        const at = (r1 + r) * cols + c1 + c;
        data[at] = Math.max(data[at], src[(r0 + r) * cols + c0 + c]);
      }
    }
    placed++;
  }
  return { rows, cols, data };
}

/**
 * Explicit against implicit attention on a seq2seq model: for each of `count` test
 * examples (seed 1), the mean over output steps of Kendall's τ between the attention
 * weights and the saliency over the input tokens (Seq2SeqModel.compareAttention).
 */
export function seqTaus(model, count = MEASURE_IMAGES) {
  return model.examples({ split: 'test', count, seed: 1 }).map((x) => mean(model.compareAttention(x.input).steps.map((s) => s.tau)));
}
