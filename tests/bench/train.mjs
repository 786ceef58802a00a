// npm run bench (part 2): seq2seq training throughput and time to accuracy.
//
// Throughput: the model of TensorFlow.js's own date-conversion-attention
// example (tfjs-examples/date-conversion-attention/model.js): LSTM encoder
// and decoder of 64 units, character embedding 64, input length 12, output
// length 10, Luong dot attention, [context; decoder state] -> Dense(64, tanh)
// -> softmax over 13 symbols, batch 128, Adam. Measured in one run for our
// SIMD and scalar WASM builds, native C, and the same model in TensorFlow.js
// (tfjs-layers) on its WASM backend (XNNPACK, one thread).
// Threads: the same model on one thread (the single-thread SIMD build) and
// on two (the threaded build; each batch split into one shard per thread),
// and the threaded build with every region on the caller (both shards on one
// thread: the same arithmetic as two threads), interleaved best-of rounds.
// Time to accuracy: `dates` to >= 99% test sequence accuracy, training on one
// core in Node, evaluated every round.
//   node tests/bench/train.mjs [--quick] [--threads]
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadEngine } from '../../web/engine/index.js';
import { mulberry32 } from '../lib/random.mjs';
import { loadTfWasm } from '../lib/tfjs.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const QUICK = process.argv.includes('--quick');
const THREADS_ONLY = process.argv.includes('--threads'); // the threads comparison alone
const B = 128;
const N_IN = 12;
const N_OUT = 10; // 9 digits + EOS: TF.js's example also has 10 output steps
const IN_VOCAB = 36; // PAD + 35 symbols
const OUT_VOCAB = 13; // PAD, BOS, EOS + 10 digits
const TARGET_RATIO = 5;
const TARGET_SECONDS = 60;
const TARGET_THREADS = 1.7; // 2 threads vs one, on a 2-core machine

const fmt = (x, d = 1) => (Number.isFinite(x) ? x.toFixed(d) : '-');

// ---- ours through the JS API -------------------------------------------------------------

/** The same shapes through the public API: a 'pairs' task of random 12-symbol inputs and 9-digit outputs. */
function benchPairs() {
  const next = mulberry32(7);
  const symbols = 'abcdefghijklmnopqrstuvwxyz012345678';
  const lines = [];
  for (let i = 0; i < 4000; i++) {
    let a = '';
    let b = '';
    for (let j = 0; j < N_IN; j++) a += symbols[Math.floor(next() * symbols.length)];
    for (let j = 0; j < N_OUT - 1; j++) b += String(Math.floor(next() * 10));
    lines.push(`${a}\t${b}`);
  }
  return lines.join('\n');
}

/** The benchmark model on an engine, warmed up. */
function benchModel(engine, pairs) {
  const m = engine.createSeq2Seq({ task: 'pairs', pairs, cell: 'lstm', embed: 64, hidden: 64, attention: 'dot', batch: B, seed: 1 });
  if (m.config.inputVocabulary !== IN_VOCAB || m.config.outputVocabulary !== OUT_VOCAB || m.config.maxInput !== N_IN || m.config.maxOutput !== N_OUT) {
    throw new Error(`benchmark model has the wrong shape: ${JSON.stringify(m.config)}`);
  }
  m.train({ steps: 3, batch: B, lr: 0.001, clip: 0 }); // warm-up
  return m;
}

/** Seconds of `steps` training steps, and the last loss. */
function timeSteps(m, steps) {
  const t0 = performance.now();
  const r = m.train({ steps, batch: B, lr: 0.001, clip: 0 });
  return { seconds: (performance.now() - t0) / 1000, loss: r.losses[steps - 1] };
}

const throughput = ({ seconds, loss }, steps) => ({ examplesPerSecond: (steps * B) / seconds, msPerStep: (1000 * seconds) / steps, loss });

async function ours(simd, pairs, steps) {
  const engine = await loadEngine({ simd, threads: 1 });
  const m = benchModel(engine, pairs);
  const r = throughput(timeSteps(m, steps), steps);
  m.destroy();
  return r;
}

/**
 * One thread (the single-thread SIMD build), two threads (the threaded
 * build) and the threaded build with both shards on the caller, in
 * interleaved rounds of `steps` steps; the best round of each.
 */
async function threads(pairs, steps, rounds) {
  const one = await loadEngine({ threads: 1 });
  const two = await loadEngine({ threads: 2 });
  const serial = await loadEngine({ threads: 2 });
  try {
    if (two.threads !== 2) return { skipped: `no threads here (${two.threadsReason})` };
    serial.setParallelMinWork(Number.MAX_VALUE); // every region runs on the caller
    const runs = { one: { engine: one }, two: { engine: two }, serial: { engine: serial } };
    for (const r of Object.values(runs)) {
      r.model = benchModel(r.engine, pairs);
      r.best = { seconds: Infinity };
    }
    for (let i = 0; i < rounds; i++) {
      for (const r of Object.values(runs)) {
        const t = timeSteps(r.model, steps);
        if (t.seconds < r.best.seconds) r.best = t;
      }
    }
    for (const r of Object.values(runs)) r.model.destroy();
    return Object.fromEntries(Object.entries(runs).map(([k, r]) => [k, throughput(r.best, steps)]));
  } finally {
    two.destroy();
    serial.destroy();
  }
}

function native(steps) {
  if (spawnSync('gcc', ['--version']).status !== 0) return { skipped: 'gcc not installed' };
  const out = `${ROOT}build/tools/train_native`;
  execFileSync('make', ['-s', 'build/tools/train_native'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  const line = execFileSync(out, [String(steps)], { encoding: 'utf8' });
  const m = /examples\/s ([\d.]+) \(ms\/step ([\d.]+), loss ([\d.]+)/.exec(line);
  if (!m) throw new Error(`unexpected output from train_native: ${line}`);
  return { examplesPerSecond: Number(m[1]), msPerStep: Number(m[2]), loss: Number(m[3]) };
}

// ---- TensorFlow.js ---------------------------------------------------------------------------

async function loadTf() {
  const { tf } = await loadTfWasm();
  // The WASM backend has no UnsortedSegmentSum, which the embedding gradient
  // uses: a small JS kernel on the backend's heap views.
  tf.registerKernel({
    kernelName: 'UnsortedSegmentSum',
    backendName: 'wasm',
    kernelFunc: ({ inputs, backend, attrs }) => {
      const { x, segmentIds } = inputs;
      const n = attrs.numSegments;
      const inner = x.shape.slice(1).reduce((a, b) => a * b, 1);
      const xs = backend.typedArrayFromHeap(x);
      const ids = backend.typedArrayFromHeap(segmentIds);
      const out = backend.makeOutput([n, ...x.shape.slice(1)], x.dtype);
      const o = backend.typedArrayFromHeap(out);
      o.fill(0);
      for (let i = 0; i < ids.length; i++) {
        const s = ids[i];
        if (s < 0 || s >= n) continue;
        for (let k = 0; k < inner; k++) o[s * inner + k] += xs[i * inner + k];
      }
      return out;
    },
  });
  return tf;
}

/** tfjs-examples/date-conversion-attention/model.js, createModel(). */
function tfModel(tf) {
  const encoderInput = tf.input({ shape: [N_IN] });
  const decoderInput = tf.input({ shape: [N_OUT] });
  let encoder = tf.layers.embedding({ inputDim: IN_VOCAB, outputDim: 64, inputLength: N_IN, maskZero: true }).apply(encoderInput);
  encoder = tf.layers.lstm({ units: 64, returnSequences: true }).apply(encoder);
  const encoderLast = new GetLastTimestepLayer(tf).apply(encoder);
  let decoder = tf.layers.embedding({ inputDim: OUT_VOCAB, outputDim: 64, inputLength: N_OUT, maskZero: true }).apply(decoderInput);
  decoder = tf.layers.lstm({ units: 64, returnSequences: true }).apply(decoder, { initialState: [encoderLast, encoderLast] });
  let attention = tf.layers.dot({ axes: [2, 2] }).apply([decoder, encoder]);
  attention = tf.layers.activation({ activation: 'softmax', name: 'attention' }).apply(attention);
  const context = tf.layers.dot({ axes: [2, 1] }).apply([attention, encoder]);
  const combined = tf.layers.concatenate().apply([context, decoder]);
  let output = tf.layers.timeDistributed({ layer: tf.layers.dense({ units: 64, activation: 'tanh' }) }).apply(combined);
  output = tf.layers.timeDistributed({ layer: tf.layers.dense({ units: OUT_VOCAB, activation: 'softmax' }) }).apply(output);
  const model = tf.model({ inputs: [encoderInput, decoderInput], outputs: output });
  model.compile({ loss: 'categoricalCrossentropy', optimizer: 'adam' });
  return model;
}

let GetLastTimestepLayer;

async function tfjs(steps) {
  const tf = await loadTf();
  // the example's own custom layer: the encoder output at the last time step
  GetLastTimestepLayer = class extends tf.layers.Layer {
    constructor() {
      super({ name: `getLastTimestep${Math.random().toString(36).slice(2)}` });
      this.supportsMasking = true;
    }
    computeOutputShape(inputShape) {
      return [inputShape[0], inputShape[2]];
    }
    computeMask() {
      return null;
    }
    call(input) {
      const x = Array.isArray(input) ? input[0] : input;
      return x.gather([x.shape[1] - 1], 1).squeeze([1]);
    }
    static get className() {
      return 'GetLastTimestepLayer';
    }
  };
  const model = tfModel(tf);
  const next = mulberry32(3);
  const enc = tf.tensor2d(Array.from({ length: B * N_IN }, () => 1 + Math.floor(next() * (IN_VOCAB - 1))), [B, N_IN]);
  const targets = Array.from({ length: B * N_OUT }, (_, i) => (i % N_OUT === N_OUT - 1 ? 2 : 3 + Math.floor(next() * 10)));
  const dec = tf.tensor2d(targets.map((_, i) => (i % N_OUT === 0 ? 1 : targets[i - 1])), [B, N_OUT]);
  const y = tf.oneHot(tf.tensor1d(targets, 'int32'), OUT_VOCAB).reshape([B, N_OUT, OUT_VOCAB]);
  for (let i = 0; i < 2; i++) await model.trainOnBatch([enc, dec], y); // warm-up
  const t0 = performance.now();
  let loss;
  for (let i = 0; i < steps; i++) loss = await model.trainOnBatch([enc, dec], y);
  const seconds = (performance.now() - t0) / 1000;
  return { examplesPerSecond: (steps * B) / seconds, msPerStep: (1000 * seconds) / steps, loss: Number(loss), version: tf.version_core };
}

// ---- time to accuracy ------------------------------------------------------------------------

async function timeToAccuracy() {
  const engine = await loadEngine({ threads: 1 });
  const options = { task: 'dates', cell: 'gru', embed: 32, hidden: 64, attention: 'dot', batch: 64, seed: 1 };
  const m = engine.createSeq2Seq(options);
  let train = 0;
  const t0 = performance.now();
  let acc = 0;
  while (train < TARGET_SECONDS) {
    train += m.train({ steps: 50, batch: 64, lr: 0.01, clip: 5 }).seconds;
    acc = m.evaluate({ split: 'test', count: 1000 }).sequenceAccuracy;
    if (acc >= 0.99) break;
  }
  const total = (performance.now() - t0) / 1000;
  const steps = m.steps;
  m.destroy();
  return { options, train, total, steps, acc };
}

// ---- report ------------------------------------------------------------------------------------

async function reportThreads(pairs) {
  console.log('\n== threads: the same model, batch 128 split into one shard per thread (interleaved, best of rounds)');
  const cores = os.availableParallelism?.() ?? os.cpus().length;
  console.log(`   machine load before (1-minute average): ${os.loadavg()[0].toFixed(2)} on ${cores} cores`);
  const th = await threads(pairs, QUICK ? 3 : 10, QUICK ? 2 : 5);
  if (th.skipped) {
    console.log(`  skipped: ${th.skipped}`);
    return th;
  }
  for (const [name, r] of [['1 thread (SIMD build)', th.one], ['threaded build, both shards on 1 thread', th.serial], ['2 threads (threaded build)', th.two]]) {
    console.log(`  ${name.padEnd(42)} ${fmt(r.msPerStep, 2).padStart(7)} ms/step  ${fmt(r.examplesPerSecond, 0).padStart(6)} examples/s`);
  }
  console.log(`  2 threads vs 1: ${fmt(th.one.msPerStep / th.two.msPerStep, 2)}× (vs the threaded build on one thread: ${fmt(th.serial.msPerStep / th.two.msPerStep, 2)}×)`);
  console.log(`   machine load after: ${os.loadavg()[0].toFixed(2)}`);
  return th;
}

function reportThreadsTarget(th) {
  if (th.skipped) return;
  const ratio = th.one.msPerStep / th.two.msPerStep;
  console.log(`  training, 2 threads >= ${TARGET_THREADS}× one thread          ${fmt(ratio, 2)}×   ${ratio >= TARGET_THREADS ? 'PASS' : 'MISS'}`);
}

export async function runTrainingBench() {
  const steps = QUICK ? 5 : 30;
  console.log('\n== seq2seq training throughput: TF.js date-conversion-attention model');
  console.log(`   LSTM 64 encoder + decoder, embedding 64, input ${N_IN}, output ${N_OUT}, dot attention, Dense(64, tanh), ${OUT_VOCAB} symbols, batch ${B}, Adam`);
  const pairs = benchPairs();
  const rows = [];
  rows.push(['ours, SIMD WASM', await ours(true, pairs, steps)]);
  rows.push(['ours, scalar WASM', await ours(false, pairs, Math.max(3, steps / 3))]);
  rows.push(['ours, native C (gcc -O3)', native(steps)]);
  let tf;
  try {
    tf = await tfjs(QUICK ? 2 : 6);
    rows.push([`TF.js ${tf.version} WASM (tfjs-layers)`, tf]);
  } catch (err) {
    rows.push(['TF.js WASM (tfjs-layers)', { skipped: err.message }]);
  }
  const base = rows[0][1].examplesPerSecond;
  console.log('  implementation                     ms/step  examples/s  vs ours (SIMD)');
  for (const [name, r] of rows) {
    if (r.skipped) {
      console.log(`  ${name.padEnd(34)} skipped: ${r.skipped}`);
      continue;
    }
    console.log(`  ${name.padEnd(34)} ${fmt(r.msPerStep).padStart(7)}  ${fmt(r.examplesPerSecond, 0).padStart(10)}  ${fmt(base / r.examplesPerSecond, 2).padStart(8)}× its time`);
  }
  const th = await reportThreads(pairs);
  console.log('\n== time to accuracy: dates to >= 99% test sequence accuracy (SIMD WASM, one core)');
  const t = await timeToAccuracy();
  console.log(`  ${JSON.stringify(t.options)}, Adam lr 0.01, batch 64`);
  console.log(`  reached ${(t.acc * 100).toFixed(1)}% after ${t.steps} steps: ${fmt(t.train)} s of training (${fmt(t.total)} s with evaluations)`);
  console.log('\ntargets (a MISS is reported, not an error):');
  if (tf && !tf.skipped) {
    const ratio = base / tf.examplesPerSecond;
    console.log(`  ours (SIMD WASM) vs TF.js WASM >= ${TARGET_RATIO}× examples/s   ${fmt(ratio, 2)}×   ${ratio >= TARGET_RATIO ? 'PASS' : 'MISS'}`);
  }
  reportThreadsTarget(th);
  const met = t.acc >= 0.99 && t.train <= TARGET_SECONDS;
  console.log(`  dates >= 99% within ${TARGET_SECONDS} s of training        ${fmt(t.train)} s   ${met ? 'PASS' : 'MISS'}`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  if (!existsSync(`${ROOT}web/wasm/attnlab-simd.wasm`)) {
    console.error('attnlab: build the engine first (make wasm, or npm run bench)');
    process.exit(1);
  }
  const run = THREADS_ONLY ? async () => reportThreadsTarget(await reportThreads(benchPairs())) : runTrainingBench;
  run().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
