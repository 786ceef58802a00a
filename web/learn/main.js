// The Learn page: loads the engine and the pretrained models, then mounts each
// chapter's widgets (chapter 1 first, so the page is interactive early).
// Wiring only: each chapter's file owns its widgets, numbers.js the quoted figures.
// Chapters 2-9 are imported once chapter 1 is up, so they are off its critical path;
// the image models (and the digit set they need) load after chapters 2-6 are up, and
// chapter 9 (which trains its transformers when asked) comes last, then chapter 10 (a GPT-2 the reader opens)
// and chapter 11 (circuits in both).
// Chapters 7 and 8 compute their quoted figures when a reader nears them (lazy.js), not at load.
import { loadEngine } from '../engine/index.js';
import { embedParams } from '../ui/embed.js';
import { mountHeader } from '../ui/header.js';
import { createNotice } from '../ui/notice.js';
import { createPrefetch } from '../ui/prefetch.js';
import { mountBottleneck } from './ch1-bottleneck.js';
import { numbers } from './numbers.js';
import { addEmbedButtons, pickWidget, startLearnEmbed } from './embed.js';
import { computeWhenNear } from './lazy.js';
import { onProgress, progress } from './progress.js';

const embedded = embedParams();

const header = mountHeader({ current: 'learn', skipTo: 'main', tagline: 'attention, chapter by chapter' });
const notice = createNotice(document.getElementById('notice'));
const CHAPTERS = ['bottleneck', 'dot', 'average', 'scores', 'self', 'dates', 'kinds', 'images', 'transformer', 'gpt2', 'circuit'];

async function fetchBytes(url) {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`${url}: HTTP ${res.status}`);
  return new Uint8Array(await res.arrayBuffer());
}

function showProgress(all) {
  const done = CHAPTERS.filter((id) => all[id]).length;
  document.getElementById('progress').textContent = `${done} of ${CHAPTERS.length} challenges solved`;
  for (const id of CHAPTERS) document.querySelector(`[data-toc="${id}"]`)?.classList.toggle('done', Boolean(all[id]));
}

/** A display equation wider than its column scrolls; then it takes focus, so a keyboard can scroll it. */
function focusableWhenScrolling() {
  for (const el of document.querySelectorAll('.math.display')) {
    if (el.scrollWidth > el.clientWidth) {
      el.tabIndex = 0;
      el.setAttribute('role', 'group');
      el.setAttribute('aria-label', 'equation (scrolls sideways)');
    } else if (el.hasAttribute('tabindex')) {
      el.removeAttribute('tabindex');
      el.removeAttribute('role');
      el.removeAttribute('aria-label');
    }
  }
}

/** The models (by name in models/models.json) each chapter's widgets read, when one is embedded alone. */
const MODELS = {
  bottleneck: { attention: 'reverse-attention', bottleneck: 'reverse-bottleneck' },
  dates: { dates: 'dates' },
  kinds: { dates: 'dates', softVision: 'cluttered-soft', hardVision: 'cluttered-hard' },
  images: { dates: 'dates', softVision: 'cluttered-soft', hardVision: 'cluttered-hard' },
};
/** Each embeddable chapter's module (a chunk of its own), imported as soon as the widget is known. */
const CHUNKS = {
  dot: () => import('./ch2-dot.js'),
  average: () => import('./ch3-average.js'),
  scores: () => import('./ch4-scores.js'),
  self: () => import('./ch5-self.js'),
  dates: () => import('./ch6-dates.js'),
  kinds: () => import('./ch7-kinds.js'),
  images: () => Promise.all([import('./ch7-kinds.js'), import('./ch8-images.js')]),
  transformer: () => import('./ch9-transformer.js'),
};
/** Model files a chapter fetches itself as it mounts (by name in models/models.json): fetched alongside the engine when it is embedded alone. */
const OWN_FILES = { transformer: ['induction'] };
/** Mounts one chapter alone (chapter 8 reads the accuracies chapter 7 measures, so it mounts 7 as well, unseen). */
const MOUNT = {
  bottleneck: async ($, ctx) => mountBottleneck($('ch-bottleneck'), ctx).measure(),
  dot: async ($, ctx) => (await CHUNKS.dot()).mountDot($('ch-dot'), ctx),
  average: async ($, ctx) => (await CHUNKS.average()).mountAverage($('ch-average'), ctx),
  scores: async ($, ctx) => (await CHUNKS.scores()).mountScores($('ch-scores'), ctx),
  self: async ($, ctx) => (await CHUNKS.self()).mountSelf($('ch-self'), ctx),
  dates: async ($, ctx) => (await CHUNKS.dates()).mountDates($('ch-dates'), ctx),
  kinds: async ($, ctx) => (await CHUNKS.kinds()).mountKinds($('ch-kinds'), ctx).measure(),
  images: async ($, ctx) => {
    const [{ mountKinds }, { mountImages }] = await CHUNKS.images();
    const ch7 = mountKinds($('ch-kinds'), ctx);
    await mountImages($('ch-images'), ctx).measure(await ch7.measure());
  },
  transformer: async ($, ctx) => (await CHUNKS.transformer()).mountTransformer($('ch-transformer'), ctx),
};

/** One widget, embedded: its chapter alone is mounted, with the models it reads. */
async function mainEmbedded() {
  const pick = pickWidget(embedded);
  if (pick.error) throw new Error(`this page has no such widget: ${pick.error}`);
  const widget = startLearnEmbed(embedded, pick);
  // the chapter's module, the manifest, the engine and every file the widget reads load at once
  CHUNKS[pick.id]?.().catch(() => {}); // (a failure shows when the chapter mounts)
  const enginePromise = loadEngine({ threads: pick.spec.trains ? 'auto' : 1 }); // a training widget takes the threads an isolated host allows; the figures stay on one (see main)
  enginePromise.catch(() => {}); // awaited below; this only keeps a failure before then from being reported twice
  const manifest = await fetch('models/models.json').then((r) => { if (!r.ok) throw new Error(`models/models.json: HTTP ${r.status}`); return r.json(); });
  const own = createPrefetch(fetchBytes); // the files the chapter fetches itself
  for (const name of OWN_FILES[pick.id] ?? []) if (manifest.models[name]) own.start(`models/${manifest.models[name].file}`);
  const names = Object.entries(MODELS[pick.id] ?? {});
  const [engine, ...files] = await Promise.all([enginePromise, ...names.map(([, file]) => fetchBytes(`models/${manifest.models[file].file}`))]);
  const models = {};
  names.forEach(([key], k) => { models[key] = key.endsWith('Vision') ? engine.loadVisionModel(files[k]) : engine.loadSeq2Seq(files[k]); });
  await MOUNT[pick.id]((id) => document.getElementById(id), { engine, models, manifest, fetchBytes: own.take });
  widget.trained(engine);
  document.body.dataset.ready = 'true';
  widget.ready();
}

async function main() {
  if (embedded) return mainEmbedded();
  focusableWhenScrolling();
  addEventListener('resize', focusableWhenScrolling);
  const manifestP = fetch('models/models.json').then((r) => { if (!r.ok) throw new Error(`models/models.json: HTTP ${r.status}`); return r.json(); });
  const fileOf = (name) => manifestP.then((m) => fetchBytes(`models/${m.models[name].file}`));
  const bytes = { attention: fileOf('reverse-attention'), bottleneck: fileOf('reverse-bottleneck'), dates: fileOf('dates') };
  // one thread: the article's figures are small calls, where waking workers costs more than it
  // saves, and the single-thread build is the one learn.html preloads
  const [engine, manifest, attention, bottleneck] = await Promise.all([loadEngine({ threads: 1 }), manifestP, bytes.attention, bytes.bottleneck]);
  header.engine(engine, 'by choice: the figures are small calls (a training widget takes more)');
  const models = { attention: engine.loadSeq2Seq(attention), bottleneck: engine.loadSeq2Seq(bottleneck) };
  const ctx = { engine, models, manifest, fetchBytes };
  const $ = (id) => document.getElementById(id);
  const ch1 = mountBottleneck($('ch-bottleneck'), ctx);
  document.body.dataset.firstReady = String(Math.round(performance.now())); // ms since navigation
  // the rest after the first chapter has painted
  const nextTask = () => new Promise((ok) => requestAnimationFrame(() => setTimeout(ok, 0)));
  await nextTask();
  const rest = Promise.all([import('./ch2-dot.js'), import('./ch3-average.js'), import('./ch4-scores.js'), import('./ch5-self.js'), import('./ch6-dates.js')]);
  await ch1.measure();
  models.dates = engine.loadSeq2Seq(await bytes.dates);
  const [{ mountDot }, { mountAverage }, { mountScores }, { mountSelf }, { mountDates }] = await rest;
  // a task each, so that no task of the page's load holds input up for long
  for (const [mount, id] of [[mountDot, 'ch-dot'], [mountAverage, 'ch-average'], [mountScores, 'ch-scores'], [mountSelf, 'ch-self'], [mountDates, 'ch-dates']]) {
    await nextTask();
    mount($(id), ctx);
  }
  await nextTask();
  const [soft, hard, { mountKinds }, { mountImages }] = await Promise.all([
    fileOf('cluttered-soft').then((b) => engine.loadVisionModel(b)), fileOf('cluttered-hard').then((b) => engine.loadVisionModel(b)),
    import('./ch7-kinds.js'), import('./ch8-images.js')]);
  Object.assign(models, { softVision: soft, hardVision: hard });
  await nextTask();
  const ch7 = mountKinds($('ch-kinds'), ctx);
  await nextTask();
  const ch8 = mountImages($('ch-images'), ctx);
  // their figures (several evaluations; chapter 8's retina loads its own file) when a reader nears them
  const figures = computeWhenNear([$('ch-kinds'), $('ch-images')], async () => ch8.measure(await ch7.measure()));
  // chapter 9 trains its models on demand (or loads a pretrained one): last, off every other chapter's path
  const { mountTransformer } = await import('./ch9-transformer.js');
  const ch9 = mountTransformer($('ch-transformer'), ctx);
  // chapter 10 reads a GPT-2 the reader opens, in the lab's worker (started only then)
  const { mountGpt2 } = await import('./ch10-gpt2.js');
  const ch10 = mountGpt2($('ch-gpt2'));
  // chapter 11 trains its model when asked, and reads chapter 10's model (in that chapter's worker) when one is open
  const { mountCircuit } = await import('./ch11-circuit.js');
  const ch11 = mountCircuit($('ch-circuit'), { engine, gpt2: ch10 });
  showProgress(progress());
  onProgress(showProgress);
  window.attnlabLearn = { numbers, engine, models, ch9, ch10, ch11, figures };
  addEmbedButtons();
  document.body.dataset.ready = 'true';
}

main().catch((err) => {
  console.error(err);
  notice.show(`The interactive figures could not start: ${err.message}`, 'error');
  document.body.dataset.ready = 'error';
});
