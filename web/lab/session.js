// The lab's one training session (no DOM here): the model in hand, of any
// family, driven through the lab worker. A family adapter (family-*.js) says
// what the session makes, how it evaluates a chunk and what it keeps for the
// family's timeline; the loop, the curves and the undoing of a chunk that goes
// wrong are the same for all.
// The page stays responsive because every step runs in the worker; the loop
// asks for chunks of steps (a fixed number per update, or sized to take about
// CHUNK_MS each), then reports.
//
// A chunk that diverges is undone by the engine itself (a training call is
// all or nothing); one whose evaluation after it is not finite, by the
// engine's undoTrain (the copy the call started from: weights, optimiser
// state, draws). A loaded model's learning-rate ramp is the engine's too
// (OPT_RESUME_WARMUP, src/layers/optim.c). After every update the session
// saves the model's weights (its checkpoint), from which the family keeps
// what its timeline needs. The first
// moments of training are where attention forms, so they get the most
// snapshots: chunks start at one step and grow by about a tenth of the steps
// done (a stop every tenth of the way, so no stop holds much of the change),
// and thinning keeps snapshots evenly spaced in log(step), dense at the start
// and spaced out later.

const CHUNK_MS = 120;
export const MAX_POINTS = 1500; // loss points kept (past it, the points of the fewest steps are merged pairwise)
/** Examples the soundness check of a failed chunk evaluates. */
const SOUND_COUNT = 8;

/**
 * Thins a curve of { step, value, n? } (n: the steps a point is the mean of, 1 if
 * not said) to keep memory flat: the points of the fewest steps merge in pairs, a
 * pair's mean weighted by its steps and placed at its last step, so every stretch of
 * the run, its start too, ends up as the mean of as many steps as any other. (Merging
 * every pair again on each pass, as points are added at the end, made the first point
 * the mean of thousands of steps, placed thousands of steps in: the start was lost.)
 */
export function thin(points) {
  const steps = (p) => p.n ?? 1;
  // pairs of at most `most` steps together: twice the fewest, or more when no two such points are neighbours
  for (let most = 2 * Math.min(...points.map(steps)); ; most *= 2) {
    const out = [];
    for (let i = 0; i < points.length; i++) {
      const [a, b] = [points[i], points[i + 1]];
      if (b && steps(a) + steps(b) <= most) {
        out.push({ step: b.step, value: (a.value * steps(a) + b.value * steps(b)) / (steps(a) + steps(b)), n: steps(a) + steps(b) });
        i++;
      } else out.push(a);
    }
    if (out.length < points.length || points.length < 2) return out;
  }
}

/** Appends `points` to a curve, thinned past MAX_POINTS. */
const extend = (list, points) => {
  list.push(...points);
  while (list.length > MAX_POINTS) list = thin(list);
  return list;
};

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

/** Steps the next chunk may take: 1 at first, then about a tenth of the steps done (so early updates stay dense). */
export const chunkCap = (steps) => Math.max(1, Math.floor(steps / 10));

/**
 * The error a chunk reports when training breaks the weights (for engines that
 * do not reject a diverging step themselves): `steps` is a step or a range.
 */
export function divergedError(steps, cause = 'the loss is not a finite number') {
  const at = typeof steps === 'number' ? `at step ${steps}` : `within steps ${steps}`;
  return Object.assign(new Error(`train: training diverged ${at} (${cause}); the model is kept as it was before; `
    + 'try a smaller learning rate'), { code: 'ERR_VALUE' });
}

/** The fields of a run every family has; a family adds its own (its fresh()). */
const RUN_FIELDS = ['losses', 'accuracy', 'steps', 'startSteps', 'recorded', 'recordedEvery', 'trainSeconds', 'examplesPerSecond', 'lastEval'];

export class Session {
  /**
   * client: a LabClient; hooks: { onProgress(session), onError(err), onState(session) }.
   */
  constructor(client, hooks) {
    this.client = client;
    this.hooks = hooks;
    this.family = null; // the adapter of the model in hand
    this.model = null;
    this.info = null;
    this.checkpoint = null; // { step, bytes }: the weights after the last good update
    this.playing = false;
    this.busy = null;
    this.stepsPerUpdate = 0; // > 0: steps per frame; < 0: -n steps per second, one at a time; 0: as fast as it goes
    this.until = null; // the step the run under way stops at by itself (null: it runs until paused)
    this.reset();
  }

  /** The worker's kind of the model in hand: 'seq2seq', 'vision' or 'transformer' (null: none). */
  get kind() {
    return this.info?.kind ?? null;
  }

  reset() {
    this.losses = [];
    this.accuracy = [];
    this.steps = 0;
    this.startSteps = 0;
    this.recorded = false; // the curves hold the steps before startSteps: a pretrained model's recorded run
    this.recordedEvery = 1; // the recorded run's loss points: each the mean of this many steps
    this.trainSeconds = 0;
    this.examplesPerSecond = 0;
    this.chunk = 1;
    this.lastEval = null;
    if (this.family) Object.assign(this, this.family.fresh());
  }

  /** Everything of this run (model bytes aside), the family's timeline too: kept to come back to after a new model. */
  run() {
    const fields = [...RUN_FIELDS, ...Object.keys(this.family.fresh())];
    return Object.fromEntries(fields.map((k) => [k, this[k]]));
  }

  /** Comes back to a run kept by run(), with its model saved as `bytes`. */
  async restore(family, run, bytes) {
    await this.load(family, bytes);
    Object.assign(this, run);
    this.hooks.onProgress?.(this);
  }

  /** Replaces the model with a new one of `family`: `spec` is its { action, options } (family.create()). */
  async create(family, { action, options }) {
    await this.stop();
    return this.adopt(family, await this.client.call(action, { options }));
  }

  /** Adopts a model from saved bytes (it keeps its steps). */
  async load(family, bytes) {
    await this.stop();
    return this.adopt(family, await this.client.call('load', { bytes }), true);
  }

  /**
   * Takes the worker's model `made` (a create or load answer) in place of the
   * one there was; a loaded model's accuracy is known from its first step.
   */
  async adopt(family, made, loaded = false) {
    if (!family.kinds.includes(made.kind)) {
      await this.client.call('destroy', { model: made.model });
      throw Object.assign(new Error(`the file holds a ${made.kind} model, not a ${family.noun}`), { code: 'ERR_VALUE' });
    }
    await this.stop();
    await this.drop();
    this.family = family;
    this.model = made.model;
    this.info = made;
    this.reset();
    this.steps = made.steps;
    this.startSteps = made.steps; // a loaded model's steps were trained before this run
    if (made.steps > 0) {
      // a trained model's accuracy is known from the start (its curve begins there)
      this.lastEval = await this.evaluate();
      this.accuracy.push({ step: made.steps, value: family.accuracy(this.lastEval) });
    }
    await this.update();
    this.hooks.onState?.(this);
    return made;
  }

  /**
   * A pretrained model's recorded run (its models.json `history`: the loss of every
   * step, or with `lossEvery: k` the mean of every k steps, each at the window's last
   * step; the accuracy; the family's own records, such as the heads' scores) as this
   * run's curves from step 0, so that what it went through shows before anything is
   * trained here. A history that does not read as one is left out.
   */
  adoptHistory(history) {
    const points = (list) => Array.isArray(list) && list.every((p) => Number.isInteger(p?.step) && p.step >= 0 && p.step <= this.steps && Number.isFinite(p.value));
    const h = history ?? {};
    const every = h.lossEvery ?? 1;
    if (!Number.isInteger(every) || every < 1) return false;
    if (!Array.isArray(h.losses) || h.losses.length !== Math.ceil(this.steps / every) || !h.losses.every(Number.isFinite) || !points(h.accuracy)) return false;
    if (this.family.history && !this.family.history(this, h)) return false;
    this.losses = h.losses.map((value, i) => ({ step: Math.min(this.steps, (i + 1) * every), value, n: every })); // n: each the mean of `every` steps (thin)
    this.recordedEvery = every;
    // the lab's own measure of the model in hand ends the curve
    this.accuracy = [...h.accuracy.filter((p) => p.step < this.steps), ...this.accuracy];
    this.recorded = true;
    return true;
  }

  async drop() {
    if (this.model) await this.client.call('destroy', { model: this.model });
    this.model = null;
  }

  save() {
    return this.client.call('save', { model: this.model });
  }

  /** A worker action on the model in hand: read('translate', { text, options }). */
  read(action, args = {}) {
    return this.client.call(action, { model: this.model, ...args });
  }

  /** A worker action on the model saved as `bytes` (a snapshot: the model as it was then). */
  async readAt(bytes, action, args = {}) {
    const { model } = await this.client.call('load', { bytes });
    try {
      return await this.client.call(action, { model, ...args });
    } finally {
      await this.client.call('destroy', { model });
    }
  }

  /** The family's evaluation of the model in hand (`options` added: a count, heads to ablate). */
  evaluate(options = {}) {
    return this.read('evaluate', { options: { ...this.family.evaluation, ...options } });
  }

  /** Test examples, or train ones when the test split is empty (a small pasted dataset). */
  async examples(count, seed) {
    try {
      return await this.read('examples', { options: { split: 'test', count, seed } });
    } catch {
      return this.read('examples', { options: { split: 'train', count, seed } });
    }
  }

  /** Starts the training loop with train options (the family's trainOptions()), to stop by itself at step `until` (null: never). */
  play(trainOptions, until = null) {
    if (this.playing || !this.model || (until !== null && this.steps >= until)) return;
    this.playing = true;
    this.until = until;
    this.trainOptions = trainOptions;
    this.hooks.onState?.(this);
    this.busy = this.loop();
  }

  pause() {
    if (!this.playing) return;
    this.playing = false;
    this.hooks.onState?.(this);
  }

  /** Pauses and waits for the chunk under way. */
  async stop() {
    this.pause();
    await this.busy;
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
        const want = per > 0 ? per : per < 0 ? 1 : Math.min(this.chunk, chunkCap(this.steps - this.startSteps));
        const steps = this.until === null ? want : Math.min(want, this.until - this.steps);
        const t0 = performance.now();
        await this.chunkOnce({ ...this.trainOptions, steps });
        if (this.until !== null && this.steps >= this.until) {
          // the run's length reached: it stops by itself (Continue trains another)
          this.playing = false;
          this.hooks.onState?.(this);
          break;
        }
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
   * Trains one chunk. A chunk that diverges or fails leaves the model as it was
   * before it (the engine rejects a diverging step; anything else is rolled
   * back to the checkpoint) and throws the engine's ERR_VALUE message.
   */
  async chunkOnce(options) {
    const t0 = performance.now();
    let r;
    try {
      r = await this.read('train', { options });
    } catch (err) {
      // the engine rejects a diverging step and keeps the weights as the call found them;
      // should a failed call leave weights that no longer evaluate, the engine's copy undoes it
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
      ev = await this.evaluate();
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
    const first = r.steps - r.losses.length;
    this.losses = extend(this.losses, Array.from(r.losses, (value, i) => ({ step: first + i + 1, value })));
    this.steps = r.steps;
    this.trainSeconds += r.seconds;
    this.examplesPerSecond = r.examplesPerSecond ?? (r.losses.length * (options.batch ?? this.info.config.batch)) / r.seconds;
    this.accuracy = extend(this.accuracy, [{ step: r.steps, value: this.family.accuracy(ev) }]);
    this.lastEval = ev;
    await this.update();
    // aim each call at CHUNK_MS, or twice what its evaluation and snapshot take if more
    // (a bigger model evaluates slowly: chunks grow so that training keeps most of the time)
    const target = Math.max(CHUNK_MS, 2 * (performance.now() - t0 - ms));
    this.chunk = Math.max(1, Math.min(200, Math.round((options.steps * target) / Math.max(ms, 1))));
    this.hooks.onProgress?.(this);
  }

  /** Saves the weights now as the checkpoint, and lets the family keep them in its timeline. */
  async update() {
    const bytes = await this.save();
    this.checkpoint = { step: this.steps, bytes };
    await this.family.record(this, bytes);
  }

  /** Records this step in the family's timeline again (its input changed): the checkpoint's weights, when they are this step's. */
  record() {
    return this.family.record(this, this.checkpoint?.step === this.steps ? this.checkpoint.bytes : undefined);
  }

  /** Whether the model still gives a finite loss. */
  async sound() {
    try {
      return Number.isFinite((await this.evaluate({ count: SOUND_COUNT })).loss);
    } catch {
      return false;
    }
  }

  /** Puts the model back as it was before the chunk that went wrong (the engine's copy, undoTrain). */
  async rollback() {
    await this.read('undoTrain');
  }
}

/**
 * A timeline of weights, { step, bytes } after every update (text and image
 * families: the alignment's and the image's timeline replay the model as it
 * was), thinned in log(step) to MAX_SNAPSHOTS and MAX_SNAPSHOT_BYTES.
 */
const MAX_SNAPSHOTS = 120;
const MAX_SNAPSHOT_BYTES = 48 << 20;
export const snapshotTimeline = {
  fresh: () => ({ snapshots: [], snapshotBytes: 0 }),
  async record(session, bytes) {
    if (!bytes) return;
    const last = session.snapshots.at(-1);
    if (last?.step === session.steps) return;
    session.snapshots.push({ step: session.steps, bytes });
    session.snapshotBytes += bytes.length;
    while (session.snapshots.length > 2 && (session.snapshots.length > MAX_SNAPSHOTS || session.snapshotBytes > MAX_SNAPSHOT_BYTES)) {
      session.snapshots = thinSnapshots(session.snapshots);
      session.snapshotBytes = session.snapshots.reduce((n, s) => n + s.bytes.length, 0);
    }
  },
};
