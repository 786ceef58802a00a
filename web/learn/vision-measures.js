// The figures chapters 7 and 8 quote about the image models, and the sampling of
// hard glimpses, as pure functions of an engine model (no DOM), so the browser
// test recomputes them in Node and compares.
//   testImage(model, k)          test image k: model.examples({ split: 'test', seed: k })
//   agreementByImage(model, count)  at the last glimpse of test images 1..count: Kendall's τ over
//                                all cells and the measures of where both maps are bright
//                                (VisionModel.compareAttention: stats.js agreement)
//   seqAgreement(model, count)   the same on a text model, over the output steps of test examples
//   receptiveField(layers)       how many canvas pixels a grid cell's features are computed from
//   meanPeak(model, count)       the mean largest attention weight at the last glimpse
//   sampleGlimpses(w, n, seed)   n locations drawn from the weights w (hard attention's draw)
//   totalVariation(counts, w)    ½ Σ |counts_j / n − w_j|: how far the draws' frequencies are from w
//   reverseOffsets(comparisons)  where the reverse model looks for the digit it writes: its own state or the next
//   reverseWords(offsets)        which of the two it prefers, in words
//   sizesText(a, b)              whether two image models are the same size, in words
//   interval(accuracy, count)    an accuracy on `count` images with its 95% (Wilson) interval
//   ablationText(name, own, uniform)  a model's accuracy against its accuracy with uniform attention, in words
//   onDigitShare(model, count)   a retina model: the share of test images 1..count with a glimpse centred on the digit's box
//   onDigitText(location, boxes) one glimpse's centre against the digit's boxes, in words
//   retinaVerdict(retina, hard)  two accuracies' intervals: which reads better, or within the noise
import { wilson } from '../engine/stats.js';
import { mulberry32 } from '../ui/rng.js';

/** Chapter 7's challenge: an output character whose most-attended input character holds less than this share of its saliency. */
export const DISAGREE_TARGET = 0.1;

/** The date chapter 7's text comparison starts from: one the two measures agree on (its challenge asks for one they do not). */
export const TEXT_EXAMPLE = '25th of June, 2009';
/** How many test images the prose's averages are over. */
export const MEASURE_IMAGES = 24;

export const testImage = (model, k) => model.examples({ split: 'test', count: 1, seed: k })[0];

export function agreementByImage(model, count = MEASURE_IMAGES) {
  const out = [];
  for (let k = 1; k <= count; k++) {
    const { steps } = model.compareAttention(testImage(model, k).image);
    const last = steps[steps.length - 1];
    out.push({ tau: last.tau, ...last.agreement });
  }
  return out;
}

/**
 * The side of the square of canvas pixels one grid cell's features depend on:
 * each stage is a 3 × 3 convolution (one more pixel each side, at the current
 * stride) then a 2 × 2 max-pool (half a cell more, and the stride doubles).
 */
export function receptiveField(layers) {
  let side = 1;
  let stride = 1;
  for (let l = 0; l < layers; l++) {
    side += 2 * stride + stride;
    stride *= 2;
  }
  return side;
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
 * Explicit against implicit attention on a seq2seq model, over the output steps
 * of `count` test examples (seed 1; Seq2SeqModel.compareAttention):
 * { tau: the mean over examples of the mean Kendall's τ over the input tokens,
 *   topMatch: the share of steps whose most-attended input token is the most salient,
 *   comparisons: each example's compareAttention (for reverseOffsets, without computing them again) }.
 */
export function seqAgreement(model, count = MEASURE_IMAGES) {
  const taus = [];
  let steps = 0;
  let matches = 0;
  const comparisons = model.examples({ split: 'test', count, seed: 1 }).map((x) => model.compareAttention(x.input));
  for (const c of comparisons) {
    taus.push(mean(c.steps.map((s) => s.tau)));
    steps += c.steps.length;
    matches += c.steps.filter((s) => s.agreement.topMatch).length;
  }
  return { tau: mean(taus), topMatch: matches / steps, comparisons };
}

/**
 * On the reverse task output step t writes input digit n − 1 − t. Over the
 * comparisons of a reverse model (seqAgreement's), the share of the output digits
 * whose most-attended encoder state is that digit's own (own) or the one after it
 * (next), and how many output digits that is (steps). The encoder reads left to
 * right, so the state at position t has read digit t already: both states hold the
 * digit, and which one the model looks at is what training made of it.
 */
export function reverseOffsets(comparisons) {
  let own = 0;
  let next = 0;
  let steps = 0;
  for (const c of comparisons) {
    const n = c.inputTokens.length;
    c.steps.slice(0, n).forEach((s, t) => {
      const a = s.attention.data;
      let top = 0;
      for (let j = 1; j < a.length; j++) if (a[j] > a[top]) top = j;
      steps++;
      if (top === n - 1 - t) own++;
      else if (top === n - t) next++;
    });
  }
  return { own: own / steps, next: next / steps, steps };
}

/** Which of the two states (reverseOffsets') the reverse model looks at more, in words. */
export const reverseWords = ({ own, next }) => (next > own ? 'the model learned to prefer the next state'
  : own > next ? 'the model learned to prefer the digit’s own state' : 'the model looks at both as often');

const count = (v) => v.toLocaleString('en');

/** Whether two image models' configs (.hidden, .parameters) are the same size, and that in words. */
export function sizesText(soft, hard) {
  const same = soft.hidden === hard.hidden && soft.parameters === hard.parameters;
  const text = same ? `the same size (${soft.hidden} hidden units, ${count(soft.parameters)} parameters each)`
    : `not the same size (the soft one: ${soft.hidden} hidden units, ${count(soft.parameters)} parameters; `
      + `the hard one: ${hard.hidden} and ${count(hard.parameters)})`;
  return { same, text };
}

/** An accuracy measured on `n` images, with its 95% Wilson interval: { p, lo, hi, n }. */
export const interval = (accuracy, n) => wilson(Math.round(accuracy * n), n);

const pct = (v) => `${(v * 100).toFixed(1)}%`;
/** "83.0% (95% interval 79.5% to 86.0%)" */
export const intervalText = (c) => `${pct(c.p)} (95% interval ${pct(c.lo)} to ${pct(c.hi)})`;

/**
 * A model's own accuracy against its accuracy with uniform attention (each an
 * interval()), in words: the fall in points and whether the two intervals are apart.
 */
export function ablationText(name, own, uniform) {
  const drop = (own.p - uniform.p) * 100;
  const apart = uniform.hi < own.lo;
  return `the ${name} model falls from ${intervalText(own)} to ${intervalText(uniform)}, ${drop.toFixed(1)} points`
    + (apart ? ' (the two intervals do not overlap)' : ' (the two intervals overlap: the fall is within the noise)');
}

/** Whether pixel (x, y) lies in a box { top, left, height, width }. */
const inBox = (x, y, b) => x >= b.left && x < b.left + b.width && y >= b.top && y < b.top + b.height;

/**
 * Over test images 1..count, the share where one of a retina model's glimpse centres (predict's
 * location x, y) lies on the digit's box (examples' boxes): where it looked against where the digit is.
 */
export function onDigitShare(model, count) {
  let on = 0;
  for (let k = 1; k <= count; k++) {
    const ex = testImage(model, k);
    const { steps } = model.predict(ex.image);
    if (steps.some(({ location: l }) => ex.boxes.some((b) => inBox(l.x, l.y, b)))) on++;
  }
  return on / count;
}

/** Glimpse t's centre against the digit's boxes, in words ("inside the digit's box" or not). */
export const onDigitText = (location, boxes) => (boxes.some((b) => inBox(location.x, location.y, b)) ? 'inside the digit’s box' : 'outside the digit’s box');

/**
 * The retina against the grid's hard attention (each an interval() on the same images), in words:
 * which reads better, or that the two intervals overlap.
 */
export function retinaVerdict(retina, hard) {
  if (retina.hi < hard.lo) return 'the retina is the weaker reader: the two intervals do not overlap';
  if (hard.hi < retina.lo) return 'the retina is the better reader: the two intervals do not overlap';
  return 'the two intervals overlap: the difference is within the noise';
}
