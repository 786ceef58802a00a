// The steps panel: one card per step of attention, each with its equation, a
// heatmap (ui/heatmap.js) and its legend. Scores and weights come first (they are
// what the controls change), then the compared weights and their difference next to
// them; in self-attention every head's weights are shown at once as small multiples
// (click one to enlarge it into the scores, weights and compare cards), Q, K, V and
// the context carry their heads' column bands, and the output projection Wo is its
// own step. Each card has a skip link (steps.skips, placed at the top of the page) so
// the keyboard reaches a figure in a few Tabs. Draws from the state and the computed steps.
import { h, setHidden, setText } from '../ui/dom.js';
import { fixed } from '../ui/format.js';
import { createHeatmap } from '../ui/heatmap.js';
import { explainCell } from './explain.js';
import { renderFormula } from './formulas.js';
import { SCORE_LABELS, scoreName } from './state.js';

// name: what the step's skip link says ("Skip to the scores")
const STEPS = {
  q: { title: 'Queries Q', name: 'the queries Q', kind: 'signed', axes: 'token ↓ dim →', legend: 'query value' },
  k: { title: 'Keys K', name: 'the keys K', kind: 'signed', axes: 'token ↓ dim →', legend: 'key value' },
  v: { title: 'Values V', name: 'the values V', kind: 'signed', axes: 'token ↓ dim →', legend: 'value' },
  scores: { title: 'Scores eᵢⱼ', name: 'the scores', kind: 'signed', axes: 'query ↓ key →', legend: 'score e (−∞ = masked)' },
  weights: { title: 'Attention weights αᵢⱼ', name: 'the attention weights', kind: 'weights', axes: 'query ↓ key →', legend: 'attention weight α' },
  heads: { title: 'Every head’s weights', name: 'every head’s weights', kind: 'weights', axes: '', legend: '' },
  context: { title: 'Context vectors zᵢ', name: 'the context vectors', kind: 'signed', axes: 'query ↓ dim →', legend: 'context value' },
  output: { title: 'Output O = Z Wₒ', name: 'the output', kind: 'signed', axes: 'token ↓ dim →', legend: 'output value' },
  compare: { title: 'Weights under', name: 'the compared weights', kind: 'weights', axes: 'query ↓ key →', legend: 'attention weight α′' },
  diff: { title: 'Difference α′ − α', name: 'the difference of the weights', kind: 'signed', axes: 'query ↓ key →', legend: 'α′ − α (red: more, blue: less)' },
};

const NOTES = {
  q: 'Each row is a token’s query vector; the coloured bands are the heads’ columns.',
  k: 'Each row is a token’s key vector; the coloured bands are the heads’ columns.',
  v: 'Each row is the value a token contributes; the coloured bands are the heads’ columns.',
  scores: 'How well each query matches each key. Hover a cell for its terms.',
  weights: 'Hover a cell for its formula and its share of the context row (outlined).',
  heads: 'Each head attends on its own slice of Q, K and V. Click a head to enlarge it in the scores, weights and comparison above.',
  context: 'The weighted average of the values for each query (heads side by side).',
  output: 'The concatenated heads mixed back together by the output projection Wₒ.',
};

/** How this setting normalises a row of scores (self-attention has no normalisation or τ control). */
function weightsNote(s) {
  if (s.mode === 'self') return `Softmax at τ = 1 makes each row sum to 1. ${NOTES.weights}`;
  if (s.normalize === 'sum') return `Each row is divided by its sum, e / Σe. ${NOTES.weights}`;
  return `Softmax${s.temperature === 1 ? '' : ` at τ = ${fixed(s.temperature, 2)}`} makes each row sum to 1. ${NOTES.weights}`;
}

/** The compare and difference notes: what exactly is compared, in this mode. */
function compareNote(id, s) {
  if (id === 'diff') return `Where ${scoreName(s.compare)} puts more (red) or less (blue) weight than ${scoreName(s.score)}, query by query.`;
  return s.mode === 'self'
    ? `Head ${s.head}’s own queries and keys (Q and K ${s.trainable ? 'after the projections' : '= X'}) scored with ${scoreName(s.compare)} instead of ${scoreName(s.score)}; softmax and mask as above${s.positions === 'alibi' ? ', without ALiBi’s bias' : ''}.`
    : `The same embeddings (q = k = v = x), normalisation, temperature and mask, scored with ${scoreName(s.compare)} instead of ${scoreName(s.score)}.`;
}

/**
 * opts: onExport(stepId, format, heatmap, title), onHead(h), onQuery(i | null) when a query row is hovered,
 * tools: nodes for the panel's heading row (controls of every figure, e.g. the colour-scale lock).
 */
export function createSteps(opts) {
  const cards = {};
  const headSelect = h('select', { id: 'head' });
  headSelect.addEventListener('change', () => opts.onHead(Number(headSelect.value)));
  const headBox = h('label', { className: 'head-pick' }, 'Enlarged head ', headSelect);
  const computeError = h('p', { className: 'compute-error', hidden: true, dataset: { testid: 'compute-error' }, attrs: { role: 'alert' } });
  const grid = h('div', { className: 'step-grid' });
  const el = h('div', { className: 'steps' },
    h('div', { className: 'steps-head' }, h('h2', { textContent: 'Every step' }), h('div', { className: 'steps-tools' }, ...(opts.tools ?? []), headBox)),
    computeError, grid);
  let locked = false;
  let thumbs = [];

  function card(id) {
    if (cards[id]) return cards[id];
    const spec = STEPS[id];
    const heading = h('h3', { textContent: spec.title });
    const actions = h('div', { className: 'step-actions' });
    const formula = h('div', { className: 'formula', dataset: { testid: `formula-${id}` } });
    const warning = h('p', { className: 'warning', hidden: true, dataset: { testid: `warning-${id}` } });
    const note = h('p', { className: 'step-note', textContent: NOTES[id] ?? '' });
    let heatmap = null;
    let body;
    if (id === 'heads') {
      body = h('div', { className: 'thumbs', dataset: { testid: 'heads' } });
    } else {
      heatmap = createHeatmap({ id, label: spec.title, axes: spec.axes });
      heatmap.lockScale(locked);
      body = heatmap.el;
      for (const format of ['png', 'svg']) {
        const b = h('button', {
          type: 'button', className: 'small', textContent: format.toUpperCase(),
          dataset: { testid: `export-${id}-${format}` }, attrs: { 'aria-label': `Download the ${spec.title} heatmap as ${format.toUpperCase()}` },
        });
        b.addEventListener('click', () => opts.onExport(id, format, cards[id].heatmap, cards[id].heading.textContent));
        actions.append(b);
      }
    }
    const section = h('section', { id: `step-${id}`, className: `card step step-${id}`, dataset: { step: id }, attrs: { tabindex: '-1' } },
      h('header', {}, heading, actions), formula, warning, body, note);
    cards[id] = { section, heading, formula, note, heatmap, warning, body };
    return cards[id];
  }

  function drawThumbs(s, r) {
    const c = card('heads');
    if (thumbs.length !== s.heads) {
      thumbs = Array.from({ length: s.heads }, (_, k) => {
        const hm = createHeatmap({ id: `head-${k}`, label: `head ${k}`, interactive: false, legend: false });
        const button = h('button', { type: 'button', className: 'thumb', dataset: { testid: `head-${k}` } }, hm.el, h('span', { textContent: `Head ${k}` }));
        button.addEventListener('click', () => opts.onHead(k));
        return { hm, button };
      });
      c.body.replaceChildren(...thumbs.map((t) => t.button));
    }
    thumbs.forEach(({ hm, button }, k) => {
      hm.update(r.weights[k], { rowLabels: s.tokens.map(() => ''), colLabels: s.tokens.map(() => ''), kind: 'weights', maxCell: 14 });
      if (button.getAttribute('aria-pressed') !== String(k === s.head)) {
        button.setAttribute('aria-pressed', String(k === s.head));
        button.setAttribute('aria-label', `Head ${k} weights${k === s.head ? ' (enlarged)' : ''}: enlarge`);
      }
    });
  }

  // Skip links, one per card: Enter lands on the card's figure (its heatmap canvas, or the
  // first head's button), so a keyboard user reads cells at once instead of tabbing past
  // every control and embedding. They show only while focused (.skip in ui/base.css).
  const skips = h('div', { className: 'skips-steps' });
  const skipLinks = {};
  function skipLink(id) {
    if (skipLinks[id]) return skipLinks[id];
    const a = h('a', { className: 'skip', href: `#step-${id}`, textContent: `Skip to ${STEPS[id].name}` });
    a.addEventListener('click', (ev) => {
      const c = cards[id];
      const target = c.heatmap ? c.body.querySelector('canvas[tabindex]') : c.body.querySelector('button');
      if (!target) return;
      ev.preventDefault();
      c.section.scrollIntoView({ block: 'start' });
      target.focus({ preventScroll: true });
    });
    skipLinks[id] = a;
    return a;
  }

  let order = '';
  let marked = null;
  return {
    el,
    skips,
    /** Outlines query row i (null: none) in the scores and weights: the point being dragged. */
    markQuery(i) {
      marked = i;
      for (const id of ['scores', 'weights', 'compare', 'diff']) cards[id]?.heatmap.highlightRow(i);
    },
    showError(message) {
      setHidden(computeError, !message);
      setText(computeError, message ? `Cannot compute this setting: ${message}` : '');
    },
    setLock(on) {
      locked = on;
      for (const c of Object.values(cards)) c.heatmap?.lockScale(on);
    },
    update(s, r, extra = {}) {
      const self = s.mode === 'self';
      const multi = self && s.heads > 1;
      // the compared weights sit beside the weights they are compared with
      const ids = ['scores', 'weights', ...(r.compare ? ['compare', 'diff'] : []), ...(multi ? ['heads'] : []),
        ...(self ? ['q', 'k', 'v'] : []), 'context', ...(r.output ? ['output'] : [])];
      const key = ids.join();
      if (key !== order) {
        order = key;
        grid.replaceChildren(...ids.map((id) => card(id).section));
        skips.replaceChildren(...ids.map((id) => skipLink(id)));
      }
      setHidden(headBox, !multi);
      if (headSelect.options.length !== s.heads) {
        headSelect.replaceChildren(...Array.from({ length: s.heads }, (_, k) => h('option', { value: k, textContent: String(k) })));
      }
      if (headSelect.value !== String(s.head)) headSelect.value = String(s.head);
      const head = self ? s.head : 0;
      const dimNames = (m) => Array.from({ length: m.cols }, (_, j) => String(j + 1));
      const hover = (i) => { cards.context.heatmap.highlightRow(i); opts.onQuery?.(i); };
      const dh = r.headSize;
      const bands = multi ? Array.from({ length: s.heads }, (_, k) => ({ from: k * dh, to: (k + 1) * dh, label: `head ${k}` })) : [];
      const mats = {
        q: r.q, k: r.k, v: r.v, scores: r.scores[head], weights: r.weights[head], context: r.context, output: r.output,
        compare: r.compare?.weights, diff: r.compare?.diff,
      };
      for (const id of ids) {
        const c = card(id);
        renderFormula(c.formula, id, s);
        if (id === 'heads') { drawThumbs(s, r); continue; }
        const m = mats[id];
        const square = ['scores', 'weights', 'compare', 'diff'].includes(id);
        const headNote = multi && square ? ` — head ${head} of ${s.heads}` : '';
        setText(c.heading, (id === 'compare' ? `Weights under: ${SCORE_LABELS[s.compare]}` : STEPS[id].title) + headNote);
        if (id === 'compare' || id === 'diff') setText(c.note, compareNote(id, s));
        else if (id === 'weights') setText(c.note, weightsNote(s));
        c.heatmap.update(m, {
          rowLabels: s.tokens,
          colLabels: square ? s.tokens : dimNames(m),
          kind: STEPS[id].kind,
          legend: STEPS[id].legend,
          bands: ['q', 'k', 'v', 'context'].includes(id) ? bands : [],
          describe: (i, j) => explainCell(s, r, id, id === 'compare' || id === 'diff' ? 0 : head, i, j),
          onHover: id === 'context' || id === 'output' ? null : hover,
        });
      }
      if (marked !== null) this.markQuery(marked);
      const w = cards.weights.warning;
      const range = extra.sumRange;
      setHidden(w, !range);
      if (range) w.textContent = `These scores have both signs, so e / Σe is not a distribution: weights run from ${fixed(range.lo, 2)} to ${fixed(range.hi, 2)}, outside [0, 1]. The naive sum only makes sense for positive scores; softmax always gives weights in [0, 1].`;
    },
  };
}
