// The lab's families through its one session, without a browser: every family
// adapter has the same interface (the same fields, of the same types), the
// families share out the lab's tasks and link keys, and for each family the
// session's rollback (the engine's undoTrain, no save and reload) puts the
// model back as it was when a train chunk goes wrong (a loss that is not a
// number, or a chunk that fails and leaves weights the model can no longer
// evaluate), after which it trains on.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Worker } from 'node:worker_threads';
import { LabClient } from '../../web/worker/lab-client.js';
import { FAMILIES, familyOf, familyOfKind } from '../../web/lab/families.js';
import { ADAPTER_FIELDS } from '../../web/lab/family.js';
import { adoptLimits } from '../../web/lab/limits.js';
import { Session } from '../../web/lab/session.js';
import { PROPERTIES, codec } from '../../web/lab/state.js';

let lab;
before(async () => {
  lab = new LabClient(new Worker(new URL('../../web/worker/lab-worker.js', import.meta.url)));
  adoptLimits((await lab.call('init', {})).limits);
});
after(() => lab.terminate());

/** A small model of each family, from a link. */
const SMALL = {
  text: '#ver=2&task=reverse&minLength=2&maxLength=5&hidden=12&embed=4&batch=8&start=scratch',
  images: '#ver=2&task=centered&hidden=8&channels=8&batch=4&start=scratch',
  transformer: '#ver=2&task=transformer&tfLayers=1&tfHeads=2&tfDModel=16&tfContext=16&tfBatch=4&start=scratch',
};

test('every family adapter has the same interface: each field, of the same type', () => {
  assert.deepEqual(FAMILIES.map((f) => f.name), ['text', 'images', 'transformer']);
  const fields = Object.keys(ADAPTER_FIELDS).sort();
  for (const family of FAMILIES) {
    assert.deepEqual(Object.keys(family).sort(), fields, `${family.name}: the adapter's fields`);
    for (const [name, type] of Object.entries(ADAPTER_FIELDS)) assert.equal(typeof family[name], type, `${family.name}.${name}`);
    for (const list of ['tasks', 'kinds', 'modelKeys', 'linkKeys', 'viewKeys']) assert.ok(Array.isArray(family[list]), `${family.name}.${list}`);
    for (const key of [...family.modelKeys, ...family.linkKeys, ...family.viewKeys]) assert.ok(key in PROPERTIES, `${family.name}: ${key} is a setting`);
    assert.ok(family.buttonFields instanceof Set);
    assert.equal(typeof family.evaluation.split, 'string');
  }
});

test("the families share out the lab's tasks and the worker's model kinds, and each link key belongs to one", () => {
  const tasks = FAMILIES.flatMap((f) => f.tasks);
  assert.deepEqual([...tasks].sort(), [...PROPERTIES.task.values].sort(), 'each task in one family');
  for (const task of tasks) assert.ok(familyOf({ task }).tasks.includes(task));
  for (const kind of ['seq2seq', 'vision', 'transformer']) assert.equal(FAMILIES.filter((f) => f.kinds.includes(kind)).length, 1, kind);
  assert.equal(familyOfKind('vision').name, 'images');
  const linked = new Set(FAMILIES.flatMap((f) => f.linkKeys));
  for (const name of Object.keys(PROPERTIES)) assert.ok(linked.has(name), `${name} is in a family's link`);
  // a family's link opens on that family, and round-trips
  for (const [name, hash] of Object.entries(SMALL)) {
    const { state, ignored } = codec.decode(hash);
    assert.deepEqual(ignored, [], name);
    assert.equal(familyOf(state).name, name);
    assert.deepEqual(codec.decode(codec.encode(state)).state, state);
  }
});

/**
 * A client whose train() trains, then goes wrong as `fault` says: 'nan', the
 * chunk's last loss is not a number; 'throw', the chunk fails after it trained
 * and the model no longer evaluates (an engine that does not reject a bad step).
 */
function faultyClient(fault) {
  let broken = false;
  return {
    fault: null,
    async call(action, args) {
      if (broken && action === 'evaluate') throw Object.assign(new Error('evaluate: the weights are not finite'), { code: 'ERR_VALUE' });
      if (action === 'undoTrain') broken = false;
      if (action === 'load') throw new Error('the rollback reloads the model instead of undoing the call in the engine');
      const r = await lab.call(action, args);
      if (action !== 'train' || !this.fault) return r;
      this.fault = null;
      if (fault === 'throw') {
        broken = true;
        throw Object.assign(new Error('train: a step failed'), { code: 'ERR_VALUE' });
      }
      const losses = Float32Array.from(r.losses);
      losses[losses.length - 1] = NaN;
      return { ...r, losses };
    },
  };
}

for (const family of FAMILIES) {
  for (const fault of ['nan', 'throw']) {
    test(`${family.name}: a chunk that goes wrong (${fault}) is rolled back; the model is as it was, and trains on`, async () => {
      const state = codec.decode(SMALL[family.name]).state;
      const client = faultyClient(fault);
      const errors = [];
      const session = new Session(client, { onError: (err) => errors.push(err) });
      await session.create(family, family.create(state, {}));
      assert.equal(session.family, family);
      const options = { ...family.trainOptions(state), steps: 2 };
      await session.chunkOnce(options);
      assert.equal(session.steps, 2);
      const bytes = await session.save();
      const curve = session.losses.length;
      const loss = (await session.evaluate()).loss;

      client.fault = true;
      await assert.rejects(session.chunkOnce(options), (err) => err.code === 'ERR_VALUE' && /training diverged/.test(err.message));
      assert.equal(session.steps, 2, 'back to the steps before the chunk');
      assert.equal(session.losses.length, curve, 'the chunk adds nothing to the curve');
      assert.deepEqual(await session.save(), bytes, 'the weights before the chunk');
      assert.equal((await session.evaluate()).loss, loss);

      // and through the Step button's path, the error goes to the page
      client.fault = true;
      await session.step(family.trainOptions(state));
      assert.equal(errors.length, 1);
      assert.equal(session.steps, 2);
      await session.step(family.trainOptions(state));
      assert.equal(session.steps, 3, 'it trains on');
      await session.drop();
    });
  }
}
