// Renders the equations of web/learn.html at build time, so the page ships no
// KaTeX JavaScript and no inline styles (its CSP forbids them): each
//   <div class="math[ display]" data-tex="TeX">…</div>
// gets KaTeX's MathML for its TeX (Chromium, Firefox and Safari draw MathML
// natively; screen readers read it). The file is rewritten in place; `--check`
// only reports whether it is current (exit 1 if not).
//   node scripts/render-math.mjs [--check] [file]
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import katex from 'katex';

const ENTITIES = { '&amp;': '&', '&quot;': '"', '&lt;': '<', '&gt;': '>', '&#39;': "'" };
const unescape = (s) => s.replace(/&(amp|quot|lt|gt|#39);/g, (m) => ENTITIES[m]);
const BLOCK = /(<div class="math( display)?" data-tex="([^"]*)">)[\s\S]*?(<\/div>)/g;

/** The page's HTML with every math block rendered. */
export function renderMath(html) {
  return html.replace(BLOCK, (_, open, display, tex, close) => {
    const mathml = katex.renderToString(unescape(tex), { output: 'mathml', displayMode: Boolean(display), throwOnError: true });
    return `${open}${mathml}${close}`;
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const check = args.includes('--check');
  const file = args.find((a) => !a.startsWith('--')) ?? fileURLToPath(new URL('../web/learn.html', import.meta.url));
  const html = await readFile(file, 'utf8');
  const out = renderMath(html);
  if (check) {
    if (out !== html) {
      console.error(`attnlab: ${file} has equations that are not rendered; run node scripts/render-math.mjs`);
      process.exit(1);
    }
  } else if (out !== html) {
    await writeFile(file, out);
  }
}
