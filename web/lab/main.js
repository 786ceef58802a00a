// The training lab: wiring only. Settings live in state.js (and the URL),
// training in the worker through session.js, drawing in charts.js and
// alignment.js.
import { LabClient } from '../worker/lab-client.js';
import { antiDiagonal, drawAlignment, drawLegendBar } from './alignment.js';
import { drawChart, drawLegend } from './charts.js';
import { runComparison, TrainingSession } from './session.js';
import { CHOICES, modelOptions, parse, PROPERTIES, serialize } from './state.js';

const $ = (id) => document.getElementById(id);
const MODEL_KEYS = ['task', 'alphabet', 'minLength', 'maxLength', 'cell', 'bidirectional', 'layers', 'embed', 'hidden', 'attention', 'seed'];
const PAIRS_EXAMPLE = ['hello\tolleh', 'attention\tnoitnetta', 'world\tdlrow', 'seq\tqes', 'model\tledom',
  'encoder\tredocne', 'decoder\tredoced', 'align\tngila', 'query\tyreuq', 'value\teulav', 'key\tyek', 'weight\tthgiew'].join('\n');

const parsed = parse(location.hash);
const state = parsed.state;
let liveTranslation = null;

function notice(text) {
  const box = $('notice');
  box.textContent = text;
  box.hidden = !text;
}
if (parsed.ignored.length) {
  notice(`Some settings in the link were not valid and were reset to defaults: ${parsed.ignored.join(', ')}.`);
}

function showError(err) {
  const box = $('error');
  box.textContent = err ? `${err.message}` : '';
  box.hidden = !err;
}

// ---- controls <-> state ---------------------------------------------------------

function fillControls() {
  for (const name of Object.keys(PROPERTIES)) {
    const input = $(name);
    if (!input) continue;
    if (input.type === 'checkbox') input.checked = state[name];
    else input.value = String(state[name]);
  }
  $('seq-options').hidden = !['reverse', 'sort', 'copy'].includes(state.task);
  $('pairs-box').hidden = state.task !== 'pairs';
  $('beam').disabled = state.decode !== 'beam';
}

function readControl(name) {
  const input = $(name);
  const p = PROPERTIES[name];
  if (p.kind === 'bool') return input.checked;
  if (p.kind === 'choice') return CHOICES[name].includes(input.value) ? input.value : undefined;
  if (p.kind === 'string') return input.value.slice(0, p.maxLength);
  const x = Number(input.value);
  if (input.value === '' || !Number.isFinite(x) || x < p.min || x > p.max || (p.kind === 'int' && !Number.isInteger(x))) return undefined;
  return x;
}

function writeHash() {
  history.replaceState(null, '', serialize(state) || location.pathname + location.search);
}

// ---- the session ---------------------------------------------------------------------

const client = new LabClient(new Worker(new URL('../worker/lab-worker.js', import.meta.url), { type: 'module' }));
const session = new TrainingSession(client, {
  onProgress: () => progress(),
  onError: (err) => showError(err),
  onState: () => {
    $('play').textContent = session.playing ? '❚❚ Pause' : '▶ Train';
    $('play').setAttribute('aria-pressed', String(session.playing));
    $('step').disabled = session.playing;
  },
});

const trainOptions = () => ({ batch: state.batch, lr: state.lr });
const beam = () => (state.decode === 'beam' ? state.beam : 1);

async function newModel() {
  showError(null);
  try {
    const pairs = state.task === 'pairs' ? $('pairs').value : undefined;
    const created = await session.create(modelOptions(state, state.attention, pairs));
    $('text').maxLength = created.config.maxInput;
    if (!state.text || !(await translateNow(false))) await pickExample(1);
    progress();
    return true;
  } catch (err) {
    showError(err);
    return false;
  }
}

async function translateNow(record) {
  if (!session.model || !state.text) return false;
  try {
    liveTranslation = await session.translate(state.text, beam(), record);
    $('text').removeAttribute('aria-invalid');
    if ($('timeline').value >= $('timeline').max) drawTranslation(liveTranslation);
    return true;
  } catch (err) {
    $('text').setAttribute('aria-invalid', 'true');
    $('align-readout').textContent = err.message;
    return false;
  }
}

function drawTranslation(t) {
  $('output').textContent = t.output || '(empty)';
  drawAlignment({ canvas: $('align'), rows: $('align-rows'), cols: $('align-cols'), readout: $('align-readout') }, t);
  $('align').dataset.antiDiagonal = antiDiagonal(t).toFixed(3);
}

async function pickExample(seed) {
  const [ex] = await session.examples(1, seed);
  state.text = ex.input;
  $('text').value = ex.input;
  writeHash();
  await translateNow(false);
}

const fmtTime = (s) => (s < 60 ? `${s.toFixed(1)} s` : `${Math.floor(s / 60)} min ${Math.round(s % 60)} s`);

function progress() {
  $('stat-step').textContent = String(session.steps);
  const last = session.losses[session.losses.length - 1];
  $('stat-loss').textContent = last ? last.value.toFixed(4) : '–';
  const acc = session.accuracy[session.accuracy.length - 1];
  $('stat-acc').textContent = acc ? `${(acc.value * 100).toFixed(1)}%` : '–';
  $('stat-speed').textContent = session.examplesPerSecond ? Math.round(session.examplesPerSecond).toLocaleString('en') : '–';
  $('stat-time').textContent = fmtTime(session.trainSeconds);
  drawChart($('loss-chart'), [{ name: 'loss', color: '#d9534f', points: session.losses }],
    { xLabel: 'step', yLabel: 'loss', yMin: 0, readout: $('loss-readout') });
  drawChart($('acc-chart'), [{ name: 'accuracy', color: '#2a7ab0', points: session.accuracy }],
    { xLabel: 'step', yLabel: 'accuracy', yMin: 0, yMax: 1, readout: $('acc-readout') });
  if (session.steps > 0) {
    translateNow(true).then(() => {
      const tl = $('timeline');
      const live = Number(tl.value) >= Number(tl.max);
      tl.max = String(Math.max(0, session.snapshots.length - 1));
      if (live) tl.value = tl.max;
      showTimeline();
    });
  }
}

function showTimeline() {
  const tl = $('timeline');
  const i = Number(tl.value);
  const snap = session.snapshots[i];
  const live = i >= Number(tl.max);
  $('timeline-label').textContent = snap ? `step ${snap.step}${live ? ' (live)' : ''}` : 'live';
  if (snap && !live) drawTranslation(snap.translation);
  else if (liveTranslation) drawTranslation(liveTranslation);
}

// ---- events ----------------------------------------------------------------------------

async function onSetting(name) {
  const value = readControl(name);
  if (value === undefined) {
    $(name).setAttribute('aria-invalid', 'true');
    return;
  }
  $(name).removeAttribute('aria-invalid');
  state[name] = value;
  if (state.maxLength < state.minLength) state.maxLength = state.minLength;
  writeHash();
  fillControls();
  if (MODEL_KEYS.includes(name)) {
    const wasPlaying = session.playing;
    if (name === 'task') state.text = '';
    if (state.task === 'pairs' && !$('pairs').value) $('pairs').value = PAIRS_EXAMPLE;
    if ((await newModel()) && wasPlaying) session.play(trainOptions());
  } else if (name === 'decode' || name === 'beam') {
    translateNow(false);
  } else if (session.playing) {
    session.trainOptions = trainOptions();
  }
}

for (const name of Object.keys(PROPERTIES)) {
  if (name === 'text' || name === 'compare' || !$(name)) continue;
  $(name).addEventListener('change', () => onSetting(name));
}
$('compare').addEventListener('change', () => onSetting('compare'));
$('pairs').addEventListener('change', () => newModel());
$('text').addEventListener('input', () => {
  state.text = $('text').value.slice(0, 64);
  writeHash();
  translateNow(false);
});
$('play').addEventListener('click', () => (session.playing ? session.pause() : session.play(trainOptions())));
$('step').addEventListener('click', () => session.step(trainOptions()).catch(showError));
$('reset').addEventListener('click', async () => {
  const wasPlaying = session.playing;
  if ((await newModel()) && wasPlaying) session.play(trainOptions());
});
$('example').addEventListener('click', () => pickExample(1).catch(showError));
$('random').addEventListener('click', () => pickExample(1 + Math.floor(Math.random() * 1e9)).catch(showError));
$('timeline').addEventListener('input', showTimeline);
document.addEventListener('keydown', (e) => {
  if (e.key === ' ' && !['INPUT', 'TEXTAREA', 'SELECT', 'BUTTON'].includes(document.activeElement?.tagName)) {
    e.preventDefault();
    $('play').click();
  }
});

$('save').addEventListener('click', async () => {
  try {
    const bytes = await session.save();
    const url = URL.createObjectURL(new Blob([bytes], { type: 'application/octet-stream' }));
    const a = document.createElement('a');
    a.href = url;
    a.download = `attnlab-${state.task}-${state.attention}-step${session.steps}.attnlab`;
    document.body.appendChild(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  } catch (err) {
    showError(err);
  }
});

$('load').addEventListener('change', async (e) => {
  const file = e.target.files?.[0];
  e.target.value = '';
  if (!file) return;
  showError(null);
  try {
    if (file.size > 64 << 20) throw new Error(`${file.name}: ${file.size} bytes is too large for a model file`);
    const loaded = await session.load(new Uint8Array(await file.arrayBuffer()));
    const c = loaded.config;
    for (const k of ['task', 'cell', 'layers', 'bidirectional', 'embed', 'hidden', 'attention']) {
      if (c[k] !== undefined && (PROPERTIES[k].kind !== 'choice' || CHOICES[k].includes(c[k]))) state[k] = c[k];
    }
    if (['reverse', 'sort', 'copy'].includes(c.task)) Object.assign(state, { alphabet: c.alphabet, minLength: c.minLength, maxLength: c.maxLength });
    state.seed = Math.min(c.seed, PROPERTIES.seed.max);
    fillControls();
    writeHash();
    $('text').maxLength = c.maxInput;
    if (!(await translateNow(false))) await pickExample(1);
    progress();
    notice(`Loaded ${file.name}: ${c.task}, ${c.cell}, attention ${c.attention}, ${loaded.steps} steps trained.`);
  } catch (err) {
    showError(new Error(`${file.name}: ${err.message}`));
  }
});

let comparing = false;
$('run-compare').addEventListener('click', async () => {
  if (comparing) {
    comparing = false;
    return;
  }
  const steps = Number($('compare-steps').value);
  if (!Number.isInteger(steps) || steps < 25 || steps > 5000) {
    showError(new Error('Steps: a whole number from 25 to 5000'));
    return;
  }
  comparing = true;
  session.pause();
  $('run-compare').textContent = 'Stop';
  const bar = $('compare-progress');
  bar.hidden = false;
  bar.value = 0;
  const pairs = state.task === 'pairs' ? $('pairs').value : undefined;
  const names = [state.attention, state.compare === state.attention ? 'none' : state.compare];
  const colors = ['#2a7ab0', '#d9534f'];
  try {
    const r = await runComparison(client, modelOptions(state, names[0], pairs), modelOptions(state, names[1], pairs), {
      steps, batch: state.batch, lr: state.lr, shouldStop: () => !comparing,
      onProgress: ({ done }) => { bar.value = done / steps; },
    });
    const series = r.byLength.map((rows, k) => ({
      name: `attention: ${names[k]}`, color: colors[k],
      points: rows.map((x) => ({ step: x.length, value: x.sequenceAccuracy })),
    }));
    const xMin = Math.min(...series.flatMap((x) => x.points.map((p) => p.step)));
    drawChart($('compare-chart'), series, { xLabel: 'input length', yLabel: 'accuracy', xMin, yMin: 0, yMax: 1, readout: $('compare-readout') });
    drawLegend($('compare-legend'), series);
  } catch (err) {
    showError(err);
  } finally {
    comparing = false;
    bar.hidden = true;
    $('run-compare').textContent = 'Run';
  }
});

// ---- start --------------------------------------------------------------------------------

drawLegendBar($('legend'));
fillControls();
if (state.task === 'pairs') $('pairs').value = PAIRS_EXAMPLE;
$('text').value = state.text;
client.call('init', {}).then(async () => {
  await newModel();
  document.body.dataset.ready = 'true';
}).catch((err) => showError(new Error(`The engine did not start: ${err.message}`)));

// for the browser tests: the session's numbers, read-only
window.attnlabLab = { session, state };
