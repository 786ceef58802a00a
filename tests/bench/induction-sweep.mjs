// One run of the induction target's sweep (tests/bench/RESULTS.md, "Induction"):
// the bench's model (2 layers, 4 heads, dModel 64, attention only) trained with
// the settings given as JSON, printing the test accuracy at every check and,
// from probeFrom on, the layer-1 heads' induction scores and each one's
// ablation drop in points; stops at 95% or after `seconds` CPU s of training.
//   node tests/bench/induction-sweep.mjs '{"positional":"rope","batch":8,"lr":3e-3,"warmup":0,"weightDecay":3}'
// Settings (defaults): lr (1e-3), warmup (100), weightDecay (0), clip (1), batch (32), seed (1), positional
// ('learned'), context (64), seconds (120), round (50: steps between checks), horizon (3600: the cosine's end),
// probeFrom (0.6: the accuracy from which heads are probed).
import { loadEngine } from '../../web/engine/index.js';

const s = { lr: 1e-3, warmup: 100, weightDecay: 0, clip: 1, batch: 32, seed: 1, positional: 'learned', context: 64, seconds: 120, round: 50, horizon: 3600, probeFrom: 0.6, ...JSON.parse(process.argv[2] ?? '{}') };
const engine = await loadEngine({ simd: true, threads: 1 });
const m = await engine.createTransformer({ task: 'induction', layers: 2, heads: 4, dModel: 64, dFF: 0, context: s.context, positional: s.positional, batch: s.batch, seed: s.seed });
let seconds = 0, accuracy = 0, steps = 0;
const pct = (x) => (100 * x).toFixed(1);
const probe = (acc) => {
  const sc = m.headScores({ count: 64 });
  const drops = [0, 1, 2, 3].map((head) => acc - m.evaluate({ count: 256, ablate: [{ layer: 1, head }] }).accuracy);
  return { sc, drops };
};
let last;
while (seconds < s.seconds) {
  const c0 = process.cpuUsage();
  const r = m.train({ steps: s.round, batch: s.batch, lr: s.lr, warmup: s.warmup, weightDecay: s.weightDecay, clip: s.clip, decaySteps: s.horizon });
  const c = process.cpuUsage(c0);
  seconds += (c.user + c.system) / 1e6;
  steps = r.steps;
  accuracy = m.evaluate({ count: 256 }).accuracy;
  let line = `step ${steps} ${seconds.toFixed(1)}s acc ${pct(accuracy)}`;
  if (accuracy >= s.probeFrom) {
    last = probe(accuracy);
    line += ` ind ${last.sc[1].map((x) => x.induction.toFixed(2)).join('/')} drops ${last.drops.map(pct).join('/')}`;
  }
  console.log(line);
  if (accuracy >= 0.95) break;
}
const { sc, drops } = probe(accuracy);
const ind = sc[1].reduce((b, x, h) => (x.induction > sc[1][b].induction ? h : b), 0);
const prev = Math.max(...sc[0].map((x) => x.previousToken));
const worst = drops.reduce((b, d, h) => (d > drops[b] ? h : b), 0);
console.log(`RESULT ${JSON.stringify(process.argv[2] ?? '{}')} acc ${pct(accuracy)} steps ${steps} cpu ${seconds.toFixed(1)} prev ${prev.toFixed(2)} ind ${sc[1].map((x) => x.induction.toFixed(2)).join('/')} bestInd h${ind} drop ${pct(drops[ind])} maxDrop h${worst} ${pct(drops[worst])}`);
m.destroy();
