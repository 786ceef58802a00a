// The lab's Transformer family (no DOM): a decoder-only transformer with every
// head watched, as a family adapter the one session and the page drive
// (family.js lists the adapter's fields). Its timeline is a time-lapse: after
// every chunk it records a frame, the inspected input's attention maps and
// logit lens as the model had them, and the heads' previous-token and
// induction scores, measured every SCORE_EVERY steps (a few milliseconds
// each), and the model's weights (its saved bytes), so that an input typed
// later is read by the model as it was at that step. The lab's transformers
// are small (the default one is some 165 KB), so 120 frames of weights cost a
// few MB; a model past FRAME_WEIGHTS_MAX keeps in its frames only what was
// shown. Frames are thinned as the other families' snapshots are (dense at the
// start, where heads form), and their weights too when they pass WEIGHTS_BUDGET.
// The views are transformer.js.
import { pickPretrainedTransformer, transformerSettings } from './pretrained.js';
import { codec, PROPERTIES } from './state.js';
import { savedText } from './transformer-file.js';
import { TF_MODEL_KEYS, TRANSFORMER_PROPS, defaultSteps, headName, transformerOptions, transformerTrainOptions } from './transformer-state.js';
import { thinIndex, thinSnapshots } from './session.js';
import { inductionFormed, readHeadScores } from '../engine/induction.js';
import { formedMarks } from './transformer-scores.js';

/** Frames kept for the time-lapse (each holds layers × heads maps of the input, and the weights). */
const MAX_FRAMES = 120;
/** A model whose saved bytes pass this (some 500,000 parameters) keeps no weights in its frames. */
const FRAME_WEIGHTS_MAX = 2 << 20;
/** The frames' weights together stay under this: past it, the weights of the frames thinning would drop go first. */
const WEIGHTS_BUDGET = 48 << 20;
/**
 * Steps between two measures of the heads' scores: every SCORE_EVERY steps,
 * more often at first (half the steps done, at least 10), where little has been seen.
 */
export const SCORE_EVERY = 100;
const scoreGap = (step) => Math.min(SCORE_EVERY, Math.max(10, Math.round(step / 2)));
/** Induction sequences the scores are measured on. */
const SCORE_COUNT = 32;
/** Test sequences behind the accuracy beside Train and the ablation readout (some 1,400 scored tokens for induction). */
export const EVAL_COUNT = 64;

/** The pretrained transformer button's fields: any one of the task, whatever its sizes. */
export const ANY_SIZE = new Set();
/** The longest text the link (and so the text box) holds: the tfText property's. */
const TEXT_MAX = PROPERTIES.tfText.maxLength;

/** The note under the text box for a loaded model's text (null: none needed). */
function textNote(text, name) {
  if (text === null || text === '') return `${name} holds no text, so the box keeps the text you had; a new model from these settings learns that one.`;
  if (text.length > TEXT_MAX) {
    return `${name} was trained on a text of ${text.length.toLocaleString('en')} characters; the box shows its first `
      + `${TEXT_MAX.toLocaleString('en')}, which a new model from these settings would learn. The loaded model keeps its whole text.`;
  }
  return null;
}

/**
 * Where an induction head formed in the session's run (inductionFormed), with the
 * scores and the loss as they were when it was first seen: kept from then on, so
 * that what is said of that moment is never rewritten by the steps after it (the
 * loss curve is thinned as it grows). null: none has formed yet.
 */
export const formedOf = (session) => {
  session.formed ??= inductionFormed(session.scores, session.losses);
  return session.formed;
};

/** A frame of the time-lapse: the scores when due, and the input's maps (none if it cannot be read). */
async function record(session, bytes) {
  const last = session.scores.at(-1);
  if (!last || session.steps - last.step >= scoreGap(last.step)) {
    const heads = await session.read('headScores', { options: { count: SCORE_COUNT } });
    session.scores.push({ step: session.steps, heads });
  }
  const view = session.input ? await session.read('inspect', { input: session.input, options: { ablate: [] } }).catch(() => null) : null;
  const same = session.frames.at(-1)?.step === session.steps;
  // a model too large to save every chunk keeps only what was shown
  const small = 4 * (session.info.config.parameters ?? Infinity) <= FRAME_WEIGHTS_MAX;
  const frame = { step: session.steps, input: session.input, view, scores: session.scores.at(-1), bytes: same ? session.frames.at(-1).bytes : small ? bytes : undefined };
  if (same) session.frames[session.frames.length - 1] = frame;
  else session.frames.push(frame);
  while (session.frames.length > MAX_FRAMES) session.frames = thinSnapshots(session.frames);
  session.frameBytes = session.frames.reduce((n, f) => n + (f.bytes?.length ?? 0), 0);
  for (let kept = session.frames.filter((f) => f.bytes); session.frameBytes > WEIGHTS_BUDGET && kept.length > 2;) {
    const [gone] = kept.splice(thinIndex(kept), 1);
    session.frameBytes -= gone.bytes.length;
    delete gone.bytes;
  }
}

export const transformerFamily = {
  name: 'transformer',
  noun: 'transformer',
  tasks: ['transformer'],
  kinds: ['transformer'],
  modelKeys: TF_MODEL_KEYS,
  linkKeys: ['task', 'seed', 'start', 'speed', ...TRANSFORMER_PROPS.map((p) => p.name)],
  viewKeys: [],
  create: (state) => ({ action: 'createTransformer', options: transformerOptions(state) }),
  trainOptions: transformerTrainOptions,
  evaluation: { split: 'test', count: EVAL_COUNT, ablate: [] },
  accuracy: (ev) => ev.accuracy,
  /**
   * The frames [{ step, input, view: inspect(input) | null, scores, bytes | undefined }], the scores [{ step, heads }],
   * the inspected input, where an induction head formed (formedOf).
   */
  fresh: () => ({ frames: [], frameBytes: 0, scores: [], input: '', formed: null }),
  /** A run stops by itself at the steps the task's defaults train (where its schedule ends), Continue trains as many more. */
  runLength: defaultSteps,
  /** The run bar's word on the run: where an induction head formed, and where to see it (null: nothing yet). */
  runNote(session) {
    const f = formedOf(session);
    return f ? { text: `an induction head formed: ${headName(f)}, step ${f.step.toLocaleString('en')}`, href: '#tf-scores-card', title: 'See it on the charts: the heads\' scores and the loss' } : null;
  },
  record,
  pretrained: pickPretrainedTransformer,
  /**
   * The transformer settings a pretrained model must match: the ones `given`
   * names (the link's, the one changed) and every one a link or the learner set
   * away from its default, so that opening the family on the default settings
   * opens the pretrained model, and chosen sizes are kept.
   */
  pickFields(given, state) {
    if (given === ANY_SIZE) return given;
    const defaults = codec.defaults();
    return new Set([...given, ...TF_MODEL_KEYS.filter((k) => state[k] !== defaults[k])]);
  },
  buttonFields: ANY_SIZE,
  /** A new task has other sequences: the inspected input goes back to a test example. */
  settle(state, changed) {
    if (changed === 'tfTask') state.tfInput = '';
  },
  /**
   * A task whose sequences are longer than the context (dates): the context
   * it needs, which the engine's refusal names ("context: 32; the 'dates'
   * task needs at least 39"), so the task chosen stays and Context grows to it.
   */
  repair(state, err) {
    const m = /context: (\d+); the '(\w+)' task needs at least (\d+)/.exec(String(err?.message ?? ''));
    const need = Number(m?.[3]);
    if (!m || Number(m[1]) !== state.tfContext || !(need > state.tfContext && need <= PROPERTIES.tfContext.max)) return null;
    return {
      name: 'tfContext', value: need,
      say: `The ${m[2]} task needs a Context of at least ${need} tokens (its longest sequence), so Context is now ${need} instead of ${state.tfContext}.`,
    };
  },
  /** A loaded transformer's settings, with its text in the text box (a 'text' model's), or a note saying why not. */
  loaded(made, bytes, name) {
    const settings = { ...transformerSettings(made.config), start: 'scratch', tfAblate: [], tfInput: '' };
    let note = null;
    if (made.config.task === 'text') {
      const text = savedText(bytes);
      note = textNote(text, name);
      // cut at a character, not inside a surrogate pair (the link could not hold half of one)
      if (text) settings.tfText = text.slice(0, TEXT_MAX).replace(/[\uD800-\uDBFF]$/, '');
    }
    return { settings, note };
  },
  /** The default transformer's settings, for a link whose transformer cannot be made. */
  fallback(state) {
    const defaults = codec.defaults();
    const s = { ...state, tfAblate: [] };
    for (const k of TF_MODEL_KEYS) s[k] = defaults[k];
    return s;
  },
  /**
   * A pretrained model's recorded head scores (history.scores: [{ step, heads: [layer][head] { previousToken,
   * induction } }]) as the run's, when they read as the model's: false when they do not.
   */
  history(session, h) {
    const { layers, heads } = session.info.config;
    const scores = readHeadScores(h.scores, layers, heads, session.steps);
    if (!scores) return false;
    session.scores = scores;
    session.formed = null; // read again from the recorded run
    return true;
  },
  /** Where an induction head formed, marked on the loss and accuracy curves too. */
  marks: (session) => formedMarks(formedOf(session)),
  fileName: (s, steps) => `attnlab-transformer-${s.tfTask}-${s.tfLayers}x${s.tfHeads}-step${steps}.tfm`,
  progressLabel: () => 'transformer',
  modelName: (s) => `transformer on ${s.tfTask}, ${s.tfLayers} × ${s.tfHeads} heads, dModel ${s.tfDModel}${s.tfDFF ? `, dFF ${s.tfDFF}` : ', attention only'}`,
  pretrainedName: (s) => `transformer on ${s.tfTask}, ${s.tfLayers} layers × ${s.tfHeads} heads, dModel ${s.tfDModel}${s.tfDFF ? '' : ', attention only'}`,
  noData: 'The data of this task could not be downloaded, so there is no transformer yet.',
};
