// The Learn page's pretrained models (web/models/, from npm run train:models):
// together at most 400 KB, each loads on both WASM builds, and each still
// reaches the test accuracy recorded in models.json, which the page quotes
// (it re-evaluates the same test examples when it loads). Also: the page's
// equations are rendered (scripts/render-math.mjs), so it ships no KaTeX script.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, stat } from 'node:fs/promises';
import { loadEngine } from '../../web/engine/index.js';
import { renderMath } from '../../scripts/render-math.mjs';
import { BUILDS } from './builds.mjs';

const dir = new URL('../../web/models/', import.meta.url);
const manifest = JSON.parse(await readFile(new URL('models.json', dir), 'utf8'));
const reverse = (s) => [...s].reverse().join('');

test('the models are all there and at most 400 KB together', async () => {
  assert.deepEqual(Object.keys(manifest.models).sort(), ['dates', 'reverse-attention', 'reverse-bottleneck']);
  let total = (await stat(new URL('models.json', dir))).size;
  for (const m of Object.values(manifest.models)) {
    const { size } = await stat(new URL(m.file, dir));
    assert.equal(size, m.bytes, `${m.file}: ${size} bytes, the manifest says ${m.bytes}`);
    total += size;
  }
  assert.ok(total <= 400 * 1024, `${total} bytes`);
});

for (const build of BUILDS) {
  test(`each model loads and reaches its recorded test accuracy (${build.name})`, { skip: build.skip }, async () => {
    const engine = await loadEngine({ simd: build.simd });
    for (const [name, spec] of Object.entries(manifest.models)) {
      const m = engine.loadSeq2Seq(new Uint8Array(await readFile(new URL(spec.file, dir))));
      try {
        assert.equal(m.config.task, spec.options.task, name);
        const ev = m.evaluate({ split: 'test', count: manifest.evalCount });
        // the same examples and weights; SIMD and scalar sums may round one borderline example differently
        assert.ok(Math.abs(ev.sequenceAccuracy - spec.sequenceAccuracy) <= 2 / manifest.evalCount,
          `${name}: ${ev.sequenceAccuracy} vs recorded ${spec.sequenceAccuracy}`);
      } finally {
        m.destroy();
      }
    }
    // what the article says about them
    const acc = (n) => manifest.models[n].sequenceAccuracy;
    assert.ok(acc('reverse-attention') >= 0.95, 'attention reverses almost every test string');
    assert.ok(acc('reverse-attention') - acc('reverse-bottleneck') >= 0.2, 'the bottleneck is clearly worse');
    assert.ok(acc('dates') >= 0.95, 'the dates model converts almost every test date');
  });
}

test('the reverse models: attention handles the long strings the bottleneck cannot', async () => {
  const engine = await loadEngine();
  const load = async (n) => engine.loadSeq2Seq(new Uint8Array(await readFile(new URL(manifest.models[n].file, dir))));
  const a = await load('reverse-attention');
  const b = await load('reverse-bottleneck');
  const long = (ev) => ev.byLength.filter((x) => x.length >= 13);
  const mean = (rows) => rows.reduce((s, x) => s + x.sequenceAccuracy * x.count, 0) / rows.reduce((s, x) => s + x.count, 0);
  const tailA = mean(long(a.evaluate({ split: 'test', count: manifest.evalCount })));
  const tailB = mean(long(b.evaluate({ split: 'test', count: manifest.evalCount })));
  assert.ok(tailA > 0.9 && tailB < 0.5, `13+ digits: attention ${tailA}, bottleneck ${tailB}`);
  // the page's default input: attention right
  assert.equal(a.translate('31415926535').output, reverse('31415926535'));
  a.destroy();
  b.destroy();
});

test('web/learn.html has its equations rendered to MathML (no KaTeX script shipped)', async () => {
  const html = await readFile(new URL('../../web/learn.html', import.meta.url), 'utf8');
  assert.equal(renderMath(html), html, 'run node scripts/render-math.mjs');
  assert.ok((html.match(/<math/g) ?? []).length >= 15);
  assert.doesNotMatch(html, /katex\.js|<script(?![^>]*type="module" src="learn\/main\.js")/);
  assert.doesNotMatch(html, / style="/, 'no inline style (CSP)');
});
