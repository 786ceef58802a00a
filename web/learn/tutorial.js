// The tutorial's example (the notebook "Why we need Attention mechanism", "Simple self-attention
// mechanism without trainable weights"): six tokens with 3-d embeddings.
export const TOKENS = ['Your', 'journey', 'starts', 'with', 'one', 'step'];
export const X = [
  [0.43, 0.15, 0.89],
  [0.22, 0.58, 0.33],
  [0.77, 0.25, 0.10],
  [0.05, 0.80, 0.55],
  [0.57, 0.85, 0.64],
  [0.55, 0.87, 0.66],
];
export const copyX = () => X.map((r) => [...r]);
export const JOURNEY = 1;
