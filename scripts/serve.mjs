// A small static file server for attnlab's pages (no dependencies).
// Run `node scripts/serve.mjs --help` for its options. Tests import { serve } and
// start it on port 0 in-process, on web/. The command line serves dist/, the built
// site `npm start` has just made (a page's modules in a few bundles, not one request
// each), unless web/ changed after the build or there is none: then web/, and the
// banner says which and why.
//
// Every response carries the pages' Content-Security-Policy and the headers
// that make a page cross-origin isolated (so the engine may use threads). Pages may be
// framed by this origin only (frame-ancestors 'self'), except a page asked for with
// ?embed (one widget, docs/embedding.md): any site may frame it, or only the one
// named by &origin=, and it may be framed by a cross-origin isolated page
// (Cross-Origin-Resource-Policy: cross-origin). With --course-port, a second server
// (another origin) serves the same folder for examples/course.html, a course page
// that embeds the widgets, under a policy that lets it frame the first. A file is opened
// before it is described: the size sent is the size of what is streamed, and a
// file that vanishes, or a path that is no regular file (a directory named
// index.html, a socket), is a 404 instead of an error that stops the server.
import { createServer } from 'node:http';
import { createReadStream } from 'node:fs';
import { open, readdir, stat } from 'node:fs/promises';
import { extname, join, normalize, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { exactOrigin } from '../web/embed/protocol.js';

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.wasm': 'application/wasm',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.woff2': 'font/woff2',
  '.csv': 'text/csv; charset=utf-8',
};

/**
 * The policy of every page (also in each page's meta tag): WASM may compile, nothing inline runs;
 * requests go to the site itself and to the Hugging Face hub, whose files redirect to its stores
 * (cdn-lfs*.hf.co, cas-bridge.xethub.hf.co, *.huggingface.co): the model cards' openModel.
 */
export const CSP = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; "
  + "img-src 'self' data: blob:; connect-src 'self' https://huggingface.co https://*.huggingface.co https://*.hf.co; object-src 'none'; base-uri 'none'";

/**
 * Cross-origin isolation: with these two, pages get SharedArrayBuffer and the
 * engine runs on threads (every file here is same-origin, so require-corp
 * blocks nothing of ours).
 */
export const ISOLATION_HEADERS = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
};

const SECURITY_HEADERS = {
  'Content-Security-Policy': `${CSP}; frame-ancestors 'self'`,
  'X-Content-Type-Options': 'nosniff',
  ...ISOLATION_HEADERS,
};

/** The headers of an ?embed page: framed by any site, or only by &origin=, isolated hosts included. */
export function embedHeaders(urlPath) {
  const query = new URLSearchParams(urlPath.split('#')[0].split('?')[1] ?? '');
  if (!query.has('embed')) return {};
  const origin = query.has('origin') ? exactOrigin(query.get('origin')) : '*';
  return {
    'Content-Security-Policy': `${CSP}; frame-ancestors ${origin ?? "'none'"}`,
    'Cross-Origin-Resource-Policy': 'cross-origin',
  };
}

/**
 * The policy of the example course page's server: its own scripts and styles, and frames from itself and
 * `attnlab` (the origin serving the widgets) only. Like a learning platform's page it is not
 * cross-origin isolated unless `isolated`.
 */
export function courseHeaders(attnlab, { isolated = false } = {}) {
  return {
    'Content-Security-Policy': `default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; frame-src 'self' ${attnlab}; `
      + "object-src 'none'; base-uri 'none'; frame-ancestors 'self'",
    'X-Content-Type-Options': 'nosniff',
    ...(isolated ? ISOLATION_HEADERS : {}),
  };
}

export const USAGE = `Usage: node scripts/serve.mjs [--root DIR] [--port N] [--host ADDRESS] [--course-port N]

Serves a folder of static files over HTTP for attnlab's pages.

  --root DIR       the folder to serve. Default: dist/ of this repository, the built site (npm start
                   builds it first): each page's modules bundled and minified into a few files, as any
                   host serves them. web/, the sources one module a file, when there is no dist/ or a
                   file in web/ changed after it was built; --root web serves the sources anyway
  --port N         the TCP port, 0 for any free one (default: $PORT or 8080)
  --host ADDRESS   the address to bind (default: 127.0.0.1, this machine only; 0.0.0.0 for every interface)
  --course-port N  also serve the example course page (examples/course.html, embedding the widgets)
                   on this port: another origin, as a course site would be
  --help           print this text and exit
`;

const here = fileURLToPath(new URL('.', import.meta.url));
/** What serve() serves unless told otherwise (the browser tests: the sources, no build needed). */
const DEFAULT_ROOT = resolve(here, '..', 'web');
const DIST = resolve(here, '..', 'dist');

/** The newest modification time of a file under dir (0 for none). */
async function newest(dir) {
  let latest = 0;
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) latest = Math.max(latest, await newest(path));
    else latest = Math.max(latest, await stat(path).then((info) => info.mtimeMs, () => 0));
  }
  return latest;
}

/**
 * The folder the command line serves without --root, and why: dist/, the built site, when
 * `npm run build` has made it (its index.html, written last) and no file in web/ is newer;
 * else web/, so that an edit is never hidden behind an old build.
 */
export async function defaultRoot({ web = DEFAULT_ROOT, dist = DIST } = {}) {
  const built = await stat(join(dist, 'index.html')).then((info) => info.mtimeMs, () => null);
  if (built === null) return { root: web, why: 'the sources, one module a file: there is no dist/ yet, which npm run build makes' };
  if (await newest(web) > built) return { root: web, why: 'the sources, one module a file: web/ changed after dist/ was built; npm run build rebuilds it' };
  return { root: dist, why: 'the built site, each page\'s modules bundled into a few files; --root web serves the sources' };
}

/** Maps a URL path to a file under root, or null if it would leave root. */
function resolvePath(root, urlPath) {
  let path;
  try {
    path = decodeURIComponent(urlPath.split('?')[0].split('#')[0]);
  } catch {
    return null;
  }
  if (path.includes('\0')) return null;
  const full = normalize(join(root, path));
  return full === root || full.startsWith(root + sep) ? full : null;
}

function reply(res, status, text, headers = {}) {
  res.writeHead(status, { ...SECURITY_HEADERS, 'Content-Type': 'text/plain; charset=utf-8', ...headers }).end(text);
}

/** The security headers of one response: the site's, or the given server-wide ones, with an ?embed page's. */
const headersFor = (security, req) => (security ? { ...security } : { ...SECURITY_HEADERS, ...embedHeaders(req.url || '/') });

/** An open handle on a regular file and its size, or null (missing, unreadable, not a file). */
async function openFile(path) {
  let handle;
  try {
    handle = await open(path, 'r');
    const info = await handle.stat();
    if (info.isFile()) return { handle, size: info.size };
  } catch {
    // gone since the directory was listed, unreadable, or not something one can open
  }
  await handle?.close().catch(() => {});
  return null;
}

async function handle(root, req, res, security) {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    reply(res, 405, 'method not allowed\n', { ...security, Allow: 'GET, HEAD' });
    return;
  }
  let path = resolvePath(root, req.url || '/');
  if (!path) {
    reply(res, 403, 'forbidden\n', security);
    return;
  }
  const isDirectory = await stat(path).then((info) => info.isDirectory(), () => false);
  if (isDirectory) path = join(path, 'index.html');
  const file = await openFile(path);
  if (!file) {
    reply(res, 404, 'not found\n', security);
    return;
  }
  res.writeHead(200, {
    ...headersFor(security, req),
    'Content-Type': TYPES[extname(path).toLowerCase()] || 'application/octet-stream',
    'Content-Length': file.size,
    'Cache-Control': 'no-cache',
  });
  if (req.method === 'HEAD') {
    await file.handle.close();
    res.end();
    return;
  }
  // The stream owns the handle now and closes it; a read error (the disk, a file
  // truncated while sent) ends this response, never the server.
  const stream = createReadStream(null, { fd: file.handle, autoClose: true });
  stream.on('error', () => res.destroy());
  res.on('close', () => stream.destroy());
  stream.pipe(res);
}

/** The URL to open for a bound address ({ address, port } from server.address()); every interface includes loopback. */
export function urlFor({ address, port }) {
  const loopback = { '0.0.0.0': '127.0.0.1', '::': '::1' }[address] ?? address;
  const host = loopback.includes(':') ? `[${loopback}]` : loopback;
  return `http://${host}:${port}/`;
}

/**
 * Starts the server; resolves to { server, url, address } with the address really bound.
 * headers: the security headers of every response instead of the site's (courseHeaders()).
 */
export function serve({ root = DEFAULT_ROOT, port = 8080, host = '127.0.0.1', headers = null } = {}) {
  const absRoot = resolve(root);
  const server = createServer((req, res) => {
    handle(absRoot, req, res, headers).catch(() => {
      if (res.headersSent) res.destroy();
      else reply(res, 500, 'internal error\n', headers ?? {});
    });
  });
  server.on('clientError', (_err, socket) => socket.destroy());
  return new Promise((ok, fail) => {
    server.once('error', fail);
    server.listen(port, host, () => {
      server.off('error', fail);
      const address = server.address();
      ok({ server, url: urlFor(address), address });
    });
  });
}

/** { root, port, host, help } from the command line (root null: not given, defaultRoot() chooses), or { error } naming the bad argument. */
export function parseArgs(argv, env = process.env) {
  const args = { root: null, port: env.PORT === undefined ? 8080 : Number(env.PORT), host: '127.0.0.1', coursePort: null, help: false };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    if (flag === '--help' || flag === '-h') args.help = true;
    else if (flag === '--root' || flag === '--port' || flag === '--host' || flag === '--course-port') {
      const value = argv[++i];
      if (value === undefined) return { error: `${flag} needs a value` };
      if (flag === '--root') args.root = resolve(value);
      else if (flag === '--host') args.host = value;
      else if (flag === '--port') args.port = Number(value);
      else args.coursePort = Number(value);
    } else {
      return { error: `unknown argument ${JSON.stringify(flag)}` };
    }
  }
  for (const port of [args.port, args.coursePort ?? 0]) {
    if (!Number.isInteger(port) || port < 0 || port > 65535) {
      return { error: `the port must be a whole number from 0 to 65535 (got ${JSON.stringify(String(port))})` };
    }
  }
  return args;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = parseArgs(process.argv.slice(2));
  if (args.error) {
    process.stderr.write(`attnlab: ${args.error}\n\n${USAGE}`);
    process.exitCode = 2;
  } else if (args.help) {
    process.stdout.write(USAGE);
  } else {
    const chosen = args.root === null ? defaultRoot() : Promise.resolve({ root: args.root, why: null });
    chosen
      .then(({ root, why }) => {
        args.root = root;
        return serve(args).then((served) => ({ ...served, why }));
      })
      .then(({ url, address, why }) => {
        const everywhere = address.address === '0.0.0.0' || address.address === '::';
        const where = everywhere ? `every interface (${address.address}) on port ${address.port}; open ${url}` : url;
        console.log(`attnlab: serving ${args.root}${why ? ` (${why})` : ''} at ${where} (Ctrl+C stops)`);
        if (args.coursePort === null) return null;
        const attnlab = new URL(url).origin;
        return serve({ root: args.root, port: args.coursePort, host: args.host, headers: courseHeaders(attnlab) }).then((course) => {
          const page = new URL(`examples/course.html?attnlab=${encodeURIComponent(url)}`, course.url);
          console.log(`attnlab: the example course page (another origin, embedding the widgets) at ${page}`);
        });
      })
      .catch((err) => {
        console.error(`attnlab: cannot serve on ${args.host} port ${args.port}: ${err.message}`);
        process.exitCode = 1;
      });
  }
}
