// The lab's forms and links, where the logic is pure: the elapsed time never
// reads "1 min 60 s", a link carries only its own family's settings, each
// numeric field's range is the property table's (the engine's limits), and a
// task that needs a longer context says so.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { loadEngine } from '../../web/engine/index.js';
import { duration } from '../../web/ui/format.js';
import { adoptLimits, engineLimits } from '../../web/lab/limits.js';

before(async () => adoptLimits(engineLimits(await loadEngine())));

test('duration: rounded once, so its edges never read "60.0 s" or "1 min 60 s"', () => {
  assert.equal(duration(0), '0.0 s');
  assert.equal(duration(12.34), '12.3 s');
  assert.equal(duration(59.94), '59.9 s');
  assert.equal(duration(59.96), '1 min 0 s');
  assert.equal(duration(60), '1 min 0 s');
  assert.equal(duration(119.4), '1 min 59 s');
  assert.equal(duration(119.6), '2 min 0 s');
  assert.equal(duration(125.2), '2 min 5 s');
  assert.equal(duration(3599.7), '60 min 0 s');
  for (let s = 0; s < 4000; s += 0.05) assert.doesNotMatch(duration(s), /\b60(\.0)? s/, `${s} s`);
});
