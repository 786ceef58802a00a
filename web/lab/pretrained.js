// The models trained ahead of time (web/models, listed in models.json by
// scripts/train-models.mjs): which one fits the lab's settings. The lab opens a
// task on its pretrained model, so a learner first sees attention that works
// (labelled as pretrained, "train from scratch" one click away), instead of an
// untrained model's noise over a uniform map.
import { defaultsOf } from '../engine/defaults.js';
import { settingsOf } from './model-file.js';
import { MODEL_KEYS, isImageTask, sensorOf } from './state.js';

/** The training fields of a manifest entry that the lab's form has: the rate and batch it was trained at. */
const RECIPE = ['lr', 'batch'];
/** Those of them a manifest entry records, { lr, batch }. */
const recipeOf = (spec) => Object.fromEntries(RECIPE.filter((k) => spec[k] !== undefined).map((k) => [k, spec[k]]));

/**
 * The lab's settings of a pretrained model (its manifest entry): its model's, and the rate and
 * batch it was trained at, so that the form shows how the model on screen was trained and Train
 * from scratch trains another the same way.
 */
export function settingsOfSpec(spec) {
  const o = spec.options;
  const base = isImageTask(o.task) ? {} : { layers: 1, bidirectional: false };
  return { ...base, ...settingsOf({ ...o, seed: o.seed ?? 1 }), ...recipeOf(spec) };
}

/** `settings` without the training fields `given` names: a rate or batch the link sets stands. */
const keepGiven = (settings, given) => Object.fromEntries(Object.entries(settings).filter(([k]) => !RECIPE.includes(k) || !given.has(k)));

/**
 * The pretrained model { name, spec, settings } for `state`, or null: one of the
 * task (for images, of the attention mode and the sensor) whose settings equal the state's on
 * every model setting named in `given` (the link's fields, or the one changed).
 * With start=scratch there is none: the learner asked for an untrained model.
 */
export function pickPretrained(manifest, state, given) {
  if (state.start !== 'pretrained' || !manifest?.models) return null;
  for (const [name, spec] of Object.entries(manifest.models)) {
    const settings = settingsOfSpec(spec);
    if (settings.task !== state.task) continue;
    // an image model of the state's mode, and of the sensor its model reads with (the grid's hard model is no retina)
    if (isImageTask(state.task) && (settings.mode !== state.mode || settings.sensor !== sensorOf(state))) continue;
    if (MODEL_KEYS.every((k) => !given.has(k) || !(k in settings) || settings[k] === state[k])) return { name, spec, settings: keepGiven(settings, given) };
  }
  return null;
}

/**
 * The lab's Transformer settings of a transformer's options or config (a
 * manifest entry's options, or a loaded model's config): the engine's defaults
 * for what the options leave out.
 */
export function transformerSettings(given) {
  const o = { ...defaultsOf('transformer', given).model, ...given };
  return {
    task: 'transformer', tfTask: o.task, tfLayers: o.layers, tfHeads: o.heads, tfDModel: o.dModel, tfDFF: o.dFF,
    tfContext: o.context, tfPositional: o.positional, tfScore: o.score, tfBatch: o.batch, seed: o.seed,
  };
}

/** The settings that must match a pretrained transformer's (its text aside: no text-task model ships). */
const TF_MATCH = ['tfTask', 'tfLayers', 'tfHeads', 'tfDModel', 'tfDFF', 'tfContext', 'tfPositional', 'tfScore', 'seed'];

/**
 * The pretrained transformer { name, spec, settings } for `state`, or null: one
 * of the state's transformer task whose settings equal the state's on every
 * setting named in `given`. With start=scratch there is none.
 */
export function pickPretrainedTransformer(manifest, state, given) {
  if (state.start !== 'pretrained' || !manifest?.models) return null;
  for (const [name, spec] of Object.entries(manifest.models)) {
    if (spec.kind !== 'transformer') continue;
    const settings = transformerSettings(spec.options);
    if (settings.tfTask !== state.tfTask) continue;
    if (TF_MATCH.every((k) => !given.has(k) || settings[k] === state[k])) return { name, spec, settings };
  }
  return null;
}

/** The model fields a link sets ("#ver=2&task=dates&..."), by name. */
export function linkFields(hash) {
  return new Set(hash.replace(/^#/, '').split('&').map((kv) => decodeURIComponent(kv.split('=')[0])).filter(Boolean));
}

/** One line on a pretrained model (`what`: its family's words for it), for the label over the lab. */
export function describePretrained({ spec }, what) {
  // its accuracy is the one the lab measures beside Train (on the lab's own test draw), not the manifest's
  const how = Object.entries(recipeOf(spec)).map(([k, v]) => `${k} ${v}`).join(', ');
  return `Pretrained model (${what}): trained ${spec.steps.toLocaleString('en')} steps ahead of time${how ? ` (${how})` : ''}, ready to read inputs. `
    + 'Train on to improve it, or start over with Train from scratch.';
}

/** The manifest, or null when it cannot be read (the lab then starts untrained). */
export async function loadManifest(base = new URL('../models/', import.meta.url)) {
  try {
    const r = await fetch(new URL('models.json', base));
    return r.ok ? await r.json() : null;
  } catch {
    return null;
  }
}

/** The bytes of a pretrained model's file. */
export async function fetchPretrained(spec, base = new URL('../models/', import.meta.url)) {
  const r = await fetch(new URL(spec.file, base));
  if (!r.ok) throw Object.assign(new Error(`models/${spec.file}: HTTP ${r.status}`), { code: 'ERR_DATA' });
  return new Uint8Array(await r.arrayBuffer());
}
