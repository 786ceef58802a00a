// The bottleneck experiment panel: trains two models that differ only in their
// attention (through session.runComparison) and plots test sequence accuracy by
// input length, one curve each (shared line chart; its readout names the axis).
import { drawChart, drawLegend } from '../ui/chart.js';
import { byId, setText } from '../ui/dom.js';
import { runComparison } from './session.js';

const COLORS = ['#2f56d6', '#c92a2a'];

/**
 * run() asks `setup()` for { client, optionsA, optionsB, names, steps, batch, lr }
 * (or null when the settings are not valid), and reports errors to `onError`.
 */
export function createBottleneckView({ setup, onError }) {
  const button = byId('run-compare');
  const bar = byId('compare-progress');
  const chart = byId('compare-chart');
  const legend = byId('compare-legend');
  const readout = byId('compare-readout');
  let running = false;

  async function run() {
    if (running) {
      running = false; // a second press stops it after the current chunk
      return;
    }
    const job = setup();
    if (!job) return;
    running = true;
    setText(button, 'Stop');
    bar.hidden = false;
    bar.value = 0;
    try {
      const r = await runComparison(job.client, job.optionsA, job.optionsB, {
        steps: job.steps, batch: job.batch, lr: job.lr, shouldStop: () => !running,
        onProgress: ({ done }) => { bar.value = done / job.steps; },
      });
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
    } catch (err) {
      onError(err);
    } finally {
      running = false;
      bar.hidden = true;
      setText(button, 'Run');
    }
  }

  button.addEventListener('click', run);
  return {
    get running() { return running; },
    /** Removes the last result (a new model). */
    clear() {
      chart.querySelector('svg')?.remove();
      legend.replaceChildren();
      setText(readout, '');
    },
  };
}
