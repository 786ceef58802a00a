// The engine's limits, as the lab's link and form read them: the bounds of the
// property table (state.js, transformer-state.js) that are the engine's are
// read from here, not typed again. The engine runs in the worker, so the page
// learns them from the worker's 'init' answer (the same tables as engineLimits()), and reads
// the link only after adoptLimits(). No DOM.
import { SEQ2SEQ_LIMITS, TRANSFORMER_LIMITS, VISION_LIMITS } from '../engine/constants.js';

/** { seq2seq, vision, transformer }: each engine's limits table, once adopted. */
const LIMITS = { seq2seq: null, vision: null, transformer: null };

/** The limits of a loaded engine (in Node; the worker's 'init' answers the same): what adoptLimits() takes. */
export function engineLimits() {
  return { seq2seq: { ...SEQ2SEQ_LIMITS }, vision: { ...VISION_LIMITS }, transformer: { ...TRANSFORMER_LIMITS } };
}

/** Takes the engine's limits (engineLimits(), through the worker's 'init'). */
export function adoptLimits(limits) {
  for (const k of Object.keys(LIMITS)) LIMITS[k] = Object.freeze({ ...limits[k] });
}

/**
 * The engine limit `name` of `engine` ('seq2seq', 'vision', 'transformer'); of
 * several engines, the smallest (a setting both read must suit both).
 * Undefined before adoptLimits(): the link is not read before then.
 */
export function limit(name, ...engines) {
  const values = engines.map((e) => LIMITS[e]?.[name]);
  return values.every(Number.isFinite) ? Math.min(...values) : undefined;
}
