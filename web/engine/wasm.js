// The only code that touches the WASM module's memory or calls its exports:
// loading a build, the one table of exported functions with their argument
// names, typed reads and writes, one heap block per call, and turning C
// status codes into thrown AttnlabErrors. Works in Node, in a page and in a worker.
import { AttnlabError } from './errors.js';

const BUILDS = {
  simd: new URL('../wasm/attnlab-simd.wasm', import.meta.url),
  scalar: new URL('../wasm/attnlab-scalar.wasm', import.meta.url),
  'simd-mt': new URL('../wasm/attnlab-simd-mt.wasm', import.meta.url),
};

/**
 * The pool's worker script. Named from a folder one level below the site's
 * root, like the builds above: the URL then also holds where a bundler puts
 * this module (dist/chunks/, dist/worker/) and dist/ keeps engine/ as it is.
 */
export const POOL_WORKER = new URL('../engine/threads/worker.js', import.meta.url);

/** The threaded build's shared memory, as its link flags fix it (emscripten.mk: INITIAL_MEMORY, MAXIMUM_MEMORY: 4 GiB). */
const PAGE = 65536;
const MT_MEMORY = { initial: (16 << 20) / PAGE, maximum: 2 ** 32 / PAGE, shared: true };

// (module (func (result v128) i32.const 0 i8x16.splat i8x16.popcnt)): validates only with SIMD128.
const SIMD_PROBE = new Uint8Array([
  0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0, 10, 10, 1, 8, 0, 65, 0, 253, 15, 253, 98, 11,
]);

export const simdSupported = () => {
  try {
    return WebAssembly.validate(SIMD_PROBE);
  } catch {
    return false;
  }
};

/**
 * Every export JS calls (src/wasm/*.c, without the `attnlab_` prefix), with
 * its arguments' names in C order. `status`: the function returns an NnStatus,
 * and a failure throws with this name (the API call's) before the message.
 * `pointer`: it returns an address, read unsigned (the heap reaches 4 GiB:
 * an address past 2 GiB comes back from WASM as a negative i32).
 */
const GPT2_ARCH = ['arch', 'rotaryDims', 'rotaryBase', 'parallel', 'geluExact'];
const BINDINGS = Object.freeze({
  last_error: { pointer: true, args: [] },
  heap_used: { args: [] },
  simd: { args: [] },
  constants: { pointer: true, args: [] },
  pool_create: { status: 'loadEngine', args: ['threads'] },
  pool_threads: { args: [] },
  pool_max_threads: { args: [] },
  pool_stack: { pointer: true, args: ['tid'] },
  pool_min_work: { args: ['work'] },
  pool_stop: { args: [] },
  attend: {
    status: 'attend',
    args: ['nQ', 'nK', 'dQ', 'dK', 'dV', 'hidden', 'score', 'norm', 'temperature', 'beta', 'causal', 'keyLengths',
      'q', 'k', 'v', 'W', 'Wq', 'Wk', 'vv', 'scores', 'weights', 'context'],
  },
  self_attention: {
    status: 'selfAttention',
    args: ['n', 'dIn', 'dK', 'dV', 'dOut', 'heads', 'score', 'causal', 'x', 'wq', 'wk', 'wv', 'wo',
      'q', 'k', 'v', 'scores', 'weights', 'context', 'output'],
  },
  s2s_create: {
    status: 'createSeq2Seq',
    args: ['task', 'alphabet', 'minLength', 'maxLength', 'text', 'textLength', 'cell', 'layers', 'bidirectional',
      'embed', 'hidden', 'attention', 'attnHidden', 'batch', 'seed', 'out'],
  },
  s2s_load: { status: 'loadSeq2Seq', args: ['bytes', 'size', 'out'] },
  s2s_destroy: { args: ['model'] },
  s2s_info: { args: ['model', 'result'] },
  s2s_alphabet: { args: ['model', 'output'] },
  s2s_split_size: { args: ['model', 'split'] },
  s2s_train: {
    status: 'train',
    args: ['model', 'optimizer', 'lr', 'clip', 'schedule', 'warmup', 'decaySteps', 'finalLr', 'steps', 'batch', 'losses', 'tokens'],
  },
  s2s_undo: { status: 'undoTrain', args: ['model'] },
  s2s_evaluate: { status: 'evaluate', args: ['model', 'split', 'count', 'result'] },
  s2s_translate_n: {
    status: 'translate',
    args: ['model', 'text', 'textLength', 'beam', 'inIds', 'outIds', 'lens', 'alignment', 'output'],
  },
  s2s_saliency_n: {
    status: 'saliency',
    args: ['model', 'text', 'textLength', 'step', 'inIds', 'outIds', 'lens', 'alignment', 'output', 'saliency'],
  },
  s2s_sample: { status: 'examples', args: ['model', 'split', 'rng', 'input', 'output'] },
  s2s_save_size: { args: ['model'] },
  s2s_save: { status: 'save', args: ['model', 'bytes', 'size'] },
  vis_data_create: { status: 'loadDigits', args: ['bytes', 'size', 'out'] },
  vis_data_destroy: { args: ['data'] },
  vis_create: {
    status: 'createVisionModel',
    args: ['data', 'task', 'clutter', 'size', 'minDigits', 'maxDigits', 'layers', 'c0', 'c1', 'c2', 'cell', 'hidden',
      'attention', 'mode', 'steps', 'entropy', 'batch', 'seed', 'start', 'sensor', 'retinaSize', 'retinaScales', 'sigma', 'out'],
  },
  vis_load: { status: 'loadVisionModel', args: ['data', 'bytes', 'size', 'out'] },
  vis_destroy: { args: ['model'] },
  vis_info: { args: ['model', 'result'] },
  vis_train: {
    status: 'train',
    args: ['model', 'optimizer', 'lr', 'clip', 'schedule', 'warmup', 'decaySteps', 'finalLr', 'steps', 'batch', 'losses', 'softMix', 'mixHold', 'mixEnd'],
  },
  vis_undo: { status: 'undoTrain', args: ['model'] },
  vis_evaluate: { status: 'evaluate', args: ['model', 'split', 'count', 'uniform', 'result'] },
  vis_predict: { status: 'predict', args: ['model', 'image', 'rows', 'cols', 'tokens', 'weights', 'locations'] },
  vis_saliency: { status: 'saliency', args: ['model', 'image', 'rows', 'cols', 'step', 'saliency'] },
  vis_sample: { status: 'examples', args: ['model', 'split', 'rng', 'image', 'labels', 'n', 'boxes'] },
  vis_canvas: { args: ['model'] },
  vis_glimpses: { args: ['model', 'glimpses'] },
  vis_save_size: { args: ['model'] },
  vis_save: { status: 'save', args: ['model', 'bytes', 'size'] },
  tf_create: {
    status: 'createTransformer',
    args: ['task', 'text', 'textLength', 'layers', 'heads', 'dModel', 'dFF', 'context', 'positional', 'score', 'batch',
      'seed', 'out'],
  },
  tf_destroy: { args: ['model'] },
  tf_info: { args: ['model', 'info'] },
  tf_parameters: { args: ['model'] },
  tf_seed: { args: ['model'] },
  tf_token: { pointer: true, args: ['model', 'id'] },
  tf_weights: { pointer: true, args: ['model'] },
  tf_tensor: { pointer: true, args: ['model', 'index', 'at'] },
  tf_set_tensor: { status: 'setWeights', args: ['model', 'index', 'data', 'count'] },
  tf_set_ablation: { args: ['model', 'pairs', 'n'] }, // its status is checked under the calling method's name
  tf_train: {
    status: 'train',
    args: ['model', 'steps', 'batch', 'lr', 'weightDecay', 'schedule', 'warmup', 'decaySteps', 'finalLr', 'clip', 'losses'],
  },
  tf_undo: { status: 'undoTrain', args: ['model'] },
  tf_evaluate: { status: 'evaluate', args: ['model', 'split', 'count', 'out'] },
  tf_sample: { status: 'examples', args: ['model', 'split', 'rng', 'tokens', 'targets', 'n'] },
  tf_inspect: { status: 'inspect', args: ['model', 'tokens', 'n', 'attention', 'ids', 'p', 'lens'] },
  tf_generate: { status: 'generate', args: ['model', 'tokens', 'nPrompt', 'nNew', 'temperature', 'topK', 'seed'] },
  tf_head_scores: { status: 'headScores', args: ['model', 'count', 'prev', 'ind'] },
  tf_composition_scores: { status: 'compositionScores', args: ['model', 'q', 'k', 'v'] },
  tf_copying_scores: { status: 'copyingScores', args: ['model', 'out'] },
  tf_logit_attribution: { status: 'logitAttribution', args: ['model', 'tokens', 'n', 'a', 'b', 'values', 'diff'] },
  tf_patch: { status: 'patch', args: ['model', 'clean', 'corrupt', 'n', 'a', 'b', 'target', 'method', 'out', 'metrics'] },
  tf_save_size: { args: ['model'] },
  tf_save: { status: 'save', args: ['model', 'bytes', 'size'] },
  tf_load: { status: 'loadModel', args: ['bytes', 'size', 'out'] },
  // a checkpoint's architecture: arch 0 GPT-2, 1 GPT-NeoX (its rotary dimensions and base, parallel residual, exact GELU)
  gpt2_param_count: { args: ['layers', 'heads', 'dModel', 'dFF', 'context', 'vocab', 'tied', ...GPT2_ARCH] },
  gpt2_check_config: { args: ['layers', 'heads', 'dModel', 'dFF', 'context', 'vocab', 'epsilon', ...GPT2_ARCH] }, // its status is checked by the caller
  gpt2_open: {
    status: 'loadModel',
    args: ['layers', 'heads', 'dModel', 'dFF', 'context', 'vocab', 'epsilon', ...GPT2_ARCH, 'header', 'headerLength', 'fileSize', 'out'],
  },
  gpt2_load_chunk: { status: 'loadModel', args: ['model', 'bytes', 'n'] },
  gpt2_load_finish: { status: 'loadModel', args: ['model'] },
  gpt2_destroy: { args: ['model'] },
  gpt2_parameters: { args: ['model'] },
  gpt2_dtype: { args: ['model'] },
  gpt2_set_ablation: { args: ['model', 'pairs', 'n'] }, // its status is checked under the calling method's name
  gpt2_inspect: { status: 'inspect', args: ['model', 'tokens', 'n', 'attention', 'ids', 'p', 'lens', 'logits'] },
  gpt2_evaluate: { status: 'evaluate', args: ['model', 'tokens', 'n', 'out'] },
  gpt2_train: {
    status: 'train',
    args: ['model', 'tokens', 'n', 'steps', 'batch', 'length', 'lr', 'weightDecay', 'schedule', 'warmup', 'decaySteps', 'finalLr', 'clip', 'losses'],
  },
  gpt2_undo: { status: 'undoTrain', args: ['model'] },
  gpt2_steps: { args: ['model'] },
  gpt2_generate: { status: 'generate', args: ['model', 'tokens', 'nPrompt', 'nNew', 'temperature', 'topK', 'seed'] },
  gpt2_head_scores: { status: 'headScores', args: ['model', 'count', 'length', 'seed', 'prev', 'ind'] },
  gpt2_composition_scores: { status: 'compositionScores', args: ['model', 'q', 'k', 'v'] },
  gpt2_copying_scores: { status: 'copyingScores', args: ['model', 'out'] },
  gpt2_logit_attribution: { status: 'logitAttribution', args: ['model', 'tokens', 'n', 'a', 'b', 'values', 'diff'] },
  gpt2_patch: { status: 'patch', args: ['model', 'clean', 'corrupt', 'n', 'a', 'b', 'target', 'method', 'out', 'metrics'] },
});

const isNode = typeof process === 'object' && typeof process.versions?.node === 'string' && typeof window === 'undefined';

async function readBytes(url) {
  if (isNode && url.protocol === 'file:') {
    const { readFile } = await import('node:fs/promises');
    return readFile(url);
  }
  const response = await fetch(url);
  if (!response.ok) throw new AttnlabError('ERR_LOAD', `attnlab: cannot load ${url} (HTTP ${response.status})`);
  return response.arrayBuffer();
}

const compiled = new Map(); // url -> Promise<WebAssembly.Module>

function compile(url) {
  const key = String(url);
  if (!compiled.has(key)) {
    const promise = readBytes(url).then((bytes) => WebAssembly.compile(bytes));
    promise.catch(() => compiled.delete(key));
    compiled.set(key, promise);
  }
  return compiled.get(key);
}

const imports = (memory) => ({ env: { emscripten_notify_memory_growth() {}, ...(memory ? { memory } : {}) } });

/**
 * Instantiates one build ('simd', 'scalar' or 'simd-mt', or an explicit URL).
 * The threaded build gets a new shared memory, which heap.memory and
 * heap.module then hand to the pool's workers.
 */
export async function instantiate(variant, url = BUILDS[variant]) {
  const module = await compile(url);
  const memory = variant === 'simd-mt' ? new WebAssembly.Memory(MT_MEMORY) : undefined;
  const instance = await WebAssembly.instantiate(module, imports(memory));
  const exports = instance.exports;
  if (typeof exports._initialize === 'function') exports._initialize();
  return new Heap(exports, memory ?? exports.memory, module);
}

/**
 * A pool worker's side: instantiates the threaded build on the caller's
 * shared memory (its data is initialised already: passive segments run
 * once), moves the stack pointer to this thread's stack, and returns a
 * function that enters the worker loop (it returns after pool_stop).
 */
export async function joinPool(module, memory, tid) {
  const { exports } = await WebAssembly.instantiate(module, imports(memory));
  const top = exports.attnlab_pool_stack(tid) >>> 0;
  if (!top) throw internalError(`thread ${tid} has no stack in this pool`);
  exports.stackRestore(top);
  return () => exports.attnlab_pool_worker(tid);
}

/** Byte sizes of the values a heap block holds. */
export const F32 = 4, I32 = 4, F64 = 8, U8 = 1;

const ALIGN = 16;
/** Bytes of one call's block: malloc takes a 32-bit size, so a larger request would wrap to a small one. */
const MAX_BLOCK = 2 ** 31 - 1;
const internalError = (message) => new AttnlabError('ERR_INTERNAL', `attnlab: ${message}`);

/** Binds one export: called with an object of its named arguments. */
function bind(exports, name, { status, pointer, args }) {
  const fn = exports[`attnlab_${name}`];
  if (typeof fn !== 'function') throw internalError(`this WASM build has no export attnlab_${name}; rebuild it (make wasm)`);
  const expected = new Set(args);
  return (heap, named = {}) => {
    for (const key of Object.keys(named)) {
      if (!expected.has(key)) throw internalError(`attnlab_${name} takes no argument '${key}'`);
    }
    const values = args.map((arg) => {
      const v = named[arg];
      if (v === undefined) throw internalError(`attnlab_${name} needs argument '${arg}'`);
      return typeof v === 'boolean' ? Number(v) : v;
    });
    const result = fn(...values);
    if (status) heap.check(result, status);
    return pointer ? result >>> 0 : result;
  };
}

/** Typed access to one instance's memory; views are re-read on every access (memory may grow). */
export class Heap {
  constructor(exports, memory = exports.memory, module = null) {
    this.exports = exports;
    /** The instance's memory (shared in the threaded build) and its compiled module. */
    this.memory = memory;
    this.module = module;
    this.decoder = new TextDecoder();
    /** The exports as named-argument functions: heap.call.attend({ nQ, nK, ... }). */
    this.call = {};
    for (const [name, binding] of Object.entries(BINDINGS)) {
      const fn = bind(exports, name, binding);
      this.call[name] = (args) => fn(this, args);
    }
    Object.freeze(this.call);
    const json = this.readString(this.call.constants());
    if (!json) throw internalError('this WASM build could not list its constants');
    /** The C core's constants table (src/wasm/constants.c), read once. */
    this.constants = JSON.parse(json);
    this.statusNames = Object.fromEntries(Object.entries(this.constants.statuses).map(([name, code]) => [code, name]));
  }

  get #buffer() {
    return this.memory.buffer;
  }

  /** Byte size of each region of the blocks in use, by pointer: writes past a region are refused. */
  #regions = new Map();

  /**
   * Runs fn with one heap block holding every named region of `sizes`
   * ({ name: bytes }, each 16-byte aligned); fn gets { name: pointer }, 0
   * for a region of 0 bytes. The block is freed however fn ends.
   */
  withBlock(sizes, fn) {
    const pointers = {};
    let bytes = 0;
    for (const [name, size] of Object.entries(sizes)) {
      if (size > 0) {
        pointers[name] = bytes;
        bytes += Math.ceil(size / ALIGN) * ALIGN;
      } else {
        pointers[name] = -1;
      }
    }
    if (!(bytes <= MAX_BLOCK)) {
      throw new AttnlabError('ERR_LIMIT', `attnlab: a call's block of ${bytes} bytes is past the limit of ${MAX_BLOCK} (the WASM heap's malloc takes a 32-bit size)`);
    }
    const base = this.#malloc(bytes);
    try {
      const aligned = Math.ceil(base / ALIGN) * ALIGN;
      for (const name of Object.keys(pointers)) {
        pointers[name] = pointers[name] < 0 ? 0 : aligned + pointers[name];
        if (pointers[name]) this.#regions.set(pointers[name], sizes[name]);
      }
      return fn(pointers);
    } finally {
      for (const ptr of Object.values(pointers)) if (ptr > 0) this.#regions.delete(ptr);
      this.exports.free(base);
    }
  }

  #malloc(bytes) {
    const base = this.exports.malloc(bytes + ALIGN) >>> 0; // an address past 2 GiB is a negative i32
    if (!base) throw new AttnlabError('ERR_NOMEM', `attnlab: out of WASM memory for ${bytes} bytes`);
    return base;
  }

  /** The block results returned as views live in ({ base, bytes }), kept and reused from call to call. */
  #views = null;

  /**
   * Runs fn(base) with a 16-byte aligned block of at least `bytes` for
   * results returned as views (valid until the next call that asks for one):
   * the previous block when it is large enough. A larger one is taken beside
   * it and replaces it only when fn returns: until then the previous block
   * stays allocated, so a call that fails leaves the earlier views as they
   * were (nothing else, its inputs included, can be placed in their block).
   */
  withViews(bytes, fn) {
    const current = this.#views;
    if (current && current.bytes >= bytes) return fn(Math.ceil(current.base / ALIGN) * ALIGN);
    const next = { base: this.#malloc(bytes), bytes };
    let result;
    try {
      result = fn(Math.ceil(next.base / ALIGN) * ALIGN);
    } catch (err) {
      this.exports.free(next.base);
      throw err;
    }
    if (current) this.exports.free(current.base);
    this.#views = next;
    return result;
  }

  /**
   * Runs fn(slot) with one pointer-sized out slot (zeroed), for an export that
   * stores a handle there; returns the handle.
   */
  withHandle(fn) {
    return this.withBlock({ slot: I32 }, (p) => {
      this.writeI32(p.slot, [0]);
      fn(p.slot);
      return this.readI32(p.slot, 1)[0] >>> 0;
    });
  }

  /**
   * The typed array over the region at ptr for `values` values of `Type`.
   * Each region is sized from the values then written to it: numbers must
   * fill it exactly (fewer would leave the last call's values for the core to
   * read: an input whose memory shrank after its check), bytes may leave room
   * for a NUL. Nothing is ever written past a region.
   */
  #region(ptr, Type, values, exact) {
    const bytes = this.#regions.get(ptr);
    if (bytes === undefined) throw internalError(`a write to ${ptr}, which is no region of a block in use`);
    const size = values * Type.BYTES_PER_ELEMENT;
    if (size > bytes || (exact && size !== bytes)) {
      throw new AttnlabError('ERR_ARG', `attnlab: an input changed after it was checked (${values} values for ${bytes} bytes)`);
    }
    return new Type(this.#buffer, ptr, values);
  }

  /** Copies numbers (a Float32Array or array the engine made) to ptr as float32; nothing when ptr is 0. */
  writeF32(ptr, data) {
    if (ptr && data) this.#region(ptr, Float32Array, data.length, true).set(data);
  }

  /** Copies integers to ptr as int32. */
  writeI32(ptr, data) {
    if (ptr && data) this.#region(ptr, Int32Array, data.length, true).set(data);
  }

  /** Writes a seed (an integer 0..2^53) at ptr as a u64 stream state: two u32 words, low word first. */
  writeSeed(ptr, seed) {
    this.writeI32(ptr, [seed % 2 ** 32, Math.floor(seed / 2 ** 32)]);
  }

  /** Copies bytes (a Uint8Array the engine made) to ptr. */
  writeBytes(ptr, bytes) {
    if (ptr && bytes) this.#region(ptr, Uint8Array, bytes.length, false).set(bytes);
  }

  /**
   * A copy of n float32 values at ptr. The typed-array constructor copies
   * into memory it need not zero first: out of the threaded build's shared
   * memory, a 1024 x 1024 attention call with its scores and weights copied
   * out runs 0.2-0.3 ms faster than with a zeroed array filled by set().
   */
  readF32(ptr, n) {
    return new Float32Array(new Float32Array(this.#buffer, ptr, n));
  }

  /** A copy of n int32 values at ptr. */
  readI32(ptr, n) {
    const out = new Int32Array(n);
    out.set(new Int32Array(this.#buffer, ptr, n));
    return out;
  }

  /** One float64 value at ptr (8-byte aligned). */
  readF64(ptr) {
    return new Float64Array(this.#buffer, ptr, 1)[0];
  }

  /** A copy of n bytes at ptr. */
  readBytes(ptr, n) {
    const out = new Uint8Array(n);
    out.set(new Uint8Array(this.#buffer, ptr, n));
    return out;
  }

  /** The NUL-terminated UTF-8 string at ptr. */
  readString(ptr) {
    const bytes = new Uint8Array(this.#buffer, ptr);
    const end = bytes.indexOf(0);
    // a copy: TextDecoder takes no view of a shared buffer
    return this.decoder.decode(bytes.slice(0, end < 0 ? 0 : end));
  }

  /** A copy of `rows x cols` floats at ptr, as { rows, cols, data }. */
  readMatrix(ptr, rows, cols) {
    return { rows, cols, data: this.readF32(ptr, rows * cols) };
  }

  /** A view (no copy) of `rows x cols` floats at ptr, as { rows, cols, data }: valid while the block at ptr is. */
  viewMatrix(ptr, rows, cols) {
    return { rows, cols, data: new Float32Array(this.#buffer, ptr, rows * cols) };
  }

  /** The saved file of a model: the bytes `${kind}_save` writes, `${kind}_save_size` of them (kind 's2s', 'vis' or 'tf'). */
  savedBytes(kind, model) {
    const size = this.call[`${kind}_save_size`]({ model });
    return this.withBlock({ bytes: U8 * size }, (p) => {
      this.call[`${kind}_save`]({ model, bytes: p.bytes, size });
      return this.readBytes(p.bytes, size);
    });
  }

  /**
   * Calls an export that fills the record `name` (src/wasm/boundary.h) at its
   * `result` argument, in a block of the record's size; returns the record.
   */
  callRecord(exportName, name, args) {
    return this.withBlock({ result: this.#record(name).size }, (p) => {
      this.call[exportName]({ ...args, result: p.result });
      return this.readRecord(name, p.result);
    });
  }

  /** The record `name` at ptr as { field: number | Int32Array | Float64Array }. */
  readRecord(name, ptr) {
    const out = {};
    for (const [field, { offset, type, count }] of Object.entries(this.#record(name).fields)) {
      const values = type === 'f64' ? new Float64Array(this.#buffer, ptr + offset, count) : new Int32Array(this.#buffer, ptr + offset, count);
      out[field] = count === 1 ? values[0] : values.slice();
    }
    return out;
  }

  #record(name) {
    const record = this.constants.records[name];
    if (!record) throw internalError(`this WASM build describes no record ${name}`);
    return record;
  }

  /** Throws the core's message as an AttnlabError unless status is 0 (NN_OK). */
  check(status, prefix) {
    if (status === 0) return;
    const message = this.readString(this.call.last_error());
    throw new AttnlabError(this.statusNames[status] ?? 'ERR_INTERNAL', `${prefix}: ${message}`);
  }
}
