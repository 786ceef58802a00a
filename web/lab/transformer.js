// The Transformer family's views (its adapter is family-transformer.js): the
// layers × heads maps over the inspected input (transformer-heads.js), the
// heads' scores over training (transformer-scores.js), the logit lens
// (transformer-lens.js), the time-lapse, ablation by pressing a head, the
// generate box and a head's "Open in the playground" link. The run bar, the
// progress card and the settings form are the lab's (main.js drives them). The
// view interface (fill, clear, show, open, note, inputs, start, remakeOn) is
// the one every family's views have; this one adds held and refuses: a text box
// whose text no model can learn (transformer-text.js says why, next to it)
// makes no model and holds Train.
import { byId, h, setHidden, setText } from '../ui/dom.js';
import { fixed } from '../ui/format.js';
import { createHeatmap } from '../ui/heatmap.js';
import { createHeadsView } from './transformer-heads.js';
import { createLensView, shown } from './transformer-lens.js';
import { ANSWER_TASKS, TASK_PATTERNS, repeatOf, scoredPositions, verdict } from './transformer-guide.js';
import { createScoresView } from './transformer-scores.js';
import { formedOf } from './family-transformer.js';
import { codec } from './state.js';
import { ablation, checkNames, headName, parseHead, playgroundState } from './transformer-state.js';
import { readTextBox } from './transformer-text.js';
import { limitBox } from './box-limit.js';
import { INDUCTION_PAIR, circuitsPanel } from './transformer-circuits.js';

/** Words for the engine's task and position names; a name the engine gains shows as itself. */
const TASK_LABELS = {
  induction: 'induction (a segment seen twice)', copy: 'copy a sequence', reverse: 'reverse a sequence',
  sort: 'sort a sequence', modular: 'a + b mod 31', dates: 'dates → ISO (2009-06-25)',
  names: 'first names', text: 'my own text…',
};
const POSITION_LABELS = {
  learned: 'learned', sinusoidal: 'sinusoidal', rope: 'RoPE (rotary)', alibi: 'ALiBi (distance bias)', none: 'none (order-blind)',
};
/** Tasks whose sequences are text to continue, not a prompt and an answer. */
const TEXT_TASKS = ['text', 'names'];
const REPLAY_MS = 160;

function fillSelect(select, names, labels) {
  select.replaceChildren(...names.map((n) => h('option', { value: n, textContent: labels[n] ?? n })));
}

/** page: { session, state, writeHash, onError(err, context), onHeld() }; state: the lab's state (its tf* fields). */
export function createTransformerView({ session, state, writeHash, onError, onHeld }) {
  const heads = createHeadsView({ onToggle: toggle });
  const scores = createScoresView();
  const lens = createLensView();
  const slider = byId('tf-timeline');
  const replay = byId('tf-replay');
  const inputBox = byId('tfInput');
  const promptBox = byId('tfPrompt');
  const message = byId('tf-input-message');
  // why the text box does not hold a loaded model's whole text, when it does not
  const textNote = h('p', { id: 'tf-text-note', className: 'hint small', hidden: true, dataset: { testid: 'tf-text-note' } });
  // what of the typed text a model learns, when not all of it (empty when it does): read out as it changes
  const textMessage = h('p', { id: 'tf-text-message', className: 'align-message', dataset: { testid: 'tf-text-message' }, attrs: { role: 'status', 'aria-live': 'polite' } });
  byId('tf-text-box').after(textMessage, textNote);
  byId('tfText').setAttribute('aria-describedby', `${textMessage.id} ${textNote.id}`);
  // the box's text when it is not the state's (a new model learns state.tfText): too short, empty, or cut
  let typed = null;
  let learned = null; // the text the model in hand learns (a 'text' model's)
  // the chosen head, large, with its tokens: hover or arrow keys read a weight
  const chosen = createHeatmap({ id: 'tf-chosen', label: 'The chosen head\'s attention', uprightCols: true });
  byId('tf-chosen').append(chosen.el);
  let config = null;
  let example = null; // the test example the input and prompt default to
  let parts = null; // the example as tokens: { text, prompt: its prompt's count, answer: [tokens] } (null: not read)
  let live = true;
  let timer = null;
  let shownView = null;

  const fits = (name) => {
    const hd = parseHead(name);
    return config && hd.layer < config.layers && hd.head < config.heads;
  };

  function say(text) {
    setHidden(message, !text);
    setText(message, text ?? '');
  }

  /** The frame the time-lapse points at (null: the live model). */
  const frame = () => (live ? null : session.frames[Number(slider.value)] ?? null);

  /** One forward pass over `input` with `ablate`'s heads zeroed: attention, predictions, logit lens. */
  const inspect = (input, ablate = []) => session.read('inspect', { input, options: { ablate } });

  /**
   * `input` read by the model as it was at `f`: its recorded view when it
   * recorded this input, else its weights, loaded for one forward pass. Null
   * when the frame has neither (a model too large to keep weights).
   */
  async function inspectAt(f, input) {
    if (f.input === input && f.view) return f.view;
    if (!f.bytes) return null;
    return session.readAt(f.bytes, 'inspect', { input, options: { ablate: [] } });
  }

  function syncTimeline() {
    const n = session.frames.length;
    slider.max = String(Math.max(0, n - 1));
    slider.disabled = n < 2;
    replay.disabled = n < 2;
    if (live) slider.value = slider.max;
    const f = frame();
    setText(byId('tf-timeline-label'), f ? `step ${f.step.toLocaleString('en')} (recorded)` : `live, step ${session.steps.toLocaleString('en')}`);
  }

  /** The test loss and accuracy with the ablated heads and without them. */
  async function showAblation() {
    const out = byId('tf-ablation');
    const full = session.lastEval ?? await session.evaluate();
    session.lastEval = full;
    out.dataset.loss = String(full.loss);
    const all = `loss ${fixed(full.loss, 3)} nats per scored token, accuracy ${fixed(100 * full.accuracy, 1)}%`;
    if (!state.tfAblate.length) {
      delete out.dataset.ablatedLoss;
      setText(out, `Test split, every head: ${all}. Press a head to ablate it.`);
      return;
    }
    const cut = await session.evaluate({ ablate: ablation(state) });
    out.dataset.ablatedLoss = String(cut.loss);
    const names = state.tfAblate.join(', ');
    const dLoss = cut.loss - full.loss;
    const dAcc = 100 * (cut.accuracy - full.accuracy);
    setText(out, `Test split with ${names} ablated: loss ${fixed(cut.loss, 3)}, accuracy ${fixed(100 * cut.accuracy, 1)}% `
      + `(${dLoss >= 0 ? '+' : '−'}${fixed(Math.abs(dLoss), 3)} nats, ${dAcc >= 0 ? '+' : '−'}${fixed(Math.abs(dAcc), 1)} points). Every head: ${all}.`);
  }

  /** The input's repeated stretch (its second occurrence's rows) and the induction stripe, outlined on every map (null: no repeat). */
  function outlineOf(view) {
    const r = view ? repeatOf(view.tokens) : null;
    return r ? { rows: [r.second, r.second + r.length - 1], cells: r.stripe } : null;
  }
  /** The sentence on what the outlines mark, under the maps. */
  function showRepeat(view) {
    const r = view ? repeatOf(view.tokens) : null;
    setText(byId('tf-repeat'), r
      ? `Outlined on the maps: positions ${r.second}–${r.second + r.length - 1} repeat positions ${r.first}–${r.first + r.length - 1} (dashed rows), `
        + `and the ${r.stripe.length} cells where an induction head looks from them: one after the same token's earlier occurrence (orange boxes).`
      : '');
  }

  /** The chosen head's map, large, and its playground link, over the shown input. */
  function showChosenHead() {
    const select = byId('tf-open-head');
    const link = byId('tf-open');
    const hd = parseHead(select.value);
    if (!shownView || !hd) {
      link.removeAttribute('href');
      setText(byId('tf-open-note'), '');
      return;
    }
    const map = shownView.attention[hd.layer][hd.head];
    const labels = shownView.tokens.map(shown);
    chosen.update(map, {
      rowLabels: labels, colLabels: labels, kind: 'unit', legend: `attention weight of ${headName(hd)}: rows are queries ↓, columns keys →`, maxCell: 14, minCell: 11, everyLabel: true,
      outline: outlineOf(shownView),
      describe: (i, j) => ({ title: `${headName(hd)}: position ${i} (${labels[i]}) → ${j} (${labels[j]})`, lines: [`weight ${fixed(map.data[i * map.cols + j], 3)}`] }),
    });
    const step = frame()?.step ?? session.steps;
    const p = playgroundState(shownView.tokens, map, `layer ${hd.layer}, head ${hd.head} of the lab's ${config.task} transformer, step ${step.toLocaleString('en')}`);
    link.href = `index.html${p.hash}`;
    setText(byId('tf-open-note'), `Opens the playground's self-attention view with ${p.cut ? `the first ${p.tokens} of the ${shownView.tokens.length}` : `the ${p.tokens}`} tokens `
      + `and ${headName(hd)}'s weights, exactly: the tokens are one-hot and the query weights hold the head's log-weights, `
      + 'so the playground\'s causal softmax gives them back. The model\'s embeddings, values and other layers are not carried.');
  }

  // The maps, lens, scores and ablation of the live model or of a recorded frame; the newest request wins.
  let request = 0;
  async function show() {
    if (!config) return;
    const ticket = ++request;
    syncTimeline();
    const f = frame();
    let view = f?.view ?? null;
    try {
      // an earlier step reads the input in the box with that step's weights (kept in the frame)
      if (f) view = (await inspectAt(f, session.input)) ?? f.view;
      else if (session.input) view = await inspect(session.input, ablation(state));
      if (ticket !== request) return;
      say(f && view === f.view && f.input !== session.input
        ? `Step ${f.step.toLocaleString('en')}'s weights were not kept (the time-lapse keeps at most 48 MB of them), so its maps are of “${f.input}”, the input it recorded.`
        : null);
    } catch (err) {
      if (ticket !== request) return;
      say(`The model cannot read this input: ${String(err.message).replace(/^inspect: /, '')}.`);
    }
    shownView = view;
    const points = f ? session.scores.filter((s) => s.step <= f.step) : session.scores;
    if (!f) circuitsPanel(session.client).trained(session.steps);
    heads.update(view, { layers: config.layers, heads: config.heads, ablated: new Set(state.tfAblate), scores: points.at(-1)?.heads, outline: outlineOf(view) });
    showRepeat(view);
    lens.update(view, parts && session.input === parts.text ? scoredPositions(parts.prompt, parts.answer.length, view?.tokens.length ?? 0) : null);
    // a recorded frame from before the head formed shows it not formed yet
    const formed = formedOf(session);
    scores.update(points, formed && (!f || formed.step <= f.step) ? formed : null);
    showChosenHead();
    try {
      if (!f) await showAblation();
    } catch (err) {
      if (ticket === request) onError(err, { doing: 'read' });
    }
  }

  function toggle(hd) {
    const name = headName(hd);
    state.tfAblate = state.tfAblate.includes(name) ? state.tfAblate.filter((n) => n !== name) : [...state.tfAblate, name];
    writeHash();
    // ablation acts on the live model: the time-lapse comes back to it
    stopReplay();
    live = true;
    show();
  }

  /** Inspects `text` from now on (the next frames record it too). */
  async function setInput(text) {
    session.input = text;
    inputBox.value = text;
    await session.record().catch(() => {});
    await show();
  }

  /** The example's prompt and answer as the model's tokens (its scored positions, Generate's true answer). */
  async function readParts() {
    const text = Array.from(example.input + example.target).slice(0, config.context).join('');
    const [head, all] = await Promise.all([inspect(example.input), inspect(example.input + example.target)]).catch(() => []);
    parts = head && all ? { text, prompt: head.tokens.length, answer: all.tokens.slice(head.tokens.length) } : null;
  }

  async function pickExample(seed) {
    [example] = await session.examples(1, seed);
    await readParts();
    const text = Array.from(example.input + example.target).slice(0, config.context).join('');
    state.tfInput = seed === 1 ? '' : text;
    writeHash();
    promptBox.placeholder = defaultPrompt();
    await setInput(text);
  }

  const defaultPrompt = () => (TEXT_TASKS.includes(config?.task) ? Array.from(example?.input ?? '').slice(0, 8).join('') : example?.input ?? '');

  async function generate() {
    const out = byId('tf-generated');
    const prompt = state.tfPrompt || defaultPrompt();
    if (!prompt) { setText(out, 'Type a prompt first.'); return; }
    const length = Array.from(prompt).length;
    const room = config.context - length;
    const most = TEXT_TASKS.includes(config.task) ? 60 : 24;
    // a test example's prompt has one right answer: generate stops at its end and says whether it is right
    const checked = ANSWER_TASKS.includes(config.task) && parts && prompt === example?.input;
    const tokens = checked ? parts.answer.length : Math.max(1, Math.min(most, room));
    const judged = byId('tf-verdict');
    setText(judged, '');
    // why it stops where it does, said under the output
    const n = (k) => `${k.toLocaleString('en')} token${k === 1 ? '' : 's'}`;
    setText(byId('tf-stopped'), checked ? `Stopped at the end of the answer (${n(tokens)}), to check it.`
      : room < 1 ? `Stopped after ${n(1)}: the prompt's ${n(length)} already fill the model's context of ${n(config.context)} (it reads only the last ${config.context}).`
        : tokens === room ? `Stopped after ${n(tokens)}: the context is full (the prompt's ${n(length)} and the new ones make the model's ${config.context}).`
          : `Stopped after ${n(tokens)}, the most Generate adds at a time.`);
    try {
      const r = await session.read('generate', { prompt, options: { tokens, temperature: Number(byId('tf-temperature').value), topK: 0, seed: state.seed } });
      setText(out, `${prompt}▸${r.text}`);
      const v = checked ? verdict(r.tokens, parts.answer, example.target) : null;
      judged.dataset.right = v ? String(v.right) : '';
      setText(judged, v?.text ?? (ANSWER_TASKS.includes(config.task) ? 'Checked only on a test example\'s prompt (empty the prompt, or press Example or Random).' : ''));
    } catch (err) {
      setText(out, `No output: ${String(err.message).replace(/^generate: /, '')}.`);
    }
  }

  function stopReplay() {
    clearInterval(timer);
    timer = null;
    setText(replay, '▶ Replay');
    replay.setAttribute('aria-pressed', 'false');
  }

  slider.addEventListener('input', () => {
    stopReplay();
    live = Number(slider.value) === Number(slider.max);
    show();
  });
  replay.addEventListener('click', () => {
    if (timer) { stopReplay(); return; }
    live = false;
    slider.value = '0';
    setText(replay, '❚❚ Stop');
    replay.setAttribute('aria-pressed', 'true');
    show();
    timer = setInterval(() => {
      if (Number(slider.value) >= Number(slider.max)) {
        stopReplay();
        live = true;
      } else slider.value = String(Number(slider.value) + 1);
      show();
    }, REPLAY_MS);
  });
  // a box shorter than what is pasted keeps what it can, and says so
  limitBox(inputBox);
  limitBox(promptBox);
  inputBox.addEventListener('change', () => {
    state.tfInput = inputBox.value;
    writeHash();
    if (session.model) setInput(inputBox.value || Array.from((example?.input ?? '') + (example?.target ?? '')).slice(0, config.context).join(''));
  });
  promptBox.addEventListener('change', () => {
    state.tfPrompt = promptBox.value;
    writeHash();
  });
  byId('tf-generate').addEventListener('click', () => generate());
  byId('tf-example').addEventListener('click', () => pickExample(1).catch((err) => onError(err, { doing: 'read' })));
  byId('tf-random').addEventListener('click', () => pickExample(2 + Math.floor(Math.random() * 1e9)).catch((err) => onError(err, { doing: 'read' })));
  byId('tf-open-head').addEventListener('change', showChosenHead);
  /** Reads the box: the text a new model learns goes to the state, what is wrong with it next to the box. */
  function readBox() {
    const value = byId('tfText').value;
    const { text, message } = readTextBox(value);
    setText(textMessage, message ?? '');
    typed = value === text ? null : value;
    return text;
  }
  byId('tfText').addEventListener('input', () => {
    readBox();
    setHidden(textNote, true);
  });
  byId('tfText').addEventListener('change', () => {
    const text = readBox();
    if (text === null) {
      // no model from this box: the one in hand stops, with its text, until the box holds one
      session.pause();
      onHeld();
      return;
    }
    state.tfText = text;
    writeHash();
    setHidden(textNote, true);
    onHeld();
  });

  /** Views start again (a new model is coming). */
  function reset() {
    stopReplay();
    setHidden(textNote, true);
    live = true;
    config = null;
    heads.clear();
    scores.clear();
  }

  /** Views of the model the session now holds, on `input` ('' : a test example). */
  async function prepare(input) {
    config = session.info.config;
    // the Input box is as wide as the most the model reads
    inputBox.style.setProperty('--chars', String(config.context));
    learned = config.task === 'text' ? state.tfText : null;
    const kept = state.tfAblate.filter(fits);
    if (kept.length !== state.tfAblate.length) state.tfAblate = kept;
    const select = byId('tf-open-head');
    const names = Array.from({ length: config.layers * config.heads }, (_, k) => headName({ layer: Math.floor(k / config.heads), head: k % config.heads }));
    fillSelect(select, names, Object.fromEntries(names.map((n) => { const hd = parseHead(n); return [n, `${n}: layer ${hd.layer}, head ${hd.head}`]; })));
    [example] = await session.examples(1, 1);
    await readParts();
    setText(byId('tf-pattern'), TASK_PATTERNS[config.task] ?? '');
    setText(byId('tf-generate-hint'), TEXT_TASKS.includes(config.task)
      ? 'The model continues a prompt one character at a time, each drawn from its prediction.'
      : 'The model completes a prompt (by default, a test example up to its answer), one token at a time.');
    promptBox.placeholder = defaultPrompt();
    setText(byId('tf-generated'), '–');
    setText(byId('tf-verdict'), '');
    setText(byId('tf-stopped'), '');
    await setInput(input || Array.from(example.input + example.target).slice(0, config.context).join(''));
    writeHash();
    const labelAt = (steps) => `the ${config.task} transformer trained here, step ${steps.toLocaleString('en')}`;
    circuitsPanel(session.client).use({ kind: 'trained', model: session.model, config, steps: session.steps, label: labelAt(session.steps), labelAt, pair: circuitPair() })
      ?.catch((err) => onError(err, { doing: 'read' }));
  }

  /**
   * The Circuits panel's example pair for the model in hand: on induction, a repeat whose corrupt
   * prompt changes the token after the first occurrence; else the test example's prompt and the same
   * with its first token changed.
   */
  function circuitPair() {
    const vocabulary = config.vocabulary ?? [];
    if (config.task === 'induction' && [...INDUCTION_PAIR.clean, ...INDUCTION_PAIR.corrupt].every((c) => vocabulary.includes(c))) return INDUCTION_PAIR;
    const clean = Array.from(example?.input ?? '').slice(0, config.context);
    const other = vocabulary.find((t) => t.length === 1 && t !== clean[0] && /\S/.test(t)) ?? clean[0];
    return { clean: clean.join(''), corrupt: [other, ...clean.slice(1)].join('') };
  }

  return {
    /** Shows the family's own fields of the form (the text box for the text task, with what was typed there). */
    fill() {
      const text = state.tfTask === 'text';
      setHidden(byId('tf-text-box'), !text);
      setHidden(textMessage, !text);
      if (!text) setHidden(textNote, true);
      const box = typed ?? state.tfText;
      if (byId('tfText').value !== box) byId('tfText').value = box;
      inputBox.value = session.input || state.tfInput;
      promptBox.value = state.tfPrompt;
    },
    clear: reset,
    /** Redraws after a chunk of training. */
    show,
    /** Views of the model the session now holds, on its input (a kept run's), the link's, or a test example. */
    open: () => prepare(session.input || state.tfInput),
    /** Says under the text box why it does not hold the model's whole text (null: it does); the box holds the model's text. */
    note(text) {
      typed = null;
      setText(textMessage, '');
      byId('tfText').value = state.tfText;
      setText(textNote, text ?? '');
      setHidden(textNote, !text);
    },
    /** Why no model can be made from the text box now (null: one can): Train waits, and the box says why. */
    held: () => (state.tfTask === 'text' && typed !== null && readTextBox(typed).text === null ? textMessage.textContent : null),
    /** Whether a change of `id` makes no new model: the text box holds no text a model can learn, or the model's own. */
    refuses(id) {
      if (id !== 'tfText') return false;
      const { text } = readTextBox(byId('tfText').value);
      return text === null || text === learned;
    },
    inputs: () => ({}),
    /**
     * The engine's names ({ tasks, positional, scores }) fill the task and
     * position lists; returns the fields of the state put back to their default.
     */
    start(engine) {
      fillSelect(byId('tfTask'), engine.transformer.tasks, TASK_LABELS);
      fillSelect(byId('tfPositional'), engine.transformer.positional, POSITION_LABELS);
      // a link's text no model can learn stays in the box, saying why; a model learns the default text meanwhile
      const { text, message: why } = readTextBox(state.tfText);
      if (text === null) {
        typed = state.tfText;
        state.tfText = codec.defaults().tfText;
        setText(textMessage, why);
      }
      return checkNames(state, engine.transformer);
    },
    remakeOn: ['tfText'],
  };
}
