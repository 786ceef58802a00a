// GPT-2 checkpoints through engine.loadModel(bytes, { config }), on both
// builds, with checkpoints the test builds (tests/lib/gpt2-checkpoint.mjs):
// attention weights, logits, the lens, the loss and greedy generation
// against a float64 reference of the same weights, for each dtype (F32, F16,
// BF16), both namings and tied or untied unembeddings; text through GPT-2's
// tokenizer; head scores of a checkpoint whose heads are set by hand; the
// sizes of the three real shapes (gpt2, distilgpt2, gpt2-medium).
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { withEngines } from './builds.mjs';
import { assertNear, rejectsCode, throwsCode } from '../lib/assert.mjs';
import { gpt2Tokenizer } from '../../web/engine/gpt2-tokenizer.js';
import { gpt2Parameters, readConfig } from '../../web/engine/gpt2.js';
import {
  TINY, gpt2Checkpoint, referenceForward, referenceGreedy, referenceLoss, INDUCTION_CIRCUIT, inductionCircuit,
} from '../lib/gpt2-checkpoint.mjs';

const IDS = [3, 17, 42, 5, 3, 17, 42, 5, 60, 1, 0, 63];

const argmaxRows = (x, n, V) => Array.from({ length: n }, (_, t) => {
  let best = 0;
  for (let v = 1; v < V; v++) if (x[t * V + v] > x[t * V + best]) best = v;
  return best;
});

// The three real shapes, as their config.json files on the Hugging Face hub give them.
const REAL = {
  gpt2: [{ model_type: 'gpt2', n_layer: 12, n_head: 12, n_embd: 768, n_positions: 1024, n_ctx: 1024, vocab_size: 50257,
    layer_norm_epsilon: 1e-5, activation_function: 'gelu_new', n_inner: null }, 124439808],
  distilgpt2: [{ model_type: 'gpt2', n_layer: 6, n_head: 12, n_embd: 768, n_positions: 1024, n_ctx: 1024, vocab_size: 50257,
    layer_norm_epsilon: 1e-5, activation_function: 'gelu_new', n_inner: null }, 81912576],
  'gpt2-medium': [{ model_type: 'gpt2', n_layer: 24, n_head: 16, n_embd: 1024, n_positions: 1024, n_ctx: 1024, vocab_size: 50257,
    layer_norm_epsilon: 1e-5, activation_function: 'gelu_new', n_inner: null }, 354823168],
};

for (const { name, skip, engine } of await withEngines()) {
  describe(`GPT-2 checkpoints (${name})`, { skip }, () => {
    let tok;
    before(async () => { tok = await gpt2Tokenizer(); });

    for (const dtype of ['F32', 'F16', 'BF16']) {
      for (const prefix of [false, true]) {
        for (const tied of [true, false]) {
          const what = `${dtype}, ${prefix ? 'transformer.' : 'bare'} names, ${tied ? 'tied' : 'lm_head'}`;
          test(`${what}: attention, logits and the lens agree with the float64 reference`, async () => {
            const ck = gpt2Checkpoint({ dtype, prefix, tied, buffers: prefix, seed: dtype.length + 2 * prefix + 4 * tied });
            const gpt = await engine.loadModel(ck.bytes, { config: ck.config });
            assert.equal(gpt.kind, 'transformer');
            const { n_layer: L, n_head: H, vocab_size: V } = TINY;
            assert.deepEqual({ ...gpt.config }, {
              architecture: 'gpt2', task: null, layers: 2, heads: 2, dModel: 16, dFF: 64, context: 24, positional: 'learned',
              score: 'scaled_dot', batch: null, seed: null, vocabulary: Array.from({ length: 64 }, (_, id) => tok.token(id)),
              sequenceLength: null, parameters: Object.values(ck.weights).reduce((s, w) => s + w.length, 0),
              dtype: { F32: 'float32', F16: 'float16', BF16: 'bfloat16' }[dtype],
            });
            const r = gpt.inspect({ ids: IDS }, { lens: true, logits: true });
            const ref = referenceForward(ck.weights, ck.config, IDS);
            for (let l = 0; l < L; l++) {
              for (let h = 0; h < H; h++) {
                assert.equal(r.attention[l][h].rows, IDS.length);
                assertNear(r.attention[l][h].data, ref.attention[l][h], `attention[${l}][${h}]`);
              }
            }
            assertNear(r.logits.data, ref.logits, 'logits');
            assert.deepEqual([r.logits.rows, r.logits.cols], [IDS.length, V]);
            const lens = ref.lens();
            for (let l = 0; l < L; l++) assert.deepEqual(r.lens[l], argmaxRows(lens[l], IDS.length, V).map((id) => tok.token(id)), `lens[${l}]`);
            assert.deepEqual(r.tokens, IDS.map((id) => tok.token(id)));
            // the predictions: the top 5 of the reference's softmax, in order
            const best = argmaxRows(ref.logits, IDS.length, V);
            r.predictions.forEach((row, t) => {
              assert.equal(row.length, 5);
              assert.equal(row[0].id, best[t], `predictions[${t}]`);
              for (let j = 1; j < 5; j++) assert.ok(row[j].p <= row[j - 1].p);
            });
            gpt.destroy();
          });
        }
      }
    }

    test('a vocabulary of fewer than 5 tokens: each position predicts every token once, probabilities as the reference', async () => {
      const config = { ...TINY, vocab_size: 3 };
      const ck = gpt2Checkpoint({ config, seed: 9 });
      const gpt = await engine.loadModel(ck.bytes, { config: ck.config });
      const ids = [0, 2, 1, 1, 0];
      const r = gpt.inspect({ ids });
      const ref = referenceForward(ck.weights, ck.config, ids);
      r.predictions.forEach((row, t) => {
        assert.deepEqual(row.map((q) => q.id).sort(), [0, 1, 2], `predictions[${t}]: each token once, nothing past the vocabulary`);
        const z = ref.logits.slice(t * 3, t * 3 + 3), top = Math.max(...z), sum = z.reduce((s, v) => s + Math.exp(v - top), 0);
        assertNear(row.map((q) => q.p), row.map((q) => Math.exp(z[q.id] - top) / sum), `predictions[${t}]'s probabilities`);
      });
      gpt.destroy();
    });

    test('ablation, loss and greedy generation agree with the reference; past the context the window slides', async () => {
      const ck = gpt2Checkpoint({ dtype: 'F32', seed: 11 });
      const gpt = await engine.loadModel(ck.bytes, { config: JSON.stringify(ck.config) });
      const ablate = [{ layer: 1, head: 0 }, { layer: 0, head: 1 }];
      const r = gpt.inspect({ ids: IDS }, { ablate, logits: true });
      const ref = referenceForward(ck.weights, ck.config, IDS, { ablate });
      assertNear(r.logits.data, ref.logits, 'ablated logits');
      assertNear(r.attention[1][1].data, ref.attention[1][1], 'attention after an ablated head');
      // the ablation lasts for the call only
      assertNear(gpt.inspect({ ids: IDS }, { logits: true }).logits.data, referenceForward(ck.weights, ck.config, IDS).logits, 'logits after');
      const ev = gpt.evaluate({ ids: IDS });
      assert.equal(ev.tokens, IDS.length - 1);
      assert.ok(Math.abs(ev.loss - referenceLoss(referenceForward(ck.weights, ck.config, IDS).logits, IDS, 64)) < 1e-5);
      const evA = gpt.evaluate({ ids: IDS, ablate });
      assert.ok(Math.abs(evA.loss - referenceLoss(ref.logits, IDS, 64)) < 1e-5, 'ablated loss');
      const prompt = IDS.concat(IDS).slice(0, 20); // 20 tokens + 8 new: past the context of 24 (the window slides)
      const g = gpt.generate({ ids: prompt }, { tokens: 8, temperature: 0 });
      assert.deepEqual(Array.from(g.ids), referenceGreedy(ck.weights, ck.config, prompt, 8));
      // within the context every new position reads the cached keys and values: the same tokens (weights at
      // twice the scale, whose greedy run changes its mind on the way)
      const loud = gpt2Checkpoint({ seed: 5, scale: 2 });
      const gl = await engine.loadModel(loud.bytes, { config: loud.config });
      const short = IDS.slice(0, 10);
      const want = referenceGreedy(loud.weights, loud.config, short, 14);
      assert.ok(new Set(want).size > 1, `the reference's run changes token: ${want}`);
      assert.deepEqual(Array.from(gl.generate({ ids: short }, { tokens: 14, temperature: 0 }).ids), want, 'greedy within the context');
      gl.destroy();
      assert.equal(g.text, tok.decode(g.ids));
      // sampling: reproducible from its seed, within the top k
      const s1 = gpt.generate({ ids: IDS }, { tokens: 6, temperature: 0.8, topK: 3, seed: 5 });
      assert.deepEqual(gpt.generate({ ids: IDS }, { tokens: 6, temperature: 0.8, topK: 3, seed: 5 }), s1);
      const first = referenceForward(ck.weights, ck.config, IDS).logits.subarray((IDS.length - 1) * 64, IDS.length * 64);
      const top3 = Array.from(first.keys()).sort((a, b) => first[b] - first[a]).slice(0, 3);
      assert.ok(top3.includes(s1.ids[0]), `the first draw ${s1.ids[0]} is one of the 3 most likely ${top3}`);
      gpt.destroy();
    });

    test('text goes through GPT-2\'s tokenizer (a checkpoint of its vocabulary)', async () => {
      const config = { ...TINY, vocab_size: 50257, n_positions: 32, n_ctx: 32 };
      const ck = gpt2Checkpoint({ config, dtype: 'BF16', seed: 3, scale: 0.1 });
      const gpt = await engine.loadModel(ck.bytes.buffer, { config });
      const text = 'Hello, world! 👋 <|endoftext|> a  b';
      assert.deepEqual(gpt.tokenize(text), tok.encode(text));
      const r = gpt.inspect(text);
      assert.deepEqual(r.tokens, tok.encode(text).tokens);
      const byIds = gpt.inspect({ ids: tok.encode(text).ids });
      assert.deepEqual(r.predictions, byIds.predictions);
      assert.equal(r.predictions[0][0].token, tok.token(r.predictions[0][0].id));
      const ev = gpt.evaluate({ text });
      assert.equal(ev.tokens, tok.encode(text).ids.length - 1);
      assert.ok(Math.abs(ev.loss - gpt.evaluate({ ids: tok.encode(text).ids }).loss) < 1e-12);
      const g = gpt.generate('Once upon', { tokens: 3, temperature: 0 });
      assert.equal(g.text, tok.decode(g.ids));
      gpt.destroy();
    });

    test('headScores: a previous-token head and an induction head set by hand score >= 0.9, the others low', async () => {
      // a previous-token head (L0H0) and an induction head (L1H0) set by hand (tests/lib/gpt2-checkpoint.mjs)
      const config = INDUCTION_CIRCUIT;
      const set = inductionCircuit();
      const ck = gpt2Checkpoint({ config, set });
      const gpt = await engine.loadModel(ck.bytes, { config });
      const scores = gpt.headScores({ count: 4, length: 8, seed: 3 });
      assert.equal(scores.length, 2);
      assert.ok(scores[0][0].previousToken >= 0.9, `previous-token head: ${scores[0][0].previousToken}`);
      assert.ok(scores[1][0].induction >= 0.9, `induction head: ${scores[1][0].induction}`);
      for (const [l, h, key] of [[0, 0, 'induction'], [1, 0, 'previousToken'], [0, 1, 'previousToken'], [0, 1, 'induction'], [1, 1, 'previousToken'], [1, 1, 'induction']]) {
        assert.ok(scores[l][h][key] < 0.3, `head ${l}.${h} ${key}: ${scores[l][h][key]}`);
      }
      assert.deepEqual(gpt.headScores({ count: 4, length: 8, seed: 3 }), scores, 'the same seed, the same scores');
      // ablating the previous-token head breaks the induction head's composition: the repeat's loss rises
      const seq = [5, 9, 2, 30, 17, 11, 5, 9, 2, 30, 17, 11];
      assert.ok(gpt.evaluate({ ids: seq, ablate: [{ layer: 0, head: 0 }] }).loss >= gpt.evaluate({ ids: seq }).loss - 1e-9);
      throwsCode(() => gpt.headScores({ length: 17 }), 'ERR_LIMIT', /length: 17/);
      throwsCode(() => gpt.headScores({ count: 0 }), 'ERR_SHAPE', /count/);
      gpt.destroy();
    });

    test('bad arguments: coded AttnlabErrors, the model usable after', async () => {
      const ck = gpt2Checkpoint({ seed: 2 });
      const gpt = await engine.loadModel(ck.bytes, { config: ck.config });
      const before = gpt.inspect({ ids: IDS });
      throwsCode(() => gpt.inspect({ ids: [64] }), 'ERR_VALUE', /ids\[0\] is 64/);
      throwsCode(() => gpt.inspect({ ids: [] }), 'ERR_SHAPE', /0 tokens/);
      throwsCode(() => gpt.inspect({ ids: new Array(25).fill(1) }), 'ERR_LIMIT', /25 tokens; this model reads 1..24/);
      throwsCode(() => gpt.inspect(42), 'ERR_ARG', /a string, an array of token ids or \{ ids \}/);
      throwsCode(() => gpt.inspect({ ids: IDS }, { lens: 'yes' }), 'ERR_VALUE', /lens must be true or false/);
      throwsCode(() => gpt.inspect({ ids: IDS }, { ablate: [{ layer: 2, head: 0 }] }), 'ERR_LIMIT', /ablate\[0\]\.layer/);
      throwsCode(() => gpt.evaluate({ ids: [1] }), 'ERR_SHAPE', /1 tokens/);
      throwsCode(() => gpt.evaluate({ text: 'a', ids: [1, 2] }), 'ERR_ARG', /either text or ids/);
      throwsCode(() => gpt.generate({ ids: [1] }, { temperature: -1 }), 'ERR_VALUE', /temperature/);
      throwsCode(() => gpt.generate({ ids: [1] }, { tokens: 1e6 }), 'ERR_LIMIT', /tokens/);
      throwsCode(() => gpt.tokenize(5), 'ERR_ARG', /tokenize: text/);
      throwsCode(() => gpt.train({ steps: 1 }), 'ERR_ARG', /fine-tunes on a text: pass text/);
      throwsCode(() => gpt.save(), 'ERR_ARG', /model.safetensors is the file/);
      assert.deepEqual(gpt.inspect({ ids: IDS }), before);
      gpt.destroy();
      throwsCode(() => gpt.inspect({ ids: IDS }), 'ERR_ARG', /^inspect: this model was destroyed/);
      await rejectsCode(engine.loadModel(ck.bytes), 'ERR_ARG', /pass its config.json too/);
    });

    test('the three real shapes: their configs are accepted and their sizes accounted', () => {
      for (const [model, [config, parameters]] of Object.entries(REAL)) {
        assert.equal(gpt2Parameters(engine.heap, config), parameters, model);
        assert.equal(gpt2Parameters(engine.heap, JSON.stringify(config), false), parameters + 50257 * config.n_embd, `${model} untied`);
        const c = readConfig(config);
        assert.equal(engine.heap.call.gpt2_check_config({ layers: c.layers, heads: c.heads, dModel: c.dModel, dFF: c.dFF,
          context: c.context, vocab: c.vocabulary, epsilon: c.epsilon, arch: 0, rotaryDims: 0, rotaryBase: 0, parallel: 0, geluExact: 0 }), 0, `${model}: ${engine.heap.readString(engine.heap.call.last_error())}`);
      }
    });
  });
}
