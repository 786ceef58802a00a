// Turning what a caller passes (nested arrays, { rows, cols, data }, plain
// vectors, option strings) into checked Float32Arrays, with errors that name
// the argument. Nothing here touches WASM memory.
import { argError, limitError, shapeError, valueError } from './errors.js';

/** Limits of the core (include/attnlab/attention.h). */
export const LIMITS = Object.freeze({
  maxTokens: 4096,
  maxDim: 4096,
  maxCells: 1 << 22,
  maxHeads: 64,
});

const describe = (v) => (v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v);

function checkFinite(name, data, cols) {
  for (let i = 0; i < data.length; i++) {
    const x = data[i];
    if (!Number.isFinite(x)) {
      const where = cols ? `[${Math.floor(i / cols)}][${i % cols}]` : `[${i}]`;
      throw valueError(`${name}${where} is ${Number.isNaN(x) ? 'NaN' : x}; values must be finite numbers`);
    }
  }
}

function checkSize(name, what, n, max) {
  if (n > max) throw limitError(`${name}: ${n} ${what} is past the limit of ${max}`);
}

/**
 * A matrix from nested arrays (rows) or { rows, cols, data }.
 * @returns {{ rows: number, cols: number, data: Float32Array }}
 */
export function toMatrix(name, value) {
  if (Array.isArray(value)) {
    const rows = value.length;
    if (rows === 0) throw shapeError(`${name}: needs at least one row`);
    if (!Array.isArray(value[0]) && !ArrayBuffer.isView(value[0])) {
      throw shapeError(`${name}: expected an array of rows (arrays of numbers), got ${describe(value[0])} as row 0`);
    }
    const cols = value[0].length;
    if (cols === 0) throw shapeError(`${name}: rows need at least one column`);
    checkSize(name, 'rows', rows, LIMITS.maxTokens);
    checkSize(name, 'columns', cols, LIMITS.maxDim);
    const data = new Float32Array(rows * cols);
    for (let i = 0; i < rows; i++) {
      const row = value[i];
      if (!Array.isArray(row) && !ArrayBuffer.isView(row)) {
        throw shapeError(`${name}: row ${i} is ${describe(row)}, not an array of numbers`);
      }
      if (row.length !== cols) {
        throw shapeError(`${name}: row ${i} has ${row.length} columns, but row 0 has ${cols}`);
      }
      for (let j = 0; j < cols; j++) {
        const x = row[j];
        if (typeof x !== 'number') {
          throw valueError(`${name}[${i}][${j}] is ${describe(x)}, not a number`);
        }
        data[i * cols + j] = x;
      }
    }
    checkFinite(name, data, cols);
    return { rows, cols, data };
  }
  if (value && typeof value === 'object' && 'data' in value) {
    const { rows, cols } = value;
    if (!Number.isInteger(rows) || !Number.isInteger(cols) || rows < 1 || cols < 1) {
      throw shapeError(`${name}: rows and cols must be positive integers (got ${rows} x ${cols})`);
    }
    checkSize(name, 'rows', rows, LIMITS.maxTokens);
    checkSize(name, 'columns', cols, LIMITS.maxDim);
    const src = value.data;
    if (!(ArrayBuffer.isView(src) || Array.isArray(src))) {
      throw shapeError(`${name}: data must be a Float32Array (got ${describe(src)})`);
    }
    if (src.length !== rows * cols) {
      throw shapeError(`${name}: data has ${src.length} values, but ${rows} x ${cols} needs ${rows * cols}`);
    }
    const data = src instanceof Float32Array ? src : Float32Array.from(src);
    checkFinite(name, data, cols);
    return { rows, cols, data };
  }
  throw shapeError(`${name}: expected a matrix (array of rows, or { rows, cols, data }), got ${describe(value)}`);
}

/** A vector from an array, a typed array, or a one-row / one-column matrix. */
export function toVector(name, value) {
  if (Array.isArray(value) && value.length > 0 && !Array.isArray(value[0])) {
    value = { rows: 1, cols: value.length, data: value };
  } else if (ArrayBuffer.isView(value)) {
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
    throw valueError(`${name} must be a finite number (got ${typeof value === 'number' ? value : describe(value)})`);
  }
  return value;
}

export function toInteger(name, value, fallback, min, max) {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value)) throw valueError(`${name} must be an integer (got ${describe(value) === 'number' ? value : describe(value)})`);
  if (value < min) throw shapeError(`${name} must be at least ${min} (got ${value})`);
  if (value > max) throw limitError(`${name}: ${value} is past the limit of ${max}`);
  return value;
}

export function toBoolean(name, value, fallback) {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') throw valueError(`${name} must be true or false (got ${describe(value)})`);
  return value;
}
