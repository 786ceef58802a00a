// Issue 31: every widget embeddable in another site's page. The built site (dist/) is served
// on one origin and the host pages on another (tests/browser/embed-host.mjs). Each widget kind
// is embedded in a host that is not cross-origin isolated (as an LMS page is not): only the
// widget shows (no header), attnlab:ready and attnlab:resize arrive with its rendered height,
// the engine runs one thread, axe finds nothing serious; the first paint is printed (its
// budget is in tests/bench/page.mjs). Then the messages: attnlab:state on an edit,
// attnlab:challenge on a Learn answer, attnlab:set, hostile messages, the origin restriction;
// a hub model opened in an embedded lab, carried by its state link and chosen again from it;
// and the example course page, with screenshots at both sizes.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gpt2Checkpoint } from '../lib/gpt2-checkpoint.mjs';
import { AXE, DESKTOP, PHONE, SHOTS, fullScreenshot } from './browser.mjs';
import { openHost, startEmbedHosts } from './embed-host.mjs';

let env;
before(async () => { env = await startEmbedHosts(); });
after(async () => { await env?.close(); });

async function axeIn(frame) {
  if (!(await frame.evaluate(() => typeof window.axe === 'object'))) await frame.evaluate(AXE);
  const result = await frame.evaluate(() => window.axe.run(document, { resultTypes: ['violations'] }));
  return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).slice(0, 3).join(', ')}`);
}

/** What the frame shows: the header's and the given selectors' visibility, its height, its threads. */
const inspect = (frame, selectors) => frame.evaluate((sel) => {
  const shown = (el) => Boolean(el) && el.getClientRects().length > 0 && getComputedStyle(el).visibility !== 'hidden';
  return {
    header: shown(document.querySelector('.site-header')) || shown(document.querySelector('footer')),
    visible: Object.fromEntries(sel.map((s) => [s, shown(document.querySelector(s))])),
    height: document.body.getBoundingClientRect().height,
    drawn: document.documentElement.scrollHeight, // all the page draws, margins included
    firstPaint: Number(document.body.dataset.embedReady),
    isolated: window.crossOriginIsolated,
  };
}, selectors);

// widget, what must show, what must not
const KINDS = [
  ['playground', ['#main', '#controlbar', '[data-testid=heatmap-weights]'], ['#newcomer', '.site-header']],
  ['playground/weights', ['[data-testid=heatmap-weights]'], ['#controlbar', '#step-scores', '#embeddings']],
  ['playground/self-attention', ['#step-q', '[data-testid=heatmap-weights]'], ['#controlbar', '#embeddings', '#drag-view']],
  ['playground/positions', ['#step-positions', '[data-testid=heatmap-position-term]'], ['#controlbar', '#step-weights']],
  ['lab/seq2seq', ['#runbar', '[data-testid=loss-chart]', '#h-align'], ['#h-model', '#bottleneck', '.intro']],
  ['lab/transformer', ['#runbar', '#tf-heads-card'], ['#h-model', '#h-align']],
  ['learn/2/dot', ['[data-testid=ch2-x]', '[data-testid=challenge-dot]'], ['#ch-bottleneck', '#h-dot', '.toc']],
  ['learn/9/induction', ['[data-testid=ch9-train]', '[data-testid=challenge-transformer]', '[data-testid=embed-threads]'], ['#ch9-order', '[data-testid=ch9-positions]']],
];

for (const [widget, shows, hides] of KINDS) {
  test(`${widget}: only the widget shows; ready, resize with its height; one thread; axe${widget.startsWith('lab/') ? '; a setting sent as attnlab:state, attnlab:set reloads with a link' : ''}`, async () => {
    const host = await openHost(env, widget);
    const ready = await host.waitFor('attnlab:ready');
    assert.equal(ready.widget, widget);
    assert.match(ready.version, /^\d+\.\d+\.\d+$/);
    const seen = await inspect(host.frame, [...shows, ...hides]);
    assert.equal(seen.header, false, 'no site header or footer');
    for (const s of shows) assert.equal(seen.visible[s], true, `${s} shows`);
    for (const s of hides) assert.equal(seen.visible[s], false, `${s} is hidden`);
    assert.equal(seen.isolated, false, 'the host is not isolated, so neither is the widget');
    // the last resize message is the height the widget has now, and the frame took it
    await host.page.waitForFunction(async () => true);
    const settled = await host.waitFor('attnlab:resize', () => true);
    assert.ok(settled.height > 100, `height ${settled.height}`);
    const last = async () => (await host.messages()).filter((m) => m.type === 'attnlab:resize').at(-1).height;
    const now = async () => (await inspect(host.frame, [])).height;
    for (let k = 0; k < 40 && Math.abs((await last()) - (await now())) > 2; k++) await new Promise((ok) => setTimeout(ok, 100));
    assert.ok(Math.abs((await last()) - (await now())) <= 2, `resize ${await last()} vs rendered ${await now()}`);
    assert.equal(Number(await host.page.$eval('iframe', (f) => f.height)), await last(), 'the host sized the frame');
    const drawn = (await inspect(host.frame, [])).drawn;
    assert.ok(drawn <= (await last()) + 1, `nothing is cut off at the bottom: the page draws ${drawn} px in a frame of ${await last()}`);
    if (widget.startsWith('lab/')) {
      assert.match(await host.frame.textContent('[data-testid=embed-threads]'), /one thread.*more cores/);
      await host.frame.selectOption('#speed', '5');
      const { link } = await host.waitFor('attnlab:state');
      assert.match(link, /\/lab\.html#.*speed=5/, 'a setting changed in the lab is sent');
      // attnlab:set reloads the lab's frame with the link: a second ready, the setting in place
      await host.page.evaluate((l) => window.widget.set(l), link.replace('speed=5', 'speed=10'));
      await host.waitFor('attnlab:ready', () => true);
      await host.page.waitForFunction(() => window.received.filter((m) => m.type === 'attnlab:ready').length === 2);
      await host.frame.waitForFunction(() => window.attnlabLab?.state.speed === 10);
    }
    console.log(`# ${widget}: first paint ${seen.firstPaint} ms after navigation (one thread), height ${Math.round(seen.height)} px`);
    assert.deepEqual(await axeIn(host.frame), [], 'axe-core in the embedded widget');
    assert.deepEqual(host.widgetErrors, []);
    await host.page.close();
  });
}

test('attnlab:state on an edit; attnlab:set loads a link; hostile messages are ignored', async () => {
  const host = await openHost(env, 'playground', { state: '#ver=2&mask=none' });
  await host.waitFor('attnlab:ready');
  await host.frame.selectOption('#score', 'general');
  const state = await host.waitFor('attnlab:state');
  assert.match(state.link, /^http:\/\/127\.0\.0\.1:\d+\/index\.html#ver=2&.*score=general/);
  assert.doesNotMatch(state.link, /embed/, 'the link is the page\'s own, as Share gives it');
  const read = () => host.frame.evaluate(() => window.attnlab.state());
  // hostile: wrong shapes and types, unknown fields, a 1 MB link, HTML; posted straight into the frame
  const imgs = await host.frame.evaluate(() => document.querySelectorAll('img').length);
  await host.page.evaluate(() => {
    const w = document.querySelector('iframe').contentWindow;
    const huge = `#ver=2&mask=causal&x=${'a'.repeat(1 << 20)}`;
    for (const m of ['attnlab:set', 42, null, [1, 2], { type: 'attnlab:set' }, { type: 'attnlab:set', link: 5 },
      { type: 'attnlab:set', link: '#ver=2&mask=causal', extra: true }, { type: 'attnlab:setx', link: '#ver=2&mask=causal' },
      { type: 'attnlab:set', link: huge }, { type: 'attnlab:set', link: '<img src=x onerror="document.title=1">' },
      { type: { toString: () => 'attnlab:set' }, link: '#ver=2&mask=causal' }]) {
      try { w.postMessage(m, '*'); } catch { /* not cloneable */ }
    }
  });
  await host.page.waitForTimeout(500);
  assert.equal((await read()).mask, 'none', 'no hostile message changed the state');
  assert.equal((await read()).score, 'general');
  assert.ok(host.warnings.length >= 8, `a console note per ignored message (${host.warnings.length})`);
  assert.ok(host.warnings.every((w) => w.length < 400), 'the notes are short, whatever came in');
  assert.equal(await host.frame.evaluate(() => document.querySelectorAll('img').length), imgs, 'no element came from a message');
  // HTML inside a link's fields reaches the page only as text, through the codec
  await host.page.evaluate(() => window.widget.set('#ver=2&mask=causal&preset=<img src=x onerror=alert(1)>'));
  await host.frame.waitForFunction(() => window.attnlab.state().mask === 'causal');
  assert.equal(await host.frame.evaluate(() => document.querySelectorAll('img').length), imgs);
  // a good set after all of that still works, and draws
  const before = await host.frame.$eval('[data-testid=heatmap-weights]', (c) => c.toDataURL());
  await host.page.evaluate(() => window.widget.set('http://elsewhere.example/index.html#ver=2&mask=none&temperature=3'));
  await host.frame.waitForFunction(() => window.attnlab.state().temperature === 3);
  assert.notEqual(await host.frame.$eval('[data-testid=heatmap-weights]', (c) => c.toDataURL()), before, 'the heatmap changed');
  assert.deepEqual(host.widgetErrors, []);
  await host.page.close();
});

test('attnlab:challenge when a Learn challenge is answered (chapter 2), with attempts; &lti resizes as Canvas asks', async () => {
  const host = await openHost(env, 'learn/2/dot', { lti: true });
  await host.waitFor('attnlab:ready');
  const resize = await host.waitFor('attnlab:resize');
  assert.equal((await host.waitFor('lti.frameResize')).height, resize.height);
  assert.equal((await host.messages()).filter((m) => m.type === 'attnlab:challenge').length, 0, 'nothing before the learner answers');
  await host.frame.focus('[data-testid="ch2-x"] input.mx-cell');
  for (let k = 0; k < 2; k++) await host.page.keyboard.press('ArrowDown');
  const cell = host.frame.locator('[data-testid="ch2-x"] input[data-i="2"][data-j="0"]');
  await cell.fill('0.5');
  const first = await host.waitFor('attnlab:challenge');
  assert.deepEqual(first, { type: 'attnlab:challenge', chapter: 2, widget: 'dot', solved: false, attempts: 1 });
  await cell.fill('-1');
  const second = await host.waitFor('attnlab:challenge', (m) => m.solved);
  assert.deepEqual(second, { type: 'attnlab:challenge', chapter: 2, widget: 'dot', solved: true, attempts: 2 });
  assert.deepEqual(host.widgetErrors, []);
  await host.page.close();
});

test('nothing but a notice is laid out until the widget is known; a widget that does not exist leaves only the notice naming it', async () => {
  const page = await env.browser.newPage({ viewport: DESKTOP });
  // the page's first layout, before any module runs: the article is out of layout (no box), the notice is not
  await page.route('**/learn/main.js', (route) => route.abort());
  await page.goto(`${env.attnlab}learn.html?embed&chapter=2&widget=dot`);
  const early = await page.evaluate(() => ({
    pending: document.documentElement.classList.contains('embed-pending'),
    main: document.querySelector('main').getClientRects().length,
    chapter: document.querySelector('#ch-dot').getClientRects().length,
  }));
  assert.deepEqual(early, { pending: true, main: 0, chapter: 0 });
  await page.unroute('**/learn/main.js');
  // a widget the chapter does not have: the notice says so, and nothing of the article shows
  await page.goto(`${env.attnlab}learn.html?embed&chapter=2&widget=nope`);
  await page.waitForFunction(() => document.body.dataset.ready === 'error');
  assert.match(await page.textContent('#notice'), /chapter 2 has no widget "nope"/);
  assert.equal(await page.isVisible('#notice'), true);
  assert.equal(await page.evaluate(() => document.querySelector('main').getClientRects().length), 0);
  await page.close();
});

test('&origin= restricts both directions: another host cannot frame it, nor talk to it where framing is not stopped', async () => {
  // the server lets only the named origin frame the page: here the host is not it
  const framed = await openHost(env, 'playground/weights', { origin: 'https://course.example' });
  await framed.page.waitForTimeout(1500);
  assert.deepEqual(await framed.messages(), [], 'a frame for another origin sends this host nothing');
  await framed.page.close();
  // a static host sends no frame-ancestors: the page itself then refuses the wrong parent
  const host = await openHost(env, 'playground/weights', { origin: 'https://course.example', base: env.plain });
  const frame = host.frame;
  await frame.waitForFunction(() => document.body.dataset.embedReady !== undefined);
  await host.page.evaluate(() => window.widget.set('#ver=2&mask=causal'));
  await host.page.waitForTimeout(500);
  assert.deepEqual(await host.messages(), [], 'nothing is sent to a parent of another origin');
  assert.equal(await frame.evaluate(() => window.attnlab.state().mask), 'none', 'its attnlab:set is ignored');
  assert.ok(host.warnings.some((w) => /only https:\/\/course\.example may send/.test(w)), host.warnings.join('\n'));
  await host.page.close();
});

test("lab/transformer: a hub model opened in the frame is in its attnlab:state link, which chooses it again, opened on the reader's click; attnlab:set chooses another", async () => {
  // a course's own copy of GPT-2's card beside the site (hub=./models): a narrow GPT-2 with GPT-2's vocabulary, about 2.5 MB
  const GPT2 = { model_type: 'gpt2', n_layer: 2, n_head: 2, n_embd: 24, n_inner: 32, n_positions: 64, n_ctx: 64, vocab_size: 50257, layer_norm_epsilon: 1e-5, activation_function: 'gelu_new' };
  const folder = join(env.root, 'models/openai-community/gpt2/resolve/main');
  mkdirSync(folder, { recursive: true });
  writeFileSync(join(folder, 'config.json'), JSON.stringify(GPT2));
  writeFileSync(join(folder, 'model.safetensors'), gpt2Checkpoint({ config: GPT2, dtype: 'F16', seed: 3 }).bytes);
  const opened = (frame) => frame.waitForFunction(() => /^Opened GPT-2 small/.test(document.querySelector('[data-testid=gpt2-hub-status]').textContent), null, { timeout: 90000 });
  const host = await openHost(env, 'lab/transformer', { state: `${env.attnlab}lab.html?hub=./models#ver=2&task=transformer` });
  await host.waitFor('attnlab:ready');
  await host.frame.click('[data-testid=gpt2-card-gpt2]');
  await opened(host.frame);
  const { link } = await host.waitFor('attnlab:state', (m) => m.link.includes('repo='));
  const query = (search) => Object.fromEntries(new URLSearchParams(search));
  const sent = new URL(link);
  assert.equal(sent.pathname, '/lab.html');
  assert.match(sent.hash, /^#ver=2&.*task=transformer/);
  assert.deepEqual(query(sent.search), { hub: './models', repo: 'openai-community/gpt2' }, "the lab's link: the repo and the hub, no embed parameters");
  await host.page.close();

  // the link embedded again: the card chosen, nothing opened until the reader clicks
  const again = await openHost(env, 'lab/transformer', { state: link });
  await again.waitFor('attnlab:ready');
  const frameQuery = async () => query(await again.frame.evaluate(() => location.search));
  assert.deepEqual(await frameQuery(), { embed: '', family: 'transformer', origin: new URL(env.course).origin, hub: './models', repo: 'openai-community/gpt2' });
  assert.equal(await again.frame.getAttribute('[data-testid=gpt2-model-gpt2]', 'aria-current'), 'true');
  assert.equal(await again.frame.isVisible('#gpt2-panels'), false, 'nothing opened by the link');
  await again.frame.click('[data-testid=gpt2-card-gpt2]');
  await opened(again.frame);
  await again.frame.locator('#gpt2').screenshot({ path: `${SHOTS}embed-lab-hub-model.png` });

  // attnlab:set with another card's link: the frame reloads with Pythia-70M chosen at step 1,000, its embed parameters kept
  await again.page.evaluate((l) => window.widget.set(l), link.replace('repo=openai-community/gpt2', 'repo=EleutherAI/pythia-70m&revision=step1000'));
  await again.page.waitForFunction(() => window.received.filter((m) => m.type === 'attnlab:ready').length === 2);
  assert.deepEqual(await frameQuery(), {
    embed: '', family: 'transformer', origin: new URL(env.course).origin, hub: './models', repo: 'EleutherAI/pythia-70m', revision: 'step1000',
  });
  assert.equal(await again.frame.getAttribute('[data-testid=gpt2-model-pythia-70m]', 'aria-current'), 'true');
  assert.equal(await again.frame.textContent('[data-testid=gpt2-step-pythia-70m]'), 'step 1,000');
  // Chromium logs the copy's 404s (no tokenizer.json, and no other card's model when their sizes are asked): nothing else
  assert.deepEqual(again.widgetErrors.filter((e) => !/status of 404/.test(e)), []);
  await again.page.close();
});

test('the Embed button gives the snippet of the current state; on an isolated host that allows it, the lab trains on threads', async () => {
  const page = await env.browser.newPage({ viewport: DESKTOP });
  await page.goto(`${env.attnlab}index.html#ver=2&mask=causal`);
  await page.waitForSelector('body[data-ready="true"]');
  await page.click('.site-header .embed-button');
  const snippet = await page.inputValue('[data-testid=embed-snippet]');
  assert.match(snippet, /^<iframe src="http:\/\/127\.0\.0\.1:\d+\/index\.html\?embed#ver=2&amp;.*mask=causal.*" width="\d+" height="\d+" title="[^"]+" allow="cross-origin-isolated" loading="lazy"><\/iframe>$/);
  assert.deepEqual(await axeIn(page.mainFrame()), [], 'axe-core with the dialog open');
  await page.close();
  const host = await openHost(env, 'lab/seq2seq', { isolated: true });
  await host.waitFor('attnlab:ready');
  assert.equal(await host.frame.evaluate(() => window.crossOriginIsolated), true, 'allow="cross-origin-isolated" on an isolated host');
  const cores = await host.frame.evaluate(() => navigator.hardwareConcurrency);
  const note = await host.frame.textContent('[data-testid=embed-threads]');
  if (cores > 1) assert.match(note, /uses \d+ threads/);
  else assert.match(note, /one thread/);
  await host.page.close();
});

test('the example course page: four widgets from the other origin, the messages listed; screenshots', async () => {
  for (const [name, viewport] of [['desktop', DESKTOP], ['phone', PHONE]]) {
    const page = await env.browser.newPage({ viewport });
    const errors = [];
    page.on('pageerror', (err) => errors.push(String(err)));
    page.on('console', (msg) => { if (msg.type() === 'error') errors.push(msg.text()); });
    await page.goto(`${env.course}examples/course.html?attnlab=${encodeURIComponent(env.attnlab)}`);
    // frames out of view skip their rendering: a page as tall as its content has them all in view
    const height = await page.evaluate(() => document.documentElement.scrollHeight);
    await page.setViewportSize({ width: viewport.width, height: Math.min(height, 12000) });
    await page.waitForFunction(() => document.querySelectorAll('#log li[data-type="attnlab:ready"]').length === 4, null, { timeout: 90000 });
    for (const iframe of await page.$$('iframe')) assert.notEqual(new URL(await iframe.getAttribute('src')).origin, new URL(env.course).origin);
    await page.setViewportSize(viewport);
    await page.evaluate(AXE);
    const axe = await page.evaluate(() => window.axe.run(document, { iframes: false, resultTypes: ['violations'] }));
    assert.deepEqual(axe.violations.filter((v) => ['serious', 'critical'].includes(v.impact)).map((v) => v.id), [], `axe on the course page at ${name}`);
    await fullScreenshot(page, `${SHOTS}embed-course-${name}.png`);
    // the first screen, and the screen at the lab's frame, as a reader sees them
    await page.screenshot({ path: `${SHOTS}embed-course-${name}-top.png` });
    await page.$eval('#w-lab', (el) => el.scrollIntoView({ block: 'start' }));
    await page.waitForTimeout(300);
    await page.screenshot({ path: `${SHOTS}embed-course-${name}-lab.png` });
    assert.deepEqual(errors, []);
    await page.close();
  }
});
