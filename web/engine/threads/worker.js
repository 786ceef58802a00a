// One thread of the engine's pool (pool.js starts it): receives the threaded
// build's module, the shared memory and its thread id, joins the pool and
// runs its shares of the parallel regions until the pool stops. Runs as a
// module worker in a page and under Node's worker_threads.
import { joinPool } from '../wasm.js';

const isNode = typeof process === 'object' && typeof process.versions?.node === 'string' && typeof self === 'undefined';

async function channel() {
  if (isNode) {
    const { parentPort } = await import('node:worker_threads');
    return { once: (fn) => parentPort.once('message', fn), post: (m) => parentPort.postMessage(m), close: () => parentPort.close() };
  }
  return {
    once: (fn) => self.addEventListener('message', (e) => fn(e.data), { once: true }),
    post: (m) => self.postMessage(m),
    close: () => self.close(),
  };
}

const port = await channel();
port.once(async ({ module, memory, tid }) => {
  let run;
  try {
    run = await joinPool(module, memory, tid);
  } catch (err) {
    port.post({ error: String(err?.message ?? err) });
    return;
  }
  port.post({ ready: true });
  run(); // blocks in the pool's loop until the pool stops
  port.close();
});
