// The model cards of "Open a model…" (web/ui/model-cards.js) in headless Chromium, against a
// local server that answers as the Hugging Face hub does (tests/lib/hub-server.mjs: a 302 to
// its store on another origin, X-Linked-Size, CORS) serving small checkpoints built here under
// the cards' own repos. The pages are served with the site's policy, whose connect-src names
// huggingface.co and its stores, naming the test hub's two origins instead (in the header and
// the meta tag alike), and with /models/ of the site's own origin answered by the same hub (a
// course's own copy, ?hub=./models). Checked as a learner uses it: each card says its size
// before anything is fetched; a click opens the model with a progress bar (bytes, rate, time
// left) and Cancel stops it, keeping nothing; the next click opens it and keeps it; Pythia's
// card opens the training step its slider chose, and the link holds the card and the step; the
// storage list says what is kept and Remove removes it; storage that is full is said and the
// model opens all the same; a link's bad repo, revision or hub falls
// back with a notice and sends nothing anywhere; the hub setting refuses javascript:; with the
// hub stopped the page says it cannot be reached and the kept model opens from storage with no
// request for its weights; Learn's chapter 10 shows the same cards, chosen by its link.
// Screenshots at 1440×900 and 390×844 go to test-results/browser/.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request as httpRequest } from 'node:http';
import { CSP, ISOLATION_HEADERS, serve } from '../../scripts/serve.mjs';
import { sizeText } from '../../web/ui/gpt2-file.js';
import { gpt2Checkpoint } from '../lib/gpt2-checkpoint.mjs';
import { NEOX_TINY, neoxCheckpoint } from '../lib/neox-checkpoint.mjs';
import { TOKENIZER_SIZE, tokenizerJson } from '../lib/tokenizer-json.mjs';
import { DESKTOP, PHONE, SHOTS, axeViolations, startBrowser } from './browser.mjs';

const WEIGHTS = 'model.safetensors';
/** A GPT-2 layout with GPT-2's vocabulary (the lab reads its prompt with GPT-2's tokenizer), narrow: about 2.5 MB. */
const GPT2 = {
  model_type: 'gpt2', n_layer: 2, n_head: 2, n_embd: 24, n_inner: 32, n_positions: 64, n_ctx: 64, vocab_size: 50257,
  layer_norm_epsilon: 1e-5, activation_function: 'gelu_new',
};
const gpt2 = gpt2Checkpoint({ config: GPT2, dtype: 'F16', seed: 3 });
const OTHERS = ['distilbert/distilgpt2', 'openai-community/gpt2-medium', 'EleutherAI/pythia-160m']
  .map((repo, k) => ({ repo, made: gpt2Checkpoint({ config: { ...GPT2, n_layer: 3 + k }, dtype: 'F16', seed: 7 + k }) }));
const NEOX = { ...NEOX_TINY, vocab_size: TOKENIZER_SIZE, max_position_embeddings: 64 };
const pythiaMain = neoxCheckpoint({ config: NEOX, dtype: 'F16', seed: 5 });
const pythiaStep = neoxCheckpoint({ config: NEOX, dtype: 'F32', seed: 6 }); // another size: the card's size follows the step
const tokenizer = JSON.stringify(tokenizerJson());
const REPOS = {
  'openai-community/gpt2': { main: { 'config.json': JSON.stringify(GPT2), [WEIGHTS]: gpt2.bytes } },
  // the other cards' repos, each a GPT-2 of its own depth and so its own size, so every card has a size to say
  ...Object.fromEntries(OTHERS.map(({ repo, made }) => [repo, { main: { 'config.json': JSON.stringify(made.config), [WEIGHTS]: made.bytes } }])),
  'EleutherAI/pythia-70m': {
    main: { 'config.json': JSON.stringify(NEOX), 'tokenizer.json': tokenizer, [WEIGHTS]: pythiaMain.bytes },
    step1000: { 'config.json': JSON.stringify(NEOX), 'tokenizer.json': tokenizer, [WEIGHTS]: pythiaStep.bytes },
  },
};

let env, hub, site, page, errors, requests, context;
/** The site's policy with the test hub's origins where it names huggingface.co's. */
let policy;

/** Forwards a request to `target` as it came, and its answer back (redirects not followed); `rewrite` edits an HTML body. */
function forward(target, req, res, rewrite) {
  const up = httpRequest(target, { method: req.method, headers: { ...req.headers, host: new URL(target).host } }, (answer) => {
    const html = (answer.headers['content-type'] ?? '').startsWith('text/html');
    if (!html || !rewrite) {
      res.writeHead(answer.statusCode, answer.headers);
      answer.pipe(res);
      return;
    }
    const pieces = [];
    answer.on('data', (p) => pieces.push(p));
    answer.on('end', () => {
      const body = Buffer.from(rewrite(Buffer.concat(pieces).toString('utf8')));
      res.writeHead(answer.statusCode, { ...answer.headers, 'content-length': body.length });
      res.end(req.method === 'HEAD' ? undefined : body);
    });
  });
  up.on('error', () => res.destroy());
  req.pipe(up);
}

before(async () => {
  env = await startBrowser();
  hub = await startHub();
  policy = CSP.replace(/connect-src [^;]*/, `connect-src 'self' ${hub.url} ${hub.storeUrl}`);
  const files = await serve({ port: 0, headers: { 'Content-Security-Policy': policy, 'X-Content-Type-Options': 'nosniff', ...ISOLATION_HEADERS } });
  const server = createServer((req, res) => {
    if (/^\/models\/[^/]+\/[^/]+\/resolve\//.test(req.url)) return forward(`${hub.url}${req.url.slice('/models'.length)}`, req, res);
    return forward(`${files.url.replace(/\/$/, '')}${req.url}`, req, res, (html) => html.replace(CSP, policy));
  });
  await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
  site = { url: `http://127.0.0.1:${server.address().port}/`, close: () => Promise.all([server, files.server].map((s) => new Promise((ok) => { s.closeAllConnections?.(); s.close(ok); }))) };
});
after(async () => {
  await env?.close();
  await hub?.close();
  await site?.close();
});

async function startHub() {
  const { startHub: start } = await import('../lib/hub-server.mjs');
  return start(REPOS);
}

/**
 * A page in the file's one browser context, so that what one test keeps in Cache Storage the next
 * finds (each new context is a new browser profile): { page, errors } as browser.mjs's openPage gives.
 */
async function openPage(_browser, url, viewport) {
  context ??= await env.browser.newContext({ viewport: DESKTOP });
  const opened = await context.newPage();
  await opened.setViewportSize(viewport);
  opened.setDefaultTimeout(60000);
  const seen = [];
  opened.on('console', (msg) => { if (msg.type() === 'error') seen.push(msg.text()); });
  opened.on('pageerror', (err) => seen.push(String(err)));
  await opened.goto(url);
  return { page: opened, errors: seen };
}

const text = (sel) => page.$eval(sel, (e) => e.textContent.trim());
const status = () => text('[data-testid=gpt2-hub-status]');

/** The lab's Transformer family at `search`, on its real-model card. */
async function openLab(search, viewport = DESKTOP) {
  if (page) await page.close();
  ({ page, errors } = await openPage(env.browser, `${site.url}lab.html${search}#ver=2&task=transformer`, viewport));
  requests = [];
  page.on('request', (r) => requests.push(r.url()));
  await page.waitForSelector('body[data-ready=true]');
  await page.waitForSelector('[data-testid=gpt2-model-gpt2]');
}

test('each card says its size as the hub reports it before anything is fetched; the screenshots at both sizes', async () => {
  await openLab(`?model=open&hub=${encodeURIComponent(hub.url)}`);
  await page.waitForFunction(() => document.querySelector('[data-testid=gpt2-size-gpt2]').dataset.state === 'said');
  assert.equal(await page.getAttribute('[data-testid=gpt2-size-gpt2]', 'data-bytes'), String(gpt2.bytes.length));
  assert.equal(await text('[data-testid=gpt2-size-gpt2]'), sizeText(gpt2.bytes.length));
  await page.waitForFunction(() => document.querySelector('[data-testid=gpt2-size-pythia-70m]').dataset.state === 'said');
  assert.equal(await page.getAttribute('[data-testid=gpt2-size-pythia-70m]', 'data-bytes'), String(pythiaMain.bytes.length));
  await page.waitForFunction(() => document.querySelector('[data-testid=gpt2-size-distilgpt2]').dataset.state === 'said');
  assert.equal(await page.getAttribute('[data-testid=gpt2-size-distilgpt2]', 'data-bytes'), String(OTHERS[0].made.bytes.length));
  assert.match(await text('[data-testid=gpt2-hub-label]'), new RegExp(`from ${new URL(hub.url).host}`));
  // the sizes were asked by HEAD only: no byte of a model was fetched
  assert.deepEqual(hub.requests.filter((r) => r.method !== 'HEAD'), []);
  assert.equal(await page.isVisible('[data-testid=gpt2-unreachable]'), false);
  await page.locator('[data-testid=gpt2-cards]').screenshot({ path: `${SHOTS}model-cards-desktop.png` });
  assert.deepEqual(await axeViolations(page), []);
  await page.setViewportSize(PHONE);
  await page.locator('[data-testid=gpt2-cards]').scrollIntoViewIfNeeded();
  await page.screenshot({ path: `${SHOTS}model-cards-phone.png` });
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - innerWidth);
  assert.ok(overflow <= 0, `the phone page scrolls sideways by ${overflow} px`);
  await page.setViewportSize(DESKTOP);
  assert.deepEqual(errors, []);
});

test('a click opens the model with a progress bar; Cancel stops it and keeps nothing; the next click opens and keeps it', async () => {
  hub.faults[WEIGHTS] = { pace: 150, pieces: 40 }; // a slow connection: six seconds for the weights
  await page.click('[data-testid=gpt2-card-gpt2]');
  await page.waitForFunction(() => /\/s · about .* left/.test(document.querySelector('[data-testid=gpt2-hub-progress-text]').textContent));
  const shown = await text('[data-testid=gpt2-hub-progress-text]');
  assert.match(shown, new RegExp(`^model\\.safetensors: [\\d.]+ (KB|MB) of ${sizeText(gpt2.bytes.length).replace('.', '\\.')} · `));
  assert.ok(Number(await page.getAttribute('[data-testid=gpt2-hub-progress]', 'data-loaded')) > 0);
  await page.locator('[data-testid=gpt2-cards]').screenshot({ path: `${SHOTS}model-cards-progress-desktop.png` });
  // the link holds the card chosen
  assert.match(await page.evaluate(() => location.search), /repo=openai-community\/gpt2/);
  await page.click('[data-testid=gpt2-hub-cancel]');
  await page.waitForFunction(() => /^Cancelled/.test(document.querySelector('[data-testid=gpt2-hub-status]').textContent));
  assert.equal(await page.isVisible('[data-testid=gpt2-hub-progress]'), false);
  await page.waitForFunction(() => /nothing$/.test(document.querySelector('[data-testid=gpt2-kept-summary]').textContent));
  assert.equal(await page.isVisible('[data-testid=gpt2-panels]'), false);

  delete hub.faults[WEIGHTS];
  await page.click('[data-testid=gpt2-card-gpt2]');
  await page.waitForFunction(() => /^Opened GPT-2 small/.test(document.querySelector('[data-testid=gpt2-hub-status]').textContent), null, { timeout: 90000 });
  assert.match(await status(), /Kept in this browser for the next visit/);
  assert.match(await text('[data-testid=gpt2-status]'), /a GPT-2 checkpoint: 2 layers × 2 heads/);
  await page.waitForSelector('[data-testid=gpt2-kept-gpt2]:not([hidden])');
  assert.match(await text('[data-testid=gpt2-kept-summary]'), /1 model/);
  assert.deepEqual(errors, []);
});

test("Pythia's card opens the training step its slider chose, the link holds it, and the storage list removes it", async () => {
  const slider = page.locator('[data-testid=gpt2-slider-pythia-70m]');
  await slider.focus();
  await page.keyboard.press('Home');
  // main, step0, 1, 2, 4, …, 512 (eleven steps), then step1000
  for (let k = 0; k < 12; k++) await page.keyboard.press('ArrowRight');
  assert.equal(await text('[data-testid=gpt2-step-pythia-70m]'), 'step 1,000');
  await page.waitForFunction((n) => document.querySelector('[data-testid=gpt2-size-pythia-70m]').dataset.bytes === n, String(pythiaStep.bytes.length));
  await page.click('[data-testid=gpt2-card-pythia-70m]');
  await page.waitForFunction(() => /^Opened Pythia-70M at step 1,000/.test(document.querySelector('[data-testid=gpt2-hub-status]').textContent), null, { timeout: 90000 });
  assert.match(await text('[data-testid=gpt2-status]'), /GPT-NeoX/);
  assert.match(await page.evaluate(() => location.search), /repo=EleutherAI\/pythia-70m&revision=step1000/);
  assert.ok(hub.requests.some((r) => r.method === 'GET' && r.path === '/EleutherAI/pythia-70m/resolve/step1000/config.json'));
  await page.click('[data-testid=gpt2-kept-summary]');
  await page.waitForFunction(() => document.querySelectorAll('[data-testid=gpt2-kept] li').length === 2);
  const listed = await page.$$eval('[data-testid=gpt2-kept] li', (li) => li.map((e) => e.textContent));
  assert.match(listed.join('|'), new RegExp(`GPT-2 small: ${sizeText(gpt2.bytes.length + JSON.stringify(GPT2).length).replace('.', '\\.')}`));
  assert.match(listed.join('|'), /Pythia-70M at step 1,000/);
  await page.click('[data-testid=gpt2-remove-pythia-70m-step1000]');
  await page.waitForFunction(() => document.querySelectorAll('[data-testid=gpt2-kept] li').length === 1);
  assert.equal(await page.evaluate(async () => (await (await caches.open('attnlab-models')).keys()).filter((r) => r.url.includes('pythia')).length), 0);
  // the status of the open no longer says it is kept
  assert.match(await text('[data-testid=gpt2-hub-status]'), /^Opened Pythia-70M at step 1,000 from .*\. Since removed from this browser: opening it again fetches it again\.$/);
  await page.setViewportSize(PHONE);
  await page.locator('[data-testid=gpt2-kept]').scrollIntoViewIfNeeded();
  await page.screenshot({ path: `${SHOTS}model-cards-kept-phone.png` });
  await page.setViewportSize(DESKTOP);
  // a shared link chooses the same card and step, and fetches nothing until the reader clicks
  const shared = await page.evaluate(() => location.href);
  const before = hub.requests.filter((r) => r.method === 'GET').length;
  ({ page, errors } = await openPage(env.browser, shared, DESKTOP));
  await page.waitForSelector('[data-testid=gpt2-model-pythia-70m].chosen');
  assert.equal(await text('[data-testid=gpt2-step-pythia-70m]'), 'step 1,000');
  await page.waitForFunction(() => document.querySelector('[data-testid=gpt2-size-pythia-70m]').dataset.state === 'said');
  assert.equal(hub.requests.filter((r) => r.method === 'GET').length, before);
  assert.deepEqual(errors, []);
});

test('storage that is full is said, and the model opens all the same, nothing of it kept', async () => {
  const cdp = await context.newCDPSession(page);
  const origin = new URL(site.url).origin;
  // the site's storage quota below what it holds already: the next file put is refused (QuotaExceededError)
  await cdp.send('Storage.overrideQuotaForOrigin', { origin, quotaSize: 1024 });
  try {
    await page.click('[data-testid=gpt2-card-gpt2-medium]');
    await page.waitForFunction(() => /^(Opened|GPT-2 medium could not)/.test(document.querySelector('[data-testid=gpt2-hub-status]').textContent), null, { timeout: 90000 });
    assert.match(await status(), /^Opened GPT-2 medium from .*Not kept in this browser \(QuotaExceededError/);
    assert.equal(await page.getAttribute('[data-testid=gpt2-hub-status]', 'data-kind'), 'warning');
    assert.match(await text('[data-testid=gpt2-status]'), /a GPT-2 checkpoint/);
    assert.equal(await page.isVisible('[data-testid=gpt2-kept-gpt2-medium]'), false);
  } finally {
    await cdp.send('Storage.overrideQuotaForOrigin', { origin });
  }
  assert.deepEqual(await page.evaluate(async () => (await (await caches.open('attnlab-models')).keys()).filter((r) => r.url.includes('gpt2-medium')).map((r) => r.url)), []);
  assert.deepEqual(errors, []);
});

test("a link's bad repo, revision or hub falls back with a notice and sends nothing off the site; the hub setting refuses javascript:", async () => {
  await openLab('?model=open&repo=evil%2Fmodel&hub=javascript%3Aalert(1)');
  const said = await status();
  assert.match(said, /hub "javascript:alert\(1\)" uses javascript:, and a hub is reached by http or https only/);
  assert.match(said, /model "evil\/model" is not one of the cards/);
  assert.equal(await page.$$eval('.model-card.chosen', (c) => c.length), 0);
  // the default hub is not asked until the reader points at the cards: the sizes are the listed ones
  assert.match(await text('[data-testid=gpt2-size-gpt2]'), /548 MB \(as listed/);
  await openLab('?repo=EleutherAI%2Fpythia-70m&revision=step999');
  assert.match(await status(), /revision "step999" is not one of Pythia-70M's .*: main is chosen/);
  assert.equal(await text('[data-testid=gpt2-step-pythia-70m]'), 'main (the released model)');
  const origin = new URL(site.url).origin;
  assert.deepEqual(requests.filter((u) => !u.startsWith(origin) && !u.startsWith('data:') && !u.startsWith('blob:')), []);

  await page.click('.model-hub summary');
  await page.fill('[data-testid=gpt2-hub-input]', 'javascript:alert(1)');
  await page.click('[data-testid=gpt2-hub-use]');
  assert.match(await text('[data-testid=gpt2-hub-said]'), /^Not used: "javascript:alert\(1\)" uses javascript:/);
  await page.fill('[data-testid=gpt2-hub-input]', 'https://example.com/models');
  await page.click('[data-testid=gpt2-hub-use]');
  assert.match(await text('[data-testid=gpt2-hub-said]'), /example\.com, which this page's policy does not let it reach/);
  // a course's own copy, on the site's own origin
  await page.fill('[data-testid=gpt2-hub-input]', './models');
  await page.click('[data-testid=gpt2-hub-use]');
  assert.match(await text('[data-testid=gpt2-hub-label]'), /from this site \(\/models\)/);
  await page.waitForFunction((n) => document.querySelector('[data-testid=gpt2-size-gpt2]').dataset.bytes === n, String(gpt2.bytes.length));
  assert.match(await page.evaluate(() => location.search), /hub=\.\/models/);
  assert.deepEqual(errors, []);
});

test('with the hub stopped the page says it cannot be reached, and the kept model opens from storage with no request for its weights', async () => {
  await openLab(`?model=open&repo=openai-community%2Fgpt2&hub=${encodeURIComponent(hub.url)}`);
  await hub.close();
  hub.requests.length = 0;
  await page.reload();
  await page.waitForSelector('body[data-ready=true]');
  await page.waitForSelector('[data-testid=gpt2-unreachable]:not([hidden])');
  assert.match(await text('[data-testid=gpt2-unreachable]'), /cannot be reached from this page.*files from your disk/);
  errors.length = 0; // the failed size requests are the browser's console lines of a server that is gone
  await page.click('[data-testid=gpt2-card-gpt2]');
  await page.waitForFunction(() => /^Opened GPT-2 small from this browser's storage, nothing fetched/.test(document.querySelector('[data-testid=gpt2-hub-status]').textContent), null, { timeout: 90000 });
  assert.equal(await page.getAttribute('[data-testid=gpt2-hub-status]', 'data-from'), 'kept');
  assert.deepEqual(hub.requests, []);
  assert.match(await text('[data-testid=gpt2-status]'), /a GPT-2 checkpoint/);
  hub = await startHub(); // for the chapter's cards
});

test("Learn's chapter 10 has the same cards, chosen by its link; a card's model goes to the lab's same card", async () => {
  await page.close();
  ({ page, errors } = await openPage(env.browser, `${site.url}learn.html?repo=EleutherAI%2Fpythia-70m&revision=step1000#ch-gpt2`, DESKTOP));
  await page.waitForSelector('[data-testid=ch10-model-pythia-70m].chosen');
  assert.equal(await text('[data-testid=ch10-step-pythia-70m]'), 'step 1,000');
  await page.locator('[data-testid=ch10-cards]').scrollIntoViewIfNeeded();
  await page.locator('[data-testid=ch10-cards]').screenshot({ path: `${SHOTS}model-cards-learn-desktop.png` });
  assert.deepEqual(await axeViolations(page, { chapters: ['gpt2'] }), []);
  await page.setViewportSize(PHONE);
  await page.locator('[data-testid=ch10-model-pythia-70m]').scrollIntoViewIfNeeded();
  await page.screenshot({ path: `${SHOTS}model-cards-learn-phone.png` });
  await page.setViewportSize(DESKTOP);
  // GPT-2 is kept in this browser: the chapter opens it from storage, and hands it to the lab by its link
  await page.click('[data-testid=ch10-card-gpt2]');
  await page.waitForFunction(() => /^Opened GPT-2 small from this browser's storage/.test(document.querySelector('[data-testid=ch10-hub-status]').textContent), null, { timeout: 90000 });
  await page.waitForFunction(() => document.querySelector('[data-testid=ch10-ablation]').dataset.first !== undefined);
  await page.click('[data-testid=open-gpt2-lab]');
  await page.waitForURL(/lab\.html\?model=open&repo=openai-community\/gpt2#/);
  assert.match(page.url(), /model=open/);
  await page.waitForSelector('[data-testid=gpt2-model-gpt2].chosen');
  await page.click('[data-testid=gpt2-card-gpt2]');
  await page.waitForFunction(() => /^Opened GPT-2 small from this browser's storage/.test(document.querySelector('[data-testid=gpt2-hub-status]').textContent), null, { timeout: 90000 });
  // pointing at the cards asked the default hub for the sizes: huggingface.co, which this test's policy does not reach
  const hubAsked = errors.filter((e) => /https:\/\/huggingface\.co\/[^ ]+\/resolve\/[^ ]+\/model\.safetensors/.test(e));
  assert.ok(hubAsked.length > 0);
  assert.deepEqual(errors.filter((e) => !hubAsked.includes(e)), []);
});
