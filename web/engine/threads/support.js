// Whether this runtime can run the threaded build, and how many threads
// 'auto' means. Nothing here touches WASM memory.

/** 'auto' takes the hardware's threads, at most this many. */
export const AUTO_THREADS_MAX = 8;

const isNode = typeof process === 'object' && typeof process.versions?.node === 'string' && typeof window === 'undefined';

// (module (memory 1 1 shared)): validates only where WebAssembly has threads.
const SHARED_MEMORY_PROBE = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 5, 4, 1, 3, 1, 1]);

/** Threads the hardware offers (1 when the runtime does not say). */
export async function hardwareThreads() {
  const n = globalThis.navigator?.hardwareConcurrency;
  if (Number.isInteger(n) && n > 0) return n;
  if (isNode) {
    const os = await import('node:os');
    return os.availableParallelism?.() ?? os.cpus().length ?? 1;
  }
  return 1;
}

/**
 * Why the threaded build cannot run here, or null when it can: shared
 * memory needs SharedArrayBuffer, which a page gets only when cross-origin
 * isolated, WebAssembly threads, and workers.
 */
export function threadsUnavailable() {
  if (globalThis.crossOriginIsolated === false) {
    return 'this page is not cross-origin isolated (it needs the headers Cross-Origin-Opener-Policy: same-origin and '
      + 'Cross-Origin-Embedder-Policy: require-corp, or the service worker coi-sw.js; see the README, Hosting)';
  }
  if (typeof SharedArrayBuffer !== 'function') return 'this runtime has no SharedArrayBuffer';
  try {
    if (!WebAssembly.validate(SHARED_MEMORY_PROBE)) return 'this runtime has no WebAssembly threads (shared memory)';
  } catch {
    return 'this runtime has no WebAssembly threads (shared memory)';
  }
  if (!isNode && typeof Worker !== 'function') return 'this runtime cannot start workers';
  return null;
}

export { isNode };
