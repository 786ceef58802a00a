// The lab's compact embed (?embed&family=transformer&compact): the run bar, every
// head's map and the loss chart in a frame of at most 1,200 px at 1440 × 900 and
// 390 × 844, the height the widget reports (attnlab:resize measures the same box);
// the full embed, for comparison, is several times as tall. Screenshots at both sizes.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { DESKTOP, PHONE, SHOTS, fullScreenshot, openPage, startBrowser } from './browser.mjs';

let env;
before(async () => { env = await startBrowser(); });
after(() => env?.close());

const MOST = 1200;

test('a compact lab/transformer embed fits 1,200 px on a laptop and on a phone, with the run bar, the heads and the loss', async () => {
  for (const [size, viewport] of [['desktop', DESKTOP], ['phone', PHONE]]) {
    const { page, errors } = await openPage(env.browser, `${env.url}lab.html?embed&family=transformer&compact`, viewport);
    page.setDefaultTimeout(90000);
    await page.waitForSelector('body[data-ready=true]');
    await page.waitForSelector('[data-testid^="tf-head-"]');
    await page.evaluate(() => window.attnlabLab.settled());
    const m = await page.evaluate(() => ({
      // what ui/embed.js sends as the frame's height
      height: Math.ceil(document.body.getBoundingClientRect().height),
      heads: document.querySelectorAll('[data-testid^="tf-head-"]').length,
      shown: ['runbar', 'tf-heads', 'loss-chart', 'tf-input'].filter((id) => document.querySelector(`[data-testid=${id}]`)?.checkVisibility()),
      hidden: ['tf-lens', 'tf-ind-chart', 'tf-prompt'].filter((id) => !document.querySelector(`[data-testid=${id}]`)?.checkVisibility()),
    }));
    console.log(`compact lab/transformer embed, ${size} (${viewport.width} px wide): ${m.height} px tall`);
    assert.ok(m.height <= MOST, `${size}: ${m.height} px, more than ${MOST}`);
    assert.equal(m.heads, 4, 'every head of the default model');
    assert.deepEqual(m.shown, ['runbar', 'tf-heads', 'loss-chart', 'tf-input']);
    assert.deepEqual(m.hidden, ['tf-lens', 'tf-ind-chart', 'tf-prompt'], 'the lens, the heads over training and Generate are the full embed\'s');
    await fullScreenshot(page, `${SHOTS}embed-compact-${size}.png`);
    assert.deepEqual(errors, []);
    await page.close();
  }
});
