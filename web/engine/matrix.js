// Turning what a caller passes (nested arrays, { rows, cols, data }, plain
// vectors, option strings) into checked Float32Arrays, with errors that name
// the argument. Values are copied by index, never through an iterator, so
// what reaches WASM has exactly the length that was checked. Nothing here
// touches WASM memory.
import { LIMITS } from './constants.js';
import { argError, describe, limitError, shapeError, valueError } from './errors.js';

// Typed arrays are read through the intrinsic getters of %TypedArray%.prototype,
// which read the array's internal slots: an own `length` or `buffer` property,
// or a prototype swapped for Float32Array.prototype, cannot make one lie about
// its size or kind. On anything that is not a typed array the name is undefined.
const TYPED = Object.getPrototypeOf(Uint8Array.prototype);
const intrinsic = (key) => Object.getOwnPropertyDescriptor(TYPED, key).get;
const typedName = intrinsic(Symbol.toStringTag);
const typedLength = intrinsic('length');
const typedBuffer = intrinsic('buffer');
const typedOffset = intrinsic('byteOffset');

/** The kind of a typed array ('Float32Array', ...), undefined for anything else; never calls into value. */
export const typedArrayName = (value) => typedName.call(value);

/** An array or a typed array of numbers (not a DataView, not BigInts). */
function isNumberList(v) {
  if (Array.isArray(v)) return true;
  const name = typedArrayName(v);
  return name !== undefined && !name.startsWith('Big');
}

const isBigIntList = (v) => typedArrayName(v)?.startsWith('Big') === true;

/** The length of an array (read once) or a typed array (its internal length). */
const lengthOf = (v) => (typedArrayName(v) === undefined ? v.length : typedLength.call(v));

/** The length of an array (or a proxy of one; read once) or a typed array; null for anything else. */
export const listLength = (v) => (typedArrayName(v) !== undefined || Array.isArray(v) ? lengthOf(v) : null);

/**
 * A typed array of Type over the caller's typed array v's memory, with a fixed length and no
 * properties of its own: what the engine writes to WASM is exactly what was
 * checked, whatever the caller's array carries (no copy).
 */
const fixedView = (Type, v) => new Type(typedBuffer.call(v), typedOffset.call(v), typedLength.call(v));

const bufferLength = Object.getOwnPropertyDescriptor(ArrayBuffer.prototype, 'byteLength').get;
const isArrayBuffer = (v) => {
  try {
    bufferLength.call(v); // throws for anything but an ArrayBuffer (a SharedArrayBuffer and proxies included)
    return true;
  } catch {
    return false;
  }
};

/**
 * The bytes of a file (a Uint8Array or an ArrayBuffer) as the engine's own
 * copy, read through internal slots: nothing the caller does afterwards (or
 * during the call) changes what is checked and written. null for anything else.
 */
export function toBytes(value) {
  if (typedArrayName(value) === 'Uint8Array') return new Uint8Array(fixedView(Uint8Array, value));
  if (isArrayBuffer(value)) return new Uint8Array(new Uint8Array(value));
  return null;
}

/**
 * The bytes of a file (a Uint8Array or an ArrayBuffer) as a view of the
 * caller's memory, no copy (a checkpoint of a gigabyte is not doubled): for a
 * reader that copies what it checks into WASM before checking it. null for
 * anything else.
 */
export function bytesView(value) {
  if (typedArrayName(value) === 'Uint8Array') return fixedView(Uint8Array, value);
  if (isArrayBuffer(value)) return new Uint8Array(value);
  return null;
}

/**
 * The items of an array (or a proxy of one) or a typed array copied by index
 * into a plain array, the length read once; null for anything else.
 */
export function toList(name, value, max) {
  const n = listLength(value);
  if (n === null) return null;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 0) throw shapeError(`${name}: its length is ${describe(n)}`);
  if (n > max) throw limitError(`${name}: ${n} items is past the limit of ${max}`);
  const out = new Array(n);
  for (let i = 0; i < n; i++) out[i] = value[i];
  return out;
}

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
 * which reads its internal slots); every value must be a finite number.
 */
function copyNumbers(name, data, offset, src, n, where) {
  if (typedArrayName(src) !== undefined) {
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
 * A matrix from nested arrays (rows) or { rows, cols, data }, each array's
 * length and each row read once. A Float32Array is used as it is (a view of
 * its memory, no copy) and gets its finite check here unless `engineChecks`
 * says the core call it goes to checks it (one SIMD pass there, with the same
 * message, against a JS loop here: 0.15 ms for attention's three 1024 x 64 inputs).
 * @returns {{ rows: number, cols: number, data: Float32Array }}
 */
export function toMatrix(name, value, engineChecks = false) {
  if (Array.isArray(value)) {
    const rows = value.length;
    if (!Number.isInteger(rows) || rows <= 0) throw shapeError(`${name}: needs at least one row`);
    checkSize(name, 'rows', rows, LIMITS.maxTokens);
    let cols = 0;
    let data = null;
    const where = (k) => `[${Math.floor(k / cols)}][${k % cols}]`;
    for (let i = 0; i < rows; i++) {
      const row = value[i];
      if (!isNumberList(row)) {
        if (isBigIntList(row)) throw listError(`${name} row ${i}`, row);
        if (i === 0) throw shapeError(`${name}: expected an array of rows (arrays of numbers), got ${describe(row)} as row 0`);
        throw shapeError(`${name}: row ${i} is ${describe(row)}, not an array of numbers`);
      }
      const n = lengthOf(row);
      if (i === 0) {
        if (!Number.isInteger(n) || n <= 0) throw shapeError(`${name}: rows need at least one column`);
        checkSize(name, 'columns', n, LIMITS.maxDim);
        cols = n;
        data = new Float32Array(rows * cols);
      } else if (n !== cols) {
        throw shapeError(`${name}: row ${i} has ${describe(n)} columns, but row 0 has ${cols}`);
      }
      copyNumbers(name, data, i * cols, row, cols, where);
    }
    return { rows, cols, data };
  }
  if (value !== null && typeof value === 'object' && 'data' in value) {
    const { rows, cols, data: src } = options(name, value, ['rows', 'cols', 'data']);
    if (!Number.isInteger(rows) || !Number.isInteger(cols) || rows < 1 || cols < 1) {
      throw shapeError(`${name}: rows and cols must be positive integers (got ${describe(rows)} x ${describe(cols)})`);
    }
    checkSize(name, 'rows', rows, LIMITS.maxTokens);
    checkSize(name, 'columns', cols, LIMITS.maxDim);
    if (!isNumberList(src)) {
      if (isBigIntList(src)) throw listError(`${name}.data`, src);
      throw shapeError(`${name}: data must be a Float32Array or an array of numbers (got ${describe(src)})`);
    }
    const n = lengthOf(src);
    if (n !== rows * cols) {
      throw shapeError(`${name}: data has ${describe(n)} values, but ${rows} x ${cols} needs ${rows * cols}`);
    }
    const where = (k) => `[${Math.floor(k / cols)}][${k % cols}]`;
    if (typedArrayName(src) === 'Float32Array') {
      const data = fixedView(Float32Array, src);
      if (!engineChecks) checkFinite(name, data, 0, n, where); // used as it is: the engine only reads it
      return { rows, cols, data };
    }
    const data = new Float32Array(rows * cols);
    copyNumbers(name, data, 0, src, rows * cols, where);
    return { rows, cols, data };
  }
  throw shapeError(`${name}: expected a matrix (array of rows, or { rows, cols, data }), got ${describe(value)}`);
}

/** A vector from an array, a typed array, or a one-row / one-column matrix. */
export function toVector(name, value) {
  if (typedArrayName(value) !== undefined) {
    if (!isNumberList(value)) throw listError(name, value);
    value = { rows: 1, cols: typedLength.call(value), data: value };
  } else {
    const list = toList(name, value, Math.max(LIMITS.maxTokens, LIMITS.maxDim));
    const flat = list !== null && list.length > 0 && !Array.isArray(list[0]) && typedArrayName(list[0]) === undefined;
    if (list !== null) value = flat ? { rows: 1, cols: list.length, data: list } : list;
  }
  const m = toMatrix(name, value);
  if (m.rows !== 1 && m.cols !== 1) {
    throw shapeError(`${name}: expected a vector, got a ${m.rows} x ${m.cols} matrix`);
  }
  return m.data;
}

/**
 * An options object (not null, not an array) as a snapshot of its `fields`,
 * each read exactly once: a getter or proxy cannot hand one check a value and
 * the next read another.
 */
export function options(name, value, fields) {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw argError(`${name}: expected an options object`);
  }
  const o = {};
  for (const field of fields) o[field] = value[field];
  return o;
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
  // the core's one wording of a size check (nn_check_size): ERR_SHAPE below, ERR_LIMIT above
  const range = min === undefined ? `at most ${max}` : max === undefined ? `at least ${min}` : `within ${min}..${max}`;
  if (value < (min ?? INT32_MIN)) throw shapeError(`${name}: ${value}; it must be ${range}`);
  if (value > (max ?? INT32_MAX)) throw limitError(`${name}: ${value}; it must be ${range}`);
  return value;
}

export function toBoolean(name, value, fallback) {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') throw valueError(`${name} must be true or false (got ${describe(value)})`);
  return value;
}
