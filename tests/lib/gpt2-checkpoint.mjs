// GPT-2-layout checkpoints built by the tests themselves (no file from
// outside): a safetensors writer (any tensors, any header, for the
// validation tests too), a small random GPT-2 in Hugging Face's naming and
// layout (F32, F16 or BF16; with or without the "transformer." prefix; tied
// or with its own lm_head; the attention's mask buffers), and the float64
// reference forward of the same weights.
import { mulberry32 } from './random.mjs';

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** float32 bits of x, rounded to the nearest bfloat16 (ties to even), as 16 bits. */
function bf16Bits(x) {
  f32[0] = x;
  const u = u32[0];
  return ((u + 0x7fff + ((u >>> 16) & 1)) >>> 16) & 0xffff;
}

/** x as IEEE half-precision bits (round to nearest, ties to even). */
function f16Bits(x) {
  f32[0] = x;
  const u = u32[0], sign = (u >>> 16) & 0x8000;
  const exp = (u >>> 23) & 0xff, man = u & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (man ? 0x200 : 0);
  const e = exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) { // subnormal half: man 2^-24
    if (e < -10) return sign;
    const full = man | 0x800000, shift = 14 - e;
    const half = full >>> shift, rest = full & ((1 << shift) - 1), mid = 1 << (shift - 1);
    return sign | (half + (rest > mid || (rest === mid && half & 1) ? 1 : 0));
  }
  let half = (e << 10) | (man >>> 13);
  const rest = man & 0x1fff;
  if (rest > 0x1000 || (rest === 0x1000 && half & 1)) half++;
  return sign | half;
}

function fromF16(h) {
  const sign = h & 0x8000 ? -1 : 1, exp = (h >>> 10) & 0x1f, man = h & 0x3ff;
  if (exp === 0x1f) return man ? NaN : sign * Infinity;
  if (exp === 0) return sign * man * 2 ** -24;
  return sign * (1 + man / 1024) * 2 ** (exp - 15);
}

function fromBf16(h) {
  u32[0] = h << 16;
  return f32[0];
}

export const DTYPE_SIZE = { F32: 4, F16: 2, BF16: 2 };

/** values as the dtype stores them: { bytes, values } (values: what the file then holds, as float64). */
export function encode(dtype, data) {
  const n = data.length, size = DTYPE_SIZE[dtype];
  const bytes = new Uint8Array(n * size), view = new DataView(bytes.buffer);
  const values = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    if (dtype === 'F32') {
      view.setFloat32(4 * i, data[i], true);
      values[i] = Math.fround(data[i]);
    } else if (dtype === 'F16') {
      const h = f16Bits(data[i]);
      view.setUint16(2 * i, h, true);
      values[i] = fromF16(h);
    } else {
      const h = bf16Bits(data[i]);
      view.setUint16(2 * i, h, true);
      values[i] = fromBf16(h);
    }
  }
  return { bytes, values };
}

/**
 * A safetensors file of tensors [{ name, dtype, shape, bytes }], data in
 * list order; `entry(name, entry)` may rewrite a tensor's header entry and
 * `header(text)` the whole header text (the length is the text's).
 */
export function safetensors(tensors, { entry = (n, e) => e, header = (t) => t, metadata = { format: 'pt' } } = {}) {
  const h = { __metadata__: metadata };
  let at = 0;
  for (const t of tensors) {
    h[t.name] = entry(t.name, { dtype: t.dtype, shape: t.shape, data_offsets: [at, at + t.bytes.length] });
    at += t.bytes.length;
  }
  let text = header(JSON.stringify(h));
  while ((8 + new TextEncoder().encode(text).length) % 8) text += ' ';
  const head = new TextEncoder().encode(text);
  const file = new Uint8Array(8 + head.length + at);
  new DataView(file.buffer).setUint32(0, head.length, true);
  file.set(head, 8);
  let pos = 8 + head.length;
  for (const t of tensors) {
    file.set(t.bytes, pos);
    pos += t.bytes.length;
  }
  return file;
}

/** The tensors of a GPT-2 of config c, in Hugging Face's names (without a prefix) and shapes. */
export function gpt2Shapes(c, { tied = true } = {}) {
  const C = c.n_embd, F = c.n_inner ?? 4 * C, out = [['wte.weight', [c.vocab_size, C]], ['wpe.weight', [c.n_positions, C]]];
  for (let l = 0; l < c.n_layer; l++) {
    const h = `h.${l}.`;
    out.push([`${h}ln_1.weight`, [C]], [`${h}ln_1.bias`, [C]], [`${h}attn.c_attn.weight`, [C, 3 * C]], [`${h}attn.c_attn.bias`, [3 * C]],
      [`${h}attn.c_proj.weight`, [C, C]], [`${h}attn.c_proj.bias`, [C]], [`${h}ln_2.weight`, [C]], [`${h}ln_2.bias`, [C]],
      [`${h}mlp.c_fc.weight`, [C, F]], [`${h}mlp.c_fc.bias`, [F]], [`${h}mlp.c_proj.weight`, [F, C]], [`${h}mlp.c_proj.bias`, [C]]);
  }
  out.push(['ln_f.weight', [C]], ['ln_f.bias', [C]]);
  if (!tied) out.push(['lm_head.weight', [c.vocab_size, C]]);
  return out;
}

export const TINY = { model_type: 'gpt2', n_layer: 2, n_head: 2, n_embd: 16, n_positions: 24, n_ctx: 24, vocab_size: 64,
  layer_norm_epsilon: 1e-5, activation_function: 'gelu_new', n_inner: null };

/**
 * A random GPT-2 checkpoint: { bytes, config, weights } (weights: each
 * tensor as the file holds it, float64, by its unprefixed name). `set(weights)`
 * may change the float64 weights (by name) before they are written.
 */
export function gpt2Checkpoint({ config = TINY, dtype = 'F32', prefix = false, tied = true, buffers = false, seed = 1, scale = 0.3, set } = {}) {
  const rand = mulberry32(seed);
  const raw = {};
  for (const [name, shape] of gpt2Shapes(config, { tied })) {
    const n = shape.reduce((a, b) => a * b, 1);
    const data = new Float64Array(n);
    const gain = /ln_.*weight/.test(name);
    for (let i = 0; i < n; i++) data[i] = gain ? 1 + 0.2 * (rand() - 0.5) : scale * 2 * (rand() - 0.5);
    raw[name] = { shape, data };
  }
  set?.(Object.fromEntries(Object.entries(raw).map(([k, v]) => [k, v.data])));
  const tensors = [], weights = {};
  for (const [name, { shape, data }] of Object.entries(raw)) {
    const { bytes, values } = encode(dtype, data);
    weights[name] = values;
    tensors.push({ name: (prefix && name !== 'lm_head.weight' ? 'transformer.' : '') + name, dtype, shape, bytes });
    if (buffers && /^h\.\d+\.attn\.c_attn\.weight$/.test(name)) { // the mask buffers some files carry
      const ctx = config.n_positions, l = name.split('.')[1];
      const mask = new Uint8Array(ctx * ctx);
      tensors.push({ name: `${prefix ? 'transformer.' : ''}h.${l}.attn.bias`, dtype: 'BOOL', shape: [1, 1, ctx, ctx], bytes: mask });
      tensors.push({ name: `${prefix ? 'transformer.' : ''}h.${l}.attn.masked_bias`, dtype: 'F32', shape: [], bytes: new Uint8Array(4) });
    }
  }
  return { bytes: safetensors(tensors), config, weights, tensors };
}

/**
 * A `set` for gpt2Checkpoint that makes, by hand, a previous-token head (layer 0, head 0)
 * and an induction head (layer 1, head 0) in a 2-layer model of vocabulary and context
 * 32 and width 96: residual blocks [token one-hot | position one-hot | the previous
 * token, written by layer 0's head 0]; every other weight 0 (LayerNorm gains 1).
 * `sharp` scales the heads' queries; `copy` > 0 also makes the induction head write the
 * token it finds into the token block (so the model predicts it, and ablating it costs).
 */
export function inductionCircuit({ sharp = 4, copy = 0 } = {}) {
  const V = 32, P = 32, C = 3 * 32;
  return (w) => {
    for (const [k, x] of Object.entries(w)) x.fill(/ln_.*weight/.test(k) ? 1 : 0);
    for (let v = 0; v < V; v++) w['wte.weight'][v * C + v] = 1;
    for (let t = 0; t < P; t++) w['wpe.weight'][t * C + 32 + t] = 1;
    const qkv0 = w['h.0.attn.c_attn.weight'], qkv1 = w['h.1.attn.c_attn.weight'];
    for (let p = 0; p < 31; p++) {
      qkv0[(32 + p) * 3 * C + p] = sharp; // head 0 query: its position p
      qkv0[(32 + p) * 3 * C + C + p + 1] = 1; // head 0 key: position p lights p + 1, so t finds t - 1
    }
    for (let v = 0; v < V; v++) {
      qkv0[v * 3 * C + 2 * C + v] = 1; // head 0 value: the token
      w['h.0.attn.c_proj.weight'][v * C + 64 + v] = 0.15; // into the previous-token block
      qkv1[v * 3 * C + v] = sharp; // layer 1 head 0 query: the token
      qkv1[(64 + v) * 3 * C + C + v] = 1; // its key: the previous token, so t finds where its token came before
      if (copy > 0) {
        qkv1[v * 3 * C + 2 * C + v] = 1; // its value: the token found there
        w['h.1.attn.c_proj.weight'][v * C + v] = copy; // written into the token block: the prediction
      }
    }
  };
}
/** The config inductionCircuit() is made for (from TINY). */
export const INDUCTION_CIRCUIT = { ...TINY, n_layer: 2, n_head: 2, n_embd: 96, n_positions: 32, n_ctx: 32, vocab_size: 32 };

// ---- the float64 reference --------------------------------------------------

/** LayerNorm of rows x (n, C) with gain w, bias b, in float64. */
export function layerNorm(x, n, C, w, b, eps) {
  const y = new Float64Array(n * C);
  for (let r = 0; r < n; r++) {
    let m = 0, v = 0;
    for (let i = 0; i < C; i++) m += x[r * C + i];
    m /= C;
    for (let i = 0; i < C; i++) v += (x[r * C + i] - m) ** 2;
    const s = 1 / Math.sqrt(v / C + eps);
    for (let i = 0; i < C; i++) y[r * C + i] = (x[r * C + i] - m) * s * w[i] + b[i];
  }
  return y;
}

/** y (n, O) = x (n, I) W (I, O) + b */
function linear(x, n, I, W, b, O) {
  const y = new Float64Array(n * O);
  for (let r = 0; r < n; r++)
    for (let o = 0; o < O; o++) {
      let s = b[o];
      for (let i = 0; i < I; i++) s += x[r * I + i] * W[i * O + o];
      y[r * O + o] = s;
    }
  return y;
}

const gelu = (u) => 0.5 * u * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (u + 0.044715 * u ** 3)));

/**
 * GPT-2's forward in float64 over ids: attention[l][h] (n x n, Float64Array),
 * logits (n x V), residuals[l] (each block's output, n x C), and the logits
 * of each block's output (lens[l], n x V). ablate: [{ layer, head }].
 * hook(site, layer, x) (patching) sees, and may change in place, each block's
 * activations: 'resid' its input (n x C), 'values' the c_attn output (n x 3C,
 * the values from column 2C), 'pattern' the heads' weights (H arrays of n x n),
 * 'z' the heads' contexts (n x C), 'attn' and 'mlp' the two outputs (n x C).
 */
export function referenceForward(weights, config, ids, { ablate = [], hook = () => {} } = {}) {
  const L = config.n_layer, H = config.n_head, C = config.n_embd, F = config.n_inner ?? 4 * C, V = config.vocab_size;
  const D = C / H, n = ids.length, eps = config.layer_norm_epsilon ?? 1e-5;
  const w = weights, U = w['lm_head.weight'] ?? w['wte.weight'];
  const x = new Float64Array(n * C);
  for (let t = 0; t < n; t++) for (let i = 0; i < C; i++) x[t * C + i] = w['wte.weight'][ids[t] * C + i] + w['wpe.weight'][t * C + i];
  const attention = [], residuals = [];
  const unembed = (res) => {
    const z = layerNorm(res, n, C, w['ln_f.weight'], w['ln_f.bias'], eps);
    const logits = new Float64Array(n * V);
    for (let t = 0; t < n; t++) for (let v = 0; v < V; v++) {
      let s = 0;
      for (let i = 0; i < C; i++) s += z[t * C + i] * U[v * C + i];
      logits[t * V + v] = s;
    }
    return logits;
  };
  for (let l = 0; l < L; l++) {
    const p = `h.${l}.`;
    hook('resid', l, x);
    const a = layerNorm(x, n, C, w[`${p}ln_1.weight`], w[`${p}ln_1.bias`], eps);
    const qkv = linear(a, n, C, w[`${p}attn.c_attn.weight`], w[`${p}attn.c_attn.bias`], 3 * C);
    hook('values', l, qkv);
    const ctx = new Float64Array(n * C);
    attention.push([]);
    for (let h = 0; h < H; h++) {
      const P = new Float64Array(n * n);
      for (let i = 0; i < n; i++) {
        let max = -Infinity;
        const e = new Float64Array(i + 1);
        for (let j = 0; j <= i; j++) {
          let s = 0;
          for (let d = 0; d < D; d++) s += qkv[i * 3 * C + h * D + d] * qkv[j * 3 * C + C + h * D + d];
          e[j] = s / Math.sqrt(D);
          max = Math.max(max, e[j]);
        }
        let sum = 0;
        for (let j = 0; j <= i; j++) sum += (e[j] = Math.exp(e[j] - max));
        for (let j = 0; j <= i; j++) P[i * n + j] = e[j] / sum;
      }
      attention[l].push(P);
    }
    hook('pattern', l, attention[l]);
    for (let h = 0; h < H; h++) {
      if (ablate.some((ab) => ab.layer === l && ab.head === h)) continue;
      const P = attention[l][h];
      for (let i = 0; i < n; i++)
        for (let d = 0; d < D; d++) {
          let s = 0;
          for (let j = 0; j < n; j++) s += P[i * n + j] * qkv[j * 3 * C + 2 * C + h * D + d];
          ctx[i * C + h * D + d] = s;
        }
    }
    hook('z', l, ctx);
    const proj = linear(ctx, n, C, w[`${p}attn.c_proj.weight`], w[`${p}attn.c_proj.bias`], C);
    hook('attn', l, proj);
    for (let i = 0; i < n * C; i++) x[i] += proj[i];
    const b = layerNorm(x, n, C, w[`${p}ln_2.weight`], w[`${p}ln_2.bias`], eps);
    const hid = linear(b, n, C, w[`${p}mlp.c_fc.weight`], w[`${p}mlp.c_fc.bias`], F).map(gelu);
    const out = linear(hid, n, F, w[`${p}mlp.c_proj.weight`], w[`${p}mlp.c_proj.bias`], C);
    hook('mlp', l, out);
    for (let i = 0; i < n * C; i++) x[i] += out[i];
    residuals.push(Float64Array.from(x));
  }
  return { attention, logits: unembed(x), residuals, lens: () => residuals.map(unembed) };
}

/** Mean cross-entropy (nats) of ids[t + 1] from the reference's logits. */
export function referenceLoss(logits, ids, V) {
  let sum = 0;
  for (let t = 0; t + 1 < ids.length; t++) {
    const row = logits.subarray(t * V, (t + 1) * V);
    const max = Math.max(...row);
    let z = 0;
    for (const v of row) z += Math.exp(v - max);
    sum += -(row[ids[t + 1]] - max - Math.log(z));
  }
  return sum / (ids.length - 1);
}

/** Greedy continuation by the reference (the window: the last n_positions tokens). */
export function referenceGreedy(weights, config, ids, count) {
  const out = [...ids];
  for (let k = 0; k < count; k++) {
    const window = out.slice(-config.n_positions);
    const { logits } = referenceForward(weights, config, window);
    const V = config.vocab_size, row = logits.subarray((window.length - 1) * V, window.length * V);
    let best = 0;
    for (let v = 1; v < V; v++) if (row[v] > row[best]) best = v;
    out.push(best);
  }
  return out.slice(ids.length);
}

/** A safetensors file's F32 tensors as float64 arrays, with the names stripped of `strip`. */
export function readSafetensors(bytes, strip = '') {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n = Number(view.getBigUint64(0, true));
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n)));
  const out = {};
  for (const [name, t] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    if (t.dtype !== 'F32') throw new Error(`${name}: ${t.dtype}, not F32`);
    const [a, b] = t.data_offsets;
    const data = new Float64Array((b - a) / 4);
    for (let i = 0; i < data.length; i++) data[i] = view.getFloat32(8 + n + a + 4 * i, true);
    out[name.startsWith(strip) ? name.slice(strip.length) : name] = data;
  }
  return out;
}
