// A small seeded PRNG (mulberry32) so a seed in a shared link reproduces the
// same random vectors and parameters in every browser. No DOM.

/** Returns a function giving uniform numbers in [0, 1) from a 32-bit seed. */
export function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A 32-bit hash of a seed and a name (FNV-1a), so each matrix gets its own stream. */
export function seedFor(seed, name) {
  let h = 0x811c9dc5 ^ (seed >>> 0);
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** Rounds to `places` decimals (state values are stored rounded so links round-trip exactly). */
export function round(v, places = 4) {
  const f = 10 ** places;
  const r = Math.round(v * f) / f;
  return Object.is(r, -0) ? 0 : r;
}

/** rows x cols nested array of uniform values in [lo, hi), rounded. */
export function randomMatrix(seed, name, rows, cols, { lo = -1, hi = 1, places = 2 } = {}) {
  const next = mulberry32(seedFor(seed, name));
  return Array.from({ length: rows }, () => Array.from({ length: cols }, () => round(lo + (hi - lo) * next(), places)));
}
