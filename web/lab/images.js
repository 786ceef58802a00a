// The image panels of the lab: a test image as the model reads it, with the
// decoder's attention upsampled over it per output step (a slider, or animated),
// hard mode's glimpse as a box, the saliency beside it and how far the two agree
// (stats.js agreement, and Kendall's tau); and the drawing canvas the model reads as you draw, with the
// attention of every output step. A retina model (RAM) has no grid map: its
// glimpses are drawn as boxes instead (ui/glimpse-layer.js), every scale of the
// chosen one, numbered, with the path between them, and the panels say so.
// Draws from readings the worker makes (session.readImage); no engine here.
import { byId, h, setText } from '../ui/dom.js';
import { createDrawing } from '../ui/drawing.js';
import { fixed } from '../ui/format.js';
import { createGlimpseLayer, glimpseText } from '../ui/glimpse-layer.js';
import { createImageOverlay } from '../ui/image-overlay.js';
import { UNTRAINED_NOTE } from './model-status.js';

const ANIMATE_MS = 1000;
/** Ink height a drawn digit is scaled to, as MNIST's (about 20 of 28 pixels). */
const DIGIT_HEIGHT = 20;
const MAX_DRAW_STEPS = 4;

/** Canvas pixels per feature-grid cell: each conv layer's 2×2 max-pool halves the side. */
export const cellSide = (config) => 2 ** config.channels.length;
/** Whether a model reads through the retina (no grid, no attention map: boxes). */
export const isRetina = (config) => config.sensor === 'retina';
/** What the lab says where a grid's attention map would be. */
export const NO_GRID_MAP = 'The retina has no grid map: it reads only the patches in its boxes, so there are no attention weights over the image to draw or to compare with the saliency.';

/**
 * The attention colour scale's top: the largest weight, but at least twice the
 * uniform weight 1/cells, so attention spread evenly (an untrained model, or
 * none) reads as middling everywhere instead of as bright everywhere.
 */
function attentionTop(weights) {
  let hi = 0;
  for (const w of weights.data) hi = Math.max(hi, w);
  return Math.max(hi, 2 / weights.data.length);
}

/** Hard mode's glimpse on the canvas: the sampled cell's pixels, or the retina's finest patch (its own box). */
function glimpseBox(step, config) {
  if (!step.location) return null;
  if (step.location.box && !config.grid) return step.location.box;
  const s = cellSide(config);
  return { top: step.location.row * s, left: step.location.col * s, height: s, width: s };
}

/** Reading, hard attention takes the most likely cell (training samples one from the weights). */
const GLIMPSE = 'the glimpse: the cell hard attention reads (its most likely; training samples one)';

const tokenText = (t) => (t === '</s>' ? 'end' : `“${t}”`);

/** Says next to a reading that the model has not trained yet (its answer is noise), or nothing. */
function noteUntrained(id, steps) {
  const note = byId(id);
  setText(note, steps === 0 ? UNTRAINED_NOTE : '');
  note.hidden = steps !== 0;
}

/**
 * read(image) -> Promise of a reading (session.readImage); example(seed) ->
 * Promise of { image, labels } (a test image); steps() -> the model's steps
 * trained (0: untrained, said next to its answers); onError(err).
 */
export function createImageView({ read, example, steps: trainedSteps, onError }) {
  const attention = createImageOverlay({ id: 'attention', label: 'Attention over the test image', size: 260 });
  const saliency = createImageOverlay({ id: 'saliency', label: 'Saliency of the test image', size: 260 });
  byId('image-attention').append(attention.el);
  const glimpses = createGlimpseLayer({ id: 'attention' });
  glimpses.attach(attention);
  const drawGlimpses = createGlimpseLayer({ id: 'draw' });
  byId('image-saliency').append(saliency.el);
  const slider = byId('image-step');
  const stepLabel = byId('image-step-label');
  const animate = byId('image-animate');
  let config = null; // the model's config (grid, channels, mode)
  let shown = null; // { reading, labels }
  let seed = 1;
  let timer = 0;
  let request = 0;

  const drawBox = byId('draw-attention');
  const drawOverlays = []; // one per output step, made as answers grow
  let overlayTask = null; // the task they are sized for
  const addDrawOverlay = (size) => {
    const o = createImageOverlay({ id: `draw-${drawOverlays.length}`, label: `Attention over the drawing, step ${drawOverlays.length + 1}`, size });
    drawOverlays.push(o);
    drawBox.append(o.el);
    if (drawOverlays.length === 1) drawGlimpses.attach(o);
  };
  const drawSize = (task) => (task === 'multi' ? 140 : 180);
  const drawing = createDrawing({
    id: 'digit', label: 'Drawing canvas: draw a digit with the mouse, a pen or a finger', size: 260,
    onChange: () => readDrawing(),
  });
  let drawnFromExample = false;
  const showExample = h('button', { type: 'button', textContent: 'Show a test digit', title: 'Put a random test image on the canvas (draw over it, or Clear)' });
  drawing.toolbar.append(showExample);
  byId('drawing').append(drawing.el);
  drawing.toolbar.firstChild.addEventListener('click', () => { drawnFromExample = false; });

  function stopAnimation() {
    clearInterval(timer);
    timer = 0;
    setText(animate, '▶ Animate');
    animate.setAttribute('aria-pressed', 'false');
  }

  function renderStep() {
    if (!shown) return;
    const { reading } = shown;
    const t = Math.min(Number(slider.value), reading.steps.length - 1);
    const step = reading.steps[t];
    const T = reading.steps.length;
    setText(stepLabel, `${t + 1} of ${T}: ${tokenText(step.token)}`);
    if (isRetina(config)) {
      renderGlimpse(reading, t);
      return;
    }
    glimpses.clear();
    const none = config.attention === 'none';
    const cell = { height: cellSide(config), width: cellSide(config) };
    const box = glimpseBox(step, config);
    const where = `step ${t + 1} of ${T}, output ${tokenText(step.token)}`;
    attention.update({
      image: reading.canvas, map: step.weights, cell, box, hi: attentionTop(step.weights),
      caption: none ? `No attention: every cell weighs the same (${where})` : `Attention over the ${config.grid.rows}×${config.grid.cols} grid, upsampled (${where})`,
      boxLabel: GLIMPSE,
      description: `The test image with the attention of ${where} over it${box ? ', and the glimpse as a red box' : ''}`,
    });
    saliency.update({
      image: reading.canvas, map: step.saliency, legend: '|∂ log p / ∂ pixel|',
      caption: `Saliency: the pixels that move the answer (${where})`,
    });
    setText(byId('image-tau'), none
      ? 'With no attention there is no ranking of cells to compare with the saliency.'
      : agreementText(step, config.grid.rows * config.grid.cols));
  }

  /** The retina's glimpse t over the test image: its boxes, the saliency beside them, no map. */
  function renderGlimpse(reading, t) {
    const T = reading.steps.length;
    const step = reading.steps[t];
    const locations = reading.steps.map((s) => s.location);
    const where = `glimpse ${t + 1} of ${T}, reading ${tokenText(step.token)}`;
    attention.update({
      image: reading.canvas, map: null,
      caption: `The retina's glimpses, up to ${where} (no grid map: the boxes are what it read)`,
      description: `The test image with the retina's glimpses up to ${where}: centres ${glimpseText(locations.slice(0, t + 1))}`,
    });
    glimpses.update({ rows: reading.canvas.rows, cols: reading.canvas.cols, locations, at: t, retina: config.retina });
    saliency.update({
      image: reading.canvas, map: step.saliency, legend: '|∂ log p / ∂ pixel|',
      caption: `Saliency: the pixels that move the answer (${where})`,
    });
    setText(byId('image-tau'), NO_GRID_MAP);
  }

  /**
   * Where attention and saliency (summed per cell) are both bright, then τ over every cell and over the
   * bright ones; the faint cells are blamed only when they pull τ down (by 0.1 or more) on this image.
   */
  function agreementText(step, n) {
    const a = step.agreement;
    if (!a) return '';
    const bright = a.tauActive === null ? '.'
      : `; over the ${a.active} cells where either map is bright: ${fixed(a.tauActive, 2)}`
        + (a.tauActive - step.tau >= 0.1 ? ', higher: the faint cells, whose order no eye sees, pull τ down.' : '.');
    return `Attention and saliency (summed per cell): the most-attended cell is ${a.topMatch ? '' : 'not '}the most salient one; `
      + `the ${a.k} most-attended cells hold ${fixed(100 * a.saliencyInTopK, 0)}% of the saliency (an unrelated map: about ${fixed((100 * a.k) / n, 0)}%); `
      + `${Math.round(a.topKOverlap * a.k)} of the ${a.k} most-attended cells are among the ${a.k} most salient. `
      + `Kendall's τ over all ${n} cells: ${fixed(step.tau, 2)}${bright}`;
  }

  async function showTest() {
    if (!config) return;
    const ticket = ++request;
    try {
      const ex = await example(seed);
      const reading = await read(ex.image);
      if (ticket !== request) return;
      shown = { reading, labels: ex.labels };
      slider.max = String(reading.steps.length - 1);
      setText(byId('image-step-name'), isRetina(config) ? 'Glimpse' : 'Output step');
      slider.disabled = reading.steps.length < 2;
      animate.disabled = reading.steps.length < 2;
      if (Number(slider.value) > reading.steps.length - 1) slider.value = '0';
      setText(byId('image-output'), reading.output || 'no digits');
      const truth = ex.labels.filter((l) => l !== '</s>').join('');
      setText(byId('image-truth'), `(the answer: ${truth}${truth === reading.output ? ', right' : ', wrong'})`);
      noteUntrained('image-note', trainedSteps());
      renderStep();
    } catch (err) {
      if (ticket === request) onError(err);
    }
  }

  let drawRequest = 0;
  async function readDrawing() {
    if (!config) return;
    const ticket = ++drawRequest;
    if (drawing.empty) {
      setText(byId('draw-output'), '–');
      byId('draw-note').hidden = true;
      drawOverlays.forEach((o) => o.clear());
      drawGlimpses.clear();
      drawOverlays[0]?.clear('Draw a digit on the canvas above: the model reads it here.');
      return;
    }
    const single = config.task !== 'multi';
    const image = drawnFromExample ? drawing.image() : drawing.image({ height: DIGIT_HEIGHT, center: config.task === 'centered' });
    try {
      const reading = await read(image);
      if (ticket !== drawRequest) return;
      setText(byId('draw-output'), reading.output || 'no digits');
      noteUntrained('draw-note', trainedSteps());
      if (isRetina(config)) {
        showDrawnGlimpses(reading);
        return;
      }
      drawGlimpses.clear();
      const steps = reading.steps.slice(0, MAX_DRAW_STEPS);
      while (drawOverlays.length < steps.length) addDrawOverlay(drawSize(config.task));
      drawOverlays.forEach((o, t) => {
        const step = steps[t];
        if (!step) { o.clear(); return; }
        o.update({
          image: reading.canvas, map: step.weights, cell: { height: cellSide(config), width: cellSide(config) }, box: glimpseBox(step, config),
          boxLabel: GLIMPSE, hi: attentionTop(step.weights),
          // a single digit read in several glimpses: each figure names its glimpse
          caption: !single ? `Step ${t + 1}: ${tokenText(step.token)}`
            : steps.length > 1 ? `Attention at glimpse ${t + 1} of ${steps.length} over the drawing (reads ${tokenText(step.token)})`
              : `Attention: the drawing as the model sees it (reads ${tokenText(step.token)})`,
        });
      });
    } catch (err) {
      if (ticket === drawRequest) onError(err);
    }
  }

  /** The retina over the drawing: one picture with all its glimpses (no grid map per step). */
  function showDrawnGlimpses(reading) {
    const T = reading.steps.length;
    const locations = reading.steps.map((s) => s.location);
    drawOverlays.forEach((o, t) => { if (t > 0) o.clear(); });
    drawOverlays[0].update({
      image: reading.canvas, map: null,
      caption: `The retina's ${T} glimpses over the drawing, numbered; it reads ${tokenText(reading.steps[T - 1].token)} (no grid map)`,
      description: `The drawing with the retina's ${T} glimpses: centres ${glimpseText(locations)}`,
    });
    drawGlimpses.update({ rows: reading.canvas.rows, cols: reading.canvas.cols, locations, at: T - 1, retina: config.retina });
  }

  slider.addEventListener('input', () => {
    stopAnimation();
    renderStep();
  });
  animate.addEventListener('click', () => {
    if (timer) { stopAnimation(); return; }
    setText(animate, '❚❚ Stop');
    animate.setAttribute('aria-pressed', 'true');
    timer = setInterval(() => {
      slider.value = String((Number(slider.value) + 1) % (Number(slider.max) + 1));
      renderStep();
    }, ANIMATE_MS);
  });
  showExample.addEventListener('click', async () => {
    try {
      const ex = await example(1 + Math.floor(Math.random() * 1e9));
      drawnFromExample = true;
      drawing.setImage(ex.image);
    } catch (err) {
      onError(err);
    }
  });

  return {
    drawing,
    /** The shown test image's seed (in the link). */
    get seed() { return seed; },
    /** A new or changed model: its config, and a fresh reading of the test image and the drawing. */
    setModel(cfg, imageSeed = seed) {
      config = cfg;
      seed = imageSeed;
      const { rows, cols } = cfg.canvas;
      if (drawing.rows !== rows || drawing.cols !== cols) {
        drawnFromExample = false;
        drawing.resize(rows, cols);
      }
      if (overlayTask !== cfg.task) {
        drawOverlays.length = 0;
        drawGlimpses.clear();
        drawBox.replaceChildren();
        overlayTask = cfg.task;
        addDrawOverlay(drawSize(cfg.task));
      }
      return this.refresh();
    },
    /** Reads the test image and the drawing again (the model trained on). */
    refresh() {
      return Promise.all([showTest(), readDrawing()]);
    },
    /** Shows the test image drawn from `imageSeed`. */
    show(imageSeed) {
      seed = imageSeed;
      return showTest();
    },
    /** Removes every reading (a new model, another task): nothing stale stays. */
    clear() {
      stopAnimation();
      config = null;
      shown = null;
      request++;
      drawRequest++;
      slider.value = '0';
      slider.max = '0';
      setText(stepLabel, '–');
      setText(byId('image-output'), '–');
      setText(byId('image-truth'), '');
      setText(byId('image-tau'), '');
      setText(byId('draw-output'), '–');
      byId('image-note').hidden = true;
      byId('draw-note').hidden = true;
      attention.clear('The model reads a test image here once it is made.');
      glimpses.clear();
      saliency.clear();
      drawOverlays.forEach((o) => o.clear());
      drawGlimpses.clear();
    },
  };
}
