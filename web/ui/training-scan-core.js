// "Pythia's training, by step", without the DOM: which training steps a scan
// reads (a list the reader edits, kept in the link as ?steps=1000,2000,…), the
// in-context-learning score of Olsson et al. (2022) from a model's losses at
// two positions of a text, the passages of text it is read on, the strongest
// heads of a scan, and the log-scale step axis the figures share.
//   parseSteps(text)                 -> { steps, problems: [text] }   (steps: known, sorted, once each)
//   stepsText(steps)                 -> '1000, 2000, …'
//   readScanLink(search)             -> { steps, problems }            (?steps=; absent: the default)
//   scanLink(search, steps)          -> the query with ?steps= set (the default left out)
//   passages(ids, { count, length }) -> up to count Int32Arrays of length tokens, one after another
//   positionLoss(evaluate, ids, t)   -> the loss of token t given the t before it
//   iclScore(evaluate, passages)     -> { score, late, early, count }
//   iclNeeds(context)                -> null, or why the score cannot be read
//   strongestHeads(rows, key, k)     -> the k heads whose score peaks highest
//   stepX(step), stepTicks(max)      -> the log axis
import { PYTHIA_STEPS } from './model-link.js';

/** The steps a scan reads unless the reader or the link says otherwise: around the phase change, and the last. */
export const DEFAULT_SCAN_STEPS = Object.freeze([1000, 2000, 4000, 8000, 16000, 143000]);
/** At most this many steps a scan: each is a whole checkpoint fetched (Pythia-70M's are 166 MB). */
export const MAX_SCAN_STEPS = 24;
/**
 * Olsson et al. (2022): the in-context-learning score is the loss at the 500th token of a
 * context minus the loss at the 50th, averaged over texts. Positions here count from 0: token
 * 500 is predicted from the 500 before it, so a passage is 501 tokens.
 */
export const ICL_EARLY = 50;
export const ICL_LATE = 500;
export const ICL_LENGTH = ICL_LATE + 1;
/** Passages of the text an in-context-learning score is averaged over. */
export const ICL_PASSAGES = 4;

/** A step as the reader may write it: 1000, 1,000 is not (a comma separates), 4k, step4000. */
function readStep(word) {
  const m = /^(?:step)?(\d+(?:\.\d+)?)(k?)$/i.exec(word);
  if (!m) return null;
  const n = Number(m[1]) * (m[2] ? 1000 : 1);
  return Number.isInteger(n) ? n : null;
}

/**
 * The steps in `text` (separated by commas, spaces or semicolons), each one Pythia saved
 * (step0, the powers of two to 512, every 1,000 to 143,000), sorted, each once. A word that
 * is no step, or a step Pythia did not save, is left out with a problem naming it.
 */
export function parseSteps(text) {
  const problems = [];
  const steps = new Set();
  const words = String(text ?? '').slice(0, 2000).split(/[\s,;]+/).filter(Boolean);
  for (const word of words) {
    const n = readStep(word);
    if (n === null) problems.push(`"${word.slice(0, 20)}" is not a step`);
    else if (!PYTHIA_STEPS.includes(n)) problems.push(`step ${n.toLocaleString('en')} was not saved (Pythia saved step 0, 1, 2, 4, … 512, then every 1,000 to 143,000)`);
    else steps.add(n);
  }
  const sorted = [...steps].sort((a, b) => a - b);
  if (sorted.length > MAX_SCAN_STEPS) problems.push(`${sorted.length} steps are more than a scan reads (${MAX_SCAN_STEPS}): the first ${MAX_SCAN_STEPS} are kept`);
  return { steps: sorted.slice(0, MAX_SCAN_STEPS), problems };
}

export const stepsText = (steps) => steps.join(', ');
export const revisionOf = (step) => `step${step}`;

const sameSteps = (a, b) => a.length === b.length && a.every((s, i) => s === b[i]);

/** The link's step list (?steps=1000,2000): absent, empty or with nothing usable, the default, with why. */
export function readScanLink(search) {
  const value = new URLSearchParams(search).get('steps');
  if (value === null) return { steps: [...DEFAULT_SCAN_STEPS], problems: [] };
  const { steps, problems } = parseSteps(value);
  if (steps.length === 0) return { steps: [...DEFAULT_SCAN_STEPS], problems: [...problems, 'the link names no step Pythia saved: the default steps are chosen'] };
  return { steps, problems };
}

/** search with ?steps= set to steps (left out when they are the default). */
export function scanLink(search, steps) {
  const q = new URLSearchParams(search);
  if (sameSteps(steps, DEFAULT_SCAN_STEPS)) q.delete('steps');
  else q.set('steps', steps.join(','));
  const text = q.toString().replace(/%2C/gi, ',').replace(/%2F/gi, '/');
  return text ? `?${text}` : '';
}

/** Up to `count` passages of `length` tokens cut from ids one after another (a shorter text gives fewer). */
export function passages(ids, { count = ICL_PASSAGES, length = ICL_LENGTH } = {}) {
  const out = [];
  for (let at = 0; out.length < count && at + length <= ids.length; at += length) out.push(Int32Array.from(ids.subarray ? ids.subarray(at, at + length) : ids.slice(at, at + length)));
  return out;
}

/**
 * The loss of token t of ids given the t tokens before it, from `evaluate(ids)`, which
 * answers the mean loss of every token of ids given those before it (the engine's
 * evaluate({ ids })): with M(k) the mean over the k predictions of ids[0..k],
 * loss_t = t·M(t) − (t − 1)·M(t − 1). Two prefixes cost about twice one forward pass,
 * where inspect({ logits: true }) would cost one but hand over 501 × 50,304 logits
 * (100 MB for Pythia) and every head's 501 × 501 attention from the worker per passage:
 * the prefixes move two numbers. The engine sums the losses in double, so the
 * difference keeps the token's loss to float32's rounding of the forward pass.
 */
export async function positionLoss(evaluate, ids, t) {
  if (!Number.isInteger(t) || t < 1 || t >= ids.length) throw new RangeError(`positionLoss: position ${t} is not in 1..${ids.length - 1}`);
  const upTo = (k) => (ids.subarray ? ids.subarray(0, k + 1) : ids.slice(0, k + 1));
  const withT = await evaluate(upTo(t));
  if (t === 1) return withT;
  const without = await evaluate(upTo(t - 1));
  return t * withT - (t - 1) * without;
}

/**
 * Olsson et al.'s in-context-learning score over passages of ICL_LENGTH tokens: the mean
 * over passages of (loss at token 500 − loss at token 50), in nats; negative when the
 * model predicts later tokens of a text better than early ones. `late` and `early` are
 * the two means. onPassage(i) hears each passage start.
 */
export async function iclScore(evaluate, texts, { onPassage = () => {} } = {}) {
  if (texts.length === 0) throw new RangeError('iclScore: no passage to read');
  let late = 0, early = 0;
  for (let i = 0; i < texts.length; i++) {
    onPassage(i);
    late += await positionLoss(evaluate, texts[i], ICL_LATE);
    early += await positionLoss(evaluate, texts[i], ICL_EARLY);
  }
  late /= texts.length;
  early /= texts.length;
  return { score: late - early, late, early, count: texts.length };
}

/** Why a model of this context cannot have the score (null: it can). */
export const iclNeeds = (context) => (context >= ICL_LENGTH ? null
  : `the in-context-learning score needs ${ICL_LENGTH} tokens of context (a loss at token ${ICL_LATE}); this model reads ${context}`);

/**
 * The k heads whose `key` score ('induction' or 'previousToken') peaks highest over a scan's
 * rows ([{ step, scores: [layer][head] → { previousToken, induction } }]), highest first:
 * [{ layer, head, name: 'L1H0', peak }].
 */
export function strongestHeads(rows, key, k = 4) {
  const peaks = new Map();
  for (const { scores } of rows) {
    scores.forEach((layer, l) => layer.forEach((s, h) => {
      const name = `L${l}H${h}`;
      const was = peaks.get(name);
      if (!was || s[key] > was.peak) peaks.set(name, { layer: l, head: h, name, peak: s[key] });
    }));
  }
  return [...peaks.values()].sort((a, b) => b.peak - a.peak || a.layer - b.layer || a.head - b.head).slice(0, k);
}

/** A step on the log axis: log10(1 + step), so that step 0 sits at the axis's start. */
export const stepX = (step) => Math.log10(1 + step);

/** The axis's ticks up to `max`: 0, 1, 10, 100, … (each a power of ten, or 0). */
export function stepTicks(max) {
  const ticks = [0];
  for (let p = 1; p <= Math.max(1, max) * 10; p *= 10) {
    ticks.push(p);
    if (p >= max) break;
  }
  return ticks;
}

/** A tick's label: 0, 1, 10, 100, 1k, 10k, 100k. */
export const stepTickText = (v) => (v >= 1000 ? `${v / 1000}k` : String(v));
