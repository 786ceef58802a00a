// The text family's views: the alignment of the input in the box through the
// model (at the timeline's step), the bottleneck experiment, the pairs box and
// the example buttons. The view interface (fill, clear, show, open, note,
// inputs, start, remakeOn) is the one every family's views have (main.js).
import { byId } from '../ui/dom.js';
import { createAlignmentView, createTimeline } from './alignment.js';
import { createBottleneckView } from './bottleneck.js';
import { limitBox } from './box-limit.js';
import { PROPERTIES, modelOptions } from './state.js';

const PAIRS_EXAMPLE = ['hello\tolleh', 'attention\tnoitnetta', 'world\tdlrow', 'seq\tqes', 'model\tledom',
  'encoder\tredocne', 'decoder\tredoced', 'align\tngila', 'query\tyreuq', 'value\teulav', 'key\tyek', 'weight\tthgiew'].join('\n');

/** The sentence for an input the model cannot translate (the engine's reason, and what it reads). */
function cannotRead(err, text, info) {
  const reason = String(err.message).replace(/^translate: (text: )?/, '');
  const alphabet = typeof info?.inputAlphabet === 'string' ? info.inputAlphabet : Array.from(info?.inputAlphabet ?? []).join('');
  const reads = alphabet ? ` It reads these characters: ${alphabet.replace(/ /g, '␣')}` : '';
  return `No output for “${text}”: ${reason}.${reads}`;
}

/** page: { session, state, client, writeHash, onError(err, context) }. */
export function createTextView({ session, state, client, writeHash, onError }) {
  const alignment = createAlignmentView();
  const timeline = createTimeline(() => show());
  const pairs = byId('pairs');
  const textBox = byId('text');
  const bottleneck = createBottleneckView({
    onError: (err) => onError(err, { doing: 'experiment' }),
    setup() {
      onError(null);
      session.pause();
      const other = state.compare !== state.attention ? state.compare : state.attention === 'none' ? 'additive' : 'none';
      const text = state.task === 'pairs' ? pairs.value : undefined;
      return {
        client, names: [state.attention, other], steps: state.compareSteps, batch: state.batch, lr: state.lr,
        optionsA: modelOptions(state, state.attention, text), optionsB: modelOptions(state, other, text),
      };
    },
  });

  // The input in the box, through the model at the timeline's position; the
  // newest request wins (older answers that arrive late are dropped).
  let request = 0;
  async function show() {
    const ticket = ++request;
    timeline.setSnapshots(session.snapshots ?? []);
    if (!session.model || session.kind !== 'seq2seq') return;
    if (!state.text) {
      alignment.fail('Type an input to translate, or press Example.');
      return;
    }
    try {
      const live = timeline.live;
      const step = live ? session.steps : session.snapshots[timeline.index].step;
      const args = { text: state.text, options: { beam: state.beam } };
      const t = live ? await session.read('translate', args) : await session.readAt(session.snapshots[timeline.index].bytes, 'translate', args);
      if (ticket === request) alignment.show(t, session.info.config.attention, { step, live });
    } catch (err) {
      if (ticket === request) alignment.fail(cannotRead(err, state.text, session.info));
    }
  }

  async function pickExample(seed) {
    const [ex] = await session.examples(1, seed);
    state.text = ex.input;
    textBox.value = ex.input;
    writeHash();
    await show();
  }

  // a longer paste is cut to what the model reads (and the link holds), and the box says so (before the input is read below)
  let maxInput = PROPERTIES.text.maxLength;
  limitBox(textBox, () => Math.min(maxInput, PROPERTIES.text.maxLength));
  textBox.addEventListener('input', () => {
    state.text = textBox.value.slice(0, PROPERTIES.text.maxLength);
    writeHash();
    show();
  });
  byId('example').addEventListener('click', () => pickExample(1).catch((err) => onError(err, { doing: 'read' })));
  byId('random').addEventListener('click', () => pickExample(1 + Math.floor(Math.random() * 1e9)).catch((err) => onError(err, { doing: 'read' })));

  return {
    /** The box holds the state's text; the pairs task starts from an example of pairs. */
    fill() {
      if (state.task === 'pairs' && !pairs.value) pairs.value = PAIRS_EXAMPLE;
      textBox.value = state.text;
    },
    clear() {
      alignment.clear();
      bottleneck.clear();
    },
    show,
    /** The model the session now holds: the input in the box through it, or an example. */
    async open() {
      maxInput = session.info.config.maxInput;
      if (state.text) await show();
      else await pickExample(1);
    },
    note() {},
    /** What a new model reads from the page rather than the link: the pairs text. */
    inputs: () => ({ pairs: state.task === 'pairs' ? pairs.value : undefined }),
    start: () => [],
    remakeOn: ['pairs'],
  };
}
