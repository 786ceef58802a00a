// The 'text' task reads a text a character (code point) at a time, on both
// builds: "crème brûlée", Greek and 4-byte emoji are tokens of their own, so
// inspect shows the characters, generate returns whole characters and
// examples() decode to the text; a text short in characters (however many
// bytes) or past the vocabulary's characters is refused with the limit named,
// and a saved model loads with its characters.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { throwsCode } from '../lib/assert.mjs';
import { TRANSFORMER_LIMITS } from '../../web/engine/constants.js';
import { withEngines } from './builds.mjs';

const SIZES = { task: 'text', layers: 1, heads: 2, dModel: 16, dFF: 0, context: 16, batch: 4, seed: 3 };
const TEXTS = {
  french: 'crème brûlée, crème caramel, café au lait et crêpes. '.repeat(3),
  greek: 'αβγ δέλτα, ε ζήτα ήτα θήτα: ιώτα κάππα λάμδα. '.repeat(3),
  emoji: 'rain 🌧 then sun 🌞, rain 🌧 then sun 🌞 again 🙂. '.repeat(3),
};
const PROMPTS = { french: 'crème b', greek: 'αβγ δέλ', emoji: 'rain 🌧 ' };

for (const { engine, ...build } of await withEngines()) {
  describe(`transformer text as characters (${build.name})`, { skip: build.skip }, () => {
    for (const [name, text] of Object.entries(TEXTS)) {
      test(`${name}: a token per character, in inspect, generate and examples`, async () => {
        const m = await engine.createTransformer({ ...SIZES, text });
        m.train({ steps: 20 });
        const chars = [...new Set(text)].sort();
        assert.deepEqual([...m.config.vocabulary].sort(), chars, 'the vocabulary is the distinct characters');
        const prompt = PROMPTS[name];
        const seen = m.inspect(prompt);
        assert.deepEqual(seen.tokens, Array.from(prompt), 'inspect shows the characters');
        for (const row of seen.predictions) for (const p of row) assert.ok(chars.includes(p.token), `prediction ${JSON.stringify(p.token)}`);
        for (const layer of seen.lens) for (const t of layer) assert.ok(chars.includes(t), `lens ${JSON.stringify(t)}`);
        for (const seed of [1, 2, 3]) {
          const g = m.generate(prompt, { tokens: 15, temperature: 1.5, seed });
          assert.equal(g.tokens.length, 15);
          assert.equal(g.text, g.tokens.join(''), 'the text is its tokens');
          assert.equal(Array.from(g.text).length, 15, 'whole characters, one per token');
          assert.ok(!g.text.includes('\uFFFD'), `no half characters: ${g.text}`);
        }
        for (const split of ['train', 'test']) {
          for (const ex of m.examples({ split, count: 5, seed: 4 })) assert.ok(text.includes(ex.input + ex.target), `${split}: ${ex.input}|${ex.target}`);
        }
        const back = await engine.loadModel(m.save());
        assert.deepEqual(back.config.vocabulary, m.config.vocabulary);
        assert.deepEqual(back.generate(prompt, { tokens: 10, seed: 2 }), m.generate(prompt, { tokens: 10, seed: 2 }));
        back.destroy();
        m.destroy();
      });
    }

    test('a character the text lacks is named whole', async () => {
      const m = await engine.createTransformer({ ...SIZES, text: TEXTS.french });
      throwsCode(() => m.inspect('crème brûlée ü'), 'ERR_VALUE', /input token 13 "ü" is not in the vocabulary/);
      m.destroy();
    });

    test('texts are counted in characters, and their characters limited', async () => {
      const { minText, maxVocabulary } = TRANSFORMER_LIMITS;
      assert.equal(minText, 20);
      // 19 characters in 38 bytes: short, however many bytes
      await assert.rejects(engine.createTransformer({ ...SIZES, text: 'é'.repeat(minText - 1) }),
        (e) => e.code === 'ERR_SHAPE' && new RegExp(`at least ${minText} characters \\(got ${minText - 1}\\)`).test(e.message));
      const ok = await engine.createTransformer({ ...SIZES, text: 'é'.repeat(minText) });
      assert.deepEqual(ok.config.vocabulary, ['é']);
      ok.destroy();
      const many = Array.from({ length: maxVocabulary + 1 }, (_, i) => String.fromCodePoint(0x100 + i)).join('');
      await assert.rejects(engine.createTransformer({ ...SIZES, text: many }),
        (e) => e.code === 'ERR_LIMIT' && new RegExp(`more than ${maxVocabulary} different characters`).test(e.message));
    });
  });
}
