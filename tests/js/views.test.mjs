// attend({ copy: false }): the results as views of the engine's memory. On
// every build (both single-thread builds and the threaded one on 2 threads):
// the same numbers as the copied results for every score, mask and output
// set; a view is written over by the next such call (as documented) while a
// copy is not; the views' block is reused, so repeated calls keep the heap
// flat; a bad `copy` is a named error that leaves the engine usable.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { loadEngine } from '../../web/engine/index.js';
import { BUILDS, mulberry32 } from './builds.mjs';
import { threadsUnavailable } from '../../web/engine/threads/support.js';

const rng = mulberry32(12);
const matrix = (rows, cols) => ({ rows, cols, data: Float32Array.from({ length: rows * cols }, () => rng() * 2 - 1) });

/** Every score with the parameters it needs, at n_q x n_k with d-sized rows. */
function cases(nq, nk, d) {
  const base = { queries: matrix(nq, d), keys: matrix(nk, d), values: matrix(nk, d + 1) };
  const h = 5;
  return [
    { ...base, score: 'dot' },
    { ...base, score: 'scaled_dot', mask: 'causal' },
    { ...base, score: 'general', params: { W: matrix(d, d) }, temperature: 0.5 },
    { ...base, score: 'additive', params: { Wq: matrix(h, d), Wk: matrix(h, d), v: Array.from({ length: h }, () => rng()) } },
    { ...base, score: 'cosine', mask: { keyLengths: Array.from({ length: nq }, (_, i) => 1 + (i % nk)) } },
    { ...base, score: 'location', params: { W: matrix(nk, d) } },
    { ...base, score: 'dot', normalize: 'sum', queries: { rows: nq, cols: d, data: base.queries.data.map(Math.abs) },
      keys: { rows: nk, cols: d, data: base.keys.data.map(Math.abs) } },
  ];
}

const same = (a, b, what) => {
  assert.equal(a.rows, b.rows, `${what}: rows`);
  assert.equal(a.cols, b.cols, `${what}: cols`);
  assert.deepEqual(Array.from(b.data), Array.from(a.data), what);
};

const builds = [
  ...BUILDS,
  { simd: true, threads: 2, name: 'threaded build, 2 threads', skip: threadsUnavailable() ?? false },
];

for (const build of builds) {
  describe(`attend({ copy: false }) (${build.name})`, { skip: build.skip }, () => {
    let engine;
    before(async () => {
      engine = await loadEngine({ simd: build.simd, threads: build.threads });
      assert.equal(engine.threads, build.threads, engine.threadsReason ?? '');
      engine.setParallelMinWork(0); // the threaded build splits every call
    });
    after(() => engine.destroy());

    test('views hold the same numbers as copies, for every score, mask and output set', () => {
      for (const [nq, nk, d] of [[1, 1, 1], [5, 7, 3], [33, 19, 8]]) {
        for (const args of cases(nq, nk, d)) {
          const what = `${args.score} ${nq}x${nk}x${d}`;
          const copied = engine.attend(args);
          const viewed = engine.attend({ ...args, copy: false });
          for (const k of ['scores', 'weights', 'context']) {
            assert.ok(viewed[k].data.buffer === engine.heap.memory.buffer, `${what}: ${k} is a view`);
            same(copied[k], viewed[k], `${what}: ${k}`);
          }
          const ctx = engine.attend({ ...args, copy: false, outputs: ['context'] });
          assert.deepEqual(Object.keys(ctx), ['context']);
          same(copied.context, ctx.context, `${what}: context alone`);
          const sw = engine.attend({ ...args, copy: false, outputs: ['weights', 'scores'] });
          assert.deepEqual(Object.keys(sw).sort(), ['scores', 'weights']);
          same(copied.scores, sw.scores, `${what}: scores without context`);
          same(copied.weights, sw.weights, `${what}: weights without context`);
        }
      }
    });

    test('a view is written over by the next call, a copy is not', () => {
      const a = { queries: matrix(6, 4), keys: matrix(9, 4), score: 'dot' };
      const b = { ...a, queries: matrix(6, 4) };
      const copyA = engine.attend(a);
      const viewA = engine.attend({ ...a, copy: false });
      const keptA = engine.attend(a);
      const viewB = engine.attend({ ...b, copy: false });
      const copyB = engine.attend(b);
      same(copyA.weights, keptA.weights, 'a copy outlives later calls');
      same(copyB.weights, viewB.weights, 'the newer view');
      // the same block: the older view now shows the newer call's numbers
      same(copyB.weights, viewA.weights, 'the older view, written over');
      assert.notDeepEqual(Array.from(copyA.weights.data), Array.from(copyB.weights.data));
    });

    test('a call that fails leaves the previous call\'s views as they were', () => {
      // 40 queries: three row blocks, the overflow in the last, so blocks before it are computed first
      const good = { queries: matrix(40, 3), keys: matrix(9, 3), values: matrix(9, 4), copy: false };
      const overflow = (rows) => ({ ...good, queries: { rows, cols: 3, data: Float32Array.from({ length: rows * 3 }, (_, i) => (i >= rows * 3 - 3 ? 1e30 : 0.5)) }, keys: { rows: 9, cols: 3, data: new Float32Array(27).fill(1e30) } });
      const failing = [
        ['scores that overflow, same sizes', overflow(40), 'ERR_VALUE'],
        ['a NaN query', { ...good, queries: { rows: 40, cols: 3, data: new Float32Array(120).fill(NaN) } }, 'ERR_VALUE'],
        ['a context that overflows', { ...good, queries: [[1]], keys: [[1], [-0.5]], values: [[3e38], [-3e38]], normalize: 'sum' }, 'ERR_VALUE'],
        ['a \'sum\' row of zero sum', { ...good, queries: [[1]], keys: [[1], [-1]], values: [[1], [2]], normalize: 'sum' }, 'ERR_ZERO_SUM'],
        ['the additive score\'s NaN', { queries: [[1]], keys: [[1.5, 2]], score: 'additive', params: { Wq: [[0]], Wk: [[3e38, -3e38]], v: [1] }, copy: false }, 'ERR_VALUE'],
        ['a larger call that overflows', overflow(200), 'ERR_VALUE'],
        ['a larger call again', overflow(300), 'ERR_VALUE'],
      ];
      for (const outputs of [undefined, ['context'], ['weights']]) {
        const copied = engine.attend({ ...good, copy: true, outputs });
        const viewed = engine.attend({ ...good, outputs });
        for (const [what, args, code] of failing) {
          assert.throws(() => engine.attend({ ...args, outputs }), (err) => err.code === code, what);
          for (const k of Object.keys(copied)) same(copied[k], viewed[k], `${outputs ?? 'all'}: ${k} after ${what}`);
        }
      }
      // a call that succeeds writes over them, as before
      const next = { ...good, queries: matrix(40, 3) };
      const viewed = engine.attend(good);
      const copiedNext = engine.attend({ ...next, copy: true });
      engine.attend(next);
      same(copiedNext.weights, viewed.weights, 'a good call after them writes over the views');
    });

    test('the views block is reused: repeated calls keep the heap flat; a larger call grows it once', () => {
      const small = { queries: matrix(40, 16), keys: matrix(50, 16), score: 'scaled_dot', copy: false };
      engine.attend(small);
      const used = engine.heapUsed();
      for (let i = 0; i < 20; i++) engine.attend(small);
      assert.equal(engine.heapUsed(), used, 'heap after 20 more calls of one size');
      const large = { ...small, queries: matrix(80, 16), keys: matrix(90, 16) };
      engine.attend(large);
      const grown = engine.heapUsed();
      assert.ok(grown > used, 'a larger call takes a larger block');
      for (let i = 0; i < 5; i++) engine.attend(small), engine.attend(large);
      assert.equal(engine.heapUsed(), grown, 'smaller calls after it reuse the larger block');
    });

    test('a bad copy is ERR_VALUE naming it; the engine stays usable', () => {
      const args = { queries: [[1, 0]], keys: [[1, 0], [0, 1]] };
      for (const bad of ['no', 0, null, {}]) {
        assert.throws(() => engine.attend({ ...args, copy: bad }), (err) => err.code === 'ERR_VALUE' && /copy/.test(err.message));
      }
      same(engine.attend(args).weights, engine.attend({ ...args, copy: false }).weights, 'after the errors');
    });
  });
}
