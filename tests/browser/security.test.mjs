// Issue 10, pages: a strict Content-Security-Policy on every page (no inline
// scripts or styles; WASM allowed by 'wasm-unsafe-eval' only), under which both pages
// work, and a CSV export that never writes a token name a spreadsheet would run.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { ROOT, hashOf, heatmapPixels, openPage, openPlayground, startBrowser } from './browser.mjs';

export const CSP = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; img-src 'self' data: blob:; connect-src 'self' https://huggingface.co https://*.huggingface.co https://*.hf.co; object-src 'none'; base-uri 'none'";

let env;
before(async () => { env = await startBrowser(); });
after(async () => { await env?.close(); });

/** Records every CSP violation from the first byte of the page. */
async function watchViolations(page) {
  await page.addInitScript(() => {
    window.__violations = [];
    document.addEventListener('securitypolicyviolation', (e) => window.__violations.push(`${e.violatedDirective}: ${e.blockedURI}`));
  });
}

test('every page carries the strict CSP, with no inline script or style in its HTML', async () => {
  for (const file of ['index.html', 'lab.html']) {
    const html = await readFile(`${ROOT}web/${file}`, 'utf8');
    const meta = /<meta http-equiv="Content-Security-Policy" content="([^"]*)">/.exec(html);
    assert.ok(meta, `${file} has a CSP meta tag`);
    assert.equal(meta[1], CSP, file);
    assert.doesNotMatch(html, /<style|\sstyle=|<script(?![^>]*\bsrc=)/, `${file}: no inline style or script`);
    assert.doesNotMatch(html, /\son[a-z]+=/, `${file}: no inline event handler`);
  }
});

test('the playground works under the CSP: WASM compiles, heatmaps and formulas draw, exports work, no violation', async () => {
  const context = await env.browser.newContext({ viewport: { width: 1440, height: 900 }, acceptDownloads: true });
  const page = await context.newPage();
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(String(e)));
  await watchViolations(page);
  await page.goto(`${env.url}#ver=2&preset=self`);
  await page.waitForSelector('body[data-ready="true"]', { timeout: 20000 });
  assert.equal((await heatmapPixels(page, 'weights')).width, 8);
  assert.ok((await page.locator('[data-testid="formula-scores"] .katex').count()) > 0);
  // the formulas' layout comes from classes, not inline styles: a fraction has height
  // (inline, KaTeX puts a 2-level fraction at ~49 px; with its styles blocked it collapses to one line, ~20 px)
  const frac = await page.locator('[data-testid="formula-scores"] .katex-html').first().boundingBox();
  assert.ok(frac && frac.height > 35, `the fraction is laid out (${frac?.height}px)`);
  const [png] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid="export-weights-png"]')]);
  assert.equal(png.suggestedFilename(), 'attnlab-weights.png');
  assert.deepEqual(await page.evaluate(() => window.__violations), []);
  assert.deepEqual(errors, []);
  await context.close();
});

test('the training lab works under the CSP: the worker compiles WASM and a training step runs, no violation', async () => {
  const page = await env.browser.newPage({ viewport: { width: 1440, height: 900 } });
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(String(e)));
  await watchViolations(page);
  await page.goto(`${env.url}lab.html`);
  await page.waitForSelector('body[data-ready="true"]', { timeout: 30000 });
  await page.click('#step');
  await page.waitForFunction(() => Number(document.querySelector('[data-testid="step"]').textContent) >= 1, null, { timeout: 30000 });
  assert.deepEqual(await page.evaluate(() => window.__violations), []);
  assert.deepEqual(errors, []);
  await page.close();
});

test('CSV export neutralises token names that begin with = + - @ tab or CR (OWASP CSV injection)', async () => {
  const evil = ['=1+1', '@SUM(A1)', '+cmd', '-2+3', 'ok'];
  const hash = hashOf({ version: 1, tokens: evil, x: [[1, 0], [0, 1], [1, 1], [0.5, 0], [0, 0.5]], px: 0, py: 1 });
  const { page, errors } = await openPlayground(env.browser, env.url + hash);
  assert.deepEqual((await page.evaluate(() => window.attnlab.state())).tokens, evil);
  const [dl] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid="export-csv"]')]);
  const rows = (await readFile(await dl.path(), 'utf8')).trim().split('\n').slice(1).map((l) => l.split(','));
  const labels = new Set(rows.flatMap((r) => [r[4], r[5]]));
  for (const name of evil.slice(0, 4)) {
    assert.ok(labels.has(`'${name}`), `${name} is written as text ('${name})`);
    assert.ok(!labels.has(name), `${name} is never written raw`);
  }
  assert.ok(labels.has('ok'));
  assert.ok(rows.every((r) => /^(-?\d|-inf$)/.test(r[6])), 'values stay numbers');
  assert.deepEqual(errors, []);
  await page.close();
});
