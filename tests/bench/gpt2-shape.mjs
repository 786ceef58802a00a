// A GPT-2-small-shaped checkpoint for the benches (gpt2.mjs, circuits.mjs,
// open-model.mjs): its config, random weights made here (F16, or F32 with the
// mask buffers as openai-community/gpt2's 548 MB model.safetensors has them),
// and the same forward in TF.js ops.
import { gpt2Shapes, safetensors } from '../lib/gpt2-checkpoint.mjs';

/** GPT-2 small's shape (12 x 768, 12 heads, vocabulary 50,257, context 1024). */
export const CONFIG = { model_type: 'gpt2', n_layer: 12, n_head: 12, n_embd: 768, n_positions: 1024, n_ctx: 1024, vocab_size: 50257,
  layer_norm_epsilon: 1e-5, activation_function: 'gelu_new', n_inner: null };

/**
 * Random weights (a GPT-2's scale: N(0, 0.02)-like, LayerNorm gains near 1)
 * that F16 holds exactly, as the file's bytes (dtype 'F16' or 'F32') and
 * float32 values, tensor by tensor (onTensor(name, shape, values) keeps what
 * it needs). buffers: each block's attention mask too ('h.<l>.attn.bias',
 * F32 [1, 1, 1024, 1024], and 'attn.masked_bias'), which the engine skips.
 */
export function makeCheckpoint(onTensor = () => {}, { dtype = 'F16', buffers = false } = {}) {
  let s = 0x9e3779b9;
  const rand = () => { // xorshift32 in [0, 1)
    s ^= s << 13; s ^= s >>> 17; s ^= s << 5;
    return (s >>> 0) / 4294967296;
  };
  const tensors = [];
  for (const [name, shape] of gpt2Shapes(CONFIG)) {
    const n = shape.reduce((a, b) => a * b, 1);
    const values = new Float32Array(n), bits = dtype === 'F16' ? new Uint16Array(n) : null;
    const gain = /ln_.*weight/.test(name);
    for (let i = 0; i < n; i++) {
      // k / 2^12 with |k| < 2^10: an F16 value (10 bits of mantissa) exactly
      const k = Math.floor((rand() - 0.5) * 2 * (gain ? 64 : 140));
      const v = (gain ? 4096 : 0) + k;
      values[i] = v / 4096;
      if (bits) bits[i] = f16(values[i]);
    }
    onTensor(name, shape, values);
    tensors.push({ name, dtype, shape, bytes: new Uint8Array((bits ?? values).buffer) });
    if (buffers && name.endsWith('.attn.c_attn.weight')) tensors.push(...maskBuffers(name.split('.')[1]));
  }
  return safetensors(tensors);
}

/** Block l's causal mask as Hugging Face saves it beside GPT-2's weights: ones on and below the diagonal. */
function maskBuffers(l) {
  const P = CONFIG.n_positions, mask = new Float32Array(P * P);
  for (let i = 0; i < P; i++) mask.fill(1, i * P, i * P + i + 1);
  return [
    { name: `h.${l}.attn.bias`, dtype: 'F32', shape: [1, 1, P, P], bytes: new Uint8Array(mask.buffer) },
    { name: `h.${l}.attn.masked_bias`, dtype: 'F32', shape: [], bytes: new Uint8Array(new Float32Array([-1e4]).buffer) },
  ];
}

const f32 = new Float32Array(1), u32 = new Uint32Array(f32.buffer);
/** x (an F16 value exactly) as F16 bits */
function f16(x) {
  if (x === 0) return 0;
  f32[0] = x;
  const u = u32[0], sign = (u >>> 16) & 0x8000, e = ((u >>> 23) & 0xff) - 127 + 15, man = u & 0x7fffff;
  if (e <= 0) return sign | ((man | 0x800000) >>> (14 - e));
  return sign | (e << 10) | (man >>> 13);
}

/** ln_f(x) of the blocks' output over x (n, C) in TF.js ops, each layer's attention weights to onAttention. */
function tfBlocks(tf, w, x, n, mask, onAttention = () => {}) {
  const { n_layer: L, n_head: H, n_embd: C } = CONFIG, D = C / H;
  const ln = (y, g, b) => {
    const { mean, variance } = tf.moments(y, -1, true);
    return y.sub(mean).mul(tf.rsqrt(variance.add(1e-5))).mul(g).add(b);
  };
  const gelu = (u) => u.mul(0.5).mul(tf.tanh(u.add(u.pow(3).mul(0.044715)).mul(Math.sqrt(2 / Math.PI))).add(1));
  for (let l = 0; l < L; l++) {
    const p = (k) => w[`h.${l}.${k}`];
    const qkv = tf.matMul(ln(x, p('ln_1.weight'), p('ln_1.bias')), p('attn.c_attn.weight')).add(p('attn.c_attn.bias'));
    const heads = (i) => qkv.slice([0, i * C], [n, C]).reshape([n, H, D]).transpose([1, 0, 2]);
    const q = heads(0), k = heads(1), v = heads(2);
    const a = tf.softmax(tf.matMul(q, k.transpose([0, 2, 1])).mul(1 / Math.sqrt(D)).add(mask));
    onAttention(a);
    const z = tf.matMul(a, v).transpose([1, 0, 2]).reshape([n, C]);
    x = x.add(tf.matMul(z, p('attn.c_proj.weight')).add(p('attn.c_proj.bias')));
    const h = gelu(tf.matMul(ln(x, p('ln_2.weight'), p('ln_2.bias')), p('mlp.c_fc.weight')).add(p('mlp.c_fc.bias')));
    x = x.add(tf.matMul(h, p('mlp.c_proj.weight')).add(p('mlp.c_proj.bias')));
  }
  return ln(x, w['ln_f.weight'], w['ln_f.bias']);
}

const causalMask = (tf, n) => tf.tidy(() => tf.linalg.bandPart(tf.ones([n, n]), -1, 0).sub(1).mul(1e9));
const embedded = (tf, w, ids) => tf.gather(w['wte.weight'], tf.tensor1d(ids, 'int32')).add(w['wpe.weight'].slice([0, 0], [ids.length, CONFIG.n_embd]));

/**
 * The same forward in TF.js ops (attention weights and the top 5 next tokens
 * read back), written for its fast path: no matMul with the transpose flags
 * (which leaves XNNPACK for a loop several times slower, see README.md): K is
 * transposed explicitly and the unembedding, wte^T, made once beside the weights.
 */
export function tfForward(tf, w, ids) {
  const n = ids.length, mask = causalMask(tf, n);
  const out = tf.tidy(() => {
    const att = [];
    const logits = tf.matMul(tfBlocks(tf, w, embedded(tf, w, ids), n, mask, (a) => att.push(a)), w.unembed);
    const { values, indices } = tf.topk(tf.softmax(logits), 5);
    return [tf.stack(att), values, indices];
  });
  const result = out.map((t) => t.dataSync());
  tf.dispose([...out, mask]);
  return result;
}

/**
 * What attribution patching computes, in TF.js ops on the same weights: the
 * clean run's metric m = logit[a] - logit[b] at the last position, then the
 * corrupt run's m with its gradient back through every block to block 0's
 * input (tf.valueAndGrad: two forwards, one backward). Returns the two
 * metrics and that gradient (n, C), read back.
 */
export function tfMetricGradient(tf, w, clean, corrupt, [a, b]) {
  const n = clean.length, mask = causalMask(tf, n);
  const u = tf.tidy(() => tf.sub(w.unembed.slice([0, a], [CONFIG.n_embd, 1]), w.unembed.slice([0, b], [CONFIG.n_embd, 1])));
  const metric = (x) => tf.matMul(tfBlocks(tf, w, x, n, mask).slice([n - 1, 0], [1, CONFIG.n_embd]), u).sum();
  const mClean = tf.tidy(() => metric(embedded(tf, w, clean)).dataSync()[0]);
  const x = embedded(tf, w, corrupt);
  const { value, grad } = tf.valueAndGrad(metric)(x);
  const result = { clean: mClean, corrupt: value.dataSync()[0], gradient: grad.dataSync() };
  tf.dispose([x, value, grad, u, mask]);
  return result;
}
