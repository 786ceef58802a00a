// Seeded random numbers for tests and benchmarks: the page's own mulberry32,
// so the same seed gives the same inputs everywhere.
export { mulberry32 } from '../../web/playground/rng.js';
