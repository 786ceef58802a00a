// A transformer's training session: the lab's training loop (session.js: Train,
// Pause, Step, chunks sized to the display, the speed setting) over a
// transformer in the worker. After every chunk it records a frame for the
// time-lapse: the inspected input's attention maps and logit lens as the model
// had them, and the heads' previous-token and induction scores, measured every
// SCORE_EVERY steps (a few milliseconds each), and the model's weights (its
// saved bytes), so that an input typed later is read by the model as it was at
// that step. The lab's transformers are small (the default one is some 165 KB),
// so 120 frames of weights cost a few MB; a model past FRAME_WEIGHTS_MAX keeps
// only what was shown (saving it every chunk would cost more than its training).
// Frames are thinned as the lab's snapshots are (dense at the start, where heads
// form), and their weights too when they pass WEIGHTS_BUDGET. No DOM.
import { MAX_POINTS, TrainingSession, WARMUP_STEPS, thin, thinIndex, thinSnapshots } from './session.js';

/** Frames kept for the time-lapse (each holds layers × heads maps of the input, and the weights). */
const MAX_FRAMES = 120;
/** A model whose saved bytes pass this (some 500,000 parameters) keeps no weights in its frames. */
const FRAME_WEIGHTS_MAX = 2 << 20;
/** The frames' weights together stay under this: past it, the weights of the frames thinning would drop go first. */
const WEIGHTS_BUDGET = 48 << 20;
/**
 * Steps between two measures of the heads' scores: every SCORE_EVERY steps,
 * more often at first (half the steps done, at least 10), where little has been seen.
 */
export const SCORE_EVERY = 100;
const scoreGap = (step) => Math.min(SCORE_EVERY, Math.max(10, Math.round(step / 2)));
/** Induction sequences the scores are measured on. */
const SCORE_COUNT = 32;
/** Test sequences behind the accuracy beside Train and the ablation readout (some 1,400 scored tokens for induction). */
export const EVAL_COUNT = 64;
/** A chunk's training takes about this long, or twice what its evaluation and frame take, if more. */
const CHUNK_MS = 120;

const push = (list, points) => {
  list.push(...points);
  return list.length > MAX_POINTS ? thin(list) : list;
};

export class TransformerSession extends TrainingSession {
  constructor(client, hooks) {
    super(client, hooks);
    this.kind = 'transformer';
    this.input = '';
  }

  reset() {
    super.reset();
    this.frames = []; // [{ step, input, view: inspect(input) | null, scores, bytes: save() | undefined }]
    this.frameBytes = 0;
    this.scores = []; // [{ step, heads: [layer][head] -> { previousToken, induction } }]
  }

  /** A new model from createTransformer options; its first frame waits for an input (record()). */
  async create(options) {
    this.pause();
    await this.busy;
    return this.adopt(await this.client.call('createTransformer', { options }));
  }

  /** A model from saved bytes (a file, a pretrained model, a kept one): it keeps its steps. */
  async load(bytes) {
    this.pause();
    await this.busy;
    return this.adopt(await this.client.call('load', { bytes }), true);
  }

  /**
   * Takes the worker's model `made` (createTransformer's or load's answer) in place
   * of the one there was; a loaded model's accuracy is known from its first step.
   */
  async adopt(made, loaded = false) {
    if (made.kind !== 'transformer') throw Object.assign(new Error(`the file holds a ${made.kind} model, not a transformer`), { code: 'ERR_VALUE' });
    this.pause();
    await this.busy;
    await this.drop();
    this.model = made.model;
    this.info = made;
    this.reset();
    this.steps = made.steps;
    this.startSteps = made.steps;
    this.loadedAt = loaded ? made.steps : null;
    if (made.steps > 0) {
      this.lastEval = await this.evaluate();
      this.accuracy.push({ step: made.steps, value: this.lastEval.accuracy });
    }
    this.hooks.onState?.(this);
    return made;
  }

  /** Everything of this run (model bytes aside), with the time-lapse: kept to come back to. */
  run() {
    const { frames, frameBytes, scores, input } = this;
    return { ...super.run(), frames, frameBytes, scores, input };
  }

  /** The engine refuses a step whose loss is not finite and keeps its weights: its error is the chunk's. */
  async chunkOnce(options) {
    const t0 = performance.now();
    // a loaded model has no AdamW moments: its rate ramps up as the lab's other models' do (session.js)
    const resumed = this.steps - (this.loadedAt ?? 0);
    const lr = this.loadedAt !== null && options.lr ? options.lr * Math.min(1, (resumed + 1) / WARMUP_STEPS) : options.lr;
    const r = await this.client.call('train', { model: this.model, options: { ...options, lr } });
    const ms = performance.now() - t0;
    const ev = await this.evaluate();
    const first = r.steps - r.losses.length;
    this.losses = push(this.losses, Array.from(r.losses, (value, i) => ({ step: first + i + 1, value })));
    this.steps = r.steps;
    this.trainSeconds += r.seconds;
    this.examplesPerSecond = (r.losses.length * (options.batch ?? this.info.config.batch)) / r.seconds;
    this.accuracy = push(this.accuracy, [{ step: r.steps, value: ev.accuracy }]);
    this.lastEval = ev;
    await this.record();
    // a bigger model evaluates slowly: chunks grow so that training keeps most of the time
    const target = Math.max(CHUNK_MS, 2 * (performance.now() - t0 - ms));
    this.chunk = Math.max(1, Math.min(200, Math.round((options.steps * target) / Math.max(ms, 1))));
    this.hooks.onProgress?.(this);
  }

  /** Loss and accuracy on the test split's first EVAL_COUNT sequences, with `ablate`'s heads zeroed. */
  evaluate(ablate = []) {
    return this.client.call('evaluate', { model: this.model, options: { split: 'test', count: EVAL_COUNT, ablate } });
  }

  /** One forward pass over `input` with `ablate`'s heads zeroed: attention, predictions, logit lens. */
  inspect(input, ablate = []) {
    return this.client.call('inspect', { model: this.model, input, options: { ablate } });
  }

  generate(prompt, options) {
    return this.client.call('generate', { model: this.model, prompt, options });
  }

  /** Records the frame of this step: the scores when due, and the input's maps (none if it cannot be read). */
  async record() {
    const last = this.scores.at(-1);
    if (!last || this.steps - last.step >= scoreGap(last.step)) {
      const heads = await this.client.call('headScores', { model: this.model, options: { count: SCORE_COUNT } });
      this.scores.push({ step: this.steps, heads });
    }
    const view = this.input ? await this.inspect(this.input).catch(() => null) : null;
    const same = this.frames.at(-1)?.step === this.steps;
    const bytes = same ? this.frames.at(-1).bytes : await this.weights();
    const frame = { step: this.steps, input: this.input, view, scores: this.scores.at(-1), bytes };
    if (same) this.frames[this.frames.length - 1] = frame;
    else this.frames.push(frame);
    while (this.frames.length > MAX_FRAMES) this.frames = thinSnapshots(this.frames);
    this.frameBytes = this.frames.reduce((n, f) => n + (f.bytes?.length ?? 0), 0);
    for (let kept = this.frames.filter((f) => f.bytes); this.frameBytes > WEIGHTS_BUDGET && kept.length > 2;) {
      const [gone] = kept.splice(thinIndex(kept), 1);
      this.frameBytes -= gone.bytes.length;
      delete gone.bytes;
    }
  }

  /** The model's saved bytes for a frame, or undefined when it is too large to keep every chunk. */
  async weights() {
    if (4 * (this.info.config.parameters ?? Infinity) > FRAME_WEIGHTS_MAX) return undefined;
    return this.save();
  }

  /**
   * `input` read by the model as it was at `frame`: its recorded view when it
   * recorded this input, else its weights, loaded for one forward pass. Null
   * when the frame has neither (a model too large to keep weights).
   */
  async inspectAt(frame, input, ablate = []) {
    if (frame.input === input && !ablate.length && frame.view) return frame.view;
    if (!frame.bytes) return null;
    const { model } = await this.client.call('load', { bytes: frame.bytes });
    try {
      return await this.client.call('inspect', { model, input, options: { ablate } });
    } finally {
      await this.client.call('destroy', { model });
    }
  }
}
