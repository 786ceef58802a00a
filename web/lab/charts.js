// Line charts as SVG: axes with ticks, one polyline per series, a legend, and
// a hover/focus readout of the nearest point ("step 420: 0.731").
const NS = 'http://www.w3.org/2000/svg';
const W = 480;
const H = 200;
const PAD = { left: 44, right: 12, top: 12, bottom: 30 };

function el(name, attrs = {}, parent = null) {
  const node = document.createElementNS(NS, name);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  if (parent) parent.appendChild(node);
  return node;
}

const fmt = (v) => (Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 1 ? v.toFixed(2) : v.toFixed(3));

function ticks(lo, hi, n) {
  const step = (hi - lo) / n;
  return Array.from({ length: n + 1 }, (_, i) => lo + i * step);
}

/**
 * Draws series [{ name, color, points: [{ step, value }] }] into `figure`
 * (a container element). opts: { xLabel, yLabel, yMin, yMax, readout (element) }.
 */
export function drawChart(figure, series, opts) {
  let svg = figure.querySelector('svg');
  if (!svg) {
    svg = el('svg', { viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': opts.yLabel });
    svg.setAttribute('tabindex', '0');
    figure.appendChild(svg);
  }
  svg.replaceChildren();
  const all = series.flatMap((s) => s.points);
  const xMin = opts.xMin ?? 0;
  const xMax = Math.max(xMin + 1, ...all.map((p) => p.step));
  const yMin = opts.yMin ?? Math.min(0, ...all.map((p) => p.value));
  const yMax = opts.yMax ?? (all.length ? Math.max(1e-6, ...all.map((p) => p.value)) : 1);
  const x = (s) => PAD.left + ((s - xMin) / (xMax - xMin)) * (W - PAD.left - PAD.right);
  const y = (v) => H - PAD.bottom - ((v - yMin) / (yMax - yMin || 1)) * (H - PAD.top - PAD.bottom);
  const axis = el('g', { class: 'axis' }, svg);
  el('line', { x1: PAD.left, y1: H - PAD.bottom, x2: W - PAD.right, y2: H - PAD.bottom }, axis);
  el('line', { x1: PAD.left, y1: PAD.top, x2: PAD.left, y2: H - PAD.bottom }, axis);
  for (const v of ticks(yMin, yMax, 4)) {
    el('line', { x1: PAD.left - 4, y1: y(v), x2: W - PAD.right, y2: y(v), class: 'grid' }, axis);
    el('text', { x: PAD.left - 6, y: y(v) + 4, 'text-anchor': 'end' }, axis).textContent = fmt(v);
  }
  for (const s of ticks(xMin, xMax, Math.min(4, xMax - xMin))) {
    el('text', { x: x(s), y: H - PAD.bottom + 14, 'text-anchor': 'middle' }, axis).textContent = Math.round(s);
  }
  el('text', { x: (W + PAD.left) / 2, y: H - 2, 'text-anchor': 'middle', class: 'label' }, axis).textContent = opts.xLabel;
  for (const s of series) {
    if (!s.points.length) continue;
    const d = s.points.map((p, i) => `${i ? 'L' : 'M'}${x(p.step).toFixed(1)},${y(p.value).toFixed(1)}`).join('');
    el('path', { d, fill: 'none', stroke: s.color, 'stroke-width': 2, class: 'series', 'data-name': s.name }, svg);
  }
  const marker = el('circle', { r: 4, class: 'marker', visibility: 'hidden' }, svg);
  const show = (px) => {
    let best = null;
    for (const s of series) {
      for (const p of s.points) {
        const dist = Math.abs(x(p.step) - px);
        if (!best || dist < best.dist) best = { dist, p, s };
      }
    }
    if (!best) return;
    marker.setAttribute('cx', x(best.p.step));
    marker.setAttribute('cy', y(best.p.value));
    marker.setAttribute('fill', best.s.color);
    marker.setAttribute('visibility', 'visible');
    opts.readout.textContent = `${best.s.name}: step ${best.p.step}, ${opts.yLabel} ${fmt(best.p.value)}`;
  };
  svg.onmousemove = (e) => {
    const r = svg.getBoundingClientRect();
    show(((e.clientX - r.left) / r.width) * W);
  };
  svg.onmouseleave = () => marker.setAttribute('visibility', 'hidden');
  svg.onfocus = () => show(W);
}

/** A legend line for series [{ name, color }]. */
export function drawLegend(container, series) {
  container.replaceChildren(...series.map((s) => {
    const item = document.createElement('span');
    item.className = 'legend-item';
    const swatch = document.createElement('i');
    swatch.style.background = s.color;
    item.append(swatch, document.createTextNode(s.name));
    return item;
  }));
}
