// The training lab's settings: a table of validated properties mirrored in the
// URL hash (like TensorFlow Playground). Unknown or bad values are ignored and
// their defaults kept; parse() reports what it ignored so the page can say so.

const CHOICES = {
  task: ['reverse', 'sort', 'copy', 'dates', 'pairs'],
  cell: ['gru', 'lstm', 'rnn'],
  attention: ['additive', 'dot', 'scaled_dot', 'general', 'cosine', 'location', 'none'],
  compare: ['none', 'dot', 'additive', 'general', 'cosine', 'scaled_dot'],
  alphabet: ['digits', 'letters'],
  decode: ['greedy', 'beam'],
};

/** name -> { kind, default, ... }: the whole shareable configuration. */
export const PROPERTIES = {
  task: { kind: 'choice', default: 'reverse' },
  alphabet: { kind: 'choice', default: 'digits' },
  minLength: { kind: 'int', default: 4, min: 1, max: 30 },
  maxLength: { kind: 'int', default: 12, min: 1, max: 30 },
  cell: { kind: 'choice', default: 'gru' },
  bidirectional: { kind: 'bool', default: false },
  layers: { kind: 'int', default: 1, min: 1, max: 2 },
  embed: { kind: 'int', default: 16, min: 2, max: 128 },
  hidden: { kind: 'int', default: 64, min: 4, max: 256 },
  attention: { kind: 'choice', default: 'additive' },
  lr: { kind: 'number', default: 0.005, min: 1e-5, max: 1 },
  batch: { kind: 'int', default: 64, min: 1, max: 256 },
  seed: { kind: 'int', default: 1, min: 0, max: 2 ** 31 - 1 },
  decode: { kind: 'choice', default: 'greedy' },
  beam: { kind: 'int', default: 3, min: 2, max: 16 },
  compare: { kind: 'choice', default: 'none' },
  text: { kind: 'string', default: '', maxLength: 64 },
};

export function defaults() {
  return Object.fromEntries(Object.entries(PROPERTIES).map(([k, p]) => [k, p.default]));
}

/** One property's value from a string, or undefined when it is not valid. */
function read(name, raw) {
  const p = PROPERTIES[name];
  if (p.kind === 'choice') return CHOICES[name].includes(raw) ? raw : undefined;
  if (p.kind === 'bool') return raw === 'true' ? true : raw === 'false' ? false : undefined;
  if (p.kind === 'string') {
    return raw.length <= p.maxLength && /^[\x20-\x7e]*$/.test(raw) ? raw : undefined;
  }
  if (!/^-?\d+(\.\d+)?(e-?\d+)?$/i.test(raw)) return undefined;
  const x = Number(raw);
  if (!Number.isFinite(x) || x < p.min || x > p.max) return undefined;
  if (p.kind === 'int' && !Number.isInteger(x)) return undefined;
  return x;
}

/** The state from a location hash: { state, ignored: [names of bad or unknown entries] }. */
export function parse(hash) {
  const state = defaults();
  const ignored = [];
  const body = String(hash || '').replace(/^#/, '');
  if (!body) return { state, ignored };
  if (body.length > 2000) return { state, ignored: ['(the whole link: too long)'] };
  for (const part of body.split('&')) {
    if (!part) continue;
    const eq = part.indexOf('=');
    let name, raw;
    try {
      name = decodeURIComponent(eq < 0 ? part : part.slice(0, eq));
      raw = decodeURIComponent(eq < 0 ? '' : part.slice(eq + 1));
    } catch {
      ignored.push(part.slice(0, 40));
      continue;
    }
    if (!Object.hasOwn(PROPERTIES, name)) {
      ignored.push(name.slice(0, 40));
      continue;
    }
    const value = read(name, raw);
    if (value === undefined) ignored.push(name);
    else state[name] = value;
  }
  if (state.maxLength < state.minLength) {
    state.maxLength = state.minLength;
    ignored.push('maxLength');
  }
  return { state, ignored };
}

/** The hash for a state: only values that differ from the defaults. */
export function serialize(state) {
  const parts = [];
  for (const [name, p] of Object.entries(PROPERTIES)) {
    if (state[name] !== p.default) parts.push(`${name}=${encodeURIComponent(String(state[name]))}`);
  }
  return parts.length ? `#${parts.join('&')}` : '';
}

/** createSeq2Seq options for a state (pairs text comes from the page, not the URL). */
export function modelOptions(state, attention = state.attention, pairs = undefined) {
  const o = {
    task: state.task, cell: state.cell, bidirectional: state.bidirectional, layers: state.layers,
    embed: state.embed, hidden: state.hidden, attention, seed: state.seed, batch: Math.max(state.batch, 64),
  };
  if (['copy', 'reverse', 'sort'].includes(state.task)) {
    Object.assign(o, { alphabet: state.alphabet, minLength: state.minLength, maxLength: state.maxLength });
  }
  if (state.task === 'pairs') o.pairs = pairs ?? '';
  return o;
}

export { CHOICES };
