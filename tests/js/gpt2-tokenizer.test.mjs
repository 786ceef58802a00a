// GPT-2's tokenizer (web/engine/gpt2-tokenizer.js, our byte-level BPE over the
// ranks scripts/gpt2-vocab.mjs takes from gpt-tokenizer) gives the same ids as
// gpt-tokenizer's own GPT-2 encoding on 200+ strings: ASCII, Unicode, emoji,
// white-space runs, contractions, long words and <|endoftext|>; decode inverts
// encode; each token's text is its bytes, a stray byte shown as <0xHH>.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { encode as reference } from 'gpt-tokenizer/encoding/gpt2';
import { AttnlabError } from '../../web/engine/errors.js';
import { gpt2Tokenizer } from '../../web/engine/gpt2-tokenizer.js';
import { mulberry32 } from '../lib/random.mjs';

const EOT = '<|endoftext|>';
const tk = await gpt2Tokenizer();

// gpt-tokenizer 4.0.0 takes an allowed special token only at the start of the text
// (its special-token pattern is sticky), so a text holding one is compared as
// tiktoken and Hugging Face split it: each stretch between them encoded alone.
const expected = (text) => text.split(EOT).flatMap((part, i) => (i > 0 ? [50256] : []).concat(reference(part)));

const FIXED = [
  '', ' ', 'a', 'Hello world', 'Hello, world!', ' the quick brown fox jumps over the lazy dog.',
  "I'm sure they'll say we've done what you'd've", "DON'T SHOUT'S", "'s 't 're 've 'm 'll 'd",
  'naïve café résumé coöperate', 'Straße Größe Ärger', 'Ελληνικά γράμματα', 'Русский текст здесь',
  '日本語のテキスト', '中文文本测试', '한국어 텍스트', 'עברית', 'العربية', 'हिन्दी', 'ไทย',
  '🙂', '👍🏽', '👨‍👩‍👧‍👦', '🏳️‍🌈', 'emoji 🙂 in 🚀 text 🎉!', '🙂🙂🙂🙂🙂', '∑∫∂√∞≈≠',
  '\t', '\n', '\n\n\n', '   ', 'a  b   c    d', 'trailing   ', '   leading', 'line\r\nbreak',
  'tabs\tand\tmore\t\t\ttabs', ' \n \t \u00a0 \u2003 \u3000 ', 'x\u00a0y', 'zero\u200bwidth',
  '1234567890', '3.14159', '-42', '1,000,000', 'v1.2.3-beta', '2026-11-28T17:55:10Z',
  'supercalifragilisticexpialidocious', 'pneumonoultramicroscopicsilicovolcanoconiosis',
  'Llanfairpwllgwyngyllgogerychwyrndrobwllllantysiliogogogoch', 'a'.repeat(300), 'ab'.repeat(200),
  'x'.repeat(1000), '!!!!!!!!!!!!!!!!!!!!', '==========', '----------', '...', '?!?!', '()[]{}<>',
  'function f(x) { return x * 2; }', 'def f(x):\n    return x ** 2\n', '<div class="a">b</div>',
  'https://example.com/path?q=1&r=2#frag', 'user@example.com', 'C:\\Users\\name\\file.txt',
  '$100 €50 £20 ¥1000', '#hashtag @mention', '«quotes» „low" "curly" \'single\'',
  EOT, `${EOT}${EOT}`, `a${EOT}b`, `text before ${EOT} text after`, `${EOT} starts`, `ends ${EOT}`,
  `<|endoftext`, `<|endoftext|`, `endoftext|>`, `<| endoftext |>`, `x<|endoftext|>y<|endoftext|>z`,
  'When Mary and John went to the store, John gave a drink to', 'The Eiffel Tower is in',
  'A B C D E F G A B C D E F G', ' the the the the the', 'ǅ ǈ ǋ', 'Ⅻ ⅻ ½ ² ³', '𝔘𝔫𝔦𝔠𝔬𝔡𝔢', '\u0301\u0301',
  'e\u0301 vs é', 'ﬁ ligature', '\ufeffBOM', 'lone \ud83d surrogate', 'tail \udc00',
];

// Random strings from pools of characters that stress each rule of the pre-tokenizer.
const POOLS = [
  'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ', '0123456789', ' ', '  \t\n\r', ".,;:!?'\"()-_/\\@#$%^&*",
  'éèüößñçåøæœ', 'αβγδεζηθ', 'абвгдежз', '日本語中文字', '한국어', '🙂🚀🎉👍🏽❤️', "'s't're've'm'll'd",
];
function randomString(random, length) {
  let s = '';
  while (s.length < length) {
    const pool = [...POOLS[Math.floor(random() * POOLS.length)]];
    const run = 1 + Math.floor(random() * 6);
    for (let i = 0; i < run; i += 1) s += pool[Math.floor(random() * pool.length)];
  }
  if (random() < 0.1) s += EOT;
  return s;
}

test('gpt2Tokenizer: the same ids as gpt-tokenizer\'s GPT-2 encoding on 200+ strings, and decode(encode(s)) = s', () => {
  const random = mulberry32(2022);
  const strings = [...FIXED];
  for (let i = 0; i < 160; i += 1) strings.push(randomString(random, 1 + Math.floor(random() * 80)));
  assert.ok(strings.length >= 200, `${strings.length} strings`);
  let tokens = 0;
  for (const s of strings) {
    const { ids, tokens: names } = tk.encode(s);
    assert.ok(ids instanceof Int32Array, 'ids are an Int32Array');
    assert.deepEqual([...ids], expected(s), `ids of ${JSON.stringify(s)}`);
    assert.equal(names.length, ids.length, `one text per token of ${JSON.stringify(s)}`);
    // lone surrogates have no UTF-8 form: both encoders read them as U+FFFD
    assert.equal(tk.decode(ids), s.toWellFormed ? s.toWellFormed() : s, `decode(encode(${JSON.stringify(s)}))`);
    tokens += ids.length;
  }
  assert.ok(tokens > 2000, `${tokens} tokens compared`);
});

test('gpt2Tokenizer: token texts, the special token, the sizes', () => {
  assert.equal(tk.vocabulary, 50257);
  assert.equal(tk.endOfText, 50256);
  const hello = tk.encode(' Hello world');
  assert.deepEqual([...hello.ids], [18435, 995]);
  assert.deepEqual(hello.tokens, [' Hello', ' world']);
  const eot = tk.encode(`a${EOT}b`);
  assert.deepEqual([...eot.ids], [64, 50256, 65]);
  assert.deepEqual(eot.tokens, ['a', EOT, 'b']);
  // an emoji split across tokens: the bytes that are not a whole character read as <0xHH>
  const thumbs = tk.encode('👍🏽');
  assert.equal(thumbs.tokens.join('').includes('<0x'), true, thumbs.tokens.join(' '));
  assert.equal(tk.decode(thumbs.ids), '👍🏽');
  assert.equal(tk.token(50256), EOT);
  assert.equal(tk.decode([50256, 50256]), EOT + EOT);
});

test('gpt2Tokenizer: bad input is an AttnlabError naming it, and the tokenizer keeps working', () => {
  const cases = [
    [() => tk.encode(42), 'ERR_ARG', /text/],
    [() => tk.encode(null), 'ERR_ARG', /text/],
    [() => tk.decode('abc'), 'ERR_ARG', /ids/],
    [() => tk.decode([1, 50257]), 'ERR_VALUE', /ids\[1\]/],
    [() => tk.decode([-1]), 'ERR_VALUE', /ids\[0\]/],
    [() => tk.decode([1.5]), 'ERR_VALUE', /ids\[0\]/],
    [() => tk.token(99999), 'ERR_VALUE', /99999/],
  ];
  for (const [run, code, message] of cases) {
    assert.throws(run, (e) => AttnlabError.holds(e) && e.code === code && message.test(e.message));
  }
  assert.deepEqual([...tk.encode('still fine').ids], reference('still fine'));
});

test('gpt2Tokenizer: loads once; a missing vocabulary file is ERR_DATA naming the script', async () => {
  assert.equal(await gpt2Tokenizer(), tk);
  const missing = new URL('../../web/data/no-such-vocab.bin.gz', import.meta.url);
  await assert.rejects(gpt2Tokenizer(missing), (e) => e.code === 'ERR_DATA' && /gpt2-vocab\.mjs/.test(e.message));
});
