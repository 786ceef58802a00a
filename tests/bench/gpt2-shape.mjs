// A GPT-2-small-shaped checkpoint for the benches (gpt2.mjs, circuits.mjs):
// its config, random F16 weights made here, and the same forward in TF.js ops.
import { gpt2Shapes, safetensors } from '../lib/gpt2-checkpoint.mjs';

/** GPT-2 small's shape (12 x 768, 12 heads, vocabulary 50,257, context 1024). */
export const CONFIG = { model_type: 'gpt2', n_layer: 12, n_head: 12, n_embd: 768, n_positions: 1024, n_ctx: 1024, vocab_size: 50257,
  layer_norm_epsilon: 1e-5, activation_function: 'gelu_new', n_inner: null };

/**
 * Random weights (a GPT-2's scale: N(0, 0.02)-like, LayerNorm gains near 1)
 * that F16 holds exactly, as the file's F16 bytes and float32 values, tensor
 * by tensor (onTensor(name, shape, values) keeps what it needs).
 */
export function makeCheckpoint(onTensor) {
  let s = 0x9e3779b9;
  const rand = () => { // xorshift32 in [0, 1)
    s ^= s << 13; s ^= s >>> 17; s ^= s << 5;
    return (s >>> 0) / 4294967296;
  };
  const tensors = [];
  for (const [name, shape] of gpt2Shapes(CONFIG)) {
    const n = shape.reduce((a, b) => a * b, 1);
    const values = new Float32Array(n), bits = new Uint16Array(n);
    const gain = /ln_.*weight/.test(name);
    for (let i = 0; i < n; i++) {
      // k / 2^12 with |k| < 2^10: an F16 value (10 bits of mantissa) exactly
      const k = Math.floor((rand() - 0.5) * 2 * (gain ? 64 : 140));
      const v = (gain ? 4096 : 0) + k;
      values[i] = v / 4096;
      bits[i] = f16(values[i]);
    }
    onTensor(name, shape, values);
    tensors.push({ name, dtype: 'F16', shape, bytes: new Uint8Array(bits.buffer) });
  }
  return safetensors(tensors);
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

/**
 * The same forward in TF.js ops (attention weights and the top 5 next tokens
 * read back), written for its fast path: no matMul with the transpose flags
 * (which leaves XNNPACK for a loop several times slower, see README.md): K is
 * transposed explicitly and the unembedding, wte^T, made once beside the weights.
 */
export function tfForward(tf, w, ids) {
  const { n_layer: L, n_head: H, n_embd: C } = CONFIG, D = C / H, n = ids.length;
  const ln = (x, g, b) => tf.tidy(() => {
    const { mean, variance } = tf.moments(x, -1, true);
    return x.sub(mean).mul(tf.rsqrt(variance.add(1e-5))).mul(g).add(b);
  });
  const gelu = (u) => u.mul(0.5).mul(tf.tanh(u.add(u.pow(3).mul(0.044715)).mul(Math.sqrt(2 / Math.PI))).add(1));
  const mask = tf.tidy(() => tf.linalg.bandPart(tf.ones([n, n]), -1, 0).sub(1).mul(1e9));
  const out = tf.tidy(() => {
    let x = tf.gather(w['wte.weight'], tf.tensor1d(ids, 'int32')).add(w['wpe.weight'].slice([0, 0], [n, C]));
    const att = [];
    for (let l = 0; l < L; l++) {
      const p = (k) => w[`h.${l}.${k}`];
      const qkv = tf.matMul(ln(x, p('ln_1.weight'), p('ln_1.bias')), p('attn.c_attn.weight')).add(p('attn.c_attn.bias'));
      const heads = (i) => qkv.slice([0, i * C], [n, C]).reshape([n, H, D]).transpose([1, 0, 2]);
      const q = heads(0), k = heads(1), v = heads(2);
      const a = tf.softmax(tf.matMul(q, k.transpose([0, 2, 1])).mul(1 / Math.sqrt(D)).add(mask));
      att.push(a);
      const z = tf.matMul(a, v).transpose([1, 0, 2]).reshape([n, C]);
      x = x.add(tf.matMul(z, p('attn.c_proj.weight')).add(p('attn.c_proj.bias')));
      const h = gelu(tf.matMul(ln(x, p('ln_2.weight'), p('ln_2.bias')), p('mlp.c_fc.weight')).add(p('mlp.c_fc.bias')));
      x = x.add(tf.matMul(h, p('mlp.c_proj.weight')).add(p('mlp.c_proj.bias')));
    }
    const logits = tf.matMul(ln(x, w['ln_f.weight'], w['ln_f.bias']), w.unembed);
    const { values, indices } = tf.topk(tf.softmax(logits), 5);
    return [tf.stack(att), values, indices];
  });
  const result = out.map((t) => t.dataSync());
  tf.dispose([...out, mask]);
  return result;
}
