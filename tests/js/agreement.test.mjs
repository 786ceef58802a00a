// The attention-vs-saliency measures (web/engine/stats.js agreement) on maps
// small enough to work out by hand, and the case that made Kendall's τ over all
// cells misleading: two maps with the same bright spot whose faint cells rank
// in opposite orders.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { agreement, kendallTau } from '../../web/engine/stats.js';

const close = (a, b, msg) => assert.ok(Math.abs(a - b) < 1e-12, `${msg}: ${a} vs ${b}`);

test('agreement: hand-computed measures on a 6-cell map', () => {
  const attention = [0.5, 0.3, 0.1, 0.05, 0.05, 0];
  const saliency = [4, 0, 3, 2, 1, 0]; // total 10
  const r = agreement(attention, saliency, { k: 2, floor: 0.2 });
  assert.equal(r.topMatch, true); // cell 0 tops both
  close(r.saliencyInTopK, 4 / 10, 'saliency in cells 0 and 1'); // top 2 by attention: 0, 1
  close(r.topKOverlap, 1 / 2, 'top 2 overlap'); // {0,1} ∩ {0,2}
  // active: attention >= 0.1 (cells 0,1,2) or saliency >= 0.8 (cells 0,2,3,4) -> cells 0..4
  assert.equal(r.active, 5);
  close(r.tauActive, kendallTau([0.5, 0.3, 0.1, 0.05, 0.05], [4, 0, 3, 2, 1]), 'τ over the active cells');
  assert.deepEqual([r.k, r.n], [2, 6]);
});

test('agreement: the same bright spot with faint cells ranked in reverse agrees; τ over all cells says ~0', () => {
  const n = 49;
  const attention = new Float32Array(n);
  const saliency = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    attention[i] = 1e-4 * (i + 1); // faint cells rise with i ...
    saliency[i] = 1e-4 * (n - i); // ... and fall in the saliency
  }
  attention[24] = 0.9;
  saliency[24] = 1;
  const all = kendallTau(attention, saliency);
  assert.ok(all < -0.9, `τ over all cells ${all}`);
  const r = agreement(attention, saliency, { k: 3 });
  assert.equal(r.topMatch, true);
  assert.ok(r.saliencyInTopK > 0.8, `saliency in the top 3: ${r.saliencyInTopK}`);
  assert.equal(r.active, 1);
  assert.equal(r.tauActive, null); // one bright cell: no ranking to speak of
});

test('agreement: maps that light up different places disagree on every measure', () => {
  const attention = [0.8, 0.1, 0.1, 0, 0, 0];
  const saliency = [0, 0, 0, 1, 3, 2];
  const r = agreement(attention, saliency, { k: 2 });
  assert.equal(r.topMatch, false);
  assert.equal(r.saliencyInTopK, 0);
  assert.equal(r.topKOverlap, 0);
  assert.ok(r.tauActive < 0, `τ over active cells ${r.tauActive}`);
});

test('agreement: signs ignored, k clamped to the map, lengths checked, an all-zero map scores 0', () => {
  const r = agreement([0.2, 0.8], [-3, 1], { k: 5 });
  assert.equal(r.k, 2);
  close(r.saliencyInTopK, 1, 'k = n holds all saliency');
  assert.equal(r.topMatch, false); // |−3| is the larger saliency
  const z = agreement([0, 0, 0], [0, 0, 0]);
  assert.equal(z.saliencyInTopK, 0);
  assert.equal(z.active, 0);
  assert.throws(() => agreement([1, 2], [1]), (e) => e.code === 'ERR_SHAPE' && /lengths 2 and 1/.test(e.message));
});

test('wilson: the 95% interval of a proportion, against values worked out by hand', async () => {
  const { wilson } = await import('../../web/engine/stats.js');
  // 80 of 100: centre (0.8 + 1.9208/100) / 1.038416 = 0.78891; half 1.96·√(0.0016 + 0.00009604) / 1.038416 = 0.07773
  const r = wilson(80, 100);
  assert.ok(Math.abs(r.lo - 0.71118) < 1e-4 && Math.abs(r.hi - 0.86665) < 1e-4, `${r.lo} ${r.hi}`);
  // at 0 and at n the interval stays in [0, 1] and has width
  const zero = wilson(0, 1000);
  assert.equal(zero.lo, 0);
  assert.ok(zero.hi > 0.003 && zero.hi < 0.004, `${zero.hi}`);
  const all = wilson(1000, 1000);
  assert.ok(all.hi === 1 && all.lo > 0.996 && all.lo < 0.997, `${all.lo}`);
  // more images, a narrower interval
  assert.ok(wilson(900, 1000).hi - wilson(900, 1000).lo < wilson(180, 200).hi - wilson(180, 200).lo);
  assert.throws(() => wilson(1, 0), (e) => e.code === 'ERR_SHAPE');
});
