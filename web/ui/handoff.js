// A model handed from one page to another of the site (Learn's "watch every head
// of this model in the lab"): the page that trained it writes its saved bytes and
// its recorded run to localStorage under one key, and links with start=learn; the
// page it opens takes it (once: it is removed when read). localStorage is shared
// by the site's tabs and is anyone's to write, so what is read is checked here as
// text (its size, its fields) and again by the engine (the bytes, as any file) and
// the lab (the run, as any recorded history).
//   writeHandoff(storage, { kind, bytes: Uint8Array, history, label })   false when it does not fit
//   takeHandoff(storage)  { kind, bytes, history, label } | { error } | null (nothing handed)

export const HANDOFF_KEY = 'attnlab-handoff';
/** The largest handoff read (characters of its JSON): a small model and its run, with room. */
const MAX_CHARS = 8 << 20;
const LABEL_MAX = 120;

const toBase64 = (bytes) => {
  let s = '';
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s);
};

export function writeHandoff(storage, { kind, bytes, history, label }) {
  const text = JSON.stringify({ kind, bytes: toBase64(bytes), history, label: String(label).slice(0, LABEL_MAX) });
  if (text.length > MAX_CHARS) return false;
  try {
    storage.setItem(HANDOFF_KEY, text);
    return true;
  } catch {
    return false; // storage full or off: the link opens the lab's own model
  }
}

export function takeHandoff(storage) {
  let text = null;
  try {
    text = storage.getItem(HANDOFF_KEY);
    storage.removeItem(HANDOFF_KEY);
  } catch {
    return { error: 'this browser keeps no storage for the site' };
  }
  if (text === null) return null;
  if (text.length > MAX_CHARS) return { error: `the handed model is ${text.length.toLocaleString('en')} characters, past the ${MAX_CHARS.toLocaleString('en')} read` };
  let o;
  try {
    o = JSON.parse(text);
  } catch {
    return { error: 'the handed model is not JSON' };
  }
  if (!o || typeof o !== 'object' || typeof o.kind !== 'string' || typeof o.bytes !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(o.bytes)) {
    return { error: 'the handed model lacks its kind or its bytes' };
  }
  const raw = atob(o.bytes);
  const bytes = new Uint8Array(raw.length);
  for (let i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
  const label = typeof o.label === 'string' ? o.label.slice(0, LABEL_MAX) : 'a model from another page';
  return { kind: o.kind, bytes, history: o.history ?? null, label };
}
