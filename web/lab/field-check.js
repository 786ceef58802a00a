// A numeric setting's range and what is wrong with a value typed into it, in
// a learner's words and under the field's own name ("Context must be a whole
// number from 8 to 256; 4 is below that."). The bounds are the property
// table's (state.js, transformer-state.js), some of them the engine's limits.
// No DOM: the settings form (controls.js) shows what these say.

/** Past this, a bound is no real limit (a learning rate up to 1e30): the range says "at least". */
const NO_LIMIT = 1e12;

/** A bound as the range writes it: 0.000001, 2,147,483,647. */
const bound = (v) => v.toLocaleString('en', { maximumFractionDigits: 6 });

/** The range of numeric property `p` in words: "8 to 256", "at least 0.000001"; '' before its bounds are known. */
export function rangeText(p) {
  if (!Number.isFinite(p.min)) return '';
  if (!Number.isFinite(p.max) || p.max >= NO_LIMIT) return `at least ${bound(p.min)}`;
  return `${bound(p.min)} to ${bound(p.max)}`;
}

/**
 * What is wrong with `raw` (the field's text) for numeric property `p`,
 * named `label`, in the lab's `state` (for checks across fields, such as
 * dModel and the heads); null when it is a value the setting takes.
 */
export function fieldProblem(p, label, raw, state = {}) {
  const kind = p.type === 'int' ? 'a whole number' : 'a number';
  const range = rangeText(p);
  const wanted = `${label} must be ${kind}${range ? (range.startsWith('at least') ? `, ${range}` : ` from ${range}`) : ''}`;
  const text = String(raw).trim();
  const x = Number(text);
  if (text === '' || !Number.isFinite(x)) return `${wanted}.`;
  if (p.type === 'int' && !Number.isInteger(x)) return `${wanted}; ${text} is not whole.`;
  if (x < p.min) return `${wanted}; ${text} is below that.`;
  if (x > p.max) return `${wanted}; ${text} is above that.`;
  const why = p.check?.(x, state);
  return why ? `${label} ${why}.` : null;
}
