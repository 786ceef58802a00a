// The page in headless Chromium: the engine loads, the tutorial's 6x6 heatmap
// is drawn (non-blank), labels and hover readout are right, no errors; it fits
// a phone; the engine module also runs unchanged in a Web Worker.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { SHOTS, heatmapPixels, hoverCell, openPlayground, startBrowser } from './browser.mjs';

let env;
before(async () => { env = await startBrowser(); });
after(async () => { await env?.close(); });

const TOKENS = ['Your', 'journey', 'starts', 'with', 'one', 'step'];

test('first page draws the tutorial heatmap with no console errors', async () => {
  const { page, errors } = await openPlayground(env.browser, env.url);
  const px = await heatmapPixels(page, 'weights');
  assert.equal(px.width, 6);
  assert.equal(px.height, 6);
  const colours = new Set();
  let opaque = 0;
  for (let p = 0; p < px.data.length; p += 4) {
    colours.add(px.data.slice(p, p + 3).join());
    if (px.data[p + 3] === 255) opaque++;
  }
  assert.equal(opaque, 36, 'every cell is painted');
  assert.ok(colours.size > 5, `heatmap has ${colours.size} distinct colours`);

  assert.deepEqual(await page.locator('[data-testid="figure-weights"] .hm-rows span').allTextContents(), TOKENS);
  assert.deepEqual(await page.locator('[data-testid="figure-weights"] .hm-cols span').allTextContents(), TOKENS);
  assert.match(await page.locator('[data-testid="status"]').textContent(), /SIMD|scalar/);

  // hover query "journey" (row 1) x key "step" (column 5): the tutorial's 0.2074
  const tip = await hoverCell(page, 'weights', 1, 5);
  assert.match(tip, /journey → step/);
  assert.match(tip, /α₁₅ = 0\.2074/);

  // keyboard: focus the heatmap, walk to (journey, Your): 0.1435
  await page.locator('[data-testid="heatmap-weights"]').focus();
  await page.keyboard.press('ArrowUp');
  for (let k = 0; k < 7; k++) await page.keyboard.press('ArrowLeft');
  await page.keyboard.press('ArrowDown');
  assert.match(await page.locator('[data-testid="readout-weights"]').textContent(), /journey → Your\. α₁₀ = 0\.1435/);

  await page.screenshot({ path: `${SHOTS}first-page.png`, fullPage: true });
  assert.deepEqual(errors, []);
  await page.close();
});

test('first page fits a phone-sized screen', async () => {
  const { page, errors } = await openPlayground(env.browser, env.url, { width: 390, height: 844 });
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `page scrolls sideways by ${overflow}px`);
  const canvas = await page.locator('[data-testid="heatmap-weights"]').boundingBox();
  assert.ok(canvas.x >= 0 && canvas.x + canvas.width <= 390, 'the heatmap is inside the screen');
  await page.screenshot({ path: `${SHOTS}first-page-phone.png`, fullPage: true });
  assert.deepEqual(errors, []);
  await page.close();
});

test('the engine module runs unchanged in a Web Worker', async () => {
  // the worker script is served same-origin (the pages' CSP, rightly, allows no blob: worker)
  const page = await env.browser.newPage();
  const errors = [];
  page.on('pageerror', (err) => errors.push(String(err)));
  await page.route('**/engine-test-worker.js', (route) => route.fulfill({
    contentType: 'text/javascript',
    // the page is cross-origin isolated (serve.mjs): its workers' scripts must say require-corp too
    headers: { 'Cross-Origin-Embedder-Policy': 'require-corp' },
    body: `import { loadEngine } from './engine/index.js';
      const engine = await loadEngine();
      const x = [[0.43,0.15,0.89],[0.22,0.58,0.33],[0.77,0.25,0.10],[0.05,0.80,0.55],[0.57,0.85,0.64],[0.55,0.87,0.66]];
      const r = engine.attend({ queries: [x[1]], keys: x });
      postMessage({ simd: engine.simd, weights: Array.from(r.weights.data) });`,
  }));
  await page.goto(env.url);
  const weights = await page.evaluate(() => {
    const worker = new Worker('engine-test-worker.js', { type: 'module' });
    return new Promise((ok, fail) => {
      worker.onmessage = (ev) => ok(ev.data);
      worker.onerror = (ev) => fail(new Error(ev.message || 'worker failed'));
    });
  });
  const expected = [0.1435, 0.1462, 0.1263, 0.1720, 0.2046, 0.2074];
  weights.weights.forEach((w, j) => assert.ok(Math.abs(w - expected[j]) < 5e-5, `weight ${j}: ${w}`));
  assert.deepEqual(errors, []);
  await page.close();
});
