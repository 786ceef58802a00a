// The control bar and the option fields written in index.html (preset, Reset, mode,
// score, normalisation, temperature, mask and its length L, heads, positions, compare, lock
// scale, seeds, hidden size, β, trainable): each control maps to one state property.
// Reads the state to sync them; sends edits to the store. A preset is a whole state.
import { byId as $, h, setText } from '../ui/dom.js';
import { fixed } from '../ui/format.js';
import { POSITIONS, POSITION_LABELS } from '../ui/positions.js';
import { PRESETS } from './presets.js';
import { LIMITS, SCORES, SCORE_LABELS, SELF_SCORES, defaults, dims, enterMode, fromPreset, headChoices, PARAM_NAMES } from './state.js';

const option = (value, text) => h('option', { value, textContent: text });
const clampInt = (v, lo, hi) => (Number.isInteger(v) && v >= lo && v <= hi ? v : null);

export function bindOptions(store) {
  $('preset').replaceChildren(...Object.entries(PRESETS).map(([id, p]) => option(id, p.label)));
  $('score').replaceChildren(...SCORES.map((s) => option(s, SCORE_LABELS[s])));
  $('positions').replaceChildren(...POSITIONS.map((p) => option(p, POSITION_LABELS[p])));
  $('compare').replaceChildren(option('none', 'Off'), ...SCORES.map((s) => option(s, SCORE_LABELS[s])));

  const set = (fn, structural = false) => store.update(fn, { source: 'options', structural });
  const keepView = (next) => Object.assign(next, { lock: store.state.lock });
  $('preset').addEventListener('change', () => store.replace(keepView(fromPreset($('preset').value, store.state.dataSeed)), { source: 'preset' }));
  $('reset').addEventListener('click', () => store.replace(defaults(), { source: 'reset' }));
  // a new draw changes the data only: the options stay as they are
  const redraw = (seed) => {
    const s = store.state;
    const next = fromPreset(s.preset, seed);
    store.update((st) => { st.dataSeed = seed; st.tokens = next.tokens; st.x = next.x; }, { source: 'data', structural: true });
  };
  $('data-seed').addEventListener('change', () => {
    const seed = clampInt(Number($('data-seed').value), 0, LIMITS.seed);
    if (seed === null) { $('data-seed').value = store.state.dataSeed; return; }
    redraw(seed);
  });
  $('new-draw').addEventListener('click', () => redraw((store.state.dataSeed + 1) % LIMITS.seed));
  for (const radio of document.querySelectorAll('input[name="mode"]')) {
    radio.addEventListener('change', () => set((s) => enterMode(s, radio.value), true));
  }
  $('score').addEventListener('change', () => set((s) => { s.score = $('score').value; }));
  $('normalize').addEventListener('change', () => set((s) => { s.normalize = $('normalize').value; }));
  $('temperature').addEventListener('input', () => set((s) => { s.temperature = Number($('temperature').value); }));
  $('mask').addEventListener('change', () => set((s) => { s.mask = $('mask').value; }));
  $('pad-length').addEventListener('input', () => {
    const v = clampInt(Number($('pad-length').value), 0, store.state.tokens.length);
    if (v !== null) set((s) => { s.padLength = v; });
  });
  $('hidden').addEventListener('change', () => {
    const v = clampInt(Number($('hidden').value), 1, LIMITS.hidden);
    if (v === null) { $('hidden').value = store.state.hidden; return; }
    set((s) => { s.hidden = v; }, true);
  });
  $('beta').addEventListener('input', () => {
    const v = Number($('beta').value);
    if ($('beta').value !== '' && Number.isFinite(v) && Math.abs(v) <= 100) set((s) => { s.beta = v; });
  });
  const reseed = (seed) => store.update((s) => {
    s.paramSeed = seed;
    for (const name of PARAM_NAMES) delete s[name];
  }, { source: 'options', structural: true });
  $('param-seed').addEventListener('change', () => {
    const seed = clampInt(Number($('param-seed').value), 0, LIMITS.seed);
    if (seed === null) { $('param-seed').value = store.state.paramSeed; return; }
    reseed(seed);
  });
  $('reroll-params').addEventListener('click', () => reseed((store.state.paramSeed + 1) % LIMITS.seed));
  $('trainable').addEventListener('change', () => set((s) => { s.trainable = $('trainable').checked; }, true));
  $('heads').addEventListener('change', () => set((s) => { s.heads = Number($('heads').value); s.head = 0; }, true));
  $('compare').addEventListener('change', () => set((s) => { s.compare = $('compare').value; }));
  $('positions').addEventListener('change', () => set((s) => { s.positions = $('positions').value; }));
  $('lock').addEventListener('change', () => set((s) => { s.lock = $('lock').checked; }));

  let shown = '';
  return {
    update(s, extra = {}) {
      // an edit of the data changes none of these controls: writing a value or `hidden` again,
      // even the same one, would still make the browser restyle and repaint the bar
      const key = JSON.stringify([s.preset, s.dataSeed, s.mode, s.score, s.normalize, s.temperature, s.mask, s.tokens.length,
        s.padLength, s.hidden, s.beta, s.paramSeed, s.trainable, s.lock, s.heads, s.compare, s.positions, dims(s), extra.sumRange ?? null]);
      if (key === shown) return;
      shown = key;
      const self = s.mode === 'self';
      $('preset').value = s.preset;
      $('data-seed').value = s.dataSeed;
      $(`mode-${s.mode}`).checked = true;
      for (const o of $('score').options) o.disabled = self && !SELF_SCORES.includes(o.value);
      // self-attention compares its own heads' Q and K, under the scores it supports
      for (const o of $('compare').options) o.disabled = self && o.value !== 'none' && !SELF_SCORES.includes(o.value);
      $('score').value = s.score;
      $('normalize').value = s.normalize;
      // self-attention always uses softmax at τ = 1 (the weights card says so): no control for it
      $('norm-box').hidden = self;
      $('temp-box').hidden = self;
      $('temperature').value = s.temperature;
      $('temperature').disabled = s.normalize === 'sum';
      setText($('temperature-value'), s.normalize === 'sum' ? '(softmax only)' : `τ = ${fixed(s.temperature, 2)}`);
      $('mask').value = s.mask;
      $('mask').querySelector('option[value="padding"]').disabled = self;
      $('pad-box').hidden = s.mask !== 'padding';
      $('pad-length').max = s.tokens.length;
      if (document.activeElement !== $('pad-length')) $('pad-length').value = s.padLength;
      $('hidden').value = s.hidden;
      if (document.activeElement !== $('beta')) $('beta').value = s.beta;
      $('param-seed').value = s.paramSeed;
      $('trainable').checked = s.trainable;
      $('lock').checked = s.lock;
      $('heads-box').hidden = !self;
      // each choice shows the width it leaves a head, dₕ = d / h (so 32 and 64 dims differ though their choices do not)
      const choices = headChoices(dims(s)).map((c) => [c, `${c} (dₕ = ${dims(s) / c})`]);
      if ($('heads').options.length !== choices.length || [...$('heads').options].some((o, k) => o.textContent !== choices[k][1])) {
        $('heads').replaceChildren(...choices.map(([c, text]) => option(c, text)));
      }
      $('heads').value = s.heads;
      $('positions-box').hidden = !self;
      $('positions').value = s.positions;
      $('compare').value = s.compare;
      for (const node of document.querySelectorAll('[data-mode]')) node.hidden = node.dataset.mode !== s.mode;
      for (const node of document.querySelectorAll('[data-score]')) node.hidden = self || !node.dataset.score.split(' ').includes(s.score);
      $('self-weights').hidden = !(self && s.trainable);
      const range = extra.sumRange;
      $('sum-warning').hidden = !range;
      if (range) setText($('sum-warning'), `Naive sum with scores of both signs: weights from ${fixed(range.lo, 2)} to ${fixed(range.hi, 2)}, outside [0, 1]. Use softmax, or positive scores.`);
    },
  };
}
