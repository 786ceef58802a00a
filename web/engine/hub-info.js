// modelSize(repo, { hub, revision, signal }): how large a checkpoint's weights
// are, asked of the hub before anything is fetched, so a page can say "548 MB"
// on a button before the click. One HEAD of the weights' resolve URL, as the
// hub answers it: its redirect to the file store carries X-Linked-Size, read
// where the redirect is visible (Node; a same-origin copy); a browser hides a
// cross-origin redirect's headers, so there the HEAD follows it and the
// store's Content-Length is the size. A revision without model.safetensors
// (some of Pythia's training checkpoints) is asked for pytorch_model.bin.
// Needs no engine: nothing is read but headers.
import { AttnlabError, argError, describe } from './errors.js';
import { options } from './matrix.js';
import { DEFAULT_HUB, readRepo, readRevision } from './hub.js';

/** The weights' file names, in the order a hub is asked for them. */
const WEIGHT_FILES = Object.freeze(['model.safetensors', 'pytorch_model.bin']);

const loadError = (message, extra) => Object.assign(new AttnlabError('ERR_LOAD', `modelSize: ${message}`), extra);

/** The hub's base URL without a trailing '/': http(s), or relative to the page; no user, query or fragment. */
function readHub(hub) {
  if (hub === undefined) return DEFAULT_HUB;
  let url;
  try {
    if (typeof hub !== 'string' || hub.length === 0) throw new Error('not a string');
    url = new URL(hub, globalThis.document?.baseURI ?? globalThis.location?.href);
  } catch {
    throw argError(`modelSize: hub must be an http(s) URL, or one relative to the page (got ${describe(hub)})`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw argError(`modelSize: hub ${describe(hub)}: a hub is reached by http: or https:`);
  if (url.username || url.password || url.search || url.hash) throw argError(`modelSize: hub ${describe(hub)}: a base URL without a user, query or fragment`);
  return url.href.replace(/\/+$/, '');
}

/** A byte count from a header, or null. */
const bytesOf = (value) => (value !== null && /^\d+$/.test(value.trim()) ? Number(value) : null);

/** The size a HEAD's answer says: X-Linked-Size, else the Content-Length of an unencoded body. */
function sizeOf(headers) {
  const encoded = (headers.get('content-encoding') ?? 'identity') !== 'identity';
  return bytesOf(headers.get('x-linked-size')) ?? (encoded ? null : bytesOf(headers.get('content-length')));
}

async function head(url, redirect, signal) {
  try {
    return await fetch(url, { method: 'HEAD', redirect, signal });
  } catch (err) {
    if (signal?.aborted) throw new AttnlabError('ERR_ABORT', 'modelSize: aborted');
    throw loadError(`${url}: the request failed (${err?.cause?.message ?? err?.message ?? describe(err)})`, { url });
  }
}

/** The size of one file at url: a number, null (the server said none), or undefined (404: no such file). */
async function sizeAt(url, signal) {
  const r = await head(url, 'manual', signal);
  if (r.status >= 300 && r.status < 400) {
    const said = sizeOf(r.headers);
    if (said !== null) return said;
  }
  // a browser's hidden cross-origin redirect ('opaqueredirect'), or one that says no size: followed
  const followed = r.type === 'opaqueredirect' || (r.status >= 300 && r.status < 400) ? await head(url, 'follow', signal) : r;
  if (followed.status === 404) return undefined;
  if (!followed.ok) {
    const why = followed.status === 401 || followed.status === 403 ? 'the repo is gated, private or missing' : followed.status >= 500 ? 'the server failed' : 'unexpected answer';
    throw loadError(`${url}: HTTP ${followed.status}: ${why}`, { url, status: followed.status });
  }
  return sizeOf(followed.headers);
}

/**
 * { file, bytes } of a checkpoint's weights as the hub reports them:
 * model.safetensors, else pytorch_model.bin; bytes null when the server says
 * no size. ERR_LOAD (with .url, .status) when neither is there or the hub
 * cannot be reached; ERR_ARG for a repo, revision or hub openModel refuses.
 */
export async function modelSize(repo, args = {}) {
  const o = options('modelSize', args ?? {}, ['hub', 'revision', 'signal']);
  try {
    readRepo(repo);
  } catch (err) {
    throw argError(err.message.replace('openModel', 'modelSize'));
  }
  let revision;
  try {
    revision = readRevision(o.revision);
  } catch (err) {
    throw argError(err.message.replace('openModel', 'modelSize'));
  }
  const hub = readHub(o.hub);
  if (o.signal !== undefined && !(o.signal instanceof AbortSignal)) throw argError(`modelSize: signal must be an AbortSignal (got ${describe(o.signal)})`);
  const base = `${hub}/${repo}/resolve/${encodeURIComponent(revision)}`;
  for (const file of WEIGHT_FILES) {
    const bytes = await sizeAt(`${base}/${file}`, o.signal);
    if (bytes !== undefined) return { file, bytes };
  }
  throw loadError(`${base}/${WEIGHT_FILES[0]}: HTTP 404: no such file (nor ${WEIGHT_FILES.slice(1).join(', ')})`, { url: `${base}/${WEIGHT_FILES[0]}`, status: 404 });
}
