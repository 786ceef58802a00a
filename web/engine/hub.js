// engine.openModel(repo, options): a checkpoint opened straight from a hub
// (huggingface.co, or any server that answers as it does: a course's own copy,
// a directory in Node). The one place that knows the hub's URLs and headers:
// `${hub}/${repo}/resolve/${revision}/${file}` answers a HEAD with the file's
// size and SHA-256 (X-Linked-Size, X-Linked-Etag, on the redirect to its file
// store where the file is large) and a GET with its bytes, following that
// redirect. model.safetensors (or, where a revision has none, pytorch_model.bin)
// streams into the heap as it arrives (gpt2.js checkpointSink; each piece read
// into one reused buffer, body-reader.js), hashed on the way (sha256.js),
// resumed with a Range request when the connection drops; config.json and
// tokenizer.json (404: the repo has none) are small and read whole. What arrives whole and checked is kept, when
// a store is given or the browser has one (the second open makes no request),
// and listed and removed by keptModels / forgetModel.
import { bodyReader } from './body-reader.js';
import { AttnlabError, argError, describe } from './errors.js';
import { checkpointSink, readConfig } from './gpt2.js';
import { options } from './matrix.js';
import { Sha256 } from './sha256.js';

export const DEFAULT_HUB = 'https://huggingface.co';
export const DEFAULT_REVISION = 'main';
/** The files of a checkpoint, in the order they are fetched; tokenizer.json is optional. */
const FILES = Object.freeze(['config.json', 'tokenizer.json', 'model.safetensors']);
const OPTIONAL = new Set(['tokenizer.json']);
const WEIGHTS = 'model.safetensors';
/** The weights of a revision without model.safetensors (Pythia's stepN, older GPT-2s): PyTorch's zip. */
const WEIGHTS_FALLBACK = 'pytorch_model.bin';
const isWeights = (file) => file === WEIGHTS || file === WEIGHTS_FALLBACK;
/** Range requests after a dropped connection before giving up. */
const MAX_RESUMES = 3;
/** Redirects within the hub's own origin (a renamed repo) followed before the one to the file store. */
const MAX_HOPS = 5;
/** Progress is reported at most this often (ms), and whenever a file starts or ends. */
const PROGRESS_EVERY = 200;
/** ... and at least this often while an open goes on, the bytes arriving or not. */
const HEARTBEAT = 1000;
/** Cache Storage's cache of kept files, and the made-up origin its keys live under (never fetched). */
const CACHE_NAME = 'attnlab-models';
const CACHE_ORIGIN = 'https://kept.attnlab.invalid';
const MANIFEST = 'kept.json';
// how far a file's bytes may run ahead of Cache Storage's writing them: past it the download waits
const KEEP_AHEAD = 4 << 20;

const isNode = typeof process === 'object' && typeof process.versions?.node === 'string' && typeof window === 'undefined';
const loadError = (message, extra = {}) => Object.assign(new AttnlabError('ERR_LOAD', `openModel: ${message}`), extra);
const dataError = (message) => new AttnlabError('ERR_DATA', `openModel: ${message}`);
const abortError = (file) => new AttnlabError('ERR_ABORT', `openModel: aborted${file ? ` while fetching ${file}` : ''}`);

// ---- arguments ------------------------------------------------------------------------------

/** A repo or user name as the hub allows it: letters, digits, '-', '_', '.'; no '--' or '..'; no '-' or '.' at either end. */
const NAME = /^[A-Za-z0-9](?:[A-Za-z0-9_.-]{0,94}[A-Za-z0-9])?$/;
/** A branch, tag or commit: the same characters, one path segment. */
const REVISION = /^[A-Za-z0-9](?:[A-Za-z0-9_.-]{0,126}[A-Za-z0-9])?$/;

/** 'owner/name', checked strictly (it becomes a URL path and, kept, a directory path). */
export function readRepo(repo) {
  const parts = typeof repo === 'string' ? repo.split('/') : [];
  if (parts.length !== 2 || !parts.every((p) => NAME.test(p) && !p.includes('--') && !p.includes('..'))) {
    throw argError(`openModel: repo must be 'owner/name' (letters, digits, '-', '_', '.'), such as 'openai-community/gpt2' (got ${describe(repo)})`);
  }
  return repo;
}

export function readRevision(revision) {
  if (revision === undefined) return DEFAULT_REVISION;
  if (typeof revision !== 'string' || !REVISION.test(revision) || revision.includes('..')) {
    throw argError(`openModel: revision must be a branch, tag or commit such as 'main' or 'step1000' (got ${describe(revision)})`);
  }
  return revision;
}

/**
 * The hub's base URL, without a trailing '/': an http(s) URL, or a relative
 * one resolved against the page; in Node also a file: URL or a directory path
 * (relative to the working directory).
 */
async function readHub(hub) {
  if (hub === undefined) return DEFAULT_HUB;
  if (typeof hub !== 'string' || hub.length === 0) throw argError(`openModel: hub must be a URL or, in Node, a directory (got ${describe(hub)})`);
  let url;
  try {
    if (isNode && !/^[a-z][a-z0-9+.-]*:\/\//i.test(hub) && !hub.startsWith('file:')) {
      const { pathToFileURL } = await import('node:url');
      const { resolve } = await import('node:path');
      url = pathToFileURL(resolve(hub));
    } else {
      url = new URL(hub, globalThis.document?.baseURI ?? globalThis.location?.href);
    }
  } catch {
    throw argError(`openModel: hub ${describe(hub)} is not a URL`);
  }
  const schemes = isNode ? ['http:', 'https:', 'file:'] : ['http:', 'https:'];
  if (!schemes.includes(url.protocol)) throw argError(`openModel: hub ${describe(hub)}: a hub is reached by ${schemes.join(', ')}`);
  if (url.username || url.password || url.search || url.hash) {
    throw argError(`openModel: hub ${describe(hub)}: a base URL without a user, query or fragment`);
  }
  return url.href.replace(/\/+$/, '');
}

/** cache: undefined (the browser's Cache Storage where there is one), false (keep nothing) or, in Node, a directory. */
async function readStore(cache, name = 'openModel') {
  if (cache === false) return null;
  if (cache === undefined) return globalThis.caches ? new CacheStore(globalThis.caches) : null;
  if (typeof cache === 'string' && cache.length > 0) {
    if (!isNode) throw argError(`${name}: cache: a directory is kept in Node only; a browser keeps files in Cache Storage (leave cache out)`);
    return new DiskStore(cache);
  }
  throw argError(`${name}: cache must be false or, in Node, a directory (got ${describe(cache)})`);
}

// ---- requests -------------------------------------------------------------------------------

/** fetch, or in Node a file: URL read from disk as a server would answer it (200, 206 for a range, 404). */
async function request(url, init) {
  if (url.startsWith('file:')) return fileResponse(url, init);
  try {
    return await fetch(url, init);
  } catch (err) {
    if (init.signal?.aborted) throw abortError();
    throw loadError(`${url}: the request failed (${err?.cause?.message ?? err?.message ?? describe(err)})`, { url });
  }
}

async function fileResponse(url, { method = 'GET', headers = {}, signal }) {
  if (signal?.aborted) throw abortError();
  const { stat } = await import('node:fs/promises');
  const { createReadStream } = await import('node:fs');
  const { Readable } = await import('node:stream');
  const { fileURLToPath } = await import('node:url');
  const path = fileURLToPath(url);
  let size;
  try {
    const s = await stat(path);
    if (!s.isFile()) throw new Error('not a file');
    size = s.size;
  } catch {
    return new Response(null, { status: 404 });
  }
  const start = headers.Range ? Number(/^bytes=(\d+)-$/.exec(headers.Range)?.[1] ?? 0) : 0;
  const partial = start > 0;
  const head = { 'content-length': String(size - start), ...(partial ? { 'content-range': `bytes ${start}-${size - 1}/${size}` } : {}) };
  if (method === 'HEAD') return new Response(null, { status: 200, headers: head });
  const body = Readable.toWeb(createReadStream(path, { start, signal }));
  return new Response(body, { status: partial ? 206 : 200, headers: head });
}

/** What a status means, for a message. */
function statusText(status) {
  if (status === 401 || status === 403) return 'the repo is gated, private or missing (the hub wants a signed-in user; openModel sends no token)';
  if (status === 404) return 'no such file';
  if (status >= 500) return 'the server failed';
  return 'unexpected answer';
}

const httpError = (url, status) => loadError(`${url}: HTTP ${status}: ${statusText(status)}`, { url, status });

/** A SHA-256 from an ETag-like header ('"<64 hex>"', maybe weak), or null (the hub's ETag of a small file is its git hash). */
function sha256Of(tag) {
  const m = /^(?:W\/)?"?([0-9a-f]{64})"?$/i.exec(tag?.trim() ?? '');
  return m ? m[1].toLowerCase() : null;
}

/** A byte count from a header, or null. */
function sizeOf(value) {
  return value !== null && value !== undefined && /^\d+$/.test(value.trim()) ? Number(value) : null;
}

/**
 * The size and hash a response says the file has: X-Linked-* first; the
 * Content-Length of a whole unencoded body; the ETag where it is the hub's.
 */
function metaOf(headers, full, hubs = true) {
  const encoded = (headers.get('content-encoding') ?? 'identity') !== 'identity';
  return {
    size: sizeOf(headers.get('x-linked-size')) ?? (full && !encoded ? sizeOf(headers.get('content-length')) : null),
    sha256: sha256Of(headers.get('x-linked-etag')) ?? (hubs ? sha256Of(headers.get('etag')) : null),
    commit: headers.get('x-repo-commit'),
  };
}

/**
 * Where a file's bytes are and what the hub says of them: a HEAD that does
 * not follow the redirect to the file store, so its X-Linked-Size and
 * X-Linked-Etag are read as the hub sends them. A browser hides a
 * cross-origin redirect ('opaqueredirect'): there the GET follows it and
 * its own headers are read. null: 404, for an optional file.
 */
async function locate(url, file, signal) {
  let at = url;
  for (let hop = 0; hop <= MAX_HOPS; hop++) {
    const r = await request(at, { method: 'HEAD', redirect: 'manual', signal });
    if (r.type === 'opaqueredirect') return { url: at, size: null, sha256: null, commit: null, hidden: true };
    if (r.status >= 300 && r.status < 400 && r.headers.get('location')) {
      const next = new URL(r.headers.get('location'), at).href;
      const meta = metaOf(r.headers, false);
      // the hub's redirect to its file store carries the file's size and hash; one without them is the hub's own (a renamed repo)
      if (meta.size !== null || meta.sha256 !== null || new URL(next).origin !== new URL(at).origin) return { url: next, ...meta };
      at = next;
      continue;
    }
    if (r.status === 404 && OPTIONAL.has(file)) return null;
    if (!r.ok) throw httpError(at, r.status);
    return { url: at, ...metaOf(r.headers, true) };
  }
  throw loadError(`${url}: more than ${MAX_HOPS} redirects`, { url });
}

/**
 * A GET of a located file from byte `from` on (a Range request past 0), following redirects.
 * Past the browser's HTTP cache (no-store): the files are kept where openModel keeps them,
 * and the HTTP cache would hold a second copy and answer a resume from a part it held.
 */
async function get(place, from, signal) {
  const r = await request(place.url, { headers: from > 0 ? { Range: `bytes=${from}-` } : {}, signal, cache: 'no-store' });
  if (r.status === 404 && from === 0 && place.optional) return null;
  if (r.status !== 200 && r.status !== 206) throw httpError(place.url, r.status);
  if (r.status === 206 && Number(/^bytes (\d+)-/.exec(r.headers.get('content-range') ?? '')?.[1]) !== from) {
    throw loadError(`${place.url}: asked for bytes from ${from}, the server answered ${r.headers.get('content-range') ?? 'without a Content-Range'}`, { url: place.url });
  }
  return r;
}

// ---- receiving a file -------------------------------------------------------------------------

/**
 * Reads a file's body piece by piece into the target open(size) gives once
 * the first answer has said the size (null: not said): take(piece) (awaited)
 * for each piece, done() once the whole file is checked. Hashes as it goes; a
 * connection that drops (an error, or an end before the size said) is resumed
 * with a Range request up to MAX_RESUMES times. Checks the size and hash the
 * hub gave. Returns { size, sha256, commit } or null (an optional file absent).
 */
async function receive(ctx, file, place, open) {
  const { signal } = ctx;
  let response = await get(place, 0, signal);
  if (!response) return null;
  // a file store's own ETag (another origin's) is no hash of the hub's: only the X-Linked ones are read there
  const said = metaOf(response.headers, true, new URL(response.url || place.url).origin === place.hubOrigin);
  const size = place.size ?? said.size;
  const expected = place.sha256 ?? said.sha256;
  const target = await open(size);
  const hasher = new Sha256();
  let loaded = 0, resumes = 0;
  ctx.progress(file, 0, size, true);
  for (;;) {
    let skip = response.status === 200 ? loaded : 0; // a server that ignored the Range sends the file from its start
    const reader = bodyReader(response.body);
    let dropped = null;
    for (;;) {
      let chunk;
      try {
        chunk = await reader.read();
      } catch (err) {
        if (signal?.aborted) throw abortError(file);
        dropped = err;
        break;
      }
      if (chunk.done) break;
      if (signal?.aborted) {
        await reader.cancel().catch(() => {});
        throw abortError(file);
      }
      let piece = chunk.value;
      if (skip > 0) {
        const n = Math.min(skip, piece.length);
        skip -= n;
        piece = piece.subarray(n);
      }
      if (size !== null && loaded + piece.length > size) {
        await reader.cancel().catch(() => {});
        throw dataError(`${place.url}: more than the ${size} bytes the hub said`);
      }
      hasher.update(piece);
      loaded += piece.length;
      try {
        await target.take(piece);
      } catch (err) {
        await reader.cancel().catch(() => {});
        throw err;
      }
      ctx.progress(file, loaded, size, false);
    }
    if (!dropped && (size === null || loaded === size)) break;
    if (resumes === MAX_RESUMES) {
      throw loadError(`${place.url}: the connection dropped ${MAX_RESUMES + 1} times, the last at byte ${loaded} of ${size ?? 'an unknown size'} (${dropped?.message ?? 'the body ended early'}); gave up after ${MAX_RESUMES} resumes`, { url: place.url });
    }
    resumes++;
    response = await get(place, loaded, signal);
  }
  const sha256 = hasher.hex();
  if (expected && sha256 !== expected) throw dataError(`${place.url}: the bytes' sha256 is ${sha256}, but the hub says ${expected}`);
  await target.done();
  ctx.progress(file, loaded, size ?? loaded, true);
  return { size: loaded, sha256, commit: place.commit ?? said.commit };
}

/** All of a file's pieces as one Uint8Array. */
function collector() {
  const pieces = [];
  let length = 0;
  return {
    take(piece) {
      pieces.push(piece.slice());
      length += piece.length;
    },
    bytes() {
      const out = new Uint8Array(length);
      let at = 0;
      for (const p of pieces) {
        out.set(p, at);
        at += p.length;
      }
      return out;
    },
  };
}

/**
 * A checkpoint's files as they arrive, from the network or kept: config.json
 * and tokenizer.json gathered as text; the weights into the engine's sink as
 * they come once their size is known (they come after the other two, which
 * the sink needs), else gathered first (a server that said no size).
 */
class Parts {
  #heap;
  texts = {};
  sink = null;

  constructor(heap) {
    this.#heap = heap;
  }

  #sink(size) {
    return checkpointSink(this.#heap, { config: this.texts['config.json'], tokenizer: this.texts['tokenizer.json'] }, size);
  }

  /** The target of a file of `size` bytes (null: not said): { take(piece), done() }. */
  async open(file, size) {
    if (isWeights(file) && size !== null) {
      this.sink = await this.#sink(size);
      return { take: (piece) => this.sink.write(piece), done() {} };
    }
    const whole = collector();
    return {
      take: (piece) => whole.take(piece),
      done: async () => {
        if (!isWeights(file)) {
          this.texts[file] = new TextDecoder().decode(whole.bytes());
          // a config the engine cannot open fails here, before the weights are asked for
          if (file === 'config.json') readConfig(this.texts[file]);
          return;
        }
        const bytes = whole.bytes();
        this.sink = await this.#sink(bytes.length);
        this.sink.write(bytes);
      },
    };
  }

  /** The model, once every file is in. */
  finish() {
    const model = this.sink.finish();
    this.sink = null;
    return model;
  }

  destroy() {
    this.sink?.destroy();
    this.sink = null;
  }
}

// ---- opening ------------------------------------------------------------------------------------

/**
 * onProgress throttled: at most every PROGRESS_EVERY ms, and always when forced
 * (a file starts or ends); and at least every HEARTBEAT ms while the open goes
 * on (a stalled connection, a disk the download waits for): the latest word
 * said again. stop() ends it.
 */
function progressOf(onProgress) {
  let last = 0, latest = null, timer = null;
  const emit = () => {
    last = Date.now();
    onProgress({ ...latest });
  };
  const progress = (file, loaded, total, force, extra) => {
    if (!onProgress) return;
    latest = { file, loaded, total, ...extra };
    if (!timer) {
      timer = setInterval(() => {
        if (Date.now() - last < HEARTBEAT - PROGRESS_EVERY) return;
        try {
          emit();
        } catch {
          // the caller's handler failed: the open is not the place to say so
        }
      }, PROGRESS_EVERY);
      timer.unref?.(); // Node: the heartbeat keeps no process alive
    }
    if (!force && Date.now() - last < PROGRESS_EVERY) return;
    emit();
  };
  progress.stop = () => {
    clearInterval(timer);
    onProgress = null;
  };
  return progress;
}

export async function openModel(heap, repo, args = {}) {
  const o = options('openModel', args ?? {}, ['hub', 'revision', 'onProgress', 'signal', 'cache']);
  readRepo(repo);
  const revision = readRevision(o.revision);
  const hub = await readHub(o.hub);
  if (o.onProgress !== undefined && typeof o.onProgress !== 'function') throw argError(`openModel: onProgress must be a function (got ${describe(o.onProgress)})`);
  if (o.signal !== undefined && !(o.signal instanceof AbortSignal)) throw argError(`openModel: signal must be an AbortSignal (got ${describe(o.signal)})`);
  const store = await readStore(o.cache);
  const ctx = { signal: o.signal, progress: progressOf(o.onProgress) };
  if (o.signal?.aborted) throw abortError();
  const source = { hub, repo, revision };
  try {
    const kept = await safely(() => store?.manifest(repo, revision));
    if (kept) {
      const model = await openKept(heap, ctx, store, kept, source).catch((err) => {
        if (AttnlabError.holds(err) && err.code === 'ERR_ABORT') throw err;
        return null; // a kept file gone or damaged: fetched again
      });
      if (model) return model;
    }
    return await openFetched(heap, ctx, store, source);
  } finally {
    ctx.progress.stop();
  }
}

/** fn's result, or null if it throws (storage that fails is as good as none). */
async function safely(fn) {
  try {
    return (await fn()) ?? null;
  } catch {
    return null;
  }
}

/**
 * What the hub's API says of a revision's large files, for a browser, which
 * cannot read the X-Linked-* headers of a redirect to another origin: its
 * model info with blobs (GET /api/models/{repo}/revision/{revision}?blobs=true,
 * whose siblings carry lfs: { sha256, size }), as huggingface_hub's
 * model_info(files_metadata=True) reads it. → { commit, files: Map(file ->
 * { sha256, size }) }, or null where there is no such API (a course's own
 * copy) or its answer is not understood: the file is then taken unchecked,
 * as before.
 */
async function hubInfo(hub, repo, revision, signal) {
  return safely(async () => {
    const r = await request(`${hub}/api/models/${repo}/revision/${encodeURIComponent(revision)}?blobs=true`, { signal });
    if (!r.ok || !/json/.test(r.headers.get('content-type') ?? '')) return null;
    const info = await r.json();
    const files = new Map();
    for (const s of Array.isArray(info?.siblings) ? info.siblings : []) {
      const sha256 = typeof s?.lfs?.sha256 === 'string' && /^[0-9a-f]{64}$/.test(s.lfs.sha256) ? s.lfs.sha256 : null;
      if (typeof s?.rfilename === 'string' && sha256 && Number.isSafeInteger(s.lfs.size) && s.lfs.size >= 0) {
        files.set(s.rfilename, { sha256, size: s.lfs.size });
      }
    }
    return { commit: typeof info?.sha === 'string' && /^[0-9a-f]{40}$/.test(info.sha) ? info.sha : null, files };
  });
}

/**
 * Each of a repo's files located and received in turn (ctx.at: the one under
 * way): open(file, size) gives its target, done(file, got) hears what came
 * (null: an optional file the repo lacks).
 */
async function fetchEach(ctx, { hub, repo, revision }, open, done) {
  const urlOf = (file) => `${hub}/${repo}/resolve/${encodeURIComponent(revision)}/${file}`;
  let info; // the hub API's word on the files, asked once where a redirect hid the hub's headers
  for (let file of FILES) {
    ctx.at = file;
    if (ctx.signal?.aborted) throw abortError(file);
    let url = urlOf(file), place;
    try {
      place = await locate(url, file, ctx.signal);
    } catch (err) {
      // no model.safetensors: the revision's pytorch_model.bin
      if (file !== WEIGHTS || err.status !== 404) throw err;
      file = ctx.at = WEIGHTS_FALLBACK;
      url = urlOf(file);
      place = await locate(url, file, ctx.signal).catch((again) => {
        if (again.status !== 404) throw again;
        ctx.at = WEIGHTS;
        throw loadError(`${err.url}: HTTP 404: no such file (nor ${WEIGHTS_FALLBACK})`, { url: err.url, status: 404 });
      });
    }
    if (!place) {
      done(file, null);
      continue;
    }
    if (place.hidden) {
      if (info === undefined) info = await hubInfo(hub, repo, revision, ctx.signal);
      if (ctx.signal?.aborted) throw abortError(file);
      const said = info?.files.get(file);
      if (said) Object.assign(place, { sha256: said.sha256, size: said.size, commit: info.commit });
    }
    place.optional = OPTIONAL.has(file);
    place.hubOrigin = new URL(url).origin;
    done(file, await receive(ctx, file, place, (size) => open(file, size)));
  }
}

/** The files from the hub, each kept as it arrives where a store takes it. */
async function openFetched(heap, ctx, store, source) {
  const { hub, repo, revision } = source;
  const files = {}, parts = new Parts(heap);
  let keep = store ? await store.begin(repo, revision, ctx.signal).catch((err) => ({ failed: err })) : null;
  let keepError = keep?.failed ? messageOf(keep.failed) : null;
  if (keep?.failed) keep = null;
  /** Storage that refused: nothing of this open is kept, the open goes on, and onProgress hears why. */
  const refused = async (file, err) => {
    keepError = messageOf(err);
    const got = files[file];
    ctx.progress(file, got?.size ?? 0, got?.size ?? null, true, { keepError });
    await keep?.discard().catch(() => {});
    keep = null;
  };
  /** A file's target that also writes each piece where it is kept. */
  const keeping = (file, target) => ({
    ...target,
    async take(piece) {
      await target.take(piece);
      if (!keep) return;
      try {
        await keep.write(file, piece);
      } catch (err) {
        await refused(file, err);
      }
    },
  });
  ctx.at = FILES[0];
  try {
    await fetchEach(ctx, source, async (file, size) => keeping(file, await parts.open(file, size)), (file, got) => {
      files[file] = got ? { size: got.size, sha256: got.sha256, from: 'network' } : null;
      source.commit ??= got?.commit ?? null;
    });
    if (ctx.signal?.aborted) throw abortError(WEIGHTS);
    const model = parts.finish();
    if (keep) {
      try {
        await keep.commit({ repo, revision, commit: source.commit ?? null, files: strip(files) });
      } catch (err) {
        await refused(WEIGHTS, err);
      }
    }
    return withSource(model, { ...source, files, kept: keep !== null && keepError === null, keepError });
  } catch (err) {
    parts.destroy();
    await keep?.discard().catch(() => {});
    if (ctx.signal?.aborted && !(AttnlabError.holds(err) && err.code === 'ERR_ABORT')) throw abortError();
    throw checkpointError(err, `${repo}/${ctx.at}`);
  }
}

/** An error of the checkpoint's reader (loadModel's words) as openModel's, naming the file; any other as it is. */
function checkpointError(err, where) {
  if (!AttnlabError.holds(err) || !err.message.startsWith('loadModel: ')) return err;
  return new AttnlabError(err.code, `openModel: ${where}: ${err.message.slice('loadModel: '.length)}`);
}

/** The files as they were kept, streamed as from the network; no request is made. */
async function openKept(heap, ctx, store, kept, source) {
  const files = {}, parts = new Parts(heap);
  // the weights under the name they came by
  const fallback = kept.files[WEIGHTS] === undefined && kept.files[WEIGHTS_FALLBACK] !== undefined;
  try {
    for (const file of FILES.map((f) => (f === WEIGHTS && fallback ? WEIGHTS_FALLBACK : f))) {
      const entry = kept.files[file];
      if (entry === undefined) throw new Error(`${file} is not kept`);
      if (entry === null) {
        files[file] = null;
        continue;
      }
      // a kept file's hash was checked when it was kept, and names it; its size is checked again here
      const response = await store.read(source.repo, source.revision, file);
      await receiveKept(ctx, file, response, entry.size, await parts.open(file, entry.size));
      files[file] = { size: entry.size, sha256: entry.sha256, from: 'kept' };
    }
    return withSource(parts.finish(), { ...source, commit: kept.commit ?? null, files, kept: true, keepError: null });
  } catch (err) {
    parts.destroy();
    throw err;
  }
}

/** A kept file's body into its target, checked against the size it was kept with. */
async function receiveKept(ctx, file, response, size, target) {
  const reader = bodyReader(response.body);
  let loaded = 0;
  ctx.progress(file, 0, size, true, { kept: true });
  for (;;) {
    if (ctx.signal?.aborted) {
      await reader.cancel().catch(() => {});
      throw abortError(file);
    }
    const { done, value } = await reader.read();
    if (done) break;
    loaded += value.length;
    if (loaded > size) throw dataError(`${file}: the kept file is longer than its ${size} bytes`);
    await target.take(value);
    ctx.progress(file, loaded, size, false, { kept: true });
  }
  if (loaded !== size) throw dataError(`${file}: the kept file has ${loaded} of its ${size} bytes`);
  await target.done();
  ctx.progress(file, loaded, size, true, { kept: true });
}

const strip = (files) => Object.fromEntries(Object.entries(files).map(([f, e]) => [f, e && { size: e.size, sha256: e.sha256 }]));

function messageOf(err) {
  return typeof err?.message === 'string' ? `${err.name ?? 'Error'}: ${err.message}` : describe(err);
}

/** model.source: where the model came from ({ hub, repo, revision, commit, files, kept, keepError }), frozen. */
function withSource(model, source) {
  const files = Object.freeze(Object.fromEntries(Object.entries(source.files).map(([f, e]) => [f, e && Object.freeze(e)])));
  Object.defineProperty(model, 'source', { value: Object.freeze({ ...source, files }), enumerable: true });
  return model;
}

// ---- what is kept -------------------------------------------------------------------------------

/** fn's result; storage that fails (a browser that refuses Cache Storage) as ERR_DATA naming the call. */
async function storage(name, fn) {
  try {
    return await fn();
  } catch (err) {
    throw new AttnlabError('ERR_DATA', `${name}: the storage failed (${messageOf(err)})`);
  }
}

/** Every kept model: [{ repo, revision, commit, files, bytes }]. */
export async function keptModels(args = {}) {
  const o = options('keptModels', args ?? {}, ['cache']);
  const store = await readStore(o.cache, 'keptModels');
  return store ? storage('keptModels', () => store.list()) : [];
}

/** Removes a kept model (every revision of it when revision is undefined); returns how many revisions were removed. */
export async function forgetModel(repo, revision, args = {}) {
  const o = options('forgetModel', args ?? {}, ['cache']);
  try {
    readRepo(repo);
  } catch (err) {
    throw argError(err.message.replace('openModel', 'forgetModel'));
  }
  if (revision !== undefined) readRevision(revision);
  const store = await readStore(o.cache, 'forgetModel');
  if (!store) return 0;
  return storage('forgetModel', async () => {
    const gone = (await store.list()).filter((m) => m.repo === repo && (revision === undefined || m.revision === revision));
    for (const m of gone) await store.forget(m.repo, m.revision);
    return gone.length;
  });
}

/** A manifest's total bytes. */
const bytesOf = (m) => Object.values(m.files).reduce((sum, e) => sum + (e?.size ?? 0), 0);

/**
 * Files kept in a directory (Node): <dir>/<owner>/<name>/<revision>/<file>,
 * with kept.json beside them ({ repo, revision, commit, files: { file:
 * { size, sha256 } | null } }), written last: a revision without it is not kept.
 */
class DiskStore {
  constructor(dir) {
    this.dir = dir;
  }

  async #fs() {
    return { fs: await import('node:fs/promises'), path: await import('node:path') };
  }

  async #folder(repo, revision) {
    const { path } = await this.#fs();
    return path.join(this.dir, ...repo.split('/'), revision);
  }

  async manifest(repo, revision) {
    const { fs, path } = await this.#fs();
    const m = JSON.parse(await fs.readFile(path.join(await this.#folder(repo, revision), MANIFEST), 'utf8'));
    return m.repo === repo && m.revision === revision ? m : null;
  }

  async read(repo, revision, file) {
    const { path } = await this.#fs();
    const { pathToFileURL } = await import('node:url');
    const r = await fileResponse(pathToFileURL(path.join(await this.#folder(repo, revision), file)).href, {});
    if (!r.ok) throw new Error(`${file} is not kept`);
    return r;
  }

  async begin(repo, revision) {
    const { fs, path } = await this.#fs();
    const folder = await this.#folder(repo, revision);
    await fs.mkdir(folder, { recursive: true });
    await fs.rm(path.join(folder, MANIFEST), { force: true });
    // two opens of the same revision at once write partial files of their own; the last to finish is kept
    const token = Math.random().toString(36).slice(2, 10);
    const partial = (file) => path.join(folder, `${file}.${token}.partial`);
    const open = new Map(); // file -> its handle on its partial file
    const renamed = new Set(); // files this open put in place: what discard removes, with the partial ones
    return {
      async write(file, piece) {
        if (!open.has(file)) open.set(file, await fs.open(partial(file), 'w'));
        await open.get(file).write(piece);
      },
      async commit(manifest) {
        for (const handle of open.values()) await handle.close();
        for (const file of open.keys()) {
          await fs.rename(partial(file), path.join(folder, file));
          renamed.add(file);
        }
        await fs.writeFile(path.join(folder, MANIFEST), JSON.stringify(manifest));
      },
      async discard() {
        for (const handle of open.values()) await handle.close().catch(() => {});
        for (const file of open.keys()) {
          await fs.rm(partial(file), { force: true });
          if (renamed.has(file)) await fs.rm(path.join(folder, file), { force: true });
        }
      },
    };
  }

  async list() {
    const { fs, path } = await this.#fs();
    const out = [];
    const dirs = async (at) => (await fs.readdir(at, { withFileTypes: true }).catch(() => [])).filter((d) => d.isDirectory()).map((d) => d.name);
    for (const owner of await dirs(this.dir)) {
      for (const name of await dirs(path.join(this.dir, owner))) {
        for (const revision of await dirs(path.join(this.dir, owner, name))) {
          const m = await safely(() => this.manifest(`${owner}/${name}`, revision));
          if (m) out.push({ repo: m.repo, revision: m.revision, commit: m.commit ?? null, files: m.files, bytes: bytesOf(m) });
        }
      }
    }
    return out;
  }

  async forget(repo, revision) {
    const { fs } = await this.#fs();
    await fs.rm(await this.#folder(repo, revision), { recursive: true, force: true });
  }
}

/**
 * Files kept in the browser's Cache Storage (cache 'attnlab-models'), keyed
 * by repo, revision and file under a made-up origin, with kept.json beside
 * them, put last. Each file is put as it streams in: a Response whose body is
 * fed piece by piece and closed only once the whole open has succeeded, so a
 * failed open (a wrong hash, an abort) leaves nothing. The body's queue holds
 * at most KEEP_AHEAD bytes: a write past it waits until the cache has read
 * some (or refused, or the open is aborted), so a slow disk slows the download
 * instead of holding the whole file in memory a second time.
 */
class CacheStore {
  constructor(caches) {
    this.caches = caches;
  }

  #key = (repo, revision, file) => `${CACHE_ORIGIN}/${repo}/${encodeURIComponent(revision)}/${file}`;

  async manifest(repo, revision) {
    const cache = await this.caches.open(CACHE_NAME);
    const r = await cache.match(this.#key(repo, revision, MANIFEST));
    return r ? r.json() : null;
  }

  async read(repo, revision, file) {
    const cache = await this.caches.open(CACHE_NAME);
    const r = await cache.match(this.#key(repo, revision, file));
    if (!r) throw new Error(`${file} is not kept`);
    return r;
  }

  async begin(repo, revision, signal) {
    const cache = await this.caches.open(CACHE_NAME);
    await cache.delete(this.#key(repo, revision, MANIFEST));
    const streams = new Map(); // file -> { controller, put, failed, settled, waiting }
    const key = (file) => this.#key(repo, revision, file);
    /** A write waiting for room goes on (the cache read, refused or finished; the open aborted). */
    const wake = (stream) => {
      const w = stream.waiting;
      stream.waiting = null;
      w?.();
    };
    const wakeAll = () => streams.forEach(wake);
    signal?.addEventListener('abort', wakeAll, { once: true });
    const opened = (file) => {
      const stream = { controller: null, failed: null, settled: false, waiting: null };
      const body = new ReadableStream({
        start(c) { stream.controller = c; },
        pull: () => wake(stream), // the cache read from the queue: room again
      }, { highWaterMark: KEEP_AHEAD, size: (piece) => piece.byteLength });
      stream.put = cache.put(key(file), new Response(body, { headers: { 'content-type': 'application/octet-stream' } }));
      // awaited at commit; a refusal seen earlier stops the writes
      stream.put.then(() => {}, (err) => { stream.failed = err; }).finally(() => { stream.settled = true; wake(stream); });
      streams.set(file, stream);
      return stream;
    };
    return {
      async write(file, piece) {
        const stream = streams.get(file) ?? opened(file);
        if (stream.failed) throw stream.failed;
        stream.controller.enqueue(piece.slice());
        while (stream.controller.desiredSize <= 0 && !stream.settled && !signal?.aborted) {
          await new Promise((resolve) => { stream.waiting = resolve; });
        }
        if (stream.failed) throw stream.failed;
      },
      async commit(manifest) {
        signal?.removeEventListener('abort', wakeAll);
        for (const { controller } of streams.values()) controller.close();
        await Promise.all([...streams.values()].map((s) => s.put));
        await cache.put(key(MANIFEST), new Response(JSON.stringify(manifest), { headers: { 'content-type': 'application/json' } }));
      },
      async discard() {
        signal?.removeEventListener('abort', wakeAll);
        for (const [file, { controller, put }] of streams) {
          try {
            controller.error(new Error('not kept'));
          } catch {
            // already closed
          }
          await put.catch(() => {});
          await cache.delete(key(file));
        }
        streams.clear();
      },
    };
  }

  async list() {
    const cache = await this.caches.open(CACHE_NAME);
    const out = [];
    for (const request of await cache.keys()) {
      if (!request.url.endsWith(`/${MANIFEST}`)) continue;
      const m = await safely(async () => (await cache.match(request)).json());
      if (m) out.push({ repo: m.repo, revision: m.revision, commit: m.commit ?? null, files: m.files, bytes: bytesOf(m) });
    }
    return out;
  }

  async forget(repo, revision) {
    const cache = await this.caches.open(CACHE_NAME);
    for (const file of [MANIFEST, ...FILES, WEIGHTS_FALLBACK]) await cache.delete(this.#key(repo, revision, file));
  }
}

/**
 * A repo's files fetched as openModel fetches them (the redirect followed, the
 * size and SHA-256 the hub says checked, a dropped connection resumed), each
 * handed piece by piece to the target open(file, size) returns ({ take(piece),
 * done() }), with no engine: `npm run fetch-model` writes a course's own copy
 * with it. → { file: { size, sha256 } | null (an optional file the repo lacks) }.
 */
export async function fetchFiles(repo, args, open) {
  const o = options('fetchFiles', args ?? {}, ['hub', 'revision', 'onProgress', 'signal']);
  readRepo(repo);
  const revision = readRevision(o.revision);
  const hub = await readHub(o.hub);
  const ctx = { signal: o.signal, progress: progressOf(o.onProgress) };
  const files = {};
  try {
    await fetchEach(ctx, { hub, repo, revision }, open, (file, got) => { files[file] = got && { size: got.size, sha256: got.sha256 }; });
  } finally {
    ctx.progress.stop();
  }
  return files;
}
