// Training sessions driven from the page through the lab worker (no DOM here).
// The page stays responsive because every step runs in the worker; the loop
// asks for chunks of steps (a fixed number per update, or sized to take about
// CHUNK_MS each), then reports.
//
// After every update the session keeps a snapshot of the model's weights (its
// saved bytes): the timeline replays any input through the model as it was at
// that step, and a chunk whose training diverges is undone from the last one.
// The first moments of training are where the alignment forms, so they get the
// most snapshots: chunks start at one step and grow by about a fifth of the
// steps done, and thinning keeps snapshots evenly spaced in log(step), dense at
// the start and spaced out later (not one every k updates, which made the
// forming of the alignment one jump between two stops).

const CHUNK_MS = 120;
export const MAX_POINTS = 1500; // loss points kept (older ones are merged pairwise)
const MAX_SNAPSHOTS = 120; // model snapshots kept for the timeline
const MAX_SNAPSHOT_BYTES = 48 << 20; // ... and at most this many bytes of them
const EVAL_COUNT = 200;
/**
 * Steps over which a loaded model's learning rate ramps up from lr/WARMUP_STEPS to lr.
 * A model file holds no optimiser state, and Adam's first steps move every weight by
 * about lr whatever its gradient: at full rate they undid a pretrained model (99% to
 * 55% in ten steps); ramped, it keeps what it knows and trains on.
 */
export const WARMUP_STEPS = 200;
/** Image models: the held-out digits (their task has no validation split), fewer as a forward pass costs more. */
const IMAGE_EVAL = { split: 'test', count: 100 };
const evalOptions = (kind, count = EVAL_COUNT) => (kind === 'vision' ? { ...IMAGE_EVAL, count: Math.min(count, IMAGE_EVAL.count) } : { split: 'validation', count });

/** Halves an array of { step, value } by averaging neighbours (keeps memory flat). */
export function thin(points) {
  const out = [];
  for (let i = 0; i + 1 < points.length; i += 2) {
    out.push({ step: points[i + 1].step, value: (points[i].value + points[i + 1].value) / 2 });
  }
  if (points.length % 2) out.push(points[points.length - 1]);
  return out;
}

/**
 * Drops the one snapshot (never the first or the last) whose neighbours are
 * closest in log(1 + step): what is left stays evenly spread on a log scale.
 */
export function thinSnapshots(list) {
  if (list.length <= 2) return list;
  const drop = thinIndex(list);
  return list.filter((_, i) => i !== drop);
}

/** The index thinSnapshots drops from `list` (3 or more items): the one whose neighbours are closest in log(1 + step). */
export function thinIndex(list) {
  const at = (i) => Math.log1p(list[i].step);
  let drop = 1;
  let gap = Infinity;
  for (let i = 1; i < list.length - 1; i++) {
    const g = at(i + 1) - at(i - 1);
    if (g < gap) { gap = g; drop = i; }
  }
  return drop;
}

/** Steps the next chunk may take: 1 at first, then about a fifth of the steps done (so early updates stay dense). */
export const chunkCap = (steps) => Math.max(1, Math.floor(steps / 5));

/**
 * The error a chunk reports when training breaks the weights (for engines that
 * do not reject a diverging step themselves): `steps` is a step or a range.
 */
function divergedError(steps, cause = 'the loss is not a finite number') {
  const at = typeof steps === 'number' ? `at step ${steps}` : `within steps ${steps}`;
  return Object.assign(new Error(`train: training diverged ${at} (${cause}); the model is kept as it was before; `
    + 'try a smaller learning rate'), { code: 'ERR_VALUE' });
}

export class TrainingSession {
  /**
   * client: a LabClient; hooks: { onProgress(session), onError(err), onState(session) }.
   */
  constructor(client, hooks) {
    this.client = client;
    this.hooks = hooks;
    this.model = null;
    this.info = null;
    this.kind = 'seq2seq'; // or 'vision': an image model
    this.playing = false;
    this.busy = null;
    this.stepsPerUpdate = 0; // > 0: steps per frame; < 0: -n steps per second, one at a time; 0: as fast as it goes
    this.reset();
  }

  reset() {
    this.losses = [];
    this.accuracy = [];
    this.snapshots = [];
    this.snapshotBytes = 0;
    this.steps = 0;
    this.startSteps = 0;
    this.loadedAt = null; // the step a model was loaded from bytes at (its learning rate ramps up from there)
    this.trainSeconds = 0;
    this.examplesPerSecond = 0;
    this.chunk = 1;
    this.lastEval = null;
  }

  /** Everything of this run (model bytes aside): kept to come back to after a new model. */
  run() {
    const { losses, accuracy, snapshots, snapshotBytes, steps, startSteps, trainSeconds, examplesPerSecond, lastEval, kind } = this;
    return { losses, accuracy, snapshots, snapshotBytes, steps, startSteps, trainSeconds, examplesPerSecond, lastEval, kind };
  }

  /** Comes back to a run kept by run(), with its model saved as `bytes`. */
  async restore(run, bytes) {
    await this.load(bytes);
    Object.assign(this, run);
    this.hooks.onProgress?.(this);
  }

  /** Replaces the model with a new one from createSeq2Seq options, or createVisionModel options for kind 'vision'. */
  create(options, kind = 'seq2seq') {
    return this.#adopt(kind === 'vision' ? 'createVision' : 'create', { options });
  }

  /** Adopts a model from saved bytes. */
  load(bytes) {
    return this.#adopt('load', { bytes });
  }

  /** Replaces the model with the one the worker's create or load returns (a loaded one keeps its steps). */
  async #adopt(action, args) {
    this.pause();
    await this.busy;
    const made = await this.client.call(action, args);
    await this.drop();
    this.model = made.model;
    this.kind = made.kind;
    this.info = made;
    this.reset();
    this.steps = made.steps;
    this.startSteps = made.steps; // a loaded model's steps were trained before this run
    this.loadedAt = action === 'load' ? made.steps : null; // from saved weights, without optimiser state
    if (made.steps > 0) {
      // a trained model's accuracy is known from the start (its curve begins there)
      this.lastEval = await this.client.call('evaluate', { model: this.model, options: evalOptions(this.kind) });
      this.accuracy.push({ step: made.steps, value: this.lastEval.sequenceAccuracy });
    }
    await this.snapshot();
    this.hooks.onState?.(this);
    return made;
  }

  async drop() {
    if (this.model) await this.client.call('destroy', { model: this.model });
    this.model = null;
  }

  save() {
    return this.client.call('save', { model: this.model });
  }

  /** Starts the training loop with train options { batch, lr }. */
  play(trainOptions) {
    if (this.playing || !this.model) return;
    this.playing = true;
    this.trainOptions = trainOptions;
    this.hooks.onState?.(this);
    this.busy = this.loop();
  }

  pause() {
    if (!this.playing) return;
    this.playing = false;
    this.hooks.onState?.(this);
  }

  /** One optimiser step (when paused). */
  async step(trainOptions) {
    if (this.playing || !this.model) return;
    await this.busy;
    this.busy = this.chunkOnce({ ...trainOptions, steps: 1 }).catch((err) => this.hooks.onError?.(err));
    await this.busy;
  }

  async loop() {
    while (this.playing) {
      try {
        const per = this.stepsPerUpdate;
        const steps = per > 0 ? per : per < 0 ? 1 : Math.min(this.chunk, chunkCap(this.steps - this.startSteps));
        const t0 = performance.now();
        await this.chunkOnce({ ...this.trainOptions, steps });
        // at a fixed speed, one update per frame at most; n per second, one every 1/n s
        if (per > 0) await new Promise((ok) => requestAnimationFrame(ok));
        else if (per < 0) await new Promise((ok) => setTimeout(ok, Math.max(0, 1000 / -per - (performance.now() - t0))));
      } catch (err) {
        this.playing = false;
        this.hooks.onError?.(err);
        this.hooks.onState?.(this);
      }
    }
  }

  /**
   * Trains one chunk. A chunk that diverges leaves the model as it was before
   * it (the engine rejects the step; an engine that does not is rolled back to
   * the last snapshot) and throws the engine's ERR_VALUE message.
   */
  async chunkOnce(options) {
    const t0 = performance.now();
    let r;
    const resumed = this.steps - (this.loadedAt ?? 0);
    const lr = this.loadedAt !== null && options.lr ? options.lr * Math.min(1, (resumed + 1) / WARMUP_STEPS) : options.lr;
    try {
      r = await this.client.call('train', { model: this.model, options: { ...options, lr } });
    } catch (err) {
      // the engine rejects a diverging step and keeps the weights; an engine that
      // does not fails later inside the chunk on the broken weights: undo the chunk
      if (await this.sound()) throw err;
      await this.rollback();
      throw divergedError(`${this.steps + 1} to ${this.steps + options.steps}`, err.message);
    }
    const ms = performance.now() - t0;
    const bad = r.losses.findIndex((v) => !Number.isFinite(v));
    if (bad >= 0) {
      await this.rollback();
      throw divergedError(r.steps - r.losses.length + bad + 1);
    }
    let ev;
    try {
      ev = await this.client.call('evaluate', { model: this.model, options: evalOptions(this.kind) });
    } catch (err) {
      // the step went through but left weights the forward pass rejects (NaN): it diverged
      await this.rollback();
      throw divergedError(r.steps, err.message);
    }
    if (!Number.isFinite(ev.loss)) {
      // the last step left weights that no longer give a finite loss
      await this.rollback();
      throw divergedError(r.steps);
    }
    // aim each call at CHUNK_MS so progress stays smooth and pause is prompt
    this.chunk = Math.max(1, Math.min(200, Math.round((options.steps * CHUNK_MS) / Math.max(ms, 1))));
    const first = r.steps - r.losses.length;
    r.losses.forEach((value, i) => this.losses.push({ step: first + i + 1, value }));
    while (this.losses.length > MAX_POINTS) this.losses = thin(this.losses);
    this.steps = r.steps;
    this.trainSeconds += r.seconds;
    this.examplesPerSecond = r.examplesPerSecond;
    this.accuracy.push({ step: r.steps, value: ev.sequenceAccuracy });
    while (this.accuracy.length > MAX_POINTS) this.accuracy = thin(this.accuracy);
    this.lastEval = ev;
    await this.snapshot();
    this.hooks.onProgress?.(this);
  }

  /** Records the model's weights now, for the timeline and as the last good state. */
  async snapshot() {
    const bytes = await this.save();
    this.snapshots.push({ step: this.steps, bytes });
    this.snapshotBytes += bytes.length;
    while (this.snapshots.length > 2 && (this.snapshots.length > MAX_SNAPSHOTS || this.snapshotBytes > MAX_SNAPSHOT_BYTES)) {
      this.snapshots = thinSnapshots(this.snapshots);
      this.snapshotBytes = this.snapshots.reduce((n, s) => n + s.bytes.length, 0);
    }
  }

  /** Whether the model still gives a finite validation loss. */
  async sound() {
    try {
      const ev = await this.client.call('evaluate', { model: this.model, options: evalOptions(this.kind, 8) });
      return Number.isFinite(ev.loss);
    } catch {
      return false;
    }
  }

  /** Replaces the model with its last snapshot (the weights before a chunk that went wrong). */
  async rollback() {
    const last = this.snapshots[this.snapshots.length - 1];
    const loaded = await this.client.call('load', { bytes: last.bytes });
    await this.drop();
    this.model = loaded.model;
    this.steps = last.step;
    this.loadedAt = last.step;
  }

  /** Translates text with the model as it is now. */
  translate(text, beam) {
    return this.client.call('translate', { model: this.model, text, options: { beam } });
  }

  /** Translates text with the model as it was at snapshot `index`. */
  async translateAt(index, text, beam) {
    const snap = this.snapshots[index];
    const { model } = await this.client.call('load', { bytes: snap.bytes });
    try {
      return await this.client.call('translate', { model, text, options: { beam } });
    } finally {
      await this.client.call('destroy', { model });
    }
  }

  /** An image model's reading of an image: answer, attention, glimpse, saliency and tau per step. */
  readImage(image) {
    return this.client.call('readImage', { model: this.model, image });
  }

  /** Test examples, or train ones when the test split is empty (a small pasted dataset). */
  async examples(count, seed) {
    try {
      return await this.client.call('examples', { model: this.model, options: { split: 'test', count, seed } });
    } catch {
      return this.client.call('examples', { model: this.model, options: { split: 'train', count, seed } });
    }
  }
}

/** Optimiser steps between two points of an experiment's curves. */
const CURVE_CHUNK = 25;

/**
 * Models made from `specs` [{ action: 'create' | 'createVision', options }]
 * trained side by side for `steps`, each evaluated (`evaluate`: its options)
 * before training and after every chunk: curves of sequence accuracy, one per
 * model. onProgress({ done, steps, curves }) after every chunk; `finish(models)`
 * adds its results before the models are freed.
 */
async function trainTogether(client, specs, { steps, batch, lr, evaluate, onProgress, shouldStop }, finish = async () => ({})) {
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
        const r = await client.call('train', { model: models[k], options: { steps: n, batch, lr } });
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
  return trainTogether(client, specs, { steps, batch, lr, onProgress, shouldStop, evaluate: { split: 'test', count: 200 } }, async (models) => {
    const final = [];
    for (const m of models) final.push(await client.call('evaluate', { model: m, options: { split: 'test', count: MODES_FINAL_COUNT } }));
    return { final };
  });
}
