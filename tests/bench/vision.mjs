// npm run bench (part 3): attention over images, accuracy against training
// time on one core in Node (the SIMD WASM build, the public JS API).
//   cluttered  soft attention, the `none` baseline (global average pooling)
//              of the same size for the same number of steps, hard attention
//              (REINFORCE) for the same number of steps
//   multi      3 digits, soft attention: sequence accuracy
// Each run trains in rounds, evaluates on a fixed set of test images after
// each, and stops at its target or its time budget (default 300 s); the
// baselines train exactly as many steps as soft attention did.
//   node tests/bench/vision.mjs [--budget seconds] [--only cluttered|multi]
import { loadEngine } from '../../web/engine/index.js';

const args = process.argv.slice(2);
const BUDGET = args.includes('--budget') ? Number(args[args.indexOf('--budget') + 1]) : 300;
const ONLY = args.includes('--only') ? args[args.indexOf('--only') + 1] : null;
const ROUND = 250;
const EVAL = 1000;
const FINAL = 2000;
const MODEL = { channels: [8, 16, 32], hidden: 32, cell: 'gru', attention: 'scaled_dot', batch: 32, seed: 1 };
const TRAIN = { batch: 32, lr: 0.002, clip: 5 };

const fmt = (x, d = 1) => (Number.isFinite(x) ? x.toFixed(d) : '-');

/** Trains until metric >= target, the budget, or maxSteps; returns the curve and the final test figures. */
async function run(engine, name, options, { metric, target, maxSteps = Infinity }) {
  const m = await engine.createVisionModel({ ...MODEL, ...options });
  const curve = [];
  let seconds = 0;
  let steps = 0;
  // a run with maxSteps (the baselines: as many steps as soft attention took) ignores the budget
  while ((maxSteps < Infinity || seconds < BUDGET) && steps < maxSteps) {
    const n = Math.min(ROUND, maxSteps - steps);
    seconds += m.train({ ...TRAIN, steps: n }).seconds;
    steps += n;
    const e = m.evaluate({ split: 'test', count: EVAL });
    curve.push({ steps, seconds, value: e[metric] });
    process.stderr.write(`  ${name}: ${steps} steps, ${fmt(seconds)} s, test ${metric} ${fmt(100 * e[metric])}%\n`);
    if (e[metric] >= target) break;
  }
  const final = m.evaluate({ split: 'test', count: FINAL });
  m.destroy();
  return { name, steps, seconds, final, value: final[metric], curve };
}

const engine = await loadEngine({ simd: true });
const rows = [];
if (!ONLY || ONLY === 'cluttered') {
  const soft = await run(engine, 'cluttered, soft', { task: 'cluttered', mode: 'soft' }, { metric: 'accuracy', target: 0.94 });
  rows.push({ ...soft, target: '≥ 93%' });
  const same = { metric: 'accuracy', target: 2, maxSteps: soft.steps };
  rows.push(await run(engine, 'cluttered, none (average pooling)', { task: 'cluttered', attention: 'none' }, same));
  rows.push(await run(engine, 'cluttered, hard (REINFORCE)', { task: 'cluttered', mode: 'hard' }, same));
}
if (!ONLY || ONLY === 'multi') {
  const multi = await run(engine, 'multi (3 digits), soft', { task: 'multi', digits: 3 }, { metric: 'sequenceAccuracy', target: 0.91 });
  rows.push({ ...multi, target: '≥ 90% sequences' });
}

console.log(`\nattention over images (SIMD WASM, one core, Node ${process.version}; test split, ${FINAL} images)`);
console.log('| run | steps × 32 | training time | test accuracy | sequence accuracy |');
console.log('| --- | ---: | ---: | ---: | ---: |');
for (const r of rows) {
  console.log(`| ${r.name} | ${r.steps} | ${fmt(r.seconds)} s | ${fmt(100 * r.final.accuracy)}% | ${fmt(100 * r.final.sequenceAccuracy)}% |`);
}
