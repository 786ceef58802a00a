// The Learn page in headless Chromium, read and used the way a learner would:
// every chapter's widget answers input, every challenge can be solved and says
// so, every "open in" link opens the playground or lab in the chapter's state,
// every figure the prose quotes equals what the engine computes here in Node,
// axe-core finds no serious or critical violation, dist/ works offline under a
// sub-path, and the first chapter becomes interactive (its time is printed: target 1.5 s).
// Screenshots of each chapter at 1440 × 900 and 390 × 844 go to test-results/browser/.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { ROOT, SHOTS, axeViolations, gridCell, hoverCell, learnFigures, openPage, openPlayground, startBrowser } from './browser.mjs';
import { loadEngine } from '../../web/engine/index.js';
import { fixed } from '../../web/ui/format.js';
import { measure } from '../../web/learn/spread.js';
import { DISAGREE_TARGET, agreementByImage, mean, meanPeak, seqAgreement, testImage } from '../../web/learn/vision-measures.js';
import { visionLabFields } from '../../web/learn/links.js';
import { exampleParams } from '../../web/learn/ch4-scores.js';
import { OUTSIDE } from '../../web/learn/ch6-dates.js';
import { sparseText } from '../../web/learn/ch1-bottleneck.js';
import { imageFigures } from '../../web/learn/ch7-kinds.js';

const TOKENS = ['Your', 'journey', 'starts', 'with', 'one', 'step'];
const X = [[0.43, 0.15, 0.89], [0.22, 0.58, 0.33], [0.77, 0.25, 0.10], [0.05, 0.80, 0.55], [0.57, 0.85, 0.64], [0.55, 0.87, 0.66]];
const CHAPTERS = ['bottleneck', 'dot', 'average', 'scores', 'self', 'dates', 'kinds', 'images'];
const percent = (v) => `${(v * 100).toFixed(1)}%`;
const list4 = (a) => Array.from(a, (v) => fixed(v, 4)).join(', ');

let env;
let engine;
let manifest;
before(async () => {
  env = await startBrowser();
  engine = await loadEngine();
  manifest = JSON.parse(await readFile(`${ROOT}web/models/models.json`, 'utf8'));
});
after(() => env?.close());

async function openLearn(viewport = { width: 1440, height: 900 }, base = env.url, browser = env.browser) {
  const opened = await openPage(browser, `${base}learn.html`, viewport);
  await opened.page.waitForSelector('body[data-ready="true"]', { timeout: 30000 });
  return opened;
}
/**
 * The page at 1440 x 900, opened once and shared: each chapter's test works on its own
 * chapter's widgets; every test starts with no solved challenge stored, at the top of the
 * page, and its own list of errors.
 */
let laptop = null;
async function sharedLearn() {
  laptop ??= openLearn();
  const opened = await laptop;
  await opened.page.evaluate(() => { localStorage.clear(); scrollTo(0, 0); });
  opened.errors.length = 0;
  return opened;
}
after(async () => { if (laptop) await (await laptop).page.close(); });
const chapter = (page, id) => page.locator(`[data-testid="chapter-${id}"]`);
const solved = (page, id) => page.getAttribute(`[data-testid="challenge-${id}"]`, 'data-solved');
const hrefOf = (page, id) => page.getAttribute(`[data-testid="open-${id}"]`, 'href');
// the built site (dist/ as shipped: bundled, minified) under a sub-path, built once
let site = null;
function builtSite() {
  site ??= (async () => {
    const dir = `${SHOTS}site-learn/`;
    execFileSync(process.execPath, [`${ROOT}scripts/build.mjs`, '--out', `${dir}a/sub/path`], { stdio: 'pipe' });
    const hosted = await startBrowser({ root: dir });
    return { ...hosted, base: `${hosted.url}a/sub/path/` };
  })();
  return site;
}
after(async () => { if (site) await (await site).close(); });

async function loadModel(name) {
  const bytes = new Uint8Array(await readFile(`${ROOT}web/models/${manifest.models[name].file}`));
  return manifest.models[name].kind === 'vision' ? engine.loadVisionModel(bytes) : engine.loadSeq2Seq(bytes);
}

test('every figure the prose quotes is the engine’s', async () => {
  const { page, errors } = await sharedLearn();
  await learnFigures(page);
  const shown = await page.$$eval('[data-num]', (els) => els.map((e) => [e.dataset.num, e.textContent]));
  const values = await page.evaluate(() => window.attnlabLearn.numbers);
  assert.ok(shown.length >= 30, `${shown.length} quoted figures`);
  assert.ok(shown.every(([, t]) => t !== '…' && t !== 'computing…' && t !== 'not available' && t.trim() !== ''), 'every figure is filled in');

  // the expected text of each figure, computed here in Node from the same models and inputs
  const expect = {};
  const a = await loadModel('reverse-attention');
  const b = await loadModel('reverse-bottleneck');
  const d = await loadModel('dates');
  const n = manifest.evalCount;
  const evA = a.evaluate({ split: 'test', count: n });
  const evB = b.evaluate({ split: 'test', count: n });
  const maxL = manifest.models['reverse-attention'].options.maxLength;
  const tail = (ev) => {
    const rows = ev.byLength.filter((r) => r.length >= maxL - 3);
    return rows.reduce((s, r) => s + r.sequenceAccuracy * r.count, 0) / rows.reduce((s, r) => s + r.count, 0);
  };
  Object.assign(expect, {
    'ch1.accAttention': [evA.sequenceAccuracy, percent(evA.sequenceAccuracy)],
    'ch1.accBottleneck': [evB.sequenceAccuracy, percent(evB.sequenceAccuracy)],
    'ch1.tailAttention': [tail(evA), percent(tail(evA))],
    'ch1.tailBottleneck': [tail(evB), percent(tail(evB))],
    'ch1.maxLength': [maxL, String(maxL)],
    'ch1.count': [n, String(n)],
  });
  const dot = engine.attend({ queries: X, keys: X });
  expect['ch2.yourJourney'] = [dot.scores.data[1], fixed(dot.scores.data[1], 4)];
  const q = engine.attend({ queries: [X[1]], keys: X });
  const sum = engine.attend({ queries: [X[1]], keys: X, normalize: 'sum' });
  expect['ch3.scores'] = [Array.from(q.scores.data), list4(q.scores.data)];
  expect['ch3.softmax'] = [Array.from(q.weights.data), list4(q.weights.data)];
  expect['ch3.sum'] = [Array.from(sum.weights.data), list4(sum.weights.data)];
  expect['ch3.context'] = [Array.from(q.context.data), list4(q.context.data)];
  // the tutorial's printed numbers, to 4 places
  assert.equal(shown.find(([k]) => k === 'ch3.scores')[1], '0.4753, 0.4937, 0.3474, 0.6565, 0.8296, 0.8434');
  assert.equal(shown.find(([k]) => k === 'ch3.softmax')[1], '0.1435, 0.1462, 0.1263, 0.1720, 0.2046, 0.2074');
  assert.equal(shown.find(([k]) => k === 'ch3.sum')[1], '0.1304, 0.1354, 0.0953, 0.1801, 0.2275, 0.2313');
  const m = measure(engine, 512);
  Object.assign(expect, {
    'ch4.spreadMax': [m.spread, fixed(m.spread, 1)],
    'ch4.entropyDotMax': [m.entropyDot, percent(m.entropyDot)],
    'ch4.entropyScaledMax': [m.entropyScaled, percent(m.entropyScaled)],
  });
  const best = (r) => {
    const row = r.weights.data.subarray(6, 12);
    let k = 0;
    for (let j = 1; j < 6; j++) if (row[j] > row[k]) k = j;
    return [TOKENS[k], `“${TOKENS[k]}” (${fixed(row[k], 2)})`];
  };
  expect['ch4.best.dot'] = best(dot);
  expect['ch4.best.cosine'] = best(engine.attend({ queries: X, keys: X, score: 'cosine', params: { beta: exampleParams().beta } }));
  const sa = engine.selfAttention({ x: X });
  expect['ch5.journeyStep'] = [sa.weights[0].data[11], fixed(sa.weights[0].data[11], 4)];
  const evD = d.evaluate({ split: 'test', count: n });
  expect['ch6.acc'] = [evD.sequenceAccuracy, percent(evD.sequenceAccuracy)];
  const outside = OUTSIDE.map((t) => [t, d.translate(t).output]);
  expect['ch6.outside'] = [outside, outside.map(([t, o]) => `${t} gives ${o}`).join(', ')];
  const years = d.examples({ split: 'train', count: 1000, seed: 3 }).map((e) => Number(e.output.slice(0, 4)));
  expect['ch6.years'] = [[Math.min(...years), Math.max(...years)], `${Math.min(...years)} to ${Math.max(...years)}`];
  const minL = manifest.models['reverse-attention'].options.minLength;
  expect['ch1.sparse'] = [evA.byLength.map((r) => [r.length, r.count]), sparseText(evA.byLength, minL, maxL)];
  expect['ch1.steps'] = [manifest.models['reverse-attention'].steps, manifest.models['reverse-attention'].steps.toLocaleString('en')];
  const soft = await loadModel('cluttered-soft');
  const hard = await loadModel('cluttered-hard');
  const accSoft = soft.evaluate({ split: 'test', count: n }).accuracy;
  const accHard = hard.evaluate({ split: 'test', count: n }).accuracy;
  const [peakSoft, peakHard] = [meanPeak(soft), meanPeak(hard)];
  Object.assign(expect, {
    'ch7.accSoft': [accSoft, percent(accSoft)],
    'ch7.accHard': [accHard, percent(accHard)],
    ...imageFigures(agreementByImage(soft), 49),
    'ch7.receptive': [22, '22 × 22'],
    'ch7.covered': [56, '56 × 56 of the 60 × 60'],
    'ch7.peakSoft': [peakSoft, percent(peakSoft)],
    'ch7.peakHard': [peakHard, percent(peakHard)],
    'ch7.hardHidden': [hard.config.hidden, String(hard.config.hidden)],
    'ch7.tauDates': [seqAgreement(d).tau, fixed(seqAgreement(d).tau, 2)],
    'ch7.tauReverse': [seqAgreement(a).tau, fixed(seqAgreement(a).tau, 2)],
    'ch7.topDates': [seqAgreement(d).topMatch, percent(seqAgreement(d).topMatch)],
    'ch7.topReverse': [seqAgreement(a).topMatch, percent(seqAgreement(a).topMatch)],
  });
  for (const mdl of [a, b, d, soft, hard]) mdl.destroy();

  for (const [key, [value, text]] of Object.entries(expect)) {
    const onPage = shown.filter(([k]) => k === key);
    assert.ok(onPage.length >= 1, `${key} is quoted`);
    for (const [, t] of onPage) assert.equal(t, text, key);
    if (typeof value === 'number') assert.ok(Math.abs(values[key] - value) < 1e-6, `${key}: page ${values[key]}, engine ${value}`);
    else assert.deepEqual(values[key], value, key);
  }
  console.log(`learn: ${shown.length} quoted figures, ${Object.keys(expect).length} recomputed in Node and equal`);
  assert.deepEqual(errors, []);
});

test('chapter 1: typing reverses with both models, the challenge, and the lab link', async () => {
  const { page, errors } = await sharedLearn();
  const input = page.locator('[data-testid=ch1-input]');
  await input.fill('98765');
  assert.equal(await page.textContent('[data-testid=ch1-out-attention]'), '56789');
  const rows = await page.$eval('[data-testid=heatmap-ch1-alignment]', (c) => c.height);
  assert.equal(rows, 6, 'five digits and the end marker');
  assert.equal(await solved(page, 'bottleneck'), 'false');
  // a long string the bottleneck gets wrong: search the test examples the way a reader would, by trying
  const a = await loadModel('reverse-attention');
  const b = await loadModel('reverse-bottleneck');
  const rev = (s) => [...s].reverse().join('');
  let found = null;
  for (let seed = 1; seed < 200 && !found; seed++) {
    let s = '';
    let x = seed;
    for (let k = 0; k < 15; k++) { x = (x * 1103515245 + 12345) % 2147483648; s += String(x % 10); }
    if (a.translate(s).output === rev(s) && b.translate(s).output !== rev(s)) found = s;
  }
  a.destroy();
  b.destroy();
  assert.ok(found, 'a 15-digit string that only attention reverses');
  await input.fill(found);
  assert.equal(await page.getAttribute('[data-testid=ch1-out-attention]', 'data-correct'), 'true');
  assert.equal(await page.getAttribute('[data-testid=ch1-out-bottleneck]', 'data-correct'), 'false');
  assert.equal(await solved(page, 'bottleneck'), 'true');
  assert.match(await page.textContent('[data-testid=challenge-status-bottleneck]'), /Solved/);
  assert.equal(await page.$$eval('[data-testid=ch1-chart] path.series', (p) => p.length), 2);
  // the lab opens with the same model settings and input
  const href = await hrefOf(page, 'bottleneck');
  const lab = await env.browser.newPage();
  await lab.goto(new URL(href, `${env.url}learn.html`).href);
  await lab.waitForSelector('body[data-ready=true]', { timeout: 30000 });
  const spec = manifest.models['reverse-attention'].options;
  assert.equal(await lab.inputValue('#task'), 'reverse');
  assert.equal(await lab.inputValue('#attention'), 'dot');
  assert.equal(await lab.inputValue('#compare'), 'none');
  assert.equal(await lab.inputValue('#hidden'), String(spec.hidden));
  assert.equal(await lab.inputValue('#embed'), String(spec.embed));
  assert.equal(await lab.inputValue('#text'), found);
  await lab.close();
  // progress survives a reload (localStorage only)
  await page.reload();
  await page.waitForSelector('body[data-ready="true"]');
  assert.equal(await solved(page, 'bottleneck'), 'true');
  assert.match(await page.textContent('[data-testid=progress]'), /^1 of 11/);
  await page.evaluate(() => localStorage.clear());
  assert.deepEqual(await axeViolations(page, { chapters: ['bottleneck'] }), [], 'axe-core, in the state the test leaves in its chapter');
  assert.deepEqual(errors, []);
});

test('chapter 2: stepping fills QKᵀ cell by cell; the challenge; the playground link', async () => {
  const { page, errors } = await sharedLearn();
  const explain = () => page.textContent('[data-testid=ch2-explain]');
  assert.match(await explain(), /^Cell 1 of 36: row “Your”, column “Your”: x₀ · x₀ = 0\.43×0\.43 \+ 0\.15×0\.15 \+ 0\.89×0\.89 = 0\.9995$/);
  await page.click('[data-testid=ch2-next]');
  assert.match(await explain(), /Cell 2 of 36: row “Your”, column “journey”.* = 0\.4753$/);
  const grey = async () => page.$eval('[data-testid=heatmap-ch2-scores]', (c) => {
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let n = 0;
    for (let p = 0; p < d.length; p += 4) if (d[p] === 214 && d[p + 1] === 214 && d[p + 2] === 220) n++;
    return n;
  });
  assert.equal(await grey(), 34);
  await page.click('[data-testid=ch2-all]');
  assert.equal(await grey(), 0);
  assert.equal(await solved(page, 'dot'), 'false');
  const cell = await gridCell(page, 'ch2-x', 2, 0);
  assert.equal(await cell.getAttribute('aria-label'), 'starts, dimension 1');
  assert.equal(await cell.inputValue(), String(X[2][0]));
  await cell.fill('-1');
  assert.equal(await solved(page, 'dot'), 'true');
  const x = X.map((r) => [...r]);
  x[2][0] = -1;
  const expected = engine.attend({ queries: x, keys: x });
  const pg = await openPlayground(env.browser, new URL(await hrefOf(page, 'dot'), `${env.url}learn.html`).href);
  assert.equal(await (await gridCell(pg.page, 'grid-x', 2, 0)).inputValue(), '-1');
  assert.match(await hoverCell(pg.page, 'weights', 0, 2), new RegExp(`α₀₂ = ${expected.weights.data[2].toFixed(4)}`));
  assert.deepEqual(pg.errors, []);
  await pg.page.close();
  assert.deepEqual(await axeViolations(page, { chapters: ['dot'] }), [], 'axe-core, in the state the test leaves in its chapter');
  assert.deepEqual(errors, []);
});

test('chapter 3: dragging the query moves the weights; the challenge; the playground link', async () => {
  const { page, errors } = await sharedLearn();
  const table = () => page.$$eval('[data-testid=ch3-table] tbody tr', (rows) => rows.map((r) => Array.from(r.querySelectorAll('td'), (td) => td.textContent).slice(0, 3)));
  const start = await table();
  assert.deepEqual(start.map((r) => r[1]), ['0.1435', '0.1462', '0.1263', '0.1720', '0.2046', '0.2074']);
  // drag with the mouse from the query's point to the upper right
  const plot = page.locator('[data-testid=ch3-plot]');
  await plot.scrollIntoViewIfNeeded();
  const q = await page.locator('[data-testid=ch3-plot] .pt.query circle').boundingBox();
  await page.mouse.move(q.x + q.width / 2, q.y + q.height / 2);
  await page.mouse.down();
  await page.mouse.move(q.x + 50, q.y - 30, { steps: 5 });
  await page.mouse.up();
  const moved = await table();
  assert.notDeepEqual(moved, start, 'the weights follow the drag');
  assert.equal(await solved(page, 'average'), 'false');
  // keyboard: from the tutorial's position, the query to the left until "with" wins
  await page.click('[data-testid=chapter-average] [data-role=reset]');
  assert.deepEqual(await table(), start);
  await plot.focus();
  for (let k = 0; k < 40 && (await page.getAttribute('[data-testid=ch3-plot]', 'data-best')) !== 'with'; k++) await page.keyboard.press('ArrowLeft');
  assert.equal(await page.getAttribute('[data-testid=ch3-plot]', 'data-best'), 'with');
  assert.equal(await solved(page, 'average'), 'true');
  // the table is the engine's for the query's new position against the tutorial's keys
  const pos = (await page.textContent('[data-testid=ch3-position]')).match(/\(([^)]*)\)/)[1].split(', ').map((t) => Number(t.replace('−', '-')));
  const r = engine.attend({ queries: [pos], keys: X });
  assert.deepEqual((await table()).map((row) => row[1]), Array.from(r.weights.data, (v) => fixed(v, 4)));
  // the playground opens on the tutorial's vectors, every token a query: row "journey" is the table as loaded
  const pg = await openPlayground(env.browser, new URL(await hrefOf(page, 'average'), `${env.url}learn.html`).href);
  assert.match(await hoverCell(pg.page, 'weights', 1, 3), new RegExp(`α₁₃ = ${start[3][1]}`));
  assert.deepEqual(pg.errors, []);
  await pg.page.close();
  assert.deepEqual(await axeViolations(page, { chapters: ['average'] }), [], 'axe-core, in the state the test leaves in its chapter');
  assert.deepEqual(errors, []);
});

test('chapter 4: six scores, the √d experiment, the temperature challenge, score links', async () => {
  const { page, errors } = await sharedLearn();
  assert.equal(await page.locator('[data-testid=chapter-scores] canvas[data-testid^=heatmap-ch4-]').count(), 6);
  const hTau = () => page.textContent('[data-testid=ch4-h-tau]');
  const setRange = (id, v) => page.$eval(`[data-testid=${id}]`, (el, value) => { el.value = value; el.dispatchEvent(new Event('input')); }, String(v));
  await setRange('ch4-d', 9); // d = 512
  const cold = await hTau();
  assert.equal(cold, percent(measure(engine, 512).entropyDot));
  assert.equal(await solved(page, 'scores'), 'false');
  let tau = 0;
  for (; tau <= 7 && (await solved(page, 'scores')) !== 'true'; tau += 0.25) await setRange('ch4-tau', tau);
  assert.equal(await solved(page, 'scores'), 'true', 'a temperature flattens the weights');
  const t = Math.round(2 ** (tau - 0.25) * 100) / 100;
  assert.equal(await hTau(), percent(measure(engine, 512, t).entropyTempered));
  console.log(`learn: τ = ${t} makes the unscaled weights at d = 512 almost uniform (√512 = ${Math.sqrt(512).toFixed(1)})`);
  // the additive card's link: the playground shows the same weights
  const href = await hrefOf(page, 'score-additive');
  const pg = await openPlayground(env.browser, new URL(href, `${env.url}learn.html`).href);
  assert.equal(await pg.page.inputValue('#score'), 'additive');
  const readout = await page.evaluate(() => {
    const c = document.querySelector('[data-testid=heatmap-ch4-additive]');
    c.dispatchEvent(new FocusEvent('focus'));
    return document.querySelector('[data-testid=readout-ch4-additive]').textContent;
  });
  const a11 = readout.match(/α = (\S+)/)[1];
  assert.match(await hoverCell(pg.page, 'weights', 0, 0), new RegExp(`α₀₀ = ${a11.replace('.', '\\.')}`));
  assert.deepEqual(pg.errors, []);
  await pg.page.close();
  assert.deepEqual(await axeViolations(page, { chapters: ['scores'] }), [], 'axe-core, in the state the test leaves in its chapter');
  assert.deepEqual(errors, []);
});

test('chapter 5: weights, causal mask, heads; the challenge; the playground link', async () => {
  const { page, errors } = await sharedLearn();
  const maps = () => page.locator('[data-testid=chapter-self] canvas[data-testid^=heatmap-ch5-head-]:visible').count();
  assert.equal(await maps(), 1);
  await page.check('[data-testid=ch5-causal]');
  // keyboard on the weights: row "Your", last column "step" carries no weight under the mask
  await page.focus('[data-testid=heatmap-ch5-head-0]');
  await page.keyboard.press('End');
  assert.match(await page.textContent('[data-testid=readout-ch5-head-0]'), /^Your → step\. α = 0\.0000/);
  await page.uncheck('[data-testid=ch5-causal]');
  await page.check('[data-testid=ch5-trainable]');
  assert.equal(await page.isVisible('[data-role=projections]'), true);
  assert.equal(await solved(page, 'self'), 'false');
  await page.selectOption('[data-testid=ch5-heads]', '3');
  assert.equal(await maps(), 3, 'every head is drawn');
  if ((await solved(page, 'self')) !== 'true') {
    await page.uncheck('[data-testid=ch5-trainable]');
  }
  assert.equal(await solved(page, 'self'), 'true');
  const trainable = await page.isChecked('[data-testid=ch5-trainable]');
  const pg = await openPlayground(env.browser, new URL(await hrefOf(page, 'self'), `${env.url}learn.html`).href);
  assert.equal(await pg.page.isChecked('#mode-self'), true);
  assert.equal(await pg.page.isChecked('#trainable'), trainable);
  assert.equal(await pg.page.inputValue('#heads'), '3');
  const w = await page.evaluate(() => {
    const c = document.querySelector('[data-testid=heatmap-ch5-head-0]');
    c.dispatchEvent(new FocusEvent('focus'));
    return document.querySelector('[data-testid=readout-ch5-head-0]').textContent.match(/α = (\S+)/)[1];
  });
  // the readout is still on the cell the keyboard left: row "Your", column "step"
  assert.match(await hoverCell(pg.page, 'weights', 0, 5), new RegExp(`α₀₅ = ${w.replace('.', '\\.')}`));
  assert.deepEqual(pg.errors, []);
  await pg.page.close();
  assert.deepEqual(await axeViolations(page, { chapters: ['self'] }), [], 'axe-core, in the state the test leaves in its chapter');
  assert.deepEqual(errors, []);
});

test('chapter 6: a typed date, its alignment, the challenge, the lab link', async () => {
  const { page, errors } = await sharedLearn();
  assert.equal(await page.textContent('[data-testid=ch6-output]'), '2009-06-25');
  const input = page.locator('[data-testid=ch6-input]');
  await input.fill('31 December 1999');
  assert.equal(await page.textContent('[data-testid=ch6-output]'), '1999-12-31');
  assert.equal(await solved(page, 'dates'), 'true');
  const cols = await page.$eval('[data-testid=heatmap-ch6-alignment]', (c) => c.width);
  assert.ok(cols >= 16, `${cols} input characters`);
  const lab = await env.browser.newPage();
  await lab.goto(new URL(await hrefOf(page, 'dates'), `${env.url}learn.html`).href);
  await lab.waitForSelector('body[data-ready=true]', { timeout: 30000 });
  assert.equal(await lab.inputValue('#task'), 'dates');
  assert.equal(await lab.inputValue('#attention'), 'dot');
  assert.equal(await lab.inputValue('#text'), '31 December 1999');
  await lab.close();
  await page.evaluate(() => localStorage.clear());
  assert.deepEqual(await axeViolations(page, { chapters: ['dates'] }), [], 'axe-core, in the state the test leaves in its chapter');
  assert.deepEqual(errors, []);
});

/** The lab opened from `href` shows the Images task with the model's settings and the test image whose answer is `digit`. */
async function checkLabImages(href, o, digit) {
  const lab = await openPage(env.browser, new URL(href, `${env.url}learn.html`).href);
  await lab.page.waitForSelector('body[data-ready=true]', { timeout: 30000 });
  for (const [id, v] of [['task', o.task], ['mode', o.mode], ['channels', o.channels.join(',')], ['clutter', o.clutter], ['hidden', o.hidden], ['seed', o.seed]]) {
    assert.equal(await lab.page.inputValue(`#${id}`), String(v), id);
  }
  await lab.page.waitForFunction((d) => document.querySelector('[data-testid=image-truth]')?.textContent.startsWith(`(the answer: ${d},`), digit, { timeout: 30000 });
  assert.deepEqual(lab.errors, []);
  await lab.page.close();
}

test('chapter 7: attention beside saliency with the agreement measures per glimpse, sampled glimpses, the challenge, the lab link', async () => {
  const { page, errors } = await sharedLearn();
  await learnFigures(page);
  const soft = await loadModel('cluttered-soft');
  const taus = async () => page.$$eval('[data-testid=ch7-taus] tr', (rows) => rows.map((r) => Array.from(r.children, (c) => c.textContent)));
  const expected = (k) => soft.compareAttention(testImage(soft, k).image).steps.map((st, t) => [String(t + 1), st.token,
    st.agreement.topMatch ? 'yes' : 'no', percent(st.agreement.saliencyInTopK), st.agreement.tauActive === null ? '—' : fixed(st.agreement.tauActive, 2), fixed(st.tau, 2)]);
  assert.deepEqual(await taus(), expected(1), 'test image 1: the engine’s measures per glimpse');
  assert.match(await page.textContent('[data-testid=ch7-tau]'), /^At the last glimpse the most-attended cell is (not )?the most salient one, and the 3 most-attended cells hold \d+\.\d% of the saliency \(an unrelated map: about 6\.1%\); rK over the \d+ bright cells (−?\d\.\d\d|—), rK over all 49: −?\d\.\d\d\.$/);
  assert.match(await page.textContent('[data-testid=ch7-label]'), new RegExp(`^Test image 1: a ${testImage(soft, 1).labels[0]};`));
  // the glimpse shown follows the selector
  await page.selectOption('[data-testid=ch7-step]', '0');
  assert.match(await page.textContent('[data-testid=figure-overlay-ch7-attention] figcaption'), /glimpse 1$/);
  // the same on text: a typed date, the dates model's τ per output character
  const dates = await loadModel('dates');
  await page.fill('[data-testid=ch7-text]', 'March 3, 2001');
  const c = dates.compareAttention('March 3, 2001');
  assert.equal(c.output, '2001-03-03');
  const line = await page.textContent('[data-testid=ch7-text-taus]');
  const least = c.steps.reduce((x, st) => (st.agreement.saliencyInTopK < x.agreement.saliencyInTopK ? st : x));
  assert.equal(line, `Output 2001-03-03; at ${c.steps.filter((st) => st.agreement.topMatch).length} of ${c.steps.length} characters the most-attended input character is also the most salient; `
    + `the least agreement: output “${least.token === ' ' ? '␣' : least.token}”, whose most-attended character holds ${percent(least.agreement.saliencyInTopK)} of its saliency. `
    + `rK averages ${fixed(mean(c.steps.map((st) => st.tau)), 2)} over the characters.`);
  assert.equal(await page.$eval('[data-testid=heatmap-ch7-text-saliency]', (cv) => cv.width), c.inputTokens.length);
  // sampled glimpses: many draws are closer to α than one
  const tv = async () => Number(await page.getAttribute('[data-testid=ch7-samples]', 'data-tv'));
  const setRange = (v) => page.$eval('[data-testid=ch7-draws]', (el, value) => { el.value = value; el.dispatchEvent(new Event('input')); }, String(v));
  await setRange(0);
  const one = await tv();
  assert.match(await page.textContent('[data-testid=ch7-samples]'), /^1 glimpse drawn/);
  await setRange(6);
  const many = await tv();
  assert.ok(many < one && many < 0.1, `total variation: 1 draw ${one}, 1000 draws ${many}`);
  const before = await page.textContent('[data-testid=ch7-samples]');
  await setRange(1);
  await page.click('[data-testid=ch7-resample]');
  assert.notEqual(await page.textContent('[data-testid=ch7-samples]'), before);
  assert.equal(await page.isVisible('[data-testid=glimpse-ch7-hard]'), true, 'the hard model’s cell is boxed');
  // the challenge: a date on which attention and saliency point at different characters; browsing
  // images does not solve it (on these test images the two maps share their bright cells), a typed date does
  assert.equal(await solved(page, 'kinds'), 'false');
  const k = 4;
  for (let i = 1; i < k; i++) await page.click('[data-testid=ch7-next]');
  assert.equal(await solved(page, 'kinds'), 'false', 'pressing Next image does not solve it');
  assert.deepEqual(await taus(), expected(k));
  const hard = '1955-12-31';
  const shares = dates.compareAttention(hard).steps.map((st) => st.agreement.saliencyInTopK);
  assert.ok(Math.min(...shares) < DISAGREE_TARGET, `${hard}: the least share ${Math.min(...shares)}`);
  await page.fill('[data-testid=ch7-text]', hard);
  assert.equal(await solved(page, 'kinds'), 'true', `solved by ${hard}`);
  assert.ok(Number(await page.getAttribute('[data-testid=ch7-text-taus]', 'data-least')) < DISAGREE_TARGET);
  assert.match(await page.textContent('[data-testid=challenge-status-kinds]'), /Solved/);
  dates.destroy();
  // the lab link carries the model's settings
  const href = await hrefOf(page, 'kinds');
  const fields = Object.fromEntries(new URLSearchParams(href.split('#')[1]));
  const want = Object.fromEntries(Object.entries(visionLabFields(manifest.models['cluttered-soft'], { image: k })).map(([key, v]) => [key, String(v)]));
  assert.deepEqual(fields, want);
  await checkLabImages(href, manifest.models['cluttered-soft'].options, testImage(soft, k).labels[0]);
  soft.destroy();
  await page.evaluate(() => localStorage.clear());
  assert.deepEqual(await axeViolations(page, { chapters: ['kinds'] }), [], 'axe-core, in the state the test leaves in its chapter');
  assert.deepEqual(errors, []);
});

test('chapter 8: draw a digit among clutter, step through the glimpses, the challenge, the lab link', async () => {
  const { page, errors } = await sharedLearn();
  const soft = await loadModel('cluttered-soft');
  const reads = () => page.getAttribute('[data-testid=ch8-reads]', 'data-output');
  const caption = () => page.textContent('[data-testid=figure-overlay-ch8] figcaption');
  // a test image: the page reads what the engine reads
  await page.click('[data-testid=ch8-example]');
  const ex = testImage(soft, 1);
  await page.waitForFunction((out) => document.querySelector('[data-testid=ch8-reads]').dataset.output === out, soft.predict(ex.image).output);
  // stepping through the glimpses
  assert.match(await caption(), /^Glimpse 1 of 3: reads \d$/);
  await page.$eval('[data-testid=ch8-glimpse]', (el) => { el.value = '2'; el.dispatchEvent(new Event('input')); });
  assert.match(await caption(), /^Glimpse 3 of 3/);
  await page.click('[data-testid=ch8-play]');
  assert.match(await caption(), /^Glimpse 1 of 3/);
  await page.waitForFunction(() => /^Glimpse 3 of 3/.test(document.querySelector('[data-testid=figure-overlay-ch8] figcaption').textContent), null, { timeout: 5000 });
  // the hard model boxes the cell it reads
  await page.selectOption('[data-testid=ch8-model]', 'hard');
  assert.equal(await page.isVisible('[data-testid=glimpse-ch8]'), true);
  await page.selectOption('[data-testid=ch8-model]', 'soft');
  assert.equal(await page.isVisible('[data-testid=glimpse-ch8]'), false);
  // the challenge: fresh clutter, then a 7 drawn with the mouse in the top-left quarter
  await page.click('[data-testid=ch8-clutter]');
  assert.equal(await solved(page, 'images'), 'false');
  const canvas = page.locator('[data-testid=drawing-ch8]');
  await canvas.scrollIntoViewIfNeeded();
  const box = await canvas.boundingBox();
  const at = (x, y) => [box.x + (x / 60) * box.width, box.y + (y / 60) * box.height];
  const stroke = async (points) => {
    await page.mouse.move(...at(...points[0]));
    await page.mouse.down();
    for (const p of points.slice(1)) await page.mouse.move(...at(...p), { steps: 8 });
    await page.mouse.up();
  };
  await stroke([[8, 7], [25, 7], [14, 27]]);
  await page.waitForFunction(() => document.querySelector('[data-testid=ch8-reads]').dataset.output === '7', null, { timeout: 5000 });
  assert.ok(Number(await page.getAttribute('[data-testid=ch8-reads]', 'data-share')) > 0.5);
  assert.equal(await solved(page, 'images'), 'true');
  assert.match(await page.textContent('[data-testid=challenge-status-images]'), /Solved/);
  // the lab link: the model's settings and the test image shown
  const fields = Object.fromEntries(new URLSearchParams((await hrefOf(page, 'images')).split('#')[1]));
  assert.equal(fields.task, 'cluttered');
  assert.equal(fields.image, '1');
  assert.equal(fields.hidden, String(manifest.models['cluttered-soft'].options.hidden));
  await checkLabImages(await hrefOf(page, 'images'), manifest.models['cluttered-soft'].options, ex.labels[0]);
  soft.destroy();
  await page.evaluate(() => localStorage.clear());
  assert.deepEqual(await axeViolations(page, { chapters: ['images'] }), [], 'axe-core, in the state the test leaves in its chapter');
  assert.deepEqual(errors, []);
});

test('axe-core finds no serious or critical violation; screenshots of every chapter', async () => {
  const axe = await readFile(`${ROOT}node_modules/axe-core/axe.min.js`, 'utf8');
  for (const [name, viewport] of [['laptop', { width: 1440, height: 900 }], ['phone', { width: 390, height: 844 }]]) {
    const { page, errors } = await openLearn(viewport);
    await page.evaluate(axe); // through DevTools, not a script tag: the page's CSP allows no inline script
    const result = await page.evaluate(() => window.axe.run(document, { resultTypes: ['violations'] }));
    const bad = result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
    assert.deepEqual(bad.map((v) => `${v.id}: ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`), [], name);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `${name}: the page scrolls sideways by ${overflow}px`);
    // chapters 7 and 8 say that their figures are computed when a reader reaches them, then compute them
    const note = page.locator('#ch-kinds .figures-note');
    assert.equal(await note.textContent(), 'The figures quoted in this chapter are computed when you reach it.');
    assert.equal(await page.getAttribute('#ch-kinds', 'data-figures'), 'pending');
    await note.scrollIntoViewIfNeeded();
    await page.waitForSelector('#ch-kinds:is([data-figures=computing], [data-figures=ready])');
    await page.screenshot({ path: `${SHOTS}learn-kinds-computing-${name}.png` });
    await learnFigures(page);
    assert.equal(await note.isVisible(), false, 'the note goes once the figures are in');
    assert.equal(await page.$$eval('#ch-kinds [data-num], #ch-images [data-num]', (els) => els.filter((e) => e.textContent === '…' || e.classList.contains('figure-pending')).length), 0);
    for (const id of CHAPTERS) await chapter(page, id).screenshot({ path: `${SHOTS}learn-${id}-${name}.png` });
    await page.evaluate(() => scrollTo(0, 0));
    await page.screenshot({ path: `${SHOTS}learn-top-${name}.png` });
    assert.deepEqual(errors, []);
    await page.close();
  }
});

test('dist/ works offline under a sub-path', async () => {
  const hosted = await builtSite();
  {
    const { base } = hosted;
    const context = await hosted.browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const errors = [];
    const foreign = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
    page.on('request', (r) => { if (!r.url().startsWith(base) && !r.url().startsWith('data:')) foreign.push(r.url()); });
    await page.goto(`${base}learn.html`);
    // the first chapter is interactive before the rest of the page (how soon is bench:page's figure)
    await page.waitForSelector('body[data-first-ready]', { timeout: 60000 });
    assert.ok(Number(await page.getAttribute('body', 'data-first-ready')) > 0);
    await page.fill('[data-testid=ch1-input]', '12345');
    await page.waitForFunction(() => document.querySelector('[data-testid=ch1-out-attention]').textContent === '54321');
    await page.waitForSelector('body[data-ready="true"]', { timeout: 60000 });
    assert.ok((await page.locator('.math math').count()) >= 15, 'the equations are MathML');
    await context.setOffline(true);
    await page.fill('[data-testid=ch1-input]', '24680');
    assert.equal(await page.textContent('[data-testid=ch1-out-attention]'), '08642');
    await page.fill('[data-testid=ch6-input]', 'March 3, 2001');
    assert.equal(await page.textContent('[data-testid=ch6-output]'), '2001-03-03');
    // the image chapters too: the digit set and both image models are already in the page (their
    // figures are computed as the reader reaches them: the click waits until the prose has stopped moving)
    await page.locator('[data-testid=ch7-next]').scrollIntoViewIfNeeded();
    await page.waitForSelector('#ch-kinds[data-figures=ready]', { timeout: 60000 });
    await page.click('[data-testid=ch7-next]');
    assert.match(await page.textContent('[data-testid=ch7-label]'), /^Test image 2: /);
    await page.click('[data-testid=ch8-example]');
    await page.waitForFunction(() => /^Glimpse 1 of 3: reads \d$/.test(document.querySelector('[data-testid=figure-overlay-ch8] figcaption').textContent));
    assert.deepEqual(foreign, [], 'nothing is loaded from outside the site');
    assert.deepEqual(errors, []);
    // the header links to Learn from the playground, which offers it to a newcomer
    await context.setOffline(false);
    await page.goto(`${base}index.html`);
    await page.waitForSelector('body[data-ready="true"]');
    assert.equal(await page.getAttribute('.site-nav a:has-text("Learn")', 'href'), 'learn.html');
    assert.equal(await page.isVisible('[data-testid=newcomer] a[href="learn.html"]'), true);
    await page.click('#newcomer-dismiss');
    await page.reload();
    await page.waitForSelector('body[data-ready="true"]');
    assert.equal(await page.isVisible('[data-testid=newcomer]'), false, 'dismissed stays dismissed');
    await context.close();
  }
});
