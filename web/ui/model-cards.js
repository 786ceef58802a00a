// A real model in one click: a row of cards (GPT-2, DistilGPT2, GPT-2 medium,
// Pythia-70M and -160M), each saying its weights' size as the hub reports it
// before anything is fetched (modelSize: one HEAD), opened by one click with a
// progress bar (bytes, rate, time left) and Cancel (an AbortSignal that reaches
// the worker's engine.openModel); Pythia's cards choose a training checkpoint
// with a step slider on the card. The link holds the card chosen and where
// models come from (model-link.js: ?repo, ?revision, ?hub); a link only
// chooses, the reader's click fetches. Below the row: the hub setting (a
// course's own copy, ?hub=./models) and what this browser keeps (keptModels),
// with the space it takes and a Remove each (forgetModel). A hub that cannot be
// reached, or storage that refuses, is said; the files-from-disk route beside
// the cards (gpt2-open.js) always works.
//
//   const cards = mountModelCards(el, { id, open(repo, { hub, revision, onProgress, signal }) })
//     open      opens a model in the page's worker; resolves to its { source } (or rejects: the card says why)
//   cards.refreshKept()   re-reads what is kept (after an open elsewhere)
import { forgetModel, keptModels } from '../engine/hub.js';
import { modelSize } from '../engine/hub-info.js';
import { h, setHidden, setText } from './dom.js';
import { duration } from './format.js';
import { sizeText } from './gpt2-file.js';
import { HUB, MODEL_CARDS, PYTHIA_STEPS, cardOf, modelLink, readHub, readModelLink, revisionText } from './model-link.js';
import { mountTrainingScan } from './training-scan.js';

/** The rate is measured over the last this many ms of progress. */
const RATE_WINDOW = 3000;

const slug = (repo) => repo.split('/')[1].replace(/[^a-z0-9-]/gi, '-').toLowerCase();

/** The page's own policy (its meta tag): which origins a hub setting may name. */
const pagePolicy = () => document.querySelector('meta[http-equiv="Content-Security-Policy"]')?.content ?? null;
const where = () => ({ baseURI: document.baseURI, origin: location.origin, policy: pagePolicy() });

/** A network failure (no HTTP status): the hub cannot be reached from this page. */
const unreachable = (err) => err?.code === 'ERR_LOAD' && err.status === undefined;

export function mountModelCards(el, { id, open }) {
  const link = readModelLink(location.search, where());
  let hub = link.hub;
  let hubLabel = link.hubLabel;
  const chosen = { repo: link.repo, revision: link.revision };

  const hubName = h('span', { dataset: { testid: `${id}-hub-label` } });
  const heading = h('p', { className: 'model-cards-lead' },
    h('strong', { textContent: 'Open a real model in one click: ' }), hubName,
    ' Its files are kept in this browser, so the next visit opens it without fetching again.');
  const row = h('div', { className: 'model-cards', attrs: { role: 'list' } });
  const reach = h('p', { className: 'model-cards-reach', hidden: true, dataset: { testid: `${id}-unreachable` }, attrs: { role: 'status' } });
  const bar = h('progress', { max: 1, value: 0, dataset: { testid: `${id}-hub-progress` }, attrs: { 'aria-label': 'Fetching the model' } });
  const progressText = h('span', { className: 'model-progress-text', dataset: { testid: `${id}-hub-progress-text` }, attrs: { 'aria-live': 'polite' } });
  const cancel = h('button', { type: 'button', textContent: 'Cancel', dataset: { testid: `${id}-hub-cancel` } });
  const progress = h('div', { className: 'model-progress', hidden: true }, bar, progressText, cancel);
  const status = h('p', { className: 'model-cards-status', dataset: { testid: `${id}-hub-status` }, attrs: { role: 'status', 'aria-live': 'polite' } });

  const hubInput = h('input', { type: 'text', id: `${id}-hub`, value: link.hubSetting, placeholder: 'https://huggingface.co', spellcheck: false, dataset: { testid: `${id}-hub-input` }, attrs: { autocomplete: 'off' } });
  const hubUse = h('button', { type: 'button', textContent: 'Use', dataset: { testid: `${id}-hub-use` } });
  const hubSay = h('p', { className: 'hint', dataset: { testid: `${id}-hub-said` }, attrs: { 'aria-live': 'polite' } });
  const hubBox = h('details', { className: 'model-hub', open: Boolean(link.hubSetting) },
    h('summary', { textContent: 'Where models come from' }),
    h('p', { className: 'hint', textContent: 'Empty: the Hugging Face hub. A course\'s own copy, written beside the site by npm run fetch-model, is ./models (or ?hub=./models in the link).' }),
    h('div', { className: 'field-row' }, h('label', { htmlFor: `${id}-hub`, textContent: 'Hub ' }), hubInput, hubUse), hubSay);

  const keptList = h('ul', { className: 'model-kept-list', dataset: { testid: `${id}-kept` } });
  const keptSay = h('p', { className: 'hint', dataset: { testid: `${id}-kept-said` }, attrs: { 'aria-live': 'polite' } });
  const keptBox = h('details', { className: 'model-kept' }, h('summary', { dataset: { testid: `${id}-kept-summary` }, textContent: 'Kept in this browser' }), keptList, keptSay);

  const scanBox = h('div', { className: 'model-scan' }); // Pythia's training, by step (training-scan.js)
  el.replaceChildren(heading, row, reach, progress, status, scanBox, hubBox, keptBox);
  if (link.problems.length) {
    // a link that chose what is not there: said, and the cards stand as they would without it
    status.dataset.kind = 'warning';
    setText(status, link.problems.join(' '));
  }

  let busy = null; // the AbortController of the open under way
  let kept = []; // keptModels()
  let shown = null; // the model the status says was opened: { repo, revision, said }
  const views = new Map(); // repo -> the card's parts

  function card(c) {
    const s = slug(c.repo);
    const size = h('span', { className: 'model-size', dataset: { testid: `${id}-size-${s}` }, textContent: 'size…' });
    const badge = h('span', { className: 'model-kept-badge', hidden: true, textContent: 'kept here', dataset: { testid: `${id}-kept-${s}` } });
    const button = h('button', { type: 'button', className: 'primary', dataset: { testid: `${id}-card-${s}` } }, `Open ${c.name}`);
    const parts = { c, size, badge, button, revision: chosen.repo === c.repo ? chosen.revision : 'main', slider: null, step: null };
    const body = [h('h4', { textContent: c.name }), h('p', { className: 'model-what', textContent: `${c.repo}: ${c.what}` })];
    if (c.revisions.length > 1) {
      const step = h('output', { className: 'model-step', dataset: { testid: `${id}-step-${s}` } });
      const slider = h('input', {
        type: 'range', min: '0', max: String(c.revisions.length - 1), step: '1', value: String(c.revisions.indexOf(parts.revision)),
        dataset: { testid: `${id}-slider-${s}` }, attrs: { 'aria-label': `${c.name}'s training checkpoint` },
      });
      parts.slider = slider;
      parts.step = step;
      let timer = 0;
      slider.addEventListener('input', () => {
        parts.revision = c.revisions[Number(slider.value)];
        showRevision(parts);
        clearTimeout(timer);
        timer = setTimeout(() => (asked ? sizeOf(parts) : ask()), 300); // a size per step the slider rests on, not per step it passes
      });
      body.push(h('label', { className: 'model-steps' }, h('span', { textContent: 'Training step ' }), slider), step);
    }
    body.push(h('p', { className: 'model-facts' }, size, ' ', badge), button);
    const node = h('article', { className: 'model-card', attrs: { role: 'listitem' }, dataset: { testid: `${id}-model-${s}`, repo: c.repo } }, ...body);
    parts.node = node;
    button.addEventListener('click', () => choose(parts));
    if (parts.step) showRevision(parts);
    return parts;
  }

  function showRevision(parts) {
    if (parts.step) setText(parts.step, revisionText(parts.revision));
    parts.slider?.setAttribute('aria-valuetext', revisionText(parts.revision));
    showKept();
  }

  /** The size of a card's weights at its revision, asked of the hub (no bytes fetched). */
  async function sizeOf(parts) {
    const asked = parts.revision;
    parts.size.dataset.state = 'asking';
    setText(parts.size, 'size…');
    try {
      const { bytes, file } = await modelSize(parts.c.repo, { hub, revision: asked });
      if (parts.revision !== asked) return;
      parts.size.dataset.bytes = String(bytes ?? '');
      parts.size.dataset.state = 'said';
      setText(parts.size, bytes === null ? 'size not said by the hub' : `${sizeText(bytes)}${file === 'model.safetensors' ? '' : ` (${file})`}`);
      reachable(true);
    } catch (err) {
      if (parts.revision !== asked) return;
      parts.size.dataset.state = 'failed';
      setText(parts.size, err.status === 404 ? 'not on this hub' : err.status ? `the hub answered ${err.status}` : 'size unknown');
      if (unreachable(err)) reachable(false, err);
    }
  }

  function reachable(ok, err) {
    if (ok) {
      setHidden(reach, true);
      return;
    }
    setText(reach, `${hubLabel} cannot be reached from this page (${String(err.message).replace(/^modelSize: /, '')}). `
      + 'Open the model\'s files from your disk below instead: download them where you can, then choose them here.');
    setHidden(reach, false);
  }

  /**
   * Where models come from. The hub is asked for the sizes at once when the link or the
   * setting named it; for the default hub, once the reader points at, touches or focuses the
   * cards (a page that is only read sends huggingface.co nothing): until then each card says
   * the size the hub listed for it.
   */
  function setHub(value, label) {
    hub = value;
    hubLabel = label;
    setText(hubName, `from ${label}.`);
    asked = hub !== HUB;
    for (const parts of views.values()) {
      if (asked) sizeOf(parts);
      else listed(parts);
    }
  }

  function listed(parts) {
    parts.size.dataset.state = 'listed';
    delete parts.size.dataset.bytes;
    setText(parts.size, parts.revision === 'main' ? `${parts.c.listed} (as listed; point here to ask the hub)` : 'size: asked of the hub when you point here');
  }

  let asked = false;
  const ask = () => {
    if (asked) return;
    asked = true;
    for (const parts of views.values()) sizeOf(parts);
  };
  for (const type of ['pointerenter', 'focusin', 'touchstart']) row.addEventListener(type, ask, { passive: true });

  function writeLink(fields) {
    history.replaceState(history.state, '', `${location.pathname}${modelLink(location.search, fields)}${location.hash}`);
  }

  function mark() {
    for (const parts of views.values()) {
      const on = parts.c.repo === chosen.repo;
      parts.node.classList.toggle('chosen', on);
      if (on) parts.node.setAttribute('aria-current', 'true');
      else parts.node.removeAttribute('aria-current');
    }
  }

  /** The reader's click: the card chosen (in the link) and its model opened. */
  async function choose(parts) {
    if (busy) return;
    chosen.repo = parts.c.repo;
    chosen.revision = parts.revision;
    writeLink({ repo: chosen.repo, revision: chosen.revision });
    mark();
    busy = new AbortController();
    for (const p of views.values()) p.button.disabled = true;
    const what = `${parts.c.name}${parts.revision === 'main' ? '' : ` at ${revisionText(parts.revision)}`}`;
    bar.value = 0;
    bar.removeAttribute('value');
    setHidden(progress, false);
    setText(progressText, `Starting ${what}…`);
    setText(status, '');
    delete status.dataset.kind;
    shown = null;
    const meter = rateMeter();
    try {
      const made = await open(parts.c.repo, {
        hub, revision: parts.revision, signal: busy.signal,
        onProgress: (p) => showProgress(p, meter),
      });
      const src = made.source;
      const from = src.files['model.safetensors']?.from === 'kept' ? 'from this browser\'s storage, nothing fetched' : `from ${hubLabel}`;
      const keptText = src.kept ? (src.files['model.safetensors']?.from === 'kept' ? '' : ' Kept in this browser for the next visit.')
        : ` Not kept in this browser (${src.keepError ?? 'storage is off'}): it opened from the network and will be fetched again next time.`;
      status.dataset.kind = src.kept ? 'info' : 'warning';
      status.dataset.from = src.files['model.safetensors']?.from ?? '';
      const said = `Opened ${what} ${from}.`;
      setText(status, `${said}${keptText}`);
      shown = { repo: parts.c.repo, revision: parts.revision, said };
    } catch (err) {
      status.dataset.kind = 'error';
      if (err?.code === 'ERR_ABORT') setText(status, `Cancelled: ${what} was not opened, and nothing of it is kept.`);
      else if (unreachable(err)) {
        setText(status, `${what} could not be fetched: ${hubLabel} cannot be reached from this page. Open its files from your disk below.`);
        reachable(false, err);
      } else setText(status, `${what} could not be opened: ${err?.code ? `${err.code}: ` : ''}${String(err?.message ?? err).replace(/\.$/, '')}.`);
    } finally {
      busy = null;
      setHidden(progress, true);
      for (const p of views.values()) p.button.disabled = false;
      await refreshKept();
    }
  }

  function rateMeter() {
    const samples = [];
    return (loaded) => {
      const now = performance.now();
      samples.push({ now, loaded });
      while (samples.length > 2 && now - samples[0].now > RATE_WINDOW) samples.shift();
      const first = samples[0];
      return now > first.now ? ((loaded - first.loaded) * 1000) / (now - first.now) : null;
    };
  }

  function showProgress({ file, loaded, total, kept: fromKept }, meter) {
    if (file !== 'model.safetensors') {
      setText(progressText, `${fromKept ? 'Reading' : 'Fetching'} ${file}…`);
      return;
    }
    const rate = meter(loaded);
    if (total) bar.value = loaded / total;
    const parts = [`${file}${fromKept ? ' from this browser\'s storage' : ''}: ${sizeText(loaded)}${total ? ` of ${sizeText(total)}` : ''}`];
    if (rate && rate > 0) {
      parts.push(`${sizeText(rate)}/s`);
      if (total && loaded < total) parts.push(`about ${duration((total - loaded) / rate)} left`);
    }
    bar.dataset.loaded = String(loaded);
    setText(progressText, parts.join(' · '));
  }

  /** What this browser keeps, with the space it takes; each with Remove. */
  async function refreshKept() {
    try {
      kept = await keptModels();
    } catch (err) {
      kept = [];
      keptList.replaceChildren();
      setText(keptSay, `This browser keeps no models for this site (${err.message}): each model is fetched again when opened, and still opens.`);
      showKept();
      return;
    }
    const total = kept.reduce((sum, m) => sum + m.bytes, 0);
    keptList.replaceChildren(...kept.map((m) => {
      const name = `${cardOf(m.repo)?.name ?? m.repo}${m.revision === 'main' ? '' : ` at ${revisionText(m.revision)}`}`;
      const remove = h('button', { type: 'button', textContent: 'Remove', dataset: { testid: `${id}-remove-${slug(m.repo)}-${m.revision}` }, attrs: { 'aria-label': `Remove ${name}` } });
      remove.addEventListener('click', async () => {
        remove.disabled = true;
        try {
          await forgetModel(m.repo, m.revision);
          // the status no longer says it is kept
          if (shown?.repo === m.repo && shown.revision === m.revision) {
            status.dataset.kind = 'info';
            setText(status, `${shown.said} Since removed from this browser: opening it again fetches it again.`);
          }
        } catch (err) {
          setText(keptSay, `${name} could not be removed: ${err.message}`);
        }
        await refreshKept();
      });
      return h('li', { dataset: { repo: m.repo, revision: m.revision } }, h('span', { textContent: `${name}: ${sizeText(m.bytes)} ` }), remove);
    }));
    let space = '';
    try {
      const estimate = await navigator.storage?.estimate?.();
      if (estimate?.quota) space = ` This site may use up to ${sizeText(estimate.quota)} of this browser's storage.`;
    } catch {
      // no estimate: the list says enough
    }
    setText(keptBox.querySelector('summary'), `Kept in this browser: ${kept.length ? `${kept.length} model${kept.length > 1 ? 's' : ''}, ${sizeText(total)}` : 'nothing'}`);
    setText(keptSay, kept.length ? `Removing a model frees its space; opening it again fetches it again.${space}` : `Nothing is kept yet: a model opened from a card is kept here for the next visit.${space}`);
    showKept();
  }

  function showKept() {
    for (const parts of views.values()) setHidden(parts.badge, !kept.some((m) => m.repo === parts.c.repo && m.revision === parts.revision));
  }

  hubUse.addEventListener('click', () => {
    const read = readHub(hubInput.value, where());
    if (read.error) {
      setText(hubSay, `Not used: ${JSON.stringify(hubInput.value.trim().slice(0, 80))} ${read.error}.`);
      hubSay.dataset.kind = 'error';
      return;
    }
    hubSay.dataset.kind = 'info';
    setText(hubSay, `Models now come from ${read.label}.`);
    writeLink({ hub: hubInput.value.trim() });
    setHub(read.hub, read.label);
  });
  cancel.addEventListener('click', () => busy?.abort());

  for (const c of MODEL_CARDS) {
    const parts = card(c);
    views.set(c.repo, parts);
    row.append(parts.node);
  }
  mark();
  setHub(hub, hubLabel);
  refreshKept();
  mountTrainingScan(scanBox, { id, repo: chosen.repo, hub: () => ({ hub, label: hubLabel }), onKept: refreshKept });
  return { refreshKept, steps: PYTHIA_STEPS };
}
