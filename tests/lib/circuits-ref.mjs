// The circuit analyses' float64 reference, written from their definitions
// (issue 39; TransformerLens's conventions) and not from the engine's code:
// each head's W_Q, W_K, W_V (C x D, ln_1's gain folded in: diag(γ) W) and W_O
// (D x C) read from the tensors the test holds (an attnlab model's weights(),
// a GPT-2 or GPT-NeoX checkpoint's tensors by their Hugging Face names), then
// the composition scores from the C x C matrices W_OV = W_V W_O and
// W_QK = W_Q W_Kᵀ themselves, and the copying scores from the eigenvalues of
// W_O diag(γ_f) W_U W_E W_V, found by Durand–Kerner on its characteristic
// polynomial (Faddeev–LeVerrier): no Hessenberg form, no QR iteration.

/** a (m x k) · b (k x n), row-major Float64Arrays. */
export function matmul(a, b, m, k, n) {
  const out = new Float64Array(m * n);
  for (let i = 0; i < m; i++) {
    for (let p = 0; p < k; p++) {
      const x = a[i * k + p];
      if (x === 0) continue;
      for (let j = 0; j < n; j++) out[i * n + j] += x * b[p * n + j];
    }
  }
  return out;
}

export function transpose(a, m, n) {
  const out = new Float64Array(m * n);
  for (let i = 0; i < m; i++) for (let j = 0; j < n; j++) out[j * m + i] = a[i * n + j];
  return out;
}

const frobenius = (a) => Math.sqrt(a.reduce((s, x) => s + x * x, 0));

/**
 * Heads of any layout: { L, H, C, D, V, q, k, v (each [l][h] C x D), o ([l][h] D x C), lnf (C), WE (V x C), WU (C x V) }.
 * inWeight(l, s, c, h, d): entry (c, s C + h D + d) of layer l's (C, 3C) queries | keys | values;
 * outWeight(l, h, d, c): entry (h D + d, c) of its (C, C) output projection.
 */
function heads({ L, H, C, V }, ln1, inWeight, outWeight, lnf, WE, WU) {
  const D = C / H, at = (f) => Array.from({ length: L }, (_, l) => Array.from({ length: H }, (_, h) => f(l, h)));
  const input = (s) => at((l, h) => {
    const w = new Float64Array(C * D);
    for (let c = 0; c < C; c++) for (let d = 0; d < D; d++) w[c * D + d] = ln1(l)[c] * inWeight(l, s, c, h, d);
    return w;
  });
  const o = at((l, h) => {
    const w = new Float64Array(D * C);
    for (let d = 0; d < D; d++) for (let c = 0; c < C; c++) w[d * C + c] = outWeight(l, h, d, c);
    return w;
  });
  return { L, H, C, D, V, q: input(0), k: input(1), v: input(2), o, lnf: Float64Array.from(lnf), WE: Float64Array.from(WE), WU: Float64Array.from(WU) };
}

/** An attnlab model's heads from m.config and m.weights() (h{l}.qkv_w (C, 3C), h{l}.proj_w (C, C), wte (V, C), out_w (C, V)). */
export function attnlabHeads(config, w) {
  const { layers: L, heads: H, dModel: C } = config, V = config.vocabulary.length, D = C / H;
  return heads({ L, H, C, V }, (l) => w[`h${l}.ln1_w`],
    (l, s, c, h, d) => w[`h${l}.qkv_w`][c * 3 * C + s * C + h * D + d],
    (l, h, d, c) => w[`h${l}.proj_w`][(h * D + d) * C + c], w.lnf_w, w.wte, w.out_w);
}

/** A GPT-2 checkpoint's heads from its config.json and tensors (Conv1D [in, out]; lm_head or, tied, wte as W_Uᵀ). */
export function gpt2Heads(config, w) {
  const { n_layer: L, n_head: H, n_embd: C, vocab_size: V } = config, D = C / H;
  const unembed = w['lm_head.weight'] ?? w['wte.weight'];
  return heads({ L, H, C, V }, (l) => w[`h.${l}.ln_1.weight`],
    (l, s, c, h, d) => w[`h.${l}.attn.c_attn.weight`][c * 3 * C + s * C + h * D + d],
    (l, h, d, c) => w[`h.${l}.attn.c_proj.weight`][(h * D + d) * C + c],
    w['ln_f.weight'], w['wte.weight'], transpose(unembed, V, C));
}

/** A GPT-NeoX checkpoint's heads: nn.Linear [out, in], query_key_value's rows (head, q|k|v, d), input_layernorm, embed_in / embed_out. */
export function neoxHeads(config, w) {
  const { num_hidden_layers: L, num_attention_heads: H, hidden_size: C, vocab_size: V } = config, D = C / H;
  const p = (l) => `gpt_neox.layers.${l}.`;
  return heads({ L, H, C, V }, (l) => w[`${p(l)}input_layernorm.weight`],
    (l, s, c, h, d) => w[`${p(l)}attention.query_key_value.weight`][((h * 3 + s) * D + d) * C + c],
    (l, h, d, c) => w[`${p(l)}attention.dense.weight`][c * C + h * D + d],
    w['gpt_neox.final_layer_norm.weight'], w['gpt_neox.embed_in.weight'], transpose(w['embed_out.weight'], V, C));
}

/** { q, k, v }: Float64Arrays (L H)², row the earlier head, 0 unless its layer is earlier (0 where a norm is 0). */
export function compositionReference(m) {
  const { L, H, C, D } = m, n = L * H;
  const ov = [], qk = [];
  for (let i = 0; i < n; i++) {
    const l = Math.floor(i / H), h = i % H;
    ov.push(matmul(m.v[l][h], m.o[l][h], C, D, C));
    qk.push(matmul(m.q[l][h], transpose(m.k[l][h], C, D), C, D, C));
  }
  const out = { q: new Float64Array(n * n), k: new Float64Array(n * n), v: new Float64Array(n * n) };
  const ratio = (num, den) => (den > 0 ? num / den : 0);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < n; j++) {
      if (Math.floor(i / H) >= Math.floor(j / H)) continue;
      const a = frobenius(ov[i]), b = frobenius(qk[j]), c = frobenius(ov[j]);
      out.q[i * n + j] = ratio(frobenius(matmul(ov[i], qk[j], C, C, C)), a * b);
      out.k[i * n + j] = ratio(frobenius(matmul(ov[i], transpose(qk[j], C, C), C, C, C)), a * b);
      out.v[i * n + j] = ratio(frobenius(matmul(ov[i], ov[j], C, C, C)), a * c);
    }
  }
  return out;
}

/** Each head's d_head x d_head W_O diag(γ_f) W_U W_E W_V, [l][h]. */
export function ovCircuits(m) {
  const { L, H, C, D, V } = m;
  return Array.from({ length: L }, (_, l) => Array.from({ length: H }, (_, h) => {
    const o = Float64Array.from(m.o[l][h], (x, i) => x * m.lnf[i % C]);
    return matmul(matmul(matmul(o, m.WU, D, C, V), m.WE, D, V, C), m.v[l][h], D, C, D);
  }));
}

/** Copying scores, Float64Array (L H): Σλ / Σ|λ| (0 when every eigenvalue is 0). */
export function copyingReference(m) {
  return Float64Array.from(ovCircuits(m).flat(), (a) => {
    const ev = eigenvalues(a, m.D);
    const sum = ev.reduce((s, [re]) => s + re, 0), moduli = ev.reduce((s, [re, im]) => s + Math.hypot(re, im), 0);
    return moduli > 0 ? sum / moduli : 0;
  });
}

/** The characteristic polynomial's coefficients c (x^n + c[1] x^(n-1) + … + c[n]) by Faddeev–LeVerrier. */
function characteristic(a, n) {
  const c = [1];
  let M = new Float64Array(n * n); // M_0 = 0
  for (let k = 1; k <= n; k++) {
    const next = matmul(a, M, n, n, n);
    for (let i = 0; i < n; i++) next[i * n + i] += c[k - 1];
    M = next;
    const AM = matmul(a, M, n, n, n);
    let trace = 0;
    for (let i = 0; i < n; i++) trace += AM[i * n + i];
    c.push(-trace / k);
  }
  return c;
}

/**
 * The n eigenvalues [re, im] of a (n x n, row-major) as the roots of its
 * characteristic polynomial, by Durand–Kerner (Weierstrass) iteration in
 * complex float64 from the usual spiral of starts; for n up to about 10 and
 * simple roots (a random matrix's).
 */
export function eigenvalues(a, n) {
  const scale = Math.max(...Array.from(a, Math.abs));
  if (!(scale > 0)) return Array.from({ length: n }, () => [0, 0]);
  const c = characteristic(Float64Array.from(a, (x) => x / scale), n);
  const value = (re, im) => { // p(z), Horner in complex numbers
    let pr = 1, pi = 0;
    for (let k = 1; k <= n; k++) [pr, pi] = [pr * re - pi * im + c[k], pr * im + pi * re];
    return [pr, pi];
  };
  let z = Array.from({ length: n }, (_, k) => [0.4 * Math.cos(0.9 * k) * (1 + k / n), 0.9 * Math.sin(0.9 * k) * (1 + k / n)]);
  for (let it = 0; it < 2000; it++) {
    let moved = 0;
    z = z.map(([re, im], i) => {
      let [nr, ni] = value(re, im), dr = 1, di = 0;
      for (let j = 0; j < n; j++) {
        if (j === i) continue;
        const [xr, xi] = [re - z[j][0], im - z[j][1]];
        [dr, di] = [dr * xr - di * xi, dr * xi + di * xr];
      }
      const den = dr * dr + di * di;
      const [qr, qi] = [(nr * dr + ni * di) / den, (ni * dr - nr * di) / den];
      moved = Math.max(moved, Math.hypot(qr, qi));
      return [re - qr, im - qi];
    });
    if (moved < 1e-15) break;
  }
  return z.map(([re, im]) => [re * scale, im * scale]);
}
