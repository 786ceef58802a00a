// Draws a matrix as a heatmap: a canvas at the matrix's own resolution filled
// through ImageData from a colour table and scaled by CSS, with axis labels,
// a legend, cell values, a tooltip and keyboard access. Reads only what it is
// given; knows nothing about the engine.
import { VIRIDIS, colorIndex, cssColor, textColor } from './colors.js';

const fmt = (v) => v.toFixed(4);

function fillLabels(el, labels) {
  el.replaceChildren(...labels.map((t) => Object.assign(document.createElement('span'), { textContent: t })));
}

function drawLegend(bar, ticks, lo, hi, table) {
  const ctx = bar.getContext('2d');
  const img = ctx.createImageData(256, 1);
  for (let i = 0; i < 256; i++) {
    img.data.set([table[i * 3], table[i * 3 + 1], table[i * 3 + 2], 255], i * 4);
  }
  ctx.putImageData(img, 0, 0);
  const n = 5;
  ticks.replaceChildren(...Array.from({ length: n }, (_, k) => {
    const span = document.createElement('span');
    span.style.left = `${(k / (n - 1)) * 100}%`;
    span.textContent = (lo + ((hi - lo) * k) / (n - 1)).toFixed(2);
    return span;
  }));
}

/**
 * Renders `matrix` ({ rows, cols, data }) into the figure's elements.
 * `describe(i, j, value)` gives the text shown for a cell.
 */
export function renderHeatmap(els, matrix, { rowLabels, colLabels, describe, lo = 0, hi } = {}) {
  const { rows, cols, data } = matrix;
  const top = hi ?? Math.max(...data);
  const table = VIRIDIS;
  els.figure.style.setProperty('--n', String(Math.max(rows, cols)));
  els.figure.querySelector('.hm-grid').style.gridTemplateColumns = `auto calc(${cols} * var(--cell))`;
  els.figure.querySelector('.hm-grid').style.gridTemplateRows = `auto calc(${rows} * var(--cell))`;
  els.cols.style.gridTemplateColumns = `repeat(${cols}, var(--cell))`;
  els.rows.style.gridTemplateRows = `repeat(${rows}, var(--cell))`;
  const plot = els.canvas.parentElement;
  plot.style.width = `calc(${cols} * var(--cell))`;
  plot.style.height = `calc(${rows} * var(--cell))`;
  fillLabels(els.rows, rowLabels);
  fillLabels(els.cols, colLabels);

  els.canvas.width = cols;
  els.canvas.height = rows;
  const ctx = els.canvas.getContext('2d');
  const img = ctx.createImageData(cols, rows);
  const indices = new Uint8Array(rows * cols);
  for (let p = 0; p < rows * cols; p++) {
    const c = colorIndex(data[p], lo, top);
    indices[p] = c;
    img.data[p * 4] = table[c * 3];
    img.data[p * 4 + 1] = table[c * 3 + 1];
    img.data[p * 4 + 2] = table[c * 3 + 2];
    img.data[p * 4 + 3] = 255;
  }
  ctx.putImageData(img, 0, 0);

  els.values.style.gridTemplateColumns = `repeat(${cols}, 1fr)`;
  els.values.style.gridTemplateRows = `repeat(${rows}, 1fr)`;
  els.values.replaceChildren(...(rows * cols <= 400 ? Array.from(data, (v, p) => {
    const span = document.createElement('span');
    span.textContent = v.toFixed(2);
    span.style.color = textColor(table, indices[p]);
    return span;
  }) : []));
  drawLegend(els.legendBar, els.legendTicks, lo, top, table);

  els.table.replaceChildren();
  const head = els.table.createTHead().insertRow();
  head.append(Object.assign(document.createElement('th'), { textContent: 'query \\ key', scope: 'col' }));
  colLabels.forEach((t) => head.append(Object.assign(document.createElement('th'), { textContent: t, scope: 'col' })));
  const body = els.table.createTBody();
  for (let i = 0; i < rows; i++) {
    const tr = body.insertRow();
    tr.append(Object.assign(document.createElement('th'), { textContent: rowLabels[i], scope: 'row' }));
    for (let j = 0; j < cols; j++) tr.insertCell().textContent = fmt(data[i * cols + j]);
  }

  const cellText = (i, j) => describe(i, j, data[i * cols + j]);
  let focus = { i: 0, j: 0 };
  const show = (i, j, x, y) => {
    els.tooltip.hidden = false;
    els.tooltip.textContent = cellText(i, j);
    const box = els.figure.getBoundingClientRect();
    const cbox = els.canvas.getBoundingClientRect();
    const left = x ?? cbox.left + ((j + 0.5) * cbox.width) / cols;
    const topPx = y ?? cbox.top + ((i + 0.5) * cbox.height) / rows;
    els.tooltip.style.left = `${Math.min(left - box.left + 12, box.width - 160)}px`;
    els.tooltip.style.top = `${topPx - box.top + 12}px`;
    els.readout.textContent = cellText(i, j);
    els.canvas.setAttribute('aria-label', `Heatmap of attention weights. ${cellText(i, j)}`);
    [...els.values.children].forEach((s, p) => s.classList.toggle('focus', p === i * cols + j));
  };
  const cellAt = (ev) => {
    const r = els.canvas.getBoundingClientRect();
    const j = Math.floor(((ev.clientX - r.left) / r.width) * cols);
    const i = Math.floor(((ev.clientY - r.top) / r.height) * rows);
    return i >= 0 && i < rows && j >= 0 && j < cols ? { i, j } : null;
  };
  els.canvas.onmousemove = (ev) => {
    const c = cellAt(ev);
    if (!c) return;
    focus = c;
    show(c.i, c.j, ev.clientX, ev.clientY);
  };
  els.canvas.onmouseleave = () => { els.tooltip.hidden = true; };
  els.canvas.onfocus = () => show(focus.i, focus.j);
  els.canvas.onblur = () => { els.tooltip.hidden = true; };
  els.canvas.onkeydown = (ev) => {
    const moves = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] };
    const m = moves[ev.key];
    if (!m) return;
    ev.preventDefault();
    focus = { i: Math.max(0, Math.min(rows - 1, focus.i + m[0])), j: Math.max(0, Math.min(cols - 1, focus.j + m[1])) };
    show(focus.i, focus.j);
  };
  els.figure.dataset.ready = 'true';
  return { color: (p) => cssColor(table, indices[p]) };
}
