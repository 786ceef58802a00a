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
//   ov.update({ image, map, cell, box, caption, legend, hi, alpha, description })
//     image   { rows, cols, data } greys in [0, 1], row-major
//     map     { rows, cols, data } weights >= 0 (null: the image alone); a map coarser than the
//             image is upsampled bilinearly between cell centres, each cell `cell` pixels
//     cell    { height, width } canvas pixels per map cell (default image size / map size)
//     box     { top, left, height, width } in image pixels (null: none), drawn as an outline
//     caption the figure's caption;  legend: the colour bar's title (default 'attention weight')
//     hi      the colour scale's top (default: the map's largest value); the bottom is 0
//     alpha   how strongly the map tints the image, 0..1 (default 0.6)
//     description  the canvas's full accessible text (default: label and caption)
//   ov.clear(message)   removes the picture (stale readouts never stay) and shows `message`
//   ov.el               the <figure>;  ov.canvas;  ov.current  (the last update's arguments)
//   upsample(map, rows, cols, cell) -> Float32Array(rows * cols)   (exported for tests)
import { h } from './dom.js';
import { TABLES, colorIndex } from './colors.js';
import { tick } from './format.js';
import { niceTicks } from './ticks.js';

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
    attrs: { role: 'img', 'aria-label': label },
  });
  const glimpse = h('div', {
    hidden: true, dataset: { testid: `glimpse-${id}` },
    style: { position: 'absolute', border: '2px solid #ff4d4d', boxShadow: '0 0 0 1px #000', pointerEvents: 'none', boxSizing: 'border-box' },
  });
  const plot = h('div', { style: { position: 'relative', width: '100%' } }, canvas, glimpse);
  const frame = h('div', { style: { width: `${size}px`, maxWidth: '100%' } }, plot);

  const bar = h('canvas', { width: 256, height: 1, style: { display: 'block', width: '100%', height: '10px', borderRadius: '2px' }, attrs: { 'aria-hidden': 'true' } });
  const ticks = h('div', { style: { position: 'relative', height: '1.1em', fontSize: '0.7rem', color: 'var(--muted, #555)' } });
  const title = h('div', { style: { fontSize: '0.72rem', color: 'var(--muted, #555)' } });
  const boxKey = h('div', { hidden: true, style: { fontSize: '0.72rem', color: 'var(--muted, #555)', display: 'flex', alignItems: 'center', gap: '0.35rem' } },
    h('i', { style: { display: 'inline-block', width: '0.8rem', height: '0.8rem', border: '2px solid #ff4d4d', boxSizing: 'border-box' } }),
    'the glimpse: the cell hard attention sampled');
  const legend = h('div', { dataset: { testid: `legend-overlay-${id}` }, style: { width: `${legendWidth}px`, maxWidth: '100%', marginTop: '0.35rem' } },
    bar, ticks, title, boxKey);
  const caption = h('figcaption', { style: { fontSize: '0.8rem', marginBottom: '0.3rem' } });
  const message = h('p', { hidden: true, style: { fontSize: '0.85rem', color: 'var(--muted, #555)', margin: '0.3rem 0' } });
  const el = h('figure', { className: 'image-overlay', dataset: { testid: `figure-overlay-${id}` }, style: { margin: 0, minWidth: 0 } },
    caption, frame, legend, message);

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
    const { step, values } = niceTicks(0, hi, legendWidth < 180 ? 2 : 3);
    ticks.replaceChildren(...values.map((v) => h('span', {
      textContent: tick(v, step),
      style: { position: 'absolute', left: `${(100 * v) / hi}%`, transform: v === 0 ? 'none' : v >= hi ? 'translateX(-100%)' : 'translateX(-50%)' },
    })));
  }

  const api = {
    el,
    canvas,
    current: null,
    update({ image, map = null, cell, box = null, caption: text = '', legend: legendTitle = 'attention weight', hi: top, alpha = 0.6, description }) {
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
      canvas.setAttribute('aria-label', description ?? (text ? `${label}: ${text}` : label));
      frame.hidden = false;
      message.hidden = true;
      api.current = { image, map, cell, box, caption: text };
    },
    clear(text = '') {
      api.current = null;
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
