// Starting points for the playground. A preset is a whole state: its tokens and
// embeddings (seeded generators) and every option its description promises
// (mode, score, normalisation, temperature, mask, heads, ...); options it does not
// name take the base values below. `name` is how the page refers to it once edited
// (“changed from the preset …”). Pure data; no DOM.
import { randomMatrix, round } from './rng.js';

/** The options every preset starts from (and the default state's). */
export const BASE_OPTIONS = Object.freeze({
  mode: 'attend', score: 'dot', normalize: 'softmax', temperature: 1, mask: 'none', padLength: 4,
  heads: 1, head: 0, trainable: true, compare: 'none', hidden: 4, beta: 1, lock: false, paramSeed: 1, px: 0, py: 1,
});

// 002_8a2a632f6ebc2950.txt, "Simple self-attention mechanism without trainable weights".
const TUTORIAL_TOKENS = ['Your', 'journey', 'starts', 'with', 'one', 'step'];
const TUTORIAL_X = [
  [0.43, 0.15, 0.89], // Your     (x^1)
  [0.22, 0.58, 0.33], // journey  (x^2)
  [0.77, 0.25, 0.10], // starts   (x^3)
  [0.05, 0.80, 0.55], // with     (x^4)
  [0.57, 0.85, 0.64], // one      (x^5)
  [0.55, 0.87, 0.66], // step     (x^6)
];
const tutorial = () => ({ tokens: [...TUTORIAL_TOKENS], x: TUTORIAL_X.map((r) => [...r]) });

const names = (n, prefix) => Array.from({ length: n }, (_, i) => `${prefix}${i + 1}`);

export const PRESETS = {
  tutorial: {
    name: '“Tutorial”',
    label: 'Tutorial: “Your journey starts…”',
    about: 'The tutorial’s six 3-d embeddings with dot scores and softmax: the weights reproduce its printed numbers.',
    make: tutorial,
    options: {},
  },
  self: {
    name: '“Self-attention, 2 heads”',
    label: 'Self-attention, 2 heads',
    about: 'Eight 4-d vectors through trainable projections Q = XWq, K = XWk, V = XWv, split into h = 2 heads of scaled dot-product attention, then Wo.',
    make: (seed) => ({ tokens: names(8, 't'), x: randomMatrix(seed, 'x', 8, 4) }),
    options: { mode: 'self', score: 'scaled_dot', heads: 2 },
  },
  causal: {
    name: '“Causal mask”',
    label: 'Causal mask (a decoder)',
    about: 'The tutorial’s tokens with a causal mask: query i sees keys 0…i only (positions from 0), as a decoder that must not read ahead.',
    make: tutorial,
    options: { mask: 'causal' },
  },
  padding: {
    name: '“Padding mask”',
    label: 'Padding mask (keys 0…L − 1)',
    about: 'The tutorial’s tokens with a padding mask of length L = 4: keys 5 and 6 are padding, so every query ignores them.',
    make: tutorial,
    options: { mask: 'padding', padLength: 4 },
  },
  mixed: {
    name: '“Mixed-sign scores”',
    label: 'Mixed-sign scores, naive sum',
    about: 'Vectors with negative entries normalised by e / Σe: with scores of both signs the “weights” leave [0, 1]. Switch to softmax to see why it is used.',
    make: (seed) => ({ tokens: names(6, 't'), x: randomMatrix(seed, 'x', 6, 3) }),
    options: { normalize: 'sum' },
  },
  random: {
    name: '“Random vectors”',
    label: 'Random vectors (seeded)',
    about: 'Eight 4-d vectors drawn uniformly from [−1, 1) with the data seed; change the seed for another draw.',
    make: (seed) => ({ tokens: names(8, 't'), x: randomMatrix(seed, 'x', 8, 4) }),
    options: {},
  },
  identical: {
    name: '“Identical keys”',
    label: 'Identical keys',
    about: 'Every token has the same vector, so every score in a row is equal and each query spreads its weight evenly: α = 1/n.',
    make: () => ({ tokens: ['the', 'same', 'word', 'six', 'times', 'over'], x: Array.from({ length: 6 }, () => [0.6, 0.2, 0.4]) }),
    options: {},
  },
  dominant: {
    name: '“One dominant key”',
    label: 'One dominant key',
    about: 'One key (“LOUD”) is much longer than the rest: its dot score dwarfs the others and softmax sends almost all weight to it. Try cosine or a higher temperature.',
    make: (seed) => {
      const x = randomMatrix(seed, 'x', 6, 3, { lo: 0, hi: 0.6 });
      x[3] = [2.5, 2.2, 2.8];
      return { tokens: ['a', 'quiet', 'room', 'LOUD', 'voice', 'here'], x };
    },
    options: {},
  },
  long: {
    name: '“Long sequence”',
    label: 'Long sequence (64 × 64)',
    about: '64 random 64-d vectors with scaled dot-product scores: the size the live-update budget is measured at.',
    make: (seed) => ({
      tokens: names(64, 'w'),
      x: randomMatrix(seed, 'x', 64, 64).map((r) => r.map((v) => round(v, 2))),
    }),
    options: { score: 'scaled_dot' },
  },
};

export const PRESET_IDS = Object.keys(PRESETS);

/** The options of preset `id`: the base values with the preset's own on top. */
export const presetOptions = (id) => ({ ...BASE_OPTIONS, ...PRESETS[id].options });
