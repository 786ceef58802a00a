// The transformer's tasks on data, on one core in Node (SIMD build, seed 1,
// CPU seconds of this process, so other work on the machine does not count):
//  - 'dates': the default transformer (2 layers, 4 heads, dModel 64, dFF 256,
//    context 64) beside the seq2seq model of tests/bench/train.mjs (GRU 64,
//    embedding 32, dot attention, Adam 0.01, batch 64) on the same task and
//    test dates, each trained until 99% test sequence accuracy (the whole
//    answer right; the transformer decodes greedily) or its budget is spent.
//  - 'names': the default transformer for `--names-seconds` (120), then the
//    test loss in nats per character (the end of a name counts as one) and
//    names sampled at temperature 0.8.
// Prints the figures; exits 1 when a model misses 99% on dates or names
// does not beat a character bigram model fitted to the training names.
// Measured 2026-11-25 (a shared 2-core machine under heavy load; CPU seconds):
// dates, seq2seq 99.1% after 1,200 steps in 19.1 s, the transformer 99.9%
// after 2,150 steps in 172.8 s (93.5% in 240 s with the cosine ending at step
// 6,000: the decay matters); names, 1,000 steps in 119 s, test loss 2.025
// nats/char (bigram 2.424, uniform 3.332; 2.114 at lr 3e-3).
//   node tests/bench/transformer-tasks.mjs [--dates-seconds 240] [--names-seconds 120] [--only dates|names]
import { loadEngine } from '../../web/engine/index.js';
import { loadNames } from '../../web/engine/names.js';
import { bigramLoss } from '../lib/names.mjs';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? fallback : process.argv[i + 1];
};
const DATES_SECONDS = Number(arg('dates-seconds', 240));
const NAMES_SECONDS = Number(arg('names-seconds', 120));
const ONLY = arg('only', '');
const TARGET = 0.99;
const ROUND = 50;

const engine = await loadEngine({ threads: 1 });
const cpuSeconds = (fn) => {
  const c0 = process.cpuUsage();
  const r = fn();
  const c = process.cpuUsage(c0);
  return { r, cpu: (c.user + c.system) / 1e6 };
};
const pct = (x) => `${(100 * x).toFixed(1)}%`;

/** Trains with step(steps) in rounds until accuracy().sequence >= TARGET or the budget is spent. */
function untilAccurate(name, budget, step, accuracy) {
  let cpu = 0;
  let wall = 0;
  let acc = 0;
  let steps = 0;
  while (cpu < budget) {
    const t = cpuSeconds(() => step(ROUND));
    cpu += t.cpu;
    wall += t.r.seconds;
    steps = t.r.steps;
    const shown = accuracy();
    acc = shown.sequence;
    console.log(`  ${name} step ${String(steps).padStart(5)}  ${cpu.toFixed(1).padStart(6)} s CPU (${wall.toFixed(1)} s wall)  loss ${t.r.loss.toFixed(3)}  test sequence accuracy ${pct(acc)}${shown.characters === undefined ? '' : ` (characters ${pct(shown.characters)})`}`);
    if (acc >= TARGET) break;
  }
  return { steps, cpu, wall, acc };
}

async function dates() {
  console.log('== dates: "25th of June, 2009" -> "2009-06-25", 16 formats, 1950-2049, the same test dates for both');
  const s2s = engine.createSeq2Seq({ task: 'dates', cell: 'gru', embed: 32, hidden: 64, attention: 'dot', batch: 64, seed: 1 });
  const a = untilAccurate('seq2seq', DATES_SECONDS,
    (steps) => s2s.train({ steps, batch: 64, lr: 0.01, clip: 5 }),
    () => ({ sequence: s2s.evaluate({ split: 'test', count: 1000 }).sequenceAccuracy }));
  const s2sParams = s2s.config.parameters;
  s2s.destroy();

  const tf = await engine.createTransformer({ task: 'dates', seed: 1 });
  const test = tf.examples({ split: 'test', count: 1000, seed: 2 });
  const horizon = Math.round(DATES_SECONDS * 12.5); // the cosine's end: about the steps the budget allows (some 13 a CPU second)
  const sequenceAccuracy = () => {
    // the per-character accuracy first: greedy decoding of 1,000 answers costs more than it
    const characters = tf.evaluate({ split: 'test', count: 256 }).accuracy;
    if (characters < 0.98) return { sequence: 0, characters };
    const right = test.filter((e) => tf.generate(e.input, { tokens: e.target.length, temperature: 0 }).text === e.target).length;
    return { sequence: right / test.length, characters };
  };
  const b = untilAccurate('transformer', DATES_SECONDS,
    (steps) => tf.train({ steps, lr: 3e-3, warmup: 100, decaySteps: horizon, weightDecay: 0.01, clip: 1 }),
    sequenceAccuracy);
  const params = tf.config.parameters;
  tf.destroy();
  console.log('  model                                         parameters  steps  CPU s  test sequence accuracy');
  console.log(`  seq2seq (GRU 64, embed 32, dot attention)   ${String(s2sParams).padStart(10)}  ${String(a.steps).padStart(5)}  ${a.cpu.toFixed(1).padStart(5)}  ${pct(a.acc)}`);
  console.log(`  transformer (2 x 4 heads, dModel 64)        ${String(params).padStart(10)}  ${String(b.steps).padStart(5)}  ${b.cpu.toFixed(1).padStart(5)}  ${pct(b.acc)}`);
  return [[`seq2seq dates ${pct(a.acc)} in ${a.cpu.toFixed(1)} CPU s`, a.acc >= TARGET], [`transformer dates ${pct(b.acc)} in ${b.cpu.toFixed(1)} CPU s`, b.acc >= TARGET]];
}

async function names() {
  console.log(`\n== names: character-level first names, ${NAMES_SECONDS} CPU s`);
  const m = await engine.createTransformer({ task: 'names', seed: 1 });
  const text = await loadNames();
  const bigram = bigramLoss(text);
  const before = m.evaluate({ split: 'test', count: 256 }).loss;
  // the cosine's end: about twice the steps the budget allows (some 8.5 a CPU second): in so short
  // a run a rate kept high learns more (at lr 3e-3: 2.114 nats/char, 2.153 with the end at the budget's)
  const horizon = Math.round(NAMES_SECONDS * 18);
  let cpu = 0;
  let wall = 0;
  let r;
  let last = 0;
  while (cpu + last <= NAMES_SECONDS) { // no round that would end past the budget
    const t = cpuSeconds(() => m.train({ steps: ROUND, lr: 6e-3, warmup: 100, decaySteps: horizon, weightDecay: 0.01, clip: 1 }));
    cpu += t.cpu;
    last = t.cpu;
    wall += t.r.seconds;
    r = t.r;
    if (r.steps % 500 === 0) console.log(`  step ${String(r.steps).padStart(5)}  ${cpu.toFixed(1).padStart(6)} s CPU (${wall.toFixed(1)} s wall)  train loss ${r.loss.toFixed(3)}`);
  }
  const test = m.evaluate({ split: 'test', count: 1024 });
  const train = m.evaluate({ split: 'train', count: 1024 });
  const samples = m.generate('\n', { tokens: 200, temperature: 0.8, seed: 1 }).text.split('\n').filter(Boolean).slice(0, 12);
  const known = new Set(text.split('\n'));
  console.log(`  ${r.steps} steps in ${cpu.toFixed(1)} CPU s (${wall.toFixed(1)} s wall), ${m.config.parameters} parameters`);
  console.log(`  test loss ${before.toFixed(3)} -> ${test.loss.toFixed(3)} nats/char (train ${train.loss.toFixed(3)}; uniform ${Math.log(m.config.vocabulary.length).toFixed(3)}, character bigram ${bigram.test.toFixed(3)})`);
  console.log(`  samples (T 0.8): ${samples.map((s) => (known.has(s) ? `${s}*` : s)).join(', ')}   (* in the list)`);
  m.destroy();
  return [[`names test loss ${test.loss.toFixed(3)} nats/char below the bigram's ${bigram.test.toFixed(3)}`, test.loss < bigram.test]];
}

const checks = [...(ONLY === 'names' ? [] : await dates()), ...(ONLY === 'dates' ? [] : await names())];
for (const [what, ok] of checks) console.log(`${ok ? 'ok  ' : 'MISS'} ${what}`);
process.exitCode = checks.every(([, ok]) => ok) ? 0 : 1;
