// Statistics the engine's results are compared with.
import { shapeError } from './errors.js';

/**
 * Kendall's rank correlation tau-b of two equal-length arrays (ties counted
 * as in tau-b; 0 when either array is constant).
 */
export function kendallTau(a, b) {
  const n = a.length;
  if (b.length !== n) throw shapeError(`kendallTau: lengths ${n} and ${b.length} differ`);
  let concordant = 0;
  let discordant = 0;
  let tiesA = 0;
  let tiesB = 0;
  for (let i = 0; i < n; i++) {
    for (let j = i + 1; j < n; j++) {
      const x = Math.sign(a[i] - a[j]);
      const y = Math.sign(b[i] - b[j]);
      if (x === 0 && y === 0) continue;
      if (x === 0) tiesA++;
      else if (y === 0) tiesB++;
      else if (x === y) concordant++;
      else discordant++;
    }
  }
  const denominator = Math.sqrt((concordant + discordant + tiesA) * (concordant + discordant + tiesB));
  return denominator > 0 ? (concordant - discordant) / denominator : 0;
}

/** Indices of the k largest values of a (ties: the earlier index first). */
function topIndices(a, k) {
  return Array.from(a.keys()).sort((i, j) => a[j] - a[i] || i - j).slice(0, k);
}

/**
 * How far an attention map and a saliency map over the same cells agree, in
 * measures that follow what the eye compares (where each map is bright), not
 * how the many near-zero cells happen to rank (which decides Kendall's τ over
 * all cells: two maps lighting up the same spot can get τ ≈ 0).
 *   topMatch        the most-attended cell is the most salient one
 *   saliencyInTopK  the share of all saliency inside the k most-attended cells
 *                   (chance for an unrelated map: about k / n)
 *   topKOverlap     |top k by attention ∩ top k by saliency| / k
 *   tauActive       Kendall's τ-b over the cells where either map is at least
 *                   `floor` × its own largest value (null with fewer than 3 such cells)
 *   active          how many cells that is;  k, n: as used
 * Both maps are compared by magnitude (|saliency|); neither needs to sum to 1.
 */
export function agreement(attention, saliency, { k = 3, floor = 0.05 } = {}) {
  const n = attention.length;
  if (saliency.length !== n) throw shapeError(`agreement: lengths ${n} and ${saliency.length} differ`);
  const a = Float64Array.from(attention, Math.abs);
  const s = Float64Array.from(saliency, Math.abs);
  k = Math.max(1, Math.min(k, n));
  const topA = topIndices(a, k);
  const topS = new Set(topIndices(s, k));
  const total = s.reduce((x, y) => x + y, 0);
  const inTop = topA.reduce((x, i) => x + s[i], 0);
  const maxA = Math.max(...a);
  const maxS = Math.max(...s);
  const cells = [];
  for (let i = 0; i < n; i++) if ((maxA > 0 && a[i] >= floor * maxA) || (maxS > 0 && s[i] >= floor * maxS)) cells.push(i);
  return {
    topMatch: topA[0] === topIndices(s, 1)[0],
    saliencyInTopK: total > 0 ? inTop / total : 0,
    topKOverlap: topA.filter((i) => topS.has(i)).length / k,
    tauActive: cells.length >= 3 ? kendallTau(cells.map((i) => a[i]), cells.map((i) => s[i])) : null,
    active: cells.length,
    k,
    n,
  };
}

/**
 * The Wilson score interval of a proportion: `successes` of `n` trials, at
 * z = 1.96 (95%) unless given. Unlike p ± z·√(p(1−p)/n) it stays inside [0, 1]
 * and is sound near 0% and 100%. -> { p, lo, hi, n }
 */
export function wilson(successes, n, z = 1.96) {
  if (!(n > 0)) throw shapeError(`wilson: n must be > 0 (got ${n})`);
  const p = successes / n;
  const z2 = z * z;
  const centre = (p + z2 / (2 * n)) / (1 + z2 / n);
  const half = (z * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n))) / (1 + z2 / n);
  return { p, lo: Math.max(0, centre - half), hi: Math.min(1, centre + half), n };
}
