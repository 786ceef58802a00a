// Export for transformers, as a learner uses it: the lab's pretrained induction
// model downloaded as model.safetensors, config.json and vocabulary.json; the
// files opened in Node by engine.loadModel (as transformers would read them:
// GPT-NeoX's layout, RoPE) continue a repeat as the lab's model does; the button
// is there for transformers only, and a model no layout holds (ALiBi) says why.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { loadEngine } from '../../web/engine/index.js';
import { PHONE, SHOTS, openLab, startBrowser } from './browser.mjs';

let env;
before(async () => {
  env = await startBrowser();
});
after(() => env?.close());

test('the pretrained induction model exported: three files that loadModel opens and that continue a repeat as the lab\'s model does', async () => {
  const { page, errors } = await openLab(env, '#ver=2&task=transformer');
  assert.equal(await page.isVisible('#export'), true);
  const downloads = [];
  page.on('download', (d) => downloads.push(d));
  await page.click('#export');
  await page.waitForFunction(() => true);
  for (let i = 0; i < 100 && downloads.length < 3; i++) await page.waitForTimeout(100);
  const byName = Object.fromEntries(await Promise.all(downloads.map(async (d) => [d.suggestedFilename(), readFileSync(await d.path())])));
  assert.deepEqual(Object.keys(byName).sort(), ['config.json', 'model.safetensors', 'vocabulary.json']);
  const config = JSON.parse(byName['config.json']);
  const vocabulary = JSON.parse(byName['vocabulary.json']);
  assert.equal(config.model_type, 'gpt_neox', 'RoPE: GPT-NeoX\'s layout');
  assert.equal(vocabulary.length, config.vocab_size);
  // the lab's own predictions on a repeat, and the exported model's in Node
  const ids = [3, 17, 8, 21, 0, 12, 5, 3, 17, 8, 21, 0];
  const lab = await page.evaluate(async (input) => {
    const s = window.attnlabLab.session;
    const v = await s.read('inspect', { input: { ids: input }, options: { lens: false } });
    return v.predictions.map((p) => p[0].id);
  }, ids);
  const engine = await loadEngine({ threads: 1 });
  const m = await engine.loadModel(new Uint8Array(byName['model.safetensors']), { config });
  try {
    const got = m.inspect({ ids }).predictions.map((p) => p[0].id);
    assert.deepEqual(got, lab, 'the same top prediction at every position');
    assert.deepEqual(got.slice(7, 11), ids.slice(8, 12), 'the repeat continued');
  } finally {
    m.destroy();
  }
  await page.setViewportSize(PHONE);
  await page.locator('#export').scrollIntoViewIfNeeded();
  await page.screenshot({ path: `${SHOTS}lab-export-phone.png` });
  assert.deepEqual(errors, []);
  await page.close();
});

test('a model with ALiBi positions: Export says why no checkpoint layout holds it; other families have no Export', async () => {
  const { page, errors } = await openLab(env, '#ver=2&task=transformer&tfPositional=alibi');
  await page.click('#export');
  await page.waitForFunction(() => /Hugging Face checkpoint: ALiBi/.test(document.body.textContent));
  await page.screenshot({ path: `${SHOTS}lab-export-alibi-desktop.png` });
  const { page: other } = await openLab(env, '#ver=2&task=reverse');
  assert.equal(await other.isVisible('#export'), false, 'a seq2seq model has no Export');
  await other.close();
  assert.deepEqual(errors, []);
  await page.close();
});
