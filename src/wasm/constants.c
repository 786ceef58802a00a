/* The one table of constants JS reads at load (web/engine/constants.js):
 * status codes, the names and codes of every enum the API takes as a string,
 * the limits, the task's token ids and the layout of the records the exports
 * fill. Everything here comes from the public headers, so a name, a code or a
 * limit has one source: the C core. Returned as JSON text, built once. */
#include <emscripten.h>
#include <stdarg.h>
#include <stdio.h>

#include "attnlab/gpt2.h"
#include "attnlab/trainer.h"
#include "attnlab/transformer.h"
#include "attnlab/vision.h"
#include "layers/model_file.h"
#include "layers/safetensors.h"
#include "models/decoder.h"
#include "train/vision_train.h"
#include "wasm/boundary.h"

typedef struct {
    const char *name;
    int value;
} Named;

/* The names the API spells for these enums, each next to its code. */
static const Named statuses[] = {
    {"ERR_SHAPE", NN_ERR_SHAPE}, {"ERR_VALUE", NN_ERR_VALUE}, {"ERR_ARG", NN_ERR_ARG},
    {"ERR_PARAM", NN_ERR_PARAM}, {"ERR_LIMIT", NN_ERR_LIMIT}, {"ERR_ZERO_SUM", NN_ERR_ZERO_SUM},
    {"ERR_NOMEM", NN_ERR_NOMEM},
};
static const Named normalizations[] = {{"softmax", ATTN_NORM_SOFTMAX}, {"sum", ATTN_NORM_SUM}};
static const Named tasks[] = {
    {"copy", TASK_COPY}, {"reverse", TASK_REVERSE}, {"sort", TASK_SORT}, {"dates", TASK_DATES}, {"pairs", TASK_PAIRS},
};
static const Named alphabets[] = {{"digits", TASK_DIGITS}, {"letters", TASK_LETTERS}};
static const Named cells[] = {{"rnn", RNN_CELL_RNN}, {"gru", RNN_CELL_GRU}, {"lstm", RNN_CELL_LSTM}};
static const Named optimizers[] = {{"adam", NN_ADAM}, {"sgd", NN_SGD}};
static const Named schedules[] = {{"constant", NN_LR_CONSTANT}, {"cosine", NN_LR_COSINE}};
static const Named splits[] = {{"train", TASK_TRAIN}, {"validation", TASK_VALID}, {"test", TASK_TEST}};
/* Token ids (tasks.h): an input symbol's id is firstInput + its index in the
 * input alphabet, an output symbol's firstOutput + its index. */
static const Named tokens[] = {
    {"pad", TASK_PAD}, {"bos", TASK_BOS}, {"eos", TASK_EOS},
    {"firstInput", TASK_FIRST_IN}, {"firstOutput", TASK_FIRST_OUT},
};
static const Named limits[] = {
    {"maxTokens", ATTN_MAX_TOKENS}, {"maxDim", ATTN_MAX_DIM}, {"maxCells", ATTN_MAX_CELLS},
    {"maxHeads", ATTN_MAX_HEADS},
};
static const Named seq2seq_limits[] = {
    {"maxHidden", S2S_MAX_HIDDEN}, {"maxEmbed", S2S_MAX_EMBED}, {"maxBatch", S2S_MAX_BATCH},
    {"maxBeam", S2S_MAX_BEAM}, {"maxLength", TASK_MAX_LEN}, {"maxPairsBytes", ATTNLAB_MAX_PAIRS_BYTES},
    {"maxSteps", TRAINER_MAX_STEPS}, {"maxEvaluate", TRAINER_MAX_EVAL},
};

/* The image models (vision.h, vision_train.h); their cells are RnnCellKind,
 * their attentions the scores or visionAttentionNone. */
static const Named image_tasks[] = {{"centered", IMG_CENTERED}, {"cluttered", IMG_CLUTTERED}, {"multi", IMG_MULTI}};
static const Named vision_modes[] = {{"soft", VIS_SOFT}, {"hard", VIS_HARD}};
static const Named vision_splits[] = {{"train", VIS_SPLIT_TRAIN}, {"test", VIS_SPLIT_TEST}};
static const Named vision_limits[] = {
    {"maxLayers", VIS_MAX_LAYERS}, {"maxChannels", VIS_MAX_CHANNELS}, {"maxHidden", VIS_MAX_HIDDEN},
    {"maxSteps", VIS_MAX_STEPS}, {"maxBatch", VIS_MAX_BATCH}, {"maxClutter", VIS_MAX_CLUTTER}, {"maxSize", VIS_MAX_CLUTTERED_SIDE}, {"minSize", VIS_DIGIT_SIDE},
    {"maxImage", VIS_MAX_IMAGE}, {"maxDigits", VIS_MAX_DIGITS}, {"tokens", VIS_TOKENS},
    {"endToken", VIS_END}, {"maxTrainSteps", VTR_MAX_STEPS}, {"maxEvaluate", VTR_MAX_EVAL},
    {"maxOptSteps", NN_MAX_OPT_STEPS},
};

/* The transformer (transformer.h); its scores are the attention core's. */
static const Named tf_tasks[] = {
    {"induction", TF_TASK_INDUCTION}, {"copy", TF_TASK_COPY}, {"reverse", TF_TASK_REVERSE}, {"sort", TF_TASK_SORT},
    {"modular", TF_TASK_MODULAR}, {"text", TF_TASK_TEXT}, {"dates", TF_TASK_DATES}, {"names", TF_TASK_NAMES},
};
static const Named tf_positional[] = {
    {"learned", TF_POS_LEARNED}, {"sinusoidal", TF_POS_SINUSOIDAL}, {"none", TF_POS_NONE},
    {"alibi", TF_POS_ALIBI}, {"rope", TF_POS_ROPE},
};
static const Named tf_splits[] = {{"train", TF_SPLIT_TRAIN}, {"test", TF_SPLIT_TEST}};
/* patch's targets (models/decoder.h) */
static const Named patch_targets[] = {
    {"resid", DEC_PATCH_RESID}, {"attn", DEC_PATCH_ATTN}, {"mlp", DEC_PATCH_MLP}, {"heads", DEC_PATCH_HEADS},
    {"head-values", DEC_PATCH_HEAD_VALUES}, {"head-patterns", DEC_PATCH_HEAD_PATTERNS},
};
static const Named patch_methods[] = {{"exact", DEC_PATCH_EXACT}, {"attribution", DEC_PATCH_ATTRIBUTION}};
static const Named tf_limits[] = {
    {"maxLayers", TF_MAX_LAYERS}, {"maxHeads", TF_MAX_HEADS}, {"maxDModel", TF_MAX_DMODEL}, {"maxDFF", TF_MAX_DFF},
    {"minContext", TF_MIN_CONTEXT}, {"maxContext", TF_MAX_CONTEXT}, {"maxBatch", TF_MAX_BATCH},
    {"maxTextBytes", TF_MAX_TEXT_BYTES}, {"minText", TF_MIN_TEXT}, {"maxVocabulary", TF_MAX_VOCAB},
    {"maxSteps", TF_MAX_STEPS}, {"maxEvaluate", TF_MAX_EVALUATE},
    {"maxGenerate", TF_MAX_GENERATE}, {"top", TF_TOP}, {"modulus", TF_MODULUS},
};
/* GPT-2 checkpoints (gpt2.h, safetensors.h). */
static const Named gpt2_limits[] = {
    {"maxLayers", GPT2_MAX_LAYERS}, {"maxHeads", GPT2_MAX_HEADS}, {"maxDModel", GPT2_MAX_DMODEL},
    {"maxDFF", GPT2_MAX_DFF}, {"maxContext", GPT2_MAX_CONTEXT}, {"maxVocabulary", GPT2_MAX_VOCAB},
    {"maxWeightMB", GPT2_MAX_WEIGHT_MB}, {"maxHeader", ST_MAX_HEADER}, {"top", GPT2_TOP},
    {"maxEvaluate", GPT2_MAX_EVALUATE}, {"maxGenerate", GPT2_MAX_GENERATE}, {"maxResultMB", GPT2_MAX_RESULT_MB},
    {"maxTrainMB", GPT2_MAX_TRAIN_MB}, {"maxTrainTokens", GPT2_MAX_TRAIN_TOKENS}, {"maxBatch", GPT2_MAX_BATCH},
    {"maxSteps", NN_MAX_TRAIN_STEPS},
};
/* Every model's weights: finite and within +-maxWeight (a file, setWeights, a training step). */
static const Named model_limits[] = {{"maxWeight", (int)MODEL_FILE_MAX_WEIGHT}};

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* Room for the whole table; attnlab_constants() reports running out. */
#define JSON_CAPACITY 16384

typedef struct {
    char text[JSON_CAPACITY];
    size_t used;
    int overflow;
} Json;

static void put(Json *j, const char *fmt, ...) {
    if (j->overflow) return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(j->text + j->used, JSON_CAPACITY - j->used, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= JSON_CAPACITY - j->used) j->overflow = 1;
    else j->used += (size_t)n;
}

/* "key":{"name":value,...} */
static void put_named(Json *j, const char *key, const Named *t, int n) {
    put(j, "\"%s\":{", key);
    for (int i = 0; i < n; i++) put(j, "%s\"%s\":%d", i ? "," : "", t[i].name, t[i].value);
    put(j, "}");
}

static void put_scores(Json *j) {
    put(j, "\"scores\":{");
    for (int s = 0; s < ATTN_SCORE_COUNT; s++) put(j, "%s\"%s\":%d", s ? "," : "", attn_score_name((AttnScore)s), s);
    put(j, "}");
}

/* "records":{"Name":{"size":n,"fields":{"field":{"offset":o,"type":"i32","count":c},...}},...} */
static void put_records(Json *j) {
    const struct {
        const AttnlabRecord *records;
        int n;
    } tables[] = {{attnlab_s2s_records, attnlab_s2s_records_count}, {attnlab_vis_records, attnlab_vis_records_count}};
    put(j, "\"records\":{");
    for (int t = 0, first = 1; t < COUNT(tables); t++)
        for (int r = 0; r < tables[t].n; r++, first = 0) {
            const AttnlabRecord *rec = &tables[t].records[r];
            put(j, "%s\"%s\":{\"size\":%zu,\"fields\":{", first ? "" : ",", rec->name, rec->size);
            for (int f = 0; f < rec->n_fields; f++) {
                const AttnlabField *fd = &rec->fields[f];
                put(j, "%s\"%s\":{\"offset\":%zu,\"type\":\"%s\",\"count\":%d}", f ? "," : "", fd->name, fd->offset,
                    fd->type == ATTNLAB_F64 ? "f64" : "i32", fd->count);
            }
            put(j, "}}");
        }
    put(j, "}");
}

/* The named groups, in the order they are written. */
static const struct {
    const char *key;
    const Named *names;
    int n;
} groups[] = {
    {"statuses", statuses, COUNT(statuses)},
    {"normalizations", normalizations, COUNT(normalizations)},
    {"limits", limits, COUNT(limits)},
    {"tasks", tasks, COUNT(tasks)},
    {"alphabets", alphabets, COUNT(alphabets)},
    {"cells", cells, COUNT(cells)},
    {"optimizers", optimizers, COUNT(optimizers)},
    {"schedules", schedules, COUNT(schedules)},
    {"splits", splits, COUNT(splits)},
    {"tokens", tokens, COUNT(tokens)},
    {"seq2seqLimits", seq2seq_limits, COUNT(seq2seq_limits)},
    {"imageTasks", image_tasks, COUNT(image_tasks)},
    {"visionModes", vision_modes, COUNT(vision_modes)},
    {"visionSplits", vision_splits, COUNT(vision_splits)},
    {"visionLimits", vision_limits, COUNT(vision_limits)},
    {"transformerTasks", tf_tasks, COUNT(tf_tasks)},
    {"transformerPositional", tf_positional, COUNT(tf_positional)},
    {"transformerSplits", tf_splits, COUNT(tf_splits)},
    {"patchTargets", patch_targets, COUNT(patch_targets)},
    {"patchMethods", patch_methods, COUNT(patch_methods)},
    {"transformerLimits", tf_limits, COUNT(tf_limits)},
    {"modelLimits", model_limits, COUNT(model_limits)},
    {"gpt2Limits", gpt2_limits, COUNT(gpt2_limits)},
};

/* The table as JSON, or "" if it did not fit (a build error JS reports). */
EMSCRIPTEN_KEEPALIVE const char *attnlab_constants(void) {
    static Json j;
    if (j.used) return j.text;
    put(&j, "{");
    for (int g = 0; g < COUNT(groups); g++) {
        put_named(&j, groups[g].key, groups[g].names, groups[g].n);
        put(&j, ",");
    }
    put_scores(&j);
    put(&j, ",\"attentionNone\":%d,\"visionAttentionNone\":%d,", S2S_ATTN_NONE, VIS_ATTN_NONE);
    put_records(&j);
    put(&j, "}");
    if (j.overflow) {
        j.used = 0;
        j.overflow = 0;
        j.text[0] = 0;
    }
    return j.text;
}
