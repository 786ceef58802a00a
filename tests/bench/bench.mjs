// npm run bench: attention forward, softmax(Q·Kᵀ/√d)·V, at several (n, d), for
//   ours (SIMD WASM), ours (scalar WASM), plain JS and TensorFlow.js (WASM backend,
//   XNNPACK, one thread), plus the machine's WASM SIMD multiply-add peak, all in
//   one run; then, at n = 1024, the threaded build on 1 and 2 threads against TF.js
//   and onnxruntime-web (WASM). See tests/bench/README.md for how to read the output.
//
// Timing: each implementation is warmed up (so V8 has tiered the WASM and JS up
// to optimised code), then timed in ROUNDS rounds that interleave the
// implementations, so drift on a shared machine hits them all alike. A sample
// batches enough calls to last >= SAMPLE_MS; the reported time per call is the
// MEDIAN over the samples (the best sample is shown too).
//
// Exit status: 0 whenever the run completes, whatever the targets say (a MISS is
// a result, not a failure); non-zero only when something crashes.
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { mulberry32 } from '../lib/random.mjs';
import { loadTfWasm } from '../lib/tfjs.mjs';
import { timeInterleaved } from './timing.mjs';
import { loadPeak, peakTogether } from './peak.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SIZES = [[64, 64], [256, 64], [1024, 64]];
const ROUNDS = Number(process.env.BENCH_ROUNDS) || 11;
const SAMPLE_MS = 40;       // a timed sample lasts at least this long
const WARM_MS = 250;        // warm-up per implementation and size (and >= WARM_CALLS calls)
const WARM_CALLS = 3;
const TOLERANCE = 1e-4;     // max |ours - plain JS| allowed
const TARGETS = { vsTf: 1.5, ofPeak: 0.65, fullOfPeak: 0.75, vsScalar: 3 };
// the threads section's (n = 1024, full call): 2 threads over 1, over TF.js at its best, over onnxruntime-web
const THREAD_TARGETS = { speedup: 1.8, vsTf: 2, vsOrt: 1 };
const TARGET_N = 1024;
// --threads-only: only the threads section (n = 1024); BENCH_ROUNDS=1 makes any run a quick smoke run
const THREADS_ONLY = process.argv.includes('--threads-only');

const now = () => performance.now();
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const flops = (n, d) => 4 * n * n * d; // Q·Kᵀ (2n²d) + weights·V (2n²d); softmax not counted
const fmt = (x, digits) => (Number.isFinite(x) ? x.toFixed(digits) : '-');

// ---- inputs -------------------------------------------------------------------------

function randomMatrix(rows, cols, next) {
  const data = new Float32Array(rows * cols);
  for (let i = 0; i < data.length; i++) data[i] = next() * 2 - 1;
  return { rows, cols, data };
}

// ---- plain JS -----------------------------------------------------------------------

/**
 * A straightforward JS attention: row-major Float32Array in and out, float64
 * accumulation, cache-friendly loop orders (Q·Kᵀ as row·row dot products, the
 * context as a weighted sum of V's rows). Returns scores, weights and context,
 * the same as engine.attend. Also the reference for the correctness check.
 */
function attendJS(Q, K, V) {
  const n = Q.rows, m = K.rows, d = Q.cols, dv = V.cols;
  const q = Q.data, k = K.data, v = V.data;
  const scale = 1 / Math.sqrt(d);
  const scores = new Float32Array(n * m);
  const weights = new Float32Array(n * m);
  const context = new Float32Array(n * dv);
  const acc = new Float64Array(dv);
  const row = new Float64Array(m);
  for (let i = 0; i < n; i++) {
    const qi = i * d, si = i * m;
    let max = -Infinity;
    for (let j = 0; j < m; j++) {
      const kj = j * d;
      let s = 0;
      for (let t = 0; t < d; t++) s += q[qi + t] * k[kj + t];
      s *= scale;
      scores[si + j] = s;
      row[j] = s;
      if (s > max) max = s;
    }
    let sum = 0;
    for (let j = 0; j < m; j++) {
      const e = Math.exp(row[j] - max);
      row[j] = e;
      sum += e;
    }
    const inv = 1 / sum;
    acc.fill(0);
    for (let j = 0; j < m; j++) {
      const w = row[j] * inv;
      weights[si + j] = w;
      const vj = j * dv;
      for (let t = 0; t < dv; t++) acc[t] += w * v[vj + t];
    }
    context.set(acc, i * dv);
  }
  return {
    scores: { rows: n, cols: m, data: scores },
    weights: { rows: n, cols: m, data: weights },
    context: { rows: n, cols: dv, data: context },
  };
}

function maxAbsDiff(a, b) {
  if (a.length !== b.length) return Infinity;
  let m = 0;
  for (let i = 0; i < a.length; i++) {
    const x = Math.abs(a[i] - b[i]);
    if (!(x <= m)) m = x; // NaN propagates as a failure
  }
  return m;
}

// ---- peak: tests/bench/peak.mjs ---------------------------------------------------

// ---- implementations ----------------------------------------------------------------

async function loadOurs() {
  const index = path.join(ROOT, 'web/engine/index.js');
  const builds = ['attnlab-simd.wasm', 'attnlab-scalar.wasm'].map((f) => path.join(ROOT, 'web/wasm', f));
  const missing = [index, ...builds].filter((f) => !existsSync(f));
  if (missing.length) return { missing: missing.map((f) => path.relative(ROOT, f)) };
  const { loadEngine } = await import(pathToFileURL(index).href);
  // one thread: the threaded build has its own section (threadSection)
  const simd = await loadEngine({ simd: true, threads: 1 });
  const scalar = await loadEngine({ simd: false, threads: 1 });
  if (simd.simd !== true || scalar.simd !== false || simd.threads !== 1) {
    throw new Error(`loadEngine: asked for simd/scalar on one thread, got engine.simd = ${simd.simd}/${scalar.simd}, threads ${simd.threads}`);
  }
  return { simd, scalar };
}

const loadTf = loadTfWasm;

/**
 * TF.js's attention on Q, K, V: { call, dispose }; call() returns the context.
 * Inputs become tensors once, outside the timed loop. Q·Kᵀ is written as
 * matMul(q, transpose(k)): that keeps XNNPACK's fast path (transposeB: true
 * falls back to a much slower loop in tfjs-backend-wasm 4.x).
 */
function tfAttention(tf, Q, K, V) {
  const [q, k, v] = [Q, K, V].map((m) => tf.tensor2d(m.data, [m.rows, m.cols]));
  const scale = tf.scalar(1 / Math.sqrt(Q.cols));
  return {
    call: () => {
      const out = tf.tidy(() => tf.matMul(tf.softmax(tf.mul(tf.matMul(q, tf.transpose(k)), scale)), v));
      const data = out.dataSync(); // waits for the result and copies it out
      out.dispose();
      return data;
    },
    dispose: () => tf.dispose([q, k, v, scale]),
  };
}

/**
 * One benchmark subject per implementation at one size: call() does one
 * forward pass and returns something derived from the result, so nothing can
 * be skipped; context() returns the context as a Float32Array for the check.
 */
function makeSubjects(n, d, ours, tfInfo) {
  const next = mulberry32(0x5eed + n * 131 + d);
  const Q = randomMatrix(n, d, next);
  const K = randomMatrix(n, d, next);
  const V = randomMatrix(n, d, next);
  const subjects = [];
  if (ours.simd) {
    // What a user pays for one call with Float32Array inputs: validation, copies
    // into the WASM heap, the kernels, and copies of scores, weights and context out.
    const attend = (engine) => () => engine.attend({ queries: Q, keys: K, values: V, score: 'scaled_dot' });
    const outputs = { context: (r) => r.context.data, weights: (r) => r.weights.data, scores: (r) => r.scores.data };
    subjects.push({ key: 'simd', name: 'ours, SIMD WASM', call: attend(ours.simd), ...outputs });
    subjects.push({ key: 'scalar', name: 'ours, scalar WASM', call: attend(ours.scalar), ...outputs });
    // The same call with copy: false: scores, weights and context as views of the
    // engine's memory (valid until its next call): no 8 MB of copies and garbage per call.
    subjects.push({
      key: 'simdview', name: 'ours, SIMD WASM, as views',
      call: () => ours.simd.attend({ queries: Q, keys: K, values: V, score: 'scaled_dot', copy: false }), ...outputs,
    });
    // Like for like with TF.js, which returns only the context: outputs: ['context']
    // also skips materialising the n x n scores and weights.
    subjects.push({
      key: 'simdctx', name: 'ours, SIMD WASM, context only',
      call: () => ours.simd.attend({ queries: Q, keys: K, values: V, score: 'scaled_dot', outputs: ['context'] }),
      context: (r) => r.context.data,
    });
  }
  subjects.push({ key: 'js', name: 'plain JS', call: () => attendJS(Q, K, V), context: (r) => r.context.data });
  if (tfInfo) {
    subjects.push({ key: 'tf', name: `TF.js ${tfInfo.version} WASM (XNNPACK)`, ...tfAttention(tfInfo.tf, Q, K, V), context: (r) => r });
  }
  return { Q, K, V, subjects };
}

// ---- timing -------------------------------------------------------------------------

let sink = 0; // results feed this, so no call is dead code
const consume = (r) => { sink += r === undefined ? 0 : 1; };

function warmUp(s) {
  const times = [];
  const t0 = now();
  while (times.length < WARM_CALLS || now() - t0 < WARM_MS) {
    const t = now();
    consume(s.call());
    times.push(now() - t);
  }
  // Calls per sample, from the warm-up's later half (optimised code).
  const typical = median(times.slice(times.length >> 1));
  s.batch = Math.max(1, Math.ceil(SAMPLE_MS / Math.max(typical, 1e-3)));
  s.samples = [];
}

function sample(s) {
  const t0 = now();
  for (let i = 0; i < s.batch; i++) consume(s.call());
  s.samples.push((now() - t0) / s.batch);
}

// ---- report -------------------------------------------------------------------------

const pad = (s, w) => String(s).padEnd(w);
const lpad = (s, w) => String(s).padStart(w);

async function main() {
  const t0 = now();
  const cpu = os.cpus()[0]?.model?.trim() ?? 'unknown CPU';
  console.log('attnlab bench: attention forward softmax(Q·Kᵀ/√d)·V, n queries = n keys = n values');
  console.log(`node ${process.version} (V8 ${process.versions.v8}), ${cpu}, ${os.cpus().length} logical CPUs, load avg ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
  console.log(`timing: ${ROUNDS} interleaved samples per implementation and size, each >= ${SAMPLE_MS} ms; reported: MEDIAN ms per call (best sample alongside)`);
  console.log(`GFLOP/s counts 4·n²·d flops per call (the two matrix products; softmax not counted)\n`);

  const ours = await loadOurs();
  if (ours.missing) {
    console.log(`ours: NOT BUILT (missing ${ours.missing.join(', ')}); run \`make wasm\` or \`npm run bench\`. Timing the others only.\n`);
  }
  let tfInfo = null;
  try {
    tfInfo = await loadTf();
    console.log(`TF.js ${tfInfo.version}, backend wasm (${tfInfo.simd ? 'SIMD' : 'no SIMD'} binary), threads: ${tfInfo.threads}`);
  } catch (err) {
    console.log(`TF.js WASM: unavailable (${err?.message ?? err}); its column and target are skipped`);
  }

  const peak = await loadPeak();
  const peakSamples = peak.samples(5);

  const results = []; // { n, d, rows: Map(key -> { name, ms, best }), check }
  for (const [n, d] of THREADS_ONLY ? [] : SIZES) {
    process.stderr.write(`measuring n = ${n}, d = ${d} ...\n`);
    const { Q, K, V, subjects } = makeSubjects(n, d, ours, tfInfo);

    // Correctness, once per size: ours (and TF.js) against plain JS (float64 accumulation).
    const refOut = attendJS(Q, K, V);
    const check = {};
    for (const s of subjects) {
      if (s.key === 'js') continue;
      const r = s.call();
      check[s.key] = {
        context: maxAbsDiff(s.context(r), refOut.context.data),
        weights: s.weights ? maxAbsDiff(s.weights(r), refOut.weights.data) : undefined,
        scores: s.scores ? maxAbsDiff(s.scores(r), refOut.scores.data) : undefined,
      };
    }

    for (const s of subjects) warmUp(s);
    for (let r = 0; r < ROUNDS; r++) {
      // Rotate the order each round so no implementation always runs first.
      for (let i = 0; i < subjects.length; i++) sample(subjects[(i + r) % subjects.length]);
    }
    const rows = new Map();
    for (const s of subjects) {
      rows.set(s.key, { name: s.name, ms: median(s.samples), best: Math.min(...s.samples) });
      s.dispose?.();
    }
    results.push({ n, d, rows, check });
  }

  // The peak is sampled before and after the attention runs; the figure used is
  // the median of all its samples.
  peakSamples.push(...peak.samples(5));
  const peakG = median(peakSamples);
  console.log(`WASM SIMD128 mul+add peak, one core (tests/bench/peak.c, 3x3 register-blocked f32x4 kernel):`);
  console.log(`  median ${fmt(peakG, 1)} GFLOP/s over ${peakSamples.length} samples of ~60 ms ` +
    `(range ${fmt(Math.min(...peakSamples), 1)}–${fmt(Math.max(...peakSamples), 1)}; 5 before and 5 after the attention runs)\n`);

  for (const r of results) printSize(r.n, r.d, r.rows, r.check, peakG);
  if (!THREADS_ONLY) printTargets(results, peakG);
  if (ours.missing || !existsSync(path.join(ROOT, 'web/wasm/attnlab-simd-mt.wasm'))) {
    console.log('\nthreads: the threaded build web/wasm/attnlab-simd-mt.wasm is missing (make wasm); section skipped');
  } else {
    await threadSection(tfInfo, peakG);
  }
  console.log(`\ntotal ${((now() - t0) / 1000).toFixed(1)} s (${sink} calls)`);
  if (ours.missing) process.exitCode = 1; // the engine is not built: the run is incomplete
}

/** Every compared output within TOLERANCE (NaN fails). */
const checkOk = (c) => [c.context, c.weights, c.scores].every((x) => x === undefined || x < TOLERANCE);

function printSize(n, d, rows, check, peakG) {
  const f = flops(n, d);
  console.log(`== n = ${n}, d = ${d}: ${(f / 1e6).toFixed(1)} MFLOP per call`);
  const simd = rows.get('simd');
  console.log(`  ${pad('implementation', 30)}${lpad('ms/call', 10)}${lpad('best ms', 10)}${lpad('calls/s', 9)}${lpad('GFLOP/s', 9)}${lpad('% peak', 8)}${lpad('t/t(ours)', 11)}`);
  for (const r of rows.values()) {
    const g = f / r.ms / 1e6;
    const ratio = simd ? r.ms / simd.ms : NaN;
    console.log(`  ${pad(r.name, 30)}${lpad(fmt(r.ms, 3), 10)}${lpad(fmt(r.best, 3), 10)}${lpad(fmt(1000 / r.ms, 0), 9)}` +
      `${lpad(fmt(g, 2), 9)}${lpad(fmt((100 * g) / peakG, 1) + '%', 8)}${lpad(simd ? fmt(ratio, 2) + '×' : '-', 11)}`);
  }
  for (const [key, c] of Object.entries(check)) {
    const name = rows.get(key)?.name ?? key;
    const ok = checkOk(c);
    const mine = key === 'simd' || key === 'scalar';
    const verdict = ok ? 'OK' : mine ? 'WRONG' : 'differs';
    const w = (c.weights === undefined ? '' : `, weights ${c.weights.toExponential(2)}`) +
      (c.scores === undefined ? '' : `, scores ${c.scores.toExponential(2)}`);
    console.log(`  check ${pad(name, 30)} max|Δ| vs plain JS: context ${c.context.toExponential(2)}${w}  (< ${TOLERANCE}: ${verdict})`);
  }
  console.log('');
}

/** One target line: its label, the measured value against the goal, PASS or MISS. */
function line(label, value, goal, shown) {
  const pass = Number.isFinite(value) && value >= goal;
  console.log(`  ${pad(label, 40)} ${pad(shown, 34)} ${pass ? 'PASS' : 'MISS'}`);
}

function printTargets(results, peakG) {
  const at = results.find((r) => r.n === TARGET_N);
  console.log(`targets (n = ${TARGET_N}, d = ${at?.d ?? '?'}; median times; a MISS is reported, not an error):`);
  const simd = at?.rows.get('simd');
  if (!simd) {
    console.log('  ours is not built: every target MISS');
    return;
  }
  const wrong = ['simd', 'scalar'].some((k) => {
    const c = at.check[k];
    return !c || c.weights === undefined || !checkOk(c);
  });
  const tf = at.rows.get('tf');
  const scalar = at.rows.get('scalar');
  // TF.js computes and returns the context only: compare it with our
  // context-only call; the full call (also returning scores and weights) is shown too.
  const ctx = at.rows.get('simdctx') ?? simd;
  const vsTf = tf ? tf.ms / ctx.ms : NaN;
  const g = flops(at.n, at.d) / ctx.ms / 1e6;
  const gFull = flops(at.n, at.d) / simd.ms / 1e6;
  const ofPeak = g / peakG;
  const vsScalar = scalar.ms / simd.ms;
  line(`ours (context) vs TF.js WASM >= ${TARGETS.vsTf}×`, vsTf, TARGETS.vsTf,
    tf ? `${fmt(vsTf, 2)}× (${fmt(tf.ms, 2)} / ${fmt(ctx.ms, 2)} ms)` : 'TF.js unavailable');
  if (tf) console.log(`  ${pad('  (full call, + scores and weights)', 40)} ${fmt(tf.ms / simd.ms, 2)}× (${fmt(tf.ms, 2)} / ${fmt(simd.ms, 2)} ms)`);
  line(`ours (context) >= ${TARGETS.ofPeak * 100}% of WASM SIMD peak`, ofPeak, TARGETS.ofPeak,
    `${fmt(100 * ofPeak, 1)}% (${fmt(g, 1)} / ${fmt(peakG, 1)} GFLOP/s)`);
  line(`ours (full call) >= ${TARGETS.fullOfPeak * 100}% of WASM SIMD peak`, gFull / peakG, TARGETS.fullOfPeak,
    `${fmt((100 * gFull) / peakG, 1)}% (${fmt(gFull, 1)} / ${fmt(peakG, 1)} GFLOP/s)`);
  const view = at.rows.get('simdview');
  if (view) {
    const gView = flops(at.n, at.d) / view.ms / 1e6;
    line(`ours (full call, as views) >= ${TARGETS.fullOfPeak * 100}% of peak`, gView / peakG, TARGETS.fullOfPeak,
      `${fmt((100 * gView) / peakG, 1)}% (${fmt(gView, 1)} / ${fmt(peakG, 1)} GFLOP/s)`);
  }
  line(`ours >= ${TARGETS.vsScalar}× our scalar build`, vsScalar, TARGETS.vsScalar,
    `${fmt(vsScalar, 2)}× (${fmt(scalar.ms, 2)} / ${fmt(simd.ms, 2)} ms)`);
  if (wrong) console.log('  NOTE: our output did not match plain JS above (WRONG): these are speeds of wrong numbers');
}

// ---- threads (n = 1024, d = 64, full call) ------------------------------------------

const THREADS = 2;

/** Protocol Buffers wire format, just what an ONNX model needs: varints and length-delimited fields. */
const pb = {
  varint(n) {
    const out = [];
    for (; n > 127; n = Math.floor(n / 128)) out.push((n % 128) | 128);
    out.push(n);
    return out;
  },
  int(field, n) { return [...pb.varint(field * 8), ...pb.varint(n)]; },
  bytes(field, bytes) { return [...pb.varint(field * 8 + 2), ...pb.varint(bytes.length), ...bytes]; },
  str(field, text) { return pb.bytes(field, new TextEncoder().encode(text)); },
};

/**
 * The ONNX model (opset 13) of softmax(Q·Kᵀ/√d)·V for float inputs Q, K, V of
 * n × d: Transpose, MatMul, Mul by a constant, Softmax (last axis), MatMul; the
 * same graph TF.js runs. Field numbers are onnx.proto's.
 */
function attentionOnnx(n, d) {
  const tensorType = pb.bytes(1, [...pb.int(1, 1 /* FLOAT */), ...pb.bytes(2, [n, d].flatMap((v) => pb.bytes(1, pb.int(1, v))))]);
  const valueInfo = (name) => [...pb.str(1, name), ...pb.bytes(2, tensorType)];
  const node = (op, inputs, outputs, attributes = []) => [
    ...inputs.flatMap((x) => pb.str(1, x)), ...outputs.flatMap((y) => pb.str(2, y)), ...pb.str(4, op),
    ...attributes.flatMap((a) => pb.bytes(5, a)),
  ];
  const perm = [...pb.str(1, 'perm'), ...pb.int(8, 1), ...pb.int(8, 0), ...pb.int(20, 7 /* INTS */)];
  const scale = [...pb.int(2, 1 /* FLOAT */), ...pb.str(8, 'scale'),
    ...pb.bytes(9, new Uint8Array(Float32Array.of(1 / Math.sqrt(d)).buffer))];
  const graph = [
    ...pb.bytes(1, node('Transpose', ['K'], ['Kt'], [perm])),
    ...pb.bytes(1, node('MatMul', ['Q', 'Kt'], ['S'])),
    ...pb.bytes(1, node('Mul', ['S', 'scale'], ['Ss'])),
    ...pb.bytes(1, node('Softmax', ['Ss'], ['W'])),
    ...pb.bytes(1, node('MatMul', ['W', 'V'], ['C'])),
    ...pb.str(2, 'attention'), ...pb.bytes(5, scale),
    ...['Q', 'K', 'V'].flatMap((x) => pb.bytes(11, valueInfo(x))), ...pb.bytes(12, valueInfo('C')),
  ];
  return Uint8Array.from([...pb.int(1, 7 /* IR version */), ...pb.bytes(8, [...pb.str(1, ''), ...pb.int(2, 13)]), ...pb.bytes(7, graph)]);
}

/** onnxruntime-web on its WASM backend with `threads` threads, or { error }. */
async function loadOrt(threads) {
  try {
    const ort = await import('onnxruntime-web');
    ort.env.wasm.numThreads = threads;
    return { ort, version: ort.env.versions?.web ?? '?' };
  } catch (err) {
    return { error: err?.message ?? String(err) };
  }
}

/** Median ms per call of each subject (calls may return promises), interleaved as in the main run. */
function timeAsync(subjects) {
  return timeInterleaved(subjects, { rounds: ROUNDS, sampleMs: SAMPLE_MS, warmMs: WARM_MS, warmCalls: WARM_CALLS, consume });
}

/**
 * The threaded build at n = 1024, d = 64, full call (scores, weights, context):
 * one thread against THREADS, one thread's share of the peak, and TF.js and
 * onnxruntime-web at their best in Node, each checked against plain JS first.
 */
async function threadSection(tfInfo, peakG) {
  const [n, d] = [TARGET_N, 64];
  console.log(`\nthreads: n = ${n}, d = ${d}, full call; the threaded SIMD build (attnlab-simd-mt.wasm) on 1 and ${THREADS} threads (% peak: of the one-core peak above)`);
  const { loadEngine } = await import(pathToFileURL(path.join(ROOT, 'web/engine/index.js')).href);
  const mt = await loadEngine({ threads: THREADS });
  if (mt.threads !== THREADS) {
    console.log(`  ours on ${THREADS} threads: unavailable (${mt.threadsReason}); section skipped`);
    return;
  }
  const next = mulberry32(0x7ead5);
  const [Q, K, V] = [0, 1, 2].map(() => randomMatrix(n, d, next));
  const ref = attendJS(Q, K, V).context.data;
  const full = { queries: Q, keys: K, values: V, score: 'scaled_dot' };
  const views = { ...full, copy: false };
  const serial = () => mt.setParallelMinWork(Number.MAX_SAFE_INTEGER);
  const split = () => mt.setParallelMinWork(0);
  const subjects = [
    // one thread of the same build: every call runs serially (the work threshold is never reached)
    { key: 'one', name: 'ours, threaded build, 1 thread', call: () => { serial(); return mt.attend(full).context.data; } },
    { key: 'two', name: `ours, threaded build, ${THREADS} threads`, call: () => { split(); return mt.attend(full).context.data; } },
    // copy: false, the results as views of the engine's memory: the copies out (serial, on the calling thread) and their garbage gone
    { key: 'oneV', name: 'ours, threaded build, 1 thread, as views', call: () => { serial(); return mt.attend(views).context.data; } },
    { key: 'twoV', name: `ours, threaded build, ${THREADS} threads, as views`, call: () => { split(); return mt.attend(views).context.data; } },
  ];
  if (tfInfo) {
    // tfjs-backend-wasm never uses threads under Node (its WASM_HAS_MULTITHREAD_SUPPORT is false there)
    subjects.push({
      key: 'tf', name: `TF.js WASM, ${tfInfo.simd ? 'SIMD' : 'no SIMD'}, ${tfInfo.threads} thread (its best in Node)`,
      ...tfAttention(tfInfo.tf, Q, K, V),
    });
  }
  const ortInfo = await loadOrt(THREADS);
  if (ortInfo.error) console.log(`  onnxruntime-web: unavailable (${ortInfo.error})`);
  else {
    const { ort } = ortInfo;
    const session = await ort.InferenceSession.create(attentionOnnx(n, d), {
      executionProviders: ['wasm'], graphOptimizationLevel: 'all',
      // its idle threads spin by default, taking the CPU the others are timed on
      extra: { session: { intra_op: { allow_spinning: '0' } } },
    });
    const feeds = Object.fromEntries([['Q', Q], ['K', K], ['V', V]].map(([name, m]) => [name, new ort.Tensor('float32', m.data, [n, d])]));
    subjects.push({
      key: 'ort', name: `onnxruntime-web ${ortInfo.version} WASM, ${ort.env.wasm.numThreads} threads`,
      call: async () => (await session.run(feeds)).C.data,
      dispose: () => session.release(),
    });
  }
  for (const s of subjects) {
    const diff = maxAbsDiff(await s.call(), ref);
    s.ok = diff < TOLERANCE;
    console.log(`  check ${pad(s.name, 52)} max|Δ| vs plain JS: context ${diff.toExponential(2)} (${s.ok ? 'ok' : 'WRONG'})`);
  }
  const rows = await timeAsync(subjects);
  for (const s of subjects) await s.dispose?.();
  mt.destroy();
  const byKey = Object.fromEntries(subjects.map((s, i) => [s.key, rows[i]]));
  const f = flops(n, d);
  console.log(`  ${pad('implementation', 52)}${lpad('ms/call', 10)}${lpad('best ms', 10)}${lpad('GFLOP/s', 9)}${lpad('% peak', 8)}${lpad('t/t(ours, 2)', 14)}`);
  for (const r of rows) {
    const g = f / (r.ms * 1e6);
    console.log(`  ${pad(r.name, 52)}${lpad(fmt(r.ms, 3), 10)}${lpad(fmt(r.best, 3), 10)}${lpad(fmt(g, 2), 9)}` +
      `${lpad(fmt((100 * g) / peakG, 1) + '%', 8)}${lpad(fmt(r.ms / byKey.two.ms, 2) + '×', 14)}`);
  }
  // What the machine itself gives: the peak kernel on THREADS cores at once.
  const together = await peakTogether(THREADS);
  const ceiling = together.sum / peakG;
  console.log(`  the peak kernel on ${THREADS} cores at once: ${together.each.map((g) => fmt(g, 1)).join(' + ')} = ${fmt(together.sum, 1)} GFLOP/s, ` +
    `${fmt(ceiling, 2)}× one core's ${fmt(peakG, 1)}: the most a ${THREADS}-thread speed-up of compute-bound work can reach here`);
  for (const [what, one, two] of [['results copied out', byKey.one, byKey.two], ['results as views, copy: false', byKey.oneV, byKey.twoV]]) {
    console.log(`targets (threads, ${what}; median times; a MISS is reported, not an error):`);
    line(`ours, ${THREADS} threads >= ${THREAD_TARGETS.speedup}× 1 thread`, one.ms / two.ms, THREAD_TARGETS.speedup,
      `${fmt(one.ms / two.ms, 2)}× (${fmt(one.ms, 2)} / ${fmt(two.ms, 2)} ms)`);
    console.log(`  ${pad('  (of the machine\'s ceiling above)', 40)} ${fmt((100 * one.ms) / two.ms / ceiling, 1)}% (${fmt(one.ms / two.ms, 2)}× of ${fmt(ceiling, 2)}×)`);
    line(`ours, 1 thread >= ${TARGETS.fullOfPeak * 100}% of the one-core peak`, f / (one.ms * 1e6) / peakG, TARGETS.fullOfPeak,
      `${fmt((100 * f) / (one.ms * 1e6) / peakG, 1)}% (${fmt(f / (one.ms * 1e6), 1)} / ${fmt(peakG, 1)} GFLOP/s)`);
    line(`ours, ${THREADS} threads >= ${THREAD_TARGETS.vsTf}× TF.js at its best`, byKey.tf ? byKey.tf.ms / two.ms : NaN, THREAD_TARGETS.vsTf,
      byKey.tf ? `${fmt(byKey.tf.ms / two.ms, 2)}× (${fmt(byKey.tf.ms, 2)} / ${fmt(two.ms, 2)} ms)` : 'TF.js unavailable');
    line(`ours ahead of onnxruntime-web, ${THREADS} threads`, byKey.ort ? byKey.ort.ms / two.ms : NaN, THREAD_TARGETS.vsOrt,
      byKey.ort ? `${fmt(byKey.ort.ms / two.ms, 2)}× (${fmt(byKey.ort.ms, 2)} / ${fmt(two.ms, 2)} ms)` : 'onnxruntime-web unavailable');
  }
  if (subjects.some((s) => !s.ok)) console.log('  NOTE: an output above did not match plain JS (WRONG): its speed is that of wrong numbers');
}

main().catch((err) => {
  console.error('bench crashed:', err?.stack ?? err);
  process.exit(2);
});
