// The self-attention view's positions, used as a learner would: the Positions
// control (none by default, sinusoidal, RoPE, ALiBi) changes the weights as each
// kind should (checked against a computation here in Node on the engine), the
// "Permute tokens" button shows the weights only move with the tokens without
// positions and change with each kind (text and table from the numbers), the
// link keeps the kind and a bad value falls back, everything is reached by
// keyboard and audited with axe-core. Screenshots at 1440 × 900 and 390 × 844.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { DESKTOP, PHONE, SHOTS, axeViolations, openPlayground, startBrowser } from './browser.mjs';
import { loadEngine } from '../../web/engine/index.js';
import { alibiSlope, alibiSlopes, sinusoidTable } from '../../web/ui/positions.js';
import { alibiAbout } from '../../web/playground/positions-view.js';
import { permutation } from '../../web/ui/permutation.js';

let env;
let engine;
before(async () => { env = await startBrowser(); engine = await loadEngine({ threads: 1 }); });
after(async () => { await env?.close(); });

// the tutorial's six tokens in self-attention without projections: Q = K = V = X, dot scores
const SELF = '#ver=2&mode=self&trainable=false&score=dot';
const state = (page) => page.evaluate(() => window.attnlab.state());
const close = (a, b, tol, what) => {
  assert.equal(a.length, b.length, what);
  for (let k = 0; k < a.length; k++) assert.ok(Math.abs(a[k] - b[k]) <= tol, `${what}: cell ${k}: ${a[k]} vs ${b[k]}`);
};

async function open(hash, viewport = DESKTOP) {
  const r = await openPlayground(env.browser, `${env.url}index.html${hash}`, viewport);
  return r;
}

/** Head `head`'s weights and position term (head 0 unless said) for the state in the page's link, computed by the page's own modules. */
async function readMatrices(page, head = 0) {
  return page.evaluate(async (k) => {
    const { codec } = await import('./playground/state.js');
    const { computeSteps } = await import('./playground/compute.js');
    const { loadEngine } = await import('./engine/index.js');
    const s = codec.decode(location.hash).state;
    const r = computeSteps(await loadEngine(), s);
    return { weights: Array.from(r.weights[k].data), term: r.term ? Array.from(r.term[k].data) : null };
  }, head);
}

test('positions: none by default; each kind changes the weights as it should', async () => {
  const { page, errors } = await open(SELF);
  const s = await state(page);
  assert.equal(s.positions, 'none');
  assert.equal(await page.locator('#positions').inputValue(), 'none');
  assert.ok(await page.locator('[data-testid="positions-card"]').isVisible());
  const x = s.x;
  const n = x.length;
  const plain = engine.selfAttention({ x, score: 'dot' });

  // sinusoidal: the engine's self-attention on X + P
  await page.selectOption('#positions', 'sinusoidal');
  await page.waitForFunction(() => window.attnlab.state().positions === 'sinusoidal');
  const P = sinusoidTable(n, x[0].length);
  const xp = x.map((row, i) => row.map((v, c) => v + P.data[i * P.cols + c]));
  const sin = engine.selfAttention({ x: xp, score: 'dot' });
  // the page's own figure: the caption names the range of the added term, from the numbers
  const caption = await page.locator('[data-testid="position-term-caption"]').textContent();
  assert.match(caption, /scores with positions minus the scores without, from −?\d\.\d{3} to −?\d\.\d{3}/);
  await page.waitForTimeout(400); // the link is written once edits pause
  let m = await readMatrices(page);
  close(m.weights, sin.weights[0].data, 1e-5, 'sinusoidal weights = selfAttention(X + P)');
  close(m.term, sin.scores[0].data.map((v, k) => v - plain.scores[0].data[k]), 1e-5, 'sinusoidal term');

  // RoPE: rotation keeps a vector's dot product with itself at the same position (no term on the
  // diagonal) and changes the others
  await page.selectOption('#positions', 'rope');
  await page.waitForTimeout(400);
  m = await readMatrices(page);
  for (let i = 0; i < n; i++) assert.ok(Math.abs(m.term[i * n + i]) < 1e-5, `RoPE adds nothing at i = j (${m.term[i * n + i]})`);
  assert.ok(m.term.some((v) => Math.abs(v) > 0.05), 'RoPE changes the scores off the diagonal');
  // and the scores are q_i·R((j − i)θ) k_j: for d = 3 one pair turning by (j − i) radians
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < n; j++) {
      const a = j - i;
      const e = x[i][0] * (Math.cos(a) * x[j][0] - Math.sin(a) * x[j][1]) + x[i][1] * (Math.sin(a) * x[j][0] + Math.cos(a) * x[j][1]) + x[i][2] * x[j][2];
      const dot = x[i].reduce((acc, v, c) => acc + v * x[j][c], 0);
      assert.ok(Math.abs(m.term[i * n + j] - (e - dot)) < 1e-4, `RoPE term (${i}, ${j})`);
    }
  }

  // ALiBi: exactly −m·|i − j| added, slope m = 1/2 for one head
  await page.selectOption('#positions', 'alibi');
  await page.waitForTimeout(400);
  m = await readMatrices(page);
  assert.equal(alibiSlope(0, 1), 0.5);
  for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) assert.ok(Math.abs(m.term[i * n + j] + 0.5 * Math.abs(i - j)) < 1e-5, `ALiBi term (${i}, ${j})`);
  assert.match(await page.locator('[data-testid="position-term-caption"]').textContent(), /bias −m·\|i − j\| with slope m = 0\.5/);
  assert.equal(await page.locator('[data-testid="positions-about"]').textContent(), alibiAbout(1));
  assert.match(await page.locator('#preset-about').textContent(), /positions: no positions → ALiBi/);
  assert.match(page.url(), /positions=alibi/);
  assert.deepEqual(errors, []);
});

test('ALiBi: Press et al.’s slopes, stated and drawn for the heads the code computes them for', () => {
  // Press et al.: head h of H (h = 1 … H) has m = 2^(−8h/H); the playground keeps it for H ≥ 8
  for (const H of [8, 16]) alibiSlopes(H).forEach((m, k) => assert.equal(m, 2 ** (-8 * (k + 1) / H), `head ${k} of ${H}`));
  // 8 heads halve head to head; 16 heads do not (each is 1/√2 of the one before)
  alibiSlopes(8).slice(1).forEach((m, k) => assert.equal(m, alibiSlopes(8)[k] / 2));
  alibiSlopes(16).slice(1).forEach((m, k) => assert.ok(Math.abs(m / alibiSlopes(16)[k] - Math.SQRT1_2) < 1e-12));
  // fewer heads: the first slopes of the 8-head set, and the note says so
  assert.deepEqual(alibiSlopes(3), [0.5, 0.25, 0.125]);
  const note = alibiAbout(16);
  assert.match(note, /head h of H \(h = 1 … H\) the slope m = 2\^\(−8h\/H\)/);
  assert.match(note, /with 16 heads each is 1\/√2 of the one before/);
  assert.match(note, /fewer heads take the first slopes of the 8-head set/);
  assert.doesNotMatch(note, /halves from head to head/);
  assert.match(alibiAbout(3), /Here, 3 heads \(0 to 2\): m = 0\.5, 0\.25, 0\.125\.$/);
});

test('ALiBi with three heads: each head\'s map is its own slope, as the note lists', async () => {
  const { page, errors } = await open(`${SELF}&heads=3&positions=alibi`);
  assert.equal(await page.locator('[data-testid="positions-about"]').textContent(), alibiAbout(3));
  const n = (await state(page)).tokens.length;
  for (const head of [0, 2]) {
    await page.click(`[data-testid="head-${head}"]`);
    await page.waitForTimeout(300);
    const m = await readMatrices(page, head);
    const slope = alibiSlopes(3)[head];
    for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) assert.ok(Math.abs(m.term[i * n + j] + slope * Math.abs(i - j)) < 1e-5, `head ${head}: (${i}, ${j})`);
    assert.match(await page.locator('[data-testid="position-term-caption"]').textContent(), new RegExp(`^Head ${head} of 3: the bias −m·\\|i − j\\| with slope m = ${slope}`));
  }
  for (const viewport of [['laptop', DESKTOP], ['phone', PHONE]]) {
    await page.setViewportSize(viewport[1]);
    await page.locator('[data-testid="positions-card"]').screenshot({ path: `${SHOTS}playground-positions-card-alibi-3-heads-${viewport[0]}.png` });
  }
  assert.deepEqual(errors, []);
});

test('Permute tokens: without positions the weights move with the tokens; with each kind they change', async () => {
  const { page, errors } = await open(SELF);
  const before = await state(page);
  // reached by keyboard: focus the button and press Enter
  await page.locator('[data-testid="permute"]').focus();
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => /Shuffled/.test(document.querySelector('[data-testid="permute-result"]').textContent));
  const after = await state(page);
  const perm = permutation(before.tokens.length, 1);
  assert.deepEqual(after.tokens, perm.map((k) => before.tokens[k]));
  assert.deepEqual(after.x, perm.map((k) => before.x[k]));
  // the page's claim, checked here: the weights after are the weights before with rows and columns moved
  const w0 = engine.selfAttention({ x: before.x, score: 'dot' }).weights[0].data;
  const w1 = engine.selfAttention({ x: after.x, score: 'dot' }).weights[0].data;
  const n = perm.length;
  for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) assert.ok(Math.abs(w1[i * n + j] - w0[perm[i] * n + perm[j]]) < 1e-6);
  const text = await page.locator('[data-testid="permute-result"]').textContent();
  assert.match(text, /With no positions every weight moved with its tokens: α′\(i, j\) = α\(π\(i\), π\(j\)\) in all 36 cells \(largest difference 0\.0000\)/);
  assert.match(text, new RegExp(`π = ${perm.join(', ')}, positions from 0`));
  // the table: none only moved, every kind changed
  const rows = await page.$$eval('[data-testid="permute-table"] tbody tr', (trs) => trs.map((tr) => [tr.dataset.kind, tr.lastChild.textContent]));
  assert.deepEqual(rows, [['none', 'only moved'], ['sinusoidal', 'changed'], ['rope', 'changed'], ['alibi', 'changed']]);
  await page.screenshot({ path: `${SHOTS}playground-positions-none-laptop.png`, fullPage: false });
  await page.locator('[data-testid="positions-card"]').screenshot({ path: `${SHOTS}playground-positions-card-none-laptop.png` });
  assert.deepEqual(await axeViolations(page), [], 'axe after a shuffle');

  // the same shuffle under RoPE: the text now says the weights changed, with the numbers
  await page.selectOption('#positions', 'rope');
  await page.waitForFunction(() => /With RoPE the weights did not only move/.test(document.querySelector('[data-testid="permute-result"]').textContent));
  const rope = await page.locator('[data-testid="permute-result"]').textContent();
  const [, changed, max] = rope.match(/(\d+) of 36 cells differ .* by up to (\d\.\d{4})/);
  assert.ok(Number(changed) > 0 && Number(max) > 0.001, rope);
  await page.locator('[data-testid="positions-card"]').screenshot({ path: `${SHOTS}playground-positions-card-rope-laptop.png` });

  // editing the tokens ends the comparison
  await page.selectOption('#positions', 'none');
  await page.locator('[data-testid="permute"]').click();
  await page.waitForFunction(() => /every weight moved/.test(document.querySelector('[data-testid="permute-result"]').textContent));
  assert.deepEqual(errors, []);
});

test('the link keeps the kind; a bad value or one outside self-attention falls back with a notice', async () => {
  let { page } = await open(`${SELF}&positions=rope`);
  assert.equal((await state(page)).positions, 'rope');
  assert.equal(await page.locator('#positions').inputValue(), 'rope');
  ({ page } = await open(`${SELF}&positions=spiral`));
  assert.equal((await state(page)).positions, 'none');
  assert.match(await page.locator('[data-testid="notice"]').textContent(), /positions/);
  ({ page } = await open('#ver=2&mode=attend&positions=alibi'));
  assert.equal((await state(page)).positions, 'none');
  assert.ok(await page.locator('#positions-box').isHidden(), 'no positions control outside self-attention');
  assert.ok(await page.locator('[data-testid="positions-card"]').isHidden());
});

test('screenshots at both sizes, audited', async () => {
  for (const [size, viewport] of [['laptop', DESKTOP], ['phone', PHONE]]) {
    const { page, errors } = await open('#ver=2&preset=self&positions=alibi', viewport);
    await page.locator('[data-testid="permute"]').click();
    await page.waitForFunction(() => /Shuffled/.test(document.querySelector('[data-testid="permute-result"]').textContent));
    await page.locator('[data-testid="positions-card"]').scrollIntoViewIfNeeded();
    await page.screenshot({ path: `${SHOTS}playground-positions-${size}.png` });
    await page.locator('[data-testid="positions-card"]').screenshot({ path: `${SHOTS}playground-positions-card-${size}.png` });
    // the card fits the phone's width
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `${size}: the page scrolls sideways by ${overflow}px`);
    assert.deepEqual(await axeViolations(page), [], `axe ${size}`);
    assert.deepEqual(errors, []);
  }
});
