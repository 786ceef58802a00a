// The progress panel: step, loss, accuracy, speed and time, and the loss and
// validation-accuracy curves (shared line charts) with their readouts.
import { drawChart } from '../ui/chart.js';
import { byId, setText } from '../ui/dom.js';
import { duration, fixed } from '../ui/format.js';

/** Captions of the panel for text models and for each image task. */
const LABELS = {
  text: { loss: 'Training loss (cross-entropy per character)', acc: 'Validation sequence accuracy', stat: 'Validation accuracy' },
  centered: { loss: 'Training loss (cross-entropy per digit)', acc: 'Test accuracy (digits read right)', stat: 'Test accuracy' },
  cluttered: { loss: 'Training loss (cross-entropy per digit)', acc: 'Test accuracy (digits read right)', stat: 'Test accuracy' },
  transformer: { loss: 'Training loss (cross-entropy per scored token)', acc: 'Test accuracy (scored tokens predicted right)', stat: 'Test accuracy' },
  multi: { loss: 'Training loss (cross-entropy per answer token)', acc: 'Test accuracy (whole answers read right)', stat: 'Test accuracy' },
};

export function createProgressView() {
  const lossChart = byId('loss-chart');
  const accChart = byId('acc-chart');
  const lossReadout = byId('loss-readout');
  const accReadout = byId('acc-readout');
  let lossCaption = LABELS.text.loss;

  // a model trained before (pretrained, or a file) plots from where this run began, not from step 0
  // marks: [{ x: step, label }] drawn across both (the family's, e.g. where an induction head formed)
  function charts(losses, accuracy, from = 0, marks = []) {
    const xMin = from || undefined;
    // ... over at least a hundred steps, not the one step between its first two points
    const last = Math.max(losses.at(-1)?.step ?? 0, accuracy.at(-1)?.step ?? 0);
    const xMax = from ? Math.max(from + 100, last) : undefined;
    drawChart(lossChart, [{ name: 'loss', color: '#c92a2a', points: losses }],
      { xLabel: 'step', yLabel: 'loss', yMin: 0, xMin, xMax, integerX: true, readout: lossReadout, marks });
    drawChart(accChart, [{ name: 'accuracy', color: '#2f56d6', points: accuracy }],
      { xLabel: 'step', yLabel: 'accuracy', yMin: 0, yMax: 1, xMin, xMax, integerX: true, readout: accReadout, marks });
  }

  return {
    /** Names the curves for text models ('text') or an image task. */
    label(kind) {
      const l = LABELS[kind] ?? LABELS.text;
      lossCaption = l.loss;
      setText(byId('loss-caption'), l.loss);
      setText(byId('acc-caption'), l.acc);
      setText(byId('acc-label'), l.stat);
    },
    /** Shows a session's numbers and curves. */
    update(session) {
      setText(byId('stat-step'), String(session.steps));
      const last = session.losses[session.losses.length - 1];
      setText(byId('stat-loss'), last ? fixed(last.value, 4) : '–');
      const acc = session.accuracy[session.accuracy.length - 1];
      setText(byId('stat-acc'), acc ? `${fixed(acc.value * 100, 1)}%` : '–');
      setText(byId('stat-speed'), session.examplesPerSecond ? Math.round(session.examplesPerSecond).toLocaleString('en') : '–');
      setText(byId('stat-time'), duration(session.trainSeconds));
      charts(session.losses, session.accuracy, session.recorded ? 0 : session.startSteps, session.family?.marks?.(session) ?? []);
      // an empty chart says why it is empty; a recorded run in means of steps says so
      const means = session.recorded && session.recordedEvery > 1
        ? ` (to step ${session.startSteps.toLocaleString('en')}, the run recorded ahead of time: each point the mean of ${session.recordedEvery} steps)` : '';
      setText(byId('loss-caption'), session.losses.length ? `${lossCaption}${means}` : `${lossCaption}: none yet, press ▶ Train`);
    },
    /** Empties every number, curve and readout (a new model). */
    clear() {
      setText(lossReadout, '');
      setText(accReadout, '');
      this.update({ steps: 0, losses: [], accuracy: [], examplesPerSecond: 0, trainSeconds: 0 });
    },
  };
}
