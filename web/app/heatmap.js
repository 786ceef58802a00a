// A heatmap: a canvas at the matrix's own resolution filled through ImageData
// from a colour table and scaled by CSS, DOM axis labels, a legend, optional
// cell values, hover and keyboard readouts. Draws only what it is given.
import { MASKED, TABLES, colorOf, scaleFor, textColor, ticks } from './colors.js';
import { hideTooltip, showTooltip, tooltipText } from './tooltip.js';
import { num } from './explain.js';

const h = (tag, props = {}, ...children) => {
  const node = Object.assign(document.createElement(tag), props);
  node.append(...children);
  return node;
};

function fillLabels(el, labels, stride) {
  if (el.childElementCount !== labels.length) el.replaceChildren(...labels.map(() => h('span')));
  labels.forEach((t, k) => {
    const span = el.children[k];
    const text = k % stride === 0 ? t : '';
    if (span.textContent !== text) span.textContent = text;
    if (span.title !== t) span.title = t;
  });
}

const labelStride = (n) => (n > 48 ? 4 : n > 24 ? 2 : 1);
/** Label band size in `ch` for the longest visible label. */
const labelSize = (labels) => Math.min(12, Math.max(2, ...labels.map((t) => [...t].length))) + 1.5;

/**
 * Creates a heatmap figure. `id` names its hooks (data-testid="heatmap-<id>");
 * `axes` is the corner text, e.g. 'query ↓ key →'.
 */
export function createHeatmap({ id, label, axes }) {
  const canvas = h('canvas', { width: 1, height: 1, tabIndex: 0, className: 'hm-canvas' });
  canvas.dataset.testid = `heatmap-${id}`;
  canvas.setAttribute('role', 'img');
  canvas.setAttribute('aria-label', label);
  const values = h('div', { className: 'hm-values' });
  values.setAttribute('aria-hidden', 'true');
  const rowHl = h('div', { className: 'hm-row-hl', hidden: true });
  const cellHl = h('div', { className: 'hm-cell-hl', hidden: true });
  const plot = h('div', { className: 'hm-plot' }, canvas, values, rowHl, cellHl);
  const cols = h('div', { className: 'hm-cols' });
  const rows = h('div', { className: 'hm-rows' });
  cols.setAttribute('aria-hidden', 'true');
  rows.setAttribute('aria-hidden', 'true');
  const corner = h('div', { className: 'hm-corner', textContent: axes });
  corner.setAttribute('aria-hidden', 'true');
  const body = h('div', { className: 'hm-body' }, corner, cols, rows, plot);
  const bar = h('canvas', { width: 256, height: 1, className: 'legend-bar' });
  const tickRow = h('div', { className: 'legend-ticks' });
  const legendTitle = h('div', { className: 'legend-title' });
  const maskKey = h('div', { className: 'legend-masked', hidden: true }, h('i'), ' masked (−∞)');
  const legend = h('div', { className: 'legend' }, bar, tickRow, legendTitle, maskKey);
  legend.dataset.testid = `legend-${id}`;
  const readout = h('p', { className: 'sr-only' });
  readout.setAttribute('aria-live', 'polite');
  readout.dataset.testid = `readout-${id}`;
  const el = h('figure', { className: 'hm' }, body, legend, readout);
  el.dataset.testid = `figure-${id}`;

  let current = null; // { matrix, opts, scale }
  let active = null; // { i, j } under the pointer or keyboard focus
  let focusCell = { i: 0, j: 0 };
  let image = null;
  let legendKey = '';

  function draw() {
    const { matrix, scale } = current;
    const { rows: r, cols: c, data } = matrix;
    if (canvas.width !== c || canvas.height !== r) {
      canvas.width = c;
      canvas.height = r;
      image = null;
    }
    const ctx = canvas.getContext('2d');
    image ??= ctx.createImageData(c, r);
    const px = image.data;
    const table = TABLES[scale.scheme];
    const span = scale.hi - scale.lo;
    for (let p = 0, q = 0; p < r * c; p++, q += 4) {
      const v = data[p];
      if (v === -Infinity) {
        px[q] = MASKED[0]; px[q + 1] = MASKED[1]; px[q + 2] = MASKED[2];
      } else {
        const t = (v - scale.lo) / span;
        const k = (t <= 0 ? 0 : t >= 1 ? 255 : Math.round(t * 255)) * 3;
        px[q] = table[k]; px[q + 1] = table[k + 1]; px[q + 2] = table[k + 2];
      }
      px[q + 3] = 255;
    }
    ctx.putImageData(image, 0, 0);
  }

  function drawValues() {
    const { matrix, scale, opts } = current;
    const show = opts.showValues ?? (matrix.cols <= 10 && matrix.rows <= 16);
    el.classList.toggle('with-values', show);
    if (!show) {
      if (values.childElementCount) values.replaceChildren();
      return;
    }
    const n = matrix.rows * matrix.cols;
    if (values.childElementCount !== n) values.replaceChildren(...Array.from({ length: n }, () => h('span')));
    for (let p = 0; p < n; p++) {
      const v = matrix.data[p];
      const span = values.children[p];
      span.textContent = v === -Infinity ? '−∞' : v.toFixed(2).replace('-', '−');
      span.style.color = textColor(colorOf(scale, v));
    }
  }

  function drawLegend() {
    const { scale, opts } = current;
    const key = `${scale.scheme}|${scale.lo}|${scale.hi}|${scale.masked}|${opts.legend}`;
    if (key === legendKey) return;
    legendKey = key;
    const ctx = bar.getContext('2d');
    const img = ctx.createImageData(256, 1);
    const table = TABLES[scale.scheme];
    for (let i = 0; i < 256; i++) img.data.set([table[i * 3], table[i * 3 + 1], table[i * 3 + 2], 255], i * 4);
    ctx.putImageData(img, 0, 0);
    const values = ticks(scale);
    if (tickRow.childElementCount !== values.length) {
      tickRow.replaceChildren(...values.map((_, k) => {
        const span = h('span');
        span.style.left = `${(k / (values.length - 1)) * 100}%`;
        return span;
      }));
    }
    values.forEach((v, k) => { tickRow.children[k].textContent = num(Number(v.toPrecision(2))); });
    if (legendTitle.textContent !== opts.legend) legendTitle.textContent = opts.legend;
    maskKey.hidden = !scale.masked;
  }

  function place(box, i, j) {
    const { rows: r, cols: c } = current.matrix;
    Object.assign(box.style, { left: `${(j / c) * 100}%`, top: `${(i / r) * 100}%`, width: `${100 / c}%`, height: `${100 / r}%` });
  }

  function show(i, j, x, y) {
    if (!current) return;
    active = { i, j };
    const info = current.opts.describe(i, j);
    if (x === undefined) {
      const b = canvas.getBoundingClientRect();
      x = b.left + ((j + 0.75) * b.width) / current.matrix.cols;
      y = b.top + ((i + 0.75) * b.height) / current.matrix.rows;
    }
    showTooltip(info, x, y);
    readout.textContent = tooltipText(info);
    place(cellHl, i, j);
    cellHl.hidden = false;
    current.opts.onHover?.(i, j);
  }

  function leave() {
    active = null;
    cellHl.hidden = true;
    hideTooltip();
    current?.opts.onHover?.(null, null);
  }

  const cellAt = (ev) => {
    const b = canvas.getBoundingClientRect();
    const { rows: r, cols: c } = current.matrix;
    const j = Math.floor(((ev.clientX - b.left) / b.width) * c);
    const i = Math.floor(((ev.clientY - b.top) / b.height) * r);
    return i >= 0 && i < r && j >= 0 && j < c ? { i, j } : null;
  };
  canvas.addEventListener('pointermove', (ev) => {
    const cell = current && cellAt(ev);
    if (!cell) return;
    focusCell = cell;
    show(cell.i, cell.j, ev.clientX, ev.clientY);
  });
  canvas.addEventListener('pointerdown', (ev) => {
    const cell = current && cellAt(ev);
    if (cell) { focusCell = cell; show(cell.i, cell.j, ev.clientX, ev.clientY); }
  });
  canvas.addEventListener('pointerleave', (ev) => { if (ev.pointerType === 'mouse') leave(); });
  canvas.addEventListener('focus', () => show(focusCell.i, focusCell.j));
  canvas.addEventListener('blur', leave);
  canvas.addEventListener('keydown', (ev) => {
    if (!current) return;
    const { rows: r, cols: c } = current.matrix;
    const moves = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] };
    let { i, j } = focusCell;
    if (moves[ev.key]) { i += moves[ev.key][0]; j += moves[ev.key][1]; }
    else if (ev.key === 'Home') j = 0;
    else if (ev.key === 'End') j = c - 1;
    else if (ev.key === 'Escape') { leave(); return; }
    else return;
    ev.preventDefault();
    focusCell = { i: Math.max(0, Math.min(r - 1, i)), j: Math.max(0, Math.min(c - 1, j)) };
    show(focusCell.i, focusCell.j);
  });

  return {
    el,
    /**
     * Draws `matrix` ({ rows, cols, data }). opts: rowLabels, colLabels, kind
     * ('weights' | 'signed'), legend (title), describe(i, j) -> readout, onHover(i, j).
     */
    update(matrix, opts) {
      const scale = scaleFor(opts.kind, matrix.data);
      current = { matrix, opts, scale };
      body.style.setProperty('--rows', matrix.rows);
      body.style.setProperty('--cols', matrix.cols);
      body.style.setProperty('--label-w', `${labelSize(opts.rowLabels)}ch`);
      body.style.setProperty('--label-h', `${labelSize(opts.colLabels)}ch`);
      fillLabels(rows, opts.rowLabels, labelStride(matrix.rows));
      fillLabels(cols, opts.colLabels, labelStride(matrix.cols));
      draw();
      drawValues();
      drawLegend();
      if (focusCell.i >= matrix.rows || focusCell.j >= matrix.cols) focusCell = { i: 0, j: 0 };
      if (active) {
        if (active.i < matrix.rows && active.j < matrix.cols) show(active.i, active.j);
        else leave();
      }
      el.dataset.ready = 'true';
    },
    /** Outlines row i (null clears): the context row a hovered weight feeds. */
    highlightRow(i) {
      if (i === null || !current || i >= current.matrix.rows) { rowHl.hidden = true; return; }
      place(rowHl, i, 0);
      rowHl.style.width = '100%';
      rowHl.hidden = false;
    },
    get scale() { return current?.scale; },
    get matrix() { return current?.matrix; },
    get labels() { return current && { rows: current.opts.rowLabels, cols: current.opts.colLabels, legend: current.opts.legend }; },
  };
}

