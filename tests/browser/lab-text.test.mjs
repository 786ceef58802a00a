// The lab's 'text' task with the learner's own text, in headless Chromium, as
// a person types and pastes: a text past ASCII ("crème brûlée") trains and the
// lens shows its characters ("è", never a byte), and generate whole ones; a
// text too short, typed or in a link, keeps the text and the task and names
// the engine's minimum next to the box; an empty
// box says to type a text and trains nothing; a paste past the box's limit
// says at once how much of it is used. Each message is next to the box (an
// aria-live status) and goes once the box is fixed. Screenshots of each state
// of the box at 1440×900 and 390×844 go to test-results/browser/.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { DESKTOP, PHONE, SHOTS, axeViolations, openPage, startBrowser, trainLab as train } from './browser.mjs';

let env;
before(async () => {
  env = await startBrowser();
});
after(() => env?.close());

const FRENCH = 'crème brûlée, crème caramel, café au lait et crêpes; la crème de la crème. ';
/** A small text model: 1 layer of 2 heads, dModel 16, context 32. */
const link = (text) => `#ver=2&task=transformer&tfTask=text&tfLayers=1&tfHeads=2&tfDModel=16&tfDFF=0&tfContext=32&tfBatch=8&tfLr=0.003&tfText=${encodeURIComponent(text)}`;

async function open(hash, viewport = DESKTOP) {
  const opened = await openPage(env.browser, `${env.url}lab.html${hash}`, viewport);
  await opened.page.waitForSelector('body[data-ready=true]', { timeout: 60000 });
  await opened.page.waitForSelector('[data-testid^="tf-head-"]', { timeout: 30000 });
  return opened;
}

const steps = (page) => page.evaluate(() => window.attnlabLab.session.steps);
const message = (page) => page.$eval('[data-testid=tf-text-message]', (e) => (e.checkVisibility() ? e.textContent : ''));

/** Types `text` into the text box as a person would (all of it replaced), then leaves the box. */
async function typeText(page, text) {
  await page.locator('#tfText').fill(text);
  await page.locator('#tfText').blur();
  await page.evaluate(() => window.attnlabLab.settled());
}

/** The box and its message at both sizes, as test-results/browser/lab-text-<name>-<size>.png. */
async function shoot(page, name) {
  for (const [size, viewport] of [['desktop', DESKTOP], ['phone', PHONE]]) {
    await page.setViewportSize(viewport);
    await page.locator('#tf-options').scrollIntoViewIfNeeded();
    await page.locator('#tf-options').screenshot({ path: `${SHOTS}lab-text-${name}-${size}.png` });
  }
  await page.setViewportSize(DESKTOP);
}

test('a text past ASCII trains, and the lens and the maps show its characters', async () => {
  const { page, errors } = await open(link(FRENCH.repeat(3)));
  const vocabulary = await page.evaluate(() => window.attnlabLab.session.info.config.vocabulary);
  for (const c of ['è', 'û', 'é', 'ê']) assert.ok(vocabulary.includes(c), `${c} in ${vocabulary.join(' ')}`);
  assert.equal(await message(page), '');
  await train(page, 30);
  await page.locator('#tfInput').fill('crème brûlée');
  await page.locator('#tfInput').press('Enter');
  await page.locator('#tfInput').blur();
  await page.waitForFunction(() => document.querySelector('[data-testid=tf-lens-table] tbody tr td')?.parentElement.textContent.includes('è'));
  const input = await page.$$eval('[data-testid=tf-lens-table] tbody tr:first-child td', (ts) => ts.map((t) => t.textContent));
  assert.deepEqual(input, Array.from('crème␣brûlée'));
  const lens = await page.$eval('[data-testid=tf-lens-table]', (t) => t.textContent);
  assert.doesNotMatch(lens, /\\x|\uFFFD/, 'no byte names, no half characters');
  assert.equal(await page.$eval('[data-testid=tf-input-message]', (e) => e.hidden), true, 'the model reads the input');
  // generate continues with whole characters
  await page.locator('#tfPrompt').fill('crème ');
  await page.locator('#tfPrompt').blur();
  await page.click('#tf-generate');
  await page.waitForFunction(() => document.querySelector('[data-testid=tf-generated]').textContent.includes('▸'));
  assert.doesNotMatch(await page.$eval('[data-testid=tf-generated]', (e) => e.textContent), /\uFFFD|No output/);
  assert.deepEqual(errors, []);
  await page.close();
});

test('a text too short, typed or in a link, keeps the text and the task, and names the minimum', async () => {
  const { page, errors } = await open(link(FRENCH));
  await train(page, 5);
  const before = await steps(page);
  await typeText(page, 'crème brûlée');
  const minText = await page.evaluate(async () => (await import('./lab/limits.js')).limit('minText', 'transformer'));
  assert.equal(minText, 20, 'the engine\'s minimum');
  assert.match(await message(page), new RegExp(`12 characters; a model needs at least ${minText}`));
  assert.equal(await page.$eval('#tfText', (b) => b.value), 'crème brûlée', 'the text stays');
  assert.equal(await page.$eval('#tfTask', (s) => s.value), 'text', 'the task stays');
  assert.equal(await page.evaluate(() => window.attnlabLab.state.tfTask), 'text');
  assert.doesNotMatch(await page.$eval('[data-testid=notice]', (e) => e.textContent), /link|could not be made/);
  assert.equal(await page.$eval('[data-testid=error]', (e) => e.hidden), true, 'no error');
  assert.equal(await steps(page), before, 'the model in hand is kept');
  assert.equal(await page.isDisabled('#play'), true, 'Train waits for a text');
  assert.equal(await page.$eval('#tfText', (b) => b.getAttribute('aria-describedby')).then((d) => d.split(' ').includes('tf-text-message')), true);
  assert.deepEqual(await axeViolations(page), []);
  await shoot(page, 'short');
  // another setting changed meanwhile: the box keeps what was typed
  await page.selectOption('#tfScore', 'dot');
  await page.evaluate(() => window.attnlabLab.settled());
  assert.equal(await page.$eval('#tfText', (b) => b.value), 'crème brûlée');
  // fixed: the message goes and a new model learns the new text
  await typeText(page, 'crème brûlée, crème caramel');
  assert.equal(await message(page), '');
  assert.equal(await page.evaluate(() => window.attnlabLab.state.tfText), 'crème brûlée, crème caramel');
  assert.equal(await page.isDisabled('#play'), false);
  assert.equal(await steps(page), 0, 'a new model');
  assert.deepEqual(errors, []);
  await page.close();
  // a link with a text too short: the same, not the default task with the link blamed
  const linked = await open(link('crème'));
  assert.match(await message(linked.page), /5 characters; a model needs at least 20/);
  assert.equal(await linked.page.$eval('#tfText', (b) => b.value), 'crème');
  assert.equal(await linked.page.$eval('#tfTask', (s) => s.value), 'text');
  assert.doesNotMatch(await linked.page.$eval('[data-testid=notice]', (e) => e.textContent), /could not be made/);
  assert.equal(await linked.page.isDisabled('#play'), true);
  assert.deepEqual(linked.errors, []);
  await linked.page.close();
});

test('an empty box says to type a text and trains nothing', async () => {
  const { page, errors } = await open(link(FRENCH));
  await train(page, 5);
  const before = await steps(page);
  await typeText(page, '');
  assert.match(await message(page), /^Type or paste a text/);
  assert.equal(await page.isDisabled('#play'), true);
  assert.equal(await page.isDisabled('#step'), true);
  await page.keyboard.press(' ');
  await page.waitForTimeout(500);
  assert.equal(await steps(page), before, 'nothing trained');
  assert.equal(await page.evaluate(() => window.attnlabLab.session.playing), false);
  assert.equal(await page.$eval('#tfTask', (s) => s.value), 'text');
  await shoot(page, 'empty');
  await typeText(page, FRENCH);
  assert.equal(await message(page), '');
  assert.equal(await page.isDisabled('#play'), false);
  assert.deepEqual(errors, []);
  await page.close();
});

test('a paste past the limit says at once how much is used', async () => {
  const { page, errors } = await open(link(FRENCH));
  const big = 'The quick brown fox jumps over the lazy dog. '.repeat(275).slice(0, 12345);
  await page.locator('#tfText').click();
  await page.keyboard.press('ControlOrMeta+A');
  const t0 = Date.now();
  await page.keyboard.insertText(big);
  await page.waitForFunction(() => /Using the first/.test(document.querySelector('[data-testid=tf-text-message]').textContent), null, { timeout: 1000 });
  assert.ok(Date.now() - t0 < 1000, `${Date.now() - t0} ms`);
  assert.match(await message(page), /Using the first 4,000 of 12,345 characters/);
  await page.locator('#tfText').blur();
  await page.evaluate(() => window.attnlabLab.settled());
  assert.equal(await page.evaluate(() => window.attnlabLab.state.tfText), big.slice(0, 4000), 'the model learns the first 4,000');
  assert.equal(await page.$eval('#tfText', (b) => b.value.length), 12345, 'the box keeps the paste');
  assert.match(await message(page), /Using the first 4,000 of 12,345 characters/, 'the message stays while it holds');
  assert.equal(await page.isDisabled('#play'), false, 'it trains on what is used');
  await shoot(page, 'long');
  assert.deepEqual(errors, []);
  await page.close();
});
