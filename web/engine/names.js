// The first names the transformer's 'names' task learns from
// (web/data/names.txt, one per line, made at build time by scripts/names.mjs
// from two npm data packages): read from disk in Node, fetched in a page,
// once per URL and only when a 'names' model is first made.
import { AttnlabError } from './errors.js';

export const NAMES_URL = new URL('../data/names.txt', import.meta.url);

const isNode = typeof process === 'object' && typeof process.versions?.node === 'string' && typeof window === 'undefined';

async function fetchNames(url) {
  if (isNode && url.protocol === 'file:') {
    const { readFile } = await import('node:fs/promises');
    return readFile(url, 'utf8').catch(() => {
      throw new AttnlabError('ERR_DATA', `loadNames: ${url.pathname} is missing; run \`node scripts/names.mjs\` (or \`npm run build\`)`);
    });
  }
  const response = await fetch(url).catch((e) => {
    throw new AttnlabError('ERR_DATA', `loadNames: cannot load ${url} (${e.message})`);
  });
  if (!response.ok) throw new AttnlabError('ERR_DATA', `loadNames: cannot load ${url} (HTTP ${response.status})`);
  return response.text();
}

const lists = new Map(); // url -> Promise<string>

/** The names list's text ("anna\nbob\n..."), loaded on first use. */
export function loadNames(url = NAMES_URL) {
  const key = String(url);
  if (!lists.has(key)) {
    const promise = fetchNames(url);
    promise.catch(() => lists.delete(key));
    lists.set(key, promise);
  }
  return lists.get(key);
}
