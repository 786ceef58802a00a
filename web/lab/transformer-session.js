// A transformer's training session: the lab's training loop (session.js: Train,
// Pause, Step, chunks sized to the display, the speed setting) over a
// transformer in the worker. After every chunk it records a frame for the
// time-lapse: the inspected input's attention maps and logit lens as the model
// had them, and the heads' previous-token and induction scores, measured every
// SCORE_EVERY steps (a few milliseconds each). A transformer cannot be saved to
// bytes yet, so the time-lapse keeps what was shown, not the weights; frames
// are thinned as the lab's snapshots are (dense at the start, where heads form).
// No DOM.
import { MAX_POINTS, TrainingSession, thin, thinSnapshots } from './session.js';

/** Frames kept for the time-lapse (each holds layers × heads maps of the input). */
const MAX_FRAMES = 120;
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
    this.frames = []; // [{ step, view: inspect() | null, scores }]
    this.scores = []; // [{ step, heads: [layer][head] -> { previousToken, induction } }]
  }

  /** A new model from createTransformer options; its first frame waits for an input (record()). */
  async create(options) {
    this.pause();
    await this.busy;
    const made = await this.client.call('createTransformer', { options });
    await this.drop();
    this.model = made.model;
    this.info = made;
    this.reset();
    this.hooks.onState?.(this);
    return made;
  }

  /** The engine refuses a step whose loss is not finite and keeps its weights: its error is the chunk's. */
  async chunkOnce(options) {
    const t0 = performance.now();
    const r = await this.client.call('train', { model: this.model, options });
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
    const frame = { step: this.steps, view, scores: this.scores.at(-1) };
    if (this.frames.at(-1)?.step === this.steps) this.frames[this.frames.length - 1] = frame;
    else this.frames.push(frame);
    while (this.frames.length > MAX_FRAMES) this.frames = thinSnapshots(this.frames);
  }
}
