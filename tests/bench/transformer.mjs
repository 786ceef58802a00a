// The induction moment, from the defaults: createTransformer({ task: 'induction', seed })
// trained on its default schedule (web/engine/defaults.js: 2 attention-only layers of
// 2 heads, dModel 32, context 32, RoPE, batch 32, AdamW lr 3e-3 on a cosine over 600
// steps), checked every ROUND steps until the test accuracy over the scored positions
// (the repeat's tokens after its first) reaches the headline's 95% with a layer-1 head's
// induction score past 0.4, for each seed. Prints, per seed, the steps and the tokens to
// induction (steps × batch × sequence length), the step the head formed, the training
// wall and CPU time, the heads' scores and each layer-1 head's ablation, then PASS / MISS
// for each target; a miss is reported, not an error, so it runs in npm run bench.
// The targets: every seed within the defaults' steps, and (the lab's promise, issue
// "the induction moment, fast") the training within 20 s of wall time.
//   node tests/bench/transformer.mjs [--seeds 1,2,3,4,5] [--simd false] [--threads 1]
//     [--positional rope] [--batch 32] [--lr 3e-3] [--weight-decay 0] [--layers 2] [--heads 2] [--dmodel 32] [--context 32]
// Flags override the defaults (tests/bench/RESULTS.md, "Induction", has earlier settings:
// 2 layers of 4 heads, dModel 64, context 64, batch 8, weight decay 3: one head carried it).
import { defaultsOf } from '../../web/engine/defaults.js';
import { loadEngine } from '../../web/engine/index.js';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? fallback : process.argv[i + 1];
};
const D = defaultsOf('transformer', { task: 'induction' });
const SEEDS = arg('seeds', '1,2,3,4,5').split(',').map(Number);
const SIMD = arg('simd', 'true') !== 'false';
const THREADS = Number(arg('threads', 1));
const num = (name, fallback) => (arg(name) === undefined ? fallback : Number(arg(name)));
const MODEL = {
  ...D.model, positional: arg('positional', D.model.positional), batch: num('batch', D.model.batch), layers: num('layers', D.model.layers),
  heads: num('heads', D.model.heads), dModel: num('dmodel', D.model.dModel), context: num('context', D.model.context),
};
const TRAIN = { lr: num('lr', D.train.lr), weightDecay: num('weight-decay', D.train.weightDecay) };
/** Steps between two checks (the lab measures as often at first). */
const ROUND = 25;
/** Sequences the checks' head scores read (the lab's); the final figures read 128. */
const CHECK_SCORES = 32;
const TARGET = { ...D.headline, steps: D.train.steps, wall: 20 };
const LIMIT = 2 * D.train.steps;

const engine = await loadEngine({ simd: SIMD, threads: THREADS });
const pct = (x) => `${(100 * x).toFixed(1)}%`;
console.log(`induction from the defaults: ${MODEL.layers} layers × ${MODEL.heads} heads, dModel ${MODEL.dModel}, dFF ${MODEL.dFF}, context ${MODEL.context}, ${MODEL.positional} positions, batch ${MODEL.batch}, lr ${TRAIN.lr}, weight decay ${TRAIN.weightDecay}, cosine over ${D.train.steps} steps; ${SIMD ? 'SIMD' : 'scalar'} build, ${THREADS} thread${THREADS > 1 ? 's' : ''}`);
const rows = [];
for (const seed of SEEDS) {
  const m = await engine.createTransformer({ task: 'induction', ...MODEL, seed });
  const T = m.config.sequenceLength;
  let wall = 0, cpu = 0, accuracy = 0, best = 0, formed = null;
  while (m.steps < LIMIT) {
    const c0 = process.cpuUsage();
    const r = m.train({ steps: ROUND, ...TRAIN });
    const c = process.cpuUsage(c0);
    wall += r.seconds;
    cpu += (c.user + c.system) / 1e6;
    ({ accuracy } = m.evaluate({ count: 256 }));
    best = Math.max(...m.headScores({ count: CHECK_SCORES })[MODEL.layers - 1].map((s) => s.induction));
    if (formed === null && best >= TARGET.induction) formed = m.steps;
    if (accuracy >= TARGET.accuracy && best >= TARGET.induction) break;
  }
  const scores = m.headScores({ count: 128 });
  const last = scores[MODEL.layers - 1];
  const ablated = last.map((_, head) => m.evaluate({ count: 256, ablate: [{ layer: MODEL.layers - 1, head }] }).accuracy);
  const all = m.evaluate({ count: 256, ablate: last.map((_, head) => ({ layer: MODEL.layers - 1, head })) }).accuracy;
  const tokens = m.steps * MODEL.batch * T;
  const row = { seed, steps: m.steps, tokens, formed, wall, cpu, accuracy, induction: last.map((s) => s.induction), previousToken: scores[0].map((s) => s.previousToken), ablated, all };
  rows.push(row);
  console.log(`seed ${seed}: ${pct(accuracy)} at step ${m.steps} (${tokens.toLocaleString('en')} tokens to induction, ${Math.round(tokens / wall).toLocaleString('en')} tokens/s), `
    + `a layer-${MODEL.layers - 1} head past ${TARGET.induction} from step ${formed}; ${wall.toFixed(1)} s wall, ${cpu.toFixed(1)} s CPU of training`);
  console.log(`  previous-token (layer 0) ${row.previousToken.map((v) => v.toFixed(2)).join(' / ')}; induction (layer ${MODEL.layers - 1}) ${row.induction.map((v) => v.toFixed(2)).join(' / ')}; `
    + `each ablated: ${ablated.map(pct).join(' / ')}; all of layer ${MODEL.layers - 1}: ${pct(all)}`);
  m.destroy();
}
const worst = (key) => Math.max(...rows.map((r) => r[key]));
const checks = [
  [`every seed reaches ${pct(TARGET.accuracy)} with an induction head (>= ${TARGET.induction}) within the defaults' ${TARGET.steps} steps (the most: ${worst('steps')})`,
    rows.every((r) => r.accuracy >= TARGET.accuracy && Math.max(...r.induction) >= TARGET.induction && r.steps <= TARGET.steps)],
  [`every seed's training within ${TARGET.wall} s of wall time (the most: ${worst('wall').toFixed(1)} s)`, worst('wall') <= TARGET.wall],
];
console.log(`tokens to induction: ${rows.map((r) => r.tokens.toLocaleString('en')).join(', ')} (seeds ${SEEDS.join(', ')})`);
for (const [what, ok] of checks) console.log(`${ok ? 'PASS' : 'MISS'} ${what}`);
// a miss is reported, not an error, so the bench can run in npm run bench
process.exitCode = 0;
