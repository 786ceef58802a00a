// The training lab's worker: owns the engine and the seq2seq models so that
// training never blocks the page. Protocol (STYLE.md): the page posts
// { id, action, ...args } and gets { id, result } or { id, error: { message, code } }.
// The same file runs as a browser module worker and under Node's worker_threads.
import { loadEngine } from '../engine/index.js';

const port = typeof self === 'object' && typeof self.postMessage === 'function' && typeof window === 'undefined'
  ? self
  : (await import('node:worker_threads')).parentPort;

let engine = null;
const models = new Map(); // handle -> Seq2SeqModel
let nextHandle = 1;

class WorkerError extends Error {
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

function model(args) {
  const m = models.get(args.model);
  if (!m) throw new WorkerError('ERR_ARG', `model: no model ${JSON.stringify(args.model)} in this worker (destroyed or never created)`);
  return m;
}

function ready() {
  if (!engine) throw new WorkerError('ERR_ARG', "the engine is not loaded yet: send 'init' first");
  return engine;
}

function adopt(m) {
  const handle = nextHandle++;
  models.set(handle, m);
  return { model: handle, config: m.config, inputAlphabet: m.inputAlphabet, outputAlphabet: m.outputAlphabet, steps: m.steps };
}

const ACTIONS = {
  async init({ simd }) {
    engine ??= await loadEngine(simd === undefined ? {} : { simd });
    return { simd: engine.simd };
  },
  create: ({ options }) => adopt(ready().createSeq2Seq(options)),
  load: ({ bytes }) => adopt(ready().loadSeq2Seq(bytes)),
  train: (a) => model(a).train(a.options ?? {}),
  evaluate: (a) => model(a).evaluate(a.options ?? {}),
  translate: (a) => model(a).translate(a.text, a.options ?? {}),
  examples: (a) => model(a).examples(a.options ?? {}),
  save: (a) => model(a).save(),
  destroy(a) {
    const m = models.get(a.model);
    if (m) m.destroy();
    models.delete(a.model);
    return true;
  },
  heapUsed: () => ready().heapUsed(),
};

async function handle(data) {
  const id = data && typeof data === 'object' ? data.id : undefined;
  try {
    if (!data || typeof data !== 'object' || typeof data.action !== 'string' || !Object.hasOwn(ACTIONS, data.action)) {
      throw new WorkerError('ERR_ARG', `action: unknown action ${JSON.stringify(data?.action)}; expected one of ${Object.keys(ACTIONS).join(', ')}`);
    }
    const result = await ACTIONS[data.action](data);
    port.postMessage({ id, result });
  } catch (err) {
    port.postMessage({ id, error: { message: String(err?.message ?? err), code: err?.code ?? 'ERR_INTERNAL' } });
  }
}

// Messages are handled one at a time, in order.
let queue = Promise.resolve();
const onMessage = (data) => {
  queue = queue.then(() => handle(data));
};
if (port === globalThis.self) port.onmessage = (event) => onMessage(event.data);
else port.on('message', onMessage);
