// Opening a checkpoint as Hugging Face publishes one: model.safetensors (the
// weights), config.json (the sizes and the architecture: GPT-2 or GPT-NeoX, as
// Pythia) and, when the model has its own, tokenizer.json, chosen or dropped in
// any order, one at a time or together, then read in this tab with a progress
// count. Which .json is which is read from its content (a config has model_type
// or its sizes; a tokenizer.json a model with a vocabulary), by its name when the
// content does not say. Nothing here sends a byte anywhere: the bytes go to the
// lab's own worker, which checks and runs them (engine.loadModel). No DOM.
import { MAX_TOKENIZER_JSON } from '../engine/bpe.js';

/** Where a learner gets GPT-2's two files, and how large they are (GPT-2 small, openai-community/gpt2 on the hub). */
export const GPT2_SOURCE = Object.freeze({
  page: 'https://huggingface.co/openai-community/gpt2',
  files: 'https://huggingface.co/openai-community/gpt2/tree/main',
  weights: { name: 'model.safetensors', size: '548 MB' },
  config: { name: 'config.json', size: 'under 1 KB' },
});
/** Where a learner gets Pythia's three files (EleutherAI's GPT-NeoX models; model.safetensors with its buffers, float16). */
export const PYTHIA_SOURCE = Object.freeze({
  models: [
    { name: 'pythia-70m', files: 'https://huggingface.co/EleutherAI/pythia-70m/tree/main', size: '166 MB' },
    { name: 'pythia-160m', files: 'https://huggingface.co/EleutherAI/pythia-160m/tree/main', size: '375 MB' },
    { name: 'pythia-410m', files: 'https://huggingface.co/EleutherAI/pythia-410m/tree/main', size: '911 MB' },
  ],
  tokenizer: { name: 'tokenizer.json', size: '2.1 MB' },
});
/** A checkpoint's architecture in words, by config.architecture. */
export const ARCHITECTURES = Object.freeze({ gpt2: 'GPT-2', gpt_neox: 'GPT-NeoX (Pythia)' });
/** A config.json is a few hundred bytes: a larger "config" is not one. */
const MAX_CONFIG_BYTES = 1 << 20;

/**
 * Which file a .json is: 'config', 'tokenizer' or null (neither), by what it holds
 * (`text`), else, when it is no JSON object or says neither, by its name.
 */
export function jsonRole(name, text) {
  let o = null;
  try {
    o = JSON.parse(text);
  } catch { /* not JSON: its name says, and the engine refuses it with its reason */ }
  if (o && typeof o === 'object' && !Array.isArray(o)) {
    if (o.model && typeof o.model === 'object' && ('vocab' in o.model || 'merges' in o.model)) return 'tokenizer';
    if (['model_type', 'n_layer', 'num_hidden_layers'].some((k) => k in o)) return 'config';
  }
  const n = String(name).toLowerCase();
  const tokenizer = n.includes('tokenizer'), config = n.includes('config');
  if (o === null && tokenizer !== config) return tokenizer ? 'tokenizer' : 'config';
  return null;
}

/**
 * `held` ({ weights?, config?, tokenizer? }: the files chosen so far) with `files`
 * added by role (a later file of a role replaces the earlier one; a .json is read
 * to know which it is); `refused`: why each other file was not taken.
 */
export async function addFiles(held, files) {
  const next = { ...held };
  const refused = [];
  for (const file of files) {
    const n = String(file.name).toLowerCase();
    if (n.endsWith('.safetensors')) next.weights = file;
    else if (!n.endsWith('.json')) refused.push(`${file.name}: not a .safetensors or .json file`);
    else if (file.size > MAX_TOKENIZER_JSON) refused.push(`${file.name}: ${file.size.toLocaleString('en')} bytes, past the ${MAX_TOKENIZER_JSON.toLocaleString('en')} a tokenizer.json may have`);
    else {
      const role = jsonRole(file.name, await file.text());
      if (role === 'config' && file.size > MAX_CONFIG_BYTES) refused.push(`${file.name}: ${file.size.toLocaleString('en')} bytes, not a config.json (those are a few hundred)`);
      else if (role) next[role] = file;
      else refused.push(`${file.name}: neither a model's config.json nor a tokenizer.json`);
    }
  }
  return { held: next, refused };
}

/** What to choose next, in words ('' when the weights and the config are held). */
export function missingText(held) {
  if (held.weights && held.config) return '';
  const chosen = [held.weights, held.config, held.tokenizer].filter(Boolean).map((f) => f.name).join(' and ');
  if (!chosen) return '';
  const need = [held.weights ? null : 'model.safetensors', held.config ? null : 'config.json'].filter(Boolean).join(' and ');
  const tokenizer = held.tokenizer ? '' : ' (and, for Pythia, its tokenizer.json)';
  return `${chosen} chosen; now choose its ${need}${tokenizer}.`;
}

/** A task of the page's longer than this is a long task (the Long Tasks API's 50 ms): the reading yields before. */
const SLICE_MS = 10;

/**
 * The file's bytes, read piece by piece into one buffer, calling onProgress(done, total)
 * after each piece (so a 548 MB file shows its progress and the page stays responsive:
 * pieces already read come one after another in one task, so it yields to the page
 * every SLICE_MS of copying).
 */
export async function readWithProgress(file, onProgress) {
  const total = file.size;
  const bytes = new Uint8Array(total);
  const reader = file.stream().getReader();
  let done = 0;
  let slice = performance.now();
  for (;;) {
    if (performance.now() - slice > SLICE_MS) {
      await new Promise((resolve) => setTimeout(resolve, 0));
      slice = performance.now();
    }
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

/** The number of token ids of a model of `config` (its vocabulary: the token texts, or their count). */
export const vocabularySize = (config) => (Array.isArray(config.vocabulary) ? config.vocabulary.length : config.vocabulary);

/**
 * A repeated sequence of random tokens, as the head scores read one (Olsson et al.
 * 2022): <|endoftext|>, then `length` tokens drawn by `random` from the ordinary
 * tokens, then the same tokens again. `vocabulary` is a model's config.vocabulary:
 * its token texts, where <|endoftext|> is found by name (GPT-2's last id, Pythia's 0)
 * and the ordinary tokens are every other id the tokenizer has (not the embedding
 * rows past it, `<50290>`, which no text makes: Pythia has 27, never trained); or a
 * count, whose last id is <|endoftext|>. Returns the ids (an Int32Array).
 */
export function repeatedIds(random, length, vocabulary) {
  const names = Array.isArray(vocabulary) ? vocabulary : null;
  const V = names ? names.length : vocabulary;
  const found = names ? names.indexOf('<|endoftext|>') : -1;
  const end = found >= 0 ? found : V - 1;
  const ordinary = names ? names.flatMap((name, id) => (id === end || name === `<${id}>` ? [] : [id])) : null;
  const count = ordinary ? ordinary.length : V - 1;
  const half = Array.from({ length }, () => {
    const i = Math.floor(random() * count);
    return ordinary ? ordinary[i] : i;
  });
  return Int32Array.from([end, ...half, ...half]);
}

/** The longest run, up to `length`, that fits twice (after <|endoftext|>) in a context of `context` tokens. */
export const repeatFits = (length, context) => Math.max(1, Math.min(length, Math.floor((context - 1) / 2)));

/**
 * The head scan's options (headScores) for a model of `config`: 8 runs of 50 random tokens
 * shown twice (the lab's and Learn's one measure), shorter runs when its context is shorter.
 */
export const scan = (config) => ({ count: 8, length: repeatFits(50, config.context), seed: 1 });

/**
 * The scan's induction score is prefix matching: the attention a head gives, in the
 * second copy, to the token after the current token's first occurrence. Whether the
 * head then copies that token is not measured by it (ablation asks that). A head
 * below this score is no induction head: GPT-2's score far above it, a random model's
 * heads far below.
 */
export const INDUCTION_MIN = 0.3;
