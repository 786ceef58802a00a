// Chapter 3, a weighted average: the query of "journey" dragged in two of its three
// dimensions while every key and value (journey's own too) stays where it is, so
// the plot shows one thing moving; its dot scores against every token, the softmax
// and naive-sum weights, and the context vector (drawn as a point) all from
// engine.attend. Labels are placed where they cover no other label or point.
import { h, setText, svg } from '../ui/dom.js';
import { fixed } from '../ui/format.js';
import { createChallenge } from './progress.js';
import { playgroundLink } from './links.js';
import { quote } from './numbers.js';
import { JOURNEY, TOKENS, X } from './tutorial.js';

const SIZE = 300;
const LO = -1;
const HI = 1.4;
const px = (v) => ((v - LO) / (HI - LO)) * SIZE;
const py = (v) => SIZE - ((v - LO) / (HI - LO)) * SIZE;
const unpx = (p) => LO + (p / SIZE) * (HI - LO);
const round2 = (v) => Math.round(v * 100) / 100;
/** The key the challenge asks the query to weigh most: “with”. */
const WITH = 3;

/** The three results for the query vector `q` over the tutorial's keys `x`. */
export function weightedAverage(engine, x, q) {
  const soft = engine.attend({ queries: [q], keys: x });
  const sum = engine.attend({ queries: [q], keys: x, normalize: 'sum', outputs: ['weights'] });
  return { scores: soft.scores.data, softmax: soft.weights.data, sum: sum.weights.data, context: soft.context.data };
}

const LABEL_H = 14;
const charW = (text, bold) => text.length * (bold ? 7.4 : 6.8); // a guess, while the plot is not laid out
// where a label may go relative to its point: [dx, dy of the baseline, text-anchor]
const SPOTS = [
  [10, -8, 'start'], [10, 16, 'start'], [-10, -8, 'end'], [-10, 16, 'end'], [12, 4, 'start'], [-12, 4, 'end'],
  [0, -13, 'middle'], [0, 24, 'middle'], [10, -20, 'start'], [-10, -20, 'end'], [10, 28, 'start'], [-10, 28, 'end'],
];

/** The box a label takes at spot `k` of point (x, y), in plot pixels. */
function labelBox(p, k) {
  const [dx, dy, anchor] = SPOTS[k];
  const w = p.width ?? charW(p.text, p.bold);
  const left = anchor === 'start' ? p.x + dx : anchor === 'end' ? p.x + dx - w : p.x - w / 2;
  return { left, right: left + w, top: p.y + dy - LABEL_H + 3, bottom: p.y + dy + 3 };
}
const overlap = (a, b) => Math.max(0, Math.min(a.right, b.right) - Math.max(a.left, b.left)) * Math.max(0, Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top));

/**
 * A spot for each label (points [{ x, y, r, text, bold, width? }] in plot pixels), where the labels
 * together overlap the least with the points, with each other and with the plot's edges: placed one by
 * one, then each moved again in turn while that lowers the cost (a few passes reach a local optimum).
 */
export function placeLabels(points, size = SIZE) {
  const dots = points.map((p) => ({ left: p.x - p.r, right: p.x + p.r, top: p.y - p.r, bottom: p.y + p.r }));
  const spots = points.map(() => null);
  const cost = (n, k) => {
    const b = labelBox(points[n], k);
    const outside = Math.max(0, -b.left) + Math.max(0, b.right - size) + Math.max(0, -b.top) + Math.max(0, b.bottom - size);
    let c = outside * 1000 + k * 0.01;
    // covering a point hides it: that costs more than touching another label
    for (const d of dots) c += 4 * overlap(b, d);
    spots.forEach((s, m) => { if (m !== n && s !== null) c += overlap(b, labelBox(points[m], s)); });
    return c;
  };
  for (let pass = 0; pass < 4; pass++) {
    let moved = false;
    points.forEach((_, n) => {
      let best = spots[n] ?? 0;
      let bestCost = spots[n] === null ? Infinity : cost(n, spots[n]);
      SPOTS.forEach((__, k) => {
        const c = cost(n, k);
        if (c < bestCost - 1e-9) { best = k; bestCost = c; }
      });
      if (best !== spots[n]) { spots[n] = best; moved = true; }
    });
    if (!moved) break;
  }
  return spots;
}

export function mountAverage(root, { engine }) {
  const x = X;
  let q = [...X[JOURNEY]];
  const start = weightedAverage(engine, X, X[JOURNEY]);
  const list = (a) => Array.from(a, (v) => fixed(v, 4)).join(', ');
  quote('ch3.scores', Array.from(start.scores), list(start.scores));
  quote('ch3.sum', Array.from(start.sum), list(start.sum));
  quote('ch3.softmax', Array.from(start.softmax), list(start.softmax));
  quote('ch3.context', Array.from(start.context), list(start.context));

  // the plot: the six keys in dimensions 1 and 2, the draggable query q, and the context z
  const grid = svg('g', { class: 'grid' });
  for (let v = -1; v <= 1.4 + 1e-9; v += 0.2) {
    const t = Math.round(v * 10) / 10;
    grid.append(svg('line', { x1: px(t), x2: px(t), y1: 0, y2: SIZE, class: t === 0 ? 'axis0' : '' }));
    grid.append(svg('line', { y1: py(t), y2: py(t), x1: 0, x2: SIZE, class: t === 0 ? 'axis0' : '' }));
  }
  const point = (cls, shape, text) => {
    const g = svg('g', { class: `pt ${cls}` });
    g.append(shape, svg('text'));
    g.lastChild.textContent = text;
    return g;
  };
  const dots = TOKENS.map((name) => point('key', svg('circle', { r: 6 }), name));
  const query = point('query', svg('circle', { r: 9 }), 'q');
  const ctx = point('context', svg('rect', { x: -6, y: -6, width: 12, height: 12, transform: 'rotate(45)' }), 'z (context)');
  const plot = svg('svg', {
    viewBox: `-4 -4 ${SIZE + 8} ${SIZE + 8}`, class: 'drag-plot', role: 'application', tabindex: 0,
    'aria-label': 'Dimensions 1 and 2 of each key and of the query. Drag the query q, or use the arrow keys to move it by 0.05',
    'data-testid': 'ch3-plot',
  }, grid, ...dots, ctx, query);
  root.querySelector('[data-role=plot]').append(plot);

  const rows = TOKENS.map((name) => {
    const bar = (cls) => h('span', { className: `bar ${cls}` });
    const cells = { score: h('td'), soft: h('td'), sum: h('td'), softBar: bar('soft'), sumBar: bar('sum') };
    const tr = h('tr', {}, h('th', { scope: 'row', textContent: name }), cells.score, cells.soft, cells.sum,
      h('td', { className: 'bars' }, cells.softBar, cells.sumBar));
    return { tr, ...cells };
  });
  root.querySelector('[data-role=table]').append(...rows.map((r) => r.tr));
  const status = root.querySelector('[data-role=position]');
  const ctxOut = root.querySelector('[data-role=context]');
  const link = root.querySelector('[data-role=open-playground]');
  const challenge = createChallenge(root.querySelector('[data-role=challenge]'), 'average',
    'Move the query q so that it puts the most softmax weight on “with”. (Of all the keys, “with” has the smallest first coordinate: which way must q go so that q · with beats q · step?)');

  /** Each point moved to its place and its label to the spot that covers the least. */
  function layout(context) {
    const items = [[query, q, 9, true], [ctx, context, 6, false], ...dots.map((g, i) => [g, x[i], 6, false])]
      .map(([g, v, r, bold]) => ({ g, x: px(v[0]), y: py(v[1]), r, bold, text: g.lastChild.textContent, width: g.lastChild.getComputedTextLength() || undefined }));
    placeLabels(items).forEach((k, n) => {
      const { g, x: gx, y: gy } = items[n];
      const [dx, dy, anchor] = SPOTS[k];
      g.setAttribute('transform', `translate(${gx} ${gy})`);
      Object.entries({ dx, dy, 'text-anchor': anchor }).forEach(([a, v]) => g.lastChild.setAttribute(a, String(v)));
    });
  }

  let result = start;
  function update() {
    result = weightedAverage(engine, x, q);
    layout(result.context);
    let best = 0;
    rows.forEach((r, j) => {
      setText(r.score, fixed(result.scores[j], 4));
      setText(r.soft, fixed(result.softmax[j], 4));
      setText(r.sum, fixed(result.sum[j], 4));
      r.softBar.style.width = `${Math.max(0, Math.min(1, result.softmax[j])) * 100}%`;
      r.sumBar.style.width = `${Math.max(0, Math.min(1, Math.abs(result.sum[j]))) * 100}%`;
      if (result.softmax[j] > result.softmax[best]) best = j;
    });
    rows.forEach((r, j) => r.tr.classList.toggle('best', j === best));
    setText(status, `q = (${fixed(q[0], 2)}, ${fixed(q[1], 2)}, ${fixed(q[2], 2)}); most weight on “${TOKENS[best]}”`);
    setText(ctxOut, `z = (${Array.from(result.context, (v) => fixed(v, 4)).join(', ')})`);
    plot.dataset.best = TOKENS[best];
    link.href = playgroundLink({ preset: 'tutorial', mode: 'attend', score: 'dot', x: X });
    challenge.check(best === WITH, `the most weight, ${fixed(result.softmax[best], 4)}, is on “${TOKENS[best]}”; “${TOKENS[WITH]}” has ${fixed(result.softmax[WITH], 4)}, `
      + `since q · ${TOKENS[WITH]} = ${fixed(result.scores[WITH], 4)} is below q · ${TOKENS[best]} = ${fixed(result.scores[best], 4)}.`);
  }

  const move = (a, b) => {
    q[0] = round2(Math.max(LO, Math.min(HI, a)));
    q[1] = round2(Math.max(LO, Math.min(HI, b)));
    update();
  };
  let dragging = false;
  const toData = (ev) => {
    const m = plot.getScreenCTM().inverse();
    const p = new DOMPoint(ev.clientX, ev.clientY).matrixTransform(m);
    return [unpx(p.x), LO + ((SIZE - p.y) / SIZE) * (HI - LO)];
  };
  plot.addEventListener('pointerdown', (ev) => { dragging = true; plot.setPointerCapture(ev.pointerId); move(...toData(ev)); });
  plot.addEventListener('pointermove', (ev) => { if (dragging) move(...toData(ev)); });
  plot.addEventListener('pointerup', () => { dragging = false; });
  plot.addEventListener('keydown', (ev) => {
    const d = { ArrowLeft: [-0.05, 0], ArrowRight: [0.05, 0], ArrowUp: [0, 0.05], ArrowDown: [0, -0.05] }[ev.key];
    if (!d) return;
    ev.preventDefault();
    move(q[0] + d[0], q[1] + d[1]);
  });
  root.querySelector('[data-role=reset]').addEventListener('click', () => { q = [...X[JOURNEY]]; update(); });
  update();
}
