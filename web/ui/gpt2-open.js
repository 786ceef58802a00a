// "Open a model…": the widget with which a page opens a checkpoint (GPT-2 or
// GPT-NeoX, as Pythia) in its worker (the lab's, web/worker/lab-worker.js): a
// row of model cards that fetch one from the hub in one click (model-cards.js:
// the worker's openModel, kept in this browser for the next visit), and a
// file button and a drop zone taking model.safetensors, config.json and, when
// the model has its own, tokenizer.json, in any order, one at a time or together
// (a tokenizer.json chosen after the model opens opens it again with it); a
// progress bar while the weights are read and then checked; which architecture
// opened and which tokenizer reads its text; where to get GPT-2's and Pythia's
// files; and the promise kept: nothing leaves the computer (the bytes go to the
// page's own worker and nowhere else). Used by the lab and by Learn.
//
//   const open = mountGpt2Open(el, { client, id, onOpened(made, names), onClosed() })
//     el        the element the widget fills;  id: a prefix for its elements' ids and test hooks
//     client    a LabClient;  made: the worker's { model, kind, config } (config.architecture 'gpt2' | 'gpt_neox')
//   open.model      the handle of the model in hand (null: none)
//   open.files      the files it was opened from ([weights, config, tokenizer?]; null: none, or a card's model)
//   open.source     a card's model: { hub, repo, revision } (null: none, or files)
//   open.tokenizer  the tokenizer.json's name, or null (GPT-2's built-in tokenizer)
//   open.openFiles(files)   opens files as if chosen (the lab, with the files chapter 10 kept for it)
//   open.say(text, kind)    a line in the widget's status ('info' | 'error')
import { h, setHidden, setText } from './dom.js';
import { mountModelCards } from './model-cards.js';
import { MODEL_CARDS } from './model-link.js';
import { ARCHITECTURES, GPT2_SOURCE, PYTHIA_SOURCE, addFiles, missingText, readWithProgress, sizeText } from './gpt2-file.js';

const link = (href, text) => h('a', { href, textContent: text, target: '_blank', rel: 'noopener' });

export function mountGpt2Open(el, { client, id, onOpened, onClosed = () => {} }) {
  const input = h('input', { type: 'file', multiple: true, accept: '.safetensors,.json,application/json', className: 'file-input', id: `${id}-files`, dataset: { testid: `${id}-files` } });
  const button = h('label', { className: 'button primary', title: 'Choose model.safetensors, config.json and, for Pythia, tokenizer.json (one at a time or together)' }, 'Open a model…', input);
  const drop = h('div', { className: 'gpt2-drop', dataset: { testid: `${id}-drop` } }, button,
    h('span', { textContent: ' or drop model.safetensors and config.json here (and tokenizer.json, when the model has its own), in any order or together.' }));
  const bar = h('progress', { max: 1, value: 0, hidden: true, dataset: { testid: `${id}-progress` }, attrs: { 'aria-label': 'Reading the model' } });
  const status = h('p', { className: 'gpt2-status', dataset: { testid: `${id}-status` }, attrs: { role: 'status', 'aria-live': 'polite' } });
  const pythia = PYTHIA_SOURCE.models.flatMap((m, k) => [k ? ', ' : '', link(m.files, m.name), ` (${m.size})`]);
  const where = h('div', { className: 'hint gpt2-where', dataset: { testid: `${id}-where` } },
    h('p', {}, h('strong', { textContent: 'GPT-2: ' }), link(GPT2_SOURCE.files, 'the model\'s page on the Hugging Face hub'),
      ` (openai-community/gpt2, under “Files and versions”) has the two files: ${GPT2_SOURCE.weights.name} (${GPT2_SOURCE.weights.size}) `
      + `and ${GPT2_SOURCE.config.name} (${GPT2_SOURCE.config.size}). Download both, then open them here. Its relatives open the same way: `
      + `distilgpt2 (${MODEL_CARDS[1].listed}) and gpt2-medium (${MODEL_CARDS[2].listed}).`),
    h('p', {}, h('strong', { textContent: 'Pythia (GPT-NeoX): ' }), 'EleutherAI\'s ', ...pythia,
      ` on the hub, under “Files and versions”: model.safetensors, config.json and ${PYTHIA_SOURCE.tokenizer.name} (${PYTHIA_SOURCE.tokenizer.size}, Pythia's own tokenizer; without it GPT-2's is used). `
      + 'Open all three.'));
  const promise = h('p', { className: 'hint', dataset: { testid: `${id}-private` } },
    h('strong', { textContent: 'Nothing leaves your computer: ' }),
    'the files are read in this tab and run by its own worker; this page sends them nowhere and keeps no copy '
    + '(Learn\'s “Open this model in the lab” leaves them in this browser\'s storage only until the lab has read them). '
    + 'A link can carry the prompt and the chosen head, never the weights: whoever opens it opens the files themselves.');
  const cardsBox = h('div', { className: 'model-cards-box', dataset: { testid: `${id}-cards` } });
  const fromDisk = h('p', { className: 'model-from-disk', textContent: 'Or open a model\'s files from your disk:' });
  el.replaceChildren(cardsBox, fromDisk, drop, bar, status, where, promise);

  let held = {};
  let last = null; // the files of the model in hand: { weights, config, tokenizer? }
  let busy = false;
  const api = {
    model: null, config: null, files: null, tokenizer: null, source: null,
    openFiles: (files) => take(files),
    say: (text, kind) => say(text, kind),
  };

  function say(text, kind = 'info') {
    status.dataset.kind = kind;
    setText(status, text);
  }

  /** Which tokenizer reads the model's text, in words. */
  function tokenizerText(c, tokenizer) {
    if (tokenizer) return `Its text is read by ${tokenizer.name}, the model's own tokenizer.`;
    if (c.architecture === 'gpt_neox') return 'Its text is read by GPT-2\'s built-in tokenizer, not Pythia\'s own: choose its tokenizer.json too to read text as Pythia does.';
    return 'Its text is read by GPT-2\'s built-in tokenizer.';
  }

  async function open() {
    const { weights, config, tokenizer } = held;
    busy = true;
    input.disabled = true;
    bar.hidden = false;
    bar.removeAttribute('value'); // indeterminate until the first piece is read
    try {
      const configText = await config.text();
      const tokenizerJson = tokenizer ? await tokenizer.text() : undefined;
      say(`Reading ${weights.name} (${sizeText(weights.size)})…`);
      const bytes = await readWithProgress(weights, (done, total) => {
        bar.value = done / total;
        say(`Reading ${weights.name}: ${sizeText(done)} of ${sizeText(total)}…`);
      });
      bar.removeAttribute('value');
      say(`Checking ${weights.name} against ${[config.name, tokenizer?.name].filter(Boolean).join(' and ')} and converting its weights…`);
      const made = await client.call('load', { bytes, config: configText, tokenizer: tokenizerJson }, [bytes.buffer]);
      bar.hidden = true; // read and checked: what follows is the panels' own work, which they show
      held = {};
      await adopt(made, weights.name, { files: [weights, config, tokenizer].filter(Boolean), tokenizer: tokenizer?.name ?? null, source: null });
      last = { weights, config, tokenizer };
    } catch (err) {
      const kept = api.model !== null ? ' The model opened before is still open.' : '';
      say(`${weights.name} could not be opened: ${err.code ? `${err.code}: ` : ''}${String(err.message).replace(/\.$/, '')}.${kept}`, 'error');
      held = {};
    } finally {
      busy = false;
      input.disabled = false;
      bar.hidden = true;
    }
  }

  /**
   * A model the worker opened (from files or a card) made the one in hand: checked to be a
   * GPT-2 or GPT-NeoX checkpoint, the model before it closed only then (one refused leaves it).
   */
  async function adopt(made, label, { files, tokenizer, source }) {
    const architecture = made.config?.architecture;
    if (!Object.hasOwn(ARCHITECTURES, architecture)) {
      await client.call('destroy', { model: made.model }).catch(() => {});
      throw Object.assign(new Error(`${label} opened as a ${architecture ?? made.kind} model, not a GPT-2 or GPT-NeoX checkpoint`), { code: 'ERR_ARG' });
    }
    if (api.model !== null) {
      const old = api.model;
      api.model = null;
      onClosed();
      await client.call('destroy', { model: old }).catch(() => {});
    }
    api.model = made.model;
    api.config = made.config;
    api.files = files;
    api.tokenizer = tokenizer;
    api.source = source;
    const c = made.config;
    status.dataset.architecture = architecture;
    status.dataset.tokenizer = tokenizer ? 'file' : 'gpt2';
    say(`Opened ${label}, a ${ARCHITECTURES[architecture]} checkpoint: ${c.layers} layers × ${c.heads} heads, dModel ${c.dModel}, `
      + `${c.parameters.toLocaleString('en')} parameters (${c.dtype}), context ${c.context}. ${tokenizerText(c, tokenizer ? { name: tokenizer } : null)}`);
    await onOpened(made, { weights: label, config: files ? files[1].name : 'config.json', tokenizer, source });
  }

  /**
   * A card's model, opened by the worker's openModel: its progress and a cancel go over a
   * port of their own (the worker answers actions one at a time; the port is read beside them).
   */
  async function openFromHub(repo, { hub, revision, onProgress, signal }) {
    if (busy) throw Object.assign(new Error('a model is being opened already'), { code: 'ERR_ARG' });
    busy = true;
    input.disabled = true;
    const channel = new MessageChannel();
    channel.port1.onmessage = (event) => {
      if (event.data?.progress) onProgress(event.data.progress);
    };
    const onAbort = () => channel.port1.postMessage({ cancel: true });
    signal.addEventListener('abort', onAbort);
    try {
      // the worker reads the hub against its own script's URL: a relative hub is made absolute here
      const made = await client.call('openModel', { repo, revision, hub: new URL(hub, document.baseURI).href, port: channel.port2 }, [channel.port2]);
      const tokenizer = made.source.files['tokenizer.json'] ? 'tokenizer.json' : null;
      await adopt(made, `${repo}${revision === 'main' ? '' : ` (${revision})`}`, { files: null, tokenizer, source: { hub: made.source.hub, repo, revision } });
      last = null;
      return made;
    } finally {
      signal.removeEventListener('abort', onAbort);
      channel.port1.close();
      busy = false;
      input.disabled = false;
    }
  }
  mountModelCards(cardsBox, { id, open: openFromHub });

  async function take(files) {
    if (busy) return;
    busy = true;
    let refused;
    try {
      ({ held, refused } = await addFiles(held, files));
    } finally {
      busy = false;
    }
    const refusedText = refused.length ? `${refused.join('; ')}. ` : '';
    // a tokenizer.json alone, with a model in hand: that model again, read by it
    if (held.tokenizer && !held.weights && !held.config && last) held = { ...last, tokenizer: held.tokenizer };
    if (held.weights && held.config) {
      say(refusedText);
      await open();
    } else say(refusedText + missingText(held), refused.length ? 'error' : 'info');
  }

  input.addEventListener('change', () => {
    const files = [...(input.files ?? [])];
    input.value = '';
    take(files);
  });
  drop.addEventListener('dragover', (e) => {
    e.preventDefault();
    drop.classList.add('over');
  });
  drop.addEventListener('dragleave', () => drop.classList.remove('over'));
  drop.addEventListener('drop', (e) => {
    e.preventDefault();
    drop.classList.remove('over');
    take([...(e.dataTransfer?.files ?? [])]);
  });
  setHidden(bar, true);
  return api;
}
