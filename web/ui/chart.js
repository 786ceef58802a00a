// Line charts as SVG: axes whose ticks fall on round values (ui/ticks.js), one path
// per series, a legend, and a readout of the nearest point that names both axes
// ("with attention: input length 7, accuracy 0.83"), by mouse or keyboard.
//
//   drawChart(figure, series, opts)   draws into `figure` (any element; the <svg> is created once)
//     series  [{ name, color, points: [{ x, y }], interval? }]   (points may also be { step, value });
//             interval { x, lo, hi }: a vertical bar with caps at x (e.g. a 95% confidence
//             interval at the last step), offset a little per series so that bars at one x stay apart
//     opts    { xLabel, yLabel, readout (element), xMin?, xMax?, yMin?, yMax?, integerX?, marks? }
//             marks [{ x, label }]: a dashed vertical line at x with its label (an event on the x axis),
//             the label placed where it covers no curve
//             the readout reads "<series>: <xLabel> <x>, <yLabel> <y>"; the svg is focusable:
//             ←/→ move between points, Home/End jump to the ends
//   drawLegend(container, series)     a swatch and a name per series
// The drawing is as wide, in SVG units, as the figure is in CSS pixels (between MIN_W and MAX_W), so its
// text stays at its CSS size on a phone instead of shrinking with the picture; a figure that
// changes width is redrawn. A series of one point is drawn as a dot (a path of one point draws nothing).
import { h, svg as el } from './dom.js';
import { num, tick } from './format.js';
import { niceDomain } from './ticks.js';

const MAX_W = 960; // a figure wider than this scales its drawing up, text too (an embedded lab spans its frame)
const MIN_W = 280;
const H = 200;
const PAD = { left: 46, right: 12, top: 12, bottom: 32 };
const xOf = (p) => p.x ?? p.step;
const yOf = (p) => p.y ?? p.value;

const drawn = new WeakMap(); // figure -> { series, opts, width } of its last drawing
const widthOf = (figure) => Math.round(Math.min(MAX_W, Math.max(MIN_W, figure.clientWidth || MAX_W)));
const resized = typeof ResizeObserver === 'function' ? new ResizeObserver((entries) => {
  for (const { target } of entries) {
    const last = drawn.get(target);
    if (last && target.isConnected && widthOf(target) !== last.width) drawChart(target, last.series, last.opts);
  }
}) : null;

export function drawChart(figure, series, opts) {
  let svg = figure.querySelector('svg');
  if (!svg) {
    svg = el('svg', { role: 'img', tabindex: 0, class: 'chart-svg' });
    figure.append(svg);
    resized?.observe(figure);
  }
  const W = widthOf(figure);
  drawn.set(figure, { series, opts, width: W });
  svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
  svg.setAttribute('aria-label', `${opts.yLabel} by ${opts.xLabel}: use the arrow keys to read points`);
  svg.replaceChildren();
  const all = series.flatMap((s) => s.points);
  const xs = all.map(xOf);
  const ys = all.map(yOf);
  const xd = niceDomain(opts.xMin ?? Math.min(0, ...xs), opts.xMax ?? Math.max(1, ...xs), 4);
  const yd = niceDomain(opts.yMin ?? Math.min(0, ...ys), opts.yMax ?? (ys.length ? Math.max(1e-6, ...ys) : 1), 4);
  if (opts.integerX && !Number.isInteger(xd.step)) {
    // steps of 0.5 or 2.5 would label half steps: keep the whole ones (0, 5, 10 of 0, 2.5, ..., 12.5)
    xd.values = xd.values.filter(Number.isInteger);
    xd.step = xd.values.length > 1 ? xd.values[1] - xd.values[0] : 1;
  }
  const x = (v) => PAD.left + ((v - xd.lo) / (xd.hi - xd.lo)) * (W - PAD.left - PAD.right);
  const y = (v) => H - PAD.bottom - ((v - yd.lo) / (yd.hi - yd.lo || 1)) * (H - PAD.top - PAD.bottom);
  const axis = el('g', { class: 'axis' });
  svg.append(axis);
  axis.append(el('line', { x1: PAD.left, y1: H - PAD.bottom, x2: W - PAD.right, y2: H - PAD.bottom }));
  axis.append(el('line', { x1: PAD.left, y1: PAD.top, x2: PAD.left, y2: H - PAD.bottom }));
  for (const v of yd.values) {
    axis.append(el('line', { x1: PAD.left - 4, y1: y(v), x2: W - PAD.right, y2: y(v), class: 'grid' }));
    const t = el('text', { x: PAD.left - 6, y: y(v) + 4, 'text-anchor': 'end' });
    t.textContent = tick(v, yd.step);
    axis.append(t);
  }
  for (const v of xd.values) {
    // the last tick ends at the plot's edge instead of running past the drawing ("2001" cut to "200")
    const t = el('text', { x: x(v), y: H - PAD.bottom + 14, 'text-anchor': 'middle' });
    if (v === xd.values[xd.values.length - 1] && xd.values.length > 1) t.setAttribute('dx', String(-Math.max(0, 3.6 * tick(v, xd.step).length + 2 - PAD.right)));
    t.textContent = tick(v, xd.step);
    axis.append(t);
  }
  const label = el('text', { x: (W + PAD.left) / 2, y: H - 3, 'text-anchor': 'middle', class: 'label' });
  label.textContent = opts.xLabel;
  axis.append(label);
  for (const s of series) {
    if (!s.points.length) continue;
    if (s.points.length === 1) {
      const [p] = s.points;
      svg.append(el('circle', { cx: x(xOf(p)).toFixed(1), cy: y(yOf(p)).toFixed(1), r: 3.5, fill: s.color, class: 'series point', 'data-name': s.name }));
      continue;
    }
    const d = s.points.map((p, i) => `${i ? 'L' : 'M'}${x(xOf(p)).toFixed(1)},${y(yOf(p)).toFixed(1)}`).join('');
    svg.append(el('path', { d, fill: 'none', stroke: s.color, 'stroke-width': 2, class: 'series', 'data-name': s.name }));
  }
  series.forEach((s, k) => {
    if (!s.interval) return;
    const cx = x(s.interval.x) - 6 * (series.length - 1 - k);
    const [top, bottom] = [y(s.interval.hi), y(s.interval.lo)];
    const d = `M${cx - 3},${top.toFixed(1)}H${cx + 3}M${cx},${top.toFixed(1)}V${bottom.toFixed(1)}M${cx - 3},${bottom.toFixed(1)}H${cx + 3}`;
    svg.append(el('path', { d, fill: 'none', stroke: s.color, 'stroke-width': 1.5, class: 'interval', 'data-name': s.name }));
  });
  // the curves as drawn, for the marks' labels to keep off
  const drawnLines = series.map((s) => s.points.map((p) => [x(xOf(p)), y(yOf(p))]));
  for (const m of opts.marks ?? []) {
    if (!(m.x >= xd.lo && m.x <= xd.hi)) continue;
    const mx = x(m.x).toFixed(1);
    const g = el('g', { class: 'mark', 'data-x': m.x });
    g.append(el('line', { x1: mx, y1: PAD.top, x2: mx, y2: H - PAD.bottom, stroke: '#495057', 'stroke-dasharray': '4 3' }));
    const t = el('text', { class: 'mark-label' });
    t.textContent = m.label;
    g.append(t);
    svg.append(g);
    placeMarkLabel(t, x(m.x), W, y(yd.lo), drawnLines);
  }
  const marker = el('circle', { r: 4, class: 'marker', visibility: 'hidden' });
  svg.append(marker);
  const flat = series.flatMap((s) => s.points.map((p) => ({ s, p }))).sort((a, b) => xOf(a.p) - xOf(b.p));
  let at = -1;
  const showAt = (k) => {
    if (!flat.length) return;
    at = Math.max(0, Math.min(flat.length - 1, k));
    const { s, p } = flat[at];
    marker.setAttribute('cx', x(xOf(p)));
    marker.setAttribute('cy', y(yOf(p)));
    marker.setAttribute('fill', s.color);
    marker.setAttribute('visibility', 'visible');
    if (opts.readout) opts.readout.textContent = `${s.name}: ${opts.xLabel} ${num(xOf(p))}, ${opts.yLabel} ${num(yOf(p), 3)}`;
  };
  svg.onpointermove = (e) => {
    const r = svg.getBoundingClientRect();
    const px = ((e.clientX - r.left) / r.width) * W;
    let best = -1;
    let dist = Infinity;
    flat.forEach(({ p }, k) => { const d = Math.abs(x(xOf(p)) - px); if (d < dist) { dist = d; best = k; } });
    if (best >= 0) showAt(best);
  };
  svg.onpointerleave = () => marker.setAttribute('visibility', 'hidden');
  svg.onfocus = () => showAt(at < 0 ? flat.length - 1 : at);
  svg.onkeydown = (e) => {
    const step = { ArrowLeft: -1, ArrowRight: 1, ArrowDown: -1, ArrowUp: 1 }[e.key];
    if (step) showAt(at + step);
    else if (e.key === 'Home') showAt(0);
    else if (e.key === 'End') showAt(flat.length - 1);
    else return;
    e.preventDefault();
  };
}

/** Whether the polyline `line` ([[x, y], ...]) passes through the box { x0, x1, y0, y1 }. */
function crosses(line, b) {
  if (line.length === 1) {
    const [[px, py]] = line;
    return px >= b.x0 && px <= b.x1 && py >= b.y0 && py <= b.y1;
  }
  for (let i = 1; i < line.length; i++) {
    const [ax, ay] = line[i - 1];
    const [bx, by] = line[i];
    const lo = Math.max(Math.min(ax, bx), b.x0);
    const hi = Math.min(Math.max(ax, bx), b.x1);
    if (lo > hi) continue;
    // the segment's y over the x's it shares with the box
    const at = (v) => (bx === ax ? ay : ay + ((v - ax) / (bx - ax)) * (by - ay));
    const [ya, yb] = bx === ax ? [ay, by] : [at(lo), at(hi)];
    if (Math.max(ya, yb) >= b.y0 && Math.min(ya, yb) <= b.y1) return true;
  }
  return false;
}

/**
 * Puts a mark's label (an SVG text in the drawing) beside its line at x = `mx`, inside the plot and
 * where it covers no curve: at the top, the bottom or between, on the side with more room first.
 * If every place covers one, the top on the roomier side.
 */
function placeMarkLabel(t, mx, W, bottom, lines) {
  const width = (t.getComputedTextLength?.() || 0) || 7 * t.textContent.length; // 7: 11 px bold, when not laid out
  const top = PAD.top + 10;
  const ys = [top, bottom - 4, top + (bottom - 4 - top) / 3, top + (2 * (bottom - 4 - top)) / 3];
  const sides = mx < W / 2 ? [1, -1] : [-1, 1];
  const fits = (side) => (side > 0 ? mx + 4 + width <= W - PAD.right : mx - 4 - width >= PAD.left);
  const places = ys.flatMap((ty) => sides.filter(fits).map((side) => ({ ty, side })));
  const box = ({ ty, side }) => ({ x0: side > 0 ? mx + 2 : mx - 6 - width, x1: side > 0 ? mx + 6 + width : mx - 2, y0: ty - 11, y1: ty + 3 });
  const at = places.find((p) => !lines.some((line) => crosses(line, box(p)))) ?? { ty: top, side: sides[0] };
  t.setAttribute('x', String(Number((mx + 4 * at.side).toFixed(1))));
  t.setAttribute('y', String(Number(at.ty.toFixed(1))));
  t.setAttribute('text-anchor', at.side > 0 ? 'start' : 'end');
}

export function drawLegend(container, series) {
  container.replaceChildren(...series.map((s) => h('span', { className: 'legend-item' },
    h('i', { style: { background: s.color } }), s.name)));
}
