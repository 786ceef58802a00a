// Turning what a caller passes (nested arrays, { rows, cols, data }, plain
// vectors, option strings) into checked Float32Arrays, with errors that name
// the argument. Values are copied by index, never through an iterator, so
// what reaches WASM has exactly the length that was checked. Nothing here
// touches WASM memory.
import { LIMITS } from './constants.js';
import { argError, describe, limitError, shapeError, valueError } from './errors.js';

/** An array or a typed array of numbers (not a DataView, not BigInts). */
function isNumberList(v) {
  if (Array.isArray(v)) return true;
  return ArrayBuffer.isView(v) && !(v instanceof DataView) && !(v instanceof BigInt64Array) && !(v instanceof BigUint64Array);
}

const isBigIntList = (v) => v instanceof BigInt64Array || v instanceof BigUint64Array;

function listError(name, v) {
  if (isBigIntList(v)) return valueError(`${name}: ${describe(v)} holds BigInts; pass numbers (a Float32Array, a Float64Array or an array)`);
  return shapeError(`${name}: expected an array of numbers, got ${describe(v)}`);
}

function checkSize(name, what, n, max) {
  if (n > max) throw limitError(`${name}: ${n} ${what} is past the limit of ${max}`);
}

/** Throws naming the first value of data[from..to) that is not finite. */
function checkFinite(name, data, from, to, where) {
  // x * 0 is 0 for every finite x and NaN for NaN and ±Infinity: one
  // branch-free pass (several times faster than a test per value) clears the
  // usual, all-finite case; the loop below finds and names the culprit.
  let z0 = 0, z1 = 0, z2 = 0, z3 = 0, k = from; // four sums: no one chain of dependent adds
  for (; k + 4 <= to; k += 4) {
    z0 += data[k] * 0;
    z1 += data[k + 1] * 0;
    z2 += data[k + 2] * 0;
    z3 += data[k + 3] * 0;
  }
  for (; k < to; k++) z0 += data[k] * 0;
  if (z0 + z1 + z2 + z3 === 0) return;
  for (let k = from; k < to; k++) {
    const x = data[k];
    if (!Number.isFinite(x)) throw valueError(`${name}${where(k)} is ${Number.isNaN(x) ? 'NaN' : x}; values must be finite numbers`);
  }
}

/**
 * Copies src[0..n) into data at offset by index (a typed array with .set,
 * which reads by index too); every value must be a finite number.
 */
function copyNumbers(name, data, offset, src, n, where) {
  if (ArrayBuffer.isView(src)) {
    data.set(src, offset);
  } else {
    for (let j = 0; j < n; j++) {
      const x = src[j];
      if (typeof x !== 'number') throw valueError(`${name}${where(offset + j)} is ${describe(x)}, not a number`);
      data[offset + j] = x;
    }
  }
  checkFinite(name, data, offset, offset + n, where);
}

/**
 * A matrix from nested arrays (rows) or { rows, cols, data }. A Float32Array
 * used as it is gets its finite check here unless `engineChecks` says the
 * core call it goes to checks it (one SIMD pass there, with the same message,
 * against a JS loop here: 0.15 ms for attention's three 1024 x 64 inputs).
 * @returns {{ rows: number, cols: number, data: Float32Array }}
 */
export function toMatrix(name, value, engineChecks = false) {
  if (Array.isArray(value)) {
    const rows = value.length;
    if (rows === 0) throw shapeError(`${name}: needs at least one row`);
    const first = value[0];
    if (!isNumberList(first)) {
      if (isBigIntList(first)) throw listError(`${name} row 0`, first);
      throw shapeError(`${name}: expected an array of rows (arrays of numbers), got ${describe(first)} as row 0`);
    }
    const cols = first.length;
    if (cols === 0) throw shapeError(`${name}: rows need at least one column`);
    checkSize(name, 'rows', rows, LIMITS.maxTokens);
    checkSize(name, 'columns', cols, LIMITS.maxDim);
    const data = new Float32Array(rows * cols);
    const where = (k) => `[${Math.floor(k / cols)}][${k % cols}]`;
    for (let i = 0; i < rows; i++) {
      const row = value[i];
      if (!isNumberList(row)) {
        if (isBigIntList(row)) throw listError(`${name} row ${i}`, row);
        throw shapeError(`${name}: row ${i} is ${describe(row)}, not an array of numbers`);
      }
      if (row.length !== cols) {
        throw shapeError(`${name}: row ${i} has ${row.length} columns, but row 0 has ${cols}`);
      }
      copyNumbers(name, data, i * cols, row, cols, where);
    }
    return { rows, cols, data };
  }
  if (value !== null && typeof value === 'object' && 'data' in value) {
    const { rows, cols } = value;
    if (!Number.isInteger(rows) || !Number.isInteger(cols) || rows < 1 || cols < 1) {
      throw shapeError(`${name}: rows and cols must be positive integers (got ${describe(rows)} x ${describe(cols)})`);
    }
    checkSize(name, 'rows', rows, LIMITS.maxTokens);
    checkSize(name, 'columns', cols, LIMITS.maxDim);
    const src = value.data;
    if (!isNumberList(src)) {
      if (isBigIntList(src)) throw listError(`${name}.data`, src);
      throw shapeError(`${name}: data must be a Float32Array or an array of numbers (got ${describe(src)})`);
    }
    if (src.length !== rows * cols) {
      throw shapeError(`${name}: data has ${src.length} values, but ${rows} x ${cols} needs ${rows * cols}`);
    }
    const where = (k) => `[${Math.floor(k / cols)}][${k % cols}]`;
    if (Object.getPrototypeOf(src) === Float32Array.prototype) {
      if (!engineChecks) checkFinite(name, src, 0, src.length, where); // used as it is: the engine only reads it
      return { rows, cols, data: src };
    }
    const data = new Float32Array(rows * cols);
    copyNumbers(name, data, 0, src, rows * cols, where);
    return { rows, cols, data };
  }
  throw shapeError(`${name}: expected a matrix (array of rows, or { rows, cols, data }), got ${describe(value)}`);
}

/** A vector from an array, a typed array, or a one-row / one-column matrix. */
export function toVector(name, value) {
  if (Array.isArray(value) && value.length > 0 && !Array.isArray(value[0]) && !ArrayBuffer.isView(value[0])) {
    value = { rows: 1, cols: value.length, data: value };
  } else if (ArrayBuffer.isView(value)) {
    if (!isNumberList(value)) throw listError(name, value);
    value = { rows: 1, cols: value.length, data: value };
  }
  const m = toMatrix(name, value);
  if (m.rows !== 1 && m.cols !== 1) {
    throw shapeError(`${name}: expected a vector, got a ${m.rows} x ${m.cols} matrix`);
  }
  return m.data;
}

/** An options object (not null, not an array). */
export function options(name, value) {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw argError(`${name}: expected an options object`);
  }
  return value;
}

/** One of `choices` (an object name -> code); `fallback` when undefined. */
export function toChoice(name, value, choices, fallback) {
  if (value === undefined) value = fallback;
  if (typeof value !== 'string' || !Object.hasOwn(choices, value)) {
    const shown = typeof value === 'string' ? `'${value}'` : describe(value);
    throw argError(`${name}: unknown value ${shown}; expected one of ${Object.keys(choices).map((c) => `'${c}'`).join(', ')}`);
  }
  return choices[value];
}

export function toNumber(name, value, fallback) {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw valueError(`${name} must be a finite number (got ${describe(value)})`);
  }
  return value;
}

const INT32_MIN = -(2 ** 31), INT32_MAX = 2 ** 31 - 1;

/**
 * An integer within min..max; without min and max, any 32-bit integer (the C
 * core then checks the range and names the argument itself).
 */
export function toInteger(name, value, fallback, min, max) {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value)) throw valueError(`${name} must be an integer (got ${describe(value)})`);
  if (value < (min ?? INT32_MIN)) throw shapeError(`${name} must be at least ${min ?? 1} (got ${value})`);
  if (value > (max ?? INT32_MAX)) throw limitError(`${name}: ${value} is past the limit${max === undefined ? '' : ` of ${max}`}`);
  return value;
}

export function toBoolean(name, value, fallback) {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') throw valueError(`${name} must be true or false (got ${describe(value)})`);
  return value;
}
