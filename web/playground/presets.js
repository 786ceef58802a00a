// Starting points for the playground. Each preset gives tokens, embeddings and
// the options it is meant to be seen with; anything it omits keeps its default.
// Pure data and seeded generators; no DOM.
import { randomMatrix, round } from './rng.js';

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

const names = (n, prefix) => Array.from({ length: n }, (_, i) => `${prefix}${i + 1}`);

export const PRESETS = {
  tutorial: {
    label: '“Your journey starts with one step”',
    about: 'The tutorial’s six 3-d embeddings. Dot scores and softmax weights reproduce its printed numbers.',
    make: () => ({ tokens: [...TUTORIAL_TOKENS], x: TUTORIAL_X.map((r) => [...r]) }),
  },
  random: {
    label: 'Random vectors (seeded)',
    about: 'Eight 4-d vectors drawn uniformly from [−1, 1) with the data seed; change the seed for another draw.',
    make: (seed) => ({ tokens: names(8, 't'), x: randomMatrix(seed, 'x', 8, 4) }),
  },
  identical: {
    label: 'Identical keys',
    about: 'Every token has the same vector, so every score in a row is equal and each query spreads its weight evenly: α = 1/n.',
    make: () => ({ tokens: ['the', 'same', 'word', 'six', 'times', 'over'], x: Array.from({ length: 6 }, () => [0.6, 0.2, 0.4]) }),
  },
  dominant: {
    label: 'One dominant key',
    about: 'One key (“LOUD”) is much longer than the rest: its dot score dwarfs the others and softmax sends almost all weight to it. Try cosine or a higher temperature.',
    make: (seed) => {
      const x = randomMatrix(seed, 'x', 6, 3, { lo: 0, hi: 0.6 });
      x[3] = [2.5, 2.2, 2.8];
      return { tokens: ['a', 'quiet', 'room', 'LOUD', 'voice', 'here'], x };
    },
  },
  long: {
    label: 'Long sequence (64 tokens × 64 dims)',
    about: '64 random 64-d vectors with scaled dot-product scores: the size the live-update budget is measured at.',
    make: (seed) => ({
      tokens: names(64, 'w'),
      x: randomMatrix(seed, 'x', 64, 64).map((r) => r.map((v) => round(v, 2))),
      score: 'scaled_dot',
    }),
  },
};

export const PRESET_IDS = Object.keys(PRESETS);
