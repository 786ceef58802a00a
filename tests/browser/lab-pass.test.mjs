// A learner's pass over the training lab in headless Chromium: the first
// moments of training can be watched (dense early snapshots, slow speeds, a
// replay); a new setting keeps the trained model to go back to; the lab opens
// on a pretrained model, labelled, with "train from scratch" one click away,
// and an untrained model's output says so; Learn's bottleneck link lands on the
// experiment; errors speak the learner's words; on a phone Train and the map
// share one screen; legends never collide; the no-attention note says what the
// model does; a digit can be drawn and an overlay read with the keyboard.
// axe-core after every state; screenshots at 1440×900 and 390×844 go to
// test-results/browser/lab-pass-*.png.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { DESKTOP, PHONE, ROOT, SHOTS, axeViolations, fullScreenshot, openPage, startBrowser } from './browser.mjs';
import { labFieldsFor, labLink } from '../../web/learn/links.js';

let env;
before(async () => {
  env = await startBrowser();
});
after(() => env?.close());

const FRESH = 'lab.html#minLength=6&maxLength=9&text=8123456';
const text = (page, selector) => page.$eval(selector, (e) => e.textContent.trim());
const lab = (page) => page.evaluate(() => ({ steps: window.attnlabLab.session.steps, kind: window.attnlabLab.session.kind }));

async function open(hash, viewport = DESKTOP) {
  const opened = await openPage(env.browser, env.url + hash, viewport);
  await opened.page.waitForSelector('body[data-ready=true]', { timeout: 60000 });
  return opened;
}

async function clean(page, where) {
  assert.deepEqual(await axeViolations(page), [], `axe: ${where}`);
}

async function pause(page) {
  if (await page.evaluate(() => window.attnlabLab.session.playing)) await page.click('#play');
  await page.waitForFunction(() => !window.attnlabLab.session.playing);
  await page.evaluate(() => window.attnlabLab.session.busy);
}

async function trainUntil(page, predicate, arg, timeout = 90000) {
  await page.click('#play');
  await page.waitForFunction(predicate, arg, { timeout, polling: 100 });
  await pause(page);
}

test('the first moments of training can be watched: dense early snapshots, a speed of one step a second, a smooth replay', async () => {
  const { page, errors } = await open(FRESH);
  await trainUntil(page, () => (window.attnlabLab.session.accuracy.at(-1)?.value ?? 0) >= 0.9);
  const { snaps, acc } = await page.evaluate(() => ({
    snaps: window.attnlabLab.session.snapshots.map((s) => s.step),
    acc: window.attnlabLab.session.accuracy,
  }));
  // every one of the first steps has its snapshot, then they spread out
  assert.deepEqual(snaps.slice(0, 6), [0, 1, 2, 3, 4, 5], `snapshots at ${snaps.slice(0, 12).join(', ')}`);
  const learned = acc.find((p) => p.value >= 0.5).step;
  const before = snaps.filter((s) => s <= learned).length;
  assert.ok(before >= 15, `${before} timeline stops before accuracy reached 50% (step ${learned}): ${snaps.join(', ')}`);
  await page.screenshot({ path: `${SHOTS}lab-pass-trained-desktop.png` });

  // scrubbing through by keyboard: the alignment forms over many stops, never in one jump
  await page.focus('[data-testid=timeline]');
  await page.keyboard.press('Home');
  const diag = [];
  const stops = snaps.length;
  for (let k = 0; k < stops; k++) {
    await page.waitForFunction((i) => document.querySelector('[data-testid=timeline-label]').textContent.startsWith(`step ${window.attnlabLab.session.snapshots[i].step}`), k);
    await page.waitForFunction((s) => document.querySelector('[data-testid=align-caption]').textContent.includes(`step ${s.toLocaleString('en')}`), snaps[k]);
    diag.push(await page.$eval('[data-testid=figure-alignment]', (f) => Number(f.dataset.antiDiagonal)));
    await page.keyboard.press('ArrowRight');
  }
  // progress is the best alignment so far (one noisy batch can dip it for a stop)
  const best = diag.map((_, k) => Math.max(...diag.slice(0, k + 1)));
  const jumps = best.slice(1).map((d, k) => d - best[k]);
  const rise = best.at(-1) - diag[0];
  const shown = diag.map((d, k) => `${snaps[k]}:${d.toFixed(2)}`).join(' ');
  assert.ok(rise > 0.4, `the alignment forms: anti-diagonal weight by step ${shown}`);
  assert.ok(Math.max(...jumps) < rise / 2, `no single stop holds most of it: largest step ${Math.max(...jumps).toFixed(2)} of ${rise.toFixed(2)} (${shown})`);
  // the figure says which model it shows, and the step-0 output is labelled untrained
  await page.keyboard.press('Home');
  await page.waitForFunction(() => /as it was at step 0\b/.test(document.querySelector('[data-testid=align-caption]').textContent));
  await page.waitForSelector('[data-testid=output-note]:not([hidden])');
  assert.match(await text(page, '[data-testid=output-note]'), /untrained/);
  await page.screenshot({ path: `${SHOTS}lab-pass-scrubbed-desktop.png` });
  await clean(page, 'scrubbed to step 0');

  // Replay plays the timeline from the first stop to the live end
  await page.click('[data-testid=replay]');
  assert.equal(await page.$eval('[data-testid=replay]', (b) => b.getAttribute('aria-pressed')), 'true');
  await page.waitForFunction(() => document.querySelector('[data-testid=timeline-label]').textContent.endsWith('(live)'), null, { timeout: 60000 });
  await page.waitForFunction(() => document.querySelector('[data-testid=replay]').getAttribute('aria-pressed') === 'false');

  // one step a second: slow enough to watch each step
  await page.selectOption('[data-testid=speed-control]', '-1');
  assert.match(page.url(), /[#&]speed=-1(&|$)/);
  const from = (await lab(page)).steps;
  await page.click('#play');
  await page.waitForTimeout(2500);
  await pause(page);
  const done = (await lab(page)).steps - from;
  assert.ok(done >= 1 && done <= 4, `${done} steps in 2.5 s at one step a second`);
  assert.deepEqual(errors, []);
  await page.close();
});

test('changing a setting keeps the trained model: "Back to it" brings it back with its steps, settings and output', async () => {
  const { page, errors } = await open(FRESH);
  await trainUntil(page, () => window.attnlabLab.session.steps >= 60);
  const trained = await page.evaluate(async () => {
    const { session, state } = window.attnlabLab;
    return { steps: session.steps, output: (await session.read('translate', { text: state.text, options: { beam: 1 } })).output, curve: session.losses.length };
  });
  await page.selectOption('#attention', 'none');
  await page.waitForFunction(() => window.attnlabLab.session.info?.config.attention === 'none' && window.attnlabLab.session.steps === 0);
  await page.waitForSelector('[data-testid=previous]:not([hidden])');
  assert.match(await text(page, '[data-testid=previous]'), new RegExp(`attention additive, ${trained.steps} steps`));
  await page.screenshot({ path: `${SHOTS}lab-pass-kept-desktop.png` });
  await clean(page, 'a model kept');
  await page.click('[data-testid=back]');
  await page.waitForFunction((n) => window.attnlabLab.session.steps === n, trained.steps);
  assert.equal(await page.$eval('#attention', (s) => s.value), 'additive');
  assert.doesNotMatch(page.url(), /attention=none/);
  await page.waitForFunction((o) => document.querySelector('[data-testid=output]').textContent === o, trained.output);
  assert.equal(await page.evaluate(() => window.attnlabLab.session.losses.length), trained.curve, 'its loss curve is back');
  assert.equal(await text(page, '[data-testid=step]'), String(trained.steps));
  // the untrained 'none' model had nothing to keep
  assert.ok(await page.$eval('[data-testid=previous]', (p) => p.hidden));
  // training the restored model goes on from its steps
  await trainUntil(page, (n) => window.attnlabLab.session.steps >= n + 5, trained.steps);
  assert.deepEqual(errors, []);
  await page.close();
});

test('the lab opens on a pretrained model, labelled as such; Train from scratch is one click; an untrained model says its output is noise', async () => {
  const manifest = JSON.parse(await readFile(`${ROOT}web/models/models.json`, 'utf8'));
  for (const [viewport, size] of [[DESKTOP, 'desktop'], [PHONE, 'phone']]) {
    const { page, errors } = await open('lab.html', viewport);
    assert.deepEqual(await lab(page), { steps: manifest.models['reverse-attention'].steps, kind: 'seq2seq' });
    assert.match(await text(page, '[data-testid=model-status]'), /^Pretrained model \(reverse, attention dot\): trained 2,000 steps ahead of time \(lr 0\.01, batch 64\)/);
    // the form shows how the model on screen was trained: Train from scratch trains another the same way
    const recipe = manifest.models['reverse-attention'];
    assert.deepEqual(await page.evaluate(() => [document.querySelector('#lr').value, document.querySelector('#batch').value].map(Number)), [recipe.lr, recipe.batch]);
    // its recorded run (models.json history) is on the charts from step 0, the loss as means of lossEvery steps, and said so
    const run = await page.evaluate(() => {
      const s = window.attnlabLab.session;
      return { losses: s.losses.map((p) => p.step), accuracy: s.accuracy.map((p) => p.step), paths: document.querySelectorAll('[data-testid=loss-chart] path.series').length };
    });
    const { history } = recipe;
    assert.deepEqual(run.losses, history.losses.map((_, i) => Math.min(recipe.steps, (i + 1) * history.lossEvery)));
    assert.deepEqual(run.accuracy.slice(0, -1), history.accuracy.filter((p) => p.step < recipe.steps).map((p) => p.step), 'the recorded accuracy, then the lab\'s own measure');
    assert.equal(run.accuracy.at(-1), recipe.steps);
    assert.equal(run.paths, 1, 'a loss curve');
    assert.equal(await text(page, '#loss-caption'), `Training loss (cross-entropy per character) (to step 2,000, the run recorded ahead of time: each point the mean of ${history.lossEvery} steps)`);
    const input = await page.$eval('#text', (t) => t.value);
    assert.equal(await text(page, '[data-testid=output]'), [...input].reverse().join(''), 'the pretrained model reverses');
    assert.ok(await page.$eval('[data-testid=output-note]', (n) => n.hidden), 'no untrained label on a trained model');
    assert.match(await text(page, '[data-testid=run-acc]'), /accuracy \d+\.\d%/);
    await page.screenshot({ path: `${SHOTS}lab-pass-pretrained-${size}.png` });
    await clean(page, `pretrained at ${size}`);
    // Train from scratch: a new model, and it trains (paused here at once)
    await page.click('#reset');
    await page.waitForFunction(() => window.attnlabLab.session.playing && window.attnlabLab.session.steps < 2000);
    await pause(page);
    await page.evaluate(() => window.attnlabLab.settled()); // the status follows once the new model is shown
    assert.match(await text(page, '[data-testid=model-status]'), /^(Untrained model|Trained here from scratch)/);
    assert.match(page.url(), /start=scratch/);
    assert.match(await text(page, '[data-testid=previous]'), /reverse, attention dot, 2,000 steps/);
    assert.deepEqual(await page.evaluate(() => [window.attnlabLab.state.lr, window.attnlabLab.state.hidden, window.attnlabLab.state.attention]),
      [recipe.lr, recipe.options.hidden, recipe.options.attention], 'the new model is made and trained as the pretrained one was');
    await page.screenshot({ path: `${SHOTS}lab-pass-untrained-${size}.png` });
    await clean(page, `untrained at ${size}`);
    // a link of the untrained model opens untrained; the pretrained one is one click away
    await page.reload();
    await page.waitForSelector('body[data-ready=true]', { timeout: 60000 });
    assert.equal((await lab(page)).steps, 0);
    await page.click('#pretrained');
    await page.waitForFunction(() => window.attnlabLab.session.steps === 2000
      && /^Pretrained/.test(document.querySelector('[data-testid=model-status]').textContent));
    assert.doesNotMatch(page.url(), /start=scratch/);
    assert.deepEqual(errors, []);
    await page.close();
  }
  // a link's rate stands over the pretrained model's
  {
    const { page, errors } = await open('lab.html#ver=2&lr=0.003');
    assert.match(await text(page, '[data-testid=model-status]'), /^Pretrained model \(reverse, attention dot\)/);
    assert.equal(await page.$eval('#lr', (i) => Number(i.value)), 0.003);
    assert.deepEqual(errors, []);
    await page.close();
  }
  // images: cluttered digits open on the pretrained soft model; a task without one is labelled untrained
  const { page, errors } = await open('lab.html#task=cluttered');
  assert.deepEqual(await lab(page), { steps: manifest.models['cluttered-soft'].steps, kind: 'vision' });
  assert.match(await text(page, '[data-testid=model-status]'), /trained 1,500 steps ahead of time \(lr 0\.002, batch 32\)/);
  assert.equal(await page.$eval('#batch', (i) => Number(i.value)), manifest.models['cluttered-soft'].batch);
  assert.match(await text(page, '[data-testid=model-status]'), /^Pretrained model \(cluttered digits, soft attention\)/);
  await page.waitForFunction(() => document.querySelector('[data-testid=image-output]').textContent !== '–');
  assert.ok(await page.$eval('[data-testid=image-note]', (n) => n.hidden));
  await page.selectOption('#task', 'centered');
  await page.waitForFunction(() => window.attnlabLab.session.steps === 0 && window.attnlabLab.state.task === 'centered');
  await page.waitForSelector('[data-testid=image-note]:not([hidden])');
  assert.match(await text(page, '[data-testid=image-note]'), /untrained/);
  await clean(page, 'an untrained image model');
  assert.deepEqual(errors, []);
  await page.close();
});

test("Learn's bottleneck link lands on the experiment, focused and in view", async () => {
  const manifest = JSON.parse(await readFile(`${ROOT}web/models/models.json`, 'utf8'));
  const link = labLink(labFieldsFor(manifest.models['reverse-attention'], { compare: 'none', text: '12345' }));
  for (const viewport of [DESKTOP, PHONE]) {
    const { page, errors } = await open(link, viewport);
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'bottleneck');
    const box = await page.locator('#h-bottleneck').boundingBox();
    assert.ok(box.y >= 0 && box.y + box.height <= viewport.height, `the experiment's heading at y=${box.y}`);
    assert.equal((await lab(page)).steps, 2000, 'on the pretrained model the experiment compares against');
    await page.screenshot({ path: `${SHOTS}lab-pass-bottleneck-link-${viewport.width}.png` });
    assert.deepEqual(errors, []);
    await page.close();
  }
});

test("errors say what to do in the learner's words; the engine's message is kept under Details", async () => {
  const { page, errors } = await open(FRESH);
  await page.selectOption('#attention', 'location');
  await page.waitForSelector('[data-testid=error]:not([hidden])');
  const said = await text(page, '[data-testid=error] > p');
  assert.match(said, /same length: set Min length equal to Max length first, then choose location again\. The model you had is kept/);
  assert.equal(await page.$eval('#attention', (s) => s.value), 'additive', 'the settings are those of the model in hand');
  assert.doesNotMatch(await text(page, '[data-testid=model-status]'), /location/);
  assert.doesNotMatch(said, /createSeq2Seq|'location'/);
  assert.match(await text(page, '[data-testid=error] details'), /createSeq2Seq: attention: 'location'/);
  await page.screenshot({ path: `${SHOTS}lab-pass-error-desktop.png` });
  await clean(page, 'an error');
  await page.setInputFiles('#load', { name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('not a model') });
  await page.waitForFunction(() => /notes\.txt is not a model this lab can open/.test(document.querySelector('[data-testid=error] > p')?.textContent));
  assert.doesNotMatch(await text(page, '[data-testid=error] > p'), /loadSeq2Seq/);
  assert.match(await text(page, '[data-testid=error] details'), /not an attnlab model file/);
  assert.deepEqual(errors, []);
  await page.close();
});

/** A phone: 390×844, touch. */
async function openPhone(hash) {
  const context = await env.browser.newContext({ viewport: PHONE, hasTouch: true, isMobile: true });
  const page = await context.newPage();
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(env.url + hash);
  await page.waitForSelector('body[data-ready=true]', { timeout: 60000 });
  return { page, errors, context };
}

/** A finger drawn through `points` (fractions of the element), as touch events. */
async function touchStroke(page, selector, points) {
  const el = page.locator(selector);
  await el.evaluate((c) => c.scrollIntoView({ block: 'center' }));
  const box = await el.boundingBox();
  const cdp = await page.context().newCDPSession(page);
  const at = ([fx, fy]) => [{ x: box.x + fx * box.width, y: box.y + fy * box.height }];
  await cdp.send('Input.dispatchTouchEvent', { type: 'touchStart', touchPoints: at(points[0]) });
  for (const p of points.slice(1)) await cdp.send('Input.dispatchTouchEvent', { type: 'touchMove', touchPoints: at(p) });
  await cdp.send('Input.dispatchTouchEvent', { type: 'touchEnd', touchPoints: [] });
}

test('on a phone, training and watching fit one screen: Train and the alignment map both in view; a finger draws a digit', async () => {
  const { page, errors, context } = await openPhone(FRESH);
  const inView = async (selector) => {
    const b = await page.locator(selector).boundingBox();
    return b && b.y >= -1 && b.y + b.height <= PHONE.height + 1 && b.x >= -1 && b.x + b.width <= PHONE.width + 1;
  };
  await page.locator('[data-testid=heatmap-alignment]').evaluate((c) => c.scrollIntoView({ block: 'end' }));
  assert.ok(await inView('[data-testid=heatmap-alignment]'), 'the map is in view');
  assert.ok(await inView('#play'), 'Train is in view with it');
  await page.tap('#play');
  await page.waitForFunction(() => window.attnlabLab.session.steps >= 20);
  await page.tap('#play');
  await pause(page);
  assert.ok(await inView('#play') && await inView('[data-testid=heatmap-alignment]'));
  await page.screenshot({ path: `${SHOTS}lab-pass-phone-watching.png` });
  await clean(page, 'phone, watching');
  // the image task by touch: a finger stroke is read
  await page.goto('about:blank'); // a new hash alone would not load the page again
  await page.goto(`${env.url}lab.html#task=cluttered`);
  await page.waitForSelector('body[data-ready=true]', { timeout: 60000 });
  await touchStroke(page, '[data-testid=drawing-digit]', [[0.5, 0.25], [0.5, 0.4], [0.5, 0.55], [0.49, 0.75]]);
  await page.waitForFunction(() => /^\d$/.test(document.querySelector('[data-testid=draw-output]').textContent));
  await page.screenshot({ path: `${SHOTS}lab-pass-phone-drawn.png` });
  assert.deepEqual(errors, []);
  await context.close();
});

test('legend labels never run into each other, on the smallest scales and widths', async () => {
  const { page, errors } = await open(FRESH, PHONE);
  const overlaps = await page.evaluate(async () => {
    const { createImageOverlay } = await import('./ui/image-overlay.js');
    const { createHeatmap } = await import('./ui/heatmap.js');
    const found = [];
    const check = (el, what) => {
      const spans = [...el.querySelectorAll('span')].filter((s) => s.textContent);
      const boxes = spans.map((s) => { const r = s.getBoundingClientRect(); return { l: r.left, r: r.right, t: s.textContent }; }).sort((a, b) => a.l - b.l);
      for (let k = 1; k < boxes.length; k++) if (boxes[k].l < boxes[k - 1].r + 2) found.push(`${what}: "${boxes[k - 1].t}" meets "${boxes[k].t}"`);
      if (boxes.length < 2) found.push(`${what}: ${boxes.length} label(s)`);
    };
    for (const hi of [1.3e-5, 4.4e-5, 0.00093, 0.021, 0.37, 2.5, 170, 86000]) {
      for (const size of [120, 180, 260]) {
        const ov = createImageOverlay({ id: `t${size}`, label: 'test', size });
        document.body.append(ov.el);
        const map = { rows: 7, cols: 7, data: Float32Array.from({ length: 49 }, (_, k) => (hi * k) / 48) };
        ov.update({ image: { rows: 28, cols: 28, data: new Float32Array(784) }, map, hi, legend: 'saliency' });
        check(ov.el.querySelector('[data-testid^=legend-overlay] > div'), `overlay ${size}px, top ${hi}`);
        ov.el.remove();
      }
      const hm = createHeatmap({ id: 'legend-test', label: 'test', axes: '' });
      document.body.append(hm.el);
      hm.update({ rows: 2, cols: 2, data: Float32Array.from([0, hi / 3, hi / 2, hi]) }, { rowLabels: ['a', 'b'], colLabels: ['c', 'd'], kind: 'weights', legend: 'w' });
      check(hm.el.querySelector('.legend-ticks'), `heatmap, top ${hi}`);
      hm.el.remove();
    }
    return found;
  });
  assert.deepEqual(overlaps, []);
  // the lab's saliency legend as drawn, at both sizes
  for (const viewport of [PHONE, DESKTOP]) {
    const opened = await open('lab.html#task=cluttered', viewport);
    await opened.page.waitForFunction(() => document.querySelector('[data-testid=legend-overlay-saliency] span')?.textContent);
    const labels = await opened.page.$$eval('[data-testid=legend-overlay-saliency] > div:nth-child(2) span', (s) => s.map((x) => x.textContent));
    assert.ok(labels.length >= 2 && labels.every((t) => t === '0' || /^\d/.test(t)), labels.join(' | '));
    await opened.page.locator('[data-testid=figure-overlay-saliency]').screenshot({ path: `${SHOTS}lab-pass-saliency-${viewport.width}.png` });
    assert.deepEqual(opened.errors, []);
    await opened.page.close();
  }
  assert.deepEqual(errors, []);
  await page.close();
});

test("the no-attention note says the decoder starts from the encoder's last state (it does not see it at every step)", async () => {
  const { page, errors } = await open(FRESH);
  await page.selectOption('#attention', 'none');
  await page.waitForSelector('[data-testid=align-message]:not([hidden])');
  const note = await text(page, '[data-testid=align-message]');
  assert.match(note, /starts from the encoder's last state/);
  assert.doesNotMatch(note, /at every output step/);
  assert.doesNotMatch(await text(page, '#bottleneck'), /sees only the encoder's last state/);
  assert.deepEqual(errors, []);
  await page.close();
});

test('a digit is drawn with the keyboard alone, and the attention over it is read cell by cell', async () => {
  for (const [viewport, size] of [[DESKTOP, 'desktop'], [PHONE, 'phone']]) {
    const { page, errors } = await open('lab.html#task=cluttered', viewport);
    const canvas = page.locator('[data-testid=drawing-digit]');
    assert.match(await canvas.getAttribute('aria-label'), /arrow keys move the pen.*Space or Enter/);
    await canvas.focus();
    await page.keyboard.press('ArrowUp');
    for (let k = 0; k < 3; k++) await page.keyboard.press('Shift+ArrowUp');
    await page.keyboard.press('Space');
    for (let k = 0; k < 6; k++) await page.keyboard.press('Shift+ArrowDown');
    await page.keyboard.press('Enter');
    assert.match(await text(page, '[data-testid=drawing-status-digit]'), /pen up at row/);
    await page.waitForFunction(() => /^\d$/.test(document.querySelector('[data-testid=draw-output]').textContent));
    assert.equal(await lab(page).then((l) => l.steps > 0), true, 'space drew, it did not start training');
    assert.equal(await page.evaluate(() => window.attnlabLab.session.playing), false);
    const ink = await canvas.evaluate((c) => {
      const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      let lit = 0;
      for (let p = 0; p < d.length; p += 4) if (d[p] > 128) lit++;
      return lit / (d.length / 4);
    });
    assert.ok(ink > 0.01, `${(100 * ink).toFixed(1)}% of the canvas inked`);
    // the attention over the test image: a Tab stop whose cells are read out
    const overlay = page.locator('[data-testid=overlay-attention]');
    await overlay.focus();
    await page.keyboard.press('ArrowRight');
    assert.match(await text(page, '[data-testid=readout-overlay-attention]'), /^cell row 1, column 2 of 7×7: attention weight \d/);
    await page.keyboard.press('End');
    assert.match(await text(page, '[data-testid=readout-overlay-attention]'), /column 7 of 7×7/);
    assert.equal(await page.locator('[data-testid=cursor-attention]').isVisible(), true);
    await page.locator('[data-testid=overlay-saliency]').focus();
    assert.match(await text(page, '[data-testid=readout-overlay-saliency]'), /^pixel row 1, column 1 of 60×60: /);
    await fullScreenshot(page, `${SHOTS}lab-pass-images-${size}.png`);
    await clean(page, `images, keyboard drawing at ${size}`);
    assert.deepEqual(errors, []);
    await page.close();
  }
});

test("Learn's drawing challenge (the same drawing canvas) is drawn with the keyboard too", async () => {
  const { page, errors } = await openPage(env.browser, `${env.url}learn.html`, DESKTOP);
  const canvas = page.locator('[data-testid=drawing-ch8]');
  await page.locator('[data-role=drawing]').first().scrollIntoViewIfNeeded();
  await canvas.waitFor({ timeout: 60000 });
  assert.match(await canvas.getAttribute('aria-label'), /arrow keys move the pen/);
  const inked = () => canvas.evaluate((c) => {
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let lit = 0;
    for (let p = 0; p < d.length; p += 4) if (d[p] > 128) lit++;
    return lit;
  });
  const before = await inked();
  await canvas.focus();
  await page.keyboard.press('Enter');
  for (let k = 0; k < 5; k++) await page.keyboard.press('Shift+ArrowRight');
  await page.keyboard.press('Enter');
  assert.ok(await inked() > before, 'the pen left ink');
  assert.equal(await page.locator('[data-testid=drawing-pen-ch8]').isVisible(), true, 'the pen is shown where it is');
  await clean(page, 'Learn, drawing by keyboard');
  assert.deepEqual(errors, []);
  await page.close();
});

test('training on from the pretrained model keeps what it knows (its learning rate ramps up: the file has no optimiser state)', async () => {
  const { page, errors } = await open('lab.html');
  const start = await page.evaluate(() => window.attnlabLab.session.accuracy.at(-1).value);
  assert.ok(start >= 0.95, `pretrained: ${start}`);
  await trainUntil(page, () => window.attnlabLab.session.steps >= 2030);
  // the points from the loaded step on (the curve before it is the recorded run)
  const acc = await page.evaluate(() => {
    const s = window.attnlabLab.session;
    return s.accuracy.filter((p) => p.step >= s.startSteps).map((p) => p.value);
  });
  assert.ok(acc.length >= 2, `${acc.length} measures since the load`);
  assert.ok(Math.min(...acc) >= 0.9, `validation accuracy while training on: ${acc.map((a) => a.toFixed(2)).join(' ')}`);
  assert.match(await text(page, '[data-testid=model-status]'), /You trained it \d+ steps more/);
  assert.deepEqual(errors, []);
  await page.close();
});
