// TensorFlow.js on its WASM backend with one thread: the baseline the benches compare against.
import { createRequire } from 'node:module';
import path from 'node:path';

/** Loads @tensorflow/tfjs, selects the WASM backend (one thread) and waits until it is ready. */
export async function loadTfWasm() {
  const require = createRequire(import.meta.url);
  const tf = await import('@tensorflow/tfjs'); // the union package re-exports tfjs-core
  const tfw = await import('@tensorflow/tfjs-backend-wasm');
  // In Node the backend finds its .wasm next to its own JS; say so explicitly anyway.
  tfw.setWasmPaths(path.dirname(require.resolve('@tensorflow/tfjs-backend-wasm')) + path.sep);
  if (typeof tfw.setThreadsCount === 'function') tfw.setThreadsCount(1);
  const ok = await tf.setBackend('wasm');
  await tf.ready();
  if (!ok || tf.getBackend() !== 'wasm') throw new Error('tf.setBackend("wasm") failed');
  const simd = await tf.env().getAsync('WASM_HAS_SIMD_SUPPORT');
  const threads = typeof tfw.getThreadsCount === 'function' ? tfw.getThreadsCount() : '?';
  return { tf, version: tf.version_core ?? tf.version?.['tfjs-core'] ?? '?', simd, threads };
}
