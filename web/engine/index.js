// attnlab: the attention engine's JS API. One ES module for Node, pages and
// workers:
//   const engine = await loadEngine({ simd })
//   engine.attend({ queries, keys, values, score, params, normalize, temperature, mask, outputs })
//   engine.selfAttention({ x, wq, wk, wv, wo, heads, causal, score })
import { AttnlabError, paramError, shapeError, valueError } from './errors.js';
import { instantiate, simdSupported } from './wasm.js';
import { createSeq2Seq, loadSeq2Seq } from './seq2seq.js';
import { createVisionModel, loadVisionModel } from './vision.js';
import { LIMITS, options, toBoolean, toChoice, toInteger, toMatrix, toNumber, toVector } from './matrix.js';

export { AttnlabError } from './errors.js';
export { LIMITS } from './matrix.js';
export { SEQ2SEQ_LIMITS, Seq2SeqModel } from './seq2seq.js';
export { VISION_LIMITS, VisionModel, kendallTau } from './vision.js';

/** Scoring functions, with their codes in the core (AttnScore). */
export const SCORES = Object.freeze({ dot: 0, scaled_dot: 1, general: 2, additive: 3, cosine: 4, location: 5 });
/** Normalisations (AttnNorm). */
export const NORMALIZATIONS = Object.freeze({ softmax: 0, sum: 1 });
const SELF_SCORES = Object.freeze({ dot: 0, scaled_dot: 1, cosine: 4 });
const MASK_KINDS = Object.freeze({ none: 'none', causal: 'causal' });


const OUTPUTS = ['scores', 'weights', 'context'];

/** Which of scores / weights / context to return (default: all three). */
function toOutputs(value) {
  if (value === undefined) return new Set(OUTPUTS);
  if (!Array.isArray(value) || value.length === 0) {
    throw new AttnlabError('ERR_ARG', `outputs: expected a non-empty array of ${OUTPUTS.map((o) => `'${o}'`).join(', ')}`);
  }
  for (const o of value) {
    if (!OUTPUTS.includes(o)) {
      throw new AttnlabError('ERR_ARG', `outputs: unknown output ${typeof o === 'string' ? `'${o}'` : typeof o}; expected ${OUTPUTS.map((x) => `'${x}'`).join(', ')}`);
    }
  }
  return new Set(value);
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
    throw new AttnlabError('ERR_ARG', "mask: expected 'none', 'causal' or { keyLengths: [...] }");
  }
  const lengths = mask.keyLengths;
  if (!Array.isArray(lengths) && !ArrayBuffer.isView(lengths)) {
    throw shapeError('mask.keyLengths: expected an array with one key count per query');
  }
  if (lengths.length !== nQueries) {
    throw shapeError(`mask.keyLengths: has ${lengths.length} entries, but there are ${nQueries} queries`);
  }
  const keyLengths = new Int32Array(nQueries);
  for (let i = 0; i < nQueries; i++) {
    const L = lengths[i];
    if (!Number.isInteger(L) || L < 0 || L > nKeys) {
      throw valueError(`mask.keyLengths[${i}] is ${L}; it must be an integer within 0..${nKeys}`);
    }
    keyLengths[i] = L;
  }
  return { causal: toBoolean('mask.causal', mask.causal, false), keyLengths };
}

function expectShape(name, m, rows, cols, why) {
  if (m.rows !== rows || m.cols !== cols) {
    throw shapeError(`${name}: is ${m.rows} x ${m.cols}, but ${why} needs ${rows} x ${cols}`);
  }
}

/** Scoring parameters the score needs, shape-checked against the inputs. */
function toParams(score, params, q, k) {
  const p = params === undefined ? {} : options('params', params);
  const need = (key, why) => {
    if (p[key] === undefined || p[key] === null) throw paramError(`params.${key}: ${why}`);
  };
  const out = { W: null, Wq: null, Wk: null, v: null, hidden: 0, beta: toNumber('params.beta', p.beta, 1) };
  if (score === 'general') {
    need('W', `score 'general' needs W (${q.cols} x ${k.cols}): e = qᵀ W k`);
    out.W = toMatrix('params.W', p.W);
    expectShape('params.W', out.W, q.cols, k.cols, "score 'general' (queries' size x keys' size)");
  } else if (score === 'location') {
    need('W', `score 'location' needs W (${k.rows} x ${q.cols}): e_i = W q_i`);
    out.W = toMatrix('params.W', p.W);
    expectShape('params.W', out.W, k.rows, q.cols, "score 'location' (number of keys x queries' size)");
  } else if (score === 'additive') {
    need('Wq', `score 'additive' needs Wq (h x ${q.cols}): e = vᵀ tanh(Wq q + Wk k)`);
    need('Wk', `score 'additive' needs Wk (h x ${k.cols}): e = vᵀ tanh(Wq q + Wk k)`);
    need('v', "score 'additive' needs v (length h): e = vᵀ tanh(Wq q + Wk k)");
    out.Wq = toMatrix('params.Wq', p.Wq);
    out.hidden = out.Wq.rows;
    expectShape('params.Wq', out.Wq, out.hidden, q.cols, "score 'additive' (h x queries' size)");
    out.Wk = toMatrix('params.Wk', p.Wk);
    expectShape('params.Wk', out.Wk, out.hidden, k.cols, "score 'additive' (h = Wq's rows x keys' size)");
    out.v = toVector('params.v', p.v);
    if (out.v.length !== out.hidden) {
      throw shapeError(`params.v: has length ${out.v.length}, but Wq and Wk have h = ${out.hidden} rows`);
    }
  }
  return out;
}

/** One loaded build of the engine. Create with loadEngine(). */
export class Engine {
  constructor(heap) {
    this.heap = heap;
    /** true when the SIMD build is loaded, false for the scalar build. */
    this.simd = heap.exports.attnlab_simd() === 1;
    this.limits = LIMITS;
  }

  /**
   * An encoder-decoder with attention bound to a task ('copy', 'reverse',
   * 'sort', 'dates' or the user's 'pairs'), trained in C. See seq2seq.js.
   * @returns {Seq2SeqModel}
   */
  createSeq2Seq(options) {
    return createSeq2Seq(this.heap, options);
  }

  /** A model saved with model.save(). */
  loadSeq2Seq(bytes) {
    return loadSeq2Seq(this.heap, bytes);
  }

  /**
   * A CNN + attention reader of handwritten digits bound to an image task
   * ('centered', 'cluttered', 'multi'), trained in C. Loads the digit set
   * on first use, hence async. See vision.js.
   * @returns {Promise<VisionModel>}
   */
  createVisionModel(options) {
    return createVisionModel(this.heap, options);
  }

  /** An image model saved with model.save(). @returns {Promise<VisionModel>} */
  loadVisionModel(bytes) {
    return loadVisionModel(this.heap, bytes);
  }

  /** Bytes allocated in the WASM heap right now (for leak checks). */
  heapUsed() {
    return this.heap.exports.attnlab_heap_used();
  }

  /**
   * Attention of queries over keys: scores e_ij, weights α_ij, context z_i = Σ_j α_ij v_j.
   * `outputs` (default ['scores', 'weights', 'context']) picks what to return;
   * asking for the context alone skips materialising the n_q x n_k matrices.
   * @returns {{ scores: Matrix, weights: Matrix, context: Matrix }}
   */
  attend(args) {
    const a = options('attend', args);
    const score = a.score === undefined ? 'dot' : a.score;
    const scoreCode = toChoice('score', score, SCORES);
    const norm = toChoice('normalize', a.normalize, NORMALIZATIONS, 'softmax');
    const q = toMatrix('queries', a.queries);
    const k = toMatrix('keys', a.keys);
    const v = a.values === undefined ? k : toMatrix('values', a.values);
    if (v.rows !== k.rows) {
      throw shapeError(`values: has ${v.rows} rows, but there are ${k.rows} keys (one value per key)`);
    }
    const temperature = toNumber('temperature', a.temperature, 1);
    if (!(temperature > 0)) throw valueError(`temperature must be > 0 (got ${temperature})`);
    const mask = toMask(a.mask, q.rows, k.rows);
    const p = toParams(score, a.params, q, k);
    const outputs = toOutputs(a.outputs);
    const cells = q.rows * k.rows;
    if (cells > LIMITS.maxCells) {
      throw new AttnlabError('ERR_LIMIT', `queries x keys: ${q.rows} x ${k.rows} cells is past the limit of ${LIMITS.maxCells}`);
    }
    const heap = this.heap;
    const sizes = {
      q: q.data.length, k: k.data.length, v: v === k ? 0 : v.data.length,
      lengths: mask.keyLengths ? q.rows : 0,
      W: p.W ? p.W.data.length : 0, Wq: p.Wq ? p.Wq.data.length : 0, Wk: p.Wk ? p.Wk.data.length : 0,
      vv: p.v ? p.v.length : 0,
      scores: outputs.has('scores') ? cells : 0,
      weights: outputs.has('weights') ? cells : 0,
      context: q.rows * v.cols,
    };
    return heap.withBlock(sizes, (ptr) => {
      heap.writeF32(ptr.q, q.data);
      heap.writeF32(ptr.k, k.data);
      heap.writeF32(ptr.v, v.data);
      heap.writeI32(ptr.lengths, mask.keyLengths);
      heap.writeF32(ptr.W, p.W?.data);
      heap.writeF32(ptr.Wq, p.Wq?.data);
      heap.writeF32(ptr.Wk, p.Wk?.data);
      heap.writeF32(ptr.vv, p.v);
      const status = heap.exports.attnlab_attend(
        q.rows, k.rows, q.cols, k.cols, v.cols, p.hidden, scoreCode, norm, temperature, p.beta,
        mask.causal ? 1 : 0, ptr.lengths, ptr.q, ptr.k, v === k ? ptr.k : ptr.v,
        ptr.W, ptr.Wq, ptr.Wk, ptr.vv, ptr.scores, ptr.weights, ptr.context);
      heap.check(status, 'attend');
      const result = {};
      if (outputs.has('scores')) result.scores = heap.readMatrix(ptr.scores, q.rows, k.rows);
      if (outputs.has('weights')) result.weights = heap.readMatrix(ptr.weights, q.rows, k.rows);
      if (outputs.has('context')) result.context = heap.readMatrix(ptr.context, q.rows, v.cols);
      return result;
    });
  }

  /**
   * Self-attention: Q = X·Wq, K = X·Wk, V = X·Wv (omitted = identity), heads
   * over column blocks, context = heads concatenated, output = context·Wo.
   * @returns {{ q, k, v, scores: Matrix[], weights: Matrix[], context, output }}
   */
  selfAttention(args) {
    const a = options('selfAttention', args);
    const x = toMatrix('x', a.x);
    const wq = optionalMatrix('wq', a.wq);
    const wk = optionalMatrix('wk', a.wk);
    const wv = optionalMatrix('wv', a.wv);
    const wo = optionalMatrix('wo', a.wo);
    const score = a.score === undefined ? (wq || wk ? 'scaled_dot' : 'dot') : a.score;
    const scoreCode = toChoice('score', score, SELF_SCORES);
    const heads = toInteger('heads', a.heads, 1, 1, LIMITS.maxHeads);
    const causal = toBoolean('causal', a.causal, false);
    const n = x.rows, dIn = x.cols;
    for (const [name, w] of [['wq', wq], ['wk', wk], ['wv', wv]]) {
      if (w && w.rows !== dIn) throw shapeError(`${name}: has ${w.rows} rows, but x has ${dIn} columns (x·${name})`);
    }
    if (wq && wk && wk.cols !== wq.cols) throw shapeError(`wk: has ${wk.cols} columns, but wq has ${wq.cols}`);
    const dK = wq ? wq.cols : wk ? wk.cols : dIn;
    if (!(wq && wk) && dK !== dIn) {
      const [given, missing] = wq ? ['wq', 'wk'] : ['wk', 'wq'];
      throw shapeError(`${missing}: omitted, so it is the identity and ${given} must have ${dIn} columns (got ${dK})`);
    }
    const dV = wv ? wv.cols : dIn;
    if (wo && wo.rows !== dV) throw shapeError(`wo: has ${wo.rows} rows, but the context has ${dV} columns`);
    const dOut = wo ? wo.cols : dV;
    if (dK % heads) throw shapeError(`heads: ${heads} heads do not divide the query/key width ${dK}`);
    if (dV % heads) throw shapeError(`heads: ${heads} heads do not divide the value width ${dV}`);
    if (n * n > LIMITS.maxCells) {
      throw new AttnlabError('ERR_LIMIT', `x: ${n} tokens make ${n} x ${n} cells, past the limit of ${LIMITS.maxCells}`);
    }
    const heap = this.heap;
    const cells = n * n;
    const sizes = {
      x: x.data.length, wq: wq ? wq.data.length : 0, wk: wk ? wk.data.length : 0,
      wv: wv ? wv.data.length : 0, wo: wo ? wo.data.length : 0,
      q: n * dK, k: n * dK, v: n * dV, scores: heads * cells, weights: heads * cells,
      context: n * dV, output: n * dOut,
    };
    return heap.withBlock(sizes, (ptr) => {
      heap.writeF32(ptr.x, x.data);
      heap.writeF32(ptr.wq, wq?.data);
      heap.writeF32(ptr.wk, wk?.data);
      heap.writeF32(ptr.wv, wv?.data);
      heap.writeF32(ptr.wo, wo?.data);
      const status = heap.exports.attnlab_self_attention(
        n, dIn, dK, dV, dOut, heads, scoreCode, causal ? 1 : 0,
        ptr.x, ptr.wq, ptr.wk, ptr.wv, ptr.wo,
        ptr.q, ptr.k, ptr.v, ptr.scores, ptr.weights, ptr.context, ptr.output);
      heap.check(status, 'selfAttention');
      const perHead = (base) => Array.from({ length: heads }, (_, h) => heap.readMatrix(base + h * cells * 4, n, n));
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

/**
 * Loads the engine. `simd`: true for the SIMD128 build (the default where the
 * runtime supports it), false for the scalar build.
 * @param {{ simd?: boolean }} [opts]
 * @returns {Promise<Engine>}
 */
export async function loadEngine(opts = {}) {
  const o = options('loadEngine', opts);
  const supported = simdSupported();
  const simd = toBoolean('simd', o.simd, supported);
  if (simd && !supported) {
    throw new AttnlabError('ERR_UNSUPPORTED', 'loadEngine: this runtime has no WebAssembly SIMD; pass { simd: false }');
  }
  return new Engine(await instantiate(simd ? 'simd' : 'scalar'));
}
