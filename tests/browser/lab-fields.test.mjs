// The lab's forms and links in headless Chromium, used as a person would: every
// numeric field states its range and says, in words, what is wrong with a value
// out of it (and stops saying so once it is fixed); a task that needs a longer
// context says so and keeps the choice; Share says what a link carries; the
// Transformer opens with its heads in view on a laptop; the large head map
// labels every token; a head opened in the playground says where it came from.
// Screenshots at 1440×900 and 390×844 go to test-results/browser/.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { DESKTOP, PHONE, SHOTS, axeViolations, openLab, openPage, startBrowser } from './browser.mjs';

let env;
before(async () => {
  env = await startBrowser();
});
after(() => env?.close());

/** The Transformer family as a link opens it (its pretrained model, when it has one). */
const TF = '#ver=2&task=transformer';


const text = (page, selector) => page.$eval(selector, (e) => e.textContent.trim());

test('the Transformer opens with its heads grid in view at 1440 × 900; Share says the link carries settings, not weights', async () => {
  const { page, errors } = await openLab(env, TF);
  await page.waitForSelector('[data-testid^="tf-head-"]');
  const grid = await page.$eval('[data-testid=tf-heads]', (e) => e.getBoundingClientRect().toJSON());
  assert.ok(grid.top >= 0 && grid.top < DESKTOP.height - 150, `the heads grid starts at ${grid.top}px`);
  const first = await page.$eval('[data-testid="tf-head-L0H0"]', (e) => e.getBoundingClientRect().toJSON());
  assert.ok(first.bottom <= DESKTOP.height, `the first head ends at ${first.bottom}px, in view`);
  await page.screenshot({ path: `${SHOTS}lab-fields-heads-desktop.png` });

  await page.click('[data-testid=share]');
  await page.waitForSelector('[data-testid=notice]:not([hidden])');
  const said = await text(page, '[data-testid=notice]');
  assert.match(said, /settings/);
  assert.match(said, /not the trained weights/);
  assert.match(await page.getAttribute('[data-testid=share]', 'title'), /not the trained weights/);
  assert.deepEqual(errors, []);
  await page.close();
  // a phone puts the heads first, under the run bar
  const phone = await openLab(env, TF, PHONE);
  await phone.page.waitForSelector('[data-testid^="tf-head-"]');
  await phone.page.screenshot({ path: `${SHOTS}lab-fields-heads-phone.png` });
  assert.deepEqual(phone.errors, []);
  await phone.page.close();
});

/** Types `value` into field `id` and commits it, as a person does (the change event on leaving it). */
async function enter(page, id, value) {
  await page.fill(`#${id}`, String(value));
  await page.dispatchEvent(`#${id}`, 'change');
}
const message = (page, id) => page.$eval(`[data-testid=${id}-message]`, (e) => (e.hidden ? null : e.textContent.trim()));

test("the Transformer's numeric fields state their ranges; a value out of range is said in words under the field, and cleared once fixed", async () => {
  const { page, errors } = await openLab(env, TF);
  const limits = await page.evaluate(() => import('./lab/limits.js').then((m) => ({ min: m.limit('minContext', 'transformer'), max: m.limit('maxContext', 'transformer') })));
  assert.ok(limits.min > 1, `the engine's minimum context (${limits.min})`);
  for (const id of ['tfLayers', 'tfHeads', 'tfDModel', 'tfDFF', 'tfContext', 'tfLr', 'tfBatch', 'seed']) {
    assert.ok(await page.isVisible(`[data-testid=${id}-range]`), `${id} states its range`);
    assert.match(await text(page, `[data-testid=${id}-range]`), /^\d[\d.,]* to \d[\d,]*$/, id);
  }
  assert.equal(await text(page, '[data-testid=tfContext-range]'), `${limits.min} to ${limits.max}`);
  assert.equal(await page.getAttribute('#tfContext', 'min'), String(limits.min), "the form's minimum is the engine's");

  const before = await page.evaluate(() => window.attnlabLab.state.tfContext);
  await enter(page, 'tfContext', 1);
  assert.equal(await message(page, 'tfContext'), `Context must be a whole number from ${limits.min} to ${limits.max}; 1 is below that.`);
  assert.equal(await page.getAttribute('#tfContext', 'aria-invalid'), 'true');
  assert.match(await page.getAttribute('#tfContext', 'aria-describedby'), /tfContext-message/);
  assert.equal(await page.evaluate(() => window.attnlabLab.state.tfContext), before, 'the setting is not taken');
  await enter(page, 'tfLayers', 99);
  assert.match(await message(page, 'tfLayers'), /^Layers must be a whole number from 1 to \d+; 99 is above that\.$/);
  await page.screenshot({ path: `${SHOTS}lab-fields-messages-desktop.png` });
  assert.deepEqual(await axeViolations(page), [], 'the ranges and messages pass axe-core');
  // fixed: the message goes, the mark too, and the value is taken
  await enter(page, 'tfContext', 48);
  await page.evaluate(() => window.attnlabLab.settled());
  assert.equal(await message(page, 'tfContext'), null);
  assert.equal(await page.getAttribute('#tfContext', 'aria-invalid'), null);
  assert.equal(await page.evaluate(() => window.attnlabLab.state.tfContext), 48);
  assert.deepEqual(errors, []);
  await page.close();
});

test('a task that needs a longer context keeps the choice: Context grows to its minimum, and the field says so', async () => {
  const { page, errors } = await openLab(env, `${TF}&tfContext=32`);
  await page.selectOption('#tfTask', 'dates');
  await page.waitForFunction(() => window.attnlabLab.state.tfTask === 'dates' && window.attnlabLab.state.tfContext > 32);
  await page.evaluate(() => window.attnlabLab.settled());
  const need = await page.evaluate(() => window.attnlabLab.state.tfContext);
  assert.equal(await page.inputValue('#tfTask'), 'dates', 'the task chosen stays');
  assert.equal(await page.inputValue('#tfContext'), String(need));
  assert.equal(await page.evaluate(() => window.attnlabLab.session.info.config.context), need, 'the model is made with that context');
  const said = await message(page, 'tfContext');
  assert.match(said, /Context/);
  assert.match(said, new RegExp(`at least ${need}\\b`));
  assert.equal(await page.isVisible('[data-testid=error]'), false, 'no error: the choice was kept');
  assert.match(page.url(), new RegExp(`tfContext=${need}`));
  await page.screenshot({ path: `${SHOTS}lab-fields-context-desktop.png` });
  assert.deepEqual(errors, []);
  await page.close();
});

test("every numeric field of the text and image families states its range and says what is wrong with a value, until it is fixed", async () => {
  const { page, errors } = await openLab(env, '#ver=2&task=reverse&start=scratch', PHONE);
  for (const id of ['minLength', 'maxLength', 'embed', 'hidden', 'lr', 'batch', 'seed', 'compareSteps']) {
    assert.notEqual(await text(page, `[data-testid=${id}-range]`), '', `${id} states its range`);
  }
  assert.equal(await text(page, '[data-testid=minLength-range]'), '1 to 30');
  await enter(page, 'minLength', 0);
  assert.equal(await message(page, 'minLength'), 'Min length must be a whole number from 1 to 30; 0 is below that.');
  await enter(page, 'maxLength', 2);
  assert.match(await message(page, 'maxLength'), /^Max length is below Min length \(\d+\)\.$/);
  await page.screenshot({ path: `${SHOTS}lab-fields-messages-phone.png` });
  await enter(page, 'minLength', 3);
  await page.evaluate(() => window.attnlabLab.settled());
  assert.equal(await message(page, 'minLength'), null, 'a fixed field says nothing more');

  await page.selectOption('#task', 'cluttered');
  await page.evaluate(() => window.attnlabLab.settled());
  for (const id of ['clutter', 'hidden', 'batch', 'modeSteps']) assert.notEqual(await text(page, `[data-testid=${id}-range]`), '', `${id} states its range`);
  await enter(page, 'clutter', -1);
  assert.match(await message(page, 'clutter'), /^Clutter pieces must be a whole number from 0 to \d+; -1 is below that\.$/);
  await enter(page, 'clutter', 2);
  assert.equal(await message(page, 'clutter'), null);
  assert.deepEqual(errors, []);
  await page.close();
});

test('the large head map labels every token of a long input, in a font its cells hold', async () => {
  const { page, errors } = await openLab(env, `${TF}&start=scratch&tfLayers=1&tfHeads=2&tfDModel=16&tfContext=64`);
  await page.waitForSelector('[data-testid="heatmap-tf-chosen"]');
  for (const n of [32, 62]) {
    const input = Array.from({ length: n }, (_, k) => 'abcdefghijklmnopqrstuvwxyz'[(k * 7) % 26]).join('');
    await page.fill('#tfInput', input);
    await page.dispatchEvent('#tfInput', 'change');
    await page.waitForFunction((k) => document.querySelector('[data-testid="heatmap-tf-chosen"]').width === k, n);
    await page.$eval('#tf-chosen', (e) => e.scrollIntoView({ block: 'center' }));
    const labels = await page.$eval('#tf-chosen', (box) => {
      const canvas = box.querySelector('canvas');
      const cell = canvas.getBoundingClientRect().width / canvas.width;
      const read = (sel) => [...box.querySelectorAll(`${sel} span`)].map((s) => ({ text: s.textContent, width: s.getBoundingClientRect().width, font: parseFloat(getComputedStyle(s).fontSize) }));
      return { cell, cols: read('.hm-cols'), rows: read('.hm-rows') };
    });
    assert.deepEqual(labels.cols.map((l) => l.text).join(''), input, `${n} tokens: every column labelled, in order`);
    assert.deepEqual(labels.rows.map((l) => l.text).join(''), input, `${n} tokens: every row labelled, in order`);
    assert.ok(labels.cell >= 10, `cells of ${labels.cell}px`);
    for (const l of labels.cols) {
      assert.ok(l.font >= 8, `a label's font of ${l.font}px`);
      assert.ok(l.width <= labels.cell + 0.5, `label ${l.text} (${l.width}px) fits its ${labels.cell}px column`);
    }
  }
  await page.screenshot({ path: `${SHOTS}lab-fields-chosen-head-desktop.png` });
  assert.deepEqual(errors, []);
  await page.close();
});

test('a head opened in the playground says where it came from: its layer, head, task and step', async () => {
  const { page, errors } = await openLab(env, TF);
  await page.waitForSelector('[data-testid=tf-open][href]');
  await page.selectOption('[data-testid=tf-open-head]', 'L1H0');
  const steps = await page.evaluate(() => window.attnlabLab.session.steps);
  const href = await page.getAttribute('[data-testid=tf-open]', 'href');
  const want = `From layer 1, head 0 of the lab's induction transformer, step ${steps.toLocaleString('en')}.`;
  const pg = await openPage(env.browser, new URL(href, `${env.url}lab.html`).href, DESKTOP);
  await pg.page.waitForSelector('body[data-ready="true"]', { timeout: 60000 });
  assert.equal(await text(pg.page, '[data-testid=from]'), want);
  assert.equal(await pg.page.$eval('[data-testid=from]', (e) => e.childElementCount), 0, 'shown as text only');
  assert.equal(await pg.page.isVisible('[data-testid=notice]'), false, 'the link is read whole');
  await pg.page.screenshot({ path: `${SHOTS}lab-fields-playground-from-desktop.png` });
  assert.deepEqual([...errors, ...pg.errors], []);
  await pg.page.close();
  await page.close();
});

test("a task's results explained: Generate stops at the answer and checks it, the lens marks the scored positions, the maps say what to look for", async () => {
  const { page, errors } = await openLab(env, `${TF}&tfTask=reverse&start=scratch&tfLayers=1&tfHeads=2&tfDModel=16&tfContext=32`);
  await page.waitForSelector('[data-testid=tf-lens-table]');
  assert.match(await text(page, '[data-testid=tf-pattern]'), /anti-diagonal/);
  const example = await page.evaluate(() => window.attnlabLab.session.examples(1, 1).then(([e]) => e));
  // the lens: the "=" and the answer's positions but its last are scored
  const scored = await page.$$eval('[data-testid=tf-lens-table] thead th.scored', (ths) => ths.map((t) => t.textContent));
  const prompt = [...example.input].length;
  assert.deepEqual(scored, [...example.target].map((_, k) => `●${prompt - 1 + k} (scored)`));

  await page.click('[data-testid=tf-generate]');
  await page.waitForFunction(() => document.querySelector('[data-testid=tf-verdict]').textContent !== '');
  const out = await text(page, '[data-testid=tf-generated]');
  const answer = out.split('▸')[1];
  assert.equal(out.split('▸')[0], example.input, 'the prompt is the test example up to its answer');
  assert.equal([...answer].length, [...example.target].length, 'generation stops at the answer');
  const said = await text(page, '[data-testid=tf-verdict]');
  assert.equal(said, answer === example.target ? '✓ right' : `✗ the answer is ${example.target}`);
  await page.screenshot({ path: `${SHOTS}lab-fields-generate-desktop.png` });
  // a prompt of one's own has no known answer: said so, no verdict
  await page.fill('#tfPrompt', '123=');
  await page.dispatchEvent('#tfPrompt', 'change');
  await page.click('[data-testid=tf-generate]');
  await page.waitForFunction(() => /test example/.test(document.querySelector('[data-testid=tf-verdict]').textContent));
  assert.deepEqual(errors, []);
  await page.close();
});
