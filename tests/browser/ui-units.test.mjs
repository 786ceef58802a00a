// The shared UI modules. Those that need no DOM, tested in Node: number formatting (no
// "−0.00"), ticks on round values, CSV fields safe from formula injection, and the
// URL-state codec (per-field fallback, unknown fields named, versioned migration),
// with the playground's own table and its version 1 links. The heatmap and the line
// charts, tested alone in Chromium on a page holding only ui/base.css: the legend
// starts where the matrix starts, the label band is at least 6ch, upright column
// labels, chart text at its CSS size on a phone, and a series of one point drawn.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { SHOTS, startBrowser } from './browser.mjs';
import { fixed, num, tick } from '../../web/ui/format.js';
import { niceDomain, niceTicks } from '../../web/ui/ticks.js';
import { csvField, csvLine } from '../../web/ui/download.js';
import { createUrlState } from '../../web/ui/url-state.js';
import { codec, defaults, fixup } from '../../web/playground/state.js';
import { allTex, formulaKey, texParts } from '../../web/playground/tex.js';
import { scaleFor } from '../../web/ui/colors.js';
import { heatmapSvg } from '../../web/ui/heatmap-export.js';
import { legendTickLabels } from '../../web/ui/ticks.js';

test('numbers: a real minus sign and never "−0.00"', () => {
  assert.equal(fixed(-0.001, 2), '0.00');
  assert.equal(fixed(-0.004, 2), '0.00');
  assert.equal(fixed(-0, 4), '0.0000');
  assert.equal(fixed(-0.005001, 2), '−0.01');
  assert.equal(fixed(-1.5, 2), '−1.50');
  assert.equal(fixed(-Infinity, 2), '−∞');
  assert.equal(num(-0.00001), '0');
  assert.equal(num(0.14350001), '0.1435');
  assert.equal(num(-2.5), '−2.5');
});

test('an exported heatmap (SVG) labels its legend as the page does: no row of zeros on a tiny scale', () => {
  const data = new Float32Array([0, 1e-5, 2e-5, 5e-6]);
  const scale = scaleFor('weights', data);
  const { svg, width } = heatmapSvg({ matrix: { rows: 2, cols: 2, data }, scale, labels: { rows: ['a', 'b'], cols: ['c', 'd'], legend: 'α' } }, 'tiny');
  const labels = [...svg.matchAll(/text-anchor="middle" fill="#555">([^<]*)</g)].map((m) => m[1]);
  assert.deepEqual(labels, legendTickLabels(scale.lo, scale.hi, Math.min(240, width - 24)).map((t) => t.label));
  assert.ok(labels.some((t) => t.includes('×10')), labels.join(' '));
  for (const t of labels) assert.doesNotMatch(t, /^0\.0000/, `legend label "${t}"`);
});

test('ticks fall on round values (1, 2, 2.5 or 5 × 10^k)', () => {
  const round = (v, step) => Math.abs(v / step - Math.round(v / step)) < 1e-9;
  for (const [lo, hi] of [[0, 0.2074], [-1.4813, 1.4813], [0, 1], [0, 437], [0.3, 2.71], [-0.0042, 0.0017]]) {
    const { step, values } = niceTicks(lo, hi, 4);
    const mantissa = step / 10 ** Math.floor(Math.log10(step));
    assert.ok([1, 2, 2.5, 5].some((m) => Math.abs(mantissa - m) < 1e-9), `step ${step}`);
    assert.ok(values.length >= 2, `${lo}..${hi}: ${values}`);
    for (const v of values) {
      assert.ok(round(v, step) && v >= lo - 1e-12 && v <= hi + 1e-12, `${v} on ${step} in [${lo}, ${hi}]`);
      assert.doesNotMatch(tick(v, step), /^−0(\.0*)?$|^-/);
    }
  }
  const d = niceDomain(0, 437, 4);
  assert.deepEqual([d.lo, d.hi, d.step], [0, 500, 100]);
  assert.deepEqual(d.values, [0, 100, 200, 300, 400, 500]);
  assert.equal(tick(0.1, 0.05), '0.10');
  assert.equal(tick(300, 100), '300');
});

test('CSV fields that begin with = + - @ tab or CR are neutralised (OWASP CSV injection)', () => {
  for (const evil of ['=1+1', '+SUM(A1)', '-2+3', '@SUM(A1)', '\tcmd', '\rcmd', '=HYPERLINK("http://x","y")']) {
    const f = csvField(evil);
    const text = f.startsWith('"') ? f.slice(1, -1).replace(/""/g, '"') : f;
    assert.equal(text[0], "'", `${JSON.stringify(evil)} -> ${f}`);
    assert.equal(text.slice(1), evil);
  }
  assert.equal(csvField('journey'), 'journey');
  assert.equal(csvField('a,b'), '"a,b"');
  assert.equal(csvField(-0.25), '-0.25', 'numbers made by the page are data, not text');
  assert.equal(csvField(-Infinity), '-inf');
  assert.equal(csvLine(['=x', 1, 'y']), "'=x,1,y");
});

test('URL-state codec: a bad field falls back to its default alone and is named; unknown fields are named', () => {
  const c = createUrlState({
    version: 2,
    props: [
      { name: 'task', type: 'enum', values: ['copy', 'reverse'], def: 'reverse' },
      { name: 'n', type: 'int', min: 1, max: 30, def: 4 },
      { name: 'lr', type: 'number', min: 1e-5, max: 1, def: 0.005 },
      { name: 'on', type: 'bool', def: false },
      { name: 'names', type: 'list', maxItems: 3, def: ['a'], item: (t) => (t.includes('<') ? 'may not contain <' : null) },
      { name: 'm', type: 'matrix', max: 10, def: [[0]] },
    ],
    migrations: { 1: (e) => { if (e.len !== undefined) { e.n = e.len; delete e.len; } return e; } },
  });
  const r = c.decode('#ver=2&task=nope&n=7&lr=abc&on=true&names=x,y%2Cz&m=1,2;3,4&junk=1');
  assert.deepEqual(r.state, { task: 'reverse', n: 7, lr: 0.005, on: true, names: ['x', 'y,z'], m: [[1, 2], [3, 4]] });
  assert.deepEqual(r.ignored.map((f) => f.name).sort(), ['junk', 'lr', 'task']);
  assert.deepEqual(c.decode(c.encode(r.state)).state, r.state, 'encode/decode round-trips');
  assert.equal(c.encode(c.defaults()), '#ver=2', 'defaults are not written');
  // a link without ver is version 1 and is migrated
  assert.equal(c.decode('#len=9').state.n, 9);
  assert.deepEqual(c.decode('#ver=7&n=3').ignored.map((f) => f.name), ['ver']);
  assert.equal(c.decode('#names=%3Cb%3E').ignored[0].reason, 'item 1 may not contain <');
  assert.deepEqual(c.fromObject({ ver: 2, n: 99 }, { strict: true }), { error: '“n” must be an integer from 1 to 30' });
});

test('playground links: version 1 ("#s=" base64 JSON) still opens; version 2 is readable and round-trips', () => {
  const v1 = { version: 1, preset: 'tutorial', dataSeed: 1, mode: 'attend', score: 'additive', normalize: 'softmax', temperature: 0.6, mask: 'padding', padLength: 3, paramSeed: 1, hidden: 3, beta: 1, trainable: false, heads: 1, head: 0, compare: 'general', px: 0, py: 1, tokens: ['Your', 'journey', 'starts', 'along', 'one', 'step'], v: [0.5, -0.25, 1] };
  const r = codec.decode(`#s=${Buffer.from(JSON.stringify(v1)).toString('base64url')}`);
  assert.deepEqual(r.ignored, []);
  for (const k of ['score', 'temperature', 'mask', 'padLength', 'hidden', 'compare', 'trainable', 'tokens', 'v']) assert.deepEqual(r.state[k], v1[k], k);
  const link = codec.encode(r.state);
  assert.match(link, /^#ver=2&tokens=Your,journey,starts,along,one,step&score=additive&temperature=0\.6&mask=padding&padLength=3&trainable=false&compare=general&hidden=3&v=0\.5,-0\.25,1$/);
  assert.deepEqual(codec.decode(link).state, r.state);
  const s = defaults();
  s.x[0][0] = -0.5;
  fixup(s);
  assert.deepEqual(codec.decode(codec.encode(s)).state, s);
});

test('every formula the page can show is in the build-time set', () => {
  const set = new Set(allTex());
  for (const mode of ['attend', 'self']) {
    for (const score of mode === 'self' ? ['dot', 'scaled_dot', 'cosine'] : ['dot', 'scaled_dot', 'general', 'additive', 'cosine', 'location']) {
      for (const mask of mode === 'self' ? ['none', 'causal'] : ['none', 'causal', 'padding']) {
        const s = { ...defaults(), mode, score, mask, heads: 3, temperature: 0.5, normalize: 'softmax', compare: 'cosine' };
        for (const step of ['q', 'k', 'v', 'scores', 'weights', 'heads', 'context', 'output', 'compare', 'diff']) {
          for (const t of texParts(step, formulaKey(s))) assert.ok(set.has(t), t);
        }
      }
    }
  }
  assert.ok(texParts('scores', formulaKey({ ...defaults(), mask: 'padding' })).includes('e_{ij} = -\\infty \\text{ for } j \\geq L'), 'the padding mask counts from 0: keys L and after');
});

// ---- the heatmap and the charts in Chromium, alone on a page with the shared stylesheet

let env;
before(async () => { env = await startBrowser(); });
after(async () => { await env?.close(); });

const FIXTURE = '<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">'
  + '<title>ui units</title><link rel="stylesheet" href="ui/base.css"></head><body><main id="root" class="card"></main></body></html>';

/** A page holding only ui/base.css and an empty card; `run(ui)` runs in it with ui = { heatmap, chart } modules. */
async function inPage(viewport, run, arg) {
  const page = await env.browser.newPage({ viewport });
  const errors = [];
  page.on('pageerror', (err) => errors.push(String(err)));
  await page.route(`${env.url}ui-fixture.html`, (route) => route.fulfill({ contentType: 'text/html', body: FIXTURE }));
  await page.goto(`${env.url}ui-fixture.html`);
  const result = await page.evaluate(async ({ source, arg: a }) => {
    const ui = { heatmap: await import('./ui/heatmap.js'), chart: await import('./ui/chart.js') };
    // eslint-disable-next-line no-new-func
    return new Function('ui', 'arg', `return (${source})(ui, arg);`)(ui, a);
  }, { source: run.toString(), arg });
  return { page, errors, result };
}

const matrix = (rows, cols) => ({ rows, cols, data: Float32Array.from({ length: rows * cols }, (_, k) => (k % 7) / 7) });

test('heatmap: the legend starts where the matrix starts, whatever the width of the row labels', async () => {
  for (const rowLabels of [['a', 'b', 'c'], ['a much longer name', 'b', 'c'], ['Your', 'journey', 'starts']]) {
    const { page, errors, result } = await inPage({ width: 1000, height: 700 }, async (ui, labels) => {
      const hm = ui.heatmap.createHeatmap({ id: 't', label: 'test', axes: 'query ↓ key →' });
      document.getElementById('root').append(hm.el);
      hm.update({ rows: 3, cols: 4, data: new Float32Array(12).map((_, k) => k / 12) }, { rowLabels: labels, colLabels: ['w', 'x', 'y', 'z'], kind: 'unit', legend: 'α' });
      await new Promise((ok) => requestAnimationFrame(ok));
      const left = (sel) => document.querySelector(sel).getBoundingClientRect().left;
      return { canvas: left('[data-testid="heatmap-t"]'), bar: left('[data-testid="legend-t"] .legend-bar') };
    }, rowLabels);
    assert.ok(Math.abs(result.canvas - result.bar) <= 1, `labels ${rowLabels[0]}: matrix at ${result.canvas.toFixed(1)} px, legend at ${result.bar.toFixed(1)} px`);
    assert.deepEqual(errors, []);
    await page.close();
  }
});

test('heatmap: the row label band is at least 6ch wide even for one-character labels', async () => {
  const { page, errors, result } = await inPage({ width: 1000, height: 700 }, async (ui) => {
    const hm = ui.heatmap.createHeatmap({ id: 't', label: 'test', axes: '' });
    document.getElementById('root').append(hm.el);
    hm.update({ rows: 2, cols: 2, data: new Float32Array([0.1, 0.9, 0.5, 0.5]) }, { rowLabels: ['a', 'b'], colLabels: ['c', 'd'], kind: 'unit' });
    await new Promise((ok) => requestAnimationFrame(ok));
    // 6ch in the heatmap's own font (the labels' font)
    const probe = document.createElement('span');
    probe.textContent = '000000';
    probe.style.position = 'absolute';
    probe.style.visibility = 'hidden';
    document.querySelector('.hm-rows').append(probe);
    const sixCh = probe.getBoundingClientRect().width;
    probe.remove();
    const canvas = document.querySelector('[data-testid="heatmap-t"]').getBoundingClientRect();
    const figure = document.querySelector('[data-testid="figure-t"]').getBoundingClientRect();
    return { band: canvas.left - figure.left, sixCh };
  });
  assert.ok(result.sixCh > 20, `6ch measured: ${result.sixCh}`);
  assert.ok(result.band >= result.sixCh, `band ${result.band.toFixed(1)} px, 6ch = ${result.sixCh.toFixed(1)} px`);
  assert.deepEqual(errors, []);
  await page.close();
});

test('heatmap: column labels upright on request (one line above each column), rotated by default', async () => {
  const { page, errors, result } = await inPage({ width: 1000, height: 700 }, async (ui) => {
    const out = {};
    for (const upright of [true, false]) {
      const id = upright ? 'up' : 'rot';
      const hm = ui.heatmap.createHeatmap({ id, label: id, axes: '', uprightCols: upright });
      document.getElementById('root').append(hm.el);
      hm.update({ rows: 2, cols: 5, data: new Float32Array(10).map((_, k) => k / 10) }, { rowLabels: ['r', 's'], colLabels: ['abc', 'b', 'c', 'd', 'e'], kind: 'unit' });
      await new Promise((ok) => requestAnimationFrame(ok));
      const plot = document.querySelector(`[data-testid="heatmap-${id}"]`).getBoundingClientRect();
      const spans = [...document.querySelectorAll(`[data-testid="figure-${id}"] .hm-cols span`)].map((s) => s.getBoundingClientRect().toJSON());
      out[id] = { plot: plot.toJSON(), spans, band: document.querySelector(`[data-testid="figure-${id}"] .hm-cols`).getBoundingClientRect().height };
    }
    return out;
  });
  const { up, rot } = result;
  const first = up.spans[0];
  assert.ok(first.width > first.height, `upright 'abc': ${first.width.toFixed(1)} × ${first.height.toFixed(1)} px`);
  up.spans.forEach((b, k) => {
    const cell = up.plot.width / 5;
    const centre = up.plot.left + (k + 0.5) * cell;
    assert.ok(Math.abs(b.left + b.width / 2 - centre) <= 1.5, `label ${k} centred over its column`);
    assert.ok(b.bottom <= up.plot.top + 0.5, `label ${k} above the plot`);
  });
  assert.ok(up.band < rot.band / 2, `an upright band is one line (${up.band.toFixed(1)} px), not a rotated label's length (${rot.band.toFixed(1)} px)`);
  assert.ok(rot.spans[0].height > rot.spans[0].width, 'rotated by default');
  assert.deepEqual(errors, []);
  await page.close();
});

/** The chart's text as drawn (CSS font size times the drawing's scale), in a page of `viewport`. */
async function chartText(viewport) {
  return inPage(viewport, async (ui) => {
    const figure = document.createElement('figure');
    figure.className = 'chart';
    document.getElementById('root').append(figure);
    ui.chart.drawChart(figure, [{ name: 'loss', color: '#2f56d6', points: Array.from({ length: 50 }, (_, k) => ({ step: k * 10, value: 2 / (1 + k) })) }],
      { xLabel: 'step', yLabel: 'loss' });
    await new Promise((ok) => requestAnimationFrame(ok));
    const svg = figure.querySelector('svg');
    const scale = svg.getScreenCTM().a;
    return { sizes: [...svg.querySelectorAll('text')].map((t) => parseFloat(getComputedStyle(t).fontSize) * scale), width: svg.getBoundingClientRect().width };
  });
}

test('charts: on a 390×844 phone the axis text is drawn at its CSS size, not shrunk with the picture', async () => {
  const { page, errors, result } = await chartText({ width: 390, height: 844 });
  await page.screenshot({ path: `${SHOTS}ui-chart-390x844.png` });
  assert.ok(result.sizes.length > 5);
  const smallest = Math.min(...result.sizes);
  assert.ok(smallest >= 10.5, `smallest chart text ${smallest.toFixed(1)} px in a ${result.width.toFixed(0)} px wide chart`);
  assert.deepEqual(errors, []);
  await page.close();
});

test('charts: in a frame 960 px wide (an embedded lab) the text is not scaled up with the picture', async () => {
  const { page, errors, result } = await chartText({ width: 960, height: 700 });
  assert.ok(result.width > 880, `the chart spans the card (${result.width.toFixed(0)} px)`);
  const largest = Math.max(...result.sizes);
  assert.ok(largest <= 12, `largest chart text ${largest.toFixed(1)} px in a ${result.width.toFixed(0)} px wide chart`);
  assert.deepEqual(errors, []);
  await page.close();
});

test('charts: a series of a single point draws a visible marker', async () => {
  const { page, errors, result } = await inPage({ width: 1000, height: 700 }, async (ui) => {
    const figure = document.createElement('figure');
    document.getElementById('root').append(figure);
    ui.chart.drawChart(figure, [
      { name: 'one', color: '#c2255c', points: [{ x: 3, y: 0.5 }] },
      { name: 'two', color: '#2f56d6', points: [{ x: 1, y: 0.2 }, { x: 5, y: 0.8 }] },
    ], { xLabel: 'input length', yLabel: 'accuracy', yMin: 0, yMax: 1 });
    await new Promise((ok) => requestAnimationFrame(ok));
    const mark = figure.querySelector('[data-name="one"]');
    const b = mark?.getBoundingClientRect();
    const style = mark && getComputedStyle(mark);
    return mark && { width: b.width, height: b.height, fill: style.fill, visible: style.visibility };
  });
  assert.ok(result, 'the one-point series is drawn');
  assert.ok(result.width >= 5 && result.height >= 5, `marker ${result.width} × ${result.height} px`);
  assert.equal(result.visible, 'visible');
  assert.notEqual(result.fill, 'none');
  assert.deepEqual(errors, []);
  await page.close();
});
