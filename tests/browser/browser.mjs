// Shared set-up for browser tests: the static server in-process and Debian's
// Chromium driven by playwright-core (never a downloaded browser).
import { mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { serve } from '../../scripts/serve.mjs';

export const SHOTS = fileURLToPath(new URL('../../test-results/browser/', import.meta.url));
const EXECUTABLE = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const FLAGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
  '--disable-component-update', '--no-first-run', '--disable-sync', '--disable-quic',
];

/** Starts the server and the browser; returns { url, browser, close }. */
export async function startBrowser() {
  await mkdir(SHOTS, { recursive: true });
  const { server, url } = await serve({ port: 0 });
  const browser = await chromium.launch({ executablePath: EXECUTABLE, args: FLAGS });
  return {
    url,
    browser,
    async close() {
      await browser.close();
      await new Promise((ok) => server.close(ok));
    },
  };
}

/** A new page that records console errors and uncaught page errors. */
export async function openPage(browser, url, viewport = { width: 1280, height: 900 }) {
  const page = await browser.newPage({ viewport });
  const errors = [];
  page.on('console', (msg) => { if (msg.type() === 'error') errors.push(msg.text()); });
  page.on('pageerror', (err) => errors.push(String(err)));
  await page.goto(url);
  return { page, errors };
}
