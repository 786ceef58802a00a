// The retina (RAM) in the lab's image panel, in headless Chromium, used as a person
// would: the sensor control (enabled only with hard attention on a one-digit task,
// else disabled with the reason), its link round-trip, a bad sensor in a link
// falling back with the notice; a retina model trained live; the pretrained retina's
// glimpse boxes drawn where predict() says (the same file and test image read in
// Node), the path and the numbers, a step selector; the panels that need a grid
// map say the retina has none; the experiment keeps the grid. Axe, and screenshots
// at 1280×900 and 390×844 (test-results/browser/lab-retina-*.png).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { PHONE, ROOT, SHOTS, axeViolations, fullScreenshot, openPage, startBrowser } from './browser.mjs';
import { loadEngine } from '../../web/engine/index.js';
import { codec, visionOptions } from '../../web/lab/state.js';

const DESKTOP = { width: 1280, height: 900 };
/** The pretrained retina's settings in a link: the lab opens on it (web/models/cluttered-retina.vis). */
const PRETRAINED = '#ver=2&task=cluttered&mode=hard&sensor=retina&hidden=24&image=3';

let env;
let engine;
let retina;
before(async () => {
  env = await startBrowser();
  engine = await loadEngine({ threads: 1 });
  const manifest = JSON.parse(await readFile(`${ROOT}web/models/models.json`, 'utf8'));
  retina = await engine.loadVisionModel(new Uint8Array(await readFile(`${ROOT}web/models/${manifest.models['cluttered-retina'].file}`)));
});
after(() => { retina?.destroy(); return env?.close(); });

const text = (page, selector) => page.$eval(selector, (e) => e.textContent.trim());

async function open(hash, viewport = DESKTOP) {
  const opened = await openPage(env.browser, `${env.url}lab.html${hash}`, viewport);
  await opened.page.waitForSelector('body[data-ready=true]', { timeout: 60000 });
  return opened;
}

/** The boxes the page drew for the shown glimpses: [{ step, scale, top, left, height, width }], in image pixels. */
const drawnBoxes = (page, id = 'attention') => page.$$eval(`[data-testid=glimpses-${id}] rect[data-step]`, (rects) => rects.map((r) => ({
  step: Number(r.dataset.step), scale: Number(r.dataset.scale),
  top: Number(r.getAttribute('y')), left: Number(r.getAttribute('x')), height: Number(r.getAttribute('height')), width: Number(r.getAttribute('width')),
})));

test('the experiment and the model in hand: only the model in hand reads through the retina', () => {
  const state = { ...codec.decode('#ver=2&task=cluttered&mode=hard&sensor=retina').state };
  assert.equal(visionOptions(state).sensor, 'retina');
  assert.equal(visionOptions(state).channels, undefined, 'the retina has no CNN');
  assert.equal(visionOptions(state, 'hard').sensor, 'grid', "the experiment's hard model samples grid cells");
  assert.equal(visionOptions({ ...state, task: 'multi' }).sensor, 'grid', 'multi: the grid');
  assert.equal(visionOptions({ ...state, mode: 'soft' }).sensor, undefined, 'soft attention reads the grid');
});

test('the pretrained retina: its glimpses drawn where predict() says, numbered, with the path; the step selector moves them; no grid map', async () => {
  const { page, errors } = await open(PRETRAINED);
  assert.equal(await page.evaluate(() => window.attnlabLab.session.info.config.sensor), 'retina');
  assert.match(await text(page, '[data-testid=model-status]'), /^Pretrained model \(cluttered digits, hard attention through the retina\)/);
  await page.waitForSelector('[data-testid=glimpses-attention] rect');
  // the same file and test image read in Node
  const ex = retina.examples({ split: 'test', count: 1, seed: 3 })[0];
  const p = retina.predict(ex.image);
  assert.equal(await text(page, '[data-testid=image-output]'), p.output);
  const T = p.steps.length;
  const slider = page.locator('[data-testid=image-step]');
  for (const t of [0, 2, T - 1]) {
    await slider.fill(String(t));
    const drawn = await drawnBoxes(page);
    const want = [];
    p.steps.slice(0, t + 1).forEach((s, k) => (k === t ? s.location.boxes : [s.location.box]).forEach((b, scale) => want.push({ step: k, scale, ...b })));
    const key = (b) => `${b.step}/${b.scale}`;
    assert.deepEqual(drawn.sort((a, b) => key(a).localeCompare(key(b))), want.sort((a, b) => key(a).localeCompare(key(b))), `glimpse ${t + 1}`);
    assert.match(await text(page, '[data-testid=image-step-label]'), new RegExp(`^${t + 1} of ${T}:`));
    const labels = await page.$$eval('[data-testid=glimpses-attention] text', (ts) => ts.map((x) => x.textContent));
    assert.deepEqual(labels, Array.from({ length: t + 1 }, (_, k) => String(k + 1)), 'numbered in step order');
    const path = await page.$eval('[data-testid=glimpses-attention]', (s) => s.querySelector('[data-role=path]')?.getAttribute('points') ?? '');
    assert.equal(path, t === 0 ? '' : p.steps.slice(0, t + 1).map((s) => `${s.location.x},${s.location.y}`).join(' '));
  }
  // on screen: the finest box of the last glimpse where its pixels lie over the picture
  const frame = await page.locator('[data-testid=overlay-attention]').boundingBox();
  const box = await page.locator(`[data-testid=glimpses-attention] rect[data-step="${T - 1}"][data-scale="0"]`).boundingBox();
  const b = p.steps[T - 1].location.box;
  const px = frame.width / ex.image.cols;
  assert.ok(Math.abs(box.x - (frame.x + b.left * px)) < 2 && Math.abs(box.y - (frame.y + b.top * px)) < 2, `box at ${box.x},${box.y}`);
  assert.ok(Math.abs(box.width - b.width * px) < 3, `box ${box.width} px wide`);
  const dashed = await page.$$eval(`[data-testid=glimpses-attention] rect[data-step="${T - 1}"]`, (rs) => rs.map((r) => [r.dataset.scale, r.getAttribute('stroke-dasharray')]));
  assert.ok(dashed.every(([scale, dash]) => (scale === '0') === (dash === null)), 'the finest solid, the coarser dashed');
  // the legend says what the boxes are; the panels that need a grid map say there is none
  assert.match(await text(page, '[data-testid=glimpse-legend-attention]'), /solid: glimpse \d+'s finest patch, 12 × 12.*dashed: its coarser patches, 24 × 24 and 48 × 48/s);
  assert.match(await text(page, '[data-testid=image-tau]'), /The retina has no grid map/);
  assert.match(await text(page, '[data-testid=figure-overlay-attention] figcaption'), /no grid map/);
  assert.equal(await page.$eval('[data-testid=legend-overlay-attention]', (l) => l.innerText.trim()), 'the image alone', 'no colour scale of a map');
  // the drawing panel: one picture with all the glimpses, no map per step
  await page.click('button:has-text("Show a test digit")');
  await page.waitForFunction((n) => document.querySelectorAll('[data-testid=glimpses-draw] text').length === n, T);
  assert.match(await text(page, '[data-testid=figure-overlay-draw-0] figcaption'), new RegExp(`retina's ${T} glimpses.*no grid map`));
  // saved and loaded back (from a text task): the settings say retina, and it reads the same
  const bytes = await page.evaluate(async () => Array.from(await window.attnlabLab.session.save()));
  await page.selectOption('#task', 'reverse');
  await page.waitForFunction(() => window.attnlabLab.session.kind === 'seq2seq');
  await page.setInputFiles('#load', { name: 'retina.attnlab', mimeType: 'application/octet-stream', buffer: Buffer.from(bytes) });
  await page.waitForFunction(() => window.attnlabLab.session.info?.config.sensor === 'retina');
  await page.evaluate(() => window.attnlabLab.settled()); // the file's settings are the state's once its load is done
  const state = await page.evaluate(() => ({ ...window.attnlabLab.state }));
  assert.deepEqual([state.task, state.mode, state.sensor, state.hidden], ['cluttered', 'hard', 'retina', 24]);
  await page.waitForFunction((out) => document.querySelector('[data-testid=image-output]').textContent === out, p.output);
  assert.equal(await page.$eval('#sensor', (el) => el.value), 'retina');
  assert.deepEqual(errors, []);
  await page.close();
});

test('the sensor control: disabled with the reason off hard mode and on multi; choosing the retina trains one live, and the link round-trips', async () => {
  const { page, errors } = await open('#ver=2&task=cluttered&mode=soft&start=scratch&batch=8');
  const sensor = page.locator('[data-testid=sensor]');
  assert.equal(await sensor.isDisabled(), true);
  assert.match(await page.$eval('#sensor-field', (l) => l.title), /choose hard attention/);
  assert.match(await text(page, '[data-testid=sensor-why]'), /choose hard attention/);
  await page.selectOption('#mode', 'hard');
  await page.waitForFunction(() => window.attnlabLab.state.mode === 'hard' && !document.querySelector('#sensor').disabled);
  assert.equal(await page.$eval('[data-testid=sensor-why]', (w) => w.hidden), true);
  await page.selectOption('#sensor', 'retina');
  await page.waitForFunction(() => window.attnlabLab.session.info?.config.sensor === 'retina');
  assert.match(page.url(), /sensor=retina/);
  assert.equal(await page.isDisabled('#channels'), true, 'the retina has no CNN');
  // trained live: steps count up and the glimpses are drawn from the model as it is now
  await page.click('#play');
  await page.waitForFunction(() => window.attnlabLab.session.steps >= 20, null, { timeout: 60000 });
  await page.click('#play');
  await page.waitForFunction(() => !window.attnlabLab.session.playing);
  await page.evaluate(() => window.attnlabLab.session.busy);
  await page.waitForSelector('[data-testid=glimpses-attention] rect');
  assert.match(await text(page, '[data-testid=image-tau]'), /no grid map/);
  // the link opens the same settings and the same kind of model
  const link = page.url();
  const again = await openPage(env.browser, link, DESKTOP);
  await again.page.waitForSelector('body[data-ready=true]', { timeout: 60000 });
  assert.equal(await again.page.$eval('#sensor', (s) => s.value), 'retina');
  assert.equal(await again.page.evaluate(() => window.attnlabLab.session.info.config.sensor), 'retina');
  await again.page.close();
  // the pretrained model of these settings is the retina, not the grid's hard model
  await page.click('#pretrained');
  await page.waitForFunction(() => window.attnlabLab.session.steps > 1000);
  await page.evaluate(() => window.attnlabLab.settled()); // the status follows once the loaded model is evaluated
  assert.deepEqual(await page.evaluate(() => [window.attnlabLab.session.info.config.sensor, window.attnlabLab.state.sensor]), ['retina', 'retina']);
  assert.match(await text(page, '[data-testid=model-status]'), /^Pretrained model/);
  // multi reads several digits: the control is disabled and says why, the model reads the grid
  await page.selectOption('#task', 'multi');
  await page.waitForFunction(() => window.attnlabLab.state.task === 'multi' && window.attnlabLab.session.info?.config.task === 'multi');
  assert.equal(await sensor.isDisabled(), true);
  assert.match(await text(page, '[data-testid=sensor-why]'), /one digit/);
  assert.equal(await page.evaluate(() => window.attnlabLab.session.info.config.sensor), 'grid');
  // the grid's map is back, and nothing of the retina stays on screen
  await page.waitForFunction(() => document.querySelector('[data-testid=image-output]').textContent !== '–');
  // the grid model's first drawing replaces the retina's boxes (awaited: it follows the reading under load)
  await page.waitForFunction(() => document.querySelectorAll('[data-testid=glimpses-attention] rect').length === 0);
  assert.equal(await page.isHidden('[data-testid=glimpse-legend-attention]'), true);
  assert.doesNotMatch(await text(page, '[data-testid=image-tau]'), /retina/);
  assert.deepEqual(errors, []);
  await page.close();
});

test('a bad sensor in a link falls back to the grid and the notice names it', async () => {
  const { page, errors } = await open('#ver=2&task=cluttered&mode=hard&sensor=fovea');
  assert.equal(await page.evaluate(() => window.attnlabLab.state.sensor), 'grid');
  assert.match(await text(page, '[data-testid=notice]'), /\bsensor \(/);
  assert.equal(await page.evaluate(() => window.attnlabLab.session.info.config.sensor), 'grid');
  assert.equal(await page.$eval('#sensor', (s) => s.value), 'grid');
  assert.deepEqual(errors, []);
  await page.close();
});

test('axe and screenshots at 1280×900 and 390×844: the retina panels fit the screen', async () => {
  for (const [viewport, name] of [[DESKTOP, 'desktop'], [PHONE, 'phone']]) {
    const { page, errors } = await open(PRETRAINED, viewport);
    await page.waitForSelector('[data-testid=glimpses-attention] rect');
    await page.locator('[data-testid=image-step]').fill('3');
    await page.click('button:has-text("Show a test digit")');
    await page.waitForSelector('[data-testid=glimpses-draw] rect');
    assert.deepEqual(await axeViolations(page), [], `at ${viewport.width}px`);
    const width = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
    assert.ok(width[0] <= width[1], `page ${width[0]} px wide at ${viewport.width}px`);
    await fullScreenshot(page, `${SHOTS}lab-retina-${name}.png`);
    await page.locator('[data-testid=figure-overlay-attention]').screenshot({ path: `${SHOTS}lab-retina-glimpses-${name}.png` });
    await page.locator('[data-testid=figure-overlay-draw-0]').screenshot({ path: `${SHOTS}lab-retina-drawing-${name}.png` });
    await page.locator('#image-options').screenshot({ path: `${SHOTS}lab-retina-controls-${name}.png` });
    // soft attention (the lab's first image screen): the control disabled, saying why
    await page.selectOption('#mode', 'soft');
    await page.waitForFunction(() => window.attnlabLab.session.info?.config.mode === 'soft');
    assert.equal(await page.isDisabled('#sensor'), true);
    assert.deepEqual(await axeViolations(page), [], `soft, at ${viewport.width}px`);
    await page.locator('#image-options').screenshot({ path: `${SHOTS}lab-retina-controls-off-${name}.png` });
    assert.deepEqual(errors, []);
    await page.close();
  }
});
