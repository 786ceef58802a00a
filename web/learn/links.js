// "Open in the playground / lab" links in each page's own URL-state format:
//   playgroundLink(fields)  index.html#ver=2&name=value&...: the playground's link format,
//                           version 2 (web/playground/state.js PROPS, read by ui/url-state.js):
//                           numbers and names as text, lists "a,b", vectors "1,2", matrices
//                           "1,2;3,4"; a field not given takes the playground's default
//   labLink(fields)         lab.html#name=value&...: the lab's PROPERTIES by name
//                           (web/lab/state.js); only the fields given are written
// Pure functions: no DOM.
import { defaultsOf } from '../engine/defaults.js';

const PLAYGROUND_VERSION = 2;

function fieldText(v) {
  if (!Array.isArray(v)) return encodeURIComponent(String(v));
  if (Array.isArray(v[0])) return v.map((row) => row.join(',')).join(';');
  return v.map((x) => (typeof x === 'number' ? String(x) : encodeURIComponent(x))).join(',');
}

/** A link to the playground showing `fields` (preset, mode, score, x, ...). */
export function playgroundLink(fields) {
  const parts = Object.entries(fields).map(([k, v]) => `${k}=${fieldText(v)}`);
  return `index.html#ver=${PLAYGROUND_VERSION}&${parts.join('&')}`;
}

/** A link to the training lab with `fields` (task, attention, hidden, text, ...). */
export function labLink(fields) {
  const parts = Object.entries(fields).map(([k, v]) => `${k}=${encodeURIComponent(String(v))}`);
  return `lab.html#${parts.join('&')}`;
}

/** The lab fields that rebuild a model trained by scripts/train-models.mjs. */
export function labFieldsFor(spec, extra = {}) {
  const o = spec.options;
  const f = { task: o.task };
  if (o.alphabet) Object.assign(f, { alphabet: o.alphabet, minLength: o.minLength, maxLength: o.maxLength });
  Object.assign(f, { cell: o.cell, embed: o.embed, hidden: o.hidden, attention: o.attention, lr: spec.lr, batch: spec.batch, seed: o.seed });
  return { ...f, ...extra };
}

/**
 * The lab's Transformer family with a transformer's settings (web/lab/transformer-state.js:
 * tfTask, tfLayers, tfHeads, tfDModel, tfDFF, tfContext, tfLr, tfBatch, seed); a spec
 * { options, lr, batch } as models.json lists it. The lab opens on the pretrained model
 * when these match one it ships.
 */
export function transformerLabFields(spec, extra = {}) {
  // what the options leave out is the engine's default (defaults.js)
  const d = defaultsOf('transformer', spec.options);
  const o = { ...d.model, ...spec.options };
  return {
    task: 'transformer', tfTask: o.task, tfLayers: o.layers, tfHeads: o.heads, tfDModel: o.dModel, tfDFF: o.dFF,
    tfContext: o.context, tfPositional: o.positional, tfLr: spec.lr ?? d.train.lr, tfBatch: spec.batch ?? o.batch, seed: o.seed, ...extra,
  };
}

/**
 * The lab's Images task with an image model's settings (web/lab/state.js: task, clutter,
 * channels, cell, hidden, mode, sensor, lr, batch, seed). The lab has no field for the number of
 * glimpses: it trains the engine's default (the grid: one; the retina: six). The retina has
 * no CNN, so no channels.
 */
export function visionLabFields(spec, extra = {}) {
  const o = spec.options;
  return {
    task: o.task, clutter: o.clutter, ...(o.channels ? { channels: o.channels.join(',') } : {}), cell: o.cell, hidden: o.hidden, mode: o.mode,
    ...(o.sensor ? { sensor: o.sensor } : {}), lr: spec.lr, batch: spec.batch, seed: o.seed, ...extra,
  };
}
