// engine.loadModel(bytes) on both builds: each shipped model (web/models/)
// and each kind's saved file (seq2seq, image model, transformer) loads into the class of its kind, as its own
// loader would load it; junk, truncated files, other attnlab files and wrong
// types reject with an AttnlabError with a code, leaving the heap as it was;
// a seq2seq file that passes the header checks but fails its probe pass is
// rejected without growing WASM memory past its own length + 1 MB.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { gunzipSync } from 'node:zlib';
import { AttnlabError, Seq2SeqModel, TransformerModel, VisionModel } from '../../web/engine/index.js';
import { mulberry32, withEngines } from './builds.mjs';

const dir = new URL('../../web/models/', import.meta.url);
const manifest = JSON.parse(await readFile(new URL('models.json', dir), 'utf8'));
const shipped = await Promise.all(Object.entries(manifest.models).map(async ([name, spec]) => ({
  name, spec, bytes: new Uint8Array(await readFile(new URL(spec.file, dir))),
})));
const CLASSES = { seq2seq: Seq2SeqModel, vision: VisionModel, transformer: TransformerModel };

const ascii = (text) => new TextEncoder().encode(text);
const tagged = (tag, rest = 64) => {
  const b = new Uint8Array(8 + rest).fill(7);
  b.set(ascii(tag));
  b[7] = 0;
  return b;
};

// ---- a seq2seq file edited in place (include/attnlab/trainer.h: its layout) ----------------------
const u32 = (b, at) => (b[at] | b[at + 1] << 8 | b[at + 2] << 16 | b[at + 3] << 24) >>> 0;
const put32 = (b, at, v) => { for (let i = 0; i < 4; i++) b[at + i] = (v >>> (8 * i)) & 0xff; };
function fnv1a(b, from, to) {
  let h = 2166136261;
  for (let i = from; i < to; i++) h = Math.imul(h ^ b[i], 16777619) >>> 0;
  return h;
}
/** Where the model starts: magic, version, task (4 x i32), text length, text, u64 stream. */
const modelAt = (b) => 40 + u32(b, 28);
/** The model's checksum (its own bytes) and the file's, recomputed. */
function fixChecksums(b) {
  put32(b, b.length - 8, fnv1a(b, modelAt(b), b.length - 8));
  put32(b, b.length - 4, fnv1a(b, 0, b.length - 4));
  return b;
}

/** A copy-task file with inputs of up to n symbols: the task's and the model's lengths (no weight depends on them). */
function withLengths(bytes, n) {
  const b = bytes.slice(), m = modelAt(b);
  put32(b, 24, n); // the task's max_len
  put32(b, m + 12 + 4 * 9, n); // max_in
  put32(b, m + 12 + 4 * 10, n + 1); // max_out: the copy and its EOS
  return fixChecksums(b);
}

/**
 * Weights whose forward pass is finite but whose gradient is not: zero embeddings and biases
 * keep every state at 0, and the decoder's recurrent weights of +-1e6 (within the file limit)
 * multiply the gradient by about 1e6 per step back in time. Tensors in the parameter table's
 * order (src/models/seq2seq.c); the sum must be the file's parameter count.
 */
function probeFails(bytes) {
  const b = bytes.slice(), m = modelAt(b), field = (i) => u32(b, m + 12 + 4 * i) | 0;
  const [cell, layers, bidirectional, E, H, , attnHidden, inVocab, outVocab] = [0, 1, 2, 3, 4, 5, 6, 7, 8].map(field);
  const gates = [1, 3, 4][cell], D = H * (bidirectional ? 2 : 1), A = attnHidden || D;
  const cellOf = (input, h, big) => [[input * gates * h], [h * gates * h, big], [gates * h, 'zero'], [gates * h, 'zero']];
  const tensors = [[inVocab * E, 'zero']];
  for (let l = 0; l < layers; l++) for (let d = 0; d < (bidirectional ? 2 : 1); d++) tensors.push(...cellOf(l ? D : E, H));
  tensors.push([outVocab * E, 'zero'], ...cellOf(E, D, 'big'), [A * D], [A * D], [A], [2 * D * D], [D, 'zero'], [D * outVocab], [outVocab]);
  assert.equal(tensors.reduce((n, [count]) => n + count, 0), u32(b, m + 76), 'the parameter table as the file counts it');
  const view = new DataView(b.buffer, b.byteOffset), rng = mulberry32(9);
  let at = m + 84;
  for (const [count, kind] of tensors) {
    for (let i = 0; i < count; i++, at += 4) {
      if (kind === 'zero') view.setFloat32(at, 0, true);
      else if (kind === 'big') view.setFloat32(at, rng() < 0.5 ? -1e6 : 1e6, true);
    }
  }
  return fixChecksums(b);
}

async function rejection(promise) {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  return null;
}

/** What a model reads: a translation or an image's reading, for comparing two loads. */
function reading(m) {
  if (m.kind === 'vision') {
    const [example] = m.examples({ count: 1, seed: 4 });
    return m.predict(example.image);
  }
  if (m.kind === 'transformer') return m.inspect(m.examples({ count: 1, seed: 4 })[0].input);
  const [example] = m.examples({ count: 1, seed: 4 });
  return m.translate(example.input);
}

for (const { name, skip, engine } of await withEngines()) {
  describe(`engine.loadModel (${name})`, { skip }, () => {
    test('each shipped model loads into its kind, as its own loader loads it', async () => {
      for (const { name: file, spec, bytes } of shipped) {
        const m = await engine.loadModel(bytes);
        assert.ok(m instanceof CLASSES[spec.kind], `${file}: a ${CLASSES[spec.kind].name}`);
        assert.equal(m.kind, spec.kind, file);
        assert.equal(m.config.task, spec.options.task, file);
        // the transformer has no loader of its own: a second engine.loadModel stands in
        const direct = spec.kind === 'vision' ? await engine.loadVisionModel(bytes)
          : spec.kind === 'seq2seq' ? engine.loadSeq2Seq(bytes) : await engine.loadModel(bytes);
        assert.deepEqual(reading(m), reading(direct), `${file}: reads as the ${spec.kind} loader's model`);
        assert.deepEqual(m.save(), bytes, `${file}: saves the same bytes`);
        const fromBuffer = await engine.loadModel(bytes.slice().buffer);
        assert.equal(fromBuffer.kind, spec.kind, `${file} as an ArrayBuffer`);
        for (const x of [m, direct, fromBuffer]) x.destroy();
      }
    });

    test("each kind's saved file comes back as that kind", async () => {
      const made = [
        engine.createSeq2Seq({ task: 'copy', minLength: 2, maxLength: 4, hidden: 8, embed: 4, batch: 8 }),
        await engine.createVisionModel({ task: 'centered', channels: [2], hidden: 8, batch: 4 }),
        await engine.createTransformer({ task: 'reverse', layers: 1, heads: 2, dModel: 8, dFF: 8, context: 16, positional: 'rope', batch: 4 }),
      ];
      for (const m of made) {
        m.train({ steps: 1 });
        const back = await engine.loadModel(m.save());
        assert.equal(back.constructor, m.constructor);
        assert.equal(back.steps, 1);
        assert.deepEqual(reading(back), reading(m));
        if (m.kind === 'seq2seq') { // loaded with one row: a beam of 4 grows it
          const [example] = m.examples({ count: 1, seed: 4 });
          assert.deepEqual(back.translate(example.input, { beam: 4 }), m.translate(example.input, { beam: 4 }));
        }
        back.destroy();
        m.destroy();
      }
    });

    test('junk, truncated files and files that are not models reject with ERR_VALUE; the heap is as it was', async () => {
      await engine.loadModel(shipped.find((s) => s.spec.kind === 'vision').bytes).then((m) => m.destroy()); // the digit set loaded
      const base = engine.heapUsed();
      const rng = mulberry32(3);
      const digits = gunzipSync(await readFile(new URL('../../web/data/mnist.bin.gz', import.meta.url)));
      const cases = [
        ['random bytes', Uint8Array.from({ length: 500 }, () => Math.floor(rng() * 256)), /not an attnlab model file/],
        ['JSON text', ascii('{"model": "reverse"}'), /not an attnlab model file/],
        ['one byte', Uint8Array.of(65), /not an attnlab model file/],
        ['a tag without its NUL', ascii('ATNLTRNX and more'), /not an attnlab model file/],
        ['a bare seq2seq network', tagged('ATNLS2S'), /bare seq2seq network/],
        ['the digit set', digits.subarray(0, 4096), /digit set/],
        ['an attnlab file of an unknown kind', tagged('ATNLXYZ'), /ATNLXYZ is an attnlab file of a kind this engine does not load/],
        ['a tag alone', tagged('ATNLTRN', 0), /truncated|damaged|too short|not an attnlab/],
        ['an image-model tag on junk', tagged('ATNLVIS', 100), /.+/],
        ['a transformer tag on junk', tagged('ATNLTFM', 100), /.+/],
        ['a transformer tag alone', tagged('ATNLTFM', 0), /truncated/],
        ['empty', new Uint8Array(0), /empty/],
      ];
      for (const { name: file, bytes } of shipped) {
        for (const cut of [7, 8, 12, 40, bytes.length >> 1, bytes.length - 1]) {
          cases.push([`${file} cut to ${cut} bytes`, bytes.slice(0, cut), /.+/]);
        }
        const flipped = bytes.slice();
        flipped[flipped.length >> 1] ^= 0x5a;
        cases.push([`${file} with a byte changed`, flipped, /checksum|damaged|.+/]);
      }
      for (const [what, bytes, pattern] of cases) {
        const err = await rejection(engine.loadModel(bytes));
        assert.ok(err instanceof AttnlabError, `${what}: rejected with ${err}`);
        assert.equal(err.code, 'ERR_VALUE', `${what}: ${err.message}`);
        assert.match(err.message, pattern, what);
        assert.equal(engine.heapUsed(), base, `${what}: heap as it was`);
      }
    });

    test('a seq2seq file whose probe pass fails grows memory by at most its length + 1 MB', async () => {
      // The configuration whose rows are largest against its weights: the longest inputs and
      // outputs (copy, 63 letters: 63 in, 64 out), two bidirectional LSTM layers, additive
      // attention. Its weights are finite and in range, so the file passes every header check
      // and reaches the allocation; the loader must reject it after its probe pass on one row,
      // not after making the rows of a batch.
      const opts = { task: 'copy', alphabet: 'letters', minLength: 2, maxLength: 3, cell: 'lstm', layers: 2,
        bidirectional: true, embed: 64, hidden: 64, attention: 'additive', batch: 1, seed: 5 };
      const made = engine.createSeq2Seq(opts);
      const short = made.save();
      made.destroy();
      // the same weights load from the short file (and the heap has held them before measuring)
      (await engine.loadModel(short)).destroy();
      const long = probeFails(withLengths(short, 63));
      const mem0 = engine.heap.exports.memory.buffer.byteLength, heap0 = engine.heapUsed();
      const err = await rejection(engine.loadModel(long));
      assert.ok(err instanceof AttnlabError && err.code === 'ERR_VALUE', `rejected with ${err}`);
      assert.match(err.message, /probe input is not finite/);
      const grew = engine.heap.exports.memory.buffer.byteLength - mem0;
      assert.ok(grew <= long.length + (1 << 20), `WASM memory grew ${(grew / 2 ** 20).toFixed(1)} MB for a file of ${(long.length / 2 ** 20).toFixed(1)} MB`);
      assert.equal(engine.heapUsed(), heap0, 'heap as it was');
    });

    test('wrong types reject with ERR_ARG naming loadModel', async () => {
      const revoked = Proxy.revocable(new Uint8Array(8), {});
      revoked.revoke();
      const wrong = ['web/models/dates.s2s', 42, null, undefined, {}, [65, 84, 78, 76], new Int8Array(16), new DataView(new ArrayBuffer(16)),
        new Uint16Array(16), 10n, Symbol('file'), new Proxy(shipped[0].bytes, {}), revoked.proxy, new SharedArrayBuffer(16)];
      for (const value of wrong) {
        const err = await rejection(engine.loadModel(value));
        assert.ok(err instanceof AttnlabError, `${String(typeof value)}: rejected with ${err}`);
        assert.equal(err.code, 'ERR_ARG', err.message);
        assert.match(err.message, /^loadModel: /);
      }
    });
  });
}
