// Generated text in the lens's one convention (web/ui/gpt2-reading.js
// generatedText): tokens' bytes joined, so a character split over two tokens
// reads whole, and a byte that is still no whole character reads "<0xBD>",
// as the lens names that token, never a decoder's "�".
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generatedText } from '../../web/ui/gpt2-reading.js';

test('a character split over tokens reads whole; a lone byte as the lens names it', () => {
  // "½" is C2 BD: as two tokens the lens names them <0xC2> and <0xBD>
  assert.equal(generatedText([' half', '<0xC2>', '<0xBD>', ' done']), ' half½ done');
  // the continuation stops after the first byte: it stays a byte, not "�"
  assert.equal(generatedText([' half', '<0xC2>']), ' half<0xC2>');
  assert.equal(generatedText(['<0xBD>', 'x']), '<0xBD>x');
  // ordinary tokens, and a whole emoji in one token
  assert.equal(generatedText([' The', ' cat', ' 😀']), ' The cat 😀');
  assert.ok(!generatedText(['<0xF0>', '<0x9F>', 'a']).includes('\uFFFD'));
});
