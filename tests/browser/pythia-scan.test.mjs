// "Pythia's training, by step" (web/ui/training-scan.js) in headless Chromium, under the lab's
// model cards, against tests/lib/hub-server.mjs serving a small GPT-NeoX checkpoint under three
// of Pythia-70M's step revisions, each only as pytorch_model.bin (as the real repo ships its
// steps), each with other weights (so other heads). The page is served with the site's policy
// naming the test hub's origins in connect-src (in the header, and in each page's meta tag through
// a small proxy in front of the site). Checked as a
// learner uses it: the link's step list is read and the download's size said before anything
// is fetched (HEAD requests only); Cancel mid-scan stops it, keeps what was scanned drawn and
// keeps nothing of the checkpoint being fetched; a whole scan draws each head's induction and
// previous-token score at each step equal to headScores of that checkpoint computed in Node,
// and an in-context-learning score per step. Screenshots at 1440×900 and 390×844 go to
// test-results/browser/.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { CSP, ISOLATION_HEADERS, serve } from '../../scripts/serve.mjs';
import { loadEngine } from '../../web/engine/index.js';
import { scan, sizeText } from '../../web/ui/gpt2-file.js';
import { encode, safetensors } from '../lib/gpt2-checkpoint.mjs';
import { NEOX_TINY, neoxCheckpoint, neoxShapes } from '../lib/neox-checkpoint.mjs';
import { mulberry32 } from '../lib/random.mjs';
import { TOKENIZER_SIZE, tokenizerJson } from '../lib/tokenizer-json.mjs';
import { safetensorsTensors, torchFile } from '../lib/torch-file.mjs';
import { startHub } from '../lib/hub-server.mjs';
import { DESKTOP, PHONE, SHOTS, axeViolations, startBrowser } from './browser.mjs';

const BIN = 'pytorch_model.bin';
const REPO = 'EleutherAI/pythia-70m';
/**
 * Context 512: long enough for the in-context-learning score's 501 tokens. Heads of 64 dimensions,
 * half of them rotary (base 100), so that a head can find positions (rotary) or tokens (the rest).
 */
const NEOX = {
  ...NEOX_TINY, vocab_size: TOKENIZER_SIZE, max_position_embeddings: 512, hidden_size: 128, num_attention_heads: 2,
  intermediate_size: 16, rotary_pct: 0.5, rotary_emb_base: 100,
};
const tokenizer = JSON.stringify(tokenizerJson());
const STEPS = [1000, 2000, 4000];

/**
 * The last step's weights, set by hand: a previous-token head (L0H0) and an induction head (L1H0).
 * The residual stream: a token's vector (random, unit length) in dimensions 0–31, the previous
 * token's in 32–63 (written by L0H0). L0H0's query and key are biases only, in its rotary
 * dimensions, the key the query turned by one position's angle, so that q·k peaks at the
 * position before; its value is the token, written to 32–63. L1H0's query is the token and its
 * key the previous token (unrotated dimensions): a token finds where it came before, one after.
 * Everything else is 0 (LayerNorm gains 1), so the MLPs add nothing.
 */
function plantedCheckpoint() {
  const C = NEOX.hidden_size, D = C / NEOX.num_attention_heads, r = D * NEOX.rotary_pct, V = NEOX.vocab_size;
  const random = mulberry32(11);
  const w = Object.fromEntries(neoxShapes(NEOX).map(([name, shape]) => [name, new Float64Array(shape.reduce((a, b) => a * b, 1)).fill(/(layernorm|layer_norm)\.weight$/.test(name) ? 1 : 0)]));
  for (let v = 0; v < V; v++) {
    const e = Array.from({ length: 32 }, () => random() - 0.5);
    const norm = Math.hypot(...e);
    e.forEach((x, i) => { w['gpt_neox.embed_in.weight'][v * C + i] = x / norm; });
  }
  // query_key_value: nn.Linear [3C, C], output rows head-major: head h's q, k, v at h·3D + (0, D, 2D) + d
  const row = (h, part, d) => h * 3 * D + part * D + d;
  const qkv0 = w['gpt_neox.layers.0.attention.query_key_value.weight'], bias0 = w['gpt_neox.layers.0.attention.query_key_value.bias'];
  for (let i = 0; i < r / 2; i++) {
    const theta = NEOX.rotary_emb_base ** (-2 * i / r), c = 9;
    bias0[row(0, 0, i)] = c; // q: (c, 0) in each rotary pair (i, i + r/2)
    bias0[row(0, 1, i)] = c * Math.cos(theta); // k = the query turned by θ_i: q_t·k_s peaks at s = t − 1
    bias0[row(0, 1, i + r / 2)] = c * Math.sin(theta);
  }
  const dense0 = w['gpt_neox.layers.0.attention.dense.weight'];
  const qkv1 = w['gpt_neox.layers.1.attention.query_key_value.weight'];
  for (let d = 0; d < 32; d++) {
    qkv0[row(0, 2, d) * C + d] = 1; // L0H0's value: the token (LayerNorm scales it by about 8)
    dense0[(32 + d) * C + d] = 1 / 8; // into the previous-token dimensions
    qkv1[row(0, 0, r + d) * C + d] = 2; // L1H0's query: the token, in unrotated dimensions
    qkv1[row(0, 1, r + d) * C + 32 + d] = 1; // its key: the previous token
  }
  const tensors = neoxShapes(NEOX).map(([name, shape]) => ({ name, dtype: 'F32', shape, bytes: encode('F32', w[name]).bytes }));
  return { bytes: safetensors(tensors) };
}
// the first steps random (their heads near uniform), the last the planted heads: an induction head forms
const made = [neoxCheckpoint({ config: NEOX, dtype: 'F32', seed: 20 }), neoxCheckpoint({ config: NEOX, dtype: 'F32', seed: 21 }), plantedCheckpoint()];
const bins = made.map((m) => torchFile(safetensorsTensors(m.bytes)));
const REPOS = {
  [REPO]: Object.fromEntries(STEPS.map((step, k) => [`step${step}`, { 'config.json': JSON.stringify(NEOX), 'tokenizer.json': tokenizer, [BIN]: bins[k] }])),
};

let env, hub, site, page, errors, context;

before(async () => {
  env = await startBrowser();
  hub = await startHub(REPOS, { lfs: ['model.safetensors', BIN] });
  const policy = CSP.replace(/connect-src [^;]*/, `connect-src 'self' ${hub.url} ${hub.storeUrl}`);
  const files = await serve({ port: 0, headers: { 'Content-Security-Policy': policy, 'X-Content-Type-Options': 'nosniff', ...ISOLATION_HEADERS } });
  // the site as served, each page's meta policy naming the same origins as the header
  const proxy = createServer(async (req, res) => {
    try {
      const answer = await fetch(new URL(req.url, files.url), { method: req.method });
      const headers = Object.fromEntries([...answer.headers].filter(([k]) => k !== 'content-encoding' && k !== 'content-length'));
      let body = Buffer.from(await answer.arrayBuffer());
      if ((headers['content-type'] ?? '').startsWith('text/html')) body = Buffer.from(body.toString('utf8').replace(CSP, policy));
      res.writeHead(answer.status, headers);
      res.end(req.method === 'HEAD' ? undefined : body);
    } catch {
      res.destroy();
    }
  });
  await new Promise((ok) => proxy.listen(0, '127.0.0.1', ok));
  site = { url: `http://127.0.0.1:${proxy.address().port}/`, close: () => Promise.all([proxy, files.server].map((s) => new Promise((ok) => { s.closeAllConnections?.(); s.close(ok); }))) };
  context = await env.browser.newContext({ viewport: DESKTOP });
  page = await context.newPage();
  page.setDefaultTimeout(60000);
  errors = [];
  // the hub's expected answers are console lines too: 404 for each step's model.safetensors (its steps have only
  // pytorch_model.bin, asked for next) and 401 for the other cards' repos, which this hub does not have
  page.on('console', (msg) => { if (msg.type() === 'error' && !/^Failed to load resource: the server responded with a status of (401|404)/.test(msg.text())) errors.push(msg.text()); });
  page.on('pageerror', (err) => errors.push(String(err)));
});
after(async () => {
  await env?.close();
  await hub?.close();
  await site?.close();
});

const text = (sel) => page.$eval(sel, (e) => e.textContent.trim());
const T = (name) => `[data-testid=gpt2-steps-${name}]`;
/** The drawn points of a chart: { 'L0H1 1000': y }. */
const points = (chart) => page.$$eval(`${T(chart)} circle`, (cs) => Object.fromEntries(cs.map((c) => [`${c.dataset.series} ${c.dataset.step}`, Number(c.dataset.y)])));

test('the link\'s steps are read and the whole download is said before anything is fetched', async () => {
  await page.goto(`${site.url}lab.html?model=open&repo=${encodeURIComponent(REPO)}&hub=${encodeURIComponent(hub.url)}&steps=4000,1000,2000#ver=2&task=transformer`);
  await page.waitForSelector('body[data-ready=true]', { timeout: 120000 });
  await page.waitForSelector(`${T('box')}[open]`);
  assert.equal(await page.inputValue(T('steps')), '1000, 2000, 4000');
  await page.waitForSelector(`${T('sizes')}[data-state=said]`);
  const total = bins.reduce((s, b) => s + b.length, 0);
  assert.equal(await page.getAttribute(T('sizes'), 'data-bytes'), String(total));
  assert.match(await text(T('sizes')), new RegExp(`^3 checkpoints of Pythia-70M: ${sizeText(total).replace('.', '\\.')} to fetch from `));
  assert.deepEqual(hub.requests.filter((r) => r.method !== 'HEAD' && r.method !== 'OPTIONS'), []);
  // a step Pythia did not save is named, and the link keeps the steps typed
  await page.fill(T('steps'), '1000 1500 2000');
  assert.match(await text(T('steps-said')), /step 1,500 was not saved/);
  assert.match(await page.evaluate(() => location.search), /steps=1000,2000(&|$)/);
  await page.fill(T('steps'), '1000, 2000, 4000');
  await page.waitForSelector(`${T('sizes')}[data-state=said]`);
  assert.deepEqual(errors, []);
});

test('Cancel mid-scan stops it: what was scanned stays drawn, the checkpoint being fetched is not kept', async () => {
  hub.faults[BIN] = { pace: 250, pieces: 40 }; // ten seconds a checkpoint
  await page.click(T('start'));
  await page.waitForFunction(() => /^Step 2,000 \(2 of 3\): pytorch_model\.bin /.test(document.querySelector('[data-testid=gpt2-steps-progress-text]').textContent), null, { timeout: 90000 });
  assert.match(await text(T('progress-text')), /· the scan [\d.]+ (KB|MB) of /);
  await page.locator(T('box')).screenshot({ path: `${SHOTS}pythia-scan-progress-desktop.png` });
  await page.click(T('cancel'));
  await page.waitForFunction(() => /^Cancelled/.test(document.querySelector('[data-testid=gpt2-steps-status]').textContent));
  assert.match(await text(T('status')), /^Cancelled: 1 of 3 steps were scanned, and they stay drawn; the checkpoint being fetched was not kept\./);
  const drawn = await points('induction');
  assert.ok(Object.keys(drawn).length === NEOX.num_hidden_layers * NEOX.num_attention_heads);
  assert.ok(Object.keys(drawn).every((k) => k.endsWith(' 1000')));
  const kept = await page.evaluate(async () => (await (await caches.open('attnlab-models')).keys()).map((r) => r.url));
  assert.ok(kept.some((u) => u.includes('step1000')));
  assert.ok(!kept.some((u) => u.includes('step2000')), kept.join('\n'));
  assert.equal(await page.isVisible(T('progress')), false);
  delete hub.faults[BIN];
  assert.deepEqual(errors, []);
});

test('a whole scan draws each head\'s scores at each step as headScores gives them in Node, and an in-context-learning score per step', async () => {
  await page.click(T('start'));
  await page.waitForFunction(() => /^Scanned 3 of 3 steps of Pythia-70M/.test(document.querySelector('[data-testid=gpt2-steps-status]').textContent), null, { timeout: 180000 });
  const engine = await loadEngine();
  const induction = await points('induction');
  const previous = await points('previous');
  const L = NEOX.num_hidden_layers, H = NEOX.num_attention_heads;
  assert.equal(Object.keys(induction).length, L * H * STEPS.length);
  let differs = false;
  for (let k = 0; k < STEPS.length; k++) {
    const m = await engine.loadModel(made[k].bytes, { config: NEOX, tokenizer });
    const scores = m.headScores(scan(m.config));
    m.destroy();
    for (let l = 0; l < L; l++) for (let h = 0; h < H; h++) {
      const at = `L${l}H${h} ${STEPS[k]}`;
      assert.ok(Math.abs(induction[at] - scores[l][h].induction) < 1e-4, `${at}: induction ${induction[at]} drawn, ${scores[l][h].induction} in Node`);
      assert.ok(Math.abs(previous[at] - scores[l][h].previousToken) < 1e-4, `${at}: previous-token ${previous[at]} drawn, ${scores[l][h].previousToken} in Node`);
      if (k > 0 && Math.abs(induction[at] - induction[`L${l}H${h} ${STEPS[0]}`]) > 1e-3) differs = true;
    }
  }
  assert.ok(differs, 'the heads differ by step');
  const icl = await points('icl');
  assert.deepEqual(Object.keys(icl).sort(), STEPS.map((s) => `ICL ${s}`).sort());
  assert.ok(Object.values(icl).every(Number.isFinite));
  assert.equal(await page.$$eval(`${T('induction-legend')} .legend-item`, (e) => e.length), 4); // the 4 named heads (all this model has)
  assert.match(await text(`${T('induction')} ~ .scan-source`), /^Computed here: headScores on 8 runs of 50 random tokens/);
  assert.match(await text(`${T('icl')} ~ .scan-source`), /^Computed here on 4 passages of 501 tokens of the prose of this site's Learn chapters/);
  // the screen as the reader sees it (the lab's run bar stays on top): the figures from their top
  const top = () => page.$eval(T('figures'), (e) => e.getBoundingClientRect().top + scrollY - 160);
  await page.evaluate((y) => scrollTo(0, y), await top());
  await page.screenshot({ path: `${SHOTS}pythia-scan-desktop.png` });
  assert.deepEqual(await axeViolations(page), []);
  await page.setViewportSize(PHONE);
  await page.evaluate((y) => scrollTo(0, y), await top());
  await page.screenshot({ path: `${SHOTS}pythia-scan-phone.png` });
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - innerWidth);
  assert.ok(overflow <= 0, `the phone page scrolls sideways by ${overflow} px`);
  await page.setViewportSize(DESKTOP);
  assert.deepEqual(errors, []);
});
