// npm run bench (part 8): taking a model apart, on a GPT-2-small-shaped
// checkpoint (gpt2-shape.mjs: random F16 weights made here), one thread, a
// 15-token prompt pair that differs in one position:
//   - exact activation patching of all 144 heads (m.patch, target 'heads'):
//     target <= 10 s; beside it, the same patched runs' blocks priced at
//     TensorFlow.js's measured forward on the same weights (its best of
//     interleaved rounds against ours), since TF.js has no patching of its own;
//   - patching every block input (target 'resid', 12 x 15 cells): no target;
//   - compositionScores and copyingScores (weights only): target <= 5 s each;
//   - logitAttribution: target <= 0.3 s;
//   - attribution patching of all 144 heads (two forwards, one backward):
//     target <= 1 s; beside it, TF.js's two forwards and one backward of the
//     same metric to block 0's input (tf.valueAndGrad), best of interleaved rounds.
// A miss prints MISS; the bench does not fail on it.
//   node tests/bench/circuits.mjs [--quick]
import os from 'node:os';
import { loadEngine } from '../../web/engine/index.js';
import { loadTfWasm } from '../lib/tfjs.mjs';
import { CONFIG, makeCheckpoint, tfForward, tfMetricGradient } from './gpt2-shape.mjs';
import { timeInterleaved } from './timing.mjs';

const QUICK = process.argv.includes('--quick');
const TARGETS = { heads: 10, composition: 5, copying: 5, attribution: 0.3, attributionPatching: 1 };
const fmt = (x, d = 2) => (Number.isFinite(x) ? x.toFixed(d) : '-');
const verdict = (ok) => (ok ? 'PASS' : 'MISS');
const N = 15;

/** Seconds of one call of fn, and its result. */
function timed(fn) {
  const t0 = performance.now();
  const result = fn();
  return { seconds: (performance.now() - t0) / 1000, result };
}

async function main() {
  console.log(`load average ${os.loadavg().map((x) => x.toFixed(1)).join(' ')} on ${os.cpus().length} cores`);
  console.log(`Taking GPT-2-small-shaped weights apart (12 x 768, 12 heads, vocabulary 50,257), one thread, ${N}-token prompts`);
  const tf = await loadTfWasm().catch((err) => ({ error: err }));
  const tfWeights = {};
  const file = makeCheckpoint((name, shape, values) => { if (!tf.error) tfWeights[name] = tf.tf.tensor(values, shape); });
  if (!tf.error) tfWeights.unembed = tf.tf.transpose(tfWeights['wte.weight']);
  const engine = await loadEngine({ threads: 1 });
  const m = await engine.loadModel(file, { config: CONFIG });
  const { layers: L, heads: H } = m.config;
  const clean = Array.from({ length: N }, (_, i) => (i * 7919 + 13) % 50257);
  const corrupt = clean.slice();
  corrupt[4] = (corrupt[4] + 1) % 50257;
  const answer = [clean[N - 1], corrupt[4]];

  const heads = timed(() => m.patch({ clean, corrupt, answer, target: 'heads' }));
  if (heads.result.rows !== L || heads.result.cols !== H) throw new Error('patch returned the wrong shape');
  const resid = timed(() => m.patch({ clean, corrupt, answer, target: 'resid' }));
  const comp = timed(() => m.compositionScores());
  const copy = timed(() => m.copyingScores());
  // logitAttribution: the best of three calls (one forward each)
  const attribution = [0, 1, 2].map(() => timed(() => m.logitAttribution({ ids: clean, answer }))).reduce((x, y) => (y.seconds < x.seconds ? y : x));

  // one forward of the prompt, ours and TF.js's, best of interleaved rounds
  const subjects = [{ name: 'ours (SIMD, 1 thread)', call: () => m.inspect({ ids: clean }, { lens: false }) }];
  if (!tf.error) subjects.push({ name: `TF.js ${tf.version} WASM`, call: () => tfForward(tf.tf, tfWeights, clean) });
  // attribution patching: ours against TF.js's two forwards and one backward
  const backward = [{ name: 'ours (SIMD, 1 thread)', call: () => m.patch({ clean, corrupt, answer, target: 'heads', method: 'attribution' }) }];
  if (!tf.error) backward.push({ name: `TF.js ${tf.version} WASM`, call: () => tfMetricGradient(tf.tf, tfWeights, clean, corrupt, answer) });
  const backTimes = await timeInterleaved(backward, { rounds: QUICK ? 3 : 5, sampleMs: 200, warmMs: QUICK ? 300 : 1000, warmCalls: 1, consume: (r) => r });
  const ours = backward[0].call(), theirs = tf.error ? null : backward[1].call();
  if (theirs && Math.abs(ours.clean - theirs.clean) + Math.abs(ours.corrupt - theirs.corrupt) > 1e-2 * (1 + Math.abs(theirs.clean)))
    throw new Error(`the metrics differ from TF.js's: ours ${ours.clean}, ${ours.corrupt}; TF.js ${theirs.clean}, ${theirs.corrupt}`);
  const times = await timeInterleaved(subjects, { rounds: QUICK ? 3 : 7, sampleMs: 200, warmMs: QUICK ? 300 : 1000, warmCalls: 2, consume: (r) => r });
  // the patched runs of 'heads': 2 whole runs, then per cell the blocks from its layer up
  let blocks = 2 * L;
  for (let l = 0; l < L; l++) blocks += H * (L - l);
  const tfSeconds = times[1] ? (times[1].best / 1000) * (blocks / L) : NaN;
  for (const t of times) console.log(`   one forward of ${N} tokens: ${t.name.padEnd(26)} best ${fmt(t.best, 0)} ms, median ${fmt(t.ms, 0)} ms`);
  console.log('  targets:');
  console.log(`  exact patching, 144 heads <= ${TARGETS.heads} s              ${fmt(heads.seconds, 1)} s   ${verdict(heads.seconds <= TARGETS.heads)}  (${blocks} blocks run; TF.js's forward priced for them: ${tf.error ? `unavailable (${tf.error.message})` : `${fmt(tfSeconds, 1)} s, ours ${fmt(tfSeconds / heads.seconds)}×`})`);
  console.log(`  exact patching, every block input (${L} x ${N})       ${fmt(resid.seconds, 1)} s   (no target)`);
  console.log(`  compositionScores <= ${TARGETS.composition} s                      ${fmt(comp.seconds, 1)} s   ${verdict(comp.seconds <= TARGETS.composition)}`);
  console.log(`  copyingScores <= ${TARGETS.copying} s                          ${fmt(copy.seconds, 1)} s   ${verdict(copy.seconds <= TARGETS.copying)}`);
  console.log(`  logitAttribution <= ${TARGETS.attribution} s                     ${fmt(attribution.seconds, 2)} s   ${verdict(attribution.seconds <= TARGETS.attribution)}`);
  const back = backTimes[0].best / 1000;
  const tfBack = backTimes[1] ? backTimes[1].best / 1000 : NaN;
  console.log(`  attribution patching, 144 heads <= ${TARGETS.attributionPatching} s         ${fmt(back, 2)} s   ${verdict(back <= TARGETS.attributionPatching)}  (TF.js's two forwards and backward: ${tf.error ? `unavailable (${tf.error.message})` : `${fmt(tfBack, 2)} s, ours ${fmt(tfBack / back)}×`})`);
  for (const t of backTimes) console.log(`   attribution patching: ${t.name.padEnd(26)} best ${fmt(t.best, 0)} ms, median ${fmt(t.ms, 0)} ms`);
  m.destroy();
  process.exit(0);
}

await main();
