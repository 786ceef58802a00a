// The training lab's worker: owns the engine and its models (seq2seq and image
// models, one table of handles) so that training never blocks the page. Protocol (STYLE.md): the page posts
// { id, action, ...args } and gets { id, result } or { id, error: { message, code } }.
// The same file runs as a browser module worker and under Node's worker_threads.
import { AttnlabError, loadEngine } from '../engine/index.js';
import { describe } from '../engine/errors.js';
import { transformerConstants } from '../engine/transformer.js';
import { SEQ2SEQ_LIMITS, TRANSFORMER_LIMITS, VISION_LIMITS } from '../engine/constants.js';

const port = typeof self === 'object' && typeof self.postMessage === 'function' && typeof window === 'undefined'
  ? self
  : (await import('node:worker_threads')).parentPort;

let engine = null;
const models = new Map(); // handle -> Seq2SeqModel | VisionModel | TransformerModel (made here or a checkpoint)
let nextHandle = 1;

function model(args) {
  const m = models.get(args.model);
  if (!m) throw new AttnlabError('ERR_ARG', `model: no model ${describe(args.model)} in this worker (destroyed or never created)`);
  return m;
}

/** The model's method `name`, bound; a kind without it (translate on a transformer) is an ERR_ARG naming both. */
function method(args, name) {
  const m = model(args);
  if (typeof m[name] !== 'function') {
    throw new AttnlabError('ERR_ARG', `${name}: a ${m.kind} model has no ${name}`);
  }
  return (...rest) => m[name](...rest);
}

function ready() {
  if (!engine) throw new AttnlabError('ERR_ARG', "the engine is not loaded yet: send 'init' first");
  return engine;
}

/**
 * A checkpoint's vocabulary (GPT-2's 50,257 texts) goes to the page as one
 * string and where each text ends (lab-client.js makes the list again):
 * structured clone made the 50,257 strings on the page's thread in some 40 ms,
 * a long task; the one string and the ends take well under one.
 */
const PACK_VOCABULARY = 1024;
function sendable(config) {
  const v = config?.vocabulary;
  if (!Array.isArray(v) || v.length <= PACK_VOCABULARY) return config;
  const ends = new Uint32Array(v.length);
  let at = 0;
  for (let i = 0; i < v.length; i++) ends[i] = at += v[i].length;
  return { ...config, vocabulary: { packed: 'vocabulary', text: v.join(''), ends } };
}

function adopt(m) {
  const handle = nextHandle++;
  models.set(handle, m);
  const { kind = 'transformer', steps } = m;
  const config = sendable(m.config);
  if (kind !== 'seq2seq') return { model: handle, kind, config, steps };
  return { model: handle, kind, config, inputAlphabet: m.inputAlphabet, outputAlphabet: m.outputAlphabet, steps };
}

/**
 * Everything the lab shows for one image: the answer, each step's attention
 * (and hard mode's cell), its saliency over the pixels, and how far the two
 * agree over the grid's cells (stats.js agreement, and Kendall's tau).
 */
function readImage(m, image) {
  if (typeof m.predict !== 'function') throw new AttnlabError('ERR_ARG', `readImage: a ${m.kind} model reads text, not images`);
  const p = m.predict(image);
  // the retina has no attention map to compare (its steps carry boxes, not weights)
  const compared = m.config.sensor === 'retina' ? null : m.compareAttention(image);
  const steps = p.steps.map((s, t) => {
    const saliency = m.saliency(image, { step: t });
    for (let i = 0; i < saliency.data.length; i++) saliency.data[i] = Math.abs(saliency.data[i]);
    return { ...s, tau: compared?.steps[t]?.tau ?? NaN, agreement: compared?.steps[t]?.agreement ?? null, saliency };
  });
  return { output: p.output, tokens: p.tokens, canvas: p.canvas, steps };
}

/**
 * A checkpoint opened from a hub (engine.openModel) into this worker. `port`
 * (a MessagePort, optional) carries what the page shows while it runs:
 * { progress } out, as onProgress hears it, and { cancel: true } in, which
 * aborts the open. The port is read apart from the one-at-a-time queue of
 * actions, so a cancel arrives while the fetch is under way. `hub` is an
 * absolute URL: a relative one would be read against this worker's script.
 */
async function openFromHub(repo, { hub, revision }, port) {
  const controller = new AbortController();
  const onPort = (data) => {
    if (data?.cancel === true) controller.abort();
  };
  if (port && typeof port.on === 'function') port.on('message', onPort);
  else if (port) {
    port.onmessage = (event) => onPort(event.data);
  }
  const tell = (message) => {
    try {
      port?.postMessage(message);
    } catch {
      // a page gone: nothing to tell
    }
  };
  try {
    const m = await ready().openModel(repo, {
      ...(hub === undefined ? {} : { hub }), ...(revision === undefined ? {} : { revision }),
      signal: controller.signal, onProgress: (progress) => tell({ progress }),
    });
    return { ...adopt(m), source: m.source };
  } finally {
    port?.close();
  }
}

const ACTIONS = {
  async init({ simd }) {
    engine ??= await loadEngine(simd === undefined ? {} : { simd });
    // the transformer's names (tasks, positions, scores) and every engine's limits: the lab's controls and link bounds
    const K = transformerConstants(engine.heap);
    const transformer = { tasks: Object.keys(K.tasks), positional: Object.keys(K.positional), scores: Object.keys(K.scores), limits: K.limits };
    return { simd: engine.simd, threads: engine.threads, threadsReason: engine.threadsReason, transformer,
      limits: { seq2seq: { ...SEQ2SEQ_LIMITS }, vision: { ...VISION_LIMITS }, transformer: { ...TRANSFORMER_LIMITS } } };
  },
  createTransformer: async ({ options }) => adopt(await ready().createTransformer(options)),
  create: ({ options }) => adopt(ready().createSeq2Seq(options)),
  createVision: async ({ options }) => adopt(await ready().createVisionModel(options)),
  // a checkpoint comes with its config.json and, when it has its own, its tokenizer.json (each text or object)
  load: async ({ bytes, config, tokenizer }) => adopt(await ready().loadModel(bytes,
    ...(config === undefined ? [] : [tokenizer === undefined ? { config } : { config, tokenizer }]))),
  openModel: ({ repo, hub, revision, port }) => openFromHub(repo, { hub, revision }, port),
  train: (a) => method(a, 'train')(a.options ?? {}),
  undoTrain: (a) => method(a, 'undoTrain')(),
  evaluate: (a) => method(a, 'evaluate')(a.options ?? {}),
  translate: (a) => method(a, 'translate')(a.text, a.options ?? {}),
  examples: (a) => method(a, 'examples')(a.options ?? {}),
  readImage: (a) => readImage(model(a), a.image),
  inspect: (a) => method(a, 'inspect')(a.input, a.options ?? {}),
  generate: (a) => method(a, 'generate')(a.prompt, a.options ?? {}),
  tokenize: (a) => method(a, 'tokenize')(a.text),
  headScores: (a) => method(a, 'headScores')(a.options ?? {}),
  save: (a) => method(a, 'save')(),
  // a transformer made here as a Hugging Face checkpoint: { safetensors, config, vocabulary }
  exportCheckpoint: (a) => method(a, 'exportCheckpoint')(),
  // circuits: activation patching, composition and copying scores, and the logit attribution where the engine has it
  patch: (a) => method(a, 'patch')(a.options),
  compositionScores: (a) => method(a, 'compositionScores')(),
  copyingScores: (a) => method(a, 'copyingScores')(),
  logitAttribution: (a) => method(a, 'logitAttribution')(a.options),
  // the methods of the model's kind the worker can call: the page shows what this engine has, and no more
  methods: (a) => ['patch', 'compositionScores', 'copyingScores', 'logitAttribution'].filter((name) => typeof model(a)[name] === 'function'),
  destroy(a) {
    const m = models.get(a.model);
    if (m) m.destroy();
    models.delete(a.model);
    return true;
  },
  heapUsed: () => ready().heapUsed(),
};

/** { message, code } of anything thrown; building it never throws. */
function errorReply(err) {
  let message, code;
  try {
    message = typeof err?.message === 'string' ? err.message : describe(err);
    code = typeof err?.code === 'string' && err.code.startsWith('ERR_') ? err.code : 'ERR_INTERNAL';
  } catch {
    message = 'an unreadable error';
    code = 'ERR_INTERNAL';
  }
  return { message, code };
}

/** Posts a reply; a result that cannot be cloned becomes an error reply. */
function reply(id, body) {
  try {
    port.postMessage({ id, ...body });
  } catch (err) {
    const { message } = errorReply(err);
    port.postMessage({ id, error: { message: `the reply could not be sent (${message})`, code: 'ERR_INTERNAL' } });
  }
}

async function handle(data) {
  let id;
  try {
    id = data !== null && typeof data === 'object' ? data.id : undefined;
    const action = data !== null && typeof data === 'object' ? data.action : undefined;
    if (typeof action !== 'string' || !Object.hasOwn(ACTIONS, action)) {
      throw new AttnlabError('ERR_ARG', `action: unknown action ${describe(action)}; expected one of ${Object.keys(ACTIONS).join(', ')}`);
    }
    reply(id, { result: await ACTIONS[action](data) });
  } catch (err) {
    reply(id, { error: errorReply(err) });
  }
}

// Messages are handled one at a time, in order.
let queue = Promise.resolve();
const onMessage = (data) => {
  queue = queue.then(() => handle(data));
};
if (port === globalThis.self) port.onmessage = (event) => onMessage(event.data);
else port.on('message', onMessage);
