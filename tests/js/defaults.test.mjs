// The defaults are a promise (web/engine/defaults.js): what a learner gets with
// nothing set. createTransformer({ task: 'induction', seed }) + train(), nothing
// else, reaches the induction headline (95% of the repeats' tokens, a layer-1 head's
// induction score past 0.4) for seeds 1-5 (some 4 CPU s each); the lab's form, Learn's
// chapter 9, the shipped model and the bench read the same table. The image
// model's defaults take minutes: tests/defaults/ (npm run test:defaults).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { DEFAULTS, defaultsOf } from '../../web/engine/defaults.js';
import { loadEngine } from '../../web/engine/index.js';
import { INDUCTION } from '../../web/learn/ch9-training.js';
import { TRANSFORMER_PROPS, transformerOptions } from '../../web/lab/transformer-state.js';
import { IMAGE_TRAIN, codec, modelOptions, trainOptions, visionOptions } from '../../web/lab/state.js';
import { imageFamily } from '../../web/lab/family-images.js';

const D = defaultsOf('transformer', { task: 'induction' });

test('createTransformer({ task: "induction", seed }) + train() reaches the headline for seeds 1-5', async () => {
  const engine = await loadEngine({ threads: 1 });
  const figures = [];
  for (const seed of [1, 2, 3, 4, 5]) {
    const m = await engine.createTransformer({ task: 'induction', seed });
    const r = m.train();
    assert.equal(r.steps, D.train.steps, 'train() runs the defaults\' steps');
    const { accuracy } = m.evaluate({ count: 256 });
    const induction = Math.max(...m.headScores({ count: 64 })[1].map((s) => s.induction));
    figures.push(`seed ${seed}: ${(100 * accuracy).toFixed(1)}%, layer-1 induction ${induction.toFixed(2)}`);
    assert.ok(accuracy >= D.headline.accuracy, `seed ${seed}: accuracy ${accuracy}`);
    assert.ok(induction >= D.headline.induction, `seed ${seed}: induction ${induction}`);
    m.destroy();
  }
  console.log(`induction defaults, ${D.train.steps} steps: ${figures.join('; ')}`);
});

test('createSeq2Seq({ task: "reverse" }), trained as the lab trains it, reaches its headline (seed 1; seeds 1-5 in tests/defaults/)', async () => {
  const engine = await loadEngine({ threads: 1 });
  const { model, train, headline } = defaultsOf('seq2seq', { task: 'reverse' });
  const m = await engine.createSeq2Seq({ task: 'reverse' });
  try {
    m.train({ steps: headline.steps, batch: model.batch, lr: train.lr });
    const { sequenceAccuracy } = m.evaluate({ split: 'validation', count: 500 });
    console.log(`reverse defaults, seed 1, ${headline.steps} steps: ${(100 * sequenceAccuracy).toFixed(1)}% of 500 validation sequences`);
    assert.ok(sequenceAccuracy >= headline.sequenceAccuracy, `sequence accuracy ${sequenceAccuracy}`);
  } finally {
    m.destroy();
  }
});

test('the same steps in chunks follow the same schedule as one call', async () => {
  const engine = await loadEngine({ threads: 1 });
  const [whole, chunks] = [await engine.createTransformer({ task: 'induction' }), await engine.createTransformer({ task: 'induction' })];
  const a = whole.train({ steps: 60 }).losses;
  const b = [...chunks.train({ steps: 25 }).losses, ...chunks.train({ steps: 35 }).losses];
  assert.deepEqual(Array.from(b), Array.from(a));
  assert.deepEqual(chunks.save(), whole.save());
  whole.destroy();
  chunks.destroy();
});

test('the lab, Learn, the shipped model and the bench read the one table', () => {
  // the lab's form starts from the induction defaults
  const defs = Object.fromEntries(TRANSFORMER_PROPS.map((p) => [p.name, typeof p.def === 'function' ? p.def({ tfHeads: D.model.heads }) : p.def]));
  const { text, ...lab } = transformerOptions({ ...defs, seed: D.model.seed });
  assert.equal(text, undefined);
  assert.deepEqual(lab, D.model);
  assert.equal(defs.tfLr, D.train.lr);
  // chapter 9 trains the defaults
  assert.deepEqual(INDUCTION.model, D.model);
  assert.equal(INDUCTION.steps, D.train.steps);
  // the shipped induction model is the defaults trained for their steps
  const shipped = JSON.parse(readFileSync(new URL('../../web/models/models.json', import.meta.url), 'utf8')).models.induction;
  assert.deepEqual(shipped.options, D.model);
  assert.equal(shipped.steps, D.train.steps);
  assert.ok(shipped.accuracy >= D.headline.accuracy);
  // the bench reads the table (no number of its own for the defaults)
  const bench = readFileSync(new URL('../bench/transformer.mjs', import.meta.url), 'utf8');
  assert.match(bench, /defaultsOf\('transformer', \{ task: 'induction' \}\)/);
  // every kind has model and train defaults, and train() its steps
  for (const [kind, t] of Object.entries(DEFAULTS)) {
    assert.ok(Number.isInteger(t.train.steps) && t.train.steps >= 1, kind);
    assert.ok(t.train.lr > 0, kind);
  }
});

test('the lab\'s text and image forms start from the table, and train otherwise only as its vision.lab entry says', () => {
  const lab = codec.defaults();
  // the text form: the seq2seq defaults, every field
  const s2s = defaultsOf('seq2seq', { task: lab.task });
  const text = modelOptions(lab);
  for (const [k, v] of Object.entries(text)) assert.deepEqual(v, s2s.model[k], `seq2seq ${k}`);
  assert.deepEqual(trainOptions(lab), { batch: s2s.model.batch, lr: s2s.train.lr });
  // the image form: the base vision defaults' channels, clutter, mode and attention (not the cluttered
  // case's wider layers); the shared fields (cell, hidden, batch, lr) are the text form's; the lab's
  // own training is vision.lab's
  const vision = { model: DEFAULTS.vision.model };
  for (const task of ['cluttered', 'centered']) {
    const o = visionOptions({ ...lab, task });
    for (const k of ['channels', 'mode', 'attention', 'seed']) assert.deepEqual(o[k], vision.model[k], `${task} ${k}`);
    if (task === 'cluttered') assert.equal(o.clutter, vision.model.clutter);
    assert.equal(o.steps, DEFAULTS.vision.lab.model.steps, `${task}: one glimpse`);
    for (const k of ['cell', 'hidden', 'batch']) assert.equal(o[k], s2s.model[k], `${task} ${k}`);
  }
  assert.deepEqual(IMAGE_TRAIN, DEFAULTS.vision.lab.train);
  const train = imageFamily.trainOptions({ ...lab, task: 'cluttered' });
  for (const [k, v] of Object.entries(DEFAULTS.vision.lab.train)) assert.equal(train[k], v, `train ${k}`);
  assert.equal(train.lr, s2s.train.lr);
});
