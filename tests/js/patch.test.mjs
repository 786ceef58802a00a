// Activation patching (TransformerModel.patch over src/models/decoder_patch.c),
// one code for every decoder: against a float64 reference of GPT-2 written
// from the definitions (tests/lib/gpt2-checkpoint.mjs referenceForward with
// its hooks) for every target, on a checkpoint and on a model trained here
// (read back through its exported GPT-2 checkpoint); attribution patching on
// the trained model and on GPT-2 and GPT-NeoX checkpoints against the
// references' central differences; on GPT-NeoX the exact identities of a
// block-0 patch; every bad call a coded error.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { withEngines } from './builds.mjs';
import { assertNear, throwsCode } from '../lib/assert.mjs';
import { gpt2Checkpoint, readSafetensors, referenceForward } from '../lib/gpt2-checkpoint.mjs';
import { NEOX_TINY, neoxCheckpoint, neoxReference } from '../lib/neox-checkpoint.mjs';

const TARGETS = ['resid', 'attn', 'mlp', 'heads', 'head-values', 'head-patterns'];
const SITE = { resid: 'resid', attn: 'attn', mlp: 'mlp', heads: 'z', 'head-values': 'values', 'head-patterns': 'pattern' };

/**
 * Patching by the definition, in float64: m = logit[a] - logit[b] at the last position; the
 * corrupt run with the clean run's activation put back in one cell (a position's row, or a
 * head's columns / pattern), (m_patched - m_corrupt) / (m_clean - m_corrupt) per cell.
 */
function referencePatch(weights, config, clean, corrupt, [a, b], target) {
  const L = config.n_layer, H = config.n_head, C = config.n_embd, D = C / H, n = clean.length, V = config.vocab_size;
  const site = SITE[target];
  const kept = [];
  const metric = (ids, hook) => {
    const { logits } = referenceForward(weights, config, ids, { hook });
    return logits[(n - 1) * V + a] - logits[(n - 1) * V + b];
  };
  const mClean = metric(clean, (s, l, x) => {
    if (s === site) kept[l] = s === 'pattern' ? x.map((P) => Float64Array.from(P)) : Float64Array.from(x);
  });
  const mCorrupt = metric(corrupt, () => {});
  const perPosition = ['resid', 'attn', 'mlp'].includes(target);
  const cols = perPosition ? n : H;
  const data = [];
  for (let l = 0; l < L; l++) {
    for (let c = 0; c < cols; c++) {
      const m = metric(corrupt, (s, at, x) => {
        if (s !== site || at !== l) return;
        const k = kept[l];
        if (perPosition) for (let i = 0; i < C; i++) x[c * C + i] = k[c * C + i];
        else if (s === 'pattern') x[c].set(k[c]);
        else {
          const row = s === 'values' ? 3 * C : C, at0 = s === 'values' ? 2 * C : 0;
          for (let t = 0; t < n; t++) for (let d = 0; d < D; d++) x[t * row + at0 + c * D + d] = k[t * row + at0 + c * D + d];
        }
      });
      data.push((m - mCorrupt) / (mClean - mCorrupt));
    }
  }
  return { rows: L, cols, data, clean: mClean, corrupt: mCorrupt };
}

/**
 * Attribution patching by the definition, in float64: each cell's directional derivative of m
 * on the corrupt run along (act_clean - act_corrupt) in that cell, by central differences
 * (the reference has no backward pass: an independent check), over m_clean - m_corrupt.
 */
function referenceAttribution(weights, config, clean, corrupt, [a, b], target, forward = referenceForward) {
  const L = config.n_layer ?? config.num_hidden_layers, H = config.n_head ?? config.num_attention_heads;
  const C = config.n_embd ?? config.hidden_size, D = C / H, n = clean.length, V = config.vocab_size;
  const site = SITE[target], kept = { clean: [], corrupt: [] };
  const metric = (ids, hook) => {
    const { logits } = forward(weights, config, ids, { hook });
    return logits[(n - 1) * V + a] - logits[(n - 1) * V + b];
  };
  const keep = (into) => (s, l, x) => { if (s === site) into[l] = Float64Array.from(x); };
  const span = metric(clean, keep(kept.clean)) - metric(corrupt, keep(kept.corrupt));
  const perPosition = ['resid', 'attn', 'mlp'].includes(target);
  const cols = perPosition ? n : H, eps = 1e-4, data = [];
  const row = site === 'values' ? 3 * C : C, at0 = site === 'values' ? 2 * C : 0;
  const cell = (c) => {
    const out = [];
    if (perPosition) for (let i = 0; i < C; i++) out.push(c * C + i);
    else for (let t = 0; t < n; t++) for (let d = 0; d < D; d++) out.push(t * row + at0 + c * D + d);
    return out;
  };
  for (let l = 0; l < L; l++) {
    for (let c = 0; c < cols; c++) {
      const at = (sign) => metric(corrupt, (s, layer, x) => {
        if (s !== site || layer !== l) return;
        for (const k of cell(c)) x[k] += sign * eps * (kept.clean[l][k] - kept.corrupt[l][k]);
      });
      data.push((at(1) - at(-1)) / (2 * eps) / span);
    }
  }
  return { rows: L, cols, data };
}

function checkAgainst(got, want, what) {
  assert.equal(got.rows, want.rows, `${what}: rows`);
  assert.equal(got.cols, want.cols, `${what}: cols`);
  assertNear([got.clean, got.corrupt], [want.clean, want.corrupt], `${what}: the metrics`, { atol: 1e-4, rtol: 1e-4 });
  assertNear(got.data, want.data, `${what}: the cells`, { atol: 1e-3, rtol: 1e-3 });
}

/** A model trained here (an MLP, learned positions), its export read as float64, and a prompt pair. */
async function trainedHere(engine) {
  const m = await engine.createTransformer({ task: 'induction', positional: 'learned', dFF: 16, seed: 3 });
  m.train({ steps: 30 });
  const out = m.exportCheckpoint();
  const weights = readSafetensors(out.safetensors, 'transformer.');
  return { m, out, weights, clean: [3, 17, 8, 21, 0, 12, 3, 17, 8], corrupt: [3, 17, 8, 21, 0, 12, 4, 17, 8] };
}

const CLEAN = [5, 17, 42, 8, 33, 2, 60, 11, 29, 5];
const CORRUPT = [5, 17, 42, 9, 33, 2, 60, 48, 29, 5];

for (const { name, skip, engine } of await withEngines()) {
  describe(`patch (${name})`, { skip }, () => {
    test('a GPT-2 checkpoint: every target against the float64 reference', async () => {
      const { bytes, config, weights } = gpt2Checkpoint({ scale: 0.5 });
      const m = await engine.loadModel(bytes, { config });
      for (const target of TARGETS) {
        const got = m.patch({ clean: { ids: CLEAN }, corrupt: CORRUPT, answer: [3, 7], target });
        assert.equal(got.target, target);
        assert.equal(got.method, 'exact');
        checkAgainst(got, referencePatch(weights, config, CLEAN, CORRUPT, [3, 7], target), target);
      }
      m.destroy();
    });

    test('a GPT-2 checkpoint, 24 tokens: a layer\'s patched runs go in batches (10, 10 and 4 of its 24), each cell as the reference', async () => {
      const { bytes, config, weights } = gpt2Checkpoint({ scale: 0.5, seed: 7 });
      const m = await engine.loadModel(bytes, { config });
      const clean = Array.from({ length: 24 }, (_, i) => (i * 13 + 5) % 64);
      const corrupt = clean.slice();
      corrupt[6] = 1;
      corrupt[17] = 2;
      for (const target of ['resid', 'mlp']) {
        const got = m.patch({ clean, corrupt, answer: [3, 7], target });
        checkAgainst(got, referencePatch(weights, config, clean, corrupt, [3, 7], target), `${target}, 24 tokens`);
      }
      m.destroy();
    });

    test('a model trained here: every target against the reference of its exported checkpoint', async () => {
      const { m, out, weights, clean, corrupt } = await trainedHere(engine);
      for (const target of TARGETS) {
        const got = m.patch({ clean, corrupt, answer: [21, 22], target });
        checkAgainst(got, referencePatch(weights, out.config, clean, corrupt, [21, 22], target), target);
      }
      m.destroy();
    });

    test('attribution on a model trained here: every target but patterns against float64 central differences', async () => {
      const { m, out, weights, clean, corrupt } = await trainedHere(engine);
      for (const target of TARGETS.filter((t) => t !== 'head-patterns')) {
        const got = m.patch({ clean, corrupt, answer: [21, 22], target, method: 'attribution' });
        assert.equal(got.method, 'attribution');
        const want = referenceAttribution(weights, out.config, clean, corrupt, [21, 22], target);
        assert.equal(got.rows, want.rows);
        assert.equal(got.cols, want.cols);
        assertNear(got.data, want.data, `${target}: the cells`, { atol: 1e-3, rtol: 1e-3 });
      }
      throwsCode(() => m.patch({ clean, corrupt, answer: [21, 22], target: 'head-patterns', method: 'attribution' }), 'ERR_ARG', /patterns are patched with method 'exact'/);
      m.destroy();
    });

    test('attribution on checkpoints (GPT-2 tied and untied, GPT-NeoX parallel and sequential): against float64 central differences', async () => {
      const cases = [
        { what: 'GPT-2, tied', ck: gpt2Checkpoint({ scale: 0.5 }), targets: TARGETS.filter((t) => t !== 'head-patterns') },
        { what: 'GPT-2, untied', ck: gpt2Checkpoint({ scale: 0.5, tied: false, seed: 4 }), targets: ['resid', 'heads'] },
        { what: 'GPT-NeoX, rotary 0.25, parallel, exact GELU', ck: neoxCheckpoint({ scale: 0.5 }), targets: ['resid', 'attn', 'mlp'], forward: neoxReference },
        {
          what: 'GPT-NeoX, rotary 1.0, sequential, tanh GELU',
          ck: neoxCheckpoint({ scale: 0.5, seed: 2, config: { ...NEOX_TINY, rotary_pct: 1, use_parallel_residual: false, hidden_act: 'gelu_new' } }),
          targets: ['resid', 'attn', 'mlp'],
          forward: neoxReference,
        },
      ];
      for (const { what, ck, targets, forward } of cases) {
        const m = await engine.loadModel(ck.bytes, { config: ck.config });
        for (const target of targets) {
          const got = m.patch({ clean: CLEAN, corrupt: CORRUPT, answer: [3, 7], target, method: 'attribution' });
          assert.equal(got.method, 'attribution');
          const want = referenceAttribution(ck.weights, ck.config, CLEAN, CORRUPT, [3, 7], target, forward);
          assert.equal(got.rows, want.rows);
          assert.equal(got.cols, want.cols);
          assertNear(got.data, want.data, `${what}, ${target}: the cells`, { atol: 1e-3, rtol: 1e-3 });
        }
        m.destroy();
      }
    });

    test('GPT-NeoX: a block-0 input patch recovers all of a lone changed position and none elsewhere', async () => {
      const { bytes, config } = neoxCheckpoint();
      const m = await engine.loadModel(bytes, { config });
      const clean = [4, 9, 13, 2, 7, 30, 11], corrupt = [4, 9, 13, 25, 7, 30, 11];
      const r = m.patch({ clean, corrupt, answer: [1, 2], target: 'resid' });
      assert.equal(r.rows, m.config.layers);
      assert.equal(r.cols, clean.length);
      for (let t = 0; t < clean.length; t++) assert.equal(r.data[t], t === 3 ? 1 : 0, `block 0, position ${t}`);
      // the last block's every head: all finite, and the run's metrics as inspect's logits give them
      const h = m.patch({ clean, corrupt, answer: [1, 2], target: 'heads' });
      assert.ok(h.data.every(Number.isFinite));
      const z = m.inspect({ ids: clean }, { logits: true, lens: false }).logits;
      const V = m.vocabulary.length, last = (clean.length - 1) * V;
      assertNear([h.clean], [z.data[last + 1] - z.data[last + 2]], 'the clean metric', { atol: 1e-4, rtol: 1e-4 });
      m.destroy();
    });

    test('bad calls: coded errors naming what is wrong, and the model answers on', async () => {
      const { bytes, config } = gpt2Checkpoint();
      const m = await engine.loadModel(bytes, { config });
      const ok = { clean: CLEAN, corrupt: CORRUPT, answer: [3, 7], target: 'resid' };
      throwsCode(() => m.patch({ ...ok, corrupt: CORRUPT.slice(1) }), 'ERR_SHAPE', /clean has 10 tokens and corrupt 9/);
      throwsCode(() => m.patch({ ...ok, corrupt: CLEAN }), 'ERR_VALUE', /the same logit difference/);
      throwsCode(() => m.patch({ ...ok, answer: [3] }), 'ERR_ARG', /answer: expected \[a, b\]/);
      throwsCode(() => m.patch({ ...ok, answer: [3, 64] }), 'ERR_VALUE', /answer\[1\] is 64/);
      throwsCode(() => m.patch({ ...ok, target: 'neurons' }), 'ERR_ARG', /target: unknown value 'neurons'/);
      throwsCode(() => m.patch({ ...ok, target: 'head-patterns', method: 'attribution' }), 'ERR_ARG', /patterns are patched with method 'exact'/);
      throwsCode(() => m.patch({ ...ok, method: 'approximate' }), 'ERR_ARG', /method: unknown value 'approximate'/);
      throwsCode(() => m.patch({ ...ok, clean: undefined }), 'ERR_ARG', /needs clean and corrupt/);
      throwsCode(() => m.patch({ ...ok, clean: [...CLEAN, 70] }), 'ERR_VALUE', /token ids are integers 0..63/);
      assert.equal(m.patch(ok).rows, config.n_layer);
      m.destroy();
    });
  });
}
