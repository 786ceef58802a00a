// The settings form: fills its controls from a state and reads one control back
// as a validated value (or undefined, marking the control invalid). The
// decoding pair (greedy / beam search + width) edits the one `beam` setting.
// Every numeric field states its range beside it, and a value it does not take
// is said in words under it (field-check.js) and stays as typed until the field
// is fixed: a new model meanwhile leaves it so, and a value that the new settings
// take (Heads 3 once dModel is 48) is handed back to be used.
import { byId, h, setHidden, setText } from '../ui/dom.js';
import { fieldProblem, rangeText } from './field-check.js';
import { PROPERTIES, SEQUENCE_TASKS, sensorBlocked, sensorOf } from './state.js';

/** Controls whose id is a state property and that change the state when they change. */
export const CONTROL_NAMES = Object.keys(PROPERTIES).filter((name) => !['text', 'beam', 'image', 'start', 'tfText', 'tfInput', 'tfPrompt', 'tfAblate', 'gpt2Prompt', 'gpt2Head'].includes(name));

function valid(p, raw) {
  if (p.type === 'bool') return raw;
  if (p.type === 'string') return p.pattern && !p.pattern.test(raw) ? undefined : raw;
  if (p.type === 'enum') return p.values.includes(raw) ? raw : undefined;
  const x = Number(raw);
  if (raw === '' || !Number.isFinite(x) || x < p.min || x > p.max || (p.type === 'int' && !Number.isInteger(x))) return undefined;
  if (p.check?.(x, {})) return undefined;
  return x;
}

/** The beam width field: a width of 2 up to the engine's (1, greedy, is the decoding choice). */
const BEAM_WIDTH = { type: 'int', min: 2, get max() { return PROPERTIES.beam.max; } };
const numericProperty = (id) => (id === 'beam' ? BEAM_WIDTH : PROPERTIES[id]);

/**
 * A numeric field's range (beside it, in its label) and its message (under
 * its row): { input, name, range, message }, `name` being the label's words.
 */
function decorate(id) {
  const input = byId(id);
  const label = input.closest('label');
  // "dFF (0: none)" is called dFF
  const name = label.firstChild.textContent.trim().replace(/\s*\(.*\)$/, '');
  const range = h('span', { id: `${id}-range`, className: 'field-range', dataset: { testid: `${id}-range` } });
  input.after(range);
  const message = h('p', { id: `${id}-message`, className: 'field-message', hidden: true, dataset: { testid: `${id}-message` }, attrs: { 'aria-live': 'polite' } });
  (label.closest('.field-row') ?? label).after(message);
  input.setAttribute('aria-describedby', [input.getAttribute('aria-describedby'), range.id, message.id].filter(Boolean).join(' '));
  return { input, name, range, message };
}

export function createControls() {
  let beamWidth = 3; // the width beam search uses when it is switched back on
  const numeric = new Map([...CONTROL_NAMES, 'beam'].filter((id) => byId(id)?.type === 'number').map((id) => [id, decorate(id)]));

  /** Says `text` under numeric field `id` (null: nothing); `kind` 'error' marks the field invalid, 'info' only tells. */
  function say(id, text, kind = 'info') {
    const field = numeric.get(id);
    if (!field) return;
    setText(field.message, text ?? '');
    setHidden(field.message, !text);
    field.message.dataset.kind = kind;
    if (text && kind === 'error') field.input.setAttribute('aria-invalid', 'true');
    else field.input.removeAttribute('aria-invalid');
  }

  /** Whether numeric field `id` holds a value it refused (typed, said under it, not in the state). */
  const refused = (id) => numeric.get(id)?.message.dataset.kind === 'error' && !numeric.get(id).message.hidden;

  /**
   * The form from `state`; `family` (its family's name) shows its own settings and panels.
   * A field holding a value it refused keeps it, said against the new state; returns the
   * ids of those whose value the new state takes (to be read again, and used).
   */
  function fill(state, family) {
    const held = [...numeric.keys()].filter(refused);
    const ready = held.filter((id) => !fieldProblem(numericProperty(id), numeric.get(id).name, byId(id).value, state));
    for (const name of CONTROL_NAMES) {
      const input = byId(name);
      if (!input || held.includes(name)) continue;
      if (input.type === 'checkbox') input.checked = state[name];
      else input.value = String(state[name]);
      // a whole number's bounds are the property table's (some are the engine's limits, known once it has loaded)
      if (PROPERTIES[name].type === 'int' && Number.isFinite(PROPERTIES[name].max)) input.max = String(PROPERTIES[name].max);
      input.removeAttribute('aria-invalid');
    }
    // every numeric field: its bounds (some the engine's, known once it has loaded), stated beside it, and no stale message
    for (const [id, field] of numeric) {
      const p = numericProperty(id);
      if (Number.isFinite(p.min)) field.input.min = String(p.min);
      setText(field.range, rangeText(p));
      if (!held.includes(id) || ready.includes(id)) say(id, null);
      else say(id, fieldProblem(p, field.name, field.input.value, state), 'error');
    }
    if (state.beam > 1) beamWidth = state.beam;
    byId('decode').value = state.beam > 1 ? 'beam' : 'greedy';
    if (!held.includes('beam')) byId('beam').value = String(beamWidth);
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
    return ready;
  }

  /**
   * { name, value } for a changed control, or null when its text is not a
   * valid value in `state` (it is marked, and a numeric field says why).
   */
  function read(id, state = {}) {
    const input = byId(id);
    let name = id;
    let value;
    if (numeric.has(id)) {
      const problem = fieldProblem(numericProperty(id), numeric.get(id).name, input.value, state);
      say(id, problem, 'error');
      if (problem) return null;
      value = Number(input.value);
      if (id === 'beam') beamWidth = value;
    } else if (id === 'decode') {
      name = 'beam';
      value = input.value === 'beam' ? beamWidth : 1;
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

  return { fill, read, say, ids: [...CONTROL_NAMES, 'decode', 'beam'] };
}
