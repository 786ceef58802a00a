// The training lab: wiring only. Settings are the property table of state.js
// (mirrored in the URL by the shared codec, its bounds the engine's limits:
// limits.js); one session (session.js) trains the model in hand in the worker,
// whatever its family; each family (text, images, transformer) is an adapter
// (family-*.js, listed in families.js) and its views (text-view.js,
// images-view.js, transformer.js), beside the lab's own progress card, settings
// form and run bar (progress.js, controls.js, model-status.js). A task opens on
// its pretrained model when web/models has one (pretrained.js); a new model
// keeps the one before it, to go back to. Everything lives inside start(): no
// module state.
import { byId, setText } from '../ui/dom.js';
import { embedParams, stateLink } from '../ui/embed.js';
import { embedButton } from '../ui/embed-button.js';
import { mountHeader } from '../ui/header.js';
import { createNotice } from '../ui/notice.js';
import { createPrefetch } from '../ui/prefetch.js';
import { LabClient } from '../worker/lab-client.js';
import { createControls } from './controls.js';
import { FAMILIES, familyOf, familyOfKind, linkOf } from './families.js';
import { TASK_FIELDS } from './family.js';
import { createGpt2View } from './gpt2.js';
import { createImagesView } from './images-view.js';
import { adoptLimits } from './limits.js';
import { exportModel, readModelFile, saveModel } from './model-file.js';
import { createModelStatus } from './model-status.js';
import { fetchPretrained, linkFields, loadManifest } from './pretrained.js';
import { takeHandoff } from '../ui/handoff.js';
import { createProgressView } from './progress.js';
import { Session } from './session.js';
import { adoptFamily, embedFamily, startLabEmbed } from './embed.js';
import { shareLink } from './share.js';
import { codec } from './state.js';
import { createTextView } from './text-view.js';
import { createTransformerView } from './transformer.js';

/** Each family's views, by the family's name. */
const VIEWS = { text: createTextView, images: createImagesView, transformer: createTransformerView };
/** A link that sets an experiment's fields opens at that experiment. */
const EXPERIMENTS = [{ id: 'bottleneck', fields: ['compare', 'compareSteps'] }, { id: 'modes', fields: ['modeSteps'] }];

const embedded = embedParams();

function start() {
  if (embedded) adoptFamily(embedded);
  // the link's settings: read again, against the engine's limits, once the engine has loaded
  const state = codec.decode(location.hash).state;
  const given = linkFields(location.hash); // the fields the link sets, before the page rewrites it
  const header = mountHeader({ current: 'lab', skipTo: 'main', tagline: 'training lab' });
  const notice = createNotice(byId('notice'));
  const widget = embedded ? startLabEmbed(embedded) : null;
  let sent = null; // the link embed mode last sent (attnlab:state), once the widget is ready
  // the settings into the #hash; embedded, the state link (the hash and a hub model the query chose) to the host when it changed
  const writeHash = () => {
    history.replaceState(null, '', linkOf(state));
    if (sent !== null && stateLink() !== sent) {
      sent = stateLink();
      widget.state(sent);
    }
  };

  const status = createModelStatus();
  const showError = (err, context) => status.error(err, context);
  let manifest = null; // the pretrained models (web/models/models.json)
  let origin = {}; // where the model in hand came from: { pretrained } | { file } | {} (made here)
  let previous = null; // the model before the last new one: { state, run, bytes, origin, label }

  const controls = createControls();
  const progress = createProgressView();
  const client = new LabClient(new Worker(new URL('../worker/lab-worker.js', import.meta.url), { type: 'module' }));
  // the worker loads its engine, and the manifest comes, while this thread builds the page
  const engineInit = client.call('init', {});
  engineInit.catch(() => {}); // a failure shows below, once the page is built
  const manifestLoad = loadManifest();
  const session = new Session(client, {
    onProgress: () => showProgress(),
    onError: (err) => {
      showError(err, { doing: 'train' });
      showProgress();
    },
    onState: () => showPlaying(),
  });
  const page = { session, state, client, writeHash, onError: showError, onHeld: () => showPlaying() };
  const views = new Map(FAMILIES.map((f) => [f, VIEWS[f.name](page)]));
  // a GPT-2-family checkpoint opened beside the Transformer family's trained model, in the same worker
  const gpt2 = createGpt2View(page);
  const viewOf = (family) => views.get(family);
  const runOptions = () => session.family.trainOptions(state);
  /** The step the run stops at by itself: the end of the family's run length the model is in (null: it trains until paused). */
  function runEnd() {
    const length = session.family?.runLength(state);
    return length ? (Math.floor(session.steps / length) + 1) * length : null;
  }
  /** Trains on to the run's end (▶ Train, or Continue past one). */
  const play = () => session.play(runOptions(), runEnd());

  function showStatus() {
    const family = session.family ?? familyOf(state);
    const can = family.pretrained(manifest, { ...state, start: 'pretrained' }, family.buttonFields);
    status.update(session, state, family, origin, Boolean(can));
    status.previous(previous);
    showPlaying();
  }
  function showPlaying() {
    // a model that trained a whole run continues: another run's length of steps
    const length = session.family?.runLength(state);
    const more = Boolean(length) && session.steps >= length;
    setText(byId('play'), session.playing ? '❚❚ Pause' : more ? '▶ Continue' : '▶ Train');
    byId('play').title = session.playing ? 'Pause training (space)'
      : more ? `Train ${length.toLocaleString('en')} steps more (space)` : `Start training${length ? ` (it stops at step ${length.toLocaleString('en')})` : ''} (space)`;
    status.run(session, length);
    byId('play').setAttribute('aria-pressed', String(session.playing));
    // a view whose settings make no model (its control says why) holds the run until they do
    const held = Boolean(viewOf(familyOf(state)).held?.()) && !session.playing;
    byId('play').disabled = held;
    byId('step').disabled = session.playing || held;
  }
  /** After a chunk (or a failed one): the curves, the run bar and the family's readings of the model as it is now. */
  function showProgress() {
    progress.update(session);
    showStatus();
    viewOf(session.family).show();
  }
  /** The form and every family's own fields from the state. */
  function fill() {
    // a value a field refused that these settings take (Heads 3 once dModel is 48) is used now, as if typed again
    for (const id of controls.fill(state, familyOf(state).name)) setTimeout(() => onControl(id));
    for (const view of views.values()) view.fill();
    gpt2.fill();
  }
  /** Empties every curve, number and readout of the last model. */
  function clearViews() {
    progress.clear();
    progress.label(familyOf(state).progressLabel(state));
    for (const view of views.values()) view.clear();
  }
  /** Shows the model the session now holds (after create, load or restore); its views may evaluate it, so the status follows. */
  async function showNewModel() {
    progress.update(session);
    showStatus();
    await viewOf(session.family).open();
    showStatus();
  }

  /** The model in hand, its run and its settings (`settings`), to come back to (null: nothing trained to keep). */
  async function keepCurrent(settings = state) {
    await session.stop();
    if (!session.model || session.steps === 0) return null;
    return {
      state: { ...settings }, run: session.run(), bytes: await session.save(), origin,
      label: `${session.family.modelName(settings)}, ${session.steps.toLocaleString('en')} steps`,
    };
  }

  /**
   * A new model from the settings (or the family's pretrained model, when
   * `given` fields pick one): every curve, number and readout starts again, and
   * the trained model there was is kept to go back to. When it cannot be made,
   * the model there was stays in hand, with its settings (`rollback`) and views,
   * and the error says why; a link's model that cannot be made falls back to the
   * family's default one, where it has one.
   */
  async function makeModel({ rollback = null, given = null, repaired = null } = {}) {
    showError(null);
    const family = familyOf(state);
    const view = viewOf(family);
    const kept = await keepCurrent(rollback ?? state);
    let pick = given ? family.pretrained(manifest, state, family.pickFields(given, state)) : null;
    const bytes = pick ? await pretrainedFiles.take(pick.spec.file).catch(() => null) : null;
    if (!bytes) pick = null;
    try {
      if (pick) {
        await session.load(family, bytes);
        if (pick.spec.history) session.adoptHistory(pick.spec.history);
      } else await session.create(family, family.create(state, view.inputs()));
      origin = pick ? { pretrained: pick } : {};
      // another family was chosen while the model was made: its choice stands (its change is queued)
      if (familyOf(state) !== family) return false;
      if (pick) Object.assign(state, pick.settings);
      fill();
      if (repaired) controls.say(repaired.name, repaired.say);
      writeHash();
      clearViews();
      if (kept) previous = kept;
      await showNewModel();
      return true;
    } catch (err) {
      // a setting the family can put right (a context too short for the task): the choice stays, and the field says what changed
      const fix = repaired ? null : family.repair(state, err);
      if (fix) {
        state[fix.name] = fix.value;
        return makeModel({ rollback, given, repaired: fix });
      }
      const back = Boolean(rollback && session.model);
      if (err.code === 'ERR_DATA') {
        const then = back ? ' The model you had is kept; pick the task again to retry.' : ' Press Train from scratch to try again.';
        showError({ learner: family.noData + then, detail: `${err.code}: ${err.message}` });
      } else showError(err, { doing: 'create', kept: back });
      const fallback = back ? rollback : family.fallback(state);
      if (!back && fallback && !rollback) notice.show(`The link's ${family.noun} could not be made (${err.message}), so the default one is shown.`, 'error');
      if (fallback) {
        // the settings go back to the model there was (still in hand), or to the family's default
        Object.assign(state, fallback);
        fill();
        writeHash();
      }
      if (!back) clearViews();
      if (!back && fallback) {
        await session.create(family, family.create(state, view.inputs())).then(showNewModel, () => {});
        origin = {};
      }
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
  async function backToKept() {
    if (!previous) return;
    const target = previous;
    const kept = await keepCurrent();
    showError(null);
    Object.assign(state, target.state);
    fill();
    writeHash();
    clearViews();
    previous = kept;
    await session.restore(familyOf(state), target.run, target.bytes);
    origin = target.origin;
    await showNewModel();
  }

  async function onControl(id) {
    const changed = controls.read(id, state);
    // a value the field refused, typed back to the model's own, changes nothing: only a real change makes a new model
    if (!changed || Object.is(state[changed.name], changed.value)) return;
    // the error box says what went wrong with the settings as they were: a change of them ends what it says
    showError(null);
    const { name, value } = changed;
    const before = { ...state };
    state[name] = value;
    for (const f of FAMILIES) f.settle(state, name);
    writeHash();
    fill();
    const family = familyOf(state);
    if (name === 'task' || family.modelKeys.includes(name)) {
      const wasPlaying = session.playing;
      await session.stop();
      const fields = TASK_FIELDS.has(name) ? TASK_FIELDS : new Set(family.modelKeys);
      if ((await newModel({ rollback: before, given: fields })) && wasPlaying) play();
    } else if (family.viewKeys.includes(name)) {
      viewOf(family).show();
    } else if (name === 'speed') {
      session.stepsPerUpdate = state.speed;
    } else if (session.playing) {
      session.trainOptions = runOptions();
    }
  }

  for (const id of controls.ids) byId(id).addEventListener('change', () => onControl(id));
  for (const view of views.values()) for (const id of view.remakeOn) byId(id).addEventListener('change', () => view.refuses?.(id) || newModel());
  byId('back').addEventListener('click', () => serial(backToKept).catch((err) => showError(err, { doing: 'load' })));
  byId('pretrained').addEventListener('click', () => {
    state.start = 'pretrained';
    newModel({ given: familyOf(state).buttonFields });
  });
  byId('play').addEventListener('click', () => {
    if (session.playing) session.pause();
    else {
      showError(null);
      play();
    }
  });
  byId('step').addEventListener('click', () => {
    showError(null);
    session.step(runOptions());
  });
  // a new model from the settings, and it trains (the button says so)
  byId('reset').addEventListener('click', async () => {
    await session.stop();
    state.start = 'scratch';
    writeHash();
    // (unless the settings make no model that can train: Train is held, and says why)
    if ((await newModel()) && !byId('play').disabled) play();
  });
  document.addEventListener('keydown', (e) => {
    const typing = ['INPUT', 'TEXTAREA', 'SELECT', 'BUTTON', 'CANVAS', 'SVG'].includes(document.activeElement?.tagName?.toUpperCase());
    // not while a checkpoint's panels hold the run bar (gpt2.js): Train is not theirs
    if (e.key === ' ' && !typing && !e.repeat && byId('play').getClientRects().length > 0) {
      e.preventDefault();
      byId('play').click();
    }
  });

  // the run bar's event links to where it shows (the link's hash is the page's state: it scrolls, and focus follows)
  byId('run-event').addEventListener('click', (e) => {
    const target = e.target.closest('a') && document.querySelector(e.target.closest('a').getAttribute('href'));
    if (!target) return;
    e.preventDefault();
    target.scrollIntoView({ block: 'start' });
    target.focus({ preventScroll: true });
  });
  // focus and links never land under the sticky run bar: the page keeps its height free when scrolling to them (lab.css)
  const runbarHeight = () => document.documentElement.style.setProperty('--runbar-h', `${Math.ceil(byId('runbar').getBoundingClientRect().height)}px`);
  new ResizeObserver(runbarHeight).observe(byId('runbar'));
  byId('share').addEventListener('click', () => shareLink(location.href, notice));
  byId('share').after(embedButton({ widget: () => `lab/${embedFamily(state)}`, measure: () => byId('main'), label: 'Embed this training panel in another page', title: 'attnlab lab' }));
  byId('save').addEventListener('click', () => saveModel(session, session.family.fileName(state, session.steps)).catch((err) => showError(err, { doing: 'save' })));
  byId('export').addEventListener('click', () => exportModel(session).catch((err) => showError(err, { doing: 'export' })));
  byId('load').addEventListener('change', (e) => {
    const file = e.target.files?.[0];
    e.target.value = '';
    if (file) serial(() => loadFile(file));
  });
  /** A model file opens its family, with its settings. */
  async function loadFile(file) {
    showError(null);
    try {
      await loadBytes(await readModelFile(file), file.name);
    } catch (err) {
      showError(err, { doing: 'load', file: file.name });
    }
  }
  /** A saved model's bytes (a file's, or a model handed by Learn with its recorded run) open its family, with its settings. */
  async function loadBytes(bytes, name, history = null) {
    const kept = await keepCurrent();
    const made = await client.call('load', { bytes });
    const family = familyOfKind(made.kind);
    const { settings, note } = family.loaded(made, bytes, name);
    await session.adopt(family, made, true);
    Object.assign(state, settings);
    fill();
    writeHash();
    clearViews();
    origin = { file: name };
    if (kept) previous = kept;
    if (history) session.adoptHistory(history);
    await showNewModel();
    viewOf(family).note(note);
    notice.show(`Loaded ${name}: ${family.modelName(state)}, ${made.steps} steps trained.`);
  }

  /** The model Learn handed over (start=learn): opened with its run, or the default model with a note saying why not. */
  async function openHandoff(given) {
    const handed = takeHandoff(window.localStorage);
    state.start = 'pretrained';
    const why = handed === null ? 'there is none: open it from its Learn chapter' : handed.error;
    if (!why) {
      try {
        await loadBytes(handed.bytes, handed.label, handed.history);
        writeHash();
        return;
      } catch (err) {
        return notFromLearn(err.message, given);
      }
    }
    return notFromLearn(why, given);
  }
  async function notFromLearn(why, given) {
    await newModel({ given });
    notice.show(`The model from Learn could not be opened (${why}), so the lab's own model is shown.`, 'error');
  }

  // The pretrained file the link most likely opens (its family's, by the link as first read),
  // fetched while the worker loads its engine; the first model made takes it (a guess that
  // turns out wrong costs one fetch, and the file is fetched again when it is wanted).
  const pretrainedFiles = createPrefetch((file) => fetchPretrained({ file }));
  manifestLoad.then((models) => {
    const family = familyOf(state);
    const pick = models && family.pretrained(models, state, family.pickFields(given, state));
    if (pick) pretrainedFiles.start(pick.spec.file);
  }).catch(() => {});

  fill();
  session.stepsPerUpdate = state.speed;
  Promise.all([engineInit, manifestLoad]).then(async ([engine, models]) => {
    header.engine(engine, 'training in a worker');
    widget?.threads(engine, 'Training (in a worker)');
    manifest = models;
    // the link is read once its bounds, the engine's limits, are known
    adoptLimits(engine.limits);
    const decoded = codec.decode(location.hash);
    Object.assign(state, decoded.state);
    // a family's names from the engine (the transformer's tasks and positions): a link's name it does not know is put back
    const reset = [...views.values()].flatMap((view) => view.start(engine));
    notice.linkFields([...decoded.ignored, ...reset]);
    session.stepsPerUpdate = state.speed;
    fill();
    writeHash();
    if (state.start === 'learn') await openHandoff(given);
    else await newModel({ given });
    gpt2.arrive().catch((err) => showError(err, { doing: 'load' })); // "Look inside a real model" (?model=open) lands on its card, and opens the files Learn kept
    // a link about an experiment (Learn's "train both yourself") opens at it
    const at = EXPERIMENTS.find((x) => x.fields.some((f) => given.has(f)) && !byId(x.id).hidden);
    if (at) {
      byId(at.id).scrollIntoView({ block: 'start' });
      byId(at.id).focus({ preventScroll: true });
    }
    document.body.dataset.ready = 'true';
    if (widget) {
      sent = stateLink();
      widget.ready();
    }
  }).catch((err) => showError(err, { doing: 'start' }));

  // for the browser tests: the session and the state, to read; settled() waits for the model changes under way
  window.attnlabLab = { session, state, settled, gpt2 };
}

start();
