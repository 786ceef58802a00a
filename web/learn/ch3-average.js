// Chapter 3, a weighted average: the query "journey" dragged in two of its three
// dimensions; its dot scores against every token, the softmax and naive-sum
// weights, and the context vector (drawn as a point) all from engine.attend.
import { h, setText, svg } from '../ui/dom.js';
import { fixed } from '../ui/format.js';
import { createChallenge } from './progress.js';
import { playgroundLink } from './links.js';
import { quote } from './numbers.js';
import { JOURNEY, TOKENS, X, copyX } from './tutorial.js';

const SIZE = 300;
const LO = -1;
const HI = 1.4;
const px = (v) => ((v - LO) / (HI - LO)) * SIZE;
const py = (v) => SIZE - ((v - LO) / (HI - LO)) * SIZE;
const unpx = (p) => LO + (p / SIZE) * (HI - LO);
const round2 = (v) => Math.round(v * 100) / 100;

/** The three results for query row `q` over the tutorial's keys `x`. */
export function weightedAverage(engine, x, q) {
  const soft = engine.attend({ queries: [x[q]], keys: x });
  const sum = engine.attend({ queries: [x[q]], keys: x, normalize: 'sum', outputs: ['weights'] });
  return { scores: soft.scores.data, softmax: soft.weights.data, sum: sum.weights.data, context: soft.context.data };
}

export function mountAverage(root, { engine }) {
  let x = copyX();
  const start = weightedAverage(engine, X, JOURNEY);
  const list = (a) => Array.from(a, (v) => fixed(v, 4)).join(', ');
  quote('ch3.scores', Array.from(start.scores), list(start.scores));
  quote('ch3.sum', Array.from(start.sum), list(start.sum));
  quote('ch3.softmax', Array.from(start.softmax), list(start.softmax));
  quote('ch3.context', Array.from(start.context), list(start.context));

  // the plot: the six tokens in dimensions 1 and 2; "journey" is draggable; z is the context
  const grid = svg('g', { class: 'grid' });
  for (let v = -1; v <= 1.4 + 1e-9; v += 0.2) {
    const t = Math.round(v * 10) / 10;
    grid.append(svg('line', { x1: px(t), x2: px(t), y1: 0, y2: SIZE, class: t === 0 ? 'axis0' : '' }));
    grid.append(svg('line', { y1: py(t), y2: py(t), x1: 0, x2: SIZE, class: t === 0 ? 'axis0' : '' }));
  }
  const dots = TOKENS.map((name, i) => {
    const g = svg('g', { class: i === JOURNEY ? 'pt query' : 'pt' });
    g.append(svg('circle', { r: i === JOURNEY ? 9 : 6 }), svg('text', { dx: 10, dy: name === 'one' ? 16 : -8 }));
    g.lastChild.textContent = name;
    return g;
  });
  const ctx = svg('g', { class: 'pt context' });
  ctx.append(svg('rect', { x: -6, y: -6, width: 12, height: 12, transform: 'rotate(45)' }), svg('text', { dx: 10, dy: 14 }));
  ctx.lastChild.textContent = 'z (context)';
  const plot = svg('svg', {
    viewBox: `-4 -4 ${SIZE + 8} ${SIZE + 8}`, class: 'drag-plot', role: 'application', tabindex: 0,
    'aria-label': 'Dimensions 1 and 2 of each token. Drag journey, or use the arrow keys to move it by 0.05',
    'data-testid': 'ch3-plot',
  }, grid, ...dots, ctx);
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
    'Move “journey” so that it puts the most softmax weight on “with”.');

  let result = start;
  function update() {
    result = weightedAverage(engine, x, JOURNEY);
    dots.forEach((g, i) => g.setAttribute('transform', `translate(${px(x[i][0])} ${py(x[i][1])})`));
    ctx.setAttribute('transform', `translate(${px(result.context[0])} ${py(result.context[1])})`);
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
    setText(status, `journey = (${fixed(x[JOURNEY][0], 2)}, ${fixed(x[JOURNEY][1], 2)}, ${fixed(x[JOURNEY][2], 2)}); most weight on “${TOKENS[best]}”`);
    setText(ctxOut, `z = (${Array.from(result.context, (v) => fixed(v, 4)).join(', ')})`);
    plot.dataset.best = TOKENS[best];
    link.href = playgroundLink({ preset: 'tutorial', mode: 'attend', score: 'dot', x });
    challenge.check(best === 3);
  }

  const move = (a, b) => {
    x[JOURNEY][0] = round2(Math.max(LO, Math.min(HI, a)));
    x[JOURNEY][1] = round2(Math.max(LO, Math.min(HI, b)));
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
    move(x[JOURNEY][0] + d[0], x[JOURNEY][1] + d[1]);
  });
  root.querySelector('[data-role=reset]').addEventListener('click', () => { x = copyX(); update(); });
  update();
}
