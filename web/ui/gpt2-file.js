// Opening a GPT-2-family checkpoint as Hugging Face publishes one: two files,
// model.safetensors (the weights) and config.json (the sizes), chosen or dropped
// in either order or both at once, then read in this tab with a progress count.
// Nothing here sends a byte anywhere: the bytes go to the lab's own worker, which
// checks and runs them (engine.loadModel). No DOM.

/** Where a learner gets GPT-2's two files, and how large they are (GPT-2 small, openai-community/gpt2 on the hub). */
export const GPT2_SOURCE = Object.freeze({
  page: 'https://huggingface.co/openai-community/gpt2',
  files: 'https://huggingface.co/openai-community/gpt2/tree/main',
  weights: { name: 'model.safetensors', size: '548 MB' },
  config: { name: 'config.json', size: 'under 1 KB' },
});
/** A config.json is a few hundred bytes: a larger "config" is not one. */
const MAX_CONFIG_BYTES = 1 << 20;

/** Which of the two a file is, by its name: 'weights', 'config', or null (neither). */
export function fileRole(name) {
  const n = String(name).toLowerCase();
  if (n.endsWith('.safetensors')) return 'weights';
  if (n.endsWith('.json')) return 'config';
  return null;
}

/**
 * `held` ({ weights?, config? }: the files chosen so far) with `files` added by
 * role (a later file of a role replaces the earlier one); `refused`: the names of
 * files that are neither.
 */
export function addFiles(held, files) {
  const next = { ...held };
  const refused = [];
  for (const file of files) {
    const role = fileRole(file.name);
    if (role) next[role] = file;
    else refused.push(file.name);
  }
  return { held: next, refused };
}

/** What to choose next, in words ('' when both are held). */
export function missingText(held) {
  if (held.weights && held.config) return '';
  if (held.weights) return `${held.weights.name} chosen; now choose its config.json.`;
  if (held.config) return `${held.config.name} chosen; now choose its model.safetensors.`;
  return '';
}

/** config.json's text (a file too large to be one is refused before it is read). */
export async function readConfig(file) {
  if (file.size > MAX_CONFIG_BYTES) throw Object.assign(new Error(`${file.name} has ${file.size.toLocaleString('en')} bytes: not a config.json (those are a few hundred)`), { code: 'ERR_ARG' });
  return file.text();
}

/**
 * The file's bytes, read piece by piece into one buffer, calling onProgress(done, total)
 * after each piece (so a 548 MB file shows its progress and the page stays responsive).
 */
export async function readWithProgress(file, onProgress) {
  const total = file.size;
  const bytes = new Uint8Array(total);
  const reader = file.stream().getReader();
  let done = 0;
  for (;;) {
    const { value, done: end } = await reader.read();
    if (end) break;
    if (done + value.length > total) throw Object.assign(new Error(`${file.name} grew while it was read`), { code: 'ERR_ARG' });
    bytes.set(value, done);
    done += value.length;
    onProgress(done, total);
  }
  if (done !== total) throw Object.assign(new Error(`${file.name}: read ${done} of its ${total} bytes`), { code: 'ERR_ARG' });
  return bytes;
}

/** Bytes in words: 548 MB, 12.5 KB. */
export function sizeText(bytes) {
  if (bytes >= 1e9) return `${(bytes / 1e9).toFixed(2)} GB`;
  if (bytes >= 1e6) return `${Math.round(bytes / 1e6)} MB`;
  if (bytes >= 1e3) return `${(bytes / 1e3).toFixed(1)} KB`;
  return `${bytes} bytes`;
}

/**
 * A repeated sequence of random tokens, as the head scores read one (Olsson et al.
 * 2022): <|endoftext|>, then `length` tokens drawn from ids 0..vocabulary-2 by `random`,
 * then the same tokens again. Returns the ids (an Int32Array).
 */
export function repeatedIds(random, length, vocabulary) {
  const half = Array.from({ length }, () => Math.floor(random() * (vocabulary - 1)));
  return Int32Array.from([vocabulary - 1, ...half, ...half]);
}

/** The longest run, up to `length`, that fits twice (after <|endoftext|>) in a context of `context` tokens. */
export const repeatFits = (length, context) => Math.max(1, Math.min(length, Math.floor((context - 1) / 2)));

/**
 * The head scan's options (headScores) for a model of `config`: 8 runs of 50 random tokens
 * shown twice (the lab's and Learn's one measure), shorter runs when its context is shorter.
 */
export const scan = (config) => ({ count: 8, length: repeatFits(50, config.context), seed: 1 });
