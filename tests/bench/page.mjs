// npm run bench:page — edit-to-paint time of the playground in headless Chromium
// at 64 tokens x 64 dims (the "long sequence" preset): each sample edits one
// embedding value at the start of a frame (inside requestAnimationFrame), the
// page recomputes through the WASM engine and redraws every heatmap
// synchronously, and the clock stops in a task queued behind that frame's
// rendering update (style, layout, paint). Prints median and p95; the budget is
// one 16 ms frame.
import { openPlayground, startBrowser } from '../browser/browser.mjs';

const SAMPLES = Number(process.env.SAMPLES || 300);
const WARMUP = 30;

const env = await startBrowser();
try {
  const { page, errors } = await openPlayground(env.browser, env.url, { width: 1440, height: 900 });
  await page.selectOption('#preset', 'long');
  if (process.env.CSS) await page.addStyleTag({ content: process.env.CSS });
  const r = await page.evaluate(async ({ samples, warmup }) => {
    const canvas = document.querySelector('[data-testid="heatmap-weights"]');
    const input = document.querySelector('[data-testid="grid-x"] input[data-i="5"][data-j="7"]');
    const ctx = canvas.getContext('2d');
    const pixel = () => ctx.getImageData(5, 5, 1, 1).data.join();
    const paint = [];
    const work = [];
    let changed = 0;
    for (let k = 0; k < samples + warmup; k++) {
      const before = k % 10 === 0 ? pixel() : null;
      const [p, w] = await new Promise((ok) => requestAnimationFrame(() => {
        const t0 = performance.now();
        input.value = String(((k % 21) - 10) / 4);
        input.dispatchEvent(new Event('input', { bubbles: true }));
        const t1 = performance.now();
        const ch = new MessageChannel();
        ch.port1.onmessage = () => ok([performance.now() - t0, t1 - t0]);
        ch.port2.postMessage(0);
      }));
      if (before !== null && pixel() !== before) changed++;
      if (k >= warmup) { paint.push(p); work.push(w); }
    }
    return { paint, work, changed, cells: canvas.width * canvas.height };
  }, { samples: SAMPLES, warmup: WARMUP });
  const q = (xs, f) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor(f * s.length))]; };
  const fmt = (v) => `${v.toFixed(2)} ms`;
  const simd = await page.locator('[data-testid="status"]').textContent();
  console.log(`attnlab bench:page — 64 tokens x 64 dims (${r.cells} weight cells), ${SAMPLES} edits, ${simd}, Chromium headless`);
  console.log(`  edit -> repainted heatmaps: median ${fmt(q(r.paint, 0.5))}, p95 ${fmt(q(r.paint, 0.95))}, max ${fmt(Math.max(...r.paint))}`);
  console.log(`  of which compute + redraw (JS): median ${fmt(q(r.work, 0.5))}, p95 ${fmt(q(r.work, 0.95))}`);
  console.log(`  budget: one frame (16 ms): ${q(r.paint, 0.95) < 16 ? 'met' : 'NOT met'} at p95`);
  if (errors.length) throw new Error(`page errors: ${errors.join('; ')}`);
  if (r.changed === 0) throw new Error('the heatmap never changed: the benchmark measured nothing');
  await page.close();
} finally {
  await env.close();
}
