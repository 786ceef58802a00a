// Two origins for the embedding tests and bench: the built site (dist/) served on one port,
// the example course page's server (the same folder, under the course page's policy) on
// another, a third that sends no headers of its own (a static host), and a bare host page on
// the second origin whose script embeds one widget with attnlab/embed and records every
// message it lets through (written into the served folder's __host/):
//   const env = await startEmbedHosts()          builds dist/ into a temporary folder first
//   const host = await openHost(env, widget, { state, origin, viewport })
//   host.page, host.frame (the widget's frame), host.messages() (what onMessage got),
//   host.waitFor(type, test?) (the first message of that type passing test), host.widgetErrors
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { CSP, courseHeaders, serve } from '../../scripts/serve.mjs';
import { ROOT, ensureVendor, findChrome } from './browser.mjs';

const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'];

/** dist/ built afresh, served on one port; the course page's server on another; a Chromium. */
export async function startEmbedHosts({ root = null } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'attnlab-embed-'));
  if (!root) {
    ensureVendor();
    root = join(dir, 'dist');
    execFileSync(process.execPath, [`${ROOT}scripts/build.mjs`, '--out', root], { stdio: 'pipe' });
  }
  // the course origin's folder: the course page and attnlab/embed as the site ships them, and the bare host page
  const courseRoot = join(dir, 'course');
  for (const sub of ['embed', 'examples']) cpSync(join(root, sub), join(courseRoot, sub), { recursive: true });
  mkdirSync(join(courseRoot, '__host'), { recursive: true });
  writeFileSync(join(courseRoot, '__host/host.html'), HOST_HTML);
  writeFileSync(join(courseRoot, '__host/host.js'), HOST_JS);
  const attnlab = await serve({ root, port: 0 });
  const origin = new URL(attnlab.url).origin;
  // a static host that sends no header of its own (no frame-ancestors, no isolation)
  const plain = await serve({ root, port: 0, headers: { 'Content-Security-Policy': CSP } });
  const frames = `${origin} ${new URL(plain.url).origin}`;
  const course = await serve({ root: courseRoot, port: 0, headers: courseHeaders(frames) });
  // a host page that is cross-origin isolated itself, and so may pass isolation on to its frames
  const isolated = await serve({ root: courseRoot, port: 0, headers: courseHeaders(frames, { isolated: true }) });
  const browser = await chromium.launch({ executablePath: findChrome(), args: FLAGS });
  return {
    root,
    attnlab: attnlab.url,
    plain: plain.url,
    course: course.url,
    isolated: isolated.url,
    browser,
    async close() {
      await browser.close();
      await Promise.all([attnlab, course, isolated, plain].map(({ server }) => new Promise((ok) => server.close(ok))));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The bare host page: embeds the widget its query names with attnlab/embed and records what onMessage gets. */
const HOST_HTML = '<!doctype html><html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>host</title>'
  + '<script type="module" src="host.js"></script></head><body><main id="spot"></main></body></html>';
const HOST_JS = `import { embed } from '../embed/embed.js';
const q = new URLSearchParams(location.search);
window.received = [];
window.widget = embed(document.getElementById('spot'), {
  widget: q.get('widget'), base: q.get('base'), state: q.get('state') ?? '', lti: q.has('lti'),
  origin: q.has('origin') ? (q.get('origin') || null) : location.origin,
  onMessage: (m) => window.received.push(m),
});
window.widget.iframe.loading = 'eager';
`;

/**
 * A bare page on the course origin that embeds `widget` from `base` (default: the built site's
 * server) with attnlab/embed from that origin's copy; origin: what it asks the widget to talk
 * to (default: its own origin; '' for none); isolated: the host page is cross-origin isolated.
 */
export async function openHost(env, widget, { state = '', origin, base = env.attnlab, viewport = { width: 1000, height: 900 }, lti = false, isolated = false } = {}) {
  const page = await env.browser.newPage({ viewport });
  page.setDefaultTimeout(60000);
  const widgetErrors = [];
  const warnings = [];
  page.on('console', (msg) => {
    if (msg.type() === 'error') widgetErrors.push(msg.text());
    if (msg.type() === 'warning' && msg.text().startsWith('attnlab')) warnings.push(msg.text());
  });
  page.on('pageerror', (err) => widgetErrors.push(String(err)));
  if (process.env.EMBED_DEBUG) page.on('console', (msg) => console.log('console', msg.type(), msg.text().slice(0, 300)));
  const q = new URLSearchParams({ widget, base, state });
  if (origin !== undefined) q.set('origin', origin);
  if (lti) q.set('lti', '');
  await page.goto(`${isolated ? env.isolated : env.course}__host/host.html?${q}`);
  await page.waitForFunction(() => document.querySelector('iframe')?.contentWindow);
  return {
    page,
    frame: await (await page.$('iframe')).contentFrame(),
    warnings,
    widgetErrors,
    messages: () => page.evaluate(() => window.received),
    waitFor: async (type, test = () => true, timeout = 60000) => {
      const t0 = Date.now();
      for (;;) {
        const found = (await page.evaluate(() => window.received)).find((m) => (m.type ?? m.subject) === type && test(m));
        if (found) return found;
        if (Date.now() - t0 > timeout) throw new Error(`no ${type} message within ${timeout} ms`);
        await new Promise((ok) => setTimeout(ok, 50));
      }
    },
  };
}
