// Learn chapters 7 and 8 (the image models) in headless Chromium at a laptop's
// (1280 × 900) and a phone's (390 × 844) size, read and used as a learner would:
// every figure their prose quotes equals what the engine computes here in Node and
// no number about a model is typed into the prose; their maps are drawn with
// legends and fit the screen; chapter 7's challenge is judged by its measures;
// chapter 8's drawing answers the mouse and the keyboard, its clutter and test
// image buttons work, and its uniform-attention ablation shows the engine's
// accuracies with their intervals; its retina (RAM) section draws the glimpses
// predict() gives, quotes its figures as the engine computes them here, runs the
// random-glimpse ablation and links to the lab's retina. Screenshots of both chapters at both sizes go to
// test-results/browser/ (learn-images-<chapter>-<size>.png); axe-core audits the
// states the tests leave.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { ROOT, SHOTS, axeViolations, keyboardStroke, learnFigures, openPage, startBrowser } from './browser.mjs';
import { loadEngine } from '../../web/engine/index.js';
import { fixed } from '../../web/ui/format.js';
import { gapWords, imageFigures } from '../../web/learn/ch7-kinds.js';
import { NAMES, startText, trainedText } from '../../web/learn/ch8-images.js';
import { RETINA, firstGlimpse, retinaConfigText, runText, timeText } from '../../web/learn/ch8-retina.js';
import { labLink, visionLabFields } from '../../web/learn/links.js';
import { codec as labCodec, visionOptions } from '../../web/lab/state.js';
import {
  DISAGREE_TARGET, MEASURE_IMAGES, ablationText, agreementByImage, interval, intervalText, meanPeak, onDigitShare, receptiveField,
  retinaVerdict, reverseOffsets, reverseWords, seqAgreement, sizesText, testImage,
} from '../../web/learn/vision-measures.js';

const SIZES = { laptop: { width: 1280, height: 900 }, phone: { width: 390, height: 844 } };
const percent = (v) => `${(v * 100).toFixed(1)}%`;

let env;
let engine;
let manifest;
const models = {};
const pages = {};
before(async () => {
  env = await startBrowser();
  engine = await loadEngine({ threads: 1 }); // as the page runs
  manifest = JSON.parse(await readFile(`${ROOT}web/models/models.json`, 'utf8'));
  for (const name of ['cluttered-soft', 'cluttered-hard', RETINA, 'dates', 'reverse-attention']) {
    const bytes = new Uint8Array(await readFile(`${ROOT}web/models/${manifest.models[name].file}`));
    models[name] = manifest.models[name].kind === 'vision' ? await engine.loadVisionModel(bytes) : engine.loadSeq2Seq(bytes);
  }
});
after(async () => {
  for (const p of Object.values(pages)) await (await p).page.close();
  for (const m of Object.values(models)) m.destroy();
  await env?.close();
});

/** The page at `size` (opened once per size and shared; each test works on its own widgets). */
function learn(size) {
  pages[size] ??= (async () => {
    const opened = await openPage(env.browser, `${env.url}learn.html`, SIZES[size]);
    await opened.page.waitForSelector('body[data-ready="true"]', { timeout: 60000 });
    // chapters 7 and 8 compute their figures when a reader nears them; the retina's section then is measured
    await learnFigures(opened.page);
    assert.equal(await opened.page.getAttribute('[data-testid=ch8-retina]', 'data-state'), 'measured');
    return opened;
  })();
  return pages[size];
}
/** A shipped image model's accuracy on the page's test images, with its own attention or uniform (each evaluated once). */
const accuracies = {};
function accuracy(name, attention = 'model') {
  accuracies[`${name} ${attention}`] ??= models[`cluttered-${name}`].evaluate({ split: 'test', count: manifest.evalCount, attention }).accuracy;
  return accuracies[`${name} ${attention}`];
}
const text = (page, sel) => page.$eval(sel, (e) => e.textContent.replace(/\s+/g, ' ').trim());
const solved = (page, id) => page.getAttribute(`[data-testid="challenge-${id}"]`, 'data-solved');
const numbers = (page) => page.evaluate(() => window.attnlabLearn.numbers);

/** Nothing on the page is wider than the screen, and every element of the chapter lies inside it. */
async function fits(page, chapter) {
  const r = await page.evaluate((id) => {
    const wide = Array.from(document.querySelectorAll(`#${id} *`))
      // KaTeX draws a root's tail as a 400em SVG clipped by its box: it shows only as wide as the equation
      .filter((e) => !e.closest('.katex') && e.getClientRects().length > 0)
      .filter((e) => e.getBoundingClientRect().right > innerWidth + 1)
      .map((e) => `${e.tagName.toLowerCase()}${e.dataset.testid ? `[${e.dataset.testid}]` : ''}`);
    return { page: document.documentElement.scrollWidth, screen: innerWidth, wide: wide.slice(0, 5) };
  }, chapter);
  assert.ok(r.page <= r.screen, `the page is ${r.page} px wide on a ${r.screen} px screen`);
  assert.deepEqual(r.wide, [], `${chapter}: elements past the screen's right edge`);
}

test('chapters 7 and 8 quote the engine’s figures, and their prose types no number about a model', async () => {
  const { page, errors } = await learn('laptop');
  const soft = models['cluttered-soft'];
  const hard = models['cluttered-hard'];
  const n = manifest.evalCount;
  const [accSoft, accHard] = NAMES.map((name) => accuracy(name));
  const { grid, canvas } = soft.config;
  const side = 2 ** soft.config.channels.length;
  const rows = agreementByImage(soft);
  const figures = imageFigures(rows, grid.rows * grid.cols);
  const dates = seqAgreement(models.dates);
  const reverse = seqAgreement(models['reverse-attention']);
  const offsets = reverseOffsets(reverse.comparisons);
  const sizes = sizesText(soft.config, hard.config);
  const specs = NAMES.map((name) => manifest.models[`cluttered-${name}`]);
  const rf = receptiveField(soft.config.channels.length);
  const peaks = { soft: meanPeak(soft), hard: meanPeak(hard) };
  const peakWords = peaks.hard > peaks.soft ? 'here the hard model’s weights are the more peaked' : 'here the hard model’s weights are not the more peaked';
  const expect = {
    ...figures,
    'ch7.k': [3, '3'],
    'ch7.chance': [3 / (grid.rows * grid.cols), `3 / ${grid.rows * grid.cols} = ${percent(3 / (grid.rows * grid.cols))}`],
    'ch7.peakVerdict': [peakWords, peakWords],
    'ch7.images': [MEASURE_IMAGES, String(MEASURE_IMAGES)],
    'ch7.grid': [grid.rows, `${grid.rows} × ${grid.cols}`],
    'ch7.cells': [grid.rows * grid.cols, String(grid.rows * grid.cols)],
    'ch7.cellSide': [side, `${side} × ${side}`],
    'ch7.glimpses': [soft.config.steps, String(soft.config.steps)],
    'ch7.receptive': [rf, `${rf} × ${rf}`],
    'ch7.covered': [grid.rows * side, `${grid.rows * side} × ${grid.cols * side} of the ${canvas.rows} × ${canvas.cols}`],
    'ch7.accSoft': [accSoft, percent(accSoft)],
    'ch7.accHard': [accHard, percent(accHard)],
    'ch7.count': [n, String(n)],
    'ch7.hardHidden': [hard.config.hidden, String(hard.config.hidden)],
    'ch7.race': [sizes.same, sizes.same ? `the two are ${sizes.text}, so this compares like with like` : `but the two are ${sizes.text}, so this is no like-for-like race`],
    'ch7.peakSoft': [peaks.soft, percent(peaks.soft)],
    'ch7.peakHard': [peaks.hard, percent(peaks.hard)],
    'ch7.tauDates': [dates.tau, fixed(dates.tau, 2)],
    'ch7.topDates': [dates.topMatch, percent(dates.topMatch)],
    'ch7.tauReverse': [reverse.tau, fixed(reverse.tau, 2)],
    'ch7.topReverse': [reverse.topMatch, percent(reverse.topMatch)],
    'ch7.reverseNext': [offsets.next, percent(offsets.next)],
    'ch7.reverseOwn': [offsets.own, percent(offsets.own)],
    'ch7.reverseSteps': [offsets.steps, offsets.steps.toLocaleString('en')],
    'ch7.reverseVerdict': [reverseWords(offsets), reverseWords(offsets)],
    'ch8.layers': [soft.config.channels.length, String(soft.config.channels.length)],
    'ch8.canvas': [canvas.rows, `${canvas.rows} × ${canvas.cols}`],
    'ch8.grid': [grid.rows, `${grid.rows} × ${grid.cols}`],
    'ch8.clutter': [soft.config.clutter, String(soft.config.clutter)],
    'ch8.trained': [specs.map((s) => [s.steps, s.batch]), trainedText(specs)],
    'ch8.start': [[soft.config.start, hard.config.start], startText([soft.config, hard.config])],
    'ch8.sizes': [[soft.config.hidden, soft.config.parameters, hard.config.hidden, hard.config.parameters], sizes.text],
    'ch8.count': [n, n.toLocaleString('en')],
    'ch8.race': [sizes.same, sizes.same ? 'so their accuracies compare like with like' : 'so their accuracies do not compare like with like; each model against itself does'],
    ...retinaFigures(),
  };
  // the shipped models: both start from the learned constant, and the prose says so
  assert.deepEqual(expect['ch8.start'][0], ['constant', 'constant']);
  assert.match(expect['ch8.start'][1], /^Both start from that learned constant/);
  // the reverse model: the state at a digit's position has read it already, so the prose names the state the model prefers
  assert.equal(reverseWords({ own: 0.1, next: 0.9 }), 'the model learned to prefer the next state');
  assert.equal(reverseWords({ own: 0.9, next: 0.1 }), 'the model learned to prefer the digit’s own state');
  assert.ok(offsets.next > offsets.own, `the shipped reverse model looks at the next state more (${offsets.next} against ${offsets.own})`);
  const reverseProse = (await page.textContent('#ch-kinds')).replace(/\s+/g, ' ');
  assert.doesNotMatch(reverseProse, /only once it is past it/);
  assert.match(reverseProse, /The state at position t has read digit t already/);
  assert.equal(figures['ch7.tauGap'][0], gapWords(figures['ch7.tauMean'][0], figures['ch7.tauActive'][0]));
  const shown = await page.$$eval('#ch-kinds [data-num], #ch-images [data-num]', (els) => els.map((e) => [e.dataset.num, e.textContent]));
  const values = await numbers(page);
  for (const [key, [value, words]] of Object.entries(expect)) {
    const onPage = shown.filter(([k]) => k === key);
    assert.ok(onPage.length >= 1, `${key} is quoted`);
    for (const [, t] of onPage) assert.equal(t, words, key);
    if (typeof value === 'number') assert.ok(Math.abs(values[key] - value) < 1e-6, `${key}: page ${values[key]}, engine ${value}`);
    else assert.deepEqual(values[key], value, key);
  }
  const unchecked = [...new Set(shown.map(([k]) => k))].filter((k) => !(k in expect));
  assert.deepEqual(unchecked, [], 'every figure of the two chapters is recomputed here');

  // the prose (outside the widgets, the equations and the quoted figures): only these numbers are typed, none about a model
  const typed = await page.$$eval('#ch-kinds > p, #ch-images > p, #ch-images .retina > p', (ps) => ps.flatMap((p) => {
    const c = p.cloneNode(true);
    for (const e of c.querySelectorAll('[data-num], .math')) e.remove();
    return c.textContent.replace(/\s+/g, ' ').match(/[^.;:]*\d[^.;:]*/g) ?? [];
  }));
  const ALLOWED = [
    /\((19|20)\d\d\)/, // a cited paper's year
    /chapter \d/, /\d × \d (convolution|max-pool)/, /1 × 1 convolution/, // the architecture, as the C code fixes it
    /\(1$/, /^ the same order, 0$/, /^ unrelated, −1$/, // r_K's range
    /at least 5% of its largest value/, // the measure's floor (stats.js agreement)
    /\(1 for a right answer\)/, /1\/√n/, /starts from s0, a learned vector/, // definitions
    /^[^\d]*\bs0\b[^\d]*$/, // the start state's name, s0, and no other digit
  ];
  for (const t of typed) assert.ok(ALLOWED.some((re) => re.test(t)), `a number typed into the prose: “${t.trim()}”`);
  // the decoder's equation is the one the shipped models run: a one-digit task feeds no answer back into the cell
  assert.equal(soft.config.task, 'cluttered');
  const tex = await page.$$eval('#ch-images .math[data-tex]', (els) => els.map((e) => e.dataset.tex));
  assert.ok(tex.some((t) => t.includes('\\operatorname{GRU}(\\mathbf{c}_t, \\mathbf{s}_t)')), tex.join(' | '));
  assert.ok(tex.every((t) => !/GRU\}\(\[/.test(t)), 'no [c_t; y_t] input on the cluttered task');
  assert.deepEqual(errors, []);
});

/** The retina section's figures as the engine computes them here: { key: [value, text] }. */
function retinaFigures() {
  const m = models[RETINA];
  const n = manifest.evalCount;
  const [spec, hardSpec] = [manifest.models[RETINA], manifest.models['cluttered-hard']];
  const own = { retina: interval(accuracy('retina'), n), hard: interval(accuracy('hard'), n) };
  const first = firstGlimpse(m);
  const on = onDigitShare(m, n);
  const { config: c } = m;
  return {
    'ch8r.config': [[c.steps, c.retina.size, c.retina.scales, c.hidden, c.parameters], retinaConfigText(c)],
    'ch8r.trained': [[spec.steps, spec.batch, spec.seconds], runText(spec)],
    'ch8r.hardTrained': [[hardSpec.steps, hardSpec.batch, hardSpec.seconds], runText(hardSpec)],
    'ch8r.time': [spec.seconds / hardSpec.seconds, timeText(spec.seconds, hardSpec.seconds)],
    'ch8r.first': [first.same, first.text],
    'ch8r.count': [n, n.toLocaleString('en')],
    'ch8r.acc': [own.retina.p, intervalText(own.retina)],
    'ch8r.accHard': [own.hard.p, intervalText(own.hard)],
    'ch8r.verdict': [retinaVerdict(own.retina, own.hard), retinaVerdict(own.retina, own.hard)],
    'ch8r.onDigit': [on, intervalText(interval(on, n))],
  };
}

test('chapter 7 at both sizes: the maps drawn, each with its legend, inside the screen', async () => {
  for (const size of Object.keys(SIZES)) {
    const { page, errors } = await learn(size);
    for (const id of ['ch7-attention', 'ch7-saliency', 'ch7-hard']) {
      const drawn = await page.$eval(`[data-testid="overlay-${id}"]`, (c) => {
        const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        const colours = new Set();
        for (let p = 0; p < d.length; p += 4) colours.add((d[p] << 16) | (d[p + 1] << 8) | d[p + 2]);
        return { width: c.width, colours: colours.size };
      });
      assert.equal(drawn.width, models['cluttered-soft'].config.canvas.cols, `${id} at the canvas's resolution`);
      assert.ok(drawn.colours > 20, `${id} at ${size}: ${drawn.colours} colours`);
      assert.equal(await page.isVisible(`[data-testid="legend-overlay-${id}"]`), true, `${id}'s legend`);
      assert.match(await text(page, `[data-testid="legend-overlay-${id}"]`), /attention weight α|saliency/);
    }
    for (const id of ['ch7-alpha', 'ch7-freq', 'ch7-text-attention', 'ch7-text-saliency']) {
      assert.equal(await page.isVisible(`[data-testid="legend-${id}"]`), true, `${id}'s legend at ${size}`);
      assert.notEqual(await text(page, `[data-testid="legend-${id}"] .legend-title`), '');
    }
    assert.equal(await page.isVisible('[data-testid=glimpse-ch7-hard]'), true, 'the hard model’s cell is boxed');
    // the table's rows are the engine's measures of test image 1
    const soft = models['cluttered-soft'];
    const cmp = soft.compareAttention(testImage(soft, 1).image);
    const cells = await page.$$eval('[data-testid=ch7-taus] tr', (trs) => trs.map((r) => Array.from(r.children, (c) => c.textContent)));
    assert.deepEqual(cells.map((r) => r[3]), cmp.steps.map((s) => percent(s.agreement.saliencyInTopK)));
    await fits(page, 'ch-kinds');
    await page.locator('[data-testid=chapter-kinds]').screenshot({ path: `${SHOTS}learn-images-kinds-${size}.png` });
    assert.deepEqual(errors, []);
  }
});

test('chapter 7’s challenge is judged by its measures: browsing and a date they agree on do not solve it, “1955-12-31” does', async () => {
  const { page } = await learn('laptop');
  const dates = models.dates;
  const least = (input) => Math.min(...dates.compareAttention(input).steps.map((s) => s.agreement.saliencyInTopK));
  assert.equal(await solved(page, 'kinds'), 'false');
  for (let k = 0; k < 10; k++) await page.click('[data-testid=ch7-next]');
  assert.equal(await solved(page, 'kinds'), 'false', 'pressing Next image does not solve it');
  const agreeing = 'March 3, 2001';
  assert.ok(least(agreeing) >= DISAGREE_TARGET, `${agreeing}: the least share ${least(agreeing)}`);
  await page.fill('[data-testid=ch7-text]', agreeing);
  assert.ok(Math.abs(Number(await page.getAttribute('[data-testid=ch7-text-taus]', 'data-least')) - least(agreeing)) < 1e-6);
  assert.equal(await solved(page, 'kinds'), 'false', `${agreeing} does not solve it`);
  const disagreeing = '1955-12-31';
  assert.ok(least(disagreeing) < DISAGREE_TARGET, `${disagreeing}: the least share ${least(disagreeing)}`);
  await page.fill('[data-testid=ch7-text]', disagreeing);
  assert.ok(Math.abs(Number(await page.getAttribute('[data-testid=ch7-text-taus]', 'data-least')) - least(disagreeing)) < 1e-6);
  assert.equal(await solved(page, 'kinds'), 'true', `solved by ${disagreeing}`);
  assert.match(await text(page, '[data-testid=challenge-status-kinds]'), /Solved/);
  assert.deepEqual(await axeViolations(page, { chapters: ['images'] }), [], 'axe-core after the challenge');
});

/** Draws a stroke through `points` (canvas pixels of the 60 × 60 image) with the mouse. */
async function stroke(page, points) {
  const canvas = page.locator('[data-testid=drawing-ch8]');
  await canvas.evaluate((c) => c.scrollIntoView({ block: 'center' }));
  const box = await canvas.boundingBox();
  const at = ([x, y]) => [box.x + (x / 60) * box.width, box.y + (y / 60) * box.height];
  await page.mouse.move(...at(points[0]));
  await page.mouse.down();
  for (const p of points.slice(1)) await page.mouse.move(...at(p), { steps: 8 });
  await page.mouse.up();
}
const reads = (page) => page.getAttribute('[data-testid=ch8-reads]', 'data-output');
const share = (page) => page.getAttribute('[data-testid=ch8-reads]', 'data-share');

test('chapter 8 at both sizes: the pen, the clutter and test-image buttons, the glimpses and the hard model’s box', async () => {
  const soft = models['cluttered-soft'];
  for (const size of Object.keys(SIZES)) {
    const { page, errors } = await learn(size);
    await page.click('[data-testid=ch8-example]');
    const ex = testImage(soft, 1);
    await page.waitForFunction((out) => document.querySelector('[data-testid=ch8-reads]').dataset.output === out, soft.predict(ex.image).output);
    const image = () => page.$eval('[data-testid=drawing-ch8]', (c) => c.toDataURL());
    const before = await image();
    await page.click('[data-testid=ch8-clutter]');
    assert.notEqual(await image(), before, 'New clutter draws a new image');
    const cleared = await share(page);
    await stroke(page, [[8, 7], [25, 7], [14, 27]]);
    await page.waitForFunction((b) => document.querySelector('[data-testid=ch8-reads]').dataset.share !== b, cleared, { timeout: 5000 });
    assert.match(await reads(page), /^\d$/);
    // the overlay at each glimpse, with its legend
    await page.$eval('[data-testid=ch8-glimpse]', (el) => { el.value = '2'; el.dispatchEvent(new Event('input')); });
    assert.match(await text(page, '[data-testid=figure-overlay-ch8] figcaption'), /^Glimpse 3 of 3: reads \d$/);
    assert.equal(await page.isVisible('[data-testid=legend-overlay-ch8]'), true);
    await page.selectOption('[data-testid=ch8-model]', 'hard');
    assert.equal(await page.isVisible('[data-testid=glimpse-ch8]'), true, 'the hard model boxes the cell it reads');
    await page.selectOption('[data-testid=ch8-model]', 'soft');
    assert.equal(await page.isVisible('[data-testid=glimpse-ch8]'), false);
    await fits(page, 'ch-images');
    assert.deepEqual(errors, []);
  }
});

test('chapter 8 by keyboard: Tab reaches the drawing, arrows move the pen, Space draws, and the model reads it', async () => {
  const { page } = await learn('laptop');
  const canvas = page.locator('[data-testid=drawing-ch8]');
  assert.equal(await canvas.evaluate((c) => c.tabIndex >= 0), true, 'the drawing is a Tab stop');
  assert.equal(await page.isVisible('[data-testid=ch8-keys]'), true, 'the caption says how to draw with keys');
  await page.focus('[data-testid=ch8-clutter]');
  await page.click('[data-testid=ch8-clutter]');
  const before = await share(page);
  // Tab order: the drawing comes before its toolbar, so Shift+Tab from the toolbar's first button reaches it
  await page.focus('[data-testid=drawing-clear-ch8]');
  await page.keyboard.press('Shift+Tab');
  assert.equal(await page.evaluate(() => document.activeElement?.dataset.testid), 'drawing-ch8');
  await keyboardStroke(page);
  await page.waitForFunction((b) => document.querySelector('[data-testid=ch8-reads]').dataset.share !== b, before, { timeout: 5000 });
  // the buttons answer Enter
  await page.focus('[data-testid=ch8-example]');
  await page.keyboard.press('Enter');
  const soft = models['cluttered-soft'];
  const ex = testImage(soft, 2); // the first press of the page's "A test image" was in the test above
  await page.waitForFunction((out) => document.querySelector('[data-testid=ch8-reads]').dataset.output === out, soft.predict(ex.image).output);
  assert.deepEqual(await axeViolations(page, { chapters: ['images'] }), [], 'axe-core after drawing with the keyboard');
});

test('chapter 8’s ablation: each model against itself with uniform attention, the engine’s accuracies with 95% intervals', async () => {
  const n = manifest.evalCount;
  const expected = {};
  for (const name of NAMES) {
    expected[name] = { own: interval(accuracy(name), n), uniform: interval(accuracy(name, 'uniform'), n) };
  }
  for (const size of Object.keys(SIZES)) {
    const { page, errors } = await learn(size);
    const table = () => page.$$eval('[data-testid=ch8-models] tr', (trs) => trs.map((r) => Array.from(r.children, (c) => c.textContent)));
    const span = (c) => `${(c.lo * 100).toFixed(1)}–${(c.hi * 100).toFixed(1)}%`;
    const cell = (c) => `${percent(c.p)}${span(c)}`;
    const sizeCell = (cfg) => `${cfg.hidden} hidden units${cfg.parameters.toLocaleString('en')} parameters`;
    const rows = (uniform) => NAMES.map((name) => [name, sizeCell(models[`cluttered-${name}`].config), cell(expected[name].own), uniform ? cell(expected[name].uniform) : '—']);
    assert.deepEqual(await table(), rows(false), 'before the press: sizes and own accuracies');
    assert.match(await text(page, '[data-testid=ch8-ablate-readout]'), /^Press the button/);
    // the evaluations hold the page's thread: what the button and the bar showed meanwhile is recorded as it changes
    await page.evaluate(() => {
      window.ablateSeen = [];
      const [button, bar] = ['ch8-ablate', 'ch8-ablate-progress'].map((id) => document.querySelector(`[data-testid=${id}]`));
      new MutationObserver(() => window.ablateSeen.push({ disabled: button.disabled, bar: !bar.hidden }))
        .observe(button.parentElement, { attributes: true, subtree: true });
    });
    await page.click('[data-testid=ch8-ablate]');
    await page.waitForSelector('[data-testid=ch8-ablate-readout][data-state=done]', { timeout: 30000 });
    const seen = await page.evaluate(() => window.ablateSeen);
    assert.ok(seen.some((s) => s.disabled && s.bar), `the button is disabled and the bar shown while it runs: ${JSON.stringify(seen)}`);
    assert.equal(await page.isHidden('[data-testid=ch8-ablate-progress]'), true);
    assert.equal(await page.isDisabled('[data-testid=ch8-ablate]'), false);
    assert.deepEqual(await table(), rows(true), 'after: the uniform column');
    const apart = NAMES.every((name) => expected[name].uniform.hi < expected[name].own.lo);
    const readout = await text(page, '[data-testid=ch8-ablate-readout]');
    assert.ok(readout.startsWith(`With uniform attention on the same ${n} test images, ${NAMES.map((name) => ablationText(name, expected[name].own, expected[name].uniform)).join('; ')}. `), readout);
    const values = await numbers(page);
    for (const name of NAMES) {
      assert.ok(Math.abs(values[`ch8.uniform.${name}`] - expected[name].uniform.p) < 1e-6);
      assert.match(readout, new RegExp(intervalText(expected[name].uniform).replace(/[()]/g, '\\$&')));
    }
    assert.equal(values['ch8.ablationApart'], apart);
    // the shipped models fall outside their intervals when they cannot look
    assert.equal(apart, true, 'both models depend on where they look');
    await fits(page, 'ch-images');
    await page.locator('[data-testid=chapter-images]').screenshot({ path: `${SHOTS}learn-images-images-${size}.png` });
    assert.deepEqual(await axeViolations(page, { chapters: ['images'] }), [], `axe-core, chapter 8 at ${size}`);
    assert.deepEqual(errors, []);
  }
});

/** The boxes the retina section drew: [{ step, scale, top, left, height, width }] in image pixels, by step then scale. */
const retinaBoxes = (page) => page.$$eval('[data-testid=glimpses-ch8r] rect[data-step]', (rects) => rects.map((r) => ({
  step: Number(r.dataset.step), scale: Number(r.dataset.scale),
  top: Number(r.getAttribute('y')), left: Number(r.getAttribute('x')), height: Number(r.getAttribute('height')), width: Number(r.getAttribute('width')),
})).sort((a, b) => a.step - b.step || a.scale - b.scale));

test('chapter 8’s retina at both sizes: its glimpses move over the test image where predict() puts them, step by step', async () => {
  const retina = models[RETINA];
  for (const size of Object.keys(SIZES)) {
    const { page, errors } = await learn(size);
    const shownImage = Number((await text(page, '[data-testid=ch8r-reads]')).match(/^Test image (\d+)/)[1]);
    const ex = testImage(retina, shownImage);
    const p = retina.predict(ex.image);
    const T = p.steps.length;
    assert.equal(await page.getAttribute('[data-testid=ch8r-glimpse]', 'max'), String(T - 1));
    for (const t of [0, 1, T - 1]) {
      await page.$eval('[data-testid=ch8r-glimpse]', (el, v) => { el.value = String(v); el.dispatchEvent(new Event('input')); }, t);
      const want = [];
      p.steps.slice(0, t + 1).forEach((s, k) => (k === t ? s.location.boxes : [s.location.box]).forEach((b, scale) => want.push({ step: k, scale, ...b })));
      assert.deepEqual(await retinaBoxes(page), want, `glimpse ${t + 1}: the boxes predict() gives`);
      const l = p.steps[t].location;
      assert.match(await text(page, '[data-testid=ch8r-reads]'), new RegExp(`Glimpse ${t + 1} is centred at \\(${l.x}, ${l.y}\\), (in|out)side the digit’s box, and reads ${p.steps[t].token}\\. The retina's answer, its last glimpse's: ${p.output} \\((right|wrong)\\)`));
    }
    // on screen: the last glimpse's finest box lies over the picture where its pixels are
    const frame = await page.locator('[data-testid=overlay-ch8r]').boundingBox();
    const drawn = await page.locator(`[data-testid=glimpses-ch8r] rect[data-step="${T - 1}"][data-scale="0"]`).boundingBox();
    const b = p.steps[T - 1].location.box;
    const px = frame.width / ex.image.cols;
    assert.ok(Math.abs(drawn.x - (frame.x + b.left * px)) < 2 && Math.abs(drawn.y - (frame.y + b.top * px)) < 2, `box at ${drawn.x},${drawn.y}`);
    assert.match(await text(page, '[data-testid=glimpse-legend-ch8r]'), /solid: glimpse \d+'s finest patch/);
    // Play steps through the glimpses from the first (once: it takes a few seconds); Next shows the next test image
    if (size === 'laptop') {
      await page.click('[data-testid=ch8r-play]');
      await page.waitForFunction(() => document.querySelector('[data-testid=ch8r-reads]').dataset.glimpse === '0');
      await page.waitForFunction((last) => document.querySelector('[data-testid=ch8r-reads]').dataset.glimpse === String(last), T - 1, { timeout: 10000 });
    }
    await page.click('[data-testid=ch8r-next]');
    const next = retina.predict(testImage(retina, shownImage + 1).image);
    assert.match(await text(page, '[data-testid=ch8r-reads]'), new RegExp(`^Test image ${shownImage + 1} shows a ${testImage(retina, shownImage + 1).labels[0]}\\.`));
    assert.equal(await page.getAttribute('[data-testid=ch8r-reads]', 'data-output'), next.output);
    await fits(page, 'ch-images');
    await page.locator('[data-testid=ch8-retina]').screenshot({ path: `${SHOTS}learn-images-retina-${size}.png` });
    assert.deepEqual(errors, []);
  }
});

test('chapter 8’s retina: random glimpses against its own, beside the grid’s hard attention, with 95% intervals; the lab link trains a retina', async () => {
  const n = manifest.evalCount;
  const rows = [['hard', 'hard, a grid cell'], ['retina', 'retina']];
  const expected = Object.fromEntries(rows.map(([name]) => [name, { own: interval(accuracy(name), n), uniform: interval(accuracy(name, 'uniform'), n) }]));
  const { page, errors } = await learn('laptop');
  const table = () => page.$$eval('[data-testid=ch8r-models] tr', (trs) => trs.map((r) => Array.from(r.children, (c) => c.textContent)));
  const span = (c) => `${(c.lo * 100).toFixed(1)}–${(c.hi * 100).toFixed(1)}%`;
  const cell = (c) => `${percent(c.p)}${span(c)}`;
  const sizeCell = (cfg) => `${cfg.hidden} hidden units${cfg.parameters.toLocaleString('en')} parameters`;
  const want = (uniform) => rows.map(([name, label]) => [label, sizeCell(models[`cluttered-${name}`].config), cell(expected[name].own), uniform ? cell(expected[name].uniform) : '—']);
  assert.deepEqual(await table(), want(false));
  await page.click('[data-testid=ch8r-ablate]');
  await page.waitForSelector('[data-testid=ch8r-ablate-readout][data-state=done]', { timeout: 30000 });
  assert.deepEqual(await table(), want(true));
  const readout = await text(page, '[data-testid=ch8r-ablate-readout]');
  assert.ok(readout.startsWith(`With uniform attention on the same ${n} test images, ${rows.map(([name]) => ablationText(name, expected[name].own, expected[name].uniform)).join('; ')}. `), readout);
  const values = await numbers(page);
  for (const [name] of rows) assert.ok(Math.abs(values[`ch8r.uniform.${name}`] - expected[name].uniform.p) < 1e-6, name);
  assert.equal(values['ch8r.ablationApart'], rows.every(([name]) => expected[name].uniform.hi < expected[name].own.lo));
  // the link opens the lab on the retina's settings, from scratch (the lab's codec reads it as the lab does;
  // lab-retina.test.mjs opens such links in the lab)
  const href = await page.getAttribute('[data-testid=open-retina]', 'href');
  assert.equal(href, labLink(visionLabFields(manifest.models[RETINA], { start: 'scratch' })));
  const { state, ignored } = labCodec.decode(href.slice(href.indexOf('#')));
  assert.deepEqual(ignored, []);
  const o = manifest.models[RETINA].options;
  const made = visionOptions(state);
  assert.deepEqual([made.sensor, made.mode, made.hidden, made.task, made.clutter, state.start], ['retina', 'hard', o.hidden, o.task, o.clutter, 'scratch']);
  assert.deepEqual(await axeViolations(page, { chapters: ['images'] }), [], 'axe-core after the retina’s ablation');
  assert.deepEqual(errors, []);
});
