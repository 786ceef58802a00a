// The lab's text family (no DOM): seq2seq models on the text tasks (reverse,
// sort, copy, dates, pairs), as a family adapter the one session and the page
// drive (family.js lists the adapter's fields). The views are text-view.js.
import { loadedSettings, seq2seqAdapter } from './family.js';
import { pickPretrained } from './pretrained.js';
import { MODEL_KEYS, TEXT_TASKS, modelOptions } from './state.js';

export const textFamily = {
  ...seq2seqAdapter,
  name: 'text',
  noun: 'text model',
  tasks: TEXT_TASKS,
  kinds: ['seq2seq'],
  modelKeys: MODEL_KEYS,
  linkKeys: ['task', 'alphabet', 'minLength', 'maxLength', 'cell', 'bidirectional', 'layers', 'embed', 'hidden', 'attention',
    'lr', 'batch', 'seed', 'start', 'speed', 'beam', 'compare', 'compareSteps', 'text'],
  viewKeys: ['beam'],
  /** The pairs text comes from the page (`inputs.pairs`), not the link. */
  create: (state, inputs = {}) => ({ action: 'create', options: modelOptions(state, state.attention, inputs.pairs) }),
  evaluation: { split: 'validation', count: 200 },
  pretrained: pickPretrained,
  /** A new task or alphabet has other characters: the input box starts empty; the lengths stay in order. */
  settle(state, changed) {
    if (state.maxLength < state.minLength) state.maxLength = state.minLength;
    if (changed === 'task' || changed === 'alphabet') state.text = '';
  },
  loaded: (made) => ({ settings: loadedSettings(made), note: null }),
  fileName: (state, steps) => `attnlab-${state.task}-${state.attention}-step${steps}.attnlab`,
  progressLabel: () => 'text',
  modelName: (s) => `${s.task}, attention ${s.attention}`,
  noData: 'The data of this task could not be downloaded, so there is no text model yet.',
};
