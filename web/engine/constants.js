// The engine's names, codes and limits, as the C core defines them: read from
// the WASM build's constants table (src/wasm/constants.c) when the first
// engine loads, then frozen. Nothing here repeats a number of the core.
import { AttnlabError } from './errors.js';

/** Limits of the attention core (include/attnlab/attention.h). */
export const LIMITS = {};
/** Scoring functions and their codes in the core (AttnScore). */
export const SCORES = {};
/** Normalisations (AttnNorm). */
export const NORMALIZATIONS = {};
/** Limits of the seq2seq engine (include/attnlab/seq2seq.h, tasks.h, trainer.h; the pairs text bytes). */
export const SEQ2SEQ_LIMITS = {};
/** The seq2seq option names and their codes: tasks, alphabets, cells, attentions, optimizers, splits. */
export const SEQ2SEQ = {
  TASKS: {}, ALPHABETS: {}, CELLS: {}, ATTENTIONS: {}, OPTIMIZERS: {}, SPLITS: {},
  /** Token ids (include/attnlab/tasks.h): pad, bos, eos, firstInput, firstOutput. */
  TOKENS: {},
};

/** Limits of the image engine (include/attnlab/vision.h, src/train/vision_train.h); endToken is the end of a multi-digit answer. */
export const VISION_LIMITS = {};
/** The image model option names and their codes: tasks, cells, attentions, modes, optimizers, splits. */
export const VISION = { TASKS: {}, CELLS: {}, ATTENTIONS: {}, MODES: {}, OPTIMIZERS: {}, SPLITS: {} };

/** Limits of the transformer (include/attnlab/transformer.h): sizes, context, batch, text bytes, a text's fewest characters (minText) and the most different ones (maxVocabulary), steps, evaluate, generate, top, modulus. */
export const TRANSFORMER_LIMITS = {};
/** The transformer's option names and their codes: tasks, positional encodings, splits, patch's targets and methods (its scores are SCORES'). */
export const TRANSFORMER = { TASKS: {}, POSITIONAL: {}, SPLITS: {}, PATCH_TARGETS: {}, PATCH_METHODS: {} };
/** Every model's weights: finite and within +-maxWeight (src/layers/model_file.h). */
export const MODEL_LIMITS = {};
/** Limits of GPT-2 checkpoints (include/attnlab/gpt2.h, src/layers/safetensors.h): sizes, context, vocabulary, the weights' megabytes as float32, the header's bytes, top, headScores' count, generate's tokens. */
export const GPT2_LIMITS = {};
/** The learning-rate schedules every model's train takes, and their codes (NnSchedule, include/attnlab/optim.h). */
export const SCHEDULES = {};

/** Other names accepted for a split. */
const SPLIT_ALIASES = { valid: 'validation' };

let adopted = null;

/** Fills the tables from a build's constants (once); a later build must agree. */
export function adoptConstants(table) {
  if (adopted !== null) {
    if (JSON.stringify(table) !== adopted) {
      throw new AttnlabError('ERR_INTERNAL', 'attnlab: the SIMD and scalar builds disagree on their constants; rebuild both (make wasm)');
    }
    return;
  }
  Object.assign(LIMITS, table.limits);
  Object.assign(SCORES, table.scores);
  Object.assign(NORMALIZATIONS, table.normalizations);
  Object.assign(SEQ2SEQ_LIMITS, table.seq2seqLimits);
  Object.assign(SEQ2SEQ.TASKS, table.tasks);
  Object.assign(SEQ2SEQ.ALPHABETS, table.alphabets);
  Object.assign(SEQ2SEQ.CELLS, table.cells);
  Object.assign(SEQ2SEQ.ATTENTIONS, { none: table.attentionNone }, table.scores);
  Object.assign(SEQ2SEQ.OPTIMIZERS, table.optimizers);
  Object.assign(SEQ2SEQ.SPLITS, table.splits);
  for (const [alias, name] of Object.entries(SPLIT_ALIASES)) SEQ2SEQ.SPLITS[alias] = table.splits[name];
  Object.assign(SEQ2SEQ.TOKENS, table.tokens);
  Object.assign(VISION_LIMITS, table.visionLimits);
  Object.assign(VISION.TASKS, table.imageTasks);
  Object.assign(VISION.CELLS, table.cells);
  Object.assign(VISION.ATTENTIONS, { none: table.visionAttentionNone }, table.scores);
  Object.assign(VISION.MODES, table.visionModes);
  Object.assign(VISION.OPTIMIZERS, table.optimizers);
  Object.assign(VISION.SPLITS, table.visionSplits);
  Object.assign(TRANSFORMER_LIMITS, table.transformerLimits);
  Object.assign(TRANSFORMER.TASKS, table.transformerTasks);
  Object.assign(TRANSFORMER.POSITIONAL, table.transformerPositional);
  Object.assign(TRANSFORMER.SPLITS, table.transformerSplits);
  Object.assign(TRANSFORMER.PATCH_TARGETS, table.patchTargets);
  Object.assign(TRANSFORMER.PATCH_METHODS, table.patchMethods);
  Object.assign(MODEL_LIMITS, table.modelLimits);
  Object.assign(GPT2_LIMITS, table.gpt2Limits);
  Object.assign(SCHEDULES, table.schedules);
  for (const t of [LIMITS, SCORES, NORMALIZATIONS, SEQ2SEQ_LIMITS, ...Object.values(SEQ2SEQ), VISION_LIMITS, ...Object.values(VISION),
    TRANSFORMER_LIMITS, ...Object.values(TRANSFORMER), MODEL_LIMITS, GPT2_LIMITS, SCHEDULES]) {
    Object.freeze(t);
  }
  Object.freeze(SEQ2SEQ);
  Object.freeze(VISION);
  Object.freeze(TRANSFORMER);
  adopted = JSON.stringify(table);
}
