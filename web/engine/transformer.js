// Decoder-only transformers bound to a task (the C model,
// include/attnlab/transformer.h): created with engine.createTransformer(options).
// Every call is one synchronous trip into WASM; a page trains in a worker and
// calls train() a few steps at a time to show progress. The model's names,
// codes and limits come from the core's one constants table (constants.js).
import { MODEL_LIMITS, SCORES, TRANSFORMER, TRANSFORMER_LIMITS } from './constants.js';
import { DEFAULTS, defaultsOf } from './defaults.js';
import { argError, describe, limitError, shapeError, valueError } from './errors.js';
import { options, toChoice, toInteger, toNumber } from './matrix.js';
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
  return new TransformerModel(heap, handle);
}

/** A saved transformer (TransformerModel.save()), as engine.loadModel reads it. */
export function loadTransformer(heap, bytes) {
  const file = modelFile('loadModel', bytes);
  return new TransformerModel(heap, loadHandle(heap, file, (args) => heap.call.tf_load(args)));
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
 * A decoder-only transformer learning its task. steps, save and destroy: see
 * model.js; train (AdamW: it takes weightDecay) runs the cosine schedule by
 * default, and returns tokensPerSecond.
 */
export class TransformerModel extends Model {
  #byteTokens = false;

  constructor(heap, handle) {
    const K = transformerConstants(heap);
    super(heap, handle, {
      kind: 'transformer', prefix: 'tf', stepsField: 'steps', info: (model) => readInfo(heap, model),
      train: {
        maxSteps: K.limits.maxSteps, batch: (c) => c.batch, maxBatch: () => K.limits.maxBatch,
        optimizers: null, weightDecay: true,
        tokens: (steps, batch, config) => steps * batch * config.sequenceLength,
      },
    });
    this.K = K;
    const info = this.info();
    const vocabulary = [];
    for (let id = 0; id < info.vocabulary; id++) vocabulary.push(heap.readString(heap.call.tf_token({ model: handle, id })));
    this.vocabulary = Object.freeze(vocabulary);
    this.ids = new Map(vocabulary.map((name, id) => [name, id]));
    // a token per byte: a 'text' model of a file saved before texts were read as characters ("\\xef", one name per byte past ASCII)
    this.#byteTokens = vocabulary.some((name) => /^\\x[0-9a-f]{2}$/.test(name));
    /** Every option resolved, the vocabulary and the parameter count. */
    this.config = Object.freeze({
      task: nameOf(K.tasks, info.task), layers: info.layers, heads: info.heads, dModel: info.dModel, dFF: info.dFF,
      context: info.context, positional: nameOf(K.positional, info.positional), score: nameOf(K.scores, info.score),
      batch: info.batch, seed: heap.call.tf_seed({ model: handle }), vocabulary: this.vocabulary,
      sequenceLength: info.sequenceLength, parameters: heap.call.tf_parameters({ model: handle }),
    });
  }

  /** Runs fn with the heads of `ablate` ([{ layer, head }]) zeroed, then restores them. */
  #ablated(handle, name, ablate, fn) {
    return withAblation(this.heap, name, ablate, this.config, (args) => this.heap.call.tf_set_ablation({ model: handle, ...args }), fn);
  }

  /**
   * Mean loss and accuracy over the scored positions of `count` sequences
   * (the test split's are the same on every call), with `ablate`'s heads zeroed.
   * @returns {{ loss, accuracy, count }}
   */
  evaluate(args = {}) {
    return this.guarded('evaluate', (handle) => {
      const o = options('evaluate', args, ['split', 'count', 'ablate']);
      const split = toChoice('split', o.split, this.K.splits, 'test');
      const count = toInteger('count', o.count, 500, 1, this.K.limits.maxEvaluate);
      const heap = this.heap;
      return this.#ablated(handle, 'evaluate', o.ablate, () => heap.withBlock({ out: 2 * F64 }, (p) => {
        heap.call.tf_evaluate({ model: handle, split, count, out: p.out });
        return { loss: heap.readF64(p.out), accuracy: heap.readF64(p.out + 8), count };
      }));
    });
  }

  /**
   * Token names to text: characters joined, numbers (modular) spaced. A 'text'
   * model saved before texts were read as characters has a token per byte
   * (named "\\xef" past ASCII): its bytes are decoded, a character cut at the
   * end left out.
   */
  #text(ids) {
    if (this.config.task === 'modular') return ids.map((id) => this.vocabulary[id]).join(' ');
    if (!this.#byteTokens) return ids.map((id) => this.vocabulary[id]).join('');
    const bytes = ids.map((id) => {
      const name = this.vocabulary[id];
      return name.startsWith('\\x') ? parseInt(name.slice(2), 16) : name.charCodeAt(0);
    });
    return new TextDecoder().decode(new Uint8Array(bytes), { stream: true });
  }

  /** A string (or an array of token ids) as token ids of this model's vocabulary. */
  #encode(name, input) {
    if (Array.isArray(input)) {
      // every index, holes too (forEach would skip them)
      for (let i = 0; i < input.length; i++) {
        const id = input[i];
        if (!Number.isInteger(id) || id < 0 || id >= this.vocabulary.length) {
          throw valueError(`${name}: input[${i}] is ${describe(id)}; token ids are integers 0..${this.vocabulary.length - 1}`);
        }
      }
      return Int32Array.from(input);
    }
    if (typeof input !== 'string') throw argError(`${name}: input: expected a string or an array of token ids (got ${describe(input)})`);
    if (input.length > 4 * this.K.limits.maxTextBytes) throw limitError(`${name}: input is too long`);
    let pieces;
    if (this.config.task === 'modular') pieces = input.match(/\d+|\S/g) ?? [];
    else if (this.#byteTokens) {
      pieces = Array.from(new TextEncoder().encode(input),
        (b) => (b >= 32 && b < 127) || b === 10 || b === 9 ? String.fromCharCode(b) : `\\x${b.toString(16).padStart(2, '0')}`);
    } else pieces = Array.from(input); // a token per character (code point)
    return Int32Array.from(pieces, (piece, i) => {
      const id = this.ids.get(piece);
      if (id === undefined) {
        throw valueError(`${name}: input token ${i} ${JSON.stringify(piece)} is not in the vocabulary (${this.vocabulary.slice(0, 40).map((v) => JSON.stringify(v)).join(' ')})`);
      }
      return id;
    });
  }

  /**
   * `count` sequences of a split drawn from `seed`, as text: the input up to
   * the first scored position, and the tokens the scored positions predict.
   * @returns {{ input: string, target: string }[]}
   */
  examples(args = {}) {
    return this.guarded('examples', (handle) => {
      const o = options('examples', args, ['split', 'count', 'seed']);
      const split = toChoice('split', o.split, this.K.splits, 'train');
      const count = toInteger('count', o.count, 10, 1, 1000);
      const seed = seedOf(o.seed, 1);
      const heap = this.heap;
      const n = this.config.sequenceLength;
      return heap.withBlock({ rng: 2 * I32, tokens: I32 * n, targets: I32 * n, n: I32 }, (p) => {
        heap.writeSeed(p.rng, seed);
        const out = [];
        for (let i = 0; i < count; i++) {
          heap.call.tf_sample({ model: handle, split, rng: p.rng, tokens: p.tokens, targets: p.targets, n: p.n });
          const tokens = Array.from(heap.readI32(p.tokens, n));
          const targets = Array.from(heap.readI32(p.targets, n));
          const first = targets.findIndex((t) => t >= 0);
          out.push({
            input: this.#text(tokens.slice(0, first + 1)),
            target: this.#text(targets.filter((t) => t >= 0)),
          });
        }
        return out;
      });
    });
  }

  /**
   * One forward pass over `input`: every head's attention, the top 5 next
   * tokens at each position, and the logit lens (each layer's top token).
   * @returns {{ tokens, attention, predictions, lens }}
   */
  inspect(input, args = {}) {
    return this.guarded('inspect', (handle) => {
      const o = options('inspect', args, ['ablate']);
      const ids = this.#encode('inspect', input);
      const n = ids.length;
      if (n < 1 || n > this.config.context) {
        throw (n < 1 ? shapeError : limitError)(`inspect: input has ${n} tokens; this model reads 1..${this.config.context}`);
      }
      const { layers: L, heads: H } = this.config;
      const top = this.K.limits.top;
      const heap = this.heap;
      return this.#ablated(handle, 'inspect', o.ablate, () => heap.withBlock({
        tokens: I32 * n, attention: F32 * L * H * n * n, ids: I32 * n * top, p: F32 * n * top, lens: I32 * L * n,
      }, (p) => {
        heap.writeI32(p.tokens, ids);
        heap.call.tf_inspect({ model: handle, tokens: p.tokens, n, attention: p.attention, ids: p.ids, p: p.p, lens: p.lens });
        const att = heap.readF32(p.attention, L * H * n * n);
        const topIds = heap.readI32(p.ids, n * top), topP = heap.readF32(p.p, n * top);
        const lens = heap.readI32(p.lens, L * n);
        const name = (id) => this.vocabulary[id];
        return {
          tokens: Array.from(ids, name),
          attention: Array.from({ length: L }, (_, l) => Array.from({ length: H }, (_, h) => ({
            rows: n, cols: n, data: att.slice((l * H + h) * n * n, (l * H + h + 1) * n * n),
          }))),
          predictions: Array.from({ length: n }, (_, t) => {
            const row = [];
            for (let j = 0; j < top; j++) if (topIds[t * top + j] >= 0) row.push({ token: name(topIds[t * top + j]), p: topP[t * top + j] });
            return row;
          }),
          lens: Array.from({ length: L }, (_, l) => Array.from(lens.subarray(l * n, (l + 1) * n), name)),
        };
      }));
    });
  }

  /**
   * Continues `prompt` by `tokens` tokens, sampled at `temperature` (0:
   * greedy) from the `topK` most likely (0: all), from `seed`.
   * @returns {{ text: string, tokens: string[] }} the continuation
   */
  generate(prompt, args = {}) {
    return this.guarded('generate', (handle) => {
      const o = options('generate', args, ['tokens', 'temperature', 'topK', 'seed']);
      const ids = this.#encode('generate', prompt);
      if (ids.length < 1) throw shapeError('generate: the prompt needs at least one token');
      const count = toInteger('tokens', o.tokens, 20, 0, this.K.limits.maxGenerate);
      const temperature = toNumber('temperature', o.temperature, 1);
      const topK = toInteger('topK', o.topK, 0, 0);
      const seed = seedOf(o.seed, 1);
      const heap = this.heap;
      return heap.withBlock({ tokens: I32 * (ids.length + count) }, (p) => {
        const tokens = new Int32Array(ids.length + count); // the prompt, then room the core fills
        tokens.set(ids);
        heap.writeI32(p.tokens, tokens);
        heap.call.tf_generate({ model: handle, tokens: p.tokens, nPrompt: ids.length, nNew: count, temperature, topK, seed });
        const out = Array.from(heap.readI32(p.tokens + I32 * ids.length, count));
        return { text: this.#text(out), tokens: out.map((id) => this.vocabulary[id]) };
      });
    });
  }

  /**
   * Per head: previousToken, the mean attention from t to t - 1; induction,
   * the mean attention at a token's second occurrence to the position after
   * its first (Olsson et al. 2022), over `count` sequences that repeat random symbols.
   * @returns {{ previousToken: number, induction: number }[][]} [layer][head]
   */
  headScores(args = {}) {
    return this.guarded('headScores', (handle) => {
      const o = options('headScores', args, ['count']);
      const count = toInteger('count', o.count, 64, 1, this.K.limits.maxEvaluate);
      const { layers: L, heads: H } = this.config;
      const heap = this.heap;
      return heap.withBlock({ prev: F32 * L * H, ind: F32 * L * H }, (p) => {
        heap.call.tf_head_scores({ model: handle, count, prev: p.prev, ind: p.ind });
        const prev = heap.readF32(p.prev, L * H), ind = heap.readF32(p.ind, L * H);
        return Array.from({ length: L }, (_, l) => Array.from({ length: H }, (_, h) => ({
          previousToken: prev[l * H + h], induction: ind[l * H + h],
        })));
      });
    });
  }

  /** Every tensor's weights by name ("wte", "h0.qkv_w", ...), copied out. */
  weights() {
    return this.guarded('weights', (handle) => {
      const out = {};
      this.#tensors(handle, (name, offset, count, base) => { out[name] = this.heap.readF32(base + F32 * offset, count); });
      return out;
    });
  }

  /** Overwrites the named tensors ({ name: numbers }), each of its own size. */
  setWeights(values) {
    return this.guarded('setWeights', (handle) => {
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
