// The soft / hard / none experiment: three image models made from the same
// settings and seed, differing only in how they attend, trained side by side
// (session.runImageModes); their test accuracy curves share one chart, drawn
// as they grow, with a legend. A second press of Run stops after the chunk.
import { drawChart, drawLegend } from '../ui/chart.js';
import { byId, setText } from '../ui/dom.js';
import { fixed } from '../ui/format.js';
import { createRunButton } from './experiment.js';
import { runImageModes } from './session.js';

export const MODE_SERIES = [
  { mode: 'soft', name: 'soft attention', color: '#2f56d6' },
  { mode: 'hard', name: 'hard attention', color: '#c92a2a' },
  { mode: 'none', name: 'none (average pooling)', color: '#5c636e' },
];

/**
 * Run asks `setup()` for { client, options(mode) -> createVisionModel options, steps, batch, lr }
 * (or null) and reports errors to `onError`.
 */
export function createModesView({ setup, onError }) {
  const chart = byId('modes-chart');
  const legend = byId('modes-legend');
  const readout = byId('modes-readout');

  function draw(curves) {
    const series = MODE_SERIES.map((s, k) => ({ name: s.name, color: s.color, points: curves[k] ?? [] }));
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
      draw(r.curves);
      const last = r.curves.map((c, k) => `${MODE_SERIES[k].name} ${fixed(100 * (c[c.length - 1]?.value ?? 0), 1)}%`);
      const steps = r.curves[0][r.curves[0].length - 1]?.step ?? 0;
      setText(readout, `After ${steps} steps, test accuracy: ${last.join(', ')}.`);
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
