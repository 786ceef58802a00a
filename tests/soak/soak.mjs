// npm run soak: trains a seq2seq model in Node for SOAK_SECONDS (default 600):
// half of it one run from a seed, the other half a rerun of the same calls
// from the same seed on the same engine. Then it translates, saves and loads
// the model, and reports whether memory stayed flat: the JS heap after a full
// GC, the process's resident memory, the WASM heap in use (engine.heapUsed)
// and the WASM memory size, sampled every few seconds. Exits non-zero when,
// after the first tenth of the run (warm-up), the JS heap or the resident
// memory grew by more than 10% + 2 MB (8 MB resident), the WASM heap in use
// changed at all between training calls, or WASM memory grew; when the rerun
// saves other bytes than the run; when the reloaded model translates
// differently; or when a call stalls: a watchdog thread (the training calls
// block the main thread, so a timer there could not fire) ends the process if
// the main thread does not finish a call within SOAK_STALL_SECONDS (default 60).
//   SOAK_SECONDS=60 npm run soak      a shorter run
//   SOAK_THREADS=2                    the threaded build, each batch split over 2 threads
//   SOAK_SIMD=0                       the scalar build (one thread)
import { Worker } from 'node:worker_threads';
import { loadEngine } from '../../web/engine/index.js';

const seconds = Number(process.env.SOAK_SECONDS) || 600;
const threads = Number(process.env.SOAK_THREADS) || 1;
const simd = process.env.SOAK_SIMD !== '0';
const stallSeconds = Number(process.env.SOAK_STALL_SECONDS) || 60;
const gc = globalThis.gc ?? (() => {});
const MB = 1 << 20;
const MODEL = { task: 'dates', cell: 'gru', hidden: 64, embed: 32, attention: 'dot', seed: 1 };

// ---- the watchdog: the main thread stamps the time after every call -----------------------

const beat = new BigInt64Array(new SharedArrayBuffer(8)); // ms since the epoch of the last call's end
const stamp = () => Atomics.store(beat, 0, BigInt(Date.now()));
stamp();
const watchdog = new Worker(`
  const { workerData } = require('node:worker_threads');
  const { writeSync } = require('node:fs');
  const last = new BigInt64Array(workerData.beat);
  setInterval(() => {
    const idle = (Date.now() - Number(Atomics.load(last, 0))) / 1000;
    if (idle > workerData.stallSeconds) {
      // the main thread is stuck, so its console cannot print: write to the fd and end the process
      writeSync(1, 'soak: FAILED: a call has not returned for ' + idle.toFixed(0) + ' s (stalled or deadlocked)\\n');
      process.kill(process.pid, 'SIGKILL');
    }
  }, 1000);
`, { eval: true, workerData: { beat: beat.buffer, stallSeconds } });
watchdog.unref();

// ---- training -------------------------------------------------------------------------------

const engine = await loadEngine({ simd, threads });
if (engine.threads !== threads) throw new Error(`soak: asked for ${threads} threads, got ${engine.threads} (${engine.threadsReason})`);
const wasmBytes = () => engine.heap.memory.buffer.byteLength;
const baseline = engine.heapUsed();
const samples = []; // { t, js, rss, wasmHeap, wasmMemory, steps }
const t0 = performance.now();
let next = 0;

function sample() {
  const t = (performance.now() - t0) / 1000;
  if (t < next) return;
  gc();
  const { heapUsed, rss } = process.memoryUsage();
  samples.push({ t, js: heapUsed, rss, wasmHeap: engine.heapUsed(), wasmMemory: wasmBytes() });
  next += Math.max(2, seconds / 100);
}

/**
 * One run from the seed: `calls` training calls of 10 steps (or as many as
 * fit in `budget` seconds), an evaluation every 10th call. Returns the model
 * (live), the calls made and the last loss.
 */
function run({ calls = Infinity, budget = Infinity }) {
  const model = engine.createSeq2Seq(MODEL);
  const start = performance.now();
  let made = 0, loss = NaN;
  while (made < calls && (performance.now() - start) / 1000 < budget) {
    loss = model.train({ steps: 10, batch: 64, lr: 0.005 }).loss;
    made++;
    if (made % 10 === 0) model.evaluate({ split: 'validation', count: 50 });
    stamp();
    sample();
  }
  return { model, calls: made, loss };
}

const mode = threads > 1 ? `threaded build, ${threads} threads` : `${simd ? 'SIMD' : 'scalar'} build, one thread`;
console.log(`soak: ${seconds} s of training (${mode}), dates, GRU 64, dot attention: a run, then a rerun of its calls from the same seed`);
const first = run({ budget: seconds / 2 });
const firstBytes = first.model.save();
const firstSteps = first.model.steps;
first.model.destroy();
const heapBetweenRuns = engine.heapUsed();
const second = run({ calls: first.calls });
const model = second.model;
const secondSteps = model.steps;

const input = '25th of June, 2009';
const before = model.translate(input, { beam: 3 }).output;
const bytes = model.save();
const again = engine.loadSeq2Seq(bytes);
const after = again.translate(input, { beam: 3 }).output;
const evalAcc = model.evaluate({ split: 'test', count: 200 }).sequenceAccuracy;
stamp();
again.destroy();
model.destroy();
gc();
const end = { wasmHeap: engine.heapUsed() };
engine.destroy();

// ---- the report ------------------------------------------------------------------------------

const warm = samples.filter((s) => s.t >= seconds / 10);
const firstWarm = warm[0] ?? samples[0], last = samples[samples.length - 1];
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[s.length >> 1]; };
const grew = (key) => [median(warm.slice(0, 5).map((s) => s[key])), median(warm.slice(-5).map((s) => s[key]))];
const [jsFirst, jsLast] = grew('js');
const [rssFirst, rssLast] = grew('rss');
const wasmHeapValues = new Set(samples.map((s) => s.wasmHeap));
const fmt = (b) => `${(b / MB).toFixed(2)} MB`;
const pct = (a, b) => `${((b / a - 1) * 100).toFixed(1)}%`;
const same = firstBytes.length === bytes.length && firstBytes.every((x, i) => x === bytes[i]);

console.log(`run: ${firstSteps} steps in ${first.calls} calls, last loss ${Number(first.loss).toFixed(4)}; rerun: ${secondSteps} steps, last loss ${Number(second.loss).toFixed(4)}`);
console.log(`rerun from the same seed saves ${same ? 'the same' : 'DIFFERENT'} ${bytes.length} bytes; test sequence accuracy ${(evalAcc * 100).toFixed(1)}%`);
console.log(`translate '${input}' -> '${before}'; after save and load -> '${after}'`);
console.log(`JS heap after GC: ${fmt(jsFirst)} after warm-up (t = ${firstWarm.t.toFixed(0)} s) -> ${fmt(jsLast)} at the end (${samples.length} samples; ${pct(jsFirst, jsLast)})`);
console.log(`resident memory: ${fmt(rssFirst)} after warm-up -> ${fmt(rssLast)} at the end (${pct(rssFirst, rssLast)})`);
console.log(`WASM heap in use: between calls ${[...wasmHeapValues].map(fmt).join(', ')}; between the runs ${fmt(heapBetweenRuns)}; after destroy ${fmt(end.wasmHeap)} (baseline ${fmt(baseline)})`);
console.log(`WASM memory: ${fmt(samples[0].wasmMemory)} -> ${fmt(last.wasmMemory)}`);

const problems = [];
if (jsLast > jsFirst * 1.1 + 2 * MB) problems.push(`the JS heap grew from ${fmt(jsFirst)} to ${fmt(jsLast)}`);
if (rssLast > rssFirst * 1.1 + 8 * MB) problems.push(`resident memory grew from ${fmt(rssFirst)} to ${fmt(rssLast)}`);
if (wasmHeapValues.size !== 1) problems.push('the WASM heap in use changed between training calls');
if (heapBetweenRuns !== baseline) problems.push(`the WASM heap did not return to its baseline between the runs (${heapBetweenRuns} vs ${baseline})`);
if (end.wasmHeap !== baseline) problems.push(`the WASM heap did not return to its baseline (${end.wasmHeap} vs ${baseline})`);
if (last.wasmMemory > firstWarm.wasmMemory) problems.push('WASM memory grew after warm-up');
if (!same) problems.push('the rerun from the same seed saved a different model');
if (before !== after) problems.push('the reloaded model translates differently');
if (problems.length) {
  console.log(`soak: FAILED: ${problems.join('; ')}`);
  process.exit(1);
}
console.log('soak: no stall, memory flat, the rerun saved the same model');
