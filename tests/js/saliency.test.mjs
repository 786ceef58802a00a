// Seq2seq saliency (implicit attention) through the JS API on both builds:
// its shape and values beside the attention weights, Kendall's tau, errors
// with codes, and a model left as it was (same translation, same bytes).
// The gradient itself is checked against finite differences in
// tests/native/test_saliency.c.
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { agreement, kendallTau, loadEngine } from '../../web/engine/index.js';
import { BUILDS } from './builds.mjs';

const model = (name) => readFileSync(new URL(`../../web/models/${name}.s2s`, import.meta.url));

for (const build of BUILDS) {
  describe(`seq2seq saliency (${build.name})`, { skip: build.skip }, () => {
    let engine;
    before(async () => {
      engine = await loadEngine({ simd: build.simd, threads: 1 });
    });

    test('one value per input token, non-negative, beside the attention row of that step', () => {
      const m = engine.loadSeq2Seq(model('reverse-attention'));
      const t = m.translate('31415');
      for (let step = 0; step < t.outputTokens.length; step++) {
        const s = m.saliency('31415', { step });
        assert.equal(s.rows, 1);
        assert.equal(s.cols, 5);
        assert.equal(s.data.length, 5);
        assert.ok(s.data.every((x) => Number.isFinite(x) && x >= 0), `finite, >= 0: ${s.data}`);
        assert.equal(s.token, t.outputTokens[step]);
        assert.deepEqual(Array.from(s.attention.data), Array.from(t.alignment.data.subarray(step * 5, step * 5 + 5)));
        assert.equal(s.tau, kendallTau(s.attention.data, s.data));
        assert.ok(s.tau >= -1 && s.tau <= 1);
      }
      m.destroy();
    });

    test('a reversing model: the first output token is most sensitive to the last input token', () => {
      const m = engine.loadSeq2Seq(model('reverse-attention'));
      const s = m.saliency('1234567', { step: 0 });
      assert.equal(s.token, '7');
      const top = s.data.indexOf(Math.max(...s.data));
      assert.equal(top, 6, `saliency ${Array.from(s.data)}`);
      const c = m.compareAttention('1234567');
      assert.equal(c.output, '7654321');
      assert.equal(c.steps.length, 8); // seven digits and </s>
      assert.ok(c.steps.every((x) => x.saliency.cols === 7 && x.attention.cols === 7));
      for (const x of c.steps) assert.deepEqual(x.agreement, agreement(x.attention.data, x.saliency.data, { k: 1 }));
      m.destroy();
    });

    test('the shipped dates model: attention and saliency peak at the same character at every step, while τ over all characters stays low', () => {
      // why the pages report agreement beside τ: τ ranks every faint position too
      const m = engine.loadSeq2Seq(model('dates'));
      const c = m.compareAttention('25th of June, 2009');
      assert.equal(c.output, '2009-06-25');
      const matches = c.steps.filter((x) => x.agreement.topMatch).length;
      const meanTau = c.steps.reduce((a, x) => a + x.tau, 0) / c.steps.length;
      assert.ok(matches >= 0.8 * c.steps.length, `top match at ${matches} of ${c.steps.length} steps`);
      assert.ok(meanTau < 0.5, `mean τ ${meanTau}`);
      m.destroy();
    });

    test('without attention: saliency still, tau null, attention all zero', () => {
      const m = engine.loadSeq2Seq(model('reverse-bottleneck'));
      const s = m.saliency('2718', { step: 1 });
      assert.equal(s.tau, null);
      assert.ok(s.attention.data.every((x) => x === 0));
      assert.ok(s.data.some((x) => x > 0), 'some input matters');
      m.destroy();
    });

    test('the model is left as it was: same translation, same saved bytes', () => {
      const m = engine.loadSeq2Seq(model('dates'));
      const bytes = m.save();
      const before = m.translate('12 March 1999');
      m.compareAttention('12 March 1999');
      assert.deepEqual(m.translate('12 March 1999'), before);
      assert.deepEqual(m.save(), bytes);
      m.destroy();
    });

    test('bad arguments are errors with codes; the model stays usable', () => {
      const m = engine.loadSeq2Seq(model('reverse-attention'));
      const heap = engine.heapUsed();
      assert.throws(() => m.saliency('123', { step: 9 }), { code: 'ERR_VALUE', message: /saliency: step: 9; this output has steps 0\.\.3/ });
      assert.throws(() => m.saliency('123', { step: -1 }), { code: 'ERR_SHAPE', message: /step: -1; it must be within 0\.\./ });
      assert.throws(() => m.saliency('123', { step: 99 }), { code: 'ERR_LIMIT', message: /step: 99/ });
      assert.throws(() => m.saliency('123', { step: 1.5 }), { code: 'ERR_VALUE', message: /step/ });
      assert.throws(() => m.saliency(123), { code: 'ERR_ARG', message: /text: expected a string/ });
      assert.throws(() => m.saliency('12x'), { code: 'ERR_VALUE', message: /character 'x' at position 3/ });
      assert.equal(engine.heapUsed(), heap, 'nothing leaked');
      assert.equal(m.saliency('123').token, '3');
      m.destroy();
      assert.throws(() => m.saliency('123'), (err) => /destroyed/.test(err.message));
    });
  });
}
