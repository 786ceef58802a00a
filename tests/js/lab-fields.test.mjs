// The lab's forms and links, where the logic is pure: the elapsed time never
// reads "1 min 60 s", a link carries only its own family's settings, each
// numeric field's range is the property table's (the engine's limits), and a
// task that needs a longer context says so.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { loadEngine } from '../../web/engine/index.js';
import { duration } from '../../web/ui/format.js';
import { familyOf, linkOf } from '../../web/lab/families.js';
import { adoptLimits, engineLimits } from '../../web/lab/limits.js';
import { codec } from '../../web/lab/state.js';

before(async () => adoptLimits(engineLimits(await loadEngine())));

test('duration: rounded once, so its edges never read "60.0 s" or "1 min 60 s"', () => {
  assert.equal(duration(0), '0.0 s');
  assert.equal(duration(12.34), '12.3 s');
  assert.equal(duration(59.94), '59.9 s');
  assert.equal(duration(59.96), '1 min 0 s');
  assert.equal(duration(60), '1 min 0 s');
  assert.equal(duration(119.4), '1 min 59 s');
  assert.equal(duration(119.6), '2 min 0 s');
  assert.equal(duration(125.2), '2 min 5 s');
  assert.equal(duration(3599.7), '60 min 0 s');
  for (let s = 0; s < 4000; s += 0.05) assert.doesNotMatch(duration(s), /\b60(\.0)? s/, `${s} s`);
});

test("a link carries only its family's settings: a transformer's no seq2seq or image field, and theirs no transformer field", () => {
  const all = codec.decode('#ver=2&task=transformer&tfLayers=3&tfContext=48&minLength=5&hidden=32&clutter=7&mode=hard&text=abc&seed=4').state;
  const tf = linkOf(all);
  assert.match(tf, /tfLayers=3/);
  assert.match(tf, /tfContext=48/);
  assert.match(tf, /seed=4/);
  for (const f of ['minLength', 'hidden', 'clutter', 'mode', 'text=']) assert.doesNotMatch(tf, new RegExp(`[#&]${f}`), `${f} in ${tf}`);
  for (const [task, foreign] of [['reverse', ['tfLayers', 'tfContext', 'clutter', 'mode']], ['cluttered', ['tfLayers', 'tfContext', 'minLength', 'text=']]]) {
    const link = linkOf({ ...all, task });
    assert.match(link, /seed=4/, link);
    for (const f of foreign) assert.doesNotMatch(link, new RegExp(`[#&]${f}`), `${task}: ${f} in ${link}`);
    // what the link keeps opens the same model
    const back = codec.decode(link).state;
    for (const k of familyOf(back).linkKeys) assert.deepEqual(back[k], { ...all, task }[k], `${task}: ${k}`);
  }
});
