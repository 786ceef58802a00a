// Errors the engine throws: an Error with a message naming the argument and a
// stable string `.code`, the same for checks made in JS and in the C core
// (whose status names come from its constants table, see wasm.js).

export class AttnlabError extends Error {
  #made = true;

  constructor(code, message) {
    super(message);
    this.name = 'AttnlabError';
    this.code = code;
  }

  /**
   * Whether value is an AttnlabError made by this class with a string code: a
   * private field, so a proxy that claims the prototype is not taken for one.
   */
  static holds(value) {
    try {
      return value !== null && typeof value === 'object' && #made in value && typeof value.code === 'string';
    } catch {
      return false; // a subclass whose code getter throws
    }
  }
}

export const shapeError = (message) => new AttnlabError('ERR_SHAPE', message);
export const valueError = (message) => new AttnlabError('ERR_VALUE', message);
export const argError = (message) => new AttnlabError('ERR_ARG', message);
export const paramError = (message) => new AttnlabError('ERR_PARAM', message);
export const limitError = (message) => new AttnlabError('ERR_LIMIT', message);

/**
 * A short description of any value for a message; never throws (Symbols,
 * BigInts, null-prototype objects and proxies included).
 */
export function describe(value) {
  switch (typeof value) {
    case 'number':
      return String(value);
    case 'bigint':
      return `${value}n (a BigInt)`;
    case 'string':
      return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
    case 'symbol':
      return 'a Symbol';
    case 'undefined':
    case 'boolean':
      return String(value);
    case 'function':
      return 'a function';
    default:
      break;
  }
  if (value === null) return 'null';
  try {
    if (Array.isArray(value)) return 'an array';
    if (ArrayBuffer.isView(value)) return `a ${Object.prototype.toString.call(value).slice(8, -1)}`;
  } catch {
    // a revoked proxy: fall through
  }
  return 'an object';
}

/** The message of anything thrown, without calling into it unguarded. */
function messageOf(err) {
  try {
    const m = err?.message;
    return typeof m === 'string' ? m : describe(err);
  } catch {
    return 'an unreadable error';
  }
}

/** Whether err is a trap of the WASM module (instanceof throws on a revoked proxy, hence the try). */
function isTrap(err) {
  try {
    return err instanceof WebAssembly.RuntimeError;
  } catch {
    return false;
  }
}

/**
 * Anything thrown inside an API call as an AttnlabError: an AttnlabError as it
 * is; a trap of the WASM module (a bug of the engine, not of the caller) as
 * ERR_INTERNAL; anything else (a getter or proxy in an argument that throws,
 * say) as ERR_ARG.
 */
function asAttnlabError(name, err) {
  if (AttnlabError.holds(err)) return err;
  if (isTrap(err)) return new AttnlabError('ERR_INTERNAL', `${name}: the engine failed (${messageOf(err)})`);
  return new AttnlabError('ERR_ARG', `${name}: an argument could not be read (${messageOf(err)})`);
}

/** Runs fn; anything it throws is an AttnlabError, so every error of the API carries a code. */
export function guard(name, fn) {
  try {
    return fn();
  } catch (err) {
    throw asAttnlabError(name, err);
  }
}

/** guard for an async fn: a synchronous throw and a rejection both reject with an AttnlabError. */
export async function guardAsync(name, fn) {
  try {
    return await fn();
  } catch (err) {
    throw asAttnlabError(name, err);
  }
}
