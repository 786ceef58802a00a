// The lab's family adapters: the one interface every family (text, images,
// transformer) plugs into the session (session.js) and the page (main.js),
// and the parts the seq2seq-based families share. No DOM.
//
// An adapter is a plain object:
//   name, noun        'text' | 'images' | 'transformer'; what its model is called in a sentence
//   tasks, kinds      the state's tasks it owns; the worker's model kinds it adopts (a loaded file's)
//   modelKeys         the settings that define a model (changing one makes a new model)
//   linkKeys          the URL-state keys the link holds for the family
//   viewKeys          the settings that only redraw its views
//   create(state, inputs) -> { action, options }: the worker call that makes a model
//                     (inputs: what the family's views hold outside the link, the pairs text)
//   trainOptions(state) -> train() options; evaluation: evaluate() options after a chunk;
//   accuracy(ev)      the number its accuracy curve plots
//   fresh()           its own fields of a run (the timeline), fresh; record(session, bytes): keeps
//                     an update in them (bytes: the weights now, when saved)
//   pretrained(manifest, state, given) -> { name, spec, settings } | null; pickFields(given, state):
//                     the settings a pretrained model must match; buttonFields: those of "Open the pretrained model"
//   settle(state, changed)  the state's own rules after a setting changed
//   repair(state, err) -> { name, value, say } | null: a setting that makes the model
//                     the engine refused (err) when set to `value`, and the words saying so
//   loaded(made, bytes, fileName) -> { settings, note }: the state of a loaded model (note: said beside it)
//   fallback(state)   the settings to fall back to when a link's model cannot be made (null: none)
//   fileName(state, steps), progressLabel(state), modelName(settings), pretrainedName(settings): words
//   noData            what to say when the model's data could not be downloaded
//   history(session, history) -> bool: a pretrained model's recorded run, the family's own records of it
//                     (the session takes the losses and accuracy): false when they do not read as the model's
//   marks(session)    [{ x: step, label }]: events marked across the progress curves
//   runLength(state)  the steps a run trains before it stops by itself (Continue: as many more); null: until paused
//   runNote(session)  { text, href, title } | null: the run's event the run bar says (and links to), as it happens
import { settingsOf } from './model-file.js';
import { snapshotTimeline } from './session.js';
import { trainOptions } from './state.js';

/** The fields of a task change that choose its pretrained model. */
export const TASK_FIELDS = new Set(['task', 'mode']);

/** The adapter's fields and their types: every family has each of them. */
export const ADAPTER_FIELDS = {
  name: 'string', noun: 'string', tasks: 'object', kinds: 'object', modelKeys: 'object', linkKeys: 'object', viewKeys: 'object',
  create: 'function', trainOptions: 'function', evaluation: 'object', accuracy: 'function', fresh: 'function', record: 'function',
  pretrained: 'function', pickFields: 'function', buttonFields: 'object', settle: 'function', repair: 'function', loaded: 'function',
  fallback: 'function', fileName: 'function', progressLabel: 'function', modelName: 'function', pretrainedName: 'function',
  noData: 'string', history: 'function', marks: 'function', runLength: 'function', runNote: 'function',
};

/** What the text and image families share: Adam's options, whole answers right, a timeline of weights, no fallback. */
export const seq2seqAdapter = {
  trainOptions,
  accuracy: (ev) => ev.sequenceAccuracy,
  ...snapshotTimeline,
  pickFields: (given) => given,
  buttonFields: TASK_FIELDS,
  fallback: () => null,
  // no records of their own in a recorded run, and no events to mark
  history: () => true,
  marks: () => [],
  // their runs train until paused, and have no event for the run bar
  runLength: () => null,
  runNote: () => null,
  repair: () => null,
  pretrainedName(settings) {
    return this.modelName(settings);
  },
};

/** The settings of a loaded seq2seq or image model: its config's, as a model made here from scratch. */
export const loadedSettings = (made) => ({ ...settingsOf(made.config), start: 'scratch' });
