// The training lab: wiring only. Settings are the property table of state.js
// (mirrored in the URL by the shared codec), training runs in the worker through
// session.js, and the panels are the views of controls.js, progress.js,
// alignment.js and bottleneck.js (text tasks), images.js and modes.js (image
// tasks), with the run bar of model-status.js; the Transformer family is
// transformer.js, with its own session, driven by the same run bar, and its
// models are made, loaded and restored by transformer-models.js. A task (and
// the Transformer family) opens on its pretrained model when web/models has one
// (pretrained.js); a new model of either family keeps the one before it, to go
// back to. Everything lives inside start(): no module state.
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
import { createModelStatus, modelName } from './model-status.js';
import { fetchPretrained, linkFields, loadManifest, pickPretrained, pickPretrainedTransformer } from './pretrained.js';
import { createProgressView } from './progress.js';
import { TrainingSession } from './session.js';
import { codec, isImageTask, MODEL_KEYS, modelOptions, trainOptions, visionOptions } from './state.js';
import { createTransformerFamily } from './transformer.js';
import { ANY_SIZE, createTransformerModels } from './transformer-models.js';
import { TF_MODEL_KEYS, transformerTrainOptions } from './transformer-state.js';

/** The fields of a task change that choose its pretrained model. */
const TASK_FIELDS = new Set(['task', 'mode']);
/** A link that sets an experiment's fields opens at that experiment. */
const EXPERIMENTS = [{ id: 'bottleneck', fields: ['compare', 'compareSteps'] }, { id: 'modes', fields: ['modeSteps'] }];

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
  const given = linkFields(location.hash); // the fields the link sets, before the page rewrites it
  const header = mountHeader({ current: 'lab', skipTo: 'main', tagline: 'training lab' });
  const notice = createNotice(byId('notice'));
  notice.linkFields(decoded.ignored);
  const writeHash = () => history.replaceState(null, '', codec.encode(state));

  const status = createModelStatus();
  const showError = (err, context) => status.error(err, context);
  let manifest = null; // the pretrained models (web/models/models.json)
  let origin = {}; // where the model in hand came from: { pretrained } | { file } | {} (made here)
  const backTo = { previous: null }; // the model before the last new one: { state, run, bytes, origin, label }
  const pretrainedFor = (fields) => pickPretrained(manifest, state, fields);
  const isTf = () => state.task === 'transformer';
  /** The session the run bar drives: the transformer's in its family, else the seq2seq / image one. */
  const active = () => (isTf() ? tf.session : session);
  const runOptions = () => (isTf() ? transformerTrainOptions(state) : trainOptions(state));
  const showStatus = () => {
    const pretrained = { ...state, start: 'pretrained' };
    const can = isTf() ? pickPretrainedTransformer(manifest, pretrained, ANY_SIZE) : pickPretrained(manifest, pretrained, TASK_FIELDS);
    status.update(active(), state, isTf() ? tfModels.origin : origin, Boolean(can));
    status.previous(backTo.previous);
    showPlaying(active());
  };

  const controls = createControls();
  const progress = createProgressView();
  const alignment = createAlignmentView();
  const timeline = createTimeline(() => showInput());
  const client = new LabClient(new Worker(new URL('../worker/lab-worker.js', import.meta.url), { type: 'module' }));
  const images = createImageView({
    read: (image) => session.readImage(image),
    example: async (seed) => (await session.examples(1, seed))[0],
    steps: () => session.steps,
    onError: (err) => showError(err, { doing: 'read' }),
  });
  /** The readings of the model as it is now: the text in the box, or the images. */
  const showModel = () => (session.kind === 'vision' ? images.refresh() : showInput());
  const session = new TrainingSession(client, {
    onProgress: () => {
      progress.update(session);
      showStatus();
      showModel();
    },
    onError: (err) => {
      showError(err, { doing: 'train' });
      progress.update(session);
      showStatus();
      showModel();
    },
    onState: (s) => showPlaying(s),
  });
  function showPlaying(s) {
    if (s !== active()) return;
    setText(byId('play'), s.playing ? '❚❚ Pause' : '▶ Train');
    byId('play').setAttribute('aria-pressed', String(s.playing));
    byId('step').disabled = s.playing;
  }
  const tf = createTransformerFamily({
    client, state, writeHash, onError: showError,
    hooks: {
      onProgress: (s) => {
        progress.update(s);
        showStatus();
        tf.show();
      },
      onError: (err) => {
        showError(err, { doing: 'train' });
        progress.update(tf.session);
        showStatus();
      },
      onState: (s) => showPlaying(s),
    },
  });
  const tfModels = createTransformerModels({
    tf, state, client, controls, notice, writeHash, onError: showError, backTo,
    lab: {
      keep: (settings) => keepCurrent(settings),
      async pauseOther() {
        session.pause();
        await session.busy;
      },
      clearViews: () => clearViews(),
      shown() {
        progress.update(tf.session);
        showStatus();
      },
      manifest: () => manifest,
      isTf,
    },
  });
  const bottleneck = createBottleneckView({
    onError: (err) => showError(err, { doing: 'experiment' }),
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
    onError: (err) => showError(err, { doing: 'experiment' }),
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
      const live = timeline.live;
      const step = live ? session.steps : session.snapshots[timeline.index].step;
      const t = live
        ? await session.translate(state.text, state.beam)
        : await session.translateAt(timeline.index, state.text, state.beam);
      if (ticket === request) alignment.show(t, session.info.config.attention, { step, live });
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
    progress.label(isTf() ? 'transformer' : isImageTask(state.task) ? state.task : 'text');
    alignment.clear();
    bottleneck.clear();
    images.clear();
    modes.clear();
    modes.label(state.task);
  }

  /**
   * The model in hand of the family `settings` name (a transformer or the other
   * session's), its run and its settings, to come back to (null: nothing trained to keep).
   */
  async function keepCurrent(settings = state) {
    const tfModel = settings.task === 'transformer';
    const s = tfModel ? tf.session : session;
    s.pause();
    await s.busy;
    if (!s.model || s.steps === 0) return null;
    return {
      state: { ...settings }, run: s.run(), bytes: await s.save(), origin: tfModel ? tfModels.origin : origin,
      label: `${modelName(settings)}, ${s.steps.toLocaleString('en')} steps`,
    };
  }

  /** Shows the model the session now holds (after create, load or restore). */
  async function showNewModel() {
    progress.update(session);
    showStatus();
    if (session.kind === 'vision') {
      await images.setModel(session.info.config, state.image);
      return;
    }
    byId('text').maxLength = session.info.config.maxInput;
    if (state.text) await showInput();
    else await pickExample(1);
  }

  /**
   * A new model from the settings (or the task's pretrained model, when `given`
   * fields pick one): every curve, number and readout starts again, and the
   * trained model there was is kept to go back to. When an image model cannot
   * be made (the digits did not load: ERR_DATA) the model there was stays, with
   * its settings (`rollback`) and curves, and the error says why.
   */
  async function makeModel({ rollback = null, given = null } = {}) {
    showError(null);
    if (isTf()) return tfModels.make(rollback, given);
    // the model there was is kept, a transformer as well (coming from one, this family's was kept when it was left)
    const kept = await keepCurrent(rollback ?? state);
    await tf.drop();
    const vision = isImageTask(state.task);
    let pick = given ? pretrainedFor(given) : null;
    let bytes = null;
    if (pick) bytes = await fetchPretrained(pick.spec).catch(() => null);
    if (!bytes) pick = null;
    try {
      if (!vision) clearViews();
      if (pick) {
        await session.load(bytes);
        // another family was chosen while the file loaded: its choice stands
        if (isTf()) return false;
        Object.assign(state, pick.settings);
        controls.fill(state);
        writeHash();
      } else if (vision) {
        await session.create(visionOptions(state), 'vision');
      } else {
        const pairs = state.task === 'pairs' ? byId('pairs').value : undefined;
        await session.create(modelOptions(state, state.attention, pairs));
      }
      if (vision) clearViews();
      origin = pick ? { pretrained: pick } : {};
      if (kept) backTo.previous = kept;
      await showNewModel();
      return true;
    } catch (err) {
      if (vision && err.code === 'ERR_DATA') {
        const has = rollback && session.model;
        const learner = `The handwritten digits could not be downloaded, so there is no image model yet.${has ? ' The model you had is kept; pick the task again to retry.' : ' Press Train from scratch to try again.'}`;
        showError({ learner, detail: `${err.code}: ${err.message}` });
        if (has) {
          Object.assign(state, rollback);
          controls.fill(state);
          byId('text').value = state.text;
          writeHash();
        } else clearViews();
      } else if (rollback && session.model) {
        // the settings go back to the model there was, which is shown again
        Object.assign(state, rollback);
        controls.fill(state);
        byId('text').value = state.text;
        writeHash();
        await showNewModel();
        showError(err, { doing: 'create', kept: true });
      } else showError(err, { doing: 'create' });
      showStatus();
      return false;
    }
  }

  /**
   * Model changes one after another: a task picked while the last one's model
   * is still loading waits for it, so that the earlier change cannot drop or
   * replace the model the later one made.
   */
  let changing = Promise.resolve();
  function serial(change) {
    const done = changing.then(change, change);
    changing = done.catch(() => {});
    return done;
  }
  const newModel = (options) => serial(() => makeModel(options));
  /** Resolves once no model change is under way or queued (a control's change queues its own after the session pauses). */
  async function settled() {
    for (let seen = null; seen !== changing;) {
      seen = changing;
      await seen;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /** Back to the model kept from before; the one in hand is kept in its place. */
  const goBack = () => serial(backToKept);
  async function backToKept() {
    if (!backTo.previous) return;
    const target = backTo.previous;
    const kept = await keepCurrent();
    showError(null);
    Object.assign(state, target.state);
    controls.fill(state);
    tf.fill();
    byId('text').value = state.text;
    writeHash();
    clearViews();
    backTo.previous = kept;
    if (isTf()) {
      await tfModels.restore(target);
      return;
    }
    await tf.drop();
    await session.restore(target.run, target.bytes);
    origin = target.origin;
    await showNewModel();
  }

  async function onControl(id) {
    const changed = controls.read(id);
    if (!changed) return;
    const { name, value } = changed;
    const before = { ...state };
    state[name] = value;
    if (state.maxLength < state.minLength) state.maxLength = state.minLength;
    if (name === 'task' || name === 'alphabet') state.text = '';
    if (state.task === 'pairs' && !byId('pairs').value) byId('pairs').value = PAIRS_EXAMPLE;
    if (name === 'tfTask') state.tfInput = '';
    writeHash();
    controls.fill(state);
    tf.fill();
    byId('text').value = state.text;
    const remake = isTf() ? name === 'task' || TF_MODEL_KEYS.includes(name) : MODEL_KEYS.includes(name);
    if (remake) {
      const was = before.task === 'transformer' ? tf.session : session;
      const wasPlaying = was.playing;
      was.pause();
      await was.busy;
      const given = TASK_FIELDS.has(name) ? TASK_FIELDS : new Set(isTf() ? TF_MODEL_KEYS : MODEL_KEYS);
      if ((await newModel({ rollback: before, given })) && wasPlaying) active().play(runOptions());
    } else if (name === 'beam') {
      showInput();
    } else if (name === 'speed') {
      session.stepsPerUpdate = state.speed;
      tf.session.stepsPerUpdate = state.speed;
    } else if (active().playing) {
      active().trainOptions = runOptions();
    }
  }

  for (const id of controls.ids) byId(id).addEventListener('change', () => onControl(id));
  byId('pairs').addEventListener('change', () => newModel());
  byId('tfText').addEventListener('change', () => newModel());
  byId('back').addEventListener('click', () => goBack().catch((err) => showError(err, { doing: 'load' })));
  byId('pretrained').addEventListener('click', () => {
    state.start = 'pretrained';
    newModel({ given: isTf() ? ANY_SIZE : TASK_FIELDS });
  });
  byId('text').addEventListener('input', () => {
    state.text = byId('text').value.slice(0, 64);
    writeHash();
    showInput();
  });
  byId('play').addEventListener('click', () => {
    const s = active();
    if (s.playing) s.pause();
    else {
      showError(null);
      s.play(runOptions());
    }
  });
  byId('step').addEventListener('click', () => {
    showError(null);
    active().step(runOptions());
  });
  byId('reset').addEventListener('click', async () => {
    const s = active();
    const wasPlaying = s.playing;
    s.pause();
    await s.busy;
    state.start = 'scratch';
    writeHash();
    if ((await newModel()) && wasPlaying) active().play(runOptions());
  });
  const showImage = (seed) => {
    state.image = seed;
    writeHash();
    images.show(seed);
  };
  byId('image-example').addEventListener('click', () => showImage(1));
  byId('image-random').addEventListener('click', () => showImage(1 + Math.floor(Math.random() * (2 ** 31 - 2))));
  byId('example').addEventListener('click', () => pickExample(1).catch((err) => showError(err, { doing: 'read' })));
  byId('random').addEventListener('click', () => pickExample(1 + Math.floor(Math.random() * 1e9)).catch((err) => showError(err, { doing: 'read' })));
  document.addEventListener('keydown', (e) => {
    const typing = ['INPUT', 'TEXTAREA', 'SELECT', 'BUTTON', 'CANVAS', 'SVG'].includes(document.activeElement?.tagName?.toUpperCase());
    if (e.key === ' ' && !typing && !e.repeat) {
      e.preventDefault();
      byId('play').click();
    }
  });

  byId('save').addEventListener('click', () => saveModel(active(), state).catch((err) => showError(err, { doing: 'save' })));
  byId('load').addEventListener('change', (e) => {
    const file = e.target.files?.[0];
    e.target.value = '';
    if (file) serial(() => loadFile(file));
  });
  async function loadFile(file) {
    showError(null);
    try {
      const bytes = await readModelFile(file);
      const kept = await keepCurrent();
      const made = await client.call('load', { bytes });
      // a transformer file opens the Transformer family with its settings
      if (made.kind === 'transformer') return tfModels.adoptFile(made, bytes, file.name, kept);
      await client.call('destroy', { model: made.model });
      if (isTf()) await tf.drop();
      const loaded = await session.load(bytes);
      Object.assign(state, settingsOf(loaded.config), { start: 'scratch' });
      controls.fill(state);
      writeHash();
      clearViews();
      origin = { file: file.name };
      if (kept) backTo.previous = kept;
      await showNewModel();
      notice.show(`Loaded ${file.name}: ${modelName(state)}, ${loaded.steps} steps trained.`);
    } catch (err) {
      showError(err, { doing: 'load', file: file.name });
    }
  }

  controls.fill(state);
  tf.fill();
  if (state.task === 'pairs') byId('pairs').value = PAIRS_EXAMPLE;
  byId('text').value = state.text;
  session.stepsPerUpdate = state.speed;
  tf.session.stepsPerUpdate = state.speed;
  writeHash();
  Promise.all([client.call('init', {}), loadManifest()]).then(async ([engine, models]) => {
    header.engine(engine, 'training in a worker');
    manifest = models;
    // the transformer's tasks and positions are the engine's: a link's name it does not know is put back
    const reset = tf.setNames(engine.transformer);
    if (reset.length) notice.linkFields([...decoded.ignored, ...reset]);
    controls.fill(state);
    writeHash();
    await newModel({ given });
    // a link about an experiment (Learn's "train both yourself") opens at it
    const at = EXPERIMENTS.find((x) => x.fields.some((f) => given.has(f)) && !byId(x.id).hidden);
    if (at) {
      byId(at.id).scrollIntoView({ block: 'start' });
      byId(at.id).focus({ preventScroll: true });
    }
    document.body.dataset.ready = 'true';
  }).catch((err) => showError(err, { doing: 'start' }));

  // for the browser tests: the session and the state, to read; settled() waits for the model changes under way
  window.attnlabLab = { session, state, images, tf: tf.session, settled };
}

start();
