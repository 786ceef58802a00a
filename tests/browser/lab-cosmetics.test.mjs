// The Transformer lab as it opens (the pretrained induction model), at 1440 × 900 and
// 390 × 844, one page load each: the logit lens shows its scored positions without a
// sideways scroll (the whole table on a laptop; on a phone it opens scrolled to them,
// after the sticky row names); the Input box is as wide as the model's context in
// characters, inside its card; the "formed" label of each chart covers no curve.
// Screenshots of the lens, the heads card and the charts at both sizes.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { DESKTOP, PHONE, SHOTS, openLab, startBrowser } from './browser.mjs';

let env;
before(async () => { env = await startBrowser(); });
after(() => env?.close());

const CHARTS = ['loss-chart', 'acc-chart', 'tf-prev-chart', 'tf-ind-chart'];

/** Everything the checks need, read from the page as it is drawn. */
function measure(charts) {
  const box = (el) => el.getBoundingClientRect();
  const lens = document.querySelector('[data-testid=tf-lens]');
  const names = box(lens.querySelector('th[scope=row]'));
  const scored = [...lens.querySelectorAll('thead th.scored')].map(box);
  const input = document.querySelector('[data-testid=tf-input]');
  // each mark label's box and whether a curve of its chart passes through it
  const labels = charts.map((id) => {
    const svg = document.querySelector(`[data-testid=${id}] svg`);
    return [...svg.querySelectorAll('.mark-label')].map((t) => {
      const b = t.getBBox();
      const hits = [...svg.querySelectorAll('path.series')].filter((path) => {
        const pts = [...path.getAttribute('d').matchAll(/[ML](-?[\d.]+),(-?[\d.]+)/g)].map((m) => [Number(m[1]), Number(m[2])]);
        for (let i = 1; i < pts.length; i++) {
          // the segment sampled finely: any sample inside the label's box is a hit
          for (let k = 0; k <= 20; k++) {
            const x = pts[i - 1][0] + ((pts[i][0] - pts[i - 1][0]) * k) / 20;
            const y = pts[i - 1][1] + ((pts[i][1] - pts[i - 1][1]) * k) / 20;
            if (x >= b.x && x <= b.x + b.width && y >= b.y && y <= b.y + b.height) return true;
          }
        }
        return false;
      }).map((p) => p.dataset.name);
      return { chart: id, text: t.textContent, hits, inside: b.x >= 0 && b.x + b.width <= svg.viewBox.baseVal.width };
    });
  }).flat();
  return {
    lens: { left: box(lens).left, right: box(lens).left + lens.clientWidth, names: names.right, scrollWidth: lens.scrollWidth, clientWidth: lens.clientWidth },
    scored,
    input: { width: input.clientWidth, scrollWidth: input.scrollWidth, length: input.value.length, context: window.attnlabLab.state.tfContext, card: box(input.closest('.card')).right, right: box(input).right },
    labels,
  };
}

test('the lab\'s lens shows its scored positions, the Input fits the context, the "formed" labels cover no curve: laptop and phone', async () => {
  for (const [size, viewport] of [['desktop', DESKTOP], ['phone', PHONE]]) {
    const { page, errors } = await openLab(env, '#ver=2&task=transformer', viewport);
    await page.waitForSelector('[data-testid=tf-lens-table] th.scored');
    const m = await page.evaluate(measure, CHARTS);
    // 1. the scored columns in the lens's visible part, right of the row names (which stick), with no scrolling by the reader
    assert.ok(m.scored.length >= 8, `${size}: scored positions ${m.scored.length}`);
    for (const s of m.scored) assert.ok(s.left >= m.lens.names - 1 && s.right <= m.lens.right + 1, `${size}: a scored column at ${s.left.toFixed(0)}–${s.right.toFixed(0)} px, the lens shows ${m.lens.names.toFixed(0)}–${m.lens.right.toFixed(0)}`);
    if (size === 'desktop') assert.ok(m.lens.scrollWidth <= m.lens.clientWidth, `desktop: the whole lens in its card (${m.lens.scrollWidth} of ${m.lens.clientWidth} px)`);
    // 2. the Input holds the model's context in characters without scrolling its text, and stays in its card
    assert.equal(m.input.length, m.input.context, `${size}: the test example fills the context`);
    assert.ok(m.input.scrollWidth <= m.input.width, `${size}: the input's ${m.input.length} characters need ${m.input.scrollWidth} px, the box is ${m.input.width}`);
    assert.ok(m.input.right <= m.input.card, `${size}: the Input inside its card`);
    // 3. each chart's "L1H1 formed" is drawn inside the chart and over no curve
    assert.equal(m.labels.length, CHARTS.length, JSON.stringify(m.labels));
    for (const l of m.labels) {
      assert.match(l.text, /^L1H\d formed$/);
      assert.deepEqual(l.hits, [], `${size}: ${l.chart}'s "${l.text}" lies over ${l.hits.join(', ')}`);
      assert.ok(l.inside, `${size}: ${l.chart}'s label inside the drawing`);
    }
    await page.locator('section[aria-labelledby=h-tf-lens]').screenshot({ path: `${SHOTS}lab-cosmetics-lens-${size}.png` });
    await page.locator('#tf-heads-card .field-row').first().screenshot({ path: `${SHOTS}lab-cosmetics-input-${size}.png` });
    await page.locator('section[aria-labelledby=h-progress]').screenshot({ path: `${SHOTS}lab-cosmetics-progress-${size}.png` });
    await page.locator('#tf-scores-card').screenshot({ path: `${SHOTS}lab-cosmetics-scores-${size}.png` });
    assert.deepEqual(errors, []);
    await page.close();
  }
});
