// The playground as a new learner meets it, at a laptop's and a phone's size, by
// mouse and by keyboard: a dragged point and its row of weights on screen together,
// no control bar over a figure, skip links that reach a heatmap in a few Tabs, a
// description that follows every edit, self-attention compared like with like (its
// own heads' Q and K under the second score, checked against a computation here), and
// one symbol per meaning (h heads, m a head's index, dₐ the additive hidden size).
// Every state visited is audited with axe-core; screenshots go to test-results/browser/.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { DESKTOP, PHONE, SHOTS, axeViolations, gridCell, openPlayground, startBrowser } from './browser.mjs';
import { defaults, fixup } from '../../web/playground/state.js';
import { allTex, formulaKey, texParts } from '../../web/playground/tex.js';

let env;
before(async () => { env = await startBrowser(); });
after(async () => { await env?.close(); });

const state = (page) => page.evaluate(() => window.attnlab.state());
const about = (page) => page.locator('#preset-about').textContent();
const frames = (page) => page.evaluate(() => new Promise((ok) => requestAnimationFrame(() => requestAnimationFrame(ok))));

async function clean(page, where) {
  assert.deepEqual(await axeViolations(page), [], `axe: ${where}`);
}

/**
 * Where row i of a heatmap is on screen, and whether a click at its centre would reach the
 * figure (nothing drawn over it): { top, bottom, inView, reachable, outlined }.
 */
function rowOnScreen(page, step, i) {
  return page.evaluate(([id, row]) => {
    const canvas = document.querySelector(`[data-testid="heatmap-${id}"]`);
    const b = canvas.getBoundingClientRect();
    const h = b.height / canvas.height;
    const top = b.top + row * h;
    const probes = [0.25, 0.5, 0.75].map((f) => document.elementFromPoint(b.left + f * b.width, top + h / 2));
    const hl = canvas.closest('figure').querySelector('.hm-row-hl');
    const hb = hl.getBoundingClientRect();
    return {
      top, bottom: top + h, inView: top >= 0 && top + h <= innerHeight,
      reachable: probes.every((p) => p !== null && p.closest(`[data-testid="figure-${id}"]`) !== null),
      outlined: !hl.hidden && Math.abs(hb.top - top) < 2 && Math.abs(hb.height - h) < 2,
    };
  }, [step, i]);
}

for (const [preset, hash] of [['tutorial', ''], ['random vectors', '#ver=2&preset=random'], ['self-attention', '#ver=2&preset=self']]) {
  test(`laptop, ${preset}: while a point is dragged its row of weights is on screen, outlined and uncovered`, async () => {
    const { page, errors } = await openPlayground(env.browser, env.url + hash, DESKTOP);
    const n = (await state(page)).tokens.length;
    const i = n - 1; // the bottom row of the heatmap: the farthest from the 2-D view
    const point = page.locator(`[data-testid="point-${i}"] circle`);
    await point.scrollIntoViewIfNeeded();
    const b = await point.boundingBox();
    const before0 = (await state(page)).x[i];
    await page.mouse.move(b.x + b.width / 2, b.y + b.height / 2);
    await page.mouse.down();
    await page.mouse.move(b.x - 30, b.y + 25, { steps: 4 });
    // still held: the learner watches the weights while dragging
    const row = await rowOnScreen(page, 'weights', i);
    assert.ok(row.inView, `row ${i + 1} of the weights spans ${row.top.toFixed(0)}–${row.bottom.toFixed(0)} px, outside the 900 px viewport`);
    assert.ok(row.reachable, 'nothing is drawn over the dragged point’s row of weights');
    assert.ok(row.outlined, 'the dragged point’s row is outlined in the weights');
    assert.ok((await rowOnScreen(page, 'scores', i)).outlined, 'and in the scores');
    assert.ok(await page.locator('.proj-links line').count() > 0, 'lines show where the held point’s weight goes');
    assert.ok(await page.locator('[data-testid="projection"]').isVisible());
    if (preset === 'tutorial') await page.screenshot({ path: `${SHOTS}pass-drag-laptop.png` });
    await page.mouse.up();
    assert.notDeepEqual((await state(page)).x[i], before0, 'the drag moved the point');
    await clean(page, `${preset}, after a drag`);
    assert.deepEqual(errors, []);
    await page.close();
  });
}

test('laptop: scrolled down, the control bar covers no heatmap row', async () => {
  const { page, errors } = await openPlayground(env.browser, env.url, DESKTOP);
  for (const step of ['scores', 'weights']) {
    // the figure's top rows just below the top of the window, as after scrolling down to it
    await page.locator(`[data-testid="heatmap-${step}"]`).evaluate((c) => window.scrollBy(0, c.getBoundingClientRect().top - 4));
    await frames(page);
    for (const i of [0, 1]) {
      const row = await rowOnScreen(page, step, i);
      assert.ok(row.inView, `${step} row ${i + 1} is in the window`);
      assert.ok(row.reachable, `${step} row ${i + 1} is not under the control bar`);
    }
  }
  await page.screenshot({ path: `${SHOTS}pass-scrolled-laptop.png` });
  assert.deepEqual(errors, []);
  await page.close();
});

for (const [size, viewport] of [['laptop', DESKTOP], ['phone', PHONE]]) {
  test(`${size}: from page load a few Tabs and Enter reach the first heatmap, and each step has a skip link`, async () => {
    const { page, errors } = await openPlayground(env.browser, env.url, viewport);
    const active = () => page.evaluate(() => {
      const e = document.activeElement;
      const b = e.getBoundingClientRect();
      return { testid: e.dataset.testid ?? '', text: e.textContent, cls: e.className, visible: b.width > 1 && b.top >= 0 && b.bottom <= innerHeight && b.left >= 0 };
    });
    let tabs = 0;
    let link;
    do {
      await page.keyboard.press('Tab');
      tabs++;
      link = await active();
      assert.ok(link.visible, `Tab ${tabs}: the focused “${link.text}” is shown`);
    } while (!/scores/.test(link.text) && tabs < 5);
    assert.match(link.text, /^Skip to the scores$/, `a skip link to the scores within 5 Tabs (got “${link.text}”)`);
    if (size === 'laptop') await page.screenshot({ path: `${SHOTS}pass-skip-link-laptop.png` });
    await page.keyboard.press('Enter');
    await frames(page);
    const hm = await active();
    assert.equal(hm.testid, 'heatmap-scores', 'Enter lands on the scores heatmap');
    assert.ok(hm.visible, 'scrolled into view');
    await page.keyboard.press('ArrowRight');
    assert.match(await page.locator('[data-testid="readout-scores"]').textContent(), /Your → journey\. e₀₁ = 0\.4[0-9]*/);
    await page.screenshot({ path: `${SHOTS}pass-skip-target-${size}.png` });
    // one link per step, in the page's order, each landing on its figure
    const links = await page.locator('nav.skips a.skip').allTextContents();
    for (const name of ['the scores', 'the attention weights', 'the context vectors', 'the 2-D view (drag the vectors)', 'the embeddings']) {
      assert.ok(links.includes(`Skip to ${name}`), `a skip link to ${name}: ${links.join(' | ')}`);
    }
    await page.locator('nav.skips a', { hasText: 'Skip to the attention weights' }).focus();
    await page.keyboard.press('Enter');
    assert.equal((await active()).testid, 'heatmap-weights');
    await clean(page, `${size}, a heatmap reached by a skip link`);
    assert.deepEqual(errors, []);
    await page.close();
  });
}

test('the description under the bar follows every edit, and Reset brings the preset’s back', async () => {
  const { page, errors } = await openPlayground(env.browser, env.url, DESKTOP);
  const preset = await about(page);
  assert.match(preset, /reproduce its printed numbers/, 'the untouched tutorial vouches for its numbers');

  await (await gridCell(page, 'grid-x', 1, 0)).fill('0.9');
  await frames(page);
  const edited = await about(page);
  assert.notEqual(edited, preset);
  assert.doesNotMatch(edited, /reproduce its printed numbers/, 'an edited embedding no longer reproduces the tutorial');
  assert.match(edited, /Changed from the preset “Tutorial”: 1 embedding value edited/);
  assert.match(edited, /Now: dot product scores of 6 tokens × 3 dims/);
  await page.screenshot({ path: `${SHOTS}pass-described-edit-laptop.png` });

  await page.selectOption('#score', 'scaled_dot');
  const scored = await about(page);
  assert.match(scored, /score: dot product → scaled dot product/);
  assert.match(scored, /Now: scaled dot product scores/);
  assert.doesNotMatch(scored, /dot scores and softmax/);

  await page.click('label[for="mode-self"]');
  const self = await about(page);
  assert.match(self, /mode: scoring functions → self-attention/);
  assert.match(self, /Now: self-attention over 6 tokens × 3 dims, Q = XWq, K = XWk, V = XWv, one head/);
  await clean(page, 'an edited preset, described');

  await page.click('#reset');
  assert.equal(await about(page), preset, 'the untouched preset is described by its own words again');
  // another draw of a seeded preset is still that preset
  await page.selectOption('#preset', 'random');
  const random = await about(page);
  await page.click('#new-draw');
  assert.equal(await about(page), random);
  assert.deepEqual(errors, []);
  await page.close();
});

/** The matrices of the JSON export, by name (and head). */
async function exported(page) {
  const [dl] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid="export-json"]')]);
  const json = JSON.parse(await readFile(await dl.path(), 'utf8'));
  return (name, head) => json.matrices.find((m) => m.name === name && (head === undefined || m.head === head)).values;
}

// Self-attention by hand, in doubles: Q = X Wq, K = X Wk, then head m's columns scored.
const matmul = (A, B) => A.map((row) => B[0].map((_, j) => row.reduce((acc, v, k) => acc + v * B[k][j], 0)));
const SCORE = {
  dot: (q, k) => q.reduce((a, v, c) => a + v * k[c], 0),
  scaled_dot: (q, k) => SCORE.dot(q, k) / Math.sqrt(q.length),
  cosine: (q, k) => SCORE.dot(q, k) / (Math.sqrt(SCORE.dot(q, q)) * Math.sqrt(SCORE.dot(k, k))),
};
function headWeights(s, score) {
  const Q = matmul(s.x, s.wq);
  const K = matmul(s.x, s.wk);
  const dh = Q[0].length / s.heads;
  const cols = (row) => row.slice(s.head * dh, (s.head + 1) * dh);
  return Q.map((q, i) => {
    const e = K.map((k, j) => (s.mask === 'causal' && j > i ? -Infinity : SCORE[score](cols(q), cols(k))));
    const m = Math.max(...e);
    const ex = e.map((v) => Math.exp(v - m));
    const sum = ex.reduce((a, v) => a + v, 0);
    return ex.map((v) => v / sum);
  });
}
const maxDiff = (A, B) => Math.max(...A.flatMap((row, i) => row.map((v, j) => Math.abs(v - B[i][j]))));

test('self-attention compares like with like: the same head’s Q and K under the second score', async () => {
  const { page, errors } = await openPlayground(env.browser, `${env.url}#ver=2&preset=self&head=1&mask=causal&compare=cosine`, DESKTOP);
  const s = await state(page);
  assert.deepEqual([s.mode, s.heads, s.head, s.compare, s.trainable], ['self', 2, 1, 'cosine', true]);
  let matrix = await exported(page);
  const want = headWeights(s, 'cosine');
  const got = matrix('compare_weights', 1);
  assert.ok(maxDiff(got, want) < 1e-5, `compared weights off by ${maxDiff(got, want)} from softmax(cos(Q₂ᵢ, K₂ⱼ)) with the causal mask`);
  // and the computation here is the page's own for the score it shows
  assert.ok(maxDiff(matrix('weights', 1), headWeights(s, 'scaled_dot')) < 1e-5);
  const base = matrix('weights', 1);
  assert.ok(maxDiff(matrix('difference'), got.map((row, i) => row.map((v, j) => v - base[i][j]))) < 1e-6, 'the difference is α′ − α of that head');
  assert.match(await page.locator('.step-compare h3').textContent(), /Weights under: Cosine \(Graves\) — head 1 of 2/);
  assert.match(await page.locator('.step-compare .step-note').textContent(), /Head 1’s own queries and keys \(Q and K after the projections\) scored with cosine \(Graves\) instead of scaled dot product/);
  const tex = await page.locator('[data-testid="formula-compare"]').getAttribute('data-tex');
  assert.match(tex, /\\mathbf\{q\}\^\{\(g\)\}_i/, 'the formula scores the head’s q');
  assert.doesNotMatch(tex, /\\beta/, 'self-attention’s cosine has no β');
  // the second score only offers what self-attention scores with
  assert.ok(await page.locator('#compare option[value="general"]').isDisabled());
  await page.screenshot({ path: `${SHOTS}pass-self-compare-laptop.png` });
  await clean(page, 'self-attention with a comparison');

  // compared with its own score, nothing differs
  await page.selectOption('#compare', 'scaled_dot');
  matrix = await exported(page);
  assert.ok(Math.max(...matrix('difference').flat().map(Math.abs)) < 1e-6, 'the same score on the same Q and K gives the same weights');
  // a link asking a self-attention comparison the mode cannot make is told so
  const bad = await openPlayground(env.browser, `${env.url}#ver=2&preset=self&compare=general`, DESKTOP);
  assert.match(await bad.page.locator('[data-testid="notice"]').textContent(), /compare \(self-attention compares with dot, scaled_dot, cosine\)/);
  assert.equal((await state(bad.page)).compare, 'none');
  await bad.page.close();
  assert.deepEqual(errors, []);
  await page.close();
});

test('one symbol, one meaning: h counts heads, g indexes them (from 0; m is ALiBi’s slope), dₐ is the additive hidden size, H is not used', async () => {
  const { page, errors } = await openPlayground(env.browser, `${env.url}#ver=2&preset=self&heads=2`, DESKTOP);
  const texts = await page.locator('[data-testid^="formula-"]').evaluateAll((els) => els.map((e) => e.dataset.tex ?? ''));
  const all = texts.join('\n');
  assert.doesNotMatch(all, /\bH\b|\(h\)/, `no H and no (h) index in the formulas:\n${all}`);
  assert.match(all, /g = 0 \\ldots h - 1/, 'the heads step counts g = 0 … h − 1, from 0 as every page counts heads');
  assert.match(all, /\\alpha\^\{\(g\)\}_\{ij\}/);
  assert.doesNotMatch(all, /\(m\)/, 'm is ALiBi’s slope, not a head index');
  assert.match(await page.locator('#heads-box').textContent(), /Heads h/);
  assert.equal(await page.locator('#heads option:checked').textContent(), '2 (dₕ = 2)', 'each choice of h shows its dₕ = d / h');
  assert.match(await page.locator('.step-weights .step-note').textContent(), /Softmax at τ = 1 makes each row sum to 1/);
  await page.click('label[for="mode-attend"]');
  await page.selectOption('#score', 'additive');
  const params = await page.locator('.params-card').textContent();
  assert.match(params, /Hidden size da/);
  assert.match(params, /Wq \(da × d\)/);
  assert.doesNotMatch(params, /\(h × d\)|\(h\)/, 'the additive hidden size is not called h');
  await clean(page, 'additive parameters');
  assert.deepEqual(errors, []);
  await page.close();
});

test('every formula a reachable state shows is rendered at build time (and no more than those)', () => {
  const built = new Set(allTex());
  const used = new Set();
  const SCORES = ['dot', 'scaled_dot', 'general', 'additive', 'cosine', 'location'];
  for (const mode of ['attend', 'self']) for (const score of SCORES) for (const normalize of ['softmax', 'sum']) {
    for (const temperature of [1, 0.5]) for (const mask of ['none', 'causal', 'padding']) for (const trainable of [false, true]) {
      for (const heads of [1, 3]) for (const compare of ['none', ...SCORES]) {
        // a state as the page keeps it: fixup drops what the mode does not allow
        const s = fixup({ ...defaults(), mode, score, normalize, temperature, mask, trainable, heads, compare });
        for (const step of ['q', 'k', 'v', 'scores', 'weights', 'heads', 'context', 'output', 'compare', 'diff']) {
          for (const t of texParts(step, formulaKey(s))) { assert.ok(built.has(t), t); used.add(t); }
        }
      }
    }
  }
  assert.deepEqual([...built].filter((t) => !used.has(t)), [], 'no formula is rendered that no state shows');
});

test('screenshots: the playground at both sizes in several states, each audited', async () => {
  const states = [
    ['default', ''],
    ['self-compare', '#ver=2&preset=self&compare=cosine'],
    ['causal', '#ver=2&preset=causal&score=scaled_dot'],
    ['long', '#ver=2&preset=long'],
  ];
  for (const [name, hash] of states) {
    for (const [size, viewport] of [['laptop', DESKTOP], ['phone', PHONE]]) {
      const { page, errors } = await openPlayground(env.browser, env.url + hash, viewport);
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - innerWidth);
      assert.ok(overflow <= 0, `${name} at ${size}: the page scrolls sideways by ${overflow}px`);
      await page.screenshot({ path: `${SHOTS}pass-${name}-${size}.png` });
      await clean(page, `${name} at ${size}`);
      assert.deepEqual(errors, []);
      await page.close();
    }
  }
});
