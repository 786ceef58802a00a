// The Transformer family's settings: rows of the lab's property table (state.js
// reads them into the one URL codec), the options they give the engine, the
// ablated heads as link text ("L1H0"), and the playground link of one head.
// No DOM.
//
// The task and position names are the engine's (read from its constants when the
// worker starts), so a task the engine gains appears without an edit here: the
// link keeps any plain name, and the page puts back the default, with a note,
// when the engine does not know it. The sizes' bounds are the engine's limits
// (include/attnlab/transformer.h); the engine checks them again, with its own
// message, when the model is made.
import { defaultsOf } from '../engine/defaults.js';
import { limit } from './limits.js';

/** The transformer engine's limit `name` (maxLayers, maxHeads, ...): the link's bound on a size. */
const bound = (name) => limit(name, 'transformer');

const HEAD_RE = /^L(\d+)H(\d+)$/;
/** "L1H0" -> { layer: 1, head: 0 }. */
export const parseHead = (text) => {
  const m = HEAD_RE.exec(text);
  return m ? { layer: Number(m[1]), head: Number(m[2]) } : null;
};
export const headName = ({ layer, head }) => `L${layer}H${head}`;

/** The text a user's own text task starts with (any text works: the model learns its characters). */
export const SAMPLE_TEXT = 'Attention is a weighted average. A query asks, the keys answer, and the values are mixed by how well each key '
  + 'answers. Self-attention lets every token ask every token before it. A transformer stacks such layers with a '
  + 'residual stream between them, and its heads learn to look back: at the previous token, or at what followed '
  + 'the last time the current token was seen. ';

/** The engine's defaults (web/engine/defaults.js) for the lab's first task: the settings a learner starts from. */
const FIRST = defaultsOf('transformer', { task: 'induction' });
const D = FIRST.model;

/** What m.patch puts back (docs/api.md): by position ('resid', 'attn', 'mlp'; layers × positions) or by head (layers × heads). */
export const PATCH_TARGETS = ['resid', 'attn', 'mlp', 'heads', 'head-values', 'head-patterns'];

export const TRANSFORMER_PROPS = [
  { name: 'tfTask', type: 'string', maxLength: 24, pattern: /^[a-z_]+$/, def: D.task },
  { name: 'tfLayers', type: 'int', min: 1, get max() { return bound('maxLayers'); }, def: D.layers },
  {
    // dModel is read after the heads (a link's dModel is checked against them), so on a link this check has no dModel yet
    name: 'tfHeads', type: 'int', min: 1, get max() { return bound('maxHeads'); }, def: D.heads,
    check: (v, s) => (Number.isInteger(s.tfDModel) && s.tfDModel % v ? `must divide dModel (${s.tfDModel}); ${v} does not: make dModel a multiple of ${v} first, such as ${16 * v}` : null),
  },
  {
    // the default width, or one the heads divide (16 per head) when they do not divide it
    name: 'tfDModel', type: 'int', min: 1, get max() { return bound('maxDModel'); }, def: (s) => (D.dModel % s.tfHeads ? 16 * s.tfHeads : D.dModel),
    check: (v, s) => (v % s.tfHeads ? `is not a multiple of the ${s.tfHeads} heads` : null),
  },
  { name: 'tfDFF', type: 'int', min: 0, get max() { return bound('maxDFF'); }, def: D.dFF },
  { name: 'tfContext', type: 'int', get min() { return bound('minContext'); }, get max() { return bound('maxContext'); }, def: D.context },
  { name: 'tfPositional', type: 'string', maxLength: 24, pattern: /^[a-z_]+$/, def: D.positional },
  { name: 'tfScore', type: 'enum', values: ['scaled_dot', 'dot', 'cosine'], def: D.score },
  { name: 'tfLr', type: 'number', min: 1e-6, max: 1, def: FIRST.train.lr },
  { name: 'tfBatch', type: 'int', min: 1, get max() { return bound('maxBatch'); }, def: D.batch },
  { name: 'tfText', type: 'string', maxLength: 4000, def: SAMPLE_TEXT },
  // the inspected input ('' : the test split's first example) and the generate box's prompt
  { name: 'tfInput', type: 'string', maxLength: 256, pattern: /^[^\x00-\x08\x0b-\x1f\x7f]*$/u, def: '' },
  { name: 'tfPrompt', type: 'string', maxLength: 256, pattern: /^[^\x00-\x08\x0b-\x1f\x7f]*$/u, def: '' },
  {
    name: 'tfAblate', type: 'list', get maxItems() { return bound('maxLayers') * bound('maxHeads'); }, def: [],
    item: (t) => (HEAD_RE.test(t) ? null : 'is not a head like L1H0'),
    check: (list, s) => {
      const bad = list.map(parseHead).find((h) => h.layer >= s.tfLayers || h.head >= s.tfHeads);
      if (bad) return `${headName(bad)} is not a head of ${s.tfLayers} layers of ${s.tfHeads} heads`;
      return new Set(list).size === list.length ? null : 'names a head twice';
    },
  },
  // the Circuits panel (transformer-circuits.js): the clean and corrupt prompts and the answer pair ('' : the model's
  // example pair, the answers suggested from it) and the patching target; controls of the form by these ids
  { name: 'tfClean', type: 'string', maxLength: 256, pattern: /^[^\x00-\x08\x0b-\x1f\x7f]*$/u, def: '' },
  { name: 'tfCorrupt', type: 'string', maxLength: 256, pattern: /^[^\x00-\x08\x0b-\x1f\x7f]*$/u, def: '' },
  { name: 'tfAnswer', type: 'string', maxLength: 32, pattern: /^[^\x00-\x08\x0b-\x1f\x7f]*$/u, def: '' },
  { name: 'tfOther', type: 'string', maxLength: 32, pattern: /^[^\x00-\x08\x0b-\x1f\x7f]*$/u, def: '' },
  { name: 'tfTarget', type: 'enum', values: PATCH_TARGETS, def: 'resid' },
  // an opened GPT-2's prompt ('' : GPT2_PROMPT) and the head shown large ('' : none chosen); never its weights
  { name: 'gpt2Prompt', type: 'string', maxLength: 1000, pattern: /^[^\x00-\x08\x0b-\x1f\x7f]*$/u, def: '' },
  { name: 'gpt2Head', type: 'string', maxLength: 12, pattern: /^(L\d{1,3}H\d{1,3})?$/, def: '' },
];

/** The prompt an opened GPT-2 reads first: a sentence and its repeat, where induction heads show. */
export const GPT2_PROMPT = 'Alice was beginning to get very tired of sitting by her sister on the bank, and of having nothing to do. '
  + 'Alice was beginning to get very tired of sitting by her sister on the bank, and of having nothing to do.';

/** The settings that define a transformer: changing one makes a new model. */
export const TF_MODEL_KEYS = ['tfTask', 'tfLayers', 'tfHeads', 'tfDModel', 'tfDFF', 'tfContext', 'tfPositional', 'tfScore', 'tfText', 'seed'];

/** createTransformer options for a state. */
export function transformerOptions(s) {
  return {
    task: s.tfTask, layers: s.tfLayers, heads: s.tfHeads, dModel: s.tfDModel, dFF: s.tfDFF, context: s.tfContext,
    positional: s.tfPositional, score: s.tfScore, batch: s.tfBatch, seed: s.seed, ...(s.tfTask === 'text' ? { text: s.tfText } : {}),
  };
}

/**
 * train() options: AdamW at the form's lr and batch; the rest of the schedule is the
 * engine's default for the task (defaults.js): the cosine ends at the task's steps
 * however the steps are chunked.
 */
export const transformerTrainOptions = (s) => ({ batch: s.tfBatch, lr: s.tfLr });

/** The steps the task's defaults train (defaults.js): where its schedule ends and its headline is reached. */
export const defaultSteps = (s) => defaultsOf('transformer', { task: s.tfTask }).train.steps;

/** The ablated heads of a state, as the engine takes them. */
export const ablation = (s) => s.tfAblate.map(parseHead);

/**
 * The state after the engine's names are known: a task or position the engine
 * does not have goes back to its default. Returns the fields put back, with why.
 */
export function checkNames(s, names) {
  const reset = [];
  for (const [field, list, def] of [['tfTask', names.tasks, D.task], ['tfPositional', names.positional, D.positional]]) {
    if (!list.includes(s[field])) {
      reset.push({ name: field, reason: `'${s[field]}' is not one of ${list.join(', ')}` });
      s[field] = list.includes(def) ? def : list[0];
    }
  }
  return reset;
}

/** The playground's one-token-per-name rules: no control characters, < or > (those are shown as look-alikes). */
const TOKEN_LOOKS = { '\n': '↵', '\t': '⇥', ' ': '␣', '<': '‹', '>': '›', ',': '‚' };
const playgroundToken = (t) => (t in TOKEN_LOOKS ? TOKEN_LOOKS[t] : t).slice(0, 24);

/** The playground's embeddings are at most 64-d: one-hot tokens, so at most 64 tokens. */
export const PLAYGROUND_TOKENS = 64;
const round = (v) => Math.round(v * 100) / 100;

/**
 * The playground's self-attention state showing one head's weights exactly:
 * one-hot tokens (X = I, d = n), Wk = I and Wq = √n · log A, so the scaled dot
 * scores Q Kᵀ / √n are log A and the causal softmax of row i gives back A's row i
 * (a row sums to 1 over keys 0..i). Causal attention of the first n tokens reads
 * only those tokens, so a longer input is cut to its first PLAYGROUND_TOKENS exactly.
 * Weights below e^-20 are shown as e^-20 (the link holds numbers of at most 1000).
 * `from` says where the head came from, over the playground's figures (plain text,
 * short, without < or >: the playground's link refuses those).
 * Returns { hash, tokens, cut }.
 */
export function playgroundState(tokens, map, from = '') {
  const n = Math.min(tokens.length, PLAYGROUND_TOKENS);
  const eye = Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => (i === j ? 1 : 0)));
  const root = Math.sqrt(n);
  const wq = Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => (j > i ? 0 : round(root * Math.log(Math.max(map.data[i * map.cols + j], Math.exp(-20)))))));
  const names = tokens.slice(0, n).map(playgroundToken);
  const rows = (m) => m.map((r) => r.join(',')).join(';');
  const fields = {
    ver: 2, preset: 'self', tokens: names.map(encodeURIComponent).join(','), x: rows(eye), mode: 'self', score: 'scaled_dot',
    normalize: 'softmax', temperature: 1, mask: 'causal', trainable: true, heads: 1, head: 0, compare: 'none', wq: rows(wq), wk: rows(eye),
    ...(from ? { from: encodeURIComponent(from) } : {}),
  };
  return { hash: `#${Object.entries(fields).map(([k, v]) => `${k}=${v}`).join('&')}`, tokens: n, cut: tokens.length > n };
}
