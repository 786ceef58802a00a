// Every model kind's defaults, in one table: what engine.create…() makes and
// train() runs when an option is not given, what the lab's forms start from,
// what Learn quotes and what the benches train unless they say otherwise.
// A default is a promise: each kind's `headline` is what its defaults reach
// (tests/js/defaults.test.mjs and the slow suite tests/defaults/ train them to it).
//
// A kind has
//   model   createX options;
//   train   train() options: `steps` is what train() runs when it is not given
//           (the steps a learner is shown), and the cosine schedule ends at the
//           model's step `steps` however the steps are chunked (decaySteps);
//   cases   [{ when: { option: value, ... }, model?, train?, headline? }]: overrides
//           for the models whose options match `when` (later cases win);
//   lab     where the lab's form trains otherwise, and why (web/lab/state.js reads it).
// defaultsOf(kind, options) merges them for one model.

const deepFreeze = (o) => {
  for (const v of Object.values(o)) if (v && typeof v === 'object') deepFreeze(v);
  return Object.freeze(o);
};

// Fine-tuning a checkpoint (GPT-2, Pythia): the same for either architecture.
const FINE_TUNING = { steps: 20, lr: 1e-4, schedule: 'constant', length: 64 };

export const DEFAULTS = deepFreeze({
  seq2seq: {
    model: {
      task: 'reverse', alphabet: 'digits', minLength: 4, maxLength: 12, cell: 'gru', layers: 1, bidirectional: false,
      embed: 16, hidden: 64, attention: 'additive', attnHidden: 0, batch: 64, seed: 1,
    },
    // the lab trains until paused; a call without steps takes one
    train: { steps: 1, optimizer: 'adam', lr: 0.005, sgdLr: 0.1, clip: 5, schedule: 'constant', warmup: 0, finalLr: 0 },
    cases: [
      {
        // The lab's first task: with the defaults (the lab's Train, batch 64) seeds 1-5 read 100% of 500
        // validation sequences at step 400; at this constant rate a seed can dip for a while later
        // (seed 1: 65% at step 800, 100% again by 1,000). `steps` is where the headline is read.
        when: { task: 'reverse' },
        headline: { sequenceAccuracy: 0.99, steps: 400 },
      },
    ],
  },
  vision: {
    model: {
      task: 'cluttered', clutter: 4, size: 60, digits: [2, 3], channels: [8, 16, 32], cell: 'gru', hidden: 32, attention: 'scaled_dot',
      mode: 'soft', sensor: 'grid', sigma: 0.15, entropy: 0.01, batch: 32, start: 'constant', seed: 1,
    },
    // softMix (hard mode): a share, or { share, hold, end }: the share until `hold` of the
    // schedule's steps (decaySteps), falling linearly to 0 at `end` of them (train() in vision.js)
    train: { steps: 1, optimizer: 'adam', lr: 0.002, sgdLr: 0.05, clip: 5, schedule: 'constant', warmup: 0, finalLr: 0, softMix: 0 },
    cases: [
      {
        // The 60 x 60 canvas read over the CNN's grid: wider convolutions and unscaled dot scores (with
        // scaled-dot scores or more glimpses the soft model learned to answer from the grid's mean too),
        // a warm-up to a peak lr of 0.004 and a cosine down to 0.0001 (tests/bench/RESULTS.md, "Images").
        when: { task: 'cluttered', sensor: 'grid' },
        model: { channels: [16, 32, 32], hidden: 64, attention: 'dot' },
        train: { steps: 3600, lr: 0.004, schedule: 'cosine', warmup: 200, finalLr: 0.0001 },
        // one train() call, seed 1: 96.0% of 2,000 test images in 271 CPU s (RESULTS.md, "The defaults in one train() call")
        headline: { accuracy: 0.96 },
      },
      {
        // Hard attention samples one cell a glimpse, two glimpses; every image reads the expected context
        // for the first half of the run, the share falls to 0 by 80% of it, and the rest samples cells
        // only, as evaluation's argmax cell reads them (attnlab's schedule of Xu et al.'s soft mix).
        // A higher peak than soft's: at 0.004 the hard model reached 94.0%, at 0.006 96.0% (3,600 steps).
        when: { task: 'cluttered', mode: 'hard', sensor: 'grid' },
        model: { steps: 2 },
        train: { lr: 0.006, softMix: { share: 1, hold: 0.5, end: 0.8 } },
        // one train() call, seed 1: 96.0% of 2,000 test images in 261 CPU s (RESULTS.md)
        headline: { accuracy: 0.95 },
      },
    ],
    // The lab trains an image model until it is paused, and its soft / hard / none experiment compares
    // the three over a few hundred steps: a constant rate (a cosine over the cluttered case's 3,600 steps
    // would barely move in that time), hard attention sampling cells from the first step (the cluttered
    // case reads the expected context for its first 1,800), one glimpse on a one-digit task, so the three
    // models differ only in how they attend. Its form's cell, hidden, lr and batch are the fields the
    // text models share (the seq2seq defaults above); its channels, clutter and mode are the base ones here.
    lab: { model: { steps: 1 }, train: { schedule: 'constant', softMix: 0 } },
  },
  transformer: {
    model: {
      task: 'induction', layers: 2, heads: 4, dModel: 64, dFF: 4 * 64, context: 64, positional: 'learned', score: 'scaled_dot',
      batch: 32, seed: 1,
    },
    train: { steps: 4000, lr: 3e-3, clip: 1, schedule: 'cosine', warmup: 0, weightDecay: 0, finalLr: 0 },
    cases: [
      {
        // Induction heads in a few hundred steps: two attention-only layers of two heads, RoPE (the
        // score sees the offset, not the position), context 32. Seeds 1-8 reach 95.7-97.9% at step
        // 600 with both layer-1 heads' induction scores 0.75-0.83 (tests/bench/RESULTS.md, "Induction").
        when: { task: 'induction' },
        model: { layers: 2, heads: 2, dModel: 32, dFF: 0, context: 32, positional: 'rope', batch: 32 },
        train: { steps: 600 },
        headline: { accuracy: 0.95, induction: 0.4 },
      },
      // Fine-tuning a checkpoint (GPT-2, Pythia) on a text it is given: a few small steps at a rate that
      // moves a pretrained model without throwing it off, on windows of `length` tokens (at most the
      // context) drawn from the text (no headline: what it reaches is the text's).
      { when: { architecture: 'gpt2' }, train: FINE_TUNING },
      { when: { architecture: 'gpt_neox' }, train: FINE_TUNING },
    ],
  },
});

/** The defaults of one model of `kind` ('seq2seq', 'vision', 'transformer'): { model, train, headline } for its options. */
export function defaultsOf(kind, options = {}) {
  const table = DEFAULTS[kind];
  if (!table) throw new TypeError(`defaultsOf: no model kind '${kind}' (one of ${Object.keys(DEFAULTS).join(', ')})`);
  const picked = { ...table.model, ...Object.fromEntries(Object.entries(options ?? {}).filter(([, v]) => v !== undefined)) };
  const out = { model: { ...table.model }, train: { ...table.train }, headline: null };
  for (const c of table.cases) {
    if (!Object.entries(c.when).every(([k, v]) => picked[k] === v)) continue;
    Object.assign(out.model, c.model);
    Object.assign(out.train, c.train);
    if (c.headline) out.headline = c.headline;
  }
  return out;
}

/** train() defaults of a model kind the table does not hold (a kind added outside the engine), under its spec's own. */
export const TRAIN_FALLBACK = Object.freeze({
  steps: 1, optimizer: 'adam', lr: 1e-3, sgdLr: 0.05, clip: 5, schedule: 'constant', warmup: 0, weightDecay: 0, finalLr: 0,
});

/** The train() defaults of one model: the table's for its kind, or `own` over TRAIN_FALLBACK for a kind it does not hold. */
export function trainDefaults(kind, config, own) {
  return Object.hasOwn(DEFAULTS, kind) ? defaultsOf(kind, config).train : { ...TRAIN_FALLBACK, ...own };
}
