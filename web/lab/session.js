// Training sessions driven from the page through the lab worker (no DOM here).
// The page stays responsive because every step runs in the worker; the loop
// asks for chunks of steps sized to take about CHUNK_MS each, then reports.

const CHUNK_MS = 120;
const MAX_POINTS = 1500; // loss points kept (older ones are merged pairwise)
const MAX_SNAPSHOTS = 120; // alignment snapshots kept for the timeline
const EVAL_COUNT = 200;

/** Halves an array of { step, value } by averaging neighbours (keeps memory flat). */
function thin(points) {
  const out = [];
  for (let i = 0; i + 1 < points.length; i += 2) {
    out.push({ step: points[i + 1].step, value: (points[i].value + points[i + 1].value) / 2 });
  }
  if (points.length % 2) out.push(points[points.length - 1]);
  return out;
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
    this.playing = false;
    this.busy = null;
    this.reset();
  }

  reset() {
    this.losses = [];
    this.accuracy = [];
    this.snapshots = [];
    this.steps = 0;
    this.trainSeconds = 0;
    this.examplesPerSecond = 0;
    this.chunk = 5;
    this.wallStart = null;
    this.wallElapsed = 0;
  }

  /** Replaces the model with a new one from createSeq2Seq options. */
  async create(options) {
    this.pause();
    await this.busy;
    const created = await this.client.call('create', { options });
    await this.drop();
    this.model = created.model;
    this.info = created;
    this.reset();
    this.hooks.onState?.(this);
    return created;
  }

  /** Adopts a model from saved bytes. */
  async load(bytes) {
    this.pause();
    await this.busy;
    const loaded = await this.client.call('load', { bytes });
    await this.drop();
    this.model = loaded.model;
    this.info = loaded;
    this.reset();
    this.steps = loaded.steps;
    this.hooks.onState?.(this);
    return loaded;
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
    this.busy = this.chunkOnce({ ...trainOptions, steps: 1 });
    await this.busy;
  }

  async loop() {
    while (this.playing) {
      try {
        await this.chunkOnce({ ...this.trainOptions, steps: this.chunk });
      } catch (err) {
        this.playing = false;
        this.hooks.onError?.(err);
        this.hooks.onState?.(this);
      }
    }
  }

  async chunkOnce(options) {
    const t0 = performance.now();
    const r = await this.client.call('train', { model: this.model, options });
    const ms = performance.now() - t0;
    // aim each call at CHUNK_MS so progress stays smooth and pause is prompt
    this.chunk = Math.max(1, Math.min(200, Math.round((this.chunk * CHUNK_MS) / Math.max(ms, 1))));
    const first = r.steps - r.losses.length;
    r.losses.forEach((value, i) => this.losses.push({ step: first + i + 1, value }));
    while (this.losses.length > MAX_POINTS) this.losses = thin(this.losses);
    this.steps = r.steps;
    this.trainSeconds += r.seconds;
    this.examplesPerSecond = r.examplesPerSecond;
    const ev = await this.client.call('evaluate', { model: this.model, options: { split: 'validation', count: EVAL_COUNT } });
    this.accuracy.push({ step: r.steps, value: ev.sequenceAccuracy });
    while (this.accuracy.length > MAX_POINTS) this.accuracy = thin(this.accuracy);
    this.lastEval = ev;
    this.hooks.onProgress?.(this);
  }

  /** Translates text; keeps a snapshot of the alignment for the timeline when `record`. */
  async translate(text, beam, record) {
    const t = await this.client.call('translate', { model: this.model, text, options: { beam } });
    if (record) {
      this.snapshots.push({ step: this.steps, text, translation: t });
      if (this.snapshots.length > MAX_SNAPSHOTS) this.snapshots = this.snapshots.filter((_, i) => i % 2 === 1 || i === 0);
    }
    return t;
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

/**
 * The bottleneck experiment: two models that differ only in their attention,
 * trained side by side for `steps`, then sequence accuracy by input length on
 * the test split. onProgress({ done, steps, curves }) after every chunk.
 */
export async function runComparison(client, optionsA, optionsB, { steps, batch, lr, onProgress, shouldStop }) {
  const models = [];
  try {
    for (const o of [optionsA, optionsB]) models.push((await client.call('create', { options: o })).model);
    const curves = models.map(() => []);
    const chunk = 25;
    for (let done = 0; done < steps && !shouldStop?.();) {
      const n = Math.min(chunk, steps - done);
      for (let k = 0; k < models.length; k++) {
        await client.call('train', { model: models[k], options: { steps: n, batch, lr } });
        const ev = await client.call('evaluate', { model: models[k], options: { split: 'validation', count: 150 } });
        curves[k].push({ step: done + n, value: ev.sequenceAccuracy });
      }
      done += n;
      onProgress?.({ done, steps, curves });
    }
    const byLength = [];
    for (const m of models) byLength.push((await client.call('evaluate', { model: m, options: { split: 'test', count: 600 } })).byLength);
    return { curves, byLength };
  } finally {
    for (const m of models) await client.call('destroy', { model: m });
  }
}
