// The engine against the float64 reference (tests/lib/reference.mjs), on both WASM builds:
// every score x normalisation x mask (none, causal, keyLengths incl. 0) and
// softmax temperatures on random shapes from a seeded RNG; self-attention with
// projections, 1/2/4 heads and causal masks; the SIMD build against the scalar
// build; and invariants (uniform weights over identical keys, softmax shift
// invariance, permutation equivariance, input forms, values defaulting to keys).
//
// Tolerances: |got - want| <= atol + rtol |want| with atol 1e-5, rtol 1e-4.
// Inputs are drawn as float32 values (Math.fround) and the reference runs on
// those same values in float64, so only the engine's float32 arithmetic is
// measured. Parameter matrices are scaled by 1/sqrt(fan-in) (as initialisers
// do) so scores stay O(1..10) and the absolute tolerance is meaningful.
// The additive score's tanh is 1 - 2/(exp(2x) + 1) on a float32 exp (see
// src/core/simd.h): absolute error ~1e-7 per hidden unit whatever |x|, so its
// scores get atol 1e-5 + 2e-7 * sum_u |v_u| (<= 1e-5 + 8e-6 for h <= 40).
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { loadEngine } from '../../web/engine/index.js';
import { BUILDS, mulberry32, withEngines } from './builds.mjs';
import { ATOL, RTOL, assertClose, assertShape } from '../lib/assert.mjs';
import { attend64, cols, dot, selfAttention64, toData, toNested, visibleKeys } from '../lib/reference.mjs';


// ---- seeded RNG and random float32 data ----------------------------------------
class Rng {
  constructor(seed) {
    this.next = mulberry32(seed);
  }
  uniform(lo, hi) {
    return Math.fround(lo + (hi - lo) * this.next());
  }
  int(lo, hi) {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }
  matrix(rows, cols, lo = -1, hi = 1, scale = 1) {
    return Array.from({ length: rows }, () => Array.from({ length: cols }, () => Math.fround(this.uniform(lo, hi) * scale)));
  }
  vector(n, lo = -1, hi = 1, scale = 1) {
    return Array.from({ length: n }, () => Math.fround(this.uniform(lo, hi) * scale));
  }
  /** Integer in lo..hi other than `not`. */
  intOtherThan(lo, hi, not) {
    for (;;) {
      const v = this.int(lo, hi);
      if (v !== not) return v;
    }
  }
  shuffle(n) {
    const p = Array.from({ length: n }, (_, i) => i);
    for (let i = n - 1; i > 0; i--) {
      const j = this.int(0, i);
      [p[i], p[j]] = [p[j], p[i]];
    }
    return p;
  }
}

// ---- assertions -----------------------------------------------------------------------
/** Same build-independent layout: -Infinity in the same cells, the rest within a normalised error. */
function assertNormalisedClose(a, b, what, tol = 1e-5) {
  assert.equal(a.rows, b.rows, `${what}.rows`);
  assert.equal(a.cols, b.cols, `${what}.cols`);
  let num = 0, den = 0;
  for (let i = 0; i < a.data.length; i++) {
    const x = a.data[i], y = b.data[i];
    if (y === -Infinity || x === -Infinity) {
      assert.equal(x, y, `${what}[${i}]: -Infinity in one build only (${x} vs ${y})`);
      continue;
    }
    assert.ok(Number.isFinite(x) && Number.isFinite(y), `${what}[${i}]: ${x} vs ${y}`);
    num += (x - y) ** 2;
    den += y * y;
  }
  const rel = den > 0 ? Math.sqrt(num / den) : Math.sqrt(num);
  assert.ok(rel <= tol, `${what}: normalised error ${rel.toExponential(2)} > ${tol}`);
  return rel;
}

function assertSameResult(a, b, what) {
  for (const key of Object.keys(b)) {
    if (Array.isArray(b[key])) {
      assert.equal(a[key].length, b[key].length, `${what}.${key}.length`);
      b[key].forEach((m, h) => assert.deepEqual(a[key][h], m, `${what}.${key}[${h}]`));
    } else {
      assert.deepEqual(a[key], b[key], `${what}.${key}`);
    }
  }
}

// ---- random attention problems ------------------------------------------------------------
const SCORES = ['dot', 'scaled_dot', 'general', 'additive', 'cosine', 'location'];
const MASKS = ['none', 'causal', 'keyLengths'];

function randomKeyLengths(rng, nq, nk) {
  const L = Array.from({ length: nq }, () => rng.int(0, nk));
  L[rng.int(0, nq - 1)] = 0; // at least one fully masked query
  if (nq > 1) {
    let i = rng.int(0, nq - 1);
    while (L[i] === 0 && nq > 1) i = (i + 1) % nq;
    if (L[i] === 0) i = (i + 1) % nq;
    L[i] = nk; // and one that sees every key
  }
  return L;
}

/**
 * A random problem for `score`. For 'sum' every input (and parameter) is
 * positive so no row sum is near zero (e / sum e is ill-conditioned there).
 */
function randomProblem(rng, { score, normalize, maskKind, nq, nk }) {
  const positive = normalize === 'sum';
  const lo = positive ? 0.05 : -1;
  const sameDim = ['dot', 'scaled_dot', 'cosine'].includes(score);
  const dk = rng.int(1, 40);
  const dq = sameDim ? dk : rng.int(1, 40);
  const dv = rng.intOtherThan(1, 40, dk);
  const queries = rng.matrix(nq, dq, lo, 1);
  const keys = rng.matrix(nk, dk, lo, 1);
  const values = rng.matrix(nk, dv, -1, 1);
  let params;
  if (score === 'general') params = { W: rng.matrix(dq, dk, lo, 1, 1 / Math.sqrt(dk)) };
  if (score === 'location') params = { W: rng.matrix(nk, dq, lo, 1, 1 / Math.sqrt(dq)) };
  if (score === 'additive') {
    const h = rng.int(1, 40);
    params = {
      Wq: rng.matrix(h, dq, lo, 1, 1 / Math.sqrt(dq)),
      Wk: rng.matrix(h, dk, lo, 1, 1 / Math.sqrt(dk)),
      v: rng.vector(h, positive ? 0.05 : -1, 1),
    };
  }
  if (score === 'cosine' && rng.next() < 0.5) params = { beta: rng.uniform(0.5, 6) };
  let mask = maskKind;
  if (maskKind === 'keyLengths') mask = { keyLengths: randomKeyLengths(rng, nq, nk) };
  return { queries, keys, values, score, params, normalize, mask };
}

/** Shapes per case: n_q != n_k always, plus single-query and single-key edges. */
function shapesFor(rng) {
  const nq = rng.int(2, 40);
  return [
    { nq, nk: rng.intOtherThan(1, 40, nq) },
    { nq: 1, nk: rng.int(2, 40) },
    { nq: rng.int(2, 40), nk: 1 },
  ];
}

function scoreTolerance(problem) {
  if (problem.score !== 'additive') return { atol: ATOL, rtol: RTOL };
  const vabs = problem.params.v.reduce((s, x) => s + Math.abs(x), 0);
  return { atol: ATOL + 2e-7 * vabs, rtol: RTOL };
}

/** Checks one engine.attend result against attend64 plus the structural rules. */
function checkAttend(engine, problem, what) {
  const r = engine.attend(problem);
  const ref = attend64(problem);
  const nq = problem.queries.length, nk = problem.keys.length, dv = (problem.values ?? problem.keys)[0].length;
  assertShape(r.scores, nq, nk, `${what} scores`);
  assertShape(r.weights, nq, nk, `${what} weights`);
  assertShape(r.context, nq, dv, `${what} context`);
  const tol = scoreTolerance(problem);
  assertClose(r.scores, ref.scores, `${what} scores`, tol);
  assertClose(r.weights, ref.weights, `${what} weights`, tol);
  assertClose(r.context, ref.context, `${what} context`, tol);
  for (let i = 0; i < nq; i++) {
    const L = visibleKeys(problem.mask, i, nk);
    const w = r.weights.data.subarray(i * nk, (i + 1) * nk);
    const z = r.context.data.subarray(i * dv, (i + 1) * dv);
    for (let j = L; j < nk; j++) assert.equal(w[j], 0, `${what}: masked weight [${i}][${j}] is ${w[j]}`);
    if (L === 0) {
      assert.ok(z.every((x) => x === 0), `${what}: fully masked query ${i} must have a zero context, got ${Array.from(z)}`);
    } else {
      const s = w.reduce((a, b) => a + b, 0);
      assert.ok(Math.abs(s - 1) < 1e-4, `${what}: weights of query ${i} sum to ${s}`);
    }
  }
  return r;
}

for (const { simd, name, skip, engine } of await withEngines()) {
  describe(`attend vs float64 reference (${name})`, { skip }, () => {
    let seed = 1000;
    for (const score of SCORES) {
      for (const normalize of ['softmax', 'sum']) {
        for (const maskKind of MASKS) {
          const temperatures = normalize === 'softmax' ? [1, 0.3, 2.5] : [undefined];
          for (const temperature of temperatures) {
            const caseSeed = seed++;
            const label = `${score} / ${normalize}${temperature !== undefined ? ` τ=${temperature}` : ''} / mask ${maskKind}`;
            test(label, () => {
              const rng = new Rng(caseSeed);
              for (const shape of shapesFor(rng)) {
                const problem = randomProblem(rng, { score, normalize, maskKind, ...shape });
                if (temperature !== undefined && temperature !== 1) problem.temperature = temperature;
                const dims = `${shape.nq}x${problem.queries[0].length} q, ${shape.nk}x${problem.keys[0].length} k, d_v ${problem.values[0].length}`;
                checkAttend(engine, problem, `${label} (${dims}, seed ${caseSeed})`);
              }
            });
          }
        }
      }
    }

    test('temperature: scores are e, weights softmax(e / τ); τ → 0 approaches argmax, large τ approaches uniform', () => {
      const rng = new Rng(7);
      const queries = rng.matrix(5, 8), keys = rng.matrix(9, 8);
      const base = engine.attend({ queries, keys });
      for (const temperature of [0.05, 0.5, 4, 1000]) {
        const r = checkAttend(engine, { queries, keys, temperature }, `τ=${temperature}`);
        assert.deepEqual(r.scores.data, base.scores.data, 'the temperature does not change the scores');
      }
      const cold = engine.attend({ queries, keys, temperature: 1e-3 });
      const hot = engine.attend({ queries, keys, temperature: 1e6 });
      for (let i = 0; i < 5; i++) {
        const e = Array.from(base.scores.data.subarray(i * 9, i * 9 + 9));
        const arg = e.indexOf(Math.max(...e));
        assert.ok(cold.weights.data[i * 9 + arg] > 0.99, `cold row ${i} peaks at its max score`);
        for (let j = 0; j < 9; j++) assert.ok(Math.abs(hot.weights.data[i * 9 + j] - 1 / 9) < 1e-4, 'hot rows are uniform');
      }
    });

    test('cosine: a zero query or key scores 0; beta scales the scores', () => {
      const queries = [[0, 0, 0], [1, 2, 3], [-1, 0.5, 2]];
      const keys = [[0, 0, 0], [3, 2, 1], [1, 2, 3], [-2, 1, 0.5]];
      const plain = checkAttend(engine, { queries, keys, score: 'cosine' }, 'cosine');
      for (let j = 0; j < 4; j++) assert.equal(plain.scores.data[j], 0, `zero query vs key ${j}`);
      for (let i = 0; i < 3; i++) assert.equal(plain.scores.data[i * 4], 0, `query ${i} vs zero key`);
      assert.ok(Math.abs(plain.scores.data[1 * 4 + 2] - 1) < 1e-6, 'identical directions score 1');
      const sharp = checkAttend(engine, { queries, keys, score: 'cosine', params: { beta: 4 } }, 'cosine beta 4');
      for (let c = 0; c < 12; c++) assert.ok(Math.abs(sharp.scores.data[c] - 4 * plain.scores.data[c]) < 1e-5);
      // the zero query's row is uniform under softmax (every score 0)
      for (let j = 0; j < 4; j++) assert.ok(Math.abs(plain.weights.data[j] - 0.25) < 1e-6);
    });

    test("mask keyLengths with 0 under normalize 'sum' gives zero weights and context, no error", () => {
      const rng = new Rng(99);
      const problem = {
        queries: rng.matrix(4, 5, 0.1, 1), keys: rng.matrix(6, 5, 0.1, 1), values: rng.matrix(6, 3),
        normalize: 'sum', mask: { keyLengths: [0, 6, 1, 0] },
      };
      const r = checkAttend(engine, problem, 'sum keyLengths');
      for (const i of [0, 3]) {
        assert.ok(r.scores.data.subarray(i * 6, i * 6 + 6).every((x) => x === -Infinity));
        assert.ok(r.weights.data.subarray(i * 6, i * 6 + 6).every((x) => x === 0));
        assert.ok(r.context.data.subarray(i * 3, i * 3 + 3).every((x) => x === 0));
      }
      assert.equal(r.weights.data[2 * 6], 1, 'a single visible key gets weight 1');
    });

    test("mask 'causal' with more queries than keys, and keyLengths as an Int32Array", () => {
      const rng = new Rng(5);
      const queries = rng.matrix(7, 4), keys = rng.matrix(3, 4), values = rng.matrix(3, 2);
      checkAttend(engine, { queries, keys, values, mask: 'causal' }, 'causal 7x3');
      checkAttend(engine, { queries: keys, keys: queries, values: rng.matrix(7, 2), mask: 'causal' }, 'causal 3x7');
      const lengths = [3, 0, 1, 2, 3, 0, 2];
      const a = engine.attend({ queries, keys, values, mask: { keyLengths: lengths } });
      const b = engine.attend({ queries, keys, values, mask: { keyLengths: Int32Array.from(lengths) } });
      assertSameResult(a, b, 'keyLengths array vs Int32Array');
      // keyLengths = n_k everywhere is no mask at all; causal equals keyLengths i+1
      const full = engine.attend({ queries, keys, values, mask: { keyLengths: new Array(7).fill(3) } });
      assertSameResult(full, engine.attend({ queries, keys, values }), 'keyLengths n_k vs none');
      const causal = engine.attend({ queries, keys, values, mask: 'causal' });
      const asLengths = engine.attend({ queries, keys, values, mask: { keyLengths: [1, 2, 3, 3, 3, 3, 3] } });
      assertSameResult(causal, asLengths, "'causal' vs keyLengths i+1");
    });
  });

  describe(`selfAttention vs float64 reference (${name})`, { skip }, () => {
    let engine;
    before(async () => {
      engine = await loadEngine({ simd, threads: 1 });
    });

    function checkSelf(args, what) {
      const r = engine.selfAttention(args);
      const ref = selfAttention64(args);
      const heads = args.heads ?? 1;
      assert.equal(r.scores.length, heads, `${what}: one score matrix per head`);
      assert.equal(r.weights.length, heads, `${what}: one weight matrix per head`);
      for (const key of ['q', 'k', 'v', 'context', 'output']) assertClose(r[key], ref[key], `${what} ${key}`);
      for (let h = 0; h < heads; h++) {
        assertClose(r.scores[h], ref.scores[h], `${what} scores[${h}]`);
        assertClose(r.weights[h], ref.weights[h], `${what} weights[${h}]`);
      }
      return r;
    }

    let seed = 5000;
    for (const heads of [1, 2, 4]) {
      for (const causal of [false, true]) {
        for (const score of [undefined, 'dot', 'scaled_dot', 'cosine']) {
          const caseSeed = seed++;
          const label = `wq/wk/wv/wo, ${heads} head(s), causal ${causal}, score ${score ?? 'default (scaled_dot)'}`;
          test(label, () => {
            const rng = new Rng(caseSeed);
            for (const n of [1, rng.int(2, 12), rng.int(13, 40)]) {
              const dIn = rng.int(1, 40);
              const dk = heads * rng.int(1, Math.floor(40 / heads));
              const dv = heads * rng.int(1, Math.floor(40 / heads));
              const dOut = rng.int(1, 40);
              const s = 1 / Math.sqrt(dIn);
              const args = {
                x: rng.matrix(n, dIn), wq: rng.matrix(dIn, dk, -1, 1, s), wk: rng.matrix(dIn, dk, -1, 1, s),
                wv: rng.matrix(dIn, dv, -1, 1, s), wo: rng.matrix(dv, dOut, -1, 1, 1 / Math.sqrt(dv)), heads, causal,
              };
              if (score) args.score = score;
              checkSelf(args, `${label} (n ${n}, d_in ${dIn}, d_k ${dk}, d_v ${dv}, d_out ${dOut}, seed ${caseSeed})`);
            }
          });
        }
      }
    }

    test('without weights: Q = K = V = X, default score dot, heads split x', () => {
      const rng = new Rng(77);
      for (const heads of [1, 2, 4]) {
        for (const causal of [false, true]) {
          const x = rng.matrix(rng.int(2, 30), 4 * rng.int(1, 8));
          const r = checkSelf({ x, heads, causal }, `no weights, ${heads} heads, causal ${causal}`);
          assert.deepEqual(r.output.data, r.context.data, 'output = context without wo');
        }
      }
    });

    test('only some projections: wv alone, wo alone, wq+wk without wv', () => {
      const rng = new Rng(78);
      const x = rng.matrix(9, 6);
      checkSelf({ x, wv: rng.matrix(6, 4, -1, 1, 0.4) }, 'wv only');
      checkSelf({ x, wo: rng.matrix(6, 3, -1, 1, 0.4) }, 'wo only');
      checkSelf({ x, wq: rng.matrix(6, 8, -1, 1, 0.4), wk: rng.matrix(6, 8, -1, 1, 0.4), heads: 2 }, 'wq+wk only');
      checkSelf({ x, wv: rng.matrix(6, 4, -1, 1, 0.4), heads: 2, causal: true, score: 'cosine' }, 'wv only, cosine');
    });

    test('a lone wq (omitted wk = identity, K = X) is scaled_dot by default', () => {
      // Contract: each of wq/wk/wv/wo is optional and an omitted one is the
      // identity; the default score is 'dot' only "when neither wq nor wk" is given.
      const rng = new Rng(79);
      const x = rng.matrix(5, 4);
      checkSelf({ x, wq: rng.matrix(4, 4, -1, 1, 0.5) }, 'wq only');
      checkSelf({ x, wk: rng.matrix(4, 4, -1, 1, 0.5), heads: 2 }, 'wk only');
    });

    test('heads = concatenation of single-head attention on column blocks', () => {
      const rng = new Rng(80);
      const x = rng.matrix(11, 8);
      const wq = rng.matrix(8, 8, -1, 1, 0.35), wk = rng.matrix(8, 8, -1, 1, 0.35), wv = rng.matrix(8, 12, -1, 1, 0.35);
      const r = engine.selfAttention({ x, wq, wk, wv, heads: 4, causal: true });
      for (let h = 0; h < 4; h++) {
        const one = engine.attend({
          queries: cols(toNested(r.q), 2 * h, 2), keys: cols(toNested(r.k), 2 * h, 2), values: cols(toNested(r.v), 3 * h, 3),
          score: 'scaled_dot', mask: 'causal',
        });
        assertClose(r.weights[h], toNested(one.weights), `head ${h} weights`);
        assertClose({ rows: 11, cols: 3, data: Float32Array.from(cols(toNested(r.context), 3 * h, 3).flat()) }, toNested(one.context), `head ${h} context`);
      }
    });
  });

  describe(`invariants and input forms (${name})`, { skip }, () => {
    let engine;
    before(async () => {
      engine = await loadEngine({ simd, threads: 1 });
    });

    test('identical keys give uniform weights (every score, softmax and sum, with masks)', () => {
      const rng = new Rng(31);
      const key = rng.vector(6, 0.1, 1);
      const keys = Array.from({ length: 7 }, () => key.slice());
      const queries = rng.matrix(4, 6, 0.1, 1);
      const params = {
        general: { W: rng.matrix(6, 6, 0.1, 1, 0.4) },
        additive: { Wq: rng.matrix(5, 6, 0.1, 1, 0.4), Wk: rng.matrix(5, 6, 0.1, 1, 0.4), v: rng.vector(5, 0.1, 1) },
      };
      for (const score of ['dot', 'scaled_dot', 'general', 'additive', 'cosine']) {
        for (const normalize of ['softmax', 'sum']) {
          const r = engine.attend({ queries, keys, score, params: params[score], normalize });
          for (const w of r.weights.data) assert.ok(Math.abs(w - 1 / 7) < 1e-6, `${score}/${normalize}: weight ${w}`);
          // the context of identical values is that value
          for (let i = 0; i < 4; i++) {
            for (let c = 0; c < 6; c++) assert.ok(Math.abs(r.context.data[i * 6 + c] - key[c]) < 1e-6);
          }
        }
        const masked = engine.attend({ queries, keys, score, params: params[score], mask: { keyLengths: [1, 7, 3, 0] } });
        [1, 7, 3, 0].forEach((L, i) => {
          for (let j = 0; j < 7; j++) {
            const want = j < L ? 1 / L : 0;
            assert.ok(Math.abs(masked.weights.data[i * 7 + j] - want) < 1e-6, `${score} masked [${i}][${j}]`);
          }
        });
      }
    });

    test('softmax ignores a constant shift of a row of scores (location and general scores)', () => {
      const rng = new Rng(32);
      for (const temperature of [1, 0.5, 3]) {
        // location: q_i[0] = 1, so adding c to column 0 of W adds c to every score e_ij = (W q_i)_j
        const queries = rng.matrix(5, 4).map((q) => [1, ...q.slice(1)]);
        const keys = rng.matrix(6, 3);
        const W = rng.matrix(6, 4, -1, 1, 0.5);
        const c = 2.75;
        const Wc = W.map((r) => [Math.fround(r[0] + c), ...r.slice(1)]);
        const a = engine.attend({ queries, keys, score: 'location', params: { W }, temperature });
        const b = engine.attend({ queries, keys, score: 'location', params: { W: Wc }, temperature });
        const ref = attend64({ queries, keys, score: 'location', params: { W: Wc }, temperature });
        const scoresA = toNested(a.scores).map((r) => r.map((e, j) => e + (Wc[j][0] - W[j][0])));
        assertClose(b.scores, scoresA, `location τ=${temperature}: scores shift by c`);
        assertClose(b.weights, toNested(a.weights), `location τ=${temperature}: weights unchanged`);
        assertClose(b.weights, ref.weights, `location τ=${temperature}: reference`);
        assertClose(b.context, toNested(a.context), `location τ=${temperature}: context unchanged`);
        // general: k_j[0] = 1, so W + u e_0^T adds q_i . u to every score of row i
        const keys1 = rng.matrix(6, 3).map((k) => [1, ...k.slice(1)]);
        const q3 = rng.matrix(5, 3);
        const G = rng.matrix(3, 3, -1, 1, 0.5);
        const u = rng.vector(3, -2, 2);
        const Gu = G.map((r, i) => [Math.fround(r[0] + u[i]), ...r.slice(1)]);
        const g1 = engine.attend({ queries: q3, keys: keys1, score: 'general', params: { W: G }, temperature });
        const g2 = engine.attend({ queries: q3, keys: keys1, score: 'general', params: { W: Gu }, temperature });
        assertClose(g2.weights, toNested(g1.weights), `general τ=${temperature}: weights unchanged`);
        assertClose(g2.context, toNested(g1.context), `general τ=${temperature}: context unchanged`);
        const shift = q3.map((q) => dot(q, Gu.map((r, i) => r[0] - G[i][0])));
        assertClose(g2.scores, toNested(g1.scores).map((r, i) => r.map((e) => e + shift[i])), `general τ=${temperature}: scores shift by q.u`);
      }
    });

    test('self-attention without a mask is permutation-equivariant', () => {
      const rng = new Rng(33);
      for (const [heads, withWeights] of [[1, false], [2, true], [4, true]]) {
        const n = 13, d = 8;
        const x = rng.matrix(n, d);
        const args = withWeights
          ? { wq: rng.matrix(d, 8, -1, 1, 0.35), wk: rng.matrix(d, 8, -1, 1, 0.35), wv: rng.matrix(d, 12, -1, 1, 0.35), wo: rng.matrix(12, 5, -1, 1, 0.3) }
          : {};
        const perm = rng.shuffle(n); // x'[i] = x[perm[i]]
        const a = engine.selfAttention({ x, heads, ...args });
        const b = engine.selfAttention({ x: perm.map((p) => x[p]), heads, ...args });
        const A = { output: toNested(a.output), context: toNested(a.context) };
        assertClose(b.output, perm.map((p) => A.output[p]), `${heads} heads: output rows permute`);
        assertClose(b.context, perm.map((p) => A.context[p]), `${heads} heads: context rows permute`);
        for (let h = 0; h < heads; h++) {
          const W = toNested(a.weights[h]);
          assertClose(b.weights[h], perm.map((p) => perm.map((q) => W[p][q])), `${heads} heads: weights[${h}] = P W P^T`);
        }
      }
    });

    test('{ rows, cols, data } and nested arrays give identical results', () => {
      const rng = new Rng(34);
      const queries = rng.matrix(5, 4), keys = rng.matrix(7, 6), values = rng.matrix(7, 3);
      const Wq = rng.matrix(3, 4, -1, 1, 0.5), Wk = rng.matrix(3, 6, -1, 1, 0.5), v = rng.vector(3);
      const W = rng.matrix(4, 6, -1, 1, 0.4), L = rng.matrix(7, 4, -1, 1, 0.4);
      const mask = { keyLengths: [7, 0, 3, 1, 5] };
      const cases = [
        ['additive', { Wq, Wk, v }, { Wq: toData(Wq), Wk: toData(Wk), v: Float32Array.from(v) }],
        ['general', { W }, { W: toData(W) }],
        ['location', { W: L }, { W: toData(L) }],
      ];
      for (const [score, nested, typed] of cases) {
        const a = engine.attend({ queries, keys, values, score, params: nested, mask });
        const b = engine.attend({ queries: toData(queries), keys: toData(keys), values: toData(values), score, params: typed, mask });
        assertSameResult(a, b, score);
        checkAttend(engine, { queries, keys, values, score, params: nested, mask }, `${score} reference`);
      }
      // a mix of forms in one call
      const mixed = engine.attend({ queries: toData(queries), keys, values: toData(values), score: 'additive', params: { Wq, Wk: toData(Wk), v } });
      assertSameResult(mixed, engine.attend({ queries, keys, values, score: 'additive', params: { Wq, Wk, v } }), 'mixed forms');
      // outputs ({ rows, cols, data }) can be fed back as inputs
      const z = engine.attend({ queries: toData(keys), keys }).context; // 7 x 6
      const again = engine.attend({ queries: z, keys: z, values: z, score: 'scaled_dot' });
      assertSameResult(again, engine.attend({ queries: toNested(z), keys: toNested(z), values: toNested(z), score: 'scaled_dot' }), 'output fed back');
      assertShape(again.context, 7, 6, 'context from an output matrix');

      const x = rng.matrix(6, 8);
      const w = { wq: rng.matrix(8, 4, -1, 1, 0.4), wk: rng.matrix(8, 4, -1, 1, 0.4), wv: rng.matrix(8, 6, -1, 1, 0.4), wo: rng.matrix(6, 2, -1, 1, 0.4) };
      const s1 = engine.selfAttention({ x, ...w, heads: 2, causal: true });
      const s2 = engine.selfAttention({
        x: toData(x), wq: toData(w.wq), wk: toData(w.wk), wv: toData(w.wv), wo: toData(w.wo), heads: 2, causal: true,
      });
      assertSameResult(s1, s2, 'selfAttention');
    });

    test('values default to keys', () => {
      const rng = new Rng(35);
      for (const score of SCORES) {
        const p = randomProblem(rng, { score, normalize: 'softmax', maskKind: 'causal', nq: 6, nk: 9 });
        delete p.values;
        const a = engine.attend(p);
        const b = engine.attend({ ...p, values: p.keys });
        assertSameResult(a, b, score);
        assertShape(a.context, 6, p.keys[0].length, `${score} context`);
        checkAttend(engine, p, `${score} without values`);
      }
    });

    test('inputs are not modified', () => {
      const rng = new Rng(36);
      const queries = toData(rng.matrix(4, 5)), keys = toData(rng.matrix(6, 5));
      const copyQ = queries.data.slice(), copyK = keys.data.slice();
      engine.attend({ queries, keys, mask: 'causal' });
      assert.deepEqual(queries.data, copyQ);
      assert.deepEqual(keys.data, copyK);
    });
  });
}

describe('SIMD build vs scalar build', { skip: BUILDS[0].skip }, () => {
  let simd, scalar;
  before(async () => {
    [simd, scalar] = await Promise.all([loadEngine({ simd: true, threads: 1 }), loadEngine({ simd: false })]);
    assert.equal(simd.simd, true);
    assert.equal(scalar.simd, false);
  });

  function compareAttend(problem, what) {
    const a = simd.attend(problem), b = scalar.attend(problem);
    for (const key of ['scores', 'weights', 'context']) assertNormalisedClose(a[key], b[key], `${what} ${key}`);
  }

  test('every score, normalisation and mask on random shapes', () => {
    let seed = 9000;
    for (const score of SCORES) {
      for (const normalize of ['softmax', 'sum']) {
        for (const maskKind of MASKS) {
          const rng = new Rng(seed++);
          for (const shape of shapesFor(rng)) {
            const p = randomProblem(rng, { score, normalize, maskKind, ...shape });
            if (normalize === 'softmax') p.temperature = rng.uniform(0.3, 3);
            compareAttend(p, `${score}/${normalize}/${maskKind} ${shape.nq}x${shape.nk}`);
          }
        }
      }
    }
  });

  test('256 x 64: every score, unmasked and causal', () => {
    const rng = new Rng(9500);
    const n = 256, d = 64;
    const queries = toData(rng.matrix(n, d)), keys = toData(rng.matrix(n, d)), values = toData(rng.matrix(n, d));
    const s = 1 / Math.sqrt(d);
    const params = {
      general: { W: toData(rng.matrix(d, d, -1, 1, s)) },
      additive: { Wq: toData(rng.matrix(d, d, -1, 1, s)), Wk: toData(rng.matrix(d, d, -1, 1, s)), v: rng.vector(d) },
      location: { W: toData(rng.matrix(n, d, -1, 1, s)) },
      cosine: { beta: 5 },
    };
    for (const score of SCORES) {
      for (const mask of ['none', 'causal']) {
        compareAttend({ queries, keys, values, score, params: params[score], mask }, `256x64 ${score} ${mask}`);
      }
    }
    // and one against float64 too
    const q = toNested(queries), k = toNested(keys), v = toNested(values);
    for (const engine of [simd, scalar]) {
      const r = engine.attend({ queries, keys, values, score: 'scaled_dot', mask: 'causal' });
      const ref = attend64({ queries: q, keys: k, values: v, score: 'scaled_dot', mask: 'causal' });
      assertClose(r.weights, ref.weights, `256x64 ${engine.simd ? 'SIMD' : 'scalar'} weights`);
      assertClose(r.context, ref.context, `256x64 ${engine.simd ? 'SIMD' : 'scalar'} context`);
    }
  });

  test('self-attention 256 x 64 with projections, 1/2/4 heads, causal', () => {
    const rng = new Rng(9600);
    const n = 256, d = 64, s = 1 / Math.sqrt(d);
    const x = toData(rng.matrix(n, d));
    const w = {
      wq: toData(rng.matrix(d, d, -1, 1, s)), wk: toData(rng.matrix(d, d, -1, 1, s)),
      wv: toData(rng.matrix(d, d, -1, 1, s)), wo: toData(rng.matrix(d, 32, -1, 1, s)),
    };
    for (const heads of [1, 2, 4]) {
      for (const causal of [false, true]) {
        const a = simd.selfAttention({ x, ...w, heads, causal }), b = scalar.selfAttention({ x, ...w, heads, causal });
        const what = `self 256x64 ${heads} heads causal ${causal}`;
        for (const key of ['q', 'k', 'v', 'context', 'output']) assertNormalisedClose(a[key], b[key], `${what} ${key}`);
        for (let h = 0; h < heads; h++) {
          assertNormalisedClose(a.scores[h], b.scores[h], `${what} scores[${h}]`);
          assertNormalisedClose(a.weights[h], b.weights[h], `${what} weights[${h}]`);
        }
      }
    }
    const ref = selfAttention64({ x: toNested(x), wq: toNested(w.wq), wk: toNested(w.wk), wv: toNested(w.wv), wo: toNested(w.wo), heads: 4, causal: true });
    const r = simd.selfAttention({ x, ...w, heads: 4, causal: true });
    assertClose(r.output, ref.output, 'self 256x64 SIMD output vs float64');
  });
});
