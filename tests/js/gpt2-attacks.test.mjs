// The GPT-2 surface's defects found by an attack battery, one test each
// (scalar build): a result whose size passes 4 GiB, config integers past
// 32 bits, a padded header's table, weights that overflow float32 on the
// way to the logits, and a hole in an ablate array. Each is refused with a
// coded error, the heap back at its baseline and the engine usable after.
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { loadEngine } from '../../web/engine/index.js';
import { rejectsCode, throwsCode } from '../lib/assert.mjs';
import { TINY, encode, gpt2Checkpoint, gpt2Shapes, safetensors } from '../lib/gpt2-checkpoint.mjs';

const MB = 1 << 20;

/** Every tensor of config c as F16, each value `value` (a checkpoint's bytes made cheaply). */
function constantCheckpoint(c, value = 0.01) {
  const one = encode('F16', [value]).bytes;
  return safetensors(gpt2Shapes(c).map(([name, shape]) => {
    const bytes = new Uint8Array(shape.reduce((a, b) => a * b, 1) * 2);
    for (let i = 0; i < bytes.length; i += 2) bytes.set(one, i);
    return { name, dtype: 'F16', shape, bytes };
  }));
}

describe('the GPT-2 surface under attack (scalar build)', () => {
  let engine;
  before(async () => {
    engine = await loadEngine({ simd: false, threads: 1 });
    const good = gpt2Checkpoint({ seed: 3 });
    (await engine.loadModel(good.bytes, { config: good.config })).destroy(); // the tokenizer and the heap's first growth
  });

  /** The engine still opens and reads a good checkpoint. */
  async function stillWorks() {
    const good = gpt2Checkpoint({ seed: 5 });
    const gpt = await engine.loadModel(good.bytes, { config: good.config });
    assert.ok(Number.isFinite(gpt.evaluate({ ids: [1, 2, 3, 4] }).loss));
    gpt.destroy();
  }

  test('1. an inspect whose results pass 4 GiB is refused before anything is allocated', async () => {
    // 64 layers x 4 heads, width 4, 2,048 positions, vocabulary 8: 4·L·H·n² = 4.3 GB of attention at n = 2048
    const c = { ...TINY, n_layer: 64, n_head: 4, n_embd: 4, n_positions: 2048, n_ctx: 2048, vocab_size: 8 };
    const gpt = await engine.loadModel(constantCheckpoint(c), { config: c });
    const used = engine.heapUsed();
    const ids = Array.from({ length: 2048 }, (_, i) => i % 8);
    throwsCode(() => gpt.inspect({ ids }), 'ERR_LIMIT', /inspect: 2048 tokens' results take 429\d{7} bytes .* past the limit of 1024 MB/);
    assert.equal(engine.heapUsed(), used, 'nothing allocated');
    // under the limit it runs, and the heap is what it was
    assert.equal(gpt.inspect({ ids: ids.slice(0, 64) }).attention.length, 64);
    assert.equal(engine.heapUsed(), used);
    gpt.destroy();

    // vocabulary 2^19 with logits on 2,048 tokens: 4·n·V = 4.3 GB of logits
    const v = { ...TINY, n_layer: 1, n_head: 1, n_embd: 4, n_positions: 2048, n_ctx: 2048, vocab_size: 2 ** 19 };
    const wide = await engine.loadModel(constantCheckpoint(v), { config: v });
    const before = engine.heapUsed();
    throwsCode(() => wide.inspect({ ids: ids.slice(0, 2048) }, { logits: true }), 'ERR_LIMIT', /leave out the logits/);
    assert.equal(engine.heapUsed(), before);
    assert.equal(wide.inspect({ ids: [1, 2] }, { logits: true }).logits.cols, 2 ** 19);
    wide.destroy();
    await stillWorks();
  });

  test('2. config integers past 32 bits are refused, not wrapped', async () => {
    const good = gpt2Checkpoint({ seed: 2 });
    for (const [field, value] of [['n_layer', 2 ** 32 + 2], ['n_head', -(2 ** 32) + 2], ['n_embd', 2 ** 32 + 16],
      ['n_positions', 2 ** 32 + 24], ['vocab_size', 2 ** 32 + 64], ['n_inner', 2 ** 33]]) {
      const config = { ...good.config, [field]: value };
      if (field === 'n_positions') config.n_ctx = value;
      await rejectsCode(engine.loadModel(good.bytes, { config }), value < 0 ? 'ERR_VALUE' : 'ERR_LIMIT',
        new RegExp(`config: ${field} must be an integer 0\\.\\.2147483647 \\(got ${value}\\)`));
    }
    await stillWorks();
  });

  test('3. a 16 MiB header of {} and spaces grows the heap by at most its size + 1 MiB', async () => {
    const size = 16 * MB;
    const b = new Uint8Array(8 + size);
    new DataView(b.buffer).setUint32(0, size, true);
    b.fill(0x20, 8);
    b[8] = 0x7b;
    b[9] = 0x7d;
    const memory = engine.heap.memory.buffer.byteLength, used = engine.heapUsed();
    await rejectsCode(engine.loadModel(b, { config: TINY }), 'ERR_PARAM', /the file has no such tensor/);
    const grew = engine.heap.memory.buffer.byteLength - memory;
    assert.ok(grew <= size + MB, `the heap grew by ${grew} bytes (at most ${size + MB})`);
    assert.equal(engine.heapUsed(), used);
    await stillWorks();
  });

  test('4. finite weights that overflow float32 give a coded error, never NaN logits or a clamped loss', async () => {
    const bad = gpt2Checkpoint({ seed: 4, set: (w) => { w['ln_f.weight'].fill(3.38e38); } });
    const gpt = await engine.loadModel(bad.bytes, { config: bad.config });
    const ids = [1, 2, 3, 4, 5];
    throwsCode(() => gpt.inspect({ ids }), 'ERR_VALUE', /logits at position \d+ are not finite/);
    throwsCode(() => gpt.inspect({ ids }, { lens: true }), 'ERR_VALUE', /not finite/);
    throwsCode(() => gpt.evaluate({ ids }), 'ERR_VALUE', /not finite/);
    throwsCode(() => gpt.generate({ ids }, { tokens: 3 }), 'ERR_VALUE', /not finite/);
    throwsCode(() => gpt.generate({ ids }, { tokens: 3, temperature: 0 }), 'ERR_VALUE', /not finite/);
    gpt.destroy();
    await stillWorks();
  });

  test('5. a hole in an ablate array is ERR_ARG, not head (0, 0)', async () => {
    const good = gpt2Checkpoint({ seed: 6 });
    const gpt = await engine.loadModel(good.bytes, { config: good.config });
    // eslint-disable-next-line no-sparse-arrays
    const holed = [, { layer: 1, head: 1 }];
    throwsCode(() => gpt.inspect({ ids: [1, 2, 3] }, { ablate: holed }), 'ERR_ARG', /ablate\[0\]: a hole in the array/);
    throwsCode(() => gpt.evaluate({ ids: [1, 2, 3], ablate: holed }), 'ERR_ARG', /a hole/);
    // the model is as it was: no head stays ablated
    const plain = gpt.inspect({ ids: [1, 2, 3] });
    const l0h0 = plain.attention[0][0].data;
    assert.ok(l0h0.some((x) => x > 0), 'head (0, 0) is not zeroed');
    gpt.destroy();
  });
});
