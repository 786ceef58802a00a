// "Pythia's training, by step", under the model cards: a list of Pythia's saved
// training steps (editable; in the link as ?steps=), the whole download said
// before anything is fetched (modelSize per step; what this browser keeps costs
// nothing), then one click scans: each step's checkpoint opened in a worker of
// its own (engine.openModel: fetched and kept, with progress), its heads scored
// (headScores: previous-token and induction), its in-context-learning score read
// on the prose of this site's Learn chapters, and the model destroyed before the
// next, so one is in memory at a time. Drawn as it goes: each head's induction
// score against the step on a log axis (the strongest heads named, the rest
// faint), the previous-token scores in a second chart, and the score of Olsson
// et al. (2022) beside them. Cancel stops the scan where it is (an open is
// aborted through the worker's port, a computation by ending the worker); what
// was scanned stays drawn. A link only chooses the steps: nothing is fetched
// until the reader clicks.
//
//   mountTrainingScan(el, { id, repo, hub, onKept })
//     repo      the Pythia card chosen by the link (or null)
//     hub()     { hub, label }: where models come from now (the cards' setting)
//     onKept()  after a scan: what this browser keeps has changed
import { keptModels } from '../engine/hub.js';
import { modelSize } from '../engine/hub-info.js';
import { LabClient } from '../worker/lab-client.js';
import { h, setHidden, setText } from './dom.js';
import { fixed } from './format.js';
import { scan as scanOptions, sizeText } from './gpt2-file.js';
import { HUB, MODEL_CARDS } from './model-link.js';
import { drawStepChart } from './step-chart.js';
import {
  ICL_EARLY, ICL_LATE, ICL_LENGTH, ICL_PASSAGES, iclNeeds, iclScore, parseSteps, passages, readScanLink, revisionOf,
  scanLink, stepsText, strongestHeads,
} from './training-scan-core.js';

/** The heads named in colour in each chart; the others are drawn faint. */
const NAMED = 4;
const COLORS = ['#d6336c', '#1c7ed6', '#f08c00', '#2b8a3e'];
const TEXT_NAME = "the prose of this site's Learn chapters";

const abortError = () => Object.assign(new Error('the scan was cancelled'), { code: 'ERR_ABORT' });

/** The Learn chapters' paragraphs (learn.html, read as inert HTML: nothing in it runs), as one text. */
let learnText = null;
async function shippedText() {
  learnText ??= (async () => {
    const r = await fetch(new URL('learn.html', document.baseURI));
    if (!r.ok) throw new Error(`learn.html answered ${r.status}`);
    const doc = new DOMParser().parseFromString(await r.text(), 'text/html');
    for (const m of doc.querySelectorAll('.katex, .math, script, style')) m.remove();
    return [...doc.querySelectorAll('section.chapter p')].map((p) => p.textContent.replace(/\s+/g, ' ').trim()).filter(Boolean).join('\n\n');
  })();
  try {
    return await learnText;
  } catch (err) {
    learnText = null;
    throw err;
  }
}

let stylesheet = false;
function addStylesheet() {
  if (stylesheet) return;
  stylesheet = true;
  // against the page (lab.html, learn.html sit at the site's root), not this module: the built site bundles it elsewhere
  document.head.append(h('link', { rel: 'stylesheet', href: new URL('ui/training-scan.css', document.baseURI).href }));
}

export function mountTrainingScan(el, { id, repo, hub, onKept = () => {} }) {
  addStylesheet();
  const pythia = MODEL_CARDS.filter((c) => c.revisions.length > 1);
  const link = readScanLink(location.search);
  const tid = (name) => `${id}-steps-${name}`; // not `-scan-`: the lab's head scan is gpt2-scan

  const model = h('select', { id: tid('model'), dataset: { testid: tid('model') } },
    ...pythia.map((c) => h('option', { value: c.repo, textContent: c.name, selected: c.repo === repo })));
  const stepsInput = h('input', { type: 'text', id: tid('steps'), value: stepsText(link.steps), spellcheck: false, dataset: { testid: tid('steps') }, attrs: { autocomplete: 'off', 'aria-describedby': tid('steps-said') } });
  const stepsSaid = h('p', { className: 'hint', id: tid('steps-said'), dataset: { testid: tid('steps-said') }, attrs: { 'aria-live': 'polite' } });
  const sizes = h('p', { className: 'scan-sizes', dataset: { testid: tid('sizes') }, attrs: { 'aria-live': 'polite' } });
  const start = h('button', { type: 'button', className: 'primary', textContent: 'Scan these steps', dataset: { testid: tid('start') } });
  const cancel = h('button', { type: 'button', textContent: 'Cancel', hidden: true, dataset: { testid: tid('cancel') } });
  const bar = h('progress', { max: 1, value: 0, dataset: { testid: tid('progress') }, attrs: { 'aria-label': 'The scan' } });
  const barText = h('span', { className: 'model-progress-text', dataset: { testid: tid('progress-text') }, attrs: { 'aria-live': 'polite' } });
  const progress = h('div', { className: 'model-progress', hidden: true }, bar, barText);
  const status = h('p', { className: 'model-cards-status', dataset: { testid: tid('status') }, attrs: { role: 'status', 'aria-live': 'polite' } });

  const figure = (name, title, source) => {
    const chart = h('div', { className: 'step-chart-box', dataset: { testid: tid(name) } });
    const legend = h('p', { className: 'chart-legend step-legend', dataset: { testid: tid(`${name}-legend`) } });
    const caption = h('figcaption', {}, h('strong', { textContent: title }));
    const said = h('p', { className: 'hint scan-source', textContent: source });
    return { node: h('figure', { className: `chart scan-figure scan-${name}` }, caption, chart, legend, said), chart, legend, caption, said };
  };
  const heads = 'Computed here: headScores on 8 runs of 50 random tokens shown twice, at each step\'s checkpoint. '
    + 'Induction: the attention from a token\'s second occurrence to the token after its first (prefix matching).';
  const figs = {
    induction: figure('induction', 'Induction score of every head, by training step', heads),
    icl: figure('icl', 'In-context-learning score, by training step',
      `Computed here on ${ICL_PASSAGES} passages of ${ICL_LENGTH} tokens of ${TEXT_NAME}: the loss at token ${ICL_LATE} minus the loss at token ${ICL_EARLY} `
      + '(nats; tokens counted from 0), averaged over the passages. Below zero: later tokens of a text are predicted better than early ones.'),
    previous: figure('previous', 'Previous-token score of every head, by training step',
      'Computed here, with the induction scores: the attention from each token to the one just before it.'),
  };
  const figures = h('div', { className: 'scan-figures', hidden: true, dataset: { testid: tid('figures') } },
    figs.induction.node, figs.icl.node, figs.previous.node);

  const box = h('details', { className: 'training-scan', dataset: { testid: tid('box') }, open: link.problems.length > 0 || new URLSearchParams(location.search).has('steps') },
    h('summary', { textContent: 'Pythia\'s training, by step: do induction heads form?' }),
    h('p', { className: 'hint' },
      'Olsson et al. (2022) report that, in the transformers they trained, induction heads form in a short window early in training, '
      + 'at the same time as in-context learning improves sharply: a “phase change”. Pythia kept its weights along its training, so '
      + 'the same can be looked for in a real model here: each step below is fetched, its heads scored and its in-context learning measured, '
      + 'one step at a time.'),
    h('div', { className: 'scan-form' },
      h('label', { htmlFor: tid('model'), textContent: 'Model ' }), model,
      h('label', { htmlFor: tid('steps'), textContent: 'Training steps ' }), stepsInput),
    stepsSaid, sizes, h('div', { className: 'field-row' }, start, cancel), progress, status, figures);
  el.replaceChildren(box);

  let steps = link.steps;
  let stepProblems = link.problems;
  let said = null; // { key, list: [{ step, bytes, file, kept, error }] }
  let running = null; // { cancel() } while a scan runs
  let rows = [];

  const hubNow = () => hub();
  const key = () => `${hubNow().hub} ${model.value} ${steps.join(',')}`;

  function showSteps() {
    const base = 'Pythia saved step 0, 1, 2, 4, … 512, then every 1,000 to 143,000; separate steps with commas or spaces (4k is 4000).';
    stepsSaid.dataset.kind = stepProblems.length ? 'warning' : 'info';
    setText(stepsSaid, stepProblems.length ? `Not read: ${stepProblems.join('; ')}. ${base}` : base);
    start.disabled = running !== null || steps.length === 0;
  }

  /** Each step's size (one HEAD each; nothing fetched), and what is kept here already. */
  async function askSizes() {
    const asked = key();
    if (said?.key === asked) return said;
    sizes.dataset.state = 'asking';
    setText(sizes, `Asking ${hubNow().label} how large ${steps.length} checkpoint${steps.length === 1 ? ' is' : 's are'}…`);
    let kept = [];
    try {
      kept = await keptModels();
    } catch {
      // storage that cannot be read keeps nothing: every step is fetched
    }
    const list = await Promise.all(steps.map(async (step) => {
      const revision = revisionOf(step);
      const isKept = kept.some((m) => m.repo === model.value && m.revision === revision);
      try {
        const { bytes, file } = await modelSize(model.value, { hub: hubNow().hub, revision });
        return { step, bytes, file, kept: isKept, error: null };
      } catch (err) {
        return { step, bytes: null, file: null, kept: isKept, error: err.status === 404 ? 'not on this hub' : err.message };
      }
    }));
    if (key() !== asked) return said;
    said = { key: asked, list };
    const fetchBytes = list.reduce((s, x) => s + (x.kept ? 0 : x.bytes ?? 0), 0);
    const keptCount = list.filter((x) => x.kept).length;
    const unknown = list.filter((x) => !x.kept && x.bytes === null);
    sizes.dataset.state = 'said';
    sizes.dataset.bytes = String(fetchBytes);
    const name = pythia.find((c) => c.repo === model.value).name;
    setText(sizes, `${list.length} checkpoint${list.length === 1 ? '' : 's'} of ${name}: ${sizeText(fetchBytes)} to fetch from ${hubNow().label}`
      + `${keptCount ? ` (${keptCount} already kept in this browser, read with no request)` : ''}`
      + `${unknown.length ? `; step ${unknown.map((x) => x.step.toLocaleString('en')).join(', ')}: ${unknown.map((x) => x.error ?? 'size not said').join(', ')}` : ''}. `
      + 'Each is kept in this browser for the next visit.');
    return said;
  }

  let timer = 0;
  const soon = () => {
    said = null;
    clearTimeout(timer);
    if (box.open && mayAsk()) timer = setTimeout(askSizes, 300);
  };
  stepsInput.addEventListener('input', () => {
    const read = parseSteps(stepsInput.value);
    steps = read.steps;
    stepProblems = read.problems;
    showSteps();
    if (steps.length) history.replaceState(history.state, '', `${location.pathname}${scanLink(location.search, steps)}${location.hash}`);
    soon();
  });
  model.addEventListener('change', soon);
  // as the cards do: the default hub is asked only once the reader points at, touches or focuses
  // the scan (a page that is only read sends huggingface.co nothing); another hub at once
  let seen = false;
  for (const type of ['pointerenter', 'focusin', 'touchstart']) box.addEventListener(type, () => { seen = true; }, { passive: true });
  const mayAsk = () => seen || hubNow().hub !== HUB;
  box.addEventListener('toggle', () => {
    if (box.open && mayAsk()) askSizes();
  });

  function draw() {
    const done = rows.filter((r) => r.scores);
    setHidden(figures, rows.length === 0);
    const name = pythia.find((c) => c.repo === running?.repo || c.repo === model.value)?.name ?? 'Pythia';
    for (const [fig, key] of [[figs.induction, 'induction'], [figs.previous, 'previousToken']]) {
      const top = strongestHeads(done, key, NAMED);
      const L = done[0]?.scores.length ?? 0, H = done[0]?.scores[0]?.length ?? 0;
      const series = [];
      for (let l = 0; l < L; l++) for (let hd = 0; hd < H; hd++) {
        const at = top.findIndex((t) => t.layer === l && t.head === hd);
        series.push({ name: `L${l}H${hd}`, color: COLORS[at] ?? null, faint: at < 0, points: done.map((r) => ({ step: r.step, y: r.scores[l][hd][key] })) });
      }
      const what = key === 'induction' ? 'induction' : 'previous-token';
      drawStepChart(fig.chart, series, {
        yLabel: `${what} score (share of attention, 0–1)`, yMin: 0, yMax: 1, height: key === 'induction' ? 240 : 170,
        label: `${what} score of each of ${name}'s ${L * H} heads against the training step, log scale`,
      });
      fig.legend.replaceChildren(...top.map((t, i) => h('span', { className: 'legend-item' }, h('span', { className: 'swatch', style: { background: COLORS[i] } }), ` ${t.name} (layer ${t.layer}, head ${t.head}; highest ${fixed(t.peak, 2)})`)),
        ...(L * H > top.length ? [h('span', { className: 'legend-item' }, h('span', { className: 'swatch faint' }), ` the other ${L * H - top.length} heads (faint)`)] : []));
      setText(fig.caption.firstChild, `${what[0].toUpperCase()}${what.slice(1)} score of each of ${name}'s ${L * H} heads, by training step`);
    }
    const icl = rows.filter((r) => r.icl);
    drawStepChart(figs.icl.chart, [{ name: 'ICL', color: '#5f3dc4', points: icl.map((r) => ({ step: r.step, y: r.icl.score })) }], {
      yLabel: 'loss(500) − loss(50), nats', height: 240, yMax: Math.max(0, ...icl.map((r) => r.icl.score)),
      label: `the in-context-learning score of ${name} against the training step, log scale`,
    });
    const missing = rows.filter((r) => r.scores && !r.icl).map((r) => `step ${r.step.toLocaleString('en')}: ${r.iclWhy}`);
    figs.icl.legend.replaceChildren(...icl.map((r) => h('span', { className: 'legend-item', textContent: `step ${r.step.toLocaleString('en')}: ${fixed(r.icl.score, 3)}` })),
      ...missing.map((m) => h('span', { className: 'legend-item', textContent: `${m}.` })));
  }

  async function run() {
    const size = await askSizes();
    const list = size.list;
    const repo = model.value;
    const card = pythia.find((c) => c.repo === repo);
    const { hub: hubUrl, label } = hubNow();
    const total = list.reduce((s, x) => s + (x.kept ? 0 : x.bytes ?? 0), 0);
    let before = 0; // bytes of the steps done
    let client = null;
    let stop = null;
    const stopped = new Promise((_, reject) => { stop = reject; });
    stopped.catch(() => {});
    let phase = 'start';
    let port = null;
    let cancelled = false;
    running = {
      repo,
      cancel() {
        cancelled = true;
        if (phase === 'open' && port) port.postMessage({ cancel: true }); // openModel keeps nothing of an open it aborts
        else {
          client?.terminate();
          stop(abortError());
        }
      },
    };
    const call = (action, args) => Promise.race([client.call(action, args), stopped]);
    rows = [];
    showSteps();
    cancel.hidden = false;
    setHidden(progress, false);
    status.dataset.kind = 'info';
    setText(status, '');
    let ids = null, idsWhy = null;
    const say = (i, text) => setText(barText, `Step ${list[i].step.toLocaleString('en')} (${i + 1} of ${list.length}): ${text}`);
    try {
      client = new LabClient(new Worker(new URL('../worker/lab-worker.js', import.meta.url), { type: 'module' }));
      await call('init', {});
      for (let i = 0; i < list.length; i++) {
        const { step } = list[i];
        const row = { step, scores: null, icl: null, iclWhy: null, error: null };
        rows.push(row);
        say(i, 'opening…');
        phase = 'open';
        const channel = new MessageChannel();
        port = channel.port1;
        channel.port1.onmessage = (event) => {
          const p = event.data?.progress;
          if (!p) return;
          if (p.file !== 'model.safetensors' && p.file !== 'pytorch_model.bin') return say(i, `${p.kept ? 'reading' : 'fetching'} ${p.file}…`);
          const sofar = before + (p.kept ? 0 : p.loaded);
          if (total > 0) bar.value = Math.min(1, sofar / total);
          bar.dataset.loaded = String(sofar);
          return say(i, `${p.file}${p.kept ? ' from this browser\'s storage' : ''} ${sizeText(p.loaded)}${p.total ? ` of ${sizeText(p.total)}` : ''}`
            + ` · the scan ${sizeText(sofar)} of ${sizeText(total)}`);
        };
        let made;
        try {
          made = await client.call('openModel', { repo, revision: revisionOf(step), hub: new URL(hubUrl, document.baseURI).href, port: channel.port2 }, [channel.port2]);
        } catch (err) {
          if (err?.code === 'ERR_ABORT' || cancelled) throw abortError();
          row.error = `${err.code ? `${err.code}: ` : ''}${err.message}`;
          rows.pop();
          setText(status, `Step ${step.toLocaleString('en')} could not be opened (${row.error}); the scan goes on without it.`);
          status.dataset.kind = 'warning';
          continue;
        } finally {
          channel.port1.close();
          port = null;
        }
        phase = 'compute';
        if (cancelled) throw abortError();
        before += list[i].kept ? 0 : list[i].bytes ?? 0;
        const config = made.config;
        say(i, `scoring ${config.layers * config.heads} heads…`);
        row.scores = await call('headScores', { model: made.model, options: scanOptions(config) });
        draw();
        row.iclWhy = iclNeeds(config.context);
        if (!row.iclWhy && !ids) {
          if (made.source.files['tokenizer.json']) {
            say(i, `reading ${TEXT_NAME}…`);
            const text = await Promise.race([shippedText(), stopped]);
            ids = (await call('tokenize', { model: made.model, text })).ids;
            if (passages(ids).length === 0) idsWhy = `${TEXT_NAME} are shorter than ${ICL_LENGTH} tokens`;
          } else idsWhy = 'the in-context-learning score reads text with Pythia\'s own tokenizer, and this step has no tokenizer.json';
        }
        row.iclWhy ??= ids ? null : idsWhy;
        if (!row.iclWhy) {
          const texts = passages(ids);
          const evaluate = async (x) => (await call('evaluate', { model: made.model, options: { ids: x } })).loss;
          row.icl = await iclScore(evaluate, texts, { onPassage: (k) => say(i, `in-context learning, passage ${k + 1} of ${texts.length}…`) });
        }
        await call('destroy', { model: made.model }); // one checkpoint in memory at a time
        draw();
      }
      const scanned = rows.filter((r) => r.scores).length;
      status.dataset.kind = scanned === list.length ? 'info' : 'warning';
      setText(status, `Scanned ${scanned} of ${list.length} steps of ${card.name} from ${label}.${scanned < list.length ? ` ${status.textContent}` : ''}`);
    } catch (err) {
      status.dataset.kind = err?.code === 'ERR_ABORT' ? 'warning' : 'error';
      const kept = rows.filter((r) => r.scores).length;
      setText(status, err?.code === 'ERR_ABORT'
        ? `Cancelled: ${kept} of ${list.length} steps were scanned, and they stay drawn; ${phase === 'open' ? 'the checkpoint being fetched was not kept' : 'the last one opened stays kept in this browser'}.`
        : `The scan stopped: ${err?.code ? `${err.code}: ` : ''}${String(err?.message ?? err).replace(/\.$/, '')}. What was scanned stays drawn.`);
      rows = rows.filter((r) => r.scores);
      draw();
    } finally {
      client?.terminate(); // the worker and its engine go: nothing of the scan stays in memory
      running = null;
      cancel.hidden = true;
      setHidden(progress, true);
      showSteps();
      said = null;
      onKept();
    }
  }

  // the charts are as wide as their figures: drawn again when the page's width moves them
  let width = 0;
  if (typeof ResizeObserver === 'function') {
    new ResizeObserver(() => {
      if (figures.clientWidth !== width && rows.length) draw();
      width = figures.clientWidth;
    }).observe(figures);
  }
  start.addEventListener('click', () => {
    if (running || steps.length === 0) return;
    run();
  });
  cancel.addEventListener('click', () => running?.cancel());
  showSteps();
  return { askSizes };
}
