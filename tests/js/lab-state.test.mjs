// The training lab's link format (web/lab/state.js through the shared codec):
// links of the first format (no version) migrate, a bad field falls back on its
// own, and every state round-trips through its link.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { codec, modelOptions } from '../../web/lab/state.js';

test('a first-format link (no v) with beam decoding opens with the same settings', () => {
  const { state, ignored, version } = codec.decode('#task=sort&alphabet=letters&minLength=5&maxLength=8&decode=beam&beam=4&lr=1e-3&text=dcba');
  assert.equal(version, 1);
  assert.deepEqual(ignored, []);
  assert.equal(state.task, 'sort');
  assert.equal(state.alphabet, 'letters');
  assert.equal(state.beam, 4);
  assert.equal(state.lr, 0.001);
  assert.equal(state.text, 'dcba');
  assert.deepEqual(modelOptions(state), {
    task: 'sort', cell: 'gru', bidirectional: false, layers: 1, embed: 16, hidden: 64, attention: 'additive', seed: 1, batch: 64,
    alphabet: 'letters', minLength: 5, maxLength: 8,
  });
});

test('first-format decoding: greedy drops the width, beam without a width takes 3', () => {
  assert.equal(codec.decode('#decode=greedy&beam=7').state.beam, 1);
  assert.equal(codec.decode('#beam=7').state.beam, 1, 'v1 without decode=beam was greedy');
  assert.equal(codec.decode('#decode=beam').state.beam, 3);
  assert.equal(codec.decode('#ver=2&beam=7').state.beam, 7);
});

test('a bad field keeps its default and is named; the rest of the link is used', () => {
  const { state, ignored } = codec.decode('#ver=2&hidden=99999&attention=dot&speed=3&maxLength=2&minLength=5&bogus=1&text=%01');
  assert.equal(state.attention, 'dot');
  assert.equal(state.minLength, 5);
  assert.equal(state.maxLength, 12, 'below minLength: the default');
  assert.equal(state.hidden, 64);
  assert.equal(state.speed, 0);
  assert.equal(state.text, '');
  assert.deepEqual(ignored.map((f) => f.name).sort(), ['bogus', 'hidden', 'maxLength', 'speed', 'text']);
});

test('a state round-trips through its link, which holds only what differs from the defaults', () => {
  const { state } = codec.decode('');
  assert.equal(codec.encode(state), '#ver=2');
  Object.assign(state, { task: 'dates', lr: 1e30, speed: 5, beam: 6, text: '25th of June, 2009', compareSteps: 500 });
  const link = codec.encode(state);
  assert.match(link, /^#ver=2&/);
  assert.deepEqual(codec.decode(link).state, state);
  assert.deepEqual(codec.decode(link).ignored, []);
});

test('a model is created for the batch the link asks for (train grows the buffers for a larger one)', () => {
  const { state } = codec.decode('#ver=2&batch=8');
  assert.equal(state.batch, 8);
  assert.equal(modelOptions(state).batch, 8);
});
