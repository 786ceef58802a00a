// Seq2seq models bound to a task (the C trainer, include/attnlab/trainer.h):
// created with engine.createSeq2Seq(options) or engine.loadSeq2Seq(bytes).
// Every call is one synchronous trip into WASM; a page runs training in a
// worker and calls train() a few steps at a time to show progress.
import { SEQ2SEQ, SEQ2SEQ_LIMITS } from './constants.js';
import { DEFAULTS } from './defaults.js';
import { argError, describe, limitError, valueError } from './errors.js';
import { options, toBoolean, toChoice, toInteger } from './matrix.js';
import { Model, loadHandle, modelFile } from './model.js';
import { agreement, kendallTau } from './stats.js';
import { F32, I32, U8 } from './wasm.js';

const { TASKS, ALPHABETS, CELLS, ATTENTIONS, OPTIMIZERS, SPLITS, TOKENS } = SEQ2SEQ;

const EOS = '</s>';
const nameOf = (table, code) => Object.keys(table).find((k) => table[k] === code);

/**
 * The creation options, validated, as the C call's arguments. The sizes'
 * ranges (limits read from the core) are checked here too because the core's
 * status codes for them differ between its modules (ERR_VALUE for a zero
 * size in seq2seq.c, where nn.h documents ERR_SHAPE); the rest (layers,
 * maxLength >= minLength, location on variable lengths) is the core's.
 */
function createArgs(o) {
  const L = SEQ2SEQ_LIMITS;
  const D = DEFAULTS.seq2seq.model;
  const task = toChoice('task', o.task, TASKS, D.task);
  const minLength = toInteger('minLength', o.minLength, D.minLength, 1, L.maxLength);
  let pairs = null;
  if (task === TASKS.pairs) {
    if (typeof o.pairs !== 'string') throw argError("pairs: the 'pairs' task needs text of lines \"input<TAB>output\"");
    // Checked before encoding too (no oversized copy): each UTF-16 unit is at least one UTF-8 byte.
    if (o.pairs.length > SEQ2SEQ_LIMITS.maxPairsBytes) {
      throw limitError(`pairs: ${o.pairs.length} characters is past the limit of ${SEQ2SEQ_LIMITS.maxPairsBytes} bytes`);
    }
    pairs = new TextEncoder().encode(o.pairs);
    if (pairs.length > SEQ2SEQ_LIMITS.maxPairsBytes) {
      throw limitError(`pairs: ${pairs.length} bytes is past the limit of ${SEQ2SEQ_LIMITS.maxPairsBytes}`);
    }
  } else if (o.pairs !== undefined) {
    throw argError(`pairs: only the 'pairs' task takes pairs (task is '${nameOf(TASKS, task)}')`);
  }
  const seed = o.seed === undefined ? D.seed : o.seed;
  if (!Number.isSafeInteger(seed) || seed < 0) throw valueError(`seed must be an integer in 0..2^53-1 (got ${describe(seed)})`);
  return {
    task, minLength, pairs, seed,
    alphabet: toChoice('alphabet', o.alphabet, ALPHABETS, D.alphabet),
    maxLength: toInteger('maxLength', o.maxLength, Math.max(minLength, D.maxLength), 1, L.maxLength),
    cell: toChoice('cell', o.cell, CELLS, D.cell),
    layers: toInteger('layers', o.layers, D.layers),
    bidirectional: toBoolean('bidirectional', o.bidirectional, D.bidirectional),
    embed: toInteger('embed', o.embed, D.embed, 1, L.maxEmbed),
    hidden: toInteger('hidden', o.hidden, D.hidden, 1, L.maxHidden),
    attention: toChoice('attention', o.attention, ATTENTIONS, D.attention),
    attnHidden: toInteger('attnHidden', o.attnHidden, D.attnHidden, 0, L.maxHidden),
    batch: toInteger('batch', o.batch, D.batch, 1, L.maxBatch),
  };
}

export function createSeq2Seq(heap, args) {
  const a = createArgs(options('createSeq2Seq', args, [
    'task', 'alphabet', 'minLength', 'maxLength', 'pairs', 'cell', 'layers', 'bidirectional', 'embed', 'hidden',
    'attention', 'attnHidden', 'batch', 'seed',
  ]));
  const text = a.pairs ?? new Uint8Array(0);
  const handle = heap.withBlock({ text: U8 * (text.length + 1) }, (p) => {
    heap.writeBytes(p.text, text);
    return heap.withHandle((out) => heap.call.s2s_create({
      task: a.task, alphabet: a.alphabet, minLength: a.minLength, maxLength: a.maxLength,
      text: text.length ? p.text : 0, textLength: text.length, cell: a.cell, layers: a.layers,
      bidirectional: a.bidirectional, embed: a.embed, hidden: a.hidden, attention: a.attention,
      attnHidden: a.attnHidden, batch: a.batch, seed: a.seed, out,
    }));
  });
  return new Seq2SeqModel(heap, handle);
}

export function loadSeq2Seq(heap, bytes) {
  return new Seq2SeqModel(heap, loadHandle(heap, modelFile('loadSeq2Seq', bytes), (args) => heap.call.s2s_load(args)));
}

/** A trained or training encoder-decoder with its task. train, save, destroy and steps: see model.js. */
export class Seq2SeqModel extends Model {
  constructor(heap, handle) {
    super(heap, handle, {
      kind: 'seq2seq', prefix: 's2s', info: 'S2sInfo', stepsField: 'steps',
      train: {
        // up to SEQ2SEQ_LIMITS.maxBatch: the core grows the model's buffers for a batch larger than any before
        maxSteps: SEQ2SEQ_LIMITS.maxSteps, batch: (c) => Math.min(32, c.batch), maxBatch: () => SEQ2SEQ_LIMITS.maxBatch,
        optimizers: OPTIMIZERS, tokens: true,
      },
    });
    const info = this.info();
    /** The model's configuration (as createSeq2Seq options) and its sizes. */
    this.config = Object.freeze({
      task: nameOf(TASKS, info.task), alphabet: nameOf(ALPHABETS, info.alphabet),
      minLength: info.minLength, maxLength: info.maxLength,
      cell: nameOf(CELLS, info.cell), layers: info.layers, bidirectional: info.bidirectional === 1,
      embed: info.embed, hidden: info.hidden, attention: nameOf(ATTENTIONS, info.attention),
      attnHidden: info.attnHidden, batch: info.batch, seed: info.seed,
      inputVocabulary: info.inputVocabulary, outputVocabulary: info.outputVocabulary,
      maxInput: info.maxInput, maxOutput: info.maxOutput, fixedInput: info.fixedInput, parameters: info.parameters,
    });
    this.inputAlphabet = heap.readString(heap.call.s2s_alphabet({ model: handle, output: 0 }));
    this.outputAlphabet = heap.readString(heap.call.s2s_alphabet({ model: handle, output: 1 }));
  }

  /**
   * Loss and greedy accuracies on a fixed set of `count` examples of a split,
   * with the sequence accuracy by input length (the bottleneck shows there).
   * @returns {{ loss, tokenAccuracy, sequenceAccuracy, count, split, byLength: { length, count, sequenceAccuracy }[] }}
   */
  evaluate(args = {}) {
    return this.guarded('evaluate', (handle) => {
      const o = options('evaluate', args, ['split', 'count']);
      const split = toChoice('split', o.split, SPLITS, 'test');
      const count = toInteger('count', o.count, 500, 1, SEQ2SEQ_LIMITS.maxEvaluate);
      const heap = this.heap;
      const r = heap.callRecord('s2s_evaluate', 'TrainerEval', { model: handle, split, count });
      const byLength = [];
      r.lengthCount.forEach((n, length) => {
        if (n) byLength.push({ length, count: n, sequenceAccuracy: r.lengthRight[length] / n });
      });
      return {
        loss: r.loss, tokenAccuracy: r.tokenAccuracy, sequenceAccuracy: r.sequenceAccuracy, count: r.count,
        split: nameOf(SPLITS, split), byLength,
      };
    });
  }

  /**
   * Decodes `text` greedily (beam 1) or with beam search.
   * @returns {{ output, inputTokens, outputTokens, alignment }} alignment: output steps x input tokens
   */
  translate(text, args = {}) {
    return this.guarded('translate', (handle) => {
      const o = options('translate', args, ['beam']);
      const beam = toInteger('beam', o.beam, 1, 1, SEQ2SEQ_LIMITS.maxBeam); // the core's code for a beam past its limit differs by module
      const heap = this.heap;
      return this.#decode(handle, text, {}, (args) => heap.call.s2s_translate_n({ ...args, beam }));
    });
  }

  /**
   * Implicit attention: how much log p(output token `step`) of the greedy
   * translation moves with each input token, |d log p / d embedding| per
   * input position, beside the attention weights of that step and their rank
   * correlation (Kendall's tau-b), and whether both point at the same input
   * (stats.js agreement with k = 1: topMatch, the saliency share at the top-α position, ...).
   * @returns {{ rows: 1, cols, data, step, token, attention: Matrix, tau, agreement, output, inputTokens, outputTokens }}
   */
  saliency(text, args = {}) {
    return this.guarded('saliency', (handle) => {
      const o = options('saliency', args, ['step']);
      const step = toInteger('step', o.step, 0, 0, this.config.maxOutput - 1);
      const heap = this.heap;
      const r = this.#decode(handle, text, { saliency: F32 * this.config.maxInput }, (args, p) => {
        heap.call.s2s_saliency_n({ ...args, step, saliency: p.saliency });
        return (inLen) => heap.readF32(p.saliency, inLen);
      });
      const n = r.inputTokens.length;
      const data = r.extra;
      const attention = { rows: 1, cols: n, data: r.alignment.data.slice(step * n, (step + 1) * n) };
      return {
        rows: 1, cols: n, data, step, token: r.outputTokens[step], attention,
        tau: this.config.attention === 'none' ? null : kendallTau(attention.data, data),
        agreement: this.config.attention === 'none' ? null : agreement(attention.data, data, { k: 1 }),
        output: r.output, inputTokens: r.inputTokens, outputTokens: r.outputTokens,
      };
    });
  }

  /**
   * Explicit against implicit attention for every output step of the greedy
   * translation of `text`.
   * @returns {{ output, inputTokens, steps: { token, tau, agreement, attention: Matrix, saliency: Matrix }[] }}
   */
  compareAttention(text) {
    return this.guarded('compareAttention', () => {
      const first = this.saliency(text, { step: 0 });
      const steps = first.outputTokens.map((token, t) => {
        const s = t === 0 ? first : this.saliency(text, { step: t });
        return { token, tau: s.tau, agreement: s.agreement, attention: s.attention, saliency: { rows: 1, cols: s.cols, data: s.data } };
      });
      return { output: first.output, inputTokens: first.inputTokens, steps };
    });
  }

  /**
   * Encodes `text`, runs `call(args, p)` (a translate-shaped export; `p` also
   * holds the buffers of `extra`, sizes in bytes) and reads the decoded
   * result; `call` may return a reader of its own buffers, given the input
   * length, whose value is the result's `extra`.
   */
  #decode(handle, text, extra, call) {
    if (typeof text !== 'string') throw argError(`text: expected a string (got ${describe(text)})`);
    const { maxInput, maxOutput } = this.config;
    // The core names the position of a character too many; here only a bound on the copy.
    if (text.length > SEQ2SEQ_LIMITS.maxLength * 4) {
      throw limitError(`text: ${text.length} characters; this model reads at most ${maxInput}`);
    }
    const bytes = new TextEncoder().encode(text);
    const heap = this.heap;
    return heap.withBlock({
      text: U8 * bytes.length, inIds: I32 * maxInput, outIds: I32 * maxOutput, lens: I32 * 2,
      alignment: F32 * maxOutput * maxInput, output: U8 * (maxOutput + 1), ...extra,
    }, (p) => {
      heap.writeBytes(p.text, bytes); // with its length: a NUL inside the text is a character the core names
      const read = call({
        model: handle, text: p.text, textLength: bytes.length,
        inIds: p.inIds, outIds: p.outIds, lens: p.lens, alignment: p.alignment, output: p.output,
      }, p);
      const [inLen, outLen] = heap.readI32(p.lens, 2);
      const output = heap.readString(p.output);
      const inputTokens = Array.from(heap.readI32(p.inIds, inLen), (id) => this.inputAlphabet[id - TOKENS.firstInput]);
      const outputTokens = Array.from(heap.readI32(p.outIds, outLen),
        (id) => (id === TOKENS.eos ? EOS : this.outputAlphabet[id - TOKENS.firstOutput] ?? '?'));
      // The core writes alignment rows at stride maxInput; the result keeps the inLen used columns.
      const rows = heap.readF32(p.alignment, outLen * maxInput);
      const data = new Float32Array(outLen * inLen);
      for (let t = 0; t < outLen; t++) data.set(rows.subarray(t * maxInput, t * maxInput + inLen), t * inLen);
      const result = { output, inputTokens, outputTokens, alignment: { rows: outLen, cols: inLen, data } };
      return read ? { ...result, extra: read(inLen) } : result;
    });
  }

  /** `count` examples { input, output } of a split, drawn from `seed`. */
  examples(args = {}) {
    return this.guarded('examples', (handle) => {
      const o = options('examples', args, ['split', 'count', 'seed']);
      const split = toChoice('split', o.split, SPLITS, 'train');
      const count = toInteger('count', o.count, 10, 1, 1000);
      const seed = toInteger('seed', o.seed, 1, 0, Number.MAX_SAFE_INTEGER);
      const heap = this.heap;
      const room = U8 * (SEQ2SEQ_LIMITS.maxLength + 1);
      return heap.withBlock({ rng: 2 * I32, input: room, output: room }, (p) => {
        heap.writeSeed(p.rng, seed);
        const out = [];
        for (let i = 0; i < count; i++) {
          heap.call.s2s_sample({ model: handle, split, rng: p.rng, input: p.input, output: p.output });
          out.push({ input: heap.readString(p.input), output: heap.readString(p.output) });
        }
        return out;
      });
    });
  }

}
