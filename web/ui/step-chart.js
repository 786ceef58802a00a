// A chart of values against training steps on a log axis (log10(1 + step), so
// step 0 sits at the axis's start), as SVG: many series at once, the few that
// matter in colour with their names at their last point, the rest faint grey;
// a dot per point carrying its series, step and value (data-series, data-step,
// data-y) for a readout and the tests. Used by "Pythia's training, by step".
//
//   drawStepChart(figure, series, { yLabel, xLabel, yMin, yMax, height, label })   (again when the figure's width changes)
//     series  [{ name, color, faint, points: [{ step, y }] }]   (faint: drawn first, grey, unnamed)
import { svg as el } from './dom.js';
import { tick } from './format.js';
import { niceDomain } from './ticks.js';
import { stepTickText, stepTicks, stepX } from './training-scan-core.js';

const MAX_W = 960;
const MIN_W = 280;
const PAD = { left: 46, right: 56, top: 26, bottom: 34 }; // the y axis's name above the plot, clear of the curves
const FAINT = '#adb5bd';

/** As wide, in SVG units, as the figure is in CSS pixels, so that its text keeps its size on a phone; the caller redraws on a resize. */
const widthOf = (figure) => Math.round(Math.min(MAX_W, Math.max(MIN_W, figure.clientWidth || MAX_W)));

export function drawStepChart(figure, series, opts) {
  let svg = figure.querySelector('svg');
  if (!svg) {
    svg = el('svg', { role: 'img', class: 'chart-svg step-chart' });
    figure.append(svg);
  }
  const W = widthOf(figure), H = opts.height ?? 220;
  svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
  svg.setAttribute('aria-label', opts.label);
  svg.replaceChildren();
  const all = series.flatMap((s) => s.points);
  const maxStep = Math.max(1000, ...all.map((p) => p.step));
  const ticks = stepTicks(maxStep);
  const x0 = 0, x1 = stepX(ticks[ticks.length - 1]);
  const ys = all.map((p) => p.y);
  const yd = niceDomain(opts.yMin ?? Math.min(0, ...ys), opts.yMax ?? Math.max(1e-6, ...ys), 4);
  const x = (step) => PAD.left + ((stepX(step) - x0) / (x1 - x0)) * (W - PAD.left - PAD.right);
  const y = (v) => H - PAD.bottom - ((v - yd.lo) / (yd.hi - yd.lo || 1)) * (H - PAD.top - PAD.bottom);
  const label = (x0, y0, anchor, content, cls) => {
    const t = el('text', { x: x0, y: y0, 'text-anchor': anchor, ...(cls ? { class: cls } : {}) });
    t.textContent = content;
    return t;
  };
  const bottom = H - PAD.bottom;
  const axis = el('g', { class: 'axis' },
    el('line', { x1: PAD.left, y1: bottom, x2: W - PAD.right, y2: bottom }),
    el('line', { x1: PAD.left, y1: PAD.top, x2: PAD.left, y2: bottom }),
    // y: a grid line and a value at each tick; x: a notch and a step at each power of ten
    ...yd.values.flatMap((v) => [el('line', { x1: PAD.left - 4, y1: y(v), x2: W - PAD.right, y2: y(v), class: 'grid' }), label(PAD.left - 6, y(v) + 4, 'end', tick(v, yd.step))]),
    ...ticks.flatMap((v) => [el('line', { x1: x(v), y1: bottom, x2: x(v), y2: bottom + 4 }), label(x(v), bottom + 15, 'middle', stepTickText(v))]),
    label((W + PAD.left - PAD.right) / 2, H - 3, 'middle', opts.xLabel ?? 'training step (log scale)', 'label'),
    label(4, 12, 'start', opts.yLabel, 'label'));
  svg.append(axis);

  const ordered = [...series.filter((s) => s.faint), ...series.filter((s) => !s.faint)];
  const names = [];
  for (const s of ordered) {
    const pts = [...s.points].sort((a, b) => a.step - b.step);
    const color = s.faint ? FAINT : s.color;
    const g = el('g', { class: s.faint ? 'series faint' : 'series', 'data-series': s.name });
    if (pts.length > 1) {
      g.append(el('path', {
        d: pts.map((p, i) => `${i ? 'L' : 'M'}${x(p.step).toFixed(1)},${y(p.y).toFixed(1)}`).join(''),
        fill: 'none', stroke: color, 'stroke-width': s.faint ? 1 : 2, 'stroke-opacity': s.faint ? 0.55 : 1,
      }));
    }
    for (const p of pts) {
      g.append(el('circle', {
        cx: x(p.step).toFixed(1), cy: y(p.y).toFixed(1), r: s.faint ? 2 : 3.5, fill: color, 'fill-opacity': s.faint ? 0.6 : 1,
        'data-series': s.name, 'data-step': p.step, 'data-y': p.y,
      }));
    }
    svg.append(g);
    if (!s.faint && pts.length) names.push({ name: s.name, color, at: y(pts[pts.length - 1].y), x: x(pts[pts.length - 1].step) });
  }
  // each named series' name right of its last point, nudged apart so that no two overlap
  names.sort((a, b) => a.at - b.at);
  for (let i = 1; i < names.length; i++) names[i].at = Math.max(names[i].at, names[i - 1].at + 12);
  // pushed past the axis: moved back up, each only as far as the one below it needs
  for (let i = names.length - 1; i >= 0; i--) names[i].at = Math.min(names[i].at, i === names.length - 1 ? bottom : names[i + 1].at - 12);
  for (const n of names) {
    const t = el('text', { x: n.x + 6, y: n.at + 4, class: 'series-name', fill: n.color });
    t.textContent = n.name;
    svg.append(t);
  }
}
