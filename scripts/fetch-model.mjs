// npm run fetch-model -- <owner/name> [--revision R] [--hub URL] [--out DIR]
// A course's own copy of a checkpoint: config.json, tokenizer.json (where the
// repo has one) and model.safetensors fetched from the hub as engine.openModel
// fetches them (sizes and SHA-256 checked, dropped connections resumed), written
// to DIR/<owner/name>/resolve/<revision>/ (default DIR: dist/models), the layout
// of the hub's resolve URLs, so a page opens them from its own origin with
// openModel(repo, { hub: './models' }); hashes.json beside them lists each
// file's size and SHA-256. A file is written under a temporary name and renamed
// once it is whole and checked: an interrupted run leaves no file that looks done.
import { createWriteStream } from 'node:fs';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_HUB, DEFAULT_REVISION, fetchFiles } from '../web/engine/hub.js';

export const USAGE = `Usage: npm run fetch-model -- <owner/name> [--revision R] [--hub URL] [--out DIR]

Fetches a checkpoint's config.json, tokenizer.json (when the repo has one) and
model.safetensors into DIR/<owner/name>/resolve/<revision>/ (DIR: dist/models),
where a page of this site opens them with openModel(repo, { hub: './models' }).

  --revision R   a branch, tag or commit (default: ${DEFAULT_REVISION}; Pythia's step1000 ... step143000)
  --hub URL      the hub to fetch from (default: ${DEFAULT_HUB})
  --out DIR      where to write (default: dist/models of this repository)
`;

const here = fileURLToPath(new URL('.', import.meta.url));

/** { repo, revision, hub, out } from the command line, or { error }. */
export function parseArgs(argv) {
  const a = { repo: null, revision: DEFAULT_REVISION, hub: DEFAULT_HUB, out: resolve(here, '..', 'dist', 'models'), help: false };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    if (flag === '--help' || flag === '-h') a.help = true;
    else if (flag === '--revision' || flag === '--hub' || flag === '--out') {
      const value = argv[++i];
      if (value === undefined) return { error: `${flag} needs a value` };
      a[flag.slice(2)] = flag === '--out' ? resolve(value) : value;
    } else if (!flag.startsWith('-') && a.repo === null) a.repo = flag;
    else return { error: `unknown argument ${flag}` };
  }
  if (!a.help && a.repo === null) return { error: 'which repo? (owner/name, e.g. openai-community/gpt2)' };
  return a;
}

/** Fetches repo into out; → { dir, files } (files as fetchFiles gives them). */
export async function fetchModel({ repo, revision = DEFAULT_REVISION, hub = DEFAULT_HUB, out, onProgress }) {
  const dir = join(out, ...repo.split('/'), 'resolve', revision);
  await mkdir(dir, { recursive: true });
  const written = [];
  try {
    const files = await fetchFiles(repo, { hub, revision, onProgress }, (file) => {
      const part = join(dir, `${file}.part`);
      const stream = createWriteStream(part);
      written.push(part);
      return {
        take: (piece) => new Promise((ok, fail) => stream.write(piece, (err) => (err ? fail(err) : ok()))),
        done: () => new Promise((ok, fail) => stream.end((err) => (err ? fail(err) : ok()))).then(() => rename(part, join(dir, file))),
      };
    });
    await writeFile(join(dir, 'hashes.json'), `${JSON.stringify(files, null, 2)}\n`);
    return { dir, files };
  } finally {
    for (const part of written) await rm(part, { force: true });
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = parseArgs(process.argv.slice(2));
  if (args.error) {
    process.stderr.write(`fetch-model: ${args.error}\n\n${USAGE}`);
    process.exit(2);
  }
  if (args.help) {
    process.stdout.write(USAGE);
    process.exit(0);
  }
  let shown = 0;
  fetchModel({
    ...args,
    onProgress: ({ file, loaded, total }) => {
      const now = Date.now();
      if (now - shown < 1000 && loaded !== total) return;
      shown = now;
      process.stdout.write(`${file}: ${(loaded / 1e6).toFixed(1)}${total ? ` of ${(total / 1e6).toFixed(1)}` : ''} MB\n`);
    },
  }).then(({ dir, files }) => {
    for (const [file, f] of Object.entries(files)) process.stdout.write(`${file}: ${f ? `${f.size} bytes, sha256 ${f.sha256}` : 'none in this repo'}\n`);
    process.stdout.write(`fetch-model: written to ${dir}; a page opens it with openModel('${args.repo}', { hub: './models'${args.revision === DEFAULT_REVISION ? '' : `, revision: '${args.revision}'`} })\n`);
  }, (err) => {
    process.stderr.write(`fetch-model: ${err.message}\n`);
    process.exit(1);
  });
}
