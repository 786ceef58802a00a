// Model files: download the session's model, read a chosen file, and the
// settings a loaded model implies (its task, cell, sizes and attention).
import { download } from '../ui/download.js';
import { PROPERTIES, SEQUENCE_TASKS, isImageTask, modeOf } from './state.js';

const MAX_FILE_BYTES = 64 << 20;

/** Downloads the session's model as `name` (its family's fileName()). */
export async function saveModel(session, name) {
  const bytes = await session.save();
  download(name, new Blob([bytes], { type: 'application/octet-stream' }));
}

/**
 * Downloads the session's transformer as a Hugging Face checkpoint: model.safetensors,
 * config.json and vocabulary.json (the token texts by id), the files transformers and
 * TransformerLens read (a coded error when the model has no such layout: ALiBi, cosine).
 */
export async function exportModel(session) {
  const { safetensors, config, vocabulary } = await session.client.call('exportCheckpoint', { model: session.model });
  download('model.safetensors', new Blob([safetensors], { type: 'application/octet-stream' }));
  download('config.json', new Blob([`${JSON.stringify(config, null, 2)}\n`], { type: 'application/json' }));
  download('vocabulary.json', new Blob([`${JSON.stringify(vocabulary)}\n`], { type: 'application/json' }));
}

/** The bytes of a chosen file (too large a file is refused before it is read). */
export async function readModelFile(file) {
  if (file.size > MAX_FILE_BYTES) throw new Error(`${file.size} bytes is too large for a model file`);
  return new Uint8Array(await file.arrayBuffer());
}

/** The settings of a loaded model's config, as far as the property table allows them. */
export function settingsOf(config) {
  const s = {};
  const image = isImageTask(config.task);
  // the retina has no CNN (channels null); files and manifest entries from before it read the grid
  const values = image ? { ...config, mode: modeOf(config), channels: config.channels?.join(','), sensor: config.sensor ?? 'grid' } : config;
  const keys = image ? ['task', 'cell', 'hidden', 'mode', 'sensor', 'channels', 'clutter'] : ['task', 'cell', 'layers', 'bidirectional', 'embed', 'hidden', 'attention'];
  for (const k of keys) {
    const p = PROPERTIES[k];
    const v = values[k];
    if (v === undefined) continue;
    if (p.type === 'enum' ? p.values.includes(v) : p.type === 'bool' ? typeof v === 'boolean' : v >= p.min && v <= p.max) s[k] = v;
  }
  if (SEQUENCE_TASKS.includes(config.task)) Object.assign(s, { alphabet: config.alphabet, minLength: config.minLength, maxLength: config.maxLength });
  s.seed = Math.min(config.seed, PROPERTIES.seed.max);
  return s;
}
