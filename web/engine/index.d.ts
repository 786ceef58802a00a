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
  | 'ERR_UNSUPPORTED';

/** Every error the engine throws: the message names the argument and the problem. */
export class AttnlabError extends Error {
  code: ErrorCode;
}

export const LIMITS: Readonly<{ maxTokens: number; maxDim: number; maxCells: number; maxHeads: number }>;
export const SCORES: Readonly<Record<Score, number>>;
export const NORMALIZATIONS: Readonly<Record<Normalize, number>>;

export interface Engine {
  /** true for the SIMD128 build, false for the scalar build. */
  readonly simd: boolean;
  readonly limits: typeof LIMITS;
  attend(options: AttendOptions): AttendResult;
  selfAttention(options: SelfAttentionOptions): SelfAttentionResult;
  /** Bytes allocated in the WASM heap (returns to its baseline between calls). */
  heapUsed(): number;
}

export interface LoadOptions {
  /** true: the SIMD build (default where supported); false: the scalar build. */
  simd?: boolean;
}

export function loadEngine(options?: LoadOptions): Promise<Engine>;
