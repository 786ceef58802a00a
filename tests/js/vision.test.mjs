// Attention over images through the JS API on both builds: configuration and
// image errors with codes (and no leaks), predict / saliency shapes, hard
// mode's glimpse, the retina sensor (options, glimpses, file format 3), save/load, the decoder's start, the uniform-attention
// ablation, SIMD vs scalar for one seed, WASM vs native C for one seed (both
// starts), and a small model learning centred digits.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { agreement, kendallTau, loadEngine } from '../../web/engine/index.js';
import { loadDigits } from '../../web/engine/vision.js';
import { rejectsCode, throwsCode } from '../lib/assert.mjs';
import { makeCommand } from '../lib/make.mjs';
import { BUILDS, withEngines } from './builds.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SMALL = { task: 'centered', channels: [4, 8], hidden: 16, batch: 16, seed: 3 };

/** A 20 x 16 "drawn" stroke: a vertical bar (a one). */
function drawnOne() {
  const rows = 20;
  const cols = 16;
  const data = new Float32Array(rows * cols);
  for (let r = 2; r < 18; r++) data[r * cols + 7] = data[r * cols + 8] = 1;
  return { rows, cols, data };
}

for (const { engine, ...build } of await withEngines()) {
  describe(`vision API (${build.name})`, { skip: build.skip }, () => {
    test('bad configurations reject with errors naming the option, and leak nothing', async () => {
      await engine.createVisionModel(SMALL).then((m) => m.destroy()); // the digit set stays loaded
      const base = engine.heapUsed();
      await rejectsCode(engine.createVisionModel({ task: 'mnist' }), 'ERR_ARG', /task: unknown value 'mnist'/);
      await rejectsCode(engine.createVisionModel({ channels: [8, 16, 32, 64] }), 'ERR_ARG', /channels: expected an array of 1 to 3/);
      await rejectsCode(engine.createVisionModel({ hidden: 0 }), 'ERR_SHAPE', /hidden: 0; it must be within 1\.\./);
      await rejectsCode(engine.createVisionModel({ mode: 'glimpse' }), 'ERR_ARG', /mode: unknown value 'glimpse'/);
      await rejectsCode(engine.createVisionModel({ task: 'multi', steps: 2 }), 'ERR_VALUE', /steps: the multi task/);
      await rejectsCode(engine.createVisionModel({ task: 'centered', digits: 3 }), 'ERR_ARG', /digits: only the 'multi' task/);
      await rejectsCode(engine.createVisionModel({ clutter: 99 }), 'ERR_LIMIT', /clutter/);
      await rejectsCode(engine.createVisionModel({ size: 101 }), 'ERR_LIMIT', /size: 101; it must be within 28\.\.100/);
      await rejectsCode(engine.createVisionModel({ size: 27 }), 'ERR_SHAPE', /size: 27; it must be within 28\.\.100/);
      await rejectsCode(engine.createVisionModel({ task: 'multi', size: 60 }), 'ERR_ARG', /size: only the cluttered task/);
      await rejectsCode(engine.createVisionModel({ task: 'centered', channels: [4, 4, 4, 4].slice(0, 3), hidden: 300 }), 'ERR_LIMIT', /hidden/);
      await rejectsCode(engine.loadVisionModel(new Uint8Array(10)), 'ERR_VALUE', /not an attnlab vision model/);
      assert.equal(engine.heapUsed(), base);
    });

    test('a missing digit set rejects with ERR_DATA; the next load succeeds', async () => {
      const fresh = await loadEngine({ simd: build.simd, threads: 1 });
      await rejectsCode(loadDigits(fresh.heap, new URL('file:///nonexistent/mnist.bin.gz')), 'ERR_DATA', /nonexistent\/mnist\.bin\.gz is missing/);
      const m = await fresh.createVisionModel(SMALL);
      assert.equal(m.config.task, 'centered');
      m.destroy();
    });

    test('predict: every step has a token and weights over the grid that sum to 1; the canvas is the placed image', async () => {
      const m = await engine.createVisionModel(SMALL);
      const p = m.predict(drawnOne());
      assert.deepEqual(m.config.grid, { rows: 7, cols: 7 });
      assert.equal(p.steps.length, 1);
      assert.match(p.output, /^[0-9]$/);
      const w = p.steps[0].weights;
      assert.equal(w.rows, 7);
      assert.equal(w.cols, 7);
      assert.ok(Math.abs(w.data.reduce((s, x) => s + x, 0) - 1) < 1e-4);
      assert.equal(p.steps[0].location, null, 'soft mode has no location');
      assert.equal(p.canvas.rows, 28);
      // the 20 x 16 image is centred: rows 4..23, cols 6..21; its bar at cols 13, 14
      assert.equal(p.canvas.data[(4 + 2) * 28 + 6 + 7], 1);
      assert.equal(p.canvas.data[0], 0);
      m.destroy();
    });

    test('bad images throw with codes and leave the model usable', async () => {
      const m = await engine.createVisionModel(SMALL);
      const base = engine.heapUsed();
      throwsCode(() => m.predict({ rows: 2, cols: 2, data: [0, NaN, 0, 0] }), 'ERR_VALUE', /pixel 1 is NaN/);
      throwsCode(() => m.predict({ rows: 2, cols: 2, data: [0, 0, 0] }), 'ERR_SHAPE', /data has 3 values; 2 x 2 needs 4/);
      throwsCode(() => m.predict({ rows: 129, cols: 1, data: new Float32Array(129) }), 'ERR_LIMIT', /larger than 128 x 128/);
      throwsCode(() => m.predict({ rows: 1, cols: 1, data: [1.5] }), 'ERR_VALUE', /greys must be in \[0, 1\]/);
      throwsCode(() => m.predict(null), 'ERR_ARG', /expected \{ rows, cols, data \}/);
      throwsCode(() => m.saliency(drawnOne(), { step: 1 }), 'ERR_LIMIT', /step/);
      throwsCode(() => m.train({ batch: 257 }), 'ERR_LIMIT', /batch/);
      throwsCode(() => m.evaluate({ split: 'validation' }), 'ERR_ARG', /split: unknown value 'validation'/);
      assert.equal(engine.heapUsed(), base);
      assert.equal(m.predict(drawnOne()).steps.length, 1, 'still usable');
      m.destroy();
      throwsCode(() => m.predict(drawnOne()), 'ERR_ARG', /destroyed/);
    });

    test('saliency: d log p / d pixel over the canvas, finite and not all zero', async () => {
      const m = await engine.createVisionModel(SMALL);
      m.train({ steps: 5 });
      const s = m.saliency(drawnOne());
      assert.equal(s.rows, 28);
      assert.equal(s.cols, 28);
      assert.ok(s.data.every(Number.isFinite));
      assert.ok(s.data.some((x) => x !== 0));
      m.destroy();
    });

    test('compareAttention: per step, attention and |saliency| per cell with their Kendall tau', async () => {
      const m = await engine.createVisionModel({ ...SMALL, steps: 2 });
      m.train({ steps: 5 });
      const c = m.compareAttention(drawnOne());
      assert.equal(c.steps.length, 2);
      for (const step of c.steps) {
        assert.equal(step.saliency.rows, 7);
        assert.equal(step.saliency.data.length, 49);
        assert.ok(step.tau >= -1 && step.tau <= 1);
        assert.equal(step.tau, kendallTau(step.attention.data, step.saliency.data));
        assert.deepEqual(step.agreement, agreement(step.attention.data, step.saliency.data));
      }
      // the cells' |saliency| is the saliency map summed over each 4 x 4 block
      const s = m.saliency(drawnOne(), { step: 1 });
      let block = 0;
      for (let r = 4; r < 8; r++) for (let k = 12; k < 16; k++) block += Math.abs(s.data[r * 28 + k]);
      assert.ok(Math.abs(c.steps[1].saliency.data[1 * 7 + 3] - block) <= 1e-5 * (1 + block));
      m.destroy();
    });

    test('multi, hard mode: digits then the end token, a sampled glimpse with its box', async () => {
      const m = await engine.createVisionModel({ task: 'multi', channels: [4, 8], hidden: 16, mode: 'hard', cell: 'lstm', batch: 8, seed: 5 });
      assert.equal(m.config.steps, 4);
      assert.deepEqual(m.config.grid, { rows: 10, cols: 25 });
      const r = m.train({ steps: 3, batch: 8 });
      assert.ok(Number.isFinite(r.loss));
      const ex = m.examples({ count: 2, seed: 9 });
      assert.deepEqual(ex, m.examples({ count: 2, seed: 9 }), 'same seed, same examples');
      assert.equal(ex[0].labels.at(-1), '</s>');
      const p = m.predict(ex[0].image);
      for (const step of p.steps) {
        const { cell, row, col, box } = step.location;
        assert.equal(cell, row * 25 + col);
        assert.deepEqual(box, { top: row * 4, left: col * 4, height: 4, width: 4 });
      }
      const e = m.evaluate({ count: 20 });
      assert.ok(e.accuracy >= 0 && e.accuracy <= 1 && e.sequenceAccuracy <= e.accuracy);
      m.destroy();
    });

    test('cluttered, hard mode, 3 layers: the glimpse box is the cell\'s 8 pixels, not canvas / grid', async () => {
      const m = await engine.createVisionModel({ task: 'cluttered', channels: [2, 2, 2], hidden: 8, mode: 'hard', sensor: 'grid', batch: 4, seed: 2 });
      assert.deepEqual(m.config.grid, { rows: 7, cols: 7 }); // 60 -> 30 -> 15 -> 7
      const p = m.predict(m.examples({ count: 1, seed: 4 })[0].image);
      const { row, col, box } = p.steps[0].location;
      assert.deepEqual(box, { top: row * 8, left: col * 8, height: 8, width: 8 });
      m.destroy();
    });

    test('examples: each digit\'s box holds its ink; cluttered canvases of any size up to 100, saved and loaded', async () => {
      const inkOutside = (ex, cols) => ex.image.data.reduce((sum, v, p) => {
        const r = Math.floor(p / cols);
        const c = p % cols;
        return ex.boxes.some((b) => r >= b.top && r < b.top + b.height && c >= b.left && c < b.left + b.width) ? sum : sum + v;
      }, 0);
      const plain = await engine.createVisionModel({ task: 'cluttered', clutter: 0, size: 100, channels: [4, 8, 8], hidden: 8 });
      assert.deepEqual([plain.config.size, plain.config.canvas, plain.config.grid], [100, { rows: 100, cols: 100 }, { rows: 12, cols: 12 }]);
      for (const ex of plain.examples({ count: 20, seed: 4 })) {
        assert.equal(ex.boxes.length, 1);
        const [b] = ex.boxes;
        assert.ok(b.top >= 0 && b.left >= 0 && b.top + b.height <= 100 && b.left + b.width <= 100 && b.height <= 28 && b.width <= 28, JSON.stringify(b));
        assert.equal(inkOutside(ex, 100), 0, 'no clutter: all ink inside the box');
      }
      plain.train({ steps: 2, batch: 4 });
      const again = await engine.loadModel(plain.save());
      assert.deepEqual(again.config, plain.config);
      assert.deepEqual(again.examples({ count: 3 }), plain.examples({ count: 3 }));
      again.destroy();
      plain.destroy();
      const multi = await engine.createVisionModel({ task: 'multi', channels: [4, 8], hidden: 8 });
      assert.equal(multi.config.size, null);
      for (const ex of multi.examples({ count: 10 })) {
        assert.equal(ex.boxes.length, ex.labels.length - 1, 'a box per digit, none for the end token');
        assert.equal(inkOutside(ex, 100), 0);
        for (let i = 1; i < ex.boxes.length; i++) assert.ok(ex.boxes[i - 1].left + ex.boxes[i - 1].width <= ex.boxes[i].left, 'left to right');
      }
      multi.destroy();
    });

    test('save / load: the same answers, the same evaluation; a damaged file is refused', async () => {
      const m = await engine.createVisionModel({ ...SMALL, attention: 'additive' });
      m.train({ steps: 10 });
      const bytes = m.save();
      const m2 = await engine.loadVisionModel(bytes);
      assert.deepEqual(m2.config, m.config);
      assert.equal(m2.steps, 10);
      assert.deepEqual(m2.evaluate({ count: 50 }), m.evaluate({ count: 50 }));
      assert.deepEqual(m2.predict(drawnOne()).steps[0].weights, m.predict(drawnOne()).steps[0].weights);
      bytes[100] ^= 4;
      await rejectsCode(engine.loadVisionModel(bytes), 'ERR_VALUE', /checksum/);
      m.destroy();
      m2.destroy();
    });

    test('start: the constant start by default, the mean start on request; bad values name the option', async () => {
      const m = await engine.createVisionModel(SMALL);
      const mean = await engine.createVisionModel({ ...SMALL, start: 'mean' });
      assert.equal(m.config.start, 'constant');
      assert.equal(mean.config.start, 'mean');
      // the mean start's map W0 (H x H) and b0 (H) against the constant's s0 (H)
      assert.equal(mean.config.parameters - m.config.parameters, 16 * 16);
      await rejectsCode(engine.createVisionModel({ ...SMALL, start: 'zero' }), 'ERR_ARG', /start: unknown value 'zero'/);
      for (const model of [m, mean]) {
        const again = await engine.loadModel(model.save());
        assert.equal(again.config.start, model.config.start);
        again.destroy();
      }
      m.destroy();
      mean.destroy();
    });

    test('evaluate({ attention: "uniform" }): soft attention made uniform is average pooling with the same weights', async () => {
      // scaled dot has no tensors of its own: the same seed gives a 'none' model the same weights
      const soft = await engine.createVisionModel({ ...SMALL, task: 'cluttered', attention: 'scaled_dot' });
      const none = await engine.createVisionModel({ ...SMALL, task: 'cluttered', attention: 'none' });
      assert.equal(soft.config.parameters, none.config.parameters);
      const uniform = soft.evaluate({ count: 100, attention: 'uniform' });
      assert.deepEqual(uniform, none.evaluate({ count: 100 }));
      assert.notEqual(uniform.loss, soft.evaluate({ count: 100, attention: 'model' }).loss, 'the model\'s own attention reads otherwise');
      assert.deepEqual(none.evaluate({ count: 50, attention: 'uniform' }), none.evaluate({ count: 50 }), 'none is uniform already');
      throwsCode(() => soft.evaluate({ attention: 'random' }), 'ERR_ARG', /attention: unknown value 'random'/);
      throwsCode(() => soft.evaluate({ attention: 1 }), 'ERR_ARG', /attention/);
      soft.destroy();
      none.destroy();
    });

    test('evaluate({ attention: "uniform" }), hard mode: random locations from a fixed stream, training unmoved', async () => {
      const m = await engine.createVisionModel({ ...SMALL, task: 'cluttered', mode: 'hard', sensor: 'grid', batch: 8 });
      m.train({ steps: 3, batch: 8 });
      const bytes = m.save();
      const a = m.evaluate({ count: 60, attention: 'uniform' });
      assert.deepEqual(m.evaluate({ count: 60, attention: 'uniform' }), a, 'the same every call');
      assert.notDeepEqual(a, m.evaluate({ count: 60 }));
      assert.deepEqual(m.save(), bytes, 'the sampling and training streams did not move');
      m.destroy();
    });

    const RETINA = { task: 'cluttered', mode: 'hard', sensor: 'retina', hidden: 16, batch: 8, seed: 4 };

    test("sensor 'retina' (asked for; hard mode reads the grid by default): its resolved options in config", async () => {
      const m = await engine.createVisionModel(RETINA);
      const c = m.config;
      assert.equal(c.sensor, 'retina');
      assert.deepEqual(c.retina, { size: 12, scales: 3 }, 'a fifth of the 60 x 60 canvas, 3 scales');
      assert.equal(c.sigma, Math.fround(0.15));
      assert.equal(c.steps, 6);
      assert.equal(c.grid, null);
      assert.equal(c.channels, null);
      m.destroy();
      const big = await engine.createVisionModel({ ...RETINA, size: 100, retina: { size: 10, scales: 2 }, sigma: 0.2, steps: 3 });
      assert.deepEqual([big.config.retina, big.config.sigma, big.config.steps], [{ size: 10, scales: 2 }, Math.fround(0.2), 3]);
      big.destroy();
      const soft = await engine.createVisionModel({ ...SMALL, mode: 'soft' });
      const multi = await engine.createVisionModel({ task: 'multi', channels: [4, 8], hidden: 8, mode: 'hard' });
      const hard = await engine.createVisionModel({ ...SMALL, task: 'cluttered', mode: 'hard' });
      assert.deepEqual([soft.config.sensor, soft.config.retina, soft.config.sigma, multi.config.sensor, hard.config.sensor],
        ['grid', null, null, 'grid', 'grid']);
      soft.destroy();
      hard.destroy();
      multi.destroy();
    });

    test('retina: bad options reject with the option named, and leak nothing', async () => {
      const base = engine.heapUsed();
      await rejectsCode(engine.createVisionModel({ ...RETINA, sensor: 'fovea' }), 'ERR_ARG', /sensor: unknown value 'fovea'/);
      await rejectsCode(engine.createVisionModel({ ...RETINA, mode: 'soft', sensor: 'retina' }), 'ERR_ARG', /sensor: the retina is hard attention/);
      await rejectsCode(engine.createVisionModel({ task: 'multi', mode: 'hard', sensor: 'retina' }), 'ERR_ARG', /sensor: the retina reads one-digit tasks/);
      await rejectsCode(engine.createVisionModel({ ...RETINA, start: 'mean' }), 'ERR_ARG', /sensor: the retina starts from the learned constant/);
      await rejectsCode(engine.createVisionModel({ ...RETINA, retina: { size: 1 } }), 'ERR_SHAPE', /retina\.size: 1; it must be within 2\.\.32/);
      await rejectsCode(engine.createVisionModel({ ...RETINA, retina: { scales: 4 } }), 'ERR_LIMIT', /retina\.scales: 4; it must be within 1\.\.3/);
      await rejectsCode(engine.createVisionModel({ ...RETINA, retina: 12 }), 'ERR_ARG', /retina: expected \{ size, scales \}/);
      await rejectsCode(engine.createVisionModel({ ...RETINA, sigma: 0 }), 'ERR_VALUE', /sigma: the location policy's spread must be > 0/);
      await rejectsCode(engine.createVisionModel({ ...RETINA, sigma: 2 }), 'ERR_VALUE', /sigma: 2/);
      await rejectsCode(engine.createVisionModel({ ...SMALL, sigma: 0.1 }), 'ERR_ARG', /sigma: only sensor 'retina' takes sigma/);
      await rejectsCode(engine.createVisionModel({ ...SMALL, retina: { size: 8 } }), 'ERR_ARG', /retina: only sensor 'retina'/);
      assert.equal(engine.heapUsed(), base);
    });

    test('retina: train, evaluate (and uniform locations from a fixed stream), predict glimpses inside the canvas', async () => {
      const m = await engine.createVisionModel(RETINA);
      const r = m.train({ steps: 3 });
      assert.ok(Number.isFinite(r.loss));
      const e = m.evaluate({ count: 40 });
      assert.equal(e.count, 40);
      const bytes = m.save();
      const u = m.evaluate({ count: 40, attention: 'uniform' });
      assert.deepEqual(m.evaluate({ count: 40, attention: 'uniform' }), u, 'the same every call');
      assert.notDeepEqual(u, e);
      assert.deepEqual(m.save(), bytes, 'the sampling and training streams did not move');
      const [a, b] = m.examples({ count: 2, seed: 3 });
      const p = m.predict(a.image);
      assert.equal(p.steps.length, 6);
      assert.equal(p.output, p.tokens.at(-1));
      for (const { weights, location: { x, y, box, boxes } } of p.steps) {
        assert.equal(weights, null, 'the retina has no attention map');
        assert.ok(x >= 0 && x < 60 && y >= 0 && y < 60, `centre ${x}, ${y} on the canvas`);
        assert.deepEqual(boxes.map((q) => q.width), [12, 24, 48]);
        assert.deepEqual(box, boxes[0]);
        boxes.forEach((q, k) => {
          assert.deepEqual([q.left + q.width / 2, q.top + q.height / 2, q.height], [x, y, q.width], `scale ${k} is a square centred on the glimpse`);
        });
      }
      // the constant start: the first glimpse is where it is before the model has seen anything
      assert.deepEqual(m.predict(b.image).steps[0].location, p.steps[0].location);
      const s = m.saliency(a.image, { step: 5 });
      assert.ok(s.data.every(Number.isFinite) && s.data.some((v) => v !== 0));
      throwsCode(() => m.compareAttention(a.image), 'ERR_ARG', /compareAttention: the retina has no attention map/);
      m.destroy();
    });

    test('retina: save / loadModel round trip in file format 3', async () => {
      const m = await engine.createVisionModel({ ...RETINA, retina: { size: 8, scales: 2 }, sigma: 0.25, steps: 4 });
      m.train({ steps: 2 });
      const bytes = m.save();
      assert.equal(new DataView(bytes.buffer, bytes.byteOffset).getUint32(8, true), 3, 'format 3');
      const again = await engine.loadModel(bytes);
      assert.deepEqual(again.config, m.config);
      const [ex] = m.examples({ count: 1, seed: 8 });
      assert.deepEqual(again.predict(ex.image), m.predict(ex.image));
      assert.deepEqual(again.save(), bytes);
      assert.deepEqual(again.evaluate({ count: 20 }), m.evaluate({ count: 20 }));
      m.destroy();
      again.destroy();
    });

    // 300 steps: with the constant start, the answer learns from the attended context alone
    test('learns centred digits: test accuracy far above chance (10%) after 300 small steps', async () => {
      const m = await engine.createVisionModel({ task: 'centered', channels: [4, 8], hidden: 16, batch: 16, seed: 1 });
      const before = m.evaluate({ count: 300 }).accuracy;
      m.train({ steps: 300, batch: 16, lr: 0.005 });
      const e = m.evaluate({ count: 300 });
      assert.ok(e.accuracy > 0.4 && e.accuracy > before + 0.25, `test accuracy ${before} -> ${e.accuracy}`);
      m.destroy();
    });
  });
}

test('kendallTau: known values (perfect, reversed, one swap of four, ties as tau-b)', () => {
  assert.equal(kendallTau([1, 2, 3, 4], [10, 20, 30, 40]), 1);
  assert.equal(kendallTau([1, 2, 3, 4], [4, 3, 2, 1]), -1);
  assert.ok(Math.abs(kendallTau([1, 2, 3, 4], [1, 3, 2, 4]) - 4 / 6) < 1e-12);
  // tau-b with a tie in a: pairs 5 concordant, 0 discordant, 1 tie in a -> 5 / sqrt(5 * 6)
  assert.ok(Math.abs(kendallTau([1, 1, 2, 3], [1, 2, 3, 4]) - 5 / Math.sqrt(30)) < 1e-12);
  assert.equal(kendallTau([1, 1, 1], [1, 2, 3]), 0);
  assert.throws(() => kendallTau([1], [1, 2]), /lengths 1 and 2 differ/);
});

test('SIMD and scalar builds train alike from one seed', { skip: BUILDS[0].skip }, async () => {
  const losses = [];
  for (const build of BUILDS) {
    const engine = await loadEngine({ simd: build.simd, threads: 1 });
    const m = await engine.createVisionModel({ task: 'cluttered', channels: [4, 8], hidden: 16, batch: 8, seed: 2 });
    losses.push(m.train({ steps: 10, batch: 8 }).losses);
    m.destroy();
  }
  for (let i = 0; i < 10; i++) assert.ok(Math.abs(losses[0][i] - losses[1][i]) <= 2e-3 * losses[1][i], `step ${i}: ${losses[0][i]} vs ${losses[1][i]}`);
});

const hasGcc = spawnSync('gcc', ['--version']).status === 0;
test('WASM trains like native C from one seed (cluttered, soft attention, either start)', { skip: hasGcc ? false : 'gcc is not installed' }, async () => {
  const bin = 'build/tools/vision_losses';
  execFileSync(...makeCommand(bin), { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  const dir = mkdtempSync(join(tmpdir(), 'attnlab-'));
  const digits = join(dir, 'mnist.bin');
  writeFileSync(digits, gunzipSync(readFileSync(`${ROOT}web/data/mnist.bin.gz`)));
  const STEPS = 8;
  for (const [start, code] of [['mean', 0], ['constant', 1]]) {
    const native = JSON.parse(execFileSync(`${ROOT}${bin}`, [digits, 1, 1, 0, 6, STEPS, 8, code], { encoding: 'utf8' }));
    assert.equal(native.length, STEPS);
    for (const build of BUILDS) {
      if (build.skip) continue;
      const engine = await loadEngine({ simd: build.simd, threads: 1 });
      const m = await engine.createVisionModel({
        task: 'cluttered', channels: [4, 8], hidden: 16, attention: 'scaled_dot', mode: 'soft', batch: 8, seed: 6, start,
      });
      const { losses } = m.train({ steps: STEPS, batch: 8, lr: 0.002, clip: 5, schedule: 'constant', warmup: 0 });
      m.destroy();
      for (let i = 0; i < STEPS; i++) {
        assert.ok(Math.abs(losses[i] - native[i]) <= 2e-3 * Math.abs(native[i]), `${start}, ${build.name}, step ${i}: WASM ${losses[i]} vs native ${native[i]}`);
      }
    }
  }
});
