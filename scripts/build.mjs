// Produces dist/: the static site, ready for any static host under any sub-path
// (every URL in it is relative; no server logic, no CDN).
//   node scripts/build.mjs [--out dist]
// Needs the WASM builds (make -s wasm; `npm run build` does both). Regenerates
// web/vendor/ (formulas rendered by KaTeX, d3 colour ramps) first, then copies web/
// and replaces each page's ES modules by one minified bundle (esbuild; code shared by
// the pages, such as the engine, goes into chunks/), and minifies the stylesheets.
// Prints each page's JavaScript and CSS bytes.
// coi.js and coi-sw.js are copied as they are (a classic script and a service worker,
// which make the pages cross-origin isolated on hosts that cannot send COOP and COEP).
import { execFileSync } from 'node:child_process';
import { cp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
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
execFileSync(process.execPath, [`${root}scripts/render-math.mjs`], { stdio: 'inherit' }); // learn.html's equations: KaTeX HTML and MathML, learn/math.css
const { build, transform } = await import('esbuild');

await rm(out, { recursive: true, force: true });
// the modules are bundled below; everything else (HTML, CSS, WASM, fonts, the engine for other users) is copied
const BUNDLED = ['ui', 'playground', 'lab', 'learn', 'worker', 'vendor/colortables.js', 'vendor/formulas.js'];
await cp(`${root}web`, out, {
  recursive: true,
  filter: (src) => {
    const rel = src.slice(`${root}web`.length + 1);
    // a vendor.mjs run beside this one (another build) may be about to rename its temporary file away
    if (/\.tmp\d+-\w+$/.test(rel)) return false;
    return !(rel.endsWith('.js') && BUNDLED.some((b) => rel === b || rel.startsWith(`${b}/`)));
  },
});

const entries = {
  'playground/main': `${root}web/playground/main.js`,
  'lab/main': `${root}web/lab/main.js`,
  'learn/main': `${root}web/learn/main.js`,
  'worker/lab-worker': `${root}web/worker/lab-worker.js`,
};
const result = await build({
  entryPoints: entries, bundle: true, format: 'esm', splitting: true, minify: true, outdir: out,
  chunkNames: 'chunks/[name]-[hash]', legalComments: 'eof', target: 'es2022', metafile: true, logLevel: 'warning',
  // the engine and worker import Node built-ins only when they run under Node
  external: ['node:*'],
});

async function minifyCss(dir) {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) await minifyCss(path);
    else if (entry.name.endsWith('.css') && !entry.name.endsWith('.min.css')) {
      const { code } = await transform(await readFile(path, 'utf8'), { loader: 'css', minify: true });
      await writeFile(path, code);
    }
  }
}
await minifyCss(out);

// Each page names its module and every chunk the module imports statically as modulepreload
// links in its head: the browser fetches them at once, not one import level after another.
const outputs = Object.fromEntries(Object.entries(result.metafile.outputs).map(([file, o]) => [resolve(file), o]));
const relative = (file) => file.slice(out.length + 1);
function staticImports(file, seen = new Set()) {
  for (const i of outputs[file]?.imports ?? []) {
    const dep = resolve(i.path);
    if (i.kind !== 'import-statement' || seen.has(dep)) continue;
    seen.add(dep);
    staticImports(dep, seen);
  }
  return seen;
}
for (const [page, entry] of [['index.html', 'playground/main.js'], ['lab.html', 'lab/main.js'], ['learn.html', 'learn/main.js']]) {
  const main = resolve(out, entry);
  const links = [main, ...staticImports(main)].map((f) => `  <link rel="modulepreload" href="${relative(f)}">`).join('\n');
  const html = await readFile(join(out, page), 'utf8');
  if (!html.includes('</head>')) throw new Error(`${page}: no </head> to put the module preloads before`);
  await writeFile(join(out, page), html.replace('</head>', `${links}\n</head>`));
}

const bytes = Object.fromEntries(Object.entries(result.metafile.outputs).map(([file, o]) => [file.replace(`${out}/`, '').replace(/^dist\//, ''), o.bytes]));
for (const [name, size] of Object.entries(bytes).sort()) console.log(`  ${name.padEnd(34)} ${(size / 1024).toFixed(1)} KiB`);
console.log(`attnlab: built the site into ${out} (serve it from any static host, under any path)`);
