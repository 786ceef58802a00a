// The "Permute tokens" demonstration: reorder the tokens (each keeps its
// embedding) and measure whether the weights only moved with them. Without
// positions self-attention is permutation-equivariant: α′(i, j) = α(π(i), π(j)),
// rows and columns moved together; each kind of position breaks that. No DOM.
import { mulberry32, seedFor } from '../ui/rng.js';
import { computeSteps } from './compute.js';
import { POSITIONS } from './positions.js';

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

/**
 * For every kind of position: how far the weights of the state `s` (already permuted) are from
 * those of the order before (`old`: { tokens, x }) moved with the tokens. [{ kind, max, changed, cells, diffs }]
 */
export function permutationReport(engine, s, old, perm) {
  return POSITIONS.map((kind) => {
    const after = computeSteps(engine, { ...s, positions: kind, compare: 'none' });
    const before = computeSteps(engine, { ...s, ...old, positions: kind, compare: 'none' });
    return { kind, ...movedGap(before.weights, after.weights, perm) };
  });
}
