// Chapter 4, scoring functions: the six scores of the core side by side on the
// tutorial's embeddings, with small hand-picked parameters that the page writes
// out (so the prose can say what each map does) and one colour scale for all six,
// then why √d: the spread of q·k and the entropy of softmax as d grows, with and
// without scaling, and a temperature to flatten the unscaled weights.
import { h, setText } from '../ui/dom.js';
import { createHeatmap } from '../ui/heatmap.js';
import { drawChart, drawLegend } from '../ui/chart.js';
import { fixed } from '../ui/format.js';
import { createChallenge } from './progress.js';
import { playgroundLink } from './links.js';
import { percent, quote } from './numbers.js';
import { largest, updateOnScale } from './scale.js';
import { KEYS, QUERIES, measure } from './spread.js';
import { TOKENS, X } from './tutorial.js';

const HIDDEN = 2;
/** The challenge's "almost uniform": the tempered weights' entropy as a share of its maximum. */
const FLAT = 0.95;
/**
 * The example parameters (the playground's field names), chosen to be read at a glance:
 * general's W swaps dimensions 1 and 2; additive's W1 = W2 keep dimensions 1 and 2 and
 * v = (1, −1), so e = tanh(q1 + k1) − tanh(q2 + k2); cosine's β = 5; location's row j is
 * (j − 1)/2 · (1, 1, 1), so later positions score higher the larger the query's entries.
 */
export function exampleParams() {
  const keep12 = [[1, 0, 0], [0, 1, 0]];
  return {
    W: [[0, 1, 0], [1, 0, 0], [0, 0, 1]], Wq: keep12, Wk: keep12.map((r) => [...r]), v: [1, -1],
    L: TOKENS.map((_, j) => [j / 2, j / 2, j / 2]), beta: 5,
  };
}
const mat = (m) => `[${m.map((r) => r.join(', ')).join('; ')}]`;
/** The parameters as the page writes them under the maps. */
export const paramsText = (p) => `General: W = ${mat(p.W)} (swaps dimensions 1 and 2). `
  + `Additive: W₁ = W₂ = ${mat(p.Wq)} (dimensions 1 and 2), v = (${p.v.join(', ')}), so e = tanh(q₁ + k₁) − tanh(q₂ + k₂). `
  + `Cosine: β = ${p.beta}. Location: W_loc = ${mat(p.L)} (row j scores position j).`;
export const SCORE_LIST = [
  { id: 'dot', label: 'Dot product', params: () => undefined },
  { id: 'scaled_dot', label: 'Scaled dot product', params: () => undefined },
  { id: 'general', label: 'General (bilinear)', params: (p) => ({ W: p.W }) },
  { id: 'additive', label: 'Additive (Bahdanau)', params: (p) => ({ Wq: p.Wq, Wk: p.Wk, v: p.v }) },
  { id: 'cosine', label: 'Cosine (Graves)', params: (p) => ({ beta: p.beta }) },
  { id: 'location', label: 'Location-based', params: (p) => ({ W: p.L }) },
];
export const DIMS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512];

export function mountScores(root, { engine }) {
  const p = exampleParams();
  setText(root.querySelector('[data-role=params]'), paramsText(p));
  const pgParams = { W: p.W, Wq: p.Wq, Wk: p.Wk, v: p.v, L: p.L, hidden: HIDDEN, beta: p.beta };
  const results = SCORE_LIST.map((s) => engine.attend({ queries: X, keys: X, score: s.id, params: s.params(p) }));
  // one colour scale, 0 to the largest weight of all six maps, so colours compare across them
  const top = largest(...results.map((r) => r.weights));
  root.querySelector('[data-role=scale-max]').textContent = fixed(top, 2);
  root.dataset.scaleMax = String(top);
  SCORE_LIST.forEach((s, n) => {
    const card = root.querySelector(`[data-score="${s.id}"]`);
    const r = results[n];
    const hm = createHeatmap({ id: `ch4-${s.id}`, label: `${s.label}: attention weights`, axes: 'query ↓ key →' });
    const opts = {
      rowLabels: TOKENS, colLabels: TOKENS, kind: 'weights', legend: 'α (the same scale in all six)', maxCell: 30, showValues: false,
      describe: (i, j) => ({ title: `${s.label}: ${TOKENS[i]} → ${TOKENS[j]}`, lines: [`e = ${fixed(r.scores.data[i * 6 + j], 4)}`, `α = ${fixed(r.weights.data[i * 6 + j], 4)}`] }),
    };
    updateOnScale(hm, r.weights, opts, top);
    card.querySelector('[data-role=heatmap]').append(hm.el);
    const a = card.querySelector('[data-role=open-playground]');
    a.href = playgroundLink({ preset: 'tutorial', mode: 'attend', score: s.id, ...pgParams });
    const journey = r.weights.data.subarray(6, 12);
    let best = 0;
    for (let j = 1; j < 6; j++) if (journey[j] > journey[best]) best = j;
    quote(`ch4.best.${s.id}`, TOKENS[best], `“${TOKENS[best]}” (${fixed(journey[best], 2)})`);
  });

  // why √d
  const curve = DIMS.map((d) => measure(engine, d));
  const last = curve[curve.length - 1];
  quote('ch4.dMax', last.d, String(last.d));
  quote('ch4.spreadMax', last.spread, fixed(last.spread, 1));
  quote('ch4.sqrtMax', Math.sqrt(last.d), fixed(Math.sqrt(last.d), 1));
  quote('ch4.entropyDotMax', last.entropyDot, percent(last.entropyDot));
  quote('ch4.entropyScaledMax', last.entropyScaled, percent(last.entropyScaled));
  quote('ch4.queries', QUERIES, String(QUERIES));
  quote('ch4.keys', KEYS, String(KEYS));
  const series = [
    { name: 'softmax(q·k)', color: '#c2255c', points: curve.map((c) => ({ x: Math.log2(c.d), y: c.entropyDot })) },
    { name: 'softmax(q·k / √d)', color: '#2f56d6', points: curve.map((c) => ({ x: Math.log2(c.d), y: c.entropyScaled })) },
  ];
  drawChart(root.querySelector('[data-role=entropy-chart]'), series, {
    xLabel: 'log₂ d', yLabel: 'entropy / max', readout: root.querySelector('[data-role=entropy-readout]'), xMin: 0, xMax: 9, yMin: 0, yMax: 1, integerX: true,
  });
  drawLegend(root.querySelector('[data-role=entropy-legend]'), series);

  const dSlider = root.querySelector('[data-role=d]');
  const tSlider = root.querySelector('[data-role=tau]');
  dSlider.max = String(DIMS.length - 1);
  const out = root.querySelector('[data-role=d-readout]');
  const link = root.querySelector('[data-role=open-playground-d]');
  const challenge = createChallenge(root.querySelector('[data-role=challenge]'), 'scores',
    `Set d to ${last.d}, keep the unscaled dot product, and find a temperature τ where the weights are almost uniform (entropy at least ${FLAT * 100}% of its maximum).`);
  const tau = () => Math.round(2 ** Number(tSlider.value) * 100) / 100;
  function update() {
    const d = DIMS[Number(dSlider.value)];
    const t = tau();
    const m = measure(engine, d, t);
    setText(root.querySelector('[data-role=d-value]'), String(d));
    setText(root.querySelector('[data-role=tau-value]'), fixed(t, 2));
    dSlider.setAttribute('aria-valuetext', `d = ${d}`);
    tSlider.setAttribute('aria-valuetext', `τ = ${fixed(t, 2)}`);
    setText(out.querySelector('[data-role=spread]'), `${fixed(m.spread, 2)} (√d = ${fixed(Math.sqrt(d), 2)})`);
    setText(out.querySelector('[data-role=h-dot]'), percent(m.entropyDot));
    setText(out.querySelector('[data-role=h-scaled]'), percent(m.entropyScaled));
    setText(out.querySelector('[data-role=h-tau]'), percent(m.entropyTempered));
    out.dataset.entropyTempered = String(m.entropyTempered);
    link.href = playgroundLink({ preset: 'long', mode: 'attend', score: 'dot', temperature: Math.min(20, Math.max(0.05, t)) });
    challenge.check(d === last.d && m.entropyTempered >= FLAT, d !== last.d ? `d is ${d}: set it to ${last.d}.`
      : `at τ = ${fixed(t, 2)} the entropy is ${percent(m.entropyTempered)} of its maximum, below ${FLAT * 100}%: a larger τ flattens the weights.`);
  }
  dSlider.addEventListener('input', update);
  tSlider.addEventListener('input', update);
  update();
}
