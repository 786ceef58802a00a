// One WASM boundary and one source per constant, on both builds: the limits,
// names and codes the API exports are the core's constants table (read at
// load, frozen), the JS sources repeat none of the core's numbers, only
// wasm.js touches WASM memory or calls an export, and the binding table
// rejects a call with a missing or unknown argument.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { AttnlabError, LIMITS, NORMALIZATIONS, SCORES, SEQ2SEQ_LIMITS, VISION_LIMITS } from '../../web/engine/index.js';
import { withEngines } from './builds.mjs';

const ENGINE_DIR = new URL('../../web/engine/', import.meta.url);
const SOURCES = readdirSync(ENGINE_DIR).filter((f) => f.endsWith('.js'))
  .map((f) => ({ file: f, text: readFileSync(new URL(f, ENGINE_DIR), 'utf8') }));
/** Source without comments (a comment may quote a number). */
const code = (text) => text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '');

test('only wasm.js touches WASM memory or calls an export', () => {
  for (const { file, text } of SOURCES) {
    if (file === 'wasm.js') continue;
    assert.doesNotMatch(code(text), /memory\.buffer|exports\.attnlab_|\.exports\b|new (Float32|Float64|Int32|Uint8)Array\([^)]*buffer/, file);
  }
});

for (const { simd, name, skip, engine } of await withEngines()) {
  describe(`constants from the core (${name})`, { skip }, () => {
    test('LIMITS, SCORES, NORMALIZATIONS and SEQ2SEQ_LIMITS are the build\'s table, frozen', () => {
      const table = engine.heap.constants;
      assert.deepEqual({ ...LIMITS }, table.limits);
      assert.deepEqual({ ...SCORES }, table.scores);
      assert.deepEqual({ ...NORMALIZATIONS }, table.normalizations);
      assert.deepEqual({ ...SEQ2SEQ_LIMITS }, table.seq2seqLimits);
      for (const t of [LIMITS, SCORES, NORMALIZATIONS, SEQ2SEQ_LIMITS]) assert.ok(Object.isFrozen(t));
      assert.equal(engine.limits, LIMITS);
      // The values the headers define (attention.h, seq2seq.h, tasks.h, trainer.h).
      assert.deepEqual({ ...LIMITS }, { maxTokens: 4096, maxDim: 4096, maxCells: 4194304, maxHeads: 64 });
      assert.deepEqual(Object.keys(SCORES), ['dot', 'scaled_dot', 'general', 'additive', 'cosine', 'location']);
      assert.deepEqual(table.tokens, { pad: 0, bos: 1, eos: 2, firstInput: 1, firstOutput: 3 });
      // The image engine's (vision.h, vision_train.h).
      assert.deepEqual({ ...VISION_LIMITS }, table.visionLimits);
      assert.ok(Object.isFrozen(VISION_LIMITS));
      assert.deepEqual({ ...VISION_LIMITS }, {
        maxLayers: 3, maxChannels: 64, maxHidden: 256, maxSteps: 8, maxBatch: 256, maxClutter: 32, maxSize: 100, minSize: 28, maxImage: 128,
        maxDigits: 3, tokens: 11, endToken: 10, maxTrainSteps: 100000, maxEvaluate: 100000, maxOptSteps: 2147483646,
      });
      assert.deepEqual(table.imageTasks, { centered: 0, cluttered: 1, multi: 2 });
    });

    test('no JS source repeats a limit or a name-to-code table of the core', () => {
      // Limits of 100 and more: smaller ones (64, 16) coincide with defaults such as hidden: 64.
      const numbers = new Set([...Object.values(LIMITS), ...Object.values(SEQ2SEQ_LIMITS), ...Object.values(VISION_LIMITS)]
        .filter((n) => n >= 100));
      const repeats = (src, re) => re.exec(src)?.[0];
      for (const { file, text } of SOURCES) {
        const src = code(text);
        for (const n of numbers) assert.equal(repeats(src, new RegExp(`\\b${n}\\b`)), undefined, `${file} repeats the limit ${n}`);
        assert.equal(repeats(src, /\b1 << 22\b|\b8 << 20\b/), undefined, `${file} repeats a limit`);
        assert.equal(repeats(src, /\b(scaled_dot|softmax|reverse|lstm|adam|validation|cluttered|hard)\s*:\s*-?\d/), undefined, `${file} maps a name to a code`);
      }
    });

    test('records are read by field name', () => {
      const m = engine.createSeq2Seq({ task: 'sort', minLength: 2, maxLength: 5, hidden: 12, embed: 6, attnHidden: 7, batch: 9, seed: 3 });
      assert.deepEqual(
        { task: m.config.task, hidden: m.config.hidden, embed: m.config.embed, attnHidden: m.config.attnHidden, batch: m.config.batch, seed: m.config.seed },
        { task: 'sort', hidden: 12, embed: 6, attnHidden: 7, batch: 9, seed: 3 },
      );
      assert.equal(m.config.maxInput, 5);
      assert.equal(m.config.maxOutput, 6, 'EOS counted');
      m.destroy();
    });

    test('the binding table rejects a missing or an unknown argument before calling C', () => {
      const fails = (fn, pattern) => assert.throws(fn, (err) => err instanceof AttnlabError && err.code === 'ERR_INTERNAL' && pattern.test(err.message));
      fails(() => engine.heap.call.attend({ nQ: 1 }), /attnlab_attend needs argument 'nK'/);
      fails(() => engine.heap.call.s2s_destroy({ model: 0, handle: 1 }), /attnlab_s2s_destroy takes no argument 'handle'/);
    });
  });
}
