// Property suite: thousands of randomised attend / selfAttention calls on both
// WASM builds. Shapes, scores, normalisations, masks, temperatures and value
// scales (ordinary, huge, tiny, mixed) are drawn from a seeded generator
// (PROPERTY_SEED, default 1; PROPERTY_CALLS attend calls, default 3000, and a
// third as many selfAttention calls). Every call must either
//   - return results that match a float64 reference step by step: scores
//     against the inputs, weights against the returned scores, context against
//     the returned weights (each within float32 rounding of its magnitude),
//     with masked cells -inf / 0 and never a NaN; or
//   - throw an AttnlabError with a documented code that the reference explains
//     (ERR_VALUE: a product, score or result past the float32 range;
//     ERR_ZERO_SUM: a 'sum' row within rounding of zero; ERR_LIMIT: never here).
// The SIMD and scalar builds must agree: the same outcome, results within
// float32 rounding of each other. A stale value (left from an earlier call)
// cannot pass: each call's inputs are fresh and checked against its own reference.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { loadEngine } from '../../web/engine/index.js';
import { mulberry32, BUILDS } from './builds.mjs';

const SEED = Number(process.env.PROPERTY_SEED) || 1;
const CALLS = Number(process.env.PROPERTY_CALLS) || 3000;
const FLT_MAX = 3.4028234663852886e38;
const EPS = 2 ** -23;
const SCORES = ['dot', 'scaled_dot', 'general', 'additive', 'cosine', 'location'];
const f32 = Math.fround;

function generator(seed) {
  const next = mulberry32(seed);
  const int = (lo, hi) => lo + Math.floor(next() * (hi - lo + 1));
  const pick = (xs) => xs[int(0, xs.length - 1)];
  // a value scale: mostly ordinary, sometimes huge, tiny or spanning decades
  const scale = () => pick([1, 1, 1, 1, 10, 1e-3, 1e15, 1e19, 1e21, 1e-20, 1e-30, 'mixed']);
  const value = (s) => f32(s === 'mixed' ? (next() * 2 - 1) * 10 ** int(-30, 30) : (next() * 2 - 1) * s);
  const rows = (n, d, s) => Array.from({ length: n }, () => Array.from({ length: d }, () => value(s)));
  return { next, int, pick, scale, rows, value };
}

const flat = (m) => m.flat();

/** Float64 scores of q (n_q x d_q) against k, with the magnitude of their terms
 * (the rounding scale) and whether any product overflows float32. */
function referenceScores(score, q, k, params) {
  const nq = q.length, nk = k.length;
  const e = [], mag = [];
  let overflow = false;
  const big = (x) => { if (!(Math.abs(x) < FLT_MAX / 16)) overflow = true; return x; };
  for (let i = 0; i < nq; i++) {
    for (let j = 0; j < nk; j++) {
      let s = 0, m = 0;
      if (score === 'dot' || score === 'scaled_dot' || score === 'cosine') {
        for (let a = 0; a < q[i].length; a++) { const t = big(q[i][a] * k[j][a]); s += t; m += Math.abs(t); }
        if (score === 'scaled_dot') { s /= Math.sqrt(q[i].length); m /= Math.sqrt(q[i].length); }
        if (score === 'cosine') {
          const nq2 = Math.hypot(...q[i]), nk2 = Math.hypot(...k[j]);
          s = nq2 > 0 && nk2 > 0 ? params.beta * s / (nq2 * nk2) : 0;
          m = Math.abs(params.beta);
          overflow = false;
        }
      } else if (score === 'general') {
        for (let a = 0; a < q[i].length; a++) {
          let qw = 0, qwm = 0;
          for (let b = 0; b < k[j].length; b++) { const t = big(q[i][a] * params.W[a][b]); qw += t * k[j][b]; qwm += Math.abs(t * k[j][b]); }
          for (let b = 0; b < k[j].length; b++) big(params.W[a][b] * k[j][b]);
          s += qw; m += qwm;
        }
      } else if (score === 'additive') {
        for (let u = 0; u < params.v.length; u++) {
          let t = 0;
          for (let a = 0; a < q[i].length; a++) t += big(params.Wq[u][a] * q[i][a]);
          for (let b = 0; b < k[j].length; b++) t += big(params.Wk[u][b] * k[j][b]);
          s += params.v[u] * Math.tanh(t); m += Math.abs(params.v[u]) * (1 + Math.abs(t));
        }
      } else { // location
        for (let a = 0; a < q[i].length; a++) { const t = big(params.W[j][a] * q[i][a]); s += t; m += Math.abs(t); }
      }
      e.push(big(s)); mag.push(m);
    }
  }
  return { e, mag, overflow };
}

/** float32 rounding of a score: its terms' magnitude; the additive score's
 * tanh has an absolute error of ~1e-7 per unit, times |v_u|. */
const scoreTolerance = (score, ref, c) =>
  64 * EPS * (ref.mag[c] + Math.abs(ref.e[c])) + (score === 'additive' ? 1e-5 * ref.mag[c] : 0) + 1e-37;

function visibleKeys(mask, i, nk) {
  let L = nk;
  if (mask === 'causal' || mask?.causal) L = Math.min(L, i + 1);
  if (mask?.keyLengths) L = Math.min(L, mask.keyLengths[i]);
  return L;
}

function randomAttend(g) {
  const nq = g.int(1, 12), nk = g.int(1, 12), dq = g.int(1, 9), dv = g.int(1, 6);
  const score = g.pick(SCORES);
  const dk = ['dot', 'scaled_dot', 'cosine'].includes(score) ? dq : g.int(1, 9);
  const sq = g.scale(), sk = g.scale();
  const normalize = g.next() < 0.25 ? 'sum' : 'softmax';
  const args = { queries: g.rows(nq, dq, sq), keys: g.rows(nk, dk, sk), values: g.rows(nk, dv, g.pick([1, 1, 1e30, 1e-30])), score, normalize };
  if (normalize === 'sum') { // positive rows keep most sums away from zero
    if (g.next() < 0.7) { args.queries = args.queries.map((r) => r.map(Math.abs)); args.keys = args.keys.map((r) => r.map(Math.abs)); }
  }
  const t = g.next();
  if (t < 0.5) args.temperature = f32(g.pick([0.05, 0.3, 2, 7, 1e-3, 1e-40, 1e3]));
  const m = g.next();
  if (m < 0.25) args.mask = 'causal';
  else if (m < 0.45) args.mask = { keyLengths: Array.from({ length: nq }, () => g.int(0, nk)) };
  else if (m < 0.55) args.mask = { keyLengths: Array.from({ length: nq }, () => g.int(0, nk)), causal: true };
  const ps = g.pick([1, 1, 0.1, 1e10]);
  const params = { beta: f32(g.pick([1, 1, 2.5, -3, 1e30])) };
  if (score === 'general') params.W = g.rows(dq, dk, ps);
  if (score === 'location') params.W = g.rows(nk, dq, ps);
  if (score === 'additive') {
    const h = g.int(1, 6);
    params.Wq = g.rows(h, dq, ps); params.Wk = g.rows(h, dk, ps); params.v = g.rows(1, h, ps)[0];
  }
  args.params = params;
  if (g.next() < 0.15) args.outputs = ['context'];
  return args;
}

/** Checks one attend outcome against the reference; returns a short outcome key. */
function checkAttend(args, outcome, where) {
  const { queries: q, keys: k, values: v, score, normalize } = args;
  const tau = args.temperature ?? 1;
  const nq = q.length, nk = k.length, dv = v[0].length;
  const ref = referenceScores(score, q, k, args.params);
  if (outcome.error) {
    const err = outcome.error;
    assert.equal(err.name, 'AttnlabError', `${where}: ${err}`);
    if (err.code === 'ERR_VALUE') {
      // an overflow the reference sees: a product, a score, or a result near the float32 range
      let vmax = 0;
      for (const r of v) for (const x of r) vmax = Math.max(vmax, Math.abs(x));
      const plausible = ref.overflow || normalize === 'sum' || vmax > FLT_MAX / 1e6 || ref.e.some((x) => !(Math.abs(x) < FLT_MAX / 16))
        || /overflows/.test(err.message) && (score === 'additive' || score === 'general' || score === 'location');
      assert.ok(plausible, `${where}: ERR_VALUE without an overflow in the reference: ${err.message}`);
      assert.match(err.message, /overflows float32|must be finite|temperature/);
    } else if (err.code === 'ERR_ZERO_SUM') {
      assert.equal(normalize, 'sum', `${where}: ERR_ZERO_SUM under softmax`);
      let explained = false;
      for (let i = 0; i < nq; i++) {
        const L = visibleKeys(args.mask, i, nk);
        // the row's sum within rounding of zero, once the scores' own float32 error is allowed for
        let s = 0, m = 0, slack = 0;
        for (let j = 0; j < L; j++) {
          s += ref.e[i * nk + j];
          m += Math.abs(ref.e[i * nk + j]);
          slack += scoreTolerance(score, ref, i * nk + j);
        }
        if (L > 0 && Math.abs(s) <= 8 * L * EPS * m + slack) explained = true;
      }
      assert.ok(explained, `${where}: ERR_ZERO_SUM but no reference row sums to within rounding of 0: ${err.message}`);
    } else {
      assert.fail(`${where}: unexpected ${err.code}: ${err.message}`);
    }
    return err.code;
  }
  const r = outcome.result;
  const hasMatrices = !args.outputs;
  assert.equal(r.context.data.length, nq * dv, `${where}: context size`);
  for (const x of r.context.data) assert.ok(Number.isFinite(x), `${where}: context has ${x}`);
  if (!hasMatrices) return 'ok';
  const e = r.scores.data, a = r.weights.data;
  assert.equal(e.length, nq * nk);
  for (let i = 0; i < nq; i++) {
    const L = visibleKeys(args.mask, i, nk);
    let m = -Infinity;
    for (let j = 0; j < nk; j++) {
      const c = i * nk + j;
      if (j >= L) {
        assert.ok(e[c] === -Infinity && a[c] === 0, `${where}: masked [${i}][${j}] is (${e[c]}, ${a[c]})`);
        continue;
      }
      assert.ok(Number.isFinite(e[c]) && Number.isFinite(a[c]), `${where}: visible [${i}][${j}] is (${e[c]}, ${a[c]})`);
      // the score against the float64 reference, within float32 rounding of its terms
      const tol = scoreTolerance(score, ref, c);
      assert.ok(Math.abs(e[c] - ref.e[c]) <= tol, `${where}: score [${i}][${j}] ${e[c]}, reference ${ref.e[c]} (tolerance ${tol})`);
      m = Math.max(m, e[c]);
    }
    // the weights against the returned scores, in float64
    let z = 0, s = 0;
    for (let j = 0; j < L; j++) { z += Math.exp((e[i * nk + j] - m) / tau); s += e[i * nk + j]; }
    for (let j = 0; j < L; j++) {
      const c = i * nk + j;
      const want = normalize === 'softmax' ? Math.exp((e[c] - m) / tau) / z : e[c] / s;
      const tol = normalize === 'softmax' ? 3e-6 : 1e-5 * Math.abs(want) + 1e-30;
      assert.ok(Math.abs(a[c] - want) <= tol, `${where}: weight [${i}][${j}] ${a[c]}, want ${want}`);
    }
    // the context against the returned weights, in float64
    for (let d = 0; d < dv; d++) {
      let want = 0, mag = 0;
      for (let j = 0; j < L; j++) { want += a[i * nk + j] * v[j][d]; mag += Math.abs(a[i * nk + j] * v[j][d]); }
      const got = r.context.data[i * dv + d];
      assert.ok(Math.abs(got - want) <= 2e-5 * mag + 1e-37, `${where}: context [${i}][${d}] ${got}, want ${want}`);
    }
  }
  return 'ok';
}

function run(fn) {
  try { return { result: fn() }; } catch (error) { return { error }; }
}

/** SIMD and scalar agree: same outcome; results within float32 rounding. */
function compareBuilds(a, b, where) {
  assert.equal(a.error?.code, b.error?.code, `${where}: SIMD ${a.error?.message ?? 'ok'} vs scalar ${b.error?.message ?? 'ok'}`);
  if (a.error) return;
  for (const key of Object.keys(a.result)) {
    const xs = Array.isArray(a.result[key]) ? a.result[key] : [a.result[key]];
    const ys = Array.isArray(b.result[key]) ? b.result[key] : [b.result[key]];
    for (let h = 0; h < xs.length; h++) {
      const x = xs[h].data, y = ys[h].data;
      assert.equal(x.length, y.length);
      let scale = 0;
      for (let i = 0; i < x.length; i++) if (Number.isFinite(x[i])) scale = Math.max(scale, Math.abs(x[i]));
      for (let i = 0; i < x.length; i++) {
        if (x[i] === y[i]) continue;
        assert.ok(Math.abs(x[i] - y[i]) <= 1e-4 * scale + 1e-30, `${where}: ${key}[${i}] SIMD ${x[i]} vs scalar ${y[i]}`);
      }
    }
  }
}

// ---- self-attention ---------------------------------------------------------------

function randomSelf(g) {
  const n = g.int(1, 10), heads = g.int(1, 3), dIn = g.int(1, 8);
  const s = g.pick([1, 1, 1, 0.1, 1e10, 1e-20]);
  const args = { x: g.rows(n, dIn, s), heads: 1, causal: g.next() < 0.4 };
  const proj = g.next() < 0.6;
  if (proj) {
    const dK = heads * g.int(1, 3), dV = heads * g.int(1, 3);
    args.wq = g.rows(dIn, dK, 0.7); args.wk = g.rows(dIn, dK, 0.7); args.wv = g.rows(dIn, dV, 0.7);
    if (g.next() < 0.5) args.wo = g.rows(dV, g.int(1, 6), 0.7);
    args.heads = heads;
  } else if (dIn % heads === 0) {
    args.heads = heads;
  }
  args.score = g.pick([undefined, 'dot', 'scaled_dot', 'cosine']);
  return args;
}

const matmul = (X, W, n, din, dout) => {
  const y = new Float64Array(n * dout);
  for (let i = 0; i < n; i++) for (let o = 0; o < dout; o++) {
    let s = 0;
    for (let a = 0; a < din; a++) s += X[i * din + a] * W[a][o];
    y[i * dout + o] = s;
  }
  return y;
};

function checkSelf(args, outcome, where) {
  const { x } = args;
  const n = x.length, dIn = x[0].length;
  if (outcome.error) {
    const err = outcome.error;
    assert.equal(err.name, 'AttnlabError', `${where}: ${err}`);
    assert.ok(['ERR_VALUE', 'ERR_SHAPE'].includes(err.code), `${where}: ${err.code}: ${err.message}`);
    if (err.code === 'ERR_VALUE') {
      let xmax = 0;
      for (const r of x) for (const v of r) xmax = Math.max(xmax, Math.abs(v));
      assert.ok(xmax > 1e9, `${where}: ERR_VALUE from ordinary inputs: ${err.message}`);
      assert.match(err.message, /overflows float32/);
    } else {
      assert.match(err.message, /heads/); // heads that do not divide a width
    }
    return err.code;
  }
  const r = outcome.result;
  const X = flat(x);
  const score = args.score ?? (args.wq || args.wk ? 'scaled_dot' : 'dot');
  const H = args.heads ?? 1;
  const dK = r.q.cols, dV = r.v.cols, dkh = dK / H, dvh = dV / H;
  // projections against the inputs
  for (const [name, w, m] of [['q', args.wq, r.q], ['k', args.wk, r.k], ['v', args.wv, r.v]]) {
    const want = w ? matmul(X, w, n, dIn, m.cols) : X;
    for (let i = 0; i < want.length; i++) {
      const tol = 1e-5 * (Math.abs(want[i]) + 1) * (w ? Math.max(...X.map(Math.abs)) : 0) + 1e-6 * Math.abs(want[i]) + 1e-37;
      assert.ok(Math.abs(m.data[i] - want[i]) <= tol, `${where}: ${name}[${i}] ${m.data[i]}, want ${want[i]}`);
    }
  }
  // per head: scores from the returned q, k; weights from the returned scores; context from the weights
  const Q = r.q.data, K = r.k.data, V = r.v.data;
  for (let h = 0; h < H; h++) {
    const e = r.scores[h].data, a = r.weights[h].data;
    for (let i = 0; i < n; i++) {
      const L = args.causal ? i + 1 : n;
      let m = -Infinity;
      for (let j = 0; j < n; j++) {
        const c = i * n + j;
        if (j >= L) { assert.ok(e[c] === -Infinity && a[c] === 0, `${where}: masked [${h}][${i}][${j}]`); continue; }
        let s = 0, mag = 0, nq = 0, nk = 0;
        for (let u = 0; u < dkh; u++) {
          const qv = Q[i * dK + h * dkh + u], kv = K[j * dK + h * dkh + u];
          s += qv * kv; mag += Math.abs(qv * kv); nq += qv * qv; nk += kv * kv;
        }
        let want = s, tol = 32 * EPS * mag + 1e-37;
        if (score === 'scaled_dot') { want /= Math.sqrt(dkh); tol /= Math.sqrt(dkh); }
        if (score === 'cosine') { want = nq > 0 && nk > 0 ? s / Math.sqrt(nq * nk) : 0; tol = 1e-5; }
        assert.ok(Number.isFinite(e[c]) && Math.abs(e[c] - want) <= tol, `${where}: score [${h}][${i}][${j}] ${e[c]}, want ${want}`);
        m = Math.max(m, e[c]);
      }
      let z = 0;
      for (let j = 0; j < L; j++) z += Math.exp(e[i * n + j] - m);
      for (let j = 0; j < L; j++) {
        const want = Math.exp(e[i * n + j] - m) / z;
        assert.ok(Math.abs(a[i * n + j] - want) <= 3e-6, `${where}: weight [${h}][${i}][${j}] ${a[i * n + j]}, want ${want}`);
      }
      for (let d = 0; d < dvh; d++) {
        let want = 0, mag = 0;
        for (let j = 0; j < L; j++) { const t = a[i * n + j] * V[j * dV + h * dvh + d]; want += t; mag += Math.abs(t); }
        const got = r.context.data[i * dV + h * dvh + d];
        assert.ok(Math.abs(got - want) <= 2e-5 * mag + 1e-37, `${where}: context [${i}][${h * dvh + d}] ${got}, want ${want}`);
      }
    }
  }
  for (const y of r.output.data) assert.ok(Number.isFinite(y), `${where}: output has ${y}`);
  return 'ok';
}

describe('property: randomised calls against float64 references, SIMD vs scalar vs threaded SIMD', { skip: BUILDS[0].skip }, () => {
  let simd, scalar, threaded;
  before(async () => {
    simd = await loadEngine({ simd: true, threads: 1 });
    scalar = await loadEngine({ simd: false });
    threaded = await loadEngine({ simd: true, threads: 2 });
    assert.equal(threaded.threads, 2, `threaded: ${threaded.threadsReason}`);
    threaded.setParallelMinWork(0); // split even the small calls, so every call tests the row blocks
  });
  after(() => threaded?.destroy());

  /** One call on every build, each result checked, then compared with the scalar one; the SIMD result's tally key. */
  const onBothBuilds = (call, check, where) => {
    const a = run(() => call(simd));
    const b = run(() => call(scalar));
    const c = run(() => call(threaded));
    const key = check(a, `${where} [SIMD]`);
    check(b, `${where} [scalar]`);
    check(c, `${where} [SIMD, ${threaded.threads} threads]`);
    compareBuilds(a, b, where);
    compareBuilds(c, b, `${where} (threaded)`);
    return key;
  };

  test(`${CALLS} attend calls (seed ${SEED})`, () => {
    const g = generator(SEED);
    const tally = {};
    const heap0 = [simd.heapUsed(), scalar.heapUsed(), threaded.heapUsed()];
    for (let c = 0; c < CALLS; c++) {
      const args = randomAttend(g);
      const where = `attend call ${c} (seed ${SEED}): ${args.score}, ${args.normalize}, ${args.queries.length}x${args.keys.length}, mask ${JSON.stringify(args.mask ?? 'none')}, tau ${args.temperature ?? 1}`;
      const key = onBothBuilds((engine) => engine.attend(args), (r, w) => checkAttend(args, r, w), where);
      tally[key] = (tally[key] ?? 0) + 1;
    }
    assert.deepEqual([simd.heapUsed(), scalar.heapUsed(), threaded.heapUsed()], heap0, 'the WASM heap grew');
    assert.ok(tally.ok > CALLS / 2, `only ${tally.ok} of ${CALLS} calls succeeded: ${JSON.stringify(tally)}`);
    assert.ok(tally.ERR_VALUE > 0 && tally.ERR_ZERO_SUM > 0, `the edges were not reached: ${JSON.stringify(tally)}`);
  });

  test(`${Math.ceil(CALLS / 3)} selfAttention calls (seed ${SEED})`, () => {
    const g = generator(SEED + 1000);
    const tally = {};
    for (let c = 0; c < Math.ceil(CALLS / 3); c++) {
      const args = randomSelf(g);
      const where = `selfAttention call ${c} (seed ${SEED}): ${args.x.length} tokens, heads ${args.heads}, ${args.score ?? 'default'}${args.causal ? ', causal' : ''}`;
      const key = onBothBuilds((engine) => engine.selfAttention(args), (r, w) => checkSelf(args, r, w), where);
      tally[key] = (tally[key] ?? 0) + 1;
    }
    assert.ok(tally.ok > CALLS / 6, `too few successes: ${JSON.stringify(tally)}`);
  });
});
