// Chapter 7, kinds of attention, on the pretrained cluttered-digit models.
// Explicit against implicit: the soft model's attention weights beside the
// saliency of its input (|∂ log p / ∂ pixel| summed per grid cell), with
// Kendall's rank correlation per glimpse (VisionModel.compareAttention; written
// r_K on the page, since τ is the temperature there). Soft against hard:
// glimpses drawn from the soft model's α, their frequencies against α, and the
// hard model (REINFORCE) reading the same image with the cell it picks. The
// same comparison on text: the dates model's attention beside the saliency of
// each input character (Seq2SeqModel.compareAttention).
import { h, setText } from '../ui/dom.js';
import { createHeatmap } from '../ui/heatmap.js';
import { createImageOverlay } from '../ui/image-overlay.js';
import { fixed } from '../ui/format.js';
import { createChallenge } from './progress.js';
import { labLink, visionLabFields } from './links.js';
import { percent, quote } from './numbers.js';
import { createBars } from './bars.js';
import { largest, updateOnScale } from './scale.js';
import { MEASURE_IMAGES, TAU_TARGET, mean, meanPeak, sampleGlimpses, seqTaus, tauByImage, testImage, totalVariation } from './vision-measures.js';

/** The date the text comparison starts from. */
export const TEXT_EXAMPLE = '25th of June, 2009';

/** Glimpse counts the slider steps through. */
export const DRAWS = [1, 3, 10, 30, 100, 300, 1000];

/** The prose's reading of a mean r_K, from its size. */
export const agreementWords = (r) => (r >= 0.6 ? 'the two rankings agree closely' : r >= 0.3 ? 'the two rankings agree only in part' : r > -0.3 ? 'the two rankings are only loosely related' : 'the two rankings mostly disagree');

/** "r_K" with its subscript, then `text`: the contents of a readout. */
const rK = (text) => ['r', h('sub', { textContent: 'K' }), text];

const cellOf = (model) => ({ height: 2 ** model.config.channels.length, width: 2 ** model.config.channels.length });

export function mountKinds(root, { models, manifest }) {
  const soft = models.softVision;
  const hard = models.hardVision;
  const { grid } = soft.config;
  const G = grid.rows * grid.cols;
  quote('ch7.glimpses', soft.config.steps, String(soft.config.steps));
  quote('ch7.grid', grid.rows, `${grid.rows} × ${grid.cols}`);
  quote('ch7.cells', G, String(G));
  quote('ch7.cellSide', cellOf(soft).height, `${cellOf(soft).height} × ${cellOf(soft).width}`);
  quote('ch7.images', MEASURE_IMAGES, String(MEASURE_IMAGES));

  const $ = (role) => root.querySelector(`[data-role=${role}]`);
  const attentionView = createImageOverlay({ id: 'ch7-attention', label: 'The test image with the soft model’s attention weights over it', size: 220 });
  const saliencyView = createImageOverlay({ id: 'ch7-saliency', label: 'The test image with its saliency, summed per grid cell, over it', size: 220 });
  $('explicit').append(attentionView.el);
  $('implicit').append(saliencyView.el);
  const alphaMap = createHeatmap({ id: 'ch7-alpha', label: 'Attention weights α of the soft model over the feature grid', axes: 'row ↓ col →' });
  const freqMap = createHeatmap({ id: 'ch7-freq', label: 'How often each grid cell was drawn as the glimpse', axes: 'row ↓ col →' });
  $('alpha').append(alphaMap.el);
  $('freq').append(freqMap.el);
  const hardView = createImageOverlay({ id: 'ch7-hard', label: 'The hard model’s attention and the cell it reads', size: 220 });
  $('hard').append(hardView.el);
  const challenge = createChallenge($('challenge'), 'kinds',
    h('span', {}, 'Find a test image on which the saliency ranks the grid cells against the attention: Kendall’s ', ...rK(' at the last glimpse below 0.')));

  const state = { image: 1, step: soft.config.steps - 1, draws: 4, seed: 1 };
  let current = null; // { example, cmp, hardRead }
  const cellName = (j) => `(${Math.floor(j / grid.cols) + 1}, ${(j % grid.cols) + 1})`;

  function drawExplicit() {
    const { example, cmp } = current;
    const s = cmp.steps[state.step];
    attentionView.update({ image: example.image, map: s.attention, cell: cellOf(soft), legend: 'attention weight α', caption: `Explicit: α at glimpse ${state.step + 1}` });
    saliencyView.update({ image: example.image, map: s.saliency, cell: cellOf(soft), legend: 'saliency |∂ log p / ∂x| per cell', caption: `Implicit: saliency at glimpse ${state.step + 1}` });
    for (const tr of $('taus').children) tr.classList.toggle('best', Number(tr.dataset.step) === state.step);
  }

  function drawSamples() {
    const { example, cmp, hardRead } = current;
    const alpha = cmp.steps[state.step].attention;
    const n = DRAWS[state.draws];
    const { cells, counts } = sampleGlimpses(alpha.data, n, state.seed * 7919 + state.image * 31 + state.step);
    const freq = { rows: grid.rows, cols: grid.cols, data: counts.map((c) => c / n) };
    const describe = (m, what) => (i, j) => ({ title: `cell ${cellName(i * grid.cols + j)}`, lines: [`${what} = ${fixed(m.data[i * grid.cols + j], 3)}`] });
    const labels = { rowLabels: Array.from({ length: grid.rows }, (_, i) => String(i + 1)), colLabels: Array.from({ length: grid.cols }, (_, j) => String(j + 1)) };
    // one scale for both, 0 to the larger of their peaks, so a colour is the same share in each
    const top = largest(alpha, freq);
    const scaleNote = `scale 0 to ${fixed(top, 2)}, shared with the other map`;
    updateOnScale(alphaMap, alpha, { ...labels, legend: `α (soft weights); ${scaleNote}`, maxCell: 30, showValues: false, describe: describe(alpha, 'α') }, top);
    updateOnScale(freqMap, freq, { ...labels, legend: `share of ${n} draws; ${scaleNote}`, maxCell: 30, showValues: false, describe: describe(freq, 'share') }, top);
    const tv = totalVariation(counts, alpha.data);
    setText($('draws-value'), String(n));
    setText($('sample-readout'), `${n} glimpse${n === 1 ? '' : 's'} drawn from α: their frequencies are ${fixed(tv, 3)} from α (total variation, ½ Σ |f − α|). `
      + `Last draw${Math.min(n, 5) > 1 ? 's' : ''}: ${cells.slice(-5).map(cellName).join(', ')}.`);
    $('sample-readout').dataset.tv = String(tv);
    const hs = hardRead.steps[Math.min(state.step, hardRead.steps.length - 1)];
    hardView.update({
      image: example.image, map: hs.weights, cell: cellOf(hard), box: hs.location?.box ?? null, legend: 'attention weight α',
      caption: `Hard model, glimpse ${state.step + 1}: reads ${hs.token}; its most likely cell ${hs.location ? cellName(hs.location.cell) : ''} (box)`,
    });
  }

  function load() {
    const example = testImage(soft, state.image);
    const cmp = soft.compareAttention(example.image);
    const hardRead = hard.predict(example.image);
    current = { example, cmp, hardRead };
    $('open-lab').href = labLink(visionLabFields(manifest.models['cluttered-soft'], { image: state.image }));
    setText($('image-label'), `Test image ${state.image}: a ${example.labels[0]}; the soft model reads ${cmp.output}, the hard model ${hardRead.output}.`);
    $('taus').replaceChildren(...cmp.steps.map((s, t) => h('tr', { dataset: { step: String(t) } },
      h('th', { scope: 'row', textContent: String(t + 1) }), h('td', { textContent: s.token }), h('td', { textContent: fixed(s.tau, 3) }))));
    const last = cmp.steps[cmp.steps.length - 1].tau;
    $('tau-readout').dataset.tau = String(last);
    $('tau-readout').replaceChildren(...rK(` at the last glimpse: ${fixed(last, 3)}`));
    drawExplicit();
    drawSamples();
    return last;
  }

  const step = $('step');
  step.replaceChildren(...Array.from({ length: soft.config.steps }, (_, t) => t).map((t) => h('option', { value: String(t), textContent: `glimpse ${t + 1}` })));
  step.value = String(state.step);
  step.addEventListener('change', () => { state.step = Number(step.value); drawExplicit(); drawSamples(); });
  const go = (d) => {
    state.image = Math.max(1, state.image + d);
    setText($('image-index'), String(state.image));
    const tau = load();
    challenge.check(tau < TAU_TARGET);
  };
  $('prev').addEventListener('click', () => go(-1));
  $('next').addEventListener('click', () => go(1));
  const draws = $('draws');
  draws.addEventListener('input', () => { state.draws = Number(draws.value); drawSamples(); });
  $('resample').addEventListener('click', () => { state.seed++; drawSamples(); });
  setText($('image-index'), String(state.image));
  load();

  mountText(root, models.dates);

  /** The prose's figures (after the widget is up): accuracies, mean τ, how peaked each model's weights are. */
  async function measure() {
    // a few seconds of work in all: a task each, so the page keeps answering input in between
    const yieldToPage = () => new Promise((ok) => setTimeout(ok, 0));
    const count = manifest.evalCount;
    const accSoft = soft.evaluate({ split: 'test', count }).accuracy;
    quote('ch7.accSoft', accSoft, percent(accSoft));
    quote('ch7.count', count, String(count));
    await yieldToPage();
    const accHard = hard.evaluate({ split: 'test', count }).accuracy;
    quote('ch7.accHard', accHard, percent(accHard));
    quote('ch7.hardHidden', hard.config.hidden, String(hard.config.hidden));
    await yieldToPage();
    const taus = tauByImage(soft);
    quote('ch7.tauMean', mean(taus), fixed(mean(taus), 2));
    quote('ch7.tauMin', Math.min(...taus), fixed(Math.min(...taus), 2));
    quote('ch7.tauMax', Math.max(...taus), fixed(Math.max(...taus), 2));
    quote('ch7.tauVerdict', agreementWords(mean(taus)), agreementWords(mean(taus)));
    await yieldToPage();
    const seqDates = mean(seqTaus(models.dates));
    quote('ch7.tauDates', seqDates, fixed(seqDates, 2));
    await yieldToPage();
    const seqReverse = mean(seqTaus(models.attention));
    quote('ch7.tauReverse', seqReverse, fixed(seqReverse, 2));
    await yieldToPage();
    const peakSoft = meanPeak(soft);
    const peakHard = meanPeak(hard);
    quote('ch7.peakSoft', peakSoft, percent(peakSoft));
    quote('ch7.peakHard', peakHard, percent(peakHard));
    const peaked = peakHard > peakSoft ? 'here the hard model’s weights are the more peaked' : 'here the hard model’s weights are not the more peaked';
    quote('ch7.peakVerdict', peaked, peaked);
    return { accSoft };
  }
  return { measure };
}

/** The dates model: attention and saliency over the characters of a typed date, r_K per output character. */
function mountText(root, model) {
  const $ = (role) => root.querySelector(`[data-role=${role}]`);
  const input = $('text-input');
  input.value = TEXT_EXAMPLE;
  const attention = createHeatmap({ id: 'ch7-text-attention', label: 'Attention weights of the dates model: output characters by input characters', axes: 'output ↓ input →' });
  const saliency = createHeatmap({ id: 'ch7-text-saliency', label: 'Saliency of each input character for each output character', axes: 'output ↓ input →' });
  $('text-attention').append(attention.el);
  $('text-saliency').append(saliency.el);
  const bars = createBars($('text-bars'), { label: 'Kendall’s r_K between attention and saliency, per output character' });
  const show = (t) => (t === ' ' ? '␣' : t);
  function update() {
    let c;
    try {
      c = model.compareAttention(input.value);
    } catch (err) {
      input.setAttribute('aria-invalid', 'true');
      setText($('text-taus'), `(${err.message})`);
      return;
    }
    input.setAttribute('aria-invalid', 'false');
    const n = c.inputTokens.length;
    const T = c.steps.length;
    const att = { rows: T, cols: n, data: new Float32Array(T * n) };
    const sal = { rows: T, cols: n, data: new Float32Array(T * n) };
    c.steps.forEach((s, t) => {
      att.data.set(s.attention.data, t * n);
      // each row scaled to its largest value: the ranking is what r_K compares
      const top = Math.max(...s.saliency.data) || 1;
      for (let j = 0; j < n; j++) sal.data[t * n + j] = s.saliency.data[j] / top;
    });
    const rows = c.steps.map((s) => show(s.token));
    const cols = c.inputTokens.map(show);
    const describe = (m, what) => (i, j) => ({
      title: `output “${rows[i]}” and input “${cols[j]}” (${j + 1})`, lines: [`${what} = ${fixed(m.data[i * n + j], 3)}`, `r_K of this output = ${fixed(c.steps[i].tau, 2)}`],
    });
    attention.update(att, { rowLabels: rows, colLabels: cols, kind: 'unit', legend: 'attention weight α', maxCell: 22, showValues: false, describe: describe(att, 'α') });
    saliency.update(sal, { rowLabels: rows, colLabels: cols, kind: 'unit', legend: 'saliency (row max = 1)', maxCell: 22, showValues: false, describe: describe(sal, 'saliency') });
    const taus = c.steps.map((s) => s.tau);
    $('text-taus').dataset.mean = String(mean(taus));
    bars.update(c.steps.map((s) => ({ label: show(s.token), value: s.tau })));
    $('text-taus').replaceChildren(`Output ${c.output}; `, ...rK(` averages ${fixed(mean(taus), 2)} over its characters.`));
  }
  input.addEventListener('input', update);
  update();
}
