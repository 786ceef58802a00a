// The "Permute tokens" demonstration under every kind of position at once: the
// same shuffle, and how far each kind's weights are from only moving with the
// tokens (ui/permutation.js measures one). No DOM.
import { POSITIONS } from '../ui/positions.js';
import { movedGap } from '../ui/permutation.js';
import { computeSteps } from './compute.js';

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
