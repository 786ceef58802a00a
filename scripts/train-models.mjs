// Trains the models the Learn page uses, from fixed seeds, and writes them to
// web/models/ with a manifest (web/models/models.json) of how each was made and
// the test accuracy it reached:
//   reverse-attention.s2s   reverse digit strings, GRU, dot attention (chapter 1)
//   reverse-bottleneck.s2s  the same model with no attention: the decoder sees only
//                           the encoder's final state (chapter 1)
//   dates.s2s               16 human date formats to ISO, GRU, dot attention (chapter 6)
//                           (the three text models' entries hold their run's history, TEXT_HISTORY, which
//                           the lab opens them with)
//   cluttered-soft.vis      a digit among clutter on 60 x 60, CNN + GRU, soft scaled-dot
//                           attention over the 7 x 7 feature grid, 3 glimpses (chapters 7, 8)
//   cluttered-hard.vis      the same model with hard attention (one sampled cell per
//                           glimpse, REINFORCE), its size the soft one's so the two compare like with like (chapter 7)
//   cluttered-retina.vis    the same task read by RAM's retina (sensor 'retina': no CNN, a Gaussian
//                           location policy, 3 scales of 12 x 12 around it, 6 glimpses), trained for
//                           about the CPU time of cluttered-hard; 24 hidden units to stay under 80 KB (chapter 8)
//   induction.tfm           the induction task's default transformer (web/engine/defaults.js: 2 attention-only
//                           layers of 2 heads, RoPE) trained with its default steps and schedule, as
//                           createTransformer({ task: 'induction' }) + train() does; its manifest entry holds the
//                           run's history (every step's loss, the test accuracy and loss and every head's scores every
//                           HISTORY_EVERY steps), so the lab and chapter 9 show its phase change before anything is trained
//   node scripts/train-models.mjs [--only name,name]   (npm run train:models)
// --only retrains the models named and keeps the others' files and manifest entries.
// The same seeds give the same files natively and in WASM; the page computes every
// figure it quotes from these files when it loads, and tests/js/models.test.mjs checks
// each still loads and reaches the accuracy recorded here. The image models need the
// digit set: node scripts/mnist.mjs.
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { defaultsOf } from '../web/engine/defaults.js';
import { loadEngine } from '../web/engine/index.js';
import { textFamily } from '../web/lab/family-text.js';

const out = fileURLToPath(new URL('../web/models/', import.meta.url));

const REVERSE = { task: 'reverse', alphabet: 'digits', minLength: 2, maxLength: 16, cell: 'gru', hidden: 32, embed: 16, seed: 1 };
/** The retina's training steps: about the seconds cluttered-hard's 1,500 steps take (its steps are cheaper: no CNN). */
const RETINA_STEPS = 17000;
const INDUCTION = defaultsOf('transformer', { task: 'induction' });
/** Steps between two records of a model's history (test accuracy and head scores). */
const HISTORY_EVERY = 25;
/**
 * A text model's recorded run: the validation accuracy the lab plots (textFamily.evaluation) every
 * 100 steps and the loss as means of 20 steps (the lab's session.adoptHistory reads `lossEvery`).
 */
const TEXT_HISTORY = { every: 100, lossEvery: 20 };
/** Test sequences each history record evaluates, and sequences its head scores read (the lab's counts). */
const HISTORY_EVAL = 64;
const HISTORY_SCORES = 32;
const CLUTTERED = { task: 'cluttered', clutter: 4, channels: [8, 16, 32], cell: 'gru', attention: 'scaled_dot', steps: 3, batch: 32, seed: 1, start: 'constant' };
/**
 * name -> kind ('seq2seq' | 'vision' | 'transformer'), create options and training: steps, batch and
 * train()'s options for the whole run (lr, clip, and the schedule: schedule, warmup, finalLr; its
 * decaySteps is the run's steps), which every round passes alike, so the run follows one schedule.
 */
export const MODELS = {
  // the lab opens these on their recorded run, kept small for the 400 KB (TEXT_HISTORY)
  'reverse-attention': { kind: 'seq2seq', options: { ...REVERSE, attention: 'dot' }, steps: 2000, batch: 64, lr: 0.01, history: TEXT_HISTORY },
  'reverse-bottleneck': { kind: 'seq2seq', options: { ...REVERSE, attention: 'none' }, steps: 2000, batch: 64, lr: 0.01, history: TEXT_HISTORY },
  dates: {
    kind: 'seq2seq', options: { task: 'dates', cell: 'gru', hidden: 36, embed: 16, attention: 'dot', seed: 1 }, steps: 1000, batch: 64, lr: 0.01,
    history: TEXT_HISTORY,
  },
  // at a constant rate, sampling from the first step, as the shipped files were trained (the cluttered
  // task's defaults, defaults.js, are the headline's schedule and soft mix)
  'cluttered-soft': { kind: 'vision', options: { ...CLUTTERED, hidden: 24, mode: 'soft' }, steps: 1500, batch: 32, lr: 0.002, schedule: 'constant' },
  'cluttered-hard': {
    kind: 'vision', options: { ...CLUTTERED, hidden: 24, mode: 'hard' }, steps: 1500, batch: 32, lr: 0.002, schedule: 'constant', softMix: 0,
  },
  // lr falls on a cosine to finalLr and gradients are clipped, as in the retina's bench (tests/bench/vision-retina.mjs);
  // the shipped file was trained when this script set one rate per round of 100 steps (models.json records it as
  // lr1): retrained, it comes out a little different
  'cluttered-retina': {
    kind: 'vision', options: { task: 'cluttered', clutter: 4, cell: 'gru', hidden: 24, mode: 'hard', sensor: 'retina', steps: 6, batch: 32, seed: 1, start: 'constant' },
    steps: RETINA_STEPS, batch: 32, lr: 0.002, schedule: 'cosine', finalLr: 0.0001, clip: 5,
  },
  // the task's defaults, all of them (model and training), with its history recorded
  induction: { kind: 'transformer', options: { ...INDUCTION.model }, steps: INDUCTION.train.steps, batch: INDUCTION.model.batch, history: true },
};
const EXT = { seq2seq: 's2s', vision: 'vis', transformer: 'tfm' };
const create = (spec) => (spec.kind === 'vision' ? engine.createVisionModel(spec.options)
  : spec.kind === 'transformer' ? engine.createTransformer(spec.options) : engine.createSeq2Seq(spec.options));
/** train()'s options a spec sets (the others keep the kind's defaults). */
const TRAIN_OPTIONS = ['lr', 'clip', 'schedule', 'warmup', 'finalLr', 'softMix'];
const trainOptions = (spec) => Object.fromEntries(TRAIN_OPTIONS.filter((k) => spec[k] !== undefined).map((k) => [k, spec[k]]));
/** A history's numbers to 3 decimals: what a chart draws, in a tenth of the bytes. */
const round3 = (v) => Math.round(v * 1e3) / 1e3;
/** How many test examples the recorded accuracy (and the page) evaluates. */
export const EVAL_COUNT = 500;

const args = process.argv.slice(2);
const only = args.includes('--only') ? args[args.indexOf('--only') + 1].split(',') : Object.keys(MODELS);
for (const name of only) if (!MODELS[name]) throw new Error(`--only: no model named ${name} (models: ${Object.keys(MODELS).join(', ')})`);

// one thread: a seed and a thread count give one model bit for bit, so the files do not depend on the machine's cores
const engine = await loadEngine({ threads: 1 });
const previous = await readFile(`${out}models.json`, 'utf8').then(JSON.parse, () => ({ models: {} }));
const manifest = { evalCount: EVAL_COUNT, models: {} };
for (const [name, spec] of Object.entries(MODELS)) {
  if (!only.includes(name)) {
    if (!previous.models[name]) throw new Error(`${name} has not been trained yet: run without --only`);
    manifest.models[name] = { ...previous.models[name], kind: spec.kind };
    continue;
  }
  const t0 = performance.now();
  const m = await create(spec);
  try {
    let seconds = 0;
    const transformer = spec.kind === 'transformer';
    // how the run is recorded: the accuracy every `every` steps, the loss as means of `lossEvery` steps
    const plan = spec.history ? { every: HISTORY_EVERY, lossEvery: 1, ...(spec.history === true ? {} : spec.history) } : null;
    const round = plan ? plan.every : 100;
    const history = plan ? { losses: [], accuracy: [], ...(transformer ? { scores: [] } : {}) } : null;
    const losses = [];
    // what the lab's accuracy chart plots for the kind: a transformer's test accuracy and loss and its
    // heads' scores, a text model's validation sequence accuracy (textFamily.evaluation)
    const record = () => {
      const step = m.steps;
      if (!transformer) {
        history.accuracy.push({ step, value: round3(m.evaluate(textFamily.evaluation).sequenceAccuracy) });
        return;
      }
      const ev = m.evaluate({ split: 'test', count: HISTORY_EVAL });
      history.accuracy.push({ step, value: round3(ev.accuracy), loss: round3(ev.loss) });
      const heads = m.headScores({ count: HISTORY_SCORES }).map((row) => row.map((h) => ({ previousToken: round3(h.previousToken), induction: round3(h.induction) })));
      history.scores.push({ step, heads });
    };
    if (history) record();
    for (let done = 0; done < spec.steps; done += round) {
      const r = m.train({ steps: Math.min(round, spec.steps - done), batch: spec.batch, ...trainOptions(spec), decaySteps: spec.steps });
      seconds += r.seconds ?? 0;
      if (history) {
        losses.push(...r.losses);
        record();
      }
    }
    if (history) {
      const k = plan.lossEvery;
      for (let i = 0; i < losses.length; i += k) {
        const window = losses.slice(i, i + k);
        history.losses.push(round3(window.reduce((a, b) => a + b, 0) / window.length));
      }
      if (k > 1) history.lossEvery = k;
    }
    const ev = m.evaluate({ split: 'test', count: EVAL_COUNT });
    ev.sequenceAccuracy ??= ev.accuracy; // the transformer's accuracy is over the task's scored positions
    const bytes = m.save();
    const file = `${name}.${EXT[spec.kind]}`;
    await writeFile(`${out}${file}`, bytes);
    manifest.models[name] = {
      file, kind: spec.kind, options: spec.options, steps: spec.steps, batch: spec.batch, ...trainOptions(spec),
      accuracy: ev.accuracy, sequenceAccuracy: ev.sequenceAccuracy, bytes: bytes.length, seconds: Number(seconds.toFixed(1)),
      ...(history ? { history } : {}),
    };
    console.log(`${name}: ${spec.steps} steps in ${((performance.now() - t0) / 1000).toFixed(1)} s, test accuracy ${(ev.accuracy ?? ev.tokenAccuracy).toFixed(3)}, sequence accuracy ${ev.sequenceAccuracy.toFixed(3)}, ${bytes.length} bytes`);
  } finally {
    m.destroy();
  }
}
// two-space indents, each model's history on one line (its numbers are many and small)
const histories = [];
const text = JSON.stringify(manifest, (key, value) => (key === 'history' ? `@@history${histories.push(value) - 1}@@` : value), 2)
  .replace(/"@@history(\d+)@@"/g, (_, i) => JSON.stringify(histories[Number(i)]));
await writeFile(`${out}models.json`, `${text}\n`);
