// The data files the build makes under web/data/ (scripts/*.mjs): read from disk
// in Node, fetched in a page or worker, and inflated when gzipped.
import { AttnlabError } from './errors.js';

const isNode = typeof process === 'object' && typeof process.versions?.node === 'string' && typeof window === 'undefined';

/**
 * The file at url as bytes (or text with `text: true`); `what` names the caller in
 * messages and `script` the build script that makes the file. Fails with ERR_DATA.
 */
export async function readDataFile(url, { what, script, gzip = false, text = false }) {
  let bytes;
  if (isNode && url.protocol === 'file:') {
    const { readFile } = await import('node:fs/promises');
    const raw = await readFile(url).catch(() => {
      throw new AttnlabError('ERR_DATA', `${what}: ${url.pathname} is missing; run \`node scripts/${script}\` (or \`npm run build\`)`);
    });
    bytes = gzip ? (await import('node:zlib')).gunzipSync(raw) : raw;
  } else {
    const response = await fetch(url).catch((e) => {
      throw new AttnlabError('ERR_DATA', `${what}: cannot load ${url} (${e.message})`);
    });
    if (!response.ok) throw new AttnlabError('ERR_DATA', `${what}: cannot load ${url} (HTTP ${response.status})`);
    const body = gzip ? new Response(response.body.pipeThrough(new DecompressionStream('gzip'))) : response;
    bytes = await body.arrayBuffer();
  }
  const view = ArrayBuffer.isView(bytes) ? bytes : new Uint8Array(bytes);
  return text ? new TextDecoder().decode(view) : view;
}

/** A loader that reads once per URL (a failed read is tried again next time). */
export function oncePerKey(load) {
  const cache = new Map();
  return (key, ...rest) => {
    const name = String(key);
    if (!cache.has(name)) {
      const promise = load(key, ...rest);
      promise.catch(() => cache.delete(name));
      cache.set(name, promise);
    }
    return cache.get(name);
  };
}
