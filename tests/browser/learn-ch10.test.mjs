// Learn's chapter 10, "Inside GPT-2", in headless Chromium: before a model it says
// what the reader will see and why, citing Olsson et al. (2022) and nostalgebraist
// (2020) without their numbers, and where GPT-2's two files are; then a small
// GPT-2-layout checkpoint built here (tests/lib/gpt2-checkpoint.mjs) is opened
// through the file input and every number is the model's: the repeated run's
// loss on both copies and with the top induction head ablated match the float64
// reference, the lens reports a rate per layer, the scan names heads, and the
// challenge is solved exactly when that head's ablation raises the second copy's
// loss; on a checkpoint whose induction circuit is set by hand the scan finds it
// and the challenge is solved. Below INDUCTION_MIN the scan says the model has no
// induction head and names its measure, prefix matching. A GPT-NeoX checkpoint
// (tests/lib/neox-checkpoint.mjs) opens with its tokenizer.json
// (tests/lib/tokenizer-json.mjs): the chapter names both, and the lens reads its
// sentence in that tokenizer's tokens. axe, and screenshots at 1440×900 and 390×844.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readTokenizerJson } from '../../web/engine/bpe.js';
import { INDUCTION_MIN, repeatFits, repeatedIds } from '../../web/ui/gpt2-file.js';
import { mulberry32 } from '../../web/ui/rng.js';
import { LENS_TEXT } from '../../web/learn/ch10-gpt2.js';
import { INDUCTION_CIRCUIT, gpt2Checkpoint, inductionCircuit, referenceForward, referenceLoss } from '../lib/gpt2-checkpoint.mjs';
import { NEOX_TINY, neoxCheckpoint } from '../lib/neox-checkpoint.mjs';
import { TOKENIZER_SIZE, tokenizerJson } from '../lib/tokenizer-json.mjs';
import { DESKTOP, PHONE, SHOTS, axeViolations, openPage, startBrowser } from './browser.mjs';

const CONFIG = { model_type: 'gpt2', n_layer: 3, n_head: 4, n_embd: 16, n_inner: null, n_positions: 48, vocab_size: 50257, layer_norm_epsilon: 1e-5, activation_function: 'gelu_new' };
const made = gpt2Checkpoint({ config: CONFIG, dtype: 'BF16', seed: 11, scale: 0.6 });
// and one whose previous-token head (L0H0) and induction head (L1H0) are set by hand, the latter copying what it finds
const circuit = gpt2Checkpoint({ config: INDUCTION_CIRCUIT, set: inductionCircuit({ copy: 4 }) });
const dir = await mkdtemp(join(tmpdir(), 'attnlab-ch10-'));
const write = async (name, ck, config) => {
  const files = [join(dir, name, 'model.safetensors'), join(dir, name, 'config.json')];
  await mkdir(join(dir, name));
  await writeFile(files[0], ck.bytes);
  await writeFile(files[1], JSON.stringify(config));
  return files;
};
const FILES = await write('random', made, CONFIG);
const CIRCUIT_FILES = await write('circuit', circuit, INDUCTION_CIRCUIT);
// a Pythia-like checkpoint whose vocabulary is its tokenizer.json's, with room for the lens's sentence in its tokens
const NEOX = { ...NEOX_TINY, vocab_size: TOKENIZER_SIZE, max_position_embeddings: 160 };
const NEOX_FILES = await write('neox', neoxCheckpoint({ config: NEOX, dtype: 'BF16', seed: 6 }), NEOX);
NEOX_FILES.push(join(dir, 'neox', 'tokenizer.json'));
await writeFile(NEOX_FILES[2], JSON.stringify(tokenizerJson()));

let env;
before(async () => { env = await startBrowser(); });
after(async () => {
  await env?.close();
  await rm(dir, { recursive: true, force: true });
});

const chapter = (page) => page.locator('[data-testid=chapter-gpt2]');
const text = (page, id) => page.$eval(`[data-testid=${id}]`, (e) => e.textContent.replace(/\s+/g, ' ').trim());
const data = (page, id) => page.$eval(`[data-testid=${id}]`, (e) => ({ ...e.dataset }));

/** The loss on each copy of a repeated run, by the float64 reference (ids: <|endoftext|> and L tokens twice). */
function copies(ids, ablate = [], ck = made, config = CONFIG) {
  const loss = (x) => referenceLoss(referenceForward(ck.weights, config, x, { ablate }).logits, x, config.vocab_size);
  const both = loss(ids);
  const first = loss(ids.slice(0, (ids.length + 1) / 2));
  return { first, second: 2 * both - first };
}

test('chapter 10: what to expect before a model, then every number from the opened checkpoint, the challenge, axe', async () => {
  const { page, errors } = await openPage(env.browser, `${env.url}learn.html#ch-gpt2`, DESKTOP);
  await page.waitForSelector('body[data-ready="true"]', { timeout: 90000 });
  const prose = (await chapter(page).textContent()).replace(/\s+/g, ' ');
  for (const want of [/Olsson and colleagues \(2022\)/, /nostalgebraist \(2020\)/, /previous-token heads/, /induction head/, /Hugging Face hub/, /548 MB/, /Nothing leaves your computer/]) {
    assert.match(prose, want);
  }
  assert.doesNotMatch(prose, /\d+(\.\d+)? nats/, 'no loss claimed before a model is open');
  assert.equal(await page.isDisabled('[data-testid=ch10-scan]'), true);
  await chapter(page).screenshot({ path: `${SHOTS}learn-ch10-nofile-desktop.png` });

  await page.setInputFiles('[data-testid=ch10-files]', FILES);
  await page.waitForFunction(() => document.querySelector('[data-testid=ch10-lens]').dataset.hits !== undefined, null, { timeout: 60000 });
  assert.match(await text(page, 'ch10-status'), /Opened model\.safetensors, a GPT-2 checkpoint: 3 layers × 4 heads.*GPT-2's built-in tokenizer/);

  // the repeated run: both copies' losses are the reference's
  const ids = [...repeatedIds(mulberry32(7), repeatFits(40, CONFIG.n_positions), CONFIG.vocab_size)];
  const full = copies(ids);
  const shown = await data(page, 'ch10-ablation');
  assert.ok(Math.abs(Number(shown.first) - full.first) < 1e-4 && Math.abs(Number(shown.second) - full.second) < 1e-4, `${JSON.stringify(shown)} vs ${JSON.stringify(full)}`);
  // the lens: one rate per layer and the output's
  assert.equal((await data(page, 'ch10-lens')).hits.split(',').length, CONFIG.n_layer + 1);
  assert.match(await text(page, 'ch10-lens'), /after layer 0 \d+%, after layer 1 \d+%, after layer 2 \d+%, output \d+%/);

  // the scan names heads with their layers; the top induction head is ablated on the repeat
  await page.click('[data-testid=ch10-scan]');
  await page.waitForFunction(() => document.querySelector('[data-testid=ch10-ablation]').dataset.ablatedSecond !== undefined);
  const induction = await text(page, 'ch10-induction');
  const [, layer, head, score] = /(?:strongest induction heads by prefix matching: |the highest: )L(\d+)H(\d+) \(layer \d+, (\d\.\d\d)\)/.exec(induction).map(Number);
  // below the threshold no head is called an induction head, and the measure is named: prefix matching
  if (score < INDUCTION_MIN) assert.match(induction, new RegExp(`^This model has no induction head: no head's prefix-matching score reaches ${INDUCTION_MIN}`));
  else assert.match(induction, /^This model's strongest induction heads by prefix matching/);
  assert.match(await text(page, 'ch10-previous'), /strongest previous-token heads: L\dH\d \(layer \d, 0\.\d\d\)/);
  const cut = copies(ids, [{ layer, head }]);
  assert.ok(Math.abs(Number((await data(page, 'ch10-ablation')).ablatedSecond) - cut.second) < 1e-4);
  assert.equal(await page.locator('[data-testid=heatmap-ch10-induction]').evaluate((c) => `${c.height}x${c.width}`), '3x4');

  // the challenge: that head, ablated; solved exactly when it scores as an induction head and the reference's second-copy loss rises
  await page.selectOption('[data-testid=ch10-challenge-head]', `${layer},${head}`);
  await page.click('[data-testid=ch10-challenge-ablate]');
  await page.waitForFunction(() => document.querySelector('[data-testid=ch10-challenge-text]').textContent !== '');
  assert.equal(await page.getAttribute('[data-testid=challenge-gpt2]', 'data-solved'), String(score >= INDUCTION_MIN && cut.second > full.second));

  // the hand-set circuit: the scan finds its induction head, whose ablation undoes the copying, and the challenge is solved
  await page.setInputFiles('[data-testid=ch10-files]', CIRCUIT_FILES);
  await page.waitForFunction(() => /2 layers × 2 heads/.test(document.querySelector('[data-testid=ch10-status]').textContent)
    && /could not read/.test(document.querySelector('[data-testid=ch10-lens]').textContent));
  assert.match(await text(page, 'ch10-lens'), /this checkpoint has 32 tokens, not GPT-2's tokenizer's 50257/);
  assert.equal(await page.isVisible('[data-testid=ch10-lens-chart]'), false, 'the last model\'s lens figure is not left on screen');
  await page.click('[data-testid=ch10-scan]');
  await page.waitForFunction(() => /^This model's strongest induction heads by prefix matching: L1H0 \(layer 1, 0\.9\d\)/.test(document.querySelector('[data-testid=ch10-induction]').textContent));
  assert.match(await text(page, 'ch10-previous'), /strongest previous-token heads: L0H0 \(layer 0, (0\.9\d|1\.00)\)/);
  const ids2 = [...repeatedIds(mulberry32(7), repeatFits(40, INDUCTION_CIRCUIT.n_positions), INDUCTION_CIRCUIT.vocab_size)];
  const full2 = copies(ids2, [], circuit, INDUCTION_CIRCUIT);
  const cut2 = copies(ids2, [{ layer: 1, head: 0 }], circuit, INDUCTION_CIRCUIT);
  assert.ok(full2.second < full2.first - 1 && cut2.second > full2.second + 1, `the circuit copies: ${JSON.stringify({ full2, cut2 })}`);
  await page.waitForFunction((want) => Math.abs(Number(document.querySelector('[data-testid=ch10-ablation]').dataset.ablatedSecond) - want) < 1e-4, cut2.second);
  await page.selectOption('[data-testid=ch10-challenge-head]', '1,0');
  await page.click('[data-testid=ch10-challenge-ablate]');
  await page.waitForFunction(() => document.querySelector('[data-testid=challenge-gpt2]').dataset.solved === 'true');
  assert.match(await text(page, 'ch10-challenge-text'), /L1H0: induction score 0\.9\d \(number 1 of 4\).*An induction head/);
  assert.deepEqual(await axeViolations(page), []);
  await chapter(page).screenshot({ path: `${SHOTS}learn-ch10-desktop.png` });
  await page.setViewportSize(PHONE);
  await chapter(page).screenshot({ path: `${SHOTS}learn-ch10-phone.png` });
  const fit = await chapter(page).evaluate((s) => ({ scroll: s.scrollWidth, client: s.clientWidth }));
  assert.ok(fit.scroll <= fit.client + 1, `the chapter fits a phone (${JSON.stringify(fit)})`);
  assert.deepEqual(errors, []);
  await page.close();
});

test('chapter 10 on a GPT-NeoX checkpoint with its tokenizer.json: named, its sentence read in that tokenizer\'s tokens, no induction head said so', async () => {
  const { page, errors } = await openPage(env.browser, `${env.url}learn.html#ch-gpt2`, DESKTOP);
  await page.waitForSelector('body[data-ready="true"]', { timeout: 90000 });
  assert.match(await text(page, 'ch10-where'), /Pythia \(GPT-NeoX\).*pythia-70m.*pythia-160m.*pythia-410m.*tokenizer\.json/);
  await page.setInputFiles('[data-testid=ch10-files]', NEOX_FILES);
  await page.waitForFunction(() => document.querySelector('[data-testid=ch10-lens]').dataset.hits !== undefined, null, { timeout: 60000 });
  assert.match(await text(page, 'ch10-status'), /Opened model\.safetensors, a GPT-NeoX \(Pythia\) checkpoint: 2 layers × 2 heads.*read by tokenizer\.json, the model's own tokenizer/);
  // the lens's sentence in the file's tokens (GPT-2's would be far fewer)
  const count = readTokenizerJson(tokenizerJson()).encode(LENS_TEXT).ids.length;
  assert.ok(count > 100 && count <= NEOX.max_position_embeddings, `${count} tokens`);
  assert.match(await text(page, 'ch10-lens'), new RegExp(`\\(${count} tokens\\), the share of positions.*after layer 0 \\d+%, after layer 1 \\d+%, output \\d+%`));
  assert.match(await text(page, 'open-gpt2-lab'), /^Open this GPT-NeoX \(Pythia\) in the lab, nothing to pick again/);
  // a random model: the scan says it has no induction head, by prefix matching, and the ablation does not call its top head one
  await page.click('[data-testid=ch10-scan]');
  await page.waitForFunction(() => document.querySelector('[data-testid=ch10-ablation]').dataset.ablatedSecond !== undefined);
  assert.match(await text(page, 'ch10-induction'), new RegExp(`^This model has no induction head: no head's prefix-matching score reaches ${INDUCTION_MIN} \\(the highest: L\\dH\\d \\(layer \\d, 0\\.\\d\\d\\)`));
  assert.equal((await data(page, 'ch10-induction')).found, '0');
  assert.match(await text(page, 'ch10-ablation'), /the highest prefix-matching score, 0\.\d\d, though no induction head/);
  assert.deepEqual(await axeViolations(page, { chapters: ['gpt2'] }), []);
  await chapter(page).screenshot({ path: `${SHOTS}learn-ch10-neox-desktop.png` });
  await page.setViewportSize(PHONE);
  await chapter(page).screenshot({ path: `${SHOTS}learn-ch10-neox-phone.png` });
  assert.deepEqual(errors, []);
  await page.close();
});
