// Fine-tuning a loaded checkpoint with the same train() as a model made here:
// GPT-2 (tied) and GPT-NeoX (Pythia's layout) checkpoints built by the tests
// learn a repeated phrase (their loss on it falls, checked against the float64
// reference forward of the weights they started from), count their steps,
// undo puts them back exactly, the threaded build trains to the same losses,
// bad data is refused naming what was wrong with the model left as it was, and
// a checkpoint whose training state would pass the limit is refused before
// anything is allocated (ERR_LIMIT naming the bytes and the limit); heapUsed()
// reads right past 2 GiB.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { loadEngine } from '../../web/engine/index.js';
import { GPT2_LIMITS } from '../../web/engine/constants.js';
import { withEngines } from './builds.mjs';
import { assertNear, throwsCode } from '../lib/assert.mjs';
import { gpt2Checkpoint, gpt2Shapes, referenceForward, referenceLoss, safetensors, TINY } from '../lib/gpt2-checkpoint.mjs';
import { neoxCheckpoint, neoxReference } from '../lib/neox-checkpoint.mjs';

const PHRASE = [5, 9, 2, 14, 7, 1, 18, 3];
const TEXT = Array.from({ length: 400 }, (_, i) => PHRASE[i % PHRASE.length]);
const PROBE = TEXT.slice(0, 20);

const LAYOUTS = [
  { name: 'GPT-2', make: () => gpt2Checkpoint(), reference: (ck, ids) => referenceForward(ck.weights, ck.config, ids).logits },
  { name: 'GPT-NeoX', make: () => neoxCheckpoint(), reference: (ck, ids) => neoxReference(ck.weights, ck.config, ids).logits },
];

for (const { name: build, skip, engine } of await withEngines()) {
  describe(`fine-tuning a checkpoint (${build})`, { skip }, () => {
    for (const layout of LAYOUTS) {
      test(`${layout.name}: train() lowers the loss on its text, counts steps, and undoTrain() goes back exactly`, async () => {
        const ck = layout.make();
        const m = await engine.loadModel(ck.bytes, { config: ck.config });
        const V = m.config.vocabulary.length;
        const before = m.evaluate({ ids: PROBE }).loss;
        assertNear(before, referenceLoss(layout.reference(ck, PROBE), PROBE, V), 'the loss before, as the float64 reference gives it');
        assert.equal(m.steps, 0);
        const r = m.train({ ids: TEXT, steps: 30, lr: 3e-3, length: 16, batch: 4 });
        assert.equal(r.losses.length, 30);
        assert.equal(r.steps, 30);
        assert.equal(m.steps, 30);
        assert.ok(r.tokensPerSecond > 0 && Number.isFinite(r.tokensPerSecond));
        const after = m.evaluate({ ids: PROBE }).loss;
        assert.ok(after < before / 3, `the loss fell from ${before} to ${after}`);
        assert.ok(r.losses[29] < r.losses[0], 'the last step under the first');
        // a second call goes on from there
        m.train({ ids: TEXT, steps: 2, lr: 1e-3, length: 16 });
        assert.equal(m.steps, 32);
        m.undoTrain();
        assert.equal(m.steps, 30);
        assert.equal(m.evaluate({ ids: PROBE }).loss, after, 'undo: the loss after the first call again');
        m.destroy();
      });
    }

    test('the defaults: 20 steps of 4 windows of min(64, context) tokens at lr 1e-4', async () => {
      const ck = gpt2Checkpoint();
      const m = await engine.loadModel(ck.bytes, { config: ck.config });
      const r = m.train({ ids: TEXT });
      assert.equal(r.steps, 20);
      assert.equal(r.examples, 20 * 4);
      assert.ok(r.loss > 0 && Number.isFinite(r.loss));
      m.destroy();
    });

    test('bad data and options are refused naming what was wrong, the model left as it was', async () => {
      const ck = neoxCheckpoint();
      const m = await engine.loadModel(ck.bytes, { config: ck.config });
      const loss = m.evaluate({ ids: PROBE }).loss, heap = engine.heapUsed();
      throwsCode(() => m.train({ steps: 1 }), 'ERR_ARG', /pass text \(a string\) or ids/);
      throwsCode(() => m.train({ text: 'ab', ids: [1, 2] }), 'ERR_ARG', /one of the two/);
      throwsCode(() => m.train({ text: 7 }), 'ERR_ARG', /text: expected a string/);
      throwsCode(() => m.train({ ids: [1, 2, 3] }), 'ERR_SHAPE', /3 tokens; windows of length 24 need at least 25/);
      throwsCode(() => m.train({ ids: [...TEXT.slice(0, 30), 64], length: 8 }), 'ERR_VALUE', /ids\[30\] is 64; token ids are integers 0\.\.63/);
      throwsCode(() => m.train({ ids: TEXT, length: 25 }), 'ERR_LIMIT', /length/);
      throwsCode(() => m.train({ ids: TEXT, batch: GPT2_LIMITS.maxBatch + 1 }), 'ERR_LIMIT', /batch/);
      throwsCode(() => m.train({ ids: TEXT, lr: -1 }), 'ERR_VALUE', /lr/);
      throwsCode(() => m.undoTrain(), 'ERR_ARG', /no training call to undo/);
      assert.equal(m.evaluate({ ids: PROBE }).loss, loss);
      assert.equal(m.steps, 0);
      assert.equal(engine.heapUsed(), heap, 'nothing allocated by the refused calls');
      m.destroy();
    });
  });
}

test('the threaded build fine-tunes to the same losses as one thread', async () => {
  const one = await loadEngine({ threads: 1 }), two = await loadEngine({ threads: 2 });
  const losses = [];
  for (const engine of [one, two]) {
    const ck = gpt2Checkpoint();
    const m = await engine.loadModel(ck.bytes, { config: ck.config });
    losses.push(m.train({ ids: TEXT, steps: 5, lr: 3e-3, length: 16 }).losses);
    m.destroy();
  }
  for (let i = 0; i < 5; i++) assertNear(losses[1][i], losses[0][i], `step ${i}'s loss`, { atol: 1e-4, rtol: 1e-3 });
  two.terminate?.();
});

test('a checkpoint too large to fine-tune is refused before anything is allocated', async () => {
  // 134 M parameters (a vocabulary of 2^20 by 128, F16, tied): it loads (537 MB of float32), but its weights,
  // gradients, two moments and the snapshot take 7 floats a parameter, past GPT2_LIMITS.maxTrainMB
  const config = { ...TINY, n_layer: 1, n_head: 2, n_embd: 128, vocab_size: 2 ** 20 };
  const tensors = gpt2Shapes(config).map(([name, shape]) => ({
    name, dtype: 'F16', shape, bytes: new Uint8Array(2 * shape.reduce((a, b) => a * b, 1)),
  }));
  const engine = await loadEngine({ threads: 1 });
  const m = await engine.loadModel(safetensors(tensors), { config });
  const heap = engine.heapUsed();
  throwsCode(() => m.train({ ids: TEXT, steps: 1, length: 8 }), 'ERR_LIMIT',
    new RegExp(`fine-tuning this checkpoint takes \\d+ bytes .* past the limit of ${GPT2_LIMITS.maxTrainMB} MB`));
  assert.equal(engine.heapUsed(), heap, 'the heap as it was');
  assert.equal(m.steps, 0);
  assert.ok(Number.isFinite(m.evaluate({ ids: [1, 2, 3] }).loss), 'the model still answers');
  m.destroy();
});

test('heapUsed() counts past 2 GiB of the heap (a fine-tuned GPT-2 small holds 3.5 GB)', async () => {
  const engine = await loadEngine({ threads: 1 });
  const base = engine.heapUsed();
  engine.heap.withBlock({ a: 1.2e9 }, () => engine.heap.withBlock({ b: 1.2e9 }, () => {
    assert.ok(engine.heapUsed() >= base + 2.4e9, `heapUsed() ${engine.heapUsed()} with 2.4 GB more in use than ${base}`);
  }));
  assert.equal(engine.heapUsed(), base);
});
