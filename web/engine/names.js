// The first names the transformer's 'names' task learns from
// (web/data/names.txt, one per line, made at build time by scripts/names.mjs
// from two npm data packages): read from disk in Node, fetched in a page,
// once per URL and only when a 'names' model is first made.
import { oncePerKey, readDataFile } from './data-file.js';

export const NAMES_URL = new URL('../data/names.txt', import.meta.url);

const readNames = oncePerKey((url) => readDataFile(url, { what: 'loadNames', script: 'names.mjs', text: true }));

/** The names list's text ("anna\nbob\n..."), loaded on first use. */
export function loadNames(url = NAMES_URL) {
  return readNames(url);
}
