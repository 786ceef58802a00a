// The URL-state codec (web/ui/url-state.js) on links of junk: a 1 MB link of
// 50,000+ unknown fields, or of one key repeated, is read and its fields
// reported in at most 100 ms, in one linear pass (1 MB costs about four
// times 0.25 MB, not sixteen); a longer link is refused at once. Unknown
// names are reported one by one up to a hundred, then counted; the settings
// among them are still read.
//
// Time is the process's CPU time (best of 3): on a machine shared by many
// jobs, wall time measures the queue for a core more than the codec.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createUrlState } from '../../web/ui/url-state.js';
import { codec as labCodec } from '../../web/lab/state.js';

const BUDGET_MS = 100;

const codec = createUrlState({
  version: 2,
  props: [
    { name: 'task', type: 'enum', values: ['copy', 'sort'], def: 'copy' },
    { name: 'hidden', type: 'int', min: 1, max: 64, def: 8 },
    { name: 'names', type: 'list', def: ['a'] },
    { name: 'w', type: 'matrix', max: 10, def: [[1]] },
  ],
  migrations: { 1: (e) => e },
});

/** A hash of `bytes` characters: fields made by field(i), joined with '&'. */
function junk(bytes, field) {
  const parts = [];
  let length = 1;
  for (let i = 0; length < bytes; i++) {
    const f = field(i);
    parts.push(f);
    length += f.length + 1;
  }
  return `#${parts.join('&')}`.slice(0, bytes);
}

/** The least CPU time of up to three decodes, in ms (a first one far past the budget is not repeated). */
function cpuTime(c, hash) {
  let best = Infinity;
  for (let k = 0; k < 3; k++) {
    const t = process.cpuUsage();
    c.decode(hash);
    const used = process.cpuUsage(t);
    best = Math.min(best, (used.user + used.system) / 1000);
    if (best > 10 * BUDGET_MS) break;
  }
  return best;
}

const JUNK = {
  'unknown fields': (i) => `field${i}=${i}`,
  'one key repeated': () => 'task=sort',
  'one unknown key repeated': () => 'zz=1',
  'bad values of a setting': (i) => `hidden=${i * 7}`,
  'long names': (i) => `${'n'.repeat(200)}${i}=x`,
  'list items': (i) => `names=${'a,'.repeat(20)}b${i}`,
};

test('a 1 MB link of junk is read in at most 100 ms, linearly; a 2 MB link is refused at once', () => {
  for (const [name, c] of [['a small table', codec], ['the lab', labCodec]]) {
    for (const [what, field] of Object.entries(JUNK)) {
      const quarter = cpuTime(c, junk(250_000, field));
      const full = cpuTime(c, junk(1_000_000, field));
      assert.ok(full <= BUDGET_MS, `${name}, ${what}: 1 MB in ${full.toFixed(1)} ms`);
      // linear: about 4x the quarter; a quadratic pass would be 16x (a few ms of slack for timer noise)
      assert.ok(full <= 8 * quarter + 5, `${name}, ${what}: 1 MB in ${full.toFixed(1)} ms, 0.25 MB in ${quarter.toFixed(1)} ms`);
      const twice = cpuTime(c, junk(2_000_000, field));
      assert.ok(twice <= BUDGET_MS, `${name}, ${what}: 2 MB in ${twice.toFixed(1)} ms`);
      assert.deepEqual(c.decode(junk(2_000_000, field)).ignored, [{ name: 'link', reason: 'is too long' }]);
    }
  }
});

test('unknown fields: a hundred reported by name, the rest counted; the settings among them still read', () => {
  const hash = `${junk(1_000_000, (i) => `field${i}=1`)}&task=sort&hidden=12&field3=again`;
  const { state, ignored } = codec.decode(hash);
  assert.equal(state.task, 'sort');
  assert.equal(state.hidden, 12);
  const named = ignored.slice(0, -1);
  assert.equal(named.length, 100);
  assert.deepEqual(named.slice(0, 3).map((f) => f.name), ['field0', 'field1', 'field2']);
  assert.ok(named.every((f) => f.reason === 'is not a setting'));
  const fields = hash.split('&').length - 3; // the settings and the repeated field3 are not more fields
  assert.deepEqual(ignored.at(-1), { name: `${fields - 100} more fields`, reason: 'are not settings either' });
});

test('a repeated key keeps its last value and is reported once', () => {
  assert.equal(codec.decode('#task=sort&task=copy&task=sort').state.task, 'sort');
  const r = codec.decode('#zz=1&zz=2&hidden=99&hidden=100&hidden=3');
  assert.equal(r.state.hidden, 3);
  assert.deepEqual(r.ignored, [{ name: 'zz', reason: 'is not a setting' }]);
  const bad = codec.decode('#ver=9&zz=1&zz=2');
  assert.deepEqual(bad.ignored.map((f) => f.name), ['ver', 'zz']);
});

test('a state object of 50,000 unknown fields is read linearly too', () => {
  const obj = { ver: 2, task: 'sort' };
  for (let i = 0; i < 50_000; i++) obj[`field${i}`] = i;
  // the least CPU time of five reads: one read can lose its core (or its cache) to a busy machine
  let best = Infinity;
  let r;
  for (let k = 0; k < 5; k++) {
    const t = process.cpuUsage();
    r = codec.fromObject(obj);
    const used = process.cpuUsage(t);
    best = Math.min(best, (used.user + used.system) / 1000);
  }
  assert.ok(best <= BUDGET_MS, `${best} ms`);
  assert.equal(r.state.task, 'sort');
  assert.equal(r.ignored.length, 101);
  assert.equal(r.ignored.at(-1).name, '49900 more fields');
  assert.equal(codec.fromObject(obj, { strict: true }).error, '“field0” is not a setting');
});

test('a state object: a setting after many unknown fields is still read; the first 100 unknown are named, the rest counted', () => {
  const obj = { ver: 2 };
  for (let i = 0; i < 250; i++) obj[`x${i}`] = i;
  obj.task = 'sort';
  obj.hidden = 48;
  const r = codec.fromObject(obj);
  assert.equal(r.state.task, 'sort');
  assert.equal(r.state.hidden, 48);
  assert.deepEqual(r.ignored.slice(0, 2).map((f) => f.name), ['x0', 'x1']);
  assert.equal(r.ignored.length, 101);
  assert.equal(r.ignored[99].name, 'x99');
  assert.equal(r.ignored.at(-1).name, '150 more fields');
});
