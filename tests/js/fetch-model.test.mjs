// npm run fetch-model: a course's own copy of a checkpoint, fetched from a local
// server that answers as the hub does (tests/lib/hub-server.mjs), written in the
// hub's resolve layout with hashes.json, then opened by openModel from that
// folder served by scripts/serve.mjs (hub './models' of a page's origin is the
// same URL) to the logits loadModel gives on the same bytes. A wrong hash leaves
// no file behind; the command line names a missing repo and exits 2.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fetchModel } from '../../scripts/fetch-model.mjs';
import { serve } from '../../scripts/serve.mjs';
import { loadEngine } from '../../web/engine/index.js';
import { startHub } from '../lib/hub-server.mjs';
import { neoxCheckpoint } from '../lib/neox-checkpoint.mjs';
import { tokenizerJson } from '../lib/tokenizer-json.mjs';
import { assertNear, rejectsCode } from '../lib/assert.mjs';

const WEIGHTS = 'model.safetensors';
const neox = neoxCheckpoint({ seed: 7 });
const tokenizer = JSON.stringify(tokenizerJson());
const files = { 'config.json': JSON.stringify(neox.config), [WEIGHTS]: neox.bytes, 'tokenizer.json': tokenizer };
let hub, out, engine;
before(async () => {
  hub = await startHub({ 'EleutherAI/pythia-tiny': { main: files, step1000: files } });
  out = await mkdtemp(join(tmpdir(), 'attnlab-fetch-'));
  engine = await loadEngine({ threads: 1 });
});
after(async () => {
  await hub.close();
  await rm(out, { recursive: true, force: true });
});

const sha = (data) => createHash('sha256').update(typeof data === 'string' ? Buffer.from(data) : data).digest('hex');

test('fetch-model writes the hub\'s resolve layout with hashes.json; openModel opens it from the folder served as ./models', async () => {
  const { dir, files: got } = await fetchModel({ repo: 'EleutherAI/pythia-tiny', revision: 'step1000', hub: hub.url, out });
  assert.equal(dir, join(out, 'EleutherAI', 'pythia-tiny', 'resolve', 'step1000'));
  for (const [file, data] of Object.entries(files)) {
    const bytes = readFileSync(join(dir, file));
    assert.equal(sha(bytes), sha(data), file);
    assert.deepEqual(got[file], { size: bytes.length, sha256: sha(data) });
  }
  assert.deepEqual(JSON.parse(readFileSync(join(dir, 'hashes.json'), 'utf8')), got);
  // the folder as a page's origin serves it: hub './models' resolves to this URL
  const site = await serve({ root: join(out, '..'), port: 0 });
  try {
    const base = new URL(`${out.split('/').pop()}/`, site.url).href.replace(/\/$/, '');
    const m = await engine.openModel('EleutherAI/pythia-tiny', { hub: base, revision: 'step1000' });
    const ref = await engine.loadModel(neox.bytes, { config: neox.config, tokenizer });
    try {
      const ids = [3, 17, 42, 5, 3, 17];
      assertNear(m.inspect({ ids }, { logits: true }).logits.data, Array.from(ref.inspect({ ids }, { logits: true }).logits.data), 'logits');
      assert.deepEqual(m.tokenize('hello').ids, ref.tokenize('hello').ids, 'the repo\'s tokenizer.json');
    } finally {
      m.destroy();
      ref.destroy();
    }
  } finally {
    site.server.closeAllConnections();
    await new Promise((ok) => site.server.close(ok));
  }
});

test('a wrong hash is a coded error and leaves no weights file behind', async () => {
  hub.faults[WEIGHTS] = { corrupt: true };
  try {
    await rejectsCode(fetchModel({ repo: 'EleutherAI/pythia-tiny', hub: hub.url, out }), 'ERR_DATA', /sha256 is/);
  } finally {
    delete hub.faults[WEIGHTS];
  }
  const dir = join(out, 'EleutherAI', 'pythia-tiny', 'resolve', 'main');
  assert.ok(!existsSync(join(dir, WEIGHTS)) && !existsSync(join(dir, `${WEIGHTS}.part`)), 'no weights, whole or partial');
  assert.ok(!existsSync(join(dir, 'hashes.json')));
});

test('the command line: --help, and a missing repo named with exit code 2', () => {
  const script = new URL('../../scripts/fetch-model.mjs', import.meta.url).pathname;
  const help = spawnSync(process.execPath, [script, '--help'], { encoding: 'utf8' });
  assert.equal(help.status, 0);
  assert.match(help.stdout, /Usage: npm run fetch-model -- <owner\/name>/);
  const none = spawnSync(process.execPath, [script], { encoding: 'utf8' });
  assert.equal(none.status, 2);
  assert.match(none.stderr, /which repo\?/);
  const bad = spawnSync(process.execPath, [script, '../etc', '--hub', hub.url, '--out', out], { encoding: 'utf8' });
  assert.equal(bad.status, 1);
  assert.match(bad.stderr, /ERR_ARG|owner\/name/);
});
