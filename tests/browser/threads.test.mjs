// Threads in a page: served by scripts/serve.mjs (which sends COOP and COEP)
// the page is cross-origin isolated and loadEngine({ threads: 2 }) runs on two
// threads, with one thread's results. Served by a plain server that sends no
// headers, the built site (dist/) becomes isolated all the same once its service
// worker (coi-sw.js) re-serves the pages with the headers; where service workers
// are blocked, the page stays not isolated and the engine falls back to one
// thread, saying why, without failing.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createServer } from 'node:http';
import { readFile } from 'node:fs/promises';
import { extname, join, normalize } from 'node:path';
import { ROOT, SHOTS, openPage, startBrowser } from './browser.mjs';

/**
 * A host that sends files and their types, nothing else; resolves to { server, url }.
 * `replace` maps a URL path to the body to send in place of the file's.
 */
async function plainHost(root, replace = {}) {
  const types = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.wasm': 'application/wasm', '.json': 'application/json' };
  const server = createServer(async (req, res) => {
    const path = normalize(join(root, decodeURIComponent(req.url.split('?')[0])));
    if (!path.startsWith(root)) return res.writeHead(403).end();
    try {
      const body = replace[req.url] ?? await readFile(path.endsWith('/') ? `${path}index.html` : path);
      res.writeHead(200, { 'Content-Type': types[extname(path)] ?? 'application/octet-stream' }).end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
  return { server, url: `http://127.0.0.1:${server.address().port}/` };
}

let env, plain, plainUrl, site;
before(async () => {
  env = await startBrowser();
  ({ server: plain, url: plainUrl } = await plainHost(join(ROOT, 'web')));
  // the built site as shipped, under a sub-path, on a host that sends no headers
  const dir = join(SHOTS, 'site-threads');
  execFileSync(process.execPath, [`${ROOT}scripts/build.mjs`, '--out', join(dir, 'sub')], { stdio: 'pipe' });
  site = await plainHost(dir);
});
after(async () => {
  await env?.close();
  await new Promise((ok) => (plain ? plain.close(ok) : ok()));
  await new Promise((ok) => (site ? site.server.close(ok) : ok()));
});
/** Loads engines with 1 and 2 threads in the page; returns what they say and, from each, one attend call's context and one multi-head selfAttention's output. */
const probe = async (page) => page.evaluate(async () => {
  const { loadEngine } = await import('./engine/index.js');
  const args = { queries: { rows: 37, cols: 5, data: Float32Array.from({ length: 185 }, (_, i) => Math.sin(i)) },
    keys: { rows: 29, cols: 5, data: Float32Array.from({ length: 145 }, (_, i) => Math.cos(i)) }, mask: 'causal' };
  const w = (rows, cols, k) => ({ rows, cols, data: Float32Array.from({ length: rows * cols }, (_, i) => Math.sin(k * i + 1) / 2) });
  const self = { x: w(43, 8, 1), wq: w(8, 6, 2), wk: w(8, 6, 3), wv: w(8, 6, 4), wo: w(6, 5, 5), heads: 3, causal: true };
  const one = await loadEngine({ threads: 1 });
  const two = await loadEngine({ threads: 2 });
  two.setParallelMinWork(0);
  const result = {
    isolated: crossOriginIsolated, threads: two.threads, reason: two.threadsReason,
    want: Array.from(one.attend(args).context.data), got: Array.from(two.attend(args).context.data),
    wantSelf: Array.from(one.selfAttention(self).output.data), gotSelf: Array.from(two.selfAttention(self).output.data),
  };
  two.destroy();
  return result;
});

/** What probe() says in an isolated page: two threads, one thread's results. */
function assertTwoThreads(r) {
  assert.equal(r.isolated, true);
  assert.equal(r.threads, 2, r.reason ?? '');
  assert.equal(r.reason, null);
  assert.equal(r.got.length, r.want.length);
  r.got.forEach((g, i) => assert.ok(Math.abs(g - r.want[i]) <= 1e-6, `context[${i}]: ${g} vs one thread's ${r.want[i]}`));
  assert.equal(r.gotSelf.length, 43 * 5);
  r.gotSelf.forEach((g, i) => assert.ok(Math.abs(g - r.wantSelf[i]) <= 1e-6, `selfAttention output[${i}]: ${g} vs one thread's ${r.wantSelf[i]}`));
}

/** Counts a page's navigations (a reload may come before the first load event); returns { count, reach }. */
function countLoads(page) {
  const loads = { count: 0 };
  page.on('request', (req) => { if (req.isNavigationRequest() && req.frame() === page.mainFrame()) loads.count++; });
  /** Waits until there were `n` navigations (or 20 s) and the last one loaded. */
  loads.reach = async (n) => {
    for (const start = Date.now(); loads.count < n && Date.now() - start < 20000;) await new Promise((ok) => setTimeout(ok, 50));
    await page.waitForLoadState('load');
  };
  return loads;
}

test('served with COOP and COEP, the page is cross-origin isolated and the engine runs on 2 threads', async () => {
  const { page, errors } = await openPage(env.browser, `${env.url}index.html`);
  const r = await probe(page);
  assertTwoThreads(r);
  assert.deepEqual(errors, []);
  await page.close();
});

test('dist/ on a host without the headers: its service worker makes the page isolated, and the engine runs on 2 threads', async () => {
  const context = await env.browser.newContext();
  try {
    const page = await context.newPage();
    const errors = [];
    page.on('pageerror', (err) => errors.push(String(err)));
    page.on('console', (msg) => { if (msg.type() === 'error') errors.push(msg.text()); });
    const loads = countLoads(page);
    await page.goto(`${site.url}sub/index.html`);
    // the first load registers the worker, which takes control and reloads the page once
    await loads.reach(2);
    await page.waitForSelector('body[data-ready="true"]', { timeout: 20000 }); // the playground works, isolated
    const r = await probe(page);
    assertTwoThreads(r);
    assert.equal(loads.count, 2, 'one reload, no more');
    const worker = await page.evaluate(async () => (await navigator.serviceWorker.getRegistration())?.active?.scriptURL);
    assert.equal(worker, `${site.url}sub/coi-sw.js`);
    // later loads are isolated at once, with no reload
    await page.reload();
    assert.equal(await page.evaluate(() => crossOriginIsolated), true);
    await new Promise((ok) => setTimeout(ok, 500));
    assert.equal(loads.count, 3);
    // the lab too (its worker and WASM come through the service worker, as require-corp wants)
    await page.goto(`${site.url}sub/lab.html`);
    await page.waitForSelector('body[data-ready="true"]', { timeout: 30000 });
    assert.equal(await page.evaluate(() => crossOriginIsolated), true);
    assert.equal(loads.count, 4);
    assert.deepEqual(errors, []);
  } finally {
    await context.close();
  }
});

test('where service workers are blocked and the host sends no headers, the engine falls back to one thread and says why, with no reload', async () => {
  const context = await env.browser.newContext({ serviceWorkers: 'block' });
  try {
    const page = await context.newPage();
    const loads = countLoads(page);
    await page.goto(`${plainUrl}index.html`);
    const r = await probe(page);
    assert.equal(r.isolated, false);
    assert.equal(r.threads, 1);
    assert.match(r.reason, /not cross-origin isolated/);
    assert.deepEqual(r.got, r.want);
    assert.deepEqual(r.gotSelf, r.wantSelf);
    await new Promise((ok) => setTimeout(ok, 500));
    assert.equal(loads.count, 1);
    assert.equal(await page.evaluate(async () => (await navigator.serviceWorker?.getRegistration())?.active ?? null), null);
  } finally {
    await context.close();
  }
});

test('where the service worker takes control yet the page stays not isolated, the page reloads once, never in a loop', async () => {
  // a worker that claims the page but adds no header (as a browser that ignores them would)
  const inert = "self.addEventListener('install', () => self.skipWaiting());"
    + "self.addEventListener('activate', (e) => e.waitUntil(self.clients.claim()));"
    + "self.addEventListener('fetch', (e) => e.respondWith(fetch(e.request)));";
  const host = await plainHost(join(ROOT, 'web'), { '/coi-sw.js': inert });
  const context = await env.browser.newContext();
  try {
    const page = await context.newPage();
    const loads = countLoads(page);
    await page.goto(`${host.url}index.html`);
    await loads.reach(2);
    await new Promise((ok) => setTimeout(ok, 1500));
    assert.equal(loads.count, 2, 'the first load and one reload');
    assert.equal(await page.evaluate(() => !!navigator.serviceWorker.controller && !crossOriginIsolated), true);
    // a later load in the same tab does not reload again
    await page.reload();
    await new Promise((ok) => setTimeout(ok, 1500));
    assert.equal(loads.count, 3);
    const r = await probe(page);
    assert.equal(r.threads, 1);
    assert.match(r.reason, /not cross-origin isolated/);
  } finally {
    await context.close();
    await new Promise((ok) => host.server.close(ok));
  }
});
