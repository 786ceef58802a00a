// Threads in a page: served by scripts/serve.mjs (which sends COOP and COEP)
// the page is cross-origin isolated and loadEngine({ threads: 2 }) runs on two
// threads, with one thread's results; served by a plain server that sends no
// headers, the page is not isolated and the engine falls back to one thread,
// saying why, without failing.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { readFile } from 'node:fs/promises';
import { extname, join, normalize } from 'node:path';
import { ROOT, openPage, startBrowser } from './browser.mjs';

let env, plain, plainUrl;
before(async () => {
  env = await startBrowser();
  // a host that sends files and their types, nothing else
  const types = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.wasm': 'application/wasm', '.json': 'application/json' };
  const web = join(ROOT, 'web');
  plain = createServer(async (req, res) => {
    const path = normalize(join(web, decodeURIComponent(req.url.split('?')[0])));
    if (!path.startsWith(web)) return res.writeHead(403).end();
    try {
      const body = await readFile(path);
      res.writeHead(200, { 'Content-Type': types[extname(path)] ?? 'application/octet-stream' }).end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise((ok) => plain.listen(0, '127.0.0.1', ok));
  plainUrl = `http://127.0.0.1:${plain.address().port}/`;
});
after(async () => {
  await env?.close();
  await new Promise((ok) => (plain ? plain.close(ok) : ok()));
});

/** Loads engines with 1 and 2 threads in the page; returns what they say and one call's context from each. */
const probe = async (page) => page.evaluate(async () => {
  const { loadEngine } = await import('./engine/index.js');
  const args = { queries: { rows: 37, cols: 5, data: Float32Array.from({ length: 185 }, (_, i) => Math.sin(i)) },
    keys: { rows: 29, cols: 5, data: Float32Array.from({ length: 145 }, (_, i) => Math.cos(i)) }, mask: 'causal' };
  const one = await loadEngine({ threads: 1 });
  const two = await loadEngine({ threads: 2 });
  two.setParallelMinWork(0);
  const result = {
    isolated: crossOriginIsolated, threads: two.threads, reason: two.threadsReason,
    want: Array.from(one.attend(args).context.data), got: Array.from(two.attend(args).context.data),
  };
  two.destroy();
  return result;
});

test('served with COOP and COEP, the page is cross-origin isolated and the engine runs on 2 threads', async () => {
  const { page, errors } = await openPage(env.browser, `${env.url}index.html`);
  const r = await probe(page);
  assert.equal(r.isolated, true);
  assert.equal(r.threads, 2, r.reason ?? '');
  assert.equal(r.reason, null);
  assert.equal(r.got.length, r.want.length);
  r.got.forEach((g, i) => assert.ok(Math.abs(g - r.want[i]) <= 1e-6, `context[${i}]: ${g} vs one thread's ${r.want[i]}`));
  assert.deepEqual(errors, []);
  await page.close();
});

test('served without the headers, the engine falls back to one thread and says why', async () => {
  const { page } = await openPage(env.browser, `${plainUrl}index.html`);
  const r = await probe(page);
  assert.equal(r.isolated, false);
  assert.equal(r.threads, 1);
  assert.match(r.reason, /not cross-origin isolated/);
  assert.deepEqual(r.got, r.want);
  await page.close();
});
