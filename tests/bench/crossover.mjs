// npm run bench (after bench.mjs): where two threads start to beat one. On the
// threaded build with 2 threads, times attend (full call and context only) and
// selfAttention (Wq, Wk, Wv, Wo, 2 heads) at n = 8..512 tokens and d = 16, 32,
// 64, each on one thread (engine.setParallelMinWork(MAX): no region splits)
// and on two (setParallelMinWork(0): every region splits), and on a second
// engine left at the default threshold. Prints a table, then per operation
// and d the smallest n from which two threads win at every larger n, and
// the threshold (multiply-adds) those crossovers give. Last, selfAttention at
// n = 1024, d = 64 on 1 and 2 threads.
//
// Timing as in bench.mjs (timing.mjs): each subject is warmed up, then sampled
// in ROUNDS rounds that interleave the subjects in rotating order; a sample
// batches calls for >= SAMPLE_MS; ms/call is the median of the samples, best
// the fastest.
// Exit status: 0 when the run completes (also when threads cannot run here:
// it says why), 2 on a crash.
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { mulberry32 } from '../lib/random.mjs';
import { median, timeInterleaved } from './timing.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const NS = [8, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512];
const DS = [16, 32, 64];
const HEADS = 2;
const LARGE = [1024, 64];
const ROUNDS = Number(process.env.BENCH_ROUNDS) || 7;
const SAMPLE_MS = 8;
const WARM_MS = 30;
const WARM_CALLS = 3;
const ONE_THREAD = Number.MAX_SAFE_INTEGER;

const pad = (s, w) => String(s).padEnd(w);
const lpad = (s, w) => String(s).padStart(w);
const fmt = (x, digits) => (Number.isFinite(x) ? x.toFixed(digits) : '-');
const sci = (x) => x.toExponential(1);
let sink = 0;
let SCORES; // the engine's score codes, set in main()

function randomMatrix(rows, cols, next, scale = 1) {
  const data = new Float32Array(rows * cols);
  for (let i = 0; i < data.length; i++) data[i] = (next() * 2 - 1) * scale;
  return { rows, cols, data };
}

/**
 * The operations, each with its multiply-adds as the engine counts them
 * (attn_work, attn_self_work in C): scaled_dot attention does n²(d + d);
 * selfAttention adds its projections, n·d·3d in and n·d·d out.
 */
const OPS = [
  {
    name: 'attend, full call',
    work: (n, d) => n * n * 2 * d,
    args: (n, d, next) => ({ queries: randomMatrix(n, d, next), keys: randomMatrix(n, d, next), values: randomMatrix(n, d, next), score: 'scaled_dot' }),
    call: (e, a) => e.attend(a).context.data,
  },
  {
    name: 'attend, context only',
    work: (n, d) => n * n * 2 * d,
    args: (n, d, next) => ({ queries: randomMatrix(n, d, next), keys: randomMatrix(n, d, next), values: randomMatrix(n, d, next), score: 'scaled_dot', outputs: ['context'] }),
    call: (e, a) => e.attend(a).context.data,
  },
  {
    name: `selfAttention, ${HEADS} heads`,
    work: (n, d) => n * d * 3 * d + n * n * 2 * d + n * d * d,
    args: (n, d, next) => {
      const w = () => randomMatrix(d, d, next, 1 / Math.sqrt(d));
      return { x: randomMatrix(n, d, next), wq: w(), wk: w(), wv: w(), wo: w(), heads: HEADS, causal: false };
    },
    call: (e, a) => e.selfAttention(a).output.data,
  },
];

/**
 * selfAttention's forward and backward in the engine, through the export the
 * threads tests use (src/wasm/parallel_exports.c): the gradients of
 * sum(output) into zeroed buffers; returns dx.
 */
function selfBackward(engine, a) {
  const { heap } = engine;
  const n = a.x.rows, d = a.x.cols, f = (m) => 4 * m.data.length;
  const sizes = { x: f(a.x), wq: f(a.wq), wk: f(a.wk), wv: f(a.wv), wo: f(a.wo), dout: 4 * n * d, dx: 4 * n * d, g: 4 * 4 * d * d };
  return heap.withBlock(sizes, (p) => {
    for (const k of ['x', 'wq', 'wk', 'wv', 'wo']) heap.writeF32(p[k], a[k].data);
    heap.writeF32(p.dout, new Float32Array(n * d).fill(1));
    heap.writeF32(p.dx, new Float32Array(n * d));
    heap.writeF32(p.g, new Float32Array(4 * d * d));
    const g = (i) => p.g + 4 * i * d * d;
    heap.check(heap.exports.attnlab_self_attention_backward(n, d, d, d, d, a.heads, SCORES.scaled_dot, a.causal ? 1 : 0,
      p.x, p.wq, p.wk, p.wv, p.wo, p.dout, p.dx, g(0), g(1), g(2), g(3)), 'selfAttention backward');
    return heap.readF32(p.dx, n * d);
  });
}

/** One thread, two threads (every region split), and the default threshold's engine, on one input. */
async function measure(split, auto, op, args) {
  const [one, two, dflt] = await timeInterleaved([
    { call: () => { split.setParallelMinWork(ONE_THREAD); return op.call(split, args); } },
    { call: () => { split.setParallelMinWork(0); return op.call(split, args); } },
    { call: () => op.call(auto, args) },
  ], { rounds: ROUNDS, sampleMs: SAMPLE_MS, warmMs: WARM_MS, warmCalls: WARM_CALLS, consume: (r) => { sink += r.length; } });
  return { one, two, dflt };
}

/**
 * The crossover of one row of results (ascending n) by `stat` ('ms', the
 * median, or 'best'): the smallest n from which two threads beat one at every
 * larger n, with the work of that n and of the n before it (the largest that
 * lost); null when two never win from some n on.
 */
function crossover(rows, stat) {
  let k = rows.length;
  while (k > 0 && rows[k - 1].two[stat] < rows[k - 1].one[stat]) k--;
  if (k === rows.length) return null;
  const win = rows[k], lose = k > 0 ? rows[k - 1] : null;
  // the threshold between them: the geometric mean of the last losing and the first winning work
  const at = lose ? Math.sqrt(lose.work * win.work) : win.work;
  return { n: win.n, work: win.work, lostWork: lose?.work ?? null, at };
}

async function main() {
  const engineModule = await import(pathToFileURL(path.join(ROOT, 'web/engine/index.js')).href);
  const { loadEngine } = engineModule;
  ({ SCORES } = engineModule);
  const split = await loadEngine({ threads: 2 });
  console.log(`crossover: 1 vs 2 threads on the threaded build; ${os.cpus().length} CPUs (${os.cpus()[0]?.model?.trim() ?? '?'}), ` +
    `load ${os.loadavg()[0].toFixed(2)}, ${ROUNDS} interleaved rounds; ms/call = median (best)`);
  if (split.threads !== 2) {
    console.log(`  2 threads cannot run here (${split.threadsReason}); nothing to measure`);
    return;
  }
  const auto = await loadEngine({ threads: 2 });
  const next = mulberry32(0xc2055);
  const found = [];
  try {
    for (const op of OPS) {
      console.log(`\n${op.name}`);
      console.log(`  ${lpad('n', 4)}${lpad('d', 4)}${lpad('work', 9)}${lpad('1 thread', 17)}${lpad('2 threads', 17)}${lpad('speed-up', 9)}` +
        `${lpad('default', 17)}`);
      for (const d of DS) {
        const rows = [];
        for (const n of NS) {
          const work = op.work(n, d);
          const r = { n, work, ...(await measure(split, auto, op, op.args(n, d, next))) };
          rows.push(r);
          const cell = (t) => lpad(`${fmt(t.ms, 4)} (${fmt(t.best, 4)})`, 17);
          console.log(`  ${lpad(n, 4)}${lpad(d, 4)}${lpad(sci(work), 9)}${cell(r.one)}${cell(r.two)}` +
            `${lpad(fmt(r.one.ms / r.two.ms, 2) + '×', 9)}${cell(r.dflt)}`);
        }
        const x = crossover(rows, 'ms'), xb = crossover(rows, 'best');
        found.push({ op: op.name, d, x, xb });
        const say = (c, stat) => (c
          ? `${stat}: 2 threads win from n = ${c.n} (work ${sci(c.work)}${c.lostWork ? `; lost at ${sci(c.lostWork)}` : ''}), crossover ≈ ${sci(c.at)}`
          : `${stat}: 2 threads never win from some n on, up to n = ${NS.at(-1)}`);
        console.log(`  d = ${d}, by ${say(x, 'median')}; by ${say(xb, 'best')}`);
      }
    }

    console.log('\ncrossovers: multiply-adds where 2 threads start to win (by median | by best sample)');
    const show = (c) => lpad(c ? `${sci(c.at)} (n = ${c.n})` : 'none', 18);
    for (const { op, d, x, xb } of found) console.log(`  ${pad(op, 26)} d = ${lpad(d, 2)}: ${show(x)} | ${show(xb)}`);
    for (const [stat, key] of [['median', 'x'], ['best', 'xb']]) {
      const attend = found.filter((f) => f.op.startsWith('attend') && f[key]).map((f) => f[key].at);
      if (attend.length) {
        console.log(`  attend (one parallel region per call), by ${stat}: median ${sci(median(attend))}, ` +
          `range ${sci(Math.min(...attend))}..${sci(Math.max(...attend))}`);
      }
    }
    console.log('  (the default threshold, nn_pool_create in src/base/pool.c, is set from the attend crossovers)');

    const [n, d] = LARGE;
    const op = OPS[2];
    const args = op.args(n, d, next);
    const large = [
      [`${op.name}, the API call (copies q, k, v, ${HEADS} n × n scores and weights, context, output out)`, op],
      [`${op.name}, forward + backward in the engine (no copies; the threads tests' export)`, { call: selfBackward }],
    ];
    console.log(`\nn = ${n}, d = ${d}, forward ${sci(op.work(n, d))} multiply-adds`);
    for (const [name, o] of large) {
      const r = await measure(split, auto, o, args);
      console.log(`  ${name}:\n    1 thread ${fmt(r.one.ms, 2)} ms (best ${fmt(r.one.best, 2)}), 2 threads ${fmt(r.two.ms, 2)} ms (best ${fmt(r.two.best, 2)}): ` +
        `${fmt(r.one.ms / r.two.ms, 2)}× by median, ${fmt(r.one.best / r.two.best, 2)}× by best`);
    }
  } finally {
    split.destroy();
    auto.destroy();
  }
  if (sink < 0) console.log(sink);
}

main().catch((err) => {
  console.error('crossover bench crashed:', err?.stack ?? err);
  process.exit(2);
});
