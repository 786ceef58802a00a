// Learn embedded: a chapter-9 widget fetches only what it reads (the induction model and the
// engine build it runs on, never the reverse models or the one-thread build the whole page
// preloads); the Embed snippet on Learn carries no #hash (Learn's is a place on the page,
// #ch-transformer, not a widget's state): Learn's Embed buttons on a page holding only the
// chapters' widgets, read at the hash a reader's link leaves.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { DESKTOP, PHONE, SHOTS, startBrowser } from './browser.mjs';

let env;
before(async () => { env = await startBrowser(); });
after(() => env?.close());

test('an embedded chapter 9 fetches the files it reads, not the reverse models', async () => {
  const page = await env.browser.newPage({ viewport: DESKTOP });
  const errors = [];
  page.on('pageerror', (err) => errors.push(String(err)));
  const fetched = [];
  page.on('request', (r) => { if (/\/(models|wasm)\//.test(r.url())) fetched.push(r.url().slice(env.url.length)); });
  await page.goto(`${env.url}learn.html?embed&chapter=9&widget=induction#ch-transformer`);
  await page.waitForSelector('body[data-ready=true]', { timeout: 90000 });
  const isolated = await page.evaluate(() => crossOriginIsolated);
  assert.deepEqual(fetched.filter((u) => u.startsWith('models/')).sort(), ['models/induction.tfm', 'models/models.json']);
  assert.deepEqual(fetched.filter((u) => u.startsWith('wasm/')), [isolated ? 'wasm/attnlab-simd-mt.wasm' : 'wasm/attnlab-simd.wasm'], 'the one engine build it runs on');
  assert.deepEqual(errors, []);
  await page.close();
});

/** A page with Learn's chapters and the number of widgets each has (web/learn/embed.js's table), no engine. */
const FIXTURE = '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Learn\'s Embed buttons</title>'
  + '<link rel="stylesheet" href="ui/base.css"></head><body><main>'
  + [['bottleneck', 2], ['dot', 1], ['average', 1], ['scores', 2], ['self', 1], ['dates', 1], ['kinds', 3], ['images', 2], ['transformer', 3]]
    .map(([id, n]) => `<section class="chapter" id="ch-${id}">${'<div class="widget">widget</div>'.repeat(n)}<div data-role="retina"></div><div class="score-grid"></div></section>`).join('')
  + '</main></body></html>';

test('Learn\'s Embed snippet carries no #hash, whatever the page\'s', async () => {
  for (const viewport of [DESKTOP, PHONE]) {
    const page = await env.browser.newPage({ viewport });
    const errors = [];
    page.on('pageerror', (err) => errors.push(String(err)));
    await page.route(`${env.url}learn-fixture.html`, (route) => route.fulfill({ contentType: 'text/html', body: FIXTURE }));
    await page.goto(`${env.url}learn-fixture.html#ch-transformer`);
    await page.evaluate(async () => (await import('./learn/embed.js')).addEmbedButtons());
    await page.click('#ch-transformer .widget:nth-of-type(3) .embed-button');
    const snippet = await page.inputValue('[data-testid=embed-snippet]');
    assert.match(snippet, /src="[^"]*\/learn\.html\?embed&amp;chapter=9&amp;widget=induction"/, snippet);
    assert.doesNotMatch(snippet, /#/, 'no hash in the snippet');
    await page.screenshot({ path: `${SHOTS}learn-embed-snippet-${viewport.width}.png` });
    assert.deepEqual(errors, []);
    await page.close();
  }
});
