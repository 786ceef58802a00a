// The repeated random run the pages score and ablate heads on (web/ui/gpt2-file.js
// repeatedIds): <|endoftext|> found by name in a model's vocabulary (GPT-2's last id,
// Pythia's 0), the run drawn from the ordinary ids only (never <|endoftext|>, never an
// embedding row no text makes, such as Pythia's 27 past its tokenizer), and GPT-2's
// draws the same whether the pages pass its names or its count.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { repeatedIds } from '../../web/ui/gpt2-file.js';
import { mulberry32 } from '../lib/random.mjs';

test("GPT-2's vocabulary (<|endoftext|> last): the names and the count give the same run", () => {
  const names = Array.from({ length: 50 }, (_, id) => `t${id}`);
  names[49] = '<|endoftext|>';
  const byNames = repeatedIds(mulberry32(7), 40, names);
  assert.deepEqual(byNames, repeatedIds(mulberry32(7), 40, 50));
  assert.equal(byNames[0], 49);
  assert.deepEqual(byNames.slice(1, 41), byNames.slice(41));
});

test("Pythia's (<|endoftext|> at 0, rows past the tokenizer): the run starts at 0 and draws neither 0 nor an unused row", () => {
  const V = 40, known = 30;
  const names = Array.from({ length: V }, (_, id) => (id < known ? `t${id}` : `<${id}>`));
  names[0] = '<|endoftext|>';
  const ids = repeatedIds(mulberry32(3), 200, names);
  assert.equal(ids[0], 0);
  const run = [...ids.slice(1)];
  assert.ok(run.every((id) => id >= 1 && id < known), 'ordinary ids only');
  assert.equal(new Set(run).size, known - 1, 'every ordinary id can be drawn');
});
