// One TransformerModel for every architecture: a model made here
// (createTransformer, config.architecture 'attnlab') and checkpoints of
// GPT-2 and GPT-NeoX (loadModel(bytes, { config })) are the same class of
// kind 'transformer' with the same configuration fields, and each method
// gives one shape for all three: predictions carry their token and id,
// generate its text, tokens and ids, every result a copy (never a view of the
// WASM heap). What an architecture lacks (a checkpoint's train, save,
// examples, weights; a model made here's logits) is an ERR_ARG saying why.
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { TransformerModel } from '../../web/engine/index.js';
import { withEngines } from './builds.mjs';
import { throwsCode } from '../lib/assert.mjs';
import { gpt2Checkpoint } from '../lib/gpt2-checkpoint.mjs';
import { neoxCheckpoint } from '../lib/neox-checkpoint.mjs';

const TF = { task: 'induction', layers: 2, heads: 2, dModel: 16, dFF: 0, context: 16, batch: 4, seed: 4 };
const CONFIG_FIELDS = ['architecture', 'task', 'layers', 'heads', 'dModel', 'dFF', 'context', 'positional', 'score', 'batch', 'seed',
  'vocabulary', 'sequenceLength', 'parameters', 'dtype'];
const keys = (o) => Object.keys(o).sort();

for (const { name, skip, engine } of await withEngines()) {
  describe(`one transformer surface (${name})`, { skip }, () => {
    let models;
    before(async () => {
      const gpt2 = gpt2Checkpoint({ seed: 3 });
      const neox = neoxCheckpoint({ seed: 3 });
      models = {
        attnlab: await engine.createTransformer(TF),
        gpt2: await engine.loadModel(gpt2.bytes, { config: gpt2.config }),
        gpt_neox: await engine.loadModel(neox.bytes, { config: neox.config }),
      };
    });

    test('each is a TransformerModel of kind transformer, its architecture in config, with the same fields', () => {
      for (const [architecture, m] of Object.entries(models)) {
        assert.ok(m instanceof TransformerModel, architecture);
        assert.equal(m.kind, 'transformer');
        assert.equal(m.config.architecture, architecture);
        assert.deepEqual(keys(m.config), [...CONFIG_FIELDS].sort(), `${architecture}: config fields`);
        assert.ok(Array.isArray(m.config.vocabulary) && m.config.vocabulary.every((t) => typeof t === 'string'), `${architecture}: vocabulary`);
        assert.equal(m.vocabulary, m.config.vocabulary);
        assert.equal(m.steps, 0);
      }
      assert.equal(models.gpt_neox.config.positional, 'rope');
      assert.equal(models.gpt2.config.positional, 'learned');
    });

    test('inspect, generate, tokenize and headScores: one shape, every result a copy', () => {
      const heapBuffer = engine.heap.exports.memory.buffer;
      for (const [architecture, m] of Object.entries(models)) {
        const ids = [1, 2, 3, 1, 2];
        const r = m.inspect(ids, { lens: true });
        assert.deepEqual(keys(r), ['attention', 'ids', 'lens', 'predictions', 'tokens'], architecture);
        assert.deepEqual(Array.from(r.ids), ids);
        assert.deepEqual(r.tokens, ids.map((id) => m.vocabulary[id]));
        for (const row of r.predictions) {
          for (const p of row) {
            assert.deepEqual(keys(p), ['id', 'p', 'token'], `${architecture}: a prediction`);
            assert.equal(p.token, m.vocabulary[p.id]);
          }
        }
        assert.equal(r.lens.length, m.config.layers);
        for (const head of r.attention.flat()) assert.notEqual(head.data.buffer, heapBuffer, `${architecture}: attention is a copy`);
        // the same call by { ids } and by an array: the same answer
        assert.deepEqual(m.inspect({ ids }, { lens: true }), r);
        const g = m.generate(ids, { tokens: 4, temperature: 0 });
        assert.deepEqual(keys(g), ['ids', 'text', 'tokens'], architecture);
        assert.ok(g.ids instanceof Int32Array && g.ids.buffer !== heapBuffer);
        assert.deepEqual(g.tokens, Array.from(g.ids, (id) => m.vocabulary[id]));
        const t = m.tokenize(m.vocabulary[1] + m.vocabulary[2]);
        assert.deepEqual(keys(t), ['ids', 'tokens']);
        assert.deepEqual(t.tokens, Array.from(t.ids, (id) => m.vocabulary[id]));
        const s = m.headScores({ count: 2 });
        assert.equal(s.length, m.config.layers);
        assert.deepEqual(keys(s[0][0]), ['induction', 'previousToken']);
      }
    });

    test('the lens is inspect\'s option for all: on by default where it is cheap (a model made here), off for a checkpoint', () => {
      assert.ok('lens' in models.attnlab.inspect([1, 2]));
      assert.ok(!('lens' in models.attnlab.inspect([1, 2], { lens: false })));
      assert.ok(!('lens' in models.gpt2.inspect([1, 2])));
    });

    test('what an architecture lacks is an ERR_ARG saying why, never a TypeError', () => {
      for (const m of [models.gpt2, models.gpt_neox]) {
        throwsCode(() => m.train({ steps: 1 }), 'ERR_ARG', /^train: a checkpoint fine-tunes on a text: pass text/);
        throwsCode(() => m.save(), 'ERR_ARG', /^save: .*model\.safetensors is the file/);
        throwsCode(() => m.examples(), 'ERR_ARG', /^examples: a checkpoint has no task/);
        throwsCode(() => m.weights(), 'ERR_ARG', /^weights: /);
        throwsCode(() => m.setWeights({}), 'ERR_ARG', /^setWeights: /);
        throwsCode(() => m.evaluate(), 'ERR_ARG', /^evaluate: a checkpoint has no task .*pass text or ids/);
        throwsCode(() => m.evaluate({ split: 'test' }), 'ERR_ARG', /pass text or ids/);
      }
      const tf = models.attnlab;
      throwsCode(() => tf.inspect([1, 2], { logits: true }), 'ERR_ARG', /^inspect: logits: /);
      throwsCode(() => tf.evaluate({ ids: [1, 2, 3] }), 'ERR_ARG', /^evaluate: text and ids: .*split, count/);
      throwsCode(() => tf.headScores({ length: 4 }), 'ERR_ARG', /^headScores: length and seed: /);
      assert.equal(tf.evaluate({ count: 4 }).count, 4, 'the model works after');
    });
  });
}
