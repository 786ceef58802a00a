// "Open in the playground / lab" links in each page's own URL-state format:
//   playgroundLink(fields)  index.html#s=<base64url JSON>: the playground's state
//                           (web/playground/state.js: version 1, its PROPS by name, and
//                           tokens, x and parameter matrices written out in full; a
//                           missing field takes the playground's default)
//   labLink(fields)         lab.html#name=value&...: the lab's PROPERTIES by name
//                           (web/lab/state.js); only the fields given are written
// Pure functions: no DOM.

function base64url(text) {
  const bytes = new TextEncoder().encode(text);
  let bin = '';
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** A link to the playground showing `fields` (preset, mode, score, x, ...). */
export function playgroundLink(fields) {
  return `index.html#s=${base64url(JSON.stringify({ version: 1, ...fields }))}`;
}

/** A link to the training lab with `fields` (task, attention, hidden, text, ...). */
export function labLink(fields) {
  const parts = Object.entries(fields).map(([k, v]) => `${k}=${encodeURIComponent(String(v))}`);
  return `lab.html#${parts.join('&')}`;
}

/** The lab fields that rebuild a model trained by scripts/train-models.mjs. */
export function labFieldsFor(spec, extra = {}) {
  const o = spec.options;
  const f = { task: o.task };
  if (o.alphabet) Object.assign(f, { alphabet: o.alphabet, minLength: o.minLength, maxLength: o.maxLength });
  Object.assign(f, { cell: o.cell, embed: o.embed, hidden: o.hidden, attention: o.attention, lr: spec.lr, batch: spec.batch, seed: o.seed });
  return { ...f, ...extra };
}
