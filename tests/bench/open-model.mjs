// npm run bench (part 9): engine.openModel of a GPT-2-small-shaped checkpoint
// (gpt2-shape.mjs's random weights written as F32 with the mask buffers, as
// openai-community/gpt2's 548 MB model.safetensors is, under that repo's name)
// from tests/lib/hub-server.mjs, which answers as the Hugging Face hub does (a
// 302 to its store on another origin, X-Linked-Size and X-Linked-Etag). The hub
// runs in a child process, so its copy of the file is not in the figures.
//   - Node: the peak memory of the open against the file's size, target
//     <= 1.2x. Measured: the WASM heap's size before and after; this process's
//     resident memory (rss) and its ArrayBuffers outside the heap
//     (memoryUsage().arrayBuffers: fetch's pieces), sampled every 5 ms during
//     the open, and the kernel's high-water mark of rss (VmHWM, reset before the
//     open); the target is judged on that high-water mark over the rss before.
//   - headless Chromium, a profile on disk: the model opened once from the hub
//     (kept in Cache Storage as the lab keeps it), the hub stopped, then a new
//     page opens it again: target <= 5 s for that second open, and no request
//     for the weights (none to the hub or its store at all). The peak memory
//     of each open, from the kernel: every process of this Chromium (found
//     from its browser process down) has its VmHWM reset before the open and
//     read after; the page's process (the one that grew most) is judged
//     against the file, target <= 1.2x; the sum of every process's growth (an
//     upper bound: their peaks need not coincide) is printed beside it.
// A miss prints MISS and the bench goes on; an error fails it.
//   node tests/bench/open-model.mjs [--node | --browser]
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import v8 from 'node:v8';
import vm from 'node:vm';
import { chromium } from 'playwright-core';
import { loadEngine } from '../../web/engine/index.js';
import { serve } from '../../scripts/serve.mjs';
import { FLAGS, findChrome } from '../browser/browser.mjs';
import { startHub } from '../lib/hub-server.mjs';
import { CONFIG, makeCheckpoint } from './gpt2-shape.mjs';

const REPO = 'openai-community/gpt2';
const WEIGHTS = 'model.safetensors';
const TARGETS = { peak: 1.2, reopen: 5 };
const MB = 1e6;
const fmt = (x, d = 2) => (Number.isFinite(x) ? x.toFixed(d) : '-');
const mb = (bytes) => `${fmt(bytes / MB, 1)} MB`;
const verdict = (ok) => (ok ? 'PASS' : 'MISS');
const loadAverage = () => os.loadavg().map((x) => x.toFixed(1)).join(' ');

/** The child's part: the checkpoint made and served; one line of JSON says where; the hub stops when stdin closes. */
async function serveHub() {
  const file = makeCheckpoint(undefined, { dtype: 'F32', buffers: true });
  const hub = await startHub({ [REPO]: { main: { 'config.json': JSON.stringify(CONFIG), [WEIGHTS]: file } } });
  process.stdout.write(`${JSON.stringify({ url: hub.url, storeUrl: hub.storeUrl, size: file.length })}\n`);
  process.stdin.resume();
  process.stdin.on('end', async () => {
    await hub.close();
    process.exit(0);
  });
}

/** Starts the hub in a child process: { url, storeUrl, size, stop() }. */
async function startHubProcess() {
  const child = spawn(process.execPath, [new URL(import.meta.url).pathname, '--serve-hub'], { stdio: ['pipe', 'pipe', 'inherit'] });
  const exited = new Promise((resolve) => child.on('exit', resolve));
  const first = await Promise.race([
    createInterface({ input: child.stdout })[Symbol.asyncIterator]().next(),
    exited.then((code) => { throw new Error(`the hub's process exited (${code}) before it served`); }),
  ]);
  return { ...JSON.parse(first.value), stop: () => { child.stdin.end(); return exited; } };
}

/** The kernel's high-water mark of this process's rss (bytes), or null off Linux. */
async function rssPeak() {
  const kb = /VmHWM:\s+(\d+) kB/.exec(await readFile('/proc/self/status', 'utf8').catch(() => ''))?.[1];
  return kb ? Number(kb) * 1024 : null;
}

/** The open in Node, cache: false (nothing kept on disk): what its memory grew by. */
async function nodePeak(hub) {
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc');
  const engine = await loadEngine({ threads: 1 });
  const heapSize = () => engine.heap.memory.buffer.byteLength;
  gc();
  // writing 5 to clear_refs resets VmHWM to the rss now (Linux)
  const hwmReset = await writeFile('/proc/self/clear_refs', '5').then(() => true, () => false);
  const before = { ...process.memoryUsage(), heap: heapSize() };
  const high = { rss: before.rss, arrayBuffers: before.arrayBuffers };
  const sample = () => {
    const now = process.memoryUsage();
    high.rss = Math.max(high.rss, now.rss);
    high.arrayBuffers = Math.max(high.arrayBuffers, now.arrayBuffers);
  };
  const timer = setInterval(sample, 5);
  const t0 = performance.now();
  let model;
  try {
    model = await engine.openModel(REPO, { hub: hub.url, cache: false, onProgress: sample });
  } finally {
    clearInterval(timer);
  }
  const seconds = (performance.now() - t0) / 1000;
  sample();
  const hwm = hwmReset ? await rssPeak() : null;
  const after = { heap: heapSize() };
  if (model.config.layers !== 12 || model.source.files[WEIGHTS].size !== hub.size) throw new Error('openModel gave the wrong model');
  const F = hub.size;
  const peak = (hwm ?? high.rss) - before.rss;
  console.log(`  Node: opened ${REPO} (${mb(F)}, ${model.config.parameters.toLocaleString('en')} parameters, ${model.config.dtype}) from the local hub in ${fmt(seconds, 1)} s`);
  console.log(`   WASM heap ${mb(before.heap)} before, ${mb(after.heap)} after: grew ${mb(after.heap - before.heap)} = ${fmt((after.heap - before.heap) / F)}x the file`);
  console.log(`   rss ${mb(before.rss)} before; sampled peak +${mb(high.rss - before.rss)} (${fmt((high.rss - before.rss) / F)}x)${hwm === null ? ' (no VmHWM here)' : `; high-water mark +${mb(hwm - before.rss)} (${fmt((hwm - before.rss) / F)}x)`}`);
  console.log(`   ArrayBuffers outside the heap: ${mb(before.arrayBuffers)} before, peak +${mb(high.arrayBuffers - before.arrayBuffers)}`);
  console.log(`  peak memory of the open <= ${TARGETS.peak}x the file      +${mb(peak)} = ${fmt(peak / F)}x   ${verdict(peak <= TARGETS.peak * F)}`);
  model.destroy();
}

/** A process's resident memory now and its high-water mark (bytes), from /proc; null once it is gone. */
async function memoryOf(pid) {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => null);
  if (status === null) return null;
  const kb = (field) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? NaN) * 1024;
  return { rss: kb('VmRSS'), hwm: kb('VmHWM') };
}

/** Every process of the Chromium whose profile is `profile`: its browser process and all it started. [{ pid, type }] */
async function chromeProcesses(profile) {
  const procs = [];
  for (const pid of (await readdir('/proc').catch(() => [])).filter((p) => /^\d+$/.test(p))) {
    // Chromium rewrites its command line as one string: read it as words
    const args = (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).split(/[\0 ]/);
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
    const ppid = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1];
    procs.push({ pid, ppid, args });
  }
  const ours = new Set(procs.filter((p) => p.args.includes(`--user-data-dir=${profile}`) && !p.args.some((a) => a.startsWith('--type='))).map((p) => p.pid));
  for (let grew = true; grew;) {
    grew = false;
    for (const p of procs) if (!ours.has(p.pid) && ours.has(p.ppid)) grew = ours.add(p.pid);
  }
  return procs.filter((p) => ours.has(p.pid)).map((p) => ({ pid: p.pid, type: p.args.find((a) => a.startsWith('--type='))?.slice(7) ?? 'browser' }));
}

/** fn() with the peak memory of Chromium's processes around it: { result, page: { type, grew }, total } (grew: bytes). */
async function chromePeak(profile, fn) {
  const procs = await chromeProcesses(profile);
  const before = new Map();
  for (const { pid } of procs) {
    await writeFile(`/proc/${pid}/clear_refs`, '5').catch(() => {}); // VmHWM := VmRSS
    before.set(pid, await memoryOf(pid));
  }
  const result = await fn();
  const grown = [];
  for (const { pid, type } of procs) {
    const [was, now] = [before.get(pid), await memoryOf(pid)];
    if (was && now) grown.push({ type, grew: now.hwm - was.rss });
  }
  grown.sort((a, b) => b.grew - a.grew);
  return { result, page: grown[0], total: grown.reduce((sum, g) => sum + Math.max(0, g.grew), 0), processes: grown.length };
}

/** One line on an open's peak in Chromium, judged on the page's process. */
function printPeak(what, peak, F) {
  const ok = peak.page.grew <= TARGETS.peak * F;
  console.log(`   ${what}: ${peak.processes} processes; every one's growth summed +${mb(peak.total)} (${fmt(peak.total / F)}x)`);
  console.log(`  peak memory of the ${what}, ${peak.page.type} <= ${TARGETS.peak}x   +${mb(peak.page.grew)} = ${fmt(peak.page.grew / F)}x   ${verdict(ok)}`);
}

/** In the page: the engine, then openModel's time and what it says of the files. */
async function openInPage(page, hubUrl) {
  return page.evaluate(async ({ repo, hub }) => {
    const { loadEngine: load } = await import('/engine/index.js');
    const engine = await load({ threads: 1 });
    const t0 = performance.now();
    const m = await engine.openModel(repo, { hub });
    const seconds = (performance.now() - t0) / 1000;
    const out = { seconds, layers: m.config.layers, files: m.source.files, kept: m.source.kept, keepError: m.source.keepError };
    m.destroy();
    return out;
  }, { repo: REPO, hub: hubUrl });
}

/** The second open in Chromium, from Cache Storage with the hub stopped. */
async function browserReopen(hub) {
  const site = await serve({ port: 0 });
  const profile = await mkdtemp(join(os.tmpdir(), 'attnlab-open-model-'));
  // a profile on disk, as a learner's browser keeps Cache Storage; bypassCSP: the site's policy names huggingface.co, not the local hub
  const context = await chromium.launchPersistentContext(profile, { executablePath: findChrome(), args: FLAGS, bypassCSP: true });
  // a page of the site's origin with nothing on it (the server's "not found"), into which the engine is imported as the
  // lab's worker imports it; served, not made up by the bench, so Chromium lets it reach the hub on this machine
  const blank = `${site.url}open-model-bench`;
  try {
    const visit = async () => {
      const page = await context.newPage();
      page.on('pageerror', (err) => console.log(`   page error: ${err}`));
      await page.goto(blank);
      return page;
    };
    const first = await visit();
    const firstPeak = await chromePeak(profile, () => openInPage(first, hub.url));
    const fetched = firstPeak.result;
    if (!fetched.kept) throw new Error(`the first open kept nothing (${fetched.keepError ?? 'no reason given'})`);
    console.log(`  Chromium: first open from the hub ${fmt(fetched.seconds, 1)} s (fetched, hashed, kept in Cache Storage)`);
    printPeak('first open', firstPeak, hub.size);
    await first.close();
    await hub.stop();
    const requests = [];
    context.on('request', (r) => requests.push(r.url()));
    const second = await visit();
    const againPeak = await chromePeak(profile, () => openInPage(second, hub.url));
    const again = againPeak.result;
    const toHub = requests.filter((u) => u.startsWith(hub.url) || u.startsWith(hub.storeUrl) || u.includes(WEIGHTS));
    if (again.layers !== 12 || again.files[WEIGHTS]?.from !== 'kept') throw new Error(`the second open did not come from storage: ${JSON.stringify(again.files)}`);
    if (toHub.length) throw new Error(`the second open asked for the weights: ${toHub.join(', ')}`);
    console.log('   second open: the hub stopped, no request to it or its store, the weights from Cache Storage');
    console.log(`  second open, kept, <= ${TARGETS.reopen} s                    ${fmt(again.seconds, 2)} s   ${verdict(again.seconds <= TARGETS.reopen)}`);
    printPeak('second open', againPeak, hub.size);
  } finally {
    await context.close();
    await new Promise((ok) => site.server.close(ok));
    await rm(profile, { recursive: true, force: true });
  }
}

async function main() {
  const which = process.argv.includes('--node') ? ['node'] : process.argv.includes('--browser') ? ['browser'] : ['node', 'browser'];
  console.log(`load average ${loadAverage()} on ${os.cpus().length} cores`);
  console.log(`engine.openModel of a GPT-2-small-shaped checkpoint (12 x 768, vocabulary 50,257; F32 with the mask buffers) from a local hub`);
  for (const part of which) {
    const hub = await startHubProcess();
    try {
      if (part === 'node') await nodePeak(hub);
      else await browserReopen(hub);
    } finally {
      await hub.stop();
    }
  }
  console.log(`load average ${loadAverage()} at the end`);
}

if (process.argv.includes('--serve-hub')) await serveHub();
else {
  await main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
  process.exit(0);
}
