// The model base class (web/engine/model.js): every model kind extends it and
// take train, save, destroy, steps and liveness from it, none of their own; a
// further kind needs only its spec (here one over the seq2seq exports) to
// train, save, count steps, refuse calls once destroyed, and report errors
// with codes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AttnlabError, Model, Seq2SeqModel, TransformerModel, VisionModel, loadEngine } from '../../web/engine/index.js';
import { loadHandle, modelFile } from '../../web/engine/model.js';
import { SEQ2SEQ } from '../../web/engine/constants.js';

const engine = await loadEngine({ simd: false, threads: 1 });
const S2S = { task: 'copy', minLength: 2, maxLength: 4, hidden: 8, embed: 4, batch: 8, seed: 4 };

test('every kind extends Model and shares its train, save, destroy and steps', () => {
  for (const Kind of [Seq2SeqModel, VisionModel, TransformerModel]) {
    assert.equal(Object.getPrototypeOf(Kind.prototype), Model.prototype, `${Kind.name} extends Model`);
    for (const name of ['kind', 'train', 'undoTrain', 'save', 'destroy', 'steps', 'guarded', 'info']) {
      assert.ok(!Object.hasOwn(Kind.prototype, name), `${Kind.name} has no ${name} of its own`);
    }
  }
});

/** A kind made of the seq2seq exports through the base class's spec alone. */
class Bare extends Model {
  constructor(heap, handle) {
    super(heap, handle, {
      kind: 'bare', prefix: 's2s', info: 'S2sInfo', stepsField: 'steps',
      train: { maxSteps: 3, batch: () => 4, maxBatch: () => 4, defaults: { lr: 0.01 }, optimizers: SEQ2SEQ.OPTIMIZERS, tokens: true },
    });
    this.config = {};
  }

  /** A method of its own, through the guard. */
  hidden() {
    return this.guarded('hidden', () => this.info().hidden);
  }
}

test('a further kind gets training, saving, steps, liveness and coded errors from its spec', () => {
  const source = engine.createSeq2Seq(S2S);
  const bytes = source.save();
  const bare = new Bare(engine.heap, loadHandle(engine.heap, modelFile('load', bytes), (args) => engine.heap.call.s2s_load(args)));
  assert.equal(bare.kind, 'bare');
  assert.equal(bare.hidden(), 8);
  const r = bare.train({ steps: 2 });
  assert.equal(r.steps, 2);
  assert.equal(r.examples, 8, 'its default batch');
  assert.ok(r.tokensPerSecond > 0, 'its export counts tokens');
  assert.equal(bare.steps, 2);
  // the same steps on the seq2seq kind: the same losses (one export, one state)
  const twin = engine.loadSeq2Seq(bytes);
  assert.deepEqual(twin.train({ steps: 2, batch: 4, lr: 0.01 }).losses, r.losses);
  assert.deepEqual(bare.save(), twin.save());
  assert.throws(() => bare.train({ steps: 4 }), (err) => err instanceof AttnlabError && err.code === 'ERR_LIMIT' && /steps/.test(err.message));
  assert.throws(() => bare.train({ get lr() { throw new Error('no'); } }), (err) => err instanceof AttnlabError && err.code === 'ERR_ARG');
  const base = engine.heapUsed();
  bare.destroy();
  assert.ok(engine.heapUsed() < base, 'destroy frees the model');
  bare.destroy();
  for (const call of [() => bare.train(), () => bare.save(), () => bare.steps, () => bare.hidden(), () => bare.info()]) {
    assert.throws(call, (err) => err instanceof AttnlabError && err.code === 'ERR_ARG' && /this model was destroyed/.test(err.message));
  }
  for (const m of [source, twin]) m.destroy();
});

test('every kind takes one learning-rate schedule, the engine\'s: a run in chunks follows it as one call does', async () => {
  const seq2seq = () => engine.createSeq2Seq(S2S);
  const transformer = () => engine.createTransformer({ task: 'copy', layers: 1, heads: 1, dModel: 8, context: 16, batch: 4, seed: 2 });
  const cases = [
    [seq2seq, { lr: 0.01, schedule: 'cosine', warmup: 2, decaySteps: 6, finalLr: 0.002 }],
    [transformer, { lr: 0.01, warmup: 2, decaySteps: 6, weightDecay: 0.1 }], // its default: the cosine to lr / 10
  ];
  for (const [make, schedule] of cases) {
    const [whole, chunks, flat] = [await make(), await make(), await make()];
    const one = whole.train({ steps: 6, ...schedule }).losses;
    const parts = [0, 1, 2].flatMap(() => [...chunks.train({ steps: 2, ...schedule }).losses]);
    assert.deepEqual(parts, [...one], `${whole.kind}: three calls of 2 steps on the run's schedule, one call of 6`);
    assert.deepEqual(chunks.save(), whole.save());
    if (whole.kind === 'seq2seq') { // constant: the default, which the fingerprints record
      const named = await make();
      assert.deepEqual(flat.train({ steps: 6, lr: 0.01 }).losses, named.train({ steps: 6, lr: 0.01, schedule: 'constant' }).losses);
      named.destroy();
      assert.notDeepEqual(flat.save(), whole.save());
    } else { // the transformer runs the others' schedules too
      const constant = flat.train({ steps: 6, lr: 0.01, schedule: 'constant' }).losses;
      assert.notDeepEqual([...constant], [...one], 'constant is not the cosine');
      const named = await make();
      const low = named.train({ steps: 6, ...schedule, finalLr: 0.005 }).losses; // not lr / 10
      assert.notDeepEqual([...low], [...one], 'a final rate of its own changes the run');
      named.destroy();
    }
    assert.throws(() => whole.train({ schedule: 'linear' }), (err) => err.code === 'ERR_ARG' && /'constant', 'cosine'/.test(err.message));
    assert.throws(() => whole.train({ ...schedule, finalLr: 1 }), (err) => err.code === 'ERR_VALUE' && /finalLr/.test(err.message));
    for (const m of [whole, chunks, flat]) m.destroy();
  }
});
