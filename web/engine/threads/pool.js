// The pool's workers: one per thread past the caller, each running the
// threaded build on the caller's shared memory (worker.js). The fork-join
// protocol itself lives in C (src/base/pool.c); here workers are started,
// awaited and stopped. Runs in Node (worker_threads), pages and workers.
import { AttnlabError } from '../errors.js';
import { POOL_WORKER } from '../wasm.js';
import { isNode } from './support.js';

/** How long a worker may take to start before the engine gives up on threads. */
const START_TIMEOUT_MS = 30_000;

/** A worker as { post, onMessage (its one message), onError, terminate }, in Node and in a page. */
async function spawn(tid) {
  if (isNode) {
    const { Worker } = await import('node:worker_threads');
    const worker = new Worker(POOL_WORKER, { execArgv: [] }); // not the caller's flags (--input-type, -e)
    return {
      post: (message) => worker.postMessage(message),
      onMessage: (fn) => worker.once('message', (m) => {
        // an engine that is never destroyed does not keep Node running (unref()
        // holds once no 'message' listener refs the worker's port)
        worker.unref();
        fn(m);
      }),
      onError: (fn) => {
        worker.on('error', fn);
        worker.on('exit', (code) => fn(new Error(`worker ${tid} exited (code ${code})`)));
      },
      terminate: () => worker.terminate(),
    };
  }
  const worker = new Worker(POOL_WORKER, { type: 'module', name: `attnlab-thread-${tid}` });
  return {
    post: (message) => worker.postMessage(message),
    onMessage: (fn) => worker.addEventListener('message', (e) => fn(e.data), { once: true }),
    onError: (fn) => worker.addEventListener('error', (e) => fn(new Error(e.message || `worker ${tid} failed to start`))),
    terminate: () => worker.terminate(),
  };
}

/**
 * Creates the pool in the threaded build's heap and starts threads - 1
 * workers; resolves once every worker is in its loop (or about to enter it).
 * @returns {Promise<{ threads: number, stop: () => void }>}
 */
export async function startPool(heap, threads) {
  heap.call.pool_create({ threads });
  const workers = [];
  let stopped = false;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    heap.call.pool_stop();
    for (const w of workers) w.terminate();
  };
  let timer;
  try {
    const ready = [];
    for (let tid = 1; tid < threads; tid++) {
      const worker = await spawn(tid);
      workers.push(worker);
      ready.push(new Promise((resolve, reject) => {
        worker.onMessage((m) => (m?.ready ? resolve() : reject(new Error(m?.error ?? 'unexpected message'))));
        worker.onError(reject);
      }));
      worker.post({ module: heap.module, memory: heap.memory, tid });
    }
    const timeout = new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`workers did not start within ${START_TIMEOUT_MS / 1000} s`)), START_TIMEOUT_MS);
    });
    await Promise.race([Promise.all(ready), timeout]);
  } catch (err) {
    stop();
    throw new AttnlabError('ERR_LOAD', `loadEngine: cannot start ${threads - 1} worker thread(s) (${err?.message ?? err})`);
  } finally {
    clearTimeout(timer);
  }
  return { threads, stop };
}
