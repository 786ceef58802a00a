// pytorch_model.bin written by the tests themselves, byte for byte as
// torch.save writes a state dict (PyTorch 2's zip): the entries
// <archive>/data.pkl, .format_version, .storage_alignment, byteorder,
// data/<key> (one a storage, its bytes 64-byte aligned by an "FB" extra
// field), version and .data/serialization_id, all stored (method 0), then the
// central directory and the end record. data.pkl is the pickle (protocol 2)
// Python's pickler writes for an OrderedDict of name -> tensor, written here
// opcode by opcode as pickletools names them (no Python, no torch):
//   PROTO 2, GLOBAL collections OrderedDict, EMPTY_TUPLE, REDUCE, MARK,
//   per tensor: BINUNICODE name, GLOBAL torch._utils _rebuild_tensor_v2,
//     MARK (MARK 'storage' GLOBAL torch.<Dtype>Storage key 'cpu' numel TUPLE)
//     BINPERSID offset (size) (stride) NEWFALSE OrderedDict() TUPLE REDUCE,
//   SETITEMS, STOP; every value memoized (BINPUT) as the pickler does, and met
//   again by BINGET (the globals, 'storage', 'cpu').
// The options make it write what other writers do (a plain dict, the
// state dict's _metadata, one storage for all, zip64's end record) and the
// damaged or hostile files the tests need.
import { DTYPE_SIZE } from './gpt2-checkpoint.mjs';

const STORAGE_TYPES = { F32: 'FloatStorage', F16: 'HalfStorage', BF16: 'BFloat16Storage', BOOL: 'BoolStorage', U8: 'ByteStorage' };
const SIZE = { ...DTYPE_SIZE, BOOL: 1, U8: 1 };

/** pickletools' opcodes used here. */
export const OP = Object.freeze({
  PROTO: 0x80, STOP: 0x2e, MARK: 0x28, EMPTY_TUPLE: 0x29, EMPTY_DICT: 0x7d, TUPLE: 0x74, TUPLE1: 0x85, TUPLE2: 0x86,
  TUPLE3: 0x87, BINUNICODE: 0x58, BININT: 0x4a, BININT1: 0x4b, BININT2: 0x4d, LONG1: 0x8a, BINPUT: 0x71,
  LONG_BINPUT: 0x72, BINGET: 0x68, LONG_BINGET: 0x6a, GLOBAL: 0x63, REDUCE: 0x52, BINPERSID: 0x51, SETITEM: 0x73,
  SETITEMS: 0x75, NEWFALSE: 0x89, NEWTRUE: 0x88, NONE: 0x4e, BUILD: 0x62,
});

const utf8 = (s) => new TextEncoder().encode(s);

/** Byte arrays one after another, as one (its own buffer, from byte 0). */
const concat = (parts) => new Uint8Array(Buffer.concat(parts));

/** A protocol-2 pickler of the few values a state dict holds, memoizing as Python's does. */
class Pickler {
  bytes = [];
  memo = new Map(); // a value's identity (its key here) -> memo index

  op(...b) {
    this.bytes.push(...b);
  }

  u32(n) {
    this.op(n & 0xff, (n >>> 8) & 0xff, (n >>> 16) & 0xff, (n >>> 24) & 0xff);
  }

  /** The next memo index for key (BINPUT, LONG_BINPUT past 255). */
  put(key) {
    const i = this.memo.size;
    this.memo.set(key ?? Symbol('unshared'), i);
    if (i < 256) this.op(OP.BINPUT, i);
    else {
      this.op(OP.LONG_BINPUT);
      this.u32(i);
    }
  }

  /** BINGET of a memoized key; false if it is not memoized. */
  get(key) {
    if (!this.memo.has(key)) return false;
    const i = this.memo.get(key);
    if (i < 256) this.op(OP.BINGET, i);
    else {
      this.op(OP.LONG_BINGET);
      this.u32(i);
    }
    return true;
  }

  /** A str: BINUNICODE; shared (the same object met again, as a constant is) when key is given. */
  str(s, key) {
    if (key && this.get(key)) return;
    const b = utf8(s);
    this.op(OP.BINUNICODE);
    this.u32(b.length);
    this.op(...b);
    this.put(key);
  }

  /** An int as the pickler picks its opcode: BININT1, BININT2, BININT, else LONG1. */
  int(n) {
    if (n >= 0 && n < 256) this.op(OP.BININT1, n);
    else if (n >= 0 && n < 65536) this.op(OP.BININT2, n & 0xff, n >> 8);
    else if (n >= -(2 ** 31) && n < 2 ** 31) {
      this.op(OP.BININT);
      this.u32(n >>> 0);
    } else {
      const out = [];
      let v = BigInt(n);
      do {
        out.push(Number(BigInt.asUintN(8, v)));
        v >>= 8n;
      } while (!(v === 0n && !(out.at(-1) & 0x80)) && !(v === -1n && out.at(-1) & 0x80));
      this.op(OP.LONG1, out.length, ...out);
    }
  }

  global(module, name) {
    const key = `global:${module} ${name}`;
    if (this.get(key)) return;
    this.op(OP.GLOBAL, ...utf8(`${module}\n${name}\n`));
    this.put(key);
  }

  /** A tuple of items each written by write(item): EMPTY_TUPLE, TUPLE1/2/3 or MARK ... TUPLE, memoized. */
  tuple(items, write) {
    if (items.length === 0) {
      this.op(OP.EMPTY_TUPLE);
      return;
    }
    if (items.length > 3) this.op(OP.MARK);
    for (const x of items) write(x);
    this.op(items.length > 3 ? OP.TUPLE : [OP.TUPLE1, OP.TUPLE2, OP.TUPLE3][items.length - 1]);
    this.put();
  }

  /** collections.OrderedDict() */
  orderedDict() {
    this.global('collections', 'OrderedDict');
    this.op(OP.EMPTY_TUPLE, OP.REDUCE);
    this.put();
  }

  /** {key: value, ...} items as the pickler batches them: SETITEM for one, MARK ... SETITEMS for more. */
  items(entries, write) {
    if (entries.length === 1) {
      write(entries[0]);
      this.op(OP.SETITEM);
      return;
    }
    for (let i = 0; i < entries.length; i += 1000) {
      this.op(OP.MARK);
      for (const e of entries.slice(i, i + 1000)) write(e);
      this.op(OP.SETITEMS);
    }
  }
}

/** Row-major strides of a shape (a dimension of 0 counts as 1), as torch's contiguous() gives them. */
export const rowMajor = (shape) => shape.map((_, d) => shape.slice(d + 1).reduce((a, b) => a * Math.max(b, 1), 1));

/**
 * data.pkl of tensors [{ name, dtype, shape, key, offset, stride, numel }]:
 * the state dict's pickle. plainDict: a dict (transformers' shards) rather
 * than an OrderedDict; metadata: the state dict's _metadata set by BUILD.
 */
export function statePickle(tensors, { plainDict = false, metadata = false } = {}) {
  const p = new Pickler();
  p.op(OP.PROTO, 2);
  if (plainDict) {
    p.op(OP.EMPTY_DICT);
    p.put();
  } else {
    p.orderedDict();
  }
  const key = (t) => `key:${t.key}`;
  if (tensors.length) {
    p.items(tensors, (t) => {
      p.str(t.name);
      p.global('torch._utils', '_rebuild_tensor_v2');
      p.tuple([0, 1, 2, 3, 4, 5], (i) => {
        if (i === 0) { // persistent_load(('storage', type, key, location, numel))
          p.tuple(['storage', 'type', 'key', 'cpu', 'numel'], (x) => {
            if (x === 'type') p.global('torch', STORAGE_TYPES[t.dtype]);
            else if (x === 'key') p.str(t.key, key(t));
            else if (x === 'numel') p.int(t.numel);
            else p.str(x, `str:${x}`);
          });
          p.op(OP.BINPERSID); // the pickler memoizes no persistent id
        } else if (i === 1) p.int(t.offset);
        else if (i === 2) p.tuple(t.shape, (n) => p.int(n));
        else if (i === 3) p.tuple(t.stride, (n) => p.int(n));
        else if (i === 4) p.op(OP.NEWFALSE);
        else p.orderedDict();
      });
      p.op(OP.REDUCE);
      p.put();
    });
  }
  if (metadata) { // state: {'_metadata': OrderedDict([('', {'version': 1})])}
    p.op(OP.EMPTY_DICT);
    p.put();
    p.str('_metadata');
    p.orderedDict();
    p.str('');
    p.op(OP.EMPTY_DICT);
    p.put();
    p.str('version');
    p.int(1);
    p.op(OP.SETITEM, OP.SETITEM, OP.SETITEM, OP.BUILD);
  }
  p.op(OP.STOP);
  return new Uint8Array(p.bytes);
}

// ---- the zip ------------------------------------------------------------------------------

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

function crc32(bytes) {
  let c = 0xffffffff;
  for (const b of bytes) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/**
 * A zip of [{ name, bytes, method }] as PyTorch's writer lays it out: each
 * entry's data aligned to 64 bytes by an "FB" extra field in its local
 * header, stored; zip64: a zip64 end record and locator before the end
 * record (as miniz writes them for large files).
 */
export function zip(entries, { zip64 = false } = {}) {
  const parts = [], central = [];
  let at = 0;
  const push = (b) => {
    parts.push(b);
    at += b.length;
  };
  for (const e of entries) {
    const name = utf8(e.name), method = e.method ?? 0;
    const base = at + 30 + name.length + 4; // the extra field's own 4 bytes
    const pad = (64 - (base % 64)) % 64;
    const local = new Uint8Array(30 + name.length + 4 + pad), v = new DataView(local.buffer);
    const crc = crc32(e.bytes);
    v.setUint32(0, 0x04034b50, true);
    v.setUint16(4, 20, true);
    v.setUint16(8, method, true);
    v.setUint32(14, crc, true);
    v.setUint32(18, e.bytes.length, true);
    v.setUint32(22, e.bytes.length, true);
    v.setUint16(26, name.length, true);
    v.setUint16(28, 4 + pad, true);
    local.set(name, 30);
    v.setUint16(30 + name.length, 0x4246, true); // "FB"
    v.setUint16(32 + name.length, pad, true);
    central.push({ name, crc, size: e.bytes.length, method, offset: at });
    push(local);
    push(e.bytes);
  }
  const dirAt = at;
  for (const c of central) {
    const d = new Uint8Array(46 + c.name.length), v = new DataView(d.buffer);
    v.setUint32(0, 0x02014b50, true);
    v.setUint16(4, 20, true);
    v.setUint16(6, 20, true);
    v.setUint16(10, c.method, true);
    v.setUint32(16, c.crc, true);
    v.setUint32(20, c.size, true);
    v.setUint32(24, c.size, true);
    v.setUint16(28, c.name.length, true);
    v.setUint32(42, c.offset, true);
    d.set(c.name, 46);
    push(d);
  }
  const dirSize = at - dirAt;
  if (zip64) {
    const z = new Uint8Array(56 + 20), v = new DataView(z.buffer);
    v.setUint32(0, 0x06064b50, true);
    v.setBigUint64(4, 44n, true);
    v.setUint16(12, 45, true);
    v.setUint16(14, 45, true);
    v.setBigUint64(24, BigInt(central.length), true);
    v.setBigUint64(32, BigInt(central.length), true);
    v.setBigUint64(40, BigInt(dirSize), true);
    v.setBigUint64(48, BigInt(dirAt), true);
    v.setUint32(56, 0x07064b50, true);
    v.setBigUint64(64, BigInt(at), true);
    v.setUint32(72, 1, true);
    push(z);
  }
  const end = new Uint8Array(22), v = new DataView(end.buffer);
  v.setUint32(0, 0x06054b50, true);
  v.setUint16(8, zip64 ? 0xffff : central.length, true);
  v.setUint16(10, zip64 ? 0xffff : central.length, true);
  v.setUint32(12, zip64 ? 0xffffffff : dirSize, true);
  v.setUint32(16, zip64 ? 0xffffffff : dirAt, true);
  push(end);
  return concat(parts);
}

/**
 * pytorch_model.bin of tensors [{ name, dtype ('F32', 'F16', 'BF16', 'BOOL'),
 * shape, bytes }] (the list the safetensors writer takes), one storage each,
 * in list order, as torch.save writes it. Options:
 *   archive      the folder of its entries ('pytorch_model', as torch.save names it from the file)
 *   oneStorage   every tensor of a dtype a view into one storage of that dtype (offsets past 0)
 *   plainDict, metadata   as statePickle takes them
 *   zip64        a zip64 end record too
 *   tensor(t)    may rewrite a tensor's pickled fields ({ name, dtype, shape, key, offset, stride, numel })
 *   pickle(b)    may rewrite data.pkl's bytes
 *   entries(list) may rewrite the zip's entries ({ name, bytes, method })
 */
export function torchFile(tensors, { archive = 'pytorch_model', oneStorage = false, plainDict = false, metadata = false, zip64 = false,
  tensor = (t) => t, pickle = (b) => b, entries = (list) => list } = {}) {
  const storages = new Map(); // key -> bytes
  const fields = [];
  const pooled = new Map(); // dtype -> { key, parts, numel }
  for (const t of tensors) {
    const numel = t.bytes.length / SIZE[t.dtype];
    let key, offset = 0;
    if (oneStorage) {
      if (!pooled.has(t.dtype)) pooled.set(t.dtype, { key: String(pooled.size), parts: [], numel: 0 });
      const pool = pooled.get(t.dtype);
      key = pool.key;
      offset = pool.numel;
      pool.parts.push(t.bytes);
      pool.numel += numel;
    } else {
      key = String(storages.size);
      storages.set(key, t.bytes);
    }
    fields.push({ name: t.name, dtype: t.dtype, shape: t.shape, key, offset, stride: rowMajor(t.shape), numel });
  }
  for (const pool of pooled.values()) {
    storages.set(pool.key, concat(pool.parts));
    for (const f of fields) if (f.key === pool.key) f.numel = pool.numel;
  }
  const pkl = pickle(statePickle(fields.map((f) => tensor({ ...f })), { plainDict, metadata }));
  const text = (s) => utf8(s);
  const list = [
    { name: `${archive}/data.pkl`, bytes: pkl },
    { name: `${archive}/.format_version`, bytes: text('1') },
    { name: `${archive}/.storage_alignment`, bytes: text('64') },
    { name: `${archive}/byteorder`, bytes: text('little') },
    ...[...storages].map(([key, bytes]) => ({ name: `${archive}/data/${key}`, bytes })),
    { name: `${archive}/version`, bytes: text('3\n') },
    { name: `${archive}/.data/serialization_id`, bytes: text('1234567890123456789012345678901234567890') },
  ];
  return zip(entries(list), { zip64 });
}

/** The tensors of a safetensors file, as [{ name, dtype, shape, bytes }] in header order (the writer's input). */
export function safetensorsTensors(file) {
  const view = new DataView(file.buffer, file.byteOffset, file.byteLength);
  const length = Number(view.getBigUint64(0, true));
  const header = JSON.parse(new TextDecoder().decode(file.subarray(8, 8 + length)));
  const data = file.subarray(8 + length);
  return Object.entries(header).filter(([name]) => name !== '__metadata__').map(([name, e]) => ({
    name, dtype: e.dtype, shape: e.shape, bytes: data.slice(e.data_offsets[0], e.data_offsets[1]),
  }));
}
