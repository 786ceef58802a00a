// The soft / hard / none experiment: three image models made from the same
// settings and seed, differing only in how they attend, trained side by side
// (side-by-side.js runImageModes); their test accuracy curves share one chart, drawn
// as they grow, with a legend. At the end each model is measured on 1,000 test
// images, drawn as a 95% confidence interval (Wilson) at the last step, and the
// readout says which differences are larger than the intervals. A second press
// of Run stops after the chunk.
import { drawChart, drawLegend } from '../ui/chart.js';
import { byId, setText } from '../ui/dom.js';
import { fixed } from '../ui/format.js';
import { wilson } from '../engine/stats.js';
import { createRunButton } from './experiment.js';
import { runImageModes } from './side-by-side.js';

export const MODE_SERIES = [
  { mode: 'soft', name: 'soft attention', color: '#2f56d6' },
  { mode: 'hard', name: 'hard attention', color: '#c92a2a' },
  { mode: 'none', name: 'none (average pooling)', color: '#5c636e' },
];

/**
 * Run asks `setup()` for { client, options(mode) -> createVisionModel options, steps, batch, lr }
 * (or null) and reports errors to `onError`.
 */
const pct = (v) => `${fixed(100 * v, 1)}%`;

/**
 * The experiment's result in words: each model's accuracy on the final test images with its
 * 95% interval, then for each pair whether the intervals overlap (a difference inside the noise
 * of that many images) or not. ci: wilson() per MODE_SERIES entry.
 */
export function modesVerdict(steps, ci) {
  const each = ci.map((c, k) => `${MODE_SERIES[k].name} ${pct(c.p)} (95% interval ${pct(c.lo)} to ${pct(c.hi)})`);
  const pairs = [];
  for (let a = 0; a < ci.length; a++) {
    for (let b = a + 1; b < ci.length; b++) {
      const apart = ci[a].lo > ci[b].hi || ci[b].lo > ci[a].hi;
      pairs.push(`${MODE_SERIES[a].mode} vs ${MODE_SERIES[b].mode}: ${apart ? 'the intervals do not overlap, a real difference' : 'the intervals overlap, a difference within the noise'}`);
    }
  }
  return `After ${steps} steps, on ${ci[0].n.toLocaleString('en')} test images: ${each.join(', ')}. ${pairs.join('; ')}. `
    + 'The bars at the last step are these intervals; the curves are measured on 200 images, so they wobble more.';
}

export function createModesView({ setup, onError }) {
  const chart = byId('modes-chart');
  const legend = byId('modes-legend');
  const readout = byId('modes-readout');

  function draw(curves, intervals = []) {
    const series = MODE_SERIES.map((s, k) => ({ name: s.name, color: s.color, points: curves[k] ?? [], interval: intervals[k] }));
    drawChart(chart, series, { xLabel: 'step', yLabel: 'test accuracy', yMin: 0, yMax: 1, integerX: true, readout });
    drawLegend(legend, series);
  }

  const button = createRunButton({
    button: byId('run-modes'), bar: byId('modes-progress'), onError,
    async body({ shouldStop, dropped, onFraction }) {
      const job = setup();
      if (!job) return;
      setText(readout, '');
      const r = await runImageModes(job.client, MODE_SERIES.map((s) => job.options(s.mode)), {
        steps: job.steps, batch: job.batch, lr: job.lr, shouldStop,
        onProgress: ({ done, curves }) => {
          onFraction(done / job.steps);
          if (!dropped()) draw(curves);
        },
      });
      if (dropped()) return;
      const steps = r.curves[0][r.curves[0].length - 1]?.step ?? 0;
      const ci = r.final.map((ev) => wilson(Math.round(ev.sequenceAccuracy * ev.count), ev.count));
      draw(r.curves, ci.map((c) => ({ x: steps, lo: c.lo, hi: c.hi })));
      setText(readout, modesVerdict(steps, ci));
    },
  });

  return {
    get running() { return button.running; },
    /** Names the accuracy for the task: one digit, or a whole multi-digit answer. */
    label(task) {
      setText(byId('modes-caption'), `Test accuracy while training (${task === 'multi' ? 'whole answers' : 'digits'} read right)`);
    },
    /** Removes the last result (a new model or another task) and drops a run in progress. */
    clear() {
      button.cancel();
      chart.querySelector('svg')?.remove();
      legend.replaceChildren();
      setText(readout, '');
    },
  };
}
