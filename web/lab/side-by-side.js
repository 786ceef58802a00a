// Models trained side by side for the lab's experiments (no DOM): the
// bottleneck (two seq2seq models that differ only in their attention) and the
// image models' soft / hard / none comparison. They are made, trained and freed
// here, beside the session's model in hand, which they do not touch.
import { divergedError } from './session.js';
import { IMAGE_TRAIN } from './state.js';

/** Optimiser steps between two points of an experiment's curves. */
const CURVE_CHUNK = 25;

/**
 * Models made from `specs` [{ action: 'create' | 'createVision', options }]
 * trained side by side for `steps`, each evaluated (`evaluate`: its options)
 * before training and after every chunk: curves of sequence accuracy, one per
 * model. onProgress({ done, steps, curves }) after every chunk; `finish(models)`
 * adds its results before the models are freed.
 */
async function trainTogether(client, specs, { steps, batch, lr, train = {}, evaluate, onProgress, shouldStop }, finish = async () => ({})) {
  const models = [];
  try {
    for (const { action, options } of specs) models.push((await client.call(action, { options })).model);
    const curves = models.map(() => []);
    const measure = async (k, step) => {
      const ev = await client.call('evaluate', { model: models[k], options: evaluate });
      curves[k].push({ step, value: ev.sequenceAccuracy });
    };
    for (let k = 0; k < models.length; k++) await measure(k, 0);
    onProgress?.({ done: 0, steps, curves });
    for (let done = 0; done < steps && !shouldStop?.();) {
      const n = Math.min(CURVE_CHUNK, steps - done);
      for (let k = 0; k < models.length; k++) {
        const r = await client.call('train', { model: models[k], options: { ...train, steps: n, batch, lr } });
        const bad = r.losses.findIndex((v) => !Number.isFinite(v));
        if (bad >= 0) throw divergedError(r.steps - r.losses.length + bad + 1);
        await measure(k, done + n);
      }
      done += n;
      onProgress?.({ done, steps, curves });
    }
    return { curves, ...(await finish(models)) };
  } finally {
    for (const m of models) await client.call('destroy', { model: m });
  }
}

/**
 * The bottleneck experiment: two models that differ only in their attention,
 * trained side by side for `steps`, then sequence accuracy by input length on
 * the test split. onProgress({ done, steps, curves }) after every chunk.
 */
export function runComparison(client, optionsA, optionsB, { steps, batch, lr, onProgress, shouldStop }) {
  const specs = [optionsA, optionsB].map((options) => ({ action: 'create', options }));
  return trainTogether(client, specs, { steps, batch, lr, onProgress, shouldStop, evaluate: { split: 'validation', count: 150 } }, async (models) => {
    const byLength = [];
    for (const m of models) byLength.push((await client.call('evaluate', { model: m, options: { split: 'test', count: 600 } })).byLength);
    return { byLength };
  });
}

/** How many test images the soft / hard / none experiment's final accuracies are measured on. */
export const MODES_FINAL_COUNT = 1000;

/**
 * Image models that differ only in how they attend (createVisionModel options,
 * one per model), trained side by side from one seed: test accuracy curves
 * (whole answers right, on the same 200 held-out digits every time), then each
 * model's accuracy on MODES_FINAL_COUNT test images: final [{ loss, accuracy, sequenceAccuracy, count }].
 */
export function runImageModes(client, optionsList, { steps, batch, lr, onProgress, shouldStop }) {
  const specs = optionsList.map((options) => ({ action: 'createVision', options }));
  return trainTogether(client, specs, { steps, batch, lr, train: IMAGE_TRAIN, onProgress, shouldStop, evaluate: { split: 'test', count: 200 } }, async (models) => {
    const final = [];
    for (const m of models) final.push(await client.call('evaluate', { model: m, options: { split: 'test', count: MODES_FINAL_COUNT } }));
    return { final };
  });
}
