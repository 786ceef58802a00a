// The slow suite (npm run test:defaults): the lab's Train from scratch on induction, as a learner
// clicks it, for seeds 1-5 (CI runs seed 1 in tests/browser/lab-induction.test.mjs). Each seed's
// link (#...&seed=N) opens the Transformer family; Train from scratch then trains the engine's
// induction defaults (web/engine/defaults.js) in the worker, in the lab's chunks. For each seed: a
// layer-1 head's induction score past the headline (0.4) and the headline accuracy (95%) within the
// defaults' steps (600, with 200 more for the chunk under way when both are first seen). Prints
// each seed's step, accuracy, score and wall time. About 1-2 minutes (tests/README.md).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { defaultsOf } from '../../web/engine/defaults.js';
import { openLab, startBrowser, trainToInduction } from '../browser/browser.mjs';

const DEFAULTS = defaultsOf('transformer', { task: 'induction' });
let env;
before(async () => {
  env = await startBrowser();
});
after(() => env?.close());

for (const seed of [1, 2, 3, 4, 5]) {
  test(`the lab's Train from scratch on induction, seed ${seed}: a layer-1 head past ${DEFAULTS.headline.induction} and ${100 * DEFAULTS.headline.accuracy}% within the defaults' steps`, async (t) => {
    const { page, errors } = await openLab(env, `#ver=2&task=transformer&seed=${seed}`);
    await page.click('#reset');
    await page.waitForFunction(() => window.attnlabLab.session.steps === 0 && /^Untrained/.test(document.querySelector('#model-status').textContent));
    assert.equal(await page.evaluate(() => window.attnlabLab.state.seed), seed, 'the link set the seed');
    const { induction, accuracy } = DEFAULTS.headline;
    const seen = await trainToInduction(page, { induction, accuracy, steps: DEFAULTS.train.steps });

    t.diagnostic(`seed ${seed}: ${(100 * seen.accuracy).toFixed(1)}% and a layer-1 induction score of ${seen.best.toFixed(2)} at step ${seen.steps}, ${seen.seconds.toFixed(1)} s of wall time`);
    assert.ok(seen.accuracy >= accuracy && seen.best >= induction, `seed ${seed}: ${(100 * seen.accuracy).toFixed(1)}%, score ${seen.best.toFixed(2)} at step ${seen.steps}`);
    assert.ok(seen.steps <= DEFAULTS.train.steps + 200, `${seen.steps} steps`);
    assert.deepEqual(errors, []);
    await page.close();
  });
}
