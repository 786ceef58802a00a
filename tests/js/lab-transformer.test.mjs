// The lab's Transformer family without a browser: the worker's transformer
// actions through the page's client (names from the engine, create, train,
// inspect, headScores, generate, evaluate with an ablated head), the family's
// link fields (round trip, bad values back to their defaults), and the
// playground state that shows one head's weights exactly; the text box read
// in characters against the engine's bounds; save and load through
// the worker, the shipped pretrained transformer picked by its settings, and the
// time-lapse's frames keeping weights that read a new input as the model was.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Worker } from 'node:worker_threads';
import { LabClient } from '../../web/worker/lab-client.js';
import { readFile } from 'node:fs/promises';
import { codec } from '../../web/lab/state.js';
import { pickPretrainedTransformer, transformerSettings } from '../../web/lab/pretrained.js';
import { transformerFamily } from '../../web/lab/family-transformer.js';
import { adoptLimits } from '../../web/lab/limits.js';
import { Session } from '../../web/lab/session.js';
import { PLAYGROUND_TOKENS, checkNames, playgroundState, transformerOptions } from '../../web/lab/transformer-state.js';
import { readTextBox } from '../../web/lab/transformer-text.js';

let lab;
let names;
before(async () => {
  lab = new LabClient(new Worker(new URL('../../web/worker/lab-worker.js', import.meta.url)));
  let limits;
  ({ transformer: names, limits } = await lab.call('init', {}));
  adoptLimits(limits); // the link's bounds are the engine's limits, as on the page
});
after(() => lab.terminate());

test('init names the transformer tasks and positions the engine has; a transformer trains and is read through the worker', async () => {
  for (const t of ['induction', 'copy', 'reverse', 'sort', 'modular', 'text']) assert.ok(names.tasks.includes(t), t);
  assert.ok(names.positional.includes('learned') && names.positional.includes('none'));
  const s = codec.decode('#ver=2&task=transformer&tfLayers=2&tfHeads=2&tfDModel=16&tfContext=32').state;
  const made = await lab.call('createTransformer', { options: transformerOptions(s) });
  assert.equal(made.kind, 'transformer');
  assert.equal(made.config.layers, 2);
  const r = await lab.call('train', { model: made.model, options: { steps: 3, batch: 8, lr: 3e-3, warmup: 100, decaySteps: 4000 } });
  assert.equal(r.steps, 3);
  const [ex] = await lab.call('examples', { model: made.model, options: { split: 'test', count: 1, seed: 1 } });
  const view = await lab.call('inspect', { model: made.model, input: ex.input, options: { ablate: [] } });
  assert.equal(view.attention.length, 2);
  assert.equal(view.attention[1].length, 2);
  assert.equal(view.attention[0][0].rows, [...ex.input].length);
  assert.equal(view.lens.length, 2);
  const scores = await lab.call('headScores', { model: made.model, options: { count: 8 } });
  assert.ok(Number.isFinite(scores[1][1].induction));
  const g = await lab.call('generate', { model: made.model, prompt: ex.input, options: { tokens: 4, temperature: 0 } });
  assert.equal(g.tokens.length, 4);
  const full = await lab.call('evaluate', { model: made.model, options: { split: 'test', count: 50 } });
  const cut = await lab.call('evaluate', { model: made.model, options: { split: 'test', count: 50, ablate: [{ layer: 0, head: 1 }] } });
  assert.notEqual(cut.loss, full.loss);
  await assert.rejects(lab.call('inspect', { model: made.model, input: ex.input, options: { ablate: [{ layer: 2, head: 0 }] } }), (err) => err.code === 'ERR_VALUE' || err.code === 'ERR_ARG' || err.code === 'ERR_LIMIT');
  await lab.call('destroy', { model: made.model });
});

test('the family\'s link round-trips; a bad field falls back to its default and is named', () => {
  const s = codec.decode('#ver=2&task=transformer&tfTask=copy&tfLayers=3&tfHeads=2&tfDModel=32&tfDFF=64&tfAblate=L2H1,L0H0&tfInput=abc').state;
  const back = codec.decode(codec.encode(s)).state;
  assert.deepEqual(back, s);
  assert.deepEqual(back.tfAblate, ['L2H1', 'L0H0']);
  const bad = codec.decode('#ver=2&task=transformer&tfHeads=3&tfDModel=16&tfAblate=L0H5&tfLayers=99');
  assert.deepEqual(bad.ignored.map((f) => f.name).sort(), ['tfAblate', 'tfDModel', 'tfLayers']);
  assert.equal(bad.state.tfDModel % bad.state.tfHeads, 0, 'the default width fits the heads');
  assert.deepEqual(bad.state.tfAblate, []);
  const odd = codec.decode('#ver=2&task=transformer&tfTask=nonesuch&tfPositional=alibi').state;
  const reset = checkNames(odd, { tasks: ['induction', 'copy'], positional: ['learned', 'rope'] });
  assert.deepEqual(reset.map((f) => f.name), ['tfTask', 'tfPositional']);
  assert.equal(odd.tfTask, 'induction');
  assert.equal(odd.tfPositional, 'rope', 'the default');
  // an engine without the default's name: its first
  const older = codec.decode('#ver=2&task=transformer&tfPositional=alibi').state;
  checkNames(older, { tasks: ['induction'], positional: ['learned', 'none'] });
  assert.equal(older.tfPositional, 'learned');
});

/** The playground's causal softmax of (X Wq)(X Wk)ᵀ / √d for the link's fields (heads = 1, X and Wk one-hot). */
function playgroundWeights(hash) {
  const f = Object.fromEntries(hash.slice(1).split('&').map((kv) => kv.split('=')));
  const matrix = (t) => t.split(';').map((r) => r.split(',').map(Number));
  const x = matrix(f.x);
  const wq = matrix(f.wq);
  const wk = matrix(f.wk);
  const n = x.length;
  const mul = (a, b) => a.map((r) => b[0].map((_, j) => r.reduce((s, v, k) => s + v * b[k][j], 0)));
  const q = mul(x, wq);
  const k = mul(x, wk);
  return {
    fields: f,
    weights: q.map((qi, i) => {
      const e = k.slice(0, i + 1).map((kj) => Math.exp(qi.reduce((s, v, d) => s + v * kj[d], 0) / Math.sqrt(n)));
      const sum = e.reduce((a, b) => a + b, 0);
      return e.map((v) => v / sum);
    }),
  };
}

test('a head opens in the playground with its tokens and its weights (one-hot tokens, log-weights as queries)', () => {
  const n = 6;
  // a causal attention map: row i spread over keys 0..i, with weights down to 1e-12
  const data = new Float32Array(n * n);
  for (let i = 0; i < n; i++) {
    const raw = Array.from({ length: i + 1 }, (_, j) => (j === 0 && i > 2 ? 1e-12 : 1 + ((i * 7 + j * 3) % 5)));
    const sum = raw.reduce((a, b) => a + b, 0);
    raw.forEach((v, j) => { data[i * n + j] = v / sum; });
  }
  const tokens = ['a', ' ', '<', ',', '\n', 'b'];
  const p = playgroundState(tokens, { rows: n, cols: n, data });
  const { fields, weights } = playgroundWeights(p.hash);
  assert.equal(fields.mode, 'self');
  assert.equal(fields.mask, 'causal');
  assert.equal(fields.heads, '1');
  assert.deepEqual(fields.tokens.split(',').map(decodeURIComponent), ['a', '␣', '‹', '‚', '↵', 'b']);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j <= i; j++) assert.ok(Math.abs(weights[i][j] - data[i * n + j]) < 0.01, `weight ${i},${j}: ${weights[i][j]} vs ${data[i * n + j]}`);
  }
  // a longer input is cut to the playground's 64 tokens (exact: causal rows read only earlier tokens)
  const long = playgroundState(Array.from({ length: 80 }, (_, i) => String(i % 10)), { rows: 80, cols: 80, data: new Float32Array(6400).fill(1 / 80) });
  assert.equal(long.tokens, PLAYGROUND_TOKENS);
  assert.equal(long.cut, true);
});

test('a transformer saved through the worker loads back as a transformer with its config, steps and maps', async () => {
  const s = codec.decode('#ver=2&task=transformer&tfLayers=2&tfHeads=2&tfDModel=16&tfContext=32&tfPositional=rope&seed=5').state;
  const made = await lab.call('createTransformer', { options: transformerOptions(s) });
  await lab.call('train', { model: made.model, options: { steps: 4, batch: 8, lr: 3e-3 } });
  const bytes = await lab.call('save', { model: made.model });
  const loaded = await lab.call('load', { bytes });
  assert.equal(loaded.kind, 'transformer');
  assert.equal(loaded.steps, 4);
  assert.deepEqual(loaded.config, made.config);
  // the lab's settings of the loaded config are the ones it was made from
  const settings = transformerSettings(loaded.config);
  for (const k of ['tfTask', 'tfLayers', 'tfHeads', 'tfDModel', 'tfDFF', 'tfContext', 'tfPositional', 'tfScore', 'seed']) assert.equal(settings[k], s[k], k);
  const input = 'abcabcab';
  const a = await lab.call('inspect', { model: made.model, input, options: {} });
  const b = await lab.call('inspect', { model: loaded.model, input, options: {} });
  assert.deepEqual(b.attention, a.attention);
  for (const m of [made, loaded]) await lab.call('destroy', { model: m.model });
});

test('the pretrained transformer is picked when the settings named match it, and not otherwise', async () => {
  const manifest = JSON.parse(await readFile(new URL('../../web/models/models.json', import.meta.url), 'utf8'));
  const spec = manifest.models.induction;
  const state = { ...codec.defaults(), task: 'transformer', ...transformerSettings(spec.options) };
  const all = new Set(['tfTask', 'tfLayers', 'tfHeads', 'tfDModel', 'tfDFF', 'tfContext', 'tfPositional', 'tfScore', 'seed']);
  assert.equal(pickPretrainedTransformer(manifest, state, all)?.name, 'induction');
  assert.equal(pickPretrainedTransformer(manifest, { ...state, tfHeads: 4 }, all), null, 'another size');
  assert.equal(pickPretrainedTransformer(manifest, { ...state, tfHeads: 4 }, new Set()).name, 'induction', 'a size not named');
  assert.equal(pickPretrainedTransformer(manifest, { ...state, tfTask: 'copy' }, new Set()), null, 'another task');
  assert.equal(pickPretrainedTransformer(manifest, { ...state, start: 'scratch' }, all), null, 'from scratch');
  // the file is what the manifest says it is
  const bytes = new Uint8Array(await readFile(new URL(`../../web/models/${spec.file}`, import.meta.url)));
  const loaded = await lab.call('load', { bytes });
  assert.equal(loaded.kind, 'transformer');
  const got = transformerSettings(loaded.config);
  for (const k of all) assert.equal(got[k], state[k], k);
  await lab.call('destroy', { model: loaded.model });
});

test('the time-lapse keeps weights: an input typed later is read as the model was at an earlier step', async () => {
  const s = codec.decode('#ver=2&task=transformer&tfLayers=1&tfHeads=2&tfDModel=16&tfContext=32').state;
  const session = new Session(lab, {});
  await session.create(transformerFamily, transformerFamily.create(s));
  session.input = 'abcdabcd';
  await session.record();
  const inspect = (s2, input) => s2.read('inspect', { input, options: { ablate: [] } });
  const inspectAt = (frame, input) => (frame.input === input && frame.view ? frame.view : session.readAt(frame.bytes, 'inspect', { input, options: { ablate: [] } }));
  const untrained = await inspect(session, 'xyzxyz');
  for (let k = 0; k < 3; k++) await session.step({ batch: 8, lr: 1e-2 });
  assert.equal(session.steps, 3);
  assert.ok(session.frames.every((f) => f.bytes instanceof Uint8Array), 'every frame keeps its weights');
  assert.equal(session.frameBytes, session.frames.reduce((n, f) => n + f.bytes.length, 0));
  // frame 0 reads a new input with the untrained weights; the recorded input comes from its view
  const at0 = await inspectAt(session.frames[0], 'xyzxyz');
  assert.deepEqual(at0.attention, untrained.attention);
  assert.notDeepEqual((await inspect(session, 'xyzxyz')).attention, untrained.attention, 'training moved the maps');
  assert.equal(await inspectAt(session.frames[0], 'abcdabcd'), session.frames[0].view);
  // a kept run comes back with its frames and weights
  const run = session.run();
  const bytes = await session.save();
  const back = new Session(lab, {});
  await back.restore(transformerFamily, run, bytes);
  assert.equal(back.steps, 3);
  assert.equal(back.frames.length, session.frames.length);
  assert.deepEqual((await inspect(back, 'xyzxyz')).attention, (await inspect(session, 'xyzxyz')).attention);
  await session.drop();
  await back.drop();
});

test('the text box: what a model learns of it, and why not, in characters against the engine\'s bounds', () => {
  assert.deepEqual(readTextBox('crème brûlée, crème caramel'), { text: 'crème brûlée, crème caramel', message: null });
  assert.equal(readTextBox('').text, null);
  assert.match(readTextBox('').message, /^Type or paste a text/);
  // 19 characters (38 bytes): short in characters, the engine's minimum named
  const short = readTextBox('é'.repeat(19));
  assert.equal(short.text, null);
  assert.match(short.message, /19 characters; a model needs at least 20/);
  assert.equal(readTextBox('🙂'.repeat(20)).text, '🙂'.repeat(20), '20 emoji are 20 characters');
  const many = Array.from({ length: 300 }, (_, i) => String.fromCodePoint(0x100 + i)).join('');
  assert.match(readTextBox(many).message, /300 different characters; a model learns at most 256/);
  const big = 'abcd '.repeat(2469);
  assert.deepEqual(readTextBox(big), { text: big.slice(0, 4000), message: 'Using the first 4,000 of 12,345 characters: the most a text can be here.' });
  // cut before a character, not inside it
  const cut = readTextBox(`${'a'.repeat(3999)}🙂 and more`);
  assert.equal(cut.text, 'a'.repeat(3999));
});

test('the maps outline the longest repeat and where an induction head looks from it', async () => {
  const { repeatOf, MIN_REPEAT } = await import('../../web/lab/transformer-guide.js');
  const r = repeatOf([...'xyabcdefqqabcdefzz']);
  assert.deepEqual({ first: r.first, second: r.second, length: r.length }, { first: 2, second: 10, length: 6 });
  // from each position of the second occurrence but its last: one after the same token's first occurrence
  assert.deepEqual(r.stripe, [[10, 3], [11, 4], [12, 5], [13, 6], [14, 7]]);
  // copy's answer repeats its input: the shifted diagonal
  assert.deepEqual(repeatOf([...'1234=1234']).stripe, [[5, 1], [6, 2], [7, 3]]);
  // nothing of MIN_REPEAT tokens repeats: no outline; a run does not overlap its own copy
  assert.equal(repeatOf([...'abcdefgh']), null);
  assert.equal(repeatOf([...'abcXabc']), null, `shorter than ${MIN_REPEAT}`);
  assert.deepEqual(repeatOf([...'aaaaaaaa']), { first: 0, second: 4, length: 4, stripe: [[4, 1], [5, 2], [6, 3]] });
});
