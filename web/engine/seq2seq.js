// Seq2seq models bound to a task (the C trainer, include/attnlab/trainer.h):
// created with engine.createSeq2Seq(options) or engine.loadSeq2Seq(bytes).
// Every call is one synchronous trip into WASM; a page runs training in a
// worker and calls train() a few steps at a time to show progress.
import { AttnlabError, argError, limitError, valueError } from './errors.js';
import { options, toBoolean, toChoice, toInteger, toNumber } from './matrix.js';

export const TASKS = Object.freeze({ copy: 0, reverse: 1, sort: 2, dates: 3, pairs: 4 });
export const ALPHABETS = Object.freeze({ digits: 0, letters: 1 });
export const CELLS = Object.freeze({ rnn: 0, gru: 1, lstm: 2 });
export const ATTENTIONS = Object.freeze({
  none: -1, dot: 0, scaled_dot: 1, general: 2, additive: 3, cosine: 4, location: 5,
});
export const OPTIMIZERS = Object.freeze({ adam: 0, sgd: 1 });
export const SPLITS = Object.freeze({ train: 0, validation: 1, valid: 1, test: 2 });

/** Limits of the seq2seq engine (include/attnlab/seq2seq.h, tasks.h, trainer.h). */
export const SEQ2SEQ_LIMITS = Object.freeze({
  maxHidden: 512, maxEmbed: 512, maxBatch: 1024, maxBeam: 16, maxLength: 64,
  maxPairsBytes: 8 << 20, maxSteps: 100000, maxEvaluate: 100000,
});

const EOS = '</s>';
const nameOf = (table, code) => Object.keys(table).find((k) => table[k] === code);
const bytesOf = (n) => Math.ceil(n / 4); // withBlock counts 4-byte slots

/** The creation options, validated, as the C call's arguments. */
function createArgs(o) {
  const task = toChoice('task', o.task, TASKS, 'reverse');
  const alphabet = toChoice('alphabet', o.alphabet, ALPHABETS, 'digits');
  const minLength = toInteger('minLength', o.minLength, 4, 1, SEQ2SEQ_LIMITS.maxLength);
  const maxLength = toInteger('maxLength', o.maxLength, Math.max(minLength, 12), 1, SEQ2SEQ_LIMITS.maxLength);
  if (maxLength < minLength) throw valueError(`maxLength: ${maxLength} is below minLength ${minLength}`);
  let pairs = null;
  if (task === TASKS.pairs) {
    if (typeof o.pairs !== 'string') throw argError("pairs: the 'pairs' task needs text of lines \"input<TAB>output\"");
    pairs = new TextEncoder().encode(o.pairs);
    if (pairs.length > SEQ2SEQ_LIMITS.maxPairsBytes) {
      throw limitError(`pairs: ${pairs.length} bytes is past the limit of ${SEQ2SEQ_LIMITS.maxPairsBytes}`);
    }
  } else if (o.pairs !== undefined) {
    throw argError(`pairs: only the 'pairs' task takes pairs (task is '${nameOf(TASKS, task)}')`);
  }
  const seed = o.seed === undefined ? 1 : o.seed;
  if (!Number.isSafeInteger(seed) || seed < 0) throw valueError(`seed must be an integer in 0..2^53-1 (got ${seed})`);
  return {
    task, alphabet, minLength, maxLength, pairs, seed,
    cell: toChoice('cell', o.cell, CELLS, 'gru'),
    layers: toInteger('layers', o.layers, 1, 1, 2),
    bidirectional: toBoolean('bidirectional', o.bidirectional, false),
    embed: toInteger('embed', o.embed, 32, 1, SEQ2SEQ_LIMITS.maxEmbed),
    hidden: toInteger('hidden', o.hidden, 64, 1, SEQ2SEQ_LIMITS.maxHidden),
    attention: toChoice('attention', o.attention, ATTENTIONS, 'additive'),
    attnHidden: toInteger('attnHidden', o.attnHidden, 0, 0, SEQ2SEQ_LIMITS.maxHidden),
    batch: toInteger('batch', o.batch, 64, 1, SEQ2SEQ_LIMITS.maxBatch),
  };
}

/** Allocates one pointer-sized out slot, runs fn(slot), returns the pointer stored there. */
function withHandle(heap, fn) {
  return heap.withBlock({ slot: 1 }, (p) => {
    heap.writeI32(p.slot, [0]);
    fn(p.slot);
    return heap.i32[p.slot >> 2] >>> 0;
  });
}

export function createSeq2Seq(heap, args) {
  const a = createArgs(options('createSeq2Seq', args));
  const text = a.pairs ?? new Uint8Array(0);
  const handle = heap.withBlock({ text: bytesOf(text.length + 1) }, (p) => {
    heap.writeBytes(p.text, text);
    return withHandle(heap, (slot) => heap.check(heap.exports.attnlab_s2s_create(
      a.task, a.alphabet, a.minLength, a.maxLength, text.length ? p.text : 0, text.length,
      a.cell, a.layers, a.bidirectional ? 1 : 0, a.embed, a.hidden, a.attention, a.attnHidden, a.batch, a.seed,
      slot), 'createSeq2Seq'));
  });
  return new Seq2SeqModel(heap, handle);
}

export function loadSeq2Seq(heap, bytes) {
  if (bytes instanceof ArrayBuffer) bytes = new Uint8Array(bytes);
  if (!(bytes instanceof Uint8Array)) throw argError('loadSeq2Seq: expected the bytes of a saved model (a Uint8Array)');
  if (bytes.length === 0) throw valueError('loadSeq2Seq: the file is empty');
  const handle = heap.withBlock({ bytes: bytesOf(bytes.length) }, (p) => {
    heap.writeBytes(p.bytes, bytes);
    return withHandle(heap, (slot) => heap.check(heap.exports.attnlab_s2s_load(p.bytes, bytes.length, slot), 'loadSeq2Seq'));
  });
  return new Seq2SeqModel(heap, handle);
}

const now = () => (typeof performance === 'object' ? performance.now() : Date.now());

/** A trained or training encoder-decoder with its task. */
export class Seq2SeqModel {
  constructor(heap, handle) {
    this.heap = heap;
    this.handle = handle;
    const s = heap.withBlock({ info: 16, params: 2, steps: 2, seed: 2 }, (p) => {
      heap.exports.attnlab_s2s_info(handle, p.info, p.params, p.steps, p.seed);
      const info = Array.from(heap.i32.subarray(p.info >> 2, (p.info >> 2) + 16));
      const f64 = new Float64Array(heap.exports.memory.buffer);
      return { info, params: f64[p.params >> 3], seed: f64[p.seed >> 3] };
    });
    const [task, alphabet, minLength, maxLength, inVocab, outVocab, maxIn, maxOut, fixedIn,
      cell, layers, bidirectional, embed, hidden, attention, batch] = s.info;
    /** The model's configuration (as createSeq2Seq options) and its sizes. */
    this.config = Object.freeze({
      task: nameOf(TASKS, task), alphabet: nameOf(ALPHABETS, alphabet), minLength, maxLength,
      cell: nameOf(CELLS, cell), layers, bidirectional: bidirectional === 1, embed, hidden,
      attention: nameOf(ATTENTIONS, attention), batch, seed: s.seed,
      inputVocabulary: inVocab, outputVocabulary: outVocab, maxInput: maxIn, maxOutput: maxOut,
      fixedInput: fixedIn, parameters: s.params,
    });
    this.inputAlphabet = heap.readString(heap.exports.attnlab_s2s_alphabet(handle, 0));
    this.outputAlphabet = heap.readString(heap.exports.attnlab_s2s_alphabet(handle, 1));
  }

  #live(what) {
    if (!this.handle) throw new AttnlabError('ERR_ARG', `${what}: this model was destroyed`);
    return this.handle;
  }

  /** Optimiser steps taken so far. */
  get steps() {
    const handle = this.#live('steps');
    return this.heap.withBlock({ info: 16, params: 2, steps: 2, seed: 2 }, (p) => {
      this.heap.exports.attnlab_s2s_info(handle, p.info, p.params, p.steps, p.seed);
      return new Float64Array(this.heap.exports.memory.buffer)[p.steps >> 3];
    });
  }

  /**
   * Trains `steps` optimiser steps (default 1) on batches of `batch` train
   * examples with teacher forcing.
   * @returns {{ loss, losses: Float32Array, steps, examples, seconds, examplesPerSecond, tokensPerSecond }}
   */
  train(args = {}) {
    const handle = this.#live('train');
    const o = options('train', args);
    const steps = toInteger('steps', o.steps, 1, 1, SEQ2SEQ_LIMITS.maxSteps);
    const batch = toInteger('batch', o.batch, Math.min(32, this.config.batch), 1, this.config.batch);
    const optimizer = toChoice('optimizer', o.optimizer, OPTIMIZERS, 'adam');
    const lr = toNumber('lr', o.lr, optimizer === OPTIMIZERS.adam ? 0.005 : 0.1);
    if (!(lr > 0)) throw valueError(`lr must be > 0 (got ${lr})`);
    const clip = toNumber('clip', o.clip, 5);
    if (clip < 0) throw valueError(`clip must be >= 0; 0 turns clipping off (got ${clip})`);
    const heap = this.heap;
    return heap.withBlock({ losses: steps, tokens: 2 }, (p) => {
      const t0 = now();
      heap.check(heap.exports.attnlab_s2s_train(handle, optimizer, lr, clip, steps, batch, p.losses, p.tokens), 'train');
      const seconds = Math.max((now() - t0) / 1000, 1e-9);
      const losses = heap.f32.slice(p.losses >> 2, (p.losses >> 2) + steps);
      const tokens = new Float64Array(heap.exports.memory.buffer)[p.tokens >> 3];
      const examples = steps * batch;
      return {
        loss: losses.reduce((s, x) => s + x, 0) / steps,
        losses, steps: this.steps, examples, seconds,
        examplesPerSecond: examples / seconds, tokensPerSecond: tokens / seconds,
      };
    });
  }

  /**
   * Loss and greedy accuracies on a fixed set of `count` examples of a split,
   * with the sequence accuracy by input length (the bottleneck shows there).
   * @returns {{ loss, tokenAccuracy, sequenceAccuracy, count, split, byLength: { length, count, sequenceAccuracy }[] }}
   */
  evaluate(args = {}) {
    const handle = this.#live('evaluate');
    const o = options('evaluate', args);
    const split = toChoice('split', o.split, SPLITS, 'test');
    const count = toInteger('count', o.count, 500, 1, SEQ2SEQ_LIMITS.maxEvaluate);
    const heap = this.heap;
    const L = SEQ2SEQ_LIMITS.maxLength + 1;
    return heap.withBlock({ out: 8, byLength: 2 * L }, (p) => {
      heap.check(heap.exports.attnlab_s2s_evaluate(handle, split, count, p.out, p.byLength), 'evaluate');
      const [loss, tokenAccuracy, sequenceAccuracy, n] = new Float64Array(heap.exports.memory.buffer, p.out, 4);
      const counts = heap.i32.slice(p.byLength >> 2, (p.byLength >> 2) + 2 * L);
      const byLength = [];
      for (let len = 1; len < L; len++) {
        if (counts[len]) byLength.push({ length: len, count: counts[len], sequenceAccuracy: counts[L + len] / counts[len] });
      }
      return { loss, tokenAccuracy, sequenceAccuracy, count: n, split: nameOf(SPLITS, split), byLength };
    });
  }

  /**
   * Decodes `text` greedily (beam 1) or with beam search.
   * @returns {{ output, inputTokens, outputTokens, alignment }} alignment: output steps x input tokens
   */
  translate(text, args = {}) {
    const handle = this.#live('translate');
    if (typeof text !== 'string') throw argError(`text: expected a string (got ${typeof text})`);
    const o = options('translate', args);
    const beam = toInteger('beam', o.beam, 1, 1, SEQ2SEQ_LIMITS.maxBeam);
    const bytes = new TextEncoder().encode(text);
    if (bytes.length > SEQ2SEQ_LIMITS.maxLength * 4) {
      throw limitError(`text: ${text.length} characters; this model reads at most ${this.config.maxInput}`);
    }
    const { maxInput, maxOutput } = this.config;
    const heap = this.heap;
    return heap.withBlock({
      text: bytesOf(bytes.length + 1), inIds: maxInput, outIds: maxOutput, lens: 2,
      alignment: maxOutput * maxInput, output: bytesOf(maxOutput + 1),
    }, (p) => {
      heap.writeBytes(p.text, bytes);
      heap.writeBytes(p.text + bytes.length, [0]);
      heap.check(heap.exports.attnlab_s2s_translate(handle, p.text, beam, p.inIds, p.outIds, p.lens, p.alignment, p.output), 'translate');
      const [inLen, outLen] = heap.i32.subarray(p.lens >> 2, (p.lens >> 2) + 2);
      const output = heap.readString(p.output);
      const inIds = heap.i32.subarray(p.inIds >> 2, (p.inIds >> 2) + inLen);
      const outIds = heap.i32.subarray(p.outIds >> 2, (p.outIds >> 2) + outLen);
      const inputTokens = Array.from(inIds, (id) => this.inputAlphabet[id - 1]);
      const outputTokens = Array.from(outIds, (id) => (id === 2 ? EOS : this.outputAlphabet[id - 3] ?? '?'));
      const data = new Float32Array(outLen * inLen);
      const all = heap.f32;
      for (let t = 0; t < outLen; t++) {
        const row = (p.alignment >> 2) + t * maxInput;
        data.set(all.subarray(row, row + inLen), t * inLen);
      }
      return { output, inputTokens, outputTokens, alignment: { rows: outLen, cols: inLen, data } };
    });
  }

  /** `count` examples { input, output } of a split, drawn from `seed`. */
  examples(args = {}) {
    const handle = this.#live('examples');
    const o = options('examples', args);
    const split = toChoice('split', o.split, SPLITS, 'train');
    const count = toInteger('count', o.count, 10, 1, 1000);
    const seed = toInteger('seed', o.seed, 1, 0, Number.MAX_SAFE_INTEGER);
    const heap = this.heap;
    const room = bytesOf(SEQ2SEQ_LIMITS.maxLength + 1);
    return heap.withBlock({ rng: 2, input: room, output: room }, (p) => {
      heap.writeI32(p.rng, [seed % 2 ** 32, Math.floor(seed / 2 ** 32)]);
      const out = [];
      for (let i = 0; i < count; i++) {
        heap.check(heap.exports.attnlab_s2s_sample(handle, split, p.rng, p.input, p.output), 'examples');
        out.push({ input: heap.readString(p.input), output: heap.readString(p.output) });
      }
      return out;
    });
  }

  /** The model and its task in the versioned attnlab format. */
  save() {
    const handle = this.#live('save');
    const heap = this.heap;
    const size = heap.exports.attnlab_s2s_save_size(handle);
    return heap.withBlock({ bytes: bytesOf(size) }, (p) => {
      heap.check(heap.exports.attnlab_s2s_save(handle, p.bytes, size), 'save');
      return new Uint8Array(heap.exports.memory.buffer, p.bytes, size).slice();
    });
  }

  /** Frees the model; calling it again does nothing. */
  destroy() {
    if (!this.handle) return;
    this.heap.exports.attnlab_s2s_destroy(this.handle);
    this.handle = 0;
  }
}
