// Chapter 8's retina (RAM, Mnih et al. 2014): the pretrained cluttered-retina model
// (web/models, loaded here: the rest of the chapter does not wait for it) reads
// test images while the learner steps through its glimpses, drawn over the image
// as boxes (ui/glimpse-layer.js). Its size, training, first glimpse, accuracy
// against the grid's hard attention, and how often it looks at the digit are
// computed here from its file and the manifest; the uniform ablation is the
// chapter's table (ablation.js) with the grid's hard model beside it.
import { setText } from '../ui/dom.js';
import { createGlimpseLayer, glimpseText } from '../ui/glimpse-layer.js';
import { createImageOverlay } from '../ui/image-overlay.js';
import { mountAblation } from './ablation.js';
import { labLink, visionLabFields } from './links.js';
import { quote } from './numbers.js';
import { MEASURE_IMAGES, interval, intervalText, onDigitShare, onDigitText, retinaVerdict, testImage } from './vision-measures.js';

/** The manifest's name of the chapter's retina model. */
export const RETINA = 'cluttered-retina';
const PLAY_MS = 700;

/** The retina's config in words: glimpses, patch sides, hidden units, parameters. */
export function retinaConfigText(c) {
  const sides = Array.from({ length: c.retina.scales }, (_, k) => c.retina.size * 2 ** k).map((s) => `${s} × ${s}`);
  const list = sides.length > 1 ? `${sides.slice(0, -1).join(', ')} and ${sides[sides.length - 1]}` : sides[0];
  return `${c.steps} glimpses per answer, each of patches ${list} pixels around its point, `
    + `averaged down to ${sides[0]}; it has ${c.hidden} hidden units and ${c.parameters.toLocaleString('en')} parameters`;
}

/** A manifest entry's training run in words: steps, batch and the seconds the train calls took. */
export const runText = (spec) => `${spec.steps.toLocaleString('en')} steps of ${spec.batch} images (${spec.seconds.toFixed(0)} s)`;

/** How the two runs' training times compare (retina's seconds over the grid's), in words. */
export function timeText(retinaSeconds, hardSeconds) {
  const r = retinaSeconds / hardSeconds;
  return Math.abs(r - 1) <= 0.15 ? 'about the same training time' : `${r.toFixed(1)} times the grid model's training time`;
}

/**
 * Glimpse 1 comes from the learned start state alone: its centre on test images 1..count,
 * { same: whether it is one point for all, text }.
 */
export function firstGlimpse(model, count = MEASURE_IMAGES) {
  const firsts = [];
  for (let k = 1; k <= count; k++) firsts.push(model.predict(testImage(model, k).image).steps[0].location);
  const same = firsts.every((l) => l.x === firsts[0].x && l.y === firsts[0].y);
  return { same, text: same ? `(${firsts[0].x}, ${firsts[0].y}) on all ${count} test images tried` : `not one point: it moves between the ${count} test images tried` };
}

export function mountRetina(root, { engine, manifest, models, fetchBytes }) {
  const $ = (role) => root.querySelector(`[data-role=${role}]`);
  const spec = manifest.models[RETINA];
  const overlay = createImageOverlay({ id: 'ch8r', label: 'A test image with the retina’s glimpses over it', size: 260 });
  const layer = createGlimpseLayer({ id: 'ch8r' });
  $('r-overlay').append(overlay.el);
  layer.attach(overlay);
  overlay.clear('Loading the retina model…');
  const slider = $('r-glimpse');
  const reads = $('r-reads');
  $('r-lab').href = labLink(visionLabFields(spec, { start: 'scratch' }));
  let model = null;
  let table = null; // the ablation table, made once the retina's file has loaded
  let shown = null; // { k, ex, read }
  let k = 1;
  let timer = 0;

  function show() {
    if (!shown) return;
    const { ex, read } = shown;
    const T = read.steps.length;
    const t = Math.min(Number(slider.value), T - 1);
    const step = read.steps[t];
    const locations = read.steps.map((s) => s.location);
    setText($('r-glimpse-value'), `${t + 1} of ${T}`);
    overlay.update({
      image: read.canvas, map: null, caption: `Test image ${shown.k}: glimpses 1 to ${t + 1} of ${T}`,
      description: `Test image ${shown.k} with the retina's glimpses 1 to ${t + 1}: centres ${glimpseText(locations.slice(0, t + 1))}`,
    });
    layer.update({ rows: read.canvas.rows, cols: read.canvas.cols, locations, at: t, retina: model.config.retina });
    const truth = ex.labels[0];
    reads.dataset.output = read.output;
    reads.dataset.glimpse = String(t);
    setText(reads, `Test image ${shown.k} shows a ${truth}. Glimpse ${t + 1} is centred at (${step.location.x}, ${step.location.y}), `
      + `${onDigitText(step.location, ex.boxes)}, and reads ${step.token}. The retina's answer, its last glimpse's: ${read.output} (${read.output === truth ? 'right' : 'wrong'}).`);
  }

  function showImage() {
    const ex = testImage(model, k);
    shown = { k, ex, read: model.predict(ex.image) };
    show();
  }

  function stop() {
    clearInterval(timer);
    timer = 0;
  }
  slider.addEventListener('input', () => { stop(); show(); });
  $('r-next').addEventListener('click', () => { stop(); k++; showImage(); });
  $('r-play').addEventListener('click', () => {
    stop();
    slider.value = '0';
    show();
    timer = setInterval(() => {
      if (Number(slider.value) >= Number(slider.max)) { stop(); return; }
      slider.value = String(Number(slider.value) + 1);
      show();
    }, PLAY_MS);
  });

  const loaded = fetchBytes(`models/${spec.file}`).then((bytes) => engine.loadVisionModel(bytes)).then((m) => {
    model = m;
    models.retinaVision = m;
    slider.max = String(m.config.steps - 1);
    for (const role of ['r-next', 'r-play']) $(role).disabled = false;
    slider.disabled = false;
    table = mountAblation($('retina-models'), {
      prefix: 'ch8r', head: 'hard attention', action: 'Evaluate with random glimpses',
      caption: 'The grid’s hard attention and the retina, read from their files, and their accuracy on the test images with their own glimpses and with uniformly random ones (under each, its 95% interval)',
      rows: [{ name: 'hard', label: 'hard, a grid cell', model: models.hardVision }, { name: 'retina', label: 'retina', model: m }],
    });
    quote('ch8r.config', [m.config.steps, m.config.retina.size, m.config.retina.scales, m.config.hidden, m.config.parameters], retinaConfigText(m.config));
    showImage();
    return m;
  }).catch((err) => {
    // the rest of the chapter works without it: say so where its picture would be
    overlay.clear(`The retina model could not be loaded (${err.message}).`);
    return null;
  });

  return {
    /**
     * Everything measured on the grid's hard model's test images: `accHard` its accuracy on the
     * first `count` (chapter 7's measure). Resolves when every figure is on the page.
     */
    async measure({ accHard, count }) {
      const m = await loaded;
      if (!m) return;
      try {
        await measureWith(m, accHard, count);
      } catch (err) {
        setText(root.querySelector('[data-testid=ch8r-ablate-readout]'), `The retina could not be measured (${err.message}).`);
        root.dataset.state = 'error';
      }
    },
  };

  /** The retina's figures on the first `count` test images, beside the grid's hard model's accuracy there. */
  async function measureWith(m, accHard, count) {
    const hardSpec = manifest.models['cluttered-hard'];
    quote('ch8r.trained', [spec.steps, spec.batch, spec.seconds], runText(spec));
    quote('ch8r.hardTrained', [hardSpec.steps, hardSpec.batch, hardSpec.seconds], runText(hardSpec));
    quote('ch8r.time', spec.seconds / hardSpec.seconds, timeText(spec.seconds, hardSpec.seconds));
    const first = firstGlimpse(m);
    quote('ch8r.first', first.same, first.text);
    const acc = m.evaluate({ split: 'test', count }).accuracy;
    const own = { retina: interval(acc, count), hard: interval(accHard, count) };
    quote('ch8r.count', count, count.toLocaleString('en'));
    quote('ch8r.acc', acc, intervalText(own.retina));
    quote('ch8r.accHard', accHard, intervalText(own.hard));
    quote('ch8r.verdict', retinaVerdict(own.retina, own.hard), retinaVerdict(own.retina, own.hard));
    await new Promise((ok) => setTimeout(ok, 0));
    const on = onDigitShare(m, count);
    quote('ch8r.onDigit', on, intervalText(interval(on, count)));
    table.own({ hard: accHard, retina: acc }, count);
    root.dataset.state = 'measured';
  }
}
