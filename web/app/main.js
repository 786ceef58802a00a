// The first page: load the engine, compute the tutorial's self-attention
// weights, draw them. Wiring only; drawing lives in heatmap.js.
import { loadEngine } from '../engine/index.js';
import { renderHeatmap } from './heatmap.js';

const TOKENS = ['Your', 'journey', 'starts', 'with', 'one', 'step'];
const EMBEDDINGS = [
  [0.43, 0.15, 0.89],
  [0.22, 0.58, 0.33],
  [0.77, 0.25, 0.10],
  [0.05, 0.80, 0.55],
  [0.57, 0.85, 0.64],
  [0.55, 0.87, 0.66],
];

const $ = (id) => document.getElementById(id);

async function main() {
  const engine = await loadEngine();
  $('build').textContent = `Engine: WebAssembly ${engine.simd ? 'SIMD' : 'scalar'} build.`;
  const { weights, scores } = engine.selfAttention({ x: EMBEDDINGS });
  const w = weights[0];
  const e = scores[0];
  renderHeatmap(
    {
      figure: $('heatmap'), canvas: $('hm-canvas'), rows: $('hm-rows'), cols: $('hm-cols'),
      values: $('hm-values'), legendBar: $('legend-bar'), legendTicks: $('legend-ticks'),
      tooltip: $('tooltip'), readout: $('hm-readout'), table: $('hm-table'),
    },
    w,
    {
      rowLabels: TOKENS,
      colLabels: TOKENS,
      describe: (i, j, v) => `${TOKENS[i]} → ${TOKENS[j]}: e = ${e.data[i * e.cols + j].toFixed(4)}, α = ${v.toFixed(4)}`,
    },
  );
}

main().catch((err) => {
  $('build').textContent = 'The engine did not load.';
  const box = $('error');
  box.hidden = false;
  box.textContent = `attnlab could not start: ${err.message}`;
  console.error(err);
});
