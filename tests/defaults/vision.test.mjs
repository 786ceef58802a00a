// The slow suite (npm run test:defaults): the image model's defaults reach their headline.
// For each mode of the cluttered task, createVisionModel({ task: 'cluttered', mode }) and one
// train() with nothing else, on one thread, then its accuracy on 2,000 test images: at least
// the table's headline (web/engine/defaults.js), in at most 5 CPU minutes of training
// (process.cpuUsage: the time the core spent, not the wall time, which on a shared machine
// mostly measures the other jobs). A default that drifts (a layer, the steps, the learning
// rate, the soft mix) fails here. About 4.5 CPU minutes each with the two modes run at once (tests/README.md).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { defaultsOf } from '../../web/engine/defaults.js';
import { loadEngine } from '../../web/engine/index.js';

const CPU_SECONDS = 300;
const COUNT = 2000;

const engine = await loadEngine({ threads: 1 });

for (const mode of ['soft', 'hard']) {
  test(`cluttered, ${mode}: the defaults reach the headline within ${CPU_SECONDS} CPU s`, async (t) => {
    const { headline, train } = defaultsOf('vision', { task: 'cluttered', mode });
    assert.ok(headline?.accuracy > 0, 'the table gives the headline');
    const m = await engine.createVisionModel({ task: 'cluttered', mode });
    try {
      const c0 = process.cpuUsage();
      const r = m.train();
      const c = process.cpuUsage(c0);
      const cpu = (c.user + c.system) / 1e6;
      const { accuracy } = m.evaluate({ count: COUNT });
      t.diagnostic(`${mode}: ${r.steps} steps, ${(100 * accuracy).toFixed(1)}% of ${COUNT} test images, ${cpu.toFixed(1)} s CPU (${r.seconds.toFixed(1)} s wall)`);
      assert.equal(r.steps, train.steps, 'train() runs the table\'s steps');
      assert.ok(accuracy >= headline.accuracy, `accuracy ${(100 * accuracy).toFixed(1)}% is below the headline ${100 * headline.accuracy}%`);
      assert.ok(cpu <= CPU_SECONDS, `training took ${cpu.toFixed(1)} CPU s, more than ${CPU_SECONDS}`);
    } finally {
      m.destroy();
    }
  });
}
