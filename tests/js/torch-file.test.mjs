// pytorch_model.bin (torch.save's zip of a pickled state dict, written by
// tests/lib/torch-file.mjs as torch.save writes it) through
// engine.loadModel(bytes, { config }) and engine.openModel: a GPT-2 and a
// GPT-NeoX checkpoint written both as model.safetensors and as
// pytorch_model.bin give identical logits on both builds (F32, F16, BF16; an
// OrderedDict with _metadata or a plain dict; one storage for all tensors;
// zip64's end record); every file the restricted reader refuses is a coded
// error naming what it refused, the heap back at its baseline after it; and
// openModel falls back to pytorch_model.bin where a revision has no
// model.safetensors, from the hub and from what it kept.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { withEngines } from './builds.mjs';
import { loadEngine } from '../../web/engine/index.js';
import { rejectsCode } from '../lib/assert.mjs';
import { gpt2Checkpoint } from '../lib/gpt2-checkpoint.mjs';
import { neoxCheckpoint } from '../lib/neox-checkpoint.mjs';
import { OP, safetensorsTensors, torchFile } from '../lib/torch-file.mjs';
import { startHub } from '../lib/hub-server.mjs';

const IDS = [3, 17, 42, 5, 3, 17, 42, 5, 60, 1, 0, 63];
const logitsOf = (m) => m.inspect({ ids: IDS }, { logits: true }).logits.data;

/** The logits of a checkpoint's bytes opened with loadModel (the model destroyed). */
async function logits(engine, bytes, config) {
  const m = await engine.loadModel(bytes, { config });
  try {
    return { data: Array.from(logitsOf(m)), architecture: m.config.architecture, dtype: m.config.dtype, parameters: m.config.parameters };
  } finally {
    m.destroy();
  }
}

const CASES = [
  ['GPT-2, F32, the mask buffers', () => gpt2Checkpoint({ seed: 11, buffers: true }), {}],
  ['GPT-2, F16, "transformer." names, its own lm_head, the state dict\'s _metadata', () => gpt2Checkpoint({ seed: 12, dtype: 'F16', prefix: true, tied: false }), { metadata: true }],
  ['GPT-2, BF16, a plain dict, zip64\'s end record', () => gpt2Checkpoint({ seed: 13, dtype: 'BF16' }), { plainDict: true, zip64: true }],
  ['GPT-2, F32, every tensor a view into one storage', () => gpt2Checkpoint({ seed: 14, tied: false, buffers: true }), { oneStorage: true }],
  ['GPT-NeoX, F32, its buffers', () => neoxCheckpoint({ seed: 15, buffers: true }), {}],
  ['GPT-NeoX, F16, one storage, _metadata', () => neoxCheckpoint({ seed: 16, dtype: 'F16', buffers: true }), { oneStorage: true, metadata: true }],
  ['GPT-NeoX, BF16, another archive name', () => neoxCheckpoint({ seed: 17, dtype: 'BF16' }), { archive: 'archive' }],
];

for (const { name, skip, engine } of await withEngines()) {
  describe(`pytorch_model.bin loads as model.safetensors does (${name})`, { skip }, () => {
    for (const [what, make, options] of CASES) {
      test(`${what}: identical logits`, async () => {
        const ck = make();
        const bin = torchFile(safetensorsTensors(ck.bytes), options);
        const used = engine.heapUsed();
        const want = await logits(engine, ck.bytes, ck.config);
        const got = await logits(engine, bin, ck.config);
        assert.deepEqual(got, want);
        assert.equal(engine.heapUsed(), used, 'every allocation freed');
      });
    }

    test('onProgress hears the whole file once it is in', async () => {
      const ck = gpt2Checkpoint({ seed: 18 });
      const heard = [];
      const m = await engine.loadModel(torchFile(ck.tensors), { config: ck.config, onProgress: (f) => heard.push(f) });
      m.destroy();
      assert.deepEqual(heard, [1]);
    });
  });
}

// ---- what the reader refuses ---------------------------------------------------------------------

/** data.pkl's bytes with every occurrence of `from` (bytes or text) replaced by `to`. */
function replaceBytes(bytes, from, to) {
  const [a, b] = [from, to].map((x) => (typeof x === 'string' ? new TextEncoder().encode(x) : Uint8Array.from(x)));
  const out = [];
  let hits = 0;
  for (let i = 0; i < bytes.length;) {
    if (i + a.length <= bytes.length && a.every((v, k) => bytes[i + k] === v)) {
      out.push(...b);
      i += a.length;
      hits++;
    } else out.push(bytes[i++]);
  }
  assert.ok(hits > 0, 'the bytes to replace are in data.pkl');
  return new Uint8Array(out);
}

/** The central directory entry of `name` in a zip: its offset (the first match of its signature and name). */
function centralEntry(file, name) {
  const want = new TextEncoder().encode(name);
  const v = new DataView(file.buffer, file.byteOffset, file.byteLength);
  for (let i = file.length - 46; i >= 0; i--) {
    if (v.getUint32(i, true) !== 0x02014b50 || v.getUint16(i + 28, true) !== want.length) continue;
    if (want.every((c, k) => file[i + 46 + k] === c)) return i;
  }
  throw new Error(`no central directory entry ${name}`);
}

describe('the reader refuses what a state dict does not need (scalar build)', () => {
  let engine, ck;
  before(async () => {
    engine = await loadEngine({ simd: false, threads: 1 });
    ck = gpt2Checkpoint({ seed: 21, buffers: true });
    (await engine.loadModel(torchFile(ck.tensors), { config: ck.config })).destroy();
  });

  /** rejects with code and a message matching pattern; the heap holds nothing more after; a good file opens after. */
  async function refused(bytes, code, pattern) {
    const used = engine.heapUsed();
    await rejectsCode(engine.loadModel(bytes, { config: ck.config }), code, pattern);
    assert.equal(engine.heapUsed(), used, 'every allocation freed');
    (await engine.loadModel(torchFile(ck.tensors), { config: ck.config })).destroy();
  }
  const bin = (options) => torchFile(ck.tensors, options);
  const pickled = (edit) => bin({ pickle: edit });

  test('a global other than the state dict\'s few: os system, builtins eval, a look-alike of torch\'s', async () => {
    for (const [module, name] of [['os', 'system'], ['builtins', 'eval'], ['torch._utils', '_rebuild_parameter'], ['torch', 'FloatStorag']]) {
      const b = pickled((p) => replaceBytes(p, 'torch._utils\n_rebuild_tensor_v2\n', `${module}\n${name}\n`));
      await refused(b, 'ERR_VALUE', new RegExp(`^loadModel: data\\.pkl: GLOBAL \\(0x63\\) at byte \\d+: the global ${module} ${name} is not one a state dict uses$`));
    }
    // the same global wherever it stands: as the storage's type too
    await refused(pickled((p) => replaceBytes(p, 'torch\nFloatStorage\n', 'posix\nsystem\n')), 'ERR_VALUE', /GLOBAL \(0x63\) at byte \d+: the global posix system/);
  });

  test('an opcode a state dict does not use, known or not, named with its byte', async () => {
    const after2 = (op) => (p) => new Uint8Array([...p.subarray(0, 2), ...op, ...p.subarray(2)]);
    await refused(pickled(after2([0xff])), 'ERR_VALUE', /^loadModel: data\.pkl: an unknown opcode \(0xff\) at byte 2: not an opcode a state dict uses$/);
    await refused(pickled(after2([0x93])), 'ERR_VALUE', /data\.pkl: STACK_GLOBAL \(0x93\) at byte 2: not an opcode/);
    await refused(pickled(after2([0x69, ...new TextEncoder().encode('os\nsystem\n')])), 'ERR_VALUE', /data\.pkl: INST \(0x69\) at byte 2/);
    await refused(pickled(after2([0x81])), 'ERR_VALUE', /NEWOBJ \(0x81\) at byte 2/);
    await refused(pickled((p) => replaceBytes(p, [OP.PROTO, 2], [OP.PROTO, 4])), 'ERR_VALUE', /PROTO \(0x80\) at byte 0: a state dict is pickled with protocol 2/);
    await refused(pickled((p) => p.subarray(2)), 'ERR_VALUE', /GLOBAL \(0x63\) at byte 0: data\.pkl must start with PROTO 2/);
  });

  test('REDUCE on anything but OrderedDict and _rebuild_tensor_v2; a persistent id that is not a storage', async () => {
    // the storage's type called in place of _rebuild_tensor_v2: BINGET of the rebuild's memo slot swapped for the storage type's
    const b = pickled((p) => replaceBytes(p, 'torch._utils\n_rebuild_tensor_v2\n', 'torch\nHalfStorage\n'));
    await refused(b, 'ERR_VALUE', /REDUCE \(0x52\) at byte \d+: only OrderedDict and _rebuild_tensor_v2 are called/);
    await refused(pickled((p) => replaceBytes(p, 'storage', 'storagf')), 'ERR_VALUE', /BINPERSID \(0x51\) at byte \d+: a persistent id that is not \('storage'/);
  });

  test('a memo index out of range', async () => {
    await refused(pickled((p) => replaceBytes(p, [OP.BINGET, 0], [OP.BINGET, 200])), 'ERR_VALUE', /BINGET \(0x68\) at byte \d+: memo index 200 out of range \(the memo holds \d+\)/);
    await refused(pickled((p) => replaceBytes(p, [OP.BINPUT, 1], [OP.BINPUT, 90])), 'ERR_VALUE', /BINPUT \(0x71\) at byte \d+: memo index 90 past the next one, 1/);
    await refused(pickled((p) => replaceBytes(p, [OP.BINGET, 0], [OP.LONG_BINGET, 0xff, 0xff, 0xff, 0xff])), 'ERR_VALUE', /LONG_BINGET \(0x6a\) at byte \d+: memo index 4294967295 out of range/);
  });

  test('strings that are not UTF-8, integers past 64 bits, data.pkl cut or with bytes after STOP', async () => {
    await refused(pickled((p) => replaceBytes(p, 'wte.weight', [0x77, 0xc3, 0x28, 0x65, 0x2e, 0x77, 0x65, 0x69, 0x67, 0x68])), 'ERR_VALUE', /BINUNICODE \(0x58\) at byte \d+: a string that is not UTF-8/);
    await refused(pickled((p) => replaceBytes(p, [OP.NEWFALSE], [OP.LONG1, 9, 1, 2, 3, 4, 5, 6, 7, 8, 9, OP.NEWFALSE])), 'ERR_VALUE', /LONG1 \(0x8a\) at byte \d+: an integer past 64 bits/);
    await refused(pickled((p) => p.subarray(0, p.length - 1)), 'ERR_VALUE', /data\.pkl: it ends at byte \d+ without STOP/);
    await refused(pickled((p) => new Uint8Array([...p, OP.NONE])), 'ERR_VALUE', /STOP \(0x2e\) at byte \d+: bytes after it/);
  });

  test('a storage past its entry or past the file; a tensor past its storage', async () => {
    await refused(bin({ tensor: (t) => (t.name === 'wpe.weight' ? { ...t, numel: 1e6 } : t) }), 'ERR_VALUE',
      /^loadModel: data\.pkl: storage 1: 1000000 values of F32, but its entry holds 1536 bytes$/);
    await refused(bin({ tensor: (t) => (t.name === 'wpe.weight' ? { ...t, offset: 10 } : t) }), 'ERR_VALUE',
      /^loadModel: wpe\.weight: its values from 10 on are not inside its storage 1 of 384 values$/);
    await refused(bin({ tensor: (t) => (t.name === 'wpe.weight' ? { ...t, shape: [25, 16], stride: [16, 1] } : t) }), 'ERR_VALUE',
      /wpe\.weight: its values from 0 on are not inside its storage 1 of 384 values/);
    // the directory says data/1 runs past the end of the file
    const b = bin();
    const at = centralEntry(b, 'pytorch_model/data/1');
    new DataView(b.buffer).setUint32(at + 20, 1e9, true);
    new DataView(b.buffer).setUint32(at + 24, 1e9, true);
    await refused(b, 'ERR_VALUE', /^loadModel: zip: pytorch_model\/data\/1: its 1000000000 bytes at byte \d+ run past the end of the file \(\d+ bytes\)$/);
    const c = bin();
    new DataView(c.buffer).setUint32(centralEntry(c, 'pytorch_model/data/2') + 42, c.length, true);
    await refused(c, 'ERR_VALUE', /zip: pytorch_model\/data\/2: its local header \(byte \d+\) is not inside the file/);
    await refused(bin({ entries: (list) => list.filter((e) => e.name !== 'pytorch_model/data/3') }), 'ERR_VALUE', /^loadModel: zip: no entry pytorch_model\/data\/3$/);
  });

  test('a stride that is not contiguous row-major, naming the tensor', async () => {
    await refused(bin({ tensor: (t) => (t.name === 'h.0.attn.c_attn.weight' ? { ...t, stride: [1, 16] } : t) }), 'ERR_VALUE',
      /^loadModel: h\.0\.attn\.c_attn\.weight: stride \(1, 16\) is not its shape's contiguous row-major one \(48, 1\); only contiguous tensors are read$/);
    // a dimension of 1 takes any stride, as torch's is_contiguous has it
    const ok = bin({ tensor: (t) => (t.name === 'h.0.attn.bias' ? { ...t, stride: [7, 0, 24, 1] } : t) });
    (await engine.loadModel(ok, { config: ck.config })).destroy();
    await refused(bin({ tensor: (t) => (t.name === 'h.0.attn.bias' ? { ...t, stride: [576, 576, 1, 24] } : t) }), 'ERR_VALUE', /h\.0\.attn\.bias: stride \(576, 576, 1, 24\)/);
  });

  test('a file cut short, anywhere', async () => {
    const b = bin();
    for (const n of [b.length - 1, b.length - 22, b.length >> 1, 100, 30]) {
      await refused(b.slice(0, n), 'ERR_VALUE', /^loadModel: zip: (no end record|a central directory past the end of the file|too short)/);
    }
  });

  test('a compressed entry, a storage or data.pkl', async () => {
    const deflated = (name) => bin({ entries: (list) => list.map((e) => (e.name === name ? { ...e, method: 8 } : e)) });
    await refused(deflated('pytorch_model/data/0'), 'ERR_VALUE', /^loadModel: zip: pytorch_model\/data\/0 is compressed \(method 8\); a checkpoint's entries are stored$/);
    await refused(deflated('pytorch_model/data.pkl'), 'ERR_VALUE', /zip: pytorch_model\/data\.pkl is compressed \(method 8\)/);
  });

  test('a big-endian file (its byteorder entry)', async () => {
    const big = bin({ entries: (list) => list.map((e) => (e.name.endsWith('/byteorder') ? { ...e, bytes: new TextEncoder().encode('big') } : e)) });
    await refused(big, 'ERR_VALUE', /^loadModel: zip: its byteorder entry is not "little"; only little-endian files are read$/);
  });

  test('a name twice; no config', async () => {
    const b = pickled((p) => replaceBytes(p, 'wpe.weight', 'wte.weight'));
    await refused(b, 'ERR_VALUE', /^loadModel: wte\.weight: the state dict names it twice$/);
    await rejectsCode(engine.loadModel(bin()), 'ERR_ARG', /this is a pytorch_model\.bin checkpoint; pass its config\.json too/);
  });
});

// ---- openModel's fallback ------------------------------------------------------------------------

describe('openModel: a revision without model.safetensors opens from its pytorch_model.bin', () => {
  let engine, hub, scratch;
  const gpt2 = gpt2Checkpoint({ seed: 31 });
  const neox = neoxCheckpoint({ seed: 32, buffers: true });
  const BIN = 'pytorch_model.bin';
  before(async () => {
    engine = await loadEngine({ threads: 1 });
    hub = await startHub({
      'test-org/gpt2-bin': { main: { 'config.json': JSON.stringify(gpt2.config), [BIN]: torchFile(gpt2.tensors) } },
      'test-org/pythia-bin': {
        step1000: { 'config.json': JSON.stringify(neox.config), [BIN]: torchFile(safetensorsTensors(neox.bytes), { metadata: true }) },
        main: { 'config.json': JSON.stringify(neox.config), 'model.safetensors': neox.bytes, [BIN]: new Uint8Array(10) },
      },
      'test-org/no-weights': { main: { 'config.json': JSON.stringify(gpt2.config) } },
      'test-org/bad-bin': { main: { 'config.json': JSON.stringify(gpt2.config), [BIN]: torchFile(gpt2.tensors, { pickle: (p) => replaceBytes(p, 'torch._utils\n_rebuild_tensor_v2\n', 'os\nsystem\n') }) } },
    }, { lfs: ['model.safetensors', BIN] });
    scratch = await mkdtemp(path.join(tmpdir(), 'attnlab-torch-'));
  });
  after(async () => {
    await hub.close();
    await rm(scratch, { recursive: true, force: true });
  });

  test('GPT-2: model.safetensors answers 404, pytorch_model.bin is fetched from the store, the logits loadModel gives', async () => {
    hub.requests.length = 0;
    const m = await engine.openModel('test-org/gpt2-bin', { hub: hub.url });
    try {
      assert.equal(m.source.files['model.safetensors'], undefined);
      assert.equal(m.source.files[BIN].from, 'network');
      const asked = (file) => hub.requestsFor(file).map((r) => `${r.server} ${r.method}`);
      assert.deepEqual(asked('model.safetensors'), ['hub HEAD']);
      assert.deepEqual(asked(BIN), ['hub HEAD', 'store GET']);
      assert.deepEqual(Array.from(logitsOf(m)), (await logits(engine, gpt2.bytes, gpt2.config)).data);
    } finally {
      m.destroy();
    }
  });

  test('Pythia\'s step revision: fetched, kept, reopened from what was kept with no request', async () => {
    const cache = path.join(scratch, 'kept');
    const want = (await logits(engine, neox.bytes, neox.config)).data;
    const first = await engine.openModel('test-org/pythia-bin', { hub: hub.url, revision: 'step1000', cache });
    assert.equal(first.source.kept, true);
    assert.deepEqual(Array.from(logitsOf(first)), want);
    first.destroy();
    hub.requests.length = 0;
    const again = await engine.openModel('test-org/pythia-bin', { hub: hub.url, revision: 'step1000', cache });
    try {
      assert.equal(again.source.files[BIN].from, 'kept');
      assert.deepEqual(hub.requests, [], 'no request');
      assert.deepEqual(Array.from(logitsOf(again)), want);
    } finally {
      again.destroy();
    }
    const [kept] = await engine.keptModels({ cache });
    assert.deepEqual(Object.keys(kept.files).sort(), ['config.json', BIN, 'tokenizer.json'].sort());
    assert.equal(await engine.forgetModel('test-org/pythia-bin', 'step1000', { cache }), 1);
  });

  test('model.safetensors first where the revision has both', async () => {
    const m = await engine.openModel('test-org/pythia-bin', { hub: hub.url });
    try {
      assert.equal(m.source.files[BIN], undefined);
      assert.equal(m.source.files['model.safetensors'].from, 'network');
    } finally {
      m.destroy();
    }
  });

  test('neither file: a 404 naming both; a refused pytorch_model.bin: the reader\'s error naming the file', async () => {
    await rejectsCode(engine.openModel('test-org/no-weights', { hub: hub.url }), 'ERR_LOAD',
      /^openModel: http:\/\/127\.0\.0\.1:\d+\/test-org\/no-weights\/resolve\/main\/model\.safetensors: HTTP 404: no such file \(nor pytorch_model\.bin\)$/);
    await rejectsCode(engine.openModel('test-org/bad-bin', { hub: hub.url }), 'ERR_VALUE',
      /^openModel: test-org\/bad-bin\/pytorch_model\.bin: data\.pkl: GLOBAL \(0x63\) at byte \d+: the global os system is not one a state dict uses$/);
  });
});
