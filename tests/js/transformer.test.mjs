// The transformer through the JS API on both builds: the shape of every
// call's result, errors for bad options, ablation changing the output, and
// head scores on models whose heads are set by hand (a previous-token head, and an
// induction head reading it), save and engine.loadModel.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { throwsCode } from '../lib/assert.mjs';
import { TransformerModel } from '../../web/engine/index.js';
import { withEngines } from './builds.mjs';

const SMALL = { task: 'copy', layers: 2, heads: 2, dModel: 16, dFF: 32, context: 16, batch: 8, seed: 3 };

for (const { engine, ...build } of await withEngines()) {
  describe(`transformer API (${build.name})`, { skip: build.skip }, () => {
    test('config resolves every option, with the vocabulary and the parameter count', async () => {
      // the induction task's defaults (defaults.js): two attention-only layers of two heads, RoPE
      const small = await engine.createTransformer({ task: 'induction' });
      assert.deepEqual(
        [small.config.layers, small.config.heads, small.config.dModel, small.config.dFF, small.config.context, small.config.positional, small.config.batch],
        [2, 2, 32, 0, 32, 'rope', 32]);
      small.destroy();
      // another task's defaults, and a wider model keeping the default's dFF ratio
      const wide = await engine.createTransformer({ task: 'copy', dModel: 32 });
      assert.deepEqual([wide.config.layers, wide.config.heads, wide.config.dFF, wide.config.context, wide.config.positional], [2, 4, 128, 64, 'learned']);
      wide.destroy();
      const m = await engine.createTransformer({ task: 'induction', heads: 4, dModel: 64, context: 64, positional: 'learned', seed: 2 });
      const c = m.config;
      assert.deepEqual(
        { task: c.task, layers: c.layers, heads: c.heads, dModel: c.dModel, dFF: c.dFF, context: c.context,
          positional: c.positional, score: c.score, batch: c.batch, seed: c.seed, sequenceLength: c.sequenceLength },
        { task: 'induction', layers: 2, heads: 4, dModel: 64, dFF: 0, context: 64, positional: 'learned',
          score: 'scaled_dot', batch: 32, seed: 2, sequenceLength: 64 });
      assert.equal(c.vocabulary.join(''), 'abcdefghijklmnopqrstuvwxyz');
      // wte, wpe, per layer LayerNorm (2C) + qkv (3C^2 + 3C) + projection (C^2 + C), final LayerNorm, output layer
      const C = 64, V = 26;
      assert.equal(c.parameters, V * C + 64 * C + 2 * (2 * C + 3 * C * C + 3 * C + C * C + C) + 2 * C + C * V + V);
      m.destroy();
      m.destroy();
      throwsCode(() => m.evaluate(), 'ERR_ARG', /destroyed/);
    });
    test('every method of a destroyed model throws ERR_ARG naming the method', async () => {
      const m = await engine.createTransformer(SMALL);
      m.destroy();
      const calls = {
        steps: () => m.steps, train: () => m.train(), evaluate: () => m.evaluate(), examples: () => m.examples(),
        inspect: () => m.inspect('12'), generate: () => m.generate('12'), headScores: () => m.headScores(),
        weights: () => m.weights(), setWeights: () => m.setWeights({}),
      };
      for (const [name, call] of Object.entries(calls)) throwsCode(call, 'ERR_ARG', new RegExp(`^${name}: this model was destroyed`));
    });
    test('setWeights writes through a block of its own; an empty ablate list is no ablation', async () => {
      const m = await engine.createTransformer(SMALL);
      const w = m.weights();
      const name = Object.keys(w).find((k) => k.startsWith('lnf'));
      const lnf = Float32Array.from(w[name], (_, i) => i / 10);
      m.setWeights({ [name]: Array.from(lnf) });
      assert.deepEqual(m.weights()[name], lnf);
      assert.deepEqual(m.evaluate({ count: 8, ablate: [] }), m.evaluate({ count: 8 }));
      throwsCode(() => m.setWeights({ [name]: [1] }), 'ERR_SHAPE', /holds/);
      m.destroy();
    });

    test('train, evaluate, examples, generate and inspect return their documented shapes', async () => {
      const m = await engine.createTransformer(SMALL);
      const r = m.train({ steps: 3, lr: 1e-3, warmup: 1, weightDecay: 0.01 });
      assert.equal(r.losses.length, 3);
      assert.ok(r.losses.every(Number.isFinite) && r.loss > 0 && r.steps === 3 && m.steps === 3);
      assert.ok(r.seconds > 0 && r.tokensPerSecond > 0);
      const e = m.evaluate({ count: 20 });
      assert.ok(e.loss > 0 && e.accuracy >= 0 && e.accuracy <= 1 && e.count === 20);
      assert.deepEqual(m.evaluate({ count: 20 }), e, 'the test split is the same on every call');
      for (const { input, target } of m.examples({ count: 5, seed: 4 })) {
        assert.match(input, /^[0-9]+=$/);
        assert.equal(target, input.slice(0, -1), 'copy: the target repeats the input');
      }
      const g = m.generate('123=', { tokens: 3, temperature: 0 });
      assert.equal(g.tokens.length, 3);
      assert.equal(g.text, g.tokens.join(''));
      const s = m.inspect('4567=45');
      assert.deepEqual(s.tokens, ['4', '5', '6', '7', '=', '4', '5']);
      assert.equal(s.attention.length, 2);
      for (const layer of s.attention) {
        assert.equal(layer.length, 2);
        for (const a of layer) {
          assert.equal(a.rows, 7);
          assert.equal(a.cols, 7);
          for (let i = 0; i < 7; i++) {
            const row = a.data.subarray(i * 7, i * 7 + 7);
            assert.ok(Math.abs(row.reduce((x, y) => x + y, 0) - 1) < 1e-5, 'a row sums to 1');
            assert.ok(row.subarray(i + 1).every((p) => p === 0), 'no weight on later tokens');
          }
        }
      }
      assert.equal(s.predictions.length, 7);
      for (const p of s.predictions) {
        assert.equal(p.length, 5);
        for (let j = 1; j < 5; j++) assert.ok(p[j - 1].p >= p[j].p, 'most likely first');
        assert.ok(p.every((x) => m.config.vocabulary.includes(x.token)));
      }
      assert.equal(s.lens.length, 2);
      assert.ok(s.lens.every((row) => row.length === 7));
      // the last layer's lens is the model's own top prediction
      assert.deepEqual(s.lens[1], s.predictions.map((p) => p[0].token));
      const h = m.headScores({ count: 4 });
      assert.equal(h.length, 2);
      assert.ok(h.every((l) => l.length === 2 && l.every((x) => x.previousToken >= 0 && x.previousToken <= 1 && x.induction >= 0 && x.induction <= 1)));
      m.destroy();
    });

    test('every position encoding and score trains', async () => {
      for (const positional of ['learned', 'sinusoidal', 'none', 'alibi', 'rope']) {
        for (const score of ['scaled_dot', 'dot', 'cosine']) {
          const m = await engine.createTransformer({ ...SMALL, positional, score });
          assert.equal(m.config.positional, positional);
          assert.equal(m.config.score, score);
          const { losses } = m.train({ steps: 2 });
          assert.ok(losses.every(Number.isFinite), `${positional} ${score}: finite losses`);
          m.destroy();
        }
      }
    });

    test('bad options throw errors with a code naming the option', async () => {
      const rejects = (o, code, re) => assert.rejects(engine.createTransformer(o), (e) => e.code === code && re.test(e.message));
      await rejects({ task: 'translate' }, 'ERR_ARG', /task: unknown value 'translate'/);
      await rejects({ layers: 9 }, 'ERR_LIMIT', /layers: 9; it must be within 1\.\.8/);
      await rejects({ heads: 17 }, 'ERR_LIMIT', /heads: 17; it must be within 1\.\.16/);
      await rejects({ dModel: 513 }, 'ERR_LIMIT', /dModel: 513; it must be within 1\.\.512/);
      await rejects({ context: 257 }, 'ERR_LIMIT', /context: 257; it must be within 8\.\.256/);
      await rejects({ heads: 3 }, 'ERR_SHAPE', /3 heads do not divide dModel 32/);
      await rejects({ score: 'additive' }, 'ERR_ARG', /score: unknown value 'additive'/);
      await rejects({ positional: 'spiral' }, 'ERR_ARG', /positional: unknown value 'spiral'/);
      await rejects({ layers: 0 }, 'ERR_SHAPE', /layers: 0; it must be within 1\.\.8/);
      await rejects({ dFF: 4096 }, 'ERR_LIMIT', /dFF: 4096; it must be within 0\.\.2048/);
      await rejects({ context: 4 }, 'ERR_SHAPE', /context: 4; it must be within 8\.\.256/);
      await rejects({ batch: 257 }, 'ERR_LIMIT', /batch: 257/);
      await rejects({ layers: 1.5 }, 'ERR_VALUE', /layers/);
      await rejects({ task: 'text' }, 'ERR_ARG', /needs a text/);
      await rejects({ task: 'copy', text: 'abc' }, 'ERR_ARG', /only the 'text' task/);
      await rejects({ seed: -1 }, 'ERR_VALUE', /seed/);
      const m = await engine.createTransformer(SMALL);
      throwsCode(() => m.train({ lr: 0 }), 'ERR_VALUE', /lr must be a finite number > 0/);
      throwsCode(() => m.train({ steps: 0 }), 'ERR_SHAPE', /steps/);
      throwsCode(() => m.train({ steps: 1e6 }), 'ERR_LIMIT', /steps/);
      throwsCode(() => m.train({ batch: 300 }), 'ERR_LIMIT', /batch/);
      throwsCode(() => m.train({ weightDecay: -1 }), 'ERR_VALUE', /weightDecay/);
      throwsCode(() => m.train({ warmup: -1 }), 'ERR_SHAPE', /warmup: -1; it must be at least 0/);
      throwsCode(() => m.train({ clip: -1 }), 'ERR_VALUE', /clip/);
      throwsCode(() => m.evaluate({ count: 0 }), 'ERR_SHAPE', /count/);
      throwsCode(() => m.evaluate({ split: 'dev' }), 'ERR_ARG', /split/);
      throwsCode(() => m.generate('12', { temperature: -1 }), 'ERR_VALUE', /temperature/);
      throwsCode(() => m.headScores({ count: 0 }), 'ERR_SHAPE', /count/);
      assert.equal(m.steps, 0, 'a rejected call takes no step');
      throwsCode(() => m.inspect('12x'), 'ERR_VALUE', /"x" is not in the vocabulary/);
      throwsCode(() => m.inspect('1'.repeat(17)), 'ERR_LIMIT', /1\.\.16/);
      throwsCode(() => m.evaluate({ ablate: [{ layer: 2, head: 0 }] }), 'ERR_LIMIT', /ablate\[0\]\.layer/);
      throwsCode(() => m.evaluate({ ablate: 'all' }), 'ERR_ARG', /ablate/);
      throwsCode(() => m.setWeights({ nope: [1] }), 'ERR_ARG', /no tensor 'nope'/);
      m.destroy();
    });

    test('the text task reads the user text by characters', async () => {
      const text = 'the cat sat on the mat. '.repeat(20);
      const m = await engine.createTransformer({ task: 'text', text, layers: 1, heads: 2, dModel: 16, dFF: 0, context: 16, batch: 4 });
      assert.deepEqual([...m.config.vocabulary].sort(), [...new Set(text)].sort());
      const [ex] = m.examples({ count: 1 });
      // every position is scored: the input is one character, the target the window after it
      assert.equal(ex.input.length, 1);
      assert.equal(ex.target.length, m.config.sequenceLength);
      assert.ok(text.includes(ex.input + ex.target));
      assert.equal(m.generate('the ', { tokens: 5, seed: 2 }).tokens.length, 5);
      m.destroy();
    });

    test('ablating a head changes the output, and only while asked', async () => {
      const m = await engine.createTransformer(SMALL);
      m.train({ steps: 2 });
      const plain = m.inspect('1234=12');
      const ablated = m.inspect('1234=12', { ablate: [{ layer: 0, head: 1 }, { layer: 1, head: 0 }] });
      assert.notDeepEqual(ablated.predictions, plain.predictions);
      assert.deepEqual(m.inspect('1234=12').predictions, plain.predictions, 'the heads are back afterwards');
      assert.notEqual(m.evaluate({ count: 16, ablate: [{ layer: 1, head: 1 }] }).loss, m.evaluate({ count: 16 }).loss);
      m.destroy();
    });

    test('save and engine.loadModel: the same model, the same bytes', async () => {
      const o = { ...SMALL, positional: 'rope' };
      const a = await engine.createTransformer(o), b = await engine.createTransformer(o);
      a.train({ steps: 3 });
      b.train({ steps: 3 });
      const bytes = a.save();
      assert.ok(bytes instanceof Uint8Array && bytes.length > 4 * a.config.parameters);
      assert.deepEqual(b.save(), bytes, 'same seed, same steps: the same bytes');
      const l = await engine.loadModel(bytes);
      assert.ok(l instanceof TransformerModel && l.kind === 'transformer');
      assert.deepEqual(l.config, a.config);
      assert.equal(l.steps, 3);
      assert.deepEqual(l.save(), bytes);
      assert.deepEqual(l.evaluate({ count: 24 }), a.evaluate({ count: 24 }));
      assert.deepEqual(l.inspect('3141=31'), a.inspect('3141=31'));
      assert.deepEqual(l.headScores({ count: 4 }), a.headScores({ count: 4 }));
      assert.deepEqual(l.train({ steps: 1 }).losses, a.train({ steps: 1 }).losses, 'training goes on from the saved stream');
      for (const m of [a, b, l]) m.destroy();
      throwsCode(() => l.save(), 'ERR_ARG', /^save: this model was destroyed/);
    });

    test('a text model saves its text: the loaded one has its vocabulary', async () => {
      const text = 'Sphinx of black quartz, judge my vow! '.repeat(8);
      const m = await engine.createTransformer({ task: 'text', text, layers: 1, heads: 2, dModel: 16, dFF: 16, context: 16, batch: 4 });
      m.train({ steps: 2 });
      const l = await engine.loadModel(m.save().buffer);
      assert.deepEqual(l.config.vocabulary, m.config.vocabulary);
      assert.deepEqual(l.examples({ count: 3, seed: 2 }), m.examples({ count: 3, seed: 2 }));
      assert.deepEqual(l.generate('judge ', { tokens: 8, seed: 5 }), m.generate('judge ', { tokens: 8, seed: 5 }));
      const damaged = m.save();
      damaged[damaged.length - 9] ^= 4;
      await assert.rejects(engine.loadModel(damaged), (e) => e.code === 'ERR_VALUE' && /loadModel: model file: checksum/.test(e.message));
      await assert.rejects(engine.loadModel(m.save().subarray(0, 40)), (e) => e.code === 'ERR_VALUE' && /truncated/.test(e.message));
      m.destroy();
      l.destroy();
    });

    test('headScores finds an induction head built by hand on a previous-token head', async () => {
      // 'copy' head-score sequences repeat distinct digits. The residual stream holds the
      // token (dims 0..V-1), the position (V..V+15) and, written by layer 0's head 0, the
      // previous token (P..P+V-1). Layer 0, head 0: query position t, key position j + 1.
      // Layer 1, head 0: query the token, key the previous token; a constant query dim keys
      // position 0 away (its "previous token" is its own). The other heads are zero: uniform.
      const C = 40, s = 3;
      const m = await engine.createTransformer({ task: 'copy', layers: 2, heads: 2, dModel: C, dFF: 0, context: 16, batch: 8 });
      const V = m.config.vocabulary.length, P = V + 16, D = C / 2, C3 = 3 * C;
      const wte = new Float32Array(V * C), wpe = new Float32Array(16 * C);
      const qkv0 = new Float32Array(C * C3), proj0 = new Float32Array(C * C), qkv1 = new Float32Array(C * C3), b1 = new Float32Array(C3);
      for (let v = 0; v < V; v++) {
        wte[v * C + v] = 1;
        qkv0[v * C3 + 2 * C + v] = 1;
        proj0[v * C + P + v] = 1;
        qkv1[v * C3 + v] = s;
        qkv1[(P + v) * C3 + C + v] = s;
      }
      for (let t = 0; t < 16; t++) {
        wpe[t * C + V + t] = 1;
        qkv0[(V + t) * C3 + t] = s;
        if (t + 1 < D) qkv0[(V + t) * C3 + C + t + 1] = s;
      }
      b1[D - 1] = 1;
      qkv1[V * C3 + C + D - 1] = -10;
      m.setWeights({ wte, wpe, 'h0.qkv_w': qkv0, 'h0.proj_w': proj0, 'h1.qkv_w': qkv1, 'h1.qkv_b': b1 });
      const h = m.headScores({ count: 16 });
      assert.ok(h[0][0].previousToken > 0.99, `layer 0 head 0: previousToken ${h[0][0].previousToken}`);
      assert.ok(h[1][0].induction > 0.99, `layer 1 head 0: induction ${h[1][0].induction}`);
      for (const [l, k] of [[0, 1], [1, 0], [1, 1]]) assert.ok(h[l][k].previousToken < 0.5, `head ${l}.${k}: previousToken ${h[l][k].previousToken}`);
      for (const [l, k] of [[0, 0], [0, 1], [1, 1]]) assert.ok(h[l][k].induction < 0.5, `head ${l}.${k}: induction ${h[l][k].induction}`);
      m.destroy();
    });

    test('headScores finds a previous-token head set by hand', async () => {
      // one head of 16 wide; positions one-hot (wte 0, wpe I): after LayerNorm
      // position t peaks at feature t, so Wq = 4 x the shift t -> t - 1 and Wk = I
      // make query t match key t - 1. Layer 1's zero weights attend uniformly.
      const C = 16;
      const m = await engine.createTransformer({ task: 'induction', layers: 2, heads: 1, dModel: C, dFF: 0, context: C, positional: 'learned', batch: 4 });
      const w = m.weights();
      const qkv = new Float32Array(C * 3 * C);
      for (let i = 1; i < C; i++) qkv[i * 3 * C + (i - 1)] = 4;
      for (let i = 0; i < C; i++) qkv[i * 3 * C + C + i] = 1;
      const wpe = new Float32Array(C * C);
      for (let i = 0; i < C; i++) wpe[i * C + i] = 1;
      m.setWeights({ wte: new Float32Array(w.wte.length), wpe, 'h0.qkv_w': qkv, 'h1.qkv_w': new Float32Array(qkv.length) });
      assert.deepEqual(m.weights().wpe, wpe);
      const [[h0], [h1]] = m.headScores({ count: 8 });
      assert.ok(h0.previousToken > 0.9, `layer 0: previousToken ${h0.previousToken}`);
      assert.ok(h1.previousToken < 0.3, `layer 1: previousToken ${h1.previousToken}`);
      m.destroy();
    });
  });
}
