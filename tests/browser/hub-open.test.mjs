// engine.openModel in headless Chromium against the local hub (tests/lib/hub-server.mjs), every
// case hub.test.mjs checks in Node, as a browser meets it: the 302 to the store on another origin
// (which a browser's fetch with redirect: 'manual' sees as an opaque redirect, its headers hidden)
// followed with CORS, the size and SHA-256 checked; a connection dropped halfway resumed with a
// Range request, and given up after 3 resumes; a body whose hash differs, a size that differs;
// 404, 401 (a gated or missing repo), 500 and a network failure, each a coded error naming the URL;
// an abort; and what is kept in Cache Storage: the model a good open gives, nothing of a failed one.
// The engine is imported into a page of the site's origin as the lab's worker imports it; the
// page is opened with bypassCSP, since the site's policy names huggingface.co, not the local hub.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { gpt2Checkpoint, TINY } from '../lib/gpt2-checkpoint.mjs';
import { startHub } from '../lib/hub-server.mjs';
import { startBrowser } from './browser.mjs';

const WEIGHTS = 'model.safetensors';
const IDS = [3, 17, 42, 5, 3, 17, 42, 5, 60, 1, 0, 63];
// large enough to arrive in many pieces (about 0.6 MB)
const CONFIG = { ...TINY, n_embd: 64, n_positions: 64, n_ctx: 64, vocab_size: 512 };
const made = gpt2Checkpoint({ config: CONFIG, seed: 4 });
const REPOS = { 'test-org/gpt2': { main: { 'config.json': JSON.stringify(CONFIG), [WEIGHTS]: made.bytes } } };

let env, hub, page;
before(async () => {
  env = await startBrowser();
  hub = await startHub(REPOS);
  const context = await env.browser.newContext({ bypassCSP: true });
  page = await context.newPage();
  page.on('pageerror', (err) => { throw err; });
  await page.goto(`${env.url}hub-open-test`); // the server's "not found": a page of the site's origin with nothing on it
  await page.evaluate(async ({ bytes, config }) => {
    const { loadEngine } = await import('/engine/index.js');
    window.engine = await loadEngine({ threads: 1 });
    window.made = { bytes: new Uint8Array(bytes), config };
  }, { bytes: Array.from(made.bytes), config: CONFIG });
});
after(async () => {
  await hub?.close();
  await env?.close();
});

function fresh(faults = {}) {
  for (const k of Object.keys(hub.faults)) delete hub.faults[k];
  Object.assign(hub.faults, faults);
  hub.requests.length = 0;
}

/**
 * openModel in the page: { ok, code, message, status, files, kept, same (its logits equal
 * loadModel's of the same bytes), cached (Cache Storage's keys after), heap (heapUsed() after
 * minus before, the model destroyed) }. options.abortAt: abort once that many bytes of the weights arrived.
 */
function openInPage(repo, options) {
  return page.evaluate(async ({ repo, options, ids }) => {
    const { engine, made } = window;
    const controller = new AbortController();
    const start = engine.heapUsed();
    const out = {};
    try {
      const m = await engine.openModel(repo, {
        hub: options.hub,
        signal: controller.signal,
        onProgress: (e) => { if (options.abortAt && e.file === 'model.safetensors' && e.loaded >= options.abortAt) controller.abort(); },
      });
      const ref = await engine.loadModel(made.bytes, { config: made.config });
      const a = m.inspect({ ids }, { logits: true }).logits.data, b = ref.inspect({ ids }, { logits: true }).logits.data;
      Object.assign(out, { ok: true, files: m.source.files, kept: m.source.kept, same: a.length === b.length && a.every((x, i) => Math.abs(x - b[i]) <= 1e-5 * (1 + Math.abs(b[i]))) });
      ref.destroy();
      m.destroy();
    } catch (err) {
      Object.assign(out, { ok: false, code: err.code ?? null, message: String(err.message), status: err.status ?? null });
    }
    out.heap = engine.heapUsed() - start;
    out.cached = (await (await caches.open('attnlab-models')).keys()).map((r) => r.url);
    await engine.forgetModel(repo).catch(() => {});
    return out;
  }, { repo, options, ids: IDS });
}

test('the redirect to the store on another origin is followed with CORS; the bytes are checked, kept and reopened with no request', async () => {
  fresh();
  const first = await openInPage('test-org/gpt2', { hub: hub.url });
  assert.equal(first.ok, true, first.message);
  assert.equal(first.same, true, "the logits of loadModel's model of the same bytes");
  assert.equal(first.files[WEIGHTS].size, made.bytes.length);
  assert.equal(first.files[WEIGHTS].from, 'network');
  assert.ok(hub.requests.some((r) => r.server === 'store' && r.method === 'GET'), 'the weights came from the store');
  assert.equal(first.kept, true);
  assert.ok(first.cached.some((u) => u.endsWith(`/test-org/gpt2/main/${WEIGHTS}`)), first.cached.join(', '));
  // opened and kept, then opened again: the second from Cache Storage, with no request to the hub or its store
  await page.evaluate(async (h) => (await window.engine.openModel('test-org/gpt2', { hub: h })).destroy(), hub.url);
  fresh();
  const kept = await page.evaluate(async ({ hub: h, ids }) => {
    const { engine, made } = window;
    const m = await engine.openModel('test-org/gpt2', { hub: h });
    const ref = await engine.loadModel(made.bytes, { config: made.config });
    const a = m.inspect({ ids }, { logits: true }).logits.data, b = ref.inspect({ ids }, { logits: true }).logits.data;
    const out = { from: m.source.files['model.safetensors'].from, same: a.every((x, i) => Math.abs(x - b[i]) <= 1e-5 * (1 + Math.abs(b[i]))) };
    m.destroy();
    ref.destroy();
    await engine.forgetModel('test-org/gpt2');
    return out;
  }, { hub: hub.url, ids: IDS });
  assert.equal(kept.from, 'kept');
  assert.equal(kept.same, true);
  assert.deepEqual(hub.requests, [], 'no request at all');
});

test('a connection dropped midway resumes with a Range request; dropped four times, the open gives up with a coded error', async () => {
  fresh({ [WEIGHTS]: { drop: Math.floor(made.bytes.length / 3), times: 2 } }); // at a third, then a third of the rest
  const resumed = await openInPage('test-org/gpt2', { hub: hub.url });
  assert.equal(resumed.ok, true, resumed.message);
  assert.equal(resumed.same, true);
  // the weights' GETs: the first and one or two resumes. Chromium may hand over the bytes before a drop later or
  // not at all, so how many resumes it takes varies, and a resume before any byte arrived asks from the start (no Range)
  const gets = hub.requests.filter((r) => r.server === 'store' && r.method === 'GET'); // the store holds the weights alone
  assert.ok(gets.length >= 2 && gets.length <= 3, `the first GET and one or two resumes: ${gets.map((r) => r.range ?? 'whole').join(', ')}`);
  const ranges = gets.map((r) => r.range).filter(Boolean);
  // from where each body stopped (Chromium's own HTTP cache may bound the last range by the size it learnt)
  assert.ok(ranges.every((r) => /^bytes=\d+-(\d+)?$/.test(r) && Number(/\d+/.exec(r)[0]) > 0), ranges.join(', '));

  fresh({ [WEIGHTS]: { drop: 3000, times: 4 } });
  const lost = await openInPage('test-org/gpt2', { hub: hub.url });
  assert.equal(lost.code, 'ERR_LOAD');
  assert.match(lost.message, /the connection dropped 4 times.*gave up after 3 resumes/);
  assert.ok(!lost.cached.some((u) => u.includes('test-org/gpt2')), 'nothing kept');
  assert.equal(lost.heap, 0, 'the heap as it was');
});

test("a body whose SHA-256 differs from the hub's, or a size that differs from what the hub said: ERR_DATA, nothing kept", async () => {
  fresh({ [WEIGHTS]: { corrupt: true } });
  const corrupt = await openInPage('test-org/gpt2', { hub: hub.url });
  assert.equal(corrupt.code, 'ERR_DATA');
  assert.match(corrupt.message, /sha256 is [0-9a-f]{64}, but the hub says [0-9a-f]{64}/);
  assert.deepEqual(corrupt.cached.filter((u) => u.includes('test-org/gpt2')), []);
  assert.equal(corrupt.heap, 0);

  fresh({ [WEIGHTS]: { size: 1000 } });
  const size = await openInPage('test-org/gpt2', { hub: hub.url });
  assert.equal(size.code, 'ERR_DATA');
  assert.match(size.message, /more than the 1000 bytes the hub said/);
  assert.deepEqual(size.cached.filter((u) => u.includes('test-org/gpt2')), []);
});

test('404, 401, 500 and a network failure: ERR_LOAD naming the URL and what happened', async () => {
  const weightsUrl = `${hub.url}/test-org/gpt2/resolve/main/${WEIGHTS}`;
  fresh();
  const missing = await openInPage('test-org/missing', { hub: hub.url });
  assert.equal(missing.code, 'ERR_LOAD');
  assert.match(missing.message, /test-org\/missing\/resolve\/main\/config\.json: HTTP 401: the repo is gated, private or missing/);
  for (const [status, what] of [[404, /HTTP 404: no such file/], [500, /HTTP 500: the server failed/]]) {
    fresh({ [WEIGHTS]: { status } });
    const failed = await openInPage('test-org/gpt2', { hub: hub.url });
    assert.equal(failed.code, 'ERR_LOAD', failed.message);
    assert.ok(failed.message.includes(weightsUrl), failed.message);
    assert.match(failed.message, what);
    assert.equal(failed.status, status);
    assert.equal(failed.heap, 0);
  }
  fresh();
  const down = await openInPage('test-org/gpt2', { hub: 'http://127.0.0.1:9' });
  assert.equal(down.code, 'ERR_LOAD');
  assert.match(down.message, /http:\/\/127\.0\.0\.1:9\/test-org\/gpt2\/resolve\/main\/config\.json: the request failed/);
});

test('an abort while the weights arrive: ERR_ABORT, nothing kept, the heap as it was', async () => {
  fresh({ [WEIGHTS]: { pace: 20, pieces: 20 } });
  const aborted = await openInPage('test-org/gpt2', { hub: hub.url, abortAt: 1 });
  assert.equal(aborted.code, 'ERR_ABORT', aborted.message);
  assert.match(aborted.message, /aborted/);
  assert.deepEqual(aborted.cached.filter((u) => u.includes('test-org/gpt2')), []);
  assert.equal(aborted.heap, 0);
});
