// What every trained model of the engine shares (the seq2seq model, the image
// model, and any later one): its handle in the WASM heap, liveness, the error
// guard on each public method, and train / save / destroy through its exports.
//
// A model kind is a subclass that
//   - calls super(heap, handle, spec) with spec:
//       kind        its name for callers ('seq2seq', 'vision', 'transformer'): model.kind;
//       prefix      the prefix of its C exports (wasm.js BINDINGS): `${prefix}_info`,
//                   `_train`, `_save_size`, `_save`, `_destroy`;
//       info        the name of the record `_info` fills (src/wasm/boundary.h), or a
//                   function (handle) => that record, for a kind that reads its own; and
//       stepsField  its field counting optimiser steps;
//       train       { maxSteps, batch(config) and maxBatch(config): the default and largest
//                   batch, optimizers (null: the kind has one optimiser and no option for it),
//                   weightDecay: true when the kind's optimiser is AdamW (it takes a weightDecay),
//                   defaults: a kind outside the table's train() defaults (over TRAIN_FALLBACK),
//                   tokens: true when `_train` counts tokens, or (steps, batch, config, args) => tokens
//                   (args: the kind's own options' arguments),
//                   data: (options, call) => Int32Array, the token ids `_train` reads (as tokens, n),
//                   for a kind that trains on given data (a checkpoint on a text), with dataOptions
//                   the names of the options it reads,
//                   options: the kind's own options, { name: (value, call) => arguments of `_train`
//                   as { arg: value } }, call = { defaults: the train() defaults, decaySteps } },
//                   or null for a model that does not train;
//       lacks       (optional) { train, save }: why the model does not train or save, where it does
//                   not (train and save then throw ERR_ARG saying so);
//   - sets this.config, its configuration (what batch(config) reads, and what picks
//     the kind's train() defaults from the one table, defaults.js: steps, lr, clip, schedule...);
//   - runs the body of each public method of its own through this.guarded(name, fn):
//     fn gets the live handle, and anything it throws reaches the caller as an
//     AttnlabError with a code (a destroyed model: ERR_ARG naming the method).
import { AttnlabError, argError, describe, guard, limitError, valueError } from './errors.js';
import { SCHEDULES } from './constants.js';
import { trainDefaults } from './defaults.js';
import { options, toBytes, toChoice, toInteger, toNumber } from './matrix.js';
import { F32, F64, I32, U8 } from './wasm.js';

const now = () => (typeof performance === 'object' ? performance.now() : Date.now());

export class Model {
  #heap;
  #handle;
  #spec;

  constructor(heap, handle, spec) {
    this.#heap = heap;
    this.#handle = handle;
    this.#spec = spec;
  }

  /** 'seq2seq', 'vision' or 'transformer': which kind of model this is (engine.loadModel returns any). */
  get kind() {
    return this.#spec.kind;
  }

  /** The engine's heap the model lives in (for the subclass's calls). */
  get heap() {
    return this.#heap;
  }

  /** Runs fn(handle) as the public method `name`: the model must be live; every error is an AttnlabError. */
  guarded(name, fn) {
    return guard(name, () => {
      if (!this.#handle) throw new AttnlabError('ERR_ARG', `${name}: this model was destroyed`);
      return fn(this.#handle);
    });
  }

  /** The C core's record of this model (its configuration, sizes and steps). */
  info() {
    const { info, prefix } = this.#spec;
    return this.guarded('info', (model) => (typeof info === 'function' ? info(model) : this.#heap.callRecord(`${prefix}_info`, info, { model })));
  }

  /** Optimiser steps taken so far. */
  get steps() {
    return this.guarded('steps', () => this.info()[this.#spec.stepsField]);
  }

  /**
   * Trains `steps` optimiser steps on batches of `batch` train examples; the
   * limits and further options are the kind's (see the subclass), and every
   * option not given is the kind's default for this model (defaults.js, the one
   * table): `steps` the steps its headline needs, lr, clip, schedule, warmup...
   * Every kind takes the learning-rate schedule (opt_lr, src/layers/optim.c):
   * `schedule` 'constant' or 'cosine' (lr down to `finalLr`, 0: lr / 10, at the
   * model's step `decaySteps`, 0: the end of this call), after `warmup` steps of
   * linear warm-up counted from the model's first step. Not given, decaySteps is
   * the table's steps, or the end of this call when it goes past them, so the
   * same steps in chunks follow the same schedule as in one call.
   * @returns {{ loss, losses: Float32Array, steps, examples, seconds, examplesPerSecond, tokensPerSecond? }}
   */
  train(args = {}) {
    return this.guarded('train', (model) => {
      const t = this.#spec.train;
      if (!t) throw argError(`train: ${this.#spec.lacks?.train ?? `a ${this.kind} model does not train`}`);
      const d = trainDefaults(this.#spec.kind, this.config, t.defaults);
      const own = t.options ?? {};
      const o = options('train', args, ['steps', 'batch', ...(t.optimizers ? ['optimizer'] : []), 'lr', 'clip', 'schedule', 'warmup',
        'decaySteps', 'finalLr', ...(t.weightDecay ? ['weightDecay'] : []), ...Object.keys(own), ...(t.dataOptions ?? [])]);
      // steps sizes the losses block, so its limit is checked before allocating.
      const steps = toInteger('steps', o.steps, d.steps, 1, t.maxSteps);
      const batch = toInteger('batch', o.batch, t.batch(this.config), 1, t.maxBatch(this.config));
      const optimizer = t.optimizers ? { optimizer: toChoice('optimizer', o.optimizer, t.optimizers, d.optimizer) } : {};
      const adam = !t.optimizers || optimizer.optimizer === t.optimizers.adam;
      const lr = toNumber('lr', o.lr, adam ? d.lr : d.sgdLr);
      if (!(lr > 0)) throw valueError(`lr must be a finite number > 0 (got ${lr})`);
      const clip = toNumber('clip', o.clip, d.clip);
      if (clip < 0) throw valueError(`clip must be >= 0; 0 turns clipping off (got ${clip})`);
      // their ranges against lr and the model's steps are the core's (opt_check_options)
      const schedule = {
        schedule: toChoice('schedule', o.schedule, SCHEDULES, d.schedule),
        warmup: toInteger('warmup', o.warmup, d.warmup, 0),
        decaySteps: toInteger('decaySteps', o.decaySteps, this.steps + steps <= d.steps ? d.steps : 0, 0),
        finalLr: toNumber('finalLr', o.finalLr, d.finalLr),
        ...(t.weightDecay ? { weightDecay: toNumber('weightDecay', o.weightDecay, d.weightDecay) } : {}),
      };
      // what a kind's own options read: its defaults, the model's configuration and where its schedule ends
      const call = { defaults: d, config: this.config, decaySteps: schedule.decaySteps || this.steps + steps };
      const kindArgs = Object.assign({}, ...Object.entries(own).map(([name, parse]) => parse(o[name], call)));
      const counted = t.tokens === true;
      const data = t.data ? t.data(o, call) : null;
      const heap = this.#heap;
      return heap.withBlock({ losses: F32 * steps, tokens: counted ? F64 : 0, data: data ? I32 * data.length : 0 }, (p) => {
        if (data) heap.writeI32(p.data, data);
        const given = data ? { tokens: p.data, n: data.length } : counted ? { tokens: p.tokens } : {};
        const t0 = now();
        heap.call[`${this.#spec.prefix}_train`]({ model, ...optimizer, lr, clip, ...schedule, steps, batch, losses: p.losses, ...kindArgs, ...given });
        const seconds = Math.max((now() - t0) / 1000, 1e-9);
        const losses = heap.readF32(p.losses, steps);
        const examples = steps * batch;
        const result = {
          loss: losses.reduce((s, x) => s + x, 0) / steps,
          losses, steps: this.steps, examples, seconds, examplesPerSecond: examples / seconds,
        };
        if (counted) result.tokensPerSecond = heap.readF64(p.tokens) / seconds;
        else if (t.tokens) result.tokensPerSecond = t.tokens(steps, batch, this.config, kindArgs) / seconds;
        return result;
      });
    });
  }

  /**
   * Puts the model back where the last train() call found it: its weights, the
   * optimiser's moments and step count, and the training draws (the engine keeps
   * that copy for every call; a call that failed already went back by itself).
   * ERR_ARG before any train() call, or for a model that does not train.
   */
  undoTrain() {
    return this.guarded('undoTrain', (model) => {
      if (!this.#spec.train) throw argError(`undoTrain: ${this.#spec.lacks?.train ?? `a ${this.kind} model does not train`}`);
      this.#heap.call[`${this.#spec.prefix}_undo`]({ model });
    });
  }

  /** The model in the versioned attnlab format (engine.loadModel reads it back). */
  save() {
    return this.guarded('save', (model) => {
      if (this.#spec.lacks?.save) throw argError(`save: ${this.#spec.lacks.save}`);
      return this.#heap.savedBytes(this.#spec.prefix, model);
    });
  }

  /** Frees the model; calling it again does nothing. */
  destroy() {
    if (!this.#handle) return;
    const model = this.#handle;
    this.#handle = 0;
    this.#heap.call[`${this.#spec.prefix}_destroy`]({ model });
  }
}

/** A saved model's bytes as the engine's own copy (checked once), for loadHandle. */
export function modelFile(name, bytes) {
  const file = toBytes(bytes);
  if (file === null) throw argError(`${name}: expected the bytes of a saved model (a Uint8Array or an ArrayBuffer), got ${describe(bytes)}`);
  if (file.length === 0) throw valueError(`${name}: the file is empty`);
  return file;
}

/** The handle a `_load` export makes of a file from modelFile: `load({ bytes, size, out })` calls it. */
export function loadHandle(heap, file, load) {
  return heap.withBlock({ bytes: U8 * file.length }, (p) => {
    heap.writeBytes(p.bytes, file);
    return heap.withHandle((out) => load({ bytes: p.bytes, size: file.length, out }));
  });
}

/**
 * Runs fn with the heads of `ablate` ([{ layer, head }], of a model of
 * `layers` x `heads`) zeroed, then restores them: `set({ pairs, n })` is the
 * kind's export that sets them (its status checked under `name`).
 */
export function withAblation(heap, name, ablate, { layers, heads }, set, fn) {
  if (ablate === undefined || ablate === null) return fn();
  if (!Array.isArray(ablate)) throw argError(`${name}: ablate: expected an array of { layer, head } (got ${describe(ablate)})`);
  if (ablate.length > layers * heads) {
    throw limitError(`${name}: ablate: ${ablate.length} heads; the model has ${layers * heads}`);
  }
  const pairs = new Int32Array(2 * ablate.length);
  // read by index: a hole (`[, h]`) is an error, not skipped (forEach would leave its pair at head (0, 0))
  for (let i = 0; i < ablate.length; i++) {
    if (!Object.hasOwn(ablate, i)) throw argError(`${name}: ablate[${i}]: a hole in the array; expected { layer, head }`);
    const h = ablate[i];
    if (h === null || typeof h !== 'object') throw argError(`${name}: ablate[${i}]: expected { layer, head } (got ${describe(h)})`);
    const { layer, head } = h;
    if (layer === undefined || head === undefined) throw argError(`${name}: ablate[${i}]: needs both layer and head`);
    pairs[2 * i] = toInteger(`ablate[${i}].layer`, layer, undefined, 0, layers - 1);
    pairs[2 * i + 1] = toInteger(`ablate[${i}].head`, head, undefined, 0, heads - 1);
  }
  heap.withBlock({ pairs: I32 * pairs.length }, (p) => {
    heap.writeI32(p.pairs, pairs);
    heap.check(set({ pairs: p.pairs, n: ablate.length }), name);
  });
  try {
    return fn();
  } finally {
    set({ pairs: 0, n: 0 });
  }
}
