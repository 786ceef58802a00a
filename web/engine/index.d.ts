// Type declarations for attnlab's engine API (web/engine/index.js).

/** A row-major matrix as the engine returns it. */
export interface Matrix {
  rows: number;
  cols: number;
  data: Float32Array;
}

/** A matrix as the engine accepts it: nested arrays (rows) or a Matrix. */
export type MatrixInput = ArrayLike<number>[] | number[][] | { rows: number; cols: number; data: ArrayLike<number> };

/** A vector: an array, a typed array, or a one-row / one-column matrix. */
export type VectorInput = number[] | Float32Array | Float64Array | MatrixInput;

export type Score = 'dot' | 'scaled_dot' | 'general' | 'additive' | 'cosine' | 'location';
export type Normalize = 'softmax' | 'sum';
/** 'none', 'causal' (query i sees keys j <= i), or per-query key counts (query i sees keys j < keyLengths[i]). */
export type Mask = 'none' | 'causal' | { keyLengths: ArrayLike<number>; causal?: boolean };

export interface ScoreParams {
  /** general: d_q x d_k (e = qᵀ W k); location: n_k x d_q (e_i = W q_i). */
  W?: MatrixInput;
  /** additive: h x d_q (e = vᵀ tanh(Wq q + Wk k)). */
  Wq?: MatrixInput;
  /** additive: h x d_k. */
  Wk?: MatrixInput;
  /** additive: length h. */
  v?: VectorInput;
  /** cosine sharpening β (default 1): e = β q·k / (‖q‖ ‖k‖). */
  beta?: number;
}

export interface AttendOptions {
  queries: MatrixInput;
  keys: MatrixInput;
  /** Defaults to keys. */
  values?: MatrixInput;
  /** Default 'dot'. */
  score?: Score;
  params?: ScoreParams;
  /** Default 'softmax'; 'sum' is e_ij / Σ_j e_ij (a zero sum throws ERR_ZERO_SUM). */
  normalize?: Normalize;
  /** Softmax temperature τ > 0: softmax(e / τ). Default 1. */
  temperature?: number;
  /** Default 'none'. */
  mask?: Mask;
  /** Which results to return; default all three. ['context'] alone skips the n_q x n_k matrices (faster). */
  outputs?: Array<'scores' | 'weights' | 'context'>;
  /**
   * Default true: the results are the caller's own arrays. false: views of the engine's
   * memory (no copy, no garbage), valid only until the engine's next call.
   */
  copy?: boolean;
}

export interface AttendResult {
  /** e_ij (n_q x n_k); masked cells are -Infinity. Absent if not in `outputs`. */
  scores: Matrix;
  /** α_ij (n_q x n_k); rows sum to 1, or are all zero when every key is masked. Absent if not in `outputs`. */
  weights: Matrix;
  /** z_i = Σ_j α_ij v_j (n_q x d_v). Absent if not in `outputs`. */
  context: Matrix;
}

export interface SelfAttentionOptions {
  /** Token embeddings, n x d_in. */
  x: MatrixInput;
  /** d_in x d_k; omitted with wk: queries are x. */
  wq?: MatrixInput;
  /** d_in x d_k; omitted with wq: keys are x. */
  wk?: MatrixInput;
  /** d_in x d_v; omitted: values are x. */
  wv?: MatrixInput;
  /** d_v x d_out output projection; omitted: output is the context. */
  wo?: MatrixInput;
  /** Heads splitting d_k and d_v into contiguous column blocks. Default 1. */
  heads?: number;
  /** Query i sees tokens j <= i. Default false. */
  causal?: boolean;
  /** Default 'dot' without wq/wk (the tutorial's first example), else 'scaled_dot'. */
  score?: 'dot' | 'scaled_dot' | 'cosine';
}

export interface SelfAttentionResult {
  q: Matrix;
  k: Matrix;
  v: Matrix;
  /** One n x n matrix per head. */
  scores: Matrix[];
  /** One n x n matrix per head. */
  weights: Matrix[];
  /** Heads' contexts concatenated, n x d_v. */
  context: Matrix;
  /** context · Wo (or the context), n x d_out. */
  output: Matrix;
}

export type ErrorCode =
  | 'ERR_SHAPE'
  | 'ERR_VALUE'
  | 'ERR_ARG'
  | 'ERR_PARAM'
  | 'ERR_LIMIT'
  | 'ERR_ZERO_SUM'
  | 'ERR_NOMEM'
  | 'ERR_UNSUPPORTED'
  /** loadEngine could not fetch or compile a WASM build; openModel: an HTTP status or a network failure. */
  | 'ERR_LOAD'
  /** The digit set of the image models could not be loaded (web/data/mnist.bin.gz); openModel: a file's size or SHA-256 is not the hub's. */
  | 'ERR_DATA'
  /** openModel's signal aborted. */
  | 'ERR_ABORT'
  /** The lab worker itself failed (LabClient). */
  | 'ERR_WORKER'
  /** A WASM build that does not match this JS (rebuild with `make wasm`). */
  | 'ERR_INTERNAL';

/**
 * Every error the engine throws, whatever an argument holds (BigInt arrays,
 * Symbols, null-prototype objects, getters that throw): the message names the
 * argument and the problem.
 */
export class AttnlabError extends Error {
  code: ErrorCode;
}

/**
 * The core's limits, scores and normalisations with their codes: read from
 * the WASM build (its constants table) by the first loadEngine(), empty before.
 */
export const LIMITS: Readonly<{ maxTokens: number; maxDim: number; maxCells: number; maxHeads: number }>;
export const SCORES: Readonly<Record<Score, number>>;
export const NORMALIZATIONS: Readonly<Record<Normalize, number>>;

/** One loaded build of the engine (loadEngine() makes it; its methods are below and in the later blocks). */
export class Engine {
  /** true for the SIMD128 build, false for the scalar build. */
  readonly simd: boolean;
  /** the threads a call may use (1: a single-thread build) */
  readonly threads: number;
  /** why it runs on one thread when more were asked for (no SharedArrayBuffer, not cross-origin isolated, ...); null when threaded */
  readonly threadsReason: string | null;
  readonly limits: typeof LIMITS;
  attend(options: AttendOptions): AttendResult;
  selfAttention(options: SelfAttentionOptions): SelfAttentionResult;
  /** An encoder-decoder with attention bound to a task, trained in C. */
  createSeq2Seq(options: Seq2SeqOptions): Seq2SeqModel;
  /** A model saved with model.save(); a truncated or foreign file throws. */
  loadSeq2Seq(bytes: Uint8Array | ArrayBuffer): Seq2SeqModel;
  /** A CNN + attention reader of digits on an image task; loads the digit set on first use. */
  createVisionModel(options?: VisionOptions): Promise<VisionModel>;
  /** An image model saved with model.save(). */
  loadVisionModel(bytes: Uint8Array | ArrayBuffer): Promise<VisionModel>;
  /** Bytes allocated in the WASM heap (returns to its baseline between calls). */
  heapUsed(): number;
  /** Calls with fewer multiply-adds than `work` run on one thread (0: split every call). */
  setParallelMinWork(work: number): void;
  /** Stops the worker threads; the engine keeps working on one thread. */
  destroy(): void;
}

export type TaskName = 'copy' | 'reverse' | 'sort' | 'dates' | 'pairs';
export type CellName = 'rnn' | 'gru' | 'lstm';
export type Attention = Score | 'none';
export type SplitName = 'train' | 'validation' | 'valid' | 'test';

export interface Seq2SeqOptions {
  /** default 'reverse' */
  task?: TaskName;
  /** copy / reverse / sort: 'digits' (default) or 'letters' */
  alphabet?: 'digits' | 'letters';
  /** copy / reverse / sort input lengths, default 4..12 */
  minLength?: number;
  maxLength?: number;
  /** the 'pairs' task: lines "input<TAB>output" */
  pairs?: string;
  /** default 'gru' */
  cell?: CellName;
  /** encoder layers, 1 (default) or 2 */
  layers?: 1 | 2;
  bidirectional?: boolean;
  /** embedding size, default 16 (the lab's) */
  embed?: number;
  /** encoder hidden size per direction, default 64 */
  hidden?: number;
  /** scoring function of the decoder's attention, or 'none' (the bottleneck); default 'additive' */
  attention?: Attention;
  /** the additive score's hidden size (0: the encoder width) */
  attnHidden?: number;
  /** the batch the model's buffers are first sized for, default 64; train() grows them for a larger batch */
  batch?: number;
  /** initial weights and training draws, default 1 */
  seed?: number;
}

export interface TrainOptions {
  /** optimiser steps, default 1 */
  steps?: number;
  /** examples per step, default min(32, config.batch); up to SEQ2SEQ_LIMITS.maxBatch (the model's buffers grow as needed) */
  batch?: number;
  /** > 0; seq2seq default 0.005 (Adam) or 0.1 (SGD) */
  lr?: number;
  /** global gradient-norm clip, default 5; 0 = off */
  clip?: number;
  optimizer?: 'adam' | 'sgd';
  /**
   * the learning rate over the model's steps (every kind; one definition, opt_lr in src/layers/optim.c):
   * 'constant' (seq2seq and vision default) or 'cosine' from lr down to finalLr at the model's step
   * decaySteps (the transformer's default; the transformer takes no other)
   */
  schedule?: 'constant' | 'cosine';
  /** steps of linear warm-up to lr, counted from the model's first step; default 0 */
  warmup?: number;
  /** cosine: the model's step where the decay ends (flat after it); default 0: the end of this call */
  decaySteps?: number;
  /** cosine: the rate at decaySteps, 0..lr; default 0: lr / 10 (the transformer takes only 0) */
  finalLr?: number;
}

export interface TrainResult {
  /** mean of the steps' losses (cross-entropy per output token) */
  loss: number;
  losses: Float32Array;
  /** optimiser steps taken in total */
  steps: number;
  examples: number;
  seconds: number;
  examplesPerSecond: number;
  /** the kinds that count tokens (seq2seq, transformer) */
  tokensPerSecond?: number;
}

export interface EvaluateResult {
  loss: number;
  tokenAccuracy: number;
  sequenceAccuracy: number;
  count: number;
  split: string;
  /** sequence accuracy by input length (lengths that occurred) */
  byLength: { length: number; count: number; sequenceAccuracy: number }[];
}

export interface TranslateResult {
  output: string;
  inputTokens: string[];
  /** decoded symbols, ending with '</s>' when the model emitted EOS */
  outputTokens: string[];
  /** output steps x input tokens: attention weights */
  alignment: Matrix;
}

/**
 * What every model kind shares (web/engine/model.js): liveness (once destroyed, every
 * method throws ERR_ARG naming itself), the error guard on every public method (whatever
 * an argument holds, a thrown value is an AttnlabError with a code), and training, saving,
 * the step count and destroy through the kind's C exports.
 */
export class Model {
  /** Which kind of model this is. */
  readonly kind: 'seq2seq' | 'vision' | 'transformer';
  /** Optimiser steps taken so far. */
  readonly steps: number;
  /** Trains `steps` optimiser steps; the limits and defaults are the kind's (see its class). */
  train(options?: TrainOptions): TrainResult;
  /** The model back where the last train() call found it (weights, optimiser state, steps, draws); ERR_ARG before any call. */
  undoTrain(): void;
  /** The model in the versioned attnlab format (engine.loadModel reads it back). */
  save(): Uint8Array;
  /** Frees the model; calling it again does nothing. */
  destroy(): void;
}

export class Seq2SeqModel extends Model {
  readonly kind: 'seq2seq';
  readonly config: Readonly<Required<Omit<Seq2SeqOptions, 'pairs'>> & {
    inputVocabulary: number; outputVocabulary: number; maxInput: number; maxOutput: number;
    fixedInput: number; parameters: number;
  }>;
  readonly inputAlphabet: string;
  readonly outputAlphabet: string;
  evaluate(options?: { split?: SplitName; count?: number }): EvaluateResult;
  translate(text: string, options?: { beam?: number }): TranslateResult;
  /** implicit attention of the greedy translation: |d log p(output token `step`) / d input embedding| per input token */
  saliency(text: string, options?: { step?: number }): Seq2SeqSaliency;
  /** attention weights vs saliency over the input tokens, with Kendall's tau-b, per output step */
  compareAttention(text: string): { output: string; inputTokens: string[]; steps: { token: string; tau: number | null; attention: Matrix; saliency: Matrix }[] };
  examples(options?: { split?: SplitName; count?: number; seed?: number }): { input: string; output: string }[];
}

/** Saliency over the input tokens (1 x inputTokens.length) of one output step, beside that step's attention weights. */
export interface Seq2SeqSaliency extends Matrix {
  step: number;
  token: string;
  /** the attention weights of this step over the input tokens (zeros without attention) */
  attention: Matrix;
  /** Kendall's tau-b between attention and saliency; null for a model without attention */
  tau: number | null;
  output: string;
  inputTokens: string[];
  outputTokens: string[];
}

/** Limits of the seq2seq engine, read from the WASM build by the first loadEngine(). */
export const SEQ2SEQ_LIMITS: Readonly<{
  maxHidden: number; maxEmbed: number; maxBatch: number; maxBeam: number; maxLength: number;
  maxPairsBytes: number; maxSteps: number; maxEvaluate: number;
}>;

export type ImageTask = 'centered' | 'cluttered' | 'multi';

/** Every default is the table's (web/engine/defaults.js); the cluttered task on the grid takes its headline's. */
export interface VisionOptions {
  /** 'centered' 28x28, 'cluttered' 60x60 with clutter, 'multi' 2-3 digits on 40x100 (default 'cluttered'). */
  task?: ImageTask;
  /** cluttered: 8x8 pieces of other digits, 0..32 (default 4). */
  clutter?: number;
  /** multi: digits per image, a count or [min, max] in 1..3 (default [2, 3]). */
  digits?: number | [number, number];
  /** channels of the 1-3 conv layers (default [8, 16, 32]; cluttered on the grid [16, 32, 32]). */
  channels?: number[];
  cell?: CellName;
  /** decoder state and key/value size (default 32; cluttered on the grid 64). */
  hidden?: number;
  /** the scoring function, or 'none' for global average pooling (default 'scaled_dot'; cluttered on the grid 'dot'). */
  attention?: Attention;
  mode?: 'soft' | 'hard';
  /** decoder steps: glimpses for one-digit tasks (default 1; cluttered hard on the grid 2; the retina 6); multi: max digits + 1. */
  steps?: number;
  /** hard mode's entropy bonus (default 0.01). */
  entropy?: number;
  /** largest training batch (default 32). */
  batch?: number;
  seed?: number;
}

export interface ImageInput {
  rows: number;
  cols: number;
  /** greys in [0, 1], row-major */
  data: ArrayLike<number>;
}

export interface VisionStep {
  /** '0'-'9' or '</s>' (the end of a multi-digit answer) */
  token: string;
  /** attention weights over the feature grid */
  weights: Matrix;
  /** hard mode: the attended cell and its box on the canvas (pixels) */
  location: { cell: number; row: number; col: number; box: { top: number; left: number; height: number; width: number } } | null;
}

export class VisionModel extends Model {
  readonly kind: 'vision';
  readonly config: Readonly<{
    task: ImageTask; clutter: number; digits: [number, number]; channels: number[]; cell: CellName; hidden: number;
    attention: Attention; mode: 'soft' | 'hard'; steps: number; batch: number; seed: number; entropy: number;
    parameters: number; canvas: { rows: number; cols: number }; grid: { rows: number; cols: number };
  }>;
  /** batch: default and at most config.batch; every other default is the table's (web/engine/defaults.js: lr 0.002 (Adam) or 0.05 (SGD), on the cluttered grid 3,500 steps warming up to 0.005, then a cosine; hard 4,000); no tokensPerSecond. */
  train(options?: TrainOptions & {
    /** hard mode: the share of images reading the expected context, 0..1, or { share, hold, end }: the share until `hold` of the schedule's steps (decaySteps), falling to 0 at `end` of them (fractions 0..1); default: the table's (hard mode on the cluttered task's grid: { share: 1, hold: 0.5, end: 0.8 }; else 0) */
    softMix?: number | { share?: number; hold?: number; end?: number };
  }):
    Omit<TrainResult, 'tokensPerSecond'>;
  evaluate(options?: { split?: 'train' | 'test'; count?: number }): { loss: number; accuracy: number; sequenceAccuracy: number; count: number; split: string };
  predict(image: ImageInput): { output: string; tokens: string[]; canvas: Matrix; steps: VisionStep[] };
  saliency(image: ImageInput, options?: { step?: number }): Matrix;
  /** attention weights vs |saliency| summed per grid cell, with Kendall's tau-b, per step */
  compareAttention(image: ImageInput): { output: string; steps: { token: string; tau: number; attention: Matrix; saliency: Matrix }[] };
  examples(options?: { split?: 'train' | 'test'; count?: number; seed?: number }): { image: Matrix; labels: string[] }[];
}

/** Kendall's rank correlation tau-b of two equal-length arrays. */
export function kendallTau(a: ArrayLike<number>, b: ArrayLike<number>): number;

/**
 * How far an attention map and a saliency map (compared by magnitude) agree: the most-attended
 * cell is the most salient (topMatch), the share of saliency in the k most-attended cells, the
 * overlap of both top k, Kendall's tau-b over the cells where either is at least `floor` x its
 * largest (null with fewer than 3 such cells).
 */
export function agreement(attention: ArrayLike<number>, saliency: ArrayLike<number>, options?: { k?: number; floor?: number }): {
  topMatch: boolean; saliencyInTopK: number; topKOverlap: number; tauActive: number | null; active: number; k: number; n: number;
};

/** The Wilson score interval of `successes` out of `n` trials at z (default 1.96: 95%), inside [0, 1]. */
export function wilson(successes: number, n: number, z?: number): { p: number; lo: number; hi: number; n: number };

export const VISION_LIMITS: Readonly<{
  maxLayers: number; maxChannels: number; maxHidden: number; maxSteps: number; maxBatch: number; maxClutter: number;
  maxImage: number; maxDigits: number; tokens: number;
  /** The token id that ends a multi-digit answer. */
  endToken: number; maxTrainSteps: number; maxEvaluate: number;
}>;

export interface LoadOptions {
  /** true: the SIMD build (default where supported); false: the scalar build. */
  simd?: boolean;
  /** worker threads sharing one memory: a number, or 'auto' (default: the hardware's, at most 8); falls back to one thread and says why */
  threads?: number | 'auto';
}

export function loadEngine(options?: LoadOptions): Promise<Engine>;

export type TransformerTask = 'induction' | 'copy' | 'reverse' | 'sort' | 'modular' | 'text' | 'dates' | 'names';
/** Positions: learned vectors, Vaswani's sines, rotary (RoPE), ALiBi's linear biases, or none (order from the causal mask only). */
export type Positional = 'learned' | 'sinusoidal' | 'rope' | 'alibi' | 'none';

export interface TransformerOptions {
  /** default 'induction'; 'text' needs `text` */
  task?: TransformerTask;
  /** the 'text' task's text (character level) */
  text?: string;
  /** 1..8 (default 2) */
  layers?: number;
  /** 1..16, divides dModel (default 4) */
  heads?: number;
  /** 1..512 (default 64) */
  dModel?: number;
  /** MLP width, 0 = attention only (default 4 dModel, at most 2048) */
  dFF?: number;
  /** longest sequence, 8..256 (default 64) */
  context?: number;
  /** default 'learned' ('rope' for 'induction'); 'alibi': m_h = 2^(-8 (h + 1) / heads); 'rope': pairs (2i, 2i + 1) turned by t·θᵢ */
  positional?: Positional;
  score?: 'scaled_dot' | 'dot' | 'cosine';
  /** sequences per step, 1..256 (default 32) */
  batch?: number;
  seed?: number;
}

export interface HeadRef { layer: number; head: number }

/** A transformer's input: a text (its tokenizer reads it), token ids, or { ids }. */
export type TransformerInput = string | ArrayLike<number> | { ids: ArrayLike<number> };

/**
 * A decoder-only transformer, whichever made it: one trained here (createTransformer, a saved
 * .tfm; architecture 'attnlab') or a Hugging Face checkpoint (loadModel(bytes, { config });
 * 'gpt2' or 'gpt_neox'). Every method gives one shape for every architecture; what one lacks
 * (a checkpoint's train, save, examples, weights; the logits of one made here) throws ERR_ARG
 * saying why.
 */
export class TransformerModel extends Model {
  readonly kind: 'transformer';
  readonly config: Readonly<{
    architecture: 'attnlab' | 'gpt2' | 'gpt_neox';
    /** null for a checkpoint */
    task: TransformerTask | null;
    layers: number; heads: number; dModel: number; dFF: number; context: number;
    /** a checkpoint: 'learned' (GPT-2) or 'rope' (GPT-NeoX's rotate-half over a fraction of each head) */
    positional: Positional;
    score: 'scaled_dot' | 'dot' | 'cosine';
    /** null for a checkpoint */
    batch: number | null; seed: number | null;
    /** token id -> its text (a checkpoint's id its tokenizer lacks: "<id>") */
    vocabulary: readonly string[];
    /** length of the task's sequences (null for a checkpoint) */
    sequenceLength: number | null;
    parameters: number;
    /** the weights as the file held them ('float32' for a model made here) */
    dtype: 'float32' | 'float16' | 'bfloat16';
  }>;
  /** config.vocabulary */
  readonly vocabulary: readonly string[];
  /**
   * AdamW (lr default 0.003, clip 1) on the cosine schedule (TrainOptions) to lr / 10; weightDecay default 0.
   * A checkpoint fine-tunes on `text` or `ids` (one of the two, at most GPT2_LIMITS.maxTrainTokens tokens): each
   * step on `batch` (default 4) windows of `length` + 1 tokens (default min(64, context)) drawn from it, by
   * default 20 steps at a constant lr 1e-4; ERR_LIMIT before anything is allocated when its weights, gradients,
   * moments and snapshot would pass GPT2_LIMITS.maxTrainMB.
   */
  train(options?: Omit<TrainOptions, 'optimizer'> & { weightDecay?: number; text?: string; ids?: ArrayLike<number>; length?: number }): TrainResult;
  /** The text as this model reads it (a checkpoint: its byte-level BPE; a model made here: its task's tokens). */
  tokenize(text: string): { ids: Int32Array; tokens: string[] };
  /**
   * Mean loss, `ablate`'s heads zeroed, on a task's split (a model made here: accuracy over the
   * scored positions) or on a text (a checkpoint: nats per predicted token; tokens: the input's
   * length - 1).
   */
  evaluate(options?: { split?: 'train' | 'test'; count?: number; ablate?: HeadRef[] }): { loss: number; accuracy: number; count: number };
  evaluate(options: { text?: string; ids?: ArrayLike<number>; ablate?: HeadRef[] }): { loss: number; tokens: number };
  /** a model made here: sequences of its task; a checkpoint: ERR_ARG */
  examples(options?: { split?: 'train' | 'test'; count?: number; seed?: number }): { input: string; target: string }[];
  /** the continuation of the prompt; temperature 0 = greedy, topK 0 = all */
  generate(prompt: TransformerInput, options?: { tokens?: number; temperature?: number; topK?: number; seed?: number }):
    { text: string; tokens: string[]; ids: Int32Array };
  /**
   * One forward pass; every result is a copy. `lens` default true for a model made here, false for a
   * checkpoint; `logits` a checkpoint's only (ERR_ARG for one made here).
   */
  inspect(input: TransformerInput, options?: { ablate?: HeadRef[]; lens?: boolean; logits?: boolean }): {
    tokens: string[];
    ids: Int32Array;
    /** [layer][head] */
    attention: Matrix[][];
    /** [position]: the 5 likeliest next tokens */
    predictions: { token: string; id: number; p: number }[][];
    /** [layer][position]: the top token of that layer's residual stream read through the final LayerNorm and output layer */
    lens?: string[][];
    /** (tokens x vocabulary) */
    logits?: Matrix;
  };
  /**
   * [layer][head], over `count` sequences that repeat random tokens (default 64 of the task's for a
   * model made here; 8 for a checkpoint, which draws `length` (default 50, at most half the context)
   * distinct tokens from `seed`; length and seed are a checkpoint's only)
   */
  headScores(options?: { count?: number; length?: number; seed?: number }): { previousToken: number; induction: number }[][];
  /**
   * composition scores of every pair of heads (weights only; TransformerLens's conventions): each
   * (layers·heads) x (layers·heads), row l·heads + h the earlier head, column the later, 0 unless the row's
   * layer is earlier; ln_1's gain folded into W_Q, W_K, W_V, biases and rotations ignored. q =
   * |W_OV,i W_QK,j| / (|W_OV,i| |W_QK,j|), k the same with W_QK,jᵀ, v = |W_OV,i W_OV,j| / (|W_OV,i| |W_OV,j|)
   */
  compositionScores(): { q: Matrix; k: Matrix; v: Matrix };
  /** (layers x heads): Σλ / Σ|λ| over the eigenvalues of each head's full OV circuit W_E W_OV diag(γ_f) W_U */
  copyingScores(): Matrix;
  /**
   * direct logit attribution of logit[a] − logit[b] at the last position (TransformerLens's conventions): 'embed',
   * 'pos' (learned or sinusoidal), 'L{l}H{h}', 'L{l}.attn_bias', 'L{l}.mlp', 'ln_f.bias', 'unembed.bias' (made here);
   * each component through ln_f with the final residual's σ; the values add up to logitDiff
   */
  logitAttribution(args: { ids?: number[] | Int32Array; text?: string; answer: [number | string, number | string] }): {
    logitDiff: number;
    components: { name: string; value: number }[];
  };
  /**
   * activation patching (TransformerLens's conventions): m = logit[a] − logit[b] at the last position; each cell the
   * corrupt run with one clean activation put back, (m_patched − m_corrupt) / (m_clean − m_corrupt). 'resid', 'attn',
   * 'mlp': layers x positions; 'heads', 'head-values', 'head-patterns': layers x heads. method 'attribution': the
   * first-order estimate through one backward pass (every transformer; not patterns)
   */
  patch(args: {
    clean: string | number[] | Int32Array | { ids: number[] | Int32Array };
    corrupt: string | number[] | Int32Array | { ids: number[] | Int32Array };
    answer: [number | string, number | string];
    target: 'resid' | 'attn' | 'mlp' | 'heads' | 'head-values' | 'head-patterns';
    method?: 'exact' | 'attribution';
  }): { target: string; method: 'exact' | 'attribution'; rows: number; cols: number; data: Float32Array; clean: number; corrupt: number };
  /** every tensor's weights by name ('wte', 'wpe', 'h0.qkv_w', ...); a checkpoint: ERR_ARG */
  weights(): Record<string, Float32Array>;
  /** a checkpoint: ERR_ARG */
  setWeights(values: Record<string, ArrayLike<number>>): void;
  /**
   * a model made here as a Hugging Face checkpoint: model.safetensors' bytes, config.json's object (GPT-2's
   * layout, or GPT-NeoX's for RoPE) and the token texts; ALiBi, 'cosine': ERR_ARG; an output bias that does
   * not fold into ln_f (vocabulary > dModel): ERR_VALUE; a checkpoint: ERR_ARG
   */
  exportCheckpoint(): { safetensors: Uint8Array; config: Record<string, unknown>; vocabulary: string[] };
}

export interface Engine {
  createTransformer(options?: TransformerOptions): Promise<TransformerModel>;
}

/** config.json of a GPT-2-family checkpoint, as Hugging Face writes it (other fields are ignored). */
export interface Gpt2ConfigJson {
  n_layer: number; n_head: number; n_embd: number;
  /** the positions (wpe's rows); n_ctx is taken when it is absent, and must agree when both are there */
  n_positions?: number; n_ctx?: number;
  vocab_size: number;
  /** default 1e-5 */
  layer_norm_epsilon?: number;
  /** 'gelu_new' (the default); any other is refused by name */
  activation_function?: string;
  /** null or absent: 4 n_embd */
  n_inner?: number | null;
  /** 'gpt2' if given */
  model_type?: 'gpt2';
}

/** config.json of a GPT-NeoX checkpoint (Pythia), as Hugging Face writes it. */
export interface NeoxConfigJson {
  model_type: 'gpt_neox';
  hidden_size: number; num_attention_heads: number; num_hidden_layers: number; max_position_embeddings: number; vocab_size: number;
  /** default 4 hidden_size */
  intermediate_size?: number;
  /** the fraction of each head's dimensions turned (0, 1]; default 0.25 */
  rotary_pct?: number;
  /** default 10000 */
  rotary_emb_base?: number;
  /** default 1e-5 */
  layer_norm_eps?: number;
  /** default true: x + attn(ln1 x) + mlp(ln2 x) */
  use_parallel_residual?: boolean;
  /** 'gelu' (exact, the default) or 'gelu_new' | 'gelu_fast' | 'gelu_pytorch_tanh' (the tanh form) */
  hidden_act?: string;
  tie_word_embeddings?: boolean;
  attention_bias?: true;
}

/** A byte-level BPE tokenizer (GPT-2's built-in one, or a tokenizer.json read by readTokenizerJson). */
export interface Tokenizer {
  /** the ids it knows (0..vocabulary - 1) */
  readonly vocabulary: number;
  /** the id of <|endoftext|>, or -1 */
  readonly endOfText: number;
  /** at most MAX_TOKENIZE_CHARS characters (ERR_LIMIT past it, before any work) */
  encode(text: string): { ids: Int32Array; tokens: string[] };
  /** the tokens' bytes joined and read as UTF-8 */
  decode(ids: ArrayLike<number>): string;
  /** one token's text as encode() shows it */
  token(id: number): string;
}

/** tokenizer.json as it may be given: its text, its UTF-8 bytes, or the parsed object. */
export type TokenizerJson = string | Uint8Array | object;

/**
 * A Hugging Face tokenizer.json as a Tokenizer: model BPE (vocab, merges), pre-tokenizer and decoder
 * ByteLevel, normalizer none or NFC/NFD/NFKC/NFKD, added tokens. Anything else is ERR_VALUE naming the
 * field; past a limit (MAX_TOKENIZER_JSON, MAX_VOCAB, MAX_ADDED_TOKENS) ERR_LIMIT; a wrong type ERR_ARG.
 */
export function readTokenizerJson(json: TokenizerJson): Tokenizer;
/** The longest text a tokenizer encodes (UTF-16 code units). */
export const MAX_TOKENIZE_CHARS: number;
/** The largest tokenizer.json read (characters of its text, or bytes). */
export const MAX_TOKENIZER_JSON: number;
/** The most entries of a tokenizer.json's vocab (and of its merges). */
export const MAX_VOCAB: number;
/** The most added tokens of a tokenizer.json. */
export const MAX_ADDED_TOKENS: number;

/** Limits of checkpoints, from the core (filled by the first loadEngine()). */
export const GPT2_LIMITS: Readonly<{
  maxLayers: number; maxHeads: number; maxDModel: number; maxDFF: number; maxContext: number; maxVocabulary: number;
  /** the weights as float32, in MB */
  maxWeightMB: number;
  /** a safetensors header's bytes */
  maxHeader: number;
  /** inspect's predictions per position */
  top: number;
  /** headScores' count */
  maxEvaluate: number;
  /** generate's tokens */
  maxGenerate: number;
  /** inspect's results, in MB */
  maxResultMB: number;
}>;

export interface Engine {
  /**
   * The model a saved file holds, whichever its kind (its format tag picks the loader):
   * `model.kind` says which. Junk, a truncated file or a file that is no model rejects
   * with ERR_VALUE; anything but a Uint8Array or an ArrayBuffer with ERR_ARG.
   */
  loadModel(bytes: Uint8Array | ArrayBuffer): Promise<Seq2SeqModel | VisionModel | TransformerModel>;
  /**
   * A Hugging Face checkpoint, GPT-2 or GPT-NeoX: `bytes` a model.safetensors (F32, F16 or BF16),
   * `config` its config.json (an object or its text), `tokenizer` its tokenizer.json (default:
   * GPT-2's tokenizer). Every tensor is checked against the config before the weights are
   * allocated; each failure an AttnlabError naming the tensor or field. `onProgress(fraction)`
   * hears how much of the data is in. A TransformerModel whose config.architecture is 'gpt2' or 'gpt_neox'.
   */
  loadModel(bytes: Uint8Array | ArrayBuffer, options: {
    config: Gpt2ConfigJson | NeoxConfigJson | string;
    tokenizer?: TokenizerJson;
    onProgress?: (fraction: number) => void;
  }): Promise<TransformerModel>;
  /**
   * A GPT-2 or GPT-NeoX checkpoint opened from a hub: `repo` 'owner/name' (checked strictly,
   * ERR_ARG). Fetches `${hub}/${repo}/resolve/${revision}/config.json`, model.safetensors and
   * tokenizer.json (404: the repo has none), the weights streamed into the engine as they
   * arrive; their size and SHA-256 checked against X-Linked-Size and X-Linked-Etag (in a browser,
   * which cannot read a cross-origin redirect's headers, the hub API's model info) (ERR_DATA); a
   * dropped connection resumed by Range up to 3 times; HTTP and network failures ERR_LOAD (with
   * `.url` and `.status`); an aborted signal ERR_ABORT. The model loadModel gives for the same
   * files, with `model.source` saying where it came from. See docs/api.md.
   */
  openModel(repo: string, options?: OpenModelOptions): Promise<TransformerModel & { readonly source: ModelSource }>;
  /** The models openModel kept: in `cache` (a directory, Node), else the browser's Cache Storage; storage that refuses: ERR_DATA. */
  keptModels(options?: { cache?: string | false }): Promise<KeptModel[]>;
  /** Removes a kept model: one revision, or every revision when it is undefined. Resolves to the revisions removed. */
  forgetModel(repo: string, revision?: string, options?: { cache?: string | false }): Promise<number>;
}

export interface OpenModelOptions {
  /** Default 'https://huggingface.co'; any base answering `${hub}/${repo}/resolve/${revision}/${file}`; relative to the page (in Node: a URL, or a directory). */
  hub?: string;
  /** A branch, tag or commit (one path segment): default 'main'; Pythia's 'step1000' ... 'step143000'. */
  revision?: string;
  /** At least once a second while bytes arrive, and as each file starts and ends. */
  onProgress?: (progress: OpenModelProgress) => void;
  /** Aborting rejects with ERR_ABORT; nothing is kept. */
  signal?: AbortSignal;
  /** Where files are kept: a directory (Node only); false: nowhere. Default: Cache Storage in a browser, nowhere in Node. */
  cache?: string | false;
}

export interface OpenModelProgress {
  file: 'config.json' | 'tokenizer.json' | 'model.safetensors';
  loaded: number;
  /** null while the server has not said the size. */
  total: number | null;
  /** true: read from what is kept, not the network. */
  kept?: true;
  /** Storage refused the file (full, or not allowed): the model still opens, nothing of it is kept. */
  keepError?: string;
}

export interface ModelFile {
  size: number;
  /** SHA-256 of the bytes, 64 hex digits. */
  sha256: string;
  from: 'network' | 'kept';
}

export interface ModelSource {
  hub: string;
  repo: string;
  revision: string;
  /** The commit the hub named (X-Repo-Commit), or null. */
  commit: string | null;
  /** null: the repo has no such file (tokenizer.json: GPT-2's tokenizer is used). */
  files: Readonly<Record<'config.json' | 'tokenizer.json' | 'model.safetensors', Readonly<ModelFile> | null>>;
  /** Whether the files are kept (read from what is kept, or kept by this open). */
  kept: boolean;
  /** Why storage refused them, or null. */
  keepError: string | null;
}

export interface KeptModel {
  repo: string;
  revision: string;
  commit: string | null;
  files: Readonly<Record<string, { size: number; sha256: string } | null>>;
  /** Bytes the kept files take. */
  bytes: number;
}

/**
 * How large a checkpoint's weights are, as the hub reports them, before anything is fetched: one HEAD
 * of `${hub}/${repo}/resolve/${revision}/model.safetensors` (else pytorch_model.bin), its X-Linked-Size
 * where the hub's redirect is visible, else the file store's Content-Length. `bytes` null: the server
 * said no size. Needs no engine. ERR_ARG as openModel's arguments; ERR_LOAD (`.url`, `.status`) when
 * neither file is there or the hub cannot be reached; ERR_ABORT when `signal` aborts.
 */
export function modelSize(repo: string, options?: { hub?: string; revision?: string; signal?: AbortSignal }): Promise<{ file: 'model.safetensors' | 'pytorch_model.bin'; bytes: number | null }>;
