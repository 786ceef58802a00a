// Threaded training (seq2seq and the image models): a batch splits into one
// shard per thread, each shard's forward and backward run on its own thread,
// and the gradients are summed in shard order. The same seed and thread count give the same model bit for
// bit; one thread and two give the same model within rounding; a bad call
// throws what one thread throws and leaves the model as it was.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { loadEngine } from '../../web/engine/index.js';
import { simdSupported } from '../../web/engine/wasm.js';

const skip = simdSupported() ? false : 'this runtime has no WebAssembly SIMD (the threaded build needs it)';
const MODEL = { task: 'dates', cell: 'gru', embed: 16, hidden: 32, attention: 'dot', batch: 32, seed: 3 };
const STEPS = 5;

/**
 * The weights in a saved file: a seq2seq file ends with the model's
 * (… f32 parameters | u32 checksum) and the trainer's u32 checksum (tail 8),
 * an image model's with its f32 parameters and one u32 checksum (tail 4).
 */
function weights(bytes, count, tail = 8) {
  const end = bytes.length - tail;
  return new Float32Array(bytes.slice(end - 4 * count, end).buffer);
}

/** The largest |a - b| over two weight vectors, and where. */
function largestDifference(a, b) {
  let worst = 0, at = 0;
  for (let i = 0; i < a.length; i++) {
    const d = Math.abs(a[i] - b[i]);
    if (d > worst) [worst, at] = [d, i];
  }
  return { worst, at };
}

function trained(engine, train, options = MODEL) {
  const m = engine.createSeq2Seq(options);
  const losses = [];
  for (const t of train) losses.push(...m.train(t).losses);
  return { m, losses, bytes: m.save() };
}

function errorOf(fn) {
  try {
    fn();
  } catch (err) {
    return { name: err.name, code: err.code, message: err.message };
  }
  return null;
}

describe('threaded training', { skip }, () => {
  let one, two;
  before(async () => {
    one = await loadEngine({ threads: 1 });
    two = await loadEngine({ threads: 2 });
    two.setParallelMinWork(0); // every region splits, however small the model
  });
  after(() => two?.destroy());

  test('two threads, one seed: the same model twice, bit for bit', () => {
    assert.equal(two.threads, 2, two.threadsReason);
    const train = [{ steps: STEPS, batch: 32, lr: 0.01 }, { steps: 2, batch: 7, lr: 0.01 }];
    const a = trained(two, train), b = trained(two, train), c = trained(one, train);
    assert.deepEqual(a.bytes, b.bytes, 'the same saved bytes');
    assert.deepEqual(a.losses, b.losses);
    // the batch really ran in two shards: its sums over rows were taken in another order
    assert.notDeepEqual(a.bytes, c.bytes, 'one thread rounds differently');
    for (const x of [a, b, c]) x.m.destroy();
  });

  test('one thread and two: the same model within rounding after a few steps', () => {
    // SGD moves each weight by lr times its gradient, so the two differ by the
    // gradients' rounding (each gradient a sum over 32 rows, taken as 16 + 16
    // instead of one sum: a few ulps) times lr, carried through the steps.
    // We see one ulp of a weight (6e-8 for |w| in [0.5, 1)); 1e-6, 16 ulps,
    // leaves room for other sizes and still fails on any real difference
    // (a shard's rows counted twice or not at all moves weights by ~1e-2).
    const sgd = [{ steps: STEPS, batch: 32, lr: 0.5, optimizer: 'sgd', clip: 0 }];
    const a = trained(one, sgd), b = trained(two, sgd);
    const n = a.m.config.parameters;
    const wa = weights(a.bytes, n), wb = weights(b.bytes, n);
    const { worst, at } = largestDifference(wa, wb);
    assert.ok(worst <= 1e-6, `weight ${at} of ${n}: ${wa[at]} (one thread) vs ${wb[at]} (two), |diff| ${worst}`);
    for (let i = 0; i < STEPS; i++) {
      assert.ok(Math.abs(a.losses[i] - b.losses[i]) <= 1e-6 * a.losses[i], `SGD step ${i}: loss ${a.losses[i]} vs ${b.losses[i]}`);
    }
    // Adam divides by the gradient's running size, so a weight whose gradient
    // is rounding noise can move by up to lr either way; the losses stay close
    const adam = [{ steps: STEPS, batch: 32, lr: 0.01 }];
    const c = trained(one, adam), d = trained(two, adam);
    for (let i = 0; i < STEPS; i++) {
      assert.ok(Math.abs(c.losses[i] - d.losses[i]) <= 1e-4 * c.losses[i], `Adam step ${i}: loss ${c.losses[i]} vs ${d.losses[i]}`);
    }
    for (const x of [a, b, c, d]) x.m.destroy();
  });

  test('a model trained on two threads evaluates, translates and explains itself as on one', () => {
    const { m, bytes } = trained(two, [{ steps: 30, batch: 32, lr: 0.02 }]);
    m.destroy();
    const a = one.loadSeq2Seq(bytes), b = two.loadSeq2Seq(bytes);
    const ea = a.evaluate({ split: 'test', count: 100 }), eb = b.evaluate({ split: 'test', count: 100 });
    assert.ok(Math.abs(ea.loss - eb.loss) <= 1e-6 * ea.loss, `evaluation loss ${ea.loss} vs ${eb.loss}`);
    assert.equal(eb.tokenAccuracy, ea.tokenAccuracy);
    assert.equal(eb.sequenceAccuracy, ea.sequenceAccuracy);
    const input = '25th of June, 2009';
    const ta = a.translate(input, { beam: 3 }), tb = b.translate(input, { beam: 3 });
    assert.equal(tb.output, ta.output);
    assert.deepEqual(tb.alignment, ta.alignment);
    const sa = a.saliency(input, { step: 1 }), sb = b.saliency(input, { step: 1 });
    assert.deepEqual(sb.saliency, sa.saliency);
    a.destroy();
    b.destroy();
  });

  // the image models: the same split of each batch, with hard attention's draws taken in one order
  const VISION = { task: 'cluttered', channels: [4, 8], hidden: 16, batch: 8, seed: 2 };
  for (const mode of ['soft', 'hard']) {
    test(`image model, ${mode} attention: one seed twice on two threads, bit for bit; one thread within rounding`, async () => {
      const run = async (engine, optimizer) => {
        const m = await engine.createVisionModel({ ...VISION, attention: 'dot', mode });
        const losses = m.train({ steps: STEPS, batch: 8, optimizer, lr: optimizer === 'sgd' ? 0.05 : 0.002, clip: 0 }).losses;
        const bytes = m.save();
        const n = m.config.parameters;
        m.destroy();
        return { losses, bytes, w: weights(bytes, n, 4) };
      };
      const a = await run(two, 'adam'), b = await run(two, 'adam'), c = await run(one, 'adam');
      assert.deepEqual(a.bytes, b.bytes, 'the same saved bytes');
      assert.notDeepEqual(a.bytes, c.bytes, 'one thread rounds differently: the batch ran in two shards');
      for (let i = 0; i < STEPS; i++) {
        assert.ok(Math.abs(a.losses[i] - c.losses[i]) <= 1e-4 * c.losses[i], `Adam step ${i}: loss ${c.losses[i]} vs ${a.losses[i]}`);
      }
      // SGD: as for seq2seq, the weights differ by the gradients' rounding times lr
      const d = await run(one, 'sgd'), e = await run(two, 'sgd');
      const { worst, at } = largestDifference(d.w, e.w);
      assert.ok(worst <= 1e-6, `weight ${at}: ${d.w[at]} (one thread) vs ${e.w[at]} (two), |diff| ${worst}`);
    });
  }

  test('a bad call throws what it throws on one thread and leaves the model as it was', () => {
    const calls = [
      { steps: 1, batch: 0 },
      { steps: 1, batch: 5000 },
      { steps: 1, batch: 32, lr: -1 },
      { steps: 3, batch: 32, lr: 1e30, clip: 0 }, // diverges: every weight goes back
    ];
    const models = [one, two].map((e) => e.createSeq2Seq(MODEL));
    for (const m of models) m.train({ steps: 2, batch: 32, lr: 0.01 });
    for (const args of calls) {
      const [e1, e2] = models.map((m) => errorOf(() => m.train(args)));
      assert.ok(e1 && e2, `train(${JSON.stringify(args)}) throws`);
      assert.deepEqual(e2, e1, `train(${JSON.stringify(args)})`);
    }
    assert.match(errorOf(() => models[1].train(calls[3])).message, /training diverged/);
    // the failed calls changed nothing: the same model as one never given them
    models[1].train({ steps: 2, batch: 32, lr: 0.01 });
    const clean = trained(two, [{ steps: 2, batch: 32, lr: 0.01 }, { steps: 2, batch: 32, lr: 0.01 }]);
    assert.deepEqual(models[1].save(), clean.bytes);
    for (const m of [...models, clean.m]) m.destroy();
  });
});
