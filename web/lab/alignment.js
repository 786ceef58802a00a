// The alignment heatmap: output characters (rows) x input characters
// (columns), drawn on a canvas at the matrix's own resolution and scaled by
// CSS, with DOM labels, a 0..1 legend, and a hover / keyboard readout.

import { TABLES } from '../ui/colors.js';

/** viridis, the playground's sequential scale (weights are on [0, 1]). */
export function viridis(v) {
  const i = 3 * Math.max(0, Math.min(255, Math.round(v * 255)));
  return [TABLES.sequential[i], TABLES.sequential[i + 1], TABLES.sequential[i + 2]];
}

const shown = (ch) => (ch === ' ' ? '␣' : ch);

/** Fills the legend canvas once. */
export function drawLegendBar(canvas) {
  canvas.width = 256;
  canvas.height = 1;
  const ctx = canvas.getContext('2d');
  const img = ctx.createImageData(256, 1);
  for (let i = 0; i < 256; i++) img.data.set([...viridis(i / 255), 255], i * 4);
  ctx.putImageData(img, 0, 0);
}

/**
 * Draws translation { inputTokens, outputTokens, alignment } into the parts
 * { canvas, rows, cols, readout }.
 */
export function drawAlignment(parts, translation) {
  const { inputTokens, outputTokens, alignment } = translation;
  const { rows: n, cols: m, data } = alignment;
  const { canvas, rows, cols, readout } = parts;
  canvas.width = Math.max(m, 1);
  canvas.height = Math.max(n, 1);
  canvas.style.aspectRatio = `${Math.max(m, 1)} / ${Math.max(n, 1)}`;
  const ctx = canvas.getContext('2d');
  const img = ctx.createImageData(canvas.width, canvas.height);
  for (let i = 0; i < n * m; i++) img.data.set([...viridis(data[i]), 255], i * 4);
  ctx.putImageData(img, 0, 0);
  const label = (text) => {
    const span = document.createElement('span');
    span.textContent = shown(text);
    return span;
  };
  cols.style.gridTemplateColumns = `repeat(${Math.max(m, 1)}, 1fr)`;
  rows.style.gridTemplateRows = `repeat(${Math.max(n, 1)}, 1fr)`;
  cols.replaceChildren(...inputTokens.map(label));
  rows.replaceChildren(...outputTokens.map(label));
  canvas.setAttribute('aria-label', `alignment of ${n} output characters over ${m} input characters`);
  let focus = { i: 0, j: 0 };
  const describe = ({ i, j }) => {
    if (!n || !m) return;
    const v = data[i * m + j];
    readout.textContent = `output ${i + 1} '${shown(outputTokens[i])}' attends to input ${j + 1} '${shown(inputTokens[j])}': α = ${v.toFixed(3)}`;
  };
  canvas.onmousemove = (e) => {
    const r = canvas.getBoundingClientRect();
    focus = {
      i: Math.min(n - 1, Math.floor(((e.clientY - r.top) / r.height) * n)),
      j: Math.min(m - 1, Math.floor(((e.clientX - r.left) / r.width) * m)),
    };
    describe(focus);
  };
  canvas.onkeydown = (e) => {
    const moves = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] };
    if (!moves[e.key]) return;
    e.preventDefault();
    focus = {
      i: Math.max(0, Math.min(n - 1, focus.i + moves[e.key][0])),
      j: Math.max(0, Math.min(m - 1, focus.j + moves[e.key][1])),
    };
    describe(focus);
  };
  canvas.onfocus = () => describe(focus);
}

/**
 * How anti-diagonal an alignment is: the mean weight that output step t puts
 * on input n-1-t (1 for a perfect reversal), over the steps before EOS.
 */
export function antiDiagonal(translation) {
  const { rows, cols, data } = translation.alignment;
  const steps = Math.min(rows, cols);
  if (!steps) return 0;
  let sum = 0;
  for (let t = 0; t < steps; t++) sum += data[t * cols + (cols - 1 - t)];
  return sum / steps;
}
