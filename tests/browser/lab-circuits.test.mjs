// The lab's Circuits panel in headless Chromium, one page load per model. The trained
// induction model (the lab's pretrained one, opened by a link choosing the heads target):
// its example pair shown as tokens, the answer suggested, the patching map and the
// K-composition map drawn with the engine's numbers for the same model and prompts
// computed here in Node, the target changed from the keyboard (the map follows), a
// corrupt prompt of another length said inline as it is typed and the map marked as
// of the earlier prompts, the fields in the link (decoded back), a head's cell pressed
// with Enter showing its attention on the clean prompt, the logit attribution's bars, a
// training step marking every result until Run, attribution patching beside exact, axe. A GPT-2-layout checkpoint
// built by tests/lib/gpt2-checkpoint.mjs, opened from files: the panel turns to it and,
// the model being past the size analysed at once, reads the prompts and waits for Run;
// the IOI prompts of Wang et al. 2022 ready to pick, one picked fills both prompts and the
// answer, and on Run (Enter) its head patching (exact, then by attribution) and copying scores are the engine's in
// Node; the page's longest task printed. Screenshots at 1440×900 and
// 390×844 go to test-results/browser/.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadEngine } from '../../web/engine/index.js';
import { codec } from '../../web/lab/state.js';
import { INDUCTION_PAIR, IOI_PROMPTS } from '../../web/lab/transformer-circuits.js';
import { gpt2Checkpoint } from '../lib/gpt2-checkpoint.mjs';
import { DESKTOP, PHONE, ROOT, SHOTS, axeViolations, openLab, startBrowser } from './browser.mjs';

/**
 * A GPT-2 layout with GPT-2's vocabulary and tokenizer, 2 layers of 4 heads, dModel 48: some 2.5 million
 * parameters, past the panel's 2 million, so it waits for Run as GPT-2 small does.
 */
const CONFIG = {
  architectures: ['GPT2LMHeadModel'], model_type: 'gpt2', n_layer: 2, n_head: 4, n_embd: 48, n_inner: 64, n_positions: 64, n_ctx: 64,
  vocab_size: 50257, layer_norm_epsilon: 1e-5, activation_function: 'gelu_new', bos_token_id: 50256, eos_token_id: 50256,
};
const made = gpt2Checkpoint({ config: CONFIG, dtype: 'F32', seed: 7, scale: 0.5 });
const dir = await mkdtemp(join(tmpdir(), 'attnlab-circuits-'));
const FILES = { weights: join(dir, 'model.safetensors'), config: join(dir, 'config.json') };
await writeFile(FILES.weights, made.bytes);
await writeFile(FILES.config, JSON.stringify(CONFIG));

let env;
let engine;
before(async () => {
  env = await startBrowser();
  engine = await loadEngine();
});
after(async () => {
  await env?.close();
  await rm(dir, { recursive: true, force: true });
});

const text = (page, id) => page.$eval(`[data-testid=${id}]`, (e) => e.textContent.trim());
/** The numbers a map of the panel shows (its figure's data-values). */
const shownValues = (page, id) => page.$eval(`[data-testid=figure-${id}]`, (e) => e.dataset.values.split(',').map(Number));
const close = (got, want, what) => {
  assert.equal(got.length, want.length, `${what}: ${got.length} cells, the engine's ${want.length}`);
  got.forEach((x, i) => assert.ok(Math.abs(x - want[i]) < 1e-3, `${what}, cell ${i}: ${x}, the engine's ${want[i]}`));
};
/** Waits until the patching map is of `target` and, when given, of a run whose metrics are new. */
const patched = (page, target) => page.waitForFunction((t) => {
  const of = document.querySelector('[data-testid=cx-patch-of]').textContent;
  const fig = document.querySelector('[data-testid=figure-cx-patch]');
  return fig && !fig.hidden && fig.dataset.values && of.includes(t);
}, target);

test('the trained induction model: patching and composition are the engine\'s numbers, the fields check as typed and go in the link', async () => {
  const { page, errors } = await openLab(env, '#ver=2&task=transformer&tfTarget=heads', DESKTOP);
  await page.waitForFunction(() => document.querySelector('[data-testid=cx-metric]').dataset.clean !== undefined);
  await page.waitForFunction(() => document.querySelector('[data-testid=figure-cx-composition]')?.dataset.values);
  // the same model and prompts in Node
  const m = await engine.loadModel(new Uint8Array(await readFile(join(ROOT, 'web/models/induction.tfm'))));
  const heads = m.patch({ clean: INDUCTION_PAIR.clean, corrupt: INDUCTION_PAIR.corrupt, answer: ['v', 'j'], target: 'heads' });
  const resid = m.patch({ clean: INDUCTION_PAIR.clean, corrupt: INDUCTION_PAIR.corrupt, answer: ['v', 'j'], target: 'resid' });
  const { k } = m.compositionScores();

  // the link's target, the model's example pair as tokens, the answer suggested from the prompts
  assert.equal(await page.inputValue('[data-testid=cx-target]'), 'heads');
  assert.match(await text(page, 'cx-clean-tokens'), /^10 tokens: d · r · i · v · a · m · f · d · r · i$/);
  assert.match(await text(page, 'cx-corrupt-tokens'), /^10 tokens: d · r · i · j · a · m · f · d · r · i$/);
  assert.match(await text(page, 'cx-pair'), /a = v \(id 21\), b = j \(id 9\)/);
  assert.match(await text(page, 'cx-model'), /induction transformer trained here, step 600/);
  const metric = await page.$eval('[data-testid=cx-metric]', (e) => ({ ...e.dataset }));
  assert.ok(Math.abs(Number(metric.clean) - heads.clean) < 1e-3 && Math.abs(Number(metric.corrupt) - heads.corrupt) < 1e-3, 'the metric on both prompts');
  await patched(page, 'each head\'s output');
  close(await shownValues(page, 'cx-patch'), Array.from(heads.data), 'patching the heads');
  close(await shownValues(page, 'cx-composition'), Array.from(k.data), 'K-composition');
  assert.equal(await page.$eval('[data-testid=heatmap-cx-patch]', (c) => `${c.width}×${c.height}`), '2×2', 'layers × heads');
  assert.match(await text(page, 'cx-pairs'), /^L0H0 → L1H1: 0\.\d\d/);
  // attribution patching: offered, the engine's values; beside exact on request, with their agreement said
  const attribution = m.patch({ clean: INDUCTION_PAIR.clean, corrupt: INDUCTION_PAIR.corrupt, answer: ['v', 'j'], target: 'heads', method: 'attribution' });
  await page.waitForFunction(() => document.querySelector('[data-testid=cx-method]').dataset.checked === 'true');
  assert.equal(await page.$eval('[data-testid=cx-method] option[value=attribution]', (o) => `${o.disabled} ${o.textContent}`), 'false attribution (gradient)');
  await page.selectOption('[data-testid=cx-method]', 'attribution');
  await patched(page, 'each head\'s output, attribution');
  close(await shownValues(page, 'cx-patch'), Array.from(attribution.data), 'attribution patching of the heads');
  await page.selectOption('[data-testid=cx-method]', 'exact');
  await patched(page, 'each head\'s output, exact');
  await page.check('[data-testid=cx-compare]');
  await page.waitForFunction(() => /^Attribution against exact: r = /.test(document.querySelector('[data-testid=cx-agreement]').textContent));
  close(await shownValues(page, 'cx-patch-attribution'), Array.from(attribution.data), 'attribution beside exact');
  assert.match(await text(page, 'cx-agreement'), /over the 4 cells; the largest cell (is the same, L1H\d|differs)/);

  // the logit attribution: a bar per component, their values the engine's
  const want = m.logitAttribution({ ids: m.tokenize(INDUCTION_PAIR.clean).ids, answer: [21, 9] });
  await page.waitForFunction(() => document.querySelector('[data-testid=cx-attribution-status]').dataset.kind === 'ok');
  const bars = await page.$$eval('.cx-bar', (bs) => Object.fromEntries(bs.map((b) => [b.dataset.name, Number(b.dataset.value)])));
  for (const c of want.components) assert.ok(Math.abs(bars[c.name] - c.value) < 1e-3, `${c.name}: ${bars[c.name]}, the engine's ${c.value}`);
  // accumulated layer by layer: the last sum and the biases after the stream are the logit difference
  const last = Number(/after L1 (-?[\d.]+)\.$/.exec(await text(page, 'cx-accumulated').then((t) => t.replace(/−/g, '-')))?.[1]);
  const bias = want.components.filter((c) => !/^(embed|pos|L\d)/.test(c.name)).reduce((a, c) => a + c.value, 0);
  assert.ok(Math.abs(last + bias - want.logitDiff) < 0.006, `accumulated ${last} + the biases ${bias} against ${want.logitDiff}`);

  // the target from the keyboard: the map follows, layers × positions with the tokens as labels
  await page.focus('[data-testid=cx-target]');
  await page.keyboard.press('Home');
  await page.waitForFunction(() => window.attnlabLab.state.tfTarget === 'resid');
  await patched(page, 'residual stream');
  close(await shownValues(page, 'cx-patch'), Array.from(resid.data), 'patching the residual stream');
  assert.equal(await page.$eval('[data-testid=heatmap-cx-patch]', (c) => `${c.width}×${c.height}`), '10×2');
  await page.evaluate(() => document.querySelector('[data-testid=cx-metric]').scrollIntoView({ block: 'center' }));
  await page.screenshot({ path: `${SHOTS}lab-circuits-desktop.png` });
  assert.deepEqual(await axeViolations(page), []);
  await page.uncheck('[data-testid=cx-compare]');
  await page.waitForFunction(() => document.querySelector('[data-testid=cx-agreement]').textContent === '');

  // a composition cell pressed with Enter: that (later) head's attention on the clean prompt
  await page.focus('[data-testid=heatmap-cx-composition]');
  for (const key of ['ArrowRight', 'ArrowRight', 'ArrowRight', 'Enter']) await page.keyboard.press(key);
  await page.waitForFunction(() => document.querySelector('[data-testid=cx-head-map]').dataset.head === 'L1H1');
  assert.match(await text(page, 'cx-head-note'), /L1H1 on the clean prompt “drivamfdri”/);
  await page.evaluate(() => document.querySelector('[data-testid=cx-weights-status]').scrollIntoView({ block: 'start' }));
  await page.screenshot({ path: `${SHOTS}lab-circuits-weights-desktop.png` });

  // a corrupt prompt of another length, typed: said inline as it is typed, the map marked as of the earlier prompts
  await page.fill('[data-testid=cx-corrupt]', 'drijamfdr');
  await page.waitForFunction(() => /1 token fewer than the clean one/.test(document.querySelector('[data-testid=cx-prompt-message]').textContent));
  assert.equal(await page.isVisible('[data-testid=cx-patch-stale]'), true);
  assert.equal(await page.getAttribute('[data-testid=cx-prompt-message]', 'data-kind'), 'error');
  // a letter the model does not read is named
  await page.fill('[data-testid=cx-clean]', 'drivamfdr7');
  await page.waitForFunction(() => /clean prompt cannot be read: .*"7"/.test(document.querySelector('[data-testid=cx-prompt-message]').textContent));
  assert.equal(await page.getAttribute('[data-testid=cx-head-map]', 'data-stale'), 'true', 'the head shown is of the earlier clean prompt');
  // fixed: the same length again, a new run of the new prompts
  await page.fill('[data-testid=cx-clean]', 'drivamfdri');
  await page.fill('[data-testid=cx-corrupt]', 'drikamfdri');
  await page.press('[data-testid=cx-corrupt]', 'Tab');
  await page.waitForFunction(() => /corrupt “drikamfdri”/.test(document.querySelector('[data-testid=cx-patch-of]').textContent));
  assert.equal(await page.isVisible('[data-testid=cx-patch-stale]'), false);
  assert.equal(await page.isVisible('[data-testid=cx-prompt-message]'), false);
  const again = m.patch({ clean: 'drivamfdri', corrupt: 'drikamfdri', answer: ['v', 'k'], target: 'resid' });
  assert.match(await text(page, 'cx-pair'), /b = k/, 'the suggested b follows the corrupt prompt');
  close(await shownValues(page, 'cx-patch'), Array.from(again.data), 'patching the new pair');

  // the model trains a step: every result says it is of the weights before, until Run
  await page.click('#step');
  await page.waitForFunction(() => /step 601/.test(document.querySelector('[data-testid=cx-model]').textContent));
  assert.equal(await page.isVisible('[data-testid=cx-patch-stale]'), true);
  assert.equal(await page.isVisible('[data-testid=cx-weights-stale]'), true);
  await page.click('[data-testid=cx-run]');
  await page.waitForFunction(() => /step 601/.test(document.querySelector('[data-testid=cx-weights-status]').textContent)
    && /step 601/.test(document.querySelector('[data-testid=cx-patch-of]').textContent));
  assert.equal(await page.isVisible('[data-testid=cx-patch-stale]'), false);
  assert.equal(await page.isVisible('[data-testid=cx-weights-stale]'), false);

  // the link holds the fields, and they decode back
  await page.waitForFunction(() => /tfCorrupt=/.test(location.hash));
  const { state } = codec.decode(await page.evaluate(() => location.hash));
  assert.equal(state.tfClean, 'drivamfdri');
  assert.equal(state.tfCorrupt, 'drikamfdri');
  assert.equal(state.tfTarget, 'resid');

  await page.setViewportSize(PHONE);
  await page.evaluate(() => document.querySelector('#tf-circuits').scrollIntoView({ block: 'start' }));
  await page.waitForTimeout(200);
  await page.screenshot({ path: `${SHOTS}lab-circuits-phone.png` });
  await page.evaluate(() => document.querySelector('[data-testid=cx-metric]').scrollIntoView({ block: 'start' }));
  await page.waitForTimeout(200);
  await page.screenshot({ path: `${SHOTS}lab-circuits-phone-maps.png` });
  const wide = await page.evaluate(() => document.documentElement.scrollWidth);
  assert.ok(wide <= PHONE.width, `the page is ${wide} px wide on a phone`);
  assert.deepEqual(errors, []);
  m.destroy();
});

test('a GPT-2 checkpoint opened from files: the panel turns to it, IOI prompts ready to pick, its patching the engine\'s', async () => {
  const { page, errors } = await openLab(env, '#ver=2&task=transformer&tfTarget=heads', DESKTOP);
  await page.evaluate(() => {
    window.longTasks = [];
    new PerformanceObserver((list) => window.longTasks.push(...list.getEntries().map((e) => e.duration))).observe({ type: 'longtask', buffered: false });
  });
  await page.setInputFiles('[data-testid=gpt2-files]', [FILES.weights, FILES.config]);
  await page.waitForFunction(() => /GPT-2/.test(document.querySelector('[data-testid=cx-model]').textContent));
  assert.equal(await page.isVisible('[data-testid=cx-ioi]'), true);
  const options = await page.$$eval('[data-testid=cx-ioi] option', (os) => os.map((o) => o.textContent));
  assert.equal(options.length, 1 + IOI_PROMPTS.length);
  assert.match(options[1], /^When John and Mary went to the shops, John gave the bag to… \(Mary vs John\)$/);
  // both models are offered, the checkpoint chosen
  assert.equal(await page.isChecked('[data-testid=cx-source-checkpoint]'), true);

  // a large model: the prompts read at once (the default IOI pair), the analyses on Run
  await page.waitForFunction(() => /^14 tokens: When · ␣John/.test(document.querySelector('[data-testid=cx-clean-tokens]').textContent));
  assert.match(await text(page, 'cx-patch-status'), /press Run/);
  const ioi = IOI_PROMPTS[3];
  await page.selectOption('[data-testid=cx-ioi]', '3');
  await page.waitForFunction(() => /^14 tokens: When · ␣Tom/.test(document.querySelector('[data-testid=cx-clean-tokens]').textContent));
  await page.focus('[data-testid=cx-run]');
  await page.keyboard.press('Enter');
  await page.waitForFunction((c) => document.querySelector('[data-testid=cx-patch-of]').textContent.includes(c), ioi.corrupt);
  assert.equal(await page.inputValue('[data-testid=cx-clean]'), ioi.clean);
  assert.equal(await page.inputValue('[data-testid=cx-corrupt]'), ioi.corrupt);
  assert.equal(await page.inputValue('[data-testid=cx-answer]'), ioi.answer);
  assert.match(await text(page, 'cx-clean-tokens'), /^14 tokens: When · ␣Tom · ␣and · ␣James/);
  const m = await engine.loadModel(made.bytes, { config: CONFIG });
  const want = m.patch({ clean: ioi.clean, corrupt: ioi.corrupt, answer: [ioi.answer, ioi.other], target: 'heads' });
  close(await shownValues(page, 'cx-patch'), Array.from(want.data), 'the checkpoint\'s heads');
  assert.equal(await page.$eval('[data-testid=heatmap-cx-patch]', (c) => `${c.width}×${c.height}`), '4×2');
  await page.waitForFunction(() => document.querySelector('[data-testid=figure-cx-copying]')?.dataset.values);
  close(await shownValues(page, 'cx-copying'), Array.from(m.copyingScores().data), 'copying');
  // attribution patching on the checkpoint too (its backward pass through the packed weights): offered, the engine's values
  await page.waitForFunction(() => document.querySelector('[data-testid=cx-method]').dataset.checked === 'true');
  assert.equal(await page.$eval('[data-testid=cx-method] option[value=attribution]', (o) => `${o.disabled} ${o.textContent}`), 'false attribution (gradient)');
  await page.selectOption('[data-testid=cx-method]', 'attribution');
  await page.click('[data-testid=cx-run]'); // a checkpoint's analyses wait for Run
  await patched(page, 'each head\'s output, attribution');
  const grad = m.patch({ clean: ioi.clean, corrupt: ioi.corrupt, answer: [ioi.answer, ioi.other], target: 'heads', method: 'attribution' });
  close(await shownValues(page, 'cx-patch'), Array.from(grad.data), 'the checkpoint\'s heads by attribution');
  await page.waitForFunction(() => /tfClean=When/.test(location.hash));
  await page.evaluate(() => document.querySelector('#tf-circuits').scrollIntoView({ block: 'start' }));
  await page.screenshot({ path: `${SHOTS}lab-circuits-gpt2-desktop.png` });
  // the analyses run in the worker and the maps are drawn as they come, so the page's own tasks stay short (the
  // figure printed); a shared machine stalls a page now and then, so the bound only catches an analysis run on the page
  const longest = await page.evaluate(() => Math.max(0, ...window.longTasks));
  console.log(`lab-circuits: the page's longest task while the checkpoint was opened and taken apart: ${longest.toFixed(0)} ms (0: none over 50 ms)`);
  assert.ok(longest < 1500, `the page blocked for ${longest} ms`);
  assert.deepEqual(await axeViolations(page), []);
  assert.deepEqual(errors, []);
  m.destroy();
});
