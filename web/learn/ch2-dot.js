// Chapter 2, dot products and QKᵀ: the tutorial's embeddings X, the matrix of
// all pairwise dot products XXᵀ (queries = keys = X) computed by the engine, and
// a stepper that fills it cell by cell, writing out each cell's multiply-adds.
import { h, setText } from '../ui/dom.js';
import { createHeatmap } from '../ui/heatmap.js';
import { fixed, num } from '../ui/format.js';
import { createChallenge } from './progress.js';
import { playgroundLink } from './links.js';
import { quote } from './numbers.js';
import { TOKENS, copyX } from './tutorial.js';
import { createMatrixEditor } from './matrix-editor.js';

const SUB = '₀₁₂₃₄₅₆₇₈₉';

export function mountDot(root, { engine }) {
  let x = copyX();
  const n = TOKENS.length;
  let cell = 0; // cells 0 .. cell are computed (row-major)
  let scores = null;
  const first = engine.attend({ queries: x, keys: x }).scores;
  quote('ch2.yourJourney', first.data[1], fixed(first.data[1], 4));
  quote('ch2.cells', n * n, String(n * n));

  const hm = createHeatmap({ id: 'ch2-scores', label: 'The matrix of dot products X Xᵀ, filled so far', axes: 'query ↓ key →' });
  root.querySelector('[data-role=heatmap]').append(hm.el);
  const slider = root.querySelector('[data-role=cell]');
  slider.max = String(n * n - 1);
  const explain = root.querySelector('[data-role=explain]');
  const link = root.querySelector('[data-role=open-playground]');
  const challenge = createChallenge(root.querySelector('[data-role=challenge]'), 'dot',
    'Edit one number so that the dot product of “Your” and “starts” becomes negative.');
  const editor = createMatrixEditor({ id: 'ch2-x', rowNames: TOKENS, rows: x, onChange: (rows) => { x = rows; update(); } });
  root.querySelector('[data-role=editor]').append(editor.el);

  function draw() {
    const i = Math.floor(cell / n);
    const j = cell % n;
    const shown = new Float32Array(n * n).fill(-Infinity);
    shown.set(scores.data.subarray(0, cell + 1));
    hm.update({ rows: n, cols: n, data: shown }, {
      rowLabels: TOKENS, colLabels: TOKENS, kind: 'signed', legend: 'dot product (grey: not computed yet)', maxCell: 44, showValues: false,
      describe: (a, b) => ({
        title: `${TOKENS[a]} · ${TOKENS[b]}`,
        lines: [a * n + b <= cell ? `= ${fixed(scores.data[a * n + b], 4)}` : 'not computed yet: step on'],
      }),
    });
    hm.highlightRow(i);
    const terms = x[i].map((v, k) => `${num(v, 2)}×${num(x[j][k], 2)}`).join(' + ');
    setText(explain, `Cell ${cell + 1} of ${n * n}: row “${TOKENS[i]}”, column “${TOKENS[j]}”: x${SUB[i]} · x${SUB[j]} = ${terms} = ${fixed(scores.data[cell], 4)}`);
    slider.value = String(cell);
    slider.setAttribute('aria-valuetext', `cell ${cell + 1}: ${TOKENS[i]} · ${TOKENS[j]}`);
  }

  function update() {
    scores = engine.attend({ queries: x, keys: x }).scores;
    draw();
    link.href = playgroundLink({ preset: 'tutorial', mode: 'attend', score: 'dot', x });
    const dot = scores.data[0 * n + 2];
    const terms = x[0].map((v, k) => `${num(v, 2)}×${num(x[2][k], 2)}`).join(' + ');
    challenge.check(dot < 0, `“${TOKENS[0]}” · “${TOKENS[2]}” = ${terms} = ${fixed(dot, 4)}, not below 0: one product must be negative and outweigh the others.`);
  }
  const go = (c) => { cell = Math.max(0, Math.min(n * n - 1, c)); draw(); };
  slider.addEventListener('input', () => go(Number(slider.value)));
  root.querySelector('[data-role=prev]').addEventListener('click', () => go(cell - 1));
  root.querySelector('[data-role=next]').addEventListener('click', () => go(cell + 1));
  root.querySelector('[data-role=all]').addEventListener('click', () => go(n * n - 1));
  root.querySelector('[data-role=reset]').addEventListener('click', () => { x = copyX(); editor.set(x); update(); });
  update();
}
