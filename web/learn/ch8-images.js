// Chapter 8, attention over images: the pretrained cluttered-digit models. The
// reader draws a digit among clutter (ui/drawing.js) and steps through the
// glimpses: at each, the attention over the CNN's feature grid laid over the image
// (ui/image-overlay.js), what the glimpse answers, and for the hard model the cell
// it reads. The two models' sizes and starts are read from their files; their
// accuracy beside their accuracy with uniform attention (evaluate's ablation) is
// measured on a button press, since it takes two evaluations (ablation.js). Then
// the retina (RAM) against the grid's hard attention: ch8-retina.js.
import { h, setText } from '../ui/dom.js';
import { createDrawing } from '../ui/drawing.js';
import { createImageOverlay } from '../ui/image-overlay.js';
import { createChallenge } from './progress.js';
import { labLink, visionLabFields } from './links.js';
import { mountAblation } from './ablation.js';
import { mountRetina } from './ch8-retina.js';
import { percent, quote } from './numbers.js';
import { makeClutter, sizesText, testImage } from './vision-measures.js';

/** The challenge: this digit, drawn in the top-left quarter, read right with the last glimpse there. */
export const TARGET = '7';
/** Share of the last glimpse's weight that must fall on the top-left quarter's cells. */
export const QUARTER_SHARE = 0.5;
/** The models of the chapter, by the name the page gives them. */
export const NAMES = ['soft', 'hard'];

/** The share of a step's weights on the grid cells whose centres lie in the canvas's top-left quarter. */
export function topLeftShare(weights, cell, canvas) {
  let s = 0;
  for (let r = 0; r < weights.rows; r++) {
    for (let c = 0; c < weights.cols; c++) {
      if ((r + 0.5) * cell < canvas.rows / 2 && (c + 0.5) * cell < canvas.cols / 2) s += weights.data[r * weights.cols + c];
    }
  }
  return s;
}

/** How both models' decoders start (config.start of each), in words. */
export function startText(configs) {
  const starts = configs.map((c) => c.start);
  if (starts.every((s) => s === 'constant')) return 'Both start from that learned constant (their files say so), so nothing but their glimpses carries the image to '
    + 'the answer';
  if (starts.every((s) => s === 'mean')) return 'Both start from the mean of the feature grid, so they see the whole image before they look';
  return `The soft one starts from ${starts[0] === 'constant' ? 'a learned constant' : 'the grid’s mean'}, the hard one from ${starts[1] === 'constant' ? 'a learned constant' : 'the grid’s mean'}: one of them sees the whole image before it looks`;
}

/** The training runs of the two models (models.json: steps, batch), in words. */
export function trainedText(specs) {
  const [a, b] = specs.map((s) => `${s.steps.toLocaleString('en')} training steps of ${s.batch} images`);
  return a === b ? `${a} each` : `${a} (soft) and ${b} (hard)`;
}

export function mountImages(root, ctx) {
  const { models, manifest } = ctx;
  const spec = manifest.models['cluttered-soft'];
  const specs = NAMES.map((n) => manifest.models[`cluttered-${n}`]);
  const byName = { soft: models.softVision, hard: models.hardVision };
  const soft = byName.soft;
  const configs = NAMES.map((n) => byName[n].config);
  const { canvas, grid } = soft.config;
  const side = 2 ** soft.config.channels.length;
  quote('ch8.layers', soft.config.channels.length, String(soft.config.channels.length));
  quote('ch8.canvas', canvas.rows, `${canvas.rows} × ${canvas.cols}`);
  quote('ch8.grid', grid.rows, `${grid.rows} × ${grid.cols}`);
  quote('ch8.clutter', soft.config.clutter, String(soft.config.clutter));
  quote('ch8.trained', specs.map((s) => [s.steps, s.batch]), trainedText(specs));
  quote('ch8.start', configs.map((c) => c.start), startText(configs));
  const sizes = sizesText(...configs);
  quote('ch8.sizes', [configs[0].hidden, configs[0].parameters, configs[1].hidden, configs[1].parameters], sizes.text);
  const race = sizes.same ? 'so their accuracies compare like with like' : 'so their accuracies do not compare like with like; each model against itself does';
  quote('ch8.race', sizes.same, race);

  const $ = (role) => root.querySelector(`[data-role=${role}]`);
  const overlay = createImageOverlay({ id: 'ch8', label: 'Your image with the model’s attention at the chosen glimpse', size: 260 });
  $('overlay').append(overlay.el);
  const glimpse = $('glimpse');
  glimpse.max = String(soft.config.steps - 1);
  const modelSelect = $('model');
  const reads = $('reads');
  const link = $('open-lab');
  const challenge = createChallenge($('challenge'), 'images',
    `Draw a ${TARGET} in the top-left quarter of the image, among the clutter, so that the model reads ${TARGET} and its last glimpse puts more than half of its weight on that quarter.`);
  let read = null;
  let image = null;
  let clutterSeed = 1;
  let exampleSeed = 1;

  function show() {
    if (!read) return;
    const t = Math.min(Number(glimpse.value), read.steps.length - 1);
    const step = read.steps[t];
    setText($('glimpse-value'), String(t + 1));
    overlay.update({
      image: read.canvas, map: step.weights, cell: { height: side, width: side }, box: step.location?.box ?? null,
      legend: 'attention weight α', caption: `Glimpse ${t + 1} of ${read.steps.length}: reads ${step.token}`,
    });
  }

  function update(d) {
    image = d.image();
    const model = byName[modelSelect.value];
    read = model.predict(image);
    const last = read.steps[read.steps.length - 1];
    const share = topLeftShare(last.weights, side, canvas);
    reads.dataset.output = read.output;
    reads.dataset.share = String(share);
    setText(reads, `The ${modelSelect.value} model reads ${read.steps.map((s, t) => `${s.token} (glimpse ${t + 1})`).join(', ')}; `
      + `its last glimpse puts ${percent(share)} of its weight on the top-left quarter.`);
    show();
    if (d.empty) return;
    const misses = [];
    if (read.output !== TARGET) misses.push(`the ${modelSelect.value} model reads ${read.output}, not ${TARGET}`);
    if (share <= QUARTER_SHARE) misses.push(`its last glimpse puts ${percent(share)} of its weight on the top-left quarter, not more than ${percent(QUARTER_SHARE)}`);
    const why = misses.join('; ');
    challenge.check(!misses.length, why && `${why}.`);
  }

  const drawing = createDrawing({
    id: 'ch8', label: `Draw a digit on the ${canvas.rows} × ${canvas.cols} image`, rows: canvas.rows, cols: canvas.cols,
    scale: 4, brush: 2.5, size: 260, onChange: update,
  });
  $('drawing').append(drawing.el);
  // the drawing takes the keyboard when its canvas is a Tab stop: then the caption says how
  $('keys').hidden = drawing.canvas.tabIndex < 0;
  const newClutter = h('button', { type: 'button', textContent: 'New clutter', dataset: { testid: 'ch8-clutter' } });
  const example = h('button', { type: 'button', textContent: 'A test image', dataset: { testid: 'ch8-example' } });
  drawing.toolbar.append(newClutter, example);
  newClutter.addEventListener('click', () => { clutterSeed++; drawing.setImage(makeClutter(soft, soft.config.clutter, clutterSeed)); });
  example.addEventListener('click', () => {
    drawing.setImage(testImage(soft, exampleSeed).image);
    link.href = labLink(visionLabFields(spec, { image: exampleSeed }));
    exampleSeed++;
  });
  glimpse.addEventListener('input', show);
  modelSelect.addEventListener('change', () => update(drawing));
  let timer = 0;
  $('play').addEventListener('click', () => {
    clearInterval(timer);
    glimpse.value = '0';
    show();
    timer = setInterval(() => {
      if (Number(glimpse.value) >= Number(glimpse.max)) { clearInterval(timer); return; }
      glimpse.value = String(Number(glimpse.value) + 1);
      show();
    }, 700);
  });
  link.href = labLink(visionLabFields(spec));
  drawing.setImage(makeClutter(soft, soft.config.clutter, clutterSeed));
  update(drawing);

  const ablation = mountAblation(root.querySelector('[data-role=grid-models]'), {
    prefix: 'ch8', head: 'attention', action: 'Evaluate with uniform attention', rows: NAMES.map((name) => ({ name, model: byName[name] })),
    caption: 'The two models, read from their files, and their accuracy on the test images with their own attention and with uniform attention (under each, its 95% interval)',
  });
  const retina = mountRetina(root.querySelector('[data-role=retina]'), ctx);
  /**
   * The models' own accuracies, evaluated once (by chapter 7's measure): { accSoft, accHard, count };
   * then the retina's section, measured on the same test images (a promise: it loads its own file).
   */
  function measure({ accSoft, accHard, count }) {
    quote('ch8.count', count, count.toLocaleString('en'));
    ablation.own({ soft: accSoft, hard: accHard }, count);
    return retina.measure({ accHard, count });
  }
  return { measure };
}
