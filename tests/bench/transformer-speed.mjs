// npm run bench (part 5): the transformer's training speed. The default
// model (task 'induction', 2 layers, 4 heads, dModel 64, dFF 256, context 64,
// learned positions, batch 32, AdamW with clipping) trained by ours and by
// the same model written in TensorFlow.js ops on its WASM backend (XNNPACK,
// one thread): token embedding, learned positions, pre-LayerNorm blocks of
// causal multi-head attention and a GELU MLP with residuals, a final
// LayerNorm, the output layer, softmax cross-entropy, Adam. Steps/s of each,
// interleaved best-of rounds (the machine is shared: drift hits all alike).
// Then the share of the one-core WASM SIMD peak (tests/bench/peak.mjs, sampled
// in the same run) that the step's matrix products reach: their FLOPs per
// step (forward and both backward products of each, attention's T x T
// products in full, as the kernels compute them) over the whole step's time,
// so GELU, LayerNorm, softmax and the optimiser count against it. And 2
// threads (the threaded build, each batch split into one shard per thread)
// against one. A miss is printed as MISS; the bench does not fail on it.
//   node tests/bench/transformer-speed.mjs [--quick]
import os from 'node:os';
import path from 'node:path';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { loadEngine } from '../../web/engine/index.js';
import { mulberry32 } from '../lib/random.mjs';
import { loadTfWasm } from '../lib/tfjs.mjs';
import { loadPeak, peakTogether } from './peak.mjs';
import { median, timeInterleaved } from './timing.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const QUICK = process.argv.includes('--quick');
const MODEL = { task: 'induction', layers: 2, heads: 4, dModel: 64, dFF: 256, context: 64, positional: 'learned', batch: 32, seed: 1 };
const TRAIN = { steps: 1, lr: 1e-3, weightDecay: 0, warmup: 0, clip: 1 };
const TARGETS = { vsTf: 5, ofPeak: 0.5, threads: 1.7 };
const fmt = (x, d = 2) => (Number.isFinite(x) ? x.toFixed(d) : '-');
const verdict = (ok) => (ok ? 'PASS' : 'MISS');

/** FLOPs of one training step's matrix products: forward, and dA and dB of each in the backward. */
function matmulFlops({ layers: L, heads: H, dModel: C, dFF: F, batch: B }, T, V) {
  const N = B * T;
  const perLayer = 2 * N * C * 3 * C + 2 * 2 * B * T * T * C + 2 * N * C * C + 2 * 2 * N * C * F; // qkv, QK^T and PV over H heads of C/H, proj, MLP
  return 3 * (L * perLayer + 2 * N * C * V);
}

// ---- the same model in TensorFlow.js ops -----------------------------------------------------

/**
 * The model as tf ops, its weights drawn like ours (uniform of deviation 0.02,
 * residual projections over sqrt(2L)), and one training step: the loss over
 * every position of a batch of random tokens (the scored positions only
 * change which rows count, not the work), gradients by tf.variableGrads,
 * clipped to a global norm of 1, Adam (0.9, 0.99). The embedding is a one-hot
 * product (its gradient a product too: the WASM backend has no
 * UnsortedSegmentSum for a gather's).
 */
function tfTransformer(tf, { layers: L, heads: H, dModel: C, dFF: F, batch: B }, T, V) {
  const D = C / H, N = B * T;
  const next = mulberry32(11);
  const a = 0.02 * Math.sqrt(3);
  const uniform = (shape, scale = a) => tf.variable(tf.tensor(Float32Array.from({ length: shape.reduce((x, y) => x * y, 1) }, () => scale * (2 * next() - 1)), shape));
  const ones = (n) => tf.variable(tf.ones([n]));
  const zeros = (n) => tf.variable(tf.zeros([n]));
  const w = { wte: uniform([V, C]), wpe: uniform([T, C]), lnfw: ones(C), lnfb: zeros(C), outw: uniform([C, V]), outb: zeros(V), blocks: [] };
  for (let l = 0; l < L; l++) {
    w.blocks.push({
      ln1w: ones(C), ln1b: zeros(C), qkvw: uniform([C, 3 * C]), qkvb: zeros(3 * C), projw: uniform([C, C], a / Math.sqrt(2 * L)), projb: zeros(C),
      ln2w: ones(C), ln2b: zeros(C), fcw: uniform([C, F]), fcb: zeros(F), fcprojw: uniform([F, C], a / Math.sqrt(2 * L)), fcprojb: zeros(C),
    });
  }
  const variables = [w.wte, w.wpe, w.lnfw, w.lnfb, w.outw, w.outb, ...w.blocks.flatMap((b) => Object.values(b))];
  const parameters = variables.reduce((s, v) => s + v.size, 0);
  const mask = tf.tensor2d(Float32Array.from({ length: T * T }, (_, i) => (i % T <= Math.floor(i / T) ? 0 : -1e9)), [T, T]);
  const layerNorm = (x, g, b) => {
    const { mean, variance } = tf.moments(x, -1, true);
    return x.sub(mean).mul(tf.rsqrt(variance.add(1e-5))).mul(g).add(b);
  };
  const gelu = (x) => x.mul(0.5).mul(tf.tanh(x.add(x.pow(3).mul(0.044715)).mul(Math.sqrt(2 / Math.PI))).add(1));
  const heads = (x) => x.reshape([B, T, H, D]).transpose([0, 2, 1, 3]); // (B, H, T, D)
  const forward = (onehot) => {
    let x = tf.matMul(onehot, w.wte).reshape([B, T, C]).add(w.wpe).reshape([N, C]);
    for (const k of w.blocks) {
      const qkv = tf.matMul(layerNorm(x, k.ln1w, k.ln1b), k.qkvw).add(k.qkvb);
      const [q, kk, v] = tf.split(qkv, 3, 1).map(heads);
      const att = tf.softmax(tf.matMul(q, kk, false, true).mul(1 / Math.sqrt(D)).add(mask));
      const y = tf.matMul(att, v).transpose([0, 2, 1, 3]).reshape([N, C]);
      x = x.add(tf.matMul(y, k.projw).add(k.projb));
      x = x.add(tf.matMul(gelu(tf.matMul(layerNorm(x, k.ln2w, k.ln2b), k.fcw).add(k.fcb)), k.fcprojw).add(k.fcprojb));
    }
    return tf.matMul(layerNorm(x, w.lnfw, w.lnfb), w.outw).add(w.outb);
  };
  const optimizer = tf.train.adam(TRAIN.lr, 0.9, 0.99, 1e-8);
  const tokens = Int32Array.from({ length: N }, () => Math.floor(next() * V));
  const targets = Int32Array.from({ length: N }, () => Math.floor(next() * V));
  const onehot = tf.oneHot(tf.tensor1d(tokens, 'int32'), V).toFloat();
  const labels = tf.oneHot(tf.tensor1d(targets, 'int32'), V).toFloat();
  const step = () => {
    const loss = tf.tidy(() => {
      const { value, grads } = tf.variableGrads(() => tf.losses.softmaxCrossEntropy(labels, forward(onehot)), variables);
      const norm = tf.sqrt(tf.addN(Object.values(grads).map((g) => tf.sum(tf.square(g)))));
      const scale = tf.minimum(1, tf.div(TRAIN.clip, norm.add(1e-12)));
      optimizer.applyGradients(Object.fromEntries(Object.entries(grads).map(([name, g]) => [name, g.mul(scale)])));
      return value;
    });
    const out = loss.dataSync()[0];
    loss.dispose();
    return out;
  };
  return { parameters, step };
}

// ---- the run -------------------------------------------------------------------------------

async function main() {
  const one = await loadEngine({ threads: 1 });
  const two = await loadEngine({ threads: 2 });
  const models = { one: await one.createTransformer(MODEL) };
  if (two.threads === 2) models.two = await two.createTransformer(MODEL);
  const { sequenceLength: T, vocabulary, parameters } = models.one.config;
  const V = vocabulary.length;
  const flops = matmulFlops(MODEL, T, V);
  console.log('\n== transformer training speed: the default model, one step of batch 32');
  console.log(`   ${JSON.stringify(MODEL)}: ${parameters} parameters, sequences of ${T}, ${V} tokens; ${fmt(flops / 1e9, 3)} GFLOP of matrix products a step`);
  console.log(`   machine load before (1-minute average): ${os.loadavg()[0].toFixed(2)} on ${os.availableParallelism?.() ?? os.cpus().length} cores`);
  const peak = await loadPeak();
  const peakSamples = peak.samples(5);

  let tf = null;
  try {
    const info = await loadTfWasm();
    tf = { info, ...tfTransformer(info.tf, MODEL, T, V) };
    if (tf.parameters !== parameters) throw new Error(`the TF.js model has ${tf.parameters} parameters, ours ${parameters}`);
    const first = tf.step();
    console.log(`   TF.js ${info.version} WASM (${info.simd ? 'SIMD' : 'no SIMD'}, ${info.threads} thread): the same ${tf.parameters} parameters, first loss ${fmt(first, 3)} (ours ${fmt(models.one.evaluate({ count: 32 }).loss, 3)}; ln ${V} = ${fmt(Math.log(V), 3)})`);
  } catch (err) {
    console.log(`   TF.js WASM: unavailable (${err.message})`);
    tf = null;
  }

  const subjects = [{ key: 'one', name: 'ours, SIMD WASM, 1 thread', call: () => models.one.train(TRAIN).loss }];
  if (models.two) subjects.push({ key: 'two', name: 'ours, threaded build, 2 threads', call: () => models.two.train(TRAIN).loss });
  if (tf) subjects.push({ key: 'tf', name: `TF.js ${tf.info.version} WASM, 1 thread (tf ops)`, call: () => tf.step() });
  const rows = await timeInterleaved(subjects, {
    rounds: QUICK ? 3 : 7, sampleMs: QUICK ? 300 : 1500, warmMs: QUICK ? 300 : 1500, warmCalls: 3, consume: () => {},
  });
  peakSamples.push(...peak.samples(5));
  const peakG = median(peakSamples);
  const by = Object.fromEntries(subjects.map((s, i) => [s.key, rows[i]]));
  console.log(`   WASM SIMD peak, one core: median ${fmt(peakG, 1)} GFLOP/s (5 samples before and 5 after the runs)`);
  console.log(`  ${'implementation'.padEnd(44)}${'best ms'.padStart(9)}${'median'.padStart(9)}${'steps/s'.padStart(9)}${'GFLOP/s'.padStart(9)}${'% peak'.padStart(8)}`);
  for (const r of rows) {
    const g = flops / (r.best * 1e6);
    console.log(`  ${r.name.padEnd(44)}${fmt(r.best, 1).padStart(9)}${fmt(r.ms, 1).padStart(9)}${fmt(1000 / r.best, 2).padStart(9)}${fmt(g, 1).padStart(9)}${(fmt((100 * g) / peakG, 1) + '%').padStart(8)}`);
  }
  let ceiling = NaN;
  if (by.two) {
    const together = await peakTogether(2);
    ceiling = together.sum / peakG;
    console.log(`   the peak kernel on 2 cores at once: ${together.each.map((g) => fmt(g, 1)).join(' + ')} GFLOP/s, ${fmt(ceiling, 2)}× one core: the most 2 threads can give here now`);
  }
  console.log(`   machine load after: ${os.loadavg()[0].toFixed(2)}`);

  console.log('\ntargets (best-of times, interleaved; a MISS is reported, not an error):');
  const vsTf = by.tf ? by.tf.best / by.one.best : NaN;
  console.log(`  ours (1 thread) >= ${TARGETS.vsTf}× TF.js WASM steps/s          ${by.tf ? `${fmt(vsTf)}×   ${verdict(vsTf >= TARGETS.vsTf)}` : 'TF.js unavailable'}`);
  const ofPeak = flops / (by.one.best * 1e6) / peakG;
  console.log(`  matrix products >= ${TARGETS.ofPeak * 100}% of the one-core peak          ${fmt(100 * ofPeak, 1)}%   ${verdict(ofPeak >= TARGETS.ofPeak)}`);
  if (by.two) {
    const speedup = by.one.best / by.two.best;
    console.log(`  2 threads >= ${TARGETS.threads}× one thread                      ${fmt(speedup)}×   ${verdict(speedup >= TARGETS.threads)}  (of the machine's ${fmt(ceiling)}× now)`);
  } else console.log(`  2 threads: skipped (${two.threadsReason})`);
  for (const m of Object.values(models)) m.destroy();
  two.destroy();
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  if (!existsSync(`${ROOT}web/wasm/attnlab-simd.wasm`)) {
    console.error('attnlab: build the engine first (make wasm, or npm run bench)');
    process.exit(1);
  }
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
