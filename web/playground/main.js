// The playground page: reads the state from the link, loads the engine and
// wires the views to the store. Wiring only: state rules live in state.js,
// engine calls in compute.js, drawing in the views.
import { loadEngine } from '../engine/index.js';
import { computeSteps } from './compute.js';
import { download, exportCsv, exportJson, heatmapSvg, importJson, svgToPng } from './exporter.js';
import { decodeHash, encodeHash } from './link.js';
import { createNotice } from '../ui/notice.js';
import { mountHeader } from '../ui/header.js';
import { bindOptions } from './options.js';
import { bindParams } from './params.js';
import { createProjection } from './projection.js';
import { copyState, defaults } from './state.js';
import { createSteps } from './steps.js';
import { createStore } from './store.js';
import { createTokenEditor } from './tokens.js';

const $ = (id) => document.getElementById(id);
const header = mountHeader({ current: 'playground', skipTo: 'main', tagline: 'attention, step by step, live', actions: [...$('page-actions').children] });
$('page-actions').remove();
const notice = createNotice($('notice'));
// A newcomer is offered the Learn page once, until they dismiss it (remembered in localStorage).
const NEWCOMER = 'attnlab.newcomer.dismissed';
try { $('newcomer').hidden = localStorage.getItem(NEWCOMER) === '1'; } catch { $('newcomer').hidden = false; }
$('newcomer-dismiss').addEventListener('click', () => {
  $('newcomer').hidden = true;
  try { localStorage.setItem(NEWCOMER, '1'); } catch { /* dismissed for this visit */ }
});
const badLink = (error) => notice.show(`This link could not be loaded (${error}), so the default example is shown instead.`, 'error');

async function main() {
  const fromLink = decodeHash(location.hash);
  if (fromLink.error) badLink(fromLink.error);
  const store = createStore(fromLink.state ?? defaults());
  const engine = await loadEngine();
  header.status(`WebAssembly ${engine.simd ? 'SIMD' : 'scalar'} engine`);

  const options = bindOptions(store);
  const params = bindParams(store);
  const tokens = createTokenEditor(store);
  $('tokens').append(tokens.el);
  const projection = createProjection(store, { px: $('px'), py: $('py') });
  $('projection').append(projection.el);
  const steps = createSteps({
    onQuery: (i) => projection.setQuery(i),
    onHead: (head) => store.update((s) => { s.head = head; }, { source: 'head' }),
    onExport: async (id, format, heatmap, title) => {
      const figure = heatmapSvg(heatmap, title);
      const blob = format === 'svg' ? new Blob([figure.svg], { type: 'image/svg+xml' }) : await svgToPng(figure);
      download(`attnlab-${id}.${format}`, blob);
    },
  });
  $('steps').append(steps.el);

  let results = null;
  let hashTimer = 0;
  let written = location.hash;
  const writeHash = () => {
    hashTimer = 0;
    written = encodeHash(store.state);
    if (written !== location.hash) history.replaceState(null, '', written);
  };
  const timings = [];

  function render(s, info) {
    const t0 = performance.now();
    options.update(s);
    tokens.update(s, info);
    params.update(s, info);
    try {
      results = computeSteps(engine, s);
      steps.showError(null);
      steps.update(s, results);
    } catch (err) {
      if (!err.code) throw err;
      steps.showError(err.message);
    }
    projection.update(s, results && results.scores[0].rows === s.tokens.length ? results : null, info);
    timings.push(performance.now() - t0);
    if (timings.length > 500) timings.shift();
    // the link is rewritten when the page is idle, never inside an edit's frame
    if (!hashTimer) hashTimer = requestIdleCallback(writeHash, { timeout: 400 });
  }
  store.subscribe(render);
  render(store.state, { structural: true, source: 'load' });
  writeHash();

  window.addEventListener('hashchange', () => {
    if (location.hash === written) return;
    const next = decodeHash(location.hash);
    if (next.error) badLink(next.error);
    else notice.hide();
    store.replace(next.state ?? defaults(), { source: 'link' });
  });
  $('copy-link').addEventListener('click', async () => {
    writeHash();
    try {
      await navigator.clipboard.writeText(location.href);
      notice.show('Link copied: it reproduces this exact state.');
    } catch {
      notice.show('Copy the address bar: the link holds this exact state.');
    }
  });
  $('export-json').addEventListener('click', () => download('attnlab-state.json', new Blob([exportJson(store.state, results)], { type: 'application/json' })));
  $('export-csv').addEventListener('click', () => download('attnlab-matrices.csv', new Blob([exportCsv(store.state, results)], { type: 'text/csv' })));
  $('import-json').addEventListener('change', async () => {
    const file = $('import-json').files[0];
    $('import-json').value = '';
    if (!file) return;
    const r = await importJson(file);
    if (r.error) { notice.show(`Could not import “${file.name}”: ${r.error}.`, 'error'); return; }
    notice.show(`Imported “${file.name}”.`);
    store.replace(r.state, { source: 'import' });
  });

  window.attnlab = Object.freeze({ state: () => copyState(store.state), timings: () => [...timings] });
  document.body.dataset.ready = 'true';
}

main().catch((err) => {
  header.status('The engine did not load');
  notice.show(`attnlab could not start: ${err.message}`, 'error');
  console.error(err);
});
