// Permuting a sequence and measuring whether attention weights only moved with
// it: without positions self-attention is permutation-equivariant,
// α′(i, j) = α(π(i), π(j)) (rows and columns move together). No DOM.
//   permutation(n, seed)          a seeded shuffle π, never the identity for n ≥ 2
//   permuted({ tokens, x }, π)    new token i is old token π[i], with its vector
//   movedGap(before, after, π)    per head α′(i, j) − α(π(i), π(j)), its largest |value| and count
import { mulberry32, seedFor } from './rng.js';

/** The values differ by at most this (float32 sums in another order) and still count as equal. */
export const SAME = 1e-5;

/** A seeded shuffle of 0..n−1 (Fisher–Yates), never the identity when n ≥ 2: π[i] = the old index of new token i. */
export function permutation(n, seed) {
  const next = mulberry32(seedFor(seed, 'permute'));
  const p = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [p[i], p[j]] = [p[j], p[i]];
  }
  if (n >= 2 && p.every((v, i) => v === i)) p.push(p.shift());
  return p;
}

/** The tokens and embeddings reordered by π (new token i is old token π[i], with its vector). */
export const permuted = ({ tokens, x }, perm) => ({ tokens: perm.map((k) => tokens[k]), x: perm.map((k) => [...x[k]]) });

/**
 * after − before moved with the tokens, per head: D(i, j) = α′(i, j) − α(π(i), π(j)).
 * Returns { diffs: [per head matrix], max: largest |D|, changed: cells with |D| > SAME, cells }.
 */
export function movedGap(before, after, perm) {
  const n = perm.length;
  let max = 0;
  let changed = 0;
  const diffs = after.map((a, h) => {
    const b = before[h];
    const data = new Float32Array(n * n);
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < n; j++) {
        const d = a.data[i * n + j] - b.data[perm[i] * n + perm[j]];
        data[i * n + j] = d;
        max = Math.max(max, Math.abs(d));
        if (Math.abs(d) > SAME) changed++;
      }
    }
    return { rows: n, cols: n, data };
  });
  return { diffs, max, changed, cells: n * n * after.length };
}

