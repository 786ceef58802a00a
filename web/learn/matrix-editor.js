// A small grid of token vectors: one row per token (its name as the row header),
// one column per dimension; the shared grid (ui/grid.js), as in the playground.
// Every valid edit calls onChange(rows).
//   const ed = createMatrixEditor({ id, rowNames, rows, onChange, step = 0.01, colName })
//   ed.el, ed.set(rows) (shows new values without calling onChange)
import { createGrid } from '../ui/grid.js';

const LIMIT = 100;

export function createMatrixEditor({ id, rowNames, rows, onChange, step = 0.01, colName = (j) => `d${j + 1}` }) {
  let values = rows.map((r) => [...r]);
  const grid = createGrid({
    id, label: 'Token vectors', step, limit: LIMIT, corner: 'token',
    rowName: (i) => rowNames[i], colName, colLabel: (j) => `dimension ${j + 1}`,
    rowNameWidth: 14 + 8 * Math.max(5, ...rowNames.map((n) => n.length)),
    onEdit: (i, j, v) => {
      values[i][j] = v;
      onChange(values.map((r) => [...r]));
    },
  });
  grid.el.classList.add('mx-fit');
  grid.update(values);
  return {
    el: grid.el,
    set(next) {
      values = next.map((r) => [...r]);
      grid.update(values);
    },
  };
}
