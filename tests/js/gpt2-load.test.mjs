// Opening a GPT-2 checkpoint: one test per rule a file or its config.json can
// break (scalar build), each an AttnlabError with its code naming the
// tensor or field; the WASM heap's growth measured around each failure
// (its memory's size, and the bytes allocated back at their baseline), and
// the engine opening a good checkpoint after it.
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { loadEngine } from '../../web/engine/index.js';
import { rejectsCode } from '../lib/assert.mjs';
import { TINY, encode, gpt2Checkpoint, gpt2Shapes, safetensors } from '../lib/gpt2-checkpoint.mjs';

const MB = 1 << 20;
// a checkpoint whose weights (25 MB as float32) would grow the heap if a bad file were allocated for
const WIDE = { ...TINY, n_embd: 128, n_head: 4, vocab_size: 50257 };

/** The good tensors of config c (dtype, bare names; every weight 0.01), for a rule to break one of. */
function tensorsOf(c, dtype = 'F16') {
  const one = encode(dtype, [0.01]).bytes;
  return gpt2Shapes(c).map(([name, shape]) => {
    const bytes = new Uint8Array(shape.reduce((a, b) => a * b, 1) * one.length);
    for (let i = 0; i < bytes.length; i += one.length) bytes.set(one, i);
    return { name, dtype, shape, bytes };
  });
}

describe('opening a GPT-2 checkpoint: every rule (scalar build)', () => {
  let engine, good;
  before(async () => {
    engine = await loadEngine({ simd: false, threads: 1 });
    good = gpt2Checkpoint({ seed: 7 });
    (await engine.loadModel(good.bytes, { config: good.config })).destroy(); // the tokenizer and the heap's first growth
  });

  /** rejects with code and pattern; the heap grew by at most `most` bytes and holds nothing more; a good file opens after. */
  async function refused(bytes, config, code, pattern, most = MB) {
    const memory = engine.heap.memory.buffer.byteLength, used = engine.heapUsed();
    await rejectsCode(engine.loadModel(bytes, { config }), code, pattern);
    const grew = engine.heap.memory.buffer.byteLength - memory;
    assert.ok(grew <= most, `the heap grew by ${grew} bytes (at most ${most})`);
    assert.equal(engine.heapUsed(), used, 'every allocation freed');
    const gpt = await engine.loadModel(good.bytes, { config: good.config });
    assert.equal(gpt.inspect({ ids: [1, 2, 3] }).attention.length, 2);
    gpt.destroy();
    return grew;
  }

  let wideTensors;
  /** WIDE's good tensors (built once; each entry a copy, the bytes shared and left alone) */
  const wideList = () => (wideTensors ??= tensorsOf(WIDE)).map((x) => ({ ...x }));
  const wide = (edit = {}) => safetensors(wideList(), edit);

  test('the header length runs past the file', async () => {
    const b = wide();
    new DataView(b.buffer).setUint32(0, b.length, true);
    await refused(b, WIDE, 'ERR_VALUE', /header: its length, \d+ bytes, runs past the end of the file/);
    new DataView(b.buffer).setUint32(4, 1, true); // past 2^32
    await refused(b, WIDE, 'ERR_VALUE', /runs past the end/);
  });

  test('the header is bounded', async () => {
    const big = 16 * MB + 8;
    const b = new Uint8Array(8 + big + 8);
    new DataView(b.buffer).setUint32(0, big, true);
    b.fill(0x20, 8, 8 + big);
    b[8] = 0x7b;
    await refused(b, WIDE, 'ERR_LIMIT', /header: 16777224 bytes is past the limit of 16777216/);
    const deep = wide({ metadata: JSON.parse('{"a":'.repeat(20) + '1' + '}'.repeat(20)) });
    await refused(deep, WIDE, 'ERR_LIMIT', /nested past 16 levels/);
  });

  test('the header is well-formed JSON', async () => {
    for (const [what, header] of [
      ['cut short', (t) => t.slice(0, t.length - 2)],
      ['a trailing comma', (t) => `${t.slice(0, -1)},}`],
      ['bytes after the object', (t) => `${t}x`],
      ['an offset that is not an integer', (t) => t.replace('"data_offsets":[0,', '"data_offsets":[0.5,')],
      ['an entry that is not an object', (t) => t.replace('{"dtype"', '["dtype"')],
    ]) {
      await refused(wide({ header }), WIDE, 'ERR_VALUE', /header: not well-formed JSON at byte \d+/, MB).catch((err) => {
        throw new Error(`${what}: ${err.message}`);
      });
    }
  });

  test('a dtype other than F32, F16 or BF16 is refused, naming the tensor', async () => {
    await refused(wide({ entry: (n, e) => (n === 'h.1.ln_2.bias' ? { ...e, dtype: 'I16' } : e) }), WIDE, 'ERR_VALUE',
      /h\.1\.ln_2\.bias: dtype I16; weights must be F32, F16 or BF16/);
  });

  test('a shape other than the config\'s is refused, naming the tensor and both shapes', async () => {
    const t = wideList();
    const fc = t.find((x) => x.name === 'h.0.mlp.c_fc.weight');
    fc.shape = [4 * 128, 128]; // nn.Linear's [out, in], not Conv1D's [in, out]
    await refused(safetensors(t), WIDE, 'ERR_SHAPE', /h\.0\.mlp\.c_fc\.weight: shape \[512, 128\]; the config needs \[128, 512\]/);
    await refused(wide(), { ...WIDE, n_layer: 3 }, 'ERR_PARAM', /h\.2\.ln_1\.weight: the file has no such tensor/);
  });

  test('the sizes must match dtype x shape', async () => {
    await refused(wide({ entry: (n, e) => (n === 'wpe.weight' ? { ...e, dtype: 'F32' } : e) }), WIDE, 'ERR_VALUE',
      /wpe\.weight: 3072 values of F32 take 12288 bytes, but its data_offsets span 6144/);
  });

  test('offsets inside the data', async () => {
    await refused(wide({ entry: (n, e) => (n === 'ln_f.bias' ? { ...e, data_offsets: [e.data_offsets[0] + 1e6, e.data_offsets[1] + 1e6] } : e) }),
      WIDE, 'ERR_VALUE', /ln_f\.bias: data_offsets \[\d+, \d+\] are not inside the data/);
    await refused(wide({ entry: (n, e) => (n === 'ln_f.bias' ? { ...e, data_offsets: [e.data_offsets[1], e.data_offsets[0]] } : e) }),
      WIDE, 'ERR_VALUE', /ln_f\.bias: data_offsets/);
  });

  test('no two tensors overlap', async () => {
    await refused(wide({ entry: (n, e) => (n === 'h.0.ln_1.bias' ? { ...e, data_offsets: [e.data_offsets[0] - 2, e.data_offsets[1] - 2] } : e) }),
      WIDE, 'ERR_VALUE', /overlaps/);
  });

  test('every required tensor present', async () => {
    const t = wideList().filter((x) => x.name !== 'h.1.attn.c_attn.bias');
    await refused(safetensors(t), WIDE, 'ERR_PARAM', /h\.1\.attn\.c_attn\.bias: the file has no such tensor, which the config needs/);
  });

  test('no tensor twice (a name with and without the transformer. prefix); no tensor of another model', async () => {
    const t = wideList();
    t.push({ ...t.find((x) => x.name === 'ln_f.weight'), name: 'transformer.ln_f.weight' });
    await refused(safetensors(t), WIDE, 'ERR_VALUE', /transformer\.ln_f\.weight: the file holds it twice \(as ln_f\.weight too\)/);
    const u = wideList();
    u.push({ ...u.find((x) => x.name === 'ln_f.bias'), name: 'h.0.attn.q_proj.weight' });
    await refused(safetensors(u), WIDE, 'ERR_VALUE', /h\.0\.attn\.q_proj\.weight: not a tensor of a GPT-2 checkpoint/);
  });

  test('a NaN or infinite weight rejects the file, naming it; the weights it had taken are freed', async () => {
    for (const [bad, word] of [[NaN, 'NaN'], [Infinity, 'infinite']]) {
      for (const dtype of ['F32', 'F16', 'BF16']) {
        const ck = gpt2Checkpoint({ dtype, seed: 5, set: (w) => { w['h.1.mlp.c_proj.weight'][77] = bad; } });
        await refused(ck.bytes, TINY, 'ERR_VALUE', new RegExp(`h\\.1\\.mlp\\.c_proj\\.weight\\[77\\] is ${word}`));
      }
    }
    // a large one: the weights (25 MB as float32) and one chunk may be taken while converting, never more
    const t = tensorsOf(WIDE, 'BF16');
    t.find((x) => x.name === 'ln_f.weight').bytes.set([0xc0, 0x7f], 2 * 5); // BF16 NaN
    await refused(safetensors(t), WIDE, 'ERR_VALUE', /ln_f\.weight\[5\] is NaN/, 25 * MB + 17 * MB);
  });

  test('the data must end where the header says', async () => {
    const b = wide();
    await refused(b.subarray(0, b.length - 3), WIDE, 'ERR_VALUE', /not inside the data/);
  });

  test('a file past the heap: ERR_LIMIT naming its size and the limit, before anything is allocated', async () => {
    const xl = { ...TINY, n_layer: 48, n_head: 25, n_embd: 1600, n_positions: 1024, n_ctx: 1024, vocab_size: 50257 }; // gpt2-xl
    await refused(good.bytes, xl, 'ERR_LIMIT', /1557611200 parameters take 6\.23 GB as float32, past the limit of 3\.40 GB/);
  });

  test('an attnlab model file whose ninth byte is \'{\' is read as the damaged model file it is', async () => {
    const m = await engine.createTransformer({ task: 'induction', layers: 1, heads: 1, dModel: 8, dFF: 0, context: 16, batch: 2 });
    const b = m.save();
    m.destroy();
    b[8] = 0x7b; // the version's first byte
    await rejectsCode(engine.loadModel(b), 'ERR_VALUE', /version/);
    await rejectsCode(engine.loadModel(b, { config: TINY }), 'ERR_ARG', /an attnlab model file takes none/);
  });

  test('config.json: read strictly', async () => {
    const b = good.bytes;
    await refused(b, { ...TINY, activation_function: 'relu' }, 'ERR_VALUE', /activation_function is "relu"; the engine runs GPT-2's 'gelu_new' only/);
    await refused(b, { ...TINY, model_type: 'llama' }, 'ERR_VALUE', /model_type is "llama"/);
    const noLayers = { ...TINY };
    delete noLayers.n_layer;
    await refused(b, noLayers, 'ERR_VALUE', /n_layer is missing/);
    await refused(b, { ...TINY, n_head: 3 }, 'ERR_SHAPE', /n_head: 3 heads do not divide n_embd 16/);
    await refused(b, { ...TINY, n_embd: 16.5 }, 'ERR_VALUE', /n_embd must be an integer/);
    await refused(b, { ...TINY, n_ctx: 32 }, 'ERR_VALUE', /n_positions \(24\) and n_ctx \(32\) disagree/);
    await refused(b, { ...TINY, layer_norm_epsilon: 0 }, 'ERR_VALUE', /layer_norm_epsilon must be a finite number > 0/);
    await refused(b, { ...TINY, n_positions: 4096, n_ctx: 4096 }, 'ERR_LIMIT', /n_positions: 4096/);
    await refused(b, '{"n_layer": 2,', 'ERR_VALUE', /config: not JSON/);
    await refused(b, 42, 'ERR_ARG', /config\.json as an object or its text/);
    // n_inner given: the MLP's width
    await refused(b, { ...TINY, n_inner: 32 }, 'ERR_SHAPE', /h\.0\.mlp\.c_fc\.weight: shape \[16, 64\]; the config needs \[16, 32\]/);
  });

  test('chunks of any size, an element cut between two: the weights as one chunk gives them', async () => {
    // F32 tensors 2 bytes off a multiple of 4 (after a 1-value F16 buffer), taken 3 and 7 bytes at a time
    const t = tensorsOf(TINY, 'F32').map((x, i) => ({ ...x, bytes: encode('F32', new Float64Array(x.bytes.length / 4).map((_, k) => Math.sin(i + k) * 0.3)).bytes }));
    const b = safetensors([{ name: 'h.0.attn.masked_bias', dtype: 'F16', shape: [1], bytes: encode('F16', [1]).bytes }, ...t]);
    const whole = await engine.loadModel(b, { config: TINY });
    const want = whole.inspect({ ids: [1, 2, 3, 4] }, { logits: true });
    whole.destroy();
    const heap = engine.heap, headerLength = new DataView(b.buffer).getUint32(0, true);
    const c = { layers: 2, heads: 2, dModel: 16, dFF: 64, context: 24, vocab: 64, epsilon: 1e-5, arch: 0, rotaryDims: 0, rotaryBase: 0, parallel: 0, geluExact: 0 };
    for (const size of [3, 7]) {
      const handle = heap.withBlock({ header: headerLength }, (p) => {
        heap.writeBytes(p.header, b.subarray(8, 8 + headerLength));
        return heap.withHandle((out) => heap.call.gpt2_open({ ...c, header: p.header, headerLength, fileSize: b.length, out }));
      });
      heap.withBlock({ chunk: 8 }, (p) => {
        for (let at = 8 + headerLength; at < b.length; at += size) {
          const piece = b.subarray(at, Math.min(at + size, b.length));
          heap.writeBytes(p.chunk, piece);
          heap.call.gpt2_load_chunk({ model: handle, bytes: p.chunk, n: piece.length });
        }
      });
      heap.call.gpt2_load_finish({ model: handle });
      const got = heap.withBlock({ tokens: 16, attention: 4 * 2 * 2 * 16, ids: 4 * 20, p: 4 * 20, logits: 4 * 4 * 64 }, (p) => {
        heap.writeI32(p.tokens, [1, 2, 3, 4]);
        heap.call.gpt2_inspect({ model: handle, tokens: p.tokens, n: 4, attention: p.attention, ids: p.ids, p: p.p, lens: 0, logits: p.logits });
        return heap.readF32(p.logits, 4 * 64);
      });
      heap.call.gpt2_destroy({ model: handle });
      assert.deepEqual(got, want.logits.data, `chunks of ${size} bytes`);
    }
  });
});
