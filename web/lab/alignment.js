// The alignment panel: the output of the model for the input in the box, and
// its attention weights as the shared heatmap (output characters × input
// characters, square cells of bounded size), or, when there is nothing to
// draw, a sentence saying why (no attention; an input the task cannot read).
// Also the timeline slider over the session's snapshots.
import { byId, setHidden, setText } from '../ui/dom.js';
import { fixed } from '../ui/format.js';
import { createHeatmap } from '../ui/heatmap.js';
import { UNTRAINED_NOTE } from './model-status.js';

const shown = (ch) => (ch === ' ' ? '␣' : ch);
const MAX_CELL = 40;

export const NO_ATTENTION = 'No attention, so no alignment to show: the decoder starts from the encoder\'s last state, '
  + 'one vector for the whole input, and then goes on from its own state alone: it never looks back at the input. '
  + 'Run the bottleneck experiment below to see what that costs on long inputs.';

/**
 * How anti-diagonal an alignment is: the mean weight that output step t puts
 * on input n-1-t (1 for a perfect reversal), over the steps before EOS.
 */
export function antiDiagonal(translation) {
  const { rows, cols, data } = translation.alignment;
  const steps = Math.min(rows, cols);
  if (!steps) return 0;
  let sum = 0;
  for (let t = 0; t < steps; t++) sum += data[t * cols + (cols - 1 - t)];
  return sum / steps;
}

export function createAlignmentView() {
  const output = byId('output');
  const message = byId('align-message');
  const readout = byId('align-readout');
  const note = byId('output-note');
  const caption = byId('align-caption');
  const map = createHeatmap({ id: 'alignment', label: 'Alignment of the output characters over the input characters', axes: '' });
  byId('align-map').append(map.el);

  const say = (text) => {
    setText(message, text);
    message.hidden = !text;
  };

  return {
    /**
     * Draws a translation { output, inputTokens, outputTokens, alignment } of the model at `step`
     * (`live`: the model as it is now, else a snapshot); `attention` 'none' explains instead of a map.
     */
    show(t, attention, { step = 0, live = true } = {}) {
      setText(output, t.output || '(empty)');
      setText(note, step === 0 ? UNTRAINED_NOTE : '');
      setHidden(note, step !== 0);
      const when = live ? `the model now (step ${step.toLocaleString('en')})` : `the model as it was at step ${step.toLocaleString('en')}`;
      setText(caption, `Attention weights of ${when}: rows are output characters ↓, columns input characters →.`);
      setHidden(caption, attention === 'none');
      byId('text').removeAttribute('aria-invalid');
      const none = attention === 'none';
      say(none ? NO_ATTENTION : '');
      map.el.hidden = none;
      if (none) {
        setText(readout, '');
        return;
      }
      const rowLabels = t.outputTokens.map(shown);
      const colLabels = t.inputTokens.map(shown);
      const { cols, data } = t.alignment;
      map.update(t.alignment, {
        rowLabels, colLabels, kind: 'unit', legend: 'attention weight α', maxCell: MAX_CELL, showValues: false,
        describe: (i, j) => ({
          title: `output ${i} '${rowLabels[i]}' ← input ${j} '${colLabels[j]}'`,
          lines: [`α = ${fixed(data[i * cols + j], 3)}`],
          value: data[i * cols + j],
        }),
        onHover: (i, j) => {
          setText(readout, i === null ? '' : `output ${i} '${rowLabels[i]}' attends to input ${j} '${colLabels[j]}': α = ${fixed(data[i * cols + j], 3)}`);
        },
      });
      map.el.dataset.antiDiagonal = antiDiagonal(t).toFixed(3);
    },
    /** No translation: clears the output and the map and says why. */
    fail(why) {
      setText(output, '–');
      setHidden(note, true);
      setHidden(caption, true);
      byId('text').setAttribute('aria-invalid', 'true');
      map.el.hidden = true;
      setText(readout, '');
      say(why);
    },
    /** Empties everything (a new model). */
    clear() {
      setText(output, '–');
      setHidden(note, true);
      setHidden(caption, true);
      byId('text').removeAttribute('aria-invalid');
      map.el.hidden = true;
      setText(readout, '');
      say('');
    },
  };
}

/** Replay: stops of the timeline per second (snapshots are densest at the start, so it slows down where the alignment forms). */
const REPLAY_PER_SECOND = 6;

/**
 * The timeline slider: one stop per snapshot, the last one live; Replay plays
 * it from the first snapshot to the live end. onScrub() after every move.
 */
export function createTimeline(onScrub) {
  const range = byId('timeline');
  const label = byId('timeline-label');
  const replay = byId('replay');
  let timer = 0;
  let snaps = [];
  const stop = () => {
    clearInterval(timer);
    timer = 0;
    setText(replay, '▶ Replay');
    replay.setAttribute('aria-pressed', 'false');
  };
  const labelAt = () => {
    const snap = snaps[Number(range.value)];
    const isLive = Number(range.value) >= Number(range.max);
    setText(label, snap && snaps.length > 1 ? `step ${snap.step}${isLive ? ' (live)' : ''}` : 'live');
    range.setAttribute('aria-valuetext', label.textContent);
  };
  range.addEventListener('input', () => {
    stop();
    labelAt();
    onScrub();
  });
  replay.addEventListener('click', () => {
    if (timer) { stop(); return; }
    if (snaps.length < 2) return;
    range.value = '0';
    labelAt();
    onScrub();
    setText(replay, '❚❚ Stop');
    replay.setAttribute('aria-pressed', 'true');
    timer = setInterval(() => {
      const next = Number(range.value) + 1;
      range.value = String(next);
      labelAt();
      onScrub();
      if (next >= Number(range.max)) stop();
    }, 1000 / REPLAY_PER_SECOND);
  });
  return {
    /** Index of the chosen snapshot (the last is the live model). */
    get index() { return Number(range.value); },
    get live() { return Number(range.value) >= Number(range.max); },
    /** Sets the number of snapshots; a slider at the live end stays there. */
    setSnapshots(snapshots) {
      const live = Number(range.value) >= Number(range.max);
      snaps = snapshots;
      range.max = String(Math.max(0, snapshots.length - 1));
      if (live) range.value = range.max;
      replay.disabled = snapshots.length < 2;
      labelAt();
    },
    stop,
  };
}
