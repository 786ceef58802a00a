// The transformer's induction target: 'induction', 2 layers, 4 heads,
// dModel 64, attention only (dFF 0), trained on one core in Node until the
// test accuracy over the scored positions (the repeat's tokens after its
// first) reaches 95% or the time budget runs out. Then the head scores
// (previous-token in layer 0, induction in layer 1) and the accuracy with the
// best induction head ablated (and, for reference, every layer-1 head whose
// induction score is >= 0.5). Prints the figures and PASS / MISS for each
// target; a miss is reported, not an error, so it runs in npm run bench.
// The budget counts this process's CPU seconds (one core), so a machine busy
// with other work does not shorten it; the wall time is printed beside it.
// Measured 2026-11-25 (SIMD build, one core of a shared 2-core machine, seed 1,
// lr 1e-3 with 100 warm-up steps; a random segment of n/3..n/2 letters repeated
// at a random distance): learned positions, 1,450 steps in 51 CPU s, test
// accuracy 96.0%; previous-token head 0.60 (layer 0), induction heads
// 0.64-0.69 (all four of layer 1); ablating the best one: 96.0% -> 92.0%.
// The target (95%, heads >= 0.5) is met; ablation -40 points is not (the
// four induction heads of layer 1 back one another up: ablating all four
// leaves 3.9%). Other fixed settings tried the same day, all meeting the
// other targets and missing this one: weight decay 0.1 (95.8% -> 91.7%),
// lr 3e-3 (95.2% -> 93.3%), seed 2 (95.8% -> 91.0%), seed 3 (95.2% -> 93.0%).
//   node tests/bench/transformer.mjs [--simd false] [--seconds 120] [--seed 1] [--lr 1e-3] [--weight-decay 0]
//                                    [--positional learned|sinusoidal|none|alibi|rope]
import { loadEngine } from '../../web/engine/index.js';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? fallback : process.argv[i + 1];
};
const SECONDS = Number(arg('seconds', 120));
const SEED = Number(arg('seed', 1));
const SIMD = arg('simd', 'true') !== 'false';
const POSITIONAL = arg('positional', 'learned');
const LR = Number(arg('lr', 1e-3));
const WEIGHT_DECAY = Number(arg('weight-decay', 0));
const CONFIG = { task: 'induction', layers: 2, heads: 4, dModel: 64, dFF: 0, context: 64, positional: POSITIONAL, batch: 32, seed: SEED };
const TRAIN = { lr: LR, warmup: 100, weightDecay: WEIGHT_DECAY, clip: 1 };
const ROUND = 50;
const TARGET = { accuracy: 0.95, induction: 0.5, previousToken: 0.5, ablationDrop: 0.4 };

const engine = await loadEngine({ simd: SIMD, threads: 1 });
const m = await engine.createTransformer(CONFIG);
console.log(`induction, ${m.config.parameters} parameters, ${POSITIONAL} positions, ${SIMD ? 'SIMD' : 'scalar'} build, seed ${SEED}, lr ${LR}, weight decay ${WEIGHT_DECAY}`);
let seconds = 0; // CPU
let wall = 0;
let accuracy = 0;
const horizon = Math.round(SECONDS * 30); // the cosine's end, in steps: about what the budget allows (some 30 steps a CPU second, SIMD build)
while (seconds < SECONDS) {
  const cpu0 = process.cpuUsage();
  const r = m.train({ ...TRAIN, steps: ROUND, decaySteps: horizon });
  const cpu = process.cpuUsage(cpu0);
  seconds += (cpu.user + cpu.system) / 1e6;
  wall += r.seconds;
  ({ accuracy } = m.evaluate({ count: 256 }));
  console.log(`step ${String(r.steps).padStart(5)}  ${seconds.toFixed(1).padStart(6)} s CPU (${wall.toFixed(1)} s wall)  loss ${r.loss.toFixed(3)}  test accuracy ${(100 * accuracy).toFixed(1)}%  ${Math.round((ROUND * CONFIG.batch * m.config.sequenceLength) / ((cpu.user + cpu.system) / 1e6))} tokens/CPU s`);
  if (accuracy >= TARGET.accuracy) break;
}
const scores = m.headScores({ count: 128 });
const best = (layer, key) => scores[layer].reduce((b, s, head) => (s[key] > b.value ? { head, value: s[key] } : b), { head: -1, value: -1 });
const prev = best(0, 'previousToken');
const ind = best(1, 'induction');
for (let l = 0; l < scores.length; l++) {
  console.log(`layer ${l}: ${scores[l].map((s, h) => `h${h} prev ${s.previousToken.toFixed(2)} ind ${s.induction.toFixed(2)}`).join(' | ')}`);
}
const ablated = m.evaluate({ count: 256, ablate: [{ layer: 1, head: ind.head }] }).accuracy;
// for reference, not a target: every layer-1 head whose induction score is >= 0.5 ablated at once
const strong = scores[1].flatMap((s, head) => (s.induction >= TARGET.induction ? [{ layer: 1, head }] : []));
const ablatedAll = strong.length ? m.evaluate({ count: 256, ablate: strong }).accuracy : accuracy;
console.log(`(all ${strong.length} layer-1 heads with induction >= 0.5 ablated: ${(100 * ablatedAll).toFixed(1)}%)`);
const checks = [
  [`test accuracy ${(100 * accuracy).toFixed(1)}% in ${seconds.toFixed(1)} CPU s`, accuracy >= TARGET.accuracy && seconds <= SECONDS],
  [`layer 0 head ${prev.head}: previousToken ${prev.value.toFixed(2)}`, prev.value >= TARGET.previousToken],
  [`layer 1 head ${ind.head}: induction ${ind.value.toFixed(2)}`, ind.value >= TARGET.induction],
  [`ablating it: accuracy ${(100 * accuracy).toFixed(1)}% -> ${(100 * ablated).toFixed(1)}%`, accuracy - ablated >= TARGET.ablationDrop],
];
for (const [what, ok] of checks) console.log(`${ok ? 'PASS' : 'MISS'} ${what}`);
m.destroy();
// a miss is reported, not an error, so the bench can run in npm run bench
process.exitCode = 0;
