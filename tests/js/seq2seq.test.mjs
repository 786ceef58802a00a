// Seq2seq through the JS API on both builds: configuration errors, save/load,
// SIMD vs scalar for one seed, and the models learning what the tutorials
// promise: reversal with attention (and the bottleneck without it), and
// dates whose alignment puts the year on the year.
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { SEQ2SEQ_LIMITS, loadEngine } from '../../web/engine/index.js';
import { throwsCode } from '../lib/assert.mjs';
import { BUILDS, withEngines } from './builds.mjs';

const REVERSE = { task: 'reverse', minLength: 8, maxLength: 12, cell: 'gru', embed: 16, hidden: 64, batch: 64, seed: 1 };
const DATES = { task: 'dates', cell: 'gru', embed: 32, hidden: 64, attention: 'dot', bidirectional: true, batch: 64, seed: 1 };

/** Trains in rounds until the validation sequence accuracy reaches `target` or `maxSteps` pass. */
function trainUntil(m, { target, maxSteps, round = 100, batch = 64, lr = 0.01 }) {
  for (let done = 0; done < maxSteps; done += round) {
    m.train({ steps: round, batch, lr, clip: 5 });
    if (m.evaluate({ split: 'validation', count: 300 }).sequenceAccuracy >= target) break;
  }
}

for (const { engine, ...build } of await withEngines()) {
  describe(`seq2seq API (${build.name})`, { skip: build.skip }, () => {
    test('bad configurations throw errors naming the option, and leak nothing', () => {
      const base = engine.heapUsed();
      throwsCode(() => engine.createSeq2Seq({ task: 'reverse', cell: 'transformer' }), 'ERR_ARG', /cell: unknown value 'transformer'/);
      throwsCode(() => engine.createSeq2Seq({ task: 'reverse', hidden: 0 }), 'ERR_SHAPE', /hidden: 0; it must be within 1\.\.512/);
      throwsCode(() => engine.createSeq2Seq({ task: 'reverse', hidden: 513 }), 'ERR_LIMIT', /hidden: 513; it must be within 1\.\.512/);
      throwsCode(() => engine.createSeq2Seq({ task: 'translate' }), 'ERR_ARG', /task: unknown value 'translate'/);
      throwsCode(() => engine.createSeq2Seq({ task: 'dates', attention: 'location' }), 'ERR_ARG', /location/);
      throwsCode(() => engine.createSeq2Seq({ task: 'reverse', minLength: 9, maxLength: 3 }), 'ERR_VALUE', /maxLength/);
      throwsCode(() => engine.createSeq2Seq({ task: 'pairs' }), 'ERR_ARG', /pairs/);
      throwsCode(() => engine.createSeq2Seq({ task: 'pairs', pairs: 'ab\tba\ncd ba\n' }), 'ERR_VALUE', /line 2/);
      throwsCode(() => engine.createSeq2Seq({ task: 'pairs', pairs: 'ab\tba\n\ncd\t\n' }), 'ERR_VALUE', /line 3/);
      throwsCode(() => engine.createSeq2Seq({ task: 'reverse', seed: -1 }), 'ERR_VALUE', /seed/);
      throwsCode(() => engine.createSeq2Seq(null), 'ERR_ARG', /options/);
      assert.equal(engine.heapUsed(), base, 'heap back at its baseline');
    });

    test('train({ batch }) grows the model past its creation batch, computing what a model created that large computes', () => {
      const base = engine.heapUsed();
      const config = { task: 'reverse', minLength: 3, maxLength: 7, hidden: 16, embed: 8, seed: 7 };
      const small = engine.createSeq2Seq({ ...config, batch: 8 });
      const large = engine.createSeq2Seq({ ...config, batch: 96 });
      for (const batch of [96, 5, 64]) {
        const a = small.train({ steps: 2, batch });
        const b = large.train({ steps: 2, batch });
        assert.deepEqual(a.losses, b.losses, `batch ${batch}: the same losses`);
      }
      assert.equal(small.config.batch, 8, 'config.batch stays the creation option');
      // Evaluation runs in chunks of the buffers' rows, so its loss may sum in another order.
      const [es, el] = [small.evaluate({ count: 100 }), large.evaluate({ count: 100 })];
      assert.ok(Math.abs(es.loss - el.loss) <= 1e-6 * el.loss, `evaluation loss ${es.loss} vs ${el.loss}`);
      assert.deepEqual({ ...es, loss: 0 }, { ...el, loss: 0 }, 'the same accuracies');
      assert.deepEqual(small.translate('52719', { beam: 2 }), large.translate('52719', { beam: 2 }), 'the same translation');
      const loaded = engine.loadSeq2Seq(small.save());
      assert.equal(loaded.train({ steps: 1, batch: 200 }).examples, 200, 'a loaded model grows too');
      loaded.destroy();
      const max = SEQ2SEQ_LIMITS.maxBatch;
      assert.equal(small.train({ steps: 1, batch: max }).examples, max, `up to the documented limit of ${max}`);
      throwsCode(() => small.train({ batch: max + 1 }), 'ERR_LIMIT', new RegExp(`batch: ${max + 1}; it must be within 1\\.\\.${max}`));
      assert.equal(small.train({ steps: 1, batch: 4 }).steps, 8, 'the model keeps training after an error');
      small.destroy();
      large.destroy();
      assert.equal(engine.heapUsed(), base, 'heap back at its baseline');
    });

    test('location attention works on fixed-length inputs', () => {
      const m = engine.createSeq2Seq({ task: 'copy', minLength: 5, maxLength: 5, attention: 'location', hidden: 16, embed: 8 });
      assert.equal(m.config.fixedInput, 5);
      m.train({ steps: 2 });
      throwsCode(() => m.translate('123'), 'ERR_SHAPE', /exactly 5/);
      assert.equal(m.translate('12345').alignment.cols, 5);
      m.destroy();
    });

    test('train, evaluate and translate report what they did; bad calls throw and the model stays usable', () => {
      const base = engine.heapUsed();
      const m = engine.createSeq2Seq({ task: 'sort', minLength: 3, maxLength: 6, hidden: 24, embed: 8, batch: 32, seed: 5 });
      assert.equal(m.config.task, 'sort');
      assert.equal(m.config.attention, 'additive');
      assert.equal(m.inputAlphabet, '0123456789');
      assert.ok(m.config.parameters > 1000);
      const r = m.train({ steps: 3, batch: 16 });
      assert.equal(r.losses.length, 3);
      assert.equal(r.steps, 3);
      assert.equal(r.examples, 48);
      assert.ok(r.loss > 0 && Number.isFinite(r.loss));
      assert.ok(r.examplesPerSecond > 0 && r.tokensPerSecond > r.examplesPerSecond);
      assert.equal(m.train().steps, 4, 'one step at a time by default');
      const e = m.evaluate({ split: 'test', count: 40 });
      assert.equal(e.count, 40);
      for (const k of ['loss', 'tokenAccuracy', 'sequenceAccuracy']) assert.ok(Number.isFinite(e[k]), k);
      assert.deepEqual(m.evaluate({ split: 'test', count: 40 }), e, 'a fixed evaluation set');
      const t = m.translate('4213', { beam: 3 });
      assert.deepEqual(t.inputTokens, ['4', '2', '1', '3']);
      assert.equal(t.alignment.rows, t.outputTokens.length);
      assert.equal(t.alignment.cols, 4);
      for (let i = 0; i < t.alignment.rows; i++) {
        const row = t.alignment.data.subarray(i * 4, i * 4 + 4);
        assert.ok(Math.abs(row.reduce((s, x) => s + x, 0) - 1) < 1e-4, `alignment row ${i} sums to 1`);
      }
      throwsCode(() => m.translate('42x3'), 'ERR_VALUE', /'x'/);
      throwsCode(() => m.translate('12\u00003'), 'ERR_VALUE', /U\+0000 at position 3/); // not silently cut at the NUL
      throwsCode(() => m.train({ batch: 0 }), 'ERR_SHAPE', /batch: 0; it must be within 1\.\./);
      throwsCode(() => m.train({ lr: -1 }), 'ERR_VALUE', /lr/);
      throwsCode(() => m.evaluate({ split: 'dev' }), 'ERR_ARG', /split/);
      throwsCode(() => m.translate('1', { beam: 17 }), 'ERR_LIMIT', /beam/);
      assert.equal(m.translate('4213', { beam: 3 }).output, t.output, 'still usable');
      const ex = m.examples({ split: 'test', count: 5, seed: 3 });
      assert.equal(ex.length, 5);
      for (const { input, output } of ex) assert.equal(output, [...input].sort().join(''));
      m.destroy();
      m.destroy();
      throwsCode(() => m.train(), 'ERR_ARG', /destroyed/);
      assert.equal(engine.heapUsed(), base, 'heap back at its baseline');
    });

    test('save and load: the same numbers; truncated or foreign files are rejected', () => {
      const m = engine.createSeq2Seq({ task: 'reverse', minLength: 2, maxLength: 7, cell: 'lstm', hidden: 16, embed: 8, seed: 9 });
      m.train({ steps: 5, batch: 16 });
      const bytes = m.save();
      assert.ok(bytes instanceof Uint8Array && bytes.length > 4 * m.config.parameters);
      const u = engine.loadSeq2Seq(bytes);
      assert.deepEqual(u.config, m.config);
      assert.equal(u.steps, 5);
      assert.deepEqual(u.translate('123456'), m.translate('123456'));
      assert.deepEqual(u.evaluate({ count: 30 }), m.evaluate({ count: 30 }));
      const base = engine.heapUsed();
      throwsCode(() => engine.loadSeq2Seq(bytes.subarray(0, bytes.length - 10)), 'ERR_VALUE', /truncated|damaged/);
      throwsCode(() => engine.loadSeq2Seq(new TextEncoder().encode('{"not": "a model"}')), 'ERR_VALUE', /not an attnlab/);
      throwsCode(() => engine.loadSeq2Seq(new Uint8Array(0)), 'ERR_VALUE', /empty/);
      throwsCode(() => engine.loadSeq2Seq('model.bin'), 'ERR_ARG', /Uint8Array/);
      assert.equal(engine.heapUsed(), base, 'rejected files leak nothing');
      u.destroy();
      m.destroy();
    });
  });
}

describe('SIMD and scalar builds train alike from one seed', { skip: BUILDS[0].skip }, () => {
  test('losses of 20 steps agree within 1e-3 relative', async () => {
    const runs = [];
    for (const simd of [true, false]) {
      const engine = await loadEngine({ simd, threads: 1 });
      const m = engine.createSeq2Seq({ task: 'reverse', minLength: 3, maxLength: 8, hidden: 32, embed: 16, seed: 4 });
      runs.push(m.train({ steps: 20, batch: 32 }).losses);
      m.destroy();
    }
    for (let i = 0; i < 20; i++) {
      assert.ok(Math.abs(runs[0][i] - runs[1][i]) <= 1e-3 * Math.abs(runs[1][i]), `step ${i}: ${runs[0][i]} vs ${runs[1][i]}`);
    }
  });
});

describe('models learn (SIMD build when available)', () => {
  let engine;
  before(async () => {
    engine = await loadEngine();
  });

  test('reverse, lengths 8-12: additive attention >= 99% on the test split; without attention clearly worse on long inputs', () => {
    const m = engine.createSeq2Seq({ ...REVERSE, attention: 'additive' });
    trainUntil(m, { target: 0.995, maxSteps: 3000, lr: 0.005 });
    const steps = m.steps;
    const withAttention = m.evaluate({ split: 'test', count: 1000 });
    m.destroy();
    const b = engine.createSeq2Seq({ ...REVERSE, attention: 'none' });
    b.train({ steps, batch: 64, lr: 0.005 });
    const bottleneck = b.evaluate({ split: 'test', count: 1000 });
    b.destroy();
    const longest = (r) => r.byLength.find((x) => x.length === 12).sequenceAccuracy;
    console.log(`reverse 8-12 after ${steps} steps: additive ${withAttention.sequenceAccuracy} (length 12: ${longest(withAttention)}), `
      + `none ${bottleneck.sequenceAccuracy} (length 12: ${longest(bottleneck)})`);
    assert.ok(withAttention.sequenceAccuracy >= 0.99, `additive: ${withAttention.sequenceAccuracy}`);
    assert.ok(bottleneck.sequenceAccuracy < withAttention.sequenceAccuracy - 0.2, `none: ${bottleneck.sequenceAccuracy}`);
    assert.ok(longest(bottleneck) < longest(withAttention) - 0.4, `length 12: none ${longest(bottleneck)}`);
  });

  test('dates >= 99% on the test split, and the year is read from the year', () => {
    const m = engine.createSeq2Seq(DATES);
    trainUntil(m, { target: 0.995, maxSteps: 4000 });
    const r = m.evaluate({ split: 'test', count: 1000 });
    console.log(`dates: ${r.sequenceAccuracy} after ${m.steps} steps`);
    assert.ok(r.sequenceAccuracy >= 0.99, `dates: ${r.sequenceAccuracy}`);
    const input = '25th of June, 2009';
    const t = m.translate(input);
    assert.equal(t.output, '2009-06-25');
    const year = input.indexOf('2009');
    for (let i = 0; i < 4; i++) { // output steps 0..3 write the year digits
      const row = t.alignment.data.subarray(i * t.alignment.cols, (i + 1) * t.alignment.cols);
      const onYear = row.subarray(year, year + 4).reduce((s, x) => s + x, 0);
      assert.ok(onYear > 0.5, `year digit ${i}: ${onYear.toFixed(3)} of the weight on the input's year`);
    }
    m.destroy();
  });
});
