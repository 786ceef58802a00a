// An induction head over a run, read one way by the lab, Learn's chapter 9 and
// scripts/induction-plot.mjs: where one formed (inductionFormed), and a recorded
// run's head scores checked against the model they are said to be of (readHeadScores).
import { defaultsOf } from './defaults.js';

/** The induction score at which a head counts as formed: the induction task's headline (defaults.js). */
export const FORMED = defaultsOf('transformer', { task: 'induction' }).headline.induction;
/** Training steps whose mean loss stands for the loss at a step. */
export const LOSS_WINDOW = 20;

/** The mean loss of the `window` steps up to `step` ([{ step, value }]), or of the first ones for step 0; null: no losses. */
function lossAt(losses, step, window) {
  let near = losses.filter((p) => p.step <= step && p.step > step - window);
  if (!near.length) near = losses.slice(0, window);
  return near.length ? near.reduce((t, p) => t + p.value, 0) / near.length : null;
}

/**
 * Where an induction head formed in the scores measured so far ([{ step, heads: [layer][head] { induction } }]):
 * the first measurement at which a head of a layer past the first passes FORMED (the
 * highest, when several pass at once), the step its rise began (its last measurement
 * below FORMED / 4 before), its score then and at forming, and the loss (`losses`:
 * [{ step, value }]) then and at forming, the mean of the `window` steps up to each: every
 * step's training loss over LOSS_WINDOW steps, or (window 1) a test loss measured with the
 * scores: { layer, head, step, score, fromStep, fromScore, lossFrom, lossTo }. null: none has formed.
 */
export function inductionFormed(points, losses = [], window = LOSS_WINDOW) {
  for (const [k, p] of points.entries()) {
    let best = null;
    p.heads.forEach((row, layer) => row.forEach((sc, head) => {
      if (layer > 0 && sc.induction >= FORMED && (!best || sc.induction > best.score)) best = { layer, head, score: sc.induction };
    }));
    if (!best) continue;
    let from = 0;
    for (let j = k - 1; j >= 0; j--) {
      if (points[j].heads[best.layer][best.head].induction < FORMED / 4) { from = j; break; }
    }
    const start = points[from];
    return {
      layer: best.layer, head: best.head, step: p.step, score: best.score,
      fromStep: start.step, fromScore: start.heads[best.layer][best.head].induction,
      lossFrom: lossAt(losses, start.step, window), lossTo: lossAt(losses, p.step, window),
    };
  }
  return null;
}

/**
 * A recorded run's head scores ([{ step, heads: [layer][head] { previousToken, induction } }],
 * a models.json `history.scores`) as those of a model of `layers` × `heads`: every step a
 * whole number from 0 to maxStep, every score in 0..1. A clean copy (nothing else the
 * entries hold), or null when they do not read as that: a recorded run is input, not trusted.
 */
export function readHeadScores(scores, layers, heads, maxStep = Infinity) {
  const unit = (v) => Number.isFinite(v) && v >= 0 && v <= 1;
  const ok = Array.isArray(scores) && scores.every((p) => Number.isInteger(p?.step) && p.step >= 0 && p.step <= maxStep
    && Array.isArray(p.heads) && p.heads.length === layers
    && p.heads.every((row) => Array.isArray(row) && row.length === heads && row.every((sc) => unit(sc?.previousToken) && unit(sc?.induction))));
  if (!ok) return null;
  return scores.map((p) => ({ step: p.step, heads: p.heads.map((row) => row.map((sc) => ({ previousToken: sc.previousToken, induction: sc.induction }))) }));
}
