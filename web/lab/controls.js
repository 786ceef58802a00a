// The settings form: fills its controls from a state and reads one control back
// as a validated value (or undefined, marking the control invalid). The
// decoding pair (greedy / beam search + width) edits the one `beam` setting.
import { byId } from '../ui/dom.js';
import { PROPERTIES, SEQUENCE_TASKS, sensorBlocked, sensorOf } from './state.js';

/** Controls whose id is a state property and that change the state when they change. */
export const CONTROL_NAMES = Object.keys(PROPERTIES).filter((name) => !['text', 'beam', 'image', 'start', 'tfText', 'tfInput', 'tfPrompt', 'tfAblate'].includes(name));

function valid(p, raw) {
  if (p.type === 'bool') return raw;
  if (p.type === 'string') return p.pattern && !p.pattern.test(raw) ? undefined : raw;
  if (p.type === 'enum') return p.values.includes(raw) ? raw : undefined;
  const x = Number(raw);
  if (raw === '' || !Number.isFinite(x) || x < p.min || x > p.max || (p.type === 'int' && !Number.isInteger(x))) return undefined;
  if (p.check?.(x, {})) return undefined;
  return x;
}

export function createControls() {
  let beamWidth = 3; // the width beam search uses when it is switched back on

  /** The form from `state`; `family` (its family's name) shows its own settings and panels. */
  function fill(state, family) {
    for (const name of CONTROL_NAMES) {
      const input = byId(name);
      if (!input) continue;
      if (input.type === 'checkbox') input.checked = state[name];
      else input.value = String(state[name]);
      // a whole number's bounds are the property table's (some are the engine's limits, known once it has loaded)
      if (PROPERTIES[name].type === 'int' && Number.isFinite(PROPERTIES[name].max)) input.max = String(PROPERTIES[name].max);
      input.removeAttribute('aria-invalid');
    }
    if (state.beam > 1) beamWidth = state.beam;
    byId('decode').value = state.beam > 1 ? 'beam' : 'greedy';
    byId('beam').value = String(beamWidth);
    if (Number.isFinite(PROPERTIES.beam.max)) byId('beam').max = String(PROPERTIES.beam.max);
    byId('beam').disabled = state.beam === 1;
    byId('seq-options').hidden = !SEQUENCE_TASKS.includes(state.task);
    byId('pairs-box').hidden = state.task !== 'pairs';
    // text models, image models and transformers each show only their own settings and panels
    for (const node of document.querySelectorAll('[data-for]')) node.hidden = !node.dataset.for.split(' ').includes(family);
    byId('clutter-field').hidden = state.task !== 'cluttered';
    // the retina's choice is kept where it does not apply; the control then says why, in its tooltip and beside it (touch has no hover)
    const why = sensorBlocked(state);
    const field = byId('sensor-field');
    byId('sensor').disabled = Boolean(why);
    for (const el of [field, byId('sensor')]) el.title = why ?? field.dataset.tip;
    byId('sensor-why').textContent = why ?? '';
    byId('sensor-why').hidden = !why;
    byId('channels').disabled = sensorOf(state) === 'retina';
    byId('channels').title = sensorOf(state) === 'retina' ? 'The retina has no CNN: its patches go straight to its glimpse network' : '';
  }

  /** { name, value } for a changed control, or null when its text is not a valid value (it is marked). */
  function read(id) {
    const input = byId(id);
    let name = id;
    let value;
    if (id === 'decode') {
      name = 'beam';
      value = input.value === 'beam' ? beamWidth : 1;
    } else if (id === 'beam') {
      const x = Number(input.value);
      value = Number.isInteger(x) && x >= 2 && x <= PROPERTIES.beam.max ? x : undefined;
      if (value !== undefined) beamWidth = value;
    } else {
      value = valid(PROPERTIES[id], input.type === 'checkbox' ? input.checked : input.value);
    }
    if (value === undefined) {
      input.setAttribute('aria-invalid', 'true');
      return null;
    }
    input.removeAttribute('aria-invalid');
    return { name, value };
  }

  return { fill, read, ids: [...CONTROL_NAMES, 'decode', 'beam'] };
}
