// "Open a model…": the widget with which a page opens a GPT-2-family checkpoint
// in its worker (the lab's, web/worker/lab-worker.js): a file button and a drop
// zone taking model.safetensors and config.json in either order or both at once,
// a progress bar while the weights are read and then checked, where to get the
// two files, and the promise kept: nothing leaves the computer (the bytes go to
// the page's own worker and nowhere else). Used by the lab and by Learn.
//
//   const open = mountGpt2Open(el, { client, id, onOpened(made, names), onClosed() })
//     el        the element the widget fills;  id: a prefix for its elements' ids and test hooks
//     client    a LabClient;  made: the worker's { model, kind: 'gpt2', config }
//   open.model  the handle of the model in hand (null: none)
import { h, setHidden, setText } from './dom.js';
import { GPT2_SOURCE, addFiles, missingText, readConfig, readWithProgress, sizeText } from './gpt2-file.js';

export function mountGpt2Open(el, { client, id, onOpened, onClosed = () => {} }) {
  const input = h('input', { type: 'file', multiple: true, accept: '.safetensors,.json,application/json', className: 'file-input', id: `${id}-files`, dataset: { testid: `${id}-files` } });
  const button = h('label', { className: 'button primary', title: 'Choose model.safetensors and config.json (one at a time or both at once)' }, 'Open a model…', input);
  const drop = h('div', { className: 'gpt2-drop', dataset: { testid: `${id}-drop` } }, button,
    h('span', { textContent: ' or drop model.safetensors and config.json here, in either order or both at once.' }));
  const bar = h('progress', { max: 1, value: 0, hidden: true, dataset: { testid: `${id}-progress` }, attrs: { 'aria-label': 'Reading the model' } });
  const status = h('p', { className: 'gpt2-status', dataset: { testid: `${id}-status` }, attrs: { role: 'status', 'aria-live': 'polite' } });
  const hub = h('a', { href: GPT2_SOURCE.files, textContent: 'the model\'s page on the Hugging Face hub', target: '_blank', rel: 'noopener' });
  const where = h('p', { className: 'hint', dataset: { testid: `${id}-where` } },
    'Where to get GPT-2: ', hub, ` (openai-community/gpt2, under “Files and versions”) has the two files: ${GPT2_SOURCE.weights.name} (${GPT2_SOURCE.weights.size}) `
    + `and ${GPT2_SOURCE.config.name} (${GPT2_SOURCE.config.size}). Download both, then open them here. Its relatives open the same way: distilgpt2 (353 MB) and gpt2-medium (1.52 GB).`);
  const promise = h('p', { className: 'hint', dataset: { testid: `${id}-private` } },
    h('strong', { textContent: 'Nothing leaves your computer: ' }),
    'the files are read in this tab and run by its own worker; this page sends them nowhere and keeps no copy. '
    + 'A link can carry the prompt and the chosen head, never the weights: whoever opens it opens the two files themselves.');
  el.replaceChildren(drop, bar, status, where, promise);

  let held = {};
  let busy = false;
  const api = { model: null, config: null };

  function say(text, kind = 'info') {
    status.dataset.kind = kind;
    setText(status, text);
  }

  async function open() {
    const { weights, config } = held;
    busy = true;
    input.disabled = true;
    bar.hidden = false;
    bar.removeAttribute('value'); // indeterminate until the first piece is read
    try {
      const configText = await readConfig(config);
      say(`Reading ${weights.name} (${sizeText(weights.size)})…`);
      const bytes = await readWithProgress(weights, (done, total) => {
        bar.value = done / total;
        say(`Reading ${weights.name}: ${sizeText(done)} of ${sizeText(total)}…`);
      });
      bar.removeAttribute('value');
      say(`Checking ${weights.name} against ${config.name} and converting its weights…`);
      const made = await client.call('load', { bytes, config: configText }, [bytes.buffer]);
      bar.hidden = true; // read and checked: what follows is the panels' own work, which they show
      if (!['gpt2', 'gpt_neox'].includes(made.config?.architecture)) {
        await client.call('destroy', { model: made.model }).catch(() => {});
        throw Object.assign(new Error(`${weights.name} opened as a ${made.kind} model, not a GPT-2 checkpoint`), { code: 'ERR_ARG' });
      }
      // the model in hand goes only once the new one is open: a file refused leaves it as it was
      if (api.model !== null) {
        const old = api.model;
        api.model = null;
        onClosed();
        await client.call('destroy', { model: old }).catch(() => {});
      }
      api.model = made.model;
      api.config = made.config;
      const c = made.config;
      say(`Opened ${weights.name}: ${c.layers} layers × ${c.heads} heads, dModel ${c.dModel}, ${c.parameters.toLocaleString('en')} parameters (${c.dtype}), context ${c.context}.`);
      held = {};
      await onOpened(made, { weights: weights.name, config: config.name });
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

  function take(files) {
    if (busy) return;
    const { held: next, refused } = addFiles(held, files);
    held = next;
    const refusedText = refused.length ? `${refused.join(', ')}: not a .safetensors or .json file. ` : '';
    if (held.weights && held.config) {
      say(refusedText);
      open();
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
