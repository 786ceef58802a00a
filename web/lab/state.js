// The training lab's settings: one declarative table of properties read by the
// shared URL-state codec (web/ui/url-state.js), so the whole run is in the link.
// A bad field falls back to its default on its own and the notice names it.
//
// Link versions: 1 is the lab's first format (no "ver=", decoding as two fields
// "decode=greedy|beam" and "beam=2..16"); 2 folds them into one "beam" (1 =
// greedy). Links of version 1 are migrated, so every link ever shared still opens.
import { DEFAULTS } from '../engine/defaults.js';
import { createUrlState } from '../ui/url-state.js';
import { limit } from './limits.js';
import { TRANSFORMER_PROPS } from './transformer-state.js';

export const SEQUENCE_TASKS = ['reverse', 'sort', 'copy'];
/** The text tasks (seq2seq models): the sequence tasks, dates, and pairs the learner pastes. */
export const TEXT_TASKS = [...SEQUENCE_TASKS, 'dates', 'pairs'];
/** The image tasks (MNIST digits, read by a CNN with attention over its feature grid). */
export const IMAGE_TASKS = ['cluttered', 'multi', 'centered'];
/** How an image model attends: soft (expectation), hard (one sampled cell), none (average pooling). */
export const IMAGE_MODES = ['soft', 'hard', 'none'];
/**
 * What hard attention reads: 'grid', one sampled cell of the CNN's feature grid; 'retina', RAM's
 * glimpses (Mnih et al. 2014: a Gaussian location policy and patches at 3 scales around each
 * location, no CNN). The retina reads one digit, so only with hard mode on one-digit tasks.
 */
export const SENSORS = ['grid', 'retina'];
/** Why the state's sensor choice does not apply (the control is then disabled), or null. */
export function sensorBlocked(state) {
  if (state.mode !== 'hard') return 'The retina is a kind of hard attention: choose hard attention over the image first.';
  if (state.task === 'multi') return 'The retina reads one digit per answer: choose a one-digit task (a digit among clutter, or centred).';
  return null;
}
/** The sensor a state's model reads with: its choice where that applies, else the grid. */
export const sensorOf = (state) => (sensorBlocked(state) ? 'grid' : state.sensor);
/** Channels of the conv layers; each layer halves the grid (a 60-pixel side: 30, 15, 7 cells). */
export const CHANNELS = ['8', '8,16', '8,16,32', '16,32,64'];
export const isImageTask = (task) => IMAGE_TASKS.includes(task);
export const ATTENTIONS = ['additive', 'dot', 'scaled_dot', 'general', 'cosine', 'location', 'none'];
/**
 * Steps per update of the display: n > 0 steps per frame; -n, n steps per second, one
 * at a time (slow enough to watch each step); 0 sizes each update to about 120 ms of
 * training (small at first, so the first steps are still seen one by one).
 */
export const SPEEDS = [0, 100, 25, 10, 5, 2, 1, -4, -1];
/** How the lab starts: on the pretrained model, untrained, or on the model a Learn chapter hands over (web/ui/handoff.js). */
export const STARTS = ['pretrained', 'scratch', 'learn'];

// A bound that is the engine's is read from its limits (limits.js: a getter, as
// they are known only once the engine has loaded); the others are the lab's own
// choices: lengths up to 30 (the engine takes 64), an embedding up to 128 (512),
// and 1 or 2 encoder layers (the engine's constants do not list that limit).
const S2S = DEFAULTS.seq2seq.model;
const PROPS = [
  { name: 'task', type: 'enum', values: [...TEXT_TASKS, ...IMAGE_TASKS, 'transformer'], def: S2S.task },
  { name: 'alphabet', type: 'enum', values: ['digits', 'letters'], def: S2S.alphabet },
  { name: 'minLength', type: 'int', min: 1, max: 30, def: S2S.minLength },
  {
    name: 'maxLength', type: 'int', min: 1, max: 30, def: (s) => Math.max(S2S.maxLength, s.minLength),
    check: (v, s) => (v < s.minLength ? `is below Min length (${s.minLength})` : null),
  },
  { name: 'cell', type: 'enum', values: ['gru', 'lstm', 'rnn'], def: S2S.cell },
  { name: 'bidirectional', type: 'bool', def: S2S.bidirectional },
  { name: 'layers', type: 'int', min: 1, max: 2, def: S2S.layers },
  { name: 'embed', type: 'int', min: 2, max: 128, def: S2S.embed },
  { name: 'hidden', type: 'int', min: 4, get max() { return limit('maxHidden', 'seq2seq', 'vision'); }, def: S2S.hidden },
  { name: 'attention', type: 'enum', values: ATTENTIONS, def: S2S.attention },
  // any positive rate the engine takes: one that makes training diverge is shown as such
  { name: 'lr', type: 'number', min: 1e-6, max: 1e30, def: DEFAULTS.seq2seq.train.lr },
  { name: 'batch', type: 'int', min: 1, get max() { return limit('maxBatch', 'seq2seq', 'vision'); }, def: S2S.batch },
  { name: 'seed', type: 'int', min: 0, max: 2 ** 31 - 1, def: S2S.seed },
  { name: 'start', type: 'enum', values: STARTS, def: 'pretrained' },
  { name: 'speed', type: 'int', min: -4, max: 100, def: 0, check: (v) => (SPEEDS.includes(v) ? null : `must be one of ${SPEEDS.join(', ')}`) },
  { name: 'beam', type: 'int', min: 1, get max() { return limit('maxBeam', 'seq2seq'); }, def: 1 },
  { name: 'compare', type: 'enum', values: ['none', 'dot', 'additive', 'general', 'cosine', 'scaled_dot'], def: 'none' },
  { name: 'compareSteps', type: 'int', min: 25, max: 5000, def: 300 },
  { name: 'mode', type: 'enum', values: IMAGE_MODES, def: DEFAULTS.vision.model.mode },
  // kept when it does not apply (soft mode, multi): the model then reads the grid and the control says why
  { name: 'sensor', type: 'enum', values: SENSORS, def: DEFAULTS.vision.model.sensor },
  // the image model's base defaults (defaults.js) on every task: the cluttered headline's wider
  // layers cost more a step than the lab's live training wants
  { name: 'channels', type: 'enum', values: CHANNELS, def: DEFAULTS.vision.model.channels.join(',') },
  { name: 'clutter', type: 'int', min: 0, get max() { return limit('maxClutter', 'vision'); }, def: DEFAULTS.vision.model.clutter },
  { name: 'modeSteps', type: 'int', min: 25, max: 5000, def: 200 },
  { name: 'image', type: 'int', min: 1, max: 2 ** 31 - 1, def: 1 }, // the test image shown: its draw's seed
  { name: 'text', type: 'string', maxLength: 64, pattern: /^[^\x00-\x1f\x7f]*$/u, def: '' }, // any text without control characters
  ...TRANSFORMER_PROPS,
];

const MIGRATIONS = {
  /** v1 -> v2: decode=greedy|beam with beam=2..16 becomes beam=1..16 (1 = greedy). */
  1(entries) {
    const e = Object.assign(Object.create(null), entries);
    if (e.decode === 'beam') e.beam ??= '3';
    else delete e.beam;
    delete e.decode;
    return e;
  },
};

export const codec = createUrlState({ version: 2, props: PROPS, migrations: MIGRATIONS });

/** The property table (name -> property), for the controls. */
export const PROPERTIES = Object.fromEntries(PROPS.map((p) => [p.name, p]));

/** createSeq2Seq options for a state (pairs text comes from the page, not the URL). */
export function modelOptions(state, attention = state.attention, pairs = undefined) {
  const o = {
    task: state.task, cell: state.cell, bidirectional: state.bidirectional, layers: state.layers,
    embed: state.embed, hidden: state.hidden, attention, seed: state.seed, batch: state.batch,
  };
  if (SEQUENCE_TASKS.includes(state.task)) {
    Object.assign(o, { alphabet: state.alphabet, minLength: state.minLength, maxLength: state.maxLength });
  }
  if (state.task === 'pairs') o.pairs = pairs ?? '';
  return o;
}

/**
 * createVisionModel options for a state (an image task). The model in hand (no `mode`
 * given) reads with the state's sensor (sensorOf); the soft / hard / none experiment names
 * each `mode` and its hard model always samples grid cells: the experiment compares the
 * three ways of reading the same feature grid at the same steps, and the retina, with no
 * CNN and several glimpses, needs many more steps than the experiment's budget to learn.
 */
export function visionOptions(state, mode) {
  const retina = mode === undefined && sensorOf(state) === 'retina';
  mode ??= state.mode;
  const o = {
    task: state.task, cell: state.cell, hidden: state.hidden,
    attention: mode === 'none' ? 'none' : DEFAULTS.vision.model.attention, mode: mode === 'hard' ? 'hard' : 'soft', seed: state.seed,
    batch: state.batch,
  };
  // the retina has no CNN: its patches go straight to the glimpse network; on the grid a one-digit
  // task reads one glimpse in every mode, so the experiment's models differ only in how they attend
  // (the engine's cluttered hard model reads two: defaults.js)
  if (!retina) o.channels = state.channels.split(',').map(Number);
  if (!retina && state.task !== 'multi') o.steps = DEFAULTS.vision.lab.model.steps;
  if (mode === 'hard') o.sensor = retina ? 'retina' : 'grid';
  if (state.task === 'cluttered') o.clutter = state.clutter;
  return o;
}

/** An image model's reading in words: "soft attention", "hard attention through the retina". */
export const imageReading = (settings) => `${settings.mode} attention${sensorOf(settings) === 'retina' ? ' through the retina' : ''}`;

/** The lab's attention mode of an image model's config. */
export const modeOf = (config) => (config.attention === 'none' ? 'none' : config.mode);

/** train() options for a state. */
export const trainOptions = (state) => ({ batch: state.batch, lr: state.lr });

/** How the lab trains its image models where the engine's defaults differ (defaults.js, vision.lab: why). */
export const IMAGE_TRAIN = DEFAULTS.vision.lab.train;

/** The settings that define the model: changing one makes a new model. */
export const MODEL_KEYS = ['task', 'alphabet', 'minLength', 'maxLength', 'cell', 'bidirectional', 'layers', 'embed', 'hidden', 'attention', 'seed',
  'mode', 'sensor', 'channels', 'clutter'];
