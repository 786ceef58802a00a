// The training lab's worker under Node's worker_threads, through the same
// client the page uses: create, train, evaluate, translate, save/load; bad
// requests (malformed or unserialisable ones too) come back as errors with a
// message and a code, and the worker and its models keep working afterwards.
// A GPT-2 checkpoint opens there with its config.json, as the lab opens one.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { LabClient } from '../../web/worker/lab-client.js';

let lab;
before(async () => {
  lab = new LabClient(new Worker(new URL('../../web/worker/lab-worker.js', import.meta.url)));
  const { simd, threads, threadsReason } = await lab.call('init', {});
  assert.equal(typeof simd, 'boolean');
  // 'auto': the hardware's threads (at most 8) on the threaded build, or one with the reason why
  assert.ok(Number.isInteger(threads) && threads >= 1 && threads <= 8, `threads ${threads}`);
  if (threads === 1 && availableParallelism() > 1) assert.equal(typeof threadsReason, 'string');
  else assert.equal(threads, Math.min(availableParallelism(), 8));
});
after(() => lab.terminate());

async function rejects(promise, code, pattern) {
  await assert.rejects(promise, (err) => {
    assert.equal(err.code, code, err.message);
    assert.match(err.message, pattern);
    return true;
  });
}

test('a model trains, evaluates, translates, saves and loads through the worker', async () => {
  const created = await lab.call('create', { options: { task: 'reverse', minLength: 3, maxLength: 6, hidden: 24, embed: 8, seed: 2 } });
  assert.equal(created.config.task, 'reverse');
  const r = await lab.call('train', { model: created.model, options: { steps: 5, batch: 16 } });
  assert.equal(r.steps, 5);
  assert.ok(r.losses instanceof Float32Array && r.losses.length === 5);
  const e = await lab.call('evaluate', { model: created.model, options: { count: 20 } });
  assert.ok(Array.isArray(e.byLength) && e.byLength.length > 0);
  const t = await lab.call('translate', { model: created.model, text: '1234' });
  assert.equal(t.alignment.cols, 4);
  const bytes = await lab.call('save', { model: created.model });
  const loaded = await lab.call('load', { bytes });
  assert.notEqual(loaded.model, created.model);
  assert.deepEqual(await lab.call('translate', { model: loaded.model, text: '1234' }), t);
  await lab.call('destroy', { model: loaded.model });
  await lab.call('destroy', { model: created.model });
});

test('each shipped model file loads through the worker as its kind (the engine reads the format tag)', async () => {
  const dir = new URL('../../web/models/', import.meta.url);
  const manifest = JSON.parse(await readFile(new URL('models.json', dir), 'utf8'));
  for (const [name, spec] of Object.entries(manifest.models)) {
    const bytes = new Uint8Array(await readFile(new URL(spec.file, dir)));
    const loaded = await lab.call('load', { bytes });
    assert.equal(loaded.kind, spec.kind, name);
    assert.equal(loaded.config.task, spec.options.task, name);
    assert.equal(typeof loaded.inputAlphabet, spec.kind === 'seq2seq' ? 'string' : 'undefined', name);
    await lab.call('destroy', { model: loaded.model });
  }
  await rejects(lab.call('load', { bytes: new TextEncoder().encode('ATNLS2S\0 a bare network') }), 'ERR_VALUE', /bare seq2seq network/);
});

test('errors reach the caller with a message and code; the worker survives', async () => {
  const base = await lab.call('heapUsed');
  await rejects(lab.call('create', { options: { task: 'pairs', pairs: 'ab\tcd\nbroken line\n' } }), 'ERR_VALUE', /line 2/);
  await rejects(lab.call('load', { bytes: new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8, 9]) }), 'ERR_VALUE', /not an attnlab/);
  await rejects(lab.call('train', { model: 999 }), 'ERR_ARG', /no model 999/);
  await rejects(lab.call('fly', {}), 'ERR_ARG', /unknown action "fly"/);
  assert.equal(await lab.call('heapUsed'), base, 'nothing leaked');
  const m = await lab.call('create', { options: { task: 'copy', minLength: 2, maxLength: 4, hidden: 8, embed: 4 } });
  await rejects(lab.call('translate', { model: m.model, text: 'abc' }), 'ERR_VALUE', /'a'/);
  const r = await lab.call('train', { model: m.model, options: { steps: 2 } });
  assert.equal(r.steps, 2, 'the model still trains after an error');
  await lab.call('destroy', { model: m.model });
});

/** Posts a raw message (not through the client) and waits for the reply with this id. */
function raw(message) {
  return new Promise((resolve) => {
    const onMessage = (data) => {
      if (data?.id !== message?.id) return;
      lab.worker.off('message', onMessage);
      resolve(data);
    };
    lab.worker.on('message', onMessage);
    lab.worker.postMessage(message);
  });
}

test('malformed and unserialisable messages get a clear error reply, not a serialisation failure', async () => {
  const m = await lab.call('create', { options: { task: 'copy', minLength: 2, maxLength: 4, hidden: 8, embed: 4 } });
  const cases = [
    [{ id: 'r1', action: 'train', model: 10n }, 'ERR_ARG', /model: no model 10n \(a BigInt\) in this worker/],
    [{ id: 'r2', action: 'train', model: { handle: 1 } }, 'ERR_ARG', /model: no model an object/],
    [{ id: 'r3' }, 'ERR_ARG', /action: unknown action undefined/],
    [{ id: 'r4', action: 'toString' }, 'ERR_ARG', /action: unknown action "toString"/],
    [{ id: 'r5', action: 10n }, 'ERR_ARG', /action: unknown action 10n/],
    [{ id: 'r6', action: 'create', options: 10n }, 'ERR_ARG', /createSeq2Seq: expected an options object/],
    [{ id: 'r7', action: 'translate', model: m.model, text: 10n }, 'ERR_ARG', /text: expected a string \(got 10n/],
    [{ id: 'r8', action: 'load', bytes: 10n }, 'ERR_ARG', /loadModel: expected the bytes/],
    [{ id: 'r9', action: 'train', model: m.model, options: { batch: 10n } }, 'ERR_VALUE', /batch must be an integer \(got 10n/],
  ];
  for (const [message, code, pattern] of cases) {
    const reply = await raw(message);
    assert.ok(reply.error && !('result' in reply), `${message.id}: an error reply`);
    assert.equal(reply.error.code, code, `${message.id}: ${reply.error.message}`);
    assert.match(reply.error.message, pattern, message.id);
  }
  // Messages without an object or an id are answered too (with no id to match, the client ignores them).
  for (const message of [null, 42, 'train', [1, 2]]) lab.worker.postMessage(message);
  await rejects(lab.call('train', { model: m.model, options: { onStep() {} } }), 'ERR_ARG', /train: the arguments cannot be sent to the lab worker/);
  await rejects(lab.call('translate', { model: m.model, text: Symbol('x') }), 'ERR_ARG', /cannot be sent/);
  const r = await lab.call('train', { model: m.model, options: { steps: 1 } });
  assert.equal(r.steps, 1, 'the worker and the model keep working');
  await lab.call('destroy', { model: m.model });
});

test('a GPT-2 checkpoint opens in the worker with its config.json (its bytes moved, not copied), tokenizes, reads, evaluates with a head ablated', async () => {
  const { gpt2Checkpoint, TINY } = await import('../lib/gpt2-checkpoint.mjs');
  const config = { ...TINY, vocab_size: 50257, n_positions: 32, n_ctx: 32 };
  const { bytes } = gpt2Checkpoint({ config, seed: 5 });
  const made = await lab.call('load', { bytes, config: JSON.stringify(config) }, [bytes.buffer]);
  assert.equal(bytes.byteLength, 0, 'the file\'s buffer went to the worker');
  assert.equal(made.kind, 'transformer');
  assert.equal(made.config.architecture, 'gpt2');
  // the vocabulary, sent as one string and its texts' ends, is the list again, text for text the engine's
  assert.equal(made.config.vocabulary.length, 50257);
  const { loadEngine } = await import('../../web/engine/index.js');
  const direct = await (await loadEngine({ threads: 1 })).loadModel(gpt2Checkpoint({ config, seed: 5 }).bytes, { config });
  assert.deepEqual(made.config.vocabulary, direct.config.vocabulary);
  assert.deepEqual([made.config.vocabulary[0], made.config.vocabulary[50256], made.config.vocabulary[220]], ['!', '<|endoftext|>', ' ']);
  direct.destroy();
  const { ids, tokens } = await lab.call('tokenize', { model: made.model, text: 'Hello world<|endoftext|>' });
  assert.deepEqual([...ids], [15496, 995, 50256]);
  assert.deepEqual(tokens, ['Hello', ' world', '<|endoftext|>']);
  const view = await lab.call('inspect', { model: made.model, input: { ids }, options: { lens: true } });
  assert.equal(view.attention.length, config.n_layer);
  const all = await lab.call('evaluate', { model: made.model, options: { ids } });
  const cut = await lab.call('evaluate', { model: made.model, options: { ids, ablate: [{ layer: 1, head: 0 }] } });
  assert.ok(Number.isFinite(all.loss) && Number.isFinite(cut.loss) && all.loss !== cut.loss);
  // without its config the file is refused with a code, and the worker keeps working
  await assert.rejects(lab.call('load', { bytes: gpt2Checkpoint({ config, seed: 5 }).bytes }), (err) => typeof err.code === 'string' && err.code.startsWith('ERR_'));
  assert.equal((await lab.call('evaluate', { model: made.model, options: { ids } })).loss, all.loss);
  await lab.call('destroy', { model: made.model });
});
