// Accessibility: axe-core (npm axe-core) audits every page in its main states and
// the run fails on any serious or critical violation; the skip link is the first
// stop of the keyboard and every control of the playground's control bar is reached
// by Tab and operable by keyboard.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { ROOT, openPage, openPlayground, startBrowser } from './browser.mjs';

let env;
let axeSource;
before(async () => {
  env = await startBrowser();
  axeSource = await readFile(`${ROOT}node_modules/axe-core/axe.min.js`, 'utf8');
});
after(async () => { await env?.close(); });

/** Runs axe in the page (evaluated through the driver, so the page's CSP needs no exception). */
async function audit(page) {
  if (!(await page.evaluate(() => Boolean(window.axe)))) await page.evaluate(axeSource);
  const result = await page.evaluate(() => window.axe.run(document, { resultTypes: ['violations'] }));
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.impact} ${v.id}: ${v.help} — ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`);
}

// The default playground and 64 × 64 (preset=long) are audited at both sizes by
// tests/browser/playground-pass.test.mjs (its screenshots pass), with the same filter.
const PLAYGROUND_STATES = [
  ['self-attention with heads', '#ver=2&preset=self'],
  ['padding mask and compare', '#ver=2&mask=padding&padLength=3&compare=cosine'],
  ['naive sum warning', '#ver=2&preset=mixed'],
  ['a bad link (notice)', '#ver=2&score=magic'],
];

for (const [name, hash] of PLAYGROUND_STATES) {
  test(`playground, ${name}: no serious or critical axe violation`, async () => {
    for (const viewport of [{ width: 1440, height: 900 }, { width: 390, height: 844 }]) {
      const { page, errors } = await openPlayground(env.browser, env.url + hash, viewport);
      assert.deepEqual(await audit(page), [], `${name} at ${viewport.width}px`);
      assert.deepEqual(errors, []);
      await page.close();
    }
  });
}

test('training lab: no serious or critical axe violation', async () => {
  const { page, errors } = await openPage(env.browser, `${env.url}lab.html`, { width: 1440, height: 900 });
  await page.waitForSelector('body[data-ready="true"]', { timeout: 30000 });
  assert.deepEqual(await audit(page), []);
  assert.deepEqual(errors, []);
  await page.close();
});

test('keyboard: the skip link comes first and jumps to the content; every control-bar control is reached by Tab and works by keyboard', async () => {
  const { page, errors } = await openPlayground(env.browser, env.url, { width: 1440, height: 900 });
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement.className), 'skip');
  await page.keyboard.press('Enter');
  assert.equal(await page.evaluate(() => document.activeElement.id), 'main');
  const wanted = await page.evaluate(() => [...document.querySelectorAll('.controlbar select, .controlbar input, .controlbar button')]
    .filter((e) => e.offsetParent && !e.disabled).map((e) => (e.type === 'radio' ? e.name : e.id)));
  const seen = new Set();
  for (let k = 0; k < 40 && seen.size < wanted.length; k++) {
    await page.keyboard.press('Tab');
    // a radio group is one Tab stop (its arrow keys choose), as the platform does it
    const id = await page.evaluate(() => (document.activeElement.type === 'radio' ? document.activeElement.name : document.activeElement.id));
    if (wanted.includes(id)) seen.add(id);
  }
  assert.deepEqual([...seen].sort(), [...new Set(wanted)].sort(), 'every control is a Tab stop');
  // operate a few by keyboard alone
  await page.focus('#score');
  await page.keyboard.press('ArrowDown');
  assert.equal(await page.evaluate(() => window.attnlab.state().score), 'scaled_dot');
  await page.focus('#mode-self');
  await page.keyboard.press('Space');
  assert.equal(await page.evaluate(() => window.attnlab.state().mode), 'self');
  await page.focus('#lock');
  await page.keyboard.press('Space');
  assert.equal(await page.evaluate(() => window.attnlab.state().lock), true);
  await page.focus('#reset');
  await page.keyboard.press('Enter');
  assert.equal(await page.evaluate(() => window.attnlab.state().mode), 'attend');
  // a heatmap is a Tab stop whose cells are read with the arrow keys
  await page.focus('[data-testid="heatmap-weights"]');
  await page.keyboard.press('ArrowRight');
  assert.match(await page.locator('[data-testid="readout-weights"]').textContent(), /Your → journey\. α₀₁ = /);
  assert.deepEqual(errors, []);
  await page.close();
});
