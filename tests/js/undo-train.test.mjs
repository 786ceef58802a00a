// undoTrain (web/engine/model.js over train_undo, src/train/train_call.c): every
// kind that trains goes back to where its last train() call found it — the same
// bytes as a save made then, and the same next call (weights, moments, step
// count and training draws all back) — before any call it is ERR_ARG, a loaded
// checkpoint's (fine-tuning) too.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadEngine } from '../../web/engine/index.js';
import { gpt2Checkpoint } from '../lib/gpt2-checkpoint.mjs';

const engine = await loadEngine({ simd: false, threads: 1 });

const KINDS = {
  seq2seq: () => engine.createSeq2Seq({ task: 'copy', minLength: 2, maxLength: 4, hidden: 8, embed: 4, batch: 8, seed: 4 }),
  vision: () => engine.createVisionModel({ task: 'centered', channels: [4, 8], hidden: 16, batch: 8, seed: 3 }),
  transformer: () => engine.createTransformer({ task: 'induction', layers: 1, heads: 2, dModel: 16, context: 16, batch: 4, seed: 2 }),
};

const same = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);

for (const [kind, make] of Object.entries(KINDS)) {
  test(`${kind}: undoTrain puts back the weights, the optimiser state, the steps and the draws of the last call`, async () => {
    const m = await make();
    assert.throws(() => m.undoTrain(), (err) => err.code === 'ERR_ARG' && /no training call to undo/.test(err.message));
    m.train({ steps: 3 });
    const before = m.save();
    const first = m.train({ steps: 2 });
    assert.ok(!same(m.save(), before), 'the call moved the weights');
    m.undoTrain();
    assert.equal(m.steps, 3);
    assert.ok(same(m.save(), before), 'the bytes a save made before the call');
    // the same call again gives the same losses and weights: the moments and draws went back too
    const again = m.train({ steps: 2 });
    assert.deepEqual(Array.from(again.losses), Array.from(first.losses));
    const after = m.save();
    m.undoTrain();
    m.undoTrain(); // twice changes nothing more
    assert.ok(same(m.save(), before));
    m.train({ steps: 2 });
    assert.ok(same(m.save(), after));
    m.destroy();
  });
}

test('a loaded checkpoint before its first train() call has nothing to undo: ERR_ARG with the reason', async () => {
  const { bytes, config } = gpt2Checkpoint();
  const m = await engine.loadModel(bytes, { config });
  assert.throws(() => m.undoTrain(), (err) => err.code === 'ERR_ARG' && /^undoTrain: no training call to undo/.test(err.message));
  m.destroy();
});
