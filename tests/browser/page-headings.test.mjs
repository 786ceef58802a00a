// What a page says of itself (issue 41's cosmetic list): the lab has its <h1>;
// Learn's title, description and intro name all ten chapters' ground (the
// transformer trained here, GPT-2 and Pythia); Learn's header gives the reason
// it runs on one thread where the other pages say two.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { PHONE, SHOTS, openLab, openPage, startBrowser } from './browser.mjs';

let env;
before(async () => {
  env = await startBrowser();
});
after(() => env?.close());

test('the lab has one <h1>; Learn names its later chapters and says why it takes one thread', async () => {
  const { page: lab } = await openLab(env, '#ver=2&task=reverse');
  assert.deepEqual(await lab.$$eval('h1', (hs) => hs.map((h) => h.textContent)), ['Training lab: watch attention learn']);
  await lab.close();
  const { page, errors } = await openPage(env.browser, `${env.url}learn.html`);
  await page.waitForFunction(() => /engine, 1 thread/.test(document.querySelector('[data-testid=status]')?.textContent ?? ''));
  assert.match(await page.title(), /a transformer and GPT-2/);
  assert.match(await page.$eval('meta[name=description]', (m) => m.content), /induction heads form.*GPT-2 and Pythia/);
  assert.match(await page.$eval('.intro p', (p) => p.textContent.replace(/\s+/g, ' ')), /a transformer trained here whose induction heads form as you watch, and inside a real language model \(GPT-2 or Pythia\)/);
  assert.match(await page.$eval('[data-testid=status]', (s) => s.textContent), /engine, 1 thread, by choice: the figures are small calls \(a training widget takes more\)/);
  await page.screenshot({ path: `${SHOTS}learn-header-desktop.png` });
  await page.setViewportSize(PHONE);
  await page.screenshot({ path: `${SHOTS}learn-header-phone.png` });
  assert.deepEqual(errors, []);
  await page.close();
});
