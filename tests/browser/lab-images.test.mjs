// The lab's image tasks in headless Chromium, used as a person would: train a
// digit reader in the worker and see its attention over a test image (pixels
// checked), step through a multi-digit answer, see hard attention's glimpse,
// draw a digit with the mouse and watch it read, run the soft / hard / none
// experiment, open bad links, lose the digits file without losing the model,
// audit with axe-core; on a phone the maps, the box and the experiment's
// intervals fit the screen. Screenshots at 1440×900 and 390×844 go to test-results/browser/.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { DESKTOP, PHONE, SHOTS, axeViolations, fullScreenshot, openPage, startBrowser } from './browser.mjs';
import { fixed } from '../../web/ui/format.js';


let env;
before(async () => {
  env = await startBrowser();
});
after(() => env?.close());

const lab = (page) => page.evaluate(() => ({ steps: window.attnlabLab.session.steps, kind: window.attnlabLab.session.kind }));
const text = (page, selector) => page.$eval(selector, (e) => e.textContent.trim());

async function open(hash, viewport = DESKTOP) {
  const opened = await openPage(env.browser, `${env.url}lab.html${hash}`, viewport);
  await opened.page.waitForSelector('body[data-ready=true]', { timeout: 60000 });
  return opened;
}

/** Trains with the Train button until `steps` steps are done (or `until` holds), then pauses and waits for the worker. */
async function train(page, steps, until = () => true) {
  await page.click('#play');
  await page.waitForFunction((n) => window.attnlabLab.session.steps >= n, steps, { timeout: 120000, polling: 100 });
  await page.waitForFunction(until, null, { timeout: 120000, polling: 100 });
  await page.click('#play');
  await page.waitForFunction(() => !window.attnlabLab.session.playing);
  await page.evaluate(() => window.attnlabLab.session.busy);
}

/** The RGBA bytes of a canvas found by its test id. */
const pixels = (page, testid) => page.$eval(`[data-testid="${testid}"]`, (c) => ({
  width: c.width, height: c.height, data: Array.from(c.getContext('2d').getImageData(0, 0, c.width, c.height).data),
}));

/** How many pixels are tinted (not grey: the attention colour over the greys) and how many distinct colours there are. */
function colourStats({ data }) {
  let tinted = 0;
  const colours = new Set();
  for (let p = 0; p < data.length; p += 4) {
    const [r, g, b] = [data[p], data[p + 1], data[p + 2]];
    if (Math.max(Math.abs(r - g), Math.abs(g - b), Math.abs(r - b)) > 12) tinted++;
    colours.add((r << 16) | (g << 8) | b);
  }
  return { tinted, colours: colours.size, total: data.length / 4 };
}

/** Draws a stroke through `points` (fractions of the canvas) with the mouse. */
async function stroke(page, testid, points) {
  const canvas = page.locator(`[data-testid="${testid}"]`);
  await canvas.evaluate((c) => c.scrollIntoView({ block: 'center' }));
  const box = await canvas.boundingBox();
  const at = ([fx, fy]) => [box.x + fx * box.width, box.y + fy * box.height];
  await page.mouse.move(...at(points[0]));
  await page.mouse.down();
  for (const p of points.slice(1)) await page.mouse.move(...at(p), { steps: 4 });
  await page.mouse.up();
}

/** Bilinear upsampling between cell centres, in float64: the reference for the overlay's upsample(). */
function upsampleReference(map, rows, cols, cell) {
  const along = (p, n, side) => {
    const t = Math.min(Math.max((p + 0.5) / side - 0.5, 0), n - 1);
    const i0 = Math.floor(t);
    return [i0, Math.min(i0 + 1, n - 1), t - i0];
  };
  const out = [];
  for (let r = 0; r < rows; r++) {
    const [a0, a1, fy] = along(r, map.rows, cell.height);
    for (let c = 0; c < cols; c++) {
      const [b0, b1, fx] = along(c, map.cols, cell.width);
      const v = (i, j) => map.data[Math.min(i, map.rows - 1) * map.cols + Math.min(j, map.cols - 1)];
      out.push((1 - fy) * ((1 - fx) * v(a0, b0) + fx * v(a0, b1)) + fy * ((1 - fx) * v(a1, b0) + fx * v(a1, b1)));
    }
  }
  return out;
}

test('the overlay upsamples a grid as the float64 reference does; the drawing canvas gives back the image it shows', async () => {
  const { page, errors } = await open('#ver=2&task=centered&channels=8%2C16');
  // a 7×7 grid of 8-pixel cells over a 60-pixel side (the last 4 pixels take the last cell), and a 3×5 grid stretched
  const cases = [
    { map: { rows: 7, cols: 7, data: Array.from({ length: 49 }, (_, i) => ((i * 37) % 11) / 10) }, rows: 60, cols: 60, cell: { height: 8, width: 8 } },
    { map: { rows: 3, cols: 5, data: Array.from({ length: 15 }, (_, i) => Math.sin(i) ** 2) }, rows: 40, cols: 100, cell: { height: 40 / 3, width: 20 } },
  ];
  for (const c of cases) {
    const got = await page.evaluate(async ({ map, rows, cols, cell }) => {
      const { upsample } = await import('./ui/image-overlay.js');
      return Array.from(upsample({ ...map, data: Float32Array.from(map.data) }, rows, cols, cell));
    }, c);
    const want = upsampleReference(c.map, c.rows, c.cols, c.cell);
    const worst = Math.max(...got.map((v, i) => Math.abs(v - want[i]) / (1e-6 + Math.abs(want[i]))));
    assert.ok(worst < 1e-5, `${c.rows}×${c.cols}: max relative difference ${worst}`);
    // at a cell's centre the map's own value
    assert.ok(Math.abs(got[Math.floor(c.cell.height * 1.5) * c.cols + Math.floor(c.cell.width * 1.5)] - c.map.data[c.map.cols + 1]) < 0.2);
  }
  // the drawing canvas: a test-sized bar shown on it reads back as the same bar
  const back = await page.evaluate(async () => {
    const { createDrawing } = await import('./ui/drawing.js');
    const d = createDrawing({ id: 'unit', label: 'unit', rows: 28, cols: 28 });
    const data = new Float32Array(28 * 28);
    for (let r = 4; r < 24; r++) for (let c = 12; c < 16; c++) data[r * 28 + c] = 1;
    d.setImage({ rows: 28, cols: 28, data });
    const same = d.image();
    const small = d.image({ height: 10, center: true });
    return { data: Array.from(data), same: Array.from(same.data), small: Array.from(small.data), empty: d.empty };
  });
  assert.equal(back.empty, false);
  const diff = back.same.map((v, i) => Math.abs(v - back.data[i]));
  assert.ok(Math.max(...diff) < 0.5, `largest pixel difference ${Math.max(...diff)} (edges are smoothed)`);
  assert.ok(diff.reduce((s, x) => s + x, 0) / diff.length < 0.03, 'on average the same picture');
  const rowsOf = (img) => new Set(img.map((v, p) => [v, Math.floor(p / 28)]).filter(([v]) => v > 0.5).map(([, r]) => r));
  const small = [...rowsOf(back.small)];
  assert.ok(small.length >= 9 && small.length <= 11, `scaled to ${small.length} rows`);
  assert.ok(Math.abs((Math.min(...small) + Math.max(...small) + 1) / 2 - 14) <= 1, 'centred');
  assert.deepEqual(errors, []);
  await page.close();
});

test('training a digit reader in the worker: curves grow, and the attention overlay and the saliency are drawn over the test image', async () => {
  const { page, errors } = await open('#ver=2&task=centered&channels=8%2C16');
  assert.deepEqual(await lab(page), { steps: 0, kind: 'vision' });
  assert.equal(await page.$eval('#h-align', (e) => e.closest('section').hidden), true, 'the text panels are hidden');
  await train(page, 20);
  const losses = await page.evaluate(() => window.attnlabLab.session.losses.length);
  assert.ok(losses >= 20, `${losses} loss points`);
  assert.equal(await page.$$eval('[data-testid=loss-chart] path.series', (p) => p.length), 1);
  assert.equal(await page.$$eval('[data-testid=acc-chart] path.series', (p) => p.length), 1);
  assert.equal(await text(page, '#acc-caption'), 'Test accuracy (digits read right)');
  assert.match(await text(page, '[data-testid=image-output]'), /^\d$/);
  assert.match(await text(page, '[data-testid=image-truth]'), /^\(the answer: \d, (right|wrong)\)$/);

  // the overlay: the 28×28 test digit (white ink shows as bright pixels) tinted by the attention colours
  const overlay = await pixels(page, 'overlay-attention');
  assert.deepEqual([overlay.width, overlay.height], [28, 28]);
  const stats = colourStats(overlay);
  assert.ok(stats.tinted > stats.total * 0.9, `attention tints the image (${stats.tinted} of ${stats.total} pixels)`);
  assert.ok(stats.colours > 20, `${stats.colours} colours: the digit and a varying map`);
  // the overlay's pixels follow the image: the ink's pixels are brighter than the background's
  const brightness = (d, p) => d[4 * p] + d[4 * p + 1] + d[4 * p + 2];
  const image = await page.evaluate(async () => {
    const reading = await window.attnlabLab.session.read('readImage', { image: (await window.attnlabLab.session.examples(1, window.attnlabLab.state.image))[0].image });
    return Array.from(reading.canvas.data);
  });
  const ink = image.map((v, p) => [v, p]).filter(([v]) => v > 0.8).map(([, p]) => brightness(overlay.data, p));
  const paper = image.map((v, p) => [v, p]).filter(([v]) => v === 0).map(([, p]) => brightness(overlay.data, p));
  const mean = (xs) => xs.reduce((s, x) => s + x, 0) / xs.length;
  assert.ok(mean(ink) > mean(paper) + 150, `ink ${mean(ink)} vs background ${mean(paper)}`);
  assert.equal(await page.$eval('[data-testid=legend-overlay-attention]', (l) => l.hidden), false, 'the colour legend is shown');
  assert.match(await text(page, '[data-testid=legend-overlay-attention]'), /attention weight/);
  assert.equal(await page.$eval('[data-testid=glimpse-attention]', (g) => g.hidden), true, 'soft attention has no glimpse box');

  const saliency = colourStats(await pixels(page, 'overlay-saliency'));
  assert.ok(saliency.colours > 20, 'the saliency map is drawn');
  assert.match(await text(page, '[data-testid=legend-overlay-saliency]'), /∂ log p \/ ∂ pixel/);
  assert.match(await text(page, '[data-testid=image-tau]'), /^Attention and saliency \(summed per cell\): the most-attended cell is (not )?the most salient one; the 3 most-attended cells hold \d+% of the saliency \(an unrelated map: about 6%\); \d of the 3 .* Kendall's τ over all 49 cells: −?\d\.\d\d(\.|; over the \d+ cells where either map is bright: −?\d\.\d\d(, higher: .*)?\.)$/);

  // another test image: a new reading, and the link remembers which
  await page.click('#image-random');
  await page.waitForFunction(() => /image=\d+/.test(location.hash));
  assert.deepEqual(errors, []);
  await page.close();
});

test('a multi-digit answer: the step slider and the animation move the attention from step to step', async () => {
  const { page, errors } = await open('#ver=2&task=multi&channels=8%2C16&batch=16');
  // an untrained reader ends its answer at once: train until it reads two digits or more
  const stepsShown = () => page.$eval('[data-testid=image-step]', (s) => Number(s.max) + 1);
  for (let k = 0; k < 20 && (await stepsShown()) < 2; k++) {
    await train(page, (await lab(page)).steps + 5, () => Number(document.querySelector('[data-testid=image-step]').max) >= 1);
  }
  const max = Number(await page.$eval('[data-testid=image-step]', (s) => s.max));
  assert.ok(max >= 1, `${max + 1} output steps`);
  assert.match(await text(page, '[data-testid=image-step-label]'), /^1 of \d: /);
  const first = await pixels(page, 'overlay-attention');
  assert.deepEqual([first.width, first.height], [100, 40]);
  await page.$eval('[data-testid=image-step]', (s) => {
    s.value = '1';
    s.dispatchEvent(new Event('input'));
  });
  assert.match(await text(page, '[data-testid=image-step-label]'), /^2 of \d: /);
  assert.match(await text(page, '[data-testid=figure-overlay-attention] figcaption'), /step 2 of/);
  const second = await pixels(page, 'overlay-attention');
  assert.notDeepEqual(second.data, first.data, 'step 2 has its own attention');
  // animate: the step advances by itself, and a second press stops it
  await page.click('#image-animate');
  assert.equal(await page.$eval('#image-animate', (b) => b.getAttribute('aria-pressed')), 'true');
  await page.waitForFunction(() => document.querySelector('[data-testid=image-step]').value !== '1', null, { timeout: 3000 });
  await page.click('#image-animate');
  assert.equal(await page.$eval('#image-animate', (b) => b.getAttribute('aria-pressed')), 'false');
  assert.deepEqual(errors, []);
  await page.close();
});

test('hard attention draws its sampled glimpse as a box on the image, with a legend entry', async () => {
  const { page, errors } = await open('#ver=2&task=cluttered&mode=hard&batch=16');
  await train(page, 2);
  const glimpse = page.locator('[data-testid=glimpse-attention]');
  assert.equal(await glimpse.isVisible(), true);
  const box = await glimpse.boundingBox();
  const frame = await page.locator('[data-testid=overlay-attention]').boundingBox();
  // a cell of the 7×7 grid: 8 of the canvas's 60 pixels, inside the picture
  assert.ok(Math.abs(box.width - (frame.width * 8) / 60) < 1.5, `box ${box.width} px wide in a ${frame.width} px picture`);
  assert.ok(box.x >= frame.x - 1 && box.x + box.width <= frame.x + frame.width + 1);
  assert.ok(box.y >= frame.y - 1 && box.y + box.height <= frame.y + frame.height + 1);
  const cell = await page.evaluate(async () => {
    const s = window.attnlabLab.session;
    const r = await s.read('readImage', { image: (await s.examples(1, window.attnlabLab.state.image))[0].image });
    return r.steps[0].location;
  });
  assert.ok(Math.abs(box.x - frame.x - (frame.width * cell.col * 8) / 60) < 1.5, 'the box sits on the sampled cell');
  assert.match(await text(page, '[data-testid=legend-overlay-attention]'), /glimpse/);
  assert.deepEqual(errors, []);
  await page.close();
});

test('the drawing canvas: strokes drawn with the mouse are read live; Clear and a test digit work by keyboard', async () => {
  const { page, errors } = await open('#ver=2&task=centered&channels=8%2C16');
  await train(page, 30);
  assert.equal(await text(page, '[data-testid=draw-output]'), '–');
  const reads = () => page.evaluate(() => window.readCount);
  await page.evaluate(() => {
    window.readCount = 0;
    const s = window.attnlabLab.session;
    const read = s.read.bind(s);
    s.read = (action, args) => {
      if (action === 'readImage') { window.readCount++; window.lastRead = args.image; }
      return read(action, args);
    };
  });
  // a "1": one vertical stroke
  await stroke(page, 'drawing-digit', [[0.5, 0.2], [0.5, 0.5], [0.48, 0.8]]);
  await page.waitForFunction(() => document.querySelector('[data-testid=draw-output]').textContent !== '–');
  assert.match(await text(page, '[data-testid=draw-output]'), /^\d$/);
  const n1 = await reads();
  assert.ok(n1 >= 1, 'the model read the drawing');
  // the image the engine got: 28×28 greys, ink about 20 pixels tall in the middle columns
  const image = await page.evaluate(() => ({ rows: window.lastRead.rows, cols: window.lastRead.cols, data: Array.from(window.lastRead.data) }));
  assert.deepEqual([image.rows, image.cols], [28, 28]);
  const inkRows = new Set(image.data.map((v, p) => [v, Math.floor(p / 28)]).filter(([v]) => v > 0.3).map(([, r]) => r));
  assert.ok(inkRows.size >= 17 && inkRows.size <= 23, `${inkRows.size} rows of ink`);
  assert.ok(image.data.every((v) => v >= 0 && v <= 1));
  const overlay = colourStats(await pixels(page, 'overlay-draw-0'));
  assert.ok(overlay.colours > 5, 'the attention over the drawing is drawn');
  // a second stroke: read again
  await stroke(page, 'drawing-digit', [[0.3, 0.3], [0.7, 0.3]]);
  await page.waitForFunction((n) => window.readCount > n, n1);
  // keyboard: Clear empties the reading, "Show a test digit" puts one on the canvas and it is read
  await page.focus('[data-testid=drawing-clear-digit]');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.querySelector('[data-testid=draw-output]').textContent === '–');
  await page.getByRole('button', { name: 'Show a test digit' }).focus();
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.querySelector('[data-testid=draw-output]').textContent !== '–');
  assert.deepEqual(errors, []);
  await page.close();
});

test('the soft / hard / none experiment trains three models from one seed and plots three test accuracy curves with a legend', async () => {
  const { page, errors } = await open('#ver=2&task=centered&channels=8%2C16&modeSteps=25&batch=16');
  await page.click('#run-modes');
  assert.equal(await text(page, '#run-modes'), 'Stop');
  await page.waitForFunction(() => document.querySelector('#run-modes').textContent === 'Run', null, { timeout: 120000 });
  assert.equal(await page.$eval('#error', (e) => e.hidden), true);
  const names = await page.$$eval('[data-testid=modes-chart] path.series', (ps) => ps.map((p) => p.dataset.name));
  assert.deepEqual(names, ['soft attention', 'hard attention', 'none (average pooling)']);
  // each curve: before training and after the 25 steps
  const points = await page.$$eval('[data-testid=modes-chart] path.series', (ps) => ps.map((p) => p.getAttribute('d').split('L').length));
  assert.deepEqual(points, [2, 2, 2]);
  assert.deepEqual(await page.$$eval('[data-testid=modes-legend] .legend-item', (items) => items.map((i) => i.textContent)), names);
  // the final accuracies: 1,000 test images each, with 95% intervals drawn at the last step and compared in words
  const readout = await text(page, '[data-testid=modes-readout]');
  const m = readout.match(/^After 25 steps, on 1,000 test images: soft attention (\d+\.\d)% \(95% interval (\d+\.\d)% to (\d+\.\d)%\), hard attention (\d+\.\d)% \(95% interval (\d+\.\d)% to (\d+\.\d)%\), none \(average pooling\) (\d+\.\d)% \(95% interval (\d+\.\d)% to (\d+\.\d)%\)\. soft vs hard: the intervals (do not )?overlap.*; soft vs none: .*; hard vs none: .*\. The bars/);
  assert.ok(m, readout);
  for (let k = 0; k < 3; k++) {
    const [p, lo, hi] = m.slice(1 + 3 * k, 4 + 3 * k).map(Number);
    assert.ok(lo <= p && p <= hi && hi - lo < 7, `interval ${lo}..${hi} around ${p}`);
  }
  assert.deepEqual(await page.$$eval('[data-testid=modes-chart] path.interval', (ps) => ps.map((p) => p.dataset.name)), names);
  await page.locator('[data-testid=modes-chart]').locator('xpath=..').screenshot({ path: `${SHOTS}lab-modes-intervals.png` });
  // the experiment's models are freed: only the lab's own model is left in the worker
  assert.equal(await lab(page).then((l) => l.steps), 0, 'the lab model did not train');
  // another mode clears the result (nothing stale)
  await page.selectOption('#mode', 'hard');
  await page.waitForFunction(() => !document.querySelector('[data-testid=modes-chart] svg'));
  assert.equal(await text(page, '[data-testid=modes-readout]'), '');
  assert.deepEqual(errors, []);
  await page.close();
});

test('changing the task or the mode clears the old readouts, and the link keeps the image settings', async () => {
  const { page, errors } = await open('#ver=2&task=centered&channels=8%2C16');
  await train(page, 5);
  await page.selectOption('#mode', 'none');
  await page.evaluate(() => window.attnlabLab.settled());
  await page.waitForFunction(() => window.attnlabLab.session.steps === 0 && document.querySelector('[data-testid=step]').textContent === '0');
  assert.equal(await page.$$eval('[data-testid=loss-chart] path.series', (p) => p.length), 0, 'no old loss curve');
  await page.waitForFunction(() => /no ranking of cells/.test(document.querySelector('[data-testid=image-tau]').textContent));
  assert.match(await page.evaluate(() => location.hash), /mode=none/);
  // to a text task and back: the image panels hide, the text panels show
  await page.selectOption('#task', 'reverse');
  await page.waitForFunction(() => window.attnlabLab.session.kind === 'seq2seq');
  assert.equal(await page.$eval('#h-image', (e) => e.closest('section').hidden), true);
  assert.equal(await page.$eval('#h-align', (e) => e.closest('section').hidden), false);
  // the captions follow once the new model's views open (the session takes the model first)
  await page.waitForFunction(() => document.querySelector('#acc-caption').textContent === 'Validation sequence accuracy');
  await page.selectOption('#task', 'cluttered');
  await page.waitForFunction(() => window.attnlabLab.session.kind === 'vision');
  // the controls follow once the task's (pretrained) model is in place
  await page.waitForFunction(() => !document.querySelector('#clutter-field').hidden);
  assert.deepEqual(errors, []);
  await page.close();
});

test('a bad image field in a link falls back to its default and the notice names it', async () => {
  const { page, errors } = await open('#ver=2&task=cluttered&mode=magic&channels=7&clutter=99&image=-3');
  const state = await page.evaluate(() => ({ ...window.attnlabLab.state }));
  assert.equal(state.task, 'cluttered');
  assert.equal(state.mode, 'soft');
  assert.equal(state.channels, '8,16,32');
  assert.equal(state.clutter, 4);
  assert.equal(state.image, 1);
  const notice = await text(page, '[data-testid=notice]');
  for (const name of ['mode', 'channels', 'clutter', 'image']) assert.match(notice, new RegExp(`\\b${name} \\(`));
  assert.equal(await lab(page).then((l) => l.kind), 'vision');
  assert.deepEqual(errors, []);
  await page.close();
});

test('when the digits cannot be loaded the error says so (ERR_DATA) and the text model and its training are kept', async () => {
  const opened = await openPage(env.browser, 'about:blank', DESKTOP);
  const { page } = opened;
  await page.route('**/data/mnist.bin.gz', (route) => route.fulfill({ status: 404, body: 'not here' }));
  await page.goto(`${env.url}lab.html#minLength=4&maxLength=6`);
  await page.waitForSelector('body[data-ready=true]', { timeout: 60000 });
  await train(page, 10);
  const before = await lab(page);
  await page.selectOption('#task', 'cluttered');
  await page.waitForSelector('[data-testid=error]:not([hidden])');
  // in the learner's words, the engine's message (code and HTTP status) under Details
  assert.match(await text(page, '[data-testid=error] > p'), /digits could not be downloaded.*model you had is kept/);
  assert.match(await text(page, '[data-testid=error] details'), /ERR_DATA.*HTTP 404/);
  assert.deepEqual(await lab(page), before, 'the text model and its steps stay');
  assert.equal(await page.$eval('#task', (s) => s.value), 'reverse', 'the settings are back to the kept model');
  assert.equal(await page.$eval('#h-align', (e) => e.closest('section').hidden), false);
  assert.doesNotMatch(await page.evaluate(() => location.hash), /task=cluttered/);
  // the file comes back: the image task now works
  await page.unroute('**/data/mnist.bin.gz');
  await page.selectOption('#task', 'cluttered');
  await page.waitForFunction(() => window.attnlabLab.session.kind === 'vision', null, { timeout: 60000 });
  assert.equal(await page.$eval('[data-testid=error]', (e) => e.hidden), true);
  await page.close();
});

test('a saved image model loads back and reads the test image the same', async () => {
  const { page, errors } = await open('#ver=2&task=centered&channels=8%2C16&mode=hard');
  await train(page, 5);
  const before = await text(page, '[data-testid=image-output]');
  const trained = await lab(page).then((l) => l.steps);
  const bytes = await page.evaluate(async () => Array.from(await window.attnlabLab.session.save()));
  await page.selectOption('#task', 'reverse');
  await page.waitForFunction(() => window.attnlabLab.session.kind === 'seq2seq');
  await page.setInputFiles('#load', { name: 'digits.attnlab', mimeType: 'application/octet-stream', buffer: Buffer.from(bytes) });
  await page.waitForFunction(() => window.attnlabLab.session.kind === 'vision');
  await page.waitForFunction(() => /Loaded digits\.attnlab: centered/.test(document.querySelector('[data-testid=notice]').textContent));
  const state = await page.evaluate(() => ({ ...window.attnlabLab.state }));
  assert.deepEqual([state.task, state.mode, state.channels], ['centered', 'hard', '8,16']);
  await page.waitForFunction((b) => document.querySelector('[data-testid=image-output]').textContent === b, before);
  assert.equal(await lab(page).then((l) => l.steps), trained);
  assert.deepEqual(errors, []);
  await page.close();
});

/**
 * Nothing on the page is wider than the screen, and every element of `selector` lies inside it,
 * or inside a box on the screen that scrolls sideways (the phone's run bar: one row of controls).
 */
async function fitsScreen(page, selector) {
  const r = await page.evaluate((sel) => {
    const scrolled = (e) => {
      for (let a = e.parentElement; a; a = a.parentElement) {
        if (['auto', 'scroll'].includes(getComputedStyle(a).overflowX)) return a.getBoundingClientRect().right <= innerWidth + 1;
      }
      return false;
    };
    const wide = Array.from(document.querySelectorAll(`${sel} *`))
      .filter((e) => e.getClientRects().length > 0 && e.getBoundingClientRect().right > innerWidth + 1 && !scrolled(e))
      .map((e) => `${e.tagName.toLowerCase()}#${e.id || e.dataset.testid || ''}`);
    return { page: document.documentElement.scrollWidth, screen: innerWidth, wide: wide.slice(0, 5) };
  }, selector);
  assert.ok(r.page <= r.screen, `the page is ${r.page} px wide on a ${r.screen} px screen`);
  assert.deepEqual(r.wide, [], `${selector}: elements past the screen's right edge`);
}

test('on a phone (390×844): the image panel’s maps, legends and glimpse box, and the soft / hard / none experiment with its intervals', async () => {
  const { page, errors } = await open('#ver=2&task=cluttered&mode=hard&batch=16&modeSteps=25', PHONE);
  await train(page, 2);
  for (const id of ['attention', 'saliency']) {
    const stats = colourStats(await pixels(page, `overlay-${id}`));
    assert.ok(stats.colours > 20, `the ${id} map is drawn (${stats.colours} colours)`);
    assert.equal(await page.isVisible(`[data-testid=legend-overlay-${id}]`), true, `the ${id} legend`);
  }
  // the glimpse box: one 8-pixel cell of the 60-pixel canvas, inside the picture, on the cell read
  const glimpse = page.locator('[data-testid=glimpse-attention]');
  await glimpse.scrollIntoViewIfNeeded();
  const box = await glimpse.boundingBox();
  const frame = await page.locator('[data-testid=overlay-attention]').boundingBox();
  assert.ok(frame.x >= 0 && frame.x + frame.width <= PHONE.width, `the picture spans ${frame.x}..${frame.x + frame.width}`);
  assert.ok(Math.abs(box.width - (frame.width * 8) / 60) < 1.5, `box ${box.width} px wide in a ${frame.width} px picture`);
  const cell = await page.evaluate(async () => {
    const s = window.attnlabLab.session;
    return (await s.read('readImage', { image: (await s.examples(1, window.attnlabLab.state.image))[0].image })).steps[0].location;
  });
  assert.ok(Math.abs(box.x - frame.x - (frame.width * cell.col * 8) / 60) < 1.5, 'the box sits on the cell read');
  assert.ok(Math.abs(box.y - frame.y - (frame.height * cell.row * 8) / 60) < 1.5);
  // the readout's τ sentence follows its numbers: the faint cells are blamed only when τ over the bright cells is higher by 0.1
  const step = await page.evaluate(async () => {
    const s = window.attnlabLab.session;
    const { tau, agreement } = (await s.read('readImage', { image: (await s.examples(1, window.attnlabLab.state.image))[0].image })).steps[0];
    return { tau, bright: agreement.tauActive, active: agreement.active };
  });
  const tail = `Kendall's τ over all 49 cells: ${fixed(step.tau, 2)}` + (step.bright === null ? '.'
    : `; over the ${step.active} cells where either map is bright: ${fixed(step.bright, 2)}`
      + (step.bright - step.tau >= 0.1 ? ', higher: the faint cells, whose order no eye sees, pull τ down.' : '.'));
  const tauText = await text(page, '[data-testid=image-tau]');
  assert.ok(tauText.endsWith(tail), `${tauText}\n expected to end: ${tail}`);
  // the experiment's controls are on screen and usable by touch-sized targets
  for (const sel of ['[data-testid=mode-steps]', '#run-modes']) {
    const b = await page.locator(sel).boundingBox();
    assert.ok(b.x >= 0 && b.x + b.width <= PHONE.width && b.height >= 24, `${sel}: ${JSON.stringify(b)}`);
  }
  await page.click('#run-modes');
  await page.waitForFunction(() => document.querySelector('#run-modes').textContent === 'Run', null, { timeout: 120000 });
  const readout = await text(page, '[data-testid=modes-readout]');
  assert.match(readout, /^After 25 steps, on 1,000 test images: soft attention \d+\.\d% \(95% interval \d+\.\d% to \d+\.\d%\), hard attention .* none \(average pooling\) \d+\.\d% \(95% interval/);
  assert.deepEqual(await page.$$eval('[data-testid=modes-chart] path.interval', (ps) => ps.length), 3, 'three interval bars');
  const chart = await page.locator('[data-testid=modes-chart] svg').boundingBox();
  assert.ok(chart.x >= 0 && chart.x + chart.width <= PHONE.width, `the chart spans ${chart.x}..${chart.x + chart.width}`);
  await fitsScreen(page, 'main');
  await fullScreenshot(page, `${SHOTS}lab-images-phone-experiment.png`);
  assert.deepEqual(errors, []);
  await page.close();
});

test('axe-core: no serious or critical violation in the image states, desktop and phone', async () => {
  for (const viewport of [DESKTOP, PHONE]) {
    for (const hash of ['#ver=2&task=cluttered&mode=hard&batch=16', '#ver=2&task=multi&channels=8%2C16&batch=16']) {
      const { page, errors } = await open(hash, viewport);
      await train(page, 2);
      await stroke(page, 'drawing-digit', [[0.4, 0.3], [0.5, 0.6]]);
      await page.waitForFunction(() => document.querySelector('[data-testid=draw-output]').textContent !== '–');
      assert.deepEqual(await axeViolations(page), [], `${hash} at ${viewport.width}px`);
      assert.deepEqual(errors, []);
      await page.close();
    }
  }
});

test('screenshots at 1440×900 and 390×844: the image panels drawn, nothing wider than the screen', async () => {
  for (const [viewport, name] of [[DESKTOP, 'desktop'], [PHONE, 'phone']]) {
    for (const [hash, task] of [['#ver=2&task=cluttered&mode=hard&batch=32&modeSteps=25', 'cluttered-hard'], ['#ver=2&task=multi&batch=32', 'multi']]) {
      const { page, errors } = await open(hash, viewport);
      await train(page, 10);
      await stroke(page, 'drawing-digit', [[0.3, 0.25], [0.6, 0.25], [0.45, 0.75]]);
      await page.waitForFunction(() => document.querySelector('[data-testid=draw-output]').textContent !== '–');
      if (task === 'cluttered-hard' && name === 'desktop') {
        await page.click('#run-modes');
        await page.waitForFunction(() => document.querySelector('#run-modes').textContent === 'Run', null, { timeout: 120000 });
      }
      const width = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
      assert.ok(width[0] <= width[1], `${task} at ${viewport.width}px: page ${width[0]} px wide`);
      await fullScreenshot(page, `${SHOTS}lab-images-${task}-${name}.png`);
      assert.deepEqual(errors, []);
      await page.close();
    }
  }
});
