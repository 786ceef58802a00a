// The embedding protocol, shared by the embedded widget (web/ui/embed.js) and the
// host page's helper (web/embed/embed.js): the widget names, the URL that shows one
// widget alone, and the checks every message from another window passes.
// No DOM here, so it runs under Node too. docs/embedding.md documents every field.
//
//   VERSION                    the protocol's (and package's) version, sent in attnlab:ready
//   MAX_LINK                   the longest link attnlab:set accepts (characters)
//   LINK_QUERY                 the query fields a state link carries besides its #…: the hub model chosen, Pythia's scan steps
//   linkQuery(link)            those fields of a state link, as 'repo=…&revision=…' ('' for none, or a '#…' link)
//   withLinkQuery(search, link)  a page's query with those fields taken from the link
//   PLAYGROUND_VIEWS, LAB_FAMILIES   the values of &view= and &family=
//   widgetUrl(widget, { base, state, origin, lti })  the page URL that embeds `widget`
//   parseWidget(widget)        { page, view | family | chapter+name } or throws a TypeError naming what is wrong
//   readEmbedParams(search)    the ?embed parameters of a page's query, or null when not embedded
//   checkToWidget(data)        null for a valid message to a widget, else the reason it is refused
//   checkFromWidget(data)      the same for a message from a widget (the host's side)

export const VERSION = '0.1.0';
/** A state link longer than this is refused: a 64 × 64 playground link is about 100 KB. */
export const MAX_LINK = 256 * 1024;
/**
 * The query fields of a state link, besides its #…: the model a lab link chose from a hub, as
 * web/ui/model-link.js writes them (?repo=owner/name&revision=stepN&hub=./models; main and the
 * default hub left out), and the steps Pythia's training scan was given (?steps=0,512,4000, as
 * web/ui/training-scan-core.js scanLink writes them). The page that reads them checks each and
 * opens or fetches nothing by itself.
 */
export const LINK_QUERY = Object.freeze(['repo', 'revision', 'hub', 'steps']);
/** The playground's single views (&view=); without one the whole playground is shown. */
export const PLAYGROUND_VIEWS = ['scores', 'weights', 'context', 'self-attention', 'positions'];
/** The lab's families (&family=). */
export const LAB_FAMILIES = ['seq2seq', 'images', 'transformer'];
/** A Learn widget's name: lower-case words joined by hyphens. */
const NAME = /^[a-z][a-z0-9-]{0,31}$/;
const PAGES = { playground: 'index.html', lab: 'lab.html', learn: 'learn.html' };

/**
 * The parts of a widget name: 'playground', 'playground/weights', 'lab/transformer',
 * 'learn/9/induction'. Throws a TypeError saying what is wrong with any other.
 */
export function parseWidget(widget) {
  if (typeof widget !== 'string' || widget.length > 64) throw new TypeError('widget: expected a name such as "playground/weights", "lab/transformer" or "learn/9/induction"');
  const [page, a, b, ...rest] = widget.split('/');
  if (page === 'playground' && b === undefined) {
    if (a === undefined) return { page };
    if (PLAYGROUND_VIEWS.includes(a)) return { page, view: a };
    throw new TypeError(`widget: the playground has no view "${a}" (one of ${PLAYGROUND_VIEWS.join(', ')})`);
  }
  if (page === 'lab' && b === undefined) {
    if (LAB_FAMILIES.includes(a)) return { page, family: a };
    throw new TypeError(`widget: the lab has no family "${a}" (one of ${LAB_FAMILIES.join(', ')})`);
  }
  if (page === 'learn' && !rest.length && /^[1-9][0-9]?$/.test(a ?? '') && NAME.test(b ?? '')) return { page, chapter: Number(a), name: b };
  throw new TypeError(`widget: "${widget}" is not a widget name (playground[/VIEW], lab/FAMILY or learn/CHAPTER/NAME)`);
}

/** The name of the widget a page's embed parameters show (the inverse of parseWidget). */
export function widgetName({ page, view, family, chapter, name }) {
  if (page === 'playground') return view ? `playground/${view}` : 'playground';
  if (page === 'lab') return `lab/${family}`;
  return `learn/${chapter}/${name}`;
}

/** An origin ("https://course.example") as the URL API writes it, or null when `text` is not one. */
export function exactOrigin(text) {
  if (typeof text !== 'string' || text.length > 256) return null;
  try {
    const url = new URL(text);
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.origin === text ? text : null;
  } catch {
    return null;
  }
}

/** The hash of a state link ("#..." or a URL with one), '' for none; null when it is not a link. */
export function hashOf(link) {
  if (typeof link !== 'string') return null;
  if (link === '' || link.startsWith('#')) return link;
  try {
    return new URL(link).hash;
  } catch {
    return null;
  }
}

/** A query parameter's name as URLSearchParams reads it ('' for one that is not well encoded). */
function paramName(part) {
  try {
    return decodeURIComponent(part.split('=')[0].replace(/\+/g, ' '));
  } catch {
    return '';
  }
}

/** The LINK_QUERY fields of a state link (a URL; a '#…' link has none), as 'repo=…&revision=…', or ''. */
export function linkQuery(link) {
  if (typeof link !== 'string' || link === '' || link.startsWith('#')) return '';
  let search;
  try {
    search = new URL(link).search;
  } catch {
    return '';
  }
  return search.slice(1).split('&').filter((part) => LINK_QUERY.includes(paramName(part))).join('&');
}

/**
 * A page's query (location.search) with its LINK_QUERY fields those of `link`: a link that is
 * a URL sets them (removing those it lacks), one of only '#…' leaves them. Every other
 * parameter (?embed and its own) stays as it is.
 */
export function withLinkQuery(search, link) {
  if (typeof link !== 'string' || link === '' || link.startsWith('#') || hashOf(link) === null) return search;
  const kept = search.replace(/^\?/, '').split('&').filter((part) => part && !LINK_QUERY.includes(paramName(part)));
  const text = [...kept, linkQuery(link)].filter(Boolean).join('&');
  return text ? `?${text}` : '';
}

/**
 * The URL of the page that shows `widget` alone: base is where attnlab is hosted (a folder URL),
 * state a link (its #hash is kept, and the model it chose: LINK_QUERY), origin the host page's
 * origin (restricts the messages), lti adds Canvas's lti.frameResize messages.
 */
export function widgetUrl(widget, { base, state = '', origin = null, lti = false } = {}) {
  const w = parseWidget(widget);
  const url = new URL(PAGES[w.page], base);
  const params = ['embed'];
  if (w.view) params.push(`view=${w.view}`);
  if (w.family) params.push(`family=${w.family}`);
  if (w.chapter) params.push(`chapter=${w.chapter}`, `widget=${w.name}`);
  if (lti) params.push('lti');
  if (origin !== null) {
    if (!exactOrigin(origin)) throw new TypeError(`origin: "${String(origin).slice(0, 80)}" is not an origin such as https://course.example`);
    params.push(`origin=${encodeURIComponent(origin)}`);
  }
  const hash = hashOf(state);
  if (hash === null) throw new TypeError('state: expected a link (a URL or "#…") that Share or Embed made');
  const model = linkQuery(state);
  if (model) params.push(model);
  return `${url.origin}${url.pathname}?${params.join('&')}${hash}`;
}

/**
 * The embed parameters of a page's query string, or null when the page is not embedded:
 * { view, family, chapter, widget, lti, origin, problems } where problems lists the values
 * that were not understood (a bad &origin= is one: then origin is false and nothing is sent).
 */
export function readEmbedParams(search) {
  const q = new URLSearchParams(typeof search === 'string' ? search.slice(0, 2048) : '');
  if (!q.has('embed')) return null;
  const problems = [];
  const pick = (name, ok) => {
    const v = q.get(name);
    if (v === null) return null;
    if (ok(v)) return v;
    problems.push(`${name}=${v.slice(0, 40)}`);
    return null;
  };
  const view = pick('view', (v) => PLAYGROUND_VIEWS.includes(v));
  const family = pick('family', (v) => LAB_FAMILIES.includes(v));
  const chapter = pick('chapter', (v) => /^[1-9][0-9]?$/.test(v));
  const widget = pick('widget', (v) => NAME.test(v));
  let origin = null;
  if (q.has('origin')) {
    origin = exactOrigin(q.get('origin')) ?? false;
    if (origin === false) problems.push(`origin=${q.get('origin').slice(0, 80)}`);
  }
  return { view, family, chapter: chapter === null ? null : Number(chapter), widget, lti: q.has('lti'), origin, problems };
}

const isRecord = (data) => data !== null && typeof data === 'object' && !Array.isArray(data)
  && (Object.getPrototypeOf(data) === Object.prototype || Object.getPrototypeOf(data) === null);

/** Why a message cannot be a message of `types` (each a list of [field, check]), or null. */
function checkMessage(data, types) {
  if (!isRecord(data)) return 'not a plain object';
  const keys = Object.keys(data);
  if (keys.length > 8) return 'too many fields';
  if (typeof data.type !== 'string' || !Object.hasOwn(types, data.type)) return `unknown type ${typeof data.type === 'string' ? JSON.stringify(data.type.slice(0, 40)) : `(${typeof data.type})`}`;
  const fields = types[data.type];
  for (const key of keys) if (key !== 'type' && !Object.hasOwn(fields, key)) return `${data.type}: unknown field ${JSON.stringify(key.slice(0, 40))}`;
  for (const [key, ok] of Object.entries(fields)) {
    const why = ok(data[key]);
    if (why) return `${data.type}: ${key} ${why}`;
  }
  return null;
}

const link = (v) => (typeof v !== 'string' ? 'is not a string'
  : v.length > MAX_LINK ? `is longer than ${MAX_LINK} characters`
    : hashOf(v) === null ? 'is not a link' : null);
const text = (max) => (v) => (typeof v === 'string' && v.length <= max ? null : `is not a string of at most ${max} characters`);
const count = (v) => (Number.isInteger(v) && v >= 0 && v <= 1e9 ? null : 'is not a whole number');
const height = (v) => (Number.isFinite(v) && v >= 0 && v <= 1e6 ? null : 'is not a height in pixels');
const flag = (v) => (typeof v === 'boolean' ? null : 'is not true or false');

const TO_WIDGET = { 'attnlab:set': { link } };
const FROM_WIDGET = {
  'attnlab:ready': { widget: text(64), version: text(32) },
  'attnlab:resize': { height },
  'attnlab:state': { link },
  'attnlab:challenge': { chapter: count, widget: text(64), solved: flag, attempts: count },
};

/** null when `data` is a valid message to a widget ({ type: 'attnlab:set', link }), else why not. */
export const checkToWidget = (data) => checkMessage(data, TO_WIDGET);
/** null when `data` is a valid message from a widget (ready, resize, state, challenge), else why not. */
export function checkFromWidget(data) {
  if (isRecord(data) && data.subject === 'lti.frameResize') return null;
  return checkMessage(data, FROM_WIDGET);
}
