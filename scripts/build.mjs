// Produces dist/: the static site, ready for any static host under any sub-path
// (every URL in it is relative; no server logic, no CDN).
//   node scripts/build.mjs [--out dist]
// Needs the WASM builds (make -s wasm; `npm run build` does both). Regenerates
// web/vendor/ (KaTeX, d3 colour ramps) first, then copies web/ as it is served.
import { execFileSync } from 'node:child_process';
import { cp, rm, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const args = process.argv.slice(2);
const out = resolve(args.includes('--out') ? args[args.indexOf('--out') + 1] : `${root}dist`);

for (const wasm of ['attnlab-simd.wasm', 'attnlab-scalar.wasm']) {
  if (!(await stat(`${root}web/wasm/${wasm}`).catch(() => null))) {
    console.error(`attnlab: web/wasm/${wasm} is missing; run \`make -s wasm\` (or \`npm run build\`) first`);
    process.exit(1);
  }
}
execFileSync(process.execPath, [`${root}scripts/vendor.mjs`], { stdio: 'inherit' });
execFileSync(process.execPath, [`${root}scripts/render-math.mjs`], { stdio: 'inherit' }); // learn.html's equations as MathML
await rm(out, { recursive: true, force: true });
await cp(`${root}web`, out, { recursive: true });
console.log(`attnlab: built the site into ${out} (serve it from any static host, under any path)`);
