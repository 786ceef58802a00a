// The training lab: wiring only. Settings are the property table of state.js
// (mirrored in the URL by the shared codec), training runs in the worker through
// session.js, and the panels are the views of controls.js, progress.js,
// alignment.js and bottleneck.js (text tasks), images.js and modes.js (image
// tasks). Everything lives inside start(): no module state.
import { byId, setText } from '../ui/dom.js';
import { mountHeader } from '../ui/header.js';
import { createNotice } from '../ui/notice.js';
import { LabClient } from '../worker/lab-client.js';
import { createAlignmentView, createTimeline } from './alignment.js';
import { createBottleneckView } from './bottleneck.js';
import { createControls } from './controls.js';
import { createImageView } from './images.js';
import { createModesView } from './modes.js';
import { readModelFile, saveModel, settingsOf } from './model-file.js';
import { createProgressView } from './progress.js';
import { TrainingSession } from './session.js';
import { codec, isImageTask, MODEL_KEYS, modelOptions, trainOptions, visionOptions } from './state.js';

const PAIRS_EXAMPLE = ['hello\tolleh', 'attention\tnoitnetta', 'world\tdlrow', 'seq\tqes', 'model\tledom',
  'encoder\tredocne', 'decoder\tredoced', 'align\tngila', 'query\tyreuq', 'value\teulav', 'key\tyek', 'weight\tthgiew'].join('\n');

/** The sentence for an input the model cannot translate (the engine's reason, and what it reads). */
function cannotRead(err, text, info) {
  const reason = String(err.message).replace(/^translate: (text: )?/, '');
  const alphabet = typeof info?.inputAlphabet === 'string' ? info.inputAlphabet : Array.from(info?.inputAlphabet ?? []).join('');
  const reads = alphabet ? ` It reads these characters: ${alphabet.replace(/ /g, '␣')}` : '';
  return `No output for “${text}”: ${reason}.${reads}`;
}

function start() {
  const decoded = codec.decode(location.hash);
  const state = decoded.state;
  const header = mountHeader({ current: 'lab', skipTo: 'main', tagline: 'training lab' });
  const notice = createNotice(byId('notice'));
  notice.linkFields(decoded.ignored);
  const writeHash = () => history.replaceState(null, '', codec.encode(state));

  const errorBox = byId('error');
  const showError = (err) => {
    setText(errorBox, err ? String(err.message) : '');
    errorBox.hidden = !err;
  };

  const controls = createControls();
  const progress = createProgressView();
  const alignment = createAlignmentView();
  const timeline = createTimeline(() => showInput());
  const client = new LabClient(new Worker(new URL('../worker/lab-worker.js', import.meta.url), { type: 'module' }));
  const images = createImageView({
    read: (image) => session.readImage(image),
    example: async (seed) => (await session.examples(1, seed))[0],
    onError: showError,
  });
  /** The readings of the model as it is now: the text in the box, or the images. */
  const showModel = () => (session.kind === 'vision' ? images.refresh() : showInput());
  const session = new TrainingSession(client, {
    onProgress: () => {
      progress.update(session);
      showModel();
    },
    onError: (err) => {
      showError(err);
      progress.update(session);
      showModel();
    },
    onState: () => {
      setText(byId('play'), session.playing ? '❚❚ Pause' : '▶ Train');
      byId('play').setAttribute('aria-pressed', String(session.playing));
      byId('step').disabled = session.playing;
    },
  });
  const bottleneck = createBottleneckView({
    onError: showError,
    setup() {
      showError(null);
      session.pause();
      const other = state.compare !== state.attention ? state.compare : state.attention === 'none' ? 'additive' : 'none';
      const pairs = state.task === 'pairs' ? byId('pairs').value : undefined;
      return {
        client, names: [state.attention, other], steps: state.compareSteps, batch: state.batch, lr: state.lr,
        optionsA: modelOptions(state, state.attention, pairs), optionsB: modelOptions(state, other, pairs),
      };
    },
  });

  const modes = createModesView({
    onError: showError,
    setup() {
      showError(null);
      session.pause();
      return { client, options: (mode) => visionOptions(state, mode), steps: state.modeSteps, batch: state.batch, lr: state.lr };
    },
  });

  // The input in the box, through the model at the timeline's position; the
  // newest request wins (older answers that arrive late are dropped).
  let request = 0;
  async function showInput() {
    const ticket = ++request;
    timeline.setSnapshots(session.snapshots);
    if (!session.model || session.kind !== 'seq2seq') return;
    if (!state.text) {
      alignment.fail('Type an input to translate, or press Example.');
      return;
    }
    try {
      const t = timeline.live
        ? await session.translate(state.text, state.beam)
        : await session.translateAt(timeline.index, state.text, state.beam);
      if (ticket === request) alignment.show(t, session.info.config.attention);
    } catch (err) {
      if (ticket === request) alignment.fail(cannotRead(err, state.text, session.info));
    }
  }

  async function pickExample(seed) {
    const [ex] = await session.examples(1, seed);
    state.text = ex.input;
    byId('text').value = ex.input;
    writeHash();
    await showInput();
  }

  /** Empties every curve, number and readout of the last model. */
  function clearViews() {
    progress.clear();
    progress.label(isImageTask(state.task) ? state.task : 'text');
    alignment.clear();
    bottleneck.clear();
    images.clear();
    modes.clear();
    modes.label(state.task);
  }

  /**
   * A new model from the settings: every curve, number and readout starts again.
   * When an image model cannot be made (the digits did not load: ERR_DATA) the
   * model there was stays, with its settings and curves, and the error says why.
   */
  async function newModel(previous = null) {
    showError(null);
    const vision = isImageTask(state.task);
    try {
      if (!vision) clearViews();
      const pairs = state.task === 'pairs' ? byId('pairs').value : undefined;
      const created = vision
        ? await session.create(visionOptions(state), 'vision')
        : await session.create(modelOptions(state, state.attention, pairs));
      if (vision) {
        clearViews();
        progress.update(session);
        await images.setModel(created.config, state.image);
        return true;
      }
      byId('text').maxLength = created.config.maxInput;
      progress.update(session);
      if (state.text) await showInput();
      else await pickExample(1);
      return true;
    } catch (err) {
      if (vision && err.code === 'ERR_DATA') {
        const kept = previous && session.model ? ' The model you had is kept; press Reset to try again.' : ' Press Reset to try again.';
        showError(new Error(`The handwritten digits could not be loaded (${err.code}): ${err.message}.${kept}`));
        if (previous && session.model) {
          Object.assign(state, previous);
          controls.fill(state);
          byId('text').value = state.text;
          writeHash();
        } else clearViews();
      } else showError(err);
      return false;
    }
  }

  async function onControl(id) {
    const changed = controls.read(id);
    if (!changed) return;
    const { name, value } = changed;
    const previous = { ...state };
    state[name] = value;
    if (state.maxLength < state.minLength) state.maxLength = state.minLength;
    if (name === 'task' || name === 'alphabet') state.text = '';
    if (state.task === 'pairs' && !byId('pairs').value) byId('pairs').value = PAIRS_EXAMPLE;
    writeHash();
    controls.fill(state);
    byId('text').value = state.text;
    if (MODEL_KEYS.includes(name)) {
      const wasPlaying = session.playing;
      if ((await newModel(previous)) && wasPlaying) session.play(trainOptions(state));
    } else if (name === 'beam') {
      showInput();
    } else if (name === 'speed') {
      session.stepsPerUpdate = state.speed;
    } else if (session.playing) {
      session.trainOptions = trainOptions(state);
    }
  }

  for (const id of controls.ids) byId(id).addEventListener('change', () => onControl(id));
  byId('pairs').addEventListener('change', () => newModel());
  byId('text').addEventListener('input', () => {
    state.text = byId('text').value.slice(0, 64);
    writeHash();
    showInput();
  });
  byId('play').addEventListener('click', () => {
    if (session.playing) session.pause();
    else {
      showError(null);
      session.play(trainOptions(state));
    }
  });
  byId('step').addEventListener('click', () => {
    showError(null);
    session.step(trainOptions(state));
  });
  byId('reset').addEventListener('click', async () => {
    const wasPlaying = session.playing;
    if ((await newModel()) && wasPlaying) session.play(trainOptions(state));
  });
  const showImage = (seed) => {
    state.image = seed;
    writeHash();
    images.show(seed);
  };
  byId('image-example').addEventListener('click', () => showImage(1));
  byId('image-random').addEventListener('click', () => showImage(1 + Math.floor(Math.random() * (2 ** 31 - 2))));
  byId('example').addEventListener('click', () => pickExample(1).catch(showError));
  byId('random').addEventListener('click', () => pickExample(1 + Math.floor(Math.random() * 1e9)).catch(showError));
  document.addEventListener('keydown', (e) => {
    const typing = ['INPUT', 'TEXTAREA', 'SELECT', 'BUTTON', 'CANVAS', 'SVG'].includes(document.activeElement?.tagName?.toUpperCase());
    if (e.key === ' ' && !typing && !e.repeat) {
      e.preventDefault();
      byId('play').click();
    }
  });

  byId('save').addEventListener('click', () => saveModel(session, state).catch(showError));
  byId('load').addEventListener('change', async (e) => {
    const file = e.target.files?.[0];
    e.target.value = '';
    if (!file) return;
    showError(null);
    try {
      const loaded = await session.load(await readModelFile(file));
      Object.assign(state, settingsOf(loaded.config));
      controls.fill(state);
      writeHash();
      clearViews();
      progress.update(session);
      const c = loaded.config;
      if (loaded.kind === 'vision') {
        await images.setModel(c, state.image);
        notice.show(`Loaded ${file.name}: ${c.task}, ${c.cell}, attention ${state.mode}, ${loaded.steps} steps trained.`);
      } else {
        byId('text').maxLength = c.maxInput;
        await showInput();
        notice.show(`Loaded ${file.name}: ${c.task}, ${c.cell}, attention ${c.attention}, ${loaded.steps} steps trained.`);
      }
    } catch (err) {
      showError(new Error(`${file.name}: ${err.message}`));
    }
  });

  controls.fill(state);
  if (state.task === 'pairs') byId('pairs').value = PAIRS_EXAMPLE;
  byId('text').value = state.text;
  session.stepsPerUpdate = state.speed;
  writeHash();
  client.call('init', {}).then(async (engine) => {
    header.engine(engine, 'training in a worker');
    await newModel();
    document.body.dataset.ready = 'true';
  }).catch((err) => showError(new Error(`The engine did not start: ${err.message}`)));

  // for the browser tests: the session and the state, to read
  window.attnlabLab = { session, state, images };
}

start();
