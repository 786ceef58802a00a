// The Learn page: loads the engine and the pretrained models, then mounts each
// chapter's widgets (chapter 1 first, so the page is interactive early).
// Wiring only: each chapter's file owns its widgets, numbers.js the quoted figures.
import { loadEngine } from '../engine/index.js';
import { mountHeader } from '../ui/header.js';
import { createNotice } from '../ui/notice.js';
import { mountBottleneck } from './ch1-bottleneck.js';
import { mountDot } from './ch2-dot.js';
import { mountAverage } from './ch3-average.js';
import { mountScores } from './ch4-scores.js';
import { mountSelf } from './ch5-self.js';
import { mountDates } from './ch6-dates.js';
import { numbers } from './numbers.js';
import { onProgress, progress } from './progress.js';

const header = mountHeader({ current: 'learn', skipTo: 'main', tagline: 'attention, chapter by chapter' });
const notice = createNotice(document.getElementById('notice'));
const CHAPTERS = ['bottleneck', 'dot', 'average', 'scores', 'self', 'dates'];

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

async function main() {
  const manifestP = fetch('models/models.json').then((r) => { if (!r.ok) throw new Error(`models/models.json: HTTP ${r.status}`); return r.json(); });
  const fileOf = (name) => manifestP.then((m) => fetchBytes(`models/${m.models[name].file}`));
  const bytes = { attention: fileOf('reverse-attention'), bottleneck: fileOf('reverse-bottleneck'), dates: fileOf('dates') };
  const [engine, manifest, attention, bottleneck] = await Promise.all([loadEngine(), manifestP, bytes.attention, bytes.bottleneck]);
  header.status(`WebAssembly ${engine.simd ? 'SIMD' : 'scalar'} engine`);
  const models = { attention: engine.loadSeq2Seq(attention), bottleneck: engine.loadSeq2Seq(bottleneck) };
  const ctx = { engine, models, manifest };
  const $ = (id) => document.getElementById(id);
  const ch1 = mountBottleneck($('ch-bottleneck'), ctx);
  document.body.dataset.firstReady = String(Math.round(performance.now())); // ms since navigation
  // the rest after the first chapter has painted
  const nextTask = () => new Promise((ok) => requestAnimationFrame(() => setTimeout(ok, 0)));
  await nextTask();
  ch1.measure();
  models.dates = engine.loadSeq2Seq(await bytes.dates);
  await nextTask();
  mountDot($('ch-dot'), ctx);
  mountAverage($('ch-average'), ctx);
  mountScores($('ch-scores'), ctx);
  mountSelf($('ch-self'), ctx);
  mountDates($('ch-dates'), ctx);
  showProgress(progress());
  onProgress(showProgress);
  window.attnlabLearn = { numbers, engine, models };
  document.body.dataset.ready = 'true';
}

main().catch((err) => {
  notice.show(`The interactive figures could not start: ${err.message}`, 'error');
  document.body.dataset.ready = 'error';
});
