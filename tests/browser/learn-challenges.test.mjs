// Learn's challenges in chapters 1–9 say why an answer does not count yet, in the
// status line (announced politely), from the learner's own state: each chapter is
// given a wrong answer as a learner would give it (typing, a grid cell, a slider,
// a checkbox) and its words are checked against the same numbers computed here in
// Node. Chapter 9's counts on the model trained in advance, without training.
// Masked cells of chapters 5 and 9's weight maps are grey and say so; chapter 9's
// corner text is whole and its loss and accuracy have a scale each.
// Screenshots of chapters 1 and 9's challenges at 1440 × 900 and 390 × 844 go to
// test-results/browser/.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { DESKTOP, PHONE, ROOT, SHOTS, gridCell, openPage, startBrowser } from './browser.mjs';
import { MASKED } from '../../web/ui/colors.js';
import { loadEngine } from '../../web/engine/index.js';
import { fixed } from '../../web/ui/format.js';
import { percent } from '../../web/learn/numbers.js';
import { measure } from '../../web/learn/spread.js';
import { selfAttend } from '../../web/learn/ch5-self.js';
import { datesWhyNot } from '../../web/learn/ch6-dates.js';
import { DISAGREE_TARGET, TEXT_EXAMPLE } from '../../web/learn/vision-measures.js';
import { COSTLY } from '../../web/learn/ch9-induction.js';

const TOKENS = ['Your', 'journey', 'starts', 'with', 'one', 'step'];
let env;
let engine;
let manifest;
before(async () => {
  env = await startBrowser();
  engine = await loadEngine({ threads: 1 });
  manifest = JSON.parse(await readFile(`${ROOT}web/models/models.json`, 'utf8'));
});
after(() => env?.close());

async function openLearn(viewport) {
  const opened = await openPage(env.browser, `${env.url}learn.html`, viewport);
  await opened.page.waitForSelector('body[data-ready="true"]', { timeout: 90000 });
  return opened;
}
const status = (page, id) => page.textContent(`[data-testid="challenge-status-${id}"]`);
/** The colour of cell (i, j) of heatmap `id` and its legend's key for masked cells. */
const maskedCell = (page, id, i, j) => page.evaluate(([hid, r, c]) => {
  const canvas = document.querySelector(`[data-testid="heatmap-${hid}"]`);
  const key = document.querySelector(`[data-testid="legend-${hid}"] .legend-masked`);
  return { rgb: [...canvas.getContext('2d').getImageData(c, r, 1, 1).data.slice(0, 3)], legend: key.hidden ? null : key.textContent.trim() };
}, [id, i, j]);
const bytesOf = async (name) => new Uint8Array(await readFile(`${ROOT}web/models/${manifest.models[name].file}`));

test('chapters 1–8: each challenge says why the answer on screen does not count yet', async () => {
  const { page, errors } = await openLearn(DESKTOP);
  for (const id of ['bottleneck', 'dot', 'average', 'scores', 'self', 'dates', 'kinds', 'images']) {
    const live = await page.locator(`[data-testid="challenge-status-${id}"]`);
    assert.equal(await live.getAttribute('aria-live'), 'polite', id);
  }

  // chapter 1: 5 digits, then 15 that both models reverse right; the bottleneck's test accuracy by length
  const { maxLength } = manifest.models['reverse-attention'].options;
  const from = maxLength - 3;
  const a = engine.loadSeq2Seq(await bytesOf('reverse-attention'));
  const b = engine.loadSeq2Seq(await bytesOf('reverse-bottleneck'));
  const evB = b.evaluate({ split: 'test', count: manifest.evalCount });
  const tail = evB.byLength.filter((r) => r.length >= from);
  const tailAcc = tail.reduce((s, r) => s + r.sequenceAccuracy * r.count, 0) / tail.reduce((s, r) => s + r.count, 0);
  const at5 = evB.byLength.find((r) => r.length === 5).sequenceAccuracy;
  await page.locator('[data-testid=ch1-input]').fill('98765');
  assert.equal(await status(page, 'bottleneck'), `Not solved yet: 5 digits: the challenge needs at least ${from}. `
    + `On test strings of 5 digits the bottleneck reverses ${percent(at5)} right, on those of ${from} to ${maxLength} digits ${percent(tailAcc)}.`);
  const rev = (s) => [...s].reverse().join('');
  // a test string of 13 to 15 digits that both models reverse right
  const both = b.examples({ split: 'test', count: 400, seed: 2 }).map((e) => e.input)
    .find((s) => s.length >= from && s.length < maxLength && a.translate(s).output === rev(s) && b.translate(s).output === rev(s));
  a.destroy();
  b.destroy();
  assert.ok(both, 'a long string both models reverse');
  await page.locator('[data-testid=ch1-input]').fill(both);
  assert.equal(await status(page, 'bottleneck'), `Not solved yet: the bottleneck reverses these ${both.length} digits right too, as it does ${percent(tailAcc)} `
    + `of the test strings of ${from} to ${maxLength} digits. Try another string, or a longer one.`);
  await page.locator('[data-testid="challenge-bottleneck"]').screenshot({ path: `${SHOTS}learn-challenge-bottleneck-laptop.png` });

  // chapter 2: “starts” edited, the dot product still positive
  const cell = await gridCell(page, 'ch2-x', 2, 0);
  await cell.fill('0.5');
  assert.equal(await status(page, 'dot'), 'Not solved yet: “Your” · “starts” = 0.43×0.5 + 0.15×0.25 + 0.89×0.1 = 0.3415, not below 0: '
    + 'one product must be negative and outweigh the others.');

  // chapter 3: the tutorial's query weighs “step” most
  assert.equal(await status(page, 'average'), 'Not solved yet: the most weight, 0.2074, is on “step”; “with” has 0.1720, since q · with = 0.6565 is below q · step = 0.8434.');

  // chapter 4: d first, then τ at d = 512
  const setRange = (id, v) => page.$eval(`[data-testid=${id}]`, (el, value) => { el.value = value; el.dispatchEvent(new Event('input')); }, String(v));
  await setRange('ch4-d', 3);
  assert.equal(await status(page, 'scores'), 'Not solved yet: d is 8: set it to 512.');
  await setRange('ch4-d', 9);
  await setRange('ch4-tau', 0);
  assert.equal(await status(page, 'scores'), `Not solved yet: at τ = 1.00 the entropy is ${percent(measure(engine, 512, 1).entropyTempered)} of its maximum, below 95%: a larger τ flattens the weights.`);

  // chapter 5: the chapter's own settings (no trainable weights, one head)
  const w = selfAttend(engine, { trainable: false, causal: false, heads: 1 }).weights[0].data.subarray(30, 36);
  let best = 0;
  for (let j = 1; j < 6; j++) if (w[j] > w[best]) best = j;
  assert.equal(await status(page, 'self'), `Not solved yet: “step” looks most at “${TOKENS[best]}” (α ${fixed(w[best], 2)}; “starts” ${fixed(w[2], 2)}). Change the settings above.`);
  await page.check('[data-testid=ch5-trainable]');
  await page.selectOption('[data-testid=ch5-heads]', '3');
  assert.match(await status(page, 'self'), /^Not solved yet: “step” looks most in head 0 at “\w+” \(α [\d.]+; “starts” [\d.]+\); in head 1 at .*; in head 2 at .*\. Change the settings above\.$/);
  await page.selectOption('[data-testid=ch5-heads]', '1');
  await page.uncheck('[data-testid=ch5-trainable]');

  // chapter 6: a day early, then the ISO date itself
  const dates = engine.loadSeq2Seq(await bytesOf('dates'));
  const input = page.locator('#ch-dates [data-role=input]');
  await input.fill('Dec 30, 1999');
  assert.equal(await status(page, 'dates'), `Not solved yet: ${datesWhyNot('Dec 30, 1999', dates.translate('Dec 30, 1999').output)}`);
  assert.match(await status(page, 'dates'), /^Not solved yet: the model outputs \d{4}-\d\d-\d\d, not 1999-12-31: its .* differs?\.$/);
  await input.fill('1999-12-31');
  assert.equal(await status(page, 'dates'), 'Not solved yet: the input holds 1999-12-31 itself: write the date the way a person would.');

  // chapter 7: the example date, on which attention and saliency agree
  const c = dates.compareAttention(TEXT_EXAMPLE);
  const least = c.steps.reduce((m, s) => (s.agreement.saliencyInTopK < m.agreement.saliencyInTopK ? s : m));
  dates.destroy();
  assert.ok(least.agreement.saliencyInTopK >= DISAGREE_TARGET);
  assert.equal(await status(page, 'kinds'), `Not solved yet: on this date attention and saliency still agree: even output “${least.token === ' ' ? '␣' : least.token}”, the least agreeing, `
    + `has its most-attended character hold ${percent(least.agreement.saliencyInTopK)} of its saliency; it must be below ${percent(DISAGREE_TARGET)}.`);

  // chapter 8: the clutter it opens with holds no 7 in the top-left quarter
  const images = await page.evaluate(() => {
    const r = document.querySelector('#ch-images [data-role=reads]');
    return { output: r.dataset.output, share: Number(r.dataset.share) };
  });
  const misses = [];
  if (images.output !== '7') misses.push(`the soft model reads ${images.output}, not 7`);
  if (images.share <= 0.5) misses.push(`its last glimpse puts ${percent(images.share)} of its weight on the top-left quarter, not more than 50.0%`);
  assert.ok(misses.length);
  assert.equal(await status(page, 'images'), `Not solved yet: ${misses.join('; ')}.`);
  assert.equal(await page.getAttribute('[data-testid="challenge-images"]', 'data-solved'), 'false');
  // chapter 5's causal mask: the cells a query may not see are grey and blank, not weights of 0.00
  await page.check('[data-testid=ch5-causal]');
  assert.deepEqual(await maskedCell(page, 'ch5-head-0', 0, 5), { rgb: MASKED, legend: 'masked: weight 0' });
  assert.equal(await page.locator('[data-testid=figure-ch5-head-0] .hm-values span').nth(5).textContent(), '');
  assert.equal(await page.locator('[data-testid=figure-ch5-head-0] .hm-values span').nth(6).textContent(), '0.50');
  assert.deepEqual(errors, []);
  await page.close();
});

test('chapter 9: wrong heads are told why; the model trained in advance counts without training', async () => {
  for (const [viewport, size] of [[DESKTOP, 'laptop'], [PHONE, 'phone']]) {
    const { page, errors } = await openLearn(viewport);
    await page.waitForFunction(() => /trained in advance/.test(document.querySelector('[data-testid="ch9-status"]').textContent));
    await page.waitForSelector('[data-testid="ch9-ablate"]:not([disabled])');
    const title = await page.textContent('[data-testid="challenge-transformer"] .challenge-title');
    assert.match(title, new RegExp(`by at least ${COSTLY * 100} points\\. The model trained in advance that the chapter opens with counts, and so does one you train here\\.`));
    assert.doesNotMatch(title, /Train the model, then/);
    const { drops } = await page.evaluate(() => window.attnlabLearn.ch9.drops);
    const [top, next] = drops;
    const points = (d) => `${fixed(d * 100, 1)} points`;
    const name = (d) => `layer ${d.layer}, head ${d.head}`;
    const box = (d) => page.locator(`[data-testid="ch9-ablate-${d.layer}-${d.head}"]`);
    await box(next).check();
    assert.equal(await status(page, 'transformer'), `Not solved yet: ${name(next)} alone costs ${points(next.drop)}; another head costs ${points(top.drop)}.`);
    await box(top).check();
    assert.equal(await status(page, 'transformer'), 'Not solved yet: 2 heads are off: the challenge counts one head alone.');
    await box(top).uncheck();
    await box(next).uncheck();
    assert.equal(await status(page, 'transformer'), 'Not solved yet: no head is off: switch one off.');
    assert.match(await page.textContent('[data-testid="ch9-ablate-text"]'), /^With every head on: accuracy [\d.]+%\.$/);
    await page.locator('[data-testid="challenge-transformer"]').scrollIntoViewIfNeeded();
    await page.locator('#ch-transformer fieldset.ablate').screenshot({ path: `${SHOTS}learn-challenge-transformer-${size}.png` });
    await page.locator('[data-testid="challenge-transformer"]').screenshot({ path: `${SHOTS}learn-challenge-transformer-box-${size}.png` });
    if (size === 'phone') {
      await page.locator('[data-testid=ch1-input]').fill('98765');
      await page.locator('[data-testid="challenge-bottleneck"]').screenshot({ path: `${SHOTS}learn-challenge-bottleneck-phone.png` });
    }
    // the heads' maps: the corner's two lines whole, what a query may not see masked; loss and accuracy each on its own scale
    const corner = page.locator('[data-testid="figure-ch9-head-1-1"] .hm-corner');
    assert.deepEqual(await corner.evaluate((c) => [c.scrollHeight <= c.clientHeight, c.textContent]), [true, 'query ↓ key →']);
    assert.deepEqual(await maskedCell(page, 'ch9-head-1-1', 0, 1), { rgb: MASKED, legend: 'masked: weight 0' });
    const ticks = (id) => page.locator(`[data-testid="${id}"] .axis text`).allTextContents();
    assert.ok((await ticks('ch9-accuracy-chart')).includes('1.00'), 'accuracy runs 0 to 1');
    assert.ok(!(await ticks('ch9-accuracy-chart')).includes('2'), 'not on the loss scale');
    assert.ok((await ticks('ch9-loss-chart')).includes('3'), 'the loss its own scale');
    if (size === 'phone') {
      await page.locator('[data-testid=ch9-heads]').screenshot({ path: `${SHOTS}learn-ch9-heads-phone.png` });
      await page.locator('#ch-transformer [data-role=ind-loss]').screenshot({ path: `${SHOTS}learn-ch9-loss-phone.png` });
    }
    // the pretrained model's costliest head solves it, untrained here
    assert.ok(top.drop >= COSTLY, `the costliest head costs ${top.drop}`);
    await box(top).check();
    assert.equal(await page.getAttribute('[data-testid="challenge-transformer"]', 'data-solved'), 'true');
    assert.equal(await page.getAttribute('#ch-transformer', 'data-trained'), 'true');
    assert.deepEqual(errors, []);
    await page.close();
  }
});
