// A small grid of number inputs for token vectors: one row per token (its name
// as the row header), one column per dimension. Every valid edit calls onChange(rows).
//   const ed = createMatrixEditor({ id, rowNames, rows, onChange, step = 0.01 })
//   ed.el, ed.set(rows) (writes the inputs without calling onChange)
import { h } from '../ui/dom.js';

export function createMatrixEditor({ id, rowNames, rows, onChange, step = 0.01, colName = (j) => `d${j + 1}` }) {
  let values = rows.map((r) => [...r]);
  const inputs = [];
  const head = h('tr', {}, h('th', { scope: 'col', textContent: 'token' }), ...values[0].map((_, j) => h('th', { scope: 'col', textContent: colName(j) })));
  const body = values.map((row, i) => h('tr', {}, h('th', { scope: 'row', textContent: rowNames[i] }), ...row.map((v, j) => {
    const input = h('input', {
      type: 'number', step: String(step), value: String(v), className: 'cell-input',
      dataset: { testid: `${id}-${i}-${j}` }, attrs: { 'aria-label': `${rowNames[i]}, dimension ${j + 1}` },
    });
    input.addEventListener('input', () => {
      const x = Number(input.value);
      const ok = input.value.trim() !== '' && Number.isFinite(x) && Math.abs(x) <= 100;
      input.setAttribute('aria-invalid', String(!ok));
      if (!ok) return;
      values[i][j] = x;
      onChange(values.map((r) => [...r]));
    });
    (inputs[i] ??= [])[j] = input;
    return h('td', {}, input);
  })));
  const el = h('table', { className: 'matrix-editor', dataset: { testid: id } }, h('thead', {}, head), h('tbody', {}, ...body));
  return {
    el,
    set(next) {
      values = next.map((r) => [...r]);
      values.forEach((r, i) => r.forEach((v, j) => { inputs[i][j].value = String(v); inputs[i][j].removeAttribute('aria-invalid'); }));
    },
  };
}
