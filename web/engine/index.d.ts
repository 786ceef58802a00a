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
  /** loadEngine could not fetch or compile a WASM build. */
  | 'ERR_LOAD'
  /** The digit set of the image models could not be loaded (web/data/mnist.bin.gz). */
  | 'ERR_DATA'
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

export interface Engine {
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
  /**
   * The model a saved file holds, whichever its kind (its format tag picks the loader):
   * `model.kind` says which. Junk, a truncated file or a file that is no model rejects
   * with ERR_VALUE; anything but a Uint8Array or an ArrayBuffer with ERR_ARG.
   */
  loadModel(bytes: Uint8Array | ArrayBuffer): Promise<Seq2SeqModel | VisionModel | TransformerModel>;
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
  tokensPerSecond: number;
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
  readonly kind: 'seq2seq' | 'vision';
  /** Optimiser steps taken so far. */
  readonly steps: number;
  /** Trains `steps` optimiser steps; the limits and defaults are the kind's (see its class). */
  train(options?: TrainOptions): TrainResult;
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
  /** 'alibi': Press et al.'s linear biases on the scores, m_h = 2^(-8 (h + 1) / heads) */
  positional?: 'learned' | 'sinusoidal' | 'none' | 'alibi';
  score?: 'scaled_dot' | 'dot' | 'cosine';
  /** sequences per step, 1..256 (default 32) */
  batch?: number;
  seed?: number;
}

export interface HeadRef { layer: number; head: number }

export class TransformerModel {
  readonly config: Readonly<{
    task: TransformerTask; layers: number; heads: number; dModel: number; dFF: number; context: number;
    positional: string; score: string; batch: number; seed: number;
    /** token id -> its text */
    vocabulary: readonly string[];
    /** length of the task's sequences */
    sequenceLength: number; parameters: number;
  }>;
  readonly steps: number;
  /** AdamW (lr default 0.003, clip 1) on the cosine schedule (TrainOptions) to lr / 10; weightDecay default 0. */
  train(options?: Omit<TrainOptions, 'optimizer'> & { weightDecay?: number }):
    { loss: number; losses: Float32Array; steps: number; seconds: number; tokensPerSecond: number };
  /** accuracy over the task's scored positions */
  evaluate(options?: { split?: 'train' | 'test'; count?: number; ablate?: HeadRef[] }): { loss: number; accuracy: number; count: number };
  examples(options?: { split?: 'train' | 'test'; count?: number; seed?: number }): { input: string; target: string }[];
  /** the continuation of the prompt */
  generate(prompt: string | number[], options?: { tokens?: number; temperature?: number; topK?: number; seed?: number }): { text: string; tokens: string[] };
  inspect(input: string | number[], options?: { ablate?: HeadRef[] }): {
    tokens: string[];
    /** [layer][head] */
    attention: Matrix[][];
    /** [position]: the 5 likeliest next tokens */
    predictions: { token: string; p: number }[][];
    /** [layer][position]: the top token of that layer's residual stream read through the final LayerNorm and output layer */
    lens: string[][];
  };
  /** [layer][head] */
  headScores(options?: { count?: number }): { previousToken: number; induction: number }[][];
  /** every tensor's weights by name ('wte', 'wpe', 'h0.qkv_w', ...) */
  weights(): Record<string, Float32Array>;
  setWeights(values: Record<string, ArrayLike<number>>): void;
  destroy(): void;
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
  model_type?: string;
}

/** A GPT-2-family checkpoint (engine.loadModel(bytes, { config })), forward only. */
export class Gpt2Model {
  readonly kind: 'gpt2';
  readonly config: Readonly<{
    layers: number; heads: number; dModel: number; dFF: number; context: number; vocabulary: number; parameters: number;
    /** the file's */
    dtype: 'float32' | 'float16' | 'bfloat16';
  }>;
  /** GPT-2's byte-level BPE */
  tokenize(text: string): { ids: Int32Array; tokens: string[] };
  inspect(input: string | { ids: ArrayLike<number> }, options?: { ablate?: HeadRef[]; lens?: boolean; logits?: boolean }): {
    tokens: string[];
    /** [layer][head] */
    attention: Matrix[][];
    /** [position]: the 5 likeliest next tokens */
    predictions: { token: string; id: number; p: number }[][];
    /** [layer][position]: the top token of that block's output read through the final LayerNorm and the unembedding */
    lens?: string[][];
    /** (tokens x vocabulary) */
    logits?: Matrix;
  };
  /** loss: nats per predicted token; tokens: the predictions counted (the input's length - 1) */
  evaluate(options: { text?: string; ids?: ArrayLike<number>; ablate?: HeadRef[] }): { loss: number; tokens: number };
  /** the continuation; temperature 0 = greedy, topK 0 = all */
  generate(prompt: string | { ids: ArrayLike<number> }, options?: { tokens?: number; temperature?: number; topK?: number; seed?: number }): { text: string; ids: Int32Array };
  /** [layer][head], over `count` (default 8) sequences of `length` (default 50) random tokens repeated once */
  headScores(options?: { count?: number; length?: number; seed?: number }): { previousToken: number; induction: number }[][];
  /** throws ERR_ARG: a checkpoint is not trained */
  train(): never;
  /** throws ERR_ARG: its model.safetensors is the file */
  save(): never;
  destroy(): void;
}

export interface Engine {
  /**
   * A GPT-2-family checkpoint: `bytes` a model.safetensors (F32, F16 or BF16), `config` its
   * config.json (an object or its text). Every tensor is checked against the config before the
   * weights are allocated; each failure an AttnlabError naming the tensor or field.
   * `onProgress(fraction)` hears how much of the data is in.
   */
  loadModel(bytes: Uint8Array | ArrayBuffer, options: { config: Gpt2ConfigJson | string; onProgress?: (fraction: number) => void }): Promise<Gpt2Model>;
}
