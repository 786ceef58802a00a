// A grid of number fields for a matrix (embeddings or a parameter), virtualised:
// only the rows and columns in view (plus a margin) exist in the DOM, so a 64 × 64
// grid holds ~100 inputs instead of 4,096 and an edit re-lays out almost nothing.
// The grid is an ARIA grid (role=grid/row/columnheader/rowheader/gridcell with
// aria-rowcount/colcount and indices), so a screen reader still knows its size.
// Keys in a cell: ↑/↓ (or the wheel) nudge the value by its step (Shift: ×10);
// Tab / Shift+Tab move to the next / previous cell, scrolling it into view; Enter
// moves down a row. A value that is not a number is marked aria-invalid and not applied.
//
//   createMatrixInput({ id, label, step, rowName(i), colName(j), onEdit(i, j, value),
//                       corner?, rowHead?: { title, width (px), create(i) -> Node[], update(nodes, i) } })
//   .update(matrix, force)   shows nested rows; rebuilds headers when the shape changes or force
//   .el                      the scrolling wrapper
import { h } from '../ui/dom.js';
import { LIMITS } from './state.js';
import { round } from './rng.js';

const ROW_H = 30;
const COL_W = 52;
const NUM_W = 30;
const MARGIN = 1; // rows / columns kept beyond the view: every text input costs each repaint (its own scroller)

export function createMatrixInput(opts) {
  const { step = 0.01 } = opts;
  const headW = NUM_W + (opts.rowHead?.width ?? 0);
  const grid = h('div', { className: 'mx', dataset: { testid: opts.id }, attrs: { role: 'grid', 'aria-label': opts.label } });
  const header = h('div', { className: 'mx-row mx-header', attrs: { role: 'row', 'aria-rowindex': 1 } });
  const body = h('div', { className: 'mx-body', attrs: { role: 'rowgroup' } });
  grid.append(h('div', { attrs: { role: 'rowgroup' }, className: 'mx-headgroup' }, header), body);
  const wrap = h('div', { className: 'mx-wrap' }, grid);
  let shape = '';
  let matrix = [[]];
  let rows = 0;
  let cols = 0;
  const live = new Map(); // i -> { row, heads, cells: Map(j -> input) }
  const colHeads = new Map(); // j -> header cell
  let corner = null;

  function window_() {
    const H = wrap.clientHeight || 16 * ROW_H;
    const W = wrap.clientWidth || headW + 10 * COL_W;
    const r0 = Math.max(0, Math.floor(wrap.scrollTop / ROW_H) - MARGIN);
    const r1 = Math.min(rows - 1, Math.ceil((wrap.scrollTop + H) / ROW_H) + MARGIN);
    const c0 = Math.max(0, Math.floor((wrap.scrollLeft) / COL_W) - MARGIN);
    const c1 = Math.min(cols - 1, Math.ceil((wrap.scrollLeft + W - headW) / COL_W) + MARGIN);
    return { r0, r1, c0, c1 };
  }

  function makeInput(i, j) {
    const input = h('input', { type: 'text', className: 'mx-cell', inputMode: 'decimal', autocomplete: 'off', spellcheck: false });
    input.dataset.i = i;
    input.dataset.j = j;
    input.setAttribute('aria-label', `${opts.rowName(i)}, ${opts.colName(j)}`);
    input.value = String(matrix[i][j]);
    const cell = h('div', { className: 'mx-gc', attrs: { role: 'gridcell', 'aria-colindex': j + 2 } }, input);
    cell.style.left = `${headW + j * COL_W}px`;
    return cell;
  }

  function makeRow(i) {
    const row = h('div', { className: 'mx-row', attrs: { role: 'row', 'aria-rowindex': i + 2 } });
    row.style.top = `${i * ROW_H}px`;
    const head = h('div', { className: 'mx-rh', attrs: { role: 'rowheader', 'aria-colindex': 1 } }, h('span', { className: 'mx-num', textContent: opts.rowName(i) }));
    let heads = null;
    if (opts.rowHead) {
      heads = opts.rowHead.create(i);
      head.append(...heads);
    }
    row.append(head);
    return { row, heads, head, cells: new Map() };
  }

  function render() {
    if (!rows || !cols) return;
    const { r0, r1, c0, c1 } = window_();
    const focused = document.activeElement;
    const keep = (node) => node.contains(focused);
    for (const [j, cell] of colHeads) if ((j < c0 || j > c1) && !keep(cell)) { cell.remove(); colHeads.delete(j); }
    for (let j = c0; j <= c1; j++) {
      if (colHeads.has(j)) continue;
      const cell = h('div', { className: 'mx-ch', textContent: opts.colName(j), attrs: { role: 'columnheader', 'aria-colindex': j + 2 } });
      cell.style.left = `${headW + j * COL_W}px`;
      colHeads.set(j, cell);
      header.append(cell);
    }
    for (const [i, r] of live) if ((i < r0 || i > r1) && !keep(r.row)) { r.row.remove(); live.delete(i); }
    for (let i = r0; i <= r1; i++) {
      let r = live.get(i);
      if (!r) { r = makeRow(i); live.set(i, r); body.append(r.row); if (opts.rowHead) opts.rowHead.update(r.heads, i); }
      for (const [j, cell] of r.cells) if ((j < c0 || j > c1) && !keep(cell)) { cell.remove(); r.cells.delete(j); }
      for (let j = c0; j <= c1; j++) {
        if (r.cells.has(j)) continue;
        const cell = makeInput(i, j);
        r.cells.set(j, cell);
        r.row.append(cell);
      }
    }
  }

  function build() {
    for (const r of live.values()) r.row.remove();
    live.clear();
    for (const c of colHeads.values()) c.remove();
    colHeads.clear();
    corner ??= h('div', { className: 'mx-corner', attrs: { role: 'columnheader', 'aria-colindex': 1 } },
      h('span', { className: 'mx-num', textContent: opts.corner ?? '#' }),
      ...(opts.rowHead ? [h('span', { className: 'mx-headtitle', textContent: opts.rowHead.title ?? '' })] : []));
    if (!corner.parentNode) header.append(corner);
    grid.setAttribute('aria-rowcount', rows + 1);
    grid.setAttribute('aria-colcount', cols + 1);
    const width = `${headW + cols * COL_W}px`;
    grid.style.width = width;
    header.style.width = width;
    body.style.height = `${rows * ROW_H}px`;
    grid.style.setProperty('--head-w', `${headW}px`);
    grid.style.setProperty('--row-h', `${ROW_H}px`);
    grid.style.setProperty('--col-w', `${COL_W}px`);
  }

  const inputAt = (i, j) => live.get(i)?.cells.get(j)?.firstChild ?? null;

  /** Scrolls cell (i, j) into view, renders it and focuses its input. */
  function focusCell(i, j) {
    if (i < 0 || i >= rows || j < 0 || j >= cols) return false;
    const top = i * ROW_H;
    const left = j * COL_W;
    const viewW = wrap.clientWidth - headW;
    const viewH = wrap.clientHeight - ROW_H;
    if (top < wrap.scrollTop) wrap.scrollTop = top;
    else if (top + ROW_H > wrap.scrollTop + viewH) wrap.scrollTop = top + ROW_H - viewH;
    if (left < wrap.scrollLeft) wrap.scrollLeft = left;
    else if (left + COL_W > wrap.scrollLeft + viewW) wrap.scrollLeft = left + COL_W - viewW;
    render();
    const input = inputAt(i, j);
    input?.focus();
    input?.select();
    return Boolean(input);
  }

  function commit(input, value) {
    const v = round(Math.max(-LIMITS.value, Math.min(LIMITS.value, value)));
    input.value = String(v);
    input.removeAttribute('aria-invalid');
    opts.onEdit(Number(input.dataset.i), Number(input.dataset.j), v);
  }

  const isCell = (t) => t.classList?.contains('mx-cell');
  grid.addEventListener('input', (ev) => {
    const input = ev.target;
    if (!isCell(input)) return;
    const text = input.value.trim().replace('−', '-');
    const v = text === '' ? NaN : Number(text);
    if (!Number.isFinite(v) || Math.abs(v) > LIMITS.value) { input.setAttribute('aria-invalid', 'true'); return; }
    input.removeAttribute('aria-invalid');
    opts.onEdit(Number(input.dataset.i), Number(input.dataset.j), round(v));
  });
  grid.addEventListener('change', (ev) => {
    const input = ev.target;
    if (isCell(input) && input.getAttribute('aria-invalid')) {
      input.value = String(matrix[input.dataset.i][input.dataset.j]);
      input.removeAttribute('aria-invalid');
    }
  });
  const nudge = (input, dir, big) => commit(input, (matrix[input.dataset.i][input.dataset.j] ?? 0) + dir * step * (big ? 10 : 1));
  grid.addEventListener('keydown', (ev) => {
    const input = ev.target;
    if (!isCell(input)) return;
    const i = Number(input.dataset.i);
    const j = Number(input.dataset.j);
    if (ev.key === 'ArrowUp' || ev.key === 'ArrowDown') {
      ev.preventDefault();
      nudge(input, ev.key === 'ArrowUp' ? 1 : -1, ev.shiftKey);
    } else if (ev.key === 'Tab') {
      const k = i * cols + j + (ev.shiftKey ? -1 : 1);
      if (k >= 0 && k < rows * cols && focusCell(Math.floor(k / cols), k % cols)) ev.preventDefault();
    } else if (ev.key === 'Enter') {
      if (focusCell(i + (ev.shiftKey ? -1 : 1), j)) ev.preventDefault();
    }
  });
  grid.addEventListener('wheel', (ev) => {
    const input = ev.target;
    if (!isCell(input) || document.activeElement !== input || ev.deltaY === 0) return;
    ev.preventDefault();
    nudge(input, ev.deltaY < 0 ? 1 : -1, ev.shiftKey);
  }, { passive: false });
  let pending = false;
  wrap.addEventListener('scroll', () => {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => { pending = false; render(); });
  }, { passive: true });
  if (typeof ResizeObserver === 'function') new ResizeObserver(() => render()).observe(wrap);

  return {
    el: wrap,
    focusCell,
    update(m, force = false) {
      matrix = m;
      rows = m.length;
      cols = m[0]?.length ?? 0;
      const key = `${rows}x${cols}`;
      if (key !== shape || force) { shape = key; build(); }
      render();
      for (const [i, r] of live) {
        for (const [j, cell] of r.cells) {
          const input = cell.firstChild;
          if (input === document.activeElement && input.getAttribute('aria-invalid')) continue;
          const text = String(m[i][j]);
          if (input.value !== text && !(input === document.activeElement && Number(input.value) === m[i][j])) input.value = text;
        }
        if (opts.rowHead) opts.rowHead.update(r.heads, i);
      }
    },
  };
}
