// Assertions shared by the node:test suites: engine matrices ({ rows, cols,
// data: Float32Array }) against float64 numbers within atol + rtol·|want|.
import assert from 'node:assert/strict';

/** Default tolerances: the engine computes in float32. */
export const ATOL = 1e-5;
export const RTOL = 1e-4;

export function assertShape(m, rows, cols, what) {
  assert.ok(m && typeof m === 'object', `${what}: expected { rows, cols, data }, got ${m}`);
  assert.equal(m.rows, rows, `${what}.rows`);
  assert.equal(m.cols, cols, `${what}.cols`);
  assert.ok(m.data instanceof Float32Array, `${what}.data is a Float32Array`);
  assert.equal(m.data.length, rows * cols, `${what}.data.length`);
}

/**
 * Engine matrix vs float64 rows (nested arrays, or one flat row): within
 * atol + rtol·|want| everywhere, -Infinity exactly where the reference has it.
 * @returns the worst error as a fraction of its tolerance
 */
export function assertClose(got, rows, what, { atol = ATOL, rtol = RTOL } = {}) {
  const want = Array.isArray(rows[0]) ? rows : [Array.from(rows)];
  assertShape(got, want.length, want[0].length, what);
  const flat = want.flat();
  let worst = 0;
  for (let i = 0; i < flat.length; i++) {
    const g = got.data[i], w = flat[i];
    const at = `${what}[${Math.floor(i / got.cols)}][${i % got.cols}]`;
    if (w === -Infinity) {
      assert.equal(g, -Infinity, `${at}: masked cell must be -Infinity, got ${g}`);
      continue;
    }
    assert.ok(Number.isFinite(g), `${at}: got ${g}, want ${w}`);
    const err = Math.abs(g - w);
    worst = Math.max(worst, err / (atol + rtol * Math.abs(w)));
    assert.ok(err <= atol + rtol * Math.abs(w), `${at}: got ${g}, want ${w} (error ${err.toExponential(2)})`);
  }
  return worst;
}

/** The check behind throwsCode / rejectsCode: an AttnlabError with this code and a message matching pattern. */
function hasCode(code, pattern) {
  return (err) => {
    assert.ok(err instanceof Error && err.name === 'AttnlabError', `an AttnlabError, not ${err}`);
    assert.equal(err.code, code, `code of: ${err.message}`);
    assert.match(err.message, pattern);
    return true;
  };
}

/** fn() throws an AttnlabError with this .code and a message matching pattern. */
export function throwsCode(fn, code, pattern) {
  assert.throws(fn, hasCode(code, pattern));
}

/** promise rejects with an AttnlabError with this .code and a message matching pattern. */
export async function rejectsCode(promise, code, pattern) {
  await assert.rejects(promise, hasCode(code, pattern));
}

/** max |got - want| / (atol + rtol |want|) over two arrays: <= 1 passes. */
export function assertNear(got, want, what, { atol = 2e-5, rtol = 1e-4 } = {}) {
  assert.equal(got.length, want.length, `${what}: length`);
  let worst = 0, at = -1;
  for (let i = 0; i < want.length; i++) {
    const r = Math.abs(got[i] - want[i]) / (atol + rtol * Math.abs(want[i]));
    if (!(r <= worst)) { worst = r; at = i; }
  }
  assert.ok(worst <= 1, `${what}: [${at}] is ${got[at]}, the float64 reference ${want[at]}`);
}
