// The layers × heads grid: one small attention map per head over the inspected
// input (the shared heatmap as a thumbnail, on one fixed 0..1 colour scale so
// heads compare by colour, with one legend for all), each a button labelled
// "L0H1" (layer 0, head 1: both counted from 0, as on every page) with its
// latest previous-token and induction scores. Pressing a head (click, Enter or Space) asks to ablate it or bring it back; an ablated head is
// struck through. No model calls here: update() draws what it is given.
import { TABLES } from '../ui/colors.js';
import { byId, h, setText } from '../ui/dom.js';
import { fixed } from '../ui/format.js';
import { createHeatmap } from '../ui/heatmap.js';
import { headName } from './transformer-state.js';

/** Heads drawn in one frame by updateInSlices. */
const SLICE = 4;
/** The largest cell of a thumbnail, in CSS pixels: a map is about `thumb` px wide, less for a short input (at most this per cell). */
const THUMB_CELL = 28;

/** A colour bar for the 0..1 scale every map shares, with its ticks and title. */
function drawLegend(el) {
  const bar = h('canvas', { width: 256, height: 1, className: 'legend-bar' });
  const ctx = bar.getContext('2d');
  const img = ctx.createImageData(256, 1);
  for (let i = 0; i < 256; i++) {
    img.data.set([TABLES.sequential[3 * i], TABLES.sequential[3 * i + 1], TABLES.sequential[3 * i + 2], 255], 4 * i);
  }
  ctx.putImageData(img, 0, 0);
  const ticks = h('div', { className: 'legend-ticks' },
    ...[0, 0.25, 0.5, 0.75, 1].map((v) => h('span', { textContent: String(v), style: { left: `${v * 100}%` } })));
  el.replaceChildren(h('div', { className: 'legend' }, bar, ticks,
    h('div', { className: 'legend-title', textContent: 'attention weight: row = query position ↓, column = key position →' })));
}

/** What a head's button says to a screen reader after its visible name and scores: its state and what pressing does. */
const pressText = (off) => (off ? ', ablated: press to bring it back' : ': press to ablate it (zero its output)');

/**
 * onToggle({ layer, head }) when a head is pressed; box and legend: where the grid and its
 * legend go (the lab's trained model's by default); thumb: a map's width in CSS pixels; prefix: of the test hooks.
 */
export function createHeadsView({ onToggle, box = byId('tf-heads'), legend = byId('tf-legend'), thumb = 150, prefix = 'tf' }) {
  drawLegend(legend);
  let cells = []; // [layer][head] -> { hm, button, score }
  let shape = '';

  /** One layer's label and head buttons: { nodes, row } (row: [head] -> { hm, button, score, press }). */
  function layerCells(layer, heads) {
    const nodes = [h('span', { className: 'tf-layer', textContent: `Layer ${layer}` })];
    const row = Array.from({ length: heads }, (_, head) => {
      const name = headName({ layer, head });
      const hm = createHeatmap({ id: `${prefix}-${name}`, label: name, interactive: false, legend: false });
      const score = h('span', { className: 'tf-score' });
      const press = h('span', { className: 'sr-only' });
      const button = h('button', {
        type: 'button', className: 'thumb tf-head', dataset: { testid: `${prefix}-head-${name}` }, attrs: { 'aria-pressed': 'false' },
        title: `Layer ${layer}, head ${head}: press to ablate it or bring it back`,
      }, h('span', { className: 'tf-name', textContent: name }), hm.el, score, press);
      button.addEventListener('click', () => onToggle({ layer, head }));
      nodes.push(button);
      return { hm, button, score, press };
    });
    return { nodes, row };
  }

  /** The grid for `layers` × `heads`, built at once (`slices`: false) or one layer now and each next one when drawn. */
  function build(layers, heads, slices = false) {
    shape = `${layers}x${heads}`;
    box.style.setProperty('--heads', String(heads));
    cells = [];
    box.replaceChildren();
    for (let layer = 0; layer < (slices ? 0 : layers); layer++) grow(layer, heads);
  }
  function grow(layer, heads) {
    const { nodes, row } = layerCells(layer, heads);
    cells[layer] = row;
    box.append(...nodes);
  }

  /** Draws one layer's heads `from` .. `to` - 1 (see update). */
  function drawLayer(layer, view, { ablated, scores, outline = null }, from = 0, to = Infinity) {
    const n = view?.tokens.length ?? 0;
    cells[layer].forEach(({ hm, button, score, press }, head) => {
      if (head < from || head >= to) return;
      const name = headName({ layer, head });
      const off = ablated.has(name);
      const s = scores?.[layer]?.[head];
      if (view) {
        hm.update(view.attention[layer][head], {
          rowLabels: [], colLabels: [], kind: 'unit', maxCell: Math.max(thumb / 75, Math.min(THUMB_CELL, thumb / n)), outline,
        });
      }
      button.classList.toggle('ablated', off);
      button.setAttribute('aria-pressed', String(off));
      setText(press, pressText(off));
      setText(score, s ? `prev ${fixed(s.previousToken, 2)} · ind ${fixed(s.induction, 2)}` : '');
    });
  }

  return {
    /**
     * Draws `view` (inspect()'s result, or null: nothing to show) for a model of
     * `layers` × `heads`, with the `ablated` head names marked and `scores`
     * ([layer][head] -> { previousToken, induction }, or null) under each map, and `outline`
     * (the heatmap's: a repeated stretch and the induction stripe) on each.
     */
    update(view, opts) {
      if (shape !== `${opts.layers}x${opts.heads}`) build(opts.layers, opts.heads);
      for (let layer = 0; layer < cells.length; layer++) drawLayer(layer, view, opts);
    },
    /** update() a few heads at a time, a frame between: a large model's grid without a long task on the page. */
    async updateInSlices(view, opts) {
      if (shape !== `${opts.layers}x${opts.heads}`) build(opts.layers, opts.heads, true);
      const drawn = cells;
      for (let layer = 0; layer < opts.layers && cells === drawn; layer++) {
        if (!cells[layer]) {
          grow(layer, opts.heads);
          await new Promise((resolve) => requestAnimationFrame(() => resolve()));
        }
        for (let from = 0; from < opts.heads && cells === drawn; from += SLICE) {
          drawLayer(layer, view, opts, from, from + SLICE);
          await new Promise((resolve) => requestAnimationFrame(() => resolve()));
        }
      }
    },
    /** Removes every map (a new model). */
    clear() {
      shape = '';
      cells = [];
      box.replaceChildren();
    },
  };
}
