// A 2-D view of the embeddings: two chosen dimensions as axes. Drag a point
// (or focus it and use the arrow keys) to edit those two values of its vector.
// While a point is held (focused) or a query row of a heatmap is hovered, lines show
// where that query's weight goes; opts.onPick(i | null) tells the page which point
// is held, so its row can be outlined in the heatmaps.
import { num } from '../ui/format.js';
import { dims } from './state.js';
import { round } from './rng.js';

const NS = 'http://www.w3.org/2000/svg';
const svgEl = (tag, attrs = {}) => {
  const node = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  return node;
};
const SIZE = 320;
const PAD = 28;

// Where each point's name goes: right of the point unless that overlaps a name already placed
// (or a point), then left, above, below; points that sit close together keep readable names.
const LABEL_SPOTS = [{ dx: 8, dy: 4, anchor: 'start' }, { dx: -8, dy: 4, anchor: 'end' }, { dx: 8, dy: -7, anchor: 'start' },
  { dx: 8, dy: 15, anchor: 'start' }, { dx: -8, dy: -7, anchor: 'end' }, { dx: -8, dy: 15, anchor: 'end' }];
const CHAR_W = 6.4; // px per character of the 11 px label font, a little generous
export function placeLabels(pts) {
  const boxes = [];
  const hits = (b) => boxes.some((o) => b.x0 < o.x1 && o.x0 < b.x1 && b.y0 < o.y1 && o.y0 < b.y1)
    || pts.some((p) => p.x > b.x0 - 6 && p.x < b.x1 + 6 && p.y > b.y0 - 6 && p.y < b.y1 + 6);
  return pts.map((p) => {
    const w = [...p.name].length * CHAR_W;
    const boxOf = (c) => {
      const x0 = c.anchor === 'start' ? p.x + c.dx : p.x + c.dx - w;
      return { x0, x1: x0 + w, y0: p.y + c.dy - 9, y1: p.y + c.dy + 2 };
    };
    const spot = LABEL_SPOTS.find((c) => !hits(boxOf(c))) ?? LABEL_SPOTS[0];
    boxes.push(boxOf(spot));
    return spot;
  });
}

export function createProjection(store, { px, py, onPick }) {
  const svg = svgEl('svg', { viewBox: `0 0 ${SIZE} ${SIZE}`, class: 'proj', role: 'group', 'aria-label': 'Embeddings in two dimensions' });
  svg.dataset.testid = 'projection';
  const axes = svgEl('g', { class: 'proj-axes' });
  const links = svgEl('g', { class: 'proj-links' });
  const points = svgEl('g', { class: 'proj-points' });
  svg.append(axes, links, points);
  let domain = null; // { x0, x1, y0, y1 } frozen while dragging
  let dragging = null;
  let query = null;

  const sx = (v) => PAD + ((v - domain.x0) / (domain.x1 - domain.x0)) * (SIZE - 2 * PAD);
  const sy = (v) => SIZE - PAD - ((v - domain.y0) / (domain.y1 - domain.y0)) * (SIZE - 2 * PAD);
  const ix = (p) => domain.x0 + ((p - PAD) / (SIZE - 2 * PAD)) * (domain.x1 - domain.x0);
  const iy = (p) => domain.y0 + ((SIZE - PAD - p) / (SIZE - 2 * PAD)) * (domain.y1 - domain.y0);

  function fit(s) {
    const xs = s.x.map((r) => r[s.px]);
    const ys = s.x.map((r) => r[s.py]);
    const span = (vals) => {
      let lo = Math.min(0, ...vals);
      let hi = Math.max(0, ...vals);
      const pad = (hi - lo) * 0.12 || 0.5;
      lo -= pad; hi += pad;
      return [lo, hi];
    };
    const [x0, x1] = span(xs);
    const [y0, y1] = span(ys);
    domain = { x0, x1, y0, y1 };
  }

  function drawAxes(s) {
    const lines = [
      svgEl('rect', { x: PAD, y: PAD, width: SIZE - 2 * PAD, height: SIZE - 2 * PAD, class: 'proj-frame' }),
      svgEl('line', { x1: sx(0), x2: sx(0), y1: PAD, y2: SIZE - PAD, class: 'proj-zero' }),
      svgEl('line', { x1: PAD, x2: SIZE - PAD, y1: sy(0), y2: sy(0), class: 'proj-zero' }),
    ];
    const label = (text, attrs) => Object.assign(svgEl('text', attrs), { textContent: text });
    lines.push(label(`d${s.px + 1} →`, { x: SIZE - PAD, y: SIZE - 8, 'text-anchor': 'end', class: 'proj-axis' }));
    // the y axis mirrors the x axis, turned a quarter: its low end at the bottom, its name at the top
    const up = (y) => `rotate(-90 12 ${y})`;
    lines.push(label(`d${s.py + 1} →`, { x: 12, y: PAD, transform: up(PAD), 'text-anchor': 'end', class: 'proj-axis' }));
    lines.push(label(num(Number(domain.x0.toFixed(2))), { x: PAD, y: SIZE - 8, class: 'proj-tick' }));
    lines.push(label(num(Number(domain.x1.toFixed(2))), { x: SIZE - PAD - 34, y: SIZE - 8, 'text-anchor': 'end', class: 'proj-tick' }));
    lines.push(label(num(Number(domain.y0.toFixed(2))), { x: 12, y: SIZE - PAD, transform: up(SIZE - PAD), class: 'proj-tick' }));
    lines.push(label(num(Number(domain.y1.toFixed(2))), { x: 12, y: PAD + 34, transform: up(PAD + 34), 'text-anchor': 'end', class: 'proj-tick' }));
    axes.replaceChildren(...lines);
  }

  function drawPoints(s) {
    const n = s.tokens.length;
    if (points.childElementCount !== n) {
      points.replaceChildren(...s.tokens.map((_, i) => {
        const g = svgEl('g', { class: 'proj-point', tabindex: 0, role: 'button' });
        g.dataset.i = i;
        g.dataset.testid = `point-${i}`;
        g.append(svgEl('circle', { r: n > 32 ? 4 : 6 }), svgEl('text', { dx: 8, dy: 4, 'text-anchor': 'start' }));
        return g;
      }));
    }
    const showNames = n <= 32;
    const placed = showNames ? placeLabels(s.tokens.map((name, i) => ({ x: sx(s.x[i][s.px]), y: sy(s.x[i][s.py]), name }))) : [];
    s.tokens.forEach((name, i) => {
      const g = points.children[i];
      const [x, y] = [s.x[i][s.px], s.x[i][s.py]];
      const at = `translate(${sx(x).toFixed(1)} ${sy(y).toFixed(1)})`;
      if (g.getAttribute('transform') !== at) g.setAttribute('transform', at);
      if (showNames) {
        const { dx, dy, anchor } = placed[i];
        const t = g.lastChild;
        if (t.getAttribute('dx') !== String(dx) || t.getAttribute('dy') !== String(dy) || t.getAttribute('text-anchor') !== anchor) {
          t.setAttribute('dx', dx);
          t.setAttribute('dy', dy);
          t.setAttribute('text-anchor', anchor);
        }
      }
      const label = `${name}: d${s.px + 1} = ${x}, d${s.py + 1} = ${y}. Drag or use arrow keys to move.`;
      if (g.getAttribute('aria-label') !== label) g.setAttribute('aria-label', label);
      const text = showNames ? name : '';
      if (g.lastChild.textContent !== text) g.lastChild.textContent = text;
      g.classList.toggle('is-query', i === query);
    });
  }

  function drawLinks(s, weights) {
    if (query === null || !weights || query >= s.tokens.length) { if (links.firstChild) links.replaceChildren(); return; }
    const n = weights.cols;
    const from = s.x[query];
    const out = [];
    for (let j = 0; j < n; j++) {
      const a = weights.data[query * n + j];
      if (!(a > 0.001)) continue;
      out.push(svgEl('line', {
        x1: sx(from[s.px]), y1: sy(from[s.py]), x2: sx(s.x[j][s.px]), y2: sy(s.x[j][s.py]),
        'stroke-width': (0.5 + 6 * a).toFixed(2), 'stroke-opacity': Math.min(1, 0.15 + a * 1.5).toFixed(2),
      }));
    }
    links.replaceChildren(...out);
  }

  const move = (i, x, y) => store.update((s) => { s.x[i][s.px] = round(x, 3); s.x[i][s.py] = round(y, 3); }, { source: 'projection' });
  const toSvg = (ev) => {
    const pt = svg.createSVGPoint();
    pt.x = ev.clientX; pt.y = ev.clientY;
    return pt.matrixTransform(svg.getScreenCTM().inverse());
  };
  points.addEventListener('pointerdown', (ev) => {
    const g = ev.target.closest('.proj-point');
    if (!g) return;
    ev.preventDefault();
    dragging = Number(g.dataset.i);
    svg.setPointerCapture(ev.pointerId);
    g.focus();
  });
  svg.addEventListener('pointermove', (ev) => {
    if (dragging === null) return;
    const p = toSvg(ev);
    move(dragging, ix(p.x), iy(p.y));
  });
  const end = () => { dragging = null; lastArgs && render(...lastArgs, true); };
  // the held point is the query whose weights the page outlines and draws
  points.addEventListener('focusin', (ev) => {
    const g = ev.target.closest('.proj-point');
    if (!g) return;
    query = Number(g.dataset.i);
    if (lastArgs) render(...lastArgs);
    onPick?.(query);
  });
  points.addEventListener('focusout', () => {
    if (dragging !== null) return;
    query = null;
    if (lastArgs) render(...lastArgs);
    onPick?.(null);
  });
  svg.addEventListener('pointerup', end);
  svg.addEventListener('pointercancel', end);
  points.addEventListener('keydown', (ev) => {
    const g = ev.target.closest('.proj-point');
    const dir = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, 1], ArrowDown: [0, -1] }[ev.key];
    if (!g || !dir) return;
    ev.preventDefault();
    const i = Number(g.dataset.i);
    const s = store.state;
    const step = ev.shiftKey ? 0.1 : 0.01;
    move(i, s.x[i][s.px] + dir[0] * step, s.x[i][s.py] + dir[1] * step);
  });

  const option = (j) => Object.assign(document.createElement('option'), { value: j, textContent: `d${j + 1}` });
  px.addEventListener('change', () => store.update((s) => { s.px = Number(px.value); }, { source: 'axes' }));
  py.addEventListener('change', () => store.update((s) => { s.py = Number(py.value); }, { source: 'axes' }));

  let lastArgs = null;
  let refit = true;
  function render(s, weights, force = false) {
    lastArgs = [s, weights];
    if (dragging === null && (force || refit)) {
      const was = domain && JSON.stringify([domain, s.px, s.py]);
      fit(s);
      if (JSON.stringify([domain, s.px, s.py]) !== was || force) drawAxes(s);
      refit = false;
    }
    drawPoints(s);
    drawLinks(s, weights);
  }

  return {
    el: svg,
    update(s, r, info) {
      const d = dims(s);
      if (px.options.length !== d) {
        px.replaceChildren(...Array.from({ length: d }, (_, j) => option(j)));
        py.replaceChildren(...Array.from({ length: d }, (_, j) => option(j)));
      }
      if (px.value !== String(s.px)) px.value = s.px;
      if (py.value !== String(s.py)) py.value = s.py;
      refit = info.source !== 'projection';
      render(s, r?.weights[s.mode === 'self' ? s.head : 0]);
    },
    /** Shows query i's weights as lines (null hides them). */
    setQuery(i) {
      query = i;
      if (lastArgs) render(...lastArgs);
    },
  };
}
