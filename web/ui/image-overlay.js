// An image with a map laid over it: the greys of an image (white ink on black,
// as MNIST) and, upsampled to the image's pixels, a map of weights over it (the
// attention over a CNN's feature grid, or a saliency map at pixel resolution),
// coloured by the shared viridis table; an optional box (hard attention's
// sampled glimpse); a legend for both. One canvas at the image's own
// resolution, filled through ImageData and scaled by CSS; no stylesheet needed.
//
//   const ov = createImageOverlay({ id, label, size = 240 })
//     id      hooks: data-testid="overlay-<id>" (canvas), "figure-overlay-<id>", "glimpse-<id>", "legend-overlay-<id>"
//     label   the canvas's accessible name (the figure's caption is set by update)
//     size    the displayed width in CSS px of the longer side (the picture shrinks with its container)
//   ov.update({ image, map, cell, box, boxLabel, caption, legend, hi, alpha, description })
//     image   { rows, cols, data } greys in [0, 1], row-major
//     map     { rows, cols, data } weights >= 0 (null: the image alone); a map coarser than the
//             image is upsampled bilinearly between cell centres, each cell `cell` pixels
//     cell    { height, width } canvas pixels per map cell (default image size / map size)
//     box     { top, left, height, width } in image pixels (null: none), drawn as an outline
//     boxLabel  the box's legend entry (default 'the glimpse: the cell hard attention reads')
//     caption the figure's caption;  legend: the colour bar's title (default 'attention weight')
//     hi      the colour scale's top (default: the map's largest value); the bottom is 0
//     alpha   how strongly the map tints the image, 0..1 (default 0.6)
//     description  the canvas's full accessible text (default: label and caption)
//   ov.clear(message)   removes the picture (stale readouts never stay) and shows `message`
//   Keyboard and pointer, as the heatmaps: the canvas is a Tab stop; the arrow keys (Shift: 5 at a
//   time), Home and End move a cursor over the map's cells, and each is read out ("readout-overlay-<id>",
//   aria-live) with its weight and the largest; the pointer reads the cell under it.
//   ov.el               the <figure>;  ov.canvas;  ov.current  (the last update's arguments)
//   upsample(map, rows, cols, cell) -> Float32Array(rows * cols)   (exported for tests)
import { h } from './dom.js';
import { num } from './format.js';
import { TABLES, colorIndex } from './colors.js';
import { legendTickLabels } from './heatmap.js';

/**
 * The map's value at every image pixel: bilinear between cell centres (cell k of
 * a side of `n` cells, each `s` pixels, has its centre at (k + 0.5)·s), held flat
 * beyond the outer centres. Pixels past the last cell (a grid that covers only
 * part of the image, e.g. 7 cells of 8 on a 60-pixel side) take the last cell.
 */
export function upsample(map, rows, cols, cell = { height: rows / map.rows, width: cols / map.cols }) {
  const out = new Float32Array(rows * cols);
  const axis = (n, size, s) => Array.from({ length: size }, (_, p) => {
    const t = Math.min(Math.max((p + 0.5) / s - 0.5, 0), n - 1);
    const k = Math.min(Math.floor(t), Math.max(n - 2, 0));
    return { k, f: n > 1 ? t - k : 0 };
  });
  const ys = axis(map.rows, rows, cell.height);
  const xs = axis(map.cols, cols, cell.width);
  const at = (r, c) => map.data[Math.min(r, map.rows - 1) * map.cols + Math.min(c, map.cols - 1)];
  for (let r = 0; r < rows; r++) {
    const { k: i, f: fy } = ys[r];
    for (let c = 0; c < cols; c++) {
      const { k: j, f: fx } = xs[c];
      const top = at(i, j) * (1 - fx) + at(i, j + 1) * fx;
      const bottom = at(i + 1, j) * (1 - fx) + at(i + 1, j + 1) * fx;
      out[r * cols + c] = top * (1 - fy) + bottom * fy;
    }
  }
  return out;
}

const maxOf = (data) => {
  let m = 0;
  for (let i = 0; i < data.length; i++) if (data[i] > m) m = data[i];
  return m;
};

export function createImageOverlay({ id, label, size = 240 }) {
  const legendWidth = Math.min(size, 200);
  const canvas = h('canvas', {
    width: 1, height: 1, dataset: { testid: `overlay-${id}` },
    style: { display: 'block', width: '100%', height: 'auto', imageRendering: 'pixelated', background: '#000' },
    attrs: { role: 'img', 'aria-label': label, tabindex: 0 },
  });
  const cursor = h('div', {
    hidden: true, dataset: { testid: `cursor-${id}` },
    style: { position: 'absolute', outline: '2px solid #fff', boxShadow: '0 0 0 1px #000, inset 0 0 0 1px #000', pointerEvents: 'none', boxSizing: 'border-box' },
  });
  const readout = h('p', { className: 'sr-only', dataset: { testid: `readout-overlay-${id}` }, attrs: { 'aria-live': 'polite' } });
  const glimpse = h('div', {
    hidden: true, dataset: { testid: `glimpse-${id}` },
    style: { position: 'absolute', border: '2px solid #ff4d4d', boxShadow: '0 0 0 1px #000', pointerEvents: 'none', boxSizing: 'border-box' },
  });
  const plot = h('div', { style: { position: 'relative', width: '100%' } }, canvas, glimpse, cursor);
  const frame = h('div', { style: { width: `${size}px`, maxWidth: '100%' } }, plot);

  const bar = h('canvas', { width: 256, height: 1, style: { display: 'block', width: '100%', height: '10px', borderRadius: '2px' }, attrs: { 'aria-hidden': 'true' } });
  const ticks = h('div', { style: { position: 'relative', height: '1.1em', fontSize: '0.7rem', color: 'var(--muted, #555)' } });
  const title = h('div', { style: { fontSize: '0.72rem', color: 'var(--muted, #555)' } });
  const boxText = h('span');
  const boxKey = h('div', { hidden: true, style: { fontSize: '0.72rem', color: 'var(--muted, #555)', display: 'flex', alignItems: 'center', gap: '0.35rem' } },
    h('i', { style: { display: 'inline-block', flex: '0 0 auto', width: '0.8rem', height: '0.8rem', border: '2px solid #ff4d4d', boxSizing: 'border-box' } }),
    boxText);
  const legend = h('div', { dataset: { testid: `legend-overlay-${id}` }, style: { width: `${legendWidth}px`, maxWidth: '100%', marginTop: '0.35rem' } },
    bar, ticks, title, boxKey);
  const caption = h('figcaption', { style: { fontSize: '0.8rem', marginBottom: '0.3rem' } });
  const message = h('p', { hidden: true, style: { fontSize: '0.85rem', color: 'var(--muted, #555)', margin: '0.3rem 0' } });
  const el = h('figure', { className: 'image-overlay', dataset: { testid: `figure-overlay-${id}` }, style: { margin: 0, minWidth: 0 } },
    caption, frame, legend, message, readout);
  let at = { i: 0, j: 0 }; // the cursor's map cell
  let shown = null; // { map, name, rows, cols, cell } of the last update with a map

  /** Reads map cell (i, j) out and outlines it. */
  function read(i, j) {
    if (!shown) return;
    const { map, name, rows, cols, cell } = shown;
    at = { i: Math.max(0, Math.min(map.rows - 1, i)), j: Math.max(0, Math.min(map.cols - 1, j)) };
    const v = map.data[at.i * map.cols + at.j];
    const top = maxOf(map.data);
    readout.textContent = `${map.rows === rows ? 'pixel' : 'cell'} row ${at.i + 1}, column ${at.j + 1} of ${map.rows}×${map.cols}: `
      + `${name} ${num(v, 4)}${v >= top ? ' (the largest)' : ` (largest ${num(top, 4)})`}`;
    Object.assign(cursor.style, {
      top: `${(100 * at.i * cell.height) / rows}%`, left: `${(100 * at.j * cell.width) / cols}%`,
      height: `${(100 * Math.min(cell.height, rows - at.i * cell.height)) / rows}%`, width: `${(100 * Math.min(cell.width, cols - at.j * cell.width)) / cols}%`,
    });
    cursor.hidden = false;
  }
  canvas.addEventListener('focus', () => read(at.i, at.j));
  canvas.addEventListener('blur', () => { cursor.hidden = true; });
  canvas.addEventListener('keydown', (e) => {
    if (!shown) return;
    const k = e.shiftKey ? 5 : 1;
    const moves = { ArrowUp: [-k, 0], ArrowDown: [k, 0], ArrowLeft: [0, -k], ArrowRight: [0, k] };
    if (moves[e.key]) read(at.i + moves[e.key][0], at.j + moves[e.key][1]);
    else if (e.key === 'Home') read(at.i, 0);
    else if (e.key === 'End') read(at.i, shown.map.cols - 1);
    else return;
    e.preventDefault();
  });
  canvas.addEventListener('pointermove', (e) => {
    if (!shown) return;
    const r = canvas.getBoundingClientRect();
    const { rows, cols, cell } = shown;
    read(Math.floor((((e.clientY - r.top) / r.height) * rows) / cell.height), Math.floor((((e.clientX - r.left) / r.width) * cols) / cell.width));
  });
  canvas.addEventListener('pointerleave', () => { if (document.activeElement !== canvas) cursor.hidden = true; });

  {
    const ctx = bar.getContext('2d');
    const img = ctx.createImageData(256, 1);
    for (let i = 0; i < 256; i++) {
      img.data.set([TABLES.sequential[3 * i], TABLES.sequential[3 * i + 1], TABLES.sequential[3 * i + 2], 255], 4 * i);
    }
    ctx.putImageData(img, 0, 0);
  }

  function drawLegend(hi, name) {
    title.textContent = name;
    // the legend shrinks with its figure: ticks for the width it has now, so no two labels meet
    const width = legend.clientWidth || legendWidth;
    ticks.replaceChildren(...legendTickLabels(0, hi, width, width < 180 ? 2 : 3).map(({ label: text, at }) => h('span', {
      textContent: text,
      style: { position: 'absolute', whiteSpace: 'nowrap', left: `${100 * at}%`, transform: at === 0 ? 'none' : at >= 1 ? 'translateX(-100%)' : 'translateX(-50%)' },
    })));
  }

  const api = {
    el,
    canvas,
    current: null,
    update({ image, map = null, cell, box = null, boxLabel = 'the glimpse: the cell hard attention reads', caption: text = '', legend: legendTitle = 'attention weight', hi: top, alpha = 0.6, description }) {
      const { rows, cols } = image;
      if (canvas.width !== cols || canvas.height !== rows) {
        canvas.width = cols;
        canvas.height = rows;
      }
      frame.style.width = `${Math.round((size * cols) / Math.max(rows, cols))}px`;
      const up = map ? (map.rows === rows && map.cols === cols ? map.data : upsample(map, rows, cols, cell)) : null;
      const hi = top > 0 ? top : up ? maxOf(up) || 1 : 1;
      const ctx = canvas.getContext('2d');
      const img = ctx.createImageData(cols, rows);
      const table = TABLES.sequential;
      for (let p = 0; p < rows * cols; p++) {
        const g = 255 * Math.min(Math.max(image.data[p], 0), 1);
        let r = g;
        let gr = g;
        let b = g;
        if (up) {
          const c = 3 * colorIndex(up[p], 0, hi);
          r = (1 - alpha) * g + alpha * table[c];
          gr = (1 - alpha) * g + alpha * table[c + 1];
          b = (1 - alpha) * g + alpha * table[c + 2];
        }
        img.data[4 * p] = r;
        img.data[4 * p + 1] = gr;
        img.data[4 * p + 2] = b;
        img.data[4 * p + 3] = 255;
      }
      ctx.putImageData(img, 0, 0);
      glimpse.hidden = !box;
      boxKey.hidden = !box;
      boxText.textContent = boxLabel;
      if (box) {
        Object.assign(glimpse.style, {
          top: `${(100 * box.top) / rows}%`, left: `${(100 * box.left) / cols}%`,
          height: `${(100 * box.height) / rows}%`, width: `${(100 * box.width) / cols}%`,
        });
      }
      legend.hidden = false;
      bar.hidden = !up;
      ticks.hidden = !up;
      if (up) drawLegend(hi, legendTitle);
      else title.textContent = 'the image alone';
      caption.textContent = text;
      const keys = map ? ': use the arrow keys to read its cells' : '';
      canvas.setAttribute('aria-label', `${description ?? (text ? `${label}: ${text}` : label)}${keys}`);
      shown = map ? { map, name: legendTitle, rows, cols, cell: map.rows === rows && map.cols === cols ? { height: 1, width: 1 } : cell ?? { height: rows / map.rows, width: cols / map.cols } } : null;
      canvas.tabIndex = map ? 0 : -1;
      if (!map) cursor.hidden = true;
      else if (document.activeElement === canvas || !cursor.hidden) read(at.i, at.j);
      frame.hidden = false;
      message.hidden = true;
      api.current = { image, map, cell, box, caption: text };
    },
    clear(text = '') {
      api.current = null;
      shown = null;
      cursor.hidden = true;
      readout.textContent = '';
      canvas.tabIndex = -1;
      frame.hidden = true;
      legend.hidden = true;
      glimpse.hidden = true;
      caption.textContent = '';
      message.textContent = text;
      message.hidden = !text;
    },
  };
  api.clear();
  return api;
}
