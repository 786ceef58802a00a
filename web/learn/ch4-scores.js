// Chapter 4, scoring functions: the six scores of the core side by side on the
// tutorial's embeddings (seeded parameters, written out in each playground link),
// then why √d: the spread of q·k and the entropy of softmax as d grows, with and
// without scaling, and a temperature to flatten the unscaled weights.
import { h, setText } from '../ui/dom.js';
import { createHeatmap } from '../ui/heatmap.js';
import { drawChart, drawLegend } from '../ui/chart.js';
import { fixed } from '../ui/format.js';
import { createChallenge } from './progress.js';
import { playgroundLink } from './links.js';
import { percent, quote } from './numbers.js';
import { randomMatrix } from './rng.js';
import { KEYS, QUERIES, measure } from './spread.js';
import { TOKENS, X } from './tutorial.js';

const HIDDEN = 4;
/** The example parameters, from seed 1 (the playground's field names). */
export function exampleParams() {
  return {
    W: randomMatrix(1, 'W', 3, 3), Wq: randomMatrix(1, 'Wq', HIDDEN, 3), Wk: randomMatrix(1, 'Wk', HIDDEN, 3),
    v: randomMatrix(1, 'v', 1, HIDDEN)[0], L: randomMatrix(1, 'L', TOKENS.length, 3), beta: 1,
  };
}
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
  const pgParams = { W: p.W, Wq: p.Wq, Wk: p.Wk, v: p.v, L: p.L, hidden: HIDDEN, beta: p.beta };
  for (const s of SCORE_LIST) {
    const card = root.querySelector(`[data-score="${s.id}"]`);
    const r = engine.attend({ queries: X, keys: X, score: s.id, params: s.params(p) });
    const hm = createHeatmap({ id: `ch4-${s.id}`, label: `${s.label}: attention weights`, axes: 'query ↓ key →' });
    hm.update(r.weights, {
      rowLabels: TOKENS, colLabels: TOKENS, kind: 'weights', legend: 'α', maxCell: 30, showValues: false,
      describe: (i, j) => ({ title: `${s.label}: ${TOKENS[i]} → ${TOKENS[j]}`, lines: [`e = ${fixed(r.scores.data[i * 6 + j], 4)}`, `α = ${fixed(r.weights.data[i * 6 + j], 4)}`] }),
    });
    card.querySelector('[data-role=heatmap]').append(hm.el);
    const a = card.querySelector('[data-role=open-playground]');
    a.href = playgroundLink({ preset: 'tutorial', mode: 'attend', score: s.id, ...pgParams });
    const journey = r.weights.data.subarray(6, 12);
    let best = 0;
    for (let j = 1; j < 6; j++) if (journey[j] > journey[best]) best = j;
    quote(`ch4.best.${s.id}`, TOKENS[best], `“${TOKENS[best]}” (${fixed(journey[best], 2)})`);
  }

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
    `Set d to ${last.d}, keep the unscaled dot product, and find a temperature τ where the weights are almost uniform (entropy at least 95% of its maximum).`);
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
    challenge.check(d === last.d && m.entropyTempered >= 0.95);
  }
  dSlider.addEventListener('input', update);
  tSlider.addEventListener('input', update);
  update();
}
