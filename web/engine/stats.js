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
