// The WASM builds train like native C: the same seed gives the same initial
// weights, the same training draws and the same losses (within float
// tolerance: SIMD and scalar sum in different orders). Native is built by
// `make build/tools/trainer_losses` (gcc -O2, no sanitizers, the same sources).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { loadEngine } from '../../web/engine/index.js';
import { BUILDS } from './builds.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const hasGcc = spawnSync('gcc', ['--version']).status === 0;
const STEPS = 15;

function nativeLosses(args) {
  const bin = 'build/tools/trainer_losses';
  execFileSync('make', ['-s', bin], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
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
      const engine = await loadEngine({ simd: build.simd });
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
