// The only code that touches the WASM module's memory: loading a build,
// laying out one heap block per call, copying matrices in and out, and turning
// C status codes into thrown errors. Works in Node, in a page and in a worker.
import { AttnlabError, STATUS_CODES } from './errors.js';

const BUILDS = {
  simd: new URL('../wasm/attnlab-simd.wasm', import.meta.url),
  scalar: new URL('../wasm/attnlab-scalar.wasm', import.meta.url),
};

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

const isNode = typeof process === 'object' && typeof process.versions?.node === 'string' && typeof window === 'undefined';

async function readBytes(url) {
  if (isNode && url.protocol === 'file:') {
    const { readFile } = await import('node:fs/promises');
    return readFile(url);
  }
  const response = await fetch(url);
  if (!response.ok) throw new Error(`attnlab: cannot load ${url} (HTTP ${response.status})`);
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

/** Instantiates one build ('simd' or 'scalar', or an explicit URL). */
export async function instantiate(variant, url = BUILDS[variant]) {
  const module = await compile(url);
  const instance = await WebAssembly.instantiate(module, {
    env: { emscripten_notify_memory_growth() {} },
  });
  const exports = instance.exports;
  if (typeof exports._initialize === 'function') exports._initialize();
  return new Heap(exports);
}

const ALIGN = 16;

/** Typed access to one instance's memory; views are re-read after every malloc. */
export class Heap {
  constructor(exports) {
    this.exports = exports;
    this.decoder = new TextDecoder();
  }

  get f32() {
    return new Float32Array(this.exports.memory.buffer);
  }

  get i32() {
    return new Int32Array(this.exports.memory.buffer);
  }

  /**
   * Runs fn with one heap block holding every named region of `sizes`
   * ({ name: count of 4-byte values }); fn gets { name: byte pointer }.
   * The block is freed however fn ends.
   */
  withBlock(sizes, fn) {
    const pointers = {};
    let bytes = 0;
    for (const [name, count] of Object.entries(sizes)) {
      if (count > 0) {
        pointers[name] = bytes;
        bytes += Math.ceil((count * 4) / ALIGN) * ALIGN;
      } else {
        pointers[name] = -1;
      }
    }
    const base = this.exports.malloc(bytes + ALIGN);
    if (!base) throw new AttnlabError('ERR_NOMEM', `attnlab: out of WASM memory for ${bytes} bytes`);
    try {
      const aligned = Math.ceil(base / ALIGN) * ALIGN;
      for (const name of Object.keys(pointers)) {
        pointers[name] = pointers[name] < 0 ? 0 : aligned + pointers[name];
      }
      return fn(pointers);
    } finally {
      this.exports.free(base);
    }
  }

  writeF32(ptr, data) {
    if (ptr) this.f32.set(data, ptr >> 2);
  }

  writeI32(ptr, data) {
    if (ptr) this.i32.set(data, ptr >> 2);
  }

  /** A copy of `rows x cols` floats at ptr, as { rows, cols, data }. */
  readMatrix(ptr, rows, cols) {
    const start = ptr >> 2;
    return { rows, cols, data: this.f32.slice(start, start + rows * cols) };
  }

  /** Throws the core's message as an AttnlabError unless status is 0. */
  /** The NUL-terminated UTF-8 string at ptr. */
  readString(ptr) {
    const bytes = new Uint8Array(this.exports.memory.buffer, ptr);
    const end = bytes.indexOf(0);
    return this.decoder.decode(bytes.subarray(0, end < 0 ? 0 : end));
  }

  /** Copies bytes (a Uint8Array) to ptr. */
  writeBytes(ptr, bytes) {
    if (ptr) new Uint8Array(this.exports.memory.buffer).set(bytes, ptr);
  }

  check(status, prefix) {
    if (status === 0) return;
    const message = this.readString(this.exports.attnlab_last_error());
    throw new AttnlabError(STATUS_CODES[status] ?? 'ERR_INTERNAL', `${prefix}: ${message}`);
  }
}
