// The induction moment in the lab, as a learner gets it: the Transformer family
// opens on the pretrained induction model with its recorded run (the curves from
// step 0 and the step where its induction head formed, marked); Train from scratch
// on the default settings (the engine's induction defaults, web/engine/defaults.js)
// forms a layer-1 induction head (score >= 0.4) and reaches 95% test accuracy, the
// jump marked on the charts with the sentence saying when and what the loss did.
// Reports the wall time of the run (the bench, tests/bench/transformer.mjs, holds
// the time target; a shared machine is too noisy for a timed test).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { defaultsOf } from '../../web/engine/defaults.js';
import { PHONE, SHOTS, fullScreenshot, openLab, startBrowser, trainToInduction } from './browser.mjs';

let env;
before(async () => {
  env = await startBrowser();
});
after(() => env?.close());

const DEFAULTS = defaultsOf('transformer', { task: 'induction' });

const text = (page, selector) => page.$eval(selector, (e) => e.textContent.trim());
const marks = (page, chart) => page.$$eval(`[data-testid=${chart}] .mark-label`, (ts) => ts.map((t) => t.textContent));

test('the pretrained induction model shows its recorded run: curves from step 0 and the step its head formed', async () => {
  const { page, errors } = await openLab(env, '#ver=2&task=transformer');
  assert.match(await text(page, '#model-status'), /^Pretrained model/);
  const run = await page.evaluate(() => {
    const s = window.attnlabLab.session;
    return { steps: s.steps, losses: s.losses.length, first: s.losses[0]?.step, scores: s.scores.length, accuracy: s.accuracy.length };
  });
  assert.equal(run.steps, DEFAULTS.train.steps, 'the pretrained model is the defaults trained for their steps');
  assert.equal(run.losses, run.steps, 'every step of its run');
  assert.equal(run.first, 1);
  assert.ok(run.scores > 10 && run.accuracy > 10, JSON.stringify(run));
  const formed = await text(page, '[data-testid=tf-formed]');
  assert.match(formed, /^Layer 1, head \d \(L1H\d\) formed at step [\d,]+: its induction score rose from [\d.]+ at step [\d,]+ to [\d.]+, while the training loss fell from [\d.]+ to [\d.]+\.$/);
  for (const chart of ['tf-ind-chart', 'tf-prev-chart', 'loss-chart', 'acc-chart']) assert.match((await marks(page, chart)).join(), /^L1H\d formed$/, chart);
  // the test sequence's repeat and the induction stripe outlined on every map, and said under them
  const repeat = await text(page, '[data-testid=tf-repeat]');
  const [, from, to, cells] = repeat.match(/^Outlined on the maps: positions (\d+)–(\d+) repeat positions \d+–\d+ \(dashed rows\), and the (\d+) cells/).map(Number);
  assert.equal(cells, to - from);
  const outlined = await page.$$eval('.tf-head', (bs) => bs.map((b) => [b.querySelectorAll('.hm-outline-rows').length, b.querySelectorAll('.hm-outline-cell').length]));
  assert.deepEqual(outlined, outlined.map(() => [1, cells]));
  // the induction head's map puts its weight in those cells: the strongest layer-1 head, read from the page's model
  const weight = await page.evaluate(async () => {
    const tf = window.attnlabLab.session;
    const v = await tf.read('inspect', { input: tf.input, options: { ablate: [] } });
    const guide = await import('./lab/transformer-guide.js');
    const r = guide.repeatOf(v.tokens);
    return Math.max(...v.attention[1].map((m) => r.stripe.reduce((t, [i, j]) => t + m.data[i * m.cols + j], 0) / r.stripe.length));
  });
  assert.ok(weight > 0.4, `the stripe's mean weight in the best layer-1 head: ${weight}`);
  await fullScreenshot(page, `${SHOTS}lab-induction-pretrained-desktop.png`);
  await page.setViewportSize(PHONE);
  await fullScreenshot(page, `${SHOTS}lab-induction-pretrained-phone.png`);
  assert.deepEqual(errors, []);
  await page.close();
});

test('Train from scratch on induction with the defaults: a layer-1 head passes 0.4, 95% is reached, the jump is marked', async () => {
  const { page, errors } = await openLab(env, '#ver=2&task=transformer');
  // Train from scratch: a new model, and it trains
  await page.click('#reset');
  await page.waitForFunction(() => window.attnlabLab.session.playing && window.attnlabLab.session.steps < 600);
  // a layer-1 head past the headline's score and the headline's accuracy, within the defaults' steps
  const { induction, accuracy } = DEFAULTS.headline;
  const s = await trainToInduction(page, { induction, accuracy, steps: DEFAULTS.train.steps, playing: true }, 180000);
  console.log(`lab: Train from scratch on induction: ${(100 * s.accuracy).toFixed(1)}% and a layer-1 induction score of ${s.best.toFixed(2)} at step ${s.steps}, ${s.seconds.toFixed(1)} s of wall time`);
  assert.ok(s.accuracy >= accuracy, `accuracy ${s.accuracy} at step ${s.steps}`);
  assert.ok(s.best >= induction, `layer-1 induction ${s.best}`);
  assert.ok(s.steps <= DEFAULTS.train.steps + 200, `${s.steps} steps`);
  // the jump, marked on the charts and said in words
  await page.waitForFunction(() => /formed at step/.test(document.querySelector('[data-testid=tf-formed]').textContent));
  assert.match(await text(page, '[data-testid=tf-formed]'), /^Layer 1, head \d \(L1H\d\) formed at step [\d,]+:/);
  for (const chart of ['tf-ind-chart', 'loss-chart']) assert.match((await marks(page, chart)).join(), /^L1H\d formed$/, chart);
  await fullScreenshot(page, `${SHOTS}lab-induction-scratch-desktop.png`);
  assert.deepEqual(errors, []);
  await page.close();
});
