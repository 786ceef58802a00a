// A small byte-level BPE tokenizer.json in Hugging Face's tokenizers format, as
// Pythia's is laid out (an <|endoftext|> added token, a ByteLevel pre-tokenizer and
// decoder, a BPE model with its vocab and merges), for the pages' tests: ids 0
// <|endoftext|>, 1 + b for byte b, then one id per merge (it spells "Alice", " saw"
// and " cat"). Its ids differ from GPT-2's, so text read by it is told apart from
// text read by GPT-2's built-in tokenizer.
import { BYTE_TO_UNICODE } from '../../web/engine/bpe.js';

const EOT = '<|endoftext|>';
const G = BYTE_TO_UNICODE[0x20]; // a space, as the vocab spells it
const MERGES = [['A', 'l'], ['Al', 'i'], ['Ali', 'c'], ['Alic', 'e'], [G, 's'], [`${G}s`, 'a'], [`${G}sa`, 'w'], [G, 'c'], [`${G}c`, 'a'], [`${G}ca`, 't']];

/** The tokenizer.json object; its vocabulary has TOKENIZER_SIZE tokens. */
export function tokenizerJson() {
  const vocab = { [EOT]: 0 };
  BYTE_TO_UNICODE.forEach((c, b) => { vocab[c] = 1 + b; });
  MERGES.forEach(([a, b], i) => { vocab[a + b] = 257 + i; });
  return {
    version: '1.0',
    added_tokens: [{ id: 0, content: EOT, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true }],
    normalizer: { type: 'NFC' },
    pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
    post_processor: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true },
    decoder: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true },
    model: { type: 'BPE', dropout: null, unk_token: null, fuse_unk: false, byte_fallback: false, vocab, merges: MERGES.map((m) => [...m]) },
  };
}
export const TOKENIZER_SIZE = 257 + MERGES.length;
