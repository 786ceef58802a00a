// Decoder-only transformers, one JS class for every architecture: the one
// attnlab trains (include/attnlab/transformer.h), created with
// engine.createTransformer(options) bound to a task (config.architecture
// 'attnlab'), and a Hugging Face checkpoint (GPT-2 or GPT-NeoX, gpt2.js)
// opened with engine.loadModel(bytes, { config }). Each plugs into
// TransformerModel as a small adapter (its C exports, tokenizer, limits and
// what it lacks, below); every method is written once and returns one shape
// for every architecture. Every call is one synchronous trip into WASM; a page
// trains in a worker and calls train() a few steps at a time to show progress.
// The names, codes and limits come from the core's one constants table (constants.js).
import { GPT2_LIMITS, MODEL_LIMITS, SCORES, TRANSFORMER, TRANSFORMER_LIMITS } from './constants.js';
import { DEFAULTS, defaultsOf } from './defaults.js';
import { argError, describe, limitError, shapeError, valueError } from './errors.js';
import { exportCheckpoint } from './export.js';
import { listLength, options, toBoolean, toChoice, toInteger, toNumber } from './matrix.js';
import { Model, loadHandle, modelFile, withAblation } from './model.js';
import { F32, F64, I32, U8 } from './wasm.js';

const nameOf = (table, code) => Object.keys(table).find((k) => table[k] === code);

/** The core's transformer names and limits (constants.js, filled when the engine loaded). */
let table = null;
export function transformerConstants() {
  if (!table) {
    table = Object.freeze({
      tasks: TRANSFORMER.TASKS, positional: TRANSFORMER.POSITIONAL, splits: TRANSFORMER.SPLITS, limits: TRANSFORMER_LIMITS,
      // the scores the transformer takes, with the attention core's codes
      scores: Object.freeze({ scaled_dot: SCORES.scaled_dot, dot: SCORES.dot, cosine: SCORES.cosine }),
    });
  }
  return table;
}

/** A seed option: an integer 0..2^53-1, fallback when undefined. */
export function seedOf(value, fallback) {
  const seed = value === undefined ? fallback : value;
  if (!Number.isSafeInteger(seed) || seed < 0) throw valueError(`seed must be an integer in 0..2^53-1 (got ${describe(seed)})`);
  return seed;
}

/** names: the 'names' task's list (web/engine/names.js), which the engine loads, not the caller. */
export function createTransformer(heap, args, names) {
  const K = transformerConstants(heap);
  const o = options('createTransformer', args, ['task', 'text', 'layers', 'heads', 'dModel', 'dFF', 'context', 'positional', 'score', 'batch', 'seed']);
  const task = toChoice('task', o.task, K.tasks, DEFAULTS.transformer.model.task);
  // the defaults for this task (defaults.js)
  const D = defaultsOf('transformer', { task: nameOf(K.tasks, task) }).model;
  let text = new Uint8Array(0);
  if (task === K.tasks.text) {
    if (typeof o.text !== 'string') throw argError("text: the 'text' task needs a text (a string)");
    if (o.text.length > K.limits.maxTextBytes) throw limitError(`text: ${o.text.length} characters is past the limit of ${K.limits.maxTextBytes} bytes`);
    text = new TextEncoder().encode(o.text);
  } else if (o.text !== undefined) {
    throw argError(`text: only the 'text' task takes a text (task is '${nameOf(K.tasks, task)}')`);
  }
  if (task === K.tasks.names && typeof names === 'string') text = new TextEncoder().encode(names);
  // Sizes: integers here; their ranges are the core's (it names the limit and the code).
  const dModel = toInteger('dModel', o.dModel, D.dModel);
  const a = {
    layers: toInteger('layers', o.layers, D.layers), heads: toInteger('heads', o.heads, D.heads), dModel,
    // a wider model than the default keeps the default's ratio (4 x dModel), or none when the default has none
    dFF: toInteger('dFF', o.dFF, Math.min((D.dFF / D.dModel) * dModel, K.limits.maxDFF)), context: toInteger('context', o.context, D.context),
    positional: toChoice('positional', o.positional, K.positional, D.positional),
    score: toChoice('score', o.score, K.scores, D.score),
    batch: toInteger('batch', o.batch, D.batch), seed: seedOf(o.seed, D.seed),
  };
  const handle = heap.withBlock({ text: U8 * (text.length + 1) }, (p) => {
    heap.writeBytes(p.text, text);
    return heap.withHandle((out) => heap.call.tf_create({
      task, text: text.length ? p.text : 0, textLength: text.length, ...a, out,
    }));
  });
  return new TransformerModel(heap, handle, attnlabRun(heap, handle));
}

/** A saved transformer (TransformerModel.save()), as engine.loadModel reads it. */
export function loadTransformer(heap, bytes) {
  const file = modelFile('loadModel', bytes);
  const handle = loadHandle(heap, file, (args) => heap.call.tf_load(args));
  return new TransformerModel(heap, handle, attnlabRun(heap, handle));
}

/** info (12 x i32, src/wasm/transformer_exports.c) as a record. */
function readInfo(heap, model) {
  const v = heap.withBlock({ info: I32 * 12 }, (p) => {
    heap.call.tf_info({ model, info: p.info });
    return heap.readI32(p.info, 12);
  });
  const fields = ['task', 'layers', 'heads', 'dModel', 'dFF', 'context', 'positional', 'score', 'batch', 'vocabulary', 'sequenceLength', 'steps'];
  return Object.fromEntries(fields.map((f, i) => [f, v[i]]));
}

/**
 * A task's tokens as a tokenizer of the adapter's shape: a token per character
 * (code point), numbers for 'modular' (spaced when joined). A 'text' model of a
 * file saved before texts were read as characters has a token per byte (named
 * "\\xef" past ASCII): its bytes are decoded, a character cut at the end left out.
 */
function taskTokenizer(vocabulary, task, maxTextBytes) {
  const ids = new Map(vocabulary.map((name, id) => [name, id]));
  const byteTokens = vocabulary.some((name) => /^\\x[0-9a-f]{2}$/.test(name));
  return {
    encode(name, text) {
      if (text.length > 4 * maxTextBytes) throw limitError(`${name}: input is too long`);
      let pieces;
      if (task === 'modular') pieces = text.match(/\d+|\S/g) ?? [];
      else if (byteTokens) {
        pieces = Array.from(new TextEncoder().encode(text),
          (b) => (b >= 32 && b < 127) || b === 10 || b === 9 ? String.fromCharCode(b) : `\\x${b.toString(16).padStart(2, '0')}`);
      } else pieces = Array.from(text);
      return Int32Array.from(pieces, (piece, i) => {
        const id = ids.get(piece);
        if (id === undefined) {
          throw valueError(`${name}: input token ${i} ${JSON.stringify(piece)} is not in the vocabulary (${vocabulary.slice(0, 40).map((v) => JSON.stringify(v)).join(' ')})`);
        }
        return id;
      });
    },
    decode(list) {
      if (task === 'modular') return Array.from(list, (id) => vocabulary[id]).join(' ');
      if (!byteTokens) return Array.from(list, (id) => vocabulary[id]).join('');
      const bytes = Array.from(list, (id) => {
        const name = vocabulary[id];
        return name.startsWith('\\x') ? parseInt(name.slice(2), 16) : name.charCodeAt(0);
      });
      return new TextDecoder().decode(new Uint8Array(bytes), { stream: true });
    },
  };
}

/**
 * The adapter of a model TransformerModel runs (the one place a model's
 * architecture is read; the methods ask it, never the architecture):
 *   architecture  'attnlab' | 'gpt2' | 'gpt_neox' (config.architecture)
 *   prefix        its C exports' prefix, for Model: `_destroy`, and `_train`,
 *                 `_save` where it has them
 *   config        its configuration, every architecture's same fields
 *   info, train   Model's spec fields (train null: it does not train; Model
 *                 reads lacks.train and lacks.save too)
 *   tokenizer     { encode(name, text) -> Int32Array, decode(ids) -> string }
 *   limits        { top, maxGenerate, maxEvaluate } (inspect's predictions per
 *                 position, generate's tokens, evaluate's and headScores' count)
 *   lens          inspect's default for its `lens` option
 *   headScores    its default count
 *   call          its exports by what they do: setAblation, inspect, generate,
 *                 headScores, compositionScores, copyingScores, patch, logitAttribution, evaluateSplit
 *                 and evaluateTokens (each takes the
 *                 named arguments its C export does, inspect's logits 0 where the
 *                 export has none)
 *   lacks         { feature: why } for each feature it does not have: train,
 *                 save, examples, weights, split (evaluate on a task's split),
 *                 tokens (evaluate a text), logits, scan (headScores' length
 *                 and seed); asking for one is ERR_ARG saying why
 */
function attnlabRun(heap, handle) {
  const K = transformerConstants();
  const info = readInfo(heap, handle);
  const vocabulary = Object.freeze(Array.from({ length: info.vocabulary }, (_, id) => heap.readString(heap.call.tf_token({ model: handle, id }))));
  const task = nameOf(K.tasks, info.task);
  return {
    architecture: 'attnlab',
    prefix: 'tf',
    config: {
      task, layers: info.layers, heads: info.heads, dModel: info.dModel, dFF: info.dFF, context: info.context,
      positional: nameOf(K.positional, info.positional), score: nameOf(K.scores, info.score), batch: info.batch,
      seed: heap.call.tf_seed({ model: handle }), vocabulary, sequenceLength: info.sequenceLength,
      parameters: heap.call.tf_parameters({ model: handle }), dtype: 'float32',
    },
    info: (model) => readInfo(heap, model),
    train: {
      maxSteps: K.limits.maxSteps, batch: (c) => c.batch, maxBatch: () => K.limits.maxBatch,
      optimizers: null, weightDecay: true,
      tokens: (steps, batch, config) => steps * batch * config.sequenceLength,
    },
    tokenizer: taskTokenizer(vocabulary, task, K.limits.maxTextBytes),
    limits: { top: K.limits.top, maxGenerate: K.limits.maxGenerate, maxEvaluate: K.limits.maxEvaluate },
    lens: true,
    headScores: 64,
    call: {
      setAblation: (args) => heap.call.tf_set_ablation(args),
      inspect: ({ logits, ...args }) => heap.call.tf_inspect(args),
      generate: (args) => heap.call.tf_generate(args),
      headScores: ({ length, seed, ...args }) => heap.call.tf_head_scores(args),
      compositionScores: (args) => heap.call.tf_composition_scores(args),
      copyingScores: (args) => heap.call.tf_copying_scores(args),
      patch: (args) => heap.call.tf_patch(args),
      logitAttribution: (args) => heap.call.tf_logit_attribution(args),
      evaluateSplit: (args) => heap.call.tf_evaluate(args),
    },
    lacks: {
      tokens: "text and ids: a transformer made here is evaluated on its task's splits (split, count)",
      logits: 'logits: a transformer made here gives its top predictions, not its logits',
      scan: "length and seed: a transformer made here scores its heads on its task's own sequences (count only)",
    },
  };
}

/**
 * A decoder-only transformer: one made here learning its task, or a
 * checkpoint (config.architecture says which). steps, save and destroy: see
 * model.js; train (AdamW: it takes weightDecay) runs the cosine schedule by
 * default, and returns tokensPerSecond. A method or option the architecture
 * lacks (a checkpoint's train, save, examples, weights; a model made here's
 * logits) throws ERR_ARG saying why.
 */
export class TransformerModel extends Model {
  #run;

  constructor(heap, handle, run) {
    // a checkpoint fine-tunes on a text or ids it is given (#trainingIds)
    const train = run.train?.data === true ? { ...run.train, dataOptions: ['text', 'ids'], data: (o) => this.#trainingIds(o) } : run.train;
    super(heap, handle, { kind: 'transformer', prefix: run.prefix, stepsField: 'steps', info: run.info, train, lacks: run.lacks });
    this.#run = run;
    /** Every option resolved, the vocabulary (token id -> its text), the parameter count and the weights' dtype. */
    this.config = Object.freeze({ architecture: run.architecture, ...run.config });
  }

  /** The token texts, by id (config.vocabulary). */
  get vocabulary() {
    return this.config.vocabulary;
  }

  /** ERR_ARG from method `name` when the architecture lacks `feature`. */
  #need(name, feature = name) {
    const why = this.#run.lacks[feature];
    if (why) throw argError(`${name}: ${why}`);
  }

  /** Runs fn with the heads of `ablate` ([{ layer, head }]) zeroed, then restores them. */
  #ablated(handle, name, ablate, fn) {
    return withAblation(this.heap, name, ablate, this.config, (args) => this.#run.call.setAblation({ model: handle, ...args }), fn);
  }

  /**
   * input: a string (tokenized), an array of token ids or { ids }, as token ids
   * of this model's vocabulary, each id read once.
   */
  #ids(name, input, most = this.#run.limits.maxGenerate + this.config.context) {
    if (typeof input === 'string') {
      const ids = this.#run.tokenizer.encode(name, input);
      if (ids.length > most) throw limitError(`${name}: text: ${ids.length} tokens is past the limit of ${most}`);
      return ids;
    }
    let list = input, where = 'input';
    if (input !== null && typeof input === 'object' && listLength(input) === null) {
      list = options(name, input, ['ids']).ids;
      where = 'ids';
    }
    const n = listLength(list);
    if (n === null) throw argError(`${name}: input: expected a string, an array of token ids or { ids } (got ${describe(input)})`);
    if (n > most) throw limitError(`${name}: ${where}: ${n} tokens is past the limit of ${most}`);
    const V = this.config.vocabulary.length;
    const out = new Int32Array(n);
    for (let i = 0; i < n; i++) {
      const id = list[i];
      if (!Number.isInteger(id) || id < 0 || id >= V) {
        throw valueError(`${name}: ${where}[${i}] is ${describe(id)}; token ids are integers 0..${V - 1}`);
      }
      out[i] = id;
    }
    return out;
  }

  /** ids for one forward pass: 1..context tokens (at least 2 for a loss). */
  #window(name, input, least = 1) {
    const ids = this.#ids(name, input);
    const n = ids.length;
    if (n < least || n > this.config.context) {
      throw (n < least ? shapeError : limitError)(`${name}: input has ${n} tokens; this model reads ${least}..${this.config.context}`);
    }
    return ids;
  }

  /** A checkpoint's fine-tuning data: `text` or `ids` (one of the two), at most limits.maxTrainTokens tokens. */
  #trainingIds(o) {
    if ((o.text === undefined) === (o.ids === undefined)) {
      throw argError('train: a checkpoint fine-tunes on a text: pass text (a string) or ids (token ids), one of the two');
    }
    if (o.text !== undefined && typeof o.text !== 'string') throw argError(`train: text: expected a string (got ${describe(o.text)})`);
    return this.#ids('train', o.text !== undefined ? o.text : { ids: o.ids }, this.#run.limits.maxTrainTokens);
  }

  /** Text as this model reads it: { ids: Int32Array, tokens: string[] }. */
  tokenize(text) {
    return this.guarded('tokenize', () => {
      if (typeof text !== 'string') throw argError(`tokenize: text: expected a string (got ${describe(text)})`);
      const ids = this.#run.tokenizer.encode('tokenize', text);
      return { ids, tokens: Array.from(ids, (id) => this.vocabulary[id]) };
    });
  }

  /**
   * Mean loss with `ablate`'s heads zeroed, of one of two things: `count`
   * sequences of a task's `split` (the test split's are the same on every
   * call; a model made here) -> { loss, accuracy, count }; or a `text` (or
   * `ids`), the mean cross-entropy in nats of each token given those before it
   * (a checkpoint) -> { loss, tokens }, tokens the predictions counted.
   */
  evaluate(args = {}) {
    return this.guarded('evaluate', (handle) => {
      const o = options('evaluate', args, ['split', 'count', 'text', 'ids', 'ablate']);
      const heap = this.heap, run = this.#run;
      if (o.text !== undefined || o.ids !== undefined) {
        this.#need('evaluate', 'tokens');
        if (o.text !== undefined && o.ids !== undefined) throw argError('evaluate: pass either text or ids');
        if (o.split !== undefined || o.count !== undefined) throw argError('evaluate: pass text or ids, or split and count, not both');
        const ids = this.#window('evaluate', o.text !== undefined ? o.text : { ids: o.ids }, 2);
        return this.#ablated(handle, 'evaluate', o.ablate, () => heap.withBlock({ tokens: I32 * ids.length, out: F64 }, (p) => {
          heap.writeI32(p.tokens, ids);
          run.call.evaluateTokens({ model: handle, tokens: p.tokens, n: ids.length, out: p.out });
          return { loss: heap.readF64(p.out), tokens: ids.length - 1 };
        }));
      }
      this.#need('evaluate', 'split');
      const split = toChoice('split', o.split, transformerConstants().splits, 'test');
      const count = toInteger('count', o.count, 500, 1, run.limits.maxEvaluate);
      return this.#ablated(handle, 'evaluate', o.ablate, () => heap.withBlock({ out: 2 * F64 }, (p) => {
        run.call.evaluateSplit({ model: handle, split, count, out: p.out });
        return { loss: heap.readF64(p.out), accuracy: heap.readF64(p.out + 8), count };
      }));
    });
  }

  /**
   * `count` sequences of a split drawn from `seed`, as text: the input up to
   * the first scored position, and the tokens the scored positions predict.
   * @returns {{ input: string, target: string }[]}
   */
  examples(args = {}) {
    return this.guarded('examples', (handle) => {
      this.#need('examples');
      const o = options('examples', args, ['split', 'count', 'seed']);
      const split = toChoice('split', o.split, transformerConstants().splits, 'train');
      const count = toInteger('count', o.count, 10, 1, 1000);
      const seed = seedOf(o.seed, 1);
      const heap = this.heap;
      const n = this.config.sequenceLength;
      const text = (ids) => this.#run.tokenizer.decode(ids);
      return heap.withBlock({ rng: 2 * I32, tokens: I32 * n, targets: I32 * n, n: I32 }, (p) => {
        heap.writeSeed(p.rng, seed);
        const out = [];
        for (let i = 0; i < count; i++) {
          heap.call.tf_sample({ model: handle, split, rng: p.rng, tokens: p.tokens, targets: p.targets, n: p.n });
          const tokens = Array.from(heap.readI32(p.tokens, n));
          const targets = Array.from(heap.readI32(p.targets, n));
          const first = targets.findIndex((t) => t >= 0);
          out.push({ input: text(tokens.slice(0, first + 1)), target: text(targets.filter((t) => t >= 0)) });
        }
        return out;
      });
    });
  }

  /**
   * One forward pass over `input` (a string, token ids or { ids }): every
   * head's attention, the top next tokens at each position, with `lens` each
   * layer's top token at each position (the logit lens; default true for a
   * model made here, false for a checkpoint, whose lens multiplies by the
   * whole vocabulary per layer), with `logits` the (tokens x vocabulary)
   * logits (a checkpoint); `ablate`'s heads zeroed. Every result is a copy.
   * @returns {{ tokens, ids, attention, predictions, lens?, logits? }}
   */
  inspect(input, args = {}) {
    return this.guarded('inspect', (handle) => {
      const o = options('inspect', args, ['ablate', 'lens', 'logits']);
      const withLens = toBoolean('lens', o.lens, this.#run.lens);
      const withLogits = toBoolean('logits', o.logits, false);
      if (withLogits) this.#need('inspect', 'logits');
      const ids = this.#window('inspect', input);
      const n = ids.length, { layers: L, heads: H } = this.config, V = this.vocabulary.length, top = this.#run.limits.top;
      // the results' bytes before anything is allocated (the core counts them again, in 64 bits)
      const bytes = F32 * L * H * n * n + (I32 + F32) * n * top + (withLens ? I32 * L * n : 0) + (withLogits ? F32 * n * V : 0);
      if (bytes > GPT2_LIMITS.maxResultMB * 1e6) {
        throw limitError(`inspect: ${n} tokens' results take ${bytes} bytes (the attention of ${L} layers x ${H} heads x ${n} x ${n}${withLogits ? `, logits ${n} x ${V}` : ''}), past the limit of ${GPT2_LIMITS.maxResultMB} MB; use fewer tokens${withLogits ? ' or leave out the logits' : ''}`);
      }
      const heap = this.heap;
      const name = (id) => this.vocabulary[id];
      return this.#ablated(handle, 'inspect', o.ablate, () => heap.withBlock({
        tokens: I32 * n, attention: F32 * L * H * n * n, ids: I32 * n * top, p: F32 * n * top,
        lens: withLens ? I32 * L * n : 0, logits: withLogits ? F32 * n * V : 0,
      }, (p) => {
        heap.writeI32(p.tokens, ids);
        this.#run.call.inspect({ model: handle, tokens: p.tokens, n, attention: p.attention, ids: p.ids, p: p.p, lens: p.lens, logits: p.logits });
        const att = heap.readF32(p.attention, L * H * n * n);
        const topIds = heap.readI32(p.ids, n * top), topP = heap.readF32(p.p, n * top);
        const result = {
          tokens: Array.from(ids, name),
          ids,
          attention: Array.from({ length: L }, (_, l) => Array.from({ length: H }, (_, h) => ({
            rows: n, cols: n, data: att.slice((l * H + h) * n * n, (l * H + h + 1) * n * n),
          }))),
          predictions: Array.from({ length: n }, (_, t) => {
            const row = [];
            for (let j = 0; j < top; j++) {
              const id = topIds[t * top + j];
              if (id >= 0) row.push({ token: name(id), id, p: topP[t * top + j] });
            }
            return row;
          }),
        };
        if (withLens) {
          const lens = heap.readI32(p.lens, L * n);
          result.lens = Array.from({ length: L }, (_, l) => Array.from(lens.subarray(l * n, (l + 1) * n), name));
        }
        if (withLogits) result.logits = heap.readMatrix(p.logits, n, V);
        return result;
      }));
    });
  }

  /**
   * Continues `prompt` (a string, token ids or { ids }) by `tokens` tokens,
   * sampled at `temperature` (0: greedy) from the `topK` most likely (0: all),
   * from `seed`.
   * @returns {{ text: string, tokens: string[], ids: Int32Array }} the continuation
   */
  generate(prompt, args = {}) {
    return this.guarded('generate', (handle) => {
      const o = options('generate', args, ['tokens', 'temperature', 'topK', 'seed']);
      const ids = this.#ids('generate', prompt);
      if (ids.length < 1) throw shapeError('generate: the prompt needs at least one token');
      const count = toInteger('tokens', o.tokens, 20, 0, this.#run.limits.maxGenerate);
      const temperature = toNumber('temperature', o.temperature, 1);
      const topK = toInteger('topK', o.topK, 0, 0);
      const seed = seedOf(o.seed, 1);
      const heap = this.heap;
      return heap.withBlock({ tokens: I32 * (ids.length + count) }, (p) => {
        const tokens = new Int32Array(ids.length + count); // the prompt, then room the core fills
        tokens.set(ids);
        heap.writeI32(p.tokens, tokens);
        this.#run.call.generate({ model: handle, tokens: p.tokens, nPrompt: ids.length, nNew: count, temperature, topK, seed });
        const out = heap.readI32(p.tokens + I32 * ids.length, count);
        return { text: this.#run.tokenizer.decode(out), tokens: Array.from(out, (id) => this.vocabulary[id]), ids: out };
      });
    });
  }

  /**
   * Per head: previousToken, the mean attention from t to t - 1; induction,
   * the mean attention at a token's second occurrence to the position after
   * its first (Olsson et al. 2022), over `count` sequences that repeat random
   * tokens: a model made here draws them from its task; a checkpoint draws
   * `length` distinct tokens (default 50, or half the context) from `seed` and repeats them once.
   * @returns {{ previousToken: number, induction: number }[][]} [layer][head]
   */
  headScores(args = {}) {
    return this.guarded('headScores', (handle) => {
      const o = options('headScores', args, ['count', 'length', 'seed']);
      if (o.length !== undefined || o.seed !== undefined) this.#need('headScores', 'scan');
      const run = this.#run, { layers: L, heads: H, context } = this.config;
      const count = toInteger('count', o.count, run.headScores, 1, run.limits.maxEvaluate);
      const longest = Math.min(Math.floor(context / 2), this.vocabulary.length); // two copies within the context
      const length = toInteger('length', o.length, Math.min(50, longest), 2, longest);
      const seed = seedOf(o.seed, 1);
      const heap = this.heap;
      return heap.withBlock({ prev: F32 * L * H, ind: F32 * L * H }, (p) => {
        run.call.headScores({ model: handle, count, length, seed, prev: p.prev, ind: p.ind });
        const prev = heap.readF32(p.prev, L * H), ind = heap.readF32(p.ind, L * H);
        return Array.from({ length: L }, (_, l) => Array.from({ length: H }, (_, h) => ({
          previousToken: prev[l * H + h], induction: ind[l * H + h],
        })));
      });
    });
  }

  /**
   * Composition scores between every pair of heads (Elhage et al. 2021, in
   * TransformerLens's conventions; weights only): q, k, v, each (layers x
   * heads)^2 with row l * heads + h the earlier head and column the later
   * one, 0 unless the row's layer is below the column's. W_Q, W_K, W_V with
   * ln_1's gain folded in, biases and rotations ignored; W_OV = W_V W_O,
   * W_QK = W_Q W_K^T; q = |W_OV,i W_QK,j| / (|W_OV,i| |W_QK,j|), k the same
   * with W_QK,j^T, v = |W_OV,i W_OV,j| / (|W_OV,i| |W_OV,j|) (Frobenius).
   * @returns {{ q: Matrix, k: Matrix, v: Matrix }}
   */
  compositionScores() {
    return this.guarded('compositionScores', (handle) => {
      const n = this.config.layers * this.config.heads, heap = this.heap;
      return heap.withBlock({ q: F32 * n * n, k: F32 * n * n, v: F32 * n * n }, (p) => {
        this.#run.call.compositionScores({ model: handle, q: p.q, k: p.k, v: p.v });
        return { q: heap.readMatrix(p.q, n, n), k: heap.readMatrix(p.k, n, n), v: heap.readMatrix(p.v, n, n) };
      });
    });
  }

  /**
   * Copying scores (layers x heads): sum(lambda) / sum(|lambda|) over the
   * eigenvalues of each head's full OV circuit W_E W_OV diag(gamma_f) W_U,
   * read from the d_head x d_head W_O diag(gamma_f) W_U W_E W_V (the same
   * nonzero eigenvalues); 1 = the head copies the token it attends to.
   * @returns {Matrix}
   */
  copyingScores() {
    return this.guarded('copyingScores', (handle) => {
      const { layers: L, heads: H } = this.config, heap = this.heap;
      return heap.withBlock({ out: F32 * L * H }, (p) => {
        this.#run.call.copyingScores({ model: handle, out: p.out });
        return heap.readMatrix(p.out, L, H);
      });
    });
  }

  /**
   * Activation patching (TransformerLens's conventions): the metric m = logit[a] - logit[b]
   * at the last position of `clean` and of `corrupt` ({ ids }, an id array or text, the same
   * length); then the corrupt run once per cell with one activation of the clean run put back:
   * value = (m_patched - m_corrupt) / (m_clean - m_corrupt). `target`: 'resid' (block l's
   * input at position p), 'attn' / 'mlp' (block l's attention / MLP output at p): layers x
   * positions; 'heads' (head h's output z), 'head-values' (its values), 'head-patterns' (its
   * attention pattern), every position: layers x heads. `answer`: [a, b], token ids or texts
   * of one token each. method 'exact' (the default) runs every cell; 'attribution' estimates
   * each to first order, (act_clean - act_corrupt) . dm/dact on the corrupt run over the same
   * span: two forwards and one backward, on every transformer (patterns are exact only:
   * ERR_ARG saying so).
   * @returns {{ target, method, rows, cols, data: Float32Array, clean: number, corrupt: number }}
   */
  patch(args = {}) {
    return this.guarded('patch', (handle) => {
      const o = options('patch', args, ['clean', 'corrupt', 'answer', 'target', 'method']);
      const targets = TRANSFORMER.PATCH_TARGETS;
      const target = toChoice('target', o.target, targets, undefined);
      const method = toChoice('method', o.method, TRANSFORMER.PATCH_METHODS, 'exact');
      if (o.clean === undefined || o.corrupt === undefined) throw argError('patch: needs clean and corrupt inputs');
      const clean = this.#window('patch', o.clean), corrupt = this.#window('patch', o.corrupt);
      if (clean.length !== corrupt.length) {
        throw shapeError(`patch: clean has ${clean.length} tokens and corrupt ${corrupt.length}; patching needs the same length`);
      }
      const [a, b] = this.#answer('patch', o.answer);
      const { layers: L, heads: H } = this.config, n = clean.length;
      const cols = ['resid', 'attn', 'mlp'].includes(o.target) ? n : H; // per position, or per head
      const heap = this.heap;
      return heap.withBlock({ clean: I32 * n, corrupt: I32 * n, out: F32 * L * cols, metrics: 2 * F64 }, (p) => {
        heap.writeI32(p.clean, clean);
        heap.writeI32(p.corrupt, corrupt);
        this.#run.call.patch({ model: handle, clean: p.clean, corrupt: p.corrupt, n, a, b, target, method, out: p.out, metrics: p.metrics });
        return {
          target: o.target, method: o.method ?? 'exact', rows: L, cols, data: heap.readF32(p.out, L * cols),
          clean: heap.readF64(p.metrics), corrupt: heap.readF64(p.metrics + F64),
        };
      });
    });
  }

  /**
   * Direct logit attribution (TransformerLens's conventions) of logitDiff = logit[a] - logit[b]
   * at the last position of `ids` or `text`: each component c of the final residual read through
   * the final LayerNorm, ((c - mean(c)) / sigma * gamma) . (W_U[a] - W_U[b]), sigma the final
   * residual's sqrt(var + eps): 'embed', 'pos' (learned or sinusoidal positions), 'L{l}H{h}' (each
   * head's output through its rows of W_O), 'L{l}.attn_bias', 'L{l}.mlp' (with its bias; not in an
   * attention-only model), 'ln_f.bias' (beta . (W_U[a] - W_U[b])) and, for a model made here,
   * 'unembed.bias' (its output bias's b[a] - b[b]). The values add up to logitDiff.
   * @returns {{ logitDiff: number, components: { name: string, value: number }[] }}
   */
  logitAttribution(args = {}) {
    return this.guarded('logitAttribution', (handle) => {
      const o = options('logitAttribution', args, ['ids', 'text', 'answer']);
      if ((o.ids === undefined) === (o.text === undefined)) throw argError('logitAttribution: pass either text or ids');
      const ids = this.#window('logitAttribution', o.text !== undefined ? o.text : { ids: o.ids });
      const [a, b] = this.#answer('logitAttribution', o.answer);
      const { layers: L, heads: H, positional, dFF, architecture } = this.config;
      const names = ['embed', 'pos'];
      for (let l = 0; l < L; l++) names.push(...Array.from({ length: H }, (_, h) => `L${l}H${h}`), `L${l}.attn_bias`, `L${l}.mlp`);
      names.push('ln_f.bias', 'unembed.bias');
      const keep = (name) => (name !== 'pos' || positional === 'learned' || positional === 'sinusoidal')
        && !(name.endsWith('.mlp') && dFF === 0 && architecture === 'attnlab') && (name !== 'unembed.bias' || architecture === 'attnlab');
      const heap = this.heap, n = ids.length;
      return heap.withBlock({ tokens: I32 * n, values: F64 * names.length, diff: F64 }, (p) => {
        heap.writeI32(p.tokens, ids);
        this.#run.call.logitAttribution({ model: handle, tokens: p.tokens, n, a, b, values: p.values, diff: p.diff });
        const components = names.map((name, i) => ({ name, value: heap.readF64(p.values + F64 * i) })).filter((c) => keep(c.name));
        return { logitDiff: heap.readF64(p.diff), components };
      });
    });
  }

  /** answer: [a, b], each a token id or the text of one token of this model. */
  #answer(name, answer) {
    if (!Array.isArray(answer) || answer.length !== 2) throw argError(`${name}: answer: expected [a, b], two tokens (got ${describe(answer)})`);
    const V = this.vocabulary.length;
    return answer.map((t, i) => {
      if (typeof t === 'string') {
        const ids = this.#run.tokenizer.encode(name, t);
        if (ids.length !== 1) throw valueError(`${name}: answer[${i}]: '${t}' is ${ids.length} tokens of this model; an answer is one token`);
        return ids[0];
      }
      if (!Number.isInteger(t) || t < 0 || t >= V) throw valueError(`${name}: answer[${i}] is ${describe(t)}; token ids are integers 0..${V - 1}`);
      return t;
    });
  }

  /**
   * This model as a Hugging Face checkpoint (export.js): { safetensors (model.safetensors' bytes),
   * config (config.json's object), vocabulary (the token texts by id) }, GPT-2's layout or, for
   * rotary positions, GPT-NeoX's; ALiBi, the cosine score and an output bias that does not fold
   * into the final LayerNorm are refused, saying why.
   */
  exportCheckpoint() {
    return this.guarded('exportCheckpoint', () => {
      this.#need('exportCheckpoint', 'export');
      return exportCheckpoint(this.config, this.weights());
    });
  }

  /** Every tensor's weights by name ("wte", "h0.qkv_w", ...), copied out. */
  weights() {
    return this.guarded('weights', (handle) => {
      this.#need('weights');
      const out = {};
      this.#tensors(handle, (name, offset, count, base) => { out[name] = this.heap.readF32(base + F32 * offset, count); });
      return out;
    });
  }

  /** Overwrites the named tensors ({ name: numbers }), each of its own size. */
  setWeights(values) {
    return this.guarded('setWeights', (handle) => {
      this.#need('setWeights', 'weights');
      // the tensor names are the caller's keys: each value is read once
      const v = options('setWeights', values, values !== null && typeof values === 'object' ? Object.keys(values) : []);
      const known = new Map();
      this.#tensors(handle, (name, offset, count, base, index) => known.set(name, { index, count }));
      const writes = Object.entries(v).map(([name, data]) => {
        const t = known.get(name);
        if (!t) throw argError(`setWeights: no tensor '${name}'; the model has ${[...known.keys()].join(', ')}`);
        if (!data || data.length !== t.count) throw shapeError(`setWeights: ${name} holds ${t.count} numbers (got ${describe(data)}${data?.length !== undefined ? ` of length ${data.length}` : ''})`);
        const most = MODEL_LIMITS.maxWeight;
        const copy = Float32Array.from(data, (x, i) => {
          if (typeof x !== 'number' || !Number.isFinite(x) || Math.abs(x) > most) {
            throw valueError(`setWeights: ${name}[${i}] is ${describe(x)}; weights must be finite numbers within -${most}..${most}`);
          }
          return x;
        });
        return [t, copy];
      });
      const heap = this.heap;
      for (const [t, copy] of writes) {
        heap.withBlock({ data: F32 * t.count }, (p) => {
          heap.writeF32(p.data, copy);
          heap.call.tf_set_tensor({ model: handle, index: t.index, data: p.data, count: t.count });
        });
      }
    });
  }

  #tensors(handle, fn) {
    const heap = this.heap;
    const base = heap.call.tf_weights({ model: handle });
    heap.withBlock({ at: 2 * F64 }, (p) => {
      for (let i = 0; ; i++) {
        const name = heap.call.tf_tensor({ model: handle, index: i, at: p.at });
        if (!name) break;
        fn(heap.readString(name), heap.readF64(p.at), heap.readF64(p.at + 8), base, i);
      }
    });
  }
}
