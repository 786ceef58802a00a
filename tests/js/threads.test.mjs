// Threads: loadEngine({ threads }) with a pool of workers on one shared WASM
// memory. One, two and three threads give the same attention (row blocks
// split across threads; every size odd so the blocks split unevenly), the
// same backward for every score and mask and the same self-attention forward
// and backward (checked against finite differences too; the same thread
// count gives the same bits twice), errors
// name what one thread names and leave the engine usable, the options are
// checked, the engine falls back to one thread (saying why) where threads
// cannot run, and destroy() stops the workers so Node exits.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { NORMALIZATIONS, SCORES, loadEngine } from '../../web/engine/index.js';
import { simdSupported } from '../../web/engine/wasm.js';
import { mulberry32 } from './builds.mjs';
import { gpt2Checkpoint, TINY } from '../lib/gpt2-checkpoint.mjs';

const run = promisify(execFile);
const ENGINE = new URL('../../web/engine/index.js', import.meta.url).href;
const skip = simdSupported() ? false : 'this runtime has no WebAssembly SIMD (the threaded build needs it)';

function random(rows, cols, seed, scale = 1) {
  const r = mulberry32(seed);
  return { rows, cols, data: Float32Array.from({ length: rows * cols }, () => (r() * 2 - 1) * scale) };
}

/** Equal within float tolerance (the split changes no sum's order, so it is exact in practice). */
function assertSame(got, want, what) {
  assert.equal(got.rows, want.rows, `${what}.rows`);
  assert.equal(got.cols, want.cols, `${what}.cols`);
  for (let i = 0; i < want.data.length; i++) {
    const g = got.data[i], w = want.data[i];
    if (w === -Infinity) {
      assert.equal(g, w, `${what}[${i}]: masked cell`);
      continue;
    }
    assert.ok(Math.abs(g - w) <= 1e-6 + 1e-5 * Math.abs(w), `${what}[${i}]: ${g} vs one thread's ${w}`);
  }
}

const zeros = (n) => new Float32Array(n);
const positive = (m) => ({ ...m, data: m.data.map(Math.abs) });
const bytes = (m) => (m ? 4 * m.data.length : 0);

/**
 * The backward of attention through attnlab_attend_backward (src/wasm/parallel_exports.c):
 * the forward, then the gradients of L = sum(dcontext * context) + sum(dweights * weights).
 * Returns { dq, dk, dv, W, Wq, Wk, v, beta } (the parameters' only for the score's own).
 */
function attendGrads(engine, a) {
  const { heap } = engine;
  const { q, k, v, params: P = {}, dcontext, dweights = null, keyLengths = null } = a;
  const [nq, nk] = [q.rows, k.rows];
  const sizes = {
    q: bytes(q), k: bytes(k), v: bytes(v), W: bytes(P.W), Wq: bytes(P.Wq), Wk: bytes(P.Wk), vv: bytes(P.v),
    lengths: keyLengths ? 4 * nq : 0, dcontext: bytes(dcontext), dweights: bytes(dweights),
    gq: bytes(q), gk: bytes(k), gv: bytes(v), gW: bytes(P.W), gWq: bytes(P.Wq), gWk: bytes(P.Wk), gvv: bytes(P.v), gbeta: 4,
  };
  return heap.withBlock(sizes, (p) => {
    for (const [ptr, m] of [[p.q, q], [p.k, k], [p.v, v], [p.W, P.W], [p.Wq, P.Wq], [p.Wk, P.Wk], [p.vv, P.v], [p.dcontext, dcontext], [p.dweights, dweights]]) {
      heap.writeF32(ptr, m?.data);
    }
    heap.writeI32(p.lengths, keyLengths);
    for (const name of ['gq', 'gk', 'gv', 'gW', 'gWq', 'gWk', 'gvv', 'gbeta']) heap.writeF32(p[name], zeros(sizes[name] / 4));
    const status = heap.exports.attnlab_attend_backward(nq, nk, q.cols, k.cols, v.cols, P.Wq ? P.Wq.rows : 0,
      SCORES[a.score ?? 'dot'], NORMALIZATIONS[a.normalize ?? 'softmax'], a.temperature ?? 1, P.beta ?? 1, a.causal ? 1 : 0,
      p.lengths, p.q, p.k, p.v, p.W, p.Wq, p.Wk, p.vv, p.dcontext, p.dweights,
      p.gq, p.gk, p.gv, p.gW, p.gWq, p.gWk, p.gvv, p.gbeta);
    heap.check(status, 'attend backward');
    const read = (ptr, m) => (m ? { rows: m.rows, cols: m.cols, data: heap.readF32(ptr, m.data.length) } : null);
    return {
      dq: read(p.gq, q), dk: read(p.gk, k), dv: read(p.gv, v), W: read(p.gW, P.W), Wq: read(p.gWq, P.Wq), Wk: read(p.gWk, P.Wk),
      v: read(p.gvv, P.v), beta: { rows: 1, cols: 1, data: heap.readF32(p.gbeta, 1) },
    };
  });
}

/**
 * The backward of selfAttention through attnlab_self_attention_backward: the gradients
 * of L = sum(doutput * output). Returns { dx, wq, wk, wv, wo } (null for an omitted projection).
 */
function selfGrads(engine, a) {
  const { heap } = engine;
  const { x, wq = null, wk = null, wv = null, wo = null, doutput } = a;
  const n = x.rows, dK = wq ? wq.cols : x.cols, dV = wv ? wv.cols : x.cols, dOut = wo ? wo.cols : dV;
  const sizes = {
    x: bytes(x), wq: bytes(wq), wk: bytes(wk), wv: bytes(wv), wo: bytes(wo), doutput: bytes(doutput),
    dx: bytes(x), gwq: bytes(wq), gwk: bytes(wk), gwv: bytes(wv), gwo: bytes(wo),
  };
  return heap.withBlock(sizes, (p) => {
    for (const name of ['x', 'wq', 'wk', 'wv', 'wo', 'doutput']) heap.writeF32(p[name], a[name]?.data);
    for (const name of ['dx', 'gwq', 'gwk', 'gwv', 'gwo']) heap.writeF32(p[name], zeros(sizes[name] / 4));
    const status = heap.exports.attnlab_self_attention_backward(n, x.cols, dK, dV, dOut, a.heads ?? 1,
      SCORES[a.score ?? (wq || wk ? 'scaled_dot' : 'dot')], a.causal ? 1 : 0,
      p.x, p.wq, p.wk, p.wv, p.wo, p.doutput, p.dx, p.gwq, p.gwk, p.gwv, p.gwo);
    heap.check(status, 'selfAttention backward');
    const read = (ptr, m) => (m ? { rows: m.rows, cols: m.cols, data: heap.readF32(ptr, m.data.length) } : null);
    return { dx: read(p.dx, x), wq: read(p.gwq, wq), wk: read(p.gwk, wk), wv: read(p.gwv, wv), wo: read(p.gwo, wo) };
  });
}

/** Every gradient equal to one thread's within tolerance, and not all zero (a gradient that was never written would be). */
function assertSameGrads(got, want, what) {
  for (const [name, g] of Object.entries(want)) {
    if (!g) continue;
    assertSame(got[name], g, `${what}: ${name}`);
  }
}

const maxAbs = (m) => m.data.reduce((a, x) => Math.max(a, Math.abs(x)), 0);
const sameBits = (a, b) => a.data.length === b.data.length && a.data.every((x, i) => Object.is(x, b.data[i]));

/** The directional derivative of f (a float64 of the inputs) along r at x, by central differences. */
function directional(f, x, r, eps) {
  const plus = Float32Array.from(x.data, (xi, i) => xi + eps * r[i]);
  const minus = Float32Array.from(x.data, (xi, i) => xi - eps * r[i]);
  const orig = x.data;
  try {
    x.data = plus;
    const fp = f();
    x.data = minus;
    const fm = f();
    return (fp - fm) / (2 * eps);
  } finally {
    x.data = orig;
  }
}

const dotWith = (m, w) => m.data.reduce((s, x, i) => s + x * w.data[i], 0);

function throwsCode(fn, code) {
  let caught;
  assert.throws(fn, (err) => {
    caught = err;
    return err.name === 'AttnlabError' && err.code === code;
  });
  return caught;
}

describe('threads', { skip }, () => {
  let one, engines;
  before(async () => {
    one = await loadEngine({ threads: 1 });
    engines = [await loadEngine({ threads: 2 }), await loadEngine({ threads: 3 })];
    // every call splits, however small: the tests' sizes are odd, not large
    for (const e of engines) e.setParallelMinWork(0);
  });
  after(() => {
    for (const e of engines) e.destroy();
  });

  test('threads: 1 loads the single-thread build and says so; 2 and 3 run threaded', () => {
    assert.equal(one.threads, 1);
    assert.match(one.threadsReason, /one thread/);
    assert.equal(one.heap.call.pool_threads(), 1);
    for (const [i, e] of engines.entries()) {
      assert.equal(e.threads, i + 2, `threads: ${i + 2} (${e.threadsReason})`);
      assert.equal(e.threadsReason, null);
      assert.equal(e.heap.call.pool_threads(), i + 2);
      assert.ok(e.heap.memory.buffer instanceof SharedArrayBuffer, 'the threaded build runs on shared memory');
      assert.equal(e.simd, true);
    }
  });

  const cases = [
    ['dot, 37 x 53 x 7', { queries: random(37, 7, 1), keys: random(53, 7, 2), values: random(53, 5, 3) }],
    ['scaled_dot, causal, 67 x 67 x 9', { queries: random(67, 9, 4), keys: random(67, 9, 5), score: 'scaled_dot', mask: 'causal' }],
    ['cosine, key lengths, 41 x 29 x 3', {
      queries: random(41, 3, 6), keys: random(29, 3, 7), values: random(29, 11, 8), score: 'cosine', params: { beta: 3 },
      mask: { keyLengths: Array.from({ length: 41 }, (_, i) => (i * 7) % 30) },
    }],
    ['general, 33 x 17', { queries: random(33, 5, 9), keys: random(17, 6, 10), score: 'general', params: { W: random(5, 6, 11) } }],
    ['additive, 19 x 23, sum of positive scores', {
      queries: random(19, 4, 12), keys: random(23, 4, 13), score: 'additive',
      params: { Wq: random(6, 4, 14), Wk: random(6, 4, 15), v: random(1, 6, 16) }, temperature: 0.7,
    }],
    ['location, 49 x 13, temperature 0.3', { queries: random(49, 8, 17), keys: random(13, 2, 18), score: 'location', params: { W: random(13, 8, 19) }, temperature: 0.3 }],
  ];
  for (const [name, args] of cases) {
    test(`attend (${name}): 2 and 3 threads give one thread's scores, weights and context`, () => {
      const want = one.attend(args);
      for (const e of engines) {
        const got = e.attend(args);
        for (const out of ['scores', 'weights', 'context']) assertSame(got[out], want[out], `${e.threads} threads: ${out}`);
        // context alone: each thread's row block lives in its own scratch
        assertSame(e.attend({ ...args, outputs: ['context'] }).context, want.context, `${e.threads} threads: context only`);
      }
    });
  }

  test('attend at n = 301, d = 64 (past the default threshold): the same context', () => {
    const args = { queries: random(301, 64, 20), keys: random(301, 64, 21), score: 'scaled_dot', outputs: ['context'] };
    const want = one.attend(args).context;
    for (const e of engines) {
      e.setParallelMinWork(1e6);
      try {
        assertSame(e.attend(args).context, want, `${e.threads} threads`);
      } finally {
        e.setParallelMinWork(0);
      }
    }
  });

  test('selfAttention with heads: the same as one thread', () => {
    const args = { x: random(45, 12, 22), wq: random(12, 8, 23), wk: random(12, 8, 24), wv: random(12, 8, 25), wo: random(8, 5, 26), heads: 2, causal: true };
    const want = one.selfAttention(args);
    for (const e of engines) {
      const got = e.selfAttention(args);
      for (const out of ['q', 'k', 'v', 'context', 'output']) assertSame(got[out], want[out], `${e.threads} threads: ${out}`);
      for (let h = 0; h < 2; h++) assertSame(got.weights[h], want.weights[h], `${e.threads} threads: weights[${h}]`);
    }
  });

  test('an overflow in several row blocks names the first row, as one thread does; the engine stays usable', () => {
    // rows 20 (block 1), 37 (block 2) and 70 (block 4) overflow: with 2 and 3
    // threads the blocks fail on different threads, in another order
    const q = random(83, 4, 27);
    for (const row of [70, 37, 20]) q.data.fill(3e38, row * 4, row * 4 + 4);
    const args = { queries: q, keys: { rows: 5, cols: 4, data: new Float32Array(20).fill(1) }, outputs: ['context'] };
    const want = throwsCode(() => one.attend(args), 'ERR_VALUE');
    assert.match(want.message, /scores\[20\]\[0\] overflows/);
    const ok = { queries: random(83, 4, 28), keys: random(5, 4, 29) };
    const wantOk = one.attend(ok).context;
    for (const e of engines) {
      const used = e.heapUsed();
      for (let i = 0; i < 3; i++) assert.equal(throwsCode(() => e.attend(args), 'ERR_VALUE').message, want.message);
      assert.equal(e.heapUsed(), used, `${e.threads} threads: the failed calls freed their blocks`);
      assertSame(e.attend(ok).context, wantOk, `${e.threads} threads: a call after the errors`);
      // checks made before the split stay clean too
      assert.match(throwsCode(() => e.attend({ queries: [[1, 2]], keys: [[1]] }), 'ERR_SHAPE').message, /keys/);
      assertSame(e.attend(ok).context, wantOk, `${e.threads} threads: a call after a shape error`);
    }
  });

  test('1,030 rows (37 row blocks), every output copied out: one thread\'s results on 2 and 3 threads', () => {
    // 1,030 rows = 28 blocks of 32, then 8 blocks of 16 and a 6-row one (src/core/attention.c)
    const args = { queries: random(1030, 24, 30), keys: random(700, 24, 31), values: random(700, 5, 32), score: 'scaled_dot' };
    const want = one.attend(args);
    for (const e of engines) {
      const used = e.heapUsed();
      for (let i = 0; i < 2; i++) {
        const got = e.attend(args);
        for (const out of ['scores', 'weights', 'context']) assertSame(got[out], want[out], `${e.threads} threads: ${out}`);
        assert.equal(got.scores.data.buffer instanceof SharedArrayBuffer, false, 'copies, not views of the shared memory');
      }
      const weightsOnly = e.attend({ ...args, outputs: ['weights'] });
      assert.deepEqual(Object.keys(weightsOnly), ['weights']);
      assertSame(weightsOnly.weights, want.weights, `${e.threads} threads: weights alone`);
      assert.equal(e.heapUsed(), used, `${e.threads} threads: every block freed`);
    }
  });

  test('a GPT-2 checkpoint on 2 and 3 threads: inspect, the lens, the logits, the loss and generate are one thread\'s, bit for bit', async () => {
    // a vocabulary of 1,000: the unembedding splits by columns (few rows, many panels), GELU in whole chunks,
    // the rows of logits (top 5, lens, loss) one per item
    const ck = gpt2Checkpoint({ config: { ...TINY, vocab_size: 1000, n_embd: 32 }, seed: 7 });
    const ids = Array.from({ length: 21 }, (_, i) => (i * 37 + 5) % 1000);
    const read = async (e) => {
      const gpt = await e.loadModel(ck.bytes, { config: ck.config });
      const r = gpt.inspect({ ids }, { lens: true, logits: true });
      const loss = gpt.evaluate({ ids }).loss;
      const drawn = Array.from(gpt.generate({ ids: ids.slice(0, 8) }, { tokens: 10, temperature: 1, seed: 3 }).ids);
      gpt.destroy();
      return { r, loss, drawn };
    };
    const want = await read(one);
    for (const e of engines) {
      const { r, loss, drawn } = await read(e);
      assert.equal(loss, want.loss, `${e.threads} threads: the loss`);
      assert.deepEqual(drawn, want.drawn, `${e.threads} threads: generated (the cached keys and values)`);
      assert.deepEqual(r.logits.data, want.r.logits.data, `${e.threads} threads: the logits`);
      assert.deepEqual(r.predictions, want.r.predictions, `${e.threads} threads: the top 5`);
      assert.deepEqual(r.lens, want.r.lens, `${e.threads} threads: the lens`);
      r.attention.forEach((layer, l) => layer.forEach((m, h) => assert.deepEqual(m.data, want.r.attention[l][h].data, `${e.threads} threads: L${l}H${h}`)));
    }
  });

  test('an overflow with every output asked for: the first row is named, whichever thread met it, and the engine stays usable', () => {
    const n = 300;
    for (const rows of [[3], [290, 299], [40, 250]]) {
      const q = random(n, 4, 33);
      for (const row of rows) q.data.fill(3e38, row * 4, row * 4 + 4);
      const args = { queries: q, keys: { rows: 9, cols: 4, data: new Float32Array(36).fill(1) } };
      const want = throwsCode(() => one.attend(args), 'ERR_VALUE');
      assert.match(want.message, new RegExp(`scores\\[${rows[0]}\\]\\[0\\] overflows`));
      const ok = { queries: random(n, 4, 34), keys: random(9, 4, 35) };
      const wantOk = one.attend(ok);
      for (const e of engines) {
        const used = e.heapUsed();
        assert.equal(throwsCode(() => e.attend(args), 'ERR_VALUE').message, want.message, `${e.threads} threads, rows ${rows}`);
        assert.equal(e.heapUsed(), used, `${e.threads} threads: the failed call freed its blocks`);
        const got = e.attend(ok);
        for (const out of ['scores', 'weights', 'context']) assertSame(got[out], wantOk[out], `${e.threads} threads: ${out} after the error`);
      }
    }
  });

  // every score, mask and normalisation of the backward; n_q, n_k past one row block and odd
  const grads = [
    ['dot, 37 x 53, dweights', { q: random(37, 7, 40), k: random(53, 7, 41), v: random(53, 5, 42), dweights: random(37, 53, 43) }],
    ['scaled_dot, causal, 67 x 67', { q: random(67, 9, 44), k: random(67, 9, 45), v: random(67, 9, 46), score: 'scaled_dot', causal: true }],
    ['cosine, key lengths, 41 x 29', {
      q: random(41, 3, 47), k: random(29, 3, 48), v: random(29, 11, 49), score: 'cosine', params: { beta: 3 },
      keyLengths: Int32Array.from({ length: 41 }, (_, i) => (i * 7) % 30),
    }],
    ['general, sum of positive scores, 33 x 17', {
      q: positive(random(33, 5, 50)), k: positive(random(17, 6, 51)), v: random(17, 4, 52), score: 'general', params: { W: positive(random(5, 6, 53)) },
      normalize: 'sum', keyLengths: Int32Array.from({ length: 33 }, () => 17),
    }],
    ['additive, causal and key lengths, 39 x 45, temperature 0.7', {
      q: random(39, 4, 54), k: random(45, 4, 55), v: random(45, 6, 56), score: 'additive',
      params: { Wq: random(6, 4, 57), Wk: random(6, 4, 58), v: random(1, 6, 59) }, temperature: 0.7, causal: true,
      keyLengths: Int32Array.from({ length: 39 }, (_, i) => 45 - i),
    }],
    ['location, 49 x 13, temperature 0.3', {
      q: random(49, 8, 60), k: random(13, 2, 61), v: random(13, 3, 62), score: 'location', params: { W: random(13, 8, 63) }, temperature: 0.3,
    }],
  ];
  for (const [name, args] of grads) {
    const a = { ...args, dcontext: random(args.q.rows, args.v.cols, 64) };
    test(`attend backward (${name}): 2 and 3 threads give one thread's gradients; twice the same bits`, () => {
      const want = attendGrads(one, a);
      for (const [key, g] of Object.entries(want)) {
        // location scores do not read the keys: their gradient is 0
        if (g && key !== 'beta' && !(a.score === 'location' && key === 'dk')) assert.ok(maxAbs(g) > 1e-3, `one thread: ${key} is not zero (${maxAbs(g)})`);
      }
      if (a.score === 'cosine') assert.ok(Math.abs(want.beta.data[0]) > 1e-3, 'dbeta is not zero');
      for (const e of engines) {
        const got = attendGrads(e, a);
        assertSameGrads(got, want, `${e.threads} threads`);
        const again = attendGrads(e, a);
        for (const [key, g] of Object.entries(got)) if (g) assert.ok(sameBits(again[key], g), `${e.threads} threads, run twice: ${key} bit for bit`);
      }
    });
  }

  test('attend backward on 3 threads matches finite differences of attend, for every score and parameter', () => {
    const [e] = engines.slice(-1);
    for (const [name, args] of grads) {
      const a = { ...args, dcontext: random(args.q.rows, args.v.cols, 65) };
      const g = attendGrads(e, a);
      const mask = a.keyLengths ? { keyLengths: a.keyLengths, causal: !!a.causal } : a.causal ? 'causal' : 'none';
      // L = sum dcontext . context + sum dweights . weights, in float64 of the float32 outputs
      const loss = () => {
        const r = e.attend({ queries: a.q, keys: a.k, values: a.v, score: a.score, params: a.params, normalize: a.normalize, temperature: a.temperature, mask });
        return dotWith(r.context, a.dcontext) + (a.dweights ? dotWith(r.weights, a.dweights) : 0);
      };
      // the gradients' names: dq, dk, dv for the inputs, the parameter's own (W, Wq, Wk, v) for the parameters
      const inputs = [['dq', a.q], ['dk', a.k], ['dv', a.v], ...Object.entries(a.params ?? {}).filter(([, m]) => typeof m === 'object')];
      for (const [key, m] of inputs) {
        const r = random(1, m.data.length, 66).data;
        const fd = directional(loss, m, r, 1e-2);
        const an = g[key].data.reduce((s, x, i) => s + x * r[i], 0);
        assert.ok(Math.abs(fd - an) <= 2e-3 + 2e-2 * Math.abs(fd), `${name}: ${key} along a random direction ${an} vs finite differences ${fd}`);
      }
    }
  });

  const selfCases = [
    ['one head, no projections, causal, 37 tokens', { x: random(37, 12, 70), causal: true }],
    ['3 heads, every projection, scaled_dot, 45 tokens', {
      x: random(45, 12, 71), wq: random(12, 9, 72, 0.5), wk: random(12, 9, 73, 0.5), wv: random(12, 6, 74, 0.5), wo: random(6, 5, 75, 0.5), heads: 3,
    }],
    ['2 heads, cosine, wq and wo only, causal, 51 tokens', {
      x: random(51, 8, 76), wq: random(8, 8, 77, 0.5), wk: random(8, 8, 78, 0.5), wo: random(8, 3, 79, 0.5), heads: 2, score: 'cosine', causal: true,
    }],
    ['2 heads, dot, wv only, 33 tokens', { x: random(33, 6, 80, 0.5), wv: random(6, 4, 81, 0.5), heads: 2, score: 'dot' }],
  ];
  for (const [name, args] of selfCases) {
    test(`selfAttention backward (${name}): 2 and 3 threads give one thread's gradients; twice the same bits`, () => {
      const out = one.selfAttention(args).output;
      const a = { ...args, doutput: random(out.rows, out.cols, 82) };
      const want = selfGrads(one, a);
      for (const [key, g] of Object.entries(want)) if (g) assert.ok(maxAbs(g) > 1e-3, `one thread: d${key} is not zero`);
      for (const e of engines) {
        const got = selfGrads(e, a);
        assertSameGrads(got, want, `${e.threads} threads`);
        const again = selfGrads(e, a);
        for (const [key, g] of Object.entries(got)) if (g) assert.ok(sameBits(again[key], g), `${e.threads} threads, run twice: d${key} bit for bit`);
        // and the threaded gradient is the derivative of the threaded forward
        const loss = () => dotWith(e.selfAttention(args).output, a.doutput);
        for (const key of ['x', 'wq', 'wk', 'wv', 'wo'].filter((k) => args[k])) {
          const r = random(1, args[key].data.length, 83).data;
          const fd = directional(loss, args[key], r, 1e-2);
          const an = got[key === 'x' ? 'dx' : key].data.reduce((s, v, i) => s + v * r[i], 0);
          assert.ok(Math.abs(fd - an) <= 2e-3 + 2e-2 * Math.abs(fd), `${e.threads} threads: d${key} along a random direction ${an} vs finite differences ${fd}`);
        }
      }
    });
  }

  test('selfAttention past the default threshold (192 tokens, 64 wide, 4 heads, every score, causal or not): one thread\'s results, twice the same bits', () => {
    const x = random(192, 64, 84);
    const w = () => random(64, 64, 85, 0.125);
    for (const [score, causal] of [['scaled_dot', false], ['dot', true], ['cosine', true]]) {
      const args = { x, wq: w(), wk: w(), wv: w(), wo: w(), heads: 4, score, causal };
      const want = one.selfAttention(args);
      for (const e of engines) {
        e.setParallelMinWork(1e6);
        try {
          const got = e.selfAttention(args);
          for (const out of ['q', 'k', 'v', 'context', 'output']) assertSame(got[out], want[out], `${score}, ${e.threads} threads: ${out}`);
          for (let h = 0; h < 4; h++) assertSame(got.weights[h], want.weights[h], `${score}, ${e.threads} threads: weights[${h}]`);
          assert.ok(sameBits(e.selfAttention(args).output, got.output), `${score}, ${e.threads} threads, run twice: output bit for bit`);
        } finally {
          e.setParallelMinWork(0);
        }
      }
    }
  });

  test('the threads option is checked', async () => {
    for (const [threads, code] of [[0, 'ERR_SHAPE'], [1.5, 'ERR_VALUE'], ['many', 'ERR_ARG'], [null, 'ERR_VALUE'], [17, 'ERR_LIMIT']]) {
      await assert.rejects(loadEngine({ threads }), (err) => err.code === code && /threads/.test(err.message), `threads: ${threads}`);
    }
  });

  test("'auto' (the default) takes the hardware's threads, at most 8", async () => {
    const os = await import('node:os');
    const e = await loadEngine();
    try {
      assert.equal(e.threads, Math.min(os.availableParallelism(), 8), e.threadsReason ?? '');
    } finally {
      e.destroy();
    }
  });

  test('the scalar build runs on one thread and says why', async () => {
    const e = await loadEngine({ simd: false, threads: 2 });
    assert.equal(e.threads, 1);
    assert.equal(e.simd, false);
    assert.match(e.threadsReason, /scalar build runs on one thread/);
  });

  test('destroy() stops the workers; the engine keeps working on one thread', async () => {
    const e = await loadEngine({ threads: 2 });
    e.setParallelMinWork(0);
    const args = { queries: random(21, 3, 30), keys: random(19, 3, 31) };
    const want = one.attend(args).context;
    assertSame(e.attend(args).context, want, 'before destroy');
    e.destroy();
    e.destroy();
    assert.equal(e.threads, 1);
    assert.equal(e.heap.call.pool_threads(), 1);
    assertSame(e.attend(args).context, want, 'after destroy');
  });

  test('without SharedArrayBuffer the engine loads on one thread and says why', async () => {
    const script = `delete globalThis.SharedArrayBuffer;
      const { loadEngine } = await import(${JSON.stringify(ENGINE)});
      const e = await loadEngine({ threads: 2 });
      const r = e.attend({ queries: [[1, 2]], keys: [[1, 0], [0, 1]] });
      console.log(JSON.stringify({ threads: e.threads, reason: e.threadsReason, z: Array.from(r.context.data) }));`;
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { timeout: 60_000 });
    const got = JSON.parse(stdout);
    assert.equal(got.threads, 1);
    assert.match(got.reason, /no SharedArrayBuffer/);
    assert.equal(got.z.length, 2);
  });

  test('Node exits with a threaded engine never destroyed', async () => {
    const script = `const { loadEngine } = await import(${JSON.stringify(ENGINE)});
      const e = await loadEngine({ threads: 3 });
      e.setParallelMinWork(0);
      e.attend({ queries: [[1, 2], [3, 4]], keys: [[1, 0], [0, 1]] });
      console.log(e.threads);`;
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { timeout: 60_000 });
    assert.equal(stdout.trim(), '3');
  });
});
