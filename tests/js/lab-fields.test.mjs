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
import { fieldProblem, rangeText } from '../../web/lab/field-check.js';
import { explain } from '../../web/lab/messages.js';
import { codec, PROPERTIES } from '../../web/lab/state.js';
import { ANSWER_TASKS, TASK_PATTERNS, scoredPositions, verdict } from '../../web/lab/transformer-guide.js';
import { playgroundState } from '../../web/lab/transformer-state.js';

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

test("a numeric field's range is the property table's (Context's minimum the engine's), and a bad value is said in words under the field's name", () => {
  const { minContext, maxContext } = engineLimits().transformer;
  assert.equal(PROPERTIES.tfContext.min, minContext, "Context's minimum is the engine's");
  assert.equal(rangeText(PROPERTIES.tfContext), `${minContext} to ${maxContext}`);
  assert.equal(rangeText(PROPERTIES.tfLr), '0.000001 to 1');
  assert.equal(rangeText(PROPERTIES.lr), 'at least 0.000001');
  assert.equal(rangeText(PROPERTIES.seed), '0 to 2,147,483,647');
  const say = (name, label, raw, state) => fieldProblem(PROPERTIES[name], label, raw, state);
  assert.equal(say('tfContext', 'Context', '1'), `Context must be a whole number from ${minContext} to ${maxContext}; 1 is below that.`);
  assert.equal(say('tfContext', 'Context', '999'), `Context must be a whole number from ${minContext} to ${maxContext}; 999 is above that.`);
  assert.equal(say('tfContext', 'Context', '12.5'), `Context must be a whole number from ${minContext} to ${maxContext}; 12.5 is not whole.`);
  assert.equal(say('tfContext', 'Context', ''), `Context must be a whole number from ${minContext} to ${maxContext}.`);
  assert.equal(say('tfContext', 'Context', '48'), null);
  assert.equal(say('tfDModel', 'dModel', '30', { tfHeads: 4 }), 'dModel is not a multiple of the 4 heads.');
  assert.equal(say('maxLength', 'Max length', '3', { minLength: 5 }), 'Max length is below Min length (5).');
  assert.equal(say('lr', 'Learning rate', '0'), 'Learning rate must be a number, at least 0.000001; 0 is below that.');
});

test('a context too short for the task: the Transformer family grows it to the minimum the engine names, and the message names Context', () => {
  const err = new Error("createTransformer: context: 32; the 'dates' task needs at least 39 (the longest date, '=' and the answer)");
  const state = { ...codec.defaults(), task: 'transformer', tfTask: 'dates', tfContext: 32 };
  const fix = familyOf(state).repair(state, err);
  assert.equal(fix.name, 'tfContext');
  assert.equal(fix.value, 39);
  assert.match(fix.say, /Context/);
  assert.match(fix.say, /at least 39/);
  assert.equal(familyOf(state).repair({ ...state, tfContext: 39 }, err), null, 'only for the context the engine refused');
  assert.equal(familyOf(state).repair(state, new Error('something else')), null);
  assert.equal(familyOf({ task: 'reverse' }).repair(state, err), null, 'other families have nothing to repair');
  const { text } = explain(err, { doing: 'create' });
  assert.equal(text, 'Context is 32 tokens, but the dates task needs at least 39: set Context to 39 or more.');
});

test("a head's playground link says where it came from, and the playground takes it as short plain text only", async () => {
  const { codec: playground } = await import('../../web/playground/state.js');
  const map = { rows: 2, cols: 2, data: Float32Array.from([1, 0, 0.25, 0.75]) };
  const from = "layer 1, head 1 of the lab's induction transformer, step 1,675";
  const { hash } = playgroundState(['a', 'b'], map, from);
  const { state, ignored } = playground.decode(hash);
  assert.deepEqual(ignored, []);
  assert.equal(state.from, from);
  assert.equal(playground.decode(playgroundState(['a', 'b'], map).hash).state.from, '', 'no provenance: none said');
  // markup, control characters and a text past the cap fall back to nothing, and the notice names the field
  for (const bad of ['<img src=x onerror=alert(1)>', 'line\nbreak', 'x'.repeat(161)]) {
    const r = playground.decode(`#ver=2&preset=self&from=${encodeURIComponent(bad)}`);
    assert.equal(r.state.from, '', JSON.stringify(bad));
    assert.deepEqual(r.ignored.map((f) => f.name), ['from']);
  }
  assert.equal(playground.decode(`#ver=2&from=${'x'.repeat(160)}`).state.from.length, 160);
});

test("each task says what pattern to look for; the scored positions are the answer's; Generate's verdict is against the true answer", () => {
  assert.match(TASK_PATTERNS.reverse, /anti-diagonal/);
  assert.match(TASK_PATTERNS.copy, /shifted diagonal/);
  assert.match(TASK_PATTERNS.induction, /one position after/);
  for (const task of ANSWER_TASKS) assert.ok(TASK_PATTERNS[task], task);
  // "852=" then "258": the "=" (position 3) predicts the first answer token, position 5 the last
  assert.deepEqual([...scoredPositions(4, 3, 7)], [3, 4, 5]);
  assert.deepEqual([...scoredPositions(4, 3, 5)], [3, 4], 'only the positions shown');
  assert.deepEqual(verdict(['2', '5', '8'], ['2', '5', '8']), { right: true, text: '✓ right' });
  assert.deepEqual(verdict(['2', '5'], ['2', '5', '8']), { right: false, text: '✗ the answer is 258' });
  assert.deepEqual(verdict(['9'], ['23'], '23'), { right: false, text: '✗ the answer is 23' });
});
