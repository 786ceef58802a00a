// Learn's chapter 11, "Finding a circuit", in headless Chromium, one page load: the
// chapter trains the induction defaults, draws the heads' patching (layers × heads,
// with its legend and axis labels) and the K-composition map, and its sentence is
// the one written from the engine's numbers computed here in Node on the same seed
// and the same chunks; the challenge says why a layer-1 head and the wrong layer-0
// head do not count, and is solved by a click on the right cell of the patching map.
// Then a small GPT-2-layout checkpoint (tests/lib/gpt2-checkpoint.mjs) is opened in
// chapter 10 and chapter 11 runs its 8 indirect-object prompts on it: each prompt and
// its partner tokenize to the same length, the mean logit difference is the one the
// engine computes here from the same files and the float64 reference's (with head 9.9
// zeroed too), and the reported figures are labelled as
// Wang et al.'s and TransformerLens's demo's, not as computed. axe, and screenshots at
// 1440×900 and 390×844.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadEngine } from '../../web/engine/index.js';
import { INDUCTION } from '../../web/learn/ch9-training.js';
import { fixed } from '../../web/ui/format.js';
import { IOI_PROMPTS, batchPatch, circuitText, findCircuit, partnerOf } from '../../web/learn/ch11-circuit.js';
import { gpt2Checkpoint, referenceForward } from '../lib/gpt2-checkpoint.mjs';
import { DESKTOP, PHONE, SHOTS, axeViolations, openPage, startBrowser } from './browser.mjs';

// as many layers and heads as GPT-2 small's head 9.9 needs, so the chapter zeroes it too
const CONFIG = { model_type: 'gpt2', n_layer: 10, n_head: 10, n_embd: 20, n_inner: 32, n_positions: 32, vocab_size: 50257, layer_norm_epsilon: 1e-5, activation_function: 'gelu_new' };
const made = gpt2Checkpoint({ config: CONFIG, dtype: 'F32', seed: 5, scale: 0.6 });
const dir = await mkdtemp(join(tmpdir(), 'attnlab-ch11-'));
const FILES = [join(dir, 'model.safetensors'), join(dir, 'config.json')];
await writeFile(FILES[0], made.bytes);
await writeFile(FILES[1], JSON.stringify(CONFIG));
await mkdir(SHOTS, { recursive: true });

let env;
let engine;
before(async () => { env = await startBrowser(); engine = await loadEngine({ threads: 1 }); });
after(async () => {
  await env?.close();
  await rm(dir, { recursive: true, force: true });
});

const text = (page, id) => page.$eval(`[data-testid=${id}]`, (e) => e.textContent.replace(/\s+/g, ' ').trim());
const solved = (page) => page.getAttribute('[data-testid=challenge-circuit]', 'data-solved');
const status = (page) => text(page, 'challenge-status-circuit');

/** The chapter's model and circuit, in Node: the same defaults, trained in the same chunks of 25 steps. */
async function nodeCircuit() {
  const m = await engine.createTransformer(INDUCTION.model);
  for (let s = 0; s < INDUCTION.steps; s += 25) m.train({ steps: 25, lr: INDUCTION.lr, warmup: INDUCTION.warmup, decaySteps: INDUCTION.steps });
  const c = findCircuit(m);
  m.destroy();
  return c;
}

/** The 8 prompts' mean logit difference and the heads' patching over them, by the engine in Node on the same checkpoint. */
async function nodeIoi() {
  const m = await engine.loadModel(made.bytes, { config: CONFIG });
  const bos = m.config.vocabulary.indexOf('<|endoftext|>');
  const prompts = IOI_PROMPTS.map((p) => ({ ids: [bos, ...m.tokenize(p.text).ids], a: m.tokenize(p.answer).ids, b: m.tokenize(p.wrong).ids }));
  const runs = prompts.map((p, i) => m.patch({ clean: { ids: p.ids }, corrupt: { ids: prompts[partnerOf(i)].ids }, answer: [p.a[0], p.b[0]], target: 'heads' }));
  m.destroy();
  // the logit differences again, by the float64 reference: every head, and head 9.9 zeroed
  const diff = (ablate) => prompts.reduce((sum, p) => {
    const { logits } = referenceForward(made.weights, CONFIG, p.ids, { ablate });
    const last = (p.ids.length - 1) * CONFIG.vocab_size;
    return sum + logits[last + p.a[0]] - logits[last + p.b[0]];
  }, 0) / prompts.length;
  return { prompts, ...batchPatch(runs), reference: diff([]), ablated: diff([{ layer: 9, head: 9 }]) };
}

test('chapter 11: the induction circuit two ways, its words from the numbers, the challenge, then the IOI prompts on an opened checkpoint', async () => {
  const expected = nodeCircuit();
  const { page, errors } = await openPage(env.browser, `${env.url}learn.html#ch-circuit`, DESKTOP);
  await page.waitForSelector('body[data-ready="true"]', { timeout: 90000 });
  const chapter = page.locator('[data-testid=chapter-circuit]');
  assert.equal(await page.textContent('[data-toc=circuit]'), 'Finding a circuit');
  assert.match(await page.textContent('#h-circuit'), /11\s*Finding a circuit/);

  // the reported figures are quoted as theirs, with their sources, and nothing is claimed before a model
  const quotes = await text(page, 'ch11-quotes');
  assert.match(quotes, /^What they report, not computed here\. Wang et al\. \(2022\) name these heads of GPT-2 small/);
  for (const want of ['name movers 9.9, 9.6, 10.0', 'S-inhibition 7.3, 7.9, 8.6, 8.10', 'induction 5.5, 6.9', 'duplicate-token 0.1, 3.0', 'negative name movers 10.7, 11.10']) assert.ok(quotes.includes(want), want);
  assert.match(quotes, /TransformerLens's exploratory analysis demo prints the mean logit difference of GPT-2 small over the 8 prompts as 3\.5519, and 2\.99 after ablating head 9\.9.*self-repair by heads 10\.7 and 10\.10/);
  assert.deepEqual(await page.$$eval('[data-testid=ch11-quotes] a', (as) => as.map((a) => a.href)),
    ['https://arxiv.org/abs/2211.00593', 'https://github.com/TransformerLensOrg/TransformerLens/blob/main/demos/Exploratory_Analysis_Demo.ipynb']);
  assert.equal(await page.locator('[data-testid=ch11-ioi-prompts] li').count(), 8);
  await page.click('[data-testid=ch11-ioi-run]');
  await page.waitForFunction(() => /No model is open/.test(document.querySelector('[data-testid=ch11-ioi-text]').textContent));

  // the induction model trains here; the words are those of the engine's numbers in Node
  await page.click('[data-testid=ch11-train]');
  await page.waitForSelector('[data-testid=chapter-circuit][data-trained="true"]', { timeout: 120000 });
  const c = await expected;
  assert.equal(await text(page, 'ch11-text'), circuitText(c));
  assert.equal(c.reader.head, 0, 'the defaults at seed 1 make L0H0 the previous-token head');
  assert.ok(c.agree && c.reader.value > 0.5, JSON.stringify(c.reader));
  assert.match(await text(page, 'ch11-text'), /Both ways name L0H0 as the head the induction head reads from/);
  const dims = (id) => page.$eval(`[data-testid=heatmap-${id}]`, (e) => `${e.height}x${e.width}`);
  assert.equal(await dims('ch11-patch'), '2x2');
  assert.equal(await dims('ch11-k'), '4x4');
  assert.match(await text(page, 'legend-ch11-patch'), /share of the answer recovered/);
  assert.match(await text(page, 'figure-ch11-patch'), /layer ↓ head →.*L0.*L1/);

  // the challenge: a layer-1 head and the wrong layer-0 head say why; the right cell of the map solves it
  await page.click('[data-testid=ch11-pick-1-0]');
  assert.equal(await solved(page), 'false');
  assert.match(await status(page), /^Not solved yet: L1H0 is in layer 1: putting back its output recovers \d\.\d\d; it reads/);
  await page.click('[data-testid=ch11-pick-0-1]');
  assert.equal(await solved(page), 'false');
  assert.match(await status(page), /^Not solved yet: L0H1: putting back its output recovers -?\d\.\d\d of the answer, and L0H0's recovers \d\.\d\d/);
  const map = page.locator('[data-testid=heatmap-ch11-patch]');
  await map.scrollIntoViewIfNeeded();
  const box = await map.boundingBox();
  await page.mouse.click(box.x + box.width / 4, box.y + box.height / 4);
  assert.equal(await solved(page), 'true');
  assert.match(await text(page, 'ch11-pick-text'), /You picked L0H0: the previous-token head/);
  await chapter.screenshot({ path: `${SHOTS}learn-ch11-induction-desktop.png` });

  // a GPT-2-layout checkpoint opened in chapter 10; chapter 11 runs the 8 prompts on it
  await page.setInputFiles('[data-testid=ch10-files]', FILES);
  await page.waitForFunction(() => document.querySelector('[data-testid=ch10-lens]').dataset.hits !== undefined, null, { timeout: 60000 });
  await page.click('[data-testid=ch11-ioi-run]');
  await page.waitForSelector('[data-testid=chapter-circuit][data-ioi="done"]', { timeout: 120000 });
  const ioi = await nodeIoi();
  const shown = await page.$eval('[data-testid=ch11-ioi-text]', (e) => ({ ...e.dataset }));
  const lengths = shown.lengths.split(',').map(Number);
  assert.deepEqual(lengths, ioi.prompts.map((p) => p.ids.length));
  for (let i = 0; i < 8; i += 2) assert.equal(lengths[i], lengths[i + 1], `prompts ${i + 1} and ${i + 2} have the same length`);
  assert.ok(Math.abs(Number(shown.clean) - ioi.clean) < 1e-4, `${shown.clean} vs ${ioi.clean}`);
  assert.ok(Math.abs(Number(shown.corrupt) - ioi.corrupt) < 1e-4, `${shown.corrupt} vs ${ioi.corrupt}`);
  assert.ok(Math.abs(ioi.clean - ioi.reference) < 1e-3, `the engine's ${ioi.clean} against the reference's ${ioi.reference}`);
  assert.ok(Math.abs(Number(shown.ablated) - ioi.ablated) < 1e-3, `9.9 zeroed: ${shown.ablated} against the reference's ${ioi.ablated}`);
  assert.equal(await dims('ch11-ioi'), '10x10');
  const said = await text(page, 'ch11-ioi-text');
  assert.match(said, new RegExp(`^Computed here, on the model on screen \\(10 layers × 10 heads\\): the mean logit difference over the 8 prompts is ${ioi.clean.toFixed(4).replace('.', '\\.')}`));
  assert.match(said, /With head 9\.9's output zeroed, the mean logit difference here is -?\d+\.\d{4}\.$/);
  assert.doesNotMatch(said, /3\.5519|2\.99|Wang/, 'the computed sentence quotes nobody');
  // Wang et al.'s heads that this model has (9.9, 9.6, 7.3, ...; not 10.0, 8.10 or 11.10), with the shares computed here
  const share = (l, k) => fixed(ioi.data[l * CONFIG.n_head + k], 2);
  assert.equal(await text(page, 'ch11-ioi-beside'), 'The heads Wang et al. (2022) name, with the share each recovers here (computed on the model on screen): '
    + `name movers 9.9 ${share(9, 9)}, 9.6 ${share(9, 6)}; S-inhibition 7.3 ${share(7, 3)}, 7.9 ${share(7, 9)}, 8.6 ${share(8, 6)}; induction 5.5 ${share(5, 5)}, 6.9 ${share(6, 9)}; `
    + `duplicate-token 0.1 ${share(0, 1)}, 3.0 ${share(3, 0)}.`);

  assert.deepEqual(await axeViolations(page, { chapters: ['circuit'] }), []);
  await chapter.screenshot({ path: `${SHOTS}learn-ch11-desktop.png` });
  await page.setViewportSize(PHONE);
  await chapter.screenshot({ path: `${SHOTS}learn-ch11-phone.png` });
  const fit = await chapter.evaluate((s) => ({ scroll: s.scrollWidth, client: s.clientWidth }));
  assert.ok(fit.scroll <= fit.client + 1, `the chapter fits a phone (${JSON.stringify(fit)})`);
  assert.deepEqual(errors, []);
  await page.close();
});
