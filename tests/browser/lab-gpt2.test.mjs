// The lab's "Open a model…" in headless Chromium, as a learner uses it: without a
// file the Transformer family says where GPT-2's two files are and how large; a
// GPT-2-layout checkpoint built here (12 layers × 12 heads, narrow, GPT-2's
// vocabulary; tests/lib/gpt2-checkpoint.mjs) is opened through the file input,
// config.json first and the weights after, then both at once, then config.json
// dropped on the drop zone (a bad config.json is refused by name, the model kept); its 144 heads fit
// a laptop screen, a head pressed is ablated and the loss change on the prompt is
// the float64 reference's, the chosen head keeps every token label, a score cell
// opens that head on a repeated sequence, the lens and generation answer, the
// prompt and the head go in the link (and come back from it), no request leaves
// the page's origin, the page's longest task stays short, axe finds nothing
// serious. A GPT-NeoX checkpoint (Pythia's layout; tests/lib/neox-checkpoint.mjs) opens
// with and then without its tokenizer.json (a small byte-level BPE, tests/lib/tokenizer-json.mjs):
// the card names the architecture and the tokenizer, the prompt's tokens and the generated
// text are that tokenizer's (as the engine gives them in Node), the scan says there is no
// induction head in a random model, and while its panels are on screen the run bar names
// the checkpoint, not the trained model's Train controls (Space does not train it).
// Screenshots at 1440×900 and 390×844 go to test-results/browser/.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadEngine } from '../../web/engine/index.js';
import { gpt2Tokenizer } from '../../web/engine/gpt2-tokenizer.js';
import { readTokenizerJson } from '../../web/engine/bpe.js';
import { INDUCTION_MIN, scan } from '../../web/ui/gpt2-file.js';
import { generatedText, tokenLabel } from '../../web/ui/gpt2-reading.js';
import { gpt2Checkpoint, referenceForward, referenceLoss } from '../lib/gpt2-checkpoint.mjs';
import { NEOX_TINY, neoxCheckpoint } from '../lib/neox-checkpoint.mjs';
import { TOKENIZER_SIZE, tokenizerJson } from '../lib/tokenizer-json.mjs';
import { DESKTOP, PHONE, SHOTS, axeViolations, openPage, startBrowser } from './browser.mjs';

/** GPT-2 small's shape of heads (12 × 12) and its vocabulary, 2 dimensions per head: a few MB. */
const CONFIG = {
  architectures: ['GPT2LMHeadModel'], model_type: 'gpt2', n_layer: 12, n_head: 12, n_embd: 24, n_inner: 32, n_positions: 64, n_ctx: 64,
  vocab_size: 50257, layer_norm_epsilon: 1e-5, activation_function: 'gelu_new', attn_pdrop: 0.1, bos_token_id: 50256, eos_token_id: 50256,
};
const made = gpt2Checkpoint({ config: CONFIG, dtype: 'F16', prefix: true, seed: 3, scale: 0.5 });
// on disk, as a learner's downloads are: the browser reads them itself (no copy made inside the page by the driver)
const dir = await mkdtemp(join(tmpdir(), 'attnlab-gpt2-'));
const FILES = { weights: join(dir, 'model.safetensors'), config: join(dir, 'config.json'), bad: join(dir, 'bad', 'config.json') };
await writeFile(FILES.weights, made.bytes);
await writeFile(FILES.config, JSON.stringify(CONFIG, null, 2));
await mkdir(join(dir, 'bad'));
await writeFile(FILES.bad, JSON.stringify({ ...CONFIG, activation_function: 'relu' }));
const PROMPT = 'Alice saw a cat. Alice saw a cat.';
// a Pythia-like checkpoint whose vocabulary is its tokenizer.json's
const NEOX = { ...NEOX_TINY, vocab_size: TOKENIZER_SIZE, max_position_embeddings: 64 };
const neox = neoxCheckpoint({ config: NEOX, dtype: 'F16', seed: 5 });
const TOKENIZER = tokenizerJson();
await mkdir(join(dir, 'neox'));
const NEOX_FILES = { weights: join(dir, 'neox', 'model.safetensors'), config: join(dir, 'neox', 'config.json'), tokenizer: join(dir, 'neox', 'tokenizer.json') };
await writeFile(NEOX_FILES.weights, neox.bytes);
await writeFile(NEOX_FILES.config, JSON.stringify(NEOX, null, 2));
await writeFile(NEOX_FILES.tokenizer, JSON.stringify(TOKENIZER));

let env;
before(async () => {
  env = await startBrowser();
});
after(async () => {
  await env?.close();
  await rm(dir, { recursive: true, force: true });
});

async function openLab(hash, viewport = DESKTOP) {
  const opened = await openPage(env.browser, `${env.url}lab.html#ver=2&task=transformer${hash}`, viewport);
  const { page } = opened;
  const requests = [];
  page.on('request', (r) => requests.push(r.url()));
  await page.waitForSelector('body[data-ready=true]');
  // the longest tasks on the page from here on
  await page.evaluate(() => {
    window.longTasks = [];
    new PerformanceObserver((list) => window.longTasks.push(...list.getEntries().map((e) => e.duration))).observe({ type: 'longtask', buffered: false });
  });
  return { ...opened, requests };
}

/** Opens the checkpoint through the file input (`together`: both files at once; else config.json first). */
async function openModel(page, together) {
  const input = '[data-testid=gpt2-files]';
  if (together) await page.setInputFiles(input, [FILES.weights, FILES.config]);
  else {
    await page.setInputFiles(input, [FILES.config]);
    // a .json is read to know which file it is: the status follows
    await page.waitForFunction(() => /config\.json chosen; now choose its model\.safetensors/.test(document.querySelector('[data-testid=gpt2-status]').textContent));
    await page.setInputFiles(input, [FILES.weights]);
  }
  await page.waitForFunction(() => /Opened model\.safetensors/.test(document.querySelector('[data-testid=gpt2-status]').textContent));
  await page.waitForFunction(() => document.querySelector('[data-testid=gpt2-ablation]').dataset.loss !== undefined);
  await page.waitForFunction(() => document.querySelectorAll('[data-testid^=gpt2-head-L] canvas.hm-canvas').length === 144
    && document.querySelector('[data-testid="heatmap-gpt2-L11H11"]').width > 1);
}

const text = (page, sel) => page.$eval(sel, (e) => e.textContent.trim());

test('without a file the family says where GPT-2 is; opened one file after the other, every panel reads it in the worker', async () => {
  const { page, errors, requests } = await openLab(`&gpt2Prompt=${encodeURIComponent(PROMPT)}`);
  // before a file: where to get the two files, their sizes, and that nothing leaves the computer
  const where = await text(page, '[data-testid=gpt2-where]');
  for (const want of [/Hugging Face hub/, /model\.safetensors \(548 MB\)/, /config\.json/]) assert.match(where, want);
  assert.match(await text(page, '[data-testid=gpt2-private]'), /Nothing leaves your computer.*never the weights/);
  assert.equal(await page.isVisible('[data-testid=gpt2-panels]'), false);
  await page.locator('#gpt2').screenshot({ path: `${SHOTS}lab-gpt2-nofile-desktop.png` });

  await openModel(page, false);
  assert.match(await text(page, '[data-testid=gpt2-status]'), /12 layers × 12 heads, dModel 24/);
  assert.equal(await page.isVisible('[data-testid=gpt2-progress]'), false, 'the progress bar goes once the file is read and checked');
  assert.equal(await page.inputValue('[data-testid=gpt2-prompt]'), PROMPT);
  // the prompt takes the card's width beside its Read button, not a narrow column of it
  const promptBox = await page.locator('[data-testid=gpt2-prompt]').boundingBox(), card = await page.locator('[data-testid=gpt2-panels]').boundingBox();
  assert.ok(promptBox.width >= 0.7 * card.width, `the prompt is ${promptBox.width} px of the card's ${card.width}`);
  await page.locator('[data-testid=gpt2-prompt]').screenshot({ path: `${SHOTS}lab-gpt2-prompt-desktop.png` });

  // 12 × 12 small multiples fit a laptop screen
  const grid = await page.locator('[data-testid=gpt2-heads]').boundingBox();
  assert.ok(grid.width <= DESKTOP.width && grid.height <= DESKTOP.height - 60, `the grid is ${grid.width} × ${grid.height} px`);
  await page.evaluate(() => document.querySelector('[data-testid=gpt2-heads]').scrollIntoView({ block: 'center' }));
  await page.screenshot({ path: `${SHOTS}lab-gpt2-grid-desktop.png` });

  // ablation by click: the loss change is the float64 reference's on the prompt's tokens
  const tk = await gpt2Tokenizer();
  const ids = [...tk.encode(PROMPT).ids];
  const loss = (ablate) => referenceLoss(referenceForward(made.weights, CONFIG, ids, { ablate }).logits, ids, CONFIG.vocab_size);
  const shown = await page.$eval('[data-testid=gpt2-ablation]', (e) => Number(e.dataset.loss));
  assert.ok(Math.abs(shown - loss([])) < 1e-4, `loss ${shown} vs reference ${loss([])}`);
  await page.click('[data-testid=gpt2-head-L0H3]');
  await page.waitForFunction(() => document.querySelector('[data-testid=gpt2-ablation]').dataset.ablatedLoss !== undefined);
  const cut = await page.$eval('[data-testid=gpt2-ablation]', (e) => ({ loss: Number(e.dataset.ablatedLoss), text: e.textContent }));
  const want = loss([{ layer: 0, head: 3 }]);
  assert.ok(Math.abs(cut.loss - want) < 1e-4, `ablated loss ${cut.loss} vs reference ${want}`);
  assert.notEqual(cut.loss.toFixed(4), shown.toFixed(4), 'ablating a head changes the loss');
  assert.match(cut.text, /L0H3 ablated: [+−]\d\.\d{3} nats/);
  assert.equal(await page.getAttribute('[data-testid=gpt2-head-L0H3]', 'aria-pressed'), 'true');

  // the chosen head, large, with every token labelled; the head goes in the link
  await page.selectOption('[data-testid=gpt2-head]', 'L5H7');
  await page.waitForFunction(() => /gpt2Head=L5H7/.test(location.hash));
  const labels = await page.$$eval('[data-testid=figure-gpt2-chosen] .hm-cols span', (s) => s.map((x) => x.textContent));
  assert.equal(labels.length, ids.length);
  assert.ok(labels.every((l) => l.length > 0), `every column labelled: ${labels.join('|')}`);

  // the score scan: two layers × heads heatmaps; a cell pressed shows that head on a repeated sequence
  await page.click('[data-testid=gpt2-scan]');
  await page.waitForFunction(() => /Highest induction \(prefix-matching\) scores|No induction head/.test(document.querySelector('[data-testid=gpt2-scan-status]').textContent));
  const map = page.locator('[data-testid=heatmap-gpt2-induction]');
  const box = await map.boundingBox();
  assert.equal(await map.evaluate((c) => `${c.width}x${c.height}`), '12x12');
  await page.mouse.move(box.x + box.width * (4.5 / 12), box.y + box.height * (6.5 / 12));
  await page.mouse.down();
  await page.mouse.up();
  await page.waitForFunction(() => /random tokens shown twice/.test(document.querySelector('[data-testid=gpt2-chosen-note]').textContent));
  assert.match(await text(page, '[data-testid=gpt2-chosen-note]'), /^L6H4 on \d+ random tokens/);
  assert.match(page.url(), /gpt2Head=L6H4/);
  // and from the keyboard: the cell in focus moves with the arrows, Enter opens its head
  await page.focus('[data-testid=heatmap-gpt2-previousToken]');
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => /^L1H1 on \d+ random tokens/.test(document.querySelector('[data-testid=gpt2-chosen-note]').textContent));
  assert.match(page.url(), /gpt2Head=L1H1/);

  // the logit lens on request: a row per layer
  await page.click('[data-testid=gpt2-lens-button]');
  await page.waitForSelector('[data-testid=gpt2-lens] [data-testid=tf-lens-table]');
  const rows = await page.$$eval('[data-testid=gpt2-lens] tbody tr', (rs) => rs.map((r) => r.firstElementChild.textContent));
  assert.equal(rows.filter((r) => r.startsWith('after layer')).length, 12);
  assert.match(await text(page, '[data-testid=gpt2-lens-readout]'), /after layer 0 \d+%.*output \d+%/);

  // generate, greedy
  await page.fill('#gpt2-gen-tokens', '5');
  await page.click('[data-testid=gpt2-generate]');
  await page.waitForFunction(() => /▸/.test(document.querySelector('[data-testid=gpt2-generated]').textContent));

  // nothing was sent anywhere: every request stayed on the page's own origin
  const origin = new URL(env.url).origin;
  assert.deepEqual(requests.filter((u) => !u.startsWith(origin) && !u.startsWith('blob:') && !u.startsWith('data:')), []);
  // every model call runs in the worker and the grid is drawn a few heads a frame, so the page's own tasks stay
  // short (the figure printed); a shared machine stalls the page now and then, so the bound only catches a
  // forward pass or a whole grid drawn on the main thread
  const longest = await page.evaluate(() => Math.max(0, ...window.longTasks));
  console.log(`lab-gpt2: the page's longest task while the model was opened and read: ${longest.toFixed(0)} ms (0: none over 50 ms)`);
  assert.ok(longest < 1500, `the page blocked for ${longest} ms`);
  assert.deepEqual(await axeViolations(page), []);
  await page.locator('#gpt2').screenshot({ path: `${SHOTS}lab-gpt2-desktop.png` });
  assert.deepEqual(errors, []);
  await page.close();
});

test('the link brings the prompt and the head back (not the weights); both files at once, a bad config, a drop, on a phone', async () => {
  const { page, errors } = await openLab(`&gpt2Prompt=${encodeURIComponent('One two three. One two three.')}&gpt2Head=L2H9`, PHONE);
  assert.equal(await page.inputValue('[data-testid=gpt2-prompt]'), 'One two three. One two three.');
  await openModel(page, true);
  assert.equal(await page.inputValue('[data-testid=gpt2-head]'), 'L2H9');
  assert.match(await text(page, '[data-testid=gpt2-chosen-note]'), /^L2H9 on the prompt/);
  // a bad config is refused by name, and the model in hand stays usable
  await page.setInputFiles('[data-testid=gpt2-files]', [FILES.bad, FILES.weights]);
  await page.waitForFunction(() => document.querySelector('[data-testid=gpt2-status]').dataset.kind === 'error');
  assert.match(await text(page, '[data-testid=gpt2-status]'), /ERR_\w+: .*relu.*The model opened before is still open/);
  assert.equal(await page.isVisible('[data-testid=gpt2-panels]'), true);
  await page.click('[data-testid=gpt2-generate]');
  await page.waitForFunction(() => /▸/.test(document.querySelector('[data-testid=gpt2-generated]').textContent));
  // a paste past the link's 1,000 characters is cut there, saying so (not the browser's silent maxlength)
  await page.fill('[data-testid=gpt2-prompt]', 'ab '.repeat(500));
  assert.equal((await page.inputValue('[data-testid=gpt2-prompt]')).length, 1000);
  assert.match(await text(page, '[data-testid=gpt2Prompt-cut]'), /^Using the first 1,000 of 1,500 characters/);
  await page.fill('[data-testid=gpt2-prompt]', 'One two three. One two three.');
  // dropped: config.json on the drop zone, then the weights through the button; the checkpoint opens again
  await page.evaluate((text) => {
    const files = new DataTransfer();
    files.items.add(new File([text], 'config.json', { type: 'application/json' }));
    document.querySelector('[data-testid=gpt2-drop]').dispatchEvent(new DragEvent('drop', { dataTransfer: files, bubbles: true, cancelable: true }));
  }, JSON.stringify(CONFIG));
  await page.waitForFunction(() => /config\.json chosen; now choose its model\.safetensors/.test(document.querySelector('[data-testid=gpt2-status]').textContent));
  await page.setInputFiles('[data-testid=gpt2-files]', [FILES.weights]);
  await page.waitForFunction(() => /^Opened model\.safetensors/.test(document.querySelector('[data-testid=gpt2-status]').textContent));
  // the section fits the phone's width: what is wider (the grid, the large map, the lens) scrolls inside it
  const fit = await page.$eval('#gpt2', (s) => ({ right: s.getBoundingClientRect().right, scroll: s.scrollWidth, client: s.clientWidth }));
  assert.ok(fit.right <= PHONE.width && fit.scroll <= fit.client + 1, `the GPT-2 section fits a phone (${JSON.stringify(fit)})`);
  await page.locator('#gpt2').screenshot({ path: `${SHOTS}lab-gpt2-phone.png` });
  assert.deepEqual(errors, []);
  await page.close();
});

test('a GPT-NeoX checkpoint with its tokenizer.json: named, read and generated by that tokenizer; the run bar names it while on screen', async () => {
  // what the engine gives in Node for the same files: the page must show the same
  const engine = await loadEngine();
  const withFile = await engine.loadModel(neox.bytes, { config: NEOX, tokenizer: TOKENIZER });
  const made = withFile.generate(PROMPT, { tokens: 5, temperature: 0, topK: 0, seed: 1 });
  assert.notEqual((await gpt2Tokenizer()).decode(made.ids), made.text, 'the two tokenizers read the ids apart');
  // shown in the lens's convention: a byte that is no whole character as "<0xB0>", never "�"
  const want = generatedText(made.tokens);
  assert.ok(!want.includes('\uFFFD'));
  const highest = Math.max(...withFile.headScores(scan({ context: NEOX.max_position_embeddings })).flat().map((x) => x.induction));
  assert.ok(highest < INDUCTION_MIN, `a random model has no induction head (${highest})`);
  withFile.destroy();
  const tokens = readTokenizerJson(TOKENIZER).encode(PROMPT).tokens;

  const { page, errors } = await openLab(`&gpt2Prompt=${encodeURIComponent(PROMPT)}`);
  assert.match(await text(page, '[data-testid=gpt2-where]'), /Pythia \(GPT-NeoX\): EleutherAI's pythia-70m \(166 MB\), pythia-160m \(375 MB\), pythia-410m \(911 MB\).*tokenizer\.json/);
  // the weights and config together: GPT-2's tokenizer, and the card says it is not Pythia's own
  await page.setInputFiles('[data-testid=gpt2-files]', [NEOX_FILES.config, NEOX_FILES.weights]);
  await page.waitForFunction(() => /^Opened model\.safetensors/.test(document.querySelector('[data-testid=gpt2-status]').textContent));
  assert.match(await text(page, '[data-testid=gpt2-status]'), /a GPT-NeoX \(Pythia\) checkpoint: 2 layers × 2 heads, dModel 32.*GPT-2's built-in tokenizer, not Pythia's own: choose its tokenizer\.json/);
  // the tokenizer.json after: the same model, opened again, read by it
  await page.setInputFiles('[data-testid=gpt2-files]', [NEOX_FILES.tokenizer]);
  await page.waitForFunction(() => document.querySelector('[data-testid=gpt2-status]').dataset.tokenizer === 'file'
    && /^Opened/.test(document.querySelector('[data-testid=gpt2-status]').textContent));
  assert.match(await text(page, '[data-testid=gpt2-status]'), /GPT-NeoX \(Pythia\) checkpoint.*read by tokenizer\.json, the model's own tokenizer/);
  await page.waitForFunction((n) => document.querySelector('[data-testid=gpt2-tokens]').textContent.startsWith(`${n} tokens`), tokens.length);
  assert.equal(await text(page, '[data-testid=gpt2-tokens]'), `${tokens.length} tokens: ${tokens.map(tokenLabel).join(' · ')}`);
  await page.fill('#gpt2-gen-tokens', '5');
  await page.click('[data-testid=gpt2-generate]');
  await page.waitForFunction(() => /▸/.test(document.querySelector('[data-testid=gpt2-generated]').textContent));
  assert.equal(await page.$eval('[data-testid=gpt2-generated]', (e) => e.textContent), `${PROMPT}▸${want}`);
  // the scan: a random model's heads are called no induction heads, the measure by its name
  await page.click('[data-testid=gpt2-scan]');
  await page.waitForFunction(() => /No induction head/.test(document.querySelector('[data-testid=gpt2-scan-status]').textContent));
  assert.match(await text(page, '[data-testid=gpt2-scan-status]'), new RegExp(`no head's prefix-matching score reaches ${INDUCTION_MIN} \\(the highest: L\\dH\\d \\(0\\.\\d\\d\\)`));

  // the run bar: the trained model's controls while it is on screen, the checkpoint's name while its panels are
  const visible = (sel) => page.isVisible(sel);
  await page.evaluate(() => scrollTo(0, 0));
  await page.waitForSelector('#play', { state: 'visible' });
  assert.equal(await visible('[data-testid=run-checkpoint]'), false);
  await page.evaluate(() => document.querySelector('[data-testid=gpt2-heads]').scrollIntoView({ block: 'center' }));
  await page.waitForSelector('[data-testid=run-checkpoint]', { state: 'visible' });
  assert.match(await text(page, '[data-testid=run-checkpoint]'), /^GPT-NeoX \(Pythia\), 2 layers × 2 heads: read here, not trained \(model\.safetensors, [\d,]+ parameters\)/);
  for (const sel of ['#play', '#step', '#reset', '[data-testid=speed-control]', '[data-testid=run-step]']) assert.equal(await visible(sel), false, `${sel} is hidden`);
  await page.keyboard.press('Space');
  assert.equal(await page.evaluate(() => window.attnlabLab.session.playing), false, 'Space does not train the model off screen');
  await page.screenshot({ path: `${SHOTS}lab-neox-runbar-desktop.png` });
  assert.deepEqual(await axeViolations(page), []);
  await page.setViewportSize(PHONE);
  await page.evaluate(() => document.querySelector('[data-testid=gpt2-heads]').scrollIntoView({ block: 'center' }));
  await page.waitForSelector('[data-testid=run-checkpoint]', { state: 'visible' });
  await page.screenshot({ path: `${SHOTS}lab-neox-runbar-phone.png` });
  const barHeight = (await page.locator('#runbar').boundingBox()).height;
  assert.ok(barHeight <= 64, `the run bar is ${barHeight} px on a phone`);
  // back: the trained transformer's Train controls, in focus
  // tapped where it is (the bar is sticky: no scrolling to it, which would move the panels off the middle)
  const back = await page.locator('[data-testid=run-checkpoint] button').boundingBox();
  await page.mouse.click(back.x + back.width / 2, back.y + back.height / 2);
  await page.waitForSelector('#play', { state: 'visible' });
  assert.equal(await page.evaluate(() => document.activeElement.id), 'play');
  assert.equal(await visible('[data-testid=run-checkpoint]'), false);
  assert.deepEqual(errors, []);
  await page.close();
});
