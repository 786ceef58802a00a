// Puts the page's third-party code under web/vendor/ (generated, gitignored),
// so the site works offline and from any static host with no CDN:
//   web/vendor/d3.js      d3-scale-chromatic's colour ramps + d3-color, bundled to one ES module by esbuild
//   web/vendor/katex/     KaTeX's ES module (minified), stylesheet and fonts (equations rendered in the page)
// Installs the npm dev dependencies first when a fresh clone has none.
import { execSync } from 'node:child_process';
import { cp, mkdir, rm, stat } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const out = `${root}web/vendor/`;

const exists = (path) => stat(path).then(() => true, () => false);

if (!(await exists(`${root}node_modules/katex/dist/katex.mjs`)) || !(await exists(`${root}node_modules/esbuild`))) {
  console.log('attnlab: installing npm dependencies (npm install)');
  execSync('npm install --no-audit --no-fund', { cwd: root, stdio: 'inherit' });
}
const { build } = await import('esbuild');

await rm(out, { recursive: true, force: true });
await mkdir(`${out}katex`, { recursive: true });

await build({
  stdin: {
    contents: [
      "export { interpolateViridis, interpolateRdBu } from 'd3-scale-chromatic';",
      "export { rgb } from 'd3-color';",
    ].join('\n'),
    resolveDir: root,
    sourcefile: 'vendor-d3.js',
  },
  bundle: true,
  format: 'esm',
  minify: true,
  legalComments: 'inline',
  outfile: `${out}d3.js`,
  logLevel: 'warning',
});

const katex = `${root}node_modules/katex/dist/`;
await build({
  entryPoints: [`${katex}katex.mjs`], bundle: true, format: 'esm', minify: true, legalComments: 'inline',
  outfile: `${out}katex/katex.js`, logLevel: 'warning',
});
await cp(`${katex}katex.min.css`, `${out}katex/katex.min.css`);
await cp(`${katex}fonts`, `${out}katex/fonts`, { recursive: true, filter: (src) => !/\.(ttf|woff)$/.test(src) });
