// engine.openModel(repo, { hub, revision, onProgress, signal, cache }) against
// a local server that answers as the hub does (tests/lib/hub-server.mjs): the
// model it opens is loadModel's for the same bytes; progress, resuming a
// dropped connection, every failure's code and message, abort, and what is
// kept (a directory in Node, Cache Storage in a browser) and reopened with no
// request for the weights. First the incremental SHA-256 the checks rest on.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { Sha256, sha256Hex } from '../../web/engine/sha256.js';
import { mulberry32 } from '../lib/random.mjs';

const randomBytes = (n, seed) => {
  const rand = mulberry32(seed);
  return Uint8Array.from({ length: n }, () => Math.floor(rand() * 256));
};

test('SHA-256 in pieces equals node:crypto on random data of every length around a block and across many blocks', () => {
  for (const n of [0, 1, 3, 55, 56, 57, 63, 64, 65, 119, 120, 127, 128, 129, 1000, 4096, 100_003]) {
    const bytes = randomBytes(n, n + 1);
    const want = createHash('sha256').update(bytes).digest('hex');
    assert.equal(sha256Hex(bytes), want, `${n} bytes at once`);
    for (const step of [1, 7, 64, 1000]) {
      const h = new Sha256();
      for (let at = 0; at < n; at += step) h.update(bytes.subarray(at, at + step));
      assert.equal(h.hex(), want, `${n} bytes in pieces of ${step}`);
    }
  }
  assert.equal(sha256Hex(new TextEncoder().encode('abc')), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
});

test('a SHA-256 hasher refuses to be used after its digest', () => {
  const h = new Sha256().update(new Uint8Array(3));
  h.digest();
  assert.throws(() => h.update(new Uint8Array(1)), /after digest/);
  assert.throws(() => h.digest(), /twice/);
});

// ---- openModel against the local hub ------------------------------------------------------------

const { after, before, describe } = await import('node:test');
const { mkdtemp, readFile, readdir, rm, writeFile, mkdir, truncate } = await import('node:fs/promises');
const { tmpdir } = await import('node:os');
const path = await import('node:path');
const { loadEngine } = await import('../../web/engine/index.js');
const { startHub } = await import('../lib/hub-server.mjs');
const { gpt2Checkpoint, TINY } = await import('../lib/gpt2-checkpoint.mjs');
const { neoxCheckpoint } = await import('../lib/neox-checkpoint.mjs');
const { tokenizerJson } = await import('../lib/tokenizer-json.mjs');
const { assertNear, rejectsCode } = await import('../lib/assert.mjs');

const WEIGHTS = 'model.safetensors';
const IDS = [3, 17, 42, 5, 3, 17, 42, 5, 60, 1, 0, 63];
const gpt2 = gpt2Checkpoint({ seed: 3 });
// large enough to arrive in many pieces (about 0.6 MB)
const WIDE = { ...TINY, n_embd: 64, n_positions: 64, n_ctx: 64, vocab_size: 512 };
const wide = gpt2Checkpoint({ config: WIDE, seed: 4 });
// larger than the 4 MiB Cache Storage's writer lets run ahead (about 17 MB)
const BIG = { ...TINY, n_embd: 128, n_positions: 64, n_ctx: 64, vocab_size: 32768 };
const big = gpt2Checkpoint({ config: BIG, seed: 6 });
const neox = neoxCheckpoint({ seed: 5 });
const neoxTokenizer = JSON.stringify(tokenizerJson());
const repos = {
  'test-org/gpt2': { main: { 'config.json': JSON.stringify(gpt2.config), [WEIGHTS]: gpt2.bytes } },
  'test-org/gpt2-wide': { main: { 'config.json': JSON.stringify(WIDE), [WEIGHTS]: wide.bytes } },
  'test-org/gpt2-big': { main: { 'config.json': JSON.stringify(BIG), [WEIGHTS]: big.bytes } },
  'Test.Org/pythia_tiny-1': {
    main: { 'config.json': JSON.stringify(neox.config), [WEIGHTS]: neox.bytes, 'tokenizer.json': neoxTokenizer },
    step1000: { 'config.json': JSON.stringify(neox.config), [WEIGHTS]: neox.bytes, 'tokenizer.json': neoxTokenizer },
  },
  'test-org/no-config': { main: { [WEIGHTS]: gpt2.bytes } },
  'test-org/bert': { main: { 'config.json': JSON.stringify({ model_type: 'bert' }), [WEIGHTS]: gpt2.bytes } },
  'test-org/gpt2-cut': { main: { 'config.json': JSON.stringify(gpt2.config), [WEIGHTS]: gpt2.bytes.subarray(0, 5000) } },
};

let engine, hub, scratch;
before(async () => {
  engine = await loadEngine({ threads: 1 });
  hub = await startHub(repos);
  scratch = await mkdtemp(path.join(tmpdir(), 'attnlab-hub-'));
});
after(async () => {
  await hub.close();
  await rm(scratch, { recursive: true, force: true });
});

/** Clears the server's faults and request log between tests. */
function fresh() {
  for (const k of Object.keys(hub.faults)) delete hub.faults[k];
  hub.requests.length = 0;
}

const logitsOf = (m) => m.inspect({ ids: IDS }, { logits: true }).logits.data;

/** A model opened, checked against loadModel's on the same bytes, and destroyed. */
async function sameAsLoadModel(m, checkpoint, extra = {}) {
  const ref = await engine.loadModel(checkpoint.bytes, { config: checkpoint.config, ...extra });
  try {
    assert.equal(m.config.architecture, ref.config.architecture);
    assert.equal(m.config.parameters, ref.config.parameters);
    assertNear(logitsOf(m), Array.from(logitsOf(ref)), 'logits');
  } finally {
    ref.destroy();
    m.destroy();
  }
}

/** Runs fn with heap.withBlock watched: the most the heap held while a block was in use. */
async function peakHeap(fn) {
  const heap = engine.heap, withBlock = heap.withBlock;
  let peak = engine.heapUsed();
  heap.withBlock = (sizes, inner) => withBlock.call(heap, sizes, (p) => {
    peak = Math.max(peak, engine.heapUsed());
    return inner(p);
  });
  try {
    return { result: await fn(), peak };
  } finally {
    delete heap.withBlock;
  }
}

describe('openModel from a hub', () => {
  test('a GPT-2 repo without tokenizer.json: the redirect to the store followed, the model loadModel gives, progress heard', async () => {
    fresh();
    const events = [];
    const m = await engine.openModel('test-org/gpt2', { hub: hub.url, onProgress: (e) => events.push(e) });
    assert.equal(m.source.repo, 'test-org/gpt2');
    assert.equal(m.source.revision, 'main');
    assert.equal(m.source.hub, hub.url);
    assert.equal(m.source.files['tokenizer.json'], null, 'the 404 read as no tokenizer.json');
    assert.equal(m.source.files[WEIGHTS].size, gpt2.bytes.length);
    assert.equal(m.source.files[WEIGHTS].sha256, createHash('sha256').update(gpt2.bytes).digest('hex'));
    assert.equal(m.source.files[WEIGHTS].from, 'network');
    assert.match(m.source.commit, /^[0-9a-f]{40}$/);
    assert.equal(m.source.kept, false, 'nothing kept: Node keeps files only with cache: dir');
    // the weights came from the store (another origin), after the hub's HEAD gave their size and hash
    assert.deepEqual(hub.requestsFor(WEIGHTS).map((r) => `${r.server} ${r.method}`), ['hub HEAD', 'store GET']);
    const last = events.filter((e) => e.file === WEIGHTS).at(-1);
    assert.deepEqual(last, { file: WEIGHTS, loaded: gpt2.bytes.length, total: gpt2.bytes.length });
    assert.ok(events.some((e) => e.file === 'config.json'));
    await sameAsLoadModel(m, gpt2);
  });

  test('a GPT-NeoX repo at a revision, with its tokenizer.json: the model loadModel gives with that tokenizer', async () => {
    fresh();
    const m = await engine.openModel('Test.Org/pythia_tiny-1', { hub: `${hub.url}/`, revision: 'step1000' });
    assert.ok(hub.requests.every((r) => r.server === 'store' || r.path.startsWith('/Test.Org/pythia_tiny-1/resolve/step1000/')));
    assert.equal(m.source.files['tokenizer.json'].size, Buffer.byteLength(neoxTokenizer));
    const ref = await engine.loadModel(neox.bytes, { config: neox.config, tokenizer: neoxTokenizer });
    assert.deepEqual(m.tokenize('Alice saw a cat').ids, ref.tokenize('Alice saw a cat').ids);
    ref.destroy();
    await sameAsLoadModel(m, neox, { tokenizer: neoxTokenizer });
  });

  test('progress on a slow connection: reported while the bytes arrive, never more than a second apart', async () => {
    fresh();
    hub.faults[WEIGHTS] = { pace: 150, pieces: 10 };
    const events = [];
    const m = await engine.openModel('test-org/gpt2', { hub: hub.url, onProgress: (e) => events.push({ ...e, at: Date.now() }) });
    const weights = events.filter((e) => e.file === WEIGHTS);
    const between = weights.filter((e) => e.loaded > 0 && e.loaded < gpt2.bytes.length);
    assert.ok(between.length >= 3, `${between.length} reports while the bytes arrived`);
    for (let i = 1; i < weights.length; i++) assert.ok(weights[i].at - weights[i - 1].at <= 1000, 'a second or less apart');
    assert.ok(weights.every((e, i) => i === 0 || e.loaded >= weights[i - 1].loaded), 'loaded only grows');
    await sameAsLoadModel(m, gpt2);
  });

  test('weights in pieces smaller than their header, each read into the same buffer: the model loadModel gives', async () => {
    fresh();
    hub.faults[WEIGHTS] = { pace: 1, pieces: 400 }; // 86 bytes a piece: the 2 KB header arrives in about 26
    await sameAsLoadModel(await engine.openModel('test-org/gpt2', { hub: hub.url }), gpt2);
  });

  test('the weights stream into the heap: its peak is the model plus one piece, not the file twice', async () => {
    fresh();
    const start = engine.heapUsed();
    const events = [];
    const { result: m, peak } = await peakHeap(() => engine.openModel('test-org/gpt2-wide', { hub: hub.url, onProgress: (e) => events.push(e) }));
    const model = engine.heapUsed() - start;
    assert.ok(model > 0.9 * wide.bytes.length, `the model holds ${model} bytes`);
    assert.ok(peak - start <= model + 128 * 1024, `peak ${peak - start} bytes for a model of ${model} (file ${wide.bytes.length})`);
    assert.ok(events.filter((e) => e.file === WEIGHTS).length >= 2);
    await sameAsLoadModel(m, wide);
  });

  test('a redirect that says no size (as a browser sees one): the size from the store\'s answer, still streamed; no size at all: gathered, then read', async () => {
    fresh();
    hub.faults[WEIGHTS] = { hide: true };
    const start = engine.heapUsed();
    const { result: m, peak } = await peakHeap(() => engine.openModel('test-org/gpt2-wide', { hub: hub.url }));
    const model = engine.heapUsed() - start;
    assert.ok(peak - start <= model + 128 * 1024, `peak ${peak - start} bytes for a model of ${model}`);
    assert.equal(m.source.files[WEIGHTS].size, wide.bytes.length);
    await sameAsLoadModel(m, wide);
    fresh();
    hub.faults[WEIGHTS] = { hide: true, chunked: true };
    await sameAsLoadModel(await engine.openModel('test-org/gpt2-wide', { hub: hub.url }), wide);
  });

  test('a connection dropped mid-body resumes with a Range request (twice), and from a store that ignores Range', async () => {
    fresh();
    hub.faults[WEIGHTS] = { drop: 5000, times: 2 };
    const m = await engine.openModel('test-org/gpt2', { hub: hub.url });
    const gets = hub.requestsFor(WEIGHTS).filter((r) => r.server === 'store');
    assert.deepEqual(gets.map((r) => r.range), [null, 'bytes=5000-', 'bytes=10000-']);
    await sameAsLoadModel(m, gpt2);
    fresh();
    hub.faults[WEIGHTS] = { drop: 7000, times: 1, noRange: true };
    await sameAsLoadModel(await engine.openModel('test-org/gpt2', { hub: hub.url }), gpt2);
  });

  test('dropped four times: ERR_LOAD after three resumes; nothing kept, the heap as it was', async () => {
    fresh();
    hub.faults[WEIGHTS] = { drop: 3000, times: 4 };
    const cache = path.join(scratch, 'dropped');
    const start = engine.heapUsed();
    await rejectsCode(engine.openModel('test-org/gpt2', { hub: hub.url, cache }), 'ERR_LOAD',
      /openModel: http:\/\/127\.0\.0\.1:\d+\/blobs\/[0-9a-f]{64}.*dropped 4 times, the last at byte 12000 of 34240 .*gave up after 3 resumes/);
    assert.equal(engine.heapUsed(), start);
    assert.deepEqual(await engine.keptModels({ cache }), []);
    assert.deepEqual(await readdir(path.join(cache, 'test-org', 'gpt2', 'main')), [], 'no partial file left');
  });

  test('bytes whose SHA-256 is not X-Linked-Etag, or more bytes than X-Linked-Size: ERR_DATA, nothing kept', async () => {
    fresh();
    hub.faults[WEIGHTS] = { corrupt: true };
    const cache = path.join(scratch, 'corrupt');
    const start = engine.heapUsed();
    await rejectsCode(engine.openModel('test-org/gpt2', { hub: hub.url, cache }), 'ERR_DATA',
      /openModel: http:\/\/127\.0\.0\.1:\d+\/blobs\/.*sha256 is [0-9a-f]{64}, but the hub says [0-9a-f]{64}/);
    assert.equal(engine.heapUsed(), start);
    assert.deepEqual(await engine.keptModels({ cache }), []);
    fresh();
    hub.faults[WEIGHTS] = { size: 1000 };
    await rejectsCode(engine.openModel('test-org/gpt2', { hub: hub.url, cache }), 'ERR_DATA', /more than the 1000 bytes the hub said/);
    assert.equal(engine.heapUsed(), start);
  });

  test('HTTP failures are ERR_LOAD naming the URL, the status and what it means', async () => {
    const url = (repo, file) => new RegExp(`openModel: ${hub.url.replace(/\./g, '\\.')}/${repo}/resolve/main/${file}: HTTP `);
    fresh();
    await rejectsCode(engine.openModel('test-org/no-config', { hub: hub.url }), 'ERR_LOAD', new RegExp(`${url('test-org/no-config', 'config.json').source}404: no such file`));
    await rejectsCode(engine.openModel('test-org/missing', { hub: hub.url }), 'ERR_LOAD', /HTTP 401: the repo is gated, private or missing/);
    for (const [status, what] of [[403, /gated/], [500, /the server failed/], [503, /the server failed/]]) {
      fresh();
      hub.faults[WEIGHTS] = { status };
      const err = await engine.openModel('test-org/gpt2', { hub: hub.url }).catch((e) => e);
      assert.equal(err.code, 'ERR_LOAD');
      assert.match(err.message, url('test-org/gpt2', WEIGHTS));
      assert.match(err.message, what);
      assert.equal(err.status, status);
    }
    fresh();
    hub.faults['tokenizer.json'] = { status: 500 };
    await rejectsCode(engine.openModel('test-org/gpt2', { hub: hub.url }), 'ERR_LOAD', /tokenizer\.json: HTTP 500/);
    await rejectsCode(engine.openModel('test-org/gpt2', { hub: 'http://127.0.0.1:9' }), 'ERR_LOAD',
      /openModel: http:\/\/127\.0\.0\.1:9\/test-org\/gpt2\/resolve\/main\/config\.json: the request failed/);
  });

  test('files that are no checkpoint the engine opens: loadModel\'s error, naming the repo and file; the weights never asked for after a config it cannot open', async () => {
    fresh();
    await rejectsCode(engine.openModel('test-org/bert', { hub: hub.url }), 'ERR_VALUE', /^openModel: test-org\/bert\/config\.json: config: model_type is "bert"/);
    assert.deepEqual(hub.requestsFor(WEIGHTS), []);
    const start = engine.heapUsed();
    await rejectsCode(engine.openModel('test-org/gpt2-cut', { hub: hub.url }), 'ERR_VALUE', /^openModel: test-org\/gpt2-cut\/model\.safetensors: /);
    assert.equal(engine.heapUsed(), start);
  });

  test('arguments are checked before any request: ERR_ARG', async () => {
    fresh();
    for (const repo of ['gpt2', 'a/b/c', '../a/b', 'a/../b', 'a/b?x=1', 'a/b#c', '/a/b', 'a/', '-a/b', 'a/b.', 'a--b/c', 'a/b..c', 'a b/c', '', 5, null, ['a/b']]) {
      await rejectsCode(engine.openModel(repo, { hub: hub.url }), 'ERR_ARG', /openModel: repo must be 'owner\/name'/);
    }
    for (const revision of ['a/b', '..', 'x..y', '', 'main?x', 7]) {
      await rejectsCode(engine.openModel('test-org/gpt2', { hub: hub.url, revision }), 'ERR_ARG', /revision must be a branch, tag or commit/);
    }
    for (const h of ['ftp://example.com', 'http://u:p@example.com', 'http://example.com/?q=1', 'http://example.com/#x', '', 3]) {
      await rejectsCode(engine.openModel('test-org/gpt2', { hub: h }), 'ERR_ARG', /hub/);
    }
    await rejectsCode(engine.openModel('test-org/gpt2', { hub: hub.url, onProgress: 1 }), 'ERR_ARG', /onProgress must be a function/);
    await rejectsCode(engine.openModel('test-org/gpt2', { hub: hub.url, signal: {} }), 'ERR_ARG', /signal must be an AbortSignal/);
    await rejectsCode(engine.openModel('test-org/gpt2', { hub: hub.url, cache: 4 }), 'ERR_ARG', /cache must be false or, in Node, a directory/);
    await rejectsCode(engine.forgetModel('x', undefined, { cache: scratch }), 'ERR_ARG', /forgetModel: repo must be/);
    assert.deepEqual(hub.requests, []);
  });

  test('abort: ERR_ABORT, before the first request or with the weights on their way; nothing kept, the heap as it was', async () => {
    fresh();
    await rejectsCode(engine.openModel('test-org/gpt2', { hub: hub.url, signal: AbortSignal.abort() }), 'ERR_ABORT', /openModel: aborted/);
    assert.deepEqual(hub.requests, []);
    const cache = path.join(scratch, 'aborted');
    const start = engine.heapUsed();
    const controller = new AbortController();
    // the first report of the weights comes once the store has answered, before their bytes are read
    const onProgress = (e) => {
      if (e.file === WEIGHTS) controller.abort();
    };
    await rejectsCode(engine.openModel('test-org/gpt2-wide', { hub: hub.url, signal: controller.signal, onProgress, cache }),
      'ERR_ABORT', /openModel: aborted/);
    assert.equal(engine.heapUsed(), start);
    assert.deepEqual(await engine.keptModels({ cache }), []);
  });
});

describe('what openModel keeps', () => {
  test('cache: dir keeps the files with their hashes; the second open makes no request; keptModels lists, forgetModel removes', async () => {
    fresh();
    const cache = path.join(scratch, 'kept');
    const first = await engine.openModel('Test.Org/pythia_tiny-1', { hub: hub.url, cache });
    assert.equal(first.source.kept, true);
    assert.equal(first.source.keepError, null);
    const folder = path.join(cache, 'Test.Org', 'pythia_tiny-1', 'main');
    assert.deepEqual((await readdir(folder)).sort(), ['config.json', 'kept.json', WEIGHTS, 'tokenizer.json']);
    assert.deepEqual(new Uint8Array(await readFile(path.join(folder, WEIGHTS))), neox.bytes);
    const manifest = JSON.parse(await readFile(path.join(folder, 'kept.json'), 'utf8'));
    assert.equal(manifest.files[WEIGHTS].sha256, first.source.files[WEIGHTS].sha256);
    first.destroy();

    fresh();
    const events = [];
    const second = await engine.openModel('Test.Org/pythia_tiny-1', { hub: hub.url, cache, onProgress: (e) => events.push(e) });
    assert.deepEqual(hub.requests, [], 'no request at all');
    assert.equal(second.source.files[WEIGHTS].from, 'kept');
    assert.ok(events.some((e) => e.file === WEIGHTS && e.loaded === neox.bytes.length && e.kept === true));
    await sameAsLoadModel(second, neox, { tokenizer: neoxTokenizer });

    const list = await engine.keptModels({ cache });
    assert.equal(list.length, 1);
    assert.equal(list[0].repo, 'Test.Org/pythia_tiny-1');
    assert.equal(list[0].revision, 'main');
    assert.equal(list[0].bytes, neox.bytes.length + Buffer.byteLength(neoxTokenizer) + JSON.stringify(neox.config).length);
    assert.equal(await engine.forgetModel('Test.Org/pythia_tiny-1', 'step1000', { cache }), 0);
    assert.equal(await engine.forgetModel('Test.Org/pythia_tiny-1', 'main', { cache }), 1);
    assert.deepEqual(await engine.keptModels({ cache }), []);
    await sameAsLoadModel(await engine.openModel('Test.Org/pythia_tiny-1', { hub: hub.url, cache }), neox, { tokenizer: neoxTokenizer });
    assert.ok(hub.requestsFor(WEIGHTS).length > 0, 'fetched again once forgotten');
  });

  test('a kept file that was damaged is fetched again; a repo kept without tokenizer.json opens with no request', async () => {
    fresh();
    const cache = path.join(scratch, 'damaged');
    (await engine.openModel('test-org/gpt2', { hub: hub.url, cache })).destroy();
    fresh();
    (await engine.openModel('test-org/gpt2', { hub: hub.url, cache })).destroy();
    assert.deepEqual(hub.requests, []);
    await truncate(path.join(cache, 'test-org', 'gpt2', 'main', WEIGHTS), 100);
    const m = await engine.openModel('test-org/gpt2', { hub: hub.url, cache });
    assert.equal(m.source.files[WEIGHTS].from, 'network');
    await sameAsLoadModel(m, gpt2);
  });

  test('two opens of one revision at once both open; it is kept once, with no partial file left', async () => {
    fresh();
    const cache = path.join(scratch, 'twice');
    const both = await Promise.all([0, 1].map(() => engine.openModel('test-org/gpt2-wide', { hub: hub.url, cache })));
    for (const m of both) await sameAsLoadModel(m, wide);
    assert.deepEqual((await readdir(path.join(cache, 'test-org', 'gpt2-wide', 'main'))).sort(), ['config.json', 'kept.json', WEIGHTS]);
    fresh();
    (await engine.openModel('test-org/gpt2-wide', { hub: hub.url, cache })).destroy();
    assert.deepEqual(hub.requests, []);
  });

  test('a hub that is a directory (a course\'s own copy, in Node), given as a relative path', async () => {
    const root = path.join(scratch, 'models');
    const folder = path.join(root, 'test-org', 'gpt2', 'resolve', 'main');
    await mkdir(folder, { recursive: true });
    await writeFile(path.join(folder, 'config.json'), JSON.stringify(gpt2.config));
    await writeFile(path.join(folder, WEIGHTS), gpt2.bytes);
    const m = await engine.openModel('test-org/gpt2', { hub: path.relative(process.cwd(), root) });
    assert.match(m.source.hub, /^file:\/\//);
    assert.equal(m.source.files['tokenizer.json'], null);
    await sameAsLoadModel(m, gpt2);
    await rejectsCode(engine.openModel('test-org/other', { hub: root }), 'ERR_LOAD', /config\.json: HTTP 404: no such file/);
  });
});

/**
 * An in-memory CacheStorage as a browser's behaves: put reads the whole body
 * first and stores nothing if it fails. hold: a promise put waits for before
 * it reads anything (a slow disk); read: bytes put has read from bodies.
 */
function memoryCaches({ quota = Infinity, hold = null } = {}) {
  const caches = new Map();
  const urlOf = (r) => (typeof r === 'string' ? r : r.url);
  let used = 0;
  const cache = () => {
    const entries = new Map();
    return {
      async put(request, response) {
        await hold;
        const bytes = new Uint8Array(await response.arrayBuffer());
        if (used + bytes.length > quota) throw new DOMException('The quota has been exceeded.', 'QuotaExceededError');
        used += bytes.length;
        entries.set(urlOf(request), { bytes, headers: [...response.headers] });
      },
      async match(request) {
        const e = entries.get(urlOf(request));
        return e ? new Response(e.bytes.slice(), { headers: e.headers }) : undefined;
      },
      async delete(request) {
        const e = entries.get(urlOf(request));
        if (e) used -= e.bytes.length;
        return entries.delete(urlOf(request));
      },
      async keys() {
        return [...entries.keys()].map((u) => new Request(u));
      },
    };
  };
  return {
    async open(name) {
      if (!caches.has(name)) caches.set(name, cache());
      return caches.get(name);
    },
  };
}

describe("the browser's Cache Storage", () => {
  const withCaches = async (caches, fn) => {
    globalThis.caches = caches;
    try {
      await fn();
    } finally {
      delete globalThis.caches;
    }
  };

  test('kept by default where there is one: the second open makes no request; listed and removed', () => withCaches(memoryCaches(), async () => {
    fresh();
    const first = await engine.openModel('test-org/gpt2', { hub: hub.url });
    assert.equal(first.source.kept, true);
    first.destroy();
    fresh();
    const second = await engine.openModel('test-org/gpt2', { hub: hub.url });
    assert.deepEqual(hub.requests, []);
    assert.equal(second.source.files[WEIGHTS].from, 'kept');
    await sameAsLoadModel(second, gpt2);
    const [kept] = await engine.keptModels();
    assert.deepEqual([kept.repo, kept.revision, kept.files[WEIGHTS].size], ['test-org/gpt2', 'main', gpt2.bytes.length]);
    assert.equal(await engine.forgetModel('test-org/gpt2'), 1);
    assert.deepEqual(await engine.keptModels(), []);
    // cache: false keeps nothing
    (await engine.openModel('test-org/gpt2', { hub: hub.url, cache: false })).destroy();
    assert.deepEqual(await engine.keptModels(), []);
  }));

  test('storage full: the model opens from the network, model.source.keepError and onProgress say why', () => withCaches(memoryCaches({ quota: 10_000 }), async () => {
    fresh();
    const events = [];
    const m = await engine.openModel('test-org/gpt2', { hub: hub.url, onProgress: (e) => events.push(e) });
    assert.equal(m.source.kept, false);
    assert.match(m.source.keepError, /QuotaExceededError/);
    assert.ok(events.some((e) => /QuotaExceededError/.test(e.keepError ?? '')), 'reported through onProgress');
    await sameAsLoadModel(m, gpt2);
    assert.deepEqual(await engine.keptModels(), []);
  }));

  test('a slow disk slows the download: no more than 4 MiB waits to be written, not the file a second time', async () => {
    let release;
    const hold = new Promise((resolve) => { release = resolve; });
    const real = globalThis.fetch;
    let delivered = 0; // the weights' bytes the open has read from the network
    globalThis.fetch = async (url, init = {}) => {
      const r = await real(url, init);
      if (r.body && Number(r.headers.get('content-length')) > 1 << 20) {
        const count = new TransformStream({ transform(piece, c) { delivered += piece.byteLength; c.enqueue(piece); } });
        Object.defineProperty(r, 'body', { value: r.body.pipeThrough(count) });
      }
      return r;
    };
    try {
      await withCaches(memoryCaches({ hold }), async () => {
        fresh();
        const events = [];
        const opening = engine.openModel('test-org/gpt2-big', { hub: hub.url, onProgress: (e) => events.push({ ...e, at: Date.now() }) });
        // wait until the download stands still (or has read the whole file: the writer did not wait)
        let last = -1, still = 0;
        for (let i = 0; i < 400 && still < 10 && delivered < big.bytes.length; i++) {
          await new Promise((resolve) => setTimeout(resolve, 25));
          still = delivered === last ? still + 1 : 0;
          last = delivered;
        }
        assert.ok(delivered > 0, 'the weights started to arrive');
        assert.ok(delivered <= (4 << 20) + (2 << 20), `${delivered} of ${big.bytes.length} bytes read while the cache wrote nothing (4 MiB may wait)`);
        // stalled for 2.5 s: progress is still said, the latest word again, about once a second
        const stalled = Date.now();
        await new Promise((resolve) => setTimeout(resolve, 2500));
        const during = events.filter((e) => e.at >= stalled);
        assert.ok(during.length >= 2, `${during.length} reports in 2.5 s of standing still`);
        for (let i = 1; i < during.length; i++) assert.ok(during[i].at - during[i - 1].at <= 1000 + 250, `reports ${during[i].at - during[i - 1].at} ms apart (timers here may run late by a quarter second)`);
        assert.ok(during.every((e) => e.file === WEIGHTS && e.loaded === during[0].loaded), 'the same word: nothing arrived');
        release();
        const first = await opening;
        assert.equal(first.source.kept, true);
        first.destroy();
        fresh();
        const second = await engine.openModel('test-org/gpt2-big', { hub: hub.url });
        assert.deepEqual(hub.requests, []);
        await sameAsLoadModel(second, big);
      });
    } finally {
      globalThis.fetch = real;
      release();
    }
  });

  test('an open waiting for a slow disk still stops on abort, and keeps nothing', async () => {
    const real = globalThis.fetch;
    const controller = new AbortController();
    // the disk comes back only after the abort: the open must not wait for it to stop
    const hold = new Promise((resolve) => controller.signal.addEventListener('abort', () => setTimeout(resolve, 50)));
    await withCaches(memoryCaches({ hold }), async () => {
      fresh();
      const events = [];
      const opening = engine.openModel('test-org/gpt2-big', { hub: hub.url, signal: controller.signal, onProgress: (e) => events.push(e) });
      for (let i = 0; i < 500 && !events.some((e) => e.file === WEIGHTS); i++) await new Promise((resolve) => setTimeout(resolve, 10));
      await new Promise((resolve) => setTimeout(resolve, 300)); // the download has stopped for the disk
      controller.abort();
      await rejectsCode(opening, 'ERR_ABORT', /aborted/);
      assert.equal(globalThis.fetch, real);
      assert.deepEqual(await (await globalThis.caches.open('attnlab-models')).keys(), []);
    });
  });

  test('a wrong hash or an abort leaves nothing in Cache Storage', () => withCaches(memoryCaches(), async () => {
    fresh();
    hub.faults[WEIGHTS] = { corrupt: true };
    await rejectsCode(engine.openModel('test-org/gpt2', { hub: hub.url }), 'ERR_DATA', /sha256 is/);
    const store = await globalThis.caches.open('attnlab-models');
    assert.deepEqual(await store.keys(), []);
  }));
});

describe('as a browser fetches', () => {
  /** fn() with fetch answering as a browser's does: a redirect: 'manual' by an opaque response (no status, no headers). */
  const asBrowser = async (fn) => {
    const real = globalThis.fetch;
    globalThis.fetch = async (url, init = {}) => {
      const r = await real(url, init);
      if (init.redirect === 'manual' && r.status >= 300 && r.status < 400) return { type: 'opaqueredirect', status: 0, ok: false, headers: new Headers() };
      return r;
    };
    try {
      await fn();
    } finally {
      globalThis.fetch = real;
    }
  };

  test('a cross-origin redirect hidden from the HEAD (opaqueredirect): the GET follows it, the store\'s size is read, its own ETag is not taken for the hash', () => asBrowser(async () => {
    fresh();
    const start = engine.heapUsed();
    const { result: m, peak } = await peakHeap(() => engine.openModel('test-org/gpt2-wide', { hub: hub.url }));
    const model = engine.heapUsed() - start;
    assert.ok(peak - start <= model + 128 * 1024, `peak ${peak - start} bytes for a model of ${model}`);
    await sameAsLoadModel(m, wide);
    // the store's ETag (64 hex digits, not the bytes' SHA-256) was not checked against them, or the open would have failed
    assert.equal(m.source.files[WEIGHTS].size, wide.bytes.length);
  }));

  test("a redirect hidden from the browser: the hash and size come from the hub's API (model info with blobs), so a wrong body is still refused; with no API the file is taken as it comes", () => asBrowser(async () => {
    fresh();
    const m = await engine.openModel('test-org/gpt2', { hub: hub.url, cache: false });
    assert.ok(hub.requests.some((r) => r.path === '/api/models/test-org/gpt2/revision/main?blobs=true'), 'the API asked');
    assert.match(m.source.commit ?? '', /^[0-9a-f]{40}$/, "the API's commit");
    await sameAsLoadModel(m, gpt2);
    fresh();
    hub.faults[WEIGHTS] = { corrupt: true };
    await rejectsCode(engine.openModel('test-org/gpt2', { hub: hub.url, cache: false }), 'ERR_DATA', /sha256 is [0-9a-f]{64}, but the hub says [0-9a-f]{64}/);
    fresh();
    hub.faults[WEIGHTS] = { size: 1000 };
    await rejectsCode(engine.openModel('test-org/gpt2', { hub: hub.url, cache: false }), 'ERR_DATA', /more than the 1000 bytes the hub said/);
    // a hub with no API (a course's own copy): the body is taken unchecked, as the store sends it
    fresh();
    hub.faults[WEIGHTS] = { noApi: true };
    await sameAsLoadModel(await engine.openModel('test-org/gpt2', { hub: hub.url, cache: false }), gpt2);
  }));

  test('storage that refuses Cache Storage: the model opens, keptModels and forgetModel say ERR_DATA', async () => {
    globalThis.caches = { open: async () => { throw new DOMException('The operation is insecure.', 'SecurityError'); } };
    try {
      fresh();
      const m = await engine.openModel('test-org/gpt2', { hub: hub.url });
      assert.equal(m.source.kept, false);
      assert.match(m.source.keepError, /SecurityError/);
      m.destroy();
      await rejectsCode(engine.keptModels(), 'ERR_DATA', /keptModels: the storage failed \(SecurityError/);
      await rejectsCode(engine.forgetModel('test-org/gpt2'), 'ERR_DATA', /forgetModel: the storage failed/);
    } finally {
      delete globalThis.caches;
    }
  });
});
