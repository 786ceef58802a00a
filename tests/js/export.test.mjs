// model.exportCheckpoint(): a transformer trained here written as a Hugging Face
// checkpoint, GPT-2's layout (learned, sinusoidal, no positions; 'dot' folded into
// the queries) and GPT-NeoX's (RoPE, permuted into rotate-half order). Each file is
// read back three ways: by the float64 references of tests/lib (written from each
// architecture as transformers computes it, not from attnlab's code), which must
// give the attention maps and the probabilities the model gave; and by
// engine.loadModel, whose logits must be the reference's. What no layout holds is
// refused with a code.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { withEngines } from './builds.mjs';
import { assertNear, throwsCode } from '../lib/assert.mjs';
import { readSafetensors, referenceForward } from '../lib/gpt2-checkpoint.mjs';
import { neoxReference } from '../lib/neox-checkpoint.mjs';

function softmaxRows(logits, n, V) {
  const p = new Float64Array(n * V);
  for (let t = 0; t < n; t++) {
    const row = logits.subarray(t * V, (t + 1) * V);
    const max = Math.max(...row);
    let sum = 0;
    for (let v = 0; v < V; v++) sum += (p[t * V + v] = Math.exp(row[v] - max));
    for (let v = 0; v < V; v++) p[t * V + v] /= sum;
  }
  return p;
}

// a repeated run of the induction task's tokens (ids < 26)
const IDS = [3, 17, 8, 21, 0, 12, 5, 3, 17, 8, 21, 0, 12, 5, 9, 14];

const CASES = [
  ['learned positions, an MLP', { positional: 'learned', dFF: 8 }, 'gpt2'],
  ['sinusoidal positions, the dot score, attention only', { positional: 'sinusoidal', score: 'dot', dFF: 0 }, 'gpt2'],
  ['no positions', { positional: 'none', dFF: 8 }, 'gpt2'],
  ['RoPE, attention only (the induction defaults)', {}, 'gpt_neox'],
  ['RoPE, an MLP, the dot score', { positional: 'rope', score: 'dot', dFF: 16 }, 'gpt_neox'],
];

for (const { name, skip, engine } of await withEngines()) {
  describe(`exportCheckpoint (${name})`, { skip }, () => {
    for (const [what, options, architecture] of CASES) {
      test(`${what}: ${architecture}'s layout; the float64 reference of that layout gives the model's attention and probabilities, and loadModel its logits`, async () => {
        const m = await engine.createTransformer({ task: 'induction', seed: 3, ...options });
        m.train({ steps: 15 });
        const out = m.exportCheckpoint();
        const { config } = out;
        assert.equal(config.model_type, architecture);
        assert.deepEqual(out.vocabulary, [...m.config.vocabulary]);
        assert.ok(m.weights().out_b.some((x) => x !== 0), 'trained: the output bias is not zero (it is folded)');
        const V = m.config.vocabulary.length, n = IDS.length, L = m.config.layers, H = m.config.heads;
        const ref = architecture === 'gpt2'
          ? referenceForward(readSafetensors(out.safetensors, 'transformer.'), config, IDS)
          : neoxReference(readSafetensors(out.safetensors), config, IDS);
        const got = m.inspect({ ids: IDS }, { lens: false });
        for (let l = 0; l < L; l++) for (let h = 0; h < H; h++) assertNear(got.attention[l][h].data, ref.attention[l][h], `attention L${l}H${h}`);
        const p = softmaxRows(ref.logits, n, V);
        for (let t = 0; t < n; t++) {
          for (const pred of got.predictions[t]) {
            assert.ok(Math.abs(pred.p - p[t * V + pred.id]) < 2e-5, `position ${t}, token ${pred.id}: p ${pred.p} here, ${p[t * V + pred.id]} in the reference`);
          }
        }
        const back = await engine.loadModel(out.safetensors, { config });
        try {
          assert.equal(back.config.architecture, architecture);
          const again = back.inspect({ ids: IDS }, { logits: true });
          assertNear(again.logits.data, ref.logits, 'logits of the loaded export');
          for (let t = 0; t < n; t++) assert.deepEqual(again.predictions[t].map((x) => x.id), got.predictions[t].map((x) => x.id), `position ${t}'s predictions`);
        } finally {
          back.destroy();
          m.destroy();
        }
      });
    }

    test('what no Hugging Face layout holds is refused with a code: ALiBi, the cosine score, an output bias past dModel; a checkpoint', async () => {
      const alibi = await engine.createTransformer({ task: 'induction', positional: 'alibi' });
      throwsCode(() => alibi.exportCheckpoint(), 'ERR_ARG', /ALiBi/);
      alibi.destroy();
      const cosine = await engine.createTransformer({ task: 'induction', score: 'cosine' });
      throwsCode(() => cosine.exportCheckpoint(), 'ERR_ARG', /cosine/);
      cosine.destroy();
      // 26 tokens, dModel 16: a trained output bias has no exact place
      const narrow = await engine.createTransformer({ task: 'induction', dModel: 16 });
      narrow.train({ steps: 5 });
      throwsCode(() => narrow.exportCheckpoint(), 'ERR_VALUE', /output layer's bias.*26 tokens.*dModel \(16\)/);
      // untrained, its output bias is zero: nothing to fold
      const fresh = await engine.createTransformer({ task: 'induction', dModel: 16 });
      assert.equal(fresh.exportCheckpoint().config.hidden_size, 16);
      fresh.destroy();
      narrow.destroy();
      const back = await engine.loadModel((await engine.createTransformer({ task: 'induction' })).exportCheckpoint().safetensors, {
        config: (await engine.createTransformer({ task: 'induction' })).exportCheckpoint().config,
      });
      throwsCode(() => back.exportCheckpoint(), 'ERR_ARG', /already/);
      back.destroy();
    });
  });
}
