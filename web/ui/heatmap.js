// The heatmap every picture on every page uses: a canvas at the matrix's own
// resolution filled through ImageData from a colour table and scaled by CSS, DOM
// axis labels (token names), a legend with ticks on round values, optional cell
// values, masked (−∞) cells in grey, a hover and keyboard readout (arrow keys,
// Home/End, Escape), optional column bands (e.g. the heads of Q, K, V), a locked
// colour scale, and PNG/SVG export of the figure. An edit repaints little: the
// labels are plain text (long ones shortened here, not clipped per label), and a
// style, a label, the bands or the legend ticks are written only when they change.
//
//   const hm = createHeatmap({ id, label, axes, interactive = true, legend = true, uprightCols = false })
//     id           hooks: data-testid="heatmap-<id>" (canvas), "figure-<id>", "legend-<id>", "readout-<id>"
//     label        the canvas's accessible name;  axes: corner text, e.g. 'query ↓ key →'
//     interactive  false: no focus, hover or readout (a thumbnail inside a button)
//     uprightCols  column labels drawn upright, one line (short labels, e.g. characters), instead of rotated
//   causalMasked(matrix)      a causal map's cells above the diagonal as −∞ (drawn masked; opts.masked: MASKED_WEIGHTS)
//   hm.update(matrix, opts)   matrix { rows, cols, data: Float32Array (row-major; −Infinity = masked) }
//     opts.rowLabels, opts.colLabels   string[] (drawn as text, ellipsised, full text in title)
//     opts.kind       'weights' (viridis on [0, max]; RdBu if any is negative) | 'signed' (RdBu, symmetric) | 'unit' ([0, 1])
//     opts.masked     { key, value }: how masked (−∞) cells read, in the legend (default 'masked (−∞)') and in the
//                     cell (default '−∞'); a weights map passes its masked cells as −∞ with e.g. { key: 'masked: weight 0', value: '' }
//     opts.legend     legend title;  opts.showValues: force cell values on/off (default: small matrices)
//     opts.describe(i, j) -> { title, lines, value, contribution? }   the hover / keyboard readout
//     opts.onHover(i | null, j | null);  opts.bands: [{ from, to, label }] column groups, marked above the plot
//     opts.maxCell    largest cell side in px (default 48);  opts.minCell: smallest (default 0), past which
//                     the figure is wider than its box (put it in one that scrolls)
//     opts.everyLabel every label drawn, in a font the cell's size (default: every 2nd past 24, every 4th past 48)
//     opts.outline    { rows: [from, to] | null, cells: [[i, j], ...] }: a band of rows outlined (dashed) and
//                     cells outlined (e.g. a repeated stretch and where an induction head should look)
//   hm.lockScale(true | false)  keep the current colour scale for later updates (compare settings by colour)
//   hm.highlightRow(i | null)   outline row i;   hm.scale, hm.matrix, hm.labels (for export)
//   hm.svg(title) -> { svg, width, height };  hm.png(title, ratio = 2) -> Promise<Blob>
//   hm.el                       the <figure>
import { h, setHidden, setText } from './dom.js';
import { MASKED, TABLES, colorOf, scaleFor, textColor } from './colors.js';
import { fixed, num, tick } from './format.js';
import { legendTickLabels, niceTicks } from './ticks.js';
import { hideTooltip, showTooltip, tooltipText } from './tooltip.js';
import { heatmapSvg, svgToPng } from './heatmap-export.js';

export { legendLabel, legendTickLabels } from './ticks.js';

/** The longest label drawn whole, in characters; longer ones end in "…" (full text in the title). */
const LABEL_MAX = 12;
const shorten = (t) => { const cs = [...t]; return cs.length > LABEL_MAX ? `${cs.slice(0, LABEL_MAX - 1).join('')}…` : t; };

const drawnLabels = new WeakMap(); // el -> the labels and stride it shows: an edit that keeps them reads no label back

function fillLabels(el, labels, stride) {
  const key = `${stride}\n${labels.join('\n')}`;
  if (drawnLabels.get(el) === key) return;
  drawnLabels.set(el, key);
  if (el.childElementCount !== labels.length) el.replaceChildren(...labels.map(() => h('span')));
  labels.forEach((t, k) => {
    const span = el.children[k];
    const text = k % stride === 0 ? shorten(t) : '';
    if (span.textContent !== text) span.textContent = text;
    if (span.title !== t) span.title = t;
  });
}

const labelStride = (n) => (n > 48 ? 4 : n > 24 ? 2 : 1);
/**
 * Label band size in `ch` for the longest label: at least 6 (even for one-character labels, so the
 * corner text fits and the band does not jump as labels change), at most LABEL_MAX, plus padding.
 */
export const labelSize = (labels) => Math.min(LABEL_MAX, Math.max(6, ...labels.map((t) => [...t].length))) + 1.5;

/** The legend's ticks: round values inside the scale (and its two ends when they are round). */
export function legendTicks(scale, count = 4) {
  return niceTicks(scale.lo, scale.hi, count);
}

/** How a weights map's masked cells read (opts.masked): grey, and the legend says their weight is 0. */
export const MASKED_WEIGHTS = Object.freeze({ key: 'masked: weight 0', value: '' });

/**
 * A causal attention map (query i sees keys j <= i) with the cells above the diagonal −∞, so
 * that the map draws them as masked instead of as weights of 0 like any other.
 */
export function causalMasked({ rows, cols, data }) {
  const out = Float32Array.from(data);
  for (let i = 0; i < rows; i++) out.fill(-Infinity, i * cols + Math.min(cols, i + 1), (i + 1) * cols);
  return { rows, cols, data: out };
}

export function createHeatmap({ id, label, axes, interactive = true, legend: withLegend = true, uprightCols = false }) {
  const canvas = h('canvas', { width: 1, height: 1, className: 'hm-canvas', dataset: { testid: `heatmap-${id}` } });
  if (interactive) {
    canvas.tabIndex = 0;
    canvas.setAttribute('role', 'img');
    canvas.setAttribute('aria-label', `${label}: use the arrow keys to read cells`);
  } else canvas.setAttribute('aria-hidden', 'true');
  const values = h('div', { className: 'hm-values', attrs: { 'aria-hidden': 'true' } });
  const rowHl = h('div', { className: 'hm-row-hl', hidden: true });
  const cellHl = h('div', { className: 'hm-cell-hl', hidden: true });
  const seps = h('div', { className: 'hm-seps', attrs: { 'aria-hidden': 'true' } });
  const outlines = h('div', { className: 'hm-outlines', attrs: { 'aria-hidden': 'true' } });
  const plot = h('div', { className: 'hm-plot' }, canvas, values, seps, outlines, rowHl, cellHl);
  const bands = h('div', { className: 'hm-bands', attrs: { 'aria-hidden': 'true' } });
  const cols = h('div', { className: 'hm-cols', attrs: { 'aria-hidden': 'true' } });
  const rows = h('div', { className: 'hm-rows', attrs: { 'aria-hidden': 'true' } });
  const corner = h('div', { className: 'hm-corner', textContent: axes ?? '', attrs: { 'aria-hidden': 'true' } });
  const bar = h('canvas', { width: 256, height: 1, className: 'legend-bar' });
  const tickRow = h('div', { className: 'legend-ticks' });
  const legendTitle = h('div', { className: 'legend-title' });
  const maskWords = h('span');
  const maskKey = h('div', { className: 'legend-masked', hidden: true }, h('i'), maskWords);
  const lockKey = h('div', { className: 'legend-locked', hidden: true, textContent: 'scale locked' });
  const legend = h('div', { className: 'legend', dataset: { testid: `legend-${id}` }, hidden: !withLegend }, bar, tickRow, legendTitle, maskKey, lockKey);
  // the legend is a row of the figure's grid, so it starts where the matrix starts, whatever the label band's width
  const body = h('div', { className: `hm-body${uprightCols ? ' upright-cols' : ''}` }, bands, corner, cols, rows, plot, legend);
  const readout = h('p', { className: 'sr-only', dataset: { testid: `readout-${id}` }, attrs: { 'aria-live': 'polite' } });
  const el = h('figure', { className: `hm${interactive ? '' : ' hm-thumb'}`, dataset: { testid: `figure-${id}` } }, body, readout);

  // upright column labels leave one line above the matrix: the corner text ('query ↓ key →') takes two
  // where the row labels' band is narrower than it (its font is 0.65 of 0.75 rem: 0.87 ch a character)
  const cornerFits = (rowLabels) => [...(axes ?? '')].length * 0.87 <= labelSize(rowLabels) - 1;
  let current = null; // { matrix, opts, scale }
  let active = null; // { i, j } under the pointer or keyboard focus
  let focusCell = { i: 0, j: 0 };
  let image = null;
  let legendKey = '';
  // the bar's width, kept by a ResizeObserver: read in drawLegend after each edit, it
  // would force a layout per heatmap in the middle of the redraw
  let barWidth = 0;
  if (typeof ResizeObserver === 'function') {
    new ResizeObserver(([entry]) => {
      const w = Math.round(entry.contentRect.width);
      if (w === barWidth) return;
      barWidth = w;
      if (current && legendKey) { legendKey = ''; drawLegend(); }
    }).observe(bar);
  }
  let locked = null; // the scale kept while locked
  const vars = {}; // the custom properties last written on the body
  let bandKey = '';
  let outlineKey = '';

  function setVar(name, value) {
    if (vars[name] === value) return;
    vars[name] = value;
    body.style.setProperty(name, value);
  }

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
    const show = interactive && (opts.showValues ?? (matrix.cols <= 10 && matrix.rows <= 16));
    if (el.classList.contains('with-values') !== show) el.classList.toggle('with-values', show);
    if (!show) {
      if (values.childElementCount) values.replaceChildren();
      return;
    }
    const n = matrix.rows * matrix.cols;
    if (values.childElementCount !== n) values.replaceChildren(...Array.from({ length: n }, () => h('span')));
    for (let p = 0; p < n; p++) {
      const v = matrix.data[p];
      const span = values.children[p];
      const text = v === -Infinity ? opts.masked?.value ?? fixed(v, 2) : fixed(v, 2);
      if (span.textContent !== text) span.textContent = text;
      span.style.color = textColor(colorOf(scale, v));
    }
  }

  function drawLegend() {
    const { scale, opts } = current;
    const maskText = ` ${opts.masked?.key ?? 'masked (−∞)'}`;
    const key = `${scale.scheme}|${scale.lo}|${scale.hi}|${scale.masked}|${maskText}|${opts.legend}|${Boolean(locked)}`;
    if (key === legendKey) return;
    legendKey = key;
    const ctx = bar.getContext('2d');
    const img = ctx.createImageData(256, 1);
    const table = TABLES[scale.scheme];
    for (let i = 0; i < 256; i++) {
      img.data[i * 4] = table[i * 3];
      img.data[i * 4 + 1] = table[i * 3 + 1];
      img.data[i * 4 + 2] = table[i * 3 + 2];
      img.data[i * 4 + 3] = 255;
    }
    ctx.putImageData(img, 0, 0);
    // the bar is 15rem wide at most (base.css); narrower on a phone
    const tv = legendTickLabels(scale.lo, scale.hi, barWidth || 240);
    while (tickRow.childElementCount > tv.length) tickRow.lastChild.remove();
    while (tickRow.childElementCount < tv.length) tickRow.append(h('span'));
    tv.forEach(({ label: text, at }, k) => {
      const span = tickRow.children[k];
      setText(span, text);
      const left = `${at * 100}%`;
      if (span.style.left !== left) span.style.left = left;
    });
    setText(legendTitle, opts.legend ?? '');
    setText(maskWords, maskText);
    setHidden(maskKey, !scale.masked);
    setHidden(lockKey, !locked);
  }

  function drawBands() {
    const list = current.opts.bands ?? [];
    const { cols: c } = current.matrix;
    const key = `${c}|${list.map((b) => `${b.from},${b.to},${b.label}`).join(';')}`;
    if (key === bandKey) return;
    bandKey = key;
    bands.hidden = !list.length;
    body.classList.toggle('has-bands', list.length > 0);
    bands.replaceChildren(...list.map((b, k) => h('span', {
      className: `hm-band band-${k % 8}`, textContent: b.label, title: b.label,
      style: { left: `${(b.from / c) * 100}%`, width: `${((b.to - b.from) / c) * 100}%` },
    })));
    seps.replaceChildren(...list.slice(1).map((b) => h('i', { style: { left: `${(b.from / c) * 100}%` } })));
  }

  function drawOutlines() {
    const o = current.opts.outline ?? null;
    const { rows: r, cols: c } = current.matrix;
    const key = o ? `${r}x${c}:${JSON.stringify(o)}` : '';
    if (key === outlineKey) return;
    outlineKey = key;
    const boxes = [];
    if (o?.rows) {
      const [from, to] = o.rows;
      const band = h('div', { className: 'hm-outline-rows' });
      Object.assign(band.style, { left: '0', width: '100%', top: `${(from / r) * 100}%`, height: `${((to - from + 1) / r) * 100}%` });
      boxes.push(band);
    }
    for (const [i, j] of o?.cells ?? []) {
      if (i >= r || j >= c) continue;
      const cell = h('div', { className: 'hm-outline-cell' });
      place(cell, i, j);
      boxes.push(cell);
    }
    outlines.replaceChildren(...boxes);
  }

  function place(box, i, j) {
    const { rows: r, cols: c } = current.matrix;
    Object.assign(box.style, { left: `${(j / c) * 100}%`, top: `${(i / r) * 100}%`, width: `${100 / c}%`, height: `${100 / r}%` });
  }

  function show(i, j, x, y) {
    if (!current?.opts.describe) return;
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
    setHidden(cellHl, false);
    current.opts.onHover?.(i, j);
  }

  function leave() {
    active = null;
    setHidden(cellHl, true);
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
  if (interactive) {
    const point = (ev) => {
      const cell = current && cellAt(ev);
      if (!cell) return;
      focusCell = cell;
      show(cell.i, cell.j, ev.clientX, ev.clientY);
    };
    canvas.addEventListener('pointermove', point);
    canvas.addEventListener('pointerdown', point);
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
  }

  return {
    el,
    update(matrix, opts) {
      const scale = locked && locked.kind === opts.kind ? locked.scale : scaleFor(opts.kind, matrix.data);
      if (locked && locked.kind !== opts.kind) locked = { kind: opts.kind, scale };
      current = { matrix, opts, scale };
      setVar('--rows', String(matrix.rows));
      setVar('--cols', String(matrix.cols));
      setVar('--max-cell', `${opts.maxCell ?? 48}px`);
      setVar('--min-cell', `${opts.minCell ?? 0}px`);
      setVar('--label-w', `${labelSize(opts.rowLabels)}ch`);
      setVar('--label-h', uprightCols ? (cornerFits(opts.rowLabels) ? '1.6em' : '2.5em') : `${labelSize(opts.colLabels)}ch`);
      body.classList.toggle('every-label', Boolean(opts.everyLabel));
      fillLabels(rows, opts.rowLabels, opts.everyLabel ? 1 : labelStride(matrix.rows));
      fillLabels(cols, opts.colLabels, opts.everyLabel ? 1 : labelStride(matrix.cols));
      draw();
      drawValues();
      drawBands();
      drawOutlines();
      if (withLegend) drawLegend();
      if (focusCell.i >= matrix.rows || focusCell.j >= matrix.cols) focusCell = { i: 0, j: 0 };
      if (active) {
        if (active.i < matrix.rows && active.j < matrix.cols) show(active.i, active.j);
        else leave();
      }
      if (el.dataset.ready !== 'true') el.dataset.ready = 'true';
    },
    lockScale(on) {
      locked = on && current ? { kind: current.opts.kind, scale: current.scale } : null;
      if (current) this.update(current.matrix, current.opts);
    },
    highlightRow(i) {
      if (i === null || !current || i >= current.matrix.rows) { setHidden(rowHl, true); return; }
      place(rowHl, i, 0);
      rowHl.style.width = '100%';
      setHidden(rowHl, false);
    },
    get scale() { return current?.scale; },
    get matrix() { return current?.matrix; },
    get labels() { return current && { rows: current.opts.rowLabels, cols: current.opts.colLabels, legend: current.opts.legend }; },
    svg(title) { return heatmapSvg(this, title); },
    png(title, ratio = 2) { return svgToPng(heatmapSvg(this, title), ratio); },
  };
}

