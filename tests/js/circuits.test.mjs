// Composition and copying scores (TransformerModel.compositionScores,
// .copyingScores: C, written once against the weight view) on both builds,
// for every architecture: a transformer trained here, GPT-2 checkpoints
// (tied and untied) and a GPT-NeoX one built by the tests, each against the
// float64 reference of tests/lib/circuits-ref.mjs (written from the
// definitions); hand-built heads with known answers (a full OV circuit of
// ±identity copies with ±1; a layer-0 head writing exactly where a layer-1
// head's query, key or value reads composes with 1, and with 0 through an
// unrelated subspace); every entry whose row's layer is not earlier exactly 0.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { withEngines } from './builds.mjs';
import { loadEngine } from '../../web/engine/index.js';
import { simdSupported } from '../../web/engine/wasm.js';
import { assertNear } from '../lib/assert.mjs';
import { TINY, gpt2Checkpoint } from '../lib/gpt2-checkpoint.mjs';
import { NEOX_TINY, neoxCheckpoint } from '../lib/neox-checkpoint.mjs';
import {
  attnlabHeads, compositionReference, copyingReference, eigenvalues, gpt2Heads, matmul, neoxHeads, ovCircuits, transpose,
} from '../lib/circuits-ref.mjs';

const TOL = { atol: 1e-5, rtol: 1e-4 };

/**
 * Every score of m against the reference of its heads, and the entries that
 * must be 0; copying false leaves out the copying scores (the reference's
 * roots come from the characteristic polynomial, which blurs a cluster of
 * near-zero eigenvalues: a head of rank about one).
 */
function checkScores(m, heads, what, { copying: withCopying = true } = {}) {
  const { layers: L, heads: H } = m.config, n = L * H;
  const got = m.compositionScores(), want = compositionReference(heads);
  for (const mode of ['q', 'k', 'v']) {
    assert.equal(got[mode].rows, n);
    assert.equal(got[mode].cols, n);
    assert.ok(got[mode].data instanceof Float32Array);
    assertNear(got[mode].data, want[mode], `${what}: ${mode} composition`, TOL);
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < n; j++) {
        if (Math.floor(i / H) >= Math.floor(j / H)) assert.equal(got[mode].data[i * n + j], 0, `${what}: ${mode}[${i}][${j}] is exactly 0`);
      }
    }
  }
  if (!withCopying) return;
  const copying = m.copyingScores();
  assert.equal(copying.rows, L);
  assert.equal(copying.cols, H);
  assertNear(copying.data, copyingReference(heads), `${what}: copying`, TOL);
}

test('the reference eigenvalues: a companion matrix of roots 1..4, a rotation block, a 3 x 3 of 2 and ±i', () => {
  const sorted = (ev) => ev.map(([re, im]) => [Math.round(re * 1e9) / 1e9 + 0, Math.round(im * 1e9) / 1e9 + 0]).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  assert.deepEqual(sorted(eigenvalues(Float64Array.from([10, -35, 50, -24, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0]), 4)), [[1, 0], [2, 0], [3, 0], [4, 0]]);
  const c = Math.cos(0.3), s = Math.sin(0.3);
  assert.deepEqual(sorted(eigenvalues(Float64Array.from([c, -s, s, c]), 2)), sorted([[c, s], [c, -s]]));
  assert.deepEqual(sorted(eigenvalues(Float64Array.from([2, -1, 2, 1, 0, 0, 0, 1, 0]), 3)), [[0, -1], [0, 1], [2, 0]]);
});

/** fn(model) on the model `made` resolves to, destroyed after. */
async function using(made, fn) {
  const m = await made;
  try {
    return await fn(m);
  } finally {
    m.destroy();
  }
}

/** (M Mᵀ)⁻¹ by Gauss–Jordan, for M (D x C). */
function rightInverse(M, D, C) {
  const a = matmul(M, transpose(M, D, C), D, C, D), inv = new Float64Array(D * D);
  for (let i = 0; i < D; i++) inv[i * D + i] = 1;
  for (let p = 0; p < D; p++) {
    let best = p;
    for (let i = p + 1; i < D; i++) if (Math.abs(a[i * D + p]) > Math.abs(a[best * D + p])) best = i;
    for (const x of [a, inv]) for (let j = 0; j < D; j++) [x[p * D + j], x[best * D + j]] = [x[best * D + j], x[p * D + j]];
    const d = a[p * D + p];
    for (const x of [a, inv]) for (let j = 0; j < D; j++) x[p * D + j] /= d;
    for (let i = 0; i < D; i++) {
      if (i === p) continue;
      const f = a[i * D + p];
      for (const x of [a, inv]) for (let j = 0; j < D; j++) x[i * D + j] -= f * x[p * D + j];
    }
  }
  return matmul(transpose(M, D, C), inv, C, D, D); // Mᵀ (M Mᵀ)⁻¹ (C x D)
}

for (const { name, skip, engine } of await withEngines()) {
  describe(`circuits (${name})`, { skip }, () => {
    test('a transformer trained here: both scores agree with the float64 reference', async () => {
      await using(engine.createTransformer({ task: 'induction', layers: 3, heads: 2, dModel: 16, seed: 3 }), (m) => {
      m.train({ steps: 30 });
      checkScores(m, attnlabHeads(m.config, m.weights()), 'trained here');
      });
    });

    for (const tied of [true, false]) {
      test(`a GPT-2 checkpoint (${tied ? 'tied' : 'untied'}): both scores agree with the float64 reference`, async () => {
        const config = { ...TINY, n_layer: 3 };
        const ck = gpt2Checkpoint({ config, tied, seed: tied ? 5 : 6 });
        await using(engine.loadModel(ck.bytes, { config }), (m) => {
        checkScores(m, gpt2Heads(config, ck.weights), `GPT-2, ${tied ? 'tied' : 'untied'}`);
        });
      });
    }

    test('a GPT-NeoX checkpoint: both scores agree with the float64 reference', async () => {
      const config = { ...NEOX_TINY, num_attention_heads: 4, num_hidden_layers: 3 };
      const ck = neoxCheckpoint({ config, seed: 9 });
      await using(engine.loadModel(ck.bytes, { config }), (m) => {
      assert.equal(m.config.architecture, 'gpt_neox');
      checkScores(m, neoxHeads(config, ck.weights), 'GPT-NeoX');
      });
    });

    test('copying: a head whose full OV circuit is the identity scores 1, its negative -1, a head of zeros 0', async () => {
      await using(engine.createTransformer({ task: 'induction', layers: 2, heads: 2, dModel: 16, seed: 4 }), (m) => {
      const { dModel: C, heads: H } = m.config, D = C / H;
      const w = m.weights(), heads = attnlabHeads(m.config, w);
      // W_V = Mᵀ (M Mᵀ)⁻¹ with M = W_O diag(γ_f) W_U W_E (D x C): then W_O diag(γ_f) W_U W_E W_V = I
      const o = Float64Array.from(heads.o[0][0], (x, i) => x * heads.lnf[i % C]);
      const M = matmul(matmul(o, heads.WU, D, C, heads.V), heads.WE, D, heads.V, C);
      const wv = rightInverse(M, D, C);
      const qkv = Float32Array.from(w['h0.qkv_w']), ln1 = w['h0.ln1_w'];
      const setHead = (h, sign) => {
        for (let c = 0; c < C; c++) for (let d = 0; d < D; d++) qkv[c * 3 * C + 2 * C + h * D + d] = sign * wv[c * D + d] / ln1[c];
      };
      setHead(0, 1);
      m.setWeights({ 'h0.qkv_w': qkv });
      const circuit = ovCircuits(attnlabHeads(m.config, m.weights()))[0][0];
      for (let i = 0; i < D; i++) for (let j = 0; j < D; j++) assert.ok(Math.abs(circuit[i * D + j] - (i === j)) < 1e-3, 'the circuit is the identity');
      assert.ok(Math.abs(m.copyingScores().data[0] - 1) < 1e-5, `identity: ${m.copyingScores().data[0]}`);
      setHead(0, -1);
      m.setWeights({ 'h0.qkv_w': qkv });
      assert.ok(Math.abs(m.copyingScores().data[0] + 1) < 1e-5, `negative identity: ${m.copyingScores().data[0]}`);
      for (let c = 0; c < C; c++) for (let d = 0; d < D; d++) qkv[c * 3 * C + 2 * C + 1 * D + d] = 0;
      m.setWeights({ 'h0.qkv_w': qkv });
      assert.equal(m.copyingScores().data[1], 0, 'a head with W_V = 0');
      });
    });

    test('composition: a layer-0 head writing where a layer-1 head reads scores 1, an unrelated subspace 0', async () => {
      await using(engine.createTransformer({ task: 'induction', layers: 2, heads: 2, dModel: 16, seed: 4 }), (m) => {
      const { dModel: C, heads: H } = m.config, D = C / H;
      const qkv = [new Float32Array(3 * C * C), new Float32Array(3 * C * C)], proj = [new Float32Array(C * C), new Float32Array(C * C)];
      // residual directions e_1 .. e_5; s: 0 queries, 1 keys, 2 values; each head uses its first dimension only
      const read = (l, s, h, e) => { qkv[l][e * 3 * C + s * C + h * D] = 1; };
      const write = (l, h, e) => { proj[l][h * D * C + e] = 1; };
      read(0, 2, 0, 1); write(0, 0, 2); // L0H0: W_OV = e1 e2ᵀ (reads e1, writes e2)
      read(1, 0, 0, 2); read(1, 1, 0, 3); // L1H0: W_QK = e2 e3ᵀ (its query reads e2): Q-composition
      read(1, 0, 1, 4); read(1, 1, 1, 2); // L1H1: W_QK = e4 e2ᵀ (its key reads e2): K-composition
      read(1, 2, 1, 2); write(1, 1, 5); //        W_OV = e2 e5ᵀ (its value reads e2): V-composition
      m.setWeights({ 'h0.qkv_w': qkv[0], 'h1.qkv_w': qkv[1], 'h0.proj_w': proj[0], 'h1.proj_w': proj[1],
        'h0.ln1_w': new Float32Array(C).fill(1), 'h1.ln1_w': new Float32Array(C).fill(1) });
      const { q, k, v } = m.compositionScores(), n = 2 * H, at = (x, i, j) => x.data[i * n + j];
      assert.ok(Math.abs(at(q, 0, 2) - 1) < 1e-6, `q L0H0 -> L1H0: ${at(q, 0, 2)}`);
      assert.equal(at(q, 0, 3), 0, 'q L0H0 -> L1H1: its query reads e4, which nothing writes');
      assert.equal(at(k, 0, 2), 0, 'k L0H0 -> L1H0: its key reads e3');
      assert.ok(Math.abs(at(k, 0, 3) - 1) < 1e-6, `k L0H0 -> L1H1: ${at(k, 0, 3)}`);
      assert.equal(at(v, 0, 2), 0, 'v L0H0 -> L1H0: it has no OV circuit');
      assert.ok(Math.abs(at(v, 0, 3) - 1) < 1e-6, `v L0H0 -> L1H1: ${at(v, 0, 3)}`);
      for (const x of [q, k, v]) for (let j = 0; j < n; j++) assert.equal(at(x, 1, j), 0, 'L0H1 writes nothing');
      // a little noise everywhere: the planted pairs stay near 1 and far above the rest
      const noisy = (x) => Float32Array.from(x, (y, i) => y + 1e-3 * Math.sin(7 * i));
      m.setWeights({ 'h0.qkv_w': noisy(qkv[0]), 'h1.qkv_w': noisy(qkv[1]), 'h0.proj_w': noisy(proj[0]), 'h1.proj_w': noisy(proj[1]) });
      const s = m.compositionScores();
      checkScores(m, attnlabHeads(m.config, m.weights()), 'hand-built, noisy', { copying: false });
      assert.ok(at(s.q, 0, 2) > 0.95 && at(s.k, 0, 3) > 0.95 && at(s.v, 0, 3) > 0.95, 'the planted pairs stay near 1');
      assert.ok(at(s.q, 0, 3) < 0.1 && at(s.k, 0, 2) < 0.1, 'the unrelated pairs stay near 0');
      });
    });

    test('a destroyed model refuses both with a coded error', async () => {
      const m = await engine.createTransformer({ task: 'induction', layers: 2, heads: 2, dModel: 16 });
      m.destroy();
      for (const method of ['compositionScores', 'copyingScores']) {
        assert.throws(() => m[method](), (err) => typeof err.code === 'string' && err.code.startsWith('ERR_'));
      }
    });
  });
}

test('on 2 and 3 threads (every call split): the same scores bit for bit as on one', { skip: simdSupported() ? false : 'the threaded build needs SIMD' }, async () => {
  const config = { ...TINY, n_layer: 3, n_embd: 24, n_head: 3 };
  const ck = gpt2Checkpoint({ config, tied: false, seed: 8 });
  const scores = async (engine) => using(engine.loadModel(ck.bytes, { config }), (m) => {
    const { q, k, v } = m.compositionScores();
    return [q.data, k.data, v.data, m.copyingScores().data].map((x) => Array.from(x));
  });
  const one = await loadEngine({ threads: 1 });
  const want = await scores(one);
  for (const threads of [2, 3]) {
    const engine = await loadEngine({ threads });
    try {
      engine.setParallelMinWork(0);
      assert.deepEqual(await scores(engine), want, `${threads} threads`);
    } finally {
      engine.destroy();
    }
  }
});
