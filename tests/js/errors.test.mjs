// Bad input on both WASM builds: every case throws an Error with a string
// `.code` and a message naming the argument; the engine works normally after
// each one; and 10,000 mixed good and bad calls leave the WASM heap where it was.
//
// Codes: shape mismatches / ragged rows ERR_SHAPE, NaN / Inf and out-of-range
// numbers ERR_VALUE, unknown score / normalize / mask ERR_ARG, a missing score
// parameter ERR_PARAM, sizes past the limits ERR_LIMIT, a zero row sum under
// normalize 'sum' ERR_ZERO_SUM. Where the contract leaves the category open
// (e.g. a non-number entry, heads = 0) the case lists every reasonable code.
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { loadEngine } from '../../web/engine/index.js';
import { withEngines } from './builds.mjs';

const CODES = ['ERR_SHAPE', 'ERR_VALUE', 'ERR_ARG', 'ERR_PARAM', 'ERR_LIMIT', 'ERR_ZERO_SUM', 'ERR_NOMEM'];

const X = [
  [0.43, 0.15, 0.89], [0.22, 0.58, 0.33], [0.77, 0.25, 0.10],
  [0.05, 0.80, 0.55], [0.57, 0.85, 0.64], [0.55, 0.87, 0.66],
];
const SOFTMAX_2 = [0.1435, 0.1462, 0.1263, 0.1720, 0.2046, 0.2074];

const Q2 = [[0.1, 0.2, 0.3], [0.4, -0.5, 0.6]]; // 2 x 3
const K4 = [[1, 0, 0], [0, 1, 0], [0, 0, 1], [0.5, 0.5, 0.5]]; // 4 x 3
const V4 = [[1, 2], [3, 4], [5, 6], [7, 8]]; // 4 x 2
const mat = (rows, cols, fill = 0.5) => ({ rows, cols, data: new Float32Array(rows * cols).fill(fill) });
const ADD = { Wq: mat(5, 3, 0.1), Wk: mat(5, 3, 0.2), v: [1, 2, 3, 4, 5] };

/** [description, call(engine), codes (string or list), names the message must contain (any of)] */
const ATTEND_CASES = [
  // matrices: shape, raggedness, forms
  ['queries missing', (e) => e.attend({ keys: K4 }), ['ERR_SHAPE', 'ERR_ARG'], ['queries']],
  ['keys missing', (e) => e.attend({ queries: Q2 }), ['ERR_SHAPE', 'ERR_ARG'], ['keys']],
  ['queries empty []', (e) => e.attend({ queries: [], keys: K4 }), 'ERR_SHAPE', ['queries']],
  ['queries with an empty row [[]]', (e) => e.attend({ queries: [[]], keys: K4 }), 'ERR_SHAPE', ['queries']],
  ['queries a flat array, not rows', (e) => e.attend({ queries: [0.1, 0.2, 0.3], keys: K4 }), 'ERR_SHAPE', ['queries']],
  ['queries a string', (e) => e.attend({ queries: 'abc', keys: K4 }), ['ERR_SHAPE', 'ERR_ARG'], ['queries']],
  ['ragged queries', (e) => e.attend({ queries: [[1, 2, 3], [1, 2]], keys: K4 }), 'ERR_SHAPE', ['queries']],
  ['ragged keys', (e) => e.attend({ queries: Q2, keys: [[1, 2, 3], [1, 2, 3], [1, 2, 3, 4]] }), 'ERR_SHAPE', ['keys']],
  ['ragged values', (e) => e.attend({ queries: Q2, keys: K4, values: [[1, 2], [3, 4], [5], [7, 8]] }), 'ERR_SHAPE', ['values']],
  ['values rows != keys rows', (e) => e.attend({ queries: Q2, keys: K4, values: [[1, 2], [3, 4], [5, 6]] }), 'ERR_SHAPE', ['values']],
  ["dot: queries and keys of different sizes", (e) => e.attend({ queries: Q2, keys: [[1, 2], [3, 4]] }), 'ERR_SHAPE', ['keys', 'queries']],
  ["scaled_dot: different sizes", (e) => e.attend({ queries: Q2, keys: [[1, 2], [3, 4]], score: 'scaled_dot' }), 'ERR_SHAPE', ['keys', 'queries']],
  ["cosine: different sizes", (e) => e.attend({ queries: Q2, keys: [[1, 2], [3, 4]], score: 'cosine' }), 'ERR_SHAPE', ['keys', 'queries']],
  ['{rows, cols, data} with too little data', (e) => e.attend({ queries: { rows: 2, cols: 3, data: new Float32Array(5) }, keys: K4 }), 'ERR_SHAPE', ['queries']],
  ['{rows, cols, data} with too much data', (e) => e.attend({ queries: Q2, keys: { rows: 4, cols: 3, data: new Float32Array(13) } }), 'ERR_SHAPE', ['keys']],
  ['{rows, cols, data} with rows 0', (e) => e.attend({ queries: { rows: 0, cols: 3, data: new Float32Array(0) }, keys: K4 }), 'ERR_SHAPE', ['queries']],
  ['{rows, cols, data} with fractional rows', (e) => e.attend({ queries: { rows: 1.5, cols: 2, data: new Float32Array(3) }, keys: K4 }), 'ERR_SHAPE', ['queries']],
  ['{rows, cols, data} with negative cols', (e) => e.attend({ queries: Q2, keys: { rows: 4, cols: -3, data: new Float32Array(12) } }), 'ERR_SHAPE', ['keys']],
  ['{rows, cols} without data', (e) => e.attend({ queries: { rows: 2, cols: 3 }, keys: K4 }), ['ERR_SHAPE', 'ERR_ARG'], ['queries']],
  // non-finite and non-numeric entries
  ['NaN in queries', (e) => e.attend({ queries: [[0.1, NaN, 0.3], [1, 2, 3]], keys: K4 }), 'ERR_VALUE', ['queries']],
  ['Infinity in queries', (e) => e.attend({ queries: [[0.1, 0.2, 0.3], [1, 2, Infinity]], keys: K4 }), 'ERR_VALUE', ['queries']],
  ['-Infinity in keys', (e) => e.attend({ queries: Q2, keys: [[1, 0, 0], [0, -Infinity, 0]] }), 'ERR_VALUE', ['keys']],
  ['NaN in keys as Float32Array data', (e) => e.attend({ queries: Q2, keys: { rows: 1, cols: 3, data: Float32Array.of(1, NaN, 0) } }), 'ERR_VALUE', ['keys']],
  // a Float32Array goes to the core as it is: its check there names the element as the JS check does
  ['NaN in queries as Float32Array data, by element', (e) => e.attend({ queries: { rows: 2, cols: 3, data: Float32Array.of(1, 2, 3, NaN, 5, 6) }, keys: K4 }), 'ERR_VALUE', ['queries[1][0] is NaN']],
  ['-Infinity in values as data, by element', (e) => e.attend({ queries: Q2, keys: K4, values: { rows: 4, cols: 2, data: Float32Array.of(1, 2, 3, 4, 5, -Infinity, 7, 8) } }), 'ERR_VALUE', ['values[2][1] is -Infinity']],
  ['NaN in values', (e) => e.attend({ queries: Q2, keys: K4, values: [[1, 2], [3, NaN], [5, 6], [7, 8]] }), 'ERR_VALUE', ['values']],
  ['Infinity in values as data', (e) => e.attend({ queries: Q2, keys: K4, values: { rows: 4, cols: 2, data: Float32Array.of(1, 2, 3, 4, 5, 6, 7, Infinity) } }), 'ERR_VALUE', ['values']],
  ['a string entry in queries', (e) => e.attend({ queries: [[0.1, '0.2', 0.3]], keys: K4 }), ['ERR_VALUE', 'ERR_SHAPE'], ['queries']],
  ['a null entry in keys', (e) => e.attend({ queries: Q2, keys: [[1, null, 0]] }), ['ERR_VALUE', 'ERR_SHAPE'], ['keys']],
  // score, normalize, mask, temperature
  ['unknown score', (e) => e.attend({ queries: Q2, keys: K4, score: 'bilinear' }), 'ERR_ARG', ['score']],
  ['score with the wrong case', (e) => e.attend({ queries: Q2, keys: K4, score: 'Dot' }), 'ERR_ARG', ['score']],
  ['score a number', (e) => e.attend({ queries: Q2, keys: K4, score: 0 }), 'ERR_ARG', ['score']],
  ['unknown normalize', (e) => e.attend({ queries: Q2, keys: K4, normalize: 'sparsemax' }), 'ERR_ARG', ['normalize']],
  ['normalize null', (e) => e.attend({ queries: Q2, keys: K4, normalize: null }), 'ERR_ARG', ['normalize']],
  ['unknown mask string', (e) => e.attend({ queries: Q2, keys: K4, mask: 'diagonal' }), 'ERR_ARG', ['mask']],
  ['mask a number', (e) => e.attend({ queries: Q2, keys: K4, mask: 3 }), 'ERR_ARG', ['mask']],
  ['mask an object without keyLengths', (e) => e.attend({ queries: Q2, keys: K4, mask: { lengths: [1, 2] } }), 'ERR_ARG', ['mask']],
  ['mask.keyLengths of the wrong length', (e) => e.attend({ queries: Q2, keys: K4, mask: { keyLengths: [1, 2, 3] } }), 'ERR_SHAPE', ['mask']],
  ['mask.keyLengths not an array', (e) => e.attend({ queries: Q2, keys: K4, mask: { keyLengths: 2 } }), ['ERR_SHAPE', 'ERR_ARG', 'ERR_VALUE'], ['mask']],
  ['mask.keyLengths negative', (e) => e.attend({ queries: Q2, keys: K4, mask: { keyLengths: [1, -1] } }), 'ERR_VALUE', ['mask']],
  ['mask.keyLengths past n_k', (e) => e.attend({ queries: Q2, keys: K4, mask: { keyLengths: [5, 1] } }), 'ERR_VALUE', ['mask']],
  ['mask.keyLengths fractional', (e) => e.attend({ queries: Q2, keys: K4, mask: { keyLengths: [1.5, 1] } }), 'ERR_VALUE', ['mask']],
  ['mask.keyLengths NaN', (e) => e.attend({ queries: Q2, keys: K4, mask: { keyLengths: [NaN, 1] } }), 'ERR_VALUE', ['mask']],
  ['temperature 0', (e) => e.attend({ queries: Q2, keys: K4, temperature: 0 }), 'ERR_VALUE', ['temperature']],
  ['temperature negative', (e) => e.attend({ queries: Q2, keys: K4, temperature: -1 }), 'ERR_VALUE', ['temperature']],
  ['temperature -0', (e) => e.attend({ queries: Q2, keys: K4, temperature: -0 }), 'ERR_VALUE', ['temperature']],
  ['temperature NaN', (e) => e.attend({ queries: Q2, keys: K4, temperature: NaN }), 'ERR_VALUE', ['temperature']],
  ['temperature Infinity', (e) => e.attend({ queries: Q2, keys: K4, temperature: Infinity }), 'ERR_VALUE', ['temperature']],
  ['temperature a string', (e) => e.attend({ queries: Q2, keys: K4, temperature: '2' }), ['ERR_VALUE', 'ERR_ARG'], ['temperature']],
  // score parameters
  ['general without params', (e) => e.attend({ queries: Q2, keys: K4, score: 'general' }), 'ERR_PARAM', ['params.W']],
  ['general with params {}', (e) => e.attend({ queries: Q2, keys: K4, score: 'general', params: {} }), 'ERR_PARAM', ['params.W']],
  ['general W of the wrong shape', (e) => e.attend({ queries: Q2, keys: K4, score: 'general', params: { W: mat(3, 2) } }), 'ERR_SHAPE', ['params.W']],
  ['general W transposed (d_k x d_q)', (e) => e.attend({ queries: [[1, 2]], keys: K4, score: 'general', params: { W: mat(3, 2) } }), 'ERR_SHAPE', ['params.W']],
  ['general W ragged', (e) => e.attend({ queries: Q2, keys: K4, score: 'general', params: { W: [[1, 2, 3], [1, 2], [1, 2, 3]] } }), 'ERR_SHAPE', ['params.W']],
  ['general W with NaN', (e) => e.attend({ queries: Q2, keys: K4, score: 'general', params: { W: [[1, 2, 3], [1, NaN, 3], [1, 2, 3]] } }), 'ERR_VALUE', ['params.W']],
  ['location without W', (e) => e.attend({ queries: Q2, keys: K4, score: 'location', params: { beta: 2 } }), 'ERR_PARAM', ['params.W']],
  ['location W rows != number of keys', (e) => e.attend({ queries: Q2, keys: K4, score: 'location', params: { W: mat(3, 3) } }), 'ERR_SHAPE', ['params.W']],
  ['location W cols != query size', (e) => e.attend({ queries: Q2, keys: K4, score: 'location', params: { W: mat(4, 2) } }), 'ERR_SHAPE', ['params.W']],
  ['location W with Infinity', (e) => e.attend({ queries: Q2, keys: K4, score: 'location', params: { W: { rows: 4, cols: 3, data: new Float32Array(12).fill(Infinity) } } }), 'ERR_VALUE', ['params.W']],
  ['additive without params', (e) => e.attend({ queries: Q2, keys: K4, score: 'additive' }), 'ERR_PARAM', ['params.Wq', 'params.Wk', 'params.v']],
  ['additive without Wq', (e) => e.attend({ queries: Q2, keys: K4, score: 'additive', params: { Wk: ADD.Wk, v: ADD.v } }), 'ERR_PARAM', ['params.Wq']],
  ['additive without Wk', (e) => e.attend({ queries: Q2, keys: K4, score: 'additive', params: { Wq: ADD.Wq, v: ADD.v } }), 'ERR_PARAM', ['params.Wk']],
  ['additive without v', (e) => e.attend({ queries: Q2, keys: K4, score: 'additive', params: { Wq: ADD.Wq, Wk: ADD.Wk } }), 'ERR_PARAM', ['params.v']],
  ['additive v of the wrong length', (e) => e.attend({ queries: Q2, keys: K4, score: 'additive', params: { ...ADD, v: [1, 2, 3] } }), 'ERR_SHAPE', ['params.v']],
  ['additive Wk rows != Wq rows', (e) => e.attend({ queries: Q2, keys: K4, score: 'additive', params: { ...ADD, Wk: mat(4, 3) } }), 'ERR_SHAPE', ['params.Wk', 'params.Wq']],
  ['additive Wq cols != query size', (e) => e.attend({ queries: Q2, keys: K4, score: 'additive', params: { ...ADD, Wq: mat(5, 2) } }), 'ERR_SHAPE', ['params.Wq']],
  ['additive Wk cols != key size', (e) => e.attend({ queries: Q2, keys: K4, score: 'additive', params: { ...ADD, Wk: mat(5, 4) } }), 'ERR_SHAPE', ['params.Wk']],
  ['additive v with NaN', (e) => e.attend({ queries: Q2, keys: K4, score: 'additive', params: { ...ADD, v: [1, 2, NaN, 4, 5] } }), 'ERR_VALUE', ['params.v']],
  ['additive v as Float32Array with Infinity', (e) => e.attend({ queries: Q2, keys: K4, score: 'additive', params: { ...ADD, v: Float32Array.of(1, 2, 3, 4, Infinity) } }), 'ERR_VALUE', ['params.v']],
  ['additive Wq with -Infinity', (e) => e.attend({ queries: Q2, keys: K4, score: 'additive', params: { ...ADD, Wq: { rows: 5, cols: 3, data: new Float32Array(15).fill(-Infinity) } } }), 'ERR_VALUE', ['params.Wq']],
  ['cosine beta NaN', (e) => e.attend({ queries: Q2, keys: K4, score: 'cosine', params: { beta: NaN } }), 'ERR_VALUE', ['params.beta']],
  ['cosine beta a string', (e) => e.attend({ queries: Q2, keys: K4, score: 'cosine', params: { beta: '2' } }), ['ERR_VALUE', 'ERR_ARG', 'ERR_PARAM'], ['params.beta']],
  ['general with params not an object', (e) => e.attend({ queries: Q2, keys: K4, score: 'general', params: 5 }), ['ERR_PARAM', 'ERR_ARG'], ['params']],
  ['mask null', (e) => e.attend({ queries: Q2, keys: K4, mask: null }), 'ERR_ARG', ['mask']],
  ['values null', (e) => e.attend({ queries: Q2, keys: K4, values: null }), ['ERR_SHAPE', 'ERR_ARG'], ['values']],
  ['cosine beta Infinity', (e) => e.attend({ queries: Q2, keys: K4, score: 'cosine', params: { beta: Infinity } }), 'ERR_VALUE', ['params.beta']],
  // normalize 'sum' with a zero row sum
  ["sum: scores 1 and -1 sum to 0", (e) => e.attend({ queries: [[1, 0]], keys: [[1, 0], [-1, 0]], normalize: 'sum' }), 'ERR_ZERO_SUM', ['normalize']],
  ["sum: a zero query", (e) => e.attend({ queries: [[0, 0, 0], [1, 1, 1]], keys: K4, normalize: 'sum' }), 'ERR_ZERO_SUM', ['normalize']],
  ["sum: the visible keys sum to 0 (keyLengths)", (e) => e.attend({ queries: [[1, 0]], keys: [[1, 0], [-1, 0], [5, 0]], normalize: 'sum', mask: { keyLengths: [2] } }), 'ERR_ZERO_SUM', ['normalize']],
  ["sum: the visible keys sum to 0 (causal)", (e) => e.attend({ queries: [[1, 0], [1, 0], [2, 0]], keys: [[2, 0], [-2, 0], [1, 0]], normalize: 'sum', mask: 'causal' }), 'ERR_ZERO_SUM', ['normalize']],
  ["sum: cosine of a zero query", (e) => e.attend({ queries: [[0, 0, 0]], keys: K4, score: 'cosine', normalize: 'sum' }), 'ERR_ZERO_SUM', ['normalize']],
  // limits: 4096 tokens, 4096 dims, n_q * n_k <= 4,194,304
  ['4097 queries', (e) => e.attend({ queries: mat(4097, 1), keys: mat(1, 1) }), 'ERR_LIMIT', ['queries']],
  ['4097 keys', (e) => e.attend({ queries: mat(1, 1), keys: mat(4097, 1) }), 'ERR_LIMIT', ['keys']],
  ['4097 keys as nested arrays', (e) => e.attend({ queries: [[1]], keys: Array.from({ length: 4097 }, () => [1]) }), 'ERR_LIMIT', ['keys']],
  ['queries of size 4097', (e) => e.attend({ queries: mat(1, 4097), keys: mat(1, 4097) }), 'ERR_LIMIT', ['queries', 'keys']],
  ['values of size 4097', (e) => e.attend({ queries: mat(1, 2), keys: mat(1, 2), values: mat(1, 4097) }), 'ERR_LIMIT', ['values']],
  ['additive hidden size 4097', (e) => e.attend({ queries: mat(1, 1), keys: mat(1, 1), score: 'additive', params: { Wq: mat(4097, 1), Wk: mat(4097, 1), v: new Float32Array(4097) } }), 'ERR_LIMIT', ['params.Wq', 'params.Wk', 'params.v']],
  ['2048 x 2049 cells', (e) => e.attend({ queries: mat(2048, 1), keys: mat(2049, 1) }), 'ERR_LIMIT', ['queries', 'keys']],
  ['4096 x 4096 cells', (e) => e.attend({ queries: mat(4096, 1), keys: mat(4096, 1) }), 'ERR_LIMIT', ['queries', 'keys']],
  // the options object itself
  ['attend() without options', (e) => e.attend(), CODES, []],
  ['attend(null)', (e) => e.attend(null), CODES, []],
];

const SX = [[0.1, 0.2, 0.3, 0.4], [0.5, 0.6, 0.7, 0.8], [0.9, 1.0, 1.1, 1.2]]; // 3 x 4
const SELF_CASES = [
  ['x missing', (e) => e.selfAttention({}), ['ERR_SHAPE', 'ERR_ARG'], ['x']],
  ['x ragged', (e) => e.selfAttention({ x: [[1, 2], [3]] }), 'ERR_SHAPE', ['x']],
  ['x empty', (e) => e.selfAttention({ x: [] }), 'ERR_SHAPE', ['x']],
  ['x with NaN', (e) => e.selfAttention({ x: [[1, NaN], [3, 4]] }), 'ERR_VALUE', ['x']],
  ['x with Infinity as data', (e) => e.selfAttention({ x: { rows: 2, cols: 2, data: Float32Array.of(1, 2, 3, Infinity) } }), 'ERR_VALUE', ['x']],
  ['x data of the wrong length', (e) => e.selfAttention({ x: { rows: 2, cols: 2, data: new Float32Array(3) } }), 'ERR_SHAPE', ['x']],
  ['wq rows != x columns', (e) => e.selfAttention({ x: SX, wq: mat(3, 4), wk: mat(4, 4) }), 'ERR_SHAPE', ['wq']],
  ['wk rows != x columns', (e) => e.selfAttention({ x: SX, wq: mat(4, 4), wk: mat(5, 4) }), 'ERR_SHAPE', ['wk']],
  ['wk cols != wq cols', (e) => e.selfAttention({ x: SX, wq: mat(4, 4), wk: mat(4, 6) }), 'ERR_SHAPE', ['wk', 'wq']],
  ['wv rows != x columns', (e) => e.selfAttention({ x: SX, wv: mat(2, 4) }), 'ERR_SHAPE', ['wv']],
  ['wo rows != value width', (e) => e.selfAttention({ x: SX, wv: mat(4, 6), wo: mat(4, 2) }), 'ERR_SHAPE', ['wo']],
  ['wo rows != x columns without wv', (e) => e.selfAttention({ x: SX, wo: mat(3, 2) }), 'ERR_SHAPE', ['wo']],
  ['a lone wq whose width differs from x (K = X cannot match)', (e) => e.selfAttention({ x: SX, wq: mat(4, 6) }), ['ERR_SHAPE', 'ERR_PARAM'], ['wq', 'wk']],
  ['wq ragged', (e) => e.selfAttention({ x: SX, wq: [[1, 2], [1, 2], [1], [1, 2]], wk: mat(4, 2) }), 'ERR_SHAPE', ['wq']],
  ['wq with NaN', (e) => e.selfAttention({ x: SX, wq: { rows: 4, cols: 2, data: Float32Array.of(1, 2, 3, 4, 5, 6, 7, NaN) }, wk: mat(4, 2) }), 'ERR_VALUE', ['wq']],
  ['wk with Infinity', (e) => e.selfAttention({ x: SX, wq: mat(4, 2), wk: [[1, 2], [1, 2], [1, Infinity], [1, 2]] }), 'ERR_VALUE', ['wk']],
  ['wv with NaN', (e) => e.selfAttention({ x: SX, wv: [[1], [NaN], [1], [1]] }), 'ERR_VALUE', ['wv']],
  ['wo with -Infinity', (e) => e.selfAttention({ x: SX, wo: [[1], [1], [1], [-Infinity]] }), 'ERR_VALUE', ['wo']],
  ['heads not dividing the query/key width', (e) => e.selfAttention({ x: SX, heads: 3 }), 'ERR_SHAPE', ['heads']],
  ['heads not dividing the value width', (e) => e.selfAttention({ x: SX, wv: mat(4, 6), heads: 4 }), 'ERR_SHAPE', ['heads']],
  ['heads 0', (e) => e.selfAttention({ x: SX, heads: 0 }), ['ERR_SHAPE', 'ERR_VALUE', 'ERR_ARG', 'ERR_LIMIT'], ['heads']],
  ['heads negative', (e) => e.selfAttention({ x: SX, heads: -2 }), ['ERR_SHAPE', 'ERR_VALUE', 'ERR_ARG', 'ERR_LIMIT'], ['heads']],
  ['heads fractional', (e) => e.selfAttention({ x: SX, heads: 1.5 }), ['ERR_VALUE', 'ERR_ARG', 'ERR_SHAPE'], ['heads']],
  ['heads 65 (past 64)', (e) => e.selfAttention({ x: mat(2, 65), heads: 65 }), 'ERR_LIMIT', ['heads']],
  ["score 'general' (not for self-attention)", (e) => e.selfAttention({ x: SX, score: 'general' }), 'ERR_ARG', ['score']],
  ["score 'additive'", (e) => e.selfAttention({ x: SX, score: 'additive' }), 'ERR_ARG', ['score']],
  ["score 'location'", (e) => e.selfAttention({ x: SX, score: 'location' }), 'ERR_ARG', ['score']],
  ['unknown score', (e) => e.selfAttention({ x: SX, score: 'luong' }), 'ERR_ARG', ['score']],
  ["causal 'yes'", (e) => e.selfAttention({ x: SX, causal: 'yes' }), ['ERR_VALUE', 'ERR_ARG'], ['causal']],
  ['4097 tokens', (e) => e.selfAttention({ x: mat(4097, 1) }), 'ERR_LIMIT', ['x']],
  ['2049 tokens (2049^2 cells past 4,194,304)', (e) => e.selfAttention({ x: mat(2049, 1) }), 'ERR_LIMIT', ['x']],
  ['x of size 4097', (e) => e.selfAttention({ x: mat(1, 4097) }), 'ERR_LIMIT', ['x']],
  ['wq of width 4097', (e) => e.selfAttention({ x: mat(2, 2), wq: mat(2, 4097), wk: mat(2, 4097) }), 'ERR_LIMIT', ['wq', 'wk']],
  ['wo of width 4097', (e) => e.selfAttention({ x: mat(2, 2), wo: mat(2, 4097) }), 'ERR_LIMIT', ['wo']],
  ['selfAttention() without options', (e) => e.selfAttention(), CODES, []],
];

function assertFails(engine, call, codes, names) {
  codes = typeof codes === 'string' ? [codes] : codes;
  let thrown = null;
  try {
    call(engine);
  } catch (err) {
    thrown = err;
  }
  assert.ok(thrown, 'expected a throw, but the call returned');
  assert.ok(thrown instanceof Error, `expected an Error, got ${thrown}`);
  assert.equal(typeof thrown.code, 'string', `.code is a string (message: ${thrown.message})`);
  assert.ok(CODES.includes(thrown.code), `.code ${thrown.code} is one of the documented codes`);
  assert.ok(codes.includes(thrown.code), `.code is ${thrown.code}, expected ${codes.join(' or ')} (message: ${thrown.message})`);
  assert.equal(typeof thrown.message, 'string');
  assert.ok(thrown.message.length > 0, 'message is not empty');
  if (names.length) {
    assert.ok(names.some((n) => thrown.message.includes(n)), `message names ${names.join(' or ')}: "${thrown.message}"`);
  }
  return thrown;
}

/** A normal call right after an error still gives the tutorial's numbers. */
function assertStillWorks(engine) {
  const r = engine.attend({ queries: [X[1]], keys: X });
  assert.deepEqual(Array.from(r.weights.data, (w) => w.toFixed(4)), SOFTMAX_2.map((w) => w.toFixed(4)), 'engine still works');
  const s = engine.selfAttention({ x: X, heads: 1 });
  assert.deepEqual(
    Array.from(s.weights[0].data.subarray(6, 12), (w) => w.toFixed(4)),
    SOFTMAX_2.map((w) => w.toFixed(4)),
    'selfAttention still works',
  );
}

for (const { simd, name, skip, engine } of await withEngines()) {
  describe(`bad input to attend (${name})`, { skip }, () => {
    for (const [what, call, codes, names] of ATTEND_CASES) {
      test(what, () => {
        assertFails(engine, call, codes, names);
        assertStillWorks(engine);
      });
    }
  });

  describe(`bad input to selfAttention (${name})`, { skip }, () => {
    let engine;
    before(async () => {
      engine = await loadEngine({ simd, threads: 1 });
    });
    for (const [what, call, codes, names] of SELF_CASES) {
      test(what, () => {
        assertFails(engine, call, codes, names);
        assertStillWorks(engine);
      });
    }
  });

  describe(`limits are inclusive and errors leave no trace (${name})`, { skip }, () => {
    let engine;
    before(async () => {
      engine = await loadEngine({ simd, threads: 1 });
    });

    test('exactly at the limits: 4096 tokens, 4096 dims, 2048 x 2048 cells, 64 heads', () => {
      let r = engine.attend({ queries: mat(4096, 1, 0.25), keys: mat(1, 1, 1) });
      assert.equal(r.weights.rows, 4096);
      assert.ok(r.weights.data.every((w) => w === 1), 'one key: weight 1');
      r = engine.attend({ queries: mat(2, 4096, 0.01), keys: mat(3, 4096, 0.01), values: mat(3, 4096, 0.5) });
      assert.equal(r.context.cols, 4096);
      assert.ok(r.context.data.every((z) => Math.abs(z - 0.5) < 1e-6));
      r = engine.attend({ queries: mat(2048, 1, 0.5), keys: mat(2048, 1, 0.5) });
      assert.equal(r.scores.data.length, 2048 * 2048);
      assert.ok(Math.abs(r.weights.data[12345] - 1 / 2048) < 1e-9, 'identical keys: uniform weights');
      const s = engine.selfAttention({ x: mat(3, 64, 0.1), heads: 64 });
      assert.equal(s.weights.length, 64);
      r = null;
      assertStillWorks(engine);
    });

    test('scores that overflow float32 throw a documented code instead of returning NaN', () => {
      for (const normalize of ['softmax', 'sum']) {
        let r = null;
        try {
          r = engine.attend({ queries: [[1e20, 1]], keys: [[1e20, 1], [1, 1]], normalize });
        } catch (err) {
          assert.ok(CODES.includes(err.code), `${normalize}: code ${err.code}`);
        }
        if (r) assert.ok(r.weights.data.every(Number.isFinite), `${normalize}: weights ${r.weights.data}`);
        assertStillWorks(engine);
      }
    });

    test('an error thrown by the core (after allocation) and one thrown before it both leave the heap as it was', () => {
      assertStillWorks(engine);
      const base = engine.heapUsed();
      assert.equal(typeof base, 'number');
      assertFails(engine, (e) => e.attend({ queries: [[1, 0]], keys: [[1, 0], [-1, 0]], normalize: 'sum' }), 'ERR_ZERO_SUM', ['normalize']);
      assert.equal(engine.heapUsed(), base, 'after ERR_ZERO_SUM');
      assertFails(engine, (e) => e.attend({ queries: [[NaN]], keys: [[1]] }), 'ERR_VALUE', ['queries']);
      assert.equal(engine.heapUsed(), base, 'after ERR_VALUE');
      assertFails(engine, (e) => e.selfAttention({ x: SX, heads: 3 }), 'ERR_SHAPE', ['heads']);
      assert.equal(engine.heapUsed(), base, 'after a selfAttention error');
    });

    test('leak test: 10,000 mixed good and bad calls return heapUsed() to its baseline', () => {
      const rng = (() => {
        let a = 12345;
        return () => ((a = (Math.imul(a, 1103515245) + 12345) >>> 0) / 4294967296);
      })();
      const rand = (r, c) => Array.from({ length: r }, () => Array.from({ length: c }, () => rng() * 2 - 1));
      const calls = [
        // successes
        () => engine.attend({ queries: rand(3, 4), keys: rand(5, 4), values: rand(5, 2) }),
        () => engine.attend({ queries: rand(2, 3), keys: rand(4, 5), score: 'additive', params: { Wq: rand(3, 3), Wk: rand(3, 5), v: [1, -1, 0.5] }, mask: { keyLengths: [0, 4] } }),
        () => engine.attend({ queries: rand(4, 3), keys: rand(4, 2), score: 'general', params: { W: rand(3, 2) }, mask: 'causal', temperature: 0.5 }),
        () => engine.attend({ queries: rand(2, 3), keys: rand(6, 3), score: 'location', params: { W: rand(6, 3) } }),
        () => engine.attend({ queries: [[1, 1]], keys: [[1, 2], [3, 4]], normalize: 'sum', score: 'cosine' }),
        () => engine.selfAttention({ x: rand(5, 4), wq: rand(4, 4), wk: rand(4, 4), wv: rand(4, 2), wo: rand(2, 3), heads: 2, causal: true }),
        // failures in the core, after the heap block is taken
        () => engine.attend({ queries: [[1, 0]], keys: [[1, 0], [-1, 0]], normalize: 'sum' }),
        () => engine.attend({ queries: [[0, 0, 0]], keys: rand(3, 3), normalize: 'sum', mask: 'causal' }),
        // failures in argument checking
        () => engine.attend({ queries: [[1, NaN]], keys: rand(2, 2) }),
        () => engine.attend({ queries: rand(2, 3), keys: rand(2, 4) }),
        () => engine.attend({ queries: rand(2, 3), keys: rand(2, 3), score: 'general' }),
        () => engine.attend({ queries: rand(2, 3), keys: rand(2, 3), temperature: 0 }),
        () => engine.attend({ queries: rand(2, 3), keys: rand(2, 3), mask: { keyLengths: [9, 1] } }),
        () => engine.selfAttention({ x: rand(3, 4), heads: 3 }),
        () => engine.selfAttention({ x: rand(3, 4), score: 'additive' }),
      ];
      // warm-up: every kind of call once (lets the allocator settle)
      for (const call of calls) {
        try {
          call();
        } catch { /* expected for the failing kinds */ }
      }
      const baseline = engine.heapUsed();
      let ok = 0, failed = 0;
      for (let i = 0; i < 10000; i++) {
        try {
          calls[i % calls.length]();
          ok++;
        } catch (err) {
          assert.ok(CODES.includes(err.code), `unexpected error ${err.code}: ${err.message}`);
          failed++;
        }
      }
      assert.ok(ok > 3000 && failed > 5000, `mix of outcomes: ${ok} ok, ${failed} failed`);
      assert.equal(engine.heapUsed(), baseline, 'heapUsed() back at the baseline');
      assertStillWorks(engine);
      assert.equal(engine.heapUsed(), baseline, 'and still there after a good call');
    });
  });
}
