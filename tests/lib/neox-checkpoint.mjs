// GPT-NeoX-layout checkpoints (Pythia's) built by the tests themselves: a
// small random model in Hugging Face's naming and layout (gpt_neox.embed_in,
// gpt_neox.layers.N.{input_layernorm, attention.query_key_value,
// attention.dense, post_attention_layernorm, mlp.dense_h_to_4h,
// mlp.dense_4h_to_h}, gpt_neox.final_layer_norm, embed_out; nn.Linear
// weights [out, in]; query_key_value's outputs head-major), with the buffers
// some files carry, and the float64 reference forward written from the
// architecture as transformers' GPTNeoXModel computes it (not from attnlab's
// code): rotary over the first rotary_pct of each head in rotate-half form,
// a sequential or parallel residual, GELU exact or tanh.
import { encode, layerNorm, safetensors } from './gpt2-checkpoint.mjs';
import { mulberry32 } from './random.mjs';

/** A small Pythia-like config: rotary 0.25 with a parallel residual and the exact GELU, as Pythia's. */
export const NEOX_TINY = Object.freeze({
  model_type: 'gpt_neox', architectures: ['GPTNeoXForCausalLM'], hidden_size: 32, num_attention_heads: 2,
  num_hidden_layers: 2, intermediate_size: 128, rotary_pct: 0.25, rotary_emb_base: 10000, max_position_embeddings: 24,
  layer_norm_eps: 1e-5, use_parallel_residual: true, hidden_act: 'gelu', vocab_size: 64, tie_word_embeddings: false,
  bos_token_id: 0, eos_token_id: 0,
});

/** [name, shape] of every weight of config c, in the order Hugging Face writes them. */
export function neoxShapes(c) {
  const C = c.hidden_size, F = c.intermediate_size, V = c.vocab_size;
  const out = [['gpt_neox.embed_in.weight', [V, C]]];
  for (let l = 0; l < c.num_hidden_layers; l++) {
    const p = `gpt_neox.layers.${l}.`;
    out.push([`${p}input_layernorm.weight`, [C]], [`${p}input_layernorm.bias`, [C]],
      [`${p}post_attention_layernorm.weight`, [C]], [`${p}post_attention_layernorm.bias`, [C]],
      [`${p}attention.query_key_value.weight`, [3 * C, C]], [`${p}attention.query_key_value.bias`, [3 * C]],
      [`${p}attention.dense.weight`, [C, C]], [`${p}attention.dense.bias`, [C]],
      [`${p}mlp.dense_h_to_4h.weight`, [F, C]], [`${p}mlp.dense_h_to_4h.bias`, [F]],
      [`${p}mlp.dense_4h_to_h.weight`, [C, F]], [`${p}mlp.dense_4h_to_h.bias`, [C]]);
  }
  out.push(['gpt_neox.final_layer_norm.weight', [C]], ['gpt_neox.final_layer_norm.bias', [C]], ['embed_out.weight', [V, C]]);
  return out;
}

/**
 * A random GPT-NeoX checkpoint: { bytes, config, weights } (weights: each
 * tensor as the file holds it, float64, by name). buffers: the rotary
 * frequencies and mask buffers older files carry, which a reader ignores.
 */
export function neoxCheckpoint({ config = NEOX_TINY, dtype = 'F32', seed = 1, scale = 0.3, buffers = false } = {}) {
  const rand = mulberry32(seed);
  const tensors = [], weights = {};
  for (const [name, shape] of neoxShapes(config)) {
    const n = shape.reduce((a, b) => a * b, 1);
    const data = new Float64Array(n);
    const gain = /layernorm\.weight|layer_norm\.weight/.test(name);
    for (let i = 0; i < n; i++) data[i] = gain ? 1 + 0.2 * (rand() - 0.5) : scale * 2 * (rand() - 0.5);
    const { bytes, values } = encode(dtype, data);
    weights[name] = values;
    tensors.push({ name, dtype, shape, bytes });
    if (buffers && /query_key_value\.weight$/.test(name)) {
      const p = name.replace('query_key_value.weight', '');
      const ctx = config.max_position_embeddings, r = Math.floor(config.hidden_size / config.num_attention_heads * config.rotary_pct);
      tensors.push({ name: `${p}bias`, dtype: 'BOOL', shape: [1, 1, ctx, ctx], bytes: new Uint8Array(ctx * ctx) });
      tensors.push({ name: `${p}masked_bias`, dtype: 'F32', shape: [], bytes: new Uint8Array(4) });
      tensors.push({ name: `${p}rotary_emb.inv_freq`, dtype: 'F32', shape: [r / 2], bytes: new Uint8Array(2 * r) });
    }
  }
  return { bytes: safetensors(tensors), config, weights };
}

/** erf(x) in float64: its Maclaurin series for |x| <= 2.5, else 1 - erfc by its continued fraction. */
export function erf(x) {
  const a = Math.abs(x);
  if (a <= 2.5) {
    let term = a, sum = a;
    for (let n = 1; n < 80; n++) {
      term *= -a * a / n;
      sum += term / (2 * n + 1);
    }
    return Math.sign(x) * sum * 2 / Math.sqrt(Math.PI);
  }
  let k = a; // erfc(a) = e^-a² / √π · 1 / (a + (1/2) / (a + 1 / (a + (3/2) / (a + …))))
  for (let i = 80; i >= 1; i--) k = a + i / 2 / k;
  return Math.sign(x) * (1 - Math.exp(-a * a) / (Math.sqrt(Math.PI) * k));
}

const GELU = {
  gelu: (u) => 0.5 * u * (1 + erf(u / Math.SQRT2)),
  tanh: (u) => 0.5 * u * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (u + 0.044715 * u ** 3))),
};

/** nn.Linear: y (n, O) = x (n, I) Wᵀ + b, W stored [O, I]. */
function nnLinear(x, n, I, W, b, O) {
  const y = new Float64Array(n * O);
  for (let r = 0; r < n; r++) for (let o = 0; o < O; o++) {
    let s = b ? b[o] : 0;
    for (let i = 0; i < I; i++) s += x[r * I + i] * W[o * I + i];
    y[r * O + o] = s;
  }
  return y;
}

/**
 * The float64 forward of a GPT-NeoX checkpoint over ids: { logits (n, V),
 * attention [layer][head] (n, n) }, as GPTNeoXForCausalLM computes them.
 * hook(site, layer, x), where given, sees (and may change in place) each
 * block's input ('resid'), attention output ('attn') and MLP output ('mlp'),
 * each (n, C), before they are used.
 */
export function neoxReference(weights, config, ids, { hook = () => {} } = {}) {
  const L = config.num_hidden_layers, H = config.num_attention_heads, C = config.hidden_size;
  const F = config.intermediate_size, V = config.vocab_size, D = C / H, n = ids.length;
  const eps = config.layer_norm_eps, r = Math.floor(D * config.rotary_pct), base = config.rotary_emb_base;
  const act = config.hidden_act === 'gelu' ? GELU.gelu : GELU.tanh;
  const w = weights;
  const x = new Float64Array(n * C);
  for (let t = 0; t < n; t++) for (let i = 0; i < C; i++) x[t * C + i] = w['gpt_neox.embed_in.weight'][ids[t] * C + i];
  // rotate-half: for i < r/2, (x_i, x_{i+r/2}) turned by t / base^(2i / r)
  const rotate = (vec, t) => {
    const out = Float64Array.from(vec);
    for (let i = 0; i < r / 2; i++) {
      const angle = t / base ** (2 * i / r), c = Math.cos(angle), s = Math.sin(angle);
      out[i] = vec[i] * c - vec[i + r / 2] * s;
      out[i + r / 2] = vec[i + r / 2] * c + vec[i] * s;
    }
    return out;
  };
  const attention = [];
  for (let l = 0; l < L; l++) {
    const p = `gpt_neox.layers.${l}.`;
    hook('resid', l, x);
    const a = layerNorm(x, n, C, w[`${p}input_layernorm.weight`], w[`${p}input_layernorm.bias`], eps);
    const qkv = nnLinear(a, n, C, w[`${p}attention.query_key_value.weight`], w[`${p}attention.query_key_value.bias`], 3 * C);
    // head-major: output (h, s, d) at h·3D + s·D + d
    const part = (t, h, s) => qkv.subarray(t * 3 * C + h * 3 * D + s * D, t * 3 * C + h * 3 * D + (s + 1) * D);
    const ctx = new Float64Array(n * C);
    attention.push([]);
    for (let h = 0; h < H; h++) {
      const q = Array.from({ length: n }, (_, t) => rotate(part(t, h, 0), t));
      const k = Array.from({ length: n }, (_, t) => rotate(part(t, h, 1), t));
      const P = new Float64Array(n * n);
      for (let i = 0; i < n; i++) {
        const e = new Float64Array(i + 1);
        let max = -Infinity;
        for (let j = 0; j <= i; j++) {
          let s = 0;
          for (let d = 0; d < D; d++) s += q[i][d] * k[j][d];
          e[j] = s / Math.sqrt(D);
          max = Math.max(max, e[j]);
        }
        let sum = 0;
        for (let j = 0; j <= i; j++) sum += (e[j] = Math.exp(e[j] - max));
        for (let j = 0; j <= i; j++) {
          P[i * n + j] = e[j] / sum;
          const v = part(j, h, 2);
          for (let d = 0; d < D; d++) ctx[i * C + h * D + d] += P[i * n + j] * v[d];
        }
      }
      attention[l].push(P);
    }
    const attn = nnLinear(ctx, n, C, w[`${p}attention.dense.weight`], w[`${p}attention.dense.bias`], C);
    hook('attn', l, attn);
    const mlp = (input) => {
      const b = layerNorm(input, n, C, w[`${p}post_attention_layernorm.weight`], w[`${p}post_attention_layernorm.bias`], eps);
      const hid = nnLinear(b, n, C, w[`${p}mlp.dense_h_to_4h.weight`], w[`${p}mlp.dense_h_to_4h.bias`], F).map(act);
      const out = nnLinear(hid, n, F, w[`${p}mlp.dense_4h_to_h.weight`], w[`${p}mlp.dense_4h_to_h.bias`], C);
      hook('mlp', l, out);
      return out;
    };
    if (config.use_parallel_residual) {
      const m = mlp(x);
      for (let i = 0; i < n * C; i++) x[i] += attn[i] + m[i];
    } else {
      for (let i = 0; i < n * C; i++) x[i] += attn[i];
      const m = mlp(x);
      for (let i = 0; i < n * C; i++) x[i] += m[i];
    }
  }
  const z = layerNorm(x, n, C, w['gpt_neox.final_layer_norm.weight'], w['gpt_neox.final_layer_norm.bias'], eps);
  return { logits: nnLinear(z, n, C, w['embed_out.weight'], null, V), attention };
}
