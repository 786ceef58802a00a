// "Pythia's training, by step" without the DOM (web/ui/training-scan-core.js):
// the step list as typed and as the link carries it, the passages of text, the
// strongest heads, the log axis, and the in-context-learning score: a token's
// loss from two prefixes' mean losses against the loss read off inspect's
// logits, on a GPT-NeoX checkpoint with a context of 512 on both builds.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { withEngines } from './builds.mjs';
import { NEOX_TINY, neoxCheckpoint } from '../lib/neox-checkpoint.mjs';
import { mulberry32 } from '../lib/random.mjs';
import {
  DEFAULT_SCAN_STEPS, ICL_LENGTH, MAX_SCAN_STEPS, iclNeeds, iclScore, parseSteps, passages, positionLoss, readScanLink,
  scanLink, stepTicks, stepX, stepsText, strongestHeads,
} from '../../web/ui/training-scan-core.js';

test('parseSteps takes commas, spaces, "k" and "step"; sorts, dedupes, and names what Pythia did not save', () => {
  assert.deepEqual(parseSteps('16000, 1000 2k;step4000 1000').steps, [1000, 2000, 4000, 16000]);
  assert.deepEqual(parseSteps('0 1 2 512 143k').steps, [0, 1, 2, 512, 143000]);
  const bad = parseSteps('1000 3 1500 hello 200000 -5');
  assert.deepEqual(bad.steps, [1000]);
  assert.equal(bad.problems.length, 5);
  assert.match(bad.problems.join('|'), /step 3 was not saved/);
  assert.match(bad.problems.join('|'), /step 1,500 was not saved/);
  assert.match(bad.problems.join('|'), /"hello" is not a step/);
  assert.match(bad.problems.join('|'), /"-5" is not a step/);
  const many = parseSteps(Array.from({ length: 30 }, (_, k) => (k + 1) * 1000).join(' '));
  assert.equal(many.steps.length, MAX_SCAN_STEPS);
  assert.match(many.problems[0], /30 steps are more than a scan reads/);
  assert.equal(stepsText([1000, 2000]), '1000, 2000');
  assert.deepEqual(parseSteps('').steps, []);
});

test('the link holds the step list only, the default left out; a bad list falls back with a reason', () => {
  assert.deepEqual(readScanLink('').steps, DEFAULT_SCAN_STEPS);
  assert.deepEqual(readScanLink('?repo=EleutherAI/pythia-70m&steps=1000,4000,143000').steps, [1000, 4000, 143000]);
  const bad = readScanLink('?steps=javascript:alert(1)');
  assert.deepEqual(bad.steps, DEFAULT_SCAN_STEPS);
  assert.match(bad.problems.join(' '), /names no step Pythia saved/);
  assert.equal(scanLink('?repo=EleutherAI/pythia-70m', [1000, 4000]), '?repo=EleutherAI/pythia-70m&steps=1000,4000');
  assert.equal(scanLink('?steps=1000', DEFAULT_SCAN_STEPS), '');
  assert.deepEqual(readScanLink(scanLink('', [0, 512, 2000])).steps, [0, 512, 2000]);
});

test('passages are cut one after another, whole only; the score needs a context of 501', () => {
  const ids = Int32Array.from({ length: 1200 }, (_, i) => i);
  const p = passages(ids);
  assert.equal(p.length, 2);
  assert.equal(p[1][0], ICL_LENGTH);
  assert.equal(p[1].length, ICL_LENGTH);
  assert.equal(passages(ids, { count: 1 }).length, 1);
  assert.equal(passages(ids.subarray(0, 500)).length, 0);
  assert.equal(iclNeeds(2048), null);
  assert.equal(iclNeeds(501), null);
  assert.match(iclNeeds(500), /needs 501 tokens of context .* this model reads 500/);
});

test('iclScore is the mean of loss(500) − loss(50), from prefixes\' mean losses', async () => {
  // a made-up model whose token t costs 3 / (1 + t / 100): mean losses of prefixes, as evaluate answers
  const cost = (t) => 3 / (1 + t / 100);
  const evaluate = async (ids) => {
    let sum = 0;
    for (let t = 1; t < ids.length; t++) sum += cost(t);
    return sum / (ids.length - 1);
  };
  const seen = [];
  const r = await iclScore(evaluate, passages(new Int32Array(1100)), { onPassage: (i) => seen.push(i) });
  assert.deepEqual(seen, [0, 1]);
  assert.equal(r.count, 2);
  assert.ok(Math.abs(r.late - cost(500)) < 1e-12 && Math.abs(r.early - cost(50)) < 1e-12);
  assert.ok(Math.abs(r.score - (cost(500) - cost(50))) < 1e-12);
  await assert.rejects(() => iclScore(evaluate, []), RangeError);
  await assert.rejects(() => positionLoss(evaluate, new Int32Array(10), 10), RangeError);
});

test('strongestHeads ranks by each head\'s peak over the steps; the log axis puts step 0 at its start', () => {
  const at = (a, b, c, d) => [[{ induction: a, previousToken: d }, { induction: b, previousToken: 0 }], [{ induction: c, previousToken: 0 }, { induction: 0, previousToken: 0 }]];
  const rows = [{ step: 1000, scores: at(0.1, 0.6, 0.2, 0.9) }, { step: 2000, scores: at(0.7, 0.1, 0.3, 0.1) }];
  assert.deepEqual(strongestHeads(rows, 'induction', 2).map((x) => `${x.name} ${x.peak}`), ['L0H0 0.7', 'L0H1 0.6']);
  assert.equal(strongestHeads(rows, 'previousToken', 1)[0].name, 'L0H0');
  assert.equal(stepX(0), 0);
  assert.ok(Math.abs(stepX(999) - 3) < 1e-12);
  assert.deepEqual(stepTicks(143000), [0, 1, 10, 100, 1000, 10000, 100000, 1000000]);
  assert.deepEqual(stepTicks(512), [0, 1, 10, 100, 1000]);
});

test('a token\'s loss from two prefixes equals the loss read off inspect\'s logits (a GPT-NeoX checkpoint, context 512)', async () => {
  const config = { ...NEOX_TINY, max_position_embeddings: 512 };
  const { bytes } = neoxCheckpoint({ config, seed: 4 });
  const random = mulberry32(9);
  const ids = Int32Array.from({ length: ICL_LENGTH }, () => Math.floor(random() * config.vocab_size));
  for (const { engine, name } of await withEngines()) {
    const m = await engine.loadModel(bytes, { config });
    try {
      const logits = m.inspect({ ids }, { logits: true }).logits;
      const V = logits.cols;
      const fromLogits = (t) => {
        const row = logits.data.subarray((t - 1) * V, t * V);
        const max = Math.max(...row);
        let sum = 0;
        for (const z of row) sum += Math.exp(z - max);
        return Math.log(sum) + max - row[ids[t]];
      };
      const evaluate = async (x) => m.evaluate({ ids: x }).loss;
      for (const t of [1, 2, 50, 500]) {
        const got = await positionLoss(evaluate, ids, t);
        assert.ok(Math.abs(got - fromLogits(t)) < 2e-4, `${name}: token ${t}: ${got} from prefixes, ${fromLogits(t)} from the logits`);
      }
      const { score, late, early } = await iclScore(evaluate, [ids]);
      assert.ok(Math.abs(score - (fromLogits(500) - fromLogits(50))) < 4e-4, `${name}: score ${score}`);
      assert.ok(Math.abs(late - early - score) < 1e-12);
    } finally {
      m.destroy();
    }
  }
});
