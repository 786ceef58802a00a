// The lab's Transformer family in headless Chromium, used as a person would: pick
// the family, train a small model a few steps in the worker, see a layers × heads
// grid of attention maps and the logit lens, ablate a head from the keyboard and
// see the test loss change, scrub the time-lapse, generate, follow a head into
// the playground (its weights come back there), open the link again and open bad
// links, audit with axe-core; open on the pretrained induction model, save it, go
// back to it after a new one, load the file (the same maps); a saved 'text' model
// loads with its own text in the text box (and a note when the box cannot hold it all). Screenshots at 1440×900 and 390×844 go to test-results/browser/.
// The model is small (1–2 layers, dModel 16) and trains a few dozen steps: seconds, not minutes.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadEngine } from '../../web/engine/index.js';
import { DESKTOP, PHONE, SHOTS, axeViolations, fullScreenshot, hoverCell, openLab, openPage, startBrowser, trainLab as train } from './browser.mjs';

let env;
before(async () => {
  env = await startBrowser();
});
after(() => env?.close());

/** A small induction model: 2 layers of 2 heads, dModel 16, attention only, context 32. */
const SMALL = '#ver=2&task=transformer&tfLayers=2&tfHeads=2&tfDModel=16&tfContext=32&tfBatch=16&tfLr=0.003';


const text = (page, selector) => page.$eval(selector, (e) => e.textContent.trim());
const steps = (page) => page.evaluate(() => window.attnlabLab.session.steps);

/** The ablation readout's numbers once it has them (with `ablated`: once it names the ablated loss). */
async function ablationNumbers(page, ablated) {
  await page.waitForFunction((want) => {
    const d = document.querySelector('[data-testid=tf-ablation]').dataset;
    return d.loss !== undefined && (d.ablatedLoss !== undefined) === want;
  }, ablated);
  return page.$eval('[data-testid=tf-ablation]', (e) => ({ loss: Number(e.dataset.loss), ablated: Number(e.dataset.ablatedLoss), text: e.textContent }));
}

test('the Transformer family: train in the worker, layers × heads maps redrawn, the lens, ablation from the keyboard, the link round-trips', async () => {
  const { page, errors } = await openLab(env, SMALL);
  // the task list is the engine's, and the family's own settings show (the seq2seq ones do not)
  const tasks = await page.$$eval('#tfTask option', (os) => os.map((o) => o.value));
  for (const t of ['induction', 'copy', 'reverse', 'sort', 'modular', 'text']) assert.ok(tasks.includes(t), `task ${t} in ${tasks}`);
  assert.equal(await page.isVisible('#tfLayers'), true);
  assert.equal(await page.isVisible('#cell'), false);
  assert.equal(await page.isVisible('[aria-labelledby=h-align]'), false);

  // 2 layers × 2 heads: four maps labelled L0H0 .. L1H1 (layer, head, both from 0), over the default input (a test sequence)
  const names = await page.$$eval('.tf-head .tf-name', (ns) => ns.map((n) => n.textContent));
  assert.deepEqual(names, ['L0H0', 'L0H1', 'L1H0', 'L1H1']);
  const input = await page.inputValue('#tfInput');
  assert.ok(input.length > 10, `default input ${input}`);
  const firstMap = () => page.$eval('[data-testid="heatmap-tf-L0H0"]', (c) => ({
    w: c.width, h: c.height, data: Array.from(c.getContext('2d').getImageData(0, 0, c.width, c.height).data),
  }));
  const before0 = await firstMap();
  assert.equal(before0.w, [...input].length, 'one column per input token');
  assert.equal(before0.h, before0.w);
  assert.ok(await page.isVisible('#tf-legend .legend-bar'), 'a legend for the colour scale');

  await train(page, 30);
  assert.ok((await steps(page)) >= 30);
  assert.notEqual(await text(page, '[data-testid=loss]'), '–');
  const after0 = await firstMap();
  assert.notDeepEqual(after0.data, before0.data, 'the maps are redrawn as the model trains');
  // the lens: one row per layer plus input, next, output and p, one column per position
  const lensRows = await page.$$eval('[data-testid=tf-lens-table] tbody tr', (rs) => rs.map((r) => r.firstElementChild.textContent));
  assert.deepEqual(lensRows, ['input', 'next', 'after layer 0', 'after layer 1', 'output', 'p']);
  // the scores over training: a point at step 0 at least, a line per head
  assert.equal(await page.$$eval('[data-testid=tf-ind-chart] path.series', (ps) => ps.length), 4);
  assert.match(await text(page, '[data-testid=tf-scores-readout]'), /the highest induction score L\dH\d’s \(\d\.\d\d, (an induction head|below 0\.5: no clear induction head yet)\)/);

  // ablate L1H0 from the keyboard: the grid marks it, the link holds it, the readout shows both losses
  const full = await ablationNumbers(page, false);
  await page.focus('[data-testid="tf-head-L1H0"]');
  await page.keyboard.press('Enter');
  const cut = await ablationNumbers(page, true);
  assert.equal(await page.getAttribute('[data-testid="tf-head-L1H0"]', 'aria-pressed'), 'true');
  assert.ok(await page.$eval('[data-testid="tf-head-L1H0"]', (b) => b.classList.contains('ablated')));
  assert.ok(Math.abs(cut.loss - full.loss) < 1e-9, 'the full model\'s loss is unchanged');
  assert.notEqual(cut.ablated, cut.loss, 'ablating a head changes the shown loss');
  assert.match(cut.text, /with L1H0 ablated/);
  assert.match(page.url(), /tfAblate=L1H0/);
  // Space brings it back
  await page.keyboard.press('Space');
  await ablationNumbers(page, false);
  await page.keyboard.press('Enter');
  await ablationNumbers(page, true);

  // the time-lapse: an earlier frame shows the recorded maps, labelled by its step
  const frames = await page.$eval('#tf-timeline', (s) => Number(s.max) + 1);
  assert.ok(frames >= 3, `${frames} frames`);
  await page.$eval('#tf-timeline', (s) => { s.value = '0'; s.dispatchEvent(new Event('input')); });
  await page.waitForFunction(() => /step 0 \(recorded\)/.test(document.querySelector('[data-testid=tf-timeline-label]').textContent));
  assert.deepEqual((await firstMap()).data, before0.data, 'frame 0 is the untrained model\'s maps');
  // a new input at frame 0 is read with that step's weights (the frame keeps them), not the recorded maps
  const other = [...input].slice(0, 6).reverse().join('');
  await page.fill('#tfInput', other);
  await page.dispatchEvent('#tfInput', 'change');
  await page.waitForFunction((n) => document.querySelector('[data-testid="heatmap-tf-L0H0"]').width === n, 6);
  assert.match(await text(page, '[data-testid=tf-timeline-label]'), /step 0 \(recorded\)/);
  const untrained = await page.evaluate(async (t) => {
    const tf = window.attnlabLab.session;
    const inspect = { options: { ablate: [] } };
    return { at0: (await tf.readAt(tf.frames[0].bytes, 'inspect', { input: t, ...inspect })).attention[0][0].data, live: (await tf.read('inspect', { input: t, ...inspect })).attention[0][0].data };
  }, other);
  assert.notDeepEqual(untrained.at0, untrained.live, 'step 0\'s weights are not the trained ones');
  await page.fill('#tfInput', input);
  await page.dispatchEvent('#tfInput', 'change');
  await page.waitForFunction((n) => document.querySelector('[data-testid="heatmap-tf-L0H0"]').width === n, [...input].length);
  await page.$eval('#tf-timeline', (s) => { s.value = s.max; s.dispatchEvent(new Event('input')); });
  await page.waitForFunction(() => /^live/.test(document.querySelector('[data-testid=tf-timeline-label]').textContent));

  // generate completes the default prompt (the example up to its answer)
  await page.click('[data-testid=tf-generate]');
  await page.waitForFunction(() => document.querySelector('[data-testid=tf-generated]').textContent.includes('▸'));

  // the head's playground link carries its tokens and its weights: the playground shows them back
  await page.selectOption('[data-testid=tf-open-head]', 'L0H1');
  // the chosen head, large, with the input's tokens as its labels
  assert.equal(await page.$eval('[data-testid="heatmap-tf-chosen"]', (c) => c.width), [...input].length);
  const href = await page.getAttribute('[data-testid=tf-open]', 'href');
  assert.match(href, /^index\.html#ver=2&preset=self&tokens=/);
  const head = await page.evaluate(async () => {
    const v = await window.attnlabLab.session.read('inspect', { input: window.attnlabLab.session.input, options: { ablate: [] } });
    return { n: v.tokens.length, data: Array.from(v.attention[0][1].data) };
  });
  const pg = await openPage(env.browser, `${env.url}${href}`, DESKTOP);
  await pg.page.waitForSelector('body[data-ready="true"]', { timeout: 20000 });
  // the playground's weight of query 3, key 1 (its readout) is the head's
  const tip = await hoverCell(pg.page, 'weights', 3, 1);
  const shownWeight = Number(tip.match(/= ([0-9.]+)/)?.[1]);
  assert.ok(Math.abs(shownWeight - head.data[3 * head.n + 1]) < 0.01, `playground ${tip} vs head ${head.data[3 * head.n + 1]}`);
  assert.equal(await pg.page.$eval('#mask', (s) => s.value), 'causal');
  assert.deepEqual(pg.errors, []);
  await pg.page.close();

  assert.deepEqual(await axeViolations(page), []);
  await fullScreenshot(page, `${SHOTS}lab-transformer-desktop.png`);

  // the link round-trips: the same settings, input and ablated head come back
  const link = page.url();
  const again = await openLab(env, new URL(link).hash);
  const back = await again.page.evaluate(() => {
    const s = window.attnlabLab.state;
    return { task: s.task, tfLayers: s.tfLayers, tfHeads: s.tfHeads, tfDModel: s.tfDModel, tfAblate: s.tfAblate };
  });
  assert.deepEqual(back, { task: 'transformer', tfLayers: 2, tfHeads: 2, tfDModel: 16, tfAblate: ['L1H0'] });
  assert.equal(await again.page.getAttribute('[data-testid="tf-head-L1H0"]', 'aria-pressed'), 'true');
  assert.equal(await again.page.inputValue('#tfInput'), input);
  assert.deepEqual(again.errors, []);
  await again.page.close();
  assert.deepEqual(errors, []);
  await page.close();
});

test('bad links fall back safely with a note; the phone layout puts the heads first', async () => {
  // an unknown task, a head past the model and heads that do not divide dModel: each back to its default, named
  const { page, errors } = await openLab(env, '#ver=2&task=transformer&tfTask=nonesuch&tfLayers=1&tfHeads=3&tfDModel=16&tfAblate=L5H0&tfContext=32', PHONE);
  const note = await text(page, '[data-testid=notice]');
  assert.match(note, /tfTask/);
  assert.match(note, /tfDModel/);
  assert.match(note, /tfAblate/);
  const s = await page.evaluate(() => ({ ...window.attnlabLab.state }));
  assert.equal(s.tfTask, 'induction');
  assert.equal(s.tfDModel, 48, 'a width the 3 heads divide');
  assert.deepEqual(s.tfAblate, []);
  assert.equal(await page.$$eval('.tf-head', (b) => b.length), 3);
  await train(page, 5);
  assert.deepEqual(await axeViolations(page), []);
  await fullScreenshot(page, `${SHOTS}lab-transformer-phone.png`);
  // to a text task and back: each family shows its own panels and Train drives its own model
  await page.selectOption('#task', 'reverse');
  await page.waitForFunction(() => window.attnlabLab.session.model && !document.querySelector('[aria-labelledby=h-align]').hidden
    && document.querySelector('[data-testid=output]').textContent !== '–');
  assert.equal(await page.isVisible('#tf-heads-card'), false);
  assert.equal(await page.isEnabled('#save'), true);
  await page.selectOption('#task', 'transformer');
  await page.waitForFunction(() => window.attnlabLab.session.kind === 'transformer' && document.querySelectorAll('.tf-head').length === 3);
  assert.equal(await page.isVisible('[aria-labelledby=h-align]'), false);
  assert.equal(await page.isEnabled('#save'), true, 'a transformer saves to a file');
  await train(page, 2);
  // switching away and straight back: the pretrained text model still loading must not take the task back
  await page.selectOption('#task', 'reverse');
  await page.selectOption('#task', 'transformer');
  await page.waitForFunction(() => window.attnlabLab.session.kind === 'transformer');
  await page.waitForTimeout(1500);
  assert.equal(await page.evaluate(() => window.attnlabLab.state.task), 'transformer');
  assert.equal(await page.isVisible('[aria-labelledby=h-align]'), false);
  assert.equal(await page.isVisible('#tf-heads-card'), true);
  // picked in one go, faster than any model loads: each change waits for the one before, the last one stands
  await page.evaluate(() => {
    const task = document.getElementById('task');
    for (const v of ['reverse', 'transformer', 'dates', 'transformer']) {
      task.value = v;
      task.dispatchEvent(new Event('change'));
    }
  });
  await page.evaluate(() => window.attnlabLab.settled());
  assert.equal(await page.evaluate(() => window.attnlabLab.session.kind), 'transformer');
  assert.equal(await page.$$eval('.tf-head', (b) => b.length), 3);
  await train(page, 2);
  assert.equal(await page.evaluate(() => window.attnlabLab.state.task), 'transformer');
  assert.equal(await page.isVisible('[aria-labelledby=h-align]'), false);
  assert.deepEqual(errors, []);
  await page.close();
  // a context under the engine's minimum (its limits bound the link): that field falls back to its default, named; the other sizes stay
  const refused = await openLab(env, '#ver=2&task=transformer&tfTask=modular&tfContext=4&tfLayers=1&tfHeads=2&tfDModel=16');
  assert.match(await text(refused.page, '[data-testid=notice]'), /tfContext \(must be an integer from 8 to \d+\)/);
  assert.equal(await refused.page.isVisible('[data-testid=error]'), false);
  assert.equal(await refused.page.evaluate(() => window.attnlabLab.state.tfContext), await refused.page.evaluate(() => import('./lab/state.js').then((m) => m.codec.defaults().tfContext)));
  assert.equal(await refused.page.$$eval('.tf-head', (b) => b.length), 2);
  assert.doesNotMatch(refused.page.url(), /tfContext/);
  await refused.page.close();
});

test('the family opens on the pretrained induction model; Train from scratch, Back to it, and a saved file loads with the same maps', async () => {
  const { page, errors } = await openLab(env, '#ver=2&task=transformer');
  const status = () => text(page, '#model-status');
  // the default settings open the shipped model, with its sizes, labelled
  assert.match(await status(), /^Pretrained model \(transformer on induction, 2 layers × 2 heads, dModel 32, attention only\): trained 600 steps/);
  const s = await page.evaluate(() => ({ ...window.attnlabLab.state }));
  assert.deepEqual([s.tfTask, s.tfLayers, s.tfHeads, s.tfDModel, s.tfDFF, s.tfContext], ['induction', 2, 2, 32, 0, 32]);
  assert.equal(await steps(page), 600);
  assert.equal(await page.$$eval('.tf-head', (b) => b.length), 4);
  assert.equal(await page.isVisible('#pretrained'), false);
  assert.equal(await page.isVisible('#reset'), true, 'Train from scratch is one click away');
  // it has learned: its accuracy beside Train, and an induction head in layer 1
  const acc = Number((await text(page, '#run-acc')).match(/([\d.]+)%/)[1]);
  assert.ok(acc > 80, `accuracy ${acc}`);
  assert.match(await text(page, '[data-testid=tf-scores-readout]'), /the highest induction score L1H\d’s \(\d\.\d\d, an induction head\)/);
  const maps = () => page.evaluate(async () => {
    const tf = window.attnlabLab.session;
    return { input: tf.input, attention: (await tf.read('inspect', { input: tf.input, options: { ablate: [] } })).attention.map((l) => l.map((m) => Array.from(m.data))) };
  });
  const pretrained = await maps();
  // the page is as wide as the screen: the lens table and the large map scroll in their own boxes
  const overflow = () => page.evaluate(() => document.documentElement.scrollWidth - innerWidth);
  assert.equal(await overflow(), 0, 'no sideways scroll at 1440 px');
  await fullScreenshot(page, `${SHOTS}lab-transformer-pretrained-desktop.png`);
  await page.setViewportSize(PHONE);
  assert.equal(await overflow(), 0, 'no sideways scroll at 390 px');
  await fullScreenshot(page, `${SHOTS}lab-transformer-pretrained-phone.png`);
  await page.setViewportSize(DESKTOP);
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#save')]);
  assert.match(download.suggestedFilename(), /^attnlab-transformer-induction-2x2-step600\.tfm$/);
  const file = await download.path();

  // Train from scratch: a new model of the same settings, and it trains (paused here at once), the pretrained one kept
  await page.click('#reset');
  await page.waitForFunction(() => window.attnlabLab.session.playing && window.attnlabLab.session.steps < 600);
  await page.click('#play');
  await page.waitForFunction(() => !window.attnlabLab.session.playing && /^(Untrained|Trained here)/.test(document.querySelector('#model-status').textContent));
  assert.equal(await page.isVisible('#pretrained'), true, 'the pretrained model is one click away');
  assert.match(await text(page, '#previous-text'), /transformer on induction, 2 × 2 heads, dModel 32, attention only, 600 steps/);
  await page.click('#back');
  await page.waitForFunction(() => window.attnlabLab.session.steps === 600 && /^Pretrained/.test(document.querySelector('#model-status').textContent));
  assert.deepEqual(await maps(), pretrained, 'back to the same model');
  assert.match(await text(page, '#previous-text'), /transformer on induction, 2 × 2 heads, dModel 32, attention only, [\d,]+ steps/, 'the one trained from scratch is kept in its place');

  // from another family, Load of the saved file opens the Transformer family with its settings and the same maps
  await page.selectOption('#task', 'reverse');
  await page.waitForFunction(() => window.attnlabLab.session.model && document.querySelector('[data-testid=output]').textContent !== '–');
  await page.setInputFiles('#load', file);
  await page.waitForFunction(() => window.attnlabLab.state.task === 'transformer' && window.attnlabLab.session.steps === 600
    && /^Loaded from/.test(document.querySelector('#model-status').textContent));
  // the notice follows the new model's views: wait for it rather than read it in between
  await page.waitForFunction(() => /^Loaded /.test(document.querySelector('[data-testid=notice] .notice-text')?.textContent ?? ''));
  assert.match(await text(page, '[data-testid=notice]'), /Loaded .*transformer on induction, 2 × 2 heads, dModel 32, attention only, 600 steps trained/);
  assert.deepEqual(await maps(), pretrained, 'the loaded file reads as the saved model');
  assert.equal(await page.isVisible('#tf-heads-card'), true);
  // its settings are the defaults, which a link leaves out
  assert.doesNotMatch(page.url(), /tfDModel|tfLayers|tfHeads/);
  assert.equal(await page.evaluate(() => window.attnlabLab.state.tfDModel), 32);
  // the pretrained model it replaced is kept
  assert.match(await text(page, '#previous-text'), /600 steps/);
  assert.deepEqual(errors, []);
  await page.close();
});

test('a saved text model loads with its own text in the text box, and a note when the box holds only part of it', async () => {
  const first = 'Heads look back. A query asks, keys answer, values mix: the weighted average is all there is. ';
  const second = 'A different text entirely, typed after the model was saved, with other letters: zebra quiz jog.';
  const { page, errors } = await openLab(env, `#ver=2&task=transformer&tfTask=text&tfLayers=1&tfHeads=2&tfDModel=16&tfContext=16&tfText=${encodeURIComponent(first)}`);
  assert.equal(await page.inputValue('#tfText'), first);
  await train(page, 3);
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#save')]);
  const file = await download.path();
  const trained = await steps(page);

  // another text makes another model; loading the file brings the file's text back into the box and the link
  await page.fill('#tfText', second);
  await page.dispatchEvent('#tfText', 'change');
  await page.waitForFunction((t) => window.attnlabLab.state.tfText === t && window.attnlabLab.session.steps === 0, second);
  await page.setInputFiles('#load', file);
  await page.waitForFunction((n) => window.attnlabLab.session.steps === n && /^Loaded from/.test(document.querySelector('#model-status').textContent), trained);
  assert.equal(await page.inputValue('#tfText'), first, 'the box shows the loaded model\'s text');
  assert.equal(await page.evaluate(() => window.attnlabLab.state.tfText), first);
  assert.equal(new URL(page.url()).hash.includes(`tfText=${encodeURIComponent(first).slice(0, 20)}`), true, 'the link holds it');
  assert.equal(await page.isVisible('[data-testid=tf-text-note]'), false, 'the whole text fits: no note');

  // a file whose text is longer than the box holds: its first part, and a note that says so
  const engine = await loadEngine({ threads: 1 });
  const long = Array.from({ length: 5000 }, (_, i) => 'abcdefghij klmnopqrst. '[i % 23]).join('');
  const m = await engine.createTransformer({ task: 'text', text: long, layers: 1, heads: 2, dModel: 16, dFF: 0, context: 16 });
  const dir = await mkdtemp(join(tmpdir(), 'attnlab-'));
  const longFile = join(dir, 'long-text.tfm');
  await writeFile(longFile, m.save());
  m.destroy();
  await page.setInputFiles('#load', longFile);
  await page.waitForFunction(() => /^Loaded long-text\.tfm/.test(document.querySelector('[data-testid=notice]').textContent));
  // an untrained model's accuracy beside Train is its first evaluation's, a number
  await page.waitForFunction(() => /accuracy [\d.]+%/.test(document.querySelector('#run-acc').textContent));
  const shown = await page.inputValue('#tfText');
  assert.equal(shown, long.slice(0, shown.length), 'the box shows the text\'s beginning');
  assert.ok(shown.length >= 1000 && shown.length < long.length, `${shown.length} characters shown`);
  assert.match(await text(page, '[data-testid=tf-text-note]'), /long-text\.tfm was trained on a text of 5,000 characters; the box shows its first [\d,]+/);
  // typing a text of one's own puts the note away
  await page.fill('#tfText', second);
  await page.dispatchEvent('#tfText', 'change');
  await page.waitForFunction(() => document.querySelector('[data-testid=tf-text-note]').hidden);
  await rm(dir, { recursive: true, force: true });
  assert.deepEqual(errors, []);
  await page.close();
});
