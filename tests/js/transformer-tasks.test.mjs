// The transformer's tasks on data through the JS API on both builds: 'dates'
// (the seq2seq dates task as "date=answer", the answer scored, the same
// examples and test dates as the seq2seq model's) and 'names' (the list
// web/data/names.txt, which the engine loads itself: its vocabulary, its
// disjoint splits, training, evaluation and sampling), and their errors.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { rejectsCode, throwsCode } from '../lib/assert.mjs';
import { isTestName, splitNames } from '../lib/names.mjs';
import { loadNames, NAMES_URL } from '../../web/engine/names.js';
import { withEngines } from './builds.mjs';

const SMALL = { layers: 1, heads: 2, dModel: 32, dFF: 64, batch: 16, seed: 3 };
const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];
const listText = await readFile(NAMES_URL, 'utf8');
const list = new Set(listText.split('\n').filter(Boolean));

/** The date an ISO answer names is in the human input: its year and its month (by number or name). */
function sameDate(input, iso) {
  const [y, m, d] = iso.split('-').map(Number);
  const text = input.toLowerCase();
  const month = text.includes(MONTHS[m - 1].slice(0, 3)) || new RegExp(`(^|\\D)0?${m}(\\D|$)`).test(text);
  const year = text.includes(String(y)) || new RegExp(`(^|\\D)'?${String(y % 100).padStart(2, '0')}$`).test(text);
  return month && year && new RegExp(`(^|\\D)0?${d}(\\D|$)`).test(text) && y >= 1950 && y <= 2049;
}

test('scripts/names.mjs wrote one lowercase name per line, sorted, no repeats, in two splits of about 90% / 10%', () => {
  const names = listText.split('\n');
  assert.equal(names.pop(), '', 'ends with a newline');
  assert.ok(names.length > 8000, `${names.length} names`);
  assert.ok(names.every((n) => /^[a-z]+(-[a-z]+)*$/.test(n)));
  assert.deepEqual(names, [...new Set(names)].sort());
  const { train, test: held } = splitNames(listText);
  assert.ok(held.length > 0.08 * names.length && held.length < 0.12 * names.length, `${held.length} test names`);
  assert.equal(train.length + held.length, names.length);
});

test('loadNames reads the list once per URL; a missing list is ERR_DATA naming the script that makes it', async () => {
  assert.equal(await loadNames(), listText);
  assert.equal(loadNames(), loadNames());
  await rejectsCode(loadNames(new URL('file:///nonexistent/names.txt')), 'ERR_DATA', /names\.mjs/);
});

for (const { engine, ...build } of await withEngines()) {
  describe(`transformer tasks on data (${build.name})`, { skip: build.skip }, () => {
    // examples() cuts the input at the first scored position and lists every scored position's target:
    // "date=" and the 10 characters of the answer say the scored positions are exactly the answer's
    test("'dates': examples are \"date=\" and its ISO answer, the seq2seq task's own examples, test dates never trained on", async () => {
      const m = await engine.createTransformer({ task: 'dates', ...SMALL });
      const s2s = engine.createSeq2Seq({ task: 'dates', seed: 1 });
      assert.equal(m.config.task, 'dates');
      assert.ok(m.config.sequenceLength <= m.config.context);
      for (const split of ['train', 'test']) {
        const ours = m.examples({ split, count: 300, seed: 4 });
        const theirs = s2s.examples({ split, count: 300, seed: 4 });
        assert.deepEqual(ours, theirs.map((e) => ({ input: `${e.input}=`, target: e.output })));
        for (const e of ours) {
          assert.match(e.target, /^\d{4}-\d{2}-\d{2}$/);
          assert.ok(sameDate(e.input.slice(0, -1), e.target), `${e.input} ${e.target}`);
        }
      }
      const trainDates = new Set(m.examples({ split: 'train', count: 1000, seed: 5 }).map((e) => e.target));
      const testDates = m.examples({ split: 'test', count: 1000, seed: 6 }).map((e) => e.target);
      assert.equal(testDates.filter((d) => trainDates.has(d)).length, 0);
      s2s.destroy();
      m.destroy();
    });

    test("'dates': inspect reads a whole example; train, evaluate and greedy generate run", async () => {
      const m = await engine.createTransformer({ task: 'dates', ...SMALL });
      const [e] = m.examples({ split: 'test', count: 1, seed: 9 });
      assert.ok(e.input.endsWith('=') && e.target.length === 10);
      const v = m.inspect(e.input + e.target);
      assert.equal(v.tokens.join(''), e.input + e.target);
      assert.equal(v.predictions.length, e.input.length + 10);
      m.train({ steps: 30, lr: 3e-3 });
      const r = m.evaluate({ split: 'test', count: 64 });
      assert.equal(r.count, 64);
      assert.ok(Number.isFinite(r.loss) && r.accuracy >= 0 && r.accuracy <= 1);
      const out = m.generate(e.input, { tokens: 10, temperature: 0 });
      assert.equal(out.tokens.length, 10);
      assert.ok(out.tokens.every((t) => m.config.vocabulary.includes(t)));
      m.destroy();
    });

    test("'names': the engine loads the list; vocabulary the end of a name and its characters; names of one split each", async () => {
      const m = await engine.createTransformer({ task: 'names', ...SMALL, context: 32 });
      assert.deepEqual(m.config.vocabulary, ['\n', '-', ...'abcdefghijklmnopqrstuvwxyz']);
      assert.equal(m.config.sequenceLength, 32);
      for (const split of ['train', 'test']) {
        for (const e of m.examples({ split, count: 50, seed: 2 })) {
          assert.equal(e.input, '\n', 'every position is scored, from the first');
          assert.equal(e.target.length, 32);
          const whole = e.target.split('\n').slice(0, -1); // the last may be cut by the sequence's end
          for (const name of whole) {
            assert.ok(list.has(name), `${JSON.stringify(name)} is in the list`);
            assert.equal(isTestName(name), split === 'test', `${name} in the ${split} split`);
          }
        }
      }
      m.destroy();
    });

    test("'names': training lowers the test loss (nats per character); generate samples names of the list's characters", async () => {
      const m = await engine.createTransformer({ task: 'names', ...SMALL, context: 32 });
      const before = m.evaluate({ split: 'test', count: 128 });
      assert.ok(Math.abs(before.loss - Math.log(28)) < 0.5, `untrained: ${before.loss} near ln 28`);
      m.train({ steps: 60, lr: 1e-2, warmup: 10 });
      const after = m.evaluate({ split: 'test', count: 128 });
      assert.ok(after.loss < before.loss - 0.4, `test loss ${before.loss} -> ${after.loss}`);
      const g = m.generate('\n', { tokens: 60, temperature: 0.8, seed: 2 });
      assert.match(g.text, /^[a-z\n-]{60}$/);
      assert.ok(g.text.split('\n').length > 2, `several names: ${JSON.stringify(g.text)}`);
      assert.equal(m.generate('ma', { tokens: 5, seed: 1 }).tokens.length, 5);
      throwsCode(() => m.generate('Ma'), 'ERR_VALUE', /"M" is not in the vocabulary/);
      m.destroy();
    });

    test("'dates' and 'names' models save and load as themselves (the names list travels in the file)", async () => {
      for (const task of ['dates', 'names']) {
        const m = await engine.createTransformer({ task, layers: 1, heads: 2, dModel: 16, dFF: 16, context: task === 'dates' ? 48 : 32, seed: 2 });
        m.train({ steps: 2 });
        const bytes = m.save();
        const back = await engine.loadModel(bytes);
        assert.equal(back.config.task, task);
        assert.deepEqual(back.config.vocabulary, m.config.vocabulary);
        assert.deepEqual(back.evaluate({ count: 16 }), m.evaluate({ count: 16 }));
        assert.deepEqual(back.examples({ count: 3 }), m.examples({ count: 3 }));
        assert.ok(back.save().every((x, i) => x === bytes[i]) && back.save().length === bytes.length, `${task}: saves the same bytes`);
        m.destroy();
        back.destroy();
      }
    });

    test('errors: a text for dates or names, a context too short for the longest date', async () => {
      await rejectsCode(engine.createTransformer({ task: 'names', text: 'anna\nbob\n' }), 'ERR_ARG', /only the 'text' task takes a text \(task is 'names'\)/);
      await rejectsCode(engine.createTransformer({ task: 'dates', text: 'x' }), 'ERR_ARG', /task is 'dates'/);
      await rejectsCode(engine.createTransformer({ task: 'dates', context: 24 }), 'ERR_SHAPE', /context: 24; the 'dates' task needs at least \d+/);
      await rejectsCode(engine.createTransformer({ task: 'names', context: 4 }), 'ERR_SHAPE', /context: 4/);
    });
  });
}
