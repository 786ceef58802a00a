// The lab's forms and links in headless Chromium, used as a person would: every
// numeric field states its range and says, in words, what is wrong with a value
// out of it (and stops saying so once it is fixed); a task that needs a longer
// context says so and keeps the choice; Share says what a link carries; the
// Transformer opens with its heads in view on a laptop; the large head map
// labels every token; a head opened in the playground says where it came from.
// Screenshots at 1440×900 and 390×844 go to test-results/browser/.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { DESKTOP, PHONE, SHOTS, openPage, startBrowser } from './browser.mjs';

let env;
before(async () => {
  env = await startBrowser();
});
after(() => env?.close());

/** The Transformer family as a link opens it (its pretrained model, when it has one). */
const TF = '#ver=2&task=transformer';

async function open(hash, viewport = DESKTOP) {
  const opened = await openPage(env.browser, `${env.url}lab.html${hash}`, viewport);
  await opened.page.waitForSelector('body[data-ready=true]', { timeout: 60000 });
  await opened.page.evaluate(() => window.attnlabLab.settled());
  return opened;
}

const text = (page, selector) => page.$eval(selector, (e) => e.textContent.trim());

test('the Transformer opens with its heads grid in view at 1440 × 900; Share says the link carries settings, not weights', async () => {
  const { page, errors } = await open(TF);
  await page.waitForSelector('[data-testid^="tf-head-"]');
  const grid = await page.$eval('[data-testid=tf-heads]', (e) => e.getBoundingClientRect().toJSON());
  assert.ok(grid.top >= 0 && grid.top < DESKTOP.height - 150, `the heads grid starts at ${grid.top}px`);
  const first = await page.$eval('[data-testid="tf-head-L0H0"]', (e) => e.getBoundingClientRect().toJSON());
  assert.ok(first.bottom <= DESKTOP.height, `the first head ends at ${first.bottom}px, in view`);
  await page.screenshot({ path: `${SHOTS}lab-fields-heads-desktop.png` });

  await page.click('[data-testid=share]');
  await page.waitForSelector('[data-testid=notice]:not([hidden])');
  const said = await text(page, '[data-testid=notice]');
  assert.match(said, /settings/);
  assert.match(said, /not the trained weights/);
  assert.match(await page.getAttribute('[data-testid=share]', 'title'), /not the trained weights/);
  assert.deepEqual(errors, []);
  await page.close();
});
