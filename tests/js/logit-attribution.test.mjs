// Direct logit attribution (TransformerModel.logitAttribution over
// src/models/decoder_attribution.c), one code for every decoder: on GPT-2
// checkpoints (tied and untied) each component against a float64 reference
// written from TransformerLens's definition over the reference forward's
// activations; on a model trained here the same through its exported
// checkpoint; on GPT-NeoX (parallel residual) the components adding up to the
// logit difference inspect's logits give; bad calls coded.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { withEngines } from './builds.mjs';
import { assertNear, throwsCode } from '../lib/assert.mjs';
import { gpt2Checkpoint, readSafetensors, referenceForward } from '../lib/gpt2-checkpoint.mjs';
import { neoxCheckpoint } from '../lib/neox-checkpoint.mjs';

/**
 * The attribution by the definition, float64: the last position's embedding, position, each
 * head's z_h W_O[h], each attention bias, each MLP output, read through ln_f with the final
 * residual's sigma; ln_f's bias . (W_U[a] - W_U[b]).
 */
function referenceAttribution(w, config, ids, [a, b]) {
  const L = config.n_layer, H = config.n_head, C = config.n_embd, D = C / H, n = ids.length, V = config.vocab_size;
  const eps = config.layer_norm_epsilon ?? 1e-5, U = w['lm_head.weight'] ?? w['wte.weight'];
  const last = (x, width = C, at = 0) => Array.from({ length: C }, (_, i) => x[(n - 1) * width + at + i]);
  const z = [], attn = [], mlp = [];
  const { logits } = referenceForward(w, config, ids, {
    hook: (site, l, x) => {
      if (site === 'z') z[l] = last(x);
      if (site === 'attn') attn[l] = last(x);
      if (site === 'mlp') mlp[l] = last(x);
    },
  });
  const t = ids[n - 1];
  const parts = [['embed', Array.from({ length: C }, (_, i) => w['wte.weight'][t * C + i])],
    ['pos', Array.from({ length: C }, (_, i) => w['wpe.weight'][(n - 1) * C + i])]];
  for (let l = 0; l < L; l++) {
    const Wo = w[`h.${l}.attn.c_proj.weight`], bias = w[`h.${l}.attn.c_proj.bias`];
    for (let h = 0; h < H; h++) {
      parts.push([`L${l}H${h}`, Array.from({ length: C }, (_, i) => {
        let s = 0;
        for (let d = 0; d < D; d++) s += z[l][h * D + d] * Wo[(h * D + d) * C + i];
        return s;
      })]);
    }
    parts.push([`L${l}.attn_bias`, Array.from(bias)], [`L${l}.mlp`, mlp[l]]);
  }
  const x = new Float64Array(C);
  for (const [, c] of parts) for (let i = 0; i < C; i++) x[i] += c[i];
  const mean = x.reduce((s, v) => s + v, 0) / C;
  const sigma = Math.sqrt(x.reduce((s, v) => s + (v - mean) ** 2, 0) / C + eps);
  const u = Array.from({ length: C }, (_, i) => U[a * C + i] - U[b * C + i]);
  const g = w['ln_f.weight'], beta = w['ln_f.bias'];
  const through = (c) => {
    const m = c.reduce((s, v) => s + v, 0) / C;
    return c.reduce((s, v, i) => s + ((v - m) / sigma) * g[i] * u[i], 0);
  };
  const components = parts.map(([name, c]) => ({ name, value: through(c) }));
  components.push({ name: 'ln_f.bias', value: beta.reduce((s, v, i) => s + v * u[i], 0) });
  return { logitDiff: logits[(n - 1) * V + a] - logits[(n - 1) * V + b], components };
}

const sum = (r) => r.components.reduce((s, c) => s + c.value, 0);
const IDS = [5, 17, 42, 8, 33, 2, 60, 11, 29];

for (const { name, skip, engine } of await withEngines()) {
  describe(`logitAttribution (${name})`, { skip }, () => {
    for (const tied of [true, false]) {
      test(`GPT-2 (${tied ? 'tied' : 'untied'}): every component against the float64 reference, and they add up`, async () => {
        const { bytes, config, weights } = gpt2Checkpoint({ tied, scale: 0.5 });
        const m = await engine.loadModel(bytes, { config });
        const got = m.logitAttribution({ ids: IDS, answer: [3, 7] });
        const want = referenceAttribution(weights, config, IDS, [3, 7]);
        assert.deepEqual(got.components.map((c) => c.name), want.components.map((c) => c.name));
        assertNear(got.components.map((c) => c.value), want.components.map((c) => c.value), 'components', { atol: 1e-4, rtol: 1e-4 });
        assertNear([got.logitDiff, sum(got)], [want.logitDiff, want.logitDiff], 'the logit difference and the sum', { atol: 1e-4, rtol: 1e-4 });
        m.destroy();
      });
    }

    test('a model trained here: its components as its exported checkpoint\'s, the two biases as its folded ln_f bias', async () => {
      const m = await engine.createTransformer({ task: 'induction', positional: 'learned', dFF: 16, seed: 3 });
      m.train({ steps: 30 });
      const out = m.exportCheckpoint();
      const ids = [3, 17, 8, 21, 0, 12, 3, 17, 8];
      const got = m.logitAttribution({ ids, answer: [21, 22] });
      const want = referenceAttribution(readSafetensors(out.safetensors, 'transformer.'), out.config, ids, [21, 22]);
      const value = (r, name) => r.components.find((c) => c.name === name).value;
      const shared = want.components.map((c) => c.name).filter((k) => k !== 'ln_f.bias');
      assertNear(shared.map((k) => value(got, k)), shared.map((k) => value(want, k)), 'components', { atol: 1e-4, rtol: 1e-4 });
      assertNear([value(got, 'ln_f.bias') + value(got, 'unembed.bias')], [value(want, 'ln_f.bias')], 'the biases', { atol: 1e-4, rtol: 1e-4 });
      assertNear([sum(got)], [got.logitDiff], 'the sum', { atol: 1e-4, rtol: 1e-5 });
      // the induction defaults (attention only, RoPE): no pos, no MLP
      const small = await engine.createTransformer({ task: 'induction', seed: 1 });
      const names = small.logitAttribution({ ids, answer: [21, 22] }).components.map((c) => c.name);
      assert.deepEqual(names, ['embed', 'L0H0', 'L0H1', 'L0.attn_bias', 'L1H0', 'L1H1', 'L1.attn_bias', 'ln_f.bias', 'unembed.bias']);
      small.destroy();
      m.destroy();
    });

    test('GPT-NeoX (parallel residual, untied): the components add up to the logit difference of its logits', async () => {
      const { bytes, config } = neoxCheckpoint();
      const m = await engine.loadModel(bytes, { config });
      const ids = [4, 9, 13, 2, 7, 30, 11];
      const r = m.logitAttribution({ ids, answer: [1, 2] });
      assert.equal(r.components.length, 1 + config.num_hidden_layers * (config.num_attention_heads + 2) + 1, 'no pos for RoPE');
      const z = m.inspect({ ids }, { logits: true, lens: false }).logits.data, V = m.vocabulary.length, at = (ids.length - 1) * V;
      assertNear([r.logitDiff, sum(r)], [z[at + 1] - z[at + 2], z[at + 1] - z[at + 2]], 'the difference and the sum', { atol: 1e-4, rtol: 1e-4 });
      m.destroy();
    });

    test('bad calls: coded errors naming what is wrong', async () => {
      const { bytes, config } = gpt2Checkpoint();
      const m = await engine.loadModel(bytes, { config });
      throwsCode(() => m.logitAttribution({ answer: [3, 7] }), 'ERR_ARG', /pass either text or ids/);
      throwsCode(() => m.logitAttribution({ ids: IDS, text: 'x', answer: [3, 7] }), 'ERR_ARG', /pass either text or ids/);
      throwsCode(() => m.logitAttribution({ ids: IDS, answer: 3 }), 'ERR_ARG', /answer: expected \[a, b\]/);
      throwsCode(() => m.logitAttribution({ ids: [], answer: [3, 7] }), 'ERR_SHAPE', /input has 0 tokens/);
      assert.ok(Number.isFinite(m.logitAttribution({ ids: IDS, answer: [3, 7] }).logitDiff));
      m.destroy();
    });
  });
}
