// Every public method of the engine and of the three model kinds, with hostile
// values in each argument position and each field it reads: a getter that
// throws, a Proxy whose traps throw, a transparent Proxy, a revoked Proxy,
// null, a BigInt, and an array-like whose length changes between reads. On
// both builds: every thrown value is an AttnlabError with a code, a call that
// throws leaves the heap where it was, and afterwards the engine and its
// models give the same results as before. Also: each array is read once
// (its length read once), so what reaches WASM is what was checked.
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { AttnlabError, loadEngine } from '../../web/engine/index.js';
import { withEngines } from './builds.mjs';
import { gpt2Checkpoint } from '../lib/gpt2-checkpoint.mjs';

const boom = () => {
  throw new Error('hostile');
};
const isObject = (v) => v !== null && typeof v === 'object';
const isTyped = (v) => ArrayBuffer.isView(v) && !(v instanceof DataView);
const isPlain = (v) => isObject(v) && !isTyped(v) && !(v instanceof Uint8Array);

/** An object whose fields (the valid value's, and those of arrays and matrices) all throw when read. */
function throwingGetters(valid) {
  const keys = isPlain(valid) ? Object.keys(valid) : [];
  const o = {};
  for (const k of new Set([...keys, 'length', '0', 'rows', 'cols', 'data'])) Object.defineProperty(o, k, { get: boom, enumerable: true });
  return o;
}

/** An array-like (an array proxy) whose length is the valid one at the first `honest` reads and 2^21 after. */
function growing(valid, honest = 1) {
  const items = Array.isArray(valid) ? [...valid] : isTyped(valid) ? Array.from(valid) : [valid, valid];
  let reads = 0;
  return new Proxy(items, {
    get(target, key, receiver) {
      if (key === 'length') return reads++ < honest ? target.length : 1 << 21;
      return Reflect.get(target, key, receiver) ?? items[0];
    },
  });
}

const HOSTILE = {
  'a getter that throws': throwingGetters,
  'a Proxy whose traps throw': (valid) => new Proxy(Array.isArray(valid) ? [] : {}, {
    get: boom, has: boom, ownKeys: boom, getOwnPropertyDescriptor: boom, getPrototypeOf: boom,
  }),
  'a transparent Proxy': (valid) => (isObject(valid) ? new Proxy(valid, {}) : new Proxy({ valueOf: () => valid }, {})),
  'a revoked Proxy': (valid) => {
    const r = Proxy.revocable(Array.isArray(valid) ? [] : {}, {});
    r.revoke();
    return r.proxy;
  },
  null: () => null,
  'a BigInt': () => 10n,
  'an array-like whose length changes': (valid) => growing(valid),
};

/**
 * Where a hostile value can go in a call's arguments: each argument, each
 * field of an options object or matrix (two levels down), the first row of
 * an array of rows.
 */
function paths(value, prefix = [], depth = 0) {
  const out = [prefix];
  if (depth >= 3) return out;
  if (isPlain(value) && !Array.isArray(value)) {
    for (const k of Object.keys(value)) out.push(...paths(value[k], [...prefix, k], depth + 1));
  } else if (Array.isArray(value) && value.length > 0 && isObject(value[0])) {
    out.push(...paths(value[0], [...prefix, 0], depth + 1));
  }
  return out;
}

/** A copy of args (arrays and plain objects copied along the path) with `value` at path. */
function replaced(args, path, value) {
  if (path.length === 0) return value;
  const [head, ...rest] = path;
  const copy = Array.isArray(args) ? [...args] : { ...args };
  copy[head] = replaced(args[head], rest, value);
  return copy;
}

const Q = [[0.1, 0.2], [0.3, -0.4]];
const K = { rows: 3, cols: 2, data: Float32Array.of(1, 0, 0, 1, 0.5, 0.5) };
const V = [[1, 2, 3], [4, 5, 6], [7, 8, 9]];
const S2S = { task: 'copy', alphabet: 'digits', minLength: 2, maxLength: 4, cell: 'gru', layers: 1, bidirectional: false,
  embed: 4, hidden: 8, attention: 'dot', attnHidden: 0, batch: 8, seed: 1 };
const VIS = { task: 'centered', digits: undefined, channels: [2, 4], cell: 'gru', hidden: 8, attention: 'scaled_dot', mode: 'soft',
  steps: 1, entropy: 0.01, clutter: 0, batch: 4, seed: 2 };
delete VIS.digits; // only the multi task takes digits
const MULTI = { task: 'multi', digits: [1, 2], channels: [2], hidden: 8, batch: 2, seed: 3 };
const TF = { task: 'induction', layers: 1, heads: 2, dModel: 8, dFF: 8, context: 12, positional: 'rope', score: 'scaled_dot', batch: 2, seed: 4 };
const image = () => {
  const data = new Array(12 * 10).fill(0);
  for (let r = 2; r < 10; r++) data[r * 10 + 5] = 1;
  return { rows: 12, cols: 10, data };
};
const TRAIN = (batch) => ({ steps: 1, batch, optimizer: 'adam', lr: 0.001, clip: 5 });

/** [what, target, method, valid arguments]: every public method that reads an argument. */
const calls = ({ s2sBytes, visBytes, tfBytes, tfWeights, gpt2 }) => [
  ['engine.attend', 'engine', 'attend', [{
    queries: Q, keys: K, values: V, score: 'additive', params: { Wq: [[1, 0], [0, 1]], Wk: [[0.5, 0], [0, 0.5]], v: [1, -1] },
    normalize: 'softmax', temperature: 1, mask: { keyLengths: [1, 3], causal: false }, outputs: ['weights', 'context'], copy: true,
  }]],
  ['engine.attend (general, views)', 'engine', 'attend', [{ queries: Q, keys: V.map((r) => r.slice(0, 2)), score: 'general', params: { W: [[1, 0], [0, 1]], beta: 1 }, copy: false }]],
  ['engine.selfAttention', 'engine', 'selfAttention', [{
    x: [[1, 0, 1, 0], [0, 1, 0, 1], [1, 1, 0, 0]], wq: [[1, 0], [0, 1], [1, 0], [0, 1]], wk: [[0, 1], [1, 0], [0, 1], [1, 0]],
    wv: [[1, 0], [0, 1], [1, 1], [0, 0]], wo: [[1, 0, 0], [0, 1, 0]], heads: 2, causal: true, score: 'scaled_dot',
  }]],
  ['engine.createSeq2Seq', 'engine', 'createSeq2Seq', [S2S]],
  ['engine.createSeq2Seq (pairs)', 'engine', 'createSeq2Seq', [{ task: 'pairs', pairs: 'ab\tba\nabc\tcba\n', hidden: 8, embed: 4, batch: 4 }]],
  ['engine.loadSeq2Seq', 'engine', 'loadSeq2Seq', [s2sBytes]],
  ['engine.createVisionModel', 'engine', 'createVisionModel', [VIS]],
  ['engine.createVisionModel (multi)', 'engine', 'createVisionModel', [MULTI]],
  ['engine.loadVisionModel', 'engine', 'loadVisionModel', [visBytes]],
  ['engine.loadModel', 'engine', 'loadModel', [s2sBytes]],
  ['engine.setParallelMinWork', 'engine', 'setParallelMinWork', [0]],
  ['seq2seq.train', 's2s', 'train', [TRAIN(4)]],
  ['seq2seq.evaluate', 's2s', 'evaluate', [{ split: 'test', count: 2 }]],
  ['seq2seq.translate', 's2s', 'translate', ['123', { beam: 2 }]],
  ['seq2seq.saliency', 's2s', 'saliency', ['123', { step: 1 }]],
  ['seq2seq.compareAttention', 's2s', 'compareAttention', ['12']],
  ['seq2seq.examples', 's2s', 'examples', [{ split: 'train', count: 2, seed: 3 }]],
  ['vision.train', 'vis', 'train', [TRAIN(2)]],
  ['vision.evaluate', 'vis', 'evaluate', [{ split: 'test', count: 2 }]],
  ['vision.predict', 'vis', 'predict', [image()]],
  ['vision.saliency', 'vis', 'saliency', [image(), { step: 0 }]],
  ['vision.compareAttention', 'vis', 'compareAttention', [image()]],
  ['vision.examples', 'vis', 'examples', [{ split: 'test', count: 1, seed: 2 }]],
  ['engine.createTransformer', 'engine', 'createTransformer', [TF]],
  ['engine.createTransformer (text)', 'engine', 'createTransformer', [{ ...TF, task: 'text', text: 'the cat sat on the mat, the dog sat on the log.' }]],
  ['engine.loadModel (transformer)', 'engine', 'loadModel', [tfBytes]],
  ['transformer.train', 'tf', 'train', [{ steps: 1, batch: 2, lr: 0.001, clip: 1, weightDecay: 0.1, warmup: 1, decaySteps: 5 }]],
  ['transformer.evaluate', 'tf', 'evaluate', [{ split: 'test', count: 2, ablate: [{ layer: 0, head: 1 }] }]],
  ['transformer.examples', 'tf', 'examples', [{ split: 'train', count: 2, seed: 3 }]],
  ['transformer.inspect', 'tf', 'inspect', ['abcab', { ablate: [{ layer: 0, head: 0 }] }]],
  ['transformer.inspect (ids)', 'tf', 'inspect', [[0, 1, 2, 0, 1]]],
  ['transformer.generate', 'tf', 'generate', ['abc', { tokens: 3, temperature: 0.5, topK: 3, seed: 2 }]],
  ['transformer.headScores', 'tf', 'headScores', [{ count: 2 }]],
  ['transformer.setWeights', 'tf', 'setWeights', [{ out_b: tfWeights.out_b }]],
  ['engine.loadModel (gpt2)', 'engine', 'loadModel', [gpt2.bytes, { config: gpt2.config }]],
  ['gpt2.tokenize', 'gpt2', 'tokenize', ['Hello']],
  ['gpt2.inspect', 'gpt2', 'inspect', [{ ids: [1, 2, 3, 1, 2] }, { ablate: [{ layer: 0, head: 1 }], lens: true, logits: true }]],
  ['gpt2.evaluate', 'gpt2', 'evaluate', [{ ids: [1, 2, 3, 1], ablate: [{ layer: 1, head: 0 }] }]],
  ['gpt2.generate', 'gpt2', 'generate', [{ ids: [1, 2, 3] }, { tokens: 3, temperature: 0.5, topK: 3, seed: 2 }]],
  ['gpt2.headScores', 'gpt2', 'headScores', [{ count: 2, length: 4, seed: 1 }]],
];

/** Runs a call (a promise is awaited); the error it throws or rejects with, or null with its result. */
async function attempt(fn) {
  try {
    return { thrown: null, result: await fn() };
  } catch (err) {
    return { thrown: err };
  }
}

function assertAttnlabError(err, what) {
  assert.ok(err instanceof AttnlabError, `${what}: threw ${err?.constructor?.name ?? typeof err}: ${err?.message}`);
  assert.match(err.code, /^ERR_[A-Z_]+$/, `${what}: code`);
  assert.ok(typeof err.message === 'string' && err.message.length > 10, `${what}: message`);
}

for (const { name, skip, engine } of await withEngines()) {
  describe(`hostile arguments to every method (${name})`, { skip }, () => {
    let targets, table, probe, baseline;
    before(async () => {
      const s2s = engine.createSeq2Seq(S2S);
      const vis = await engine.createVisionModel(VIS);
      const tf = await engine.createTransformer(TF);
      const gpt2File = gpt2Checkpoint({ seed: 3 });
      const gpt2 = await engine.loadModel(gpt2File.bytes, { config: gpt2File.config });
      targets = { engine, s2s, vis, tf, gpt2 };
      table = calls({ s2sBytes: s2s.save(), visBytes: vis.save(), tfBytes: tf.save(), tfWeights: tf.weights(), gpt2: gpt2File });
      // untouched models: what the engine gives after the hostile calls must be what it gave before
      const s2sProbe = engine.createSeq2Seq({ ...S2S, seed: 9 });
      const visProbe = await engine.createVisionModel({ ...VIS, seed: 9 });
      const tfProbe = await engine.createTransformer({ ...TF, seed: 9 });
      probe = () => ({
        attend: engine.attend({ queries: Q, keys: K, values: V }),
        translate: s2sProbe.translate('1234'),
        predict: visProbe.predict(image()),
        inspect: tfProbe.inspect('abcabc'),
        gpt2: gpt2.inspect({ ids: [5, 6, 7, 5, 6] }, { lens: true }),
        steps: [s2sProbe.steps, visProbe.steps, tfProbe.steps],
      });
      engine.attend({ queries: Q, keys: V.map((r) => r.slice(0, 2)), copy: false }); // the views block, at its size for these calls
      baseline = probe();
    });

    test('every thrown value is an AttnlabError with a code; a call that throws leaks nothing', async () => {
      let checked = 0;
      for (const [what, target, method, valid] of table) {
        for (const path of [[], ...valid.flatMap((arg, i) => paths(arg, [i]))]) {
          for (const [kind, make] of Object.entries(HOSTILE)) {
            const at = `${what} with ${kind} at ${path.length ? `[${path.join('][')}]` : 'every argument'}`;
            const args = path.length ? replaced(valid, path, make(path.reduce((v, k) => v[k], valid))) : [make(valid)];
            const heap = engine.heapUsed();
            const { thrown, result } = await attempt(() => targets[target][method](...args));
            if (thrown !== null) {
              assertAttnlabError(thrown, at);
              assert.equal(engine.heapUsed(), heap, `${at}: heap back where it was`);
            } else if (typeof result?.destroy === 'function') {
              result.destroy();
            }
            checked++;
          }
        }
        assert.deepEqual(probe(), baseline, `${what}: the engine and its models give what they gave before`);
      }
      assert.ok(checked > 500, `${checked} hostile calls`);
    });

    test('the model getter and a destroyed model: AttnlabErrors naming the method', async () => {
      const gpt2File = gpt2Checkpoint({ seed: 4 });
      for (const make of [() => engine.createSeq2Seq(S2S), () => engine.createVisionModel(VIS), () => engine.createTransformer(TF),
        () => engine.loadModel(gpt2File.bytes, { config: gpt2File.config })]) {
        const m = await make();
        m.destroy();
        m.destroy(); // twice: nothing
        const methods = m.kind === 'transformer'
          ? ['tokenize', 'train', 'evaluate', 'save', 'examples', 'inspect', 'generate', 'headScores', 'weights', 'setWeights']
          : ['train', 'evaluate', 'save', 'examples', 'compareAttention', 'saliency', ...(m.kind === 'vision' ? ['predict'] : ['translate'])];
        const arg = m.kind === 'vision' ? image() : m.kind === 'transformer' ? { ids: [1, 2] } : '12';
        for (const method of methods) {
          const { thrown } = await attempt(() => m[method](arg));
          assertAttnlabError(thrown, `${m.kind}.${method} after destroy`);
          assert.equal(thrown.code, 'ERR_ARG');
          assert.match(thrown.message, new RegExp(`^${method}: this model was destroyed`));
        }
        const { thrown } = await attempt(() => m.steps);
        assert.match(thrown?.message ?? '', /^steps: this model was destroyed/);
      }
    });

    test('an option object that lies about its prototype or throws from its error is still reported with a code', async () => {
      const fake = new Proxy(new AttnlabError('ERR_SHAPE', 'not a real one'), { get: boom });
      const throwsFake = { get task() { throw fake; } };
      const revoked = Proxy.revocable({}, {});
      revoked.revoke();
      const throwsRevoked = { get steps() { throw revoked.proxy; } };
      for (const [what, fn] of [
        ['a thrown proxy of an AttnlabError', () => engine.createSeq2Seq(throwsFake)],
        ['a thrown revoked proxy', () => targets.s2s.train(throwsRevoked)],
        ['a thrown revoked proxy (async)', () => engine.createVisionModel({ get task() { throw revoked.proxy; } })],
      ]) {
        const { thrown } = await attempt(fn);
        assertAttnlabError(thrown, what);
        assert.equal(thrown.code, 'ERR_ARG', what);
      }
      assert.deepEqual(probe(), baseline);
    });
  });
}

test('loadEngine: hostile options reject with AttnlabErrors; a transparent proxy of good ones loads', async () => {
  const valid = { simd: false, threads: 1 };
  for (const path of [[], ['simd'], ['threads']]) {
    for (const [kind, make] of Object.entries(HOSTILE)) {
      const options = path.length ? { ...valid, [path[0]]: make(valid[path[0]]) } : make(valid);
      const { thrown, result } = await attempt(() => loadEngine(options));
      if (thrown !== null) assertAttnlabError(thrown, `loadEngine with ${kind} at ${path[0] ?? 'its options'}`);
      else assert.equal(result.attend({ queries: Q, keys: K }).weights.rows, 2, `loadEngine with ${kind}: a working engine`);
    }
  }
});

/** A proxy of an array counting the reads of its length. */
function counted(items) {
  const reads = { length: 0 };
  const proxy = new Proxy(items, {
    get(target, key, receiver) {
      if (key === 'length') reads.length++;
      return Reflect.get(target, key, receiver);
    },
  });
  return { proxy, reads };
}

describe('every array is read once', () => {
  let engine, vis;
  before(async () => {
    engine = await loadEngine({ simd: false, threads: 1 });
    vis = await engine.createVisionModel(VIS);
  });

  test('an image whose length grows after its checks is read at its checked length: nothing is written past its block', async () => {
    // what a new model trains to and reads, before and after the hostile calls: the same
    const later = async () => {
      const m = await engine.createVisionModel({ ...VIS, seed: 5 });
      const r = { loss: m.train({ steps: 2 }).loss, read: m.predict(image()), examples: m.examples({ count: 2 }) };
      m.destroy();
      return r;
    };
    const before = await later();
    const want = vis.predict(image());
    const wantSaliency = vis.saliency(image());
    const saved = vis.save();
    // 120 values at the first reads of its length, 2^21 (8 MB of float32) at any later one
    for (const honest of [1, 2, 3]) {
      for (const method of ['predict', 'saliency', 'compareAttention']) {
        const got = vis[method]({ rows: 12, cols: 10, data: growing(image().data, honest) });
        if (method === 'predict') assert.deepEqual(got, want, `predict, ${honest} honest reads`);
        if (method === 'saliency') assert.deepEqual(got, wantSaliency, `saliency, ${honest} honest reads`);
      }
    }
    assert.deepEqual(vis.save(), saved, 'the model as it was');
    assert.deepEqual(vis.predict(image()), want, 'the next call as before');
    assert.deepEqual(await later(), before, 'a model made afterwards trains and reads as before');
  });

  test("each array's length is read once, whichever method reads it", async () => {
    const cases = [
      ['predict: image.data', (a) => vis.predict({ rows: 12, cols: 10, data: a }), image().data],
      ['saliency: image.data', (a) => vis.saliency({ rows: 12, cols: 10, data: a }), image().data],
      ['compareAttention: image.data', (a) => vis.compareAttention({ rows: 12, cols: 10, data: a }), image().data],
      ['attend: queries', (a) => engine.attend({ queries: a, keys: K }), Q],
      ['attend: a row of queries', (a) => engine.attend({ queries: [a, [1, 2]], keys: K }), Q[0]],
      ['attend: values.data', (a) => engine.attend({ queries: Q, keys: K, values: { rows: 3, cols: 3, data: a } }), V.flat()],
      ['attend: mask.keyLengths', (a) => engine.attend({ queries: Q, keys: K, mask: { keyLengths: a } }), [1, 2]],
      ['attend: outputs', (a) => engine.attend({ queries: Q, keys: K, outputs: a }), ['weights']],
      ['attend: params.v', (a) => engine.attend({ queries: Q, keys: K, score: 'additive', params: { Wq: [[1, 0]], Wk: [[0, 1]], v: a } }), [1]],
      ['selfAttention: x', (a) => engine.selfAttention({ x: a }), Q],
      ['createVisionModel: channels', (a) => engine.createVisionModel({ ...VIS, channels: a }), [2, 4]],
      ['createVisionModel: digits', (a) => engine.createVisionModel({ ...MULTI, digits: a }), [1, 2]],
    ];
    for (const [what, call, items] of cases) {
      const { proxy, reads } = counted([...items]);
      const result = await call(proxy);
      if (typeof result?.destroy === 'function') result.destroy();
      assert.equal(reads.length, 1, `${what}: its length read ${reads.length} times`);
    }
  });
});
