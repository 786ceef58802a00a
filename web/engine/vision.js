// Attention over images (the C model in include/attnlab/vision.h): a CNN
// encoder whose feature grid a recurrent decoder reads with soft or hard
// attention, trained on real handwritten digits (MNIST, LeCun, Cortes and
// Burges). Created with engine.createVisionModel(options) or
// engine.loadVisionModel(bytes); both load the digit set once per engine
// (web/data/mnist.bin.gz: read from disk in Node, fetched and inflated with
// DecompressionStream in a page, only when an image model is first made).
import { VISION, VISION_LIMITS } from './constants.js';
import { defaultsOf } from './defaults.js';
import { readDataFile } from './data-file.js';
import { argError, describe, limitError, shapeError, valueError } from './errors.js';
import { listLength, options, toChoice, toInteger, toList, toNumber } from './matrix.js';
import { Model, loadHandle, modelFile } from './model.js';
import { agreement, kendallTau } from './stats.js';
import { F32, I32, U8 } from './wasm.js';

export { kendallTau };

const { TASKS, CELLS, ATTENTIONS, MODES, OPTIMIZERS, SPLITS } = VISION;
/** The decoder's start state (VisStart in include/attnlab/vision.h): a learned constant, or the grid's mean (older files). */
const STARTS = Object.freeze({ mean: 0, constant: 1 });
/** What the decoder reads (VisSensor): the CNN's feature grid, or a retina of glimpses (hard mode). */
const SENSORS = Object.freeze({ grid: 0, retina: 1 });
/** Per step from vtr_glimpses: the centre x, y, then each scale's top, left, side (VIS_GLIMPSE_INTS). */
const GLIMPSE_INTS = 11;
/** evaluate()'s attention: the model's own, or the uniform map (vtr_evaluate's flag). */
const EVAL_ATTENTION = Object.freeze({ model: 0, uniform: 1 });

/** Output tokens: '0'-'9', then the end of a multi-digit answer. */
export const END_TOKEN = '</s>';
const tokenName = (id) => (id === VISION_LIMITS.endToken ? END_TOKEN : String(id));
const nameOf = (table, code) => Object.keys(table).find((k) => table[k] === code);

export const DIGITS_URL = new URL('../data/mnist.bin.gz', import.meta.url);

/** The digit set's uncompressed bytes (Node: from disk; a page: fetched and inflated). */
const fetchDigits = (url) => readDataFile(url, { what: 'loadDigits', script: 'mnist.mjs', gzip: true });

const digitSets = new WeakMap(); // heap -> Promise<handle>

/** The digit set's handle in this heap, loaded on first use. */
export function loadDigits(heap, url = DIGITS_URL) {
  if (!digitSets.has(heap)) {
    const promise = fetchDigits(url).then((bytes) => heap.withBlock({ bytes: U8 * bytes.length }, (p) => {
      heap.writeBytes(p.bytes, bytes);
      return heap.withHandle((out) => heap.call.vis_data_create({ bytes: p.bytes, size: bytes.length, out }));
    }));
    promise.catch(() => digitSets.delete(heap));
    digitSets.set(heap, promise);
  }
  return digitSets.get(heap);
}

function toChannels(value, fallback) {
  if (value === undefined) return [...fallback];
  const expected = `channels: expected an array of 1 to ${VISION_LIMITS.maxLayers} channel counts`;
  let list;
  try {
    list = toList('channels', value, VISION_LIMITS.maxLayers);
  } catch (err) {
    throw argError(`${expected} (${err.message})`);
  }
  if (list === null || list.length < 1) throw argError(`${expected} (got ${describe(value)})`);
  return list.map((c, i) => toInteger(`channels[${i}]`, c, 8, 1, VISION_LIMITS.maxChannels));
}

function toDigits(value, task, fallback) {
  if (value === undefined) return [...fallback];
  if (task !== TASKS.multi) throw argError("digits: only the 'multi' task takes digits");
  const pair = toList('digits', value, 2) ?? [value, value];
  if (pair.length !== 2) throw argError(`digits: expected a count or [min, max] (got ${describe(value)})`);
  const [lo, hi] = pair.map((d, i) => toInteger(`digits[${i}]`, d, 3, 1, VISION_LIMITS.maxDigits));
  if (lo > hi) throw valueError(`digits: min ${lo} is above max ${hi}`);
  return [lo, hi];
}

/** The cluttered canvas's side (0 for the other tasks, whose canvases are fixed). */
function toSize(value, task, fallback) {
  if (task !== TASKS.cluttered) {
    if (value !== undefined) throw argError(`size: only the cluttered task's canvas has a size to choose (task is '${nameOf(TASKS, task)}')`);
    return 0;
  }
  return toInteger('size', value, fallback, VISION_LIMITS.minSize, VISION_LIMITS.maxSize);
}

/**
 * The sensor (the grid unless 'retina' is asked for: hard mode's attention
 * map, compareAttention and the files saved before the retina read the grid)
 * and the retina's options: { size, scales } (0: the core's defaults, a fifth
 * of the canvas and 3) and sigma; the core checks their ranges and which
 * tasks and modes take the retina.
 */
function sensorArgs(o, D) {
  const sensor = toChoice('sensor', o.sensor, SENSORS, D.sensor);
  if (sensor !== SENSORS.retina) {
    for (const name of ['retina', 'sigma']) {
      if (o[name] !== undefined) throw argError(`${name}: only sensor 'retina' takes ${name} (sensor is 'grid')`);
    }
    return { sensor, retinaSize: 0, retinaScales: 0, sigma: 0 };
  }
  const r = o.retina === undefined ? {} : o.retina;
  if (r === null || typeof r !== 'object' || Array.isArray(r)) throw argError(`retina: expected { size, scales } (got ${describe(r)})`);
  const { size, scales } = options('retina', r, ['size', 'scales']);
  const sigma = toNumber('sigma', o.sigma, D.sigma);
  if (!(sigma > 0)) throw valueError(`sigma: the location policy's spread must be > 0 (got ${sigma})`);
  return {
    sensor, sigma,
    retinaSize: toInteger('retina.size', size, 0, 1, 1 << 20),
    retinaScales: toInteger('retina.scales', scales, 0, 1, 1 << 20),
  };
}

/**
 * The creation options, validated, as the C call's arguments; an option not given is the
 * table's default for a model of this task, mode and sensor (defaults.js). `steps` (the
 * glimpses): the table's, else the multi task's most digits and its end, 6 on the retina, 1.
 */
function createArgs(o) {
  const D = defaultsOf('vision', o).model;
  const task = toChoice('task', o.task, TASKS, D.task);
  const digits = toDigits(o.digits, task, D.digits);
  const seed = o.seed === undefined ? D.seed : o.seed;
  if (!Number.isSafeInteger(seed) || seed < 0) throw valueError(`seed must be an integer in 0..2^53-1 (got ${describe(seed)})`);
  const entropy = toNumber('entropy', o.entropy, D.entropy);
  if (entropy < 0) throw valueError(`entropy must be >= 0 (got ${entropy})`);
  const attention = toChoice('attention', o.attention, ATTENTIONS, D.attention);
  const mode = toChoice('mode', o.mode, MODES, D.mode);
  const sensor = sensorArgs(o, D);
  const steps = task === TASKS.multi ? digits[1] + 1 : D.steps ?? (sensor.sensor === SENSORS.retina ? 6 : 1);
  return {
    task, digits, seed, entropy, attention, mode, ...sensor,
    clutter: toInteger('clutter', o.clutter, D.clutter, 0, VISION_LIMITS.maxClutter),
    size: toSize(o.size, task, D.size),
    channels: toChannels(o.channels, D.channels),
    cell: toChoice('cell', o.cell, CELLS, D.cell),
    hidden: toInteger('hidden', o.hidden, D.hidden, 1, VISION_LIMITS.maxHidden),
    steps: toInteger('steps', o.steps, steps, 1, VISION_LIMITS.maxSteps),
    batch: toInteger('batch', o.batch, D.batch, 1, VISION_LIMITS.maxBatch),
    start: toChoice('start', o.start, STARTS, D.start),
  };
}

export async function createVisionModel(heap, args) {
  const a = createArgs(options('createVisionModel', args, [
    'task', 'digits', 'seed', 'entropy', 'clutter', 'size', 'channels', 'cell', 'hidden', 'attention', 'mode', 'steps', 'batch', 'start',
    'sensor', 'retina', 'sigma',
  ]));
  const data = await loadDigits(heap);
  const [c0, c1 = 0, c2 = 0] = a.channels;
  const handle = heap.withHandle((out) => heap.call.vis_create({
    data, task: a.task, clutter: a.clutter, size: a.size, minDigits: a.digits[0], maxDigits: a.digits[1], layers: a.channels.length,
    c0, c1, c2, cell: a.cell, hidden: a.hidden, attention: a.attention, mode: a.mode, steps: a.steps,
    entropy: a.entropy, batch: a.batch, seed: a.seed, start: a.start,
    sensor: a.sensor, retinaSize: a.retinaSize, retinaScales: a.retinaScales, sigma: a.sigma, out,
  }));
  return new VisionModel(heap, handle);
}

export async function loadVisionModel(heap, bytes) {
  const file = modelFile('loadVisionModel', bytes);
  const data = await loadDigits(heap);
  return new VisionModel(heap, loadHandle(heap, file, (args) => heap.call.vis_load({ data, ...args })));
}

/**
 * An image `{ rows, cols, data }` of greys in [0, 1], checked in JS (the C
 * core checks again): each field and the data's length read once, the
 * pixels copied by index into the engine's own Float32Array.
 */
function toImage(name, image) {
  if (image === null || typeof image !== 'object') throw argError(`${name}: expected { rows, cols, data } (got ${describe(image)})`);
  const { rows, cols, data } = options(name, image, ['rows', 'cols', 'data']);
  if (!Number.isInteger(rows) || !Number.isInteger(cols) || rows < 1 || cols < 1) {
    throw shapeError(`${name}: rows and cols must be positive integers (got ${describe(rows)} x ${describe(cols)})`);
  }
  if (rows > VISION_LIMITS.maxImage || cols > VISION_LIMITS.maxImage) {
    throw limitError(`${name}: ${rows} x ${cols} is larger than ${VISION_LIMITS.maxImage} x ${VISION_LIMITS.maxImage}`);
  }
  const n = rows * cols;
  const length = listLength(data);
  if (length === null) throw argError(`${name}: data must be an array of ${n} greys (got ${describe(data)})`);
  if (length !== n) throw shapeError(`${name}: data has ${describe(length)} values; ${rows} x ${cols} needs ${n}`);
  const pixels = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    const v = data[i];
    if (typeof v !== 'number' || !Number.isFinite(v)) throw valueError(`${name}: pixel ${i} is ${describe(v)}; greys must be finite numbers in [0, 1]`);
    if (v < 0 || v > 1) throw valueError(`${name}: pixel ${i} is ${v}; greys must be in [0, 1]`);
    pixels[i] = v;
  }
  return { rows, cols, data: pixels };
}

/**
 * train's softMix as the core's schedule (vis_set_soft_mix_schedule, in the model's steps): a
 * share in [0, 1] for every step, or { share, hold, end }: the share until `hold` of the
 * schedule's steps (decaySteps: the table's steps, or the end of this call when it goes
 * past them), falling linearly to 0 at `end` of them (0 <= hold <= end <= 1). Not given:
 * the table's (hard mode on the grid of the cluttered task: { share: 1, hold: 0.5, end: 0.8 };
 * otherwise 0, every image samples its cells or locations). The core checks which models take it.
 */
function toSoftMix(value, { defaults, config, decaySteps }) {
  // a model without attention (a file may hold one in hard mode) has nothing to mix: the default is none
  const mix = value === undefined ? (config.attention === 'none' ? 0 : defaults.softMix) : value;
  const always = VISION_LIMITS.maxOptSteps;
  const toShare = (name, v, fallback) => {
    const share = toNumber(name, v, fallback);
    if (share < 0 || share > 1) throw valueError(`${name}: a share of the images, within [0, 1] (got ${share})`);
    return share;
  };
  if (mix === null || typeof mix !== 'object' || Array.isArray(mix)) {
    return { softMix: toShare('softMix', mix, 0), mixHold: always, mixEnd: always };
  }
  const o = options('softMix', mix, ['share', 'hold', 'end']);
  const share = toShare('softMix.share', o.share, 1);
  const hold = toShare('softMix.hold', o.hold, 0);
  const end = toShare('softMix.end', o.end, 1);
  if (end < hold) throw valueError(`softMix: end ${end} is before hold ${hold} (shares of the schedule's steps)`);
  return { softMix: share, mixHold: Math.round(hold * decaySteps), mixEnd: Math.round(end * decaySteps) };
}

/** A CNN + attention reader of digits, bound to its image task. train, save, destroy and steps: see model.js. */
export class VisionModel extends Model {
  constructor(heap, handle) {
    super(heap, handle, {
      kind: 'vision', prefix: 'vis', info: 'VisInfo', stepsField: 'optimizerSteps',
      train: {
        // up to VISION_LIMITS.maxBatch: the core grows the model's buffers for a batch larger than any before
        maxSteps: VISION_LIMITS.maxTrainSteps, batch: (c) => c.batch, maxBatch: () => VISION_LIMITS.maxBatch,
        optimizers: OPTIMIZERS, tokens: false,
        // hard mode: the share of images that read the expected (soft) context, over the model's steps
        options: { softMix: toSoftMix },
      },
    });
    const s = this.info();
    const retina = s.sensor === SENSORS.retina;
    /**
     * The model's configuration (as createVisionModel options) and its sizes. The retina
     * reads no grid and has no CNN: its grid and channels are null (and attention unused);
     * the grid's retina and sigma are null.
     */
    this.config = Object.freeze({
      task: nameOf(TASKS, s.task), clutter: s.clutter, size: s.task === TASKS.cluttered ? s.rows : null, digits: [s.minDigits, s.maxDigits],
      channels: retina ? null : Array.from(s.channels.subarray(0, s.layers)), cell: nameOf(CELLS, s.cell), hidden: s.hidden,
      attention: nameOf(ATTENTIONS, s.attention), mode: nameOf(MODES, s.mode), steps: s.steps, batch: s.batch,
      seed: s.seed, entropy: s.entropy, start: nameOf(STARTS, s.start), parameters: s.parameters,
      sensor: nameOf(SENSORS, s.sensor),
      retina: retina ? Object.freeze({ size: s.retinaSize, scales: s.retinaScales }) : null, sigma: retina ? s.sigma : null,
      canvas: Object.freeze({ rows: s.rows, cols: s.cols }), grid: retina ? null : Object.freeze({ rows: s.gridRows, cols: s.gridCols }),
    });
  }

  /**
   * Teacher-forced loss and greedy accuracies on a fixed set of `count` images of a split.
   * accuracy: answer tokens right (multi: digits and the end token); sequenceAccuracy: whole answers right.
   * attention 'uniform' (the ablation): every attention map replaced by the uniform one (soft: the
   * grid's mean; hard: uniformly random locations from a fixed stream), so the drop from 'model'
   * (the default) shows how much the answer depends on where the model looks.
   * @returns {{ loss, accuracy, sequenceAccuracy, count, split }}
   */
  evaluate(args = {}) {
    return this.guarded('evaluate', (model) => {
      const o = options('evaluate', args, ['split', 'count', 'attention']);
      const split = toChoice('split', o.split, SPLITS, 'test');
      const count = toInteger('count', o.count, 500, 1, VISION_LIMITS.maxEvaluate);
      const uniform = toChoice('attention', o.attention, EVAL_ATTENTION, 'model');
      return { ...this.heap.callRecord('vis_evaluate', 'VisEval', { model, split, count, uniform }), split: nameOf(SPLITS, split) };
    });
  }

  /**
   * Reads one image (placed on the task's canvas: centred, shrunk when larger).
   * Every step: its token, the attention weights over the feature grid, and
   * in hard mode the attended cell with its box on the canvas.
   * @returns {{ output, tokens, canvas, steps: { token, weights, location }[] }}
   */
  predict(image) {
    return this.guarded('predict', (model) => this.#predict(model, toImage('predict: image', image)));
  }

  #predict(model, img) {
    const { steps: T, grid, canvas: cv, mode, task, sensor } = this.config;
    const G = grid ? grid.rows * grid.cols : 0;
    const heap = this.heap;
    const sizes = {
      image: F32 * img.data.length, tokens: I32 * T, weights: F32 * Math.max(1, T * G), locations: I32 * T,
      glimpses: I32 * T * GLIMPSE_INTS,
    };
    return heap.withBlock(sizes, (p) => {
      heap.writeF32(p.image, img.data);
      heap.call.vis_predict({
        model, image: p.image, rows: img.rows, cols: img.cols, tokens: p.tokens, weights: p.weights, locations: p.locations,
      });
      const ids = Array.from(heap.readI32(p.tokens, T));
      const locs = Array.from(heap.readI32(p.locations, T));
      const canvas = heap.readMatrix(heap.call.vis_canvas({ model }), cv.rows, cv.cols);
      if (sensor === 'retina') {
        heap.call.vis_glimpses({ model, glimpses: p.glimpses });
        return this.#retinaSteps(ids, Array.from(heap.readI32(p.glimpses, T * GLIMPSE_INTS)), canvas);
      }
      // a cell covers 2^layers canvas pixels a side (each layer pools 2 x 2; a floored
      // remainder at the bottom and right edges is in no cell)
      const side = 2 ** this.config.channels.length;
      let shown = T;
      if (task === 'multi') {
        const end = ids.indexOf(VISION_LIMITS.endToken);
        shown = end < 0 ? T : end + 1;
      }
      const steps = [];
      for (let t = 0; t < shown; t++) {
        const weights = heap.readMatrix(p.weights + F32 * t * G, grid.rows, grid.cols);
        let location = null;
        if (mode === 'hard' && locs[t] >= 0) {
          const row = Math.floor(locs[t] / grid.cols);
          const col = locs[t] % grid.cols;
          location = { cell: locs[t], row, col, box: { top: row * side, left: col * side, height: side, width: side } };
        }
        steps.push({ token: tokenName(ids[t]), weights, location });
      }
      const tokens = steps.map((s) => s.token);
      const output = task === 'multi' ? tokens.filter((s) => s !== END_TOKEN).join('') : tokens[tokens.length - 1];
      return { output, tokens, canvas, steps };
    });
  }

  /**
   * The retina's steps: each glimpse's centre pixel (x, y) and its patches on the canvas, the
   * finest scale's as `box` and every scale's in `boxes` (they may reach past the canvas, whose
   * outside the retina reads as 0); no attention map (weights null).
   */
  #retinaSteps(ids, g, canvas) {
    const steps = ids.map((id, t) => {
      const at = t * GLIMPSE_INTS;
      const boxes = [];
      for (let k = 0; k < this.config.retina.scales; k++) {
        const [top, left, side] = g.slice(at + 2 + 3 * k, at + 5 + 3 * k);
        boxes.push({ top, left, height: side, width: side });
      }
      return { token: tokenName(id), weights: null, location: { x: g[at], y: g[at + 1], box: boxes[0], boxes } };
    });
    const tokens = steps.map((s) => s.token);
    return { output: tokens[tokens.length - 1], tokens, canvas, steps };
  }

  /**
   * Implicit attention: d log p(token of `step`) / d pixel of the canvas, for the greedy answer.
   * @returns {{ rows, cols, data }}
   */
  saliency(image, args = {}) {
    return this.guarded('saliency', (model) => {
      const img = toImage('saliency: image', image);
      const o = options('saliency', args, ['step']);
      return this.#saliency(model, img, toInteger('step', o.step, 0, 0, this.config.steps - 1));
    });
  }

  #saliency(model, img, step) {
    const { rows, cols } = this.config.canvas;
    const heap = this.heap;
    return heap.withBlock({ image: F32 * img.data.length, out: F32 * rows * cols }, (p) => {
      heap.writeF32(p.image, img.data);
      heap.call.vis_saliency({ model, image: p.image, rows: img.rows, cols: img.cols, step, saliency: p.out });
      return heap.readMatrix(p.out, rows, cols);
    });
  }

  /**
   * Explicit against implicit attention, per output step: the attention
   * weights over the grid beside |saliency| summed over each cell's pixels,
   * their rank correlation (Kendall's tau-b over all cells) and the measures
   * of where both are bright (stats.js agreement: top match, saliency inside
   * the top 3 attended cells, top-3 overlap, τ over the non-negligible cells).
   * @returns {{ output, steps: { token, tau, agreement, attention: Matrix, saliency: Matrix }[] }}
   */
  compareAttention(image) {
    return this.guarded('compareAttention', (model) => {
      if (this.config.sensor === 'retina') {
        throw argError("compareAttention: the retina has no attention map to compare (predict() gives its glimpses' boxes)");
      }
      const img = toImage('compareAttention: image', image); // read once for every step's calls
      const p = this.#predict(model, img);
      const { grid, canvas } = this.config;
      const side = 2 ** this.config.channels.length; // canvas pixels per cell side
      const steps = p.steps.map((step, t) => {
        const sal = this.#saliency(model, img, t);
        const cells = new Float32Array(grid.rows * grid.cols);
        for (let r = 0; r < grid.rows * side; r++) {
          for (let c = 0; c < grid.cols * side; c++) {
            cells[Math.floor(r / side) * grid.cols + Math.floor(c / side)] += Math.abs(sal.data[r * canvas.cols + c]);
          }
        }
        return {
          token: step.token,
          tau: kendallTau(step.weights.data, cells),
          agreement: agreement(step.weights.data, cells),
          attention: step.weights,
          saliency: { rows: grid.rows, cols: grid.cols, data: cells },
        };
      });
      return { output: p.output, steps };
    });
  }

  /**
   * `count` examples { image, labels, boxes } of a split, drawn from `seed` (the same seed gives
   * the same images); boxes: where each digit's ink lies, [{ top, left, height, width }] in canvas
   * pixels, one per digit in the labels' order (a page or a test checks where a model looked).
   */
  examples(args = {}) {
    return this.guarded('examples', (model) => {
      const o = options('examples', args, ['split', 'count', 'seed']);
      const split = toChoice('split', o.split, SPLITS, 'test');
      const count = toInteger('count', o.count, 1, 1, 1000);
      const seed = toInteger('seed', o.seed, 1, 0, Number.MAX_SAFE_INTEGER);
      const { rows, cols } = this.config.canvas;
      const heap = this.heap;
      const most = VISION_LIMITS.maxDigits + 1;
      const sizes = { rng: 2 * I32, image: F32 * rows * cols, labels: I32 * most, n: I32, boxes: 4 * I32 * most };
      return heap.withBlock(sizes, (p) => {
        heap.writeSeed(p.rng, seed);
        const out = [];
        for (let i = 0; i < count; i++) {
          heap.call.vis_sample({ model, split, rng: p.rng, image: p.image, labels: p.labels, n: p.n, boxes: p.boxes });
          const n = heap.readI32(p.n, 1)[0];
          const labels = Array.from(heap.readI32(p.labels, n), tokenName);
          const b = heap.readI32(p.boxes, 4 * n);
          const digits = labels.filter((l) => l !== END_TOKEN).length;
          const boxes = Array.from({ length: digits }, (_, i) => ({ top: b[4 * i], left: b[4 * i + 1], height: b[4 * i + 2], width: b[4 * i + 3] }));
          out.push({ image: heap.readMatrix(p.image, rows, cols), labels, boxes });
        }
        return out;
      });
    });
  }
}
