// The committed induction figure (docs/induction.svg) is drawn from the
// committed numbers (docs/induction.json), and those numbers show what the
// docs say they show: a layer-1 induction head and a layer-0 previous-token
// head past 0.5 and 95% accuracy at the end. Checked without training (the
// script takes a minute of CPU: node scripts/induction-plot.mjs); the SVG
// builder is also checked on a tiny hand-made series.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { HEAD_COLORS, formedIn, inductionJson, inductionSvg } from '../../scripts/induction-plot.mjs';
import { defaultsOf } from '../../web/engine/defaults.js';

const DOCS = new URL('../../docs/', import.meta.url);
const svgText = readFileSync(new URL('induction.svg', DOCS), 'utf8');
const jsonText = readFileSync(new URL('induction.json', DOCS), 'utf8');
const data = JSON.parse(jsonText);

/** Every polyline's data-series name and its points as [x, y] numbers. */
function polylines(svg) {
  return [...svg.matchAll(/<polyline [^>]*data-series="([^"]+)"[^>]*points="([^"]+)"/g)]
    .map(([, series, points]) => ({ series, points: points.split(' ').map((p) => p.split(',').map(Number)) }));
}

/** The affine map from values to pixels that takes `values` onto `pixels` exactly (to the 0.1 px drawn); its slope. */
function affine(values, pixels) {
  // the slope from the two points furthest apart, so the 0.1 px rounding barely moves it
  const lo = values.indexOf(Math.min(...values));
  const hi = values.indexOf(Math.max(...values));
  assert.ok(values[hi] > values[lo], 'a series with two different values');
  const a = (pixels[hi] - pixels[lo]) / (values[hi] - values[lo]);
  values.forEach((v, k) => assert.ok(Math.abs(pixels[lo] + a * (v - values[lo]) - pixels[k]) < 0.15, `point ${k}: ${v} drawn at ${pixels[k]}`));
  return a;
}

test('the committed figure is the builder drawn from the committed numbers', () => {
  assert.equal(svgText, inductionSvg(data), 'docs/induction.svg is stale: node scripts/induction-plot.mjs --redraw');
  assert.equal(jsonText, inductionJson(data));
  assert.deepEqual(data.formed, formedIn(data));
});

test("the SVG's polylines lie on the json's numbers, each series on its own scale", () => {
  const lines = polylines(svgText);
  const { layers, heads } = data.config;
  const expected = ['loss', 'accuracy'];
  for (let h = 0; h < heads; h++) expected.push(`previousToken 0 ${h}`);
  for (let h = 0; h < heads; h++) expected.push(`induction 1 ${h}`);
  assert.deepEqual(lines.map((l) => l.series), expected);
  assert.equal(layers, 2);
  const xScales = [];
  const yScales = {};
  for (const { series, points } of lines) {
    const [kind, layer, head] = series.split(' ');
    const values = kind === 'loss' || kind === 'accuracy' ? data[kind] : data[kind][layer][head];
    assert.equal(points.length, data.step.length, series);
    xScales.push(affine(data.step, points.map((p) => p[0])));
    const a = affine(values, points.map((p) => p[1]));
    assert.ok(a < 0, `${series}: larger values drawn higher`);
    (yScales[kind === 'loss' || kind === 'accuracy' ? kind : 'scores'] ??= []).push(a);
  }
  // one scale up to the drawing's rounding (a short series' slope is known to about 0.5%)
  const same = (list) => list.every((a) => Math.abs(a / list[0] - 1) < 0.005);
  assert.ok(same(xScales), 'one step axis for every curve');
  assert.ok(same(yScales.scores), 'every head score on one axis');
});

test('the numbers show the induction target met at the end, with the heads formed', () => {
  const last = data.step.length - 1;
  // the induction task's defaults, as a learner's Train gets them, for their steps
  const D = defaultsOf('transformer', { task: 'induction' });
  assert.deepEqual(data.config, { ...D.model, seed: 1 });
  assert.deepEqual(data.train, {});
  assert.equal(data.step[last], D.train.steps);
  assert.equal(data.step[0], 0);
  data.step.forEach((s, i) => i && assert.equal(s - data.step[i - 1], data.every));
  assert.ok(data.accuracy[last] >= 0.95, `accuracy ${data.accuracy[last]} at the end`);
  const ind = Math.max(...data.induction[1].map((s) => s[last]));
  const prev = Math.max(...data.previousToken[0].map((s) => s[last]));
  assert.ok(ind > 0.5, `best layer-1 induction score ${ind}`);
  assert.ok(prev > 0.5, `best layer-0 previous-token score ${prev}`);
  // the head rose: it began near uniform attention, not at 0.5
  const { layer, head, step, lossFrom, lossTo } = data.formed;
  assert.ok(data.induction[layer][head][0] < 0.1);
  assert.ok(step > 0 && lossTo < lossFrom, 'the loss drops while the head forms');
});

test('the builder on a tiny hand-made series', () => {
  const tiny = {
    title: 'tiny <run> & co',
    step: [0, 10, 20],
    loss: [2, 1, 0.5],
    accuracy: [0, 0.5, 1],
    previousToken: [[[0.1, 0.6, 0.8]], [[0, 0, 0]]],
    induction: [[[0, 0, 0]], [[0.05, 0.15, 0.9]]],
  };
  // the head passes 0.4 at step 20; its rise began at step 0, its last score below 0.1
  assert.deepEqual(formedIn(tiny), { layer: 1, head: 0, step: 20, score: 0.9, fromStep: 0, fromScore: 0.05, lossFrom: 2, lossTo: 0.5 });
  const svg = inductionSvg(tiny);
  assert.ok(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"'));
  assert.ok(svg.includes('>tiny &lt;run&gt; &amp; co</text>'), 'the title escaped');
  assert.doesNotMatch(svg, /<script|@import|url\(|href=/, 'static: no scripts, no fetched fonts or links');
  for (const label of ['training step', 'test loss (nats)', 'accuracy', 'head score (attention)', 'head 0', 'step 20: layer 1 head 0']) {
    assert.ok(svg.includes(label), `text "${label}"`);
  }
  const lines = polylines(svg);
  assert.deepEqual(lines.map((l) => l.series), ['loss', 'accuracy', 'previousToken 0 0', 'induction 1 0']);
  const [loss, accuracy, prev, ind] = lines.map((l) => l.points);
  // the steps run left to right, evenly; the first and last at the plot's edges
  assert.equal(loss[1][0] - loss[0][0], loss[2][0] - loss[1][0]);
  assert.deepEqual(loss.map((p) => p[0]), ind.map((p) => p[0]));
  // accuracy 0 and 1 at the top panel's bottom and top; scores on 0..1 the same way below
  assert.ok(accuracy[0][1] > accuracy[1][1] && accuracy[1][1] > accuracy[2][1]);
  assert.equal(accuracy[1][1], (accuracy[0][1] + accuracy[2][1]) / 2);
  assert.ok(Math.min(...prev.map((p) => p[1]), ...ind.map((p) => p[1])) > accuracy[0][1], 'the scores panel is below the loss panel');
  assert.ok(svg.includes(`stroke="${HEAD_COLORS[0]}"`));
});

test("README and docs/api.md quote the figure's own numbers", () => {
  const { step, fromStep, fromScore, score, lossFrom, lossTo } = data.formed;
  const last = data.step.length - 1;
  const quotes = [
    `at step ${step}`,
    `${fromScore.toFixed(2)} → ${score.toFixed(2)} in ${step - fromStep} steps`,
    `${lossFrom.toFixed(2)} to ${lossTo.toFixed(2)} nats`,
    `${(100 * data.accuracy[last]).toFixed(1)}%`,
  ];
  for (const file of ['../../README.md', '../../docs/api.md']) {
    const text = readFileSync(new URL(file, import.meta.url), 'utf8').replace(/\s+/g, ' ');
    for (const q of quotes) assert.ok(text.includes(q), `${file.slice(6)} says "${q}"`);
    assert.match(text, /!\[[^\]]+\]\((docs\/)?induction\.svg\)/, `${file.slice(6)} shows the figure`);
  }
});
