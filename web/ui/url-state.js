// One URL-state codec for every page, driven by a declarative table of properties
// (one table per page), like TensorFlow Playground's: a link is
// "#ver=<version>&name=value&..." with readable values, and a bad or unknown field
// falls back to its default on its own (reported, so the notice can name it)
// instead of rejecting the whole link. Older links are migrated step by step.
//
//   const codec = createUrlState({ version, props, migrations, fix })
//     version      the current format version (written as ver=N; a link without ver is version 1)
//     props        [{ name, type, def, ... }] read in this order, so a default or a check may
//                  depend on the fields before it:
//                    type 'enum' (values), 'int' | 'number' (min, max), 'bool', 'string'
//                    (maxLength, pattern), 'list' (strings: maxItems, item(text) -> reason | null),
//                    'vector' (numbers), 'matrix' (rows of numbers; min, max)
//                    def: a value or (stateSoFar) => value
//                    check(value, stateSoFar) -> reason | null   (shapes, cross-field limits)
//     migrations   { [n]: (entries) => entries }: turns a version-n link's entries (name -> raw
//                  text, or typed values) into version n+1's; run in order up to `version`
//     fix(state, reset)  optional: restores cross-field invariants after reading; calls
//                  reset(name, reason) for each field it had to put back to its default
//   codec.decode(hash)            -> { state, ignored: [{ name, reason }], version }; of a link's
//                                   unknown fields the first 100 are named, the rest counted in
//                                   one last entry; a link over 1 MiB is refused whole
//   codec.fromObject(obj, {strict}) the same from a plain object (a JSON file); strict: the
//                                   first bad field gives { error } instead of a default
//   codec.encode(state)           -> '#ver=N&...' with every field that differs from its default
//   codec.defaults()              -> the default state
// Decoding never evaluates anything: split, decodeURIComponent, Number, and the table's checks.

const MAX_HASH = 1 << 20;

const isNum = (v) => typeof v === 'number' && Number.isFinite(v);
const NUMBER_TEXT = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;

function toNumber(raw) {
  if (isNum(raw)) return raw;
  if (typeof raw === 'string' && NUMBER_TEXT.test(raw.trim())) return Number(raw);
  return NaN;
}

function decodeText(raw) {
  if (typeof raw !== 'string') return raw;
  return decodeURIComponent(raw);
}

/** Reads one raw value (URL text or a typed value) for property p: { value } or { reason }. */
function read(p, raw) {
  const range = () => `must be ${p.type === 'int' ? 'an integer' : 'a number'} from ${p.min} to ${p.max}`;
  switch (p.type) {
    case 'enum': {
      const v = decodeText(raw);
      return p.values.includes(v) ? { value: v } : { reason: `must be one of ${p.values.join(', ')}` };
    }
    case 'bool': {
      const v = typeof raw === 'boolean' ? raw : raw === 'true' ? true : raw === 'false' ? false : null;
      return v === null ? { reason: 'must be true or false' } : { value: v };
    }
    case 'int': case 'number': {
      const v = toNumber(typeof raw === 'string' ? decodeText(raw) : raw);
      if (!Number.isFinite(v) || (p.type === 'int' && !Number.isInteger(v)) || v < p.min || v > p.max) return { reason: range() };
      return { value: v };
    }
    case 'string': {
      const v = decodeText(raw);
      if (typeof v !== 'string' || v.length > (p.maxLength ?? 256) || (p.pattern && !p.pattern.test(v))) return { reason: 'is not allowed text' };
      return { value: v };
    }
    case 'list': {
      const items = Array.isArray(raw) ? raw : typeof raw === 'string' ? raw.split(',').map(decodeURIComponent) : null;
      if (!items || items.length < (p.minItems ?? 1) || items.length > (p.maxItems ?? 1024)) {
        return { reason: `must be a list of ${p.minItems ?? 1} to ${p.maxItems ?? 1024} items` };
      }
      for (let k = 0; k < items.length; k++) {
        const why = typeof items[k] !== 'string' ? 'is not text' : p.item?.(items[k]);
        if (why) return { reason: `item ${k + 1} ${why}` };
      }
      return { value: [...items] };
    }
    case 'vector': case 'matrix': {
      let rows;
      if (typeof raw === 'string') rows = raw.split(';').map((r) => r.split(',').map(toNumber));
      else if (Array.isArray(raw)) rows = p.type === 'vector' ? [[...raw]] : raw.map((r) => (Array.isArray(r) ? [...r] : r));
      if (!Array.isArray(rows) || !rows.every(Array.isArray)) return { reason: 'is not a list of numbers' };
      if (p.type === 'vector' && rows.length !== 1) return { reason: 'must be one row of numbers' };
      const lim = p.max ?? Infinity;
      for (let i = 0; i < rows.length; i++) {
        for (let j = 0; j < rows[i].length; j++) {
          const v = toNumber(rows[i][j]);
          if (!Number.isFinite(v) || Math.abs(v) > lim) return { reason: `value [${i + 1}][${j + 1}] is not a number between −${lim} and ${lim}` };
          rows[i][j] = v;
        }
      }
      return { value: p.type === 'vector' ? rows[0] : rows };
    }
    default:
      return { reason: `has an unknown type ${p.type}` };
  }
}

function write(p, v) {
  switch (p.type) {
    case 'list': return v.map(encodeURIComponent).join(',');
    case 'vector': return v.join(',');
    case 'matrix': return v.map((r) => r.join(',')).join(';');
    default: return encodeURIComponent(String(v));
  }
}

function same(a, b) {
  if (a === b) return true;
  if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
  return a.every((x, k) => same(x, b[k]));
}

/**
 * Unknown names a link may hold, kept and reported by name: far more than a
 * page's table (or an older version's) has. Past them, unknown fields are
 * only counted, so a link of junk (50,000 fields in 1 MB) is read in one
 * linear pass over small tables.
 */
const MAX_UNKNOWN = 100;

/**
 * Splits "a=1&b=2" into a null-prototype map of raw (still URL-encoded)
 * values, a repeated name keeping its last value. Names `known` accepts are
 * always kept; of the others, the first `max` distinct ones, and `dropped`
 * counts the fields past them.
 */
function readEntries(body, known, max) {
  const entries = Object.create(null);
  let unknown = 0;
  let dropped = 0;
  for (const part of body.split('&')) {
    if (!part) continue;
    const eq = part.indexOf('=');
    const name = eq < 0 ? part : part.slice(0, eq);
    if (!(name in entries) && !known(name)) {
      if (unknown >= max) {
        dropped++;
        continue;
      }
      unknown++;
    }
    entries[name] = eq < 0 ? '' : part.slice(eq + 1);
  }
  return { entries, dropped };
}

export function createUrlState({ version, props, migrations = {}, fix }) {
  const byName = new Map(props.map((p) => [p.name, p]));
  const defOf = (p, s) => {
    const d = typeof p.def === 'function' ? p.def(s) : p.def;
    return Array.isArray(d) ? structuredClone(d) : d;
  };

  /** entries: name -> raw value; dropped: unknown fields of the link not among them (see readEntries). */
  function build(entries, { strict = false, dropped = 0 } = {}) {
    const s = {};
    const ignored = [];
    const reported = new Set(); // the names in ignored: one look-up per field, not a search of the list
    const reset = (name, reason) => {
      if (strict) throw Object.assign(new Error(`“${name}” ${reason}`), { field: name });
      if (reported.has(name)) return;
      reported.add(name);
      ignored.push({ name, reason });
    };
    let unknown = 0;
    let more = dropped;
    for (const name of Object.keys(entries)) {
      if (byName.has(name) || name === 'ver') continue;
      if (unknown++ < MAX_UNKNOWN || strict) reset(name.slice(0, 40), 'is not a setting');
      else more++;
    }
    for (const p of props) {
      const raw = entries[p.name];
      if (raw === undefined) { s[p.name] = defOf(p, s); continue; }
      let r;
      try { r = read(p, raw); } catch { r = { reason: 'is not valid URL text' }; }
      if (r.reason === undefined && p.check) {
        const why = p.check(r.value, s);
        if (why) r = { reason: why };
      }
      if (r.reason !== undefined) { reset(p.name, r.reason); s[p.name] = defOf(p, s); } else s[p.name] = r.value;
    }
    fix?.(s, (name, reason) => {
      reset(name, reason);
    });
    if (more > 0) ignored.push({ name: `${more} more fields`, reason: 'are not settings either' });
    return { state: s, ignored };
  }

  function migrate(entries, from) {
    let e = entries;
    for (let n = from; n < version; n++) {
      if (!migrations[n]) throw new Error(`no migration from version ${n}`);
      e = migrations[n](e);
    }
    return e;
  }

  return {
    version,
    props,
    defaults: () => build({}).state,
    decode(hash) {
      const body = String(hash ?? '').replace(/^#/, '');
      if (!body) return { state: build({}).state, ignored: [], version };
      if (body.length > MAX_HASH) return { state: build({}).state, ignored: [{ name: 'link', reason: 'is too long' }], version };
      const read = readEntries(body, (name) => byName.has(name) || name === 'ver', MAX_UNKNOWN);
      let entries = read.entries;
      const { dropped } = read;
      const v = entries.ver === undefined ? 1 : Number(entries.ver);
      delete entries.ver;
      if (!Number.isInteger(v) || v < 1 || v > version) {
        const r = build(entries, { dropped });
        r.ignored.unshift({ name: 'ver', reason: `version ${String(v).slice(0, 12)} is not one this page reads (1 to ${version})` });
        return { ...r, version: v };
      }
      try {
        entries = migrate(entries, v);
      } catch (err) {
        return { state: build({}).state, ignored: [{ name: 'link', reason: err.message }], version: v };
      }
      return { ...build(entries, { dropped }), version: v };
    },
    fromObject(obj, { strict = false } = {}) {
      if (!obj || typeof obj !== 'object' || Array.isArray(obj)) return strict ? { error: 'the state is not an object' } : build({});
      // as decode: the settings and the first unknown fields are copied, the rest only counted
      const entries = Object.create(null);
      let dropped = 0;
      let unknown = 0;
      for (const name of Object.keys(obj)) {
        if (name === 'ver' || name === 'version') continue;
        if (byName.has(name) || unknown++ < MAX_UNKNOWN) entries[name] = obj[name];
        else dropped++;
      }
      const own = (name) => (Object.hasOwn(obj, name) ? obj[name] : undefined);
      const v = own('ver') ?? own('version') ?? version;
      try {
        if (!Number.isInteger(v) || v < 1 || v > version) throw new Error(`unknown state version ${String(v).slice(0, 12)} (expected 1 to ${version})`);
        return build(migrate(entries, v), { strict, dropped });
      } catch (err) {
        if (strict) return { error: err.message };
        return build({});
      }
    },
    encode(state) {
      const parts = [`ver=${version}`];
      const s = {};
      for (const p of props) {
        const d = defOf(p, s);
        s[p.name] = state[p.name];
        if (state[p.name] === undefined || same(state[p.name], d)) continue;
        parts.push(`${p.name}=${write(p, state[p.name])}`);
      }
      return `#${parts.join('&')}`;
    },
  };
}
