// Every figure a page of documentation quotes for a model names the settings it
// was measured with: in README.md and docs/*.md, each paragraph or table row (read
// with its table's header) that quotes a percentage about a model also names its
// settings (the defaults, steps, sizes, batch, learning rate...) or points at the
// row or sentence before it ("the same"). Code blocks are left out: they print.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';

const ROOT = new URL('../../', import.meta.url);
const FILES = ['README.md', ...readdirSync(new URL('docs/', ROOT)).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
/** A figure: a percentage. */
const FIGURE = /\b\d{1,3}(\.\d+)?\s?%/;
/** About a model. */
const MODEL = /transformer|seq2seq|induction|cluttered|digit|reverse|dates|names|retina|attention|model|GRU|LSTM/i;
/** Its settings named, or the ones just named pointed at. */
const SETTINGS = /default|steps|GRU \d+|LSTM \d+|layers?\b|heads?\b|dModel|hidden|channels|batch|\blr\b|learning rate|glimpses|settings|the same/i;

/** The units a figure is read in: paragraphs, and table rows with their header. */
function units(text) {
  const out = [];
  for (const block of text.replace(/```[\s\S]*?```/g, '').split(/\n\s*\n/)) {
    const lines = block.split('\n');
    if (lines[0].startsWith('|')) out.push(...lines.slice(2).map((row) => `${lines[0]} ${row}`));
    else out.push(block);
  }
  return out.map((u) => u.replace(/\s+/g, ' '));
}

test('every figure quoted for a model in README.md and docs/ names the settings it was measured with', () => {
  const missing = [];
  let figures = 0;
  for (const file of FILES) {
    for (const u of units(readFileSync(new URL(file, ROOT), 'utf8'))) {
      if (!FIGURE.test(u) || !MODEL.test(u)) continue;
      figures++;
      if (!SETTINGS.test(u)) missing.push(`${file}: ${u.slice(0, 160)}`);
    }
  }
  assert.ok(figures > 30, `${figures} figures read`);
  assert.deepEqual(missing, []);
});
