// A small static file server for the playground (no dependencies).
//   node scripts/serve.mjs [--root web] [--port 8080]      (PORT in the environment works too)
// Tests import { serve } and start it on port 0 in-process.
import { createServer } from 'node:http';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { extname, join, normalize, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

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

const here = fileURLToPath(new URL('.', import.meta.url));
const DEFAULT_ROOT = resolve(here, '..', 'web');

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

async function handle(root, req, res) {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.writeHead(405, { Allow: 'GET, HEAD' }).end('method not allowed\n');
    return;
  }
  let file = resolvePath(root, req.url || '/');
  if (!file) {
    res.writeHead(403).end('forbidden\n');
    return;
  }
  try {
    let info = await stat(file);
    if (info.isDirectory()) {
      file = join(file, 'index.html');
      info = await stat(file);
    }
    res.writeHead(200, {
      'Content-Type': TYPES[extname(file).toLowerCase()] || 'application/octet-stream',
      'Content-Length': info.size,
      'Cache-Control': 'no-cache',
      'X-Content-Type-Options': 'nosniff',
    });
    if (req.method === 'HEAD') res.end();
    else createReadStream(file).pipe(res);
  } catch {
    res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end('not found\n');
  }
}

/** Starts the server; resolves to { server, url }. */
export function serve({ root = DEFAULT_ROOT, port = 8080, host = '127.0.0.1' } = {}) {
  const absRoot = resolve(root);
  const server = createServer((req, res) => {
    handle(absRoot, req, res).catch(() => res.writeHead(500).end());
  });
  return new Promise((ok, fail) => {
    server.once('error', fail);
    server.listen(port, host, () => {
      const { port: actual } = server.address();
      ok({ server, url: `http://localhost:${actual}/` });
    });
  });
}

function parseArgs(argv) {
  const args = { root: DEFAULT_ROOT, port: Number(process.env.PORT || 8080) };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--root') args.root = resolve(argv[++i]);
    else if (argv[i] === '--port') args.port = Number(argv[++i]);
  }
  return args;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { root, port } = parseArgs(process.argv.slice(2));
  serve({ root, port })
    .then(({ url }) => console.log(`attnlab: serving ${root} at ${url} (Ctrl+C stops)`))
    .catch((err) => {
      console.error(`attnlab: cannot serve on port ${port}: ${err.message}`);
      process.exit(1);
    });
}
