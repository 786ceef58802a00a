// Threaded transformer training: a batch splits into one shard per thread,
// each shard's forward and backward run on its own thread with its own
// activations and gradients, and the gradients are summed in shard order. The
// same seed and thread count give the same model bit for bit; one thread and
// two give the same losses within rounding.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { loadEngine } from '../../web/engine/index.js';
import { simdSupported } from '../../web/engine/wasm.js';

const skip = simdSupported() ? false : 'this runtime has no WebAssembly SIMD (the threaded build needs it)';
const MODEL = { task: 'induction', layers: 2, heads: 2, dModel: 32, dFF: 64, context: 32, batch: 8, seed: 4 };
const TRAIN = { steps: 5, batch: 8, lr: 3e-3, warmup: 0, clip: 1 };

/** Trains a fresh model on an engine; its losses and every weight as one vector. */
async function trained(engine, train = [TRAIN], options = MODEL) {
  const m = await engine.createTransformer(options);
  const losses = [];
  for (const t of train) losses.push(...m.train(t).losses);
  const weights = Float32Array.from(Object.values(m.weights()).flatMap((w) => [...w]));
  const test = m.evaluate({ count: 32 });
  m.destroy();
  return { losses, weights, test };
}

const bitsOf = (x) => new Uint8Array(x.buffer, x.byteOffset, x.byteLength);

describe('threaded transformer training', { skip }, () => {
  let one, two; // the single-thread build, and the threaded build on two threads
  before(async () => {
    [one, two] = await Promise.all([1, 2].map((threads) => loadEngine({ threads })));
    two.setParallelMinWork(0); // every region splits, however small the model
  });
  after(() => two?.destroy());

  test('two threads, one seed: the same model twice, bit for bit', async () => {
    assert.equal(two.threads, 2, two.threadsReason);
    const a = await trained(two), b = await trained(two), c = await trained(one);
    assert.deepEqual(bitsOf(a.weights), bitsOf(b.weights), 'the same weights');
    assert.deepEqual(a.losses, b.losses);
    // the batch really ran in two shards: its sums over rows were taken in another order
    assert.notDeepEqual(bitsOf(a.weights), bitsOf(c.weights), 'one thread rounds differently');
  });

  test('one thread and two: the same losses within rounding', async () => {
    // The first loss is the same forward pass, its mean taken as two shards'
    // sums: a few ulps. Later steps differ by the gradients' rounding (each a
    // sum over 8 sequences taken as 4 + 4), which AdamW can magnify for a
    // weight whose gradient is rounding noise, but the losses stay close; a
    // shard's rows counted twice or not at all moves them by far more.
    const a = await trained(one), b = await trained(two);
    assert.ok(Math.abs(a.losses[0] - b.losses[0]) <= 1e-6 * a.losses[0], `step 0: loss ${a.losses[0]} vs ${b.losses[0]}`);
    for (let i = 1; i < TRAIN.steps; i++) {
      assert.ok(Math.abs(a.losses[i] - b.losses[i]) <= 1e-4 * a.losses[i], `step ${i}: loss ${a.losses[i]} vs ${b.losses[i]}`);
    }
    assert.ok(Math.abs(a.test.loss - b.test.loss) <= 1e-3 * a.test.loss, `test loss ${a.test.loss} vs ${b.test.loss}`);
  });

  test('batches of any size split: odd, smaller and larger than the model\'s', async () => {
    const train = [{ ...TRAIN, batch: 7 }, { ...TRAIN, batch: 13, steps: 2 }];
    const a = await trained(one, train), b = await trained(two, train);
    for (let i = 0; i < a.losses.length; i++) {
      assert.ok(Math.abs(a.losses[i] - b.losses[i]) <= 1e-4 * a.losses[i], `step ${i}: loss ${a.losses[i]} vs ${b.losses[i]}`);
    }
    // one sequence is one shard: the model alone, as on one thread, bit for bit
    const single = [{ ...TRAIN, batch: 1 }];
    const c = await trained(one, single), d = await trained(two, single);
    assert.deepEqual(bitsOf(d.weights), bitsOf(c.weights));
    assert.deepEqual(d.losses, c.losses);
  });

  test('a bad call throws what it throws on one thread', async () => {
    const models = await Promise.all([one, two].map((e) => e.createTransformer(MODEL)));
    for (const args of [{ steps: 1, batch: 0 }, { steps: 1, batch: 1e6 }, { steps: 1, lr: -1 }]) {
      const [e1, e2] = models.map((m) => {
        try {
          m.train(args);
        } catch (err) {
          return { name: err.name, code: err.code, message: err.message };
        }
        return null;
      });
      assert.ok(e1, `train(${JSON.stringify(args)}) throws`);
      assert.deepEqual(e2, e1, `train(${JSON.stringify(args)})`);
    }
    for (const m of models) m.destroy();
  });
});
