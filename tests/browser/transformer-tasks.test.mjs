// The 'names' task in a page: the engine fetches web/data/names.txt itself
// (Node reads it from disk, tested in tests/js/transformer-tasks.test.mjs),
// so createTransformer({ task: 'names' }) needs no text from the caller; a
// list the server does not have is ERR_DATA.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { openPage, startBrowser } from './browser.mjs';

let env;
before(async () => { env = await startBrowser(); });
after(async () => { await env?.close(); });

test("a page makes, trains and samples a 'names' model; a missing list is ERR_DATA", async () => {
  const { page, errors } = await openPage(env.browser, env.url);
  const r = await page.evaluate(async () => {
    const { loadEngine } = await import('./engine/index.js');
    const { loadNames } = await import('./engine/names.js');
    const engine = await loadEngine({ threads: 1 });
    const m = await engine.createTransformer({ task: 'names', layers: 1, heads: 2, dModel: 32, dFF: 64, context: 32, seed: 1 });
    const before = m.evaluate({ split: 'test', count: 64 }).loss;
    m.train({ steps: 40, lr: 1e-2, warmup: 5 });
    const out = {
      vocabulary: m.config.vocabulary.join(''), before, after: m.evaluate({ split: 'test', count: 64 }).loss,
      text: m.generate('\n', { tokens: 40, temperature: 0.8, seed: 1 }).text,
    };
    m.destroy();
    out.missing = await loadNames(new URL('./data/no-such-names.txt', location.href)).then(() => null, (e) => ({ code: e.code, message: e.message }));
    return out;
  });
  assert.equal(r.vocabulary, '\n-abcdefghijklmnopqrstuvwxyz');
  assert.ok(r.after < r.before - 0.3, `test loss ${r.before} -> ${r.after}`);
  assert.match(r.text, /^[a-z\n-]{40}$/);
  assert.equal(r.missing?.code, 'ERR_DATA');
  assert.match(r.missing.message, /HTTP 404/);
  assert.deepEqual(errors.filter((e) => !/404/.test(e)), []);
});
