// Mutation suite over saved model files (the seed corpus of the loader's
// fuzzer, tests/fuzz/corpus/model_load/: seq2seq models with their task,
// *.model, image models, *.vis, and transformers, *.tfm): flipped bits, truncations, extensions,
// overwritten header fields (0, 1, -1, 0x7FFFFFFF, 0x80000000, 65536) and
// weights set to NaN, Infinity or 3e38, each as damaged and again with the
// checksums recomputed, so the loader's field checks are reached too. Every
// mutant must either be rejected with an AttnlabError carrying a code, or
// load into a model that works: its step count is a count, it translates (or
// predicts, or inspects) with finite attention and saliency, trains a step,
// saves and loads again. The WASM heap returns to its baseline after each mutant, and
// loading may not grow WASM memory by more than the file's length + 1 MB.
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { loadEngine } from '../../web/engine/index.js';
import { mulberry32 } from './builds.mjs';

const DIR = new URL('../fuzz/corpus/model_load/', import.meta.url);
const FILES = readdirSync(DIR).filter((f) => /\.(model|vis|tfm)$/.test(f)).sort();
const MAX_LOAD_GROWTH = 1 << 20; // bytes of WASM memory a load may add beyond the file's own length
const VALUES = [0, 1, 0xffffffff, 0x7fffffff, 0x80000000, 65536];
const WEIGHTS = [NaN, Infinity, 3e38];

// unsigned: a field with its top bit set (a mutant's 0x80000000) is a large offset, not a negative one
const u32 = (b, at) => (b[at] | b[at + 1] << 8 | b[at + 2] << 16 | b[at + 3] << 24) >>> 0;
const i32 = (b, at) => u32(b, at) | 0;
function put32(b, at, v) { for (let i = 0; i < 4; i++) b[at + i] = (v >>> (8 * i)) & 0xff; }
function putF32(b, at, x) { new DataView(b.buffer, b.byteOffset).setFloat32(at, x, true); }
function fnv1a(b, from, to) {
  let h = 2166136261;
  for (let i = from; i < to; i++) h = Math.imul(h ^ b[i], 16777619) >>> 0;
  return h;
}

/**
 * The three formats (include/attnlab/trainer.h, vision.h, transformer.h): their
 * header fields [name, offset], where the parameters start, the checksums.
 */
const SEQ2SEQ = {
  // magic, version, task (4 x i32), text length, text, u64 stream, then the model: magic, version, 13 x i32, ...
  modelStart: (b) => 40 + u32(b, 28),
  fixChecksums(b) {
    const n = b.length, m = this.modelStart(b);
    if (n < 40) return b;
    if (m + 8 <= n) put32(b, n - 8, fnv1a(b, m, n - 8));
    put32(b, n - 4, fnv1a(b, 0, n - 4));
    return b;
  },
  fields(b) {
    const m = this.modelStart(b);
    const names = ['cell', 'layers', 'bidirectional', 'embed', 'hidden', 'attention', 'attn_hidden', 'in_vocab',
      'out_vocab', 'max_in', 'max_out', 'fixed_in', 'batch'];
    return [
      ['file version', 8], ['task kind', 12], ['task alphabet', 16], ['task min_len', 20], ['task max_len', 24],
      ['text length', 28], ['model version', m + 8],
      ...names.map((name, i) => [`model ${name}`, m + 12 + 4 * i]),
      ['model seed (low)', m + 64], ['model steps', m + 72], ['model parameter count (low)', m + 76],
      ['model parameter count (high)', m + 80], ['first parameter', m + 84],
    ];
  },
  // the embedding of the second input symbol (the probe a loaded model is run on reads only the first)
  weightsAt(b) {
    const m = this.modelStart(b), params = m + 84, embed = i32(b, m + 12 + 4 * 3);
    return [params, params + 4 * 2 * embed + 4, b.length - 12];
  },
};

const VISION = {
  // magic, version, 4 x i32 task, 13 x i32 model, f64 entropy, u64 seed, u32 steps, T x f64 baselines,
  // u64 sampling stream, u64 training stream, u64 P, P x f32, u32 checksum
  steps: (b) => i32(b, 12 + 4 * 14),
  paramsAt(b) { return 100 + 8 * this.steps(b) + 24; },
  fixChecksums(b) {
    if (b.length >= 12) put32(b, b.length - 4, fnv1a(b, 0, b.length - 4));
    return b;
  },
  fields(b) {
    const names = ['task kind', 'clutter', 'min digits', 'max digits', 'rows', 'cols', 'layers', 'channels 0',
      'channels 1', 'channels 2', 'cell', 'hidden', 'attention', 'mode', 'steps', 'sequence', 'batch'];
    const p = this.paramsAt(b);
    return [
      ['file version', 8], ...names.map((name, i) => [name, 12 + 4 * i]), ['entropy (high)', 84], ['seed (low)', 88],
      ['optimiser steps', 96], ['baseline 0 (high)', 104], ['parameter count (low)', p - 8],
      ['parameter count (high)', p - 4], ['first parameter', p],
    ];
  },
  weightsAt(b) { const p = this.paramsAt(b); return [p, p + 4 * 37, b.length - 8]; },
};

const TRANSFORMER = {
  // magic, version, 11 x i32 (task ... steps), u64 seed, u64 training stream, u32 text length, text,
  // u64 P, P x f32, u32 checksum
  paramsAt: (b) => 84 + u32(b, 72),
  fixChecksums: VISION.fixChecksums,
  fields(b) {
    const names = ['task', 'layers', 'heads', 'dModel', 'dFF', 'context', 'positional', 'score', 'batch', 'vocabulary', 'steps'];
    const p = this.paramsAt(b);
    return [
      ['file version', 8], ...names.map((name, i) => [name, 12 + 4 * i]), ['seed (high)', 60], ['text length', 72],
      ['first text byte', 76], ['parameter count (low)', p - 8], ['parameter count (high)', p - 4], ['first parameter', p],
    ];
  },
  weightsAt(b) { const p = this.paramsAt(b); return [p, p + 4 * 9, b.length - 8]; },
};

const KINDS = {
  model: { format: SEQ2SEQ, load: (engine, b) => engine.loadSeq2Seq(b) },
  vis: { format: VISION, load: (engine, b) => engine.loadVisionModel(b) },
  tfm: { format: TRANSFORMER, load: (engine, b) => engine.loadModel(b) },
};

function* mutants(name, bytes, format, rand) {
  for (let i = 0; i < 16; i++) {
    const b = bytes.slice(), at = Math.floor(rand() * b.length), bit = Math.floor(rand() * 8);
    b[at] ^= 1 << bit;
    yield [`${name}: bit ${bit} of byte ${at} flipped`, b];
    yield [`${name}: bit ${bit} of byte ${at} flipped, checksums fixed`, format.fixChecksums(b.slice())];
  }
  for (const n of [0, 7, 8, 11, 12, 39, 40, 41, 84, 100, Math.floor(bytes.length / 2), bytes.length - 5, bytes.length - 4, bytes.length - 1]) {
    yield [`${name}: truncated to ${n} bytes`, bytes.slice(0, n)];
    if (n >= 40) yield [`${name}: truncated to ${n} bytes, checksums fixed`, format.fixChecksums(bytes.slice(0, n))];
  }
  for (const extra of [1, 4, 64, 4096]) {
    const b = new Uint8Array(bytes.length + extra);
    b.set(bytes);
    for (let i = bytes.length; i < b.length; i++) b[i] = Math.floor(rand() * 256);
    yield [`${name}: ${extra} bytes appended`, b];
    yield [`${name}: ${extra} bytes appended, checksums fixed`, format.fixChecksums(b.slice())];
  }
  for (const [field, at] of format.fields(bytes)) {
    if (at + 4 > bytes.length) continue;
    for (const v of VALUES) {
      const b = bytes.slice();
      put32(b, at, v);
      yield [`${name}: ${field} = 0x${v.toString(16)}, checksums fixed`, format.fixChecksums(b)];
    }
  }
  for (const at of format.weightsAt(bytes)) {
    for (const x of WEIGHTS) {
      const b = bytes.slice();
      putF32(b, at, x);
      yield [`${name}: the weight at byte ${at} = ${x}, checksums fixed`, format.fixChecksums(b)];
    }
  }
}

const finite = (data) => Array.prototype.every.call(data, Number.isFinite);

/** A 28 x 28 stroke for image models (placed on each task's canvas). */
const STROKE = { rows: 28, cols: 28, data: Float32Array.from({ length: 784 }, (_, i) => (i % 28 === 14 && i > 112 && i < 672 ? 1 : 0)) };

/** What a loaded model must do: [what, fn] pairs; fn throws on a finding. */
function uses(engine, model, vision) {
  const read = model.kind === 'transformer'
    ? () => {
      const [{ input }] = model.examples({ count: 1 });
      const s = model.inspect(input);
      if (!s.attention.flat().every((a) => finite(a.data))) throw new Error('inspect: attention is not finite');
      if (!s.predictions.every((row) => row.every((x) => Number.isFinite(x.p)))) throw new Error('inspect: predictions are not finite');
    }
    : vision
    ? () => {
      const p = model.predict(STROKE);
      // the retina has no attention map: its glimpses are whole canvas pixels
      const fine = (s) => (s.weights ? finite(s.weights.data) : Number.isInteger(s.location.x) && Number.isInteger(s.location.y));
      if (!p.steps.every(fine)) throw new Error('predict: attention weights (or glimpses) are not finite');
      if (!finite(model.saliency(STROKE).data)) throw new Error('saliency is not finite');
    }
    : () => {
      const text = model.inputAlphabet.slice(0, 3) || 'a';
      const t = model.translate(model.config.fixedInput ? text.repeat(64).slice(0, model.config.fixedInput) : text);
      if (!finite(t.alignment.data)) throw new Error('translate: the alignment is not finite');
      if (!finite(model.saliency(text.slice(0, model.config.fixedInput || 3)).data)) throw new Error('saliency is not finite');
    };
  return [
    ['read', read],
    ['train', () => model.train({ steps: 1, batch: Math.min(2, model.config.batch) })],
    ['save+load', async () => (await engine.loadModel(model.save())).destroy()],
  ];
}

describe('model files: mutated bytes load cleanly or fail with an AttnlabError', () => {
  let engine;
  before(async () => { engine = await loadEngine({ simd: false }); });

  test(`mutants of ${FILES.length} saved models (${FILES.filter((f) => f.endsWith('.vis')).length} image models, ${FILES.filter((f) => f.endsWith('.tfm')).length} transformers)`, async () => {
    const findings = []; // { mutant, detail }
    let count = 0;
    const rand = mulberry32(7);
    const memory = () => engine.heap.exports.memory.buffer.byteLength;
    for (const file of FILES) {
      const vision = file.endsWith('.vis');
      const { format, load: loader } = KINDS[file.slice(file.lastIndexOf('.') + 1)];
      const load = (b) => loader(engine, b);
      const bytes = new Uint8Array(readFileSync(new URL(file, DIR)));
      (await load(bytes)).destroy(); // the file itself loads (and the digit set is in the heap before measuring)
      for (const [mutant, b] of mutants(file, bytes, format, rand)) {
        count++;
        const heap0 = engine.heapUsed(), mem0 = memory();
        let model = null;
        try {
          model = await load(b);
        } catch (err) {
          if (err.name !== 'AttnlabError' || typeof err.code !== 'string') findings.push({ mutant, detail: String(err) });
        }
        if (memory() - mem0 > b.length + MAX_LOAD_GROWTH) {
          findings.push({ mutant, detail: `loading grew WASM memory ${mem0 >> 20} -> ${memory() >> 20} MB` });
        }
        if (model) {
          const steps = vision ? model.steps : model.steps;
          if (!(Number.isInteger(steps) && steps >= 0)) findings.push({ mutant, detail: `loads with steps = ${steps}` });
          for (const [what, fn] of uses(engine, model, vision)) {
            try {
              await fn();
            } catch (err) {
              findings.push({ mutant, detail: `loads, then ${what} fails: ${err.message}` });
            }
          }
          model.destroy();
        }
        if (engine.heapUsed() !== heap0) findings.push({ mutant, detail: `heap ${heap0} -> ${engine.heapUsed()}` });
      }
    }
    assert.ok(count > 1500, `only ${count} mutants`);
    assert.deepEqual(findings.slice(0, 10), [], `${findings.length} mutants misbehaved`);
  });
});
