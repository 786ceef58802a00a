// The Learn page as a newcomer reads it, at a laptop's and a phone's size: every
// equation typeset by KaTeX and inside its column, one account of Bahdanau's and
// Luong's attention that matches the product's seq2seq model, chapter 3's query
// moving alone with labels that cover nothing, chapter 4's six maps on documented
// parameters and one colour scale, chapter 5's maps side by side with W_o in the
// text, chapter 6's formats named and checked against the task, one meaning per
// symbol, and chapter 7's maps on a scale that shows them. axe-core is run in every
// state a test leaves the page in.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { DESKTOP, PHONE, ROOT, SHOTS, axeViolations, keyboardStroke, learnFigures, openPage, startBrowser } from './browser.mjs';
import { loadEngine } from '../../web/engine/index.js';
import { fixed } from '../../web/ui/format.js';
import { exampleParams, paramsText, SCORE_LIST } from '../../web/learn/ch4-scores.js';
import { FORMATS, OUTSIDE } from '../../web/learn/ch6-dates.js';
import { TOKENS, X } from '../../web/learn/tutorial.js';

let env;
let engine;
let manifest;
const pages = {};
before(async () => {
  env = await startBrowser();
  engine = await loadEngine();
  manifest = JSON.parse(await readFile(`${ROOT}web/models/models.json`, 'utf8'));
});
after(async () => {
  for (const p of Object.values(pages)) await (await p).page.close();
  await env?.close();
});

/** The page at `size` (opened once per size and shared: each test works on its own chapters). */
function learn(size) {
  pages[size] ??= (async () => {
    const opened = await openPage(env.browser, `${env.url}learn.html`, size === 'phone' ? PHONE : DESKTOP);
    await opened.page.waitForSelector('body[data-ready="true"]', { timeout: 60000 });
    await opened.page.evaluate(() => localStorage.clear());
    return opened;
  })();
  return pages[size];
}
const text = (page, sel) => page.$eval(sel, (e) => e.textContent.replace(/\s+/g, ' ').trim());
const texOf = (page, chapter) => page.$$eval(`#ch-${chapter} .math[data-tex]`, (els) => els.map((e) => e.dataset.tex));

/** No serious or critical axe-core violation in `chapter` (and the page around it) as a test left it. */
async function cleanAxe(page, state, chapter) {
  assert.deepEqual(await axeViolations(page, { chapters: [chapter] }), [], `axe-core: ${state}`);
}

test('every equation is typeset by KaTeX and fits its column on a phone and a laptop', async () => {
  for (const size of ['phone', 'laptop']) {
    const { page, errors } = await learn(size);
    const report = await page.$$eval('.math[data-tex]', (blocks) => blocks.map((b) => ({
      tex: b.dataset.tex.slice(0, 40),
      katex: b.querySelectorAll('.katex-html').length,
      mathml: b.querySelectorAll('.katex-mathml math').length,
      font: getComputedStyle(b.querySelector('.katex') ?? b).fontFamily,
      over: Array.from(b.querySelectorAll('.katex-display'), (d) => d.scrollWidth - d.clientWidth),
      outside: Array.from(b.querySelectorAll('.katex'), (k) => Math.round(k.getBoundingClientRect().right - b.closest('.chapter').getBoundingClientRect().right)),
      scrolls: b.scrollWidth - b.clientWidth,
    })));
    assert.ok(report.length >= 20, `${report.length} equations`);
    for (const r of report) {
      assert.ok(r.katex >= 1, `${size}: ${r.tex} is drawn by KaTeX`);
      assert.equal(r.mathml, r.katex, `${size}: ${r.tex} keeps its MathML for screen readers`);
      assert.match(r.font, /KaTeX_Main/, `${size}: ${r.tex} uses KaTeX's fonts`);
      assert.ok(r.over.every((o) => o <= 0), `${size}: ${r.tex} overflows its display by ${r.over}`);
      assert.ok(r.outside.every((o) => o <= 0), `${size}: ${r.tex} sticks out of its chapter by ${r.outside}`);
      assert.ok(r.scrolls <= 0, `${size}: ${r.tex} scrolls sideways by ${r.scrolls}px`);
    }
    // a phone wraps the parts of a long display onto lines of their own
    if (size === 'phone') {
      const attention = await page.$eval('#ch-self .math.display', (b) => Array.from(b.querySelectorAll('.katex-display'), (d) => d.getBoundingClientRect().top));
      assert.ok(attention.length >= 2 && attention[attention.length - 1] > attention[0], 'Attention(Q, K, V) sits on a line of its own');
    }
    assert.deepEqual(errors, []);
    // the whole page as loaded, at both sizes, is audited by tests/browser/learn.test.mjs
  }
});

test('chapters 1, 4 and 6 tell one story of Bahdanau and Luong, the one the seq2seq model follows', async () => {
  const { page } = await learn('laptop');
  const ch1 = await texOf(page, 'bottleneck');
  const bahdanau = ch1.find((t) => /\\tanh/.test(t));
  assert.ok(bahdanau, 'chapter 1 writes out Bahdanau’s additive score');
  assert.match(bahdanau, /s\}_\{t-1\}/, 'it scores the previous decoder state');
  assert.match(bahdanau, /\\mathbf\{c\}_t\)/, 'and feeds the context into the recurrent update');
  const prose = await text(page, '#ch-bottleneck');
  assert.match(prose, /Luong, Pham and Manning simplified it: .*dot product/);
  assert.doesNotMatch(prose, /runs out of room/);
  assert.match(prose, /learns long strings far more slowly/);
  // the figures it rests on: the training budget and the thin short lengths, from the models
  const steps = manifest.models['reverse-bottleneck'].steps;
  assert.equal(manifest.models['reverse-attention'].steps, steps);
  assert.equal(await text(page, '[data-num="ch1.steps"]'), steps.toLocaleString('en'));
  const sparse = await text(page, '[data-num="ch1.sparse"]');
  const minLength = manifest.models['reverse-attention'].options.minLength;
  assert.match(sparse, new RegExp(`strings of ${minLength} digits are draws among at most ${10 ** minLength} possible strings`));
  assert.match(await text(page, '#h-scores ~ .score-grid [data-score=additive] h3'), /Bahdanau/);
  assert.match(await text(page, '#ch-scores'), /Bahdanau's original is a small neural network/);
  assert.match(await text(page, '#ch-dates'), /built as chapter 1's are \(Luong's kind, with the dot score\)/);
  assert.equal(manifest.models.dates.options.attention, 'dot');
  assert.equal(manifest.models['reverse-attention'].options.attention, 'dot');
});

test('chapter 3: the query moves alone, its labels cover nothing, and the vectors’ source is cited', async () => {
  const { page } = await learn('laptop');
  const plot = page.locator('[data-testid=ch3-plot]');
  /** Every label box and marker box of the plot, and the plot's own box. */
  const boxes = () => plot.evaluate((svgEl) => {
    const r = (e) => { const b = e.getBoundingClientRect(); return { left: b.left, right: b.right, top: b.top, bottom: b.bottom }; };
    return {
      plot: r(svgEl),
      labels: Array.from(svgEl.querySelectorAll('.pt text'), (t) => ({ text: t.textContent, ...r(t) })),
      marks: Array.from(svgEl.querySelectorAll('.pt'), (g) => ({ text: g.lastChild.textContent, ...r(g.firstChild) })),
    };
  });
  const overlap = (a, b) => Math.min(a.right, b.right) - Math.max(a.left, b.left) > 1 && Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > 1;
  const checkLabels = async (where) => {
    const { plot: p, labels, marks } = await boxes();
    for (const l of labels) {
      assert.ok(l.left >= p.left && l.right <= p.right && l.top >= p.top && l.bottom <= p.bottom, `${where}: “${l.text}” is inside the plot`);
      for (const o of labels) if (o !== l) assert.ok(!overlap(l, o), `${where}: “${l.text}” overlaps “${o.text}”`);
      for (const m of marks) if (m.text !== l.text) assert.ok(!overlap(l, m), `${where}: “${l.text}” covers the point of “${m.text}”`);
    }
  };
  await checkLabels('as loaded');
  const journeyKey = () => page.$eval('[data-testid=ch3-plot] .pt.key:nth-of-type(2)', (g) => g.getAttribute('transform'));
  const before = await journeyKey();
  await plot.focus();
  for (let k = 0; k < 40 && (await plot.getAttribute('data-best')) !== 'with'; k++) await page.keyboard.press('ArrowLeft');
  assert.equal(await plot.getAttribute('data-best'), 'with', 'moving the query left makes “with” win');
  assert.equal(await journeyKey(), before, 'journey’s key stays where it is');
  const q = (await text(page, '[data-testid=ch3-position]')).match(/q = \(([^)]*)\)/)[1].split(', ').map((t) => Number(t.replace('−', '-')));
  const r = engine.attend({ queries: [q], keys: X });
  const shown = await page.$$eval('[data-testid=ch3-table] tbody tr', (rows) => rows.map((row) => row.querySelectorAll('td')[1].textContent));
  assert.deepEqual(shown, Array.from(r.weights.data, (v) => fixed(v, 4)), 'the weights are the moved query’s against the tutorial’s keys');
  await checkLabels('after the move');
  // towards "with", where the context's label used to land on it
  for (let k = 0; k < 6; k++) await page.keyboard.press('ArrowUp');
  await checkLabels('near “with”');
  // the source of the numbers
  const note = await text(page, '#src-vectors');
  assert.match(note, /“journey” is \(0\.22, 0\.58, 0\.33\); in Raschka's book it is \(0\.55, 0\.87, 0\.66\)/);
  assert.deepEqual(X[1], [0.22, 0.58, 0.33]);
  assert.equal(await page.getAttribute('#ch-dot a[href="#src-vectors"]', 'id'), 'ref-vectors');
  await cleanAxe(page, 'chapter 3 after moving the query', 'average');
});

test('chapter 4: six maps from documented parameters, on one colour scale', async () => {
  const { page } = await learn('laptop');
  const p = exampleParams();
  assert.equal(await text(page, '[data-testid=ch4-params]'), paramsText(p));
  let top = 0;
  for (const s of SCORE_LIST) {
    const r = engine.attend({ queries: X, keys: X, score: s.id, params: s.params(p) });
    top = Math.max(top, ...r.weights.data);
  }
  assert.ok(Math.abs(Number(await page.getAttribute('#ch-scores', 'data-scale-max')) - top) < 1e-6);
  const legends = await page.$$eval('#ch-scores .score-card', (cards) => cards.map((c) => Array.from(c.querySelectorAll('.legend-ticks span'), (t) => t.textContent).join(' ')));
  assert.equal(legends.length, 6);
  assert.ok(legends[0].length > 0, 'the legends have ticks');
  assert.equal(new Set(legends).size, 1, `one scale for all six: ${legends.join(' | ')}`);
  // the prose's winners are those of these parameters
  const additive = engine.attend({ queries: X, keys: X, score: 'additive', params: { Wq: p.Wq, Wk: p.Wk, v: p.v } });
  const row = Array.from(additive.weights.data.subarray(6, 12));
  assert.equal(await page.evaluate(() => window.attnlabLearn.numbers['ch4.best.additive']), TOKENS[row.indexOf(Math.max(...row))]);
  // the gradient of a saturated softmax vanishes for the winner too
  assert.match(await text(page, '#ch-scores'), /every weight's gradient with respect to every score, the winner's too, is close to 0/);
});

test('chapter 4 and 5 controls: values beside their labels, maps side by side, W_o in the text', async () => {
  const { page } = await learn('laptop');
  for (const role of ['d-value', 'tau-value']) {
    const { label, value } = await page.$eval(`#ch-scores [data-role=${role}]`, (o) => {
      const l = o.closest('label');
      return { label: l.firstElementChild.getBoundingClientRect().top, value: o.getBoundingClientRect().top };
    });
    assert.ok(Math.abs(label - value) < 4, `${role} is on its label's line`);
  }
  const heads = await page.locator('[data-testid=heatmap-ch5-head-0]').boundingBox();
  const context = await page.locator('[data-testid=heatmap-ch5-context]').boundingBox();
  assert.ok(context.x > heads.x + heads.width && context.y < heads.y + heads.height, 'the context map stands beside the weights');
  const cellFont = await page.$eval('#ch-self .hm-values span', (s) => parseFloat(getComputedStyle(s).fontSize));
  assert.ok(cellFont >= 10.5, `cell numbers at ${cellFont}px`);
  const prose = await text(page, '#ch-self');
  assert.match(prose, /concatenated and mixed by one more learned projection, Wo/);
  assert.ok((await texOf(page, 'self')).some((t) => /W_o/.test(t)), 'the formula ends with W_o');
  await page.selectOption('[data-testid=ch5-heads]', '3');
  await cleanAxe(page, 'chapter 5 with three heads', 'self');
});

/** A pattern for every date written in the format that `example` (25 June 2009, a Thursday) shows. */
function formatPattern(example) {
  const word = (w) => {
    const cap = /^[A-Z]/.test(w) ? '[A-Z]' : '[a-z]';
    if (/^thursday$/i.test(w)) return `${cap}[a-z]+day`;
    if (/^june$/i.test(w)) return `${cap}[a-z]+`;
    if (/^(jun|thu)$/i.test(w)) return `${cap}[a-z]{2}`;
    return w;
  };
  return new RegExp(`^${example.split(/(\d+(?:st|nd|rd|th)?|[A-Za-z]+)/).map((t) => {
    if (/^25(st|nd|rd|th)$/.test(t)) return '\\d{1,2}(st|nd|rd|th)';
    if (t === '2009') return '\\d{4}';
    if (/^0\d$/.test(t) || t === '09') return '\\d{2}';
    if (/^\d+$/.test(t)) return '\\d{1,2}';
    if (/^[A-Za-z]+$/.test(t)) return word(t);
    return t.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  }).join('')}$`);
}

test('chapter 6 names the formats the model knows and says what happens outside them', async () => {
  const { page } = await learn('laptop');
  const dates = engine.loadSeq2Seq(new Uint8Array(await readFile(`${ROOT}web/models/${manifest.models.dates.file}`)));
  const patterns = FORMATS.map(formatPattern);
  const hits = new Array(FORMATS.length).fill(0);
  for (const split of ['train', 'test']) {
    for (const ex of dates.examples({ split, count: 1000, seed: 11 })) {
      const ks = patterns.flatMap((re, k) => (re.test(ex.input) ? [k] : []));
      assert.ok(ks.length > 0, `“${ex.input}” is written in one of the formats the page lists`);
      for (const k of ks) hits[k]++;
    }
  }
  assert.ok(hits.every((n) => n > 0), `every listed format occurs in the task: ${hits}`);
  // the menu: picking a format fills the input, and the model reads it
  const options = await page.$$eval('[data-testid=ch6-format] option', (os) => os.map((o) => o.textContent));
  assert.deepEqual(options, FORMATS);
  await page.selectOption('[data-testid=ch6-format]', "Jun 25, '09");
  assert.equal(await page.inputValue('[data-testid=ch6-input]'), "Jun 25, '09");
  assert.equal(await text(page, '[data-testid=ch6-output]'), dates.translate("Jun 25, '09").output);
  assert.match(await text(page, '[data-testid=ch6-reads]'), /the year reads “[^”]+”, the month reads “[^”]+”, the day reads “[^”]+”/);
  const prose = await text(page, '#ch-dates');
  assert.doesNotMatch(prose, /in any format/);
  for (const d of OUTSIDE) assert.ok(prose.includes(`${d} gives ${dates.translate(d).output}`), `the prose quotes what ${d} gives`);
  dates.destroy();
  await cleanAxe(page, 'chapter 6 with a format picked', 'dates');
});

test('one symbol, one meaning: h heads, H entropy, τ temperature, r_K Kendall, e scores, W_1 W_2 additive', async () => {
  const { page } = await learn('laptop');
  const all = await page.$$eval('.math[data-tex]', (els) => els.map((e) => ({ tex: e.dataset.tex, chapter: e.closest('section').id })));
  for (const { tex, chapter } of all) {
    assert.doesNotMatch(tex, /\\omega/, `${chapter}: scores are e`);
    for (const m of tex.matchAll(/(?<![a-zA-Z\\])H(?![a-zA-Z])/g)) assert.equal(tex.slice(m.index, m.index + 2), 'H(', `${chapter}: H is only the entropy H(α): ${tex}`);
    if (/\\tau/.test(tex)) assert.doesNotMatch(tex, /n_c/, `${chapter}: Kendall's coefficient is not τ`);
    if (chapter !== 'ch-self') assert.doesNotMatch(tex, /W_[qk]/, `${chapter}: W_q and W_k are the projections of chapter 5 only: ${tex}`);
  }
  assert.ok(all.some((e) => /^r_K =/.test(e.tex)), 'Kendall’s coefficient is r_K');
  const ch7 = await text(page, '#ch-kinds');
  assert.match(ch7, /pairs tied in α only \(tα\) or in S only \(tS\)/, 't_α and t_S are defined');
  assert.match(await text(page, '#ch-self'), /into h heads of width dh = d\/h/);
  assert.match(await text(page, '#ch-images'), /starts from s0, a learned vector that is the same for every image/, 'the decoder starts from a learned constant');
  assert.doesNotMatch(await text(page, '#ch-images'), /tanh\(W0 v̄/, 'not from the features\' mean');
  assert.match(await text(page, '#ch-scores'), /H\(α\) above is the entropy/);
});

test('chapter 7: α and the draws’ frequencies on one scale that shows them; r_K per character as a chart', async () => {
  const { page } = await learn('laptop');
  const legends = await page.$$eval('[data-testid=legend-ch7-alpha] .legend-title, [data-testid=legend-ch7-freq] .legend-title', (els) => els.map((e) => e.textContent));
  assert.equal(legends.length, 2);
  const top = legends.join(' ').match(/scale 0 to (\d\.\d\d)/);
  assert.ok(top, `the legends say what the scale is: ${legends.join(' | ')}`);
  // the brightest cell of the α map is bright: the scale ends at the largest value, not at 1
  const peak = await page.$eval('[data-testid=heatmap-ch7-alpha]', (c) => {
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let best = 0;
    for (let p = 0; p < d.length; p += 4) best = Math.max(best, 0.2126 * d[p] + 0.7152 * d[p + 1] + 0.0722 * d[p + 2]);
    return best;
  });
  assert.ok(peak > 120, `the α map's brightest cell has luminance ${peak}`);
  await page.fill('[data-testid=ch7-text]', 'March 3, 2001');
  const bars = await page.$$eval('[data-testid=ch7-text-bars] rect', (rs) => rs.length);
  const output = engine.loadSeq2Seq(new Uint8Array(await readFile(`${ROOT}web/models/${manifest.models.dates.file}`)));
  const c = output.compareAttention('March 3, 2001');
  assert.equal(bars, c.steps.length, 'one bar per output character');
  output.destroy();
  assert.match(await text(page, '[data-testid=ch7-text-taus]'), /^Output 2001-03-03; at \d+ of \d+ characters .* rK averages −?\d\.\d\d over the characters\.$/);
  await learnFigures(page);
  const verdict = await page.evaluate(() => window.attnlabLearn.numbers['ch7.tauVerdict']);
  const inTop = await page.evaluate(() => window.attnlabLearn.numbers['ch7.inTop']);
  const chance = 3 / 49;
  assert.equal(verdict, inTop >= 5 * chance ? 'the two maps light up the same few cells' : inTop >= 2 * chance ? 'the two maps overlap, but the saliency spreads wider than the attention' : 'the two maps light up different places');
  await cleanAxe(page, 'chapter 7 with a typed date', 'kinds');
  for (const size of ['laptop', 'phone']) {
    const opened = await learn(size);
    for (const id of ['bottleneck', 'dot', 'average', 'scores', 'self', 'dates', 'kinds', 'images']) {
      await opened.page.locator(`[data-testid="chapter-${id}"]`).screenshot({ path: `${SHOTS}learn-pass-${id}-${size}.png` });
    }
  }
});

test('chapter 8: when the drawing takes the keyboard, the caption says how, and keys draw', async (t) => {
  const { page } = await learn('laptop');
  const canvas = page.locator('[data-testid=drawing-ch8]');
  const focusable = await canvas.evaluate((c) => c.tabIndex >= 0);
  assert.equal(await page.isVisible('[data-testid=ch8-keys]'), focusable, 'the keyboard hint shows exactly when the drawing is a Tab stop');
  if (!focusable) {
    t.skip('ui/drawing.js has no keyboard drawing in this build');
    return;
  }
  await page.click('[data-testid=ch8-clutter]');
  const before = await page.getAttribute('[data-testid=ch8-reads]', 'data-share');
  await canvas.focus();
  await keyboardStroke(page);
  await page.waitForFunction((b) => document.querySelector('[data-testid=ch8-reads]').dataset.share !== b, before, { timeout: 5000 });
  await cleanAxe(page, 'chapter 8 after drawing with the keyboard', 'images');
});
