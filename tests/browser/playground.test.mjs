// The playground driven as a user would: the tutorial's numbers on hover,
// editing values (grid, keys, wheel, drag), every scoring function and mask,
// self-attention, compare, links and JSON files that round-trip, hostile and
// malformed links, and exports. Screenshots go to test-results/browser/.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { SHOTS, fullScreenshot, gridCell, hashOf, heatmapPixels, hoverCell, openPlayground, startBrowser } from './browser.mjs';

let env;
before(async () => { env = await startBrowser(); });
after(async () => { await env?.close(); });

// 002_8a2a632f6ebc2950.txt: query x^2 ("journey") against the six inputs.
const SCORES = [0.4753, 0.4937, 0.3474, 0.6565, 0.8296, 0.8434];
const SOFTMAX = [0.1435, 0.1462, 0.1263, 0.1720, 0.2046, 0.2074];
const SUM = [0.1304, 0.1354, 0.0953, 0.1801, 0.2275, 0.2313];
const SUB = '₀₁₂₃₄₅₆₇₈₉';
const TOKENS = ['Your', 'journey', 'starts', 'with', 'one', 'step'];

const state = (page) => page.evaluate(() => window.attnlab.state());
const differ = (a, b) => a.data.some((v, k) => v !== b.data[k]);
const noticeText = (page) => page.locator('[data-testid="notice"]').textContent();
async function settle(page) {
  await page.evaluate(() => new Promise((ok) => requestAnimationFrame(() => setTimeout(ok, 600))));
}

test('tutorial preset: hovering query "journey" shows the tutorial\'s scores and weights', async () => {
  const { page, errors } = await openPlayground(env.browser, env.url);
  assert.equal(await page.locator('#preset').inputValue(), 'tutorial');
  for (let j = 0; j < 6; j++) {
    const tipE = await hoverCell(page, 'scores', 1, j);
    assert.match(tipE, new RegExp(`journey → ${TOKENS[j]}`));
    assert.match(tipE, new RegExp(`e₁${SUB[j]} = ${SCORES[j].toFixed(4)}`), tipE);
    assert.match(tipE, /q·k/);
    const tipA = await hoverCell(page, 'weights', 1, j);
    assert.match(tipA, new RegExp(`α₁${SUB[j]} = ${SOFTMAX[j].toFixed(4)}`), tipA);
    assert.match(tipA, /exp\(e\) \/ Σₖ exp\(eₖ\)/, 'shows the softmax numerator over denominator');
    if (j === 1) await page.screenshot({ path: `${SHOTS}tutorial-hover.png` });
  }
  // the hovered weight's contribution is outlined in the context row
  assert.ok(await page.locator('[data-testid="figure-context"] .hm-row-hl').isVisible());
  assert.match(await hoverCell(page, 'context', 1, 0), /z₁,₁ = 0\.4304/);

  await page.selectOption('#normalize', 'sum');
  for (let j = 0; j < 6; j++) {
    assert.match(await hoverCell(page, 'weights', 1, j), new RegExp(`α₁${SUB[j]} = ${SUM[j].toFixed(4)}`));
  }
  assert.deepEqual(errors, []);
  await page.close();
});

test('editing a value recomputes and repaints; Alt+↑/↓ and the wheel nudge it', async () => {
  const { page, errors } = await openPlayground(env.browser, env.url);
  const before0 = await heatmapPixels(page, 'weights');
  const cell = await gridCell(page, 'grid-x', 1, 0);
  await cell.fill('0.9');
  const after1 = await heatmapPixels(page, 'weights');
  assert.ok(differ(before0, after1), 'the weights heatmap changed');
  assert.equal((await state(page)).x[1][0], 0.9);
  assert.match(await hoverCell(page, 'scores', 1, 1), /e₁₁ = 1\.2553 = q·k/); // 0.9² + 0.58² + 0.33²
  await cell.focus();
  await page.keyboard.press('Alt+ArrowUp');
  assert.equal((await state(page)).x[1][0], 0.91);
  await page.keyboard.press('Alt+Shift+ArrowDown');
  assert.equal((await state(page)).x[1][0], 0.81);
  const b = await cell.boundingBox();
  await page.mouse.move(b.x + b.width / 2, b.y + b.height / 2);
  await page.mouse.wheel(0, -100);
  await settle(page);
  assert.equal((await state(page)).x[1][0], 0.82);
  assert.ok(differ(after1, await heatmapPixels(page, 'weights')));
  assert.deepEqual(errors, []);
  await page.close();
});

test('every scoring function and mask computes and redraws', async () => {
  const { page, errors } = await openPlayground(env.browser, env.url);
  const base = await heatmapPixels(page, 'weights');
  for (const score of ['dot', 'scaled_dot', 'general', 'additive', 'cosine', 'location']) {
    await page.selectOption('#score', score);
    assert.ok(await page.locator('[data-testid="compute-error"]').isHidden(), score);
    const px = await heatmapPixels(page, 'weights');
    if (score !== 'dot') assert.ok(differ(base, px), `${score} changes the weights`);
    const tip = await hoverCell(page, 'scores', 2, 3);
    assert.match(tip, /e₂₃ = -?−?\d/, `${score}: ${tip}`);
    assert.ok((await page.locator('[data-testid="formula-scores"] .katex').count()) > 0, 'equation rendered');
    await page.screenshot({ path: `${SHOTS}score-${score}.png` });
  }
  await page.selectOption('#score', 'dot');
  await page.selectOption('#mask', 'causal');
  assert.match(await hoverCell(page, 'scores', 1, 4), /−∞/);
  assert.match(await hoverCell(page, 'weights', 1, 4), /α₁₄ = 0\.0000/);
  assert.match(await hoverCell(page, 'weights', 0, 0), /α₀₀ = 1\.0000/);
  await page.selectOption('#mask', 'padding');
  await page.fill('#pad-length', '2');
  assert.match(await hoverCell(page, 'weights', 4, 2), /α₄₂ = 0\.0000/);
  assert.match(await hoverCell(page, 'weights', 4, 1), /α₄₁ = 0\.[1-9]/);
  await page.screenshot({ path: `${SHOTS}mask-padding.png` });
  await page.fill('#temperature', '0.2');
  assert.equal((await state(page)).temperature, 0.2);
  assert.match(await hoverCell(page, 'weights', 4, 1), /exp\(e \/ 0\.2\)/);
  assert.deepEqual(errors, []);
  await page.close();
});

test('tokens: rename, add, remove and reorder; drag a point in the projection', async () => {
  const { page, errors } = await openPlayground(env.browser, env.url);
  const labels = () => page.locator('[data-testid="figure-weights"] .hm-rows span').allTextContents();
  await page.fill('[data-testid="token-0"]', 'My');
  assert.equal((await labels())[0], 'My');
  await page.fill('[data-testid="token-1"]', 'bad<name');
  assert.equal(await page.getAttribute('[data-testid="token-1"]', 'aria-invalid'), '');
  assert.equal((await labels())[1], 'journey', 'an invalid name is not applied');
  await page.click('button[aria-label="Move token 0 down"]');
  assert.deepEqual((await labels()).slice(0, 2), ['journey', 'My']);
  await page.click('text=+ Token');
  assert.equal((await labels()).length, 7);
  assert.equal((await heatmapPixels(page)).width, 7);
  await page.click('button[aria-label="Remove token 6"]');
  await page.click('text=+ Dim');
  assert.equal((await state(page)).x[0].length, 4);
  await page.click('text=− Dim');

  const point = page.locator('[data-testid="point-2"] circle');
  await point.scrollIntoViewIfNeeded();
  const before0 = (await state(page)).x[2];
  const px = await heatmapPixels(page);
  const b = await point.boundingBox();
  await page.mouse.move(b.x + b.width / 2, b.y + b.height / 2);
  await page.mouse.down();
  await page.mouse.move(b.x - 60, b.y - 40, { steps: 5 });
  await page.mouse.up();
  const after1 = (await state(page)).x[2];
  assert.ok(after1[0] < before0[0] && after1[1] > before0[1], `dragged ${before0} -> ${after1}`);
  assert.equal(after1[2], before0[2], 'the third dimension is untouched');
  assert.ok(differ(px, await heatmapPixels(page)));
  await point.focus();
  await page.keyboard.press('ArrowRight');
  assert.equal((await state(page)).x[2][0], Math.round((after1[0] + 0.01) * 1e4) / 1e4);
  await fullScreenshot(page, `${SHOTS}edited-tokens.png`);
  assert.deepEqual(errors, []);
  await page.close();
});

test('self-attention mode: Q, K, V, trainable weights, heads; compare view with a difference map', async () => {
  const { page, errors } = await openPlayground(env.browser, env.url);
  await page.click('label[for="mode-self"]');
  for (const id of ['q', 'k', 'v', 'scores', 'weights', 'context', 'output']) {
    assert.ok(await page.locator(`[data-testid="heatmap-${id}"]`).isVisible(), id);
  }
  // without trainable weights and with dot scores Q = K = V = X: the tutorial's weights again
  await page.uncheck('#trainable');
  await page.selectOption('#score', 'dot');
  assert.match(await hoverCell(page, 'weights', 1, 5), /α₁₅ = 0\.2074/);
  assert.ok(await page.locator('#score option[value="general"]').isDisabled());
  await page.check('#trainable');
  assert.ok(await page.locator('[data-testid="grid-wq"]').isVisible());
  const q = await heatmapPixels(page, 'q');
  await page.click('#reroll-params');
  assert.ok(differ(q, await heatmapPixels(page, 'q')), 're-randomised Wq changes Q');
  await page.selectOption('#heads', '3');
  await page.selectOption('#head', '2');
  assert.match(await page.locator('.step-weights h3').textContent(), /head 2 of 3/);
  assert.match(await hoverCell(page, 'q', 0, 0), /Σₐ x₀ₐ Wqₐ,₁/);
  await page.selectOption('#mask', 'causal');
  assert.match(await hoverCell(page, 'weights', 0, 3), /α₀₃ = 0\.0000/);
  await fullScreenshot(page, `${SHOTS}self-attention.png`);

  await page.click('label[for="mode-attend"]');
  await page.selectOption('#mask', 'none');
  await page.selectOption('#compare', 'cosine');
  assert.ok(await page.locator('[data-testid="heatmap-diff"]').isVisible());
  assert.match(await hoverCell(page, 'diff', 1, 5), /Δα = α′ − α = .* = −?\d\.\d{4}/);
  const d = await heatmapPixels(page, 'diff');
  assert.equal(d.width, 6);
  await fullScreenshot(page, `${SHOTS}compare.png`);
  assert.deepEqual(errors, []);
  await page.close();
});

test('the link holds the whole state and reproduces it exactly', async () => {
  const { page, errors } = await openPlayground(env.browser, env.url);
  await page.selectOption('#score', 'additive');
  await page.fill('#hidden', '3');
  await page.press('#hidden', 'Enter');
  await (await gridCell(page, 'grid-Wq', 0, 1)).fill('0.77');
  await page.fill('[data-testid="token-3"]', 'along');
  await (await gridCell(page, 'grid-x', 2, 2)).fill('-0.35');
  await page.fill('#temperature', '0.6');
  await page.selectOption('#compare', 'general');
  await settle(page);
  const url = page.url();
  assert.match(url, /#ver=2&/);
  assert.match(url, /&score=additive(&|$)/, 'the link is readable: name=value fields');
  const s1 = await state(page);
  const px1 = await heatmapPixels(page, 'weights');

  const other = await openPlayground(env.browser, url);
  assert.deepEqual(await state(other.page), s1);
  assert.deepEqual(await heatmapPixels(other.page, 'weights'), px1);
  assert.ok(await other.page.locator('[data-testid="notice"]').isHidden());
  assert.equal(await other.page.locator('#score').inputValue(), 'additive');
  assert.deepEqual(other.errors, []);
  await other.page.close();
  assert.deepEqual(errors, []);
  await page.close();
});

test('JSON export and import round-trip the state; a bad file gives a clear error', async () => {
  const { page, errors } = await openPlayground(env.browser, env.url);
  await page.selectOption('#preset', 'random');
  await page.fill('#data-seed', '42');
  await page.press('#data-seed', 'Enter');
  await page.selectOption('#score', 'general');
  await (await gridCell(page, 'grid-W', 1, 1)).fill('1.5');
  const s1 = await state(page);
  const [dl] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid="export-json"]')]);
  const file = `${SHOTS}state.json`;
  await dl.saveAs(file);
  const json = JSON.parse(await readFile(file, 'utf8'));
  assert.equal(json.format, 'attnlab-playground');
  assert.equal(json.matrices.find((m) => m.name === 'weights').values.length, 8);

  const [csv] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid="export-csv"]')]);
  const csvText = await readFile(await csv.path(), 'utf8');
  assert.equal(csvText.split('\n')[0], 'matrix,head,row,col,row_label,col_label,value');
  assert.equal(csvText.trim().split('\n').length, 1 + 64 + 64 + 32);

  await page.selectOption('#preset', 'tutorial');
  assert.notDeepEqual(await state(page), s1);
  await page.setInputFiles('[data-testid="import-json"]', file);
  await page.waitForFunction(() => window.attnlab.state().preset === 'random');
  assert.deepEqual(await state(page), s1);

  const bad = `${SHOTS}bad-state.json`;
  await writeFile(bad, JSON.stringify({ ...json.state, tokens: Array(8).fill('x'.repeat(40)) }));
  await page.setInputFiles('[data-testid="import-json"]', bad);
  await page.waitForFunction(() => document.querySelector('[data-testid="notice"]').dataset.kind === 'error');
  assert.match(await noticeText(page), /Could not import “bad-state\.json”: “tokens” item 1 must be 1 to 24 characters/);
  assert.deepEqual(await state(page), s1, 'a rejected file changes nothing');
  await writeFile(bad, '{ not json');
  await page.setInputFiles('[data-testid="import-json"]', bad);
  await page.waitForFunction(() => /not JSON/.test(document.querySelector('[data-testid="notice"]').textContent));
  assert.deepEqual(errors, []);
  await page.close();
});

test('a malformed link keeps what it can and names each field it could not use', async () => {
  const defaults = await (async () => {
    const { page } = await openPlayground(env.browser, env.url);
    const s = await state(page);
    await page.close();
    return s;
  })();
  const cases = [
    ['#s=%%%', /link/, {}],
    ['#nonsense', /nonsense \(is not a setting\)/, {}],
    [`#s=${Buffer.from('{"version":1,"score":"magic"}').toString('base64url')}`, /score \(must be one of/, {}],
    [hashOf({ version: 1, tokens: ['a', 'b'], x: [[1, 2], [3]] }), /x \(must be 2 rows of 2 values\)/, { tokens: ['a', 'b'] }],
    [hashOf({ version: 1, temperature: -1 }), /temperature \(must be a number from 0\.05 to 20\)/, {}],
    [hashOf({ version: 1, tokens: Array(200).fill('t'), x: Array(200).fill([1]) }), /tokens \(must be a list of 1 to 128 items\)/, {}],
  ];
  for (const [hash, why, kept] of cases) {
    const { page, errors } = await openPlayground(env.browser, env.url + hash);
    const notice = page.locator('[data-testid="notice"]');
    assert.ok(await notice.isVisible(), `notice for ${hash.slice(0, 40)}`);
    assert.equal(await notice.getAttribute('role'), 'status');
    assert.match(await notice.textContent(), why);
    const s = await state(page);
    if (kept.tokens) assert.deepEqual(s.tokens, kept.tokens);
    else assert.deepEqual(s, defaults);
    if (hash === '#s=%%%') await page.screenshot({ path: `${SHOTS}malformed-link.png` });
    assert.deepEqual(errors, []);
    await page.close();
  }
});

test('a hostile link (script in a token name) runs nothing and loads the defaults', async () => {
  const payloads = ['<img src=x onerror="window.__pwned=1;alert(1)">', '<script>window.__pwned=1</script>', '"><svg onload=alert(1)>'];
  for (const name of payloads) {
    const hash = hashOf({ version: 1, tokens: [name, 'b'], x: [[1, 0], [0, 1]], px: 0, py: 1 });
    const { page, errors } = await openPlayground(env.browser, env.url + hash);
    let dialog = false;
    page.on('dialog', async (d) => { dialog = true; await d.dismiss(); });
    await settle(page);
    assert.ok(await page.locator('[data-testid="notice"]').isVisible());
    assert.match(await noticeText(page), /tokens \(item 1 may not contain < >/);
    assert.equal(await page.evaluate(() => window.__pwned), undefined);
    assert.equal(dialog, false);
    // the page's own scripts: its module, coi.js (the isolation service worker's registration) and embed-mode.js
    assert.equal(await page.locator('img, svg[onload], script:not([type="module"]):not([src="coi.js"]):not([src="embed-mode.js"])').count(), 0);
    assert.deepEqual((await state(page)).tokens, TOKENS);
    if (name.startsWith('<script')) await page.screenshot({ path: `${SHOTS}hostile-link.png` });
    assert.deepEqual(errors, []);
    await page.close();
  }
});

test('exports the heatmaps as a real PNG and SVG of the documented size', async () => {
  const { page, errors } = await openPlayground(env.browser, env.url);
  const [svgDl] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid="export-weights-svg"]')]);
  const svg = await readFile(await svgDl.path(), 'utf8');
  assert.match(svg, /^<svg xmlns="http:\/\/www.w3.org\/2000\/svg" width="365" height="439"/);
  assert.equal((svg.match(/<rect x=/g) || []).length, 36 + 1);
  const [pngDl] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid="export-weights-png"]')]);
  assert.equal(pngDl.suggestedFilename(), 'attnlab-weights.png');
  const png = await readFile(await pngDl.path());
  await readFile(await pngDl.path()).then((b) => import('node:fs/promises').then((fs) => fs.writeFile(`${SHOTS}export-weights.png`, b)));
  assert.deepEqual([...png.subarray(0, 8)], [137, 80, 78, 71, 13, 10, 26, 10], 'PNG signature');
  assert.equal(png.subarray(12, 16).toString('latin1'), 'IHDR');
  // figure 365 x 439 CSS px (exporter.figureLayout for 6 x 6 tutorial labels), drawn at 2x
  assert.equal(png.readUInt32BE(16), 730);
  assert.equal(png.readUInt32BE(20), 878);
  // decoded in the page from its bytes (the page's CSP allows no fetch of data: URLs)
  const decoded = await page.evaluate(async (bytes) => {
    const bitmap = await createImageBitmap(new Blob([new Uint8Array(bytes)], { type: 'image/png' }));
    const c = new OffscreenCanvas(bitmap.width, bitmap.height);
    const ctx = c.getContext('2d');
    ctx.drawImage(bitmap, 0, 0);
    const colours = new Set();
    const d = ctx.getImageData(0, 0, c.width, c.height).data;
    for (let p = 0; p < d.length; p += 4 * 97) colours.add(`${d[p]},${d[p + 1]},${d[p + 2]}`);
    return { width: bitmap.width, height: bitmap.height, colours: colours.size };
  }, [...png]);
  assert.deepEqual([decoded.width, decoded.height], [730, 878]);
  assert.ok(decoded.colours > 10, `the PNG has ${decoded.colours} colours`);
  assert.deepEqual(errors, []);
  await page.close();
});

test('the long preset (64 tokens x 64 dims) stays live and fits a phone', async () => {
  const { page, errors } = await openPlayground(env.browser, env.url, { width: 390, height: 844 });
  await page.selectOption('#preset', 'long');
  assert.equal((await heatmapPixels(page)).width, 64);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `page scrolls sideways by ${overflow}px`);
  await fullScreenshot(page, `${SHOTS}long-phone.png`);
  await page.setViewportSize({ width: 1440, height: 900 });
  await page.screenshot({ path: `${SHOTS}long-laptop.png` });
  assert.deepEqual(errors, []);
  await page.close();
});

test('dist/ from the build runs under a sub-path of a plain static host', async () => {
  const { execFileSync } = await import('node:child_process');
  const site = `${SHOTS}site/`;
  execFileSync(process.execPath, [new URL('../../scripts/build.mjs', import.meta.url).pathname, '--out', `${site}some/sub/path`], { stdio: 'pipe' });
  // each page preloads its module and that module's chunks (relative links, fetched at once)
  const { readFileSync, existsSync } = await import('node:fs');
  for (const [page, main] of [['index.html', 'playground/main.js'], ['lab.html', 'lab/main.js'], ['learn.html', 'learn/main.js']]) {
    const preloads = [...readFileSync(`${site}some/sub/path/${page}`, 'utf8').matchAll(/<link rel="modulepreload" href="([^"]+)">/g)].map((m) => m[1]);
    assert.equal(preloads[0], main, `${page} preloads its module first`);
    assert.ok(preloads.length > 1 && preloads.every((href) => !href.startsWith('/') && existsSync(`${site}some/sub/path/${href}`)), `${page}: ${preloads.join(' ')}`);
  }
  const hosted = await startBrowser({ root: site });
  try {
    const { page, errors } = await openPlayground(hosted.browser, `${hosted.url}some/sub/path/`);
    assert.equal((await heatmapPixels(page)).width, 6);
    assert.match(await hoverCell(page, 'weights', 1, 0), /α₁₀ = 0\.1435/);
    assert.ok((await page.locator('[data-testid="formula-weights"] .katex').count()) > 0);
    assert.deepEqual(errors, []);
    await page.close();
  } finally {
    await hosted.close();
  }
});

test('continuous edits write the link once they pause, not after every edit (encoding 64 × 64 values is slow)', async () => {
  const { page, errors } = await openPlayground(env.browser, `${env.url}#ver=2&preset=long`);
  await gridCell(page, 'grid-x', 2, 1);
  const r = await page.evaluate(async () => {
    let writes = 0;
    const replace = history.replaceState.bind(history);
    history.replaceState = (...args) => { writes++; return replace(...args); };
    const input = document.querySelector('[data-testid="grid-x"] input[data-i="2"][data-j="1"]');
    for (let k = 0; k < 30; k++) {
      await new Promise((ok) => requestAnimationFrame(() => {
        input.value = String(0.5 + k / 100);
        input.dispatchEvent(new Event('input', { bubbles: true }));
        setTimeout(ok, 60);
      }));
    }
    const during = writes;
    await new Promise((ok) => setTimeout(ok, 1200));
    return { during, after: writes, hash: location.hash };
  });
  // an edit every ~60 ms (a held arrow key): before, the link was re-encoded in the idle time after each
  assert.ok(r.during <= 5, `${r.during} link writes during 30 edits`);
  assert.ok(r.after > r.during, 'the link is written once the edits pause');
  assert.match(r.hash, /0\.79/, 'with the last value');
  assert.deepEqual(errors, []);
  await page.close();
});

test('an edit reads no layout back while it redraws (a read then forces a layout per heatmap mid-redraw)', async () => {
  const { page, errors } = await openPlayground(env.browser, `${env.url}#ver=2&preset=long`);
  await gridCell(page, 'grid-x', 2, 1);
  const r = await page.evaluate(async () => {
    const reads = {};
    const spied = [];
    for (const [proto, names] of [[Element.prototype, ['clientWidth', 'clientHeight', 'scrollWidth', 'scrollHeight']],
      [HTMLElement.prototype, ['offsetWidth', 'offsetHeight']]]) {
      for (const name of names) {
        const d = Object.getOwnPropertyDescriptor(proto, name);
        Object.defineProperty(proto, name, { ...d, get() { reads[name] = (reads[name] ?? 0) + 1; return d.get.call(this); } });
        spied.push([proto, name, d]);
      }
    }
    const input = document.querySelector('[data-testid="grid-x"] input[data-i="2"][data-j="1"]');
    const canvas = document.querySelector('[data-testid="heatmap-weights"]');
    const before = canvas.getContext('2d').getImageData(0, 0, 64, 64).data.join();
    for (let k = 0; k < 10; k++) {
      input.value = String(1.5 + k / 10);
      input.dispatchEvent(new Event('input', { bubbles: true }));
    }
    const changed = canvas.getContext('2d').getImageData(0, 0, 64, 64).data.join() !== before;
    for (const [proto, name, d] of spied) Object.defineProperty(proto, name, d);
    return { reads, changed };
  });
  assert.ok(r.changed, 'the edits redrew the weights');
  assert.deepEqual(r.reads, {}, `layout read during 10 edits: ${JSON.stringify(r.reads)}`);
  assert.deepEqual(errors, []);
  await page.close();
});
