// Hugging Face checkpoints, GPT-2 and GPT-NeoX (the C model,
// include/attnlab/gpt2.h): a model.safetensors and its config.json, opened
// with engine.loadModel(bytes, { config }) as a TransformerModel
// (transformer.js) with this file's adapter. The config is read here; the
// file's header is checked by the core against it before the weights are
// allocated, then the data goes in by chunks, so the WASM heap never holds the
// whole file. Text goes through the checkpoint's tokenizer.json (bpe.js) or,
// without one, GPT-2's tokenizer (gpt2-tokenizer.js).
import { GPT2_LIMITS } from './constants.js';
import { argError, describe, limitError, valueError } from './errors.js';
import { readTokenizerJson } from './bpe.js';
import { gpt2Tokenizer } from './gpt2-tokenizer.js';
import { options, toInteger } from './matrix.js';
import { TransformerModel } from './transformer.js';
import { U8 } from './wasm.js';

/** Bytes of the file copied into the heap at once: the heap holds the weights and one chunk. */
const CHUNK = 16 << 20;
const MAX_CONFIG_TEXT = 1 << 20;
const MAX_CONFIG_INTEGER = 2 ** 31 - 1; // the core's int (a pytorch_model.bin's length too: the core takes it whole)
const DTYPES = ['float32', 'float16', 'bfloat16'];

/** Whether a file is a safetensors file: an 8-byte little-endian header length, then the header's '{'. */
export const isSafetensors = (file) => file.length >= 9 && file[8] === 0x7b;

/** Whether a file is a zip (pytorch_model.bin, torch.save's): a local file header, 'PK\x03\x04'. */
export const isTorchZip = (file) => file.length >= 4 && file[0] === 0x50 && file[1] === 0x4b && file[2] === 3 && file[3] === 4;

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

/** The checkpoint options loadModel and openModel share, read: { config, tokenizer } (the config checked by the core). */
function readCheckpointOptions(heap, o) {
  const config = readConfig(o.config);
  heap.check(heap.call.gpt2_check_config({ ...sizes(config), epsilon: config.epsilon }), 'loadModel: config');
  return config;
}

/** The safetensors header's length from the file's first 8 bytes, checked against the file's size and the limit. */
function headerLengthOf(first8, fileSize) {
  const view = new DataView(first8.buffer, first8.byteOffset, 8);
  const headerLength = view.getUint32(0, true) + view.getUint32(4, true) * 2 ** 32;
  if (headerLength > fileSize - 8) {
    throw valueError(`loadModel: header: its length, ${headerLength} bytes, runs past the end of the file (${fileSize} bytes)`);
  }
  if (headerLength > GPT2_LIMITS.maxHeader) throw limitError(`loadModel: header: ${headerLength} bytes is past the limit of ${GPT2_LIMITS.maxHeader}`);
  return headerLength;
}

/** A pytorch_model.bin's size, which the core takes whole as its header: within the core's int. */
function zipLength(fileSize) {
  if (fileSize > MAX_CONFIG_INTEGER) throw limitError(`loadModel: pytorch_model.bin: ${fileSize} bytes; the reader takes the whole file, at most ${MAX_CONFIG_INTEGER} bytes`);
  return fileSize;
}

/**
 * Takes a checkpoint of fileSize bytes in consecutive pieces of any size,
 * each read only during its write(): the header is gathered until it is
 * whole, then the core opens the model (allocating its weights) and each
 * later piece goes into the heap as it comes, so the heap holds the weights
 * and one piece. A pytorch_model.bin
 * (a zip: its directory is at its end) is gathered whole, opened, then read
 * from its first byte. finish() returns the TransformerModel; destroy()
 * frees a model not finished (after an error).
 */
class CheckpointSink {
  #heap; #config; #tokenizer; #fileSize;
  #head = []; // the pieces of the first 8 + header bytes, until the model is open
  #headBytes = 0;
  #headerLength = -1;
  #headerAt = 8; // where the header starts; a zip is its own header, its data from byte 0
  #handle = 0;
  #taken = 0;

  constructor(heap, config, tokenizer, fileSize) {
    this.#heap = heap;
    this.#config = config;
    this.#tokenizer = tokenizer;
    this.#fileSize = fileSize;
  }

  /** Bytes taken so far. */
  get taken() {
    return this.#taken;
  }

  write(piece) {
    if (piece.length === 0) return;
    if (this.#taken + piece.length > this.#fileSize) {
      throw valueError(`loadModel: the file holds more than its ${this.#fileSize} bytes`);
    }
    this.#taken += piece.length;
    if (this.#handle) {
      this.#load(piece);
      return;
    }
    this.#head.push(piece);
    this.#headBytes += piece.length;
    if (this.#headerLength < 0 && this.#headBytes >= 8) {
      const first = this.#joined();
      if (isTorchZip(first)) [this.#headerAt, this.#headerLength] = [0, zipLength(this.#fileSize)];
      else this.#headerLength = headerLengthOf(first, this.#fileSize);
    }
    const at = this.#headerAt;
    if (this.#headerLength < 0 || this.#headBytes < at + this.#headerLength) {
      // kept past this call as a copy: the caller may fill the piece's memory again (hub.js reads into one buffer)
      if (this.#head.at(-1) === piece) this.#head[this.#head.length - 1] = piece.slice();
      return;
    }
    const head = this.#joined();
    this.#head = null;
    this.#open(head.subarray(at, at + this.#headerLength));
    this.#load(at ? head.subarray(at + this.#headerLength) : head);
  }

  #joined() {
    if (this.#head.length > 1) {
      const all = new Uint8Array(this.#headBytes);
      let at = 0;
      for (const p of this.#head) {
        all.set(p, at);
        at += p.length;
      }
      this.#head = [all];
    }
    return this.#head[0];
  }

  #open(header) {
    const heap = this.#heap, headerLength = header.length;
    this.#handle = heap.withBlock({ header: U8 * headerLength }, (p) => {
      heap.writeBytes(p.header, header);
      return heap.withHandle((out) => heap.call.gpt2_open({
        ...sizes(this.#config), epsilon: this.#config.epsilon, header: p.header, headerLength, fileSize: this.#fileSize, out,
      }));
    });
  }

  #load(bytes) {
    const heap = this.#heap;
    for (let at = 0; at < bytes.length; at += CHUNK) {
      const piece = bytes.subarray(at, Math.min(at + CHUNK, bytes.length));
      heap.withBlock({ chunk: U8 * piece.length }, (p) => {
        heap.writeBytes(p.chunk, piece);
        heap.call.gpt2_load_chunk({ model: this.#handle, bytes: p.chunk, n: piece.length });
      });
    }
  }

  finish() {
    if (this.#taken !== this.#fileSize || !this.#handle) {
      throw valueError(`loadModel: the file ended after ${this.#taken} of its ${this.#fileSize} bytes`);
    }
    this.#heap.call.gpt2_load_finish({ model: this.#handle });
    const handle = this.#handle;
    this.#handle = 0;
    return new TransformerModel(this.#heap, handle, checkpointRun(this.#heap, handle, this.#config, this.#tokenizer));
  }

  destroy() {
    if (this.#handle) this.#heap.call.gpt2_destroy({ model: this.#handle });
    this.#handle = 0;
  }
}

/**
 * A checkpoint (the bytes of model.safetensors or pytorch_model.bin) with its config.json, as
 * engine.loadModel reads it: a TransformerModel of config.architecture
 * 'gpt2' or 'gpt_neox'. onProgress(fraction), when given, hears how
 * much of the data is in. tokenizer, when given, is the checkpoint's
 * tokenizer.json (its text, bytes or object; bpe.js); without it, GPT-2's.
 */
export async function loadCheckpoint(heap, file, args) {
  const o = options('loadModel', args ?? {}, ['config', 'onProgress', 'tokenizer']);
  if (o.config === undefined) {
    throw argError(`loadModel: this is a ${isTorchZip(file) ? 'pytorch_model.bin' : 'safetensors'} checkpoint; pass its config.json too: loadModel(bytes, { config })`);
  }
  if (o.onProgress !== undefined && typeof o.onProgress !== 'function') throw argError(`loadModel: onProgress must be a function (got ${describe(o.onProgress)})`);
  const config = readCheckpointOptions(heap, o);
  // the header length: within the file and the limit, before a byte of it is copied (a zip goes in whole)
  const start = isTorchZip(file) ? zipLength(file.length) : 8 + headerLengthOf(file, file.length);
  const tokenizer = o.tokenizer === undefined ? await gpt2Tokenizer() : readTokenizerJson(o.tokenizer);
  const sink = new CheckpointSink(heap, config, tokenizer, file.length);
  try {
    const total = file.length - start;
    sink.write(file.subarray(0, start));
    if (total === 0) o.onProgress?.(1);
    for (let at = 0; at < total; at += CHUNK) {
      sink.write(file.subarray(start + at, start + Math.min(at + CHUNK, total)));
      o.onProgress?.(Math.min(at + CHUNK, total) / total);
    }
    return sink.finish();
  } catch (err) {
    sink.destroy();
    throw err;
  }
}

/**
 * A checkpoint taken as it arrives (engine.openModel, hub.js): checks
 * { config, tokenizer } as loadModel does and returns a sink of the file's
 * fileSize bytes: write(piece) for each consecutive piece, then finish() ->
 * the TransformerModel loadModel would give for the same bytes, or destroy()
 * to drop what was taken. The heap never holds more than the weights and one piece.
 */
export async function checkpointSink(heap, args, fileSize) {
  const o = options('loadModel', args ?? {}, ['config', 'tokenizer']);
  if (o.config === undefined) throw argError('loadModel: a safetensors checkpoint needs its config.json');
  const config = readCheckpointOptions(heap, o);
  if (!Number.isSafeInteger(fileSize) || fileSize < 9) throw valueError(`loadModel: ${describe(fileSize)} bytes is no safetensors file's size`);
  const tokenizer = o.tokenizer === undefined ? await gpt2Tokenizer() : readTokenizerJson(o.tokenizer);
  return new CheckpointSink(heap, config, tokenizer, fileSize);
}

/** Token id -> its text as tokenize shows it ("<id>" for an id the tokenizer lacks: a checkpoint's vocabulary may be larger). */
function tokenNames(tokenizer, size) {
  return Object.freeze(Array.from({ length: size }, (_, id) => {
    if (id >= tokenizer.vocabulary) return `<${id}>`;
    try {
      return tokenizer.token(id);
    } catch {
      return `<${id}>`; // a hole in a tokenizer.json's ids
    }
  }));
}

/**
 * A checkpoint's adapter for TransformerModel (transformer.js says each
 * field): forward only, the gpt2_* exports; its text through `tokenizer`; it
 * has no task, so it evaluates a text (not a split), fine-tunes on a text it
 * is given and draws the sequences its heads are scored on; it does not save
 * in attnlab's format or hand out its tensors.
 */
function checkpointRun(heap, handle, config, tokenizer) {
  const vocabulary = tokenNames(tokenizer, config.vocabulary);
  const known = (ids) => ids.every((id) => id < tokenizer.vocabulary);
  const noTask = 'a checkpoint has no task';
  return {
    architecture: config.architecture,
    prefix: 'gpt2',
    config: {
      task: null, layers: config.layers, heads: config.heads, dModel: config.dModel, dFF: config.dFF, context: config.context,
      positional: config.architecture === 'gpt_neox' ? 'rope' : 'learned', score: 'scaled_dot', batch: null, seed: null,
      vocabulary, sequenceLength: null, parameters: heap.call.gpt2_parameters({ model: handle }),
      dtype: DTYPES[heap.call.gpt2_dtype({ model: handle })],
    },
    info: (model) => ({ steps: heap.call.gpt2_steps({ model }) }),
    // fine-tuning (gpt2_train): windows of `length` tokens drawn from a text, AdamW
    train: {
      data: true, maxSteps: GPT2_LIMITS.maxSteps, batch: () => 4, maxBatch: () => GPT2_LIMITS.maxBatch,
      optimizers: null, weightDecay: true,
      options: {
        length: (value, { config: c, defaults }) => ({ length: toInteger('length', value, Math.min(defaults.length, c.context), 1, c.context) }),
      },
      tokens: (steps, batch, c, args) => steps * batch * args.length,
    },
    tokenizer: {
      encode: (name, text) => tokenizer.encode(text).ids,
      decode: (ids) => (known(ids) ? tokenizer.decode(ids) : Array.from(ids, (id) => vocabulary[id]).join('')),
    },
    limits: {
      top: GPT2_LIMITS.top, maxGenerate: GPT2_LIMITS.maxGenerate, maxEvaluate: GPT2_LIMITS.maxEvaluate,
      maxTrainTokens: GPT2_LIMITS.maxTrainTokens,
    },
    lens: false,
    headScores: 8,
    call: {
      setAblation: (args) => heap.call.gpt2_set_ablation(args),
      inspect: (args) => heap.call.gpt2_inspect(args),
      generate: (args) => heap.call.gpt2_generate(args),
      headScores: (args) => heap.call.gpt2_head_scores(args),
      compositionScores: (args) => heap.call.gpt2_composition_scores(args),
      copyingScores: (args) => heap.call.gpt2_copying_scores(args),
      patch: (args) => heap.call.gpt2_patch(args),
      logitAttribution: (args) => heap.call.gpt2_logit_attribution(args),
      evaluateTokens: (args) => heap.call.gpt2_evaluate(args),
    },
    lacks: {
      save: "a checkpoint is not saved in attnlab's format; its model.safetensors is the file (fine-tuned weights stay in this engine)",
      examples: `${noTask} to draw examples from`,
      weights: "a checkpoint's tensors stay in the engine; its model.safetensors holds them",
      export: 'a checkpoint is a Hugging Face checkpoint already: its model.safetensors and config.json are the export',
      split: `${noTask} whose splits it could be evaluated on; pass text or ids`,
    },
  };
}
