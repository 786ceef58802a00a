// A failed attend({ copy: false }) leaves the views an earlier such call
// returned as they were, on every build: a call that needs a larger views
// block and then fails (a check in the core, a limit, a bad value) must not
// have freed the block the earlier views live in, where its inputs would land.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { AttnlabError, loadEngine } from '../../web/engine/index.js';
import { BUILDS, mulberry32 } from './builds.mjs';
import { threadsUnavailable } from '../../web/engine/threads/support.js';

const rng = mulberry32(5);
const matrix = (rows, cols) => ({ rows, cols, data: Float32Array.from({ length: rows * cols }, () => rng() * 2 - 1) });

const builds = [
  ...BUILDS,
  { simd: true, threads: 2, name: 'threaded build, 2 threads', skip: threadsUnavailable() ?? false },
];

/**
 * Calls that need a larger views block than the small call's (64 x 64 cells
 * against 24 x 24) and fail, on inputs small enough (d = 2) to fit in the
 * small call's block: freed early, it is where they would be written.
 */
function failing() {
  const big = { queries: matrix(64, 2), keys: matrix(64, 2), copy: false };
  const nan = matrix(64, 2);
  nan.data[77] = NaN; // a Float32Array goes to the core as it is: the core finds the NaN
  const lengths = Array.from({ length: 64 }, (_, i) => (i === 40 ? 65 : 5)); // past n_k: the core's check
  return [
    ['a NaN the core finds', { ...big, queries: nan }, 'ERR_VALUE'],
    ['a key count the core refuses', { ...big, mask: { keyLengths: lengths } }, 'ERR_VALUE'],
    ['general without W', { ...big, score: 'general' }, 'ERR_PARAM'],
  ];
}

/** The small call whose views must outlive the failing one. */
const small = { queries: matrix(24, 2), keys: matrix(24, 2), values: matrix(24, 3) };

for (const build of builds) {
  describe(`a failed attend({ copy: false }) keeps earlier views (${build.name})`, { skip: build.skip }, () => {
    for (const [what, args, code] of failing()) {
      test(what, async () => {
        // a fresh engine: its views block is the small call's, so the failing call needs a larger one
        const engine = await loadEngine({ simd: build.simd, threads: build.threads });
        try {
          engine.setParallelMinWork(0);
          const want = engine.attend(small);
          const views = engine.attend({ ...small, copy: false });
          const kept = Object.fromEntries(Object.entries(views).map(([k, m]) => [k, Array.from(m.data)]));
          // a model made after the views: their block is no longer at the heap's top, so memory
          // freed there is a hole the failing call's inputs can land in
          const model = engine.createSeq2Seq({ task: 'copy', minLength: 2, maxLength: 4, hidden: 8, embed: 4, batch: 8 });
          let thrown = null;
          try {
            engine.attend(args);
          } catch (err) {
            thrown = err;
          }
          assert.ok(thrown instanceof AttnlabError, `threw ${thrown}`);
          assert.equal(thrown.code, code, thrown.message);
          for (const k of Object.keys(kept)) {
            assert.equal(views[k].data.length, kept[k].length, `${k} still a view of its block`);
            assert.deepEqual(Array.from(views[k].data), kept[k], `${k} as it was`);
          }
          const again = engine.attend(small);
          for (const k of ['scores', 'weights', 'context']) assert.deepEqual(again[k], want[k], `the next call: ${k}`);
          model.destroy();
        } finally {
          engine.destroy();
        }
      });
    }
  });
}
