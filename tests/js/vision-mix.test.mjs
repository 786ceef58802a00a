// Hard attention's soft mix (train's softMix) through the JS API on both builds: its checks
// with codes (and the model usable after them), share 1 training a hard model exactly as soft
// attention with the same weights, share 0 the same as no share, and the API of a mixed model
// (predict's per-step location, evaluate's fields) unchanged; on the retina, share 0 is no share
// and a share trains the location layer from the answers (glimpses at the policy's mean). The
// schedule ({ share, hold, end } over the model's steps): the cluttered grid's default, the share
// at given steps, a run in chunks the same as one call, and its checks.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { throwsCode } from '../lib/assert.mjs';
import { withEngines } from './builds.mjs';

const HARD = { task: 'cluttered', mode: 'hard', channels: [4, 8], hidden: 16, batch: 8, seed: 5, steps: 1 };
// a hard model whose default is no share (the cluttered grid's is the table's schedule)
const CENTERED = { ...HARD, task: 'centered' };

/**
 * Three models made with `options` train 3 steps: with no share and with share 0 they save the
 * same file, byte for byte; with `share` another. Returns that mixed model (the caller destroys it).
 */
async function mixedAfterShareZero(engine, options, share) {
  const [a, b, c] = await Promise.all([0, 1, 2].map(() => engine.createVisionModel(options)));
  try {
    a.train({ steps: 3, lr: 0.01 });
    b.train({ steps: 3, lr: 0.01, softMix: 0 });
    assert.deepEqual(b.save(), a.save(), 'the same file, byte for byte');
    c.train({ steps: 3, lr: 0.01, softMix: share });
    assert.notDeepEqual(c.save(), a.save(), 'a share changes training');
    return c;
  } catch (err) {
    c.destroy();
    throw err;
  } finally {
    a.destroy();
    b.destroy();
  }
}

for (const { engine, ...build } of await withEngines()) {
  describe(`vision softMix (${build.name})`, { skip: build.skip }, () => {
    test('bad shares and models that sample nothing reject with errors naming softMix', async () => {
      const hard = await engine.createVisionModel(HARD);
      const soft = await engine.createVisionModel({ ...HARD, mode: 'soft' });
      const none = await engine.createVisionModel({ ...HARD, mode: 'soft', attention: 'none' });
      try {
        const base = engine.heapUsed();
        for (const bad of [-0.1, 1.5]) throwsCode(() => hard.train({ softMix: bad }), 'ERR_VALUE', /softMix: a share of the images, within \[0, 1\]/);
        throwsCode(() => hard.train({ softMix: 'half' }), 'ERR_VALUE', /softMix must be a finite number/);
        throwsCode(() => hard.train({ softMix: NaN }), 'ERR_VALUE', /softMix/);
        throwsCode(() => soft.train({ softMix: 0.5 }), 'ERR_ARG', /softMix: only hard attention samples.*this model's is soft/);
        throwsCode(() => none.train({ softMix: 0.5 }), 'ERR_ARG', /softMix: .*this model's is none/);
        assert.equal(engine.heapUsed(), base, 'the failed calls leak nothing');
        assert.equal(hard.steps + soft.steps + none.steps, 0, 'no step was taken');
        assert.ok(Number.isFinite(soft.train({ steps: 1, softMix: 0 }).loss), 'share 0: every model takes it');
        for (const bad of [{ share: 2 }, { hold: -0.5 }, { end: 1.5 }]) throwsCode(() => hard.train({ softMix: bad }), 'ERR_VALUE', /softMix\.\w+: a share/);
        throwsCode(() => hard.train({ softMix: { hold: 0.8, end: 0.5 } }), 'ERR_VALUE', /softMix: end 0\.5 is before hold 0\.8/);
        throwsCode(() => hard.train({ softMix: { share: 'half' } }), 'ERR_VALUE', /softMix\.share must be a finite number/);
        throwsCode(() => soft.train({ softMix: { share: 0.5 } }), 'ERR_ARG', /softMix: only hard attention samples/);
        assert.ok(Number.isFinite(hard.train({ steps: 2, softMix: 0.5 }).loss), 'the hard model trains after the errors');
      } finally {
        for (const m of [hard, soft, none]) m.destroy();
      }
    });

    test('the retina: share 0 is no share; share 1 moves the location layer, which sampling alone learns by REINFORCE', async () => {
      const RETINA = { task: 'cluttered', mode: 'hard', sensor: 'retina', hidden: 16, batch: 8, seed: 6, steps: 3 };
      const c = await mixedAfterShareZero(engine, RETINA, 1);
      try {
        // every glimpse read at the policy's mean: evaluation's glimpses, and the same predict API
        const [ex] = c.examples({ count: 1, seed: 2 });
        const { steps } = c.predict(ex.image);
        assert.equal(steps.length, 3);
        assert.ok(steps.every((s) => s.location && Number.isFinite(s.location.x) && s.location.box), 'every step has its glimpse and box');
        assert.ok(Number.isFinite(c.evaluate({ count: 20 }).accuracy));
      } finally {
        c.destroy();
      }
    });

    test('share 1: a hard model trains as soft attention with the same weights', async () => {
      const hard = await engine.createVisionModel(HARD);
      const soft = await engine.createVisionModel({ ...HARD, mode: 'soft' });
      try {
        const h = hard.train({ steps: 4, lr: 0.01, softMix: 1 }).losses;
        const s = soft.train({ steps: 4, lr: 0.01 }).losses;
        for (let i = 0; i < 4; i++) assert.ok(Math.abs(h[i] - s[i]) <= 1e-4 * s[i], `step ${i}: hard ${h[i]}, soft ${s[i]}`);
        // evaluation still reads one cell, the argmax of the same (trained) attention map
        const [ex] = hard.examples({ count: 1, seed: 3 });
        const ph = hard.predict(ex.image).steps[0];
        const ps = soft.predict(ex.image).steps[0];
        let top = 0;
        for (let i = 1; i < ps.weights.data.length; i++) if (ps.weights.data[i] > ps.weights.data[top]) top = i;
        assert.equal(ph.location.cell, top, 'the hard model reads the soft map\'s peak');
      } finally {
        hard.destroy();
        soft.destroy();
      }
    });

    test('the schedule: the cluttered grid\'s default, the share at given steps, chunks the same as one call', async () => {
      const SCHEDULE = { share: 1, hold: 0.5, end: 0.8 };
      const models = await Promise.all([0, 1, 2, 3, 4, 5].map(() => engine.createVisionModel(HARD)));
      const [byDefault, asked, one, chunked, held, stepped] = models;
      try {
        // not given: the table's schedule over its 4,000 steps, so every image reads the expected context now
        byDefault.train({ steps: 3, lr: 0.01 });
        asked.train({ steps: 3, lr: 0.01, softMix: SCHEDULE });
        assert.deepEqual(byDefault.save(), asked.save(), 'the default is { share: 1, hold: 0.5, end: 0.8 }');
        // 8 steps (decaySteps 8): after k steps taken, share 1 while k <= 2, then (6 - k) / 4, 0 from k = 6
        const run = { lr: 0.01, decaySteps: 8, softMix: { share: 1, hold: 0.25, end: 0.75 } };
        const whole = one.train({ steps: 8, ...run }).losses;
        const parts = [0, 1, 2, 3].flatMap(() => Array.from(chunked.train({ steps: 2, ...run }).losses));
        assert.deepEqual(chunked.save(), one.save(), 'four calls of 2 steps train as one call of 8');
        assert.deepEqual(parts, Array.from(whole), 'with the same losses');
        // the share at given steps: a number holds for its whole call
        const shares = [1, 1, 1, 0.75, 0.5, 0.25, 0, 0];
        for (const softMix of shares) stepped.train({ steps: 1, lr: 0.01, decaySteps: 8, softMix });
        assert.deepEqual(stepped.save(), one.save(), 'the schedule is those shares, step by step');
        held.train({ steps: 8, lr: 0.01, decaySteps: 8, softMix: 1 });
        assert.notDeepEqual(held.save(), one.save(), 'a number is a share for every step');
      } finally {
        for (const m of models) m.destroy();
      }
    });

    test('share 0 trains exactly as no share; a mixed model keeps the hard API', async () => {
      const c = await mixedAfterShareZero(engine, CENTERED, 0.5);
      try {
        const e = c.evaluate({ count: 20 });
        assert.deepEqual(Object.keys(e).sort(), ['accuracy', 'count', 'loss', 'sequenceAccuracy', 'split']);
        const [ex] = c.examples({ count: 1, seed: 2 });
        const { steps } = c.predict(ex.image);
        assert.ok(steps.every((s) => s.location && Number.isInteger(s.location.cell) && s.location.box), 'every step has its cell and box');
      } finally {
        c.destroy();
      }
    });
  });
}
