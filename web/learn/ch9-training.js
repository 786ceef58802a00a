// Chapter 9's training runs, without DOM: two tiny transformers that differ only
// in their score (dot against scaled dot), and a two-layer attention-only model
// on the induction task whose heads are measured as it learns. Training runs on
// the page's thread in short chunks, each followed by a yield to the browser, so
// the page keeps scrolling and answering while it learns (a chunk is tens of ms).
import { defaultsOf } from '../engine/defaults.js';
import { readHeadScores } from '../engine/induction.js';

/** The √d experiment: two attention-only layers of one head of width 64, so unscaled scores are √64 = 8 times too wide. */
export const SQRT_D = Object.freeze({
  model: { task: 'copy', layers: 2, heads: 1, dModel: 64, dFF: 0, context: 16, batch: 16, seed: 1 },
  steps: 300, lr: 3e-3, warmup: 10,
});

/** The induction run: the engine's induction defaults (defaults.js), a few seconds of training. */
const D = defaultsOf('transformer', { task: 'induction' });
export const INDUCTION = Object.freeze({
  model: { ...D.model }, steps: D.train.steps, lr: D.train.lr, warmup: D.train.warmup, every: 25, evalCount: 128, scoreCount: 32,
});

const pause = () => new Promise((ok) => setTimeout(ok, 0));

/**
 * Trains `model` for `steps` in chunks of `chunk` steps on one cosine schedule (decaySteps:
 * the whole run), calling onChunk({ step, losses }) after each and yielding between chunks.
 * Stops early when stop() is true. Returns every step's loss.
 */
export async function trainInChunks(model, { steps, lr, warmup, chunk = 25, onChunk, stop = () => false }) {
  const losses = [];
  const start = model.steps;
  while (model.steps - start < steps && !stop()) {
    const n = Math.min(chunk, steps - (model.steps - start));
    const r = model.train({ steps: n, lr, warmup, decaySteps: steps });
    losses.push(...r.losses);
    // a frame between the chunk and what is measured after it: each is one task of tens of ms
    await pause();
    await onChunk?.({ step: model.steps - start, losses });
    await pause();
  }
  return losses;
}

/** The mean of each window of `width` values, as chart points { x: step, y }. */
export function smoothed(values, width = 10) {
  const out = [];
  for (let i = width; i <= values.length; i += Math.max(1, Math.floor(width / 2))) {
    let sum = 0;
    for (let k = i - width; k < i; k++) sum += values[k];
    out.push({ x: i, y: sum / width });
  }
  return out;
}

/** The first step at which the smoothed loss is at or below `level`, or null. */
export function firstBelow(points, level) {
  return points.find((p) => p.y <= level)?.x ?? null;
}

/** Trains both √d models one after the other (same seed, data and steps). [{ score, losses }] */
export async function trainSqrtD(engine, onProgress) {
  const runs = [];
  for (const score of ['dot', 'scaled_dot']) {
    const m = await engine.createTransformer({ ...SQRT_D.model, score });
    try {
      const losses = await trainInChunks(m, {
        steps: SQRT_D.steps, lr: SQRT_D.lr, warmup: SQRT_D.warmup,
        onChunk: ({ losses: l }) => onProgress?.({ score, losses: l, runs }),
      });
      runs.push({ score, losses });
    } finally {
      m.destroy();
    }
  }
  return runs;
}

/**
 * What the two runs show, from their numbers: the loss each ends at (mean of the last 20 steps),
 * and the first step at which the one that ends lower reached the other's final loss.
 */
export function sqrtDSummary(runs) {
  const by = Object.fromEntries(runs.map((r) => [r.score, smoothed(r.losses, 20)]));
  const end = (pts) => pts[pts.length - 1].y;
  const dotEnd = end(by.dot);
  const scaledEnd = end(by.scaled_dot);
  const better = scaledEnd <= dotEnd ? 'scaled_dot' : 'dot';
  const level = Math.max(dotEnd, scaledEnd);
  return { dotEnd, scaledEnd, better, level, betterAt: firstBelow(by[better], level), steps: SQRT_D.steps };
}

/**
 * Each head's drop in accuracy when it alone is zeroed: [{ layer, head, accuracy, drop }],
 * largest drop first, beside the intact model's accuracy.
 */
export function headDrops(model, count = INDUCTION.evalCount) {
  const base = model.evaluate({ count }).accuracy;
  const { layers, heads } = model.config;
  const drops = [];
  for (let layer = 0; layer < layers; layer++) {
    for (let head = 0; head < heads; head++) {
      const accuracy = model.evaluate({ count, ablate: [{ layer, head }] }).accuracy;
      drops.push({ layer, head, accuracy, drop: base - accuracy });
    }
  }
  drops.sort((a, b) => b.drop - a.drop);
  return { base, drops };
}

/**
 * The pretrained induction model when the site ships one (models.json names it "induction",
 * e.g. web/models/induction.tfm), else null: the chapter then offers to train it.
 */
/**
 * The pretrained model's recorded run (its models.json `history`) as the chapter's
 * measures [{ step, loss, accuracy, scores }], so that its phase change shows before
 * anything is trained here; [] when it has none, or one that does not read as one.
 */
export function recordedHistory(entry, layers, heads) {
  const h = entry?.history;
  const scores = readHeadScores(h?.scores, layers, heads);
  if (!scores || !Array.isArray(h.accuracy) || h.accuracy.length !== scores.length) return [];
  const ok = h.accuracy.every((a, i) => a?.step === scores[i].step && Number.isFinite(a.value) && a.value >= 0 && a.value <= 1
    && Number.isFinite(a.loss));
  if (!ok) return [];
  return h.accuracy.map((a, i) => ({ step: a.step, loss: a.loss, accuracy: a.value, scores: scores[i].heads }));
}

export async function loadPretrained(engine, manifest, fetchBytes) {
  const entry = manifest?.models?.induction;
  if (!entry) return null;
  return engine.loadModel(await fetchBytes(`models/${entry.file}`));
}
