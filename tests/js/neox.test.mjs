// GPT-NeoX (Pythia) checkpoints through engine.loadModel(bytes, { config }),
// on both builds, against the float64 reference of tests/lib/neox-checkpoint.mjs
// (written from the architecture): rotary 0.25 with a parallel residual and
// the exact GELU (Pythia's), rotary 1.0 with a sequential residual and the
// tanh GELU; attention maps, logits, the loss and greedy generation; the
// buffers older files carry ignored; every config field checked.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { withEngines } from './builds.mjs';
import { assertNear, rejectsCode } from '../lib/assert.mjs';
import { gpt2Parameters, readConfig } from '../../web/engine/gpt2.js';
import { referenceLoss } from '../lib/gpt2-checkpoint.mjs';
import { NEOX_TINY, erf, neoxCheckpoint, neoxReference } from '../lib/neox-checkpoint.mjs';

const IDS = [3, 17, 42, 5, 3, 17, 42, 5, 60, 1, 0, 63];

const VARIANTS = [
  ['rotary 0.25, parallel residual, exact GELU', NEOX_TINY],
  ['rotary 1.0, sequential residual, tanh GELU', { ...NEOX_TINY, rotary_pct: 1, use_parallel_residual: false, hidden_act: 'gelu_new', rotary_emb_base: 500 }],
];

test('the reference erf agrees with known values to 1e-14', () => {
  for (const [x, want] of [[0, 0], [0.5, 0.5204998778130465], [1, 0.8427007929497149], [2, 0.9953222650189527],
    [2.5, 0.9995930479825550], [3, 0.9999779095030014], [-1.5, -0.9661051464753108], [5, 0.9999999999984626]]) {
    assert.ok(Math.abs(erf(x) - want) < 1e-14, `erf(${x}) = ${erf(x)}, not ${want}`);
  }
});

test('readConfig reads GPT-NeoX\'s config.json', () => {
  const c = readConfig(NEOX_TINY);
  assert.equal(c.architecture, 'gpt_neox');
  assert.equal(c.rotaryDims, 4); // int(16 · 0.25)
  assert.equal(c.parallelResidual, true);
  assert.deepEqual([c.layers, c.heads, c.dModel, c.dFF, c.context, c.vocabulary], [2, 2, 32, 128, 24, 64]);
  // Pythia-70m's own fields: 50,304 embedding rows, rotary 0.25 of 64
  const p70 = readConfig({ ...NEOX_TINY, hidden_size: 512, num_attention_heads: 8, num_hidden_layers: 6,
    intermediate_size: 2048, max_position_embeddings: 2048, vocab_size: 50304 });
  assert.equal(p70.rotaryDims, 16);
});

// Pythia's config.json as the hub gives it (pythia-70m's), and the other two sizes' fields, with their parameters
const PYTHIA_70M = { architectures: ['GPTNeoXForCausalLM'], bos_token_id: 0, eos_token_id: 0, hidden_act: 'gelu', hidden_size: 512,
  initializer_range: 0.02, intermediate_size: 2048, layer_norm_eps: 1e-5, max_position_embeddings: 2048, model_type: 'gpt_neox',
  num_attention_heads: 8, num_hidden_layers: 6, rotary_emb_base: 10000, rotary_pct: 0.25, tie_word_embeddings: false,
  torch_dtype: 'float16', transformers_version: '4.24.0', use_cache: true, use_parallel_residual: true, vocab_size: 50304 };
const PYTHIA = {
  'pythia-70m': [PYTHIA_70M, 70426624],
  'pythia-160m': [{ ...PYTHIA_70M, hidden_size: 768, intermediate_size: 3072, num_attention_heads: 12, num_hidden_layers: 12 }, 162322944],
  'pythia-410m': [{ ...PYTHIA_70M, hidden_size: 1024, intermediate_size: 4096, num_attention_heads: 16, num_hidden_layers: 24 }, 405334016],
};

for (const { name, skip, engine } of await withEngines()) {
  describe(`GPT-NeoX checkpoints (${name})`, { skip }, () => {
    for (const [what, config] of VARIANTS) {
      test(`${what}: attention, logits, loss and greedy generation agree with the float64 reference`, async () => {
        const ck = neoxCheckpoint({ config, seed: config.rotary_pct * 8, buffers: true });
        const m = await engine.loadModel(ck.bytes, { config: ck.config });
        try {
          assert.equal(m.config.architecture, 'gpt_neox');
          const { num_hidden_layers: L, num_attention_heads: H, vocab_size: V } = config;
          const ref = neoxReference(ck.weights, config, IDS);
          const got = m.inspect({ ids: IDS }, { logits: true });
          for (let l = 0; l < L; l++) for (let h = 0; h < H; h++) assertNear(got.attention[l][h].data, ref.attention[l][h], `attention L${l}H${h}`);
          assertNear(got.logits.data, ref.logits, 'logits');
          const loss = m.evaluate({ ids: IDS }).loss;
          assert.ok(Math.abs(loss - referenceLoss(ref.logits, IDS, V)) < 1e-4, `loss ${loss}`);
          // greedy: each token the reference's argmax after the text so far
          const out = Array.from(m.generate({ ids: IDS.slice(0, 4) }, { tokens: 5, temperature: 0 }).ids);
          const text = IDS.slice(0, 4);
          for (const id of out) {
            const row = neoxReference(ck.weights, config, text).logits.subarray((text.length - 1) * V, text.length * V);
            let best = 0;
            for (let v = 1; v < V; v++) if (row[v] > row[best]) best = v;
            assert.equal(id, best);
            text.push(id);
          }
        } finally {
          m.destroy();
        }
      });
    }

    test('pythia-70m, -160m and -410m: their configs are accepted and their sizes accounted', () => {
      for (const [model, [config, parameters]] of Object.entries(PYTHIA)) {
        assert.equal(gpt2Parameters(engine.heap, config, false), parameters, model);
        const c = readConfig(JSON.stringify(config));
        assert.equal(engine.heap.call.gpt2_check_config({ layers: c.layers, heads: c.heads, dModel: c.dModel, dFF: c.dFF,
          context: c.context, vocab: c.vocabulary, epsilon: c.epsilon, arch: 1, rotaryDims: c.rotaryDims, rotaryBase: c.rotaryBase,
          parallel: 1, geluExact: 1 }), 0, `${model}: ${engine.heap.readString(engine.heap.call.last_error())}`);
      }
    });

    test('F16 and BF16 files read as their values', async () => {
      for (const dtype of ['F16', 'BF16']) {
        const ck = neoxCheckpoint({ dtype, seed: 9 });
        const m = await engine.loadModel(ck.bytes, { config: ck.config });
        assertNear(m.inspect({ ids: IDS }, { logits: true }).logits.data, neoxReference(ck.weights, ck.config, IDS).logits, dtype);
        m.destroy();
      }
    });

    test('every config field is checked, naming it', async () => {
      const ck = neoxCheckpoint({ seed: 2 });
      for (const [change, code, pattern] of [
        [{ hidden_act: 'relu' }, 'ERR_VALUE', /hidden_act is "relu"/],
        [{ rotary_pct: 0 }, 'ERR_VALUE', /rotary_pct must be a number in \(0, 1\]/],
        [{ rotary_pct: 0.01 }, 'ERR_VALUE', /rotary_pct: 0 of a head's 16 dimensions/],
        [{ rotary_emb_base: -1 }, 'ERR_VALUE', /rotary_emb_base must be a finite number > 0/],
        [{ layer_norm_eps: 0 }, 'ERR_VALUE', /layer_norm_eps must be a finite number > 0/],
        [{ use_parallel_residual: 'yes' }, 'ERR_VALUE', /use_parallel_residual must be true or false/],
        [{ num_hidden_layers: 2 ** 32 + 2 }, 'ERR_LIMIT', /num_hidden_layers must be an integer 0\.\.2147483647/],
        [{ hidden_size: undefined }, 'ERR_VALUE', /hidden_size is missing/],
        [{ num_hidden_layers: 3 }, 'ERR_PARAM', /gpt_neox\.layers\.2\.input_layernorm\.weight: the file has no such tensor/],
        [{ intermediate_size: 64 }, 'ERR_SHAPE', /dense_h_to_4h\.weight: shape \[128, 32\]; the config needs \[64, 32\]/],
      ]) {
        await rejectsCode(engine.loadModel(ck.bytes, { config: { ...ck.config, ...change } }), code, pattern);
      }
      // a GPT-2 config over a GPT-NeoX file names the first tensor it does not know
      await rejectsCode(engine.loadModel(ck.bytes, { config: { model_type: 'gpt2', n_layer: 2, n_head: 2, n_embd: 32, n_positions: 24, vocab_size: 64 } }),
        'ERR_VALUE', /gpt_neox\.embed_in\.weight: not a tensor of a GPT-2 checkpoint/);
    });
  });
}
