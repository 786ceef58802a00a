// The tutorial's worked example ("Your journey starts with one step", six 3-d
// embeddings) through the JS API, on both WASM builds: the dot scores, the
// naive (sum) and softmax weights of the query "journey" to the tutorial's four
// decimals, its context vector, and the full 6x6 self-attention without
// trainable weights, all against the float64 reference (tests/lib/reference.mjs).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { withEngines } from './builds.mjs';
import { assertClose, assertShape } from '../lib/assert.mjs';
import { attend64, selfAttention64, toNested } from '../lib/reference.mjs';


const TOKENS = ['Your', 'journey', 'starts', 'with', 'one', 'step'];
const X = [
  [0.43, 0.15, 0.89], // Your     (x^1)
  [0.22, 0.58, 0.33], // journey  (x^2)
  [0.77, 0.25, 0.10], // starts   (x^3)
  [0.05, 0.80, 0.55], // with     (x^4)
  [0.57, 0.85, 0.64], // one      (x^5)
  [0.55, 0.87, 0.66], // step     (x^6)
];
// The engine computes in float32: the float64 reference starts from the same
// (rounded) inputs so only the arithmetic differs.
const X32 = X.map((row) => row.map(Math.fround));

// The tutorial's printed values for the query "journey" (x^2).
const TUTORIAL_SCORES = [0.4753, 0.4937, 0.3474, 0.6565, 0.8296, 0.8434];
const TUTORIAL_SUM_WEIGHTS = [0.1304, 0.1354, 0.0953, 0.1801, 0.2275, 0.2313];
const TUTORIAL_SOFTMAX_WEIGHTS = [0.1435, 0.1462, 0.1263, 0.1720, 0.2046, 0.2074];

const TIGHT = { atol: 1e-6, rtol: 1e-5 };

/** The tutorial prints four decimals: round the engine's numbers the same way. */
function assertFourDecimals(data, want, what) {
  assert.deepEqual(Array.from(data, (x) => x.toFixed(4)), want.map((x) => x.toFixed(4)), what);
}
const row = (m, i) => m.data.subarray(i * m.cols, (i + 1) * m.cols);

for (const { simd, name, skip, engine } of await withEngines()) {
  describe(`tutorial example (${name})`, { skip }, () => {
    test('loads the requested build', () => {
      assert.equal(engine.simd, simd);
    });

    test('dot scores of the query "journey" against every token', () => {
      const r = engine.attend({ queries: [X[1]], keys: X, score: 'dot' });
      assertShape(r.scores, 1, 6, 'scores');
      assertFourDecimals(r.scores.data, TUTORIAL_SCORES, 'attn_score_2');
      assertClose(r.scores, attend64({ queries: [X32[1]], keys: X32 }).scores, 'scores vs float64', TIGHT);
    });

    test("naive weights (normalize: 'sum') are the tutorial's score / sum", () => {
      const r = engine.attend({ queries: [X[1]], keys: X, normalize: 'sum' });
      assertShape(r.weights, 1, 6, 'weights');
      assertFourDecimals(r.weights.data, TUTORIAL_SUM_WEIGHTS, 'attn_weight_2_tmp');
      assertClose(r.weights, attend64({ queries: [X32[1]], keys: X32, normalize: 'sum' }).weights, 'sum weights vs float64', TIGHT);
      const total = r.weights.data.reduce((a, b) => a + b, 0);
      assert.ok(Math.abs(total - 1) < 1e-6, `weights sum to ${total}`);
    });

    test('softmax weights (the default normalisation) match the tutorial', () => {
      const r = engine.attend({ queries: [X[1]], keys: X });
      assertFourDecimals(r.weights.data, TUTORIAL_SOFTMAX_WEIGHTS, 'attn_weight_2');
      assertClose(r.weights, attend64({ queries: [X32[1]], keys: X32 }).weights, 'softmax weights vs float64', TIGHT);
      const total = r.weights.data.reduce((a, b) => a + b, 0);
      assert.ok(Math.abs(total - 1) < 1e-6, `weights sum to ${total}`);
      assert.ok(r.weights.data.every((w) => w > 0), 'softmax weights are positive');
      // explicit options give the same numbers as the defaults
      const explicit = engine.attend({
        queries: [X[1]], keys: X, values: X, score: 'dot', normalize: 'softmax', temperature: 1, mask: 'none',
      });
      assert.deepEqual(explicit.weights.data, r.weights.data);
      assert.deepEqual(explicit.context.data, r.context.data);
    });

    test('context vector z^(2) of "journey" = sum_j a_2j x^(j) (float64)', () => {
      const r = engine.attend({ queries: [X[1]], keys: X });
      assertShape(r.context, 1, 3, 'context');
      assertClose(r.context, attend64({ queries: [X32[1]], keys: X32 }).context, 'z2 vs float64', TIGHT);
      assertFourDecimals(r.context.data, [0.4304, 0.6298, 0.5510], 'z2');
    });

    test("the tutorial's printed z2 [0.4419, 0.6515, 0.5683] is the context of the query [0.55, 0.87, 0.66]", () => {
      // The tutorial prints z2 = [0.4419, 0.6515, 0.5683] next to the weights of
      // "journey" = [0.22, 0.58, 0.33], but that vector is the context of the
      // query x^(6) = [0.55, 0.87, 0.66] (scores 0.9544, 0.8434, 0.7070, ...):
      // the engine agrees with float64 on both.
      const r = engine.attend({ queries: [X[5]], keys: X });
      assertFourDecimals(r.scores.data, [0.9544, 0.8434, 0.7070, 1.0865, 1.4754, 1.4950], 'scores of x^(6)');
      assertFourDecimals(r.context.data, [0.4419, 0.6515, 0.5683], 'context of x^(6)');
      assertClose(r.context, attend64({ queries: [X32[5]], keys: X32 }).context, 'context of x^(6) vs float64', TIGHT);
    });

    test('full 6x6 self-attention without trainable weights: selfAttention({ x })', () => {
      const ref = selfAttention64({ x: X32 });
      const r = engine.selfAttention({ x: X });
      for (const key of ['q', 'k', 'v']) {
        assertShape(r[key], 6, 3, key);
        assert.deepEqual(Array.from(r[key].data), X32.flat(), `${key} = x without weights`);
      }
      assert.equal(r.scores.length, 1, 'one head: one score matrix');
      assert.equal(r.weights.length, 1, 'one head: one weight matrix');
      assertShape(r.scores[0], 6, 6, 'scores[0]');
      assertShape(r.weights[0], 6, 6, 'weights[0]');
      assertShape(r.context, 6, 3, 'context');
      assertShape(r.output, 6, 3, 'output');
      assertClose(r.scores[0], ref.scores[0], 'scores (x x^T)', TIGHT);
      assertClose(r.weights[0], ref.weights[0], 'weights', TIGHT);
      assertClose(r.context, ref.context, 'context', TIGHT);
      assertClose(r.output, ref.context, 'output (= context without wo)', TIGHT);
      // row "journey" is the tutorial's
      assertFourDecimals(row(r.scores[0], 1), TUTORIAL_SCORES, 'scores row journey');
      assertFourDecimals(row(r.weights[0], 1), TUTORIAL_SOFTMAX_WEIGHTS, 'weights row journey');
      for (let i = 0; i < 6; i++) {
        const s = row(r.weights[0], i).reduce((a, b) => a + b, 0);
        assert.ok(Math.abs(s - 1) < 1e-6, `weights row ${TOKENS[i]} sums to ${s}`);
      }
      // scores x x^T are symmetric
      for (let i = 0; i < 6; i++) {
        for (let j = 0; j < i; j++) {
          const a = r.scores[0].data[i * 6 + j], b = r.scores[0].data[j * 6 + i];
          assert.ok(Math.abs(a - b) <= 1e-6, `scores[${i}][${j}] = ${a} vs scores[${j}][${i}] = ${b}`);
        }
      }
    });

    test('full 6x6 attention with every token as a query: attend({ queries: x, keys: x })', () => {
      const ref = attend64({ queries: X32, keys: X32 });
      const r = engine.attend({ queries: X, keys: X });
      assertShape(r.scores, 6, 6, 'scores');
      assertShape(r.weights, 6, 6, 'weights');
      assertShape(r.context, 6, 3, 'context');
      assertClose(r.scores, ref.scores, 'scores', TIGHT);
      assertClose(r.weights, ref.weights, 'weights', TIGHT);
      assertClose(r.context, ref.context, 'context', TIGHT);
      const self = engine.selfAttention({ x: X });
      assertClose(r.weights, toNested(self.weights[0]), 'attend vs selfAttention weights', TIGHT);
      assertClose(r.context, toNested(self.context), 'attend vs selfAttention context', TIGHT);
    });

    test('sum-normalised 6x6 weights match float64 too', () => {
      const ref = attend64({ queries: X32, keys: X32, normalize: 'sum' }).weights;
      const r = engine.attend({ queries: X, keys: X, normalize: 'sum' });
      assertClose(r.weights, ref, 'sum weights', TIGHT);
      assertFourDecimals(row(r.weights, 1), TUTORIAL_SUM_WEIGHTS, 'sum weights row journey');
    });
  });
}
