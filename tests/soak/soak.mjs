// npm run soak: trains a seq2seq model in Node for SOAK_SECONDS (default 600),
// then translates, saves and loads it, and reports whether memory stayed
// flat: the JS heap after a full GC, the WASM heap in use (engine.heapUsed)
// and the WASM memory size, sampled every few seconds. Exits non-zero when,
// after the first tenth of the run (warm-up), the JS heap grew by more than
// 10% + 2 MB, the WASM heap in use changed at all between training calls, or
// WASM memory grew; or when the reloaded model translates differently.
//   SOAK_SECONDS=60 npm run soak      a shorter run
//   SOAK_SIMD=0                       the scalar build
import { loadEngine } from '../../web/engine/index.js';

const seconds = Number(process.env.SOAK_SECONDS) || 600;
const simd = process.env.SOAK_SIMD !== '0';
const gc = globalThis.gc ?? (() => {});
const MB = 1 << 20;

const engine = await loadEngine({ simd });
const wasmBytes = () => engine.heap.exports.memory.buffer.byteLength;
const baseline = engine.heapUsed();
const model = engine.createSeq2Seq({ task: 'dates', cell: 'gru', hidden: 64, embed: 32, attention: 'dot', seed: 1 });
const inUse = engine.heapUsed(); // the model's own allocation

const samples = []; // { t, js, wasmHeap, wasmMemory, steps, loss }
const t0 = performance.now();
let next = 0, calls = 0, loss = NaN;
console.log(`soak: ${seconds} s of training (${simd ? 'SIMD' : 'scalar'} build), dates, GRU 64, dot attention`);
while (performance.now() - t0 < seconds * 1000) {
  const r = model.train({ steps: 10, batch: 64, lr: 0.005 });
  loss = r.loss ?? loss;
  calls++;
  if (calls % 10 === 0) model.evaluate({ split: 'validation', count: 50 });
  const t = (performance.now() - t0) / 1000;
  if (t >= next) {
    gc();
    samples.push({ t, js: process.memoryUsage().heapUsed, wasmHeap: engine.heapUsed(), wasmMemory: wasmBytes(), steps: model.steps });
    next += Math.max(2, seconds / 100);
  }
}

const input = '25th of June, 2009';
const before = model.translate(input, { beam: 3 }).output;
const bytes = model.save();
const again = engine.loadSeq2Seq(bytes);
const after = again.translate(input, { beam: 3 }).output;
const evalAcc = model.evaluate({ split: 'test', count: 200 }).sequenceAccuracy;
again.destroy();
model.destroy();
gc();
const end = { js: process.memoryUsage().heapUsed, wasmHeap: engine.heapUsed(), wasmMemory: wasmBytes() };

const warm = samples.filter((s) => s.t >= seconds / 10);
const first = warm[0] ?? samples[0], last = samples[samples.length - 1];
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[s.length >> 1]; };
const jsFirst = median(warm.slice(0, 5).map((s) => s.js)), jsLast = median(warm.slice(-5).map((s) => s.js));
const wasmHeapValues = new Set(samples.map((s) => s.wasmHeap));
const fmt = (b) => `${(b / MB).toFixed(2)} MB`;

console.log(`trained ${last.steps} steps in ${calls} calls; last loss ${Number(loss).toFixed(4)}; test sequence accuracy ${(evalAcc * 100).toFixed(1)}%`);
console.log(`translate '${input}' -> '${before}'; after save (${bytes.length} bytes) and load -> '${after}'`);
console.log(`JS heap after GC: ${fmt(jsFirst)} after warm-up (t = ${first.t.toFixed(0)} s) -> ${fmt(jsLast)} at the end (${samples.length} samples; ${((jsLast / jsFirst - 1) * 100).toFixed(1)}%)`);
console.log(`WASM heap in use: model ${fmt(inUse - baseline)}; between calls ${[...wasmHeapValues].map(fmt).join(', ')}; after destroy ${fmt(end.wasmHeap)} (baseline ${fmt(baseline)})`);
console.log(`WASM memory: ${fmt(samples[0].wasmMemory)} -> ${fmt(last.wasmMemory)}`);

const problems = [];
if (jsLast > jsFirst * 1.1 + 2 * MB) problems.push(`the JS heap grew from ${fmt(jsFirst)} to ${fmt(jsLast)}`);
if (wasmHeapValues.size !== 1) problems.push('the WASM heap in use changed between training calls');
if (end.wasmHeap !== baseline) problems.push(`the WASM heap did not return to its baseline (${end.wasmHeap} vs ${baseline})`);
if (last.wasmMemory > first.wasmMemory) problems.push('WASM memory grew after warm-up');
if (before !== after) problems.push('the reloaded model translates differently');
if (problems.length) {
  console.log(`soak: FAILED: ${problems.join('; ')}`);
  process.exit(1);
}
console.log('soak: memory flat');
