// The training lab's link format (web/lab/state.js through the shared codec):
// links of the first format (no version) migrate, a bad field falls back on its
// own, and every state round-trips through its link.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { loadEngine } from '../../web/engine/index.js';
import { adoptLimits, engineLimits } from '../../web/lab/limits.js';
import { codec, modelOptions } from '../../web/lab/state.js';

// the link's bounds are the engine's limits, as on the page once the worker has loaded the engine
before(async () => adoptLimits(engineLimits(await loadEngine())));

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

// ---- the learner's pass: pretrained models, timeline snapshots, speeds, error words ----
import { readFileSync } from 'node:fs';
import { explain } from '../../web/lab/messages.js';
import { linkFields, pickPretrained } from '../../web/lab/pretrained.js';
import { chunkCap, thinSnapshots } from '../../web/lab/session.js';
import { MODEL_KEYS } from '../../web/lab/state.js';

const MANIFEST = JSON.parse(readFileSync(new URL('../../web/models/models.json', import.meta.url), 'utf8'));
const pick = (hash, given = linkFields(hash)) => pickPretrained(MANIFEST, codec.decode(hash).state, given)?.name ?? null;

test('a task opens on its pretrained model only when the link asks for nothing else', () => {
  assert.equal(pick(''), 'reverse-attention', 'the plain lab');
  assert.equal(pick('#ver=2&task=dates'), 'dates');
  assert.equal(pick('#ver=2&task=cluttered'), 'cluttered-soft');
  assert.equal(pick('#ver=2&task=cluttered&mode=hard&batch=16'), 'cluttered-hard', 'batch and lr do not make a model');
  assert.equal(pick('#ver=2&attention=none'), 'reverse-bottleneck');
  assert.equal(pick('#ver=2&task=sort'), null, 'no pretrained sort model');
  assert.equal(pick('#minLength=6&maxLength=9&text=8123456'), null, 'other lengths: a new model');
  assert.equal(pick('#ver=2&start=scratch'), null, 'asked for an untrained model');
  // the link the lab writes for a pretrained model opens it again
  const { state } = codec.decode('');
  Object.assign(state, pickPretrained(MANIFEST, state, new Set()).settings);
  const link = codec.encode(state);
  assert.equal(pick(link), 'reverse-attention', link);
  // a setting changed on it: only a model of exactly those settings
  assert.equal(pickPretrained(MANIFEST, { ...state, attention: 'none' }, new Set(MODEL_KEYS))?.name, 'reverse-bottleneck');
  assert.equal(pickPretrained(MANIFEST, { ...state, hidden: 48 }, new Set(MODEL_KEYS)), null);
});

test('timeline snapshots stay dense where training starts: thinning keeps them even in log(step)', () => {
  let snaps = [];
  for (let step = 0, k = 0; step <= 3000; k++) {
    snaps.push({ step });
    while (snaps.length > 30) snaps = thinSnapshots(snaps);
    step += Math.max(1, chunkCap(step));
  }
  const steps = snaps.map((s) => s.step);
  assert.equal(steps.length, 30);
  assert.equal(steps[0], 0);
  assert.ok(steps.at(-1) >= 2500, `the last stop is the newest step: ${steps.at(-1)}`);
  assert.ok(steps.filter((s) => s <= 50).length >= 10, `early stops: ${steps.join(' ')}`);
  const logs = steps.slice(1).map((s) => Math.log1p(s));
  const gaps = logs.slice(1).map((l, k) => l - logs[k]);
  assert.ok(Math.max(...gaps) < 4 * (logs.at(-1) - logs[0]) / gaps.length, `no hole in log(step): ${steps.join(' ')}`);
  assert.deepEqual([0, 1, 19, 20, 100].map(chunkCap), [1, 1, 1, 2, 10]);
});

test('slow speeds are in the link: one step a second, four a second', () => {
  assert.equal(codec.decode('#ver=2&speed=-1').state.speed, -1);
  assert.equal(codec.decode('#ver=2&speed=-4').state.speed, -4);
  assert.deepEqual(codec.decode('#ver=2&speed=-3').ignored.map((f) => f.name), ['speed']);
});

test("errors in the learner's words, the engine's message kept as the detail", () => {
  const err = (code, message) => Object.assign(new Error(message), { code });
  const loc = explain(err('ERR_ARG', "createSeq2Seq: attention: 'location' scores a fixed number of input positions, but this task's inputs vary in length (4..12); use a fixed length or another score"), { doing: 'create' });
  assert.match(loc.text, /^Location attention learns one weight per input position/);
  assert.doesNotMatch(loc.text, /createSeq2Seq/);
  assert.match(loc.detail, /^ERR_ARG: createSeq2Seq: attention: 'location'/);
  const file = explain(err('ERR_VALUE', 'loadSeq2Seq: model file: not an attnlab model file'), { doing: 'load', file: 'x.bin' });
  assert.equal(file.text, 'x.bin is not a model this lab can open. Choose a file made with “Save model”.');
  assert.match(explain(err('ERR_VALUE', 'createSeq2Seq: pairs: line 2 has no tab between input and output')).text, /^Line 2 of your pairs/);
  assert.match(explain(err('ERR_VALUE', 'train: training diverged at step 3 (x)'), { kept: true }).text, /smaller learning rate.*The model you had is kept/);
  assert.equal(explain(err('ERR_ARG', 'translate: text: too long')).text, 'That did not work: too long.');
});
