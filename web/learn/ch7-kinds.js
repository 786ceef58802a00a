// Chapter 7, kinds of attention, on the pretrained cluttered-digit models.
// Explicit against implicit: the soft model's attention weights beside the
// saliency of its input (|∂ log p / ∂ pixel| summed per grid cell), compared
// where both are bright (top match, the saliency inside the 3 most-attended
// cells) and by Kendall's rank correlation over the bright cells and over all
// (VisionModel.compareAttention; written r_K on the page, since τ is the
// temperature there). Soft against hard:
// glimpses drawn from the soft model's α, their frequencies against α, and the
// hard model (REINFORCE) reading the same image with the cell it picks. The
// same comparison on text: the dates model's attention beside the saliency of
// each input character (Seq2SeqModel.compareAttention), and the challenge: a
// typed date on which the two point at different characters.
import { h, setText } from '../ui/dom.js';
import { createHeatmap } from '../ui/heatmap.js';
import { createImageOverlay } from '../ui/image-overlay.js';
import { fixed } from '../ui/format.js';
import { createChallenge } from './progress.js';
import { labLink, visionLabFields } from './links.js';
import { percent, quote } from './numbers.js';
import { createBars } from './bars.js';
import { largest, updateOnScale } from './scale.js';
import { DISAGREE_TARGET, MEASURE_IMAGES, TEXT_EXAMPLE, agreementByImage, mean, meanPeak, receptiveField, reverseOffsets, reverseWords, sampleGlimpses, seqAgreement, sizesText, testImage, totalVariation } from './vision-measures.js';


/** Glimpse counts the slider steps through. */
export const DRAWS = [1, 3, 10, 30, 100, 300, 1000];

/** The prose's reading of how much of the saliency lies in the most-attended cells, against chance. */
export const agreementWords = (inTop, chance) => (inTop >= 5 * chance ? 'the two maps light up the same few cells'
  : inTop >= 2 * chance ? 'the two maps overlap, but the saliency spreads wider than the attention'
    : 'the two maps light up different places');

/** The prose's reading of r_K over all cells against r_K over the bright ones (a gap of 0.1 or more is named). */
export const gapWords = (all, bright) => (bright - all >= 0.1
  ? 'over all cells it is lower, pulled down by how the many near-zero cells happen to rank, which no eye sees'
  : bright - all <= -0.1 ? 'over all cells it is higher: the near-zero cells happen to rank alike in both maps'
    : 'the near-zero cells change it little here');

/** "r_K" with its subscript, then `text`: the contents of a readout. */
const rK = (text) => ['r', h('sub', { textContent: 'K' }), text];

/** A glimpse's row of the table: top match, the saliency inside the 3 most-attended cells, r_K bright, r_K all. */
const measureCells = (s) => [s.agreement.topMatch ? 'yes' : 'no', percent(s.agreement.saliencyInTopK),
  s.agreement.tauActive === null ? '—' : fixed(s.agreement.tauActive, 2), fixed(s.tau, 2)];

/** The prose's figures over the measured images (agreementByImage): { key: [value, text] } (the browser test recomputes them). */
export function imageFigures(rows, cells) {
  const taus = rows.map((r) => r.tau);
  const bright = rows.filter((r) => r.tauActive !== null).map((r) => r.tauActive);
  const top = rows.filter((r) => r.topMatch).length;
  const inTop = mean(rows.map((r) => r.saliencyInTopK));
  const words = agreementWords(inTop, rows[0].k / cells);
  const gap = gapWords(mean(taus), mean(bright));
  return {
    'ch7.topMatch': [top, `${top} of ${rows.length}`],
    'ch7.inTop': [inTop, percent(inTop)],
    'ch7.tauMean': [mean(taus), fixed(mean(taus), 2)],
    'ch7.tauMin': [Math.min(...taus), fixed(Math.min(...taus), 2)],
    'ch7.tauMax': [Math.max(...taus), fixed(Math.max(...taus), 2)],
    'ch7.tauActive': [mean(bright), fixed(mean(bright), 2)],
    'ch7.tauVerdict': [words, words],
    'ch7.tauGap': [gap, gap],
  };
}

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
  const K = 3; // the most-attended cells the measures look at (stats.js agreement's default)
  quote('ch7.k', K, String(K));
  const rf = receptiveField(soft.config.channels.length);
  const covered = grid.rows * cellOf(soft).height;
  const { canvas } = soft.config;
  quote('ch7.receptive', rf, `${rf} × ${rf}`);
  quote('ch7.covered', covered, `${covered} × ${grid.cols * cellOf(soft).width} of the ${canvas.rows} × ${canvas.cols}`);
  quote('ch7.chance', K / G, `${K} / ${G} = ${percent(K / G)}`);

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
    h('span', {}, `Type a date on which attention and saliency disagree: an output character whose most-attended input character holds less than ${percent(DISAGREE_TARGET)} of its saliency. (Hint: does the model still read that date right?)`));

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
      h('th', { scope: 'row', textContent: String(t + 1) }), h('td', { textContent: s.token }),
      ...measureCells(s).map((v) => h('td', { textContent: v })))));
    const last = cmp.steps[cmp.steps.length - 1];
    const a = last.agreement;
    $('tau-readout').dataset.share = String(a.saliencyInTopK);
    $('tau-readout').replaceChildren(`At the last glimpse the most-attended cell is ${a.topMatch ? '' : 'not '}the most salient one, and the ${a.k} most-attended cells hold ${percent(a.saliencyInTopK)} of the saliency (an unrelated map: about ${percent(a.k / a.n)}); `,
      ...rK(` over the ${a.active} bright cells ${a.tauActive === null ? '—' : fixed(a.tauActive, 2)}, `), ...rK(` over all ${a.n}: ${fixed(last.tau, 2)}.`));
    drawExplicit();
    drawSamples();
  }

  const step = $('step');
  step.replaceChildren(...Array.from({ length: soft.config.steps }, (_, t) => t).map((t) => h('option', { value: String(t), textContent: `glimpse ${t + 1}` })));
  step.value = String(state.step);
  step.addEventListener('change', () => { state.step = Number(step.value); drawExplicit(); drawSamples(); });
  const go = (d) => {
    state.image = Math.max(1, state.image + d);
    setText($('image-index'), String(state.image));
    load();
  };
  $('prev').addEventListener('click', () => go(-1));
  $('next').addEventListener('click', () => go(1));
  const draws = $('draws');
  draws.addEventListener('input', () => { state.draws = Number(draws.value); drawSamples(); });
  $('resample').addEventListener('click', () => { state.seed++; drawSamples(); });
  setText($('image-index'), String(state.image));
  load();

  mountText(root, models.dates, challenge);

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
    const sizes = sizesText(soft.config, hard.config);
    const race = sizes.same ? `the two are ${sizes.text}, so this compares like with like`
      : `but the two are ${sizes.text}, so this is no like-for-like race`;
    quote('ch7.race', sizes.same, race);
    await yieldToPage();
    for (const [key, value] of Object.entries(imageFigures(agreementByImage(soft), G))) quote(key, value[0], value[1]);
    await yieldToPage();
    const dates = seqAgreement(models.dates);
    quote('ch7.tauDates', dates.tau, fixed(dates.tau, 2));
    quote('ch7.topDates', dates.topMatch, percent(dates.topMatch));
    await yieldToPage();
    const reverse = seqAgreement(models.attention);
    quote('ch7.tauReverse', reverse.tau, fixed(reverse.tau, 2));
    quote('ch7.topReverse', reverse.topMatch, percent(reverse.topMatch));
    const offsets = reverseOffsets(reverse.comparisons);
    quote('ch7.reverseNext', offsets.next, percent(offsets.next));
    quote('ch7.reverseOwn', offsets.own, percent(offsets.own));
    quote('ch7.reverseSteps', offsets.steps, offsets.steps.toLocaleString('en'));
    quote('ch7.reverseVerdict', reverseWords(offsets), reverseWords(offsets));
    await yieldToPage();
    const peakSoft = meanPeak(soft);
    const peakHard = meanPeak(hard);
    quote('ch7.peakSoft', peakSoft, percent(peakSoft));
    quote('ch7.peakHard', peakHard, percent(peakHard));
    const peaked = peakHard > peakSoft ? 'here the hard model’s weights are the more peaked' : 'here the hard model’s weights are not the more peaked';
    quote('ch7.peakVerdict', peaked, peaked);
    return { accSoft, accHard, count };
  }
  return { measure };
}

/**
 * The dates model: attention and saliency over the characters of a typed date,
 * r_K per output character, and whether both peak at the same character; the
 * challenge is solved by a date on which they do not.
 */
function mountText(root, model, challenge) {
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
      challenge.check(false, `the model cannot read this input (${err.message}).`);
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
      title: `output “${rows[i]}” and input “${cols[j]}” (input ${j})`, lines: [`${what} = ${fixed(m.data[i * n + j], 3)}`, `r_K of this output = ${fixed(c.steps[i].tau, 2)}`],
    });
    attention.update(att, { rowLabels: rows, colLabels: cols, kind: 'unit', legend: 'attention weight α', maxCell: 22, showValues: false, describe: describe(att, 'α') });
    saliency.update(sal, { rowLabels: rows, colLabels: cols, kind: 'unit', legend: 'saliency (row max = 1)', maxCell: 22, showValues: false, describe: describe(sal, 'saliency') });
    const taus = c.steps.map((s) => s.tau);
    $('text-taus').dataset.mean = String(mean(taus));
    bars.update(c.steps.map((s) => ({ label: show(s.token), value: s.tau })));
    const matches = c.steps.filter((s) => s.agreement.topMatch).length;
    const least = c.steps.reduce((b, s) => (s.agreement.saliencyInTopK < b.agreement.saliencyInTopK ? s : b));
    $('text-taus').dataset.least = String(least.agreement.saliencyInTopK);
    $('text-taus').replaceChildren(`Output ${c.output}; at ${matches} of ${c.steps.length} characters the most-attended input character is also the most salient; `
      + `the least agreement: output “${show(least.token)}”, whose most-attended character holds ${percent(least.agreement.saliencyInTopK)} of its saliency. `, ...rK(` averages ${fixed(mean(taus), 2)} over the characters.`));
    challenge.check(least.agreement.saliencyInTopK < DISAGREE_TARGET, `on this date attention and saliency still agree: even output “${show(least.token)}”, the least agreeing, `
      + `has its most-attended character hold ${percent(least.agreement.saliencyInTopK)} of its saliency; it must be below ${percent(DISAGREE_TARGET)}.`);
  }
  input.addEventListener('input', update);
  update();
}
