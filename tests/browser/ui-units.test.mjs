// The shared UI modules that need no DOM, tested in Node: number formatting (no
// "−0.00"), ticks on round values, CSV fields safe from formula injection, and the
// URL-state codec (per-field fallback, unknown fields named, versioned migration),
// with the playground's own table and its version 1 links.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fixed, num, tick } from '../../web/ui/format.js';
import { niceDomain, niceTicks } from '../../web/ui/ticks.js';
import { csvField, csvLine } from '../../web/ui/download.js';
import { createUrlState } from '../../web/ui/url-state.js';
import { codec, defaults, fixup } from '../../web/playground/state.js';
import { allTex, formulaKey, texParts } from '../../web/playground/tex.js';

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
  assert.ok(texParts('scores', formulaKey({ ...defaults(), mask: 'padding' })).includes('e_{ij} = -\\infty \\text{ for } j > L'), 'the padding mask is 1-based: keys after L');
});
