// The transformer's induction target: 'induction', 2 layers, 4 heads,
// dModel 64, attention only (dFF 0), trained on one core in Node until the
// test accuracy over the scored positions (the repeat's tokens after its
// first) reaches 95% or the time budget runs out. Then the head scores
// (previous-token in layer 0, induction in layer 1) and the accuracy with the
// best induction head ablated (and, for reference, every layer-1 head whose
// induction score is >= 0.5, and the head whose ablation hurts most). Prints the figures and PASS / MISS for each
// target; a miss is reported, not an error, so it runs in npm run bench.
// The budget counts this process's CPU seconds (one core), so a machine busy
// with other work does not shorten it; the wall time is printed beside it.
// The settings (2026-11-26): RoPE positions, batch 8, AdamW lr 3e-3 without
// warm-up, weight decay 3, clip 1, the cosine's end at step 3,600, accuracy
// checked every 25 steps. With learned positions, batch 32 and no or light
// weight decay (the settings until 2026-11-25: 96.0% in 51 CPU s), all four
// layer-1 heads became induction heads together and backed one another up
// (ablating the best one: -1.7 to -13.9 points over 12 settings). With a
// batch of 8 one head forms first; a strong decoupled weight decay keeps the
// others from catching up, so that one head carries the induction.
// Measured 2026-11-28 (SIMD build, one core of a shared 2-core machine),
// since the transformer runs on the core's attention: seed 1, 1,900 steps
// in 21.3-22.4 CPU s, 95.1%; previous-token 0.79 (layer 0 head 0, the others
// <= 0.12), induction 0.77 (layer 1 head 2, the others <= 0.03); ablating
// it: 95.1% -> 3.8% (the others alone: no change). Before (2026-11-26):
// 1,675 steps, 95.3%, 3.6% ablated. The sweep is in tests/bench/RESULTS.md.
//   node tests/bench/transformer.mjs [--simd false] [--seconds 120] [--seed 1] [--lr 3e-3] [--weight-decay 3]
//                                    [--batch 8] [--warmup 0] [--positional rope|learned|sinusoidal|none|alibi]
import { loadEngine } from '../../web/engine/index.js';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? fallback : process.argv[i + 1];
};
const SECONDS = Number(arg('seconds', 120));
const SEED = Number(arg('seed', 1));
const SIMD = arg('simd', 'true') !== 'false';
const POSITIONAL = arg('positional', 'rope');
const LR = Number(arg('lr', 3e-3));
const WEIGHT_DECAY = Number(arg('weight-decay', 3));
const BATCH = Number(arg('batch', 8));
const CONFIG = { task: 'induction', layers: 2, heads: 4, dModel: 64, dFF: 0, context: 64, positional: POSITIONAL, batch: BATCH, seed: SEED };
const TRAIN = { lr: LR, warmup: Number(arg('warmup', 0)), weightDecay: WEIGHT_DECAY, clip: 1, decaySteps: 3600 };
// accuracy is checked this often: training stops at the first check past 95%, before the other heads catch up
const ROUND = 25;
const TARGET = { accuracy: 0.95, induction: 0.5, previousToken: 0.5, ablationDrop: 0.4 };

const engine = await loadEngine({ simd: SIMD, threads: 1 });
const m = await engine.createTransformer(CONFIG);
console.log(`induction, ${m.config.parameters} parameters, ${POSITIONAL} positions, ${SIMD ? 'SIMD' : 'scalar'} build, seed ${SEED}, batch ${BATCH}, lr ${LR}, warm-up ${TRAIN.warmup}, weight decay ${WEIGHT_DECAY}`);
let seconds = 0; // CPU
let wall = 0;
let accuracy = 0;
while (seconds < SECONDS) {
  const cpu0 = process.cpuUsage();
  const r = m.train({ ...TRAIN, steps: ROUND });
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
// for reference, not a target: each layer-1 head ablated alone
const alone = scores[1].map((s, head) => m.evaluate({ count: 256, ablate: [{ layer: 1, head }] }).accuracy);
const hurts = alone.reduce((b, a, h) => (a < alone[b] ? h : b), 0);
console.log(`(each layer-1 head ablated alone: ${alone.map((a, h) => `h${h} ${(100 * a).toFixed(1)}%`).join(', ')}; the one that hurts most: h${hurts})`);
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
