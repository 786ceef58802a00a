// GPT-2-family checkpoints (the C model, include/attnlab/gpt2.h): a Hugging
// Face model.safetensors and its config.json, opened with
// engine.loadModel(bytes, { config }). The config is read here; the file's
// header is checked by the core against it before the weights are allocated,
// then the data goes in by chunks, so the WASM heap never holds the whole file.
// Text goes through GPT-2's tokenizer (gpt2-tokenizer.js).
import { GPT2_LIMITS } from './constants.js';
import { AttnlabError, argError, describe, limitError, shapeError, valueError } from './errors.js';
import { readTokenizerJson } from './bpe.js';
import { gpt2Tokenizer } from './gpt2-tokenizer.js';
import { listLength, options, toInteger, toNumber } from './matrix.js';
import { Model, withAblation } from './model.js';
import { seedOf } from './transformer.js';
import { F32, F64, I32, U8 } from './wasm.js';

/** Bytes of the file copied into the heap at once: the heap holds the weights and one chunk. */
const CHUNK = 16 << 20;
const MAX_CONFIG_TEXT = 1 << 20;
const MAX_CONFIG_INTEGER = 2 ** 31 - 1; // the core's int
const DTYPES = ['float32', 'float16', 'bfloat16'];

/** Whether a file is a safetensors file: an 8-byte little-endian header length, then the header's '{'. */
export const isSafetensors = (file) => file.length >= 9 && file[8] === 0x7b;

/** GPT-NeoX's hidden_act: the exact (erf) GELU, or its tanh form under any of its names. */
const NEOX_ACTIVATIONS = Object.freeze({ gelu: 1, gelu_new: 0, gelu_fast: 0, gelu_pytorch_tanh: 0 });

/**
 * config.json (an object or its text) as the core's sizes, checked strictly:
 * GPT-2's (model_type 'gpt2' or none: every field a GPT-2 needs, an integer
 * where one is due, activation_function gelu_new (any other is refused by
 * name), n_inner null = 4 n_embd) or GPT-NeoX's (model_type 'gpt_neox':
 * hidden_size, num_attention_heads, num_hidden_layers, intermediate_size,
 * rotary_pct, rotary_emb_base, max_position_embeddings, layer_norm_eps,
 * use_parallel_residual, hidden_act, vocab_size).
 */
export function readConfig(config) {
  let c = config;
  if (typeof c === 'string') {
    if (c.length > MAX_CONFIG_TEXT) throw limitError(`loadModel: config: ${c.length} characters is past the limit of ${MAX_CONFIG_TEXT}`);
    try {
      c = JSON.parse(c);
    } catch (err) {
      throw valueError(`loadModel: config: not JSON (${err.message})`);
    }
  }
  if (c === null || typeof c !== 'object' || Array.isArray(c)) {
    throw argError(`loadModel: config: expected config.json as an object or its text (got ${describe(c)})`);
  }
  if (c.model_type === 'gpt_neox') return readNeoxConfig(c);
  const o = options('config', c, ['model_type', 'n_layer', 'n_head', 'n_embd', 'n_positions', 'n_ctx', 'vocab_size',
    'layer_norm_epsilon', 'activation_function', 'n_inner']);
  if (o.model_type !== undefined && o.model_type !== 'gpt2') {
    throw valueError(`loadModel: config: model_type is ${describe(o.model_type)}; this engine opens GPT-2-family ('gpt2') and GPT-NeoX ('gpt_neox') checkpoints`);
  }
  const activation = o.activation_function ?? 'gelu_new';
  if (activation !== 'gelu_new') {
    throw valueError(`loadModel: config: activation_function is ${describe(activation)}; the engine runs GPT-2's 'gelu_new' only`);
  }
  const dModel = configInteger('n_embd', o.n_embd);
  const positions = o.n_positions ?? o.n_ctx;
  if (o.n_positions !== undefined && o.n_ctx !== undefined && o.n_positions !== o.n_ctx) {
    throw valueError(`loadModel: config: n_positions (${describe(o.n_positions)}) and n_ctx (${describe(o.n_ctx)}) disagree`);
  }
  return {
    architecture: 'gpt2', layers: configInteger('n_layer', o.n_layer), heads: configInteger('n_head', o.n_head), dModel,
    dFF: o.n_inner === null ? 4 * dModel : configInteger('n_inner', o.n_inner, 4 * dModel),
    context: configInteger('n_positions', positions), vocabulary: configInteger('vocab_size', o.vocab_size),
    epsilon: configPositive('layer_norm_epsilon', o.layer_norm_epsilon, 1e-5),
  };
}

/** A config.json integer field: present (or its fallback) and 0..2^31 - 1, which the core's int holds. */
function configInteger(name, value, fallback) {
  if (value === undefined && fallback === undefined) throw valueError(`loadModel: config: ${name} is missing`);
  if (value !== undefined && !Number.isInteger(value)) throw valueError(`loadModel: config: ${name} must be an integer (got ${describe(value)})`);
  // the core's sizes are 32-bit: a larger value would wrap to a small one on the way in
  if (value !== undefined && (value < 0 || value > MAX_CONFIG_INTEGER)) {
    throw (value < 0 ? valueError : limitError)(`loadModel: config: ${name} must be an integer 0..${MAX_CONFIG_INTEGER} (got ${describe(value)})`);
  }
  return value ?? fallback;
}

/** A config.json number field > 0 (or its fallback). */
function configPositive(name, value, fallback) {
  const x = value ?? fallback;
  if (typeof x !== 'number' || !(x > 0) || !Number.isFinite(x)) {
    throw valueError(`loadModel: config: ${name} must be a finite number > 0 (got ${describe(x)})`);
  }
  return x;
}

/** GPT-NeoX's config.json (Pythia's), read as readConfig reads GPT-2's. */
function readNeoxConfig(c) {
  const o = options('config', c, ['hidden_size', 'num_attention_heads', 'num_hidden_layers', 'intermediate_size',
    'rotary_pct', 'rotary_emb_base', 'max_position_embeddings', 'layer_norm_eps', 'use_parallel_residual', 'hidden_act',
    'vocab_size', 'tie_word_embeddings', 'attention_bias']);
  const activation = o.hidden_act ?? 'gelu';
  if (typeof activation !== 'string' || !Object.hasOwn(NEOX_ACTIVATIONS, activation)) {
    throw valueError(`loadModel: config: hidden_act is ${describe(activation)}; the engine runs ${Object.keys(NEOX_ACTIVATIONS).map((a) => `'${a}'`).join(', ')}`);
  }
  for (const name of ['use_parallel_residual', 'tie_word_embeddings']) {
    if (o[name] !== undefined && typeof o[name] !== 'boolean') throw valueError(`loadModel: config: ${name} must be true or false (got ${describe(o[name])})`);
  }
  if (o.attention_bias === false) throw valueError('loadModel: config: attention_bias is false; the engine reads GPT-NeoX\'s attention with its biases');
  const dModel = configInteger('hidden_size', o.hidden_size), heads = configInteger('num_attention_heads', o.num_attention_heads);
  const pct = o.rotary_pct ?? 0.25;
  if (typeof pct !== 'number' || !(pct > 0) || !(pct <= 1)) throw valueError(`loadModel: config: rotary_pct must be a number in (0, 1] (got ${describe(pct)})`);
  // Hugging Face's rotary_ndims = int(head_size * rotary_pct)
  const headSize = heads > 0 ? Math.floor(dModel / heads) : 0;
  return {
    architecture: 'gpt_neox', layers: configInteger('num_hidden_layers', o.num_hidden_layers), heads, dModel,
    dFF: configInteger('intermediate_size', o.intermediate_size, 4 * dModel),
    context: configInteger('max_position_embeddings', o.max_position_embeddings), vocabulary: configInteger('vocab_size', o.vocab_size),
    epsilon: configPositive('layer_norm_eps', o.layer_norm_eps, 1e-5),
    rotaryPct: pct, rotaryDims: Math.floor(headSize * pct), rotaryBase: configPositive('rotary_emb_base', o.rotary_emb_base, 10000),
    parallelResidual: o.use_parallel_residual ?? true, activation,
  };
}

/** The core's architecture arguments of a config from readConfig. */
const architecture = (c) => (c.architecture === 'gpt_neox'
  ? { arch: 1, rotaryDims: c.rotaryDims, rotaryBase: c.rotaryBase, parallel: c.parallelResidual, geluExact: NEOX_ACTIVATIONS[c.activation] }
  : { arch: 0, rotaryDims: 0, rotaryBase: 0, parallel: false, geluExact: 0 });

/** The core's sizes of a config from readConfig (in C argument order). */
const sizes = (c) => ({ layers: c.layers, heads: c.heads, dModel: c.dModel, dFF: c.dFF, context: c.context, vocab: c.vocabulary, ...architecture(c) });

/** Parameters a checkpoint of config.json `config` holds (tied: no lm_head.weight of its own); the config is read, not checked. */
export function gpt2Parameters(heap, config, tied = true) {
  return heap.call.gpt2_param_count({ ...sizes(readConfig(config)), tied });
}

/**
 * A GPT-2 checkpoint (the bytes of model.safetensors) with its config.json,
 * as engine.loadModel reads it. onProgress(fraction), when given, hears how
 * much of the data is in. tokenizer, when given, is the checkpoint's
 * tokenizer.json (its text, bytes or object; bpe.js); without it, GPT-2's.
 */
export async function loadGpt2(heap, file, args) {
  const o = options('loadModel', args ?? {}, ['config', 'onProgress', 'tokenizer']);
  if (o.config === undefined) {
    throw argError('loadModel: this is a safetensors checkpoint; pass its config.json too: loadModel(bytes, { config })');
  }
  if (o.onProgress !== undefined && typeof o.onProgress !== 'function') throw argError(`loadModel: onProgress must be a function (got ${describe(o.onProgress)})`);
  const config = readConfig(o.config);
  heap.check(heap.call.gpt2_check_config({ ...sizes(config), epsilon: config.epsilon }), 'loadModel: config');
  // the header length: within the file and the limit, before a byte of it is copied
  const view = new DataView(file.buffer, file.byteOffset, 8);
  const headerLength = view.getUint32(0, true) + view.getUint32(4, true) * 2 ** 32;
  if (headerLength > file.length - 8) {
    throw valueError(`loadModel: header: its length, ${headerLength} bytes, runs past the end of the file (${file.length} bytes)`);
  }
  if (headerLength > GPT2_LIMITS.maxHeader) throw limitError(`loadModel: header: ${headerLength} bytes is past the limit of ${GPT2_LIMITS.maxHeader}`);
  const tokenizer = o.tokenizer === undefined ? await gpt2Tokenizer() : readTokenizerJson(o.tokenizer);
  const handle = heap.withBlock({ header: U8 * headerLength }, (p) => {
    heap.writeBytes(p.header, file.subarray(8, 8 + headerLength));
    return heap.withHandle((out) => heap.call.gpt2_open({
      ...sizes(config), epsilon: config.epsilon, header: p.header, headerLength, fileSize: file.length, out,
    }));
  });
  try {
    const start = 8 + headerLength, total = file.length - start;
    heap.withBlock({ chunk: U8 * Math.min(CHUNK, Math.max(total, 1)) }, (p) => {
      for (let at = 0; at < total; at += CHUNK) {
        const piece = file.subarray(start + at, start + Math.min(at + CHUNK, total));
        heap.writeBytes(p.chunk, piece);
        heap.call.gpt2_load_chunk({ model: handle, bytes: p.chunk, n: piece.length });
        o.onProgress?.(Math.min(at + CHUNK, total) / total);
      }
    });
    heap.call.gpt2_load_finish({ model: handle });
  } catch (err) {
    heap.call.gpt2_destroy({ model: handle });
    throw err;
  }
  return new Gpt2Model(heap, handle, config, tokenizer);
}

/**
 * A GPT-2-family checkpoint, forward only: every head's attention, heads
 * ablated, the logit lens, loss, generation and head scores. It does not
 * train or save (train and save throw ERR_ARG saying so).
 */
export class Gpt2Model extends Model {
  #tokenizer;

  constructor(heap, handle, config, tokenizer) {
    super(heap, handle, { kind: 'gpt2', prefix: 'gpt2', stepsField: 'steps', info: () => ({ steps: 0 }) });
    this.#tokenizer = tokenizer;
    const parameters = heap.call.gpt2_parameters({ model: handle });
    /** { layers, heads, dModel, dFF, context, vocabulary, parameters, dtype }: dtype is the file's ('float32', 'float16', 'bfloat16'). */
    this.config = Object.freeze({
      architecture: config.architecture, layers: config.layers, heads: config.heads, dModel: config.dModel, dFF: config.dFF, context: config.context,
      vocabulary: config.vocabulary, parameters, dtype: DTYPES[heap.call.gpt2_dtype({ model: handle })],
    });
  }

  /** GPT-2's byte-level BPE: { ids: Int32Array, tokens: string[] }. */
  tokenize(text) {
    return this.guarded('tokenize', () => {
      if (typeof text !== 'string') throw argError(`tokenize: text: expected a string (got ${describe(text)})`);
      return this.#tokenizer.encode(text);
    });
  }

  /** A token id's text as tokenize shows it (an id past the tokenizer's, in a checkpoint of a larger vocabulary: "<id>"). */
  #name(id) {
    return id < this.#tokenizer.vocabulary ? this.#tokenizer.token(id) : `<${id}>`;
  }

  /** input: a string (tokenized) or { ids } (token ids of this checkpoint's vocabulary), each id read once. */
  #ids(name, input) {
    if (typeof input === 'string') return this.#tokenizer.encode(input).ids;
    if (input === null || typeof input !== 'object' || Array.isArray(input)) {
      throw argError(`${name}: input: expected a string or { ids } (got ${describe(input)})`);
    }
    const { ids } = options(name, input, ['ids']);
    const n = listLength(ids);
    if (n === null) throw argError(`${name}: ids: expected an array of token ids (got ${describe(ids)})`);
    if (n > GPT2_LIMITS.maxGenerate + this.config.context) throw limitError(`${name}: ids: ${n} tokens is past the limit of ${GPT2_LIMITS.maxGenerate + this.config.context}`);
    const out = new Int32Array(n);
    for (let i = 0; i < n; i++) {
      const id = ids[i];
      if (!Number.isInteger(id) || id < 0 || id >= this.config.vocabulary) {
        throw valueError(`${name}: ids[${i}] is ${describe(id)}; token ids are integers 0..${this.config.vocabulary - 1}`);
      }
      out[i] = id;
    }
    return out;
  }

  /** ids for one forward pass: 1..context tokens (least 2 for a loss). */
  #window(name, input, least = 1) {
    const ids = this.#ids(name, input);
    const n = ids.length;
    if (n < least || n > this.config.context) {
      throw (n < least ? shapeError : limitError)(`${name}: input has ${n} tokens; this model reads ${least}..${this.config.context}`);
    }
    return ids;
  }

  #ablated(handle, name, ablate, fn) {
    return withAblation(this.heap, name, ablate, this.config, (args) => this.heap.call.gpt2_set_ablation({ model: handle, ...args }), fn);
  }

  /**
   * One forward pass over input: every head's attention, the top 5 next
   * tokens at each position, with `lens` each layer's top token at each
   * position (the logit lens), with `logits` the (tokens x vocabulary) logits;
   * `ablate`'s heads zeroed.
   * @returns {{ tokens, attention, predictions, lens?, logits? }}
   */
  inspect(input, args = {}) {
    return this.guarded('inspect', (handle) => {
      const o = options('inspect', args, ['ablate', 'lens', 'logits']);
      for (const key of ['lens', 'logits']) {
        if (o[key] !== undefined && typeof o[key] !== 'boolean') throw valueError(`inspect: ${key} must be true or false (got ${describe(o[key])})`);
      }
      const ids = this.#window('inspect', input);
      const n = ids.length, { layers: L, heads: H, vocabulary: V } = this.config, top = GPT2_LIMITS.top;
      // the results' bytes before anything is allocated (the core counts them again, in 64 bits)
      const bytes = F32 * L * H * n * n + (I32 + F32) * n * top + (o.lens ? I32 * L * n : 0) + (o.logits ? F32 * n * V : 0);
      if (bytes > GPT2_LIMITS.maxResultMB * 1e6) {
        throw limitError(`inspect: ${n} tokens' results take ${bytes} bytes (the attention of ${L} layers x ${H} heads x ${n} x ${n}${o.logits ? `, logits ${n} x ${V}` : ''}), past the limit of ${GPT2_LIMITS.maxResultMB} MB; use fewer tokens${o.logits ? ' or leave out the logits' : ''}`);
      }
      const heap = this.heap;
      return this.#ablated(handle, 'inspect', o.ablate, () => heap.withBlock({
        tokens: I32 * n, attention: F32 * L * H * n * n, ids: I32 * n * top, p: F32 * n * top,
        lens: o.lens ? I32 * L * n : 0, logits: o.logits ? F32 * n * V : 0,
      }, (p) => {
        heap.writeI32(p.tokens, ids);
        heap.call.gpt2_inspect({ model: handle, tokens: p.tokens, n, attention: p.attention, ids: p.ids, p: p.p, lens: p.lens, logits: p.logits });
        const att = heap.readF32(p.attention, L * H * n * n);
        const topIds = heap.readI32(p.ids, n * top), topP = heap.readF32(p.p, n * top);
        const result = {
          tokens: Array.from(ids, (id) => this.#name(id)),
          attention: Array.from({ length: L }, (_, l) => Array.from({ length: H }, (_, h) => ({
            rows: n, cols: n, data: att.subarray((l * H + h) * n * n, (l * H + h + 1) * n * n),
          }))),
          predictions: Array.from({ length: n }, (_, t) => {
            const row = [];
            for (let j = 0; j < top; j++) {
              const id = topIds[t * top + j];
              if (id >= 0) row.push({ token: this.#name(id), id, p: topP[t * top + j] });
            }
            return row;
          }),
        };
        if (o.lens) {
          const lens = heap.readI32(p.lens, L * n);
          result.lens = Array.from({ length: L }, (_, l) => Array.from(lens.subarray(l * n, (l + 1) * n), (id) => this.#name(id)));
        }
        if (o.logits) result.logits = heap.readMatrix(p.logits, n, V);
        return result;
      }));
    });
  }

  /**
   * The loss of a text (or ids): the mean cross-entropy, in nats, of each
   * token given those before it, with `ablate`'s heads zeroed.
   * @returns {{ loss, tokens }} tokens: the predictions counted (the tokens - 1)
   */
  evaluate(args = {}) {
    return this.guarded('evaluate', (handle) => {
      const o = options('evaluate', args, ['text', 'ids', 'ablate']);
      if ((o.text === undefined) === (o.ids === undefined)) throw argError('evaluate: pass either text or ids');
      const ids = this.#window('evaluate', o.text !== undefined ? o.text : { ids: o.ids }, 2);
      const heap = this.heap;
      return this.#ablated(handle, 'evaluate', o.ablate, () => heap.withBlock({ tokens: I32 * ids.length, out: F64 }, (p) => {
        heap.writeI32(p.tokens, ids);
        heap.call.gpt2_evaluate({ model: handle, tokens: p.tokens, n: ids.length, out: p.out });
        return { loss: heap.readF64(p.out), tokens: ids.length - 1 };
      }));
    });
  }

  /**
   * Continues `prompt` (a string or { ids }) by `tokens` tokens, sampled at
   * `temperature` (0: greedy) from the `topK` most likely (0: all), from `seed`.
   * @returns {{ text: string, ids: Int32Array }} the continuation
   */
  generate(prompt, args = {}) {
    return this.guarded('generate', (handle) => {
      const o = options('generate', args, ['tokens', 'temperature', 'topK', 'seed']);
      const ids = this.#ids('generate', prompt);
      if (ids.length < 1) throw shapeError('generate: the prompt needs at least one token');
      const count = toInteger('tokens', o.tokens, 20, 0, GPT2_LIMITS.maxGenerate);
      const temperature = toNumber('temperature', o.temperature, 1);
      const topK = toInteger('topK', o.topK, 0, 0);
      const seed = seedOf(o.seed, 1);
      const heap = this.heap;
      return heap.withBlock({ tokens: I32 * (ids.length + count) }, (p) => {
        const tokens = new Int32Array(ids.length + count);
        tokens.set(ids);
        heap.writeI32(p.tokens, tokens);
        heap.call.gpt2_generate({ model: handle, tokens: p.tokens, nPrompt: ids.length, nNew: count, temperature, topK, seed });
        const out = heap.readI32(p.tokens + I32 * ids.length, count);
        const known = out.every((id) => id < this.#tokenizer.vocabulary);
        return { text: known ? this.#tokenizer.decode(out) : Array.from(out, (id) => this.#name(id)).join(''), ids: out };
      });
    });
  }

  /**
   * Each head's previous-token and induction scores over `count` sequences
   * of `length` distinct random tokens repeated once (from `seed`): the mean
   * attention from t to t - 1, and from a token's second occurrence to the
   * position after its first (Olsson et al. 2022), as the trained
   * transformer's headScores measures them.
   * @returns {{ previousToken: number, induction: number }[][]} [layer][head]
   */
  headScores(args = {}) {
    return this.guarded('headScores', (handle) => {
      const o = options('headScores', args, ['count', 'length', 'seed']);
      const count = toInteger('count', o.count, 8, 1, GPT2_LIMITS.maxEvaluate);
      const length = toInteger('length', o.length, 50, 2, Math.min(Math.floor(this.config.context / 2), this.config.vocabulary));
      const seed = seedOf(o.seed, 1);
      const { layers: L, heads: H } = this.config;
      const heap = this.heap;
      return heap.withBlock({ prev: F32 * L * H, ind: F32 * L * H }, (p) => {
        heap.call.gpt2_head_scores({ model: handle, count, length, seed, prev: p.prev, ind: p.ind });
        const prev = heap.readF32(p.prev, L * H), ind = heap.readF32(p.ind, L * H);
        return Array.from({ length: L }, (_, l) => Array.from({ length: H }, (_, h) => ({
          previousToken: prev[l * H + h], induction: ind[l * H + h],
        })));
      });
    });
  }

  /** A checkpoint is opened to be looked at: the engine does not train it. */
  train() {
    return this.guarded('train', () => {
      throw new AttnlabError('ERR_ARG', 'train: a GPT-2 checkpoint is opened for inspection; the engine does not train it');
    });
  }

  /** Nor does it write it back: the file it came from is the checkpoint. */
  save() {
    return this.guarded('save', () => {
      throw new AttnlabError('ERR_ARG', 'save: a GPT-2 checkpoint is not saved by the engine; its model.safetensors is the file');
    });
  }
}
