// The matrix grid (web/ui/grid.js) as a user meets it in the playground: every cell
// drawn as a number on one canvas, one input that edits the clicked cell, the keys of a
// spreadsheet, a clear error for a value that is not one, an accessible structure, and a
// 64 × 64 grid scrolled under frozen headers at a laptop's and a phone's size.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { DESKTOP, PHONE, SHOTS, axeViolations, gridCell, heatmapPixels, openPlayground, startBrowser } from './browser.mjs';

let env;
before(async () => { env = await startBrowser(); });
after(async () => { await env?.close(); });

const state = (page) => page.evaluate(() => window.attnlab.state());
const active = (page) => page.evaluate(() => {
  const a = document.activeElement;
  return a.classList.contains('mx-cell') ? `${a.dataset.i},${a.dataset.j}` : `left: ${a.tagName}`;
});
const frame = (page) => page.evaluate(() => new Promise((ok) => requestAnimationFrame(() => requestAnimationFrame(ok))));

/** Per cell in view, the number of dark (text) pixels the canvas shows inside that cell's box. */
function inkPerCell(page, id) {
  return page.locator(`[data-testid="${id}"]`).evaluate((g) => {
    const wrap = g.parentElement;
    const canvas = wrap.querySelector('canvas.mx-canvas');
    const css = getComputedStyle(g);
    const [rowH, colW, headW] = ['--row-h', '--col-w', '--head-w'].map((v) => parseFloat(css.getPropertyValue(v)));
    const dpr = canvas.width / canvas.clientWidth;
    const ctx = canvas.getContext('2d');
    const rows = Number(g.getAttribute('aria-rowcount')) - 1;
    const cols = Number(g.getAttribute('aria-colcount')) - 1;
    const out = [];
    for (let i = 0; i < rows; i++) {
      const row = [];
      for (let j = 0; j < cols; j++) {
        const x = headW + j * colW - wrap.scrollLeft + 4;
        const y = rowH + i * rowH - wrap.scrollTop + 6;
        if (x < headW || y < rowH || x + colW - 8 > canvas.clientWidth || y + rowH - 12 > canvas.clientHeight) { row.push(null); continue; }
        const px = ctx.getImageData(Math.round(x * dpr), Math.round(y * dpr), Math.round((colW - 8) * dpr), Math.round((rowH - 12) * dpr)).data;
        let ink = 0;
        for (let k = 0; k < px.length; k += 4) if (px[k] + px[k + 1] + px[k + 2] < 3 * 110) ink++;
        row.push(ink);
      }
      out.push(row);
    }
    return out;
  });
}

test('the grid is one canvas and one input; every cell is drawn as a number, and an edit shows once the input moves on', async () => {
  const { page, errors } = await openPlayground(env.browser, env.url, DESKTOP);
  assert.equal(await page.locator('[data-testid="grid-x"] input').count(), 1);
  assert.equal(await page.locator('.tokens-card canvas.mx-canvas').getAttribute('aria-hidden'), 'true');
  const before0 = await inkPerCell(page, 'grid-x');
  assert.equal(before0.length, 6);
  for (const row of before0) for (const ink of row) assert.ok(ink > 8, `every cell shows a number: ${JSON.stringify(before0)}`);
  const cell = await gridCell(page, 'grid-x', 2, 1);
  await cell.fill('-0.125');
  await page.keyboard.press('Enter');
  await frame(page);
  const after1 = await inkPerCell(page, 'grid-x');
  for (let i = 0; i < 6; i++) {
    for (let j = 0; j < 3; j++) {
      if (i === 2 && j === 1) assert.ok(after1[i][j] > before0[i][j], `the edited cell shows the longer number: ${before0[i][j]} → ${after1[i][j]}`);
      else if (i !== 3 || j !== 1) assert.equal(after1[i][j], before0[i][j], `cell ${i},${j} unchanged`); // (3, 1) holds the input now
    }
  }
  assert.deepEqual(errors, []);
  await page.close();
});

test('clicking a cell edits it in the input, labelled by row and column; a typed value reflows the heatmaps exactly as the same state opened from its link', async () => {
  const { page, errors } = await openPlayground(env.browser, env.url, DESKTOP);
  const before0 = await heatmapPixels(page, 'weights');
  const cell = await gridCell(page, 'grid-x', 2, 1);
  assert.equal(await active(page), '2,1');
  assert.equal(await cell.getAttribute('aria-label'), 'token 2 (starts), dim 2');
  assert.equal(await cell.inputValue(), String((await state(page)).x[2][1]));
  await page.keyboard.type('0.5'); // the value was selected: typing replaces it
  assert.equal((await state(page)).x[2][1], 0.5, 'applied as it is typed');
  const px = await heatmapPixels(page, 'weights');
  assert.ok(px.data.some((v, k) => v !== before0.data[k]), 'the heatmap changed');
  await page.keyboard.press('Enter');
  await page.evaluate(() => new Promise((ok) => setTimeout(ok, 800)));
  const other = await openPlayground(env.browser, page.url(), DESKTOP);
  assert.equal((await state(other.page)).x[2][1], 0.5);
  assert.deepEqual(await heatmapPixels(other.page, 'weights'), px);
  await other.page.close();
  // a parameter grid: the same component
  await page.selectOption('#score', 'general');
  const w = await gridCell(page, 'grid-W', 1, 2);
  assert.equal(await w.getAttribute('aria-label'), 'row 2, c3');
  await w.fill('1.5');
  assert.equal((await state(page)).W[1][2], 1.5);
  assert.deepEqual(errors, []);
  await page.close();
});

test('keys: arrows, Tab, Enter, Home/End and PageDown move between cells; typing edits; Escape restores; F2 edits in place; Tab leaves after the last cell', async () => {
  const { page, errors } = await openPlayground(env.browser, env.url, DESKTOP);
  await gridCell(page, 'grid-x', 0, 0);
  const walk = [['ArrowRight', '0,1'], ['ArrowDown', '1,1'], ['ArrowLeft', '1,0'], ['ArrowUp', '0,0'], ['ArrowUp', '0,0'],
    ['Tab', '0,1'], ['Shift+Tab', '0,0'], ['Enter', '1,0'], ['Shift+Enter', '0,0'], ['End', '0,2'], ['Home', '0,0'],
    ['Control+End', '5,2'], ['Control+Home', '0,0'], ['PageDown', '5,0'], ['Tab', '5,1']];
  for (const [key, to] of walk) {
    await page.keyboard.press(key);
    assert.equal(await active(page), to, `after ${key}`);
  }
  const was = (await state(page)).x[5][1];
  await page.keyboard.type('7');
  assert.equal((await state(page)).x[5][1], 7, 'typing replaces the value');
  await page.keyboard.press('Escape');
  assert.equal((await state(page)).x[5][1], was, 'Escape restores the value before the edit');
  assert.equal(await page.locator('[data-testid="grid-x"] input').inputValue(), String(was));
  assert.equal(await active(page), '5,1');
  // F2 edits in place: ← moves the caret, not the cell; the typed digit lands before the last character
  await page.keyboard.press('F2');
  await page.keyboard.press('ArrowLeft');
  assert.equal(await active(page), '5,1');
  await page.keyboard.type('9');
  const text = String(was);
  assert.equal((await state(page)).x[5][1], Number(`${text.slice(0, -1)}9${text.slice(-1)}`));
  await page.keyboard.press('ArrowUp');
  assert.equal(await active(page), '4,1', '↑ commits and moves');
  assert.equal((await state(page)).x[5][1], Number(`${text.slice(0, -1)}9${text.slice(-1)}`), 'the edit stays');
  await page.keyboard.press('Control+End');
  await page.keyboard.press('Tab');
  assert.match(await active(page), /^left: /, 'Tab after the last cell leaves the grid');
  assert.deepEqual(errors, []);
  await page.close();
});

test('a value that is not a number ("abc", "1e40", nothing) gets a clear error, and the cell keeps its previous value', async () => {
  const { page, errors } = await openPlayground(env.browser, env.url, DESKTOP);
  const cell = await gridCell(page, 'grid-x', 1, 2);
  const was = (await state(page)).x[1][2];
  const px = await heatmapPixels(page, 'weights');
  for (const [typed, reason] of [['abc', /“abc” is not a number/], ['1e40', /1e40 is outside −1000 … 1000/], ['', /an empty cell is not a number/]]) {
    await cell.fill(typed);
    assert.equal(await cell.getAttribute('aria-invalid'), 'true');
    const message = await page.locator('#grid-x-error').textContent();
    assert.match(message, reason);
    assert.match(message, new RegExp(`the cell keeps ${String(was).replace('.', '\\.')}$`));
    assert.equal(await cell.getAttribute('title'), message);
    assert.equal((await state(page)).x[1][2], was, 'the state keeps the previous value');
    assert.deepEqual(await heatmapPixels(page, 'weights'), px, 'nothing recomputed');
    assert.deepEqual(await axeViolations(page), [], 'the error state is accessible');
    await page.keyboard.press('Enter');
    assert.equal(await active(page), '2,2');
    await page.keyboard.press('ArrowUp');
    assert.equal(await cell.inputValue(), String(was), 'the cell shows its previous value again');
    assert.equal(await cell.getAttribute('aria-invalid'), null);
  }
  assert.deepEqual(errors, []);
  await page.close();
});

test('screen readers: role=grid with row and column counts; the input sits in a row and gridcell with their indices', async () => {
  const { page, errors } = await openPlayground(env.browser, env.url, DESKTOP);
  const grid = page.locator('[data-testid="grid-x"]');
  assert.equal(await grid.getAttribute('role'), 'grid');
  assert.equal(await grid.getAttribute('aria-label'), 'Token embeddings');
  assert.equal(await grid.getAttribute('aria-rowcount'), '7');
  assert.equal(await grid.getAttribute('aria-colcount'), '4');
  const cell = await gridCell(page, 'grid-x', 3, 2);
  const where = await cell.evaluate((input) => ({
    row: input.closest('[role=row]').getAttribute('aria-rowindex'),
    col: input.closest('[role=gridcell]').getAttribute('aria-colindex'),
    grid: input.closest('[role=grid]').dataset.testid,
  }));
  assert.deepEqual(where, { row: '5', col: '4', grid: 'grid-x' });
  assert.equal(await cell.getAttribute('aria-label'), 'token 3 (with), dim 3');
  // the accessible name as the browser computes it
  const cdp = await page.context().newCDPSession(page);
  const { nodes } = await cdp.send('Accessibility.getPartialAXTree', { backendNodeId: (await cdp.send('DOM.describeNode', { objectId: (await cdp.send('Runtime.evaluate', { expression: 'document.activeElement' })).result.objectId })).node.backendNodeId, fetchRelatives: false });
  assert.equal(nodes[0].name.value, 'token 3 (with), dim 3');
  assert.deepEqual(await axeViolations(page), [], 'while editing');
  assert.deepEqual(errors, []);
  await page.close();
});

for (const vp of [DESKTOP, PHONE]) {
  test(`64 × 64 at ${vp.width}×${vp.height}: the canvas fills the grid's view, cells scroll under frozen headers, the last cell is reached by mouse`, async () => {
    const { page, errors } = await openPlayground(env.browser, `${env.url}#ver=2&preset=long`, vp);
    const sizes = await page.locator('[data-testid="grid-x"]').evaluate((g) => {
      const wrap = g.parentElement;
      const c = wrap.querySelector('canvas.mx-canvas');
      return { cw: c.clientWidth, ch: c.clientHeight, w: wrap.clientWidth, h: wrap.clientHeight };
    });
    assert.deepEqual([sizes.cw, sizes.ch], [sizes.w, sizes.h], 'the canvas is the grid\'s view');
    assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), 'no sideways scroll of the page');
    const cell = await gridCell(page, 'grid-x', 63, 63);
    assert.equal(await cell.getAttribute('aria-label'), 'token 63 (w64), dim 64');
    await cell.fill('0.5');
    assert.equal((await state(page)).x[63][63], 0.5);
    // the row's name and buttons stand beside it, inside the grid's view
    const name = await page.locator('[data-testid="token-63"]').boundingBox();
    const box = await cell.boundingBox();
    assert.ok(Math.abs((name.y + name.height / 2) - (box.y + box.height / 2)) <= 2, `name at ${name.y}, cell at ${box.y}`);
    const ink = await inkPerCell(page, 'grid-x');
    const shown = ink.flat().filter((v) => v !== null);
    assert.ok(shown.length >= 6, `${shown.length} cells in view`);
    assert.ok(shown.every((v) => v > 8), 'every cell in view shows a number');
    const wrap = await page.locator('[data-testid="grid-x"]').evaluate((g) => g.parentElement.getBoundingClientRect().toJSON());
    await page.screenshot({ path: `${SHOTS}grid-64x64-${vp.width}x${vp.height}.png`, clip: { x: wrap.x, y: wrap.y, width: wrap.width, height: wrap.height } });
    assert.deepEqual(errors, []);
    await page.close();
  });
}

test('a high-density screen gets a canvas at device pixels (crisp numbers)', async () => {
  const page = await env.browser.newPage({ viewport: DESKTOP, deviceScaleFactor: 2 });
  await page.goto(env.url);
  await page.waitForSelector('body[data-ready="true"]');
  const r = await page.locator('.tokens-card canvas.mx-canvas').evaluate((c) => ({ w: c.width, cw: c.clientWidth }));
  assert.equal(r.w, 2 * r.cw);
  await page.close();
});
