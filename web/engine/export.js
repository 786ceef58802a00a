// A transformer made here as a Hugging Face checkpoint (model.exportCheckpoint()):
// model.safetensors and config.json in GPT-2's layout (learned, sinusoidal or no
// positions) or GPT-NeoX's (rotary positions), so transformers'
// GPT2LMHeadModel / GPTNeoXForCausalLM, TransformerLens and attnlab's own
// loadModel read it to the same logits. What the layouts have no place for is
// rewritten into what they have, exactly (to float32 rounding):
//   - the output layer's bias b: folded into the final LayerNorm's bias, beta' =
//     beta + delta with delta W_U = b (W_U: dModel x V), which has a solution when
//     the vocabulary is no larger than dModel (the least-norm one is taken);
//     past that, or where W_U's columns are dependent, a coded error says so;
//   - the 'dot' score: sqrt(d_head) folded into the queries (the layouts scale by
//     1 / sqrt(d_head));
//   - RoPE's pairs: attnlab turns (2i, 2i + 1), GPT-NeoX (i, i + d_head / 2) with
//     the same frequencies: the queries' and keys' outputs are permuted within
//     each head into rotate-half order (a score is a dot product: unchanged);
//   - an attention-only model: an MLP of width 1 with every weight 0 (it adds 0).
// ALiBi and the cosine score have no Hugging Face layout: refused (ERR_ARG).
import { argError, valueError } from './errors.js';

const LAYERNORM_EPS = 1e-5; // the core's (src/layers/layernorm.h)
const ROPE_BASE = 10000; // TF_ROPE_BASE
/** How far the folded bias may miss the output bias, relative to its largest value. */
const FOLD_TOLERANCE = 1e-4;

/** A float64 copy of the (rows x cols) matrix m transposed. */
function transpose(m, rows, cols) {
  const t = new Float64Array(rows * cols);
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) t[c * rows + r] = m[r * cols + c];
  return t;
}

/**
 * delta (C) with delta W = b for W (C x V), V <= C: the least-norm solution
 * W (W^T W)^-1 b, by Cholesky in float64; null when W^T W is singular or the
 * solution misses b.
 */
function foldBias(W, b, C, V) {
  const G = new Float64Array(V * V);
  for (let i = 0; i < V; i++) for (let j = 0; j <= i; j++) {
    let s = 0;
    for (let c = 0; c < C; c++) s += W[c * V + i] * W[c * V + j];
    G[i * V + j] = G[j * V + i] = s;
  }
  // G = L L^T
  const L = new Float64Array(V * V);
  for (let i = 0; i < V; i++) for (let j = 0; j <= i; j++) {
    let s = G[i * V + j];
    for (let k = 0; k < j; k++) s -= L[i * V + k] * L[j * V + k];
    if (i === j) {
      if (!(s > 1e-12 * G[i * V + i])) return null;
      L[i * V + i] = Math.sqrt(s);
    } else L[i * V + j] = s / L[j * V + j];
  }
  const y = new Float64Array(V), a = new Float64Array(V);
  for (let i = 0; i < V; i++) {
    let s = b[i];
    for (let k = 0; k < i; k++) s -= L[i * V + k] * y[k];
    y[i] = s / L[i * V + i];
  }
  for (let i = V - 1; i >= 0; i--) {
    let s = y[i];
    for (let k = i + 1; k < V; k++) s -= L[k * V + i] * a[k];
    a[i] = s / L[i * V + i];
  }
  const delta = new Float64Array(C);
  for (let c = 0; c < C; c++) {
    let s = 0;
    for (let v = 0; v < V; v++) s += W[c * V + v] * a[v];
    delta[c] = s;
  }
  let worst = 0, scale = 0;
  for (let v = 0; v < V; v++) {
    let s = 0;
    for (let c = 0; c < C; c++) s += (Math.fround(delta[c]) * W[c * V + v]);
    worst = Math.max(worst, Math.abs(s - b[v]));
    scale = Math.max(scale, Math.abs(b[v]));
  }
  return worst <= FOLD_TOLERANCE * Math.max(scale, 1e-3) ? delta : null;
}

/** The sinusoidal table the core adds (src/models/transformer.c): (context x C). */
function sinusoidal(context, C) {
  const t = new Float64Array(context * C);
  for (let p = 0; p < context; p++) for (let i = 0; i < C; i++) {
    const angle = p / 10000 ** ((i - (i % 2)) / C);
    t[p * C + i] = i % 2 ? Math.cos(angle) : Math.sin(angle);
  }
  return t;
}

/** The tensors as one safetensors file (F32, in order; the header padded to 8 bytes). */
export function writeSafetensors(tensors) {
  const header = { __metadata__: { format: 'pt' } };
  let at = 0;
  for (const { name, shape, data } of tensors) {
    header[name] = { dtype: 'F32', shape, data_offsets: [at, at + 4 * data.length] };
    at += 4 * data.length;
  }
  let text = JSON.stringify(header);
  while ((8 + text.length) % 8) text += ' ';
  const head = new TextEncoder().encode(text);
  const file = new Uint8Array(8 + head.length + at);
  const view = new DataView(file.buffer);
  view.setUint32(0, head.length, true);
  file.set(head, 8);
  let pos = 8 + head.length;
  for (const { data } of tensors) {
    for (let i = 0; i < data.length; i++, pos += 4) view.setFloat32(pos, data[i], true);
  }
  return file;
}

/**
 * { safetensors, config, vocabulary } of a model made here, from its config
 * (model.config) and weights (model.weights(), attnlab's names and shapes).
 */
export function exportCheckpoint(config, weights) {
  const { layers: Lc, heads: H, dModel: C, dFF, context, positional, score } = config;
  const V = config.vocabulary.length, D = C / H, F = dFF || 1;
  if (positional === 'alibi') throw argError("exportCheckpoint: ALiBi positions have no Hugging Face layout (GPT-2's are learned, GPT-NeoX's rotary); train the model with 'learned', 'sinusoidal', 'none' or 'rope' positions to export it");
  if (score === 'cosine') throw argError("exportCheckpoint: the cosine score has no Hugging Face layout (GPT-2 and GPT-NeoX score by the scaled dot product); train the model with 'scaled_dot' or 'dot' to export it");
  const w = weights;
  // the output bias, folded into ln_f's bias
  const lnfBias = Float64Array.from(w.lnf_b);
  if (w.out_b.some((x) => x !== 0)) {
    const delta = V <= C ? foldBias(w.out_w, w.out_b, C, V) : null;
    if (!delta) {
      throw valueError(`exportCheckpoint: the output layer's bias has no place in GPT-2's or GPT-NeoX's layout, and it folds into the final LayerNorm's bias only when the vocabulary (${V} tokens) is no larger than dModel (${C}) and the output weights' columns are independent; ${V > C ? `this model's vocabulary is larger` : 'these are not'}`);
    }
    for (let c = 0; c < C; c++) lnfBias[c] += delta[c];
  }
  const neox = positional === 'rope';
  const qScale = score === 'dot' ? Math.sqrt(D) : 1;
  const tensors = [];
  const add = (name, shape, data) => tensors.push({ name, shape, data });
  const zeros = (n) => new Float64Array(n);
  const ones = (n) => new Float64Array(n).fill(1);
  // attnlab's queries | keys | values columns, the queries scaled for 'dot'
  const qkvW = (l) => Float64Array.from(w[`h${l}.qkv_w`], (x, i) => (i % (3 * C) < C ? x * qScale : x));
  const qkvB = (l) => Float64Array.from(w[`h${l}.qkv_b`], (x, i) => (i < C ? x * qScale : x));
  const mlp = (l, name, n) => (dFF ? w[`h${l}.${name}`] : zeros(n));
  if (!neox) {
    const wpe = positional === 'learned' ? w.wpe : positional === 'sinusoidal' ? sinusoidal(context, C) : zeros(context * C);
    add('transformer.wte.weight', [V, C], w.wte);
    add('transformer.wpe.weight', [context, C], wpe);
    for (let l = 0; l < Lc; l++) {
      const p = `transformer.h.${l}`;
      add(`${p}.ln_1.weight`, [C], w[`h${l}.ln1_w`]);
      add(`${p}.ln_1.bias`, [C], w[`h${l}.ln1_b`]);
      add(`${p}.attn.c_attn.weight`, [C, 3 * C], qkvW(l));
      add(`${p}.attn.c_attn.bias`, [3 * C], qkvB(l));
      add(`${p}.attn.c_proj.weight`, [C, C], w[`h${l}.proj_w`]);
      add(`${p}.attn.c_proj.bias`, [C], w[`h${l}.proj_b`]);
      add(`${p}.ln_2.weight`, [C], dFF ? w[`h${l}.ln2_w`] : ones(C));
      add(`${p}.ln_2.bias`, [C], mlp(l, 'ln2_b', C));
      add(`${p}.mlp.c_fc.weight`, [C, F], mlp(l, 'fc_w', C * F));
      add(`${p}.mlp.c_fc.bias`, [F], mlp(l, 'fc_b', F));
      add(`${p}.mlp.c_proj.weight`, [F, C], mlp(l, 'fcproj_w', F * C));
      add(`${p}.mlp.c_proj.bias`, [C], mlp(l, 'fcproj_b', C));
    }
    add('transformer.ln_f.weight', [C], w.lnf_w);
    add('transformer.ln_f.bias', [C], lnfBias);
    add('lm_head.weight', [V, C], transpose(w.out_w, C, V));
    return {
      safetensors: writeSafetensors(tensors),
      config: {
        model_type: 'gpt2', architectures: ['GPT2LMHeadModel'], n_layer: Lc, n_head: H, n_embd: C, n_positions: context, n_ctx: context,
        n_inner: F, vocab_size: V, activation_function: 'gelu_new', layer_norm_epsilon: LAYERNORM_EPS, tie_word_embeddings: false,
        scale_attn_weights: true, bos_token_id: 0, eos_token_id: 0,
      },
      vocabulary: [...config.vocabulary],
    };
  }
  // GPT-NeoX: nn.Linear weights [out, in]; query_key_value's outputs head-major (head, q | k | v, d), the
  // queries' and keys' dimensions in rotate-half order
  const rotateHalf = (j) => (j < D / 2 ? 2 * j : 2 * (j - D / 2) + 1);
  add('gpt_neox.embed_in.weight', [V, C], w.wte);
  for (let l = 0; l < Lc; l++) {
    const p = `gpt_neox.layers.${l}`;
    const qw = qkvW(l), qb = qkvB(l);
    const fusedW = new Float64Array(3 * C * C), fusedB = new Float64Array(3 * C);
    for (let h = 0; h < H; h++) for (let part = 0; part < 3; part++) for (let j = 0; j < D; j++) {
      const row = (h * 3 + part) * D + j; // the output's place in GPT-NeoX's order
      const col = part * C + h * D + (part < 2 ? rotateHalf(j) : j); // its column in attnlab's (C, 3C)
      for (let i = 0; i < C; i++) fusedW[row * C + i] = qw[i * 3 * C + col];
      fusedB[row] = qb[col];
    }
    add(`${p}.input_layernorm.weight`, [C], w[`h${l}.ln1_w`]);
    add(`${p}.input_layernorm.bias`, [C], w[`h${l}.ln1_b`]);
    add(`${p}.attention.query_key_value.weight`, [3 * C, C], fusedW);
    add(`${p}.attention.query_key_value.bias`, [3 * C], fusedB);
    add(`${p}.attention.dense.weight`, [C, C], transpose(w[`h${l}.proj_w`], C, C));
    add(`${p}.attention.dense.bias`, [C], w[`h${l}.proj_b`]);
    add(`${p}.post_attention_layernorm.weight`, [C], dFF ? w[`h${l}.ln2_w`] : ones(C));
    add(`${p}.post_attention_layernorm.bias`, [C], mlp(l, 'ln2_b', C));
    add(`${p}.mlp.dense_h_to_4h.weight`, [F, C], transpose(mlp(l, 'fc_w', C * F), C, F));
    add(`${p}.mlp.dense_h_to_4h.bias`, [F], mlp(l, 'fc_b', F));
    add(`${p}.mlp.dense_4h_to_h.weight`, [C, F], transpose(mlp(l, 'fcproj_w', F * C), F, C));
    add(`${p}.mlp.dense_4h_to_h.bias`, [C], mlp(l, 'fcproj_b', C));
  }
  add('gpt_neox.final_layer_norm.weight', [C], w.lnf_w);
  add('gpt_neox.final_layer_norm.bias', [C], lnfBias);
  add('embed_out.weight', [V, C], transpose(w.out_w, C, V));
  return {
    safetensors: writeSafetensors(tensors),
    config: {
      model_type: 'gpt_neox', architectures: ['GPTNeoXForCausalLM'], hidden_size: C, num_attention_heads: H, num_hidden_layers: Lc,
      intermediate_size: F, rotary_pct: 1, rotary_emb_base: ROPE_BASE, max_position_embeddings: context, layer_norm_eps: LAYERNORM_EPS,
      use_parallel_residual: false, hidden_act: 'gelu_new', vocab_size: V, tie_word_embeddings: false, attention_bias: true,
      bos_token_id: 0, eos_token_id: 0,
    },
    vocabulary: [...config.vocabulary],
  };
}
