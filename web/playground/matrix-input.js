// The playground's matrix editors (embeddings, parameters): the shared grid
// (ui/grid.js: one canvas, one overlay input) with the page's value limit and
// rounding, so an edit stores what a link can carry.
//   createMatrixInput({ id, label, step, rowName(i), colName(j), rowLabel?, colLabel?, onEdit(i, j, value),
//                       corner?, rowHead? })  -> { el, update(matrix, force), focusCell(i, j) }
import { createGrid } from '../ui/grid.js';
import { LIMITS } from './state.js';
import { round } from './rng.js';

export function createMatrixInput(opts) {
  return createGrid({ ...opts, limit: LIMITS.value, normalise: (v) => round(v) });
}
