// Chapter 9, from attention to the transformer: the tutorial's six tokens
// shuffled with and without positions (ui/positions.js around the engine's
// self-attention; the text says from the numbers whether the weights only
// moved), the √d experiment trained live (two tiny transformers, dot against
// scaled dot), and the induction section (ch9-induction.js).
import { setText } from '../ui/dom.js';
import { drawChart, drawLegend } from '../ui/chart.js';
import { fixed } from '../ui/format.js';
import { createHeatmap } from '../ui/heatmap.js';
import { SAME, movedGap, permutation, permuted } from '../ui/permutation.js';
import { POSITION_NAMES, alibiSlope, selfAttentionWith } from '../ui/positions.js';
import { mountInduction } from './ch9-induction.js';
import { SQRT_D, smoothed, sqrtDSummary, trainSqrtD } from './ch9-training.js';
import { playgroundLink } from './links.js';
import { TOKENS, X } from './tutorial.js';

const COLORS = { dot: '#d6604d', scaled_dot: '#2166ac' };
const LABELS = { dot: 'dot: q·k', scaled_dot: 'scaled dot: q·k / √64' };
const toMatrix = (rows) => ({ rows: rows.length, cols: rows[0].length, data: Float32Array.from(rows.flat()) });

/** The chapter's self-attention (Q = K = V = X, dot scores, as chapter 5 starts) over an order of the tokens. */
export function orderWeights(engine, x, positions) {
  return selfAttentionWith(engine, { x: toMatrix(x), heads: 1, causal: false, score: 'dot' }, positions);
}

/** What a shuffle did to the weights, in words, from the measured gap. */
export function shuffleText(kind, gap, perm) {
  const order = perm.map((k) => TOKENS[k]).join(' ');
  if (gap.max <= SAME) {
    return `Shuffled to “${order}”. With ${POSITION_NAMES[kind]}, every weight moved with its tokens: α′(i, j) = α(π(i), π(j)) in all ${gap.cells} cells (largest difference ${fixed(gap.max, 4)}). The rows and columns were permuted together and nothing else changed.`;
  }
  return `Shuffled to “${order}”. With ${POSITION_NAMES[kind]}, the weights did not only move: ${gap.changed} of ${gap.cells} cells differ from the old weights moved with the tokens, by up to ${fixed(gap.max, 4)}. Where a token sits now changes what it attends to.`;
}

function mountOrder(root, engine) {
  const select = root.querySelector('[data-role=positions]');
  const text = root.querySelector('[data-role=order-text]');
  const termCaption = root.querySelector('[data-role=term-caption]');
  const weights = createHeatmap({ id: 'ch9-weights', label: 'Attention weights in the order shown', axes: 'query ↓ key →' });
  const term = createHeatmap({ id: 'ch9-term', label: 'What positions add to the scores', axes: 'query ↓ key →' });
  root.querySelector('[data-role=weights]').append(weights.el);
  root.querySelector('[data-role=term]').append(term.el);
  const link = root.querySelector('[data-role=open-playground]');
  let perm = TOKENS.map((_, i) => i);
  let shuffles = 0;

  function update() {
    const kind = select.value;
    const now = permuted({ tokens: TOKENS, x: X }, perm);
    const r = orderWeights(engine, now.x, kind);
    const labels = now.tokens;
    weights.update(r.weights[0], {
      rowLabels: labels, colLabels: labels, kind: 'weights', legend: 'attention weight α', maxCell: 44,
      describe: (i, j) => ({ title: `${labels[i]} → ${labels[j]}`, lines: [`α = ${fixed(r.weights[0].data[i * 6 + j], 4)}`] }),
    });
    const t = r.term ? r.term[0] : { rows: 6, cols: 6, data: new Float32Array(36) };
    term.update(t, {
      rowLabels: labels, colLabels: labels, kind: 'signed', legend: 'added to the score', maxCell: 44,
      describe: (i, j) => ({ title: `${labels[i]} → ${labels[j]}`, lines: [`added: ${fixed(t.data[i * 6 + j], 4)}`] }),
    });
    let lo = Infinity;
    let hi = -Infinity;
    for (const v of t.data) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
    setText(termCaption, kind === 'none'
      ? 'No positions: nothing is added (all 0). Choose a kind above.'
      : `${kind === 'alibi' ? `−m·|i − j| with m = ${alibiSlope(0, 1)} (Press et al.’s causal −m·(i − j), made symmetric for this demo without a mask)` : 'The scores with positions minus the scores without'}: from ${fixed(lo, 3)} to ${fixed(hi, 3)}. Red raises a score, blue lowers it.`);
    if (perm.every((k, i) => k === i)) {
      setText(text, `The sentence in its order, with ${POSITION_NAMES[kind]}. Shuffle the tokens to see what moves.`);
    } else {
      const before = orderWeights(engine, X, kind);
      setText(text, shuffleText(kind, movedGap(before.weights, r.weights, perm), perm));
    }
    root.dataset.shuffled = String(shuffles > 0 && perm.some((k, i) => k !== i));
    link.href = playgroundLink({ preset: 'tutorial', mode: 'self', score: 'dot', trainable: false, positions: kind });
  }
  root.querySelector('[data-role=shuffle]').addEventListener('click', () => { perm = permutation(6, ++shuffles); update(); });
  root.querySelector('[data-role=unshuffle]').addEventListener('click', () => { perm = TOKENS.map((_, i) => i); update(); });
  select.addEventListener('change', update);
  update();
}

function mountSqrtD(root, engine) {
  const button = root.querySelector('[data-role=sqrt-train]');
  const bar = root.querySelector('[data-role=sqrt-progress]');
  const chart = root.querySelector('[data-role=sqrt-chart]');
  const readout = root.querySelector('[data-role=sqrt-readout]');
  const text = root.querySelector('[data-role=sqrt-text]');
  const draw = (runs) => {
    const series = runs.map((r) => ({ name: LABELS[r.score], color: COLORS[r.score], points: smoothed(r.losses, 20) }));
    drawChart(chart, series, { xLabel: 'step', yLabel: 'loss', readout, xMin: 0, xMax: SQRT_D.steps, yMin: 0, integerX: true });
    drawLegend(root.querySelector('[data-role=sqrt-legend]'), series);
  };
  button.addEventListener('click', async () => {
    button.disabled = true;
    setText(text, 'Training…');
    try {
      const runs = await trainSqrtD(engine, ({ score, losses, runs: done }) => {
        bar.value = (done.length * SQRT_D.steps + losses.length) / (2 * SQRT_D.steps);
        draw([...done, { score, losses }]);
      });
      bar.value = 1;
      draw(runs);
      const s = sqrtDSummary(runs);
      const [winner, loser] = s.better === 'scaled_dot' ? ['scaled dot', 'dot'] : ['dot', 'scaled dot'];
      const share = Math.round((100 * s.betterAt) / s.steps);
      setText(text, `After ${s.steps} steps the loss is ${fixed(s.dotEnd, 3)} with dot and ${fixed(s.scaledEnd, 3)} with scaled dot (nats per token, mean of the last 20 steps). ${winner[0].toUpperCase()}${winner.slice(1)} reached ${loser}'s final loss, ${fixed(s.level, 3)}, by step ${s.betterAt}: ${share}% of the steps. ${s.better === 'scaled_dot' ? 'Scaled dot learns faster.' : 'Here the unscaled dot did as well: try a wider head in the lab.'}`);
      root.dataset.sqrtDone = 'true';
    } catch (err) {
      setText(text, `Training stopped: ${err.message}`);
    } finally {
      button.disabled = false;
    }
  });
}

export function mountTransformer(root, ctx) {
  mountOrder(root, ctx.engine);
  mountSqrtD(root, ctx.engine);
  return mountInduction(root, ctx);
}
