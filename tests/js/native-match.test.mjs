// The WASM builds train like native C: the same seed gives the same initial
// weights, the same training draws and the same losses (within float
// tolerance: SIMD and scalar sum in different orders). Native is built by
// `make build/tools/trainer_losses` (gcc -O2, no sanitizers: the engine's library, build/libattnlab.a).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { loadEngine } from '../../web/engine/index.js';
import { BUILDS } from './builds.mjs';
import { makeCommand } from '../lib/make.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const hasGcc = spawnSync('gcc', ['--version']).status === 0;
const STEPS = 15;

function nativeLosses(args) {
  const bin = 'build/tools/trainer_losses';
  execFileSync(...makeCommand(bin), { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  return JSON.parse(execFileSync(`${ROOT}${bin}`, args.map(String), { encoding: 'utf8' }));
}

const CASES = [
  { name: 'reverse, GRU, additive', task: 'reverse', kind: 1, cell: 'gru', cellCode: 1, attention: 'additive', attentionCode: 3 },
  { name: 'sort, LSTM, dot', task: 'sort', kind: 2, cell: 'lstm', cellCode: 2, attention: 'dot', attentionCode: 0 },
];

for (const c of CASES) {
  test(`${c.name}: ${STEPS} steps from seed 4, WASM vs native`, { skip: hasGcc ? false : 'gcc is not installed' }, async () => {
    const native = nativeLosses([c.kind, 3, 8, c.cellCode, c.attentionCode, 4, STEPS, 32, 0.005]);
    assert.equal(native.length, STEPS);
    for (const build of BUILDS) {
      if (build.skip) continue;
      const engine = await loadEngine({ simd: build.simd, threads: 1 });
      const m = engine.createSeq2Seq({
        task: c.task, minLength: 3, maxLength: 8, cell: c.cell, attention: c.attention, embed: 16, hidden: 32, batch: 32, seed: 4,
      });
      const { losses } = m.train({ steps: STEPS, batch: 32, lr: 0.005, clip: 5 });
      m.destroy();
      for (let i = 0; i < STEPS; i++) {
        assert.ok(Math.abs(losses[i] - native[i]) <= 2e-3 * Math.abs(native[i]),
          `${build.name}, step ${i}: WASM ${losses[i]} vs native ${native[i]}`);
      }
    }
  });
}

// ---- same seed, same saved bytes -------------------------------------------------------------
// A few training steps from fixed seeds, then m.save(): the file's FNV-1a 64
// must equal the value recorded before the engine's restructuring (re-recorded
// when exp became a degree-5 polynomial and softmax rows began to be normalised
// on the context, and when the loss moved onto the output layer's
// cross-entropy; the same values as the native float builds), on both
// WASM builds (tests/native/test_fingerprint.c checks the native builds with
// the same cases).

const PAIRS_TEXT = 'abc\tcba\nhello\tolleh\nxy\tyx\nattn\tntta\nlab\tbal\nseq\tqes\nkey\tyek\nquery\tyreuq\n';
const FINGERPRINTS = [
  { name: 'reverse, GRU, additive', want: 0xe90638ecf52afb2an,
    model: { task: 'reverse', minLength: 3, maxLength: 8, cell: 'gru', embed: 16, hidden: 24, attention: 'additive', batch: 16, seed: 4 },
    train: { optimizer: 'adam', lr: 0.01, clip: 5, steps: 4, batch: 8 } },
  { name: 'sort, LSTM 2 layers bidirectional, dot', want: 0x3bcd9cd710dc21een,
    model: { task: 'sort', minLength: 2, maxLength: 7, cell: 'lstm', layers: 2, bidirectional: true, embed: 12, hidden: 16, attention: 'dot', batch: 8, seed: 7 },
    train: { optimizer: 'adam', lr: 0.005, clip: 1, steps: 3, batch: 8 } },
  { name: 'copy letters, RNN, general, SGD', want: 0x7ef1ba867edeaa74n,
    model: { task: 'copy', alphabet: 'letters', minLength: 2, maxLength: 6, cell: 'rnn', embed: 10, hidden: 12, attention: 'general', batch: 6, seed: 11 },
    train: { optimizer: 'sgd', lr: 0.1, clip: 0, steps: 3, batch: 6 } },
  { name: 'dates, LSTM bidirectional, cosine', want: 0xbc4eff2038ce110en, // re-recorded: cosine on unit rows, then its backward as products split by rows
    model: { task: 'dates', minLength: 1, maxLength: 1, cell: 'lstm', bidirectional: true, embed: 16, hidden: 16, attention: 'cosine', batch: 4, seed: 3 },
    train: { optimizer: 'adam', lr: 0.01, clip: 5, steps: 2, batch: 4 } },
  { name: 'copy fixed length, GRU, location', want: 0xf7e45134fbd03a28n,
    model: { task: 'copy', minLength: 5, maxLength: 5, cell: 'gru', embed: 8, hidden: 16, attention: 'location', batch: 8, seed: 5 },
    train: { optimizer: 'adam', lr: 0.01, clip: 5, steps: 3, batch: 8 } },
  { name: 'reverse, GRU 2 layers, scaled dot', want: 0x9ddebed993ae7ff5n,
    model: { task: 'reverse', minLength: 2, maxLength: 6, cell: 'gru', layers: 2, embed: 8, hidden: 12, attention: 'scaled_dot', batch: 8, seed: 9 },
    train: { optimizer: 'adam', lr: 0.01, clip: 5, steps: 3, batch: 8 } },
  { name: 'sort, LSTM, no attention', want: 0x88aa632d34ba7d6an,
    model: { task: 'sort', minLength: 3, maxLength: 6, cell: 'lstm', embed: 8, hidden: 16, attention: 'none', batch: 8, seed: 2 },
    train: { optimizer: 'adam', lr: 0.01, clip: 5, steps: 3, batch: 8 } },
  { name: 'pairs, RNN bidirectional, additive 8', want: 0x506033a8b461ae5en,
    model: { task: 'pairs', pairs: PAIRS_TEXT, minLength: 1, maxLength: 1, cell: 'rnn', bidirectional: true, embed: 8, hidden: 8, attention: 'additive', attnHidden: 8, batch: 4, seed: 21 },
    train: { optimizer: 'adam', lr: 0.02, clip: 5, steps: 3, batch: 4 } },
];

function fnv1a64(bytes) {
  let h = 0xcbf29ce484222325n;
  for (const b of bytes) h = ((h ^ BigInt(b)) * 0x100000001b3n) & 0xffffffffffffffffn;
  return h;
}

for (const build of BUILDS) {
  test(`${build.name}: same seed, same save() bytes as recorded`, { skip: build.skip }, async () => {
    const engine = await loadEngine({ simd: build.simd, threads: 1 });
    for (const f of FINGERPRINTS) {
      const m = engine.createSeq2Seq(f.model);
      m.train(f.train);
      const got = fnv1a64(m.save());
      m.destroy();
      assert.equal(`0x${got.toString(16).padStart(16, '0')}`, `0x${f.want.toString(16).padStart(16, '0')}`, f.name);
    }
  });
}
