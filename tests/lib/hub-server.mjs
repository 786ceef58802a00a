// A local server that answers as the Hugging Face hub does, for openModel's
// tests: the hub on one port, its file store on another (another origin).
//   hub   HEAD/GET /{owner}/{name}/resolve/{revision}/{file}
//         a small file (config.json): 200 with its bytes and its git blob hash as ETag;
//         a large one ("LFS", model.safetensors and files listed in `lfs`): 302 to the
//         store with X-Linked-Size, X-Linked-Etag ("<sha256>") and X-Repo-Commit;
//         a missing file 404 (X-Error-Code: EntryNotFound), a missing repo 401 (as the hub
//         answers an unknown or gated repo to a visitor who is not signed in)
//         GET /api/models/{owner}/{name}/revision/{revision}?blobs=true: the model info a browser
//         reads the large files' sha256 and size from ({ sha, siblings: [{ rfilename, size,
//         lfs: { sha256, size, pointerSize } }] }), as the hub's API answers it
//   store GET /blobs/{sha256}: the bytes, with Range support (206 and Content-Range) and an ETag of its own
// Both answer CORS preflights and expose the headers. `faults` makes it misbehave:
//   faults[file] = { status }      the hub answers the file with this status
//                  { drop, times } the store closes the connection after `drop` bytes, `times` times
//                  { corrupt }     the store flips a byte of the body (its hash no longer matches)
//                  { noRange }     the store ignores Range and answers 200 with the whole file
//                  { size }        the hub's X-Linked-Size says this many bytes
//                  { hide }        the hub's redirect says no size or hash (as a browser sees a cross-origin one)
//                  { chunked }     the store sends no Content-Length
//                  { noApi }       the hub's API knows nothing of the repo (404), as a course's own copy
//                  { pace, pieces } the store sends the body in `pieces` pieces, `pace` ms apart
// Every request is recorded in `requests`: { server, method, path, range }.
import { createServer } from 'node:http';
import { createHash } from 'node:crypto';

const CORS = {
  'access-control-allow-origin': '*',
  'access-control-expose-headers': 'X-Linked-Size, X-Linked-Etag, X-Repo-Commit, ETag, Content-Range, Content-Length, Accept-Ranges',
};

const sha256 = (bytes) => createHash('sha256').update(bytes).digest('hex');
const gitBlob = (bytes) => createHash('sha1').update(`blob ${bytes.length}\0`).update(bytes).digest('hex');
const asBytes = (data) => (typeof data === 'string' ? Buffer.from(data) : Buffer.from(data.buffer, data.byteOffset, data.byteLength));

function listen(handler) {
  const server = createServer(handler);
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

/**
 * Starts the hub and its store. repos: { 'owner/name': { revision: { file: bytes | text } } }.
 * Returns { url, storeUrl, requests, faults, weightsRequests(), close() }.
 */
export async function startHub(repos, { lfs = ['model.safetensors'] } = {}) {
  const requests = [];
  const faults = {};
  const blobs = new Map(); // sha256 -> { bytes, file }
  const files = {}; // `${repo}/${revision}/${file}` -> { bytes, sha256 }
  for (const [repo, revisions] of Object.entries(repos)) {
    for (const [revision, list] of Object.entries(revisions)) {
      for (const [file, data] of Object.entries(list)) {
        const bytes = asBytes(data);
        const entry = { bytes, sha256: sha256(bytes), commit: createHash('sha1').update(`${repo}@${revision}`).digest('hex') };
        files[`${repo}/${revision}/${file}`] = entry;
        blobs.set(entry.sha256, { bytes, file });
      }
    }
  }

  const preflight = (req, res) => {
    res.writeHead(204, { ...CORS, 'access-control-allow-headers': 'Range', 'access-control-allow-methods': 'GET, HEAD' });
    res.end();
  };

  const store = await listen((req, res) => {
    requests.push({ server: 'store', method: req.method, path: req.url, range: req.headers.range ?? null });
    if (req.method === 'OPTIONS') return preflight(req, res);
    const blob = blobs.get(/^\/blobs\/([0-9a-f]{64})/.exec(req.url)?.[1]);
    if (!blob) {
      res.writeHead(404, CORS);
      return res.end();
    }
    const fault = faults[blob.file] ?? {};
    let body = blob.bytes;
    if (fault.corrupt) {
      body = Buffer.from(body);
      body[body.length >> 1] ^= 0xff;
    }
    const start = !fault.noRange && req.headers.range ? Number(/^bytes=(\d+)-$/.exec(req.headers.range)?.[1] ?? 0) : 0;
    const part = body.subarray(start);
    res.writeHead(start > 0 ? 206 : 200, {
      // the store's own ETag: 64 hex digits that are not the bytes' SHA-256 (a content-addressed store's own hash)
      ...CORS, etag: `"${sha256(`store:${blob.file}`)}"`, 'content-type': 'application/octet-stream', ...(fault.chunked ? {} : { 'content-length': part.length }), 'accept-ranges': 'bytes',
      ...(start > 0 ? { 'content-range': `bytes ${start}-${body.length - 1}/${body.length}` } : {}),
    });
    if (req.method === 'HEAD') return res.end();
    if (fault.drop !== undefined && fault.times > 0) {
      fault.times--;
      // a connection dropped mid-body: part of the bytes, then the socket closes
      res.write(part.subarray(0, fault.drop), () => res.socket.destroy());
      return undefined;
    }
    if (fault.pace) {
      // a slow connection: the body in pieces, a pause between them
      const step = Math.ceil(part.length / fault.pieces);
      let at = 0;
      const next = () => {
        res.write(part.subarray(at, at + step));
        at += step;
        if (at < part.length) setTimeout(next, fault.pace);
        else res.end();
      };
      next();
      return undefined;
    }
    return res.end(part);
  });
  const storeUrl = `http://127.0.0.1:${store.address().port}`;

  const hub = await listen((req, res) => {
    requests.push({ server: 'hub', method: req.method, path: req.url, range: req.headers.range ?? null });
    if (req.method === 'OPTIONS') return preflight(req, res);
    const api = /^\/api\/models\/([^/]+\/[^/]+)\/revision\/([^/?]+)\?blobs=true$/.exec(req.url);
    if (api) {
      const [repo, revision] = [api[1], decodeURIComponent(api[2])];
      const list = repos[repo]?.[revision];
      if (!list || Object.values(faults).some((f) => f.noApi)) {
        res.writeHead(list ? 404 : 401, { ...CORS, 'content-type': 'application/json' });
        return res.end(JSON.stringify({ error: 'Repository not found' }));
      }
      const siblings = Object.keys(list).map((file) => {
        const entry = files[`${repo}/${revision}/${file}`];
        const size = faults[file]?.size ?? entry.bytes.length;
        return { rfilename: file, size, blobId: gitBlob(entry.bytes), ...(lfs.includes(file) ? { lfs: { sha256: entry.sha256, size, pointerSize: 134 } } : {}) };
      });
      res.writeHead(200, { ...CORS, 'content-type': 'application/json; charset=utf-8' });
      return res.end(JSON.stringify({ id: repo, sha: files[`${repo}/${revision}/${Object.keys(list)[0]}`].commit, siblings }));
    }
    const m = /^\/([^/]+\/[^/]+)\/resolve\/([^/]+)\/([^/?]+)$/.exec(req.url);
    const repo = m?.[1], revision = m && decodeURIComponent(m[2]), file = m?.[3];
    const fault = (file && faults[file]) ?? {};
    if (fault.status) {
      res.writeHead(fault.status, { ...CORS, 'content-type': 'text/plain' });
      return res.end(`status ${fault.status}`);
    }
    if (!m || !repos[repo]) {
      res.writeHead(401, { ...CORS, 'x-error-code': 'RepoNotFound' });
      return res.end('Invalid username or password.');
    }
    const entry = files[`${repo}/${revision}/${file}`];
    if (!entry) {
      res.writeHead(404, { ...CORS, 'x-error-code': repos[repo][revision] ? 'EntryNotFound' : 'RevisionNotFound' });
      return res.end('Entry not found');
    }
    if (lfs.includes(file)) {
      const linked = fault.hide ? {} : {
        'x-linked-size': fault.size ?? entry.bytes.length, 'x-linked-etag': `"${entry.sha256}"`, 'x-repo-commit': entry.commit,
        etag: `"${entry.sha256}"`,
      };
      res.writeHead(302, { ...CORS, location: `${storeUrl}/blobs/${entry.sha256}?repo=${encodeURIComponent(repo)}`, ...linked });
      return res.end();
    }
    res.writeHead(200, {
      ...CORS, 'content-type': 'application/json', 'content-length': entry.bytes.length, etag: `"${gitBlob(entry.bytes)}"`,
      'x-repo-commit': entry.commit,
    });
    return res.end(req.method === 'HEAD' ? undefined : entry.bytes);
  });
  const url = `http://127.0.0.1:${hub.address().port}`;

  return {
    url, storeUrl, requests, faults,
    /** Requests for a file's bytes: GETs of the store, or of the hub for the file. */
    requestsFor: (file) => requests.filter((r) => r.path.includes(`/${file}`) || (r.server === 'store' && blobs.get(/^\/blobs\/([0-9a-f]{64})/.exec(r.path)?.[1])?.file === file)),
    close: () => Promise.all([hub, store].map((s) => new Promise((resolve) => {
      s.closeAllConnections?.();
      s.close(resolve);
    }))),
  };
}
