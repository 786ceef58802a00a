// A matrix of numbers as a spreadsheet: every cell drawn on one canvas (only the cells
// in view, redrawn on scroll), edited in one overlay input placed over the active cell.
// A 64 × 64 grid is one canvas and one input instead of 4,096 inputs, so an edit
// re-lays out and repaints almost nothing besides the heatmaps it changes.
//
// Mouse: click a cell to edit it; double-click to place the caret; the wheel over the
// cell being edited nudges its value by `step` (Shift: ×10).
// Keys in the cell: typing replaces the value and applies it as it is typed (a value
// that is not a number, or beyond ±limit, is marked aria-invalid and not applied; the
// cell keeps its previous value); Enter / Shift+Enter commit and move down / up; Tab /
// Shift+Tab the next / previous cell (leaving the grid after the last); arrow keys move
// between cells (←/→ move the caret instead once F2, a double-click or typing started
// an edit); Home / End the row's first / last cell (Ctrl: the grid's); PageUp / PageDown
// a view; Escape restores the value the cell had before this edit; Alt+↑/↓ nudge (Shift: ×10).
// Screen readers: the element is role=grid with aria-rowcount/colcount; the input sits
// in a row/gridcell carrying aria-rowindex/colindex and is labelled with its row and
// column (e.g. "token 3 (along), dim 5"). The canvas is aria-hidden.
//
//   createGrid({ id, label, step = 0.01, limit = 1000, normalise = (v) => v,
//                rowName(i), colName(j)          drawn in the headers (rowNameWidth px for the row names: 30)
//                rowLabel?(i), colLabel?(j)      for the input's accessible name (default: the names)
//                onEdit(i, j, value), corner?,
//                rowHead?: { title, width (px), create(i) -> Node[], update(nodes, i) } })   DOM beside each row
//   .update(matrix, force)   draws nested rows; rebuilds the row heads when the shape changes or force
//   .focusCell(i, j)         makes (i, j) the active cell, scrolls it into view and focuses the input
//   .el                      the scrolling wrapper (its child [data-testid=<id>] is the grid)
import { h } from './dom.js';

const ROW_H = 30;
const COL_W = 52;
const PAD = 6; // px from the text to the cell's right edge, as in the overlay input (border + padding)

export function createGrid(opts) {
  const { step = 0.01, limit = 1000, normalise = (v) => v } = opts;
  const rowLabel = opts.rowLabel ?? opts.rowName;
  const colLabel = opts.colLabel ?? opts.colName;
  const NUM_W = opts.rowNameWidth ?? 30;
  const headW = NUM_W + (opts.rowHead?.width ?? 0);

  const canvas = h('canvas', { className: 'mx-canvas', attrs: { 'aria-hidden': 'true' } });
  const headsIn = h('div', { className: 'mx-heads-in' });
  const heads = h('div', { className: 'mx-heads', hidden: !opts.rowHead }, headsIn);
  // sticky at the scroller's top-left, zero-sized: what it holds is drawn at the current scroll offset
  const stage = h('div', { className: 'mx-stage' }, canvas, heads);
  const error = h('span', { className: 'sr-only', id: `${opts.id}-error` });
  const input = h('input', {
    type: 'text', className: 'mx-cell', inputMode: 'decimal', autocomplete: 'off', spellcheck: false,
    attrs: { 'aria-describedby': error.id },
  });
  const cellBox = h('div', { className: 'mx-gc', attrs: { role: 'gridcell' } }, input, error);
  const activeRow = h('div', { className: 'mx-active', attrs: { role: 'row' } }, cellBox);
  const grid = h('div', { className: 'mx', dataset: { testid: opts.id }, attrs: { role: 'grid', 'aria-label': opts.label } }, activeRow);
  const wrap = h('div', { className: 'mx-wrap' }, stage, grid);
  grid.style.setProperty('--head-w', `${headW}px`);
  grid.style.setProperty('--row-h', `${ROW_H}px`);
  grid.style.setProperty('--col-w', `${COL_W}px`);

  let matrix = [[]];
  let rows = 0;
  let cols = 0;
  let shape = '';
  let active = { i: 0, j: 0 };
  let origin = null; // the active cell's value before this edit (Escape restores it)
  let editing = false; // an edit is under way: ←/→ move the caret, not the cell
  let colours = null;
  const live = new Map(); // row heads in the DOM: i -> { row, nodes }

  const valueAt = (i, j) => matrix[i]?.[j];
  const text = (v) => (v === undefined ? '' : String(v));

  function readColours() {
    const cs = getComputedStyle(wrap);
    const v = (name, fallback) => cs.getPropertyValue(name).trim() || fallback;
    colours = {
      card: v('--card', '#fff'), ink: v('--ink', '#1b1e25'), muted: v('--muted', '#525866'),
      line: v('--line', '#dde0e7'), soft: v('--soft', '#eef0f5'),
      size: parseFloat(getComputedStyle(grid).fontSize) || 12.8, family: cs.fontFamily || 'sans-serif',
    };
  }

  /** The rows and columns (partly) in view. */
  function view() {
    const W = wrap.clientWidth;
    const H = wrap.clientHeight;
    const x = wrap.scrollLeft;
    const y = wrap.scrollTop;
    return {
      W, H, x, y,
      r0: Math.max(0, Math.floor(y / ROW_H)), r1: Math.min(rows - 1, Math.floor((y + H - ROW_H) / ROW_H)),
      c0: Math.max(0, Math.floor(x / COL_W)), c1: Math.min(cols - 1, Math.floor((x + W - headW) / COL_W)),
    };
  }

  function fitText(ctx, s, width, weight = '') {
    let size = colours.size;
    ctx.font = `${weight}${size}px ${colours.family}`;
    const w = ctx.measureText(s).width;
    if (w > width) {
      size = Math.max(8, (size * width) / w);
      ctx.font = `${weight}${size.toFixed(1)}px ${colours.family}`;
    }
  }

  function draw() {
    const v = view();
    if (!v.W || !v.H || !rows || !cols) return;
    if (!colours) readColours();
    const dpr = window.devicePixelRatio || 1;
    const bw = Math.round(v.W * dpr);
    const bh = Math.round(v.H * dpr);
    if (canvas.width !== bw || canvas.height !== bh) {
      canvas.width = bw;
      canvas.height = bh;
      canvas.style.width = `${v.W}px`;
      canvas.style.height = `${v.H}px`;
    }
    const ctx = canvas.getContext('2d');
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.fillStyle = colours.card;
    ctx.fillRect(0, 0, v.W, v.H);
    ctx.textBaseline = 'middle';
    // the cells: a bordered box each, the number right-aligned (shrunk to fit if it must be)
    ctx.lineWidth = 1;
    ctx.strokeStyle = colours.line;
    ctx.textAlign = 'right';
    ctx.beginPath();
    for (let i = v.r0; i <= v.r1; i++) {
      for (let j = v.c0; j <= v.c1; j++) ctx.roundRect(headW + j * COL_W - v.x + 1.5, ROW_H + i * ROW_H - v.y + 2.5, COL_W - 3, ROW_H - 5, 4);
    }
    ctx.stroke();
    ctx.fillStyle = colours.ink;
    for (let i = v.r0; i <= v.r1; i++) {
      for (let j = v.c0; j <= v.c1; j++) {
        const s = text(valueAt(i, j));
        fitText(ctx, s, COL_W - 2 * PAD - 2);
        ctx.fillText(s, headW + (j + 1) * COL_W - v.x - PAD - 1, ROW_H + (i + 0.5) * ROW_H - v.y);
      }
    }
    // frozen: the row names on the left, the column names on top, the corner
    ctx.fillStyle = colours.soft;
    ctx.fillRect(0, ROW_H, headW, v.H - ROW_H);
    ctx.fillRect(0, 0, v.W, ROW_H);
    ctx.fillStyle = colours.muted;
    ctx.textAlign = 'center';
    const label = (s, x, y, width) => { fitText(ctx, s, width, '600 '); ctx.fillText(s, x, y); };
    for (let i = v.r0; i <= v.r1; i++) label(opts.rowName(i), NUM_W / 2, ROW_H + (i + 0.5) * ROW_H - v.y, NUM_W - 4);
    for (let j = v.c0; j <= v.c1; j++) label(opts.colName(j), headW + (j + 0.5) * COL_W - v.x, ROW_H / 2, COL_W - 4);
    ctx.strokeStyle = colours.line; // where the frozen headers end
    ctx.beginPath();
    ctx.moveTo(headW - 0.5, 0);
    ctx.lineTo(headW - 0.5, v.H);
    ctx.moveTo(0, ROW_H - 0.5);
    ctx.lineTo(v.W, ROW_H - 0.5);
    ctx.stroke();
    ctx.fillStyle = colours.soft;
    ctx.fillRect(0, 0, headW, ROW_H - 1); // the corner, over the names scrolled beneath it
    ctx.fillStyle = colours.muted;
    label(opts.corner ?? '#', NUM_W / 2, ROW_H / 2, NUM_W - 4);
    if (opts.rowHead?.title) label(opts.rowHead.title, NUM_W + (headW - NUM_W) / 2, ROW_H / 2, headW - NUM_W - 4);
    placeHeads(v);
    clipCell(v);
  }

  /** The row heads (DOM) in view, kept under the frozen header and scrolled with the rows. */
  function placeHeads(v) {
    if (!opts.rowHead) return;
    heads.style.height = `${Math.max(0, v.H - ROW_H)}px`;
    headsIn.style.transform = `translateY(${-v.y}px)`;
    const focused = document.activeElement;
    for (const [i, r] of live) {
      if ((i < v.r0 || i > v.r1 || i >= rows) && !r.row.contains(focused)) { r.row.remove(); live.delete(i); }
    }
    for (let i = v.r0; i <= v.r1; i++) {
      if (live.has(i)) continue;
      const nodes = opts.rowHead.create(i);
      const row = h('div', { className: 'mx-rh' }, ...nodes);
      row.style.top = `${i * ROW_H}px`;
      headsIn.append(row);
      live.set(i, { row, nodes });
      opts.rowHead.update(nodes, i);
    }
  }

  /** The input over the active cell, clipped where the frozen headers cover it. */
  function clipCell(v) {
    const left = Math.max(0, v.x + headW - (headW + active.j * COL_W));
    const top = Math.max(0, v.y + ROW_H - (ROW_H + active.i * ROW_H));
    const clip = left || top ? `inset(${Math.min(top, ROW_H)}px 0 0 ${Math.min(left, COL_W)}px)` : '';
    if (cellBox.style.clipPath !== clip) cellBox.style.clipPath = clip;
  }

  function setError(message) {
    if (message && !input.hasAttribute('aria-invalid')) input.setAttribute('aria-invalid', 'true');
    else if (!message && input.hasAttribute('aria-invalid')) input.removeAttribute('aria-invalid');
    if (error.textContent !== message) error.textContent = message;
    if (input.title !== message) input.title = message; // written only on change: an attribute write restyles the focused input
  }

  /** Shows the active cell's value in the input (unless an invalid or equal text is being typed there). */
  function showValue() {
    const v = valueAt(active.i, active.j);
    const typing = input === document.activeElement && (input.hasAttribute('aria-invalid') || (editing && Number(input.value) === v));
    if (!typing && input.value !== text(v)) input.value = text(v);
  }

  function placeInput() {
    const { i, j } = active;
    input.dataset.i = i;
    input.dataset.j = j;
    input.setAttribute('aria-label', `${rowLabel(i)}, ${colLabel(j)}`);
    activeRow.setAttribute('aria-rowindex', i + 2);
    cellBox.setAttribute('aria-colindex', j + 2);
    cellBox.style.left = `${headW + j * COL_W}px`;
    cellBox.style.top = `${ROW_H + i * ROW_H}px`;
    origin = valueAt(i, j);
    editing = false;
    setError('');
    showValue();
  }

  function scrollTo(i, j) {
    const viewW = wrap.clientWidth - headW;
    const viewH = wrap.clientHeight - ROW_H;
    const top = i * ROW_H;
    const left = j * COL_W;
    if (top < wrap.scrollTop) wrap.scrollTop = top;
    else if (top + ROW_H > wrap.scrollTop + viewH) wrap.scrollTop = top + ROW_H - viewH;
    if (left < wrap.scrollLeft) wrap.scrollLeft = left;
    else if (left + COL_W > wrap.scrollLeft + viewW) wrap.scrollLeft = left + COL_W - viewW;
  }

  /** Makes (i, j) the active cell: commits the one being left, scrolls, focuses and selects. */
  function focusCell(i, j) {
    if (i < 0 || i >= rows || j < 0 || j >= cols) return false;
    commitText();
    active = { i, j };
    placeInput();
    scrollTo(i, j);
    draw();
    if (document.activeElement !== input) input.focus({ preventScroll: true });
    input.select();
    return true;
  }

  function apply(v) {
    const { i, j } = active;
    if (matrix[i]) matrix[i][j] = v; // the canvas shows it even if the owner keeps a copy
    opts.onEdit(i, j, v);
  }

  /** The typed text as { value }, or as { error } saying why it is not one. */
  function parse(s) {
    const t = s.trim().replace('−', '-');
    if (t === '') return { error: 'an empty cell is not a number' };
    const v = Number(t);
    if (!Number.isFinite(v)) return { error: `“${s.trim()}” is not a number` };
    if (Math.abs(v) > limit) return { error: `${t} is outside −${limit} … ${limit}` };
    return { value: normalise(v) };
  }

  /** Leaves the text being typed: a valid value stays (it was applied as typed), an invalid one gives way to the cell's value. */
  function commitText() {
    if (input.hasAttribute('aria-invalid')) {
      setError('');
      input.value = text(valueAt(active.i, active.j));
    }
    origin = valueAt(active.i, active.j);
    editing = false;
  }

  function nudge(dir, big) {
    const v = normalise(Math.max(-limit, Math.min(limit, (valueAt(active.i, active.j) ?? 0) + dir * step * (big ? 10 : 1))));
    setError('');
    input.value = text(v);
    apply(v);
  }

  input.addEventListener('input', () => {
    editing = true;
    const r = parse(input.value);
    if (r.error) {
      setError(`${r.error}: the cell keeps ${text(valueAt(active.i, active.j))}`);
      return;
    }
    setError('');
    apply(r.value);
  });
  input.addEventListener('focus', () => { if (!editing) input.select(); });
  input.addEventListener('blur', () => { commitText(); draw(); });
  input.addEventListener('dblclick', () => { editing = true; });
  input.addEventListener('mousedown', () => { if (document.activeElement === input) editing = true; });
  input.addEventListener('keydown', (ev) => {
    const { i, j } = active;
    const k = ev.key;
    const page = Math.max(1, Math.floor((wrap.clientHeight - ROW_H) / ROW_H) - 1);
    let to = null;
    if ((k === 'ArrowUp' || k === 'ArrowDown') && ev.altKey) {
      ev.preventDefault();
      nudge(k === 'ArrowUp' ? 1 : -1, ev.shiftKey);
      return;
    }
    if (k === 'ArrowUp') to = [i - 1, j];
    else if (k === 'ArrowDown') to = [i + 1, j];
    else if ((k === 'ArrowLeft' || k === 'ArrowRight') && !editing) to = [i, j + (k === 'ArrowLeft' ? -1 : 1)];
    else if (k === 'Enter') to = [i + (ev.shiftKey ? -1 : 1), j];
    else if (k === 'PageUp' || k === 'PageDown') to = [Math.max(0, Math.min(rows - 1, i + (k === 'PageUp' ? -page : page))), j];
    else if ((k === 'Home' || k === 'End') && (!editing || ev.ctrlKey)) {
      const end = k === 'End';
      to = ev.ctrlKey ? (end ? [rows - 1, cols - 1] : [0, 0]) : [i, end ? cols - 1 : 0];
    } else if (k === 'Tab') {
      const n = i * cols + j + (ev.shiftKey ? -1 : 1);
      if (n < 0 || n >= rows * cols) { commitText(); return; } // leave the grid
      to = [Math.floor(n / cols), n % cols];
    } else if (k === 'F2') {
      ev.preventDefault();
      editing = true;
      input.setSelectionRange(input.value.length, input.value.length);
      return;
    } else if (k === 'Escape') {
      if (!editing && !input.hasAttribute('aria-invalid') && valueAt(i, j) === origin) return;
      ev.preventDefault();
      setError('');
      if (origin !== undefined && valueAt(i, j) !== origin) apply(origin);
      input.value = text(origin);
      editing = false;
      input.select();
      return;
    }
    if (!to) return;
    ev.preventDefault();
    if (to[0] < 0 || to[0] >= rows || to[1] < 0 || to[1] >= cols) {
      commitText(); // at an edge: the edit is committed, the cell stays
      input.select();
      return;
    }
    focusCell(to[0], to[1]);
  });
  input.addEventListener('wheel', (ev) => {
    if (document.activeElement !== input || ev.deltaY === 0) return;
    ev.preventDefault();
    nudge(ev.deltaY < 0 ? 1 : -1, ev.shiftKey);
  }, { passive: false });

  canvas.addEventListener('mousedown', (ev) => {
    const b = canvas.getBoundingClientRect();
    const x = ev.clientX - b.left;
    const y = ev.clientY - b.top;
    if (x < headW || y < ROW_H) return;
    const j = Math.floor((x - headW + wrap.scrollLeft) / COL_W);
    const i = Math.floor((y - ROW_H + wrap.scrollTop) / ROW_H);
    if (i >= rows || j >= cols) return;
    ev.preventDefault(); // keeps the focus for the input
    focusCell(i, j);
  });
  wrap.addEventListener('scroll', draw, { passive: true });
  if (typeof ResizeObserver === 'function') new ResizeObserver(() => draw()).observe(wrap);

  function build() {
    for (const r of live.values()) r.row.remove();
    live.clear();
    grid.setAttribute('aria-rowcount', rows + 1);
    grid.setAttribute('aria-colcount', cols + 1);
    grid.style.width = `${headW + cols * COL_W}px`;
    grid.style.height = `${(rows + 1) * ROW_H}px`;
    heads.style.width = `${headW - NUM_W}px`;
    heads.style.left = `${NUM_W}px`;
    if (active.i >= rows || active.j >= cols) active = { i: Math.min(active.i, rows - 1), j: Math.min(active.j, cols - 1) };
    placeInput();
  }

  return {
    el: wrap,
    focusCell,
    update(m, force = false) {
      matrix = m;
      rows = m.length;
      cols = m[0]?.length ?? 0;
      const key = `${rows}x${cols}`;
      if (key !== shape || force) { shape = key; build(); }
      if (input !== document.activeElement) origin = valueAt(active.i, active.j);
      input.setAttribute('aria-label', `${rowLabel(active.i)}, ${colLabel(active.j)}`);
      showValue();
      draw();
      if (opts.rowHead) for (const [i, r] of live) opts.rowHead.update(r.nodes, i);
    },
  };
}
