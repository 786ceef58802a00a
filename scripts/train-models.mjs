// Trains the models the Learn page uses, from fixed seeds, and writes them to
// web/models/ with a manifest (web/models/models.json) of how each was made and
// the test accuracy it reached:
//   reverse-attention.s2s   reverse digit strings, GRU, dot attention (chapter 1)
//   reverse-bottleneck.s2s  the same model with no attention: the decoder sees only
//                           the encoder's final state (chapter 1)
//   dates.s2s               16 human date formats to ISO, GRU, dot attention (chapter 6)
//   node scripts/train-models.mjs   (npm run train:models)
// The same seeds give the same files natively and in WASM; the page computes every
// figure it quotes from these files when it loads, and tests/js/models.test.mjs checks
// each still loads and reaches the accuracy recorded here.
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { loadEngine } from '../web/engine/index.js';

const out = fileURLToPath(new URL('../web/models/', import.meta.url));

const REVERSE = { task: 'reverse', alphabet: 'digits', minLength: 2, maxLength: 16, cell: 'gru', hidden: 32, embed: 16, seed: 1 };
/** file -> createSeq2Seq options and training schedule. */
export const MODELS = {
  'reverse-attention': { options: { ...REVERSE, attention: 'dot' }, steps: 2000, batch: 64, lr: 0.01 },
  'reverse-bottleneck': { options: { ...REVERSE, attention: 'none' }, steps: 2000, batch: 64, lr: 0.01 },
  dates: { options: { task: 'dates', cell: 'gru', hidden: 64, embed: 32, attention: 'dot', seed: 1 }, steps: 1000, batch: 64, lr: 0.01 },
};
/** How many test examples the recorded accuracy (and the page) evaluates. */
export const EVAL_COUNT = 500;

const engine = await loadEngine();
const manifest = { evalCount: EVAL_COUNT, models: {} };
for (const [name, spec] of Object.entries(MODELS)) {
  const t0 = performance.now();
  const m = engine.createSeq2Seq(spec.options);
  try {
    for (let done = 0; done < spec.steps; done += 100) m.train({ steps: Math.min(100, spec.steps - done), batch: spec.batch, lr: spec.lr });
    const ev = m.evaluate({ split: 'test', count: EVAL_COUNT });
    const bytes = m.save();
    await writeFile(`${out}${name}.s2s`, bytes);
    manifest.models[name] = {
      file: `${name}.s2s`, options: spec.options, steps: spec.steps, batch: spec.batch, lr: spec.lr,
      sequenceAccuracy: ev.sequenceAccuracy, bytes: bytes.length,
    };
    console.log(`${name}: ${spec.steps} steps in ${((performance.now() - t0) / 1000).toFixed(1)} s, test sequence accuracy ${ev.sequenceAccuracy.toFixed(3)}, ${bytes.length} bytes`);
  } finally {
    m.destroy();
  }
}
await writeFile(`${out}models.json`, `${JSON.stringify(manifest, null, 2)}\n`);
