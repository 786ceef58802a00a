// The embedding protocol (web/embed/protocol.js) without a browser: widget names and
// URLs, the ?embed parameters a page reads, and the checks that every message from
// another window passes (shape, types, size), hostile ones included. And the server's
// headers for ?embed pages: framed by any site or by &origin= only; every other page by itself.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { CSP, courseHeaders, embedHeaders } from '../../scripts/serve.mjs';
import {
  LINK_QUERY, MAX_LINK, VERSION, checkFromWidget, checkToWidget, linkQuery, parseWidget, readEmbedParams, widgetUrl, withLinkQuery,
} from '../../web/embed/protocol.js';
import { modelLink } from '../../web/ui/model-link.js';
import { scanLink } from '../../web/ui/training-scan-core.js';
import * as pkg from 'attnlab/embed';

const BASE = 'https://example.org/attnlab/';

test('VERSION is the package version, and attnlab/embed resolves through package.json "exports"', () => {
  assert.equal(VERSION, JSON.parse(readFileSync(new URL('../../package.json', import.meta.url))).version);
  assert.equal(typeof pkg.embed, 'function');
  assert.equal(pkg.VERSION, VERSION);
  assert.equal(pkg.widgetUrl('playground', { base: BASE }), `${BASE}index.html?embed`);
});

test('widget names map to the page and its parameters, and back', () => {
  assert.deepEqual(parseWidget('playground/weights'), { page: 'playground', view: 'weights' });
  assert.deepEqual(parseWidget('lab/transformer'), { page: 'lab', family: 'transformer' });
  assert.deepEqual(parseWidget('learn/9/induction'), { page: 'learn', chapter: 9, name: 'induction' });
  for (const bad of ['', 'playground/nope', 'lab', 'lab/text', 'learn/0/dot', 'learn/9', 'learn/9/Dot', 'learn/9/a/b', 'x', 42, null, 'a'.repeat(100)]) {
    assert.throws(() => parseWidget(bad), TypeError, String(bad));
  }
  assert.equal(widgetUrl('lab/images', { base: BASE, lti: true }), `${BASE}lab.html?embed&family=images&lti`);
  assert.equal(widgetUrl('learn/2/dot', { base: BASE, state: 'https://x.org/learn.html#a=1', origin: 'https://course.example' }),
    `${BASE}learn.html?embed&chapter=2&widget=dot&origin=https%3A%2F%2Fcourse.example#a=1`);
  assert.throws(() => widgetUrl('playground', { base: BASE, origin: 'https://course.example/path' }), /not an origin/);
  assert.throws(() => widgetUrl('playground', { base: BASE, origin: 'javascript:alert(1)' }), /not an origin/);
  assert.throws(() => widgetUrl('playground', { base: BASE, state: 'not a link' }), /state/);
});

test("a state link's hub model (?repo=&revision=&hub=, as the lab's cards write it) goes into a widget's URL and back into a page's query", () => {
  const link = 'https://x.org/attnlab/lab.html?repo=EleutherAI/pythia-70m&model=open&revision=step1000&hub=./models&embed#ver=2&task=transformer';
  const model = 'repo=EleutherAI/pythia-70m&revision=step1000&hub=./models';
  assert.equal(linkQuery(link), model, 'the model fields alone, in the link\'s order');
  assert.equal(widgetUrl('lab/transformer', { base: BASE, state: link, origin: 'https://course.example' }),
    `${BASE}lab.html?embed&family=transformer&origin=https%3A%2F%2Fcourse.example&${model}#ver=2&task=transformer`);
  for (const none of ['', '#ver=2&task=transformer', 'https://x.org/lab.html#repo=a/b', 'not a link', 42]) assert.equal(linkQuery(none), '', String(none));
  // a page's query takes the link's model; its own parameters stay as they are
  const page = '?embed&family=transformer&repo=openai-community/gpt2&compact';
  assert.equal(withLinkQuery(page, link), `?embed&family=transformer&compact&${model}`);
  assert.equal(withLinkQuery(page, 'https://x.org/lab.html#ver=2'), '?embed&family=transformer&compact', 'a link that chose no model: none');
  assert.equal(withLinkQuery(page, '#ver=2'), page, "a '#…' link leaves the model as it is");
  assert.equal(withLinkQuery('?embed&rep%6F=a/b&hub', link), `?embed&${model}`, 'however a field was written');
  assert.equal(withLinkQuery('', link), `?${model}`);
  // the fields are the ones the cards write (web/ui/model-link.js) and Pythia's training scan (training-scan-core.js)
  const written = scanLink(modelLink('', { repo: 'EleutherAI/pythia-70m', revision: 'step1000', hub: './models' }), [0, 1000, 143000]);
  assert.deepEqual([...new URLSearchParams(written).keys()], LINK_QUERY);
});

test("a state link carries the steps Pythia's training scan was given, and a widget's URL takes them", () => {
  const link = 'https://x.org/attnlab/lab.html?repo=EleutherAI/pythia-70m&steps=0,512,4000,143000#ver=2&task=transformer';
  assert.equal(linkQuery(link), 'repo=EleutherAI/pythia-70m&steps=0,512,4000,143000');
  assert.equal(widgetUrl('lab/transformer', { base: BASE, state: link }), `${BASE}lab.html?embed&family=transformer&repo=EleutherAI/pythia-70m&steps=0,512,4000,143000#ver=2&task=transformer`);
  assert.equal(withLinkQuery('?embed&steps=1,2', 'https://x.org/lab.html?repo=EleutherAI/pythia-70m#ver=2'), '?embed&repo=EleutherAI/pythia-70m', "a link without steps: the scan's own");
});

test('a page reads its ?embed parameters; what it does not understand is listed, a bad origin closes it', () => {
  assert.equal(readEmbedParams('?view=weights'), null);
  assert.deepEqual(readEmbedParams('?embed&view=weights&lti'), { view: 'weights', family: null, chapter: null, widget: null, lti: true, origin: null, problems: [] });
  assert.deepEqual(readEmbedParams('?embed&chapter=9&widget=induction&origin=https%3A%2F%2Fcourse.example'),
    { view: null, family: null, chapter: 9, widget: 'induction', lti: false, origin: 'https://course.example', problems: [] });
  const bad = readEmbedParams('?embed&view=<b>&family=nope&chapter=-1&widget=A%20B&origin=javascript:alert(1)');
  assert.equal(bad.origin, false);
  assert.deepEqual([bad.view, bad.family, bad.chapter, bad.widget], [null, null, null, null]);
  assert.equal(bad.problems.length, 5);
  assert.ok(readEmbedParams(`?embed&view=${'x'.repeat(1 << 20)}`).problems[0].length < 60, 'a problem is named briefly');
});

test('messages to a widget: only { type: "attnlab:set", link } with a link of bounded size', () => {
  assert.equal(checkToWidget({ type: 'attnlab:set', link: '#ver=2&mask=causal' }), null);
  assert.equal(checkToWidget({ type: 'attnlab:set', link: 'https://example.org/attnlab/index.html#ver=2' }), null);
  const hostile = [
    'attnlab:set', 42, null, undefined, [1], new Date(), Object.create({ type: 'attnlab:set' }),
    { type: 'attnlab:set' }, { type: 'attnlab:set', link: 5 }, { type: 'attnlab:set', link: ['#a'] },
    { type: 'attnlab:set', link: '#a', extra: 1 }, { type: 'attnlab:ready', widget: 'x', version: '1' },
    { type: 'attnlab:set', link: `#${'a'.repeat(MAX_LINK)}` }, { type: 'attnlab:set', link: '<img src=x onerror=alert(1)>' },
    { type: { toString: () => 'attnlab:set' }, link: '#a' }, Object.fromEntries(Array.from({ length: 20 }, (_, k) => [`k${k}`, k])),
  ];
  for (const m of hostile) assert.equal(typeof checkToWidget(m), 'string', JSON.stringify(m)?.slice(0, 60));
  assert.match(checkToWidget({ type: 'attnlab:set', link: 'x'.repeat(1 << 20) }), /longer than/);
  assert.ok(checkToWidget({ type: 'y'.repeat(1 << 20) }).length < 100, 'the reason quotes a bounded part of the input');
});

test('messages from a widget: each type with its fields', () => {
  assert.equal(checkFromWidget({ type: 'attnlab:ready', widget: 'learn/9/induction', version: VERSION }), null);
  assert.equal(checkFromWidget({ type: 'attnlab:resize', height: 412 }), null);
  assert.equal(checkFromWidget({ type: 'attnlab:state', link: 'https://example.org/attnlab/index.html#ver=2' }), null);
  assert.equal(checkFromWidget({ type: 'attnlab:challenge', chapter: 2, widget: 'dot', solved: true, attempts: 3 }), null);
  assert.match(checkFromWidget({ type: 'attnlab:resize', height: -1 }), /height/);
  assert.match(checkFromWidget({ type: 'attnlab:challenge', chapter: 2, widget: 'dot', solved: 'yes', attempts: 3 }), /solved/);
});

test('the server: ?embed pages may be framed (by any site, or &origin= only, or none for a bad origin); others by their own origin', () => {
  assert.deepEqual(embedHeaders('/index.html'), {});
  assert.equal(embedHeaders('/index.html?embed')['Content-Security-Policy'], `${CSP}; frame-ancestors *`);
  assert.equal(embedHeaders('/lab.html?embed&origin=https%3A%2F%2Fcourse.example#x')['Content-Security-Policy'], `${CSP}; frame-ancestors https://course.example`);
  assert.equal(embedHeaders('/lab.html?embed&origin=https://x.org%3Bscript-src%20*')['Content-Security-Policy'], `${CSP}; frame-ancestors 'none'`);
  assert.equal(embedHeaders('/index.html?embed')['Cross-Origin-Resource-Policy'], 'cross-origin');
  assert.match(courseHeaders('http://127.0.0.1:8080')['Content-Security-Policy'], /frame-src 'self' http:\/\/127\.0\.0\.1:8080;/);
  assert.equal(courseHeaders('http://127.0.0.1:8080')['Cross-Origin-Embedder-Policy'], undefined, 'a course page is not isolated unless asked');
});

test('package.json exports attnlab/embed with its types first; the declarations name every export', () => {
  const root = new URL('../../', import.meta.url);
  const entry = JSON.parse(readFileSync(new URL('package.json', root))).exports['./embed'];
  assert.deepEqual(Object.keys(entry), ['types', 'default']);
  const dts = readFileSync(new URL(entry.types, root), 'utf8');
  for (const name of Object.keys(pkg)) assert.match(dts, new RegExp(`export (function|const) ${name}\\b`), `${name} is declared`);
  for (const type of ['attnlab:ready', 'attnlab:resize', 'attnlab:state', 'attnlab:challenge', 'attnlab:set', 'lti.frameResize']) assert.ok(dts.includes(`'${type}'`), type);
});
