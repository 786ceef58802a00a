// Shared by the node:test suites: the two WASM builds every suite runs on (and
// an engine of each), and the seeded generator for random inputs.
import assert from 'node:assert/strict';
import { loadEngine } from '../../web/engine/index.js';
import { simdSupported } from '../../web/engine/wasm.js';

/**
 * Both single-thread builds; the SIMD one is skipped (with the reason) where
 * the runtime has no SIMD128. The threaded build is tested against them in
 * threads.test.mjs and property.test.mjs.
 */
export const BUILDS = [
  { simd: true, threads: 1, name: 'SIMD build', skip: simdSupported() ? false : 'this runtime has no WebAssembly SIMD' },
  { simd: false, threads: 1, name: 'scalar build', skip: false },
];

export { mulberry32 } from '../lib/random.mjs';

/**
 * The builds, each with an engine of it loaded (null where the build is
 * skipped), for one describe block per build:
 *     for (const { name, skip, engine } of await withEngines()) describe(`... (${name})`, { skip }, () => { ... });
 * Each call loads fresh engines.
 */
export async function withEngines() {
  return Promise.all(BUILDS.map(async (build) => {
    if (build.skip) return { ...build, engine: null };
    const engine = await loadEngine({ simd: build.simd, threads: build.threads });
    assert.equal(engine.simd, build.simd, `${build.name} loaded`);
    return { ...build, engine };
  }));
}
