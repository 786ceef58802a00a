// The machine's WASM SIMD multiply-add peak (tests/bench/peak.c), for the benches:
//   loadPeak()            one core: samples(count) -> GFLOP/s of each ~60 ms sample
//   peakTogether(threads) the same kernel on `threads` cores at once (worker
//                         threads started together): the GFLOP/s each core keeps
//                         while the others run too. Their sum over one core's
//                         peak is the most any `threads`-thread speed-up of
//                         compute-bound work can reach on this machine (cores
//                         that share a physical core or a power budget give less
//                         than `threads`×).
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const now = () => performance.now();
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

function buildPeak() {
  const wasm = path.join(ROOT, 'build/bench/peak.wasm');
  const source = path.join(ROOT, 'tests/bench/peak.c');
  if (!existsSync(wasm) || statSync(source).mtimeMs > statSync(wasm).mtimeMs) {
    console.log('building build/bench/peak.wasm (make -s bench-wasm)');
    const r = spawnSync('make', ['-s', 'bench-wasm'], { cwd: ROOT, stdio: 'inherit' });
    if (r.error) throw r.error;
    if (r.status !== 0 || !existsSync(wasm)) throw new Error('make bench-wasm failed');
  }
  return wasm;
}

/** The peak kernel on this thread, warmed up; `iters` per sample (default: calibrated to ~60 ms). */
export async function loadPeak(iters = 0) {
  const bytes = readFileSync(buildPeak());
  const { instance } = await WebAssembly.instantiate(bytes, { env: { emscripten_notify_memory_growth() {} } });
  const e = instance.exports;
  if (typeof e._initialize === 'function') e._initialize();
  e.peak_init();
  const perIter = e.peak_flops_per_iter();
  const run = (n) => {
    const t0 = now();
    const s = e.peak_run(n, 1e-3);
    const dt = now() - t0;
    if (!(s > 0 && Number.isFinite(s))) throw new Error(`peak kernel returned ${s}`);
    return dt;
  };
  // Warm-up: long enough for V8 to tier peak_run up from Liftoff to TurboFan.
  let n = 1 << 16;
  for (const t0 = now(); now() - t0 < 400;) run(n);
  if (iters > 0) n = iters;
  else n = Math.max(1, Math.round((n * 60) / Math.max(run(n), 1e-3))); // a sample of about 60 ms
  return {
    iters: n,
    /** FLOPs of one sample (to rate a sample by CPU time instead of the clock). */
    flopsPerSample: n * perIter,
    /** GFLOP/s of `count` samples. */
    samples(count) {
      const out = [];
      for (let r = 0; r < count; r++) out.push((n * perIter) / run(n) / 1e6);
      return out;
    },
  };
}

/**
 * The peak kernel on `threads` threads at once (this one and threads - 1
 * workers), `count` samples each after a common start. Returns each thread's
 * median GFLOP/s and their sum.
 */
export async function peakTogether(threads, count = 7) {
  const peak = await loadPeak();
  const gate = new Int32Array(new SharedArrayBuffer(8)); // [ready workers, go]
  const workers = Array.from({ length: threads - 1 }, () =>
    new Worker(new URL(import.meta.url), { workerData: { gate: gate.buffer, iters: peak.iters, count } }));
  const results = workers.map((w) => new Promise((resolve, reject) => {
    w.once('message', resolve);
    w.once('error', reject);
  }));
  while (Atomics.load(gate, 0) < threads - 1) await new Promise((r) => setTimeout(r, 5));
  Atomics.store(gate, 1, 1);
  Atomics.notify(gate, 1);
  const mine = median(peak.samples(count));
  const each = [mine, ...(await Promise.all(results)).map((s) => median(s))];
  await Promise.all(workers.map((w) => w.terminate()));
  return { each, sum: each.reduce((a, b) => a + b, 0) };
}

if (!isMainThread && workerData?.gate) {
  const gate = new Int32Array(workerData.gate);
  const peak = await loadPeak(workerData.iters);
  Atomics.add(gate, 0, 1);
  Atomics.wait(gate, 1, 0);
  parentPort.postMessage(peak.samples(workerData.count));
}
