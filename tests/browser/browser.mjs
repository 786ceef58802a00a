// Shared set-up for browser tests: the static server in-process and Debian's
// Chromium driven by playwright-core (never a downloaded browser), plus helpers
// that act on the page through its stable hooks:
//   data-testid="heatmap-<step>"  canvases (scores, weights, context, q, k, v, compare, diff)
//   data-testid="figure-<step>"   the figure around one (labels in .hm-rows / .hm-cols spans)
//   data-testid="readout-<step>"  aria-live readout of the focused cell
//   data-testid="formula-<step>"  the step's KaTeX equation
//   data-testid="export-<step>-png|svg", "export-json", "export-csv", "import-json"
//   data-testid="tooltip", "notice" (role=status), "compute-error",
//   "grid-x" / "grid-<param>" (a canvas grid: its one input carries the active cell's data-i/data-j; gridCell clicks a cell),
//   "token-<i>" (name inputs), "point-<i>" (projection points), "projection"
//   ids: #preset #data-seed #score #normalize #temperature #mask #pad-length #compare
//        #trainable #heads #head #param-seed #reroll-params; mode: label[for=mode-attend|mode-self]
//   body[data-ready="true"] once the engine has drawn the first state.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { serve } from '../../scripts/serve.mjs';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const SHOTS = fileURLToPath(new URL('../../test-results/browser/', import.meta.url));
/** The two viewports every page is checked at: a laptop and a phone. */
export const DESKTOP = { width: 1440, height: 900 };
export const PHONE = { width: 390, height: 844 };
/** axe-core's source, to inject into a page for an accessibility audit. */
export const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/**
 * Serious and critical axe-core violations on the page as it is now. On Learn, `chapters`
 * (ids, as in data-testid="chapter-<id>") audits those chapters and the page around them,
 * not the other chapters: for the state a test left in its chapter, since the whole page
 * as loaded has its own audit (tests/browser/learn.test.mjs) and one of all nine chapters
 * takes several times as long.
 */
export async function axeViolations(page, { chapters = null } = {}) {
  if (!(await page.evaluate(() => typeof window.axe === 'object'))) await page.evaluate(AXE);
  const result = await page.evaluate((keep) => {
    const others = keep && [...document.querySelectorAll('[data-testid^="chapter-"]')]
      .filter((c) => !keep.includes(c.dataset.testid.slice('chapter-'.length)));
    return window.axe.run(others ? { include: [['body']], exclude: others.map((c) => [`[data-testid="${c.dataset.testid}"]`]) } : document,
      { resultTypes: ['violations'] });
  }, chapters);
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).slice(0, 3).join(', ')}`);
}

/**
 * The Chromium to drive: $CHROME_PATH if set, else the first of chromium,
 * chromium-browser, google-chrome found on PATH. Throws a clear error if none.
 */
export function findChrome(env = process.env) {
  if (env.CHROME_PATH) {
    if (!existsSync(env.CHROME_PATH)) throw new Error(`CHROME_PATH=${env.CHROME_PATH} does not exist`);
    return env.CHROME_PATH;
  }
  for (const name of ['chromium', 'chromium-browser', 'google-chrome']) {
    for (const dir of (env.PATH ?? '').split(delimiter)) {
      if (dir && existsSync(join(dir, name))) return join(dir, name);
    }
  }
  throw new Error('no Chromium found: set CHROME_PATH, or put chromium, chromium-browser or google-chrome on PATH (bash scripts/setup.sh --browser installs it)');
}
export const FLAGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
  '--disable-component-update', '--no-first-run', '--disable-sync', '--disable-quic',
];

/** The page imports its formulas and d3 from web/vendor/ (generated): make it on a fresh clone or after tex.js changed. */
export function ensureVendor() {
  const made = ['katex/katex.min.css', 'colortables.js', 'formulas.js', 'formulas.css'].every((f) => existsSync(`${ROOT}web/vendor/${f}`));
  if (!made || statSync(`${ROOT}web/playground/tex.js`).mtimeMs > statSync(`${ROOT}web/vendor/formulas.js`).mtimeMs) {
    execFileSync(process.execPath, [`${ROOT}scripts/vendor.mjs`], { stdio: 'inherit' });
  }
}

/** Starts the server (root: web/ unless given) and the browser; returns { url, browser, close }. */
export async function startBrowser({ root } = {}) {
  ensureVendor();
  await mkdir(SHOTS, { recursive: true });
  const { server, url } = await serve({ port: 0, ...(root ? { root } : {}) });
  const browser = await chromium.launch({ executablePath: findChrome(), args: FLAGS });
  return {
    url,
    browser,
    async close() {
      await browser.close();
      await new Promise((ok) => server.close(ok));
    },
  };
}

/** A new page that records console errors and uncaught page errors. */
export async function openPage(browser, url, viewport = { width: 1280, height: 900 }) {
  const page = await browser.newPage({ viewport, acceptDownloads: true });
  // waits are for a state, not a speed: a machine busy with other jobs gets a minute, not Playwright's 30 s
  page.setDefaultTimeout(60000);
  const errors = [];
  page.on('console', (msg) => { if (msg.type() === 'error') errors.push(msg.text()); });
  page.on('pageerror', (err) => errors.push(String(err)));
  await page.goto(url);
  return { page, errors };
}

/**
 * Learn's chapters 7 and 8 compute their quoted figures when a reader nears them: scrolls
 * there, waits until they are in (failing if they could not be computed), then back to the top.
 */
export async function learnFigures(page) {
  // (a test may have been there already: then they are under way or in, and the note hidden)
  if (await page.getAttribute('#ch-kinds', 'data-figures') === 'pending') await page.locator('#ch-kinds .figures-note').scrollIntoViewIfNeeded();
  await page.waitForSelector('#ch-images[data-figures=ready], #ch-images[data-figures=error]', { timeout: 90000 });
  const state = await page.getAttribute('#ch-images', 'data-figures');
  if (state !== 'ready') throw new Error(`chapters 7 and 8: ${await page.textContent('#ch-images .figures-note')}`);
  await page.evaluate(() => scrollTo(0, 0));
}

/**
 * Opens the lab at `hash` in the browser `startBrowser` gave (`env`) and waits
 * until it is ready: the model changes under way done and, in the Transformer
 * family, its heads drawn. Waits get 90 s: the machine may be busy, and a worker
 * answer taking seconds is not a failure.
 */
export async function openLab(env, hash, viewport = DESKTOP) {
  const opened = await openPage(env.browser, `${env.url}lab.html${hash}`, viewport);
  opened.page.setDefaultTimeout(90000);
  await opened.page.waitForSelector('body[data-ready=true]');
  await opened.page.evaluate(() => window.attnlabLab.settled());
  await opened.page.waitForFunction(() => window.attnlabLab.state.task !== 'transformer' ||
    document.querySelector('[data-testid^="tf-head-"]'));
  return opened;
}

/**
 * The lab: trains with the Train button until `n` steps are done (or the run stops by itself at its
 * length), then pauses and waits for the worker and the redraw.
 */
export async function trainLab(page, n) {
  await page.click('#play');
  await page.waitForFunction((k) => window.attnlabLab.session.steps >= k || !window.attnlabLab.session.playing, n, { timeout: 60000, polling: 50 });
  if (await page.evaluate(() => window.attnlabLab.session.playing)) await page.click('#play');
  await page.waitForFunction(() => !window.attnlabLab.session.playing);
  await page.evaluate(() => window.attnlabLab.session.busy);
}

/**
 * The lab (Transformer family, a fresh model): plays until a layer-1 head's induction score
 * reaches `induction` and the test accuracy `accuracy`, or `steps` + 200 steps pass, or the run
 * stops by itself at its length, then pauses (`playing`: the run is under way already, as Train
 * from scratch starts it). Returns the run as it stood when that was first seen ({ steps, accuracy, best })
 * and the wall seconds it took (the chunks after it, before the pause lands, may move the
 * accuracy of the 64 test sequences by a tenth either way).
 */
export async function trainToInduction(page, { induction, accuracy, steps, playing = false }, timeout = 300000) {
  const t0 = Date.now();
  if (!playing) await page.click('#play');
  const seen = await (await page.waitForFunction(({ induction, accuracy, steps }) => {
    const s = window.attnlabLab.session;
    const last = s.scores.at(-1);
    const best = last ? Math.max(...last.heads[1].map((h) => h.induction)) : 0;
    const acc = s.accuracy.at(-1)?.value ?? 0;
    // the run stops by itself at its length (the defaults' steps)
    return (best >= induction && acc >= accuracy) || s.steps >= steps + 200 || !s.playing ? { steps: s.steps, accuracy: acc, best } : false;
  }, { induction, accuracy, steps }, { timeout, polling: 100 })).jsonValue();
  const seconds = (Date.now() - t0) / 1000;
  if (await page.evaluate(() => window.attnlabLab.session.playing)) await page.click('#play');
  await page.waitForFunction(() => !window.attnlabLab.session.playing);
  await page.evaluate(() => window.attnlabLab.session.busy);
  return { ...seen, seconds };
}

/** Opens the playground and waits until the first state is drawn. */
export async function openPlayground(browser, url, viewport) {
  const r = await openPage(browser, url, viewport);
  await r.page.waitForSelector('body[data-ready="true"]', { timeout: 20000 });
  return r;
}

/** The RGBA bytes of a heatmap canvas (one pixel per cell) and its size. */
export function heatmapPixels(page, step = 'weights') {
  return page.evaluate((id) => {
    const c = document.querySelector(`[data-testid="heatmap-${id}"]`);
    return { width: c.width, height: c.height, data: Array.from(c.getContext('2d').getImageData(0, 0, c.width, c.height).data) };
  }, step);
}

/** Hovers cell (i, j) of a heatmap and returns the tooltip's text. */
export async function hoverCell(page, step, i, j) {
  const canvas = page.locator(`[data-testid="heatmap-${step}"]`);
  // centred, so no sticky bar (the playground's controls) lies over the cell
  await canvas.evaluate((c) => c.scrollIntoView({ block: 'center', inline: 'center' }));
  const box = await canvas.boundingBox();
  const size = await canvas.evaluate((c) => ({ rows: c.height, cols: c.width }));
  await page.mouse.move(box.x + ((j + 0.5) / size.cols) * box.width, box.y + ((i + 0.5) / size.rows) * box.height);
  return page.locator('[data-testid="tooltip"]').textContent();
}

/**
 * Clicks cell (i, j) of the matrix grid data-testid=`id` as a user would (the grid scrolled so the
 * cell is in view, then a click on the cell drawn there) and returns the locator of the grid's input,
 * which then edits that cell.
 */
export async function gridCell(page, id, i, j) {
  const grid = page.locator(`[data-testid="${id}"]`);
  await grid.evaluate((g, [r, c]) => {
    const wrap = g.parentElement;
    const css = getComputedStyle(g);
    const [rowH, colW, headW] = ['--row-h', '--col-w', '--head-w'].map((v) => parseFloat(css.getPropertyValue(v)));
    wrap.scrollIntoView({ block: 'center', inline: 'center' });
    wrap.scrollTop = Math.max(0, (r + 1) * rowH - (wrap.clientHeight + rowH) / 2);
    wrap.scrollLeft = Math.max(0, c * colW - (wrap.clientWidth - headW - colW) / 2);
  }, [i, j]);
  await page.evaluate(() => new Promise((ok) => requestAnimationFrame(() => requestAnimationFrame(ok))));
  const at = await grid.evaluate((g, [r, c]) => {
    const wrap = g.parentElement;
    const css = getComputedStyle(g);
    const [rowH, colW, headW] = ['--row-h', '--col-w', '--head-w'].map((v) => parseFloat(css.getPropertyValue(v)));
    const b = wrap.getBoundingClientRect();
    return { x: b.left + wrap.clientLeft + headW + (c + 0.5) * colW - wrap.scrollLeft, y: b.top + wrap.clientTop + (r + 1.5) * rowH - wrap.scrollTop };
  }, [i, j]);
  await page.mouse.click(at.x, at.y);
  const input = grid.locator(`input[data-i="${i}"][data-j="${j}"]`);
  await input.waitFor();
  return input;
}

/** A link hash holding `obj` as the page encodes state (base64url JSON). */
/**
 * Draws with the drawing canvas's keyboard pen (the focused canvas; the pen
 * starts in the middle): up and left into the top-left quarter, pen down, a
 * stroke right and down, pen up.
 */
export async function keyboardStroke(page) {
  for (let k = 0; k < 5; k++) await page.keyboard.press('Shift+ArrowUp');
  for (let k = 0; k < 4; k++) await page.keyboard.press('Shift+ArrowLeft');
  await page.keyboard.press('Space');
  for (let k = 0; k < 12; k++) await page.keyboard.press('ArrowRight');
  for (let k = 0; k < 12; k++) await page.keyboard.press('ArrowDown');
  await page.keyboard.press('Space');
}

export const hashOf = (obj) => `#s=${Buffer.from(JSON.stringify(obj)).toString('base64url')}`;

/**
 * A screenshot of the whole page with every part drawn: the viewport is first made as tall as the
 * page, since cards out of view skip rendering (content-visibility: auto) and a plain full-page
 * capture would show them blank. The viewport is restored afterwards.
 */
export async function fullScreenshot(page, path) {
  const vp = page.viewportSize();
  const height = await page.evaluate(() => document.documentElement.scrollHeight);
  await page.setViewportSize({ width: vp.width, height: Math.min(height, 16000) });
  await page.evaluate(() => new Promise((ok) => requestAnimationFrame(() => requestAnimationFrame(ok))));
  await page.screenshot({ path, fullPage: true });
  await page.setViewportSize(vp);
}
