// The one reading of an induction head over a run (web/engine/induction.js), which the lab,
// Learn's chapter 9 and scripts/induction-plot.mjs share: where a head formed, and a recorded
// run's head scores checked against the model's shape. A small hand-made run each.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defaultsOf } from '../../web/engine/defaults.js';
import { FORMED, LOSS_WINDOW, inductionFormed, readHeadScores } from '../../web/engine/induction.js';

/** A run of 2 layers × 2 heads: `ind[l][h]` every measurement's induction score, previous-token 0.5. */
const run = (steps, ind) => steps.map((step, i) => ({
  step, heads: ind.map((layer) => layer.map((s) => ({ previousToken: 0.5, induction: s[i] }))),
}));

test('a head is formed where its induction score first passes the induction headline', () => {
  assert.equal(FORMED, defaultsOf('transformer', { task: 'induction' }).headline.induction);
  const steps = [0, 10, 20, 30, 40];
  const points = run(steps, [
    [[0.9, 0.9, 0.9, 0.9, 0.9], [0, 0, 0, 0, 0]], // layer 0 is never an induction head, however high
    [[0.05, 0.08, 0.2, 0.45, 0.7], [0.02, 0.05, 0.3, 0.5, 0.8]],
  ]);
  // a test loss measured with the scores: the one at each step (window 1)
  const losses = [0, 10, 20, 30, 40].map((step) => ({ step, value: 3 - step / 20 }));
  // both pass at step 30: the higher; its rise began at its last score below FORMED / 4 (step 10)
  assert.deepEqual(inductionFormed(points, losses, 1), {
    layer: 1, head: 1, step: 30, score: 0.5, fromStep: 10, fromScore: 0.05, lossFrom: 2.5, lossTo: 1.5,
  });
  // no losses: the loss is unknown, not 0
  const f = inductionFormed(points);
  assert.equal(f.lossFrom, null);
  assert.equal(f.lossTo, null);
  // none past FORMED yet
  assert.equal(inductionFormed(points.slice(0, 3), losses, 1), null);
  assert.equal(inductionFormed([], losses), null);
});

test("every step's training loss is read as the mean of the LOSS_WINDOW (20) steps up to a step", () => {
  assert.equal(LOSS_WINDOW, 20);
  const points = run([0, 40], [[[0, 0], [0, 0]], [[0, 0.9], [0, 0]]]);
  const losses = Array.from({ length: 41 }, (_, step) => ({ step, value: step }));
  const f = inductionFormed(points, losses);
  assert.equal(f.lossTo, (21 + 40) / 2, 'steps 21..40');
  assert.equal(f.lossFrom, 0, 'step 0 alone');
});

test('a recorded run reads only as the model it is said to be of', () => {
  const good = run([0, 25], [[[0.1, 0.2], [0.1, 0.2]], [[0.1, 0.6], [0.1, 0.7]]]);
  good[1].extra = 'dropped';
  const read = readHeadScores(good, 2, 2);
  assert.deepEqual(read, run([0, 25], [[[0.1, 0.2], [0.1, 0.2]], [[0.1, 0.6], [0.1, 0.7]]]));
  assert.notEqual(read[0].heads, good[0].heads, 'a copy');
  assert.deepEqual(readHeadScores([], 2, 2), []);
  assert.equal(readHeadScores(good, 2, 2, 24), null, 'a step past the model\'s own');
  assert.equal(readHeadScores(good, 3, 2), null, 'another number of layers');
  assert.equal(readHeadScores(good, 2, 1), null, 'another number of heads');
  for (const bad of [null, {}, 'x', [{ step: -1, heads: good[0].heads }], [{ step: 1.5, heads: good[0].heads }],
    [{ step: 0, heads: [[{ previousToken: 0.1, induction: 1.5 }, { previousToken: 0, induction: 0 }], good[0].heads[1]] }],
    [{ step: 0, heads: [[{ previousToken: NaN, induction: 0 }, { previousToken: 0, induction: 0 }], good[0].heads[1]] }],
    [{ step: 0, heads: [[null, { previousToken: 0, induction: 0 }], good[0].heads[1]] }]]) {
    assert.equal(readHeadScores(bad, 2, 2), null, JSON.stringify(bad));
  }
});

test('no other code in web/ or scripts/ finds a formed head or checks a recorded run on its own', () => {
  const root = fileURLToPath(new URL('../..', import.meta.url));
  const skip = new Set(['wasm', 'vendor', 'data', 'models']);
  const found = [];
  const walk = (dir) => {
    for (const e of readdirSync(join(root, dir), { withFileTypes: true })) {
      const path = `${dir}/${e.name}`;
      if (e.isDirectory() && !skip.has(e.name)) walk(path);
      else if (/\.m?js$/.test(e.name) && path !== 'web/engine/induction.js') {
        const text = readFileSync(join(root, path), 'utf8');
        if (/FORMED \/ 4|function (inductionFormed|phaseChange|lossAt)\b|previousToken\) && \w+\(\w+\?\.induction/.test(text)) found.push(path);
      }
    }
  };
  walk('web');
  walk('scripts');
  assert.deepEqual(found, []);
});
