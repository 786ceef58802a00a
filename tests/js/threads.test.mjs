// Threads: loadEngine({ threads }) with a pool of workers on one shared WASM
// memory. One, two and three threads give the same attention (row blocks
// split across threads; every size odd so the blocks split unevenly), errors
// name what one thread names and leave the engine usable, the options are
// checked, the engine falls back to one thread (saying why) where threads
// cannot run, and destroy() stops the workers so Node exits.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { loadEngine } from '../../web/engine/index.js';
import { simdSupported } from '../../web/engine/wasm.js';
import { mulberry32 } from './builds.mjs';

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
