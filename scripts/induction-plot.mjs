// The induction phase change, drawn: trains the induction task's defaults
// (web/engine/defaults.js: createTransformer({ task: 'induction', seed }), 2
// attention-only layers of 2 heads, dModel 32, context 32, RoPE, batch 32, AdamW
// lr 3e-3 on a cosine over the defaults' 600 steps), as a learner's Train does,
// on one core, measuring every EVERY steps the test loss, the accuracy on the
// scored positions and every head's previous-token and induction score, for the
// defaults' steps (or --steps), and writes
//   docs/induction.json  the numbers (rounded to 4 decimals: the figure is drawn from them)
//   docs/induction.svg   a static figure of them: loss and accuracy above, head scores below
// Same seed, same build → same files (checked: two runs, the same bytes). About 5 CPU s.
//   node scripts/induction-plot.mjs [--steps 600] [--seed 1] [--out docs]
//   node scripts/induction-plot.mjs --redraw     (the figure again from the json, after a change of style)
// inductionSvg(data) is exported so a test can redraw the committed figure
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { defaultsOf } from '../web/engine/defaults.js';
import { inductionFormed } from '../web/engine/induction.js';
import { niceDomain, niceTicks } from '../web/ui/ticks.js';
import { num, tick } from '../web/ui/format.js';

const EVERY = 25;
const EVAL_COUNT = 256;
const SCORE_COUNT = 64;
const round4 = (v) => Math.round(v * 1e4) / 1e4;

// Okabe & Ito's palette (distinguishable with every common colour-vision deficiency), one colour per head.
export const HEAD_COLORS = ['#0072B2', '#D55E00', '#009E73', '#CC79A7', '#E69F00', '#56B4E9', '#000000', '#999999'];

/** Where an induction head formed in `data` (web/engine/induction.js, on the test loss), or null. */
export function formedIn(data) {
  const points = data.step.map((step, i) => ({ step, heads: data.induction.map((layer) => layer.map((h) => ({ induction: h[i] }))) }));
  return inductionFormed(points, data.step.map((step, i) => ({ step, value: data.loss[i] })), 1);
}

const esc = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const px = (v) => Number(v.toFixed(1));

/** A polyline of ys over xs on the scales x and y. */
function line(xs, ys, x, y, attrs) {
  const points = xs.map((s, i) => `${px(x(s))},${px(y(ys[i]))}`).join(' ');
  return `<polyline fill="none" stroke-width="2" stroke-linejoin="round" ${attrs} points="${points}"/>`;
}

/**
 * The figure for `data` ({ step, loss, accuracy, previousToken: [layer][head][i],
 * induction: [layer][head][i], title? }): two panels on one step axis, test loss
 * (left axis) and accuracy (right axis) above; layer 1's induction scores (solid)
 * and layer 0's previous-token scores (dashed) below, one colour per head; a
 * dotted rule where an induction head formed (web/engine/induction.js). Text is SVG text; no scripts, no fonts fetched.
 */
export function inductionSvg(data) {
  const W = 840, H = 560, L = 64, R = 600, LEGEND = 662;
  const top = { y0: 70, y1: 260 }, bottom = { y0: 300, y1: 500 };
  const last = data.step[data.step.length - 1];
  const xd = niceTicks(0, last, 6);
  const x = (s) => L + (s / last) * (R - L);
  const ld = niceDomain(0, Math.max(...data.loss), 4);
  const yLoss = (v) => top.y1 - (v / ld.hi) * (top.y1 - top.y0);
  const yUnit = (p) => (v) => p.y1 - v * (p.y1 - p.y0);
  const yAcc = yUnit(top), yScore = yUnit(bottom);
  const heads = data.induction[1].length;
  const f = formedIn(data);
  const out = [];
  const text = (tx, ty, s, a = '') => out.push(`<text x="${px(tx)}" y="${px(ty)}"${a ? ` ${a}` : ''}>${esc(s)}</text>`);

  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12" fill="#222">`);
  out.push(`<rect width="${W}" height="${H}" fill="#fff"/>`);
  text(W / 2, 28, data.title ?? 'Induction heads forming', 'font-size="17" font-weight="bold" text-anchor="middle"');
  if (data.subtitle) text(W / 2, 48, data.subtitle, 'text-anchor="middle" fill="#555"');
  // grids and axes: x ticks on both panels, labels under the bottom one
  for (const p of [top, bottom]) {
    for (const s of xd.values) out.push(`<line x1="${px(x(s))}" x2="${px(x(s))}" y1="${p.y0}" y2="${p.y1}" stroke="#e4e4e4"/>`);
    out.push(`<rect x="${L}" y="${p.y0}" width="${R - L}" height="${p.y1 - p.y0}" fill="none" stroke="#888"/>`);
  }
  for (const s of xd.values) text(x(s), bottom.y1 + 16, tick(s, xd.step), 'text-anchor="middle"');
  text((L + R) / 2, bottom.y1 + 38, 'training step', 'text-anchor="middle"');
  for (const v of ld.values) {
    out.push(`<line x1="${L}" x2="${R}" y1="${px(yLoss(v))}" y2="${px(yLoss(v))}" stroke="#eee"/>`);
    text(L - 6, yLoss(v) + 4, tick(v, ld.step), 'text-anchor="end"');
  }
  const unitTicks = niceTicks(0, 1, 4);
  for (const v of unitTicks.values) {
    text(R + 6, yAcc(v) + 4, tick(v, unitTicks.step));
    out.push(`<line x1="${L}" x2="${R}" y1="${px(yScore(v))}" y2="${px(yScore(v))}" stroke="#eee"/>`);
    text(L - 6, yScore(v) + 4, tick(v, unitTicks.step), 'text-anchor="end"');
  }
  text(18, (top.y0 + top.y1) / 2, 'test loss (nats)', `text-anchor="middle" transform="rotate(-90 18 ${(top.y0 + top.y1) / 2})"`);
  text(R + 40, (top.y0 + top.y1) / 2, 'accuracy', `text-anchor="middle" transform="rotate(90 ${R + 40} ${(top.y0 + top.y1) / 2})"`);
  text(18, (bottom.y0 + bottom.y1) / 2, 'head score (attention)', `text-anchor="middle" transform="rotate(-90 18 ${(bottom.y0 + bottom.y1) / 2})"`);
  // where an induction head formed: its score passed the mark of a formed head
  if (f) {
    const xp = px(x(f.step));
    out.push(`<line x1="${xp}" x2="${xp}" y1="${top.y0}" y2="${bottom.y1}" stroke="#555" stroke-dasharray="2 3"/>`);
    // in the scores panel's top, above the scores (they stay below 1)
    text(xp + 4, bottom.y0 + 14, `step ${f.step}: layer ${f.layer} head ${f.head} formed (induction ${num(f.fromScore, 2)} → ${num(f.score, 2)} from step ${f.fromStep})`, 'font-size="11" fill="#444"');
  }
  // the curves
  out.push(line(data.step, data.loss, x, yLoss, 'stroke="#000" data-series="loss"'));
  out.push(line(data.step, data.accuracy, x, yAcc, 'stroke="#777" stroke-dasharray="6 3" data-series="accuracy"'));
  for (let h = 0; h < heads; h++) {
    out.push(line(data.step, data.previousToken[0][h], x, yScore, `stroke="${HEAD_COLORS[h]}" stroke-dasharray="5 3" stroke-opacity="0.85" data-series="previousToken 0 ${h}"`));
  }
  for (let h = 0; h < heads; h++) {
    out.push(line(data.step, data.induction[1][h], x, yScore, `stroke="${HEAD_COLORS[h]}" data-series="induction 1 ${h}"`));
  }
  // legend, right of the panels
  const key = (ky, attrs, label) => {
    out.push(`<line x1="${LEGEND}" x2="${LEGEND + 28}" y1="${ky}" y2="${ky}" stroke-width="2" ${attrs}/>`);
    text(LEGEND + 34, ky + 4, label);
  };
  key(top.y0 + 40, 'stroke="#000"', 'test loss');
  key(top.y0 + 60, 'stroke="#777" stroke-dasharray="6 3"', 'test accuracy');
  text(LEGEND, bottom.y0 + 10, 'solid: layer 1, induction', 'font-size="11"');
  text(LEGEND, bottom.y0 + 26, 'dashed: layer 0, previous-token', 'font-size="11"');
  for (let h = 0; h < heads; h++) key(bottom.y0 + 48 + 20 * h, `stroke="${HEAD_COLORS[h]}"`, `head ${h}`);
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}

/** The json's text: two-space indents, each series on one line. */
export function inductionJson(data) {
  return `${JSON.stringify(data, null, 2).replace(/\[\s+(-?[\d.e+-]+(?:,\s+-?[\d.e+-]+)*)\s+\]/g, (m, list) => `[${list.split(/,\s+/).join(', ')}]`)}\n`;
}

/** Trains and measures; returns the json's object. */
async function measure({ steps, seed }) {
  const { loadEngine } = await import('../web/engine/index.js');
  const D = defaultsOf('transformer', { task: 'induction' });
  const CONFIG = { ...D.model, seed };
  const TRAIN = {}; // the defaults' schedule (train() without options)
  const engine = await loadEngine({ simd: true, threads: 1 });
  const m = await engine.createTransformer(CONFIG);
  const data = { step: [], loss: [], accuracy: [], previousToken: [], induction: [] };
  for (let l = 0; l < CONFIG.layers; l++) {
    data.previousToken.push(Array.from({ length: CONFIG.heads }, () => []));
    data.induction.push(Array.from({ length: CONFIG.heads }, () => []));
  }
  const cpu0 = process.cpuUsage();
  for (let done = 0; ; done += EVERY) {
    const { loss, accuracy } = m.evaluate({ split: 'test', count: EVAL_COUNT });
    const scores = m.headScores({ count: SCORE_COUNT });
    data.step.push(done);
    data.loss.push(round4(loss));
    data.accuracy.push(round4(accuracy));
    scores.forEach((layer, l) => layer.forEach((s, h) => {
      data.previousToken[l][h].push(round4(s.previousToken));
      data.induction[l][h].push(round4(s.induction));
    }));
    process.stdout.write(`\rstep ${done}  loss ${loss.toFixed(3)}  accuracy ${(100 * accuracy).toFixed(1)}%   `);
    if (done >= steps) break;
    m.train({ ...TRAIN, steps: EVERY });
  }
  const cpu = process.cpuUsage(cpu0);
  // the accuracy at the end with each head ablated alone, and with every layer-1 head at once
  const ablate = (heads) => round4(m.evaluate({ split: 'test', count: EVAL_COUNT, ablate: heads }).accuracy);
  const ablated = Array.from({ length: CONFIG.layers }, (_, layer) => Array.from({ length: CONFIG.heads }, (_, head) => ablate([{ layer, head }])));
  const ablatedLayer1 = ablated[1];
  const ablatedAllLayer1 = ablate(Array.from({ length: CONFIG.heads }, (_, head) => ({ layer: 1, head })));
  const parameters = m.config.parameters;
  m.destroy();
  const seconds = (cpu.user + cpu.system) / 1e6;
  console.log(`\n${data.step.at(-1)} steps, ${seconds.toFixed(1)} CPU s; each head ablated alone: ${ablated.map((l) => l.join(', ')).join(' | ')}; every layer-1 head: ${ablatedAllLayer1}`);
  return {
    title: "Induction heads forming: the induction task's default transformer (2 attention-only layers of 2 heads)",
    subtitle: `seed ${seed}, ${parameters.toLocaleString('en-US')} parameters, one core; test loss and accuracy on the repeat's scored positions, head scores on ${SCORE_COUNT} sequences, every ${EVERY} steps`,
    command: `node scripts/induction-plot.mjs --seed ${seed}`,
    config: CONFIG, train: TRAIN, every: EVERY, evaluate: { split: 'test', count: EVAL_COUNT }, headScores: { count: SCORE_COUNT },
    ...data, ablated, ablatedLayer1, ablatedAllLayer1,
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const arg = (name, fallback) => {
    const i = process.argv.indexOf(`--${name}`);
    return i < 0 ? fallback : process.argv[i + 1];
  };
  const out = arg('out', fileURLToPath(new URL('../docs/', import.meta.url)));
  let data;
  if (process.argv.includes('--redraw')) {
    data = JSON.parse(readFileSync(join(out, 'induction.json'), 'utf8'));
  } else {
    data = await measure({ steps: Number(arg('steps', defaultsOf('transformer', { task: 'induction' }).train.steps)), seed: Number(arg('seed', 1)) });
    data.formed = formedIn(data);
    writeFileSync(join(out, 'induction.json'), inductionJson(data));
  }
  const f = data.formed;
  writeFileSync(join(out, 'induction.svg'), inductionSvg(data));
  const last = data.step.length - 1;
  console.log(f ? `formed: layer ${f.layer} head ${f.head} at step ${f.step} (induction ${f.fromScore} at step ${f.fromStep} -> ${f.score}); test loss ${f.lossFrom} -> ${f.lossTo}` : 'no induction head formed');
  console.log(`end: accuracy ${data.accuracy[last]}, loss ${data.loss[last]}`);
}
