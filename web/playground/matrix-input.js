// A grid of number inputs for a matrix (embeddings or a parameter). Arrow keys
// and the wheel (while focused) nudge a value by its step (Shift: ×10).
// Rebuilt only when the shape changes; values are synced in place.
import { LIMITS } from './state.js';
import { round } from './rng.js';

const CHUNK = 8;

const h = (tag, props = {}, ...children) => {
  const node = Object.assign(document.createElement(tag), props);
  node.append(...children);
  return node;
};

/**
 * opts: id (data-testid), label (aria), step, onEdit(i, j, value),
 * rowHead?: { create(i) -> Node[], update(nodes, i) } for per-row controls,
 * rowName(i) and colName(j) for headers and accessible names.
 */
export function createMatrixInput(opts) {
  const { step = 0.01 } = opts;
  // Rows are flex boxes (not a <table>): each row is its own layout island, and
  // rows out of view skip rendering (content-visibility), so editing one value
  // of a 64 x 64 grid does not re-layout 4,096 inputs.
  const table = h('div', { className: 'mx' });
  table.setAttribute('role', 'table');
  table.dataset.testid = opts.id;
  table.setAttribute('aria-label', opts.label);
  const wrap = h('div', { className: 'mx-wrap' }, table);
  let shape = '';
  let inputs = [];
  let heads = [];
  let matrix = null;

  function build(rows, cols) {
    const cell = (cls, text = '') => h('div', { className: cls, textContent: text });
    const headRow = h('div', { className: 'mx-row mx-header' }, cell('mx-rowname', opts.corner ?? ''));
    headRow.setAttribute('role', 'row');
    if (opts.rowHead) headRow.append(cell('mx-head', opts.rowHeadTitle ?? ''));
    for (let j = 0; j < cols; j++) headRow.append(cell('mx-col', opts.colName(j)));
    headRow.style.setProperty('--chunk', CHUNK);
    inputs = [];
    heads = [];
    const body = [headRow];
    for (let i = 0; i < rows; i++) {
      const tr = h('div', { className: 'mx-row' }, cell('mx-rowname', opts.rowName(i)));
      tr.setAttribute('role', 'row');
      if (opts.rowHead) {
        const nodes = opts.rowHead.create(i);
        heads.push(nodes);
        tr.append(h('div', { className: 'mx-head' }, ...nodes));
      }
      const row = [];
      let chunk = null;
      for (let j = 0; j < cols; j++) {
        // blocks of CHUNK columns, so a wide grid only paints the blocks in view
        if (j % CHUNK === 0) { chunk = h('div', { className: 'mx-chunk' }); tr.append(chunk); }
        const input = h('input', { type: 'number', step: String(step), className: 'mx-cell' });
        input.inputMode = 'decimal';
        input.dataset.i = i;
        input.dataset.j = j;
        input.setAttribute('aria-label', `${opts.rowName(i)}, ${opts.colName(j)}`);
        row.push(input);
        chunk.append(input);
      }
      if (opts.rowTail) tr.append(h('div', { className: 'mx-tail' }, ...opts.rowTail(i)));
      inputs.push(row);
      body.push(tr);
    }
    table.replaceChildren(...body);
  }

  function commit(input, value) {
    const v = round(Math.max(-LIMITS.value, Math.min(LIMITS.value, value)));
    input.value = String(v);
    input.removeAttribute('aria-invalid');
    opts.onEdit(Number(input.dataset.i), Number(input.dataset.j), v);
  }

  table.addEventListener('input', (ev) => {
    const input = ev.target;
    if (!input.classList?.contains('mx-cell')) return;
    const v = input.value.trim() === '' ? NaN : Number(input.value);
    if (!Number.isFinite(v) || Math.abs(v) > LIMITS.value) { input.setAttribute('aria-invalid', 'true'); return; }
    input.removeAttribute('aria-invalid');
    opts.onEdit(Number(input.dataset.i), Number(input.dataset.j), round(v));
  });
  table.addEventListener('change', (ev) => {
    const input = ev.target;
    if (input.classList?.contains('mx-cell') && input.getAttribute('aria-invalid')) {
      input.value = String(matrix[input.dataset.i][input.dataset.j]);
      input.removeAttribute('aria-invalid');
    }
  });
  const nudge = (input, dir, big) => commit(input, (matrix[input.dataset.i][input.dataset.j] ?? 0) + dir * step * (big ? 10 : 1));
  table.addEventListener('keydown', (ev) => {
    const input = ev.target;
    if (!input.classList?.contains('mx-cell') || (ev.key !== 'ArrowUp' && ev.key !== 'ArrowDown')) return;
    ev.preventDefault();
    nudge(input, ev.key === 'ArrowUp' ? 1 : -1, ev.shiftKey);
  });
  table.addEventListener('wheel', (ev) => {
    const input = ev.target;
    if (!input.classList?.contains('mx-cell') || document.activeElement !== input || ev.deltaY === 0) return;
    ev.preventDefault();
    nudge(input, ev.deltaY < 0 ? 1 : -1, ev.shiftKey);
  }, { passive: false });

  return {
    el: wrap,
    /** Shows `m` (nested rows); rebuilds only if the shape changed. `force` re-creates headers. */
    update(m, force = false) {
      matrix = m;
      const key = `${m.length}x${m[0]?.length ?? 0}`;
      if (key !== shape || force) { shape = key; build(m.length, m[0]?.length ?? 0); }
      for (let i = 0; i < m.length; i++) {
        for (let j = 0; j < m[i].length; j++) {
          const input = inputs[i][j];
          if (input === document.activeElement && input.getAttribute('aria-invalid')) continue;
          const text = String(m[i][j]);
          if (input.value !== text && !(input === document.activeElement && Number(input.value) === m[i][j])) input.value = text;
        }
        if (opts.rowHead) opts.rowHead.update(heads[i], i);
      }
    },
  };
}
