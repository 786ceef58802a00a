// Byte-level BPE, once, for every tokenizer the engine reads: GPT-2's built-in
// one (gpt2-tokenizer.js) and any Hugging Face tokenizer.json whose model is a
// byte-level BPE (GPT-2's, Pythia's, ...; readTokenizerJson below). A text is
// cut at its added tokens (<|endoftext|>), each stretch between them split by
// the pre-tokenizer's pattern into pieces, and each piece's UTF-8 bytes merged
// pair by pair: always the adjacent pair of lowest rank, the leftmost of equal
// ranks, until no adjacent pair has one. The parts are a linked list and the
// candidate pairs a binary heap, so a piece of n bytes merges in O(n log n).
import { argError, describe, guard, limitError, valueError } from './errors.js';

/** The longest text encode() takes (UTF-16 code units): 4 Mi, checked before any work. */
export const MAX_TOKENIZE_CHARS = 2 ** 22;
/** The largest tokenizer.json read (characters of its text, or bytes). */
export const MAX_TOKENIZER_JSON = 64 << 20;
/** The most entries of a tokenizer.json's vocab (and of its merges); every id is below it too. */
export const MAX_VOCAB = 1 << 20;
/** The most added tokens of a tokenizer.json. */
export const MAX_ADDED_TOKENS = 1 << 16;

/**
 * GPT-2's pre-tokenizer (encoder.py; ByteLevel's use_regex in tokenizer.json):
 * contractions, letters, digits, other symbols (each optionally after one
 * space), then runs of white space.
 */
export const GPT2_SPLIT = /'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+/gu;

const CACHE_PIECES = 20000; // pieces whose ids are remembered (words recur)
export const BYTES = 0x100; // the byte values a byte-level BPE starts from
const CACHE_PIECE_CHARS = 0x100; // longer pieces are merged each time, not kept
const WHITE_SPACE = /\s/;

const utf8 = new TextEncoder();
const APPLY_CHUNK = 8000; // bytes per String.fromCharCode call: an argument list stays short
/** Bytes as a string of one char per byte (a Map key of a token's bytes). */
export const latin1 = (bytes, from = 0, to = bytes.length) => {
  let s = '';
  for (let i = from; i < to; i += APPLY_CHUNK) s += String.fromCharCode.apply(null, bytes.subarray(i, Math.min(to, i + APPLY_CHUNK)));
  return s;
};

/**
 * GPT-2's bytes_to_unicode (encoder.py): the char each byte is written as in a
 * byte-level vocab — printable Latin-1 as itself, every other byte as U+0100
 * onwards in byte order (space is 'Ġ', newline 'Ċ').
 */
export const BYTE_TO_UNICODE = (() => {
  const printable = (b) => (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
  let next = BYTES;
  return Object.freeze(Array.from({ length: BYTES }, (_, b) => String.fromCharCode(printable(b) ? b : next++)));
})();
const UNICODE_TO_BYTE = new Map(BYTE_TO_UNICODE.map((c, b) => [c, b]));

/** A token's bytes as text: UTF-8 where the bytes are whole characters, a stray byte as <0xHH>. */
export function readable(bytes) {
  const strict = new TextDecoder('utf-8', { fatal: true });
  let out = '';
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i];
    const n = b < 0x80 ? 1 : b >= 0xc2 && b < 0xe0 ? 2 : b >= 0xe0 && b < 0xf0 ? 3 : b >= 0xf0 && b < 0xf5 ? 4 : 0;
    if (n > 0 && i + n <= bytes.length) {
      try {
        out += strict.decode(bytes.subarray(i, i + n));
        i += n;
        continue;
      } catch { /* not a whole character: shown byte by byte below */ }
    }
    out += `<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`;
    i += 1;
  }
  return out;
}

/** A min-heap of pairs (rank, position): the lowest rank first, then the leftmost. */
class PairHeap {
  constructor(capacity) {
    this.ranks = new Int32Array(Math.max(16, capacity));
    this.positions = new Int32Array(this.ranks.length);
    this.size = 0;
  }

  push(rank, position) {
    if (this.size === this.ranks.length) {
      for (const key of ['ranks', 'positions']) {
        const grown = new Int32Array(2 * this[key].length);
        grown.set(this[key]);
        this[key] = grown;
      }
    }
    const { ranks: r, positions: p } = this;
    let i = this.size++;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (r[parent] < rank || (r[parent] === rank && p[parent] < position)) break;
      r[i] = r[parent];
      p[i] = p[parent];
      i = parent;
    }
    r[i] = rank;
    p[i] = position;
  }

  /** Removes the top pair; its rank and position are read first from ranks[0], positions[0]. */
  pop() {
    const { ranks: r, positions: p } = this;
    const n = --this.size, rank = r[n], position = p[n];
    let i = 0;
    for (;;) {
      let c = 2 * i + 1;
      if (c >= n) break;
      if (c + 1 < n && (r[c + 1] < r[c] || (r[c + 1] === r[c] && p[c + 1] < p[c]))) c += 1;
      if (r[c] > rank || (r[c] === rank && p[c] > position)) break;
      r[i] = r[c];
      p[i] = p[c];
      i = c;
    }
    r[i] = rank;
    p[i] = position;
  }
}

/**
 * The ids of one piece's bytes under `merges`: { byteIds (Int32Array(256), the
 * id of each byte), rank(left, right) (the rank of merging two adjacent parts'
 * ids, -1 if they do not merge), merged(rank) (the id that merge makes) },
 * pushed onto `out`. Part i runs from byte i to byte next[i]; a merged-away
 * part has next -1. A heap entry is checked when popped (its pair's rank
 * recomputed), so entries of pairs that changed since are skipped, never searched for.
 */
function mergeBytes(bytes, merges, out) {
  const n = bytes.length;
  const { byteIds, rank, merged } = merges;
  const ids = new Int32Array(n), next = new Int32Array(n), prev = new Int32Array(n);
  for (let i = 0; i < n; i += 1) {
    ids[i] = byteIds[bytes[i]];
    next[i] = i + 1;
    prev[i] = i - 1;
  }
  const heap = new PairHeap(2 * n);
  const offer = (i) => {
    const j = next[i];
    if (j < n) {
      const r = rank(ids[i], ids[j]);
      if (r >= 0) heap.push(r, i);
    }
  };
  for (let i = 0; i + 1 < n; i += 1) offer(i);
  while (heap.size > 0) {
    const r = heap.ranks[0], i = heap.positions[0];
    heap.pop();
    const j = next[i];
    if (j < 0 || j >= n || rank(ids[i], ids[j]) !== r) continue; // stale: the pair at i changed
    ids[i] = merged(r);
    const k = next[j];
    next[i] = k;
    if (k < n) prev[k] = i;
    next[j] = -1;
    offer(i);
    if (prev[i] >= 0) offer(prev[i]);
  }
  for (let i = 0; i < n; i = next[i]) out.push(ids[i]);
}

/** RegExp special characters escaped, for an added token's content matched literally. */
const literal = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Added tokens as one finder: the leftmost match, the longest of those starting there; null when none. */
function finderOf(tokens) {
  if (tokens.length === 0) return null;
  const longestFirst = [...tokens].sort((a, b) => b.content.length - a.content.length);
  return { pattern: new RegExp(longestFirst.map((t) => literal(t.content)).join('|'), 'g'), byContent: new Map(tokens.map((t) => [t.content, t])) };
}

/**
 * text cut at the added tokens `finder` finds: onText(stretch) for the text
 * between them, onToken(id) for each, in order; lstrip / rstrip take the
 * white space before / after a token into it.
 */
function cutAtAdded(text, finder, onText, onToken) {
  if (finder === null) {
    if (text.length > 0) onText(text);
    return;
  }
  const { pattern, byContent } = finder;
  let from = 0;
  pattern.lastIndex = 0;
  for (let m = pattern.exec(text); m !== null; m = pattern.exec(text)) {
    const token = byContent.get(m[0]);
    let start = m.index, end = start + m[0].length;
    if (token.lstrip) while (start > from && WHITE_SPACE.test(text[start - 1])) start -= 1;
    if (token.rstrip) while (end < text.length && WHITE_SPACE.test(text[end])) end += 1;
    if (start > from) onText(text.slice(from, start));
    onToken(token.id);
    from = pattern.lastIndex = end;
  }
  if (from < text.length) onText(text.slice(from));
}

/**
 * A tokenizer of the engine's shape, { vocabulary, endOfText, encode, decode,
 * token }, from a byte-level BPE: `name` (for messages), `pieces` (each id's
 * bytes; a hole is an id with no token), `merges` (as mergeBytes takes them),
 * `whole` (null, or a Map of a token's bytes as latin1 → id: a piece that is a
 * token is that token, unmerged), `added` ([{ content, id, lstrip, rstrip,
 * normalized }], matched in the text before it is split), `normalize` (null or
 * text → text, before the added tokens marked normalized are matched), `split`
 * (the pre-tokenizer's pattern, or null: a stretch is one piece) and
 * `prefixSpace` (a space put before a stretch that does not start with one).
 */
export function bpeTokenizer({ name, pieces, merges, whole = null, added = [], normalize = null, split = GPT2_SPLIT, prefixSpace = false }) {
  const vocabulary = pieces.length;
  const names = new Array(vocabulary);
  for (const t of added) names[t.id] = t.content;
  const nameOf = (id) => (names[id] ??= readable(pieces[id]));
  const endOfText = added.find((t) => t.content === '<|endoftext|>')?.id ?? -1;
  // Without a normalizer every added token is found in the raw text at once;
  // with one, those marked normalized are found in the normalized stretches between the others.
  const raw = finderOf(normalize === null ? added : added.filter((t) => !t.normalized));
  const normalized = normalize === null ? null : finderOf(added.filter((t) => t.normalized));

  const cache = new Map();
  let ids = []; // the ids of the text being encoded
  const pushId = (id) => ids.push(id);
  const encodePiece = (text) => {
    let found = cache.get(text);
    if (found === undefined) {
      const bytes = utf8.encode(text);
      const id = whole?.get(latin1(bytes));
      found = [];
      if (id !== undefined) found.push(id);
      else mergeBytes(bytes, merges, found);
      if (text.length <= CACHE_PIECE_CHARS) {
        if (cache.size >= CACHE_PIECES) cache.clear();
        cache.set(text, found);
      }
    }
    for (const id of found) ids.push(id);
  };
  const preTokenize = (stretch) => {
    const text = prefixSpace && stretch[0] !== ' ' ? ` ${stretch}` : stretch;
    if (split === null) encodePiece(text);
    else for (const m of text.matchAll(split)) encodePiece(m[0]);
  };
  const onRawText = normalize === null ? preTokenize : (stretch) => cutAtAdded(normalize(stretch), normalized, preTokenize, pushId);

  /** list's ids, each read once and checked, as an Int32Array. */
  const toIds = (list, what) => {
    if (!(Array.isArray(list) || (ArrayBuffer.isView(list) && !(list instanceof DataView)))) {
      throw argError(`${what}: ids: expected an array of token ids (got ${describe(list)})`);
    }
    const out = new Int32Array(list.length);
    for (let i = 0; i < out.length; i += 1) {
      const id = list[i];
      if (!Number.isInteger(id) || id < 0 || id >= vocabulary) {
        throw valueError(`${what}: ids[${i}] is ${describe(id)}; token ids are integers 0..${vocabulary - 1}`);
      }
      if (pieces[id] === undefined) throw valueError(`${what}: ids[${i}] is ${id}, which is no token of this tokenizer`);
      out[i] = id;
    }
    return out;
  };
  return Object.freeze({
    vocabulary,
    endOfText,
    /** text → { ids, tokens }: the token ids and each token's text (an added token in the text is its id). */
    encode(text) {
      if (typeof text !== 'string') throw argError(`${name}.encode: text: expected a string (got ${describe(text)})`);
      if (text.length > MAX_TOKENIZE_CHARS) {
        throw limitError(`${name}.encode: text: ${text.length} characters is past the limit of ${MAX_TOKENIZE_CHARS}`);
      }
      ids = [];
      try {
        cutAtAdded(text, raw, onRawText, pushId);
        return { ids: Int32Array.from(ids), tokens: ids.map(nameOf) };
      } finally {
        ids = [];
      }
    },
    /** ids → text: the tokens' bytes joined and read as UTF-8 (a broken character reads as U+FFFD). */
    decode(list) {
      const ids = toIds(list, `${name}.decode`);
      let size = 0;
      for (const id of ids) size += pieces[id].length;
      const joined = new Uint8Array(size);
      let at = 0;
      for (const id of ids) {
        joined.set(pieces[id], at);
        at += pieces[id].length;
      }
      return new TextDecoder('utf-8', { ignoreBOM: true }).decode(joined); // a leading U+FEFF is text too
    },
    /** One token's text as encode() shows it. */
    token(id) {
      return nameOf(toIds([id], `${name}.token`)[0]);
    },
  });
}

// ---- tokenizer.json (Hugging Face tokenizers) -------------------------------

const WHAT = 'tokenizer.json';
const NORMALIZERS = { NFC: 'NFC', NFD: 'NFD', NFKC: 'NFKC', NFKD: 'NFKD' };

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v) && !ArrayBuffer.isView(v);
const typeOf = (v) => (isObject(v) && typeof v.type === 'string' ? `'${v.type}'` : describe(v));

/** o[key], which must be undefined, null or of `type` (a typeof name), else ERR_VALUE naming `at`. */
function field(o, key, type, at) {
  const v = o[key];
  if (v !== undefined && v !== null && typeof v !== type) throw valueError(`${WHAT}: ${at}.${key} must be a ${type} (got ${describe(v)})`);
  return v ?? undefined;
}

/** The file as an object: its text, its UTF-8 bytes or the parsed object, within MAX_TOKENIZER_JSON. */
function parseFile(json) {
  let text = json;
  if (json instanceof Uint8Array) {
    if (json.length > MAX_TOKENIZER_JSON) throw limitError(`${WHAT}: ${json.length} bytes is past the limit of ${MAX_TOKENIZER_JSON}`);
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(json);
    } catch {
      throw valueError(`${WHAT}: its bytes are not UTF-8`);
    }
  }
  if (typeof text === 'string') {
    if (text.length > MAX_TOKENIZER_JSON) throw limitError(`${WHAT}: ${text.length} characters is past the limit of ${MAX_TOKENIZER_JSON}`);
    try {
      text = JSON.parse(text);
    } catch (err) {
      throw valueError(`${WHAT}: not JSON (${err.message})`);
    }
    if (!isObject(text)) throw valueError(`${WHAT}: expected an object at the top (got ${describe(text)})`);
    return text;
  }
  if (!isObject(json)) {
    throw argError(`readTokenizerJson: expected tokenizer.json as its text, its bytes (a Uint8Array) or the parsed object (got ${describe(json)})`);
  }
  return json;
}

/** normalizer: null, NFC/NFD/NFKC/NFKD, or a Sequence of them, as text → text (null: none). */
function readNormalizer(n) {
  if (n === undefined || n === null) return null;
  const forms = [];
  const add = (one, at) => {
    if (isObject(one) && one.type === 'Sequence' && Array.isArray(one.normalizers)) {
      one.normalizers.forEach((inner, i) => add(inner, `${at}.normalizers[${i}]`));
    } else if (isObject(one) && Object.hasOwn(NORMALIZERS, one.type)) {
      forms.push(NORMALIZERS[one.type]);
    } else {
      throw valueError(`${WHAT}: ${at} is ${typeOf(one)}; this reader takes none or Unicode normalization (NFC, NFD, NFKC, NFKD)`);
    }
  };
  add(n, 'normalizer');
  return forms.length === 0 ? null : (text) => forms.reduce((s, form) => s.normalize(form), text);
}

/** pre_tokenizer: ByteLevel, alone or the one member of a Sequence → { prefixSpace, split }. */
function readPreTokenizer(p) {
  const members = isObject(p) && p.type === 'Sequence' && Array.isArray(p.pretokenizers) ? p.pretokenizers : [p];
  const at = members === p?.pretokenizers ? 'pre_tokenizer.pretokenizers[0]' : 'pre_tokenizer';
  const byteLevel = members[0];
  if (members.length !== 1 || !isObject(byteLevel) || byteLevel.type !== 'ByteLevel') {
    const shown = members.length === 1 ? typeOf(byteLevel) : `a Sequence of ${members.map(typeOf).join(', ')}`;
    throw valueError(`${WHAT}: pre_tokenizer is ${shown}; this reader takes byte-level BPE (pre_tokenizer 'ByteLevel') only`);
  }
  const prefixSpace = field(byteLevel, 'add_prefix_space', 'boolean', at) ?? true; // the tokenizers library's default
  const useRegex = field(byteLevel, 'use_regex', 'boolean', at) ?? true;
  field(byteLevel, 'trim_offsets', 'boolean', at);
  return { prefixSpace, split: useRegex ? GPT2_SPLIT : null };
}

/** The parts that must be ByteLevel or absent: the decoder and the post-processor. */
function checkByteLevel(f) {
  if (f.decoder === null || f.decoder === undefined || f.decoder.type !== 'ByteLevel') {
    throw valueError(`${WHAT}: decoder is ${typeOf(f.decoder)}; a byte-level BPE decodes with 'ByteLevel'`);
  }
  const post = f.post_processor;
  if (post !== undefined && post !== null && post.type !== 'ByteLevel') {
    throw valueError(`${WHAT}: post_processor is ${typeOf(post)}; this reader adds no tokens around a text (none or 'ByteLevel')`);
  }
}

/** model: a BPE without dropout, subword affixes or byte fallback → { vocab, merges, ignoreMerges }. */
function readModel(m) {
  if (!isObject(m)) throw valueError(`${WHAT}: model is ${describe(m)}; expected an object`);
  if (m.type !== 'BPE' && !(m.type === undefined && m.merges !== undefined)) {
    throw valueError(`${WHAT}: model.type is ${describe(m.type)}; this reader takes byte-level BPE ('BPE') only`);
  }
  const dropout = field(m, 'dropout', 'number', 'model');
  if (dropout !== undefined && dropout !== 0) throw valueError(`${WHAT}: model.dropout is ${dropout}; BPE dropout samples merges, and this reader tokenizes deterministically`);
  for (const key of ['continuing_subword_prefix', 'end_of_word_suffix']) {
    if (field(m, key, 'string', 'model')) throw valueError(`${WHAT}: model.${key} is ${describe(m[key])}; a byte-level BPE has none`);
  }
  if (field(m, 'byte_fallback', 'boolean', 'model')) throw valueError(`${WHAT}: model.byte_fallback is true; that is SentencePiece-style BPE, not byte-level`);
  field(m, 'unk_token', 'string', 'model'); // never used: every byte is a token
  field(m, 'fuse_unk', 'boolean', 'model');
  const ignoreMerges = field(m, 'ignore_merges', 'boolean', 'model') ?? false;
  if (!isObject(m.vocab)) throw valueError(`${WHAT}: model.vocab is ${describe(m.vocab)}; expected an object of token → id`);
  if (!Array.isArray(m.merges)) throw valueError(`${WHAT}: model.merges is ${describe(m.merges)}; expected an array`);
  return { vocab: m.vocab, merges: m.merges, ignoreMerges };
}

/** added_tokens: [{ id, content, lstrip, rstrip, normalized, special }], single_word refused. */
function readAddedTokens(list) {
  if (list === undefined || list === null) return [];
  if (!Array.isArray(list)) throw valueError(`${WHAT}: added_tokens is ${describe(list)}; expected an array`);
  if (list.length > MAX_ADDED_TOKENS) throw limitError(`${WHAT}: added_tokens: ${list.length} entries is past the limit of ${MAX_ADDED_TOKENS}`);
  const contents = new Set(), ids = new Set();
  return list.map((t, i) => {
    const at = `added_tokens[${i}]`;
    if (!isObject(t)) throw valueError(`${WHAT}: ${at} is ${describe(t)}; expected an object`);
    if (!Number.isInteger(t.id) || t.id < 0 || t.id >= MAX_VOCAB) throw valueError(`${WHAT}: ${at}.id is ${describe(t.id)}; ids are integers 0..${MAX_VOCAB - 1}`);
    if (typeof t.content !== 'string' || t.content.length === 0) throw valueError(`${WHAT}: ${at}.content is ${describe(t.content)}; expected a non-empty string`);
    if (ids.has(t.id)) throw valueError(`${WHAT}: ${at}.id ${t.id} is another added token's id`);
    if (contents.has(t.content)) throw valueError(`${WHAT}: ${at}.content ${describe(t.content)} is another added token's`);
    ids.add(t.id);
    contents.add(t.content);
    if (field(t, 'single_word', 'boolean', at)) throw valueError(`${WHAT}: ${at} (${describe(t.content)}) is single_word; this reader does not match tokens as whole words`);
    const special = field(t, 'special', 'boolean', at) ?? false;
    return {
      id: t.id, content: t.content, lstrip: field(t, 'lstrip', 'boolean', at) ?? false, rstrip: field(t, 'rstrip', 'boolean', at) ?? false,
      normalized: field(t, 'normalized', 'boolean', at) ?? !special, // the tokenizers library's default
    };
  });
}

/** A vocab token's bytes through BYTE_TO_UNICODE, or null where a char is not one of its 256. */
function tokenBytes(token) {
  const bytes = new Uint8Array(token.length);
  for (let i = 0; i < token.length; i += 1) {
    const b = UNICODE_TO_BYTE.get(token[i]);
    if (b === undefined) return null;
    bytes[i] = b;
  }
  return bytes;
}

/**
 * model.vocab, each entry read once, as { ids (a Map token → id), pieces (each
 * id's bytes; an added token's: its content's UTF-8) }.
 */
function readVocab(vocab, added) {
  const entries = Object.keys(vocab);
  if (entries.length > MAX_VOCAB) throw limitError(`${WHAT}: model.vocab: ${entries.length} entries is past the limit of ${MAX_VOCAB}`);
  const addedById = new Map(added.map((t) => [t.id, t]));
  const ids = new Map(), pieces = [];
  for (const token of entries) {
    const id = vocab[token];
    const at = () => `model.vocab[${describe(token)}]`;
    if (!Number.isInteger(id) || id < 0 || id >= MAX_VOCAB) throw valueError(`${WHAT}: ${at()} is ${describe(id)}; ids are integers 0..${MAX_VOCAB - 1}`);
    if (pieces[id] !== undefined) throw valueError(`${WHAT}: ${at()} is ${id}, the id of another token`);
    const content = addedById.get(id)?.content;
    const bytes = tokenBytes(token) ?? (token === content ? utf8.encode(content) : null);
    if (bytes === null || bytes.length === 0) throw valueError(`${WHAT}: ${at()}: not a token of bytes written as bytes_to_unicode writes them`);
    if (content !== undefined && latin1(bytes) !== latin1(utf8.encode(content))) {
      throw valueError(`${WHAT}: added token ${describe(content)} has id ${id}, which model.vocab gives to ${describe(token)}`);
    }
    pieces[id] = bytes;
    ids.set(token, id);
  }
  for (const t of added) pieces[t.id] ??= utf8.encode(t.content);
  return { ids, pieces };
}

/** model.merges ("a b" or [a, b], in rank order) as mergeBytes takes them, each pair's tokens and their join checked. */
function readMerges(list, ids) {
  if (list.length > MAX_VOCAB) throw limitError(`${WHAT}: model.merges: ${list.length} entries is past the limit of ${MAX_VOCAB}`);
  const idOf = (token) => ids.get(token) ?? -1;
  const ranks = new Map(); // left id · MAX_VOCAB + right id → rank
  const made = new Int32Array(list.length);
  for (let rank = 0; rank < list.length; rank += 1) {
    const merge = list[rank], at = `model.merges[${rank}]`;
    const pair = typeof merge === 'string' ? merge.split(' ') : merge;
    if (!Array.isArray(pair) || pair.length !== 2 || typeof pair[0] !== 'string' || typeof pair[1] !== 'string' || !pair[0] || !pair[1]) {
      throw valueError(`${WHAT}: ${at} is ${describe(merge)}; expected "a b" or ["a", "b"]`);
    }
    const a = idOf(pair[0]), b = idOf(pair[1]), joined = idOf(pair[0] + pair[1]);
    if (a < 0 || b < 0) throw valueError(`${WHAT}: ${at} names ${describe(pair[a < 0 ? 0 : 1])}, which is not in model.vocab`);
    if (joined < 0) throw valueError(`${WHAT}: ${at} joins into ${describe(pair[0] + pair[1])}, which is not in model.vocab`);
    const key = a * MAX_VOCAB + b;
    if (ranks.has(key)) throw valueError(`${WHAT}: ${at} repeats model.merges[${ranks.get(key)}]`);
    ranks.set(key, rank);
    made[rank] = joined;
  }
  return { rank: (left, right) => ranks.get(left * MAX_VOCAB + right) ?? -1, merged: (rank) => made[rank] };
}

/**
 * A Hugging Face tokenizer.json (its text, its bytes or the parsed object) as
 * a tokenizer of the engine's shape (see bpeTokenizer): model BPE with vocab
 * and merges, pre_tokenizer ByteLevel (alone or in a Sequence), decoder
 * ByteLevel, normalizer none or NFC/NFD/NFKC/NFKD, added tokens. Everything
 * is checked: anything else is an AttnlabError naming the field (ERR_VALUE;
 * ERR_LIMIT past a size limit; ERR_ARG for an argument of the wrong type).
 */
export function readTokenizerJson(json) {
  return guard('readTokenizerJson', () => {
    const f = parseFile(json);
    const model = readModel(f.model);
    const { prefixSpace, split } = readPreTokenizer(f.pre_tokenizer);
    checkByteLevel(f);
    const normalize = readNormalizer(f.normalizer);
    const added = readAddedTokens(f.added_tokens);
    const { ids, pieces } = readVocab(model.vocab, added);
    const byteIds = new Int32Array(BYTES);
    for (let b = 0; b < BYTES; b += 1) {
      const c = BYTE_TO_UNICODE[b];
      if (!ids.has(c)) throw valueError(`${WHAT}: model.vocab has no token for byte 0x${b.toString(16).padStart(2, '0')} (${describe(c)}); a byte-level BPE needs all ${BYTES}`);
      byteIds[b] = ids.get(c);
    }
    const merges = { byteIds, ...readMerges(model.merges, ids) };
    const whole = model.ignoreMerges ? new Map(Array.from(ids.values(), (id) => [latin1(pieces[id]), id])) : null;
    return bpeTokenizer({ name: 'tokenizer', pieces, merges, whole, added, normalize, split, prefixSpace });
  });
}
