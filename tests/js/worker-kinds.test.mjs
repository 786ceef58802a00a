// The lab's worker asked for a method a model's kind does not have (translate
// on a transformer, readImage on a seq2seq model): ERR_ARG naming the method
// and the kind, never an internal error; the model works on afterwards.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Worker } from 'node:worker_threads';
import { LabClient } from '../../web/worker/lab-client.js';
import { rejectsCode as rejects } from '../lib/assert.mjs';

let lab;
before(async () => {
  lab = new LabClient(new Worker(new URL('../../web/worker/lab-worker.js', import.meta.url)));
  await lab.call('init', { simd: false });
});
after(() => lab.terminate());

test('a method of another kind is ERR_ARG naming it and the kind', async () => {
  const tf = await lab.call('createTransformer', { options: { task: 'induction', layers: 1, heads: 1, dModel: 8, dFF: 0, context: 12, batch: 2 } });
  await rejects(lab.call('translate', { model: tf.model, text: 'abc' }), 'ERR_ARG', /^translate: a transformer model has no translate/);
  await rejects(lab.call('readImage', { model: tf.model, image: { rows: 1, cols: 1, data: [0] } }), 'ERR_ARG', /^readImage: a transformer model reads text/);
  const s2s = await lab.call('create', { options: { task: 'copy', minLength: 2, maxLength: 4, hidden: 8, embed: 4, batch: 4 } });
  await rejects(lab.call('inspect', { model: s2s.model, input: '12' }), 'ERR_ARG', /^inspect: a seq2seq model has no inspect/);
  await rejects(lab.call('headScores', { model: s2s.model }), 'ERR_ARG', /^headScores: a seq2seq model has no headScores/);
  const r = await lab.call('train', { model: tf.model, options: { steps: 2, batch: 2 } });
  assert.equal(r.steps, 2, 'the transformer trains on');
  assert.equal((await lab.call('inspect', { model: tf.model, input: 'abcab' })).tokens.length, 5);
});
