// The bottleneck experiment panel: trains two models that differ only in their
// attention (through session.runComparison) and plots test sequence accuracy by
// input length, one curve each (shared line chart; its readout names the axis).
import { drawChart, drawLegend } from '../ui/chart.js';
import { byId, setText } from '../ui/dom.js';
import { createRunButton } from './experiment.js';
import { runComparison } from './side-by-side.js';

const COLORS = ['#2f56d6', '#c92a2a'];

/**
 * Run asks `setup()` for { client, optionsA, optionsB, names, steps, batch, lr }
 * (or null when the settings are not valid), and reports errors to `onError`.
 */
export function createBottleneckView({ setup, onError }) {
  const chart = byId('compare-chart');
  const legend = byId('compare-legend');
  const readout = byId('compare-readout');

  const button = createRunButton({
    button: byId('run-compare'), bar: byId('compare-progress'), onError,
    async body({ shouldStop, dropped, onFraction }) {
      const job = setup();
      if (!job) return;
      const r = await runComparison(job.client, job.optionsA, job.optionsB, {
        steps: job.steps, batch: job.batch, lr: job.lr, shouldStop,
        onProgress: ({ done }) => onFraction(done / job.steps),
      });
      if (dropped()) return;
      const series = r.byLength.map((rows, k) => ({
        name: `attention: ${job.names[k]}`, color: COLORS[k],
        points: rows.map((x) => ({ x: x.length, y: x.sequenceAccuracy })),
      }));
      const xs = series.flatMap((s) => s.points.map((p) => p.x));
      setText(readout, '');
      drawChart(chart, series, {
        xLabel: 'input length', yLabel: 'accuracy', xMin: Math.min(...xs), xMax: Math.max(...xs), yMin: 0, yMax: 1, integerX: true, readout,
      });
      drawLegend(legend, series);
    },
  });

  return {
    get running() { return button.running; },
    /** Removes the last result (a new model). */
    clear() {
      chart.querySelector('svg')?.remove();
      legend.replaceChildren();
      setText(readout, '');
    },
  };
}
