// engine.openModel(repo, { hub, revision, onProgress, signal, cache }) against
// a local server that answers as the hub does (tests/lib/hub-server.mjs): the
// model it opens is loadModel's for the same bytes; progress, resuming a
// dropped connection, every failure's code and message, abort, and what is
// kept (a directory in Node, Cache Storage in a browser) and reopened with no
// request for the weights. First the incremental SHA-256 the checks rest on.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { Sha256, sha256Hex } from '../../web/engine/sha256.js';
import { mulberry32 } from '../lib/random.mjs';

const randomBytes = (n, seed) => {
  const rand = mulberry32(seed);
  return Uint8Array.from({ length: n }, () => Math.floor(rand() * 256));
};

test('SHA-256 in pieces equals node:crypto on random data of every length around a block and across many blocks', () => {
  for (const n of [0, 1, 3, 55, 56, 57, 63, 64, 65, 119, 120, 127, 128, 129, 1000, 4096, 100_003]) {
    const bytes = randomBytes(n, n + 1);
    const want = createHash('sha256').update(bytes).digest('hex');
    assert.equal(sha256Hex(bytes), want, `${n} bytes at once`);
    for (const step of [1, 7, 64, 1000]) {
      const h = new Sha256();
      for (let at = 0; at < n; at += step) h.update(bytes.subarray(at, at + step));
      assert.equal(h.hex(), want, `${n} bytes in pieces of ${step}`);
    }
  }
  assert.equal(sha256Hex(new TextEncoder().encode('abc')), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
});

test('a SHA-256 hasher refuses to be used after its digest', () => {
  const h = new Sha256().update(new Uint8Array(3));
  h.digest();
  assert.throws(() => h.update(new Uint8Array(1)), /after digest/);
  assert.throws(() => h.digest(), /twice/);
});
