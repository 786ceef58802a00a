// Numbers at the edges of float32 through the JS API, on both WASM builds:
// tiny temperatures, large close scores, exp underflow, cosine of huge and tiny
// vectors, overflowing scores / contexts / self-attention results (ERR_VALUE
// naming what overflowed, never a silent inf, NaN or fake masked cell), the
// 'sum' rule near zero, the work limit, and every mask combination. Expected
// values are worked out in float64 here.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { withEngines } from './builds.mjs';

const f32 = Math.fround;

/** Asserts fn throws an AttnlabError with `code` whose message contains every string of `names`. */
function throwsCode(fn, code, names = []) {
  assert.throws(fn, (err) => {
    assert.equal(err.name, 'AttnlabError', `not an AttnlabError: ${err}`);
    assert.equal(err.code, code, `code ${err.code}: ${err.message}`);
    for (const n of names) assert.ok(err.message.includes(n), `message lacks "${n}": ${err.message}`);
    return true;
  });
}

const near = (got, want, tol, what) =>
  assert.ok(Math.abs(got - want) <= tol, `${what}: got ${got}, want ${want} (tolerance ${tol})`);

for (const { engine, ...build } of await withEngines()) {
  describe(`edges of float32 (${build.name})`, { skip: build.skip }, () => {
    test('temperature 1e-40 puts all the weight on the largest score', () => {
      const r = engine.attend({ queries: [[1]], keys: [[1], [2]], temperature: 1e-40 });
      assert.deepEqual(Array.from(r.weights.data), [0, 1]);
      assert.deepEqual(Array.from(r.context.data), [2]);
      const tie = engine.attend({ queries: [[1]], keys: [[2], [1], [2]], temperature: 1e-40 });
      assert.deepEqual(Array.from(tie.weights.data), [0.5, 0, 0.5]);
    });

    test('large, close scores at tau 0.3: exp((e - max) / tau)', () => {
      const r = engine.attend({ queries: [[1]], keys: [[10000], [9999.5]], temperature: 0.3 });
      const a0 = 1 / (1 + Math.exp(-0.5 / f32(0.3))); // 0.841131...
      near(r.weights.data[0], a0, 5e-7, 'weight 0');
      near(r.weights.data[1], 1 - a0, 5e-7, 'weight 1');
    });

    test('exp underflows to 0: a weight-0 key with a huge value adds nothing', () => {
      const r = engine.attend({ queries: [[1]], keys: [[-1000], [0]], values: [[3e38], [1]] });
      assert.equal(r.weights.data[0], 0);
      assert.equal(r.context.data[0], 1);
    });

    test('cosine of huge, tiny and subnormal vectors', () => {
      const cases = [
        [[3e38, 3e38], [3e38, 3e38], 1],
        [[3e38, 3e38], [3e38, -3e38], 0],
        [[1e20, 0], [1e20, 1e20], Math.SQRT1_2],
        [[1e-23, 2e-23], [1e-23, 2e-23], 1],
        [[1e-23, 2e-23], [1e-23, 0], 1 / Math.sqrt(5)],
        [[1e-44, 0], [1, 1], Math.SQRT1_2],
      ];
      for (const [q, k, want] of cases) {
        const r = engine.attend({ queries: [q], keys: [k], score: 'cosine' });
        const e = r.scores.data[0];
        assert.ok(Number.isFinite(e), `cosine(${q}, ${k}) is ${e}`);
        near(e, want, 1e-6, `cosine(${q}, ${k})`);
      }
      const beta = engine.attend({ queries: [[3e38, 1]], keys: [[3e38, 1], [1e-30, 0]], score: 'cosine', params: { beta: 5 } });
      near(beta.scores.data[0], 5, 5e-6, 'beta x cosine 1');
      near(beta.scores.data[1], 5, 5e-6, 'beta x cosine of parallel huge and tiny');
    });

    test('a NaN or -inf score is ERR_VALUE naming the cell, never a masked-looking cell', () => {
      throwsCode(() => engine.attend({ queries: [[1e20, 1e20]], keys: [[0, 0], [1e20, -1e20]] }), 'ERR_VALUE', ['scores[0][1]', 'overflows']);
      throwsCode(() => engine.attend({ queries: [[1e20]], keys: [[1], [-1e20]] }), 'ERR_VALUE', ['scores[0][1]']);
      throwsCode(() => engine.attend({ queries: [[1e20]], keys: [[1], [-1e20]], outputs: ['context'] }), 'ERR_VALUE', ['scores[0][1]']);
      throwsCode(() => engine.attend({ queries: [[1e20]], keys: [[1], [-1e20]], normalize: 'sum' }), 'ERR_VALUE', ['scores']);
      // a longer row, so the vector path of the max sees it
      const keys = Array.from({ length: 13 }, (_, j) => [j === 9 ? -1e20 : j * 1e-3]);
      throwsCode(() => engine.attend({ queries: [[1e20]], keys }), 'ERR_VALUE', ['scores[0][9]']);
      // masked away, the same key is fine: its cell is the masked -inf
      const masked = engine.attend({ queries: [[1e20]], keys: [[1], [-1e20]], mask: { keyLengths: [1] } });
      assert.deepEqual(Array.from(masked.scores.data), [f32(1e20), -Infinity]);
      assert.deepEqual(Array.from(masked.weights.data), [1, 0]);
    });

    test('a NaN in the additive score\'s tanh is ERR_VALUE on every build, never a score of 1', () => {
      // K Wk^T = 1.5 * 3e38 + 2 * -3e38 is inf + -inf = NaN in float32: tanh(NaN) must stay NaN
      // through the exp's clamps (min and max), so the score is NaN and the call fails
      const args = { queries: [[1]], keys: [[1.5, 2]], score: 'additive', params: { Wq: [[0]], Wk: [[3e38, -3e38]], v: [1] } };
      throwsCode(() => engine.attend(args), 'ERR_VALUE', ['scores[0][0]', 'NaN']);
      throwsCode(() => engine.attend({ ...args, outputs: ['context'] }), 'ERR_VALUE', ['scores[0][0]', 'NaN']);
    });

    test('a context that overflows float32 is ERR_VALUE naming it', () => {
      // 'sum' weights [2, -1] on values [3e38, -3e38]: 9e38
      throwsCode(() => engine.attend({ queries: [[1]], keys: [[1], [-0.5]], values: [[3e38], [-3e38]], normalize: 'sum' }),
        'ERR_VALUE', ['context[0][0]', 'overflows']);
      throwsCode(() => engine.attend({ queries: [[1]], keys: [[1], [-0.5]], values: [[3e38], [-3e38]], normalize: 'sum', outputs: ['context'] }),
        'ERR_VALUE', ['context']);
    });

    test('self-attention: an overflowing projection or output is ERR_VALUE naming it', () => {
      const x = [[1e20]], tiny = [[1e-20]], big = [[1e20]];
      throwsCode(() => engine.selfAttention({ x, wq: tiny, wk: tiny, wo: big }), 'ERR_VALUE', ['output[0][0]']);
      throwsCode(() => engine.selfAttention({ x, wq: tiny, wk: tiny, wv: big }), 'ERR_VALUE', ['v[0][0]']);
      throwsCode(() => engine.selfAttention({ x, wq: big, wk: tiny }), 'ERR_VALUE', ['q[0][0]']);
      throwsCode(() => engine.selfAttention({ x: [[1e20], [1]] }), 'ERR_VALUE', ['scores']);
    });

    test("'sum' near zero follows one rule: |sum| <= n eps sum|e| is ERR_ZERO_SUM", () => {
      throwsCode(() => engine.attend({ queries: [[1]], keys: [[1], [-1]], normalize: 'sum' }), 'ERR_ZERO_SUM', ['row 0']);
      throwsCode(() => engine.attend({ queries: [[1]], keys: [[1], [-(1 - 2 ** -24)]], normalize: 'sum' }), 'ERR_ZERO_SUM', ['row 0']);
      const ok = engine.attend({ queries: [[1]], keys: [[1], [-0.999]], normalize: 'sum' });
      near(ok.weights.data[0], 1 / (1 - f32(0.999)), 1e-3, 'weight 0 of [1, -0.999]');
      const tiny = engine.attend({ queries: [[1]], keys: [[1e-30], [0]], normalize: 'sum' });
      assert.deepEqual(Array.from(tiny.weights.data), [1, 0]);
    });

    test("temperature with 'sum' cancels, as documented", () => {
      const a = engine.attend({ queries: [[1]], keys: [[1], [2], [5]], normalize: 'sum', temperature: 0.3 });
      const b = engine.attend({ queries: [[1]], keys: [[1], [2], [5]], normalize: 'sum' });
      assert.deepEqual(Array.from(a.weights.data), Array.from(b.weights.data));
      assert.deepEqual(Array.from(b.weights.data), [0.125, 0.25, 0.625]);
    });

    test('the work limit: ERR_LIMIT before a long call, fast calls inside it', () => {
      const mat = (rows, cols, fill = 0.01) => ({ rows, cols, data: new Float32Array(rows * cols).fill(fill) });
      // the largest additive call that passed before ran for about a minute
      const t0 = performance.now();
      throwsCode(() => engine.attend({
        queries: mat(2048, 1), keys: mat(2048, 1), score: 'additive',
        params: { Wq: mat(4096, 1), Wk: mat(4096, 1), v: new Float32Array(4096) },
      }), 'ERR_LIMIT', ['work']);
      assert.ok(performance.now() - t0 < 1000, 'rejecting took too long');
      throwsCode(() => engine.attend({ queries: mat(2048, 2048), keys: mat(2048, 2048) }), 'ERR_LIMIT', ['work']);
      throwsCode(() => engine.selfAttention({ x: mat(2048, 512) }), 'ERR_LIMIT', ['work']);
      const r = engine.attend({ queries: mat(8, 4), keys: mat(8, 4), score: 'additive', params: { Wq: mat(3, 4), Wk: mat(3, 4), v: [1, 2, 3] } });
      assert.equal(r.weights.data.length, 64);
    });

    test('every mask combination the API accepts', () => {
      const q = [[0.1, 0.2], [0.3, -0.1], [0.5, 0.5]];
      const k = [[1, 0], [0, 1], [1, 1], [-1, 0.5]];
      const visible = (mask, i) => {
        let L = 4;
        if (mask === 'causal' || mask?.causal) L = Math.min(L, i + 1);
        if (mask?.keyLengths) L = Math.min(L, mask.keyLengths[i]);
        return L;
      };
      for (const mask of [undefined, 'none', 'causal', { keyLengths: [4, 0, 2] }, { keyLengths: [4, 0, 2], causal: true },
        { keyLengths: new Int32Array([1, 3, 4]), causal: false }]) {
        const r = engine.attend({ queries: q, keys: k, mask });
        for (let i = 0; i < 3; i++) {
          const L = visible(mask, i);
          const e = k.map((kj) => q[i][0] * kj[0] + q[i][1] * kj[1]);
          const m = Math.max(...e.slice(0, L));
          const z = e.slice(0, L).reduce((s, x) => s + Math.exp(x - m), 0);
          for (let j = 0; j < 4; j++) {
            const a = r.weights.data[i * 4 + j], s = r.scores.data[i * 4 + j];
            if (j >= L) {
              assert.equal(s, -Infinity, `mask ${JSON.stringify(mask)}: score [${i}][${j}]`);
              assert.equal(a, 0);
            } else {
              near(s, e[j], 1e-6, `score [${i}][${j}]`);
              near(a, Math.exp(e[j] - m) / z, 1e-6, `mask ${JSON.stringify(mask)}: weight [${i}][${j}]`);
            }
          }
          if (L === 0) assert.deepEqual(Array.from(r.context.data.slice(i * 2, i * 2 + 2)), [0, 0]);
        }
      }
    });
  });
}
