// The JS boundary as a hostile caller meets it, on both WASM builds: values
// are copied by index (an array whose iterator yields fewer values than its
// length must not let the core read stale heap), and every error the API
// throws is an AttnlabError with a code, whatever an argument holds (BigInt
// typed arrays, Symbols, null-prototype objects, DataViews, getters that
// throw); building the message never throws. The heap is back at its
// baseline after each, and the engine keeps working.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { AttnlabError } from '../../web/engine/index.js';
import { throwsCode } from '../lib/assert.mjs';
import { withEngines } from './builds.mjs';

/** An array whose iterator yields only its first value; its length and indices are intact. */
function shortIterator(values) {
  const a = [...values];
  a[Symbol.iterator] = function* first() {
    yield a[0];
  };
  return a;
}

const bare = (fields) => Object.assign(Object.create(null), fields);
const throwing = new Proxy({}, { get() { throw new TypeError('no reading this'); }, has() { return true; } });

const Q = [[1, 2], [3, 4]];
const K = [[1, 0], [0, 1], [1, 1]];
const V = [[5, 6, 7], [8, 9, 10], [11, 12, 13]];

/** Hostile arguments: [what, call(engine, model)]. */
const HOSTILE = [
  ['queries.data a BigInt64Array', (e) => e.attend({ queries: { rows: 1, cols: 2, data: new BigInt64Array([1n, 2n]) }, keys: K })],
  ['a row as a BigUint64Array', (e) => e.attend({ queries: [new BigUint64Array([1n, 2n])], keys: K })],
  ['keys a BigInt64Array vector row', (e) => e.attend({ queries: Q, keys: [[1, 0], new BigInt64Array([0n, 1n])] })],
  ['params.v a BigInt64Array', (e) => e.attend({ queries: Q, keys: K, score: 'additive', params: { Wq: [[1, 0]], Wk: [[0, 1]], v: new BigInt64Array([1n]) } })],
  ['mask.keyLengths a BigInt64Array', (e) => e.attend({ queries: Q, keys: K, mask: { keyLengths: new BigInt64Array([1n, 2n]) } })],
  ['mask.keyLengths with a BigInt', (e) => e.attend({ queries: Q, keys: K, mask: { keyLengths: [1, 10n] } })],
  ['a DataView as a row', (e) => e.attend({ queries: [new DataView(new ArrayBuffer(8))], keys: K })],
  ['a DataView as data', (e) => e.attend({ queries: { rows: 1, cols: 2, data: new DataView(new ArrayBuffer(8)) }, keys: K })],
  ['queries a Symbol', (e) => e.attend({ queries: Symbol('q'), keys: K })],
  ['a Symbol in a row', (e) => e.attend({ queries: [[1, Symbol('x')]], keys: K })],
  ['rows a Symbol', (e) => e.attend({ queries: { rows: Symbol('r'), cols: 2, data: [1, 2] }, keys: K })],
  ['score a Symbol', (e) => e.attend({ queries: Q, keys: K, score: Symbol('dot') })],
  ['normalize a Symbol', (e) => e.attend({ queries: Q, keys: K, normalize: Symbol('sum') })],
  ['temperature a Symbol', (e) => e.attend({ queries: Q, keys: K, temperature: Symbol('t') })],
  ['mask a Symbol', (e) => e.attend({ queries: Q, keys: K, mask: Symbol('causal') })],
  ['mask.keyLengths with a Symbol', (e) => e.attend({ queries: Q, keys: K, mask: { keyLengths: [1, Symbol('L')] } })],
  ['outputs with a Symbol', (e) => e.attend({ queries: Q, keys: K, outputs: [Symbol('context')] })],
  ['params.beta a Symbol', (e) => e.attend({ queries: Q, keys: K, score: 'cosine', params: { beta: Symbol('b') } })],
  ['heads a Symbol', (e) => e.selfAttention({ x: Q, heads: Symbol('h') })],
  ['causal a Symbol', (e) => e.selfAttention({ x: Q, causal: Symbol('c') })],
  ['wq a Symbol', (e) => e.selfAttention({ x: Q, wq: Symbol('w') })],
  ['queries a null-prototype object', (e) => e.attend({ queries: bare({ rows: 1 }), keys: K })],
  ['rows a null-prototype object', (e) => e.attend({ queries: bare({ rows: bare({}), cols: 2, data: [1, 2] }), keys: K })],
  ['a null-prototype object in a row', (e) => e.attend({ queries: [[1, bare({})]], keys: K })],
  ['mask.keyLengths with a null-prototype object', (e) => e.attend({ queries: Q, keys: K, mask: bare({ keyLengths: [1, bare({})] }) })],
  ['score a null-prototype object', (e) => e.attend({ queries: Q, keys: K, score: bare({}) })],
  ['outputs with a null-prototype object', (e) => e.attend({ queries: Q, keys: K, outputs: [bare({})] })],
  ['options a null-prototype object with bad fields', (e) => e.attend(bare({ queries: Q, keys: K, temperature: bare({}) }))],
  ['options that throw when read', (e) => e.attend(throwing)],
  ['a row that throws when read', (e) => e.attend({ queries: { rows: 1, cols: 2, data: new Proxy([1, 2], { get(t, k) { if (k === '0') throw new Error('boom'); return t[k]; } }) }, keys: K })],
  ['selfAttention options that throw when read', (e) => e.selfAttention(throwing)],
  ['task a Symbol', (e) => e.createSeq2Seq({ task: Symbol('copy') })],
  ['seed a Symbol', (e) => e.createSeq2Seq({ task: 'copy', seed: Symbol('s') })],
  ['seed a BigInt', (e) => e.createSeq2Seq({ task: 'copy', seed: 10n })],
  ['seed a null-prototype object', (e) => e.createSeq2Seq({ task: 'copy', seed: bare({}) })],
  ['hidden a null-prototype object', (e) => e.createSeq2Seq({ task: 'copy', hidden: bare({}) })],
  ['pairs a Symbol', (e) => e.createSeq2Seq({ task: 'pairs', pairs: Symbol('p') })],
  ['createSeq2Seq options that throw when read', (e) => e.createSeq2Seq(throwing)],
  ['loadSeq2Seq of a Symbol', (e) => e.loadSeq2Seq(Symbol('file'))],
  ['loadSeq2Seq of a BigInt64Array', (e) => e.loadSeq2Seq(new BigInt64Array(4))],
  ['train steps a Symbol', (e, m) => m.train({ steps: Symbol('n') })],
  ['train batch a BigInt', (e, m) => m.train({ batch: 10n })],
  ['train options that throw when read', (e, m) => m.train(throwing)],
  ['translate a Symbol', (e, m) => m.translate(Symbol('text'))],
  ['translate a BigInt', (e, m) => m.translate(10n)],
  ['translate beam a null-prototype object', (e, m) => m.translate('123', bare({ beam: bare({}) }))],
  ['evaluate split a Symbol', (e, m) => m.evaluate({ split: Symbol('test') })],
  ['examples seed a BigInt', (e, m) => m.examples({ seed: 3n })],
];

for (const { simd, name, skip, engine } of await withEngines()) {
  describe(`JS boundary (${name})`, { skip }, () => {
    test('matrices are copied by index: an iterator yielding fewer values cannot leave stale heap', () => {
      const want = engine.attend({ queries: Q, keys: K, values: V });
      // Fill the heap where the next call's block lands with values unlike the real ones.
      engine.attend({ queries: [[1e3, -1e3]], keys: [[1e3, 1e3], [7, 7], [9, 9]], values: [[1e6, 1e6, 1e6], [2e6, 2e6, 2e6], [3e6, 3e6, 3e6]] });
      const forms = {
        'data arrays': {
          queries: { rows: 2, cols: 2, data: shortIterator(Q.flat()) },
          keys: { rows: 3, cols: 2, data: shortIterator(K.flat()) },
          values: { rows: 3, cols: 3, data: shortIterator(V.flat()) },
        },
        'nested rows': { queries: Q.map(shortIterator), keys: shortIterator(K.map(shortIterator)), values: V.map(shortIterator) },
      };
      for (const [form, args] of Object.entries(forms)) {
        const got = engine.attend(args);
        for (const key of ['scores', 'weights', 'context']) assert.deepEqual(got[key], want[key], `${form}: ${key}`);
      }
      const additive = { Wq: [[0.5, -0.25], [0.1, 0.2]], Wk: [[0.3, 0.4], [-0.2, 0.6]], v: [1, -2] };
      const a = engine.attend({ queries: Q, keys: K, score: 'additive', params: additive });
      const b = engine.attend({ queries: Q, keys: K, score: 'additive', params: { ...additive, v: shortIterator(additive.v) } });
      assert.deepEqual(b.scores, a.scores, 'params.v (a vector) copied by index');
      const m1 = engine.attend({ queries: Q, keys: K, mask: { keyLengths: [1, 2] } });
      const m2 = engine.attend({ queries: Q, keys: K, mask: { keyLengths: shortIterator([1, 2]) } });
      assert.deepEqual(m2.weights, m1.weights, 'mask.keyLengths copied by index');
    });

    test('sparse arrays and non-numbers in data are errors, not zeros', () => {
      const holes = [1, 2, 3];
      delete holes[1];
      for (const data of [holes, [1, '2', 3], [1, null, 3]]) {
        assert.throws(() => engine.attend({ queries: { rows: 1, cols: 3, data }, keys: [[1, 2, 3]] }),
          (err) => err instanceof AttnlabError && err.code === 'ERR_VALUE' && /queries\[0\]\[1\]/.test(err.message));
      }
    });

    test('every hostile argument gives an AttnlabError with a code; nothing leaks; the engine still works', () => {
      const model = engine.createSeq2Seq({ task: 'copy', minLength: 2, maxLength: 4, hidden: 8, embed: 4, batch: 8 });
      const base = engine.heapUsed();
      for (const [what, call] of HOSTILE) {
        let thrown = null;
        try {
          call(engine, model);
        } catch (err) {
          thrown = err;
        }
        assert.ok(thrown instanceof AttnlabError, `${what}: threw ${thrown?.name ?? 'nothing'}: ${thrown?.message}`);
        assert.match(thrown.code, /^ERR_[A-Z_]+$/, `${what}: code`);
        assert.ok(typeof thrown.message === 'string' && thrown.message.length > 10, `${what}: message`);
        assert.equal(engine.heapUsed(), base, `${what}: heap back at its baseline`);
      }
      assert.equal(model.translate('12').inputTokens.length, 2, 'the model still translates');
      assert.equal(engine.attend({ queries: [[1]], keys: [[1], [2]] }).weights.rows, 1, 'attend still works');
      assert.equal(model.train({ steps: 1 }).steps, 1, 'the model still trains');
      model.destroy();
    });

    test('messages name the argument and describe the value without calling into it', () => {
      const cases = [
        [() => engine.attend({ queries: Q, keys: K, mask: { keyLengths: [1, Symbol('L')] } }), 'ERR_VALUE', /mask\.keyLengths\[1\] is a Symbol/],
        [() => engine.attend({ queries: { rows: Symbol('r'), cols: 2, data: [1, 2] }, keys: K }), 'ERR_SHAPE', /queries: rows and cols must be positive integers \(got a Symbol x 2\)/],
        [() => engine.attend({ queries: { rows: 1, cols: 2, data: new BigInt64Array(2) }, keys: K }), 'ERR_VALUE', /queries\.data: a BigInt64Array holds BigInts/],
        [() => engine.createSeq2Seq({ task: 'copy', seed: bare({}) }), 'ERR_VALUE', /seed must be an integer .* \(got an object\)/],
        [() => engine.attend(throwing), 'ERR_ARG', /attend: an argument could not be read \(no reading this\)/],
      ];
      for (const [call, code, pattern] of cases) throwsCode(call, code, pattern);
    });
  });
}
