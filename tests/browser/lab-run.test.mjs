// The lab's run as a learner meets it, in headless Chromium at 1440×900 and 390×844:
// Train from scratch trains; a run stops by itself at its length (the induction
// defaults' 600 steps) and Continue trains as many more; the run bar says when an
// induction head formed, links to the charts, and the sentence of that moment is
// never rewritten; a value typed back to the model's own makes no new model; a field
// says what is wrong with it inline and keeps it as typed; Generate says why it
// stopped and checks an induction answer; a box says what of a long paste it uses;
// focus never lands under the sticky run bar, and the keyboard follows the columns;
// on a phone the settings come first and the run bar stays low.
// Screenshots go to test-results/browser/lab-run-*.png.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { DESKTOP, PHONE, SHOTS, axeViolations, openLab, startBrowser } from './browser.mjs';
import { thin, MAX_POINTS } from '../../web/lab/session.js';

let env;
before(async () => {
  env = await startBrowser();
});
after(() => env?.close());

/** The Transformer family on its pretrained induction model (600 steps), and untrained. */
const TF = '#ver=2&task=transformer';
const TF_SCRATCH = '#ver=2&task=transformer&start=scratch';

const text = (page, selector) => page.$eval(selector, (e) => e.textContent.trim());
const run = (page) => page.evaluate(() => {
  const s = window.attnlabLab.session;
  return { steps: s.steps, playing: s.playing, status: document.querySelector('#model-status').textContent };
});
/** Types `value` into field `id` as a person does: select what is there, type, Tab away (the change). */
async function type(page, id, value) {
  await page.click(`#${id}`, { clickCount: 3 });
  await page.keyboard.type(String(value));
  await page.keyboard.press('Tab');
  await page.evaluate(() => window.attnlabLab.settled());
}
const shown = (page, testid) => page.$eval(`[data-testid="${testid}"]`, (e) => (e.hidden ? null : e.textContent.trim()));

test('a curve thinned as it grows keeps its start: 10,000 steps in chunks end as means of as many steps each, the first at step 8', () => {
  let list = [];
  for (let s = 0; s < 10000;) {
    const n = Math.max(1, Math.min(200, Math.floor(s / 10)));
    list.push(...Array.from({ length: n }, (_, i) => ({ step: s + i + 1, value: 3 })));
    while (list.length > MAX_POINTS) list = thin(list);
    s += n;
  }
  assert.ok(list.length <= MAX_POINTS);
  assert.ok(list[0].step <= 8, `the curve starts at step ${list[0].step}`);
  assert.ok(list.every((p) => p.value === 3), 'means of equal values stay equal');
});

test('Train from scratch trains; the run stops at 600 steps, says the head formed in the run bar, links to the charts; Continue trains on to 1,200 and the sentence stays', async () => {
  const { page, errors } = await openLab(env, TF);
  await page.click('#reset');
  // one click: a new model, and it trains
  await page.waitForFunction(() => window.attnlabLab.session.playing && /^Untrained|^Trained here/.test(document.querySelector('#model-status').textContent));
  assert.match(await text(page, '#play'), /Pause/);
  assert.match(await text(page, '[data-testid=run-step]'), /of 600$/);
  await page.waitForFunction(() => !window.attnlabLab.session.playing, null, { timeout: 120000 });
  await page.evaluate(() => window.attnlabLab.session.busy);
  assert.equal((await run(page)).steps, 600, 'the run stops by itself at the defaults\' steps');
  assert.equal(await text(page, '#play'), '▶ Continue');
  assert.equal(await text(page, '[data-testid=run-step]'), 'step 600 of 600');
  // the moment, where the eyes are: said to screen readers, linked to the charts
  const note = await text(page, '[data-testid=run-event]');
  assert.match(note, /^an induction head formed: L1H\d, step \d+$/);
  assert.equal(await page.getAttribute('[data-testid=run-event]', 'aria-live'), 'polite');
  const sentence = await text(page, '[data-testid=tf-formed]');
  assert.match(sentence, /formed at step/);
  await page.screenshot({ path: `${SHOTS}lab-run-formed-desktop.png` });
  await page.click('[data-testid=run-event-link]');
  await page.waitForFunction(() => document.activeElement?.id === 'tf-scores-card');
  const card = await page.$eval('#tf-scores-card', (e) => e.getBoundingClientRect().toJSON());
  const bar = await page.$eval('#runbar', (e) => e.getBoundingClientRect().toJSON());
  assert.ok(card.top >= bar.bottom - 1 && card.top < DESKTOP.height / 2, `the charts at ${card.top}px, under the bar (${bar.bottom}px)`);
  assert.match(page.url(), /task=transformer/, 'the link keeps the page\'s settings');

  // what was said of that moment stays, whatever happens to the curves after it
  await page.evaluate(() => { const s = window.attnlabLab.session; s.losses = s.losses.slice(300); });
  await page.click('#play');
  await page.waitForFunction(() => window.attnlabLab.session.playing);
  assert.match(await text(page, '[data-testid=run-step]'), /of 1,200$/);
  await page.waitForFunction(() => window.attnlabLab.session.steps >= 700, null, { timeout: 120000 });
  await page.click('#play');
  await page.waitForFunction(() => !window.attnlabLab.session.playing);
  await page.evaluate(() => window.attnlabLab.session.busy);
  assert.equal(await text(page, '#play'), '▶ Continue');
  assert.match(await text(page, '[data-testid=run-step]'), /^step [\d,]+ of 1,200$/, 'paused on the way to 1,200');
  assert.equal(await text(page, '[data-testid=tf-formed]'), sentence, 'the sentence keeps the numbers of its moment');
  assert.equal(await text(page, '[data-testid=run-event]'), note);
  assert.deepEqual(errors, []);
  await page.close();
});

test('a refused value typed back to the model\'s own changes nothing; Heads that do not divide dModel are said inline, kept as typed, and used once dModel fits', async () => {
  const { page, errors } = await openLab(env, TF);
  const before = await run(page);
  assert.equal(before.steps, 600, 'the pretrained model');
  for (const [id, bad, own] of [['tfHeads', 22, 2], ['tfLayers', 99, 2]]) {
    await type(page, id, bad);
    assert.match(await shown(page, `${id}-message`), /must be a whole number/);
    await type(page, id, own);
    assert.equal(await shown(page, `${id}-message`), null, `${id}: the message goes`);
    assert.deepEqual(await run(page), before, `${id} ${bad} then ${own}: the same model, nothing reset`);
  }
  // Heads 3 with dModel 32: the field says why, keeps 3, and no page-level box
  await type(page, 'tfHeads', 3);
  assert.match(await shown(page, 'tfHeads-message'), /^Heads must divide dModel \(32\); 3 does not/);
  assert.equal(await page.inputValue('#tfHeads'), '3');
  assert.equal(await page.getAttribute('#tfHeads', 'aria-invalid'), 'true');
  assert.equal(await shown(page, 'error'), null, 'no page-level box for what a field owns');
  assert.deepEqual(await run(page), before, 'the model is kept');
  await page.screenshot({ path: `${SHOTS}lab-run-heads-refused-desktop.png` });
  // dModel 48: the heads' 3 now fits, and is used
  await type(page, 'tfDModel', 48);
  await page.waitForFunction(() => window.attnlabLab.state.tfHeads === 3 && window.attnlabLab.state.tfDModel === 48);
  await page.evaluate(() => window.attnlabLab.settled());
  assert.equal(await page.inputValue('#tfHeads'), '3');
  assert.equal(await shown(page, 'tfHeads-message'), null);
  assert.equal(await shown(page, 'error'), null);
  assert.equal(await page.evaluate(() => window.attnlabLab.session.info.config.heads), 3);
  assert.deepEqual(errors, []);
  await page.close();
});

test('Generate says why it stopped and checks an induction answer; a long paste is cut and said', async () => {
  const { page, errors } = await openLab(env, TF);
  // the test example's prompt (the empty box): the answer is checked
  await page.click('[data-testid=tf-generate]');
  await page.waitForFunction(() => document.querySelector('[data-testid=tf-verdict]').textContent !== '');
  assert.match(await text(page, '[data-testid=tf-verdict]'), /^[✓✗]/);
  assert.match(await text(page, '[data-testid=tf-stopped]'), /^Stopped at the end of the answer/);
  // a prompt longer than the context
  await page.click('[data-testid=tf-prompt]');
  await page.keyboard.type('abcdefghijklmnopqrstuvwxyzabcdefghijklmnop');
  await page.keyboard.press('Tab');
  await page.click('[data-testid=tf-generate]');
  await page.waitForFunction(() => /context/.test(document.querySelector('[data-testid=tf-stopped]').textContent));
  assert.match(await text(page, '[data-testid=tf-stopped]'), /^Stopped after 1 token: the prompt's 42 tokens already fill the model's context of 32 tokens/);
  // 10,000 characters pasted into the input box: the first 256 are used, and it says so
  await page.fill('[data-testid=tf-input]', 'ab'.repeat(5000));
  assert.equal((await page.inputValue('[data-testid=tf-input]')).length, 256);
  assert.equal(await shown(page, 'tfInput-cut'), 'Using the first 256 of 10,000 characters: the most this box takes.');
  await page.fill('[data-testid=tf-input]', 'abc');
  assert.equal(await shown(page, 'tfInput-cut'), null, 'and stops saying so');
  assert.deepEqual(errors, []);
  await page.close();
});

test('the text models\' Input box says what of a long paste it uses', async () => {
  const { page, errors } = await openLab(env, '#ver=2&task=reverse&start=scratch');
  await page.fill('[data-testid=text]', '1'.repeat(10000));
  // the model reads at most 12 characters (the defaults' longest input)
  assert.equal((await page.inputValue('[data-testid=text]')).length, 12);
  assert.equal(await shown(page, 'text-cut'), 'Using the first 12 of 10,000 characters: the most this box takes.');
  assert.deepEqual(errors, []);
  await page.close();
});

/**
 * Shift+Tab from the Random button up through the settings: every control focused
 * lies below the sticky run bar. Returns the ids seen.
 */
async function shiftTabUp(page, from, to) {
  await page.focus(from);
  await page.evaluate(() => scrollTo(0, document.documentElement.scrollHeight));
  await page.focus(from);
  const seen = [];
  for (let k = 0; k < 60; k++) {
    await page.keyboard.press('Shift+Tab');
    const at = await page.evaluate(() => {
      const e = document.activeElement;
      const r = e.getBoundingClientRect();
      return { id: e.id || e.textContent.trim().slice(0, 20), top: r.top, bar: document.querySelector('#runbar').getBoundingClientRect().bottom, inBar: Boolean(e.closest('#runbar')) };
    });
    if (at.inBar) break;
    seen.push(at.id);
    assert.ok(at.top >= at.bar, `${at.id} at ${at.top}px, under the run bar (to ${at.bar}px)`);
    if (at.id === to) break;
  }
  return seen;
}

test('focus is never under the sticky run bar; Tab goes from the settings to the heads beside them; on a phone the settings come first and the bar is at most 64 px', async () => {
  const { page, errors } = await openLab(env, TF_SCRATCH);
  const seen = await shiftTabUp(page, '#tf-random', 'task');
  for (const id of ['tf-example', 'tfInput', 'seed', 'tfDModel', 'tfHeads', 'tfLayers', 'tfTask', 'task']) assert.ok(seen.includes(id), `${id} reached (${seen.join(', ')})`);
  // the bar's own controls are in view where it sticks: focusing one scrolls nothing
  await page.evaluate(() => scrollTo(0, 1200));
  const y = await page.evaluate(() => scrollY);
  await page.focus('#play');
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => scrollY), y, 'the page stays where it was');
  // Tab from the last of the settings goes to the heads card beside them, not the charts below
  await page.focus('#task');
  let next = null;
  for (let k = 0; k < 60 && !next; k++) {
    await page.keyboard.press('Tab');
    next = await page.evaluate(() => (document.activeElement.closest('.controls') ? null : document.activeElement.closest('section')?.id ?? document.activeElement.id));
  }
  assert.equal(next, 'tf-heads-card');
  assert.deepEqual(await axeViolations(page), []);
  await page.close();

  for (const hash of [TF_SCRATCH, '#ver=2']) {
    const phone = await openLab(env, hash, PHONE);
    const bar = await phone.page.$eval('#runbar', (e) => e.getBoundingClientRect().height);
    assert.ok(bar <= 64, `${hash}: the run bar is ${bar}px tall`);
    const [task, watched] = await phone.page.evaluate(() => [document.querySelector('#task'), document.querySelector('section[aria-labelledby=h-progress]')]
      .map((e) => e.getBoundingClientRect().top + scrollY));
    assert.ok(task < watched && task < 900, `${hash}: the Task selector at ${task}px, the Progress card at ${watched}px`);
    if (hash === TF_SCRATCH) {
      await shiftTabUp(phone.page, '#tf-random', 'task');
      await phone.page.focus('#tfLayers');
    }
    await phone.page.screenshot({ path: `${SHOTS}lab-run-phone${hash === '#ver=2' ? '-text' : ''}.png` });
    assert.deepEqual(phone.errors, []);
    await phone.page.close();
  }
  assert.deepEqual(errors, []);
});

test('on a phone the run bar stays low with the formed head said in it', async () => {
  const { page, errors } = await openLab(env, TF, PHONE);
  // the pretrained model's recorded run: its head formed, said in the bar
  await page.waitForFunction(() => document.querySelector('[data-testid=run-event]').textContent !== '');
  assert.match(await text(page, '[data-testid=run-event]'), /^an induction head formed: L1H\d, step \d+$/);
  const bar = await page.$eval('#runbar', (e) => e.getBoundingClientRect().height);
  assert.ok(bar <= 64, `the run bar is ${bar}px tall`);
  const fits = await page.$eval('.run-stats', (e) => e.scrollWidth <= e.clientWidth + 1);
  assert.ok(fits, 'its line is not cut');
  await page.screenshot({ path: `${SHOTS}lab-run-formed-phone.png` });
  assert.deepEqual(errors, []);
  await page.close();
});
