// The lab's image family (no DOM): image models reading MNIST digits (a CNN's
// feature grid or the retina's glimpses, with soft, hard or no attention), as
// a family adapter the one session and the page drive (family.js lists the
// adapter's fields). The views are images-view.js.
import { loadedSettings, seq2seqAdapter } from './family.js';
import { pickPretrained } from './pretrained.js';
import { IMAGE_TASKS, IMAGE_TRAIN, MODEL_KEYS, imageReading, trainOptions, visionOptions } from './state.js';

/** Image models: the held-out digits (their task has no validation split), fewer as a forward pass costs more. */
const IMAGE_EVAL = { split: 'test', count: 100 };

export const imageFamily = {
  ...seq2seqAdapter,
  name: 'images',
  noun: 'image model',
  tasks: IMAGE_TASKS,
  kinds: ['vision'],
  modelKeys: MODEL_KEYS,
  linkKeys: ['task', 'cell', 'hidden', 'lr', 'batch', 'seed', 'start', 'speed', 'mode', 'sensor', 'channels', 'clutter', 'modeSteps', 'image'],
  viewKeys: [],
  create: (state) => ({ action: 'createVision', options: visionOptions(state) }),
  trainOptions: (state) => ({ ...trainOptions(state), ...IMAGE_TRAIN }),
  evaluation: IMAGE_EVAL,
  pretrained: pickPretrained,
  settle() {},
  loaded: (made) => ({ settings: loadedSettings(made), note: null }),
  fileName: (state, steps) => `attnlab-${state.task}-${state.mode}-step${steps}.attnlab`,
  progressLabel: (state) => state.task,
  modelName: (s) => `${s.task} digits, ${imageReading(s)}`,
  noData: 'The handwritten digits could not be downloaded, so there is no image model yet.',
};
