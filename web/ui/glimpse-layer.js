// The retina's glimpses (RAM, a VisionModel with sensor 'retina') drawn over an
// image overlay (ui/image-overlay.js): the chosen glimpse's patches at every
// scale (the finest solid, the coarser dashed), the earlier glimpses' finest
// patches thin, each numbered in step order at its top-left corner, and the path
// through their centres. One SVG in the image's own pixel coordinates laid over
// the overlay's canvas, so a box's x, y, width and height are predict()'s
// { left, top, width, height }; a legend says what the boxes are.
//
//   const layer = createGlimpseLayer({ id })
//     hooks: data-testid="glimpses-<id>" (the svg), "glimpse-legend-<id>"
//   layer.attach(overlay)       lays the svg over overlay.canvas (call once)
//   layer.update({ rows, cols, locations, at, retina })
//     locations  predict()'s steps' location: [{ x, y, box, boxes }] (boxes finest first)
//     at         the chosen glimpse (0-based): glimpses after it are not drawn
//     retina     the model's config.retina { size, scales }, for the legend
//   layer.clear()               removes every box and the legend
//   layer.legend                the legend element (place it under the figure)
//   glimpseText(locations)      the glimpses' centres in words, for a canvas's accessible text
import { h, setText } from './dom.js';

const SVG = 'http://www.w3.org/2000/svg';
/** The chosen glimpse's colour (image-overlay's glimpse red) and the earlier glimpses' and the path's. */
const NOW = '#ff4d4d';
const BEFORE = '#ffd43b';

function svg(tag, attrs, parent) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  parent?.append(el);
  return el;
}

/** "(29, 28), (31, 40), …": each glimpse's centre pixel (column, row). */
export const glimpseText = (locations) => locations.map((l, t) => `${t + 1} at (${l.x}, ${l.y})`).join(', ');

export function createGlimpseLayer({ id }) {
  const root = svg('svg', { 'aria-hidden': 'true', 'data-testid': `glimpses-${id}`, preserveAspectRatio: 'none' });
  // through the CSSOM: the pages' Content-Security-Policy refuses style attributes
  Object.assign(root.style, { position: 'absolute', inset: '0', width: '100%', height: '100%', pointerEvents: 'none', overflow: 'hidden' });
  const key = (dash, color, width) => h('i', {
    style: { borderTop: `${width}px ${dash} ${color}`, display: 'inline-block', width: '1.6rem', verticalAlign: 'middle', marginRight: '0.35rem' },
  });
  const lines = { fine: h('span'), coarse: h('span'), before: h('span') };
  const legend = h('ul', {
    className: 'glimpse-legend', dataset: { testid: `glimpse-legend-${id}` }, hidden: true,
    style: { listStyle: 'none', padding: 0, margin: '0.35rem 0 0', fontSize: '0.75rem', color: 'var(--muted, #555)' },
  },
  h('li', {}, key('solid', NOW, 2), lines.fine),
  h('li', {}, key('dashed', NOW, 2), lines.coarse),
  h('li', {}, key('solid', BEFORE, 2), lines.before));

  function rect(box, attrs) {
    svg('rect', {
      x: box.left, y: box.top, width: box.width, height: box.height, fill: 'none', 'vector-effect': 'non-scaling-stroke', ...attrs,
    }, root);
  }

  return {
    svg: root,
    legend,
    attach(overlay) {
      overlay.canvas.parentElement.append(root);
      overlay.el.append(legend);
    },
    update({ rows, cols, locations, at, retina }) {
      root.replaceChildren();
      root.setAttribute('viewBox', `0 0 ${cols} ${rows}`);
      const shown = locations.slice(0, at + 1);
      const font = Math.max(3, cols / 18);
      // the path first, so every box and number lies over it
      if (shown.length > 1) {
        svg('polyline', {
          points: shown.map((l) => `${l.x},${l.y}`).join(' '), fill: 'none', stroke: BEFORE, 'stroke-width': 1.5,
          'stroke-linejoin': 'round', 'vector-effect': 'non-scaling-stroke', 'data-role': 'path',
        }, root);
      }
      // a number that would cover an earlier one moves right (glimpses often land close together);
      // a box at the canvas's top edge has its number inside it
      const placed = [];
      const place = (x0, y) => {
        let x = x0;
        while (placed.some((q) => Math.abs(q.x - x) < 0.75 * font && Math.abs(q.y - y) < font)) x += 0.75 * font;
        placed.push({ x, y });
        return { x, y };
      };
      shown.forEach((l, t) => {
        const now = t === shown.length - 1;
        const boxes = now ? l.boxes : [l.box];
        // coarse first, so the finest patch is drawn on top; a dark halo under each keeps it readable on white ink
        for (let k = boxes.length - 1; k >= 0; k--) {
          const dash = k > 0 ? { 'stroke-dasharray': '5 3' } : {};
          const data = { 'data-step': t, 'data-scale': k };
          if (now) rect(boxes[k], { stroke: '#000', 'stroke-width': 4, ...dash });
          rect(boxes[k], { stroke: now ? NOW : BEFORE, 'stroke-width': now ? 2 : 1, ...dash, ...data });
        }
      });
      // the numbers after every box, so no later box's line crosses an earlier number
      shown.forEach((l, t) => {
        const now = t === shown.length - 1;
        const at = place(l.box.left + 0.5, l.box.top - font < 0 ? l.box.top + font : l.box.top - 0.6);
        const label = svg('text', {
          x: at.x, y: at.y, 'font-size': font, 'font-weight': 700, fill: now ? NOW : BEFORE,
          stroke: '#000', 'stroke-width': font / 5, 'paint-order': 'stroke', 'data-step': t,
          'font-family': 'system-ui, sans-serif',
        }, root);
        label.textContent = String(t + 1);
      });
      const { size, scales } = retina;
      const sides = Array.from({ length: scales }, (_, k) => size * 2 ** k);
      setText(lines.fine, `solid: glimpse ${shown.length}'s finest patch, ${size} × ${size} pixels read as they are`);
      setText(lines.coarse, scales > 1
        ? `dashed: its coarser patches, ${sides.slice(1).map((s) => `${s} × ${s}`).join(' and ')}, each averaged down to ${size} × ${size}`
        : 'dashed: none (this retina has one scale)');
      setText(lines.before, shown.length > 1 ? `thin: glimpses 1 to ${shown.length - 1}, numbered, and the path between them` : 'thin: the earlier glimpses and the path (none yet)');
      legend.hidden = false;
    },
    clear() {
      root.replaceChildren();
      legend.hidden = true;
    },
  };
}
