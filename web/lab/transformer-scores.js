// The heads over training: each head's previous-token score and induction score
// (headScores, measured every SCORE_EVERY steps) as two line charts, one line per
// head, beside the loss curve, where the induction bump shows as a jump, marked
// where a head formed (inductionFormed, web/engine/induction.js, as the run kept it when first seen), with a
// sentence saying when and what the loss did meanwhile, and a readout naming the head with the highest score of each
// kind, called a head of that kind only from a score of 0.5 (as Learn's chapter 9 does).
import { FORMED } from '../engine/induction.js';
import { drawChart, drawLegend } from '../ui/chart.js';
import { byId, setText } from '../ui/dom.js';
import { fixed } from '../ui/format.js';
import { headName } from './transformer-state.js';

/** One colour per head of a layer; layers differ by shade (dark, then light). */
const COLORS = ['#2f56d6', '#c92a2a', '#2b8a3e', '#9c4a00', '#5f3dc4', '#0b7285', '#a61e4d', '#495057'];
const LIGHT = ['#7c95e8', '#e07b7b', '#6fbf7f', '#d08a4a', '#9c85e0', '#4fb0c0', '#d9739a', '#8d959e'];
const colorOf = (layer, head) => ((layer % 2 ? LIGHT : COLORS)[(head + Math.floor(layer / 2)) % COLORS.length]);

/** A score from which the readout calls a head a previous-token or an induction head. */
const HEAD_SCORE = 0.5;

/** The head with the largest `key` score in `heads` ([layer][head]). */
function strongest(heads, key) {
  let best = null;
  heads.forEach((row, layer) => row.forEach((s, head) => {
    if (!best || s[key] > best.value) best = { layer, head, value: s[key] };
  }));
  return best;
}

/** The sentence on a formed head (or on none yet). */
export function formedSentence(formed, layers) {
  if (layers < 2) return 'An induction head needs two layers: one to write the previous token into each position, one to look it up.';
  if (!formed) return `No induction head has formed yet: a head of layer 1 or later counts as formed when its induction score passes ${FORMED}.`;
  const f = formed;
  const loss = f.lossFrom !== null && f.lossTo !== null ? `, while the training loss fell from ${fixed(f.lossFrom, 2)} to ${fixed(f.lossTo, 2)}` : '';
  return `Layer ${f.layer}, head ${f.head} (${headName(f)}) formed at step ${f.step.toLocaleString('en')}: its induction score rose from `
    + `${fixed(f.fromScore, 2)} at step ${f.fromStep.toLocaleString('en')} to ${fixed(f.score, 2)}${loss}.`;
}

/** The mark of a formed head on a step axis ([] when none). */
export const formedMarks = (formed) => (formed ? [{ x: formed.step, label: `${headName(formed)} formed` }] : []);

export function createScoresView() {
  const prev = byId('tf-prev-chart');
  const ind = byId('tf-ind-chart');
  const legend = byId('tf-scores-legend');
  const readout = byId('tf-scores-readout');
  const formedText = byId('tf-formed');

  function series(points, key) {
    const [first] = points;
    if (!first) return [];
    return first.heads.flatMap((row, layer) => row.map((_, head) => ({
      name: headName({ layer, head }), color: colorOf(layer, head),
      points: points.map((p) => ({ step: p.step, value: p.heads[layer][head][key] })),
    })));
  }

  return {
    /** Draws the scores measured so far ([{ step, heads }]), marking where an induction head formed (`formed`: inductionFormed's, kept by the run; null: none). */
    update(points, formed = null) {
      const p = series(points, 'previousToken');
      const marks = formedMarks(formed);
      drawChart(prev, p, { xLabel: 'step', yLabel: 'previous-token score', yMin: 0, yMax: 1, integerX: true, readout, marks });
      drawChart(ind, series(points, 'induction'), { xLabel: 'step', yLabel: 'induction score', yMin: 0, yMax: 1, integerX: true, readout, marks });
      drawLegend(legend, p);
      const last = points.at(-1);
      setText(formedText, last ? formedSentence(formed, last.heads.length) : '');
      if (!last) { setText(readout, ''); return; }
      const [a, b] = ['previousToken', 'induction'].map((k) => strongest(last.heads, k));
      const verdict = (s, kind) => (s.value >= HEAD_SCORE ? `${kind === 'induction' ? 'an' : 'a'} ${kind} head` : `below ${HEAD_SCORE}: no clear ${kind} head yet`);
      setText(readout, `At step ${last.step.toLocaleString('en')}: the highest previous-token score is ${headName(a)}’s (${fixed(a.value, 2)}, ${verdict(a, 'previous-token')}), `
        + `the highest induction score ${headName(b)}’s (${fixed(b.value, 2)}, ${verdict(b, 'induction')}).`);
    },
    clear() {
      this.update([], null);
    },
  };
}
