// The Transformer family's "Open a model…": a checkpoint (GPT-2's family or
// GPT-NeoX, as Pythia) opened in the lab's worker (ui/gpt2-open.js reads and
// sends its files, a tokenizer.json among them when given), then the
// panels a trained model has: every head over the prompt as small multiples
// (transformer-heads.js, pressed to ablate, with the loss change on the prompt),
// one head large with every token label, the layers × heads heatmaps of the
// previous-token and induction scores (a cell pressed shows that head on a
// repeated sequence of random tokens), the logit lens on request
// (transformer-lens.js) and generation. The prompt and the chosen head are in the
// link (gpt2Prompt, gpt2Head); the weights never are. Every model call runs in
// the worker; the grid is drawn a layer per frame. While its panels fill the
// screen the run bar names the checkpoint in place of the trained model's Train
// controls, which do not apply to it. A link with ?model=open lands on this card
// (the site's "Look inside a real model"), and so does one with ?repo= (a model
// card chosen: ui/model-cards.js); ?model=kept also opens the files
// Learn's chapter 10 kept for it (ui/checkpoint-keep.js).
import { byId, h, setHidden, setText } from '../ui/dom.js';
import { fixed } from '../ui/format.js';
import { takeCheckpoint } from '../ui/checkpoint-keep.js';
import { ARCHITECTURES, INDUCTION_MIN, repeatFits, repeatedIds, scan } from '../ui/gpt2-file.js';
import { mountGpt2Open } from '../ui/gpt2-open.js';
import { generatedText, lensHits, lossChange, rankHeads, tokenLabel } from '../ui/gpt2-reading.js';
import { limitBox } from './box-limit.js';
import { createHeatmap } from '../ui/heatmap.js';
import { mulberry32 } from '../ui/rng.js';
import { createHeadsView } from './transformer-heads.js';
import { createLensView } from './transformer-lens.js';
import { repeatOf } from './transformer-guide.js';
import { GPT2_PROMPT, headName, parseHead } from './transformer-state.js';
import { IOI_PROMPTS, circuitsPanel } from './transformer-circuits.js';

/** The most prompt tokens read at once: 144 maps of 128 × 128 weights are some 9 MB. */
export const MAX_TOKENS = 128;
/** The repeated sequence a score cell opens: this many random tokens, twice (fewer when the context is shorter). */
const REPEAT_LENGTH = 24;

const nextFrame = () => new Promise((resolve) => requestAnimationFrame(() => resolve()));

/** page: the lab's { client, state, writeHash } (the GPT-2 model lives in the same worker as the trained one). */
export function createGpt2View({ client, state, writeHash }) {
  const panels = byId('gpt2-panels');
  const promptBox = byId('gpt2Prompt');
  limitBox(promptBox); // a longer paste is cut at the link's 1,000 characters, saying so
  const select = byId('gpt2-head');
  const heads = createHeadsView({ onToggle: toggle, box: byId('gpt2-heads'), legend: byId('gpt2-legend'), thumb: 44, prefix: 'gpt2' });
  const chosen = createHeatmap({ id: 'gpt2-chosen', label: 'The chosen head\'s attention' });
  byId('gpt2-chosen').append(chosen.el);
  const scoreMaps = ['previousToken', 'induction'].map((key) => {
    const name = key === 'induction' ? 'induction (prefix-matching)' : 'previous-token';
    const hm = createHeatmap({ id: `gpt2-${key}`, label: `The ${name} score of every head`, axes: 'layer ↓ head →', uprightCols: true });
    byId(`gpt2-${key}-map`).append(hm.el);
    return { key, name, hm };
  });
  const lens = createLensView({ box: byId('gpt2-lens') });
  const open = mountGpt2Open(byId('gpt2-open'), { client, id: 'gpt2', onOpened: opened, onClosed: closed });
  const runbar = runbarSwitch(panels);

  let config = null;
  let ids = null; // the prompt's ids as read (at most MAX_TOKENS)
  let view = null; // inspect() of the prompt, with the ablated heads
  let baseLoss = null; // the prompt's loss with every head
  let scores = null; // headScores()
  let withLens = false;
  let repeated = null; // { view }: the repeated sequence a score cell opened, shown by the chosen head (null: the prompt)
  const ablated = new Set();
  let ticket = 0;

  const call = (action, args = {}) => client.call(action, { model: open.model, ...args });
  const ablation = () => [...ablated].map(parseHead);
  const prompt = () => state.gpt2Prompt || GPT2_PROMPT;
  const repeatLength = () => repeatFits(REPEAT_LENGTH, config.context);

  function fillHeads() {
    const names = Array.from({ length: config.layers * config.heads }, (_, k) => headName({ layer: Math.floor(k / config.heads), head: k % config.heads }));
    select.replaceChildren(...names.map((n) => {
      const hd = parseHead(n);
      return h('option', { value: n, textContent: `${n}: layer ${hd.layer}, head ${hd.head}` });
    }));
    const hd = parseHead(state.gpt2Head);
    select.value = hd && hd.layer < config.layers && hd.head < config.heads ? state.gpt2Head : names[0];
  }

  /** The prompt read: its tokens, every head's map (ablated heads zeroed), the lens when asked, the loss with and without the ablation. */
  async function read() {
    if (!config) return;
    const mine = ++ticket;
    setText(byId('gpt2-reading'), 'Reading the prompt…');
    try {
      const all = await call('tokenize', { text: prompt() });
      const most = Math.min(MAX_TOKENS, config.context);
      const cut = all.ids.length > most;
      ids = cut ? all.ids.slice(0, most) : all.ids;
      if (ids.length < 2) throw Object.assign(new Error('the prompt needs at least two tokens'), { code: 'ERR_ARG' });
      const got = await call('inspect', { input: { ids }, options: { ablate: ablation(), lens: withLens } });
      baseLoss = (await call('evaluate', { options: { ids } })).loss;
      const cutLoss = ablated.size ? (await call('evaluate', { options: { ids, ablate: ablation() } })).loss : baseLoss;
      if (mine !== ticket) return;
      view = got;
      setText(byId('gpt2-tokens'), `${ids.length} tokens${cut ? ` (the first ${most} of the prompt's ${all.ids.length})` : ''}: ${got.tokens.map(tokenLabel).join(' · ')}`);
      showAblation(cutLoss);
      setText(byId('gpt2-reading'), '');
      if (withLens) showLens();
      if (!repeated) showChosen();
      await heads.updateInSlices(view, { layers: config.layers, heads: config.heads, ablated, scores, outline: outlineOf(view) });
    } catch (err) {
      if (mine === ticket) setText(byId('gpt2-reading'), `The prompt could not be read: ${err.message}`);
    }
  }

  function outlineOf(v) {
    const r = repeatOf(v.tokens);
    return r ? { rows: [r.second, r.second + r.length - 1], cells: r.stripe } : null;
  }

  function showAblation(cutLoss) {
    const out = byId('gpt2-ablation');
    out.dataset.loss = String(baseLoss);
    if (!ablated.size) {
      delete out.dataset.ablatedLoss;
      setText(out, `Loss on the prompt, every head: ${fixed(baseLoss, 3)} nats per predicted token. Press a head to ablate it.`);
      return;
    }
    out.dataset.ablatedLoss = String(cutLoss);
    setText(out, `Loss on the prompt with ${[...ablated].join(', ')} ablated: ${lossChange(baseLoss, cutLoss)}.`);
  }

  function toggle(hd) {
    const name = headName(hd);
    if (ablated.has(name)) ablated.delete(name);
    else ablated.add(name);
    read();
  }

  /** The chosen head over the prompt, or over the repeated sequence a score cell opened, every token labelled. */
  function showChosen() {
    const hd = parseHead(select.value);
    const v = repeated?.view ?? view;
    if (!hd || !v) return;
    const map = v.attention[hd.layer][hd.head];
    const labels = v.tokens.map(tokenLabel);
    chosen.update(map, {
      rowLabels: labels, colLabels: labels, kind: 'unit', maxCell: 16, minCell: 11, everyLabel: true, outline: outlineOf(v),
      legend: `attention weight of ${headName(hd)}: rows are queries ↓, columns keys →`,
      describe: (i, j) => ({ title: `${headName(hd)}: ${i} (${labels[i]}) → ${j} (${labels[j]})`, lines: [`weight ${fixed(map.data[i * map.cols + j], 3)}`] }),
    });
    const s = scores?.[hd.layer]?.[hd.head];
    const scoreText = s ? ` Its scores: previous-token ${fixed(s.previousToken, 2)}, induction ${fixed(s.induction, 2)}.` : '';
    setText(byId('gpt2-chosen-note'), repeated
      ? `${headName(hd)} on ${repeatLength()} random tokens shown twice (after <|endoftext|>): an induction head looks, from the second copy, at the token after the same token's first occurrence (orange boxes).${scoreText}`
      : `${headName(hd)} on the prompt.${scoreText} Scroll the map sideways to see every token.`);
  }

  async function chooseHead(name, onRepeat) {
    select.value = name;
    state.gpt2Head = name;
    writeHash();
    if (!onRepeat) {
      repeated = null;
      showChosen();
      return;
    }
    const repeatIds = repeatedIds(mulberry32(state.seed), repeatLength(), config.vocabulary);
    const v = await call('inspect', { input: { ids: repeatIds }, options: { ablate: [] } });
    repeated = { view: v };
    showChosen();
    byId('gpt2-chosen').scrollIntoView({ block: 'nearest' });
  }

  async function scanHeads() {
    const button = byId('gpt2-scan');
    button.disabled = true;
    setText(byId('gpt2-scan-status'), `Scanning all ${config.layers * config.heads} heads on ${scan(config).count} sequences of ${scan(config).length} random tokens shown twice…`);
    try {
      scores = await call('headScores', { options: scan(config) });
      showScores();
      if (view) await heads.updateInSlices(view, { layers: config.layers, heads: config.heads, ablated, scores, outline: outlineOf(view) });
      showChosen();
    } catch (err) {
      setText(byId('gpt2-scan-status'), `The scan failed: ${err.message}`);
    } finally {
      button.disabled = false;
    }
  }

  function showScores() {
    const rowLabels = Array.from({ length: config.layers }, (_, l) => `L${l}`);
    const colLabels = Array.from({ length: config.heads }, (_, k) => `H${k}`);
    for (const { key, name, hm } of scoreMaps) {
      setHidden(hm.el, false);
      const data = Float32Array.from(scores.flatMap((row) => row.map((s) => s[key])));
      hm.update({ rows: config.layers, cols: config.heads, data }, {
        rowLabels, colLabels, kind: 'unit', maxCell: 30, everyLabel: true, legend: `${name} score (0 to 1); press a cell to see that head on a repeated sequence`,
        describe: (i, j) => ({ title: `L${i}H${j}`, lines: [`${name} score ${fixed(data[i * config.heads + j], 3)}`] }),
        onHover: (i, j) => { hm.el.dataset.cell = i === null ? '' : `L${i}H${j}`; },
      });
    }
    const [p] = rankHeads(scores, 'previousToken');
    const top = rankHeads(scores, 'induction').slice(0, 3);
    const list = top.map((x) => `${headName(x)} (${fixed(x.value, 2)})`).join(', ');
    // the induction score is prefix matching (where a head looks); below INDUCTION_MIN no head is called an induction head
    const induction = top[0].value >= INDUCTION_MIN ? `Highest induction (prefix-matching) scores: ${list}.`
      : `No induction head: no head's prefix-matching score reaches ${INDUCTION_MIN} (the highest: ${list}).`;
    setText(byId('gpt2-scan-status'), `Highest previous-token score: ${headName(p)} (${fixed(p.value, 2)}). ${induction} Press a cell to see that head on a repeated sequence.`);
  }

  function showLens() {
    lens.update(view);
    const hits = lensHits(view);
    setText(byId('gpt2-lens-readout'), hits.length ? `How often each layer's guess is the next token: ${hits.map((x) => `${x.name} ${fixed(100 * x.hit, 0)}%`).join(', ')}.` : '');
  }

  async function generate() {
    const out = byId('gpt2-generated');
    const tokens = Math.max(1, Math.min(100, Math.round(Number(byId('gpt2-gen-tokens').value)) || 20));
    const temperature = Number(byId('gpt2-temperature').value);
    setText(out, 'Generating…');
    try {
      const r = await call('generate', { prompt: prompt(), options: { tokens, temperature, topK: temperature > 0 ? 40 : 0, seed: state.seed } });
      setText(out, `${prompt()}▸${generatedText(r.tokens)}`); // a split character as the lens names its bytes
    } catch (err) {
      setText(out, `No output: ${err.message}`);
    }
  }

  async function opened(made, names) {
    writeHash(); // a card's model: the link holds its repo and revision now (ui/model-cards.js), which an embedded lab sends
    config = made.config;
    runbar.name(config, names);
    ablated.clear();
    scores = null;
    repeated = null;
    withLens = false;
    setHidden(panels, false);
    setText(byId('gpt2-scan-status'), 'Not scanned yet: press Scan every head.');
    for (const { hm } of scoreMaps) setHidden(hm.el, true);
    byId('gpt2-lens').replaceChildren(); // the lens is read on request
    setText(byId('gpt2-lens-readout'), '');
    setText(byId('gpt2-generated'), '–');
    promptBox.value = prompt();
    fillHeads();
    await nextFrame();
    await read();
    // the Circuits panel analyses the checkpoint, IOI's prompts ready to pick
    circuitsPanel(client).use({ kind: 'checkpoint', model: open.model, config, steps: 0, label: `${ARCHITECTURES[config.architecture]} (${names.weights}), opened here`, pair: IOI_PROMPTS[0] })
      ?.catch((err) => setText(byId('gpt2-reading'), `The Circuits panel could not read the checkpoint: ${err.message}`));
  }

  function closed() {
    circuitsPanel(client).drop('checkpoint');
    config = null;
    view = null;
    heads.clear();
    setHidden(panels, true);
  }

  /** To this card, its heading in focus. */
  function land() {
    byId('gpt2').scrollIntoView({ block: 'start' });
    const heading = byId('h-gpt2');
    heading.tabIndex = -1;
    heading.focus({ preventScroll: true });
  }
  // the intro's "Look inside a real model": this card, when the transformer family shows it (else the link loads the lab on it)
  byId('real-model-entry').addEventListener('click', (e) => {
    if (byId('gpt2').hidden) return;
    e.preventDefault();
    land();
  });

  /** ?model=open: the page opens at this card; ?model=kept: with the files Learn kept for it, opened as if chosen. */
  async function arrive() {
    const params = new URLSearchParams(location.search);
    const asked = params.get('model');
    // a link that chose a model card (?repo=) lands on it too: the card is chosen, the reader's click opens it
    if ((asked !== 'open' && asked !== 'kept' && !params.has('repo')) || byId('gpt2').hidden) return;
    land();
    if (asked !== 'kept') return;
    // taken once: a reload lands on the card, with nothing to open
    params.set('model', 'open');
    history.replaceState(null, '', `?${params}${location.hash}`);
    let files = null;
    try {
      files = await takeCheckpoint();
    } catch (err) {
      open.say(`The files from Learn could not be read back (${err.message}): open them here.`, 'error');
      return;
    }
    if (files) {
      await open.openFiles(files);
      // the panels below the card are there now: the card at the top of the screen, as a reader who scrolled would put it
      if (open.model !== null && document.activeElement === byId('h-gpt2')) byId('gpt2').scrollIntoView({ block: 'start' });
    } else open.say('The files from Learn are no longer kept (they are handed over once): open them here.', 'error');
  }

  promptBox.addEventListener('change', () => {
    state.gpt2Prompt = promptBox.value === GPT2_PROMPT ? '' : promptBox.value;
    writeHash();
  });
  byId('gpt2-read').addEventListener('click', () => {
    state.gpt2Prompt = promptBox.value === GPT2_PROMPT ? '' : promptBox.value;
    writeHash();
    repeated = null;
    read();
  });
  select.addEventListener('change', () => chooseHead(select.value, false));
  byId('gpt2-scan').addEventListener('click', () => scanHeads());
  byId('gpt2-lens-button').addEventListener('click', () => {
    withLens = true;
    read();
  });
  byId('gpt2-generate').addEventListener('click', () => generate());
  for (const { hm } of scoreMaps) {
    const pick = () => {
      const cell = hm.el.dataset.cell;
      if (cell) chooseHead(cell, true).catch((err) => setText(byId('gpt2-chosen-note'), `That head could not be read: ${err.message}`));
    };
    hm.el.querySelector('canvas').addEventListener('click', pick);
    hm.el.querySelector('canvas').addEventListener('keydown', (e) => {
      if (e.key === 'Enter' || e.key === ' ') {
        e.preventDefault();
        pick();
      }
    });
    setHidden(hm.el, true);
  }

  return {
    arrive,
    /** The link's prompt in the box. */
    fill() {
      promptBox.value = prompt();
    },
    /** The model in hand, for the tests: { model, config } or null. */
    get model() {
      return config ? { model: open.model, config } : null;
    },
  };
}

/**
 * The run bar while the checkpoint's panels fill the middle of the screen: its
 * name and size, and a way back to the model trained here, in place of that
 * model's Train, Step, speed and step count (lab.css hides them by the bar's
 * data-model), which do not apply to a checkpoint.
 */
function runbarSwitch(panels) {
  const bar = byId('runbar');
  const what = h('span');
  const more = h('span', { className: 'run-more' }); // the file and the size, where the bar has room
  const back = h('button', { type: 'button', textContent: '↑ Trained model', title: 'Back to the transformer trained on this page and its Train controls' });
  const label = h('p', { className: 'run-checkpoint', dataset: { testid: 'run-checkpoint' } }, h('span', {}, what, more), back);
  bar.querySelector('.run-row').prepend(label);
  const show = (onScreen) => {
    if (onScreen) bar.dataset.model = 'checkpoint';
    else delete bar.dataset.model;
  };
  back.addEventListener('click', () => {
    show(false);
    window.scrollTo({ top: 0 });
    byId('play').focus();
  });
  new IntersectionObserver((entries) => show(entries.at(-1).isIntersecting), { rootMargin: '-40% 0px -40% 0px' }).observe(panels);
  return {
    /** The checkpoint in hand, named in the bar. */
    name(c, names) {
      const millions = c.parameters >= 1e6 ? `${(c.parameters / 1e6).toFixed(1)}M` : c.parameters.toLocaleString('en');
      setText(what, `${ARCHITECTURES[c.architecture]}, ${c.layers} layers × ${c.heads} heads: read here, not trained`);
      setText(more, ` (${names.weights}, ${millions} parameters)`);
    },
  };
}
