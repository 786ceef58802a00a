// The steps panel: one card per step of attention (Q, K, V in self-attention
// mode; scores; weights; context; the compare view), each with its equation,
// a heatmap and its legend. Draws from the state and the computed steps.
import { createHeatmap } from '../ui/heatmap.js';
import { explainCell } from './explain.js';
import { renderTex, texFor } from './formulas.js';
import { SCORE_LABELS } from './state.js';

const h = (tag, props = {}, ...children) => {
  const node = Object.assign(document.createElement(tag), props);
  node.append(...children);
  return node;
};

const STEPS = {
  q: { title: 'Queries Q', kind: 'signed', axes: 'token ↓ dim →', legend: 'query value' },
  k: { title: 'Keys K', kind: 'signed', axes: 'token ↓ dim →', legend: 'key value' },
  v: { title: 'Values V', kind: 'signed', axes: 'token ↓ dim →', legend: 'value' },
  scores: { title: 'Scores eᵢⱼ', kind: 'signed', axes: 'query ↓ key →', legend: 'score e (−∞ = masked)' },
  weights: { title: 'Attention weights αᵢⱼ', kind: 'weights', axes: 'query ↓ key →', legend: 'attention weight α' },
  context: { title: 'Context vectors zᵢ', kind: 'signed', axes: 'query ↓ dim →', legend: 'context value' },
  compare: { title: 'Weights under', kind: 'weights', axes: 'query ↓ key →', legend: 'attention weight α′' },
  diff: { title: 'Difference α′ − α', kind: 'signed', axes: 'query ↓ key →', legend: 'α′ − α (red: more, blue: less)' },
};

const NOTES = {
  q: 'Each row is a token’s query vector.',
  k: 'Each row is a token’s key vector.',
  v: 'Each row is the value a token contributes.',
  scores: 'How well each query matches each key. Hover a cell for its terms.',
  weights: 'Each row is normalised to sum to 1. Hover a cell: its formula, and its contribution to the context row (outlined).',
  context: 'The weighted average of the values for each query.',
  compare: 'The same inputs scored with a second function.',
  diff: 'Where the second scoring function puts more (red) or less (blue) weight.',
};

/** opts: onExport(stepId, format, heatmap, title), onHead(h), onQuery(i | null) when a query row is hovered. */
export function createSteps(opts) {
  const cards = {};
  const headSelect = h('select', { id: 'head' });
  headSelect.addEventListener('change', () => opts.onHead(Number(headSelect.value) - 1));
  const headBox = h('label', { className: 'head-pick' }, 'Head ', headSelect);
  const computeError = h('p', { className: 'compute-error', hidden: true });
  computeError.dataset.testid = 'compute-error';
  computeError.setAttribute('role', 'alert');
  const grid = h('div', { className: 'step-grid' });
  const el = h('div', { className: 'steps' }, h('div', { className: 'steps-head' }, h('h2', { textContent: 'Every step' }), headBox), computeError, grid);

  function card(id) {
    if (cards[id]) return cards[id];
    const spec = STEPS[id];
    const heading = h('h3', { textContent: spec.title });
    const actions = h('div', { className: 'step-actions' });
    for (const format of ['png', 'svg']) {
      const b = h('button', { type: 'button', className: 'small', textContent: format.toUpperCase() });
      b.dataset.testid = `export-${id}-${format}`;
      b.setAttribute('aria-label', `Download the ${spec.title} heatmap as ${format.toUpperCase()}`);
      b.addEventListener('click', () => opts.onExport(id, format, cards[id].heatmap, cards[id].heading.textContent));
      actions.append(b);
    }
    const formula = h('div', { className: 'formula' });
    formula.dataset.testid = `formula-${id}`;
    const heatmap = createHeatmap({ id, label: spec.title, axes: spec.axes });
    const section = h('section', { className: `card step step-${id}` }, h('header', {}, heading, actions), formula,
      h('p', { className: 'step-note', textContent: NOTES[id] }), heatmap.el);
    section.dataset.step = id;
    cards[id] = { section, heading, formula, heatmap };
    return cards[id];
  }

  let order = '';
  return {
    el,
    showError(message) {
      computeError.hidden = !message;
      computeError.textContent = message ? `Cannot compute this setting: ${message}` : '';
    },
    update(s, r) {
      const self = s.mode === 'self';
      const ids = [...(self ? ['q', 'k', 'v'] : []), 'scores', 'weights', 'context', ...(r.compare ? ['compare', 'diff'] : [])];
      const key = ids.join();
      if (key !== order) {
        order = key;
        grid.replaceChildren(...ids.map((id) => card(id).section));
      }
      headBox.hidden = !(self && s.heads > 1);
      if (headSelect.options.length !== s.heads) {
        headSelect.replaceChildren(...Array.from({ length: s.heads }, (_, k) => h('option', { value: k + 1, textContent: String(k + 1) })));
      }
      headSelect.value = String(s.head + 1);
      const head = self ? s.head : 0;
      const dimNames = (m) => Array.from({ length: m.cols }, (_, j) => String(j + 1));
      const hover = (i) => { cards.context.heatmap.highlightRow(i); opts.onQuery?.(i); };
      const mats = { q: r.q, k: r.k, v: r.v, scores: r.scores[head], weights: r.weights[head], context: r.context, compare: r.compare?.weights, diff: r.compare?.diff };
      for (const id of ids) {
        const c = card(id);
        const m = mats[id];
        const square = id === 'scores' || id === 'weights' || id === 'compare' || id === 'diff';
        const headNote = self && s.heads > 1 && (id === 'scores' || id === 'weights') ? ` — head ${head + 1} of ${s.heads}` : '';
        c.heading.textContent = id === 'compare' ? `Weights under: ${SCORE_LABELS[s.compare]}` : STEPS[id].title + headNote;
        renderTex(c.formula, texFor(id, s));
        c.heatmap.update(m, {
          rowLabels: s.tokens,
          colLabels: square ? s.tokens : dimNames(m),
          kind: STEPS[id].kind,
          legend: STEPS[id].legend,
          describe: (i, j) => explainCell(s, r, id, id === 'compare' || id === 'diff' ? 0 : head, i, j),
          onHover: id === 'context' ? null : hover,
        });
      }
    },
  };
}
