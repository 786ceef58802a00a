// Shared by the node:test suites: the two WASM builds every suite runs on, and
// the seeded generator for random inputs.
import { simdSupported } from '../../web/engine/wasm.js';

/** Both builds; the SIMD one is skipped (with the reason) where the runtime has no SIMD128. */
export const BUILDS = [
  { simd: true, name: 'SIMD build', skip: simdSupported() ? false : 'this runtime has no WebAssembly SIMD' },
  { simd: false, name: 'scalar build', skip: false },
];

export { mulberry32 } from '../lib/random.mjs';
