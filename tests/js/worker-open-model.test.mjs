// The lab worker's openModel action (what the model cards call), under Node's worker_threads
// against the local hub (tests/lib/hub-server.mjs): the model it adopts answers as loadModel's
// does for the same files, its progress arrives over the port the page passes, a cancel sent on
// that port while the weights arrive aborts it with ERR_ABORT (and the worker goes on answering),
// a missing repo is the engine's ERR_LOAD; modelSize says the size the hub reports.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { MessageChannel, Worker } from 'node:worker_threads';
import { modelSize } from '../../web/engine/index.js';
import { LabClient } from '../../web/worker/lab-client.js';
import { gpt2Checkpoint } from '../lib/gpt2-checkpoint.mjs';
import { startHub } from '../lib/hub-server.mjs';

const WEIGHTS = 'model.safetensors';
const made = gpt2Checkpoint({ seed: 4 });
let hub, lab;

before(async () => {
  hub = await startHub({ 'test-org/tiny': { main: { 'config.json': JSON.stringify(made.config), [WEIGHTS]: made.bytes } } });
  lab = new LabClient(new Worker(new URL('../../web/worker/lab-worker.js', import.meta.url)));
  await lab.call('init', { simd: false });
});
after(async () => {
  lab.terminate();
  await hub.close();
});

/** The action as the page calls it: progress heard on port1, port2 sent along. */
function open(repo, { cancelAt = null } = {}) {
  const channel = new MessageChannel();
  const heard = [];
  channel.port1.on('message', (m) => {
    if (!m.progress) return;
    heard.push(m.progress);
    if (cancelAt !== null && m.progress.file === WEIGHTS && m.progress.loaded >= cancelAt) channel.port1.postMessage({ cancel: true });
  });
  const done = lab.call('openModel', { repo, hub: hub.url, port: channel.port2 }, [channel.port2]);
  // the port's last messages may come after the action's answer (two channels): it closes a little later
  return done.finally(() => new Promise((ok) => setTimeout(ok, 100)).then(() => channel.port1.close())).then((result) => ({ result, heard }), (err) => { err.heard = heard; throw err; });
}

test('modelSize: the size the hub reports for the weights, before anything is fetched', async () => {
  assert.deepEqual(await modelSize('test-org/tiny', { hub: hub.url }), { file: WEIGHTS, bytes: made.bytes.length });
  assert.deepEqual(hub.requests.filter((r) => r.method !== 'HEAD'), []);
  await assert.rejects(modelSize('test-org/none', { hub: hub.url }), (err) => err.code === 'ERR_LOAD' && err.status === 401);
  await assert.rejects(modelSize('test-org/tiny', { hub: 'javascript:alert(1)' }), { code: 'ERR_ARG' });
});

test('openModel in the worker: the model adopted, its source, and the progress heard over the port', async () => {
  const { result, heard } = await open('test-org/tiny');
  assert.equal(result.config.architecture, 'gpt2');
  assert.equal(result.source.repo, 'test-org/tiny');
  assert.equal(result.source.files[WEIGHTS].size, made.bytes.length);
  const last = heard.filter((p) => p.file === WEIGHTS).at(-1);
  assert.deepEqual([last.loaded, last.total], [made.bytes.length, made.bytes.length]);
  const ids = [3, 17, 42, 5, 3, 17];
  const { loss } = await lab.call('evaluate', { model: result.model, options: { ids } });
  assert.ok(Number.isFinite(loss));
  await lab.call('destroy', { model: result.model });
});

test('a cancel on the port aborts the open with ERR_ABORT; the worker answers on', async () => {
  hub.faults[WEIGHTS] = { pace: 40, pieces: 20 };
  try {
    await assert.rejects(open('test-org/tiny', { cancelAt: 1 }), (err) => err.code === 'ERR_ABORT' && err.heard.some((p) => p.file === WEIGHTS));
  } finally {
    delete hub.faults[WEIGHTS];
  }
  await assert.rejects(open('test-org/none'), { code: 'ERR_LOAD' });
  assert.equal(typeof await lab.call('heapUsed'), 'number');
});
