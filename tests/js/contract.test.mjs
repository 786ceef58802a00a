// The reliability contract of the three models through the JS API, on the
// scalar build: a training call is all or nothing (a step that diverges
// throws ERR_VALUE naming it, and the model predicts, evaluates and saves as
// before the call); a call that does not grow the model leaves the heap at
// its baseline; model files whose fields lie are rejected without growing
// memory past their own length + 1 MB, and the shipped files load and save
// to the same bytes; a loaded image model trains on batches larger than the
// one it was saved with (the core's limit, VIS_MAX_BATCH).
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { loadEngine } from '../../web/engine/index.js';
import { throwsCode, rejectsCode } from '../lib/assert.mjs';
import { gpt2Checkpoint } from '../lib/gpt2-checkpoint.mjs';

const MODELS = new URL('../../web/models/', import.meta.url);
const S2S = { task: 'reverse', minLength: 3, maxLength: 8, hidden: 16, embed: 8, batch: 8, seed: 2 };
const VIS = { task: 'centered', channels: [4, 8], hidden: 16, batch: 8, seed: 3 };
const TF = { task: 'induction', layers: 2, heads: 2, dModel: 16, dFF: 0, context: 16, batch: 4, seed: 4 };
const LRS = [1e10, 1e20, 1e30];
const MB = 1 << 20;

const u32 = (b, at) => (b[at] | b[at + 1] << 8 | b[at + 2] << 16 | b[at + 3] << 24) >>> 0;
function put32(b, at, v) { for (let i = 0; i < 4; i++) b[at + i] = (v >>> (8 * i)) & 0xff; }
function fnv1a(b, from, to) {
  let h = 2166136261;
  for (let i = from; i < to; i++) h = Math.imul(h ^ b[i], 16777619) >>> 0;
  return h;
}
const fixVision = (b) => { put32(b, b.length - 4, fnv1a(b, 0, b.length - 4)); return b; };
function fixSeq2Seq(b) {
  const m = 40 + u32(b, 28);
  put32(b, b.length - 8, fnv1a(b, m, b.length - 8));
  put32(b, b.length - 4, fnv1a(b, 0, b.length - 4));
  return b;
}
const shipped = (name) => new Uint8Array(readFileSync(new URL(name, MODELS)));

describe('the reliability contract (scalar build)', () => {
  let engine;
  before(async () => { engine = await loadEngine({ simd: false, threads: 1 }); });

  for (const lr of LRS) {
    for (const steps of [1, 3]) {
      test(`seq2seq: train({ steps: ${steps}, lr: ${lr} }) throws ERR_VALUE naming the step; the model is as before`, () => {
        const m = engine.createSeq2Seq(S2S);
        m.train({ steps: 2, batch: 8 });
        const saved = m.save(), before = m.translate('31415'), ev = m.evaluate({ count: 20 });
        throwsCode(() => m.train({ steps, lr, batch: 8 }), 'ERR_VALUE', /diverged at step 3/);
        assert.equal(m.steps, 2);
        assert.deepEqual(m.translate('31415'), before);
        assert.deepEqual(m.evaluate({ count: 20 }), ev);
        assert.deepEqual(m.save(), saved);
        m.train({ steps: 1, batch: 8 }); // and it trains on
        m.destroy();
      });

      test(`transformer: train({ steps: ${steps}, lr: ${lr} }) throws ERR_VALUE naming the step; the model is as before`, async () => {
        const m = await engine.createTransformer(TF);
        m.train({ steps: 2, batch: 4 });
        const input = m.examples({ count: 1, seed: 5 })[0].input;
        const saved = m.save(), before = m.inspect(input), ev = m.evaluate({ count: 8 }), scores = m.headScores({ count: 4 });
        throwsCode(() => m.train({ steps, lr, batch: 4 }), 'ERR_VALUE', /diverged at step 3/);
        assert.equal(m.steps, 2);
        assert.deepEqual(m.inspect(input), before);
        assert.deepEqual(m.evaluate({ count: 8 }), ev);
        assert.deepEqual(m.headScores({ count: 4 }), scores);
        assert.deepEqual(m.save(), saved);
        m.train({ steps: 1, batch: 4 }); // and it trains on
        assert.equal(m.steps, 3);
        m.destroy();
      });

      test(`image model: train({ steps: ${steps}, lr: ${lr} }) throws ERR_VALUE naming the step; the model is as before`, async () => {
        const m = await engine.createVisionModel({ ...VIS, mode: lr === 1e20 ? 'hard' : 'soft' });
        m.train({ steps: 2, batch: 8 });
        const image = m.examples({ count: 1, seed: 5 })[0].image;
        const saved = m.save(), before = m.predict(image), ev = m.evaluate({ count: 20 });
        throwsCode(() => m.train({ steps, lr, batch: 8 }), 'ERR_VALUE', /diverged at step 3/);
        assert.equal(m.steps, 2);
        assert.deepEqual(m.predict(image), before);
        assert.deepEqual(m.evaluate({ count: 20 }), ev);
        assert.deepEqual(m.save(), saved);
        m.train({ steps: 1, batch: 8 });
        m.destroy();
      });
    }
  }

  test('a training call that does not grow the model leaves the heap at its baseline (the first call too)', async () => {
    const s = engine.createSeq2Seq(S2S);
    const v = await engine.createVisionModel(VIS);
    const t = await engine.createTransformer(TF);
    const base = engine.heapUsed();
    s.train({ steps: 2, batch: 8 });
    v.train({ steps: 2, batch: 8 });
    t.train({ steps: 2, batch: 4 });
    assert.equal(engine.heapUsed(), base, 'after the first calls');
    throwsCode(() => s.train({ steps: 1, lr: 1e30, batch: 8 }), 'ERR_VALUE', /diverged/);
    throwsCode(() => v.train({ steps: 1, lr: 1e30, batch: 8 }), 'ERR_VALUE', /diverged/);
    throwsCode(() => t.train({ steps: 1, lr: 1e30, batch: 4 }), 'ERR_VALUE', /diverged/);
    assert.equal(engine.heapUsed(), base, 'after failed calls');
    s.destroy();
    v.destroy();
    t.destroy();
  });

  test('a GPT-2 checkpoint: its calls and their failures leave the heap at its baseline and the results as they were', async () => {
    const file = gpt2Checkpoint({ dtype: 'F16', seed: 8 });
    const gpt = await engine.loadModel(file.bytes, { config: file.config });
    const ids = [4, 9, 2, 4, 9, 2, 7];
    const run = () => ({
      inspect: gpt.inspect({ ids }, { lens: true, logits: true, ablate: [{ layer: 0, head: 0 }] }),
      evaluate: gpt.evaluate({ ids }), generate: gpt.generate({ ids }, { tokens: 4, temperature: 0.7, seed: 3 }),
      scores: gpt.headScores({ count: 2, length: 5 }),
    });
    const first = run();
    const base = engine.heapUsed();
    assert.deepEqual(run(), first);
    assert.equal(engine.heapUsed(), base, 'after the calls');
    throwsCode(() => gpt.inspect({ ids: [99] }), 'ERR_VALUE', /ids\[0\] is 99/);
    throwsCode(() => gpt.evaluate({ ids, ablate: [{ layer: 5, head: 0 }] }), 'ERR_LIMIT', /ablate\[0\]\.layer/);
    throwsCode(() => gpt.generate({ ids }, { topK: -1 }), 'ERR_SHAPE', /topK/);
    await rejectsCode(engine.loadModel(file.bytes.subarray(0, file.bytes.length - 1), { config: file.config }), 'ERR_VALUE', /not inside the data/);
    assert.equal(engine.heapUsed(), base, 'after failed calls');
    assert.deepEqual(run(), first);
    gpt.destroy();
  });

  test('a retina whose policy is too narrow to learn from is refused, however float32 would round it', async () => {
    const RETINA = { task: 'cluttered', mode: 'hard', sensor: 'retina', start: 'constant', channels: [4], hidden: 8, batch: 4 };
    for (const sigma of [1e-30, 1e-46, 5e-324, 1e-4]) {
      await rejectsCode(engine.createVisionModel({ ...RETINA, sigma }), 'ERR_VALUE', /sigma: .*must be within 0\.001\.\.1/);
    }
    const m = await engine.createVisionModel({ ...RETINA, sigma: 0.001 });
    assert.equal(m.config.sigma.toPrecision(3), '0.00100');
    m.destroy();
  });

  describe('the transformer against hostile values and files', () => {
    // .tfm layout: magic 8 | version 8 | task 12, layers 16, heads 20, dModel 24, dFF 28, context 32,
    // positional 36, score 40, batch 44, vocabulary 48, steps 52 | seed 56 | stream 64 | text length 72 | text 76..
    // | u64 P | P x f32 | u32 FNV-1a
    const memory = () => engine.heap.exports.memory.buffer.byteLength;
    const fix = (b) => { put32(b, b.length - 4, fnv1a(b, 0, b.length - 4)); return b; };
    const params = (b) => 76 + u32(b, 72) + 8;

    test('a file whose step count is the most a model can count loads, and training past it is refused unchanged', async () => {
      const m = await engine.createTransformer(TF);
      const b = m.save();
      put32(b, 52, 0x7ffffffe);
      const full = await engine.loadModel(fix(b));
      const saved = full.save();
      throwsCode(() => full.train({ steps: 3, batch: 4 }), 'ERR_LIMIT', /has taken 2147483646 steps/);
      assert.deepEqual(full.save(), saved);
      full.destroy();
      m.destroy();
    });

    test('setWeights refuses weights a model file could not hold (1e30, 1e7), changing nothing', async () => {
      const m = await engine.createTransformer(TF);
      const saved = m.save();
      const wte = m.weights().wte;
      for (const big of [1e30, 1e7, -2e6]) {
        const bad = Float32Array.from(wte);
        bad[3] = big;
        throwsCode(() => m.setWeights({ out_b: new Float32Array(m.weights().out_b.length), wte: bad }), 'ERR_VALUE', /within -1000000\.\.1000000/);
        assert.deepEqual(m.save(), saved, `${big}: nothing written`);
      }
      const ok = Float32Array.from(wte);
      ok[3] = 1e6; // the bound itself is a weight a file holds
      m.setWeights({ wte: ok });
      const again = await engine.loadModel(m.save());
      again.destroy();
      m.destroy();
    });

    test('createTransformer at the largest sizes is refused before its parameters are allocated', async () => {
      const mem0 = memory(), heap0 = engine.heapUsed();
      await rejectsCode(engine.createTransformer({ task: 'induction', layers: 8, heads: 16, dModel: 512, dFF: 2048, context: 256, batch: 256 }),
        'ERR_LIMIT', /activations, past the limit/);
      assert.ok(memory() - mem0 <= MB, `WASM memory grew ${(memory() - mem0) >> 20} MB`);
      assert.equal(engine.heapUsed(), heap0);
    });

    test('a names file with a wrong vocabulary field is refused within its own length + 1 MB', async () => {
      // a fresh engine, so that memory an earlier test grew cannot hide what this load allocates
      const fresh = await loadEngine({ simd: false, threads: 1 });
      const m = await fresh.createTransformer({ task: 'names', layers: 1, heads: 1, dModel: 8, dFF: 0, context: 16, batch: 2, seed: 1 });
      const b = m.save();
      m.destroy();
      // a file with a 4 MB text of its own and a vocabulary field one past its task's, its parameter
      // count and weights made to agree with that field (one more row of wte and column of out_w, out_b: 17)
      const name = (i) => { let n = ''; for (; i > 0; i = Math.floor(i / 26)) n += String.fromCharCode(97 + (i % 26)); return n; };
      const lines = [];
      for (let i = 1, bytes = 0; bytes < 4e6; i++) { lines.push(`${name(i)}abcdefghijklmnopqrstuvwxyz`); bytes += lines.at(-1).length + 1; }
      const text = new TextEncoder().encode(lines.join('\n'));
      const old = u32(b, 72), P = u32(b, 76 + old), extra = 4 * 17;
      const c = new Uint8Array(b.length - old + text.length + extra);
      c.set(b.subarray(0, 76));
      put32(c, 72, text.length);
      c.set(text, 76);
      put32(c, 76 + text.length, P + 17);
      c.set(b.subarray(76 + old + 8, b.length - 4), 76 + text.length + 8);
      const vocab = u32(b, 48) + 1; // the text's task has 27 (the end token and 26 letters)
      put32(c, 48, vocab);
      const fileMemory = () => fresh.heap.exports.memory.buffer.byteLength;
      const mem0 = fileMemory(), heap0 = fresh.heapUsed();
      await rejectsCode(fresh.loadModel(fix(c)), 'ERR_VALUE', new RegExp(`vocabulary of ${vocab} tokens`));
      assert.ok(fileMemory() - mem0 <= c.length + MB, `WASM memory grew ${(fileMemory() - mem0) >> 20} MB for a ${c.length >> 20} MB file`);
      assert.equal(fresh.heapUsed(), heap0);
    });

    test('a file whose batch x context createTransformer refuses does not load', async () => {
      const m = await engine.createTransformer({ ...TF, dModel: 512, heads: 8, layers: 8, context: 256, batch: 1 });
      const b = m.save();
      m.destroy();
      put32(b, 44, 256);
      await rejectsCode(engine.loadModel(fix(b)), 'ERR_VALUE', /activations, past the limit/);
    });

    test('a file with weights at +-1e6 loads, and evaluate says the model is broken instead of reporting a floor as a loss', async () => {
      const m = await engine.createTransformer(TF);
      const b = m.save();
      m.destroy();
      const view = new DataView(b.buffer);
      for (let i = 0, at = params(b); at < b.length - 4; i++, at += 4) view.setFloat32(at, i % 2 ? 1e6 : -1e6, true);
      const broken = await engine.loadModel(fix(b));
      throwsCode(() => broken.evaluate({ count: 4 }), 'ERR_VALUE', /weights are broken/);
      broken.destroy();
    });

    test('inspect reads a hole in an array of ids as what it is, not token 0', async () => {
      const m = await engine.createTransformer(TF);
      // eslint-disable-next-line no-sparse-arrays
      throwsCode(() => m.inspect([1, , 1]), 'ERR_VALUE', /input\[1\] is undefined/);
      m.destroy();
    });
  });

  test('pairs with an empty train split: training says the split is empty', () => {
    // one line: the hash of its input picks its split; take a line outside train
    let m = null;
    for (const c of 'abcdefghijklmnopqrstuvwxyz') {
      const candidate = engine.createSeq2Seq({ task: 'pairs', pairs: `${c}${c}\tx\n`, hidden: 4, embed: 4, batch: 4 });
      try {
        candidate.train({ steps: 1, batch: 1 });
        candidate.destroy();
      } catch {
        m = candidate;
        break;
      }
    }
    assert.ok(m, 'a line outside the train split');
    assert.throws(() => m.train({ steps: 1, batch: 1 }), (err) => err.code === 'ERR_VALUE' && /train split is empty/.test(err.message)
      && !/diverged|learning rate/.test(err.message));
    m.destroy();
  });

  test('the shipped model files load and save to the same bytes', async () => {
    for (const name of ['reverse-attention.s2s', 'reverse-bottleneck.s2s', 'dates.s2s', 'cluttered-soft.vis', 'cluttered-hard.vis']) {
      const bytes = shipped(name);
      const m = name.endsWith('.vis') ? await engine.loadVisionModel(bytes) : engine.loadSeq2Seq(bytes);
      assert.deepEqual(m.save(), bytes, name);
      m.destroy();
    }
  });

  test('a loaded image model trains on batches past the one it was saved with (the core grows it)', async () => {
    const m = await engine.loadVisionModel(shipped('cluttered-soft.vis'));
    assert.equal(m.config.batch, 32);
    // the lab's Step: batch 64 (web/lab/state.js)
    const r = m.train({ steps: 1, batch: 64 });
    assert.equal(r.examples, 64);
    assert.equal(m.steps, 1501);
    assert.equal(m.config.batch, 32, 'the configured batch is what the model saves');
    m.destroy();
  });

  describe('damaged or crafted model files: ERR_VALUE, memory grown by at most the file + 1 MB', () => {
    const memory = () => engine.heap.exports.memory.buffer.byteLength;
    async function rejects(load, bytes, pattern) {
      const mem0 = memory(), heap0 = engine.heapUsed();
      await rejectsCode((async () => load(bytes))(), 'ERR_VALUE', pattern);
      assert.ok(memory() - mem0 <= bytes.length + MB, `WASM memory grew ${(memory() - mem0) >> 20} MB`);
      assert.equal(engine.heapUsed(), heap0);
    }
    const vis = (b) => engine.loadVisionModel(b);
    const s2s = (b) => engine.loadSeq2Seq(b);
    // image-model layout: 12 | task 12..24 | rows 28, cols 32, layers 36, channels 40..48, cell 52, hidden 56,
    // attention 60, mode 64, steps 68, sequence 72, batch 76 | (format 2: start 80) | entropy 80 | seed 88 |
    // steps 96 | baselines 100.., the last four fields 4 bytes later in format 2 (version at 8)
    const at = (b, offset) => offset + (u32(b, 8) >= 2 ? 4 : 0);
    const visParams = (b) => at(b, 100) + 8 * u32(b, 68) + 24;

    test('an image-model header claiming a large configuration', async () => {
      (await vis(shipped('cluttered-soft.vis'))).destroy(); // the digit set is loaded before measuring
      const b = shipped('cluttered-soft.vis');
      for (const [at, v] of [[40, 64], [44, 64], [48, 64], [56, 256], [76, 256]]) put32(b, at, v);
      await rejects(vis, fixVision(b), /parameters, but its configuration has/);
    });

    test('NaN and 3e38 weights, a NaN baseline, step counts -1 and 2^31-1', async () => {
      const cases = [
        [(b) => new DataView(b.buffer).setFloat32(visParams(b) + 400, NaN, true), /NaN/],
        [(b) => new DataView(b.buffer).setFloat32(b.length - 8, 3e38, true), /past the limit/],
        [(b) => new DataView(b.buffer).setFloat64(at(b, 100), NaN, true), /baseline/],
        [(b) => put32(b, at(b, 96), 0xffffffff), /step count/],
        [(b) => put32(b, at(b, 96), 0x7fffffff), /step count/],
        // an entropy weight no float32 holds: it would load as another value and save other bytes (found by fuzzing)
        [(b) => new DataView(b.buffer).setFloat64(at(b, 80), 0.1, true), /entropy weight/],
      ];
      for (const file of ['cluttered-soft.vis', 'cluttered-hard.vis']) {
        for (const [edit, pattern] of cases) {
          const b = shipped(file);
          edit(b);
          await rejects(vis, fixVision(b), pattern);
        }
      }
      const m = 40, b = shipped('reverse-attention.s2s');
      put32(b, m + 72, 0xffffffff);
      await rejects(s2s, fixSeq2Seq(b), /step count/);
      const c = shipped('reverse-attention.s2s');
      new DataView(c.buffer).setFloat32(m + 84 + 4 * 40, NaN, true);
      await rejects(s2s, fixSeq2Seq(c), /NaN/);
    });

    test("a seq2seq file edited to 'location' attention on a task of varying lengths", async () => {
      // reverse-attention: dot attention (no weights), inputs of 2..16 digits; location would add fixed_in x D
      const b = shipped('reverse-attention.s2s'), m = 40;
      const D = u32(b, m + 12 + 4 * 4), maxIn = u32(b, m + 12 + 4 * 9), extra = 4 * maxIn * D;
      const params = (b.length - m - 84 - 8) / 4;
      // location's weights go after the decoder and before the output layer's Wc: any place keeps the count right
      const c = new Uint8Array(b.length + extra);
      c.set(b.subarray(0, b.length - 8));
      c.set(b.subarray(b.length - 8), b.length + extra - 8);
      put32(c, m + 12 + 4 * 5, 5); // ATTN_SCORE_LOCATION
      put32(c, m + 12 + 4 * 11, maxIn);
      put32(c, m + 76, params + maxIn * D);
      await rejects(s2s, fixSeq2Seq(c), /location/);
    });
  });
});
