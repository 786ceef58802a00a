// Chapter 10, inside GPT-2: a checkpoint (GPT-2's family or GPT-NeoX, as Pythia)
// opened in the lab's worker (ui/gpt2-open.js: model.safetensors, config.json and
// a tokenizer.json when the model has its own; nothing leaves the computer), then
// every number of the chapter computed from it there: the head scan
// (previous-token and induction scores, the latter prefix matching, shown as
// layers × heads heatmaps; below INDUCTION_MIN the chapter says there is none),
// the loss on both copies of a repeated run of random tokens with every head and
// with the strongest induction head ablated, and each layer's logit-lens hit rate
// on a sentence. Before a model is open the chapter's text says what to expect.
// The challenge (find an induction head by ablating it) holds on any checkpoint
// of the family: it asks for one of its own top induction heads whose ablation
// raises its own loss on the repeat. "Open this model in the lab" hands the files
// to the lab through the browser's storage (ui/checkpoint-keep.js), nothing re-picked;
// a model opened from a card (ui/model-cards.js) goes as the lab's link to the same card.
import { drawChart } from '../ui/chart.js';
import { h, setHidden, setText } from '../ui/dom.js';
import { fixed } from '../ui/format.js';
import { keepCheckpoint } from '../ui/checkpoint-keep.js';
import { ARCHITECTURES, INDUCTION_MIN, repeatFits, repeatedIds, scan as scanOptions, vocabularySize } from '../ui/gpt2-file.js';
import { mountGpt2Open } from '../ui/gpt2-open.js';
import { modelLink } from '../ui/model-link.js';
import { lensHits, lossChange, rankHeads } from '../ui/gpt2-reading.js';
import { createHeatmap } from '../ui/heatmap.js';
import { mulberry32 } from '../ui/rng.js';
import { LabClient } from '../worker/lab-client.js';
import { createChallenge } from './progress.js';

/** The repeated run the ablation reads: this many random tokens, twice, after <|endoftext|>. */
const REPEAT = 40;
/** The vocabulary of GPT-2's tokenizer: a checkpoint with fewer tokens cannot read its text. */
const GPT2_VOCABULARY = 50257;
/** The sentence the logit lens reads. */
export const LENS_TEXT = 'The capital of France is Paris, and the capital of Germany is Berlin. The first president of the United States was George Washington.';
/** The challenge counts a head among this many with the highest induction scores, scoring at least INDUCTION_MIN (gpt2-file.js). */
const TOP = 3;

const headLabel = ({ layer, head }) => `L${layer}H${head}`;

/** The loss on each copy of the repeated run (ids: <|endoftext|> and L tokens twice): the mean over both copies (2L predictions) and over the first (L). */
async function copies(call, ids, ablate) {
  const both = (await call('evaluate', { options: { ids, ablate } })).loss;
  const first = (await call('evaluate', { options: { ids: ids.slice(0, (ids.length + 1) / 2), ablate } })).loss;
  return { first, second: 2 * both - first };
}

export function mountGpt2(root) {
  const $ = (r) => root.querySelector(`[data-role=${r}]`);
  let client = null;
  let ready = null;
  /** The worker, started on first use (the chapter costs nothing until a model is opened). */
  const worker = () => {
    if (!client) {
      client = new LabClient(new Worker(new URL('../worker/lab-worker.js', import.meta.url), { type: 'module' }));
      ready = client.call('init', {});
    }
    return client;
  };
  // the widget needs a client now; the worker itself starts with the first file
  const lazy = { call: async (action, args, transfer) => { worker(); await ready; return client.call(action, args, transfer); } };
  const open = mountGpt2Open($('open'), { client: lazy, id: 'ch10', onOpened: opened, onClosed: closed });
  const call = (action, args = {}) => lazy.call(action, { model: open.model, ...args });

  const maps = ['previousToken', 'induction'].map((key) => {
    const hm = createHeatmap({ id: `ch10-${key}`, label: `The ${key === 'induction' ? 'induction' : 'previous-token'} score of every head`, axes: 'layer ↓ head →', uprightCols: true });
    return { key, hm };
  });
  const mapsBox = $('scores');
  mapsBox.classList.add('widget', 'two');
  mapsBox.replaceChildren(...maps.map(({ hm }) => h('div', {}, hm.el)));
  setHidden(mapsBox, true);
  const challenge = createChallenge($('challenge'), 'gpt2', `Find an induction head of the model you opened: pick a head and ablate it on the repeated run. It counts when the head is one of its ${TOP} highest induction scores, scores at least ${INDUCTION_MIN}, and switching it off raises the loss on the second copy.`);

  let config = null;
  let scores = null;
  let ids = null;
  let full = null; // copies() with every head

  async function scan() {
    const button = $('scan');
    button.disabled = true;
    setText($('scan-status'), `Scanning ${config.layers * config.heads} heads…`);
    try {
      scores = await call('headScores', { options: scanOptions(config) });
      setText($('scan-status'), '');
      drawScores();
      await ablateTop();
      fillChallenge();
    } catch (err) {
      setText($('scan-status'), `The scan failed: ${err.message}`);
    } finally {
      button.disabled = false;
    }
  }

  function drawScores() {
    setHidden(mapsBox, false);
    const rowLabels = Array.from({ length: config.layers }, (_, l) => `L${l}`);
    const colLabels = Array.from({ length: config.heads }, (_, k) => `H${k}`);
    for (const { key, hm } of maps) {
      const data = Float32Array.from(scores.flatMap((row) => row.map((s) => s[key])));
      const what = key === 'induction' ? 'induction (prefix-matching)' : 'previous-token';
      hm.update({ rows: config.layers, cols: config.heads, data }, {
        rowLabels, colLabels, kind: 'unit', maxCell: 26, everyLabel: true, legend: `${what} score of each head (0 to 1)`,
        describe: (i, j) => ({ title: `L${i}H${j}`, lines: [`${what} score ${fixed(data[i * config.heads + j], 3)}`] }),
      });
    }
    const list = (ranked) => ranked.map((x) => `${headLabel(x)} (layer ${x.layer}, ${fixed(x.value, 2)})`).join(', ');
    const prev = rankHeads(scores, 'previousToken').slice(0, TOP);
    const ind = rankHeads(scores, 'induction');
    const layersOf = (ranked) => [...new Set(ranked.map((x) => x.layer))].sort((a, b) => a - b).join(', ');
    const sit = (ranked) => `they sit in layer${ranked.length > 1 ? 's' : ''} ${layersOf(ranked)} of its ${config.layers}`;
    setText($('previous'), `This model's strongest previous-token heads: ${list(prev)}; ${sit(prev)}.`);
    // the scan measures prefix matching (where a head looks), not copying (what it writes): the ablation below asks that
    const found = ind.filter((x) => x.value >= INDUCTION_MIN).slice(0, TOP);
    const out = $('induction');
    out.dataset.found = String(found.length);
    setText(out, found.length
      ? `This model's strongest induction heads by prefix matching: ${list(found)}; ${sit(found)}. Whether they also copy is what ablating one shows below.`
      : `This model has no induction head: no head's prefix-matching score reaches ${INDUCTION_MIN} (the highest: ${list(ind.slice(0, TOP))}). `
        + 'A random or barely trained model looks like this; GPT-2 small has several above it.');
  }

  async function ablateTop() {
    const [top] = rankHeads(scores, 'induction');
    const cut = await copies(call, ids, [{ layer: top.layer, head: top.head }]);
    const out = $('ablation');
    Object.assign(out.dataset, { first: String(full.first), second: String(full.second), ablatedSecond: String(cut.second) });
    const which = top.value >= INDUCTION_MIN ? `the highest induction score, ${fixed(top.value, 2)}`
      : `the highest prefix-matching score, ${fixed(top.value, 2)}, though no induction head`;
    setText(out, `On ${(ids.length - 1) / 2} random tokens shown twice: loss ${fixed(full.first, 3)} nats per token on the first copy and ${fixed(full.second, 3)} on the second `
      + `with every head. With ${headLabel(top)} (${which}) ablated: ${fixed(cut.first, 3)} on the first copy, `
      + `${fixed(cut.second, 3)} on the second, a change of ${lossChange(full.second, cut.second)} on the second copy.`);
  }

  function fillChallenge() {
    const select = $('challenge-head');
    select.replaceChildren(...scores.flatMap((row, layer) => row.map((_, head) => h('option', { value: `${layer},${head}`, textContent: `${headLabel({ layer, head })}: layer ${layer}, head ${head}` }))));
    setHidden($('challenge-controls'), false);
  }

  async function tryHead() {
    const [layer, head] = $('challenge-head').value.split(',').map(Number);
    const cut = await copies(call, ids, [{ layer, head }]);
    const rank = rankHeads(scores, 'induction').findIndex((x) => x.layer === layer && x.head === head);
    const rises = cut.second > full.second;
    const top = rank < TOP && scores[layer][head].induction >= INDUCTION_MIN;
    setText($('challenge-text'), `${headLabel({ layer, head })}: induction score ${fixed(scores[layer][head].induction, 2)} (number ${rank + 1} of ${config.layers * config.heads}); `
      + `ablated, the second copy's loss changes by ${lossChange(full.second, cut.second)}. `
      + (top && rises ? 'An induction head: it copies, and the model leans on it.' : top ? 'A top induction head, but this model does not lose by it here: its other heads cover for it.'
        : rank < TOP ? `One of the ${TOP} highest induction scores, but below ${INDUCTION_MIN}: this model has no clear induction head.` : `Not one of the ${TOP} highest induction scores: look at the scan.`));
    challenge.check(top && rises);
  }

  async function lens() {
    const { ids: all } = await call('tokenize', { text: LENS_TEXT });
    const view = await call('inspect', { input: { ids: all.slice(0, config.context) }, options: { lens: true } });
    const hits = lensHits(view);
    const out = $('lens');
    out.dataset.hits = hits.map((x) => x.hit).join(',');
    setText(out, `On “${LENS_TEXT}” (${view.tokens.length === all.length ? `${all.length} tokens` : `its first ${view.tokens.length} tokens`}), the share of positions where the guess is the next token: `
      + `${hits.map((x) => `${x.name} ${fixed(100 * x.hit, 0)}%`).join(', ')}.`);
    const figure = $('lens-chart');
    setHidden(figure, false);
    drawChart(figure, [{ name: 'right guesses', color: '#2f56d6', points: hits.map((x, k) => ({ step: k, value: x.hit })) }],
      { xLabel: `layer (${hits.length - 1}: the output)`, yLabel: 'share of right guesses', yMin: 0, yMax: 1, integerX: true });
  }

  async function opened(made) {
    config = made.config;
    scores = null;
    $('scan').disabled = false;
    setHidden($('challenge-controls'), true);
    ids = repeatedIds(mulberry32(7), repeatFits(REPEAT, config.context), config.vocabulary);
    toLab.textContent = `Open this ${ARCHITECTURES[config.architecture]} in the lab, nothing to pick again: every head, ablation, the lens and generation →`;
    full = await copies(call, ids, []);
    const out = $('ablation');
    Object.assign(out.dataset, { first: String(full.first), second: String(full.second) });
    setText(out, `On ${(ids.length - 1) / 2} random tokens shown twice, with every head: loss ${fixed(full.first, 3)} nats per token on the first copy, ${fixed(full.second, 3)} on the second. `
      + 'Scan the heads to ablate the strongest induction head.');
    // a checkpoint whose vocabulary is not its tokenizer's cannot read the sentence: said, the rest stands
    await lens().catch((err) => {
      setHidden($('lens-chart'), true); // the last model's figure and rates are not this one's
      delete $('lens').dataset.hits;
      const V = vocabularySize(config);
      const why = !open.tokenizer && V < GPT2_VOCABULARY ? `this checkpoint has ${V} tokens, not GPT-2's tokenizer's ${GPT2_VOCABULARY}` : err.message;
      setText($('lens'), `The lens could not read the sentence: ${why}.`);
    });
  }

  function closed() {
    config = null;
    $('scan').disabled = true;
  }

  // the model open here goes to the lab with its files, kept in this browser's storage for the lab to take
  const toLab = root.querySelector('[data-role=open-lab-model]');
  toLab.addEventListener('click', async (e) => {
    if (open.source) {
      // a card's model: the lab's link chooses the same card, and its files are kept in this browser, so the click there reads them
      const url = new URL(toLab.href);
      url.searchParams.set('model', 'open');
      url.search = modelLink(url.search, { repo: open.source.repo, revision: open.source.revision, hub: new URLSearchParams(location.search).get('hub') ?? '' });
      toLab.href = url.href;
      return;
    }
    if (!open.files || e.ctrlKey || e.metaKey || e.shiftKey || e.button !== 0) return; // no model, or a new tab: the lab's section, files to pick
    e.preventDefault();
    const note = $('to-lab-status');
    setText(note, 'Handing the files to the lab…');
    try {
      await keepCheckpoint(open.files);
      const url = new URL(toLab.href);
      url.searchParams.set('model', 'kept');
      location.assign(url.href);
    } catch (err) {
      setText(note, `This browser would not keep the files for the lab (${err.message}): the lab opens, and the files are picked there again.`);
      setTimeout(() => location.assign(toLab.href), 2500);
    }
  });

  $('scan').addEventListener('click', () => scan());
  $('challenge-ablate').addEventListener('click', () => tryHead().catch((err) => setText($('challenge-text'), `That head could not be read: ${err.message}`)));
  return {
    get model() {
      return config ? { model: open.model, config } : null;
    },
    /** An action on the open model in this chapter's worker: chapter 11 reads the same model. */
    call,
  };
}
