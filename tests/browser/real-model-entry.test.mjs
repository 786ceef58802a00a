// "Look inside a real model" as a learner finds it, in headless Chromium: a link
// in the playground's header, on the lab's intro and in Learn's contents, each
// landing on the lab's card for checkpoints (in view, its heading in focus); on
// the lab itself, with the transformer shown, the intro's link scrolls there
// without reloading. A model opened in Learn's chapter 10 (a GPT-NeoX checkpoint
// and its tokenizer.json, built by the test) goes to the lab with "Open this model
// in the lab": the lab opens the same files, nothing picked again, and takes them
// once (a reload lands on the card and says they are no longer kept).
// Screenshots at 1440×900 and 390×844.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NEOX_TINY, neoxCheckpoint } from '../lib/neox-checkpoint.mjs';
import { TOKENIZER_SIZE, tokenizerJson } from '../lib/tokenizer-json.mjs';
import { DESKTOP, PHONE, SHOTS, openPage, startBrowser } from './browser.mjs';

const NEOX = { ...NEOX_TINY, vocab_size: TOKENIZER_SIZE, max_position_embeddings: 160 };
const dir = await mkdtemp(join(tmpdir(), 'attnlab-entry-'));
const FILES = ['model.safetensors', 'config.json', 'tokenizer.json'].map((n) => join(dir, n));
await writeFile(FILES[0], neoxCheckpoint({ config: NEOX, dtype: 'F16', seed: 8 }).bytes);
await writeFile(FILES[1], JSON.stringify(NEOX));
await writeFile(FILES[2], JSON.stringify(tokenizerJson()));

let env;
before(async () => { env = await startBrowser(); });
after(async () => {
  await env?.close();
  await rm(dir, { recursive: true, force: true });
});

const text = (page, sel) => page.$eval(sel, (e) => e.textContent.replace(/\s+/g, ' ').trim());

/** The lab has landed on the checkpoints' card: in view below the run bar, its heading in focus, ?model=open in the link. */
async function landed(page) {
  await page.waitForURL(/lab\.html\?model=(open|kept)#/);
  await page.waitForSelector('body[data-ready=true]');
  await page.waitForFunction(() => document.activeElement?.id === 'h-gpt2');
  const box = await page.locator('#h-gpt2').boundingBox();
  const bar = await page.locator('#runbar').boundingBox();
  const height = page.viewportSize().height;
  assert.ok(box.y >= bar.y + bar.height - 1 && box.y + box.height <= height, `the card's heading is in view (${box.y} below the bar's ${bar.y + bar.height}, in ${height})`);
  assert.equal(await text(page, '#h-gpt2'), 'Look inside a real model: GPT-2 or Pythia');
}

test('"Look inside a real model" in the playground\'s header, the lab\'s intro and Learn\'s contents lands on the lab\'s card', async () => {
  for (const viewport of [DESKTOP, PHONE]) {
    const size = viewport === DESKTOP ? 'desktop' : 'phone';
    // the playground: in its header
    const { page, errors } = await openPage(env.browser, `${env.url}index.html`, viewport);
    await page.waitForSelector('body[data-ready=true]');
    const link = page.locator('.site-header [data-testid=real-model-link]');
    assert.equal(await link.isVisible(), true);
    assert.equal(await link.textContent(), 'Look inside a real model →');
    await page.locator('.site-header').screenshot({ path: `${SHOTS}real-model-playground-${size}.png` });
    await link.click();
    await landed(page);

    // the lab's intro, on its default task: the link loads the lab on the card
    await page.goto(`${env.url}lab.html`);
    await page.waitForSelector('body[data-ready=true]');
    const entry = page.locator('[data-testid=real-model-entry]');
    assert.equal(await entry.isVisible(), true);
    assert.ok((await entry.boundingBox()).y < viewport.height / 2, 'on the lab\'s first screen');
    await page.screenshot({ path: `${SHOTS}real-model-lab-intro-${size}.png` });
    await entry.click();
    await landed(page);
    // with the transformer shown, the same link scrolls to the card without reloading the page
    await page.evaluate(() => { window.notReloaded = true; scrollTo(0, 0); document.body.focus(); });
    await page.click('[data-testid=real-model-entry]');
    await page.waitForFunction(() => document.activeElement?.id === 'h-gpt2');
    assert.equal(await page.evaluate(() => window.notReloaded), true);
    await page.screenshot({ path: `${SHOTS}real-model-lab-card-${size}.png` });

    // Learn's contents
    await page.goto(`${env.url}learn.html`);
    const toc = page.locator('[data-testid=toc-real-model]');
    await toc.scrollIntoViewIfNeeded();
    assert.equal(await toc.isVisible(), true);
    await page.locator('.toc').screenshot({ path: `${SHOTS}real-model-learn-toc-${size}.png` });
    await toc.click();
    await landed(page);
    assert.deepEqual(errors, []);
    await page.close();
  }
});

test('a model opened in chapter 10 opens in the lab with its files, nothing picked again, and is handed over once', async () => {
  const { page, errors } = await openPage(env.browser, `${env.url}learn.html#ch-gpt2`, DESKTOP);
  await page.waitForSelector('body[data-ready="true"]', { timeout: 90000 });
  await page.setInputFiles('[data-testid=ch10-files]', FILES);
  await page.waitForFunction(() => document.querySelector('[data-testid=ch10-lens]').dataset.hits !== undefined, null, { timeout: 60000 });
  const opened = await text(page, '[data-testid=ch10-status]');
  assert.match(opened, /GPT-NeoX \(Pythia\) checkpoint: 2 layers × 2 heads.*read by tokenizer\.json/);
  await page.click('[data-testid=open-gpt2-lab]');
  await landed(page);
  // the same checkpoint, read by the same tokenizer, in the lab's card; the link keeps ?model=open, not the files
  await page.waitForFunction(() => /^Opened/.test(document.querySelector('[data-testid=gpt2-status]').textContent), null, { timeout: 60000 });
  assert.equal(await text(page, '[data-testid=gpt2-status]'), opened);
  await page.waitForSelector('[data-testid=gpt2-panels]', { state: 'visible' });
  assert.match(page.url(), /lab\.html\?model=open#/);
  await page.screenshot({ path: `${SHOTS}real-model-from-learn-desktop.png` });
  // taken once: the same link again lands on the card, and says the files are to be opened here
  await page.goto(page.url().replace('model=open', 'model=kept'));
  await landed(page);
  await page.waitForFunction(() => /no longer kept/.test(document.querySelector('[data-testid=gpt2-status]').textContent));
  assert.equal(await page.isVisible('[data-testid=gpt2-panels]'), false);
  assert.deepEqual(errors, []);
  await page.close();
});
