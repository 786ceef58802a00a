// npm run bench (part 5): the transformer's training speed. The default
// model (task 'induction', 2 layers, 4 heads, dModel 64, dFF 256, context 64,
// learned positions, batch 32, AdamW with clipping) trained by ours and by
// the same model written in TensorFlow.js ops on its WASM backend (XNNPACK,
// one thread): token embedding, learned positions, pre-LayerNorm blocks of
// causal multi-head attention and a GELU MLP with residuals, a final
// LayerNorm, the output layer, softmax cross-entropy, Adam. Steps/s of each,
// interleaved best-of rounds (the machine is shared: drift hits all alike;
// the best by CPU time is printed beside the clock's for one thread).
// Then the share of the one-core WASM SIMD peak (tests/bench/peak.mjs, sampled
// in the same run) that the step's matrix products reach, their FLOPs per
// step (forward and both backward products of each, attention's T x T
// products in full, as the kernels compute them) over their own time (the
// same shapes timed alone on the engine's kernels, tests/bench/products.c),
// and over the whole step's time (GELU, LayerNorm, softmax, AdamW count
// against it). And 2
// threads (the threaded build, each batch split into one shard per thread)
// against one. A miss is printed as MISS; the bench does not fail on it.
//   node tests/bench/transformer-speed.mjs [--quick] [--threads]
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { loadEngine } from '../../web/engine/index.js';
import { mulberry32 } from '../lib/random.mjs';
import { loadTfWasm } from '../lib/tfjs.mjs';
import { loadPeak, peakTogether } from './peak.mjs';
import { median } from './timing.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const QUICK = process.argv.includes('--quick');
const THREADS_ONLY = process.argv.includes('--threads'); // no TF.js: ours on 1 and 2 threads, for a quiet minute
const MODEL = { task: 'induction', layers: 2, heads: 4, dModel: 64, dFF: 256, context: 64, positional: 'learned', batch: 32, seed: 1 };
const TRAIN = { steps: 1, lr: 1e-3, weightDecay: 0, warmup: 0, clip: 1 };
const TARGETS = { vsTf: 5, ofPeak: 0.5, threads: 1.7 };
const fmt = (x, d = 2) => (Number.isFinite(x) ? x.toFixed(d) : '-');
const verdict = (ok) => (ok ? 'PASS' : 'MISS');

/**
 * The matrix products of one training step as src/models/transformer.c and
 * the layers it calls make them: [what, kind (0 A B, 1 A^T B, 2 A B^T), M, N,
 * K, lda, ldb, ldc, calls a step]. Each forward product has two in the
 * backward (dA and dB); attention's are per sequence and head, T x T in full.
 */
function stepProducts({ layers: L, heads: H, dModel: C, dFF: F, batch: B }, T, V) {
  const N = B * T, D = C / H, BH = B * H, C3 = 3 * C;
  const linear = (what, IC, OC, count) => [
    [`${what} forward`, 0, N, OC, IC, IC, OC, OC, count],
    [`${what} dx`, 2, N, IC, OC, OC, OC, IC, count],
    [`${what} dW`, 1, IC, OC, N, IC, OC, OC, count],
  ];
  return [
    ...linear('qkv', C, C3, L),
    ['Q K^T', 2, T, T, D, C3, C3, T, L * BH], ['P V', 0, T, D, T, T, C3, C, L * BH],
    ['dP = dY V^T', 2, T, T, D, C, C3, T, L * BH], ['dV = P^T dY', 1, T, D, T, T, C, C3, L * BH],
    ['dQ = dS K', 0, T, D, T, T, C3, C3, L * BH], ['dK = dS^T Q', 1, T, D, T, T, C3, C3, L * BH],
    ...linear('proj', C, C, L),
    ...(F ? [...linear('fc', C, F, L), ...linear('fcproj', F, C, L)] : []),
    ...linear('output', C, V, 1),
  ];
}

const productFlops = (products) => products.reduce((s, [, , M, N, K, , , , count]) => s + 2 * M * N * K * count, 0);

/**
 * The step's products alone on the engine's kernels (tests/bench/products.c),
 * each shape's best of `rounds` samples of ~sampleMs, by the clock and by CPU
 * time: ms a step.
 */
async function timeProducts(products, { rounds, sampleMs }) {
  const wasm = path.join(ROOT, 'build/bench/products.wasm');
  const made = spawnSync('make', ['-s', 'build/bench/products.wasm'], { cwd: ROOT, stdio: 'inherit' });
  if (made.status !== 0) throw new Error('make build/bench/products.wasm failed');
  const { instance } = await WebAssembly.instantiate(readFileSync(wasm), {
    env: { emscripten_notify_memory_growth() {} },
    wasi_snapshot_preview1: { proc_exit() {}, fd_write: () => 0, fd_close: () => 0, fd_seek: () => 0 },
  });
  const e = instance.exports;
  e._initialize?.();
  const size = Math.max(...products.flatMap(([, , M, N, K, lda, ldb, ldc]) => [Math.max(M, K) * Math.max(lda, K), K * Math.max(ldb, N), M * ldc]));
  if (!e.products_init(size)) throw new Error('products.wasm: out of memory');
  let wall = 0, cpu = 0;
  for (const [, kind, M, N, K, lda, ldb, ldc, count] of products) {
    const run = (reps) => e.products_run(kind, M, N, K, lda, ldb, ldc, reps);
    const t0 = performance.now();
    run(1);
    const reps = Math.max(1, Math.round(sampleMs / Math.max(performance.now() - t0, 1e-3)));
    let bestWall = Infinity, bestCpu = Infinity;
    for (let r = 0; r < rounds; r++) {
      const w0 = performance.now(), c0 = process.cpuUsage();
      run(reps);
      const c = process.cpuUsage(c0);
      bestWall = Math.min(bestWall, (performance.now() - w0) / reps);
      bestCpu = Math.min(bestCpu, (c.user + c.system) / 1000 / reps);
    }
    wall += bestWall * count;
    cpu += bestCpu * count;
  }
  return { wall, cpu };
}

// ---- the same model in TensorFlow.js ops -----------------------------------------------------

/**
 * The model as tf ops, its weights drawn like ours (uniform of deviation 0.02,
 * residual projections over sqrt(2L)), and one training step: the loss over
 * every position of a batch of random tokens (the scored positions only
 * change which rows count, not the work), gradients by tf.variableGrads,
 * clipped to a global norm of 1, Adam (0.9, 0.99). Written for the WASM
 * backend's fast paths: dense layers as tf.fused.matMul with their bias, K
 * transposed before Q K^T. The embedding is a one-hot product (its gradient a
 * product too: the WASM backend has no UnsortedSegmentSum for a gather's).
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
  const dense = (x, W, b) => tf.fused.matMul({ a: x, b: W, bias: b }); // XNNPACK's fused product + bias
  const heads = (x) => x.reshape([B, T, H, D]).transpose([0, 2, 1, 3]); // (B, H, T, D)
  const forward = (onehot) => {
    let x = tf.matMul(onehot, w.wte).reshape([B, T, C]).add(w.wpe).reshape([N, C]);
    for (const k of w.blocks) {
      const qkv = dense(layerNorm(x, k.ln1w, k.ln1b), k.qkvw, k.qkvb);
      const [q, kk, v] = tf.split(qkv, 3, 1).map(heads);
      // K transposed explicitly: matMul's transposeB flag leaves XNNPACK's fast path (tests/bench/README.md)
      const att = tf.softmax(tf.matMul(q, kk.transpose([0, 1, 3, 2])).mul(1 / Math.sqrt(D)).add(mask));
      const y = tf.matMul(att, v).transpose([0, 2, 1, 3]).reshape([N, C]);
      x = x.add(dense(y, k.projw, k.projb));
      x = x.add(dense(gelu(dense(layerNorm(x, k.ln2w, k.ln2b), k.fcw, k.fcb)), k.fcprojw, k.fcprojb));
    }
    return dense(layerNorm(x, w.lnfw, w.lnfb), w.outw, w.outb);
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

/**
 * Interleaved rounds of `subjects` (each warmed up first), in rotating order
 * so drift on a shared machine hits them alike; each sample runs enough
 * steps to last `sampleMs`. Per subject, ms per step: the best and the median
 * sample by the clock, and the best by this process's CPU time (a thread the
 * machine's other work pauses costs no CPU time; with two threads it adds
 * both threads' time, so it is shown for one thread only).
 */
function timeSteps(subjects, { rounds, sampleMs, warmMs }) {
  const state = subjects.map((s) => {
    let calls = 0;
    const t0 = performance.now();
    while (calls < 3 || performance.now() - t0 < warmMs) {
      s.call();
      calls++;
    }
    return { batch: Math.max(1, Math.round((sampleMs * calls) / (performance.now() - t0))), wall: [], cpu: [] };
  });
  for (let r = 0; r < rounds; r++) {
    for (let k = 0; k < subjects.length; k++) {
      const i = (k + r) % subjects.length, st = state[i];
      const t0 = performance.now(), c0 = process.cpuUsage();
      for (let c = 0; c < st.batch; c++) subjects[i].call();
      const cpu = process.cpuUsage(c0);
      st.wall.push((performance.now() - t0) / st.batch);
      st.cpu.push((cpu.user + cpu.system) / 1000 / st.batch);
    }
  }
  return subjects.map((s, i) => ({ name: s.name, best: Math.min(...state[i].wall), ms: median(state[i].wall), cpu: Math.min(...state[i].cpu) }));
}

// ---- the run -------------------------------------------------------------------------------

async function main() {
  const one = await loadEngine({ threads: 1 });
  const two = await loadEngine({ threads: 2 });
  const models = { one: await one.createTransformer(MODEL) };
  if (two.threads === 2) models.two = await two.createTransformer(MODEL);
  const { sequenceLength: T, vocabulary, parameters } = models.one.config;
  const V = vocabulary.length;
  const products = stepProducts(MODEL, T, V);
  const flops = productFlops(products);
  console.log('\n== transformer training speed: the default model, one step of batch 32');
  console.log(`   ${JSON.stringify(MODEL)}: ${parameters} parameters, sequences of ${T}, ${V} tokens; ${fmt(flops / 1e9, 3)} GFLOP of matrix products a step`);
  console.log(`   machine load before (1-minute average): ${os.loadavg()[0].toFixed(2)} on ${os.availableParallelism?.() ?? os.cpus().length} cores`);
  const peak = await loadPeak();
  const peakSamples = [], peakCpu = [];
  const samplePeak = (count) => { // GFLOP/s by the clock and by this process's CPU time
    for (let i = 0; i < count; i++) {
      const t0 = performance.now(), c0 = process.cpuUsage();
      const g = peak.samples(1)[0];
      const wall = performance.now() - t0, cpu = process.cpuUsage(c0);
      peakSamples.push(g);
      peakCpu.push((g * wall) / ((cpu.user + cpu.system) / 1000));
    }
  };
  samplePeak(5);

  let tf = null;
  if (!THREADS_ONLY) try {
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
  const rows = timeSteps(subjects, { rounds: QUICK ? 3 : 7, sampleMs: QUICK ? 300 : 1500, warmMs: QUICK ? 300 : 1500 });
  const alone = await timeProducts(products, { rounds: QUICK ? 3 : 5, sampleMs: QUICK ? 20 : 60 });
  samplePeak(5);
  const peakG = median(peakSamples), peakCpuG = median(peakCpu);
  const by = Object.fromEntries(subjects.map((s, i) => [s.key, rows[i]]));
  console.log(`   WASM SIMD peak, one core: median ${fmt(peakG, 1)} GFLOP/s by the clock, ${fmt(peakCpuG, 1)} by CPU time (5 samples before and 5 after the runs)`);
  console.log(`  ${'implementation'.padEnd(44)}${'best ms'.padStart(9)}${'median'.padStart(9)}${'CPU ms'.padStart(9)}${'steps/s'.padStart(9)}${'GFLOP/s'.padStart(9)}${'% peak'.padStart(8)}`);
  for (const [i, r] of rows.entries()) {
    const g = flops / (r.best * 1e6);
    const cpu = subjects[i].key === 'two' ? '-' : fmt(r.cpu, 1);
    console.log(`  ${r.name.padEnd(44)}${fmt(r.best, 1).padStart(9)}${fmt(r.ms, 1).padStart(9)}${cpu.padStart(9)}${fmt(1000 / r.best, 2).padStart(9)}${fmt(g, 1).padStart(9)}${(fmt((100 * g) / peakG, 1) + '%').padStart(8)}`);
  }
  const aloneG = flops / (alone.wall * 1e6), aloneCpuG = flops / (alone.cpu * 1e6);
  console.log(`   the step's ${products.length} kinds of product alone on the engine's kernels (tests/bench/products.c), best of each: ` +
    `${fmt(alone.wall, 1)} ms a step (${fmt(alone.cpu, 1)} ms CPU), ${fmt(aloneG, 1)} GFLOP/s, ${fmt((100 * aloneG) / peakG, 1)}% of the peak ` +
    `(by CPU time ${fmt((100 * aloneCpuG) / peakCpuG, 1)}%); ${fmt((100 * alone.cpu) / by.one.cpu, 0)}% of ours' step by CPU time`);
  let ceiling = NaN;
  if (by.two) {
    const together = await peakTogether(2);
    ceiling = together.sum / peakG;
    console.log(`   the peak kernel on 2 cores at once: ${together.each.map((g) => fmt(g, 1)).join(' + ')} GFLOP/s, ${fmt(ceiling, 2)}× one core: the most 2 threads can give here now`);
  }
  console.log(`   machine load after: ${os.loadavg()[0].toFixed(2)}`);

  console.log('\ntargets (best-of times, interleaved; a MISS is reported, not an error):');
  const vsTf = by.tf ? by.tf.best / by.one.best : NaN;
  console.log(`  ours (1 thread) >= ${TARGETS.vsTf}× TF.js WASM steps/s          ${by.tf ? `${fmt(vsTf)}×   ${verdict(vsTf >= TARGETS.vsTf)}  (by CPU time ${fmt(by.tf.cpu / by.one.cpu)}×)` : `TF.js ${THREADS_ONLY ? 'skipped (--threads)' : 'unavailable'}`}`);
  const ofPeak = aloneG / peakG;
  console.log(`  matrix products >= ${TARGETS.ofPeak * 100}% of the one-core peak          ${fmt(100 * ofPeak, 1)}%   ${verdict(ofPeak >= TARGETS.ofPeak)}  (by CPU time ${fmt((100 * aloneCpuG) / peakCpuG, 1)}%)`);
  const stepOfPeak = flops / (by.one.best * 1e6) / peakG;
  console.log(`    and their FLOPs over the whole step's time     ${fmt(100 * stepOfPeak, 1)}%   ${verdict(stepOfPeak >= TARGETS.ofPeak)}  (by CPU time ${fmt((100 * flops) / (by.one.cpu * 1e6) / peakCpuG, 1)}%)`);
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
