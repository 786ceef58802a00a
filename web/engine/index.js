// attnlab: the attention engine's JS API. One ES module for Node, pages and
// workers:
//   const engine = await loadEngine({ simd, threads })
//   engine.attend({ queries, keys, values, score, params, normalize, temperature, mask, outputs, copy })
//   engine.selfAttention({ x, wq, wk, wv, wo, heads, causal, score })
//   engine.createSeq2Seq(options), await engine.createVisionModel(options): models (model.js)
//   await engine.loadModel(bytes): a saved model of whichever kind the file holds
//   await engine.loadModel(bytes, { config, tokenizer }): a Hugging Face checkpoint
//   readTokenizerJson(json): a tokenizer.json as the engine's tokenizer
// Every thrown value is an AttnlabError with a .code (errors.js guard).
import { AttnlabError, argError, describe, guard, guardAsync, paramError, shapeError, valueError } from './errors.js';
import { F32, I32, instantiate, simdSupported } from './wasm.js';
import { createSeq2Seq, loadSeq2Seq } from './seq2seq.js';
import { createVisionModel, loadVisionModel } from './vision.js';
import { createTransformer } from './transformer.js';
import { loadNames } from './names.js';
import { loadModel } from './load-model.js';
import { forgetModel, keptModels, openModel } from './hub.js';
import { LIMITS, NORMALIZATIONS, SCORES, adoptConstants } from './constants.js';
import { options, toBoolean, toChoice, toInteger, toList, toMatrix, toNumber, toVector } from './matrix.js';
import { AUTO_THREADS_MAX, hardwareThreads, threadsUnavailable } from './threads/support.js';
import { startPool } from './threads/pool.js';

export { AttnlabError } from './errors.js';
export { GPT2_LIMITS, LIMITS, NORMALIZATIONS, SCORES, SEQ2SEQ_LIMITS, VISION_LIMITS } from './constants.js';
export { MAX_ADDED_TOKENS, MAX_TOKENIZER_JSON, MAX_TOKENIZE_CHARS, MAX_VOCAB, readTokenizerJson } from './bpe.js';
export { Model } from './model.js';
export { Seq2SeqModel } from './seq2seq.js';
export { VisionModel, kendallTau } from './vision.js';
export { agreement, wilson } from './stats.js';
export { TransformerModel } from './transformer.js';
export { modelSize } from './hub-info.js';

const MASK_KINDS = Object.freeze({ none: 'none', causal: 'causal' });

const OUTPUTS = ['scores', 'weights', 'context'];

/** Which of scores / weights / context to return (default: all three). */
function toOutputs(value) {
  if (value === undefined) return new Set(OUTPUTS);
  const list = toList('outputs', value, 64);
  if (list === null || list.length === 0) {
    throw argError(`outputs: expected a non-empty array of ${OUTPUTS.map((o) => `'${o}'`).join(', ')}`);
  }
  for (const o of list) {
    if (!OUTPUTS.includes(o)) {
      throw argError(`outputs: unknown output ${describe(o)}; expected ${OUTPUTS.map((x) => `'${x}'`).join(', ')}`);
    }
  }
  return new Set(list);
}

function optionalMatrix(name, value) {
  return value === undefined || value === null ? null : toMatrix(name, value);
}

/** mask -> { causal, keyLengths: Int32Array | null } */
function toMask(mask, nQueries, nKeys) {
  if (mask === undefined || typeof mask === 'string') {
    const kind = toChoice('mask', mask, MASK_KINDS, 'none');
    return { causal: kind === 'causal', keyLengths: null };
  }
  if (mask === null || typeof mask !== 'object' || !('keyLengths' in mask)) {
    throw argError("mask: expected 'none', 'causal' or { keyLengths: [...] }");
  }
  const m = options('mask', mask, ['keyLengths', 'causal']);
  const lengths = toList('mask.keyLengths', m.keyLengths, LIMITS.maxTokens);
  if (lengths === null) throw shapeError('mask.keyLengths: expected an array with one key count per query');
  if (lengths.length !== nQueries) {
    throw shapeError(`mask.keyLengths: has ${lengths.length} entries, but there are ${nQueries} queries`);
  }
  const keyLengths = new Int32Array(nQueries);
  for (let i = 0; i < nQueries; i++) {
    const L = lengths[i];
    // The range 0..nKeys is the core's check; here only what Int32Array would wrap or truncate.
    if (!Number.isInteger(L) || Math.abs(L) > 2 ** 31 - 1) {
      throw valueError(`mask.keyLengths[${i}] is ${describe(L)}; it must be an integer within 0..${nKeys}`);
    }
    keyLengths[i] = L;
  }
  return { causal: toBoolean('mask.causal', m.causal, false), keyLengths };
}

function expectShape(name, m, rows, cols, why) {
  if (m.rows !== rows || m.cols !== cols) {
    throw shapeError(`${name}: is ${m.rows} x ${m.cols}, but ${why} needs ${rows} x ${cols}`);
  }
}

/**
 * Scoring parameters the score needs, each shape-checked against the inputs
 * (the core sees only sizes, so a matrix's own shape is checked here). A
 * missing parameter stays null: the core reports it (ERR_PARAM).
 */
function toParams(score, params, q, k) {
  const p = params === undefined ? {} : options('params', params, ['W', 'Wq', 'Wk', 'v', 'beta']);
  const given = (key) => p[key] !== undefined && p[key] !== null;
  const out = { W: null, Wq: null, Wk: null, v: null, hidden: 0, beta: toNumber('params.beta', p.beta, 1) };
  if (score === 'general' && given('W')) {
    out.W = toMatrix('params.W', p.W);
    expectShape('params.W', out.W, q.cols, k.cols, "score 'general' (queries' size x keys' size)");
  } else if (score === 'location' && given('W')) {
    out.W = toMatrix('params.W', p.W);
    expectShape('params.W', out.W, k.rows, q.cols, "score 'location' (number of keys x queries' size)");
  } else if (score === 'additive') {
    // With none of the three, h is unknown and the core would report h = 0 as a shape.
    if (!given('Wq') && !given('Wk') && !given('v')) {
      throw paramError("params.Wq: score 'additive' needs Wq (h x d_q), Wk (h x d_k) and v (length h): e = vᵀ tanh(Wq q + Wk k)");
    }
    if (given('Wq')) {
      out.Wq = toMatrix('params.Wq', p.Wq);
      out.hidden = out.Wq.rows;
      expectShape('params.Wq', out.Wq, out.hidden, q.cols, "score 'additive' (h x queries' size)");
    }
    if (given('Wk')) {
      out.Wk = toMatrix('params.Wk', p.Wk);
      out.hidden ||= out.Wk.rows;
      expectShape('params.Wk', out.Wk, out.hidden, k.cols, "score 'additive' (h = Wq's rows x keys' size)");
    }
    if (given('v')) {
      out.v = toVector('params.v', p.v);
      out.hidden ||= out.v.length;
      if (out.v.length !== out.hidden) {
        throw shapeError(`params.v: has length ${out.v.length}, but Wq and Wk have h = ${out.hidden} rows`);
      }
    }
  }
  return out;
}

/** One loaded build of the engine. Create with loadEngine(). */
export class Engine {
  constructor(heap, { threads = 1, threadsReason = null, pool = null } = {}) {
    this.heap = heap;
    /** true when a SIMD build is loaded, false for the scalar build. */
    this.simd = heap.call.simd() === 1;
    this.limits = LIMITS;
    /** Threads the engine's calls may use (1: the single-thread build). */
    this.threads = threads;
    /** Why the engine runs on fewer threads than asked, or null. */
    this.threadsReason = threadsReason;
    this.#pool = pool;
  }

  #pool;
  /**
   * Stops the engine's worker threads (Node then exits without waiting for
   * them); the engine keeps working, on one thread. Safe to call twice.
   */
  destroy() {
    if (!this.#pool) return;
    this.#pool.stop();
    this.#pool = null;
    this.threads = 1;
    this.threadsReason = 'the engine was destroyed';
  }

  /**
   * Calls whose work (multiply-adds) is below `work` run on one thread: waking
   * the workers costs more than a small call. The default suits most calls
   * (see the README, Threads); 0 splits every call.
   */
  setParallelMinWork(work) {
    return guard('setParallelMinWork', () => {
      this.heap.call.pool_min_work({ work: toNumber('work', work, undefined) ?? 0 });
    });
  }

  /**
   * An encoder-decoder with attention bound to a task ('copy', 'reverse',
   * 'sort', 'dates' or the user's 'pairs'), trained in C. See seq2seq.js.
   * @returns {Seq2SeqModel}
   */
  createSeq2Seq(options) {
    return guard('createSeq2Seq', () => createSeq2Seq(this.heap, options));
  }

  /** A seq2seq model saved with model.save(). */
  loadSeq2Seq(bytes) {
    return guard('loadSeq2Seq', () => loadSeq2Seq(this.heap, bytes));
  }

  /**
   * A decoder-only transformer bound to a task ('induction', 'copy',
   * 'reverse', 'sort', 'modular', 'dates', 'names' or the user's 'text'),
   * trained in C; every head can be watched and ablated. 'names' loads its
   * list on first use (names.js). See transformer.js.
   * @returns {Promise<TransformerModel>}
   */
  async createTransformer(options) {
    return guardAsync('createTransformer', async () => {
      const names = options?.task === 'names' ? await loadNames() : undefined;
      return createTransformer(this.heap, options, names);
    });
  }

  /**
   * A CNN + attention reader of handwritten digits bound to an image task
   * ('centered', 'cluttered', 'multi'), trained in C. Loads the digit set
   * on first use, hence async. See vision.js.
   * @returns {Promise<VisionModel>}
   */
  createVisionModel(options) {
    return guardAsync('createVisionModel', () => createVisionModel(this.heap, options));
  }

  /** An image model saved with model.save(). @returns {Promise<VisionModel>} */
  loadVisionModel(bytes) {
    return guardAsync('loadVisionModel', () => loadVisionModel(this.heap, bytes));
  }

  /**
   * The model a saved file holds, whichever its kind: a Seq2SeqModel, a
   * VisionModel or a TransformerModel (model.kind says which), its format tag
   * picking the loader; or a Hugging Face checkpoint (GPT-2 or GPT-NeoX), a
   * model.safetensors with its config.json and optionally its tokenizer.json:
   * loadModel(bytes, { config, tokenizer }), a TransformerModel whose
   * config.architecture is 'gpt2' or 'gpt_neox' (see gpt2.js).
   * @returns {Promise<Seq2SeqModel | VisionModel | TransformerModel>}
   */
  loadModel(bytes, options) {
    return guardAsync('loadModel', () => loadModel(this.heap, bytes, options));
  }

  /**
   * A GPT-2 or GPT-NeoX checkpoint opened from a hub by its repo
   * ('openai-community/gpt2', 'EleutherAI/pythia-70m'): its config.json,
   * model.safetensors (streamed into the engine as it arrives, its size and
   * SHA-256 checked) and tokenizer.json where it has one; the model
   * loadModel gives for the same files, with model.source saying where it
   * came from. Options: hub, revision, onProgress, signal, cache (see hub.js
   * and docs/api.md).
   * @returns {Promise<TransformerModel>}
   */
  openModel(repo, options) {
    return guardAsync('openModel', () => openModel(this.heap, repo, options));
  }

  /** The models openModel kept (options: { cache }): [{ repo, revision, commit, files, bytes }]. */
  keptModels(options) {
    return guardAsync('keptModels', () => keptModels(options));
  }

  /** Removes a kept model, one revision or (revision undefined) all; resolves to the revisions removed. */
  forgetModel(repo, revision, options) {
    return guardAsync('forgetModel', () => forgetModel(repo, revision, options));
  }

  /** Bytes allocated in the WASM heap right now (for leak checks). */
  heapUsed() {
    return this.heap.call.heap_used();
  }

  /**
   * Attention of queries over keys: scores e_ij, weights α_ij, context z_i = Σ_j α_ij v_j.
   * `outputs` (default ['scores', 'weights', 'context']) picks what to return;
   * asking for the context alone skips materialising the n_q x n_k matrices.
   * `copy: false` returns the results as views of the engine's memory instead
   * of copies: no copy and no garbage per call (8 MB at n = 1024), but valid
   * only until the engine's next call (the next such call writes over them; a
   * call that grows a single-thread build's memory empties them).
   * @returns {{ scores: Matrix, weights: Matrix, context: Matrix }}
   */
  attend(args) {
    return guard('attend', () => this.#attend(args));
  }

  #attend(args) {
    const a = options('attend', args,
      ['queries', 'keys', 'values', 'score', 'params', 'normalize', 'temperature', 'mask', 'outputs', 'copy']);
    const score = a.score === undefined ? 'dot' : a.score;
    const scoreCode = toChoice('score', score, SCORES);
    const norm = toChoice('normalize', a.normalize, NORMALIZATIONS, 'softmax');
    // attn_check in the core checks that queries, keys and values are finite
    const q = toMatrix('queries', a.queries, true);
    const k = toMatrix('keys', a.keys, true);
    const v = a.values === undefined ? k : toMatrix('values', a.values, true);
    if (v.rows !== k.rows) {
      throw shapeError(`values: has ${v.rows} rows, but there are ${k.rows} keys (one value per key)`);
    }
    const temperature = toNumber('temperature', a.temperature, 1);
    const mask = toMask(a.mask, q.rows, k.rows);
    const p = toParams(score, a.params, q, k);
    const outputs = toOutputs(a.outputs);
    const cells = q.rows * k.rows;
    // The core checks the cell limit too; checked first here so no block is allocated past it.
    if (cells > LIMITS.maxCells) {
      throw new AttnlabError('ERR_LIMIT', `queries x keys: ${q.rows} x ${k.rows} cells is past the limit of ${LIMITS.maxCells}`);
    }
    const copy = toBoolean('copy', a.copy, true);
    const heap = this.heap;
    const out = {
      scores: outputs.has('scores') ? F32 * cells : 0,
      weights: outputs.has('weights') ? F32 * cells : 0,
      context: F32 * q.rows * v.cols,
    };
    const sizes = {
      q: F32 * q.data.length, k: F32 * k.data.length, v: v === k ? 0 : F32 * v.data.length,
      lengths: mask.keyLengths ? I32 * q.rows : 0,
      W: p.W ? F32 * p.W.data.length : 0, Wq: p.Wq ? F32 * p.Wq.data.length : 0, Wk: p.Wk ? F32 * p.Wk.data.length : 0,
      vv: p.v ? F32 * p.v.length : 0,
      ...(copy ? out : {}),
    };
    const run = (viewBase) => heap.withBlock(sizes, (ptr) => {
      if (!copy) {
        ptr.scores = out.scores ? viewBase : 0;
        ptr.weights = out.weights ? viewBase + out.scores : 0;
        ptr.context = viewBase + out.scores + out.weights;
      }
      heap.writeF32(ptr.q, q.data);
      heap.writeF32(ptr.k, k.data);
      heap.writeF32(ptr.v, v.data);
      heap.writeI32(ptr.lengths, mask.keyLengths);
      heap.writeF32(ptr.W, p.W?.data);
      heap.writeF32(ptr.Wq, p.Wq?.data);
      heap.writeF32(ptr.Wk, p.Wk?.data);
      heap.writeF32(ptr.vv, p.v);
      heap.call.attend({
        nQ: q.rows, nK: k.rows, dQ: q.cols, dK: k.cols, dV: v.cols, hidden: p.hidden, score: scoreCode, norm,
        temperature, beta: p.beta, causal: mask.causal, keyLengths: ptr.lengths,
        q: ptr.q, k: ptr.k, v: v === k ? ptr.k : ptr.v, W: ptr.W, Wq: ptr.Wq, Wk: ptr.Wk, vv: ptr.vv,
        scores: ptr.scores, weights: ptr.weights, context: ptr.context,
      });
      const read = copy ? (at, rows, cols) => heap.readMatrix(at, rows, cols) : (at, rows, cols) => heap.viewMatrix(at, rows, cols);
      const result = {};
      if (outputs.has('scores')) result.scores = read(ptr.scores, q.rows, k.rows);
      if (outputs.has('weights')) result.weights = read(ptr.weights, q.rows, k.rows);
      if (outputs.has('context')) result.context = read(ptr.context, q.rows, v.cols);
      return result;
    });
    // Views: the outputs go to the engine's views block, laid out after the inputs' block is known.
    return copy ? run(0) : heap.withViews(out.scores + out.weights + out.context, run);
  }

  /**
   * Self-attention: Q = X·Wq, K = X·Wk, V = X·Wv (omitted = identity), heads
   * over column blocks, context = heads concatenated, output = context·Wo.
   * @returns {{ q, k, v, scores: Matrix[], weights: Matrix[], context, output }}
   */
  selfAttention(args) {
    return guard('selfAttention', () => this.#selfAttention(args));
  }

  #selfAttention(args) {
    const a = options('selfAttention', args, ['x', 'wq', 'wk', 'wv', 'wo', 'score', 'heads', 'causal']);
    const x = toMatrix('x', a.x);
    const wq = optionalMatrix('wq', a.wq);
    const wk = optionalMatrix('wk', a.wk);
    const wv = optionalMatrix('wv', a.wv);
    const wo = optionalMatrix('wo', a.wo);
    const score = a.score === undefined ? (wq || wk ? 'scaled_dot' : 'dot') : a.score;
    const scoreCode = toChoice('score', score, SCORES);
    const heads = toInteger('heads', a.heads, 1);
    const causal = toBoolean('causal', a.causal, false);
    const n = x.rows, dIn = x.cols;
    // The core sees widths, not the matrices: whether each matrix's own shape
    // fits is checked here, where its argument has a name.
    for (const [name, w] of [['wq', wq], ['wk', wk], ['wv', wv]]) {
      if (w && w.rows !== dIn) throw shapeError(`${name}: has ${w.rows} rows, but x has ${dIn} columns (x·${name})`);
    }
    if (wq && wk && wk.cols !== wq.cols) throw shapeError(`wk: has ${wk.cols} columns, but wq has ${wq.cols}`);
    const dK = wq ? wq.cols : wk ? wk.cols : dIn;
    const dV = wv ? wv.cols : dIn;
    if (wo && wo.rows !== dV) throw shapeError(`wo: has ${wo.rows} rows, but the context has ${dV} columns`);
    const dOut = wo ? wo.cols : dV;
    const cells = n * n;
    if (cells > LIMITS.maxCells) {
      throw new AttnlabError('ERR_LIMIT', `x: ${n} tokens make ${n} x ${n} cells, past the limit of ${LIMITS.maxCells}`);
    }
    // heads must divide dK and dV (the core checks); the block is sized for any count the core accepts.
    const perHeadCells = heads >= 1 && heads <= LIMITS.maxHeads ? heads * cells : 0;
    const heap = this.heap;
    const sizes = {
      x: F32 * x.data.length, wq: wq ? F32 * wq.data.length : 0, wk: wk ? F32 * wk.data.length : 0,
      wv: wv ? F32 * wv.data.length : 0, wo: wo ? F32 * wo.data.length : 0,
      q: F32 * n * dK, k: F32 * n * dK, v: F32 * n * dV, scores: F32 * perHeadCells, weights: F32 * perHeadCells,
      context: F32 * n * dV, output: F32 * n * dOut,
    };
    return heap.withBlock(sizes, (ptr) => {
      heap.writeF32(ptr.x, x.data);
      heap.writeF32(ptr.wq, wq?.data);
      heap.writeF32(ptr.wk, wk?.data);
      heap.writeF32(ptr.wv, wv?.data);
      heap.writeF32(ptr.wo, wo?.data);
      heap.call.self_attention({
        n, dIn, dK, dV, dOut, heads, score: scoreCode, causal,
        x: ptr.x, wq: ptr.wq, wk: ptr.wk, wv: ptr.wv, wo: ptr.wo,
        q: ptr.q, k: ptr.k, v: ptr.v, scores: ptr.scores, weights: ptr.weights, context: ptr.context, output: ptr.output,
      });
      const perHead = (base) => Array.from({ length: heads }, (_, h) => heap.readMatrix(base + h * F32 * cells, n, n));
      return {
        q: heap.readMatrix(ptr.q, n, dK),
        k: heap.readMatrix(ptr.k, n, dK),
        v: heap.readMatrix(ptr.v, n, dV),
        scores: perHead(ptr.scores),
        weights: perHead(ptr.weights),
        context: heap.readMatrix(ptr.context, n, dV),
        output: heap.readMatrix(ptr.output, n, dOut),
      };
    });
  }
}

/** The threads option: a count (1 or more) or 'auto' (the default). */
function toThreads(value) {
  if (value === undefined || value === 'auto') return 'auto';
  if (typeof value === 'string') throw argError(`threads: unknown value '${value}'; expected a number or 'auto'`);
  return toInteger('threads', value, 1, 1);
}

/**
 * The threaded build with a running pool of `threads`, or { reason } saying
 * why not (the caller then loads a single-thread build).
 */
async function loadThreaded(threads, simd) {
  if (threads === 1) return { reason: 'one thread was asked for' };
  if (!simd) return { reason: 'the threaded build needs WebAssembly SIMD; the scalar build runs on one thread' };
  const reason = threadsUnavailable();
  if (reason) return { reason };
  let heap;
  try {
    heap = await instantiate('simd-mt');
  } catch (err) {
    return { reason: `the threaded build did not load (${err?.message ?? err})` };
  }
  const max = heap.call.pool_max_threads();
  if (threads > max) throw new AttnlabError('ERR_LIMIT', `loadEngine: threads: ${threads} is past the limit of ${max}`);
  try {
    return { heap, pool: await startPool(heap, threads) };
  } catch (err) {
    return { reason: err.message };
  }
}

/**
 * Loads the engine. `simd`: true for the SIMD128 build (the default where the
 * runtime supports it), false for the scalar build. `threads`: a number, or
 * 'auto' (the default: the hardware's threads, at most 8); more than one
 * loads the threaded build with a pool of workers where the runtime allows
 * (SharedArrayBuffer, WebAssembly threads, a cross-origin isolated page),
 * else a single-thread build: engine.threads says how many run,
 * engine.threadsReason why fewer than asked. The first load also fills
 * LIMITS, SCORES, NORMALIZATIONS, SEQ2SEQ_LIMITS, VISION_LIMITS and GPT2_LIMITS from the core.
 * @param {{ simd?: boolean, threads?: number | 'auto' }} [opts]
 * @returns {Promise<Engine>}
 */
export async function loadEngine(opts = {}) {
  const { simd, threadsOption } = guard('loadEngine', () => {
    const o = options('loadEngine', opts, ['simd', 'threads']);
    const supported = simdSupported();
    const wanted = toBoolean('simd', o.simd, supported);
    if (wanted && !supported) {
      throw new AttnlabError('ERR_UNSUPPORTED', 'loadEngine: this runtime has no WebAssembly SIMD; pass { simd: false }');
    }
    return { simd: wanted, threadsOption: toThreads(o.threads) };
  });
  const threads = threadsOption === 'auto' ? Math.min(await hardwareThreads(), AUTO_THREADS_MAX) : threadsOption;
  const threaded = await loadThreaded(threads, simd);
  if (threaded.heap) {
    adoptConstants(threaded.heap.constants);
    return new Engine(threaded.heap, { threads, pool: threaded.pool });
  }
  let heap;
  try {
    heap = await instantiate(simd ? 'simd' : 'scalar');
  } catch (err) {
    if (err instanceof AttnlabError) throw err;
    throw new AttnlabError('ERR_LOAD', `loadEngine: cannot load the ${simd ? 'SIMD' : 'scalar'} build (${err?.message ?? err})`);
  }
  adoptConstants(heap.constants);
  return new Engine(heap, { threads: 1, threadsReason: threaded.reason });
}

