// The playground page: reads the state from the link, loads the engine and
// wires the views to the store. Wiring only: state rules live in state.js, the
// link format in ui/url-state.js with this page's table, engine calls in
// compute.js, drawing in the views.
import { loadEngine } from '../engine/index.js';
import { byId as $, h, setText } from '../ui/dom.js';
import { download } from '../ui/download.js';
import { mountHeader } from '../ui/header.js';
import { embedParams } from '../ui/embed.js';
import { embedButton } from '../ui/embed-button.js';
import { createNotice } from '../ui/notice.js';
import { describeState } from './about.js';
import { computeSteps, mixedSignRange } from './compute.js';
import { exportCsv, exportJson, importJson } from './exporter.js';
import { bindOptions } from './options.js';
import { bindParams } from './params.js';
import { createPositionsView } from './positions-view.js';
import { createProjection } from './projection.js';
import { codec, copyState } from './state.js';
import { createSteps } from './steps.js';
import { createStore } from './store.js';
import { createTokenEditor } from './tokens.js';
import { startPlaygroundEmbed } from './embed.js';

const embedded = embedParams();
$('copy-link').after(embedButton({ widget: 'playground', measure: () => $('main'), label: 'Embed the playground in another page' }));

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

async function main() {
  const fromLink = codec.decode(location.hash);
  notice.linkFields(fromLink.ignored);
  const store = createStore(fromLink.state);
  header.status('Loading the engine…');
  const engine = await loadEngine();
  header.engine(engine);

  const options = bindOptions(store);
  const params = bindParams(store);
  const tokens = createTokenEditor(store);
  $('tokens').append(tokens.el);
  // the point held in the 2-D view is the query whose row the heatmaps outline
  const projection = createProjection(store, { px: $('px'), py: $('py'), onPick: (i) => steps.markQuery(i) });
  $('projection').append(projection.el);
  const steps = createSteps({
    tools: [$('lock-box')],
    onQuery: (i) => projection.setQuery(i),
    onHead: (head) => store.update((s) => { s.head = head; }, { source: 'head' }),
    onExport: async (id, format, heatmap, title) => {
      const blob = format === 'svg' ? new Blob([heatmap.svg(title).svg], { type: 'image/svg+xml' }) : await heatmap.png(title);
      download(`attnlab-${id}.${format}`, blob);
    },
  });
  $('steps').append(steps.el);
  // the shuffle reorders tokens and vectors together, as a row move in the token editor does
  const positions = createPositionsView(engine, {
    state: () => store.state,
    onPermute: ({ tokens, x }) => store.update((s) => { s.tokens = tokens; s.x = x; }, { source: 'permute', structural: true }),
  });
  $('steps').append(positions.el);
  // skip links after the header's own: one per step (kept by the steps view), then the inputs
  const skipTo = (id, text) => h('a', { className: 'skip', href: `#${id}`, textContent: text });
  header.el.before(h('nav', { className: 'skips', attrs: { 'aria-label': 'Skip to a figure' } },
    steps.skips, skipTo('drag-view', 'Skip to the 2-D view (drag the vectors)'), skipTo('embeddings', 'Skip to the embeddings'),
    skipTo('parameters', 'Skip to the parameters'), skipTo('step-positions', 'Skip to positions and order')));

  let results = null;
  let hashTimer = 0;
  let written = location.hash;
  let widget = null; // embed mode's messages
  let edited = false; // the learner changed the state since the link was last written
  const writeHash = () => {
    clearTimeout(hashTimer);
    written = codec.encode(store.state);
    if (written !== location.hash) history.replaceState(null, '', written);
    if (edited) widget?.state(`${location.origin}${location.pathname}${written}`);
    edited = false;
  };
  const timings = [];
  let locked = null;

  function render(s, info) {
    const t0 = performance.now();
    if (!['load', 'link', 'embed'].includes(info.source)) edited = true;
    if (s.lock !== locked) { locked = s.lock; steps.setLock(s.lock); }
    tokens.update(s, info);
    params.update(s, info);
    let sumRange = null;
    try {
      results = computeSteps(engine, s);
      sumRange = s.mode === 'attend' && s.normalize === 'sum' ? mixedSignRange(results.scores[0], results.weights[0]) : null;
      steps.showError(null);
      steps.update(s, results, { sumRange });
      positions.update(s, results);
    } catch (err) {
      if (!err.code) throw err;
      results = null;
      steps.showError(err.message);
      positions.update(s, null);
    }
    options.update(s, { sumRange });
    setText($('preset-about'), describeState(s));
    setText($('from'), s.from ? `From ${s.from}.` : '');
    $('from').hidden = !s.from;
    projection.update(s, results && results.scores[0].rows === s.tokens.length ? results : null, info);
    timings.push(performance.now() - t0);
    if (timings.length > 500) timings.shift();
    // the link is rewritten once edits pause, in idle time: encoding a 64 × 64 state takes
    // 10–20 ms, which after every edit would hold up the frames of the edits that follow
    clearTimeout(hashTimer);
    hashTimer = setTimeout(() => requestIdleCallback(writeHash, { timeout: 300 }), 250);
  }
  store.subscribe(render);
  render(store.state, { structural: true, source: 'load' });
  writeHash();

  const loadLink = (hash) => {
    const next = codec.decode(hash);
    if (next.ignored.length) notice.linkFields(next.ignored);
    else notice.hide();
    store.replace(next.state, { source: 'link' });
  };
  window.addEventListener('hashchange', () => {
    if (location.hash !== written) loadLink(location.hash);
  });
  if (embedded) {
    widget = startPlaygroundEmbed(embedded, { store, loadLink: (hash) => { loadLink(hash); writeHash(); } });
  }
  $('copy-link').addEventListener('click', async () => {
    writeHash();
    try {
      await navigator.clipboard.writeText(location.href);
      notice.show('Link copied: it reproduces this exact state.');
    } catch {
      notice.show('Copy the address bar: the link holds this exact state.');
    }
  });
  $('export-json').addEventListener('click', () => results && download('attnlab-state.json', new Blob([exportJson(store.state, results)], { type: 'application/json' })));
  $('export-csv').addEventListener('click', () => results && download('attnlab-matrices.csv', new Blob([exportCsv(store.state, results)], { type: 'text/csv' })));
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
  if (widget) widget.ready();
}

main().catch((err) => {
  header.status('The engine did not load');
  notice.show(`attnlab could not start: ${err.message}`, 'error');
  console.error(err);
});
