// web/ui/prefetch.js: a fetch started early is the one the first taker gets; later takers,
// and keys never started, fetch anew; an early failure reaches the taker, not the console.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createPrefetch } from '../../web/ui/prefetch.js';

test('a started fetch is taken once, then fetched again', async () => {
  const calls = [];
  const files = createPrefetch(async (key) => { calls.push(key); return `${key}#${calls.length}`; });
  files.start('a');
  files.start('a'); // already under way: not fetched twice
  assert.deepEqual(calls, ['a']);
  assert.equal(await files.take('a'), 'a#1');
  assert.equal(await files.take('a'), 'a#2', 'taken: the next take fetches again');
  assert.equal(await files.take('b'), 'b#3', 'never started: fetched when taken');
  assert.deepEqual(calls, ['a', 'a', 'b']);
});

test('an early failure goes to the taker', async () => {
  let unhandled = 0;
  const onUnhandled = () => { unhandled++; };
  process.on('unhandledRejection', onUnhandled);
  try {
    const files = createPrefetch(async (key) => { throw new Error(`${key}: HTTP 404`); });
    files.start('gone');
    await new Promise((r) => setTimeout(r, 10));
    await assert.rejects(files.take('gone'), /gone: HTTP 404/);
    assert.equal(unhandled, 0, 'the failure waited for its taker');
  } finally {
    process.off('unhandledRejection', onUnhandled);
  }
});
