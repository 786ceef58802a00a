// The slow suite (npm run test:defaults): the lab's first task, reverse, with the seq2seq
// defaults (web/engine/defaults.js), trained as the lab's Train does (the form's batch and
// constant rate, one thread), reads its headline share of 500 validation sequences at the
// headline's step for seeds 1-5 (CI's tests/js/defaults.test.mjs runs seed 1). About 6 CPU s a seed.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { defaultsOf } from '../../web/engine/defaults.js';
import { loadEngine } from '../../web/engine/index.js';

const engine = await loadEngine({ threads: 1 });
const { model, train, headline } = defaultsOf('seq2seq', { task: 'reverse' });

for (const seed of [1, 2, 3, 4, 5]) {
  test(`reverse, seed ${seed}: the defaults read ${100 * headline.sequenceAccuracy}% of the validation sequences at step ${headline.steps}`, async (t) => {
    const m = await engine.createSeq2Seq({ task: 'reverse', seed });
    try {
      const c0 = process.cpuUsage();
      m.train({ steps: headline.steps, batch: model.batch, lr: train.lr });
      const c = process.cpuUsage(c0);
      const { sequenceAccuracy } = m.evaluate({ split: 'validation', count: 500 });
      t.diagnostic(`seed ${seed}: ${(100 * sequenceAccuracy).toFixed(1)}% at step ${headline.steps}, ${((c.user + c.system) / 1e6).toFixed(1)} s CPU`);
      assert.ok(sequenceAccuracy >= headline.sequenceAccuracy, `seed ${seed}: ${(100 * sequenceAccuracy).toFixed(1)}%`);
    } finally {
      m.destroy();
    }
  });
}
