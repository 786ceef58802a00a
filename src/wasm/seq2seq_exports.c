/* The WASM boundary for seq2seq models bound to tasks (include/attnlab/trainer.h):
 * a Trainer* is an opaque handle in JS. Every function returns an NnStatus
 * except the getters; the message is read with attnlab_last_error(). */
#include <emscripten.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab/trainer.h"
#include "base/error.h"
#include "wasm/boundary.h"

EMSCRIPTEN_KEEPALIVE int attnlab_s2s_create(int kind, int alphabet, int min_len, int max_len, const char *text,
                                            int text_len, int cell, int layers, int bidirectional, int embed,
                                            int hidden, int attention, int attn_hidden, int batch, double seed,
                                            Trainer **out) {
    if (text_len < 0 || text_len > ATTNLAB_MAX_PAIRS_BYTES)
        return nn_fail(NN_ERR_LIMIT, "pairs: %d bytes is past the limit of %d", text_len, ATTNLAB_MAX_PAIRS_BYTES);
    TaskConfig tc = {(TaskKind)kind, (TaskAlphabet)alphabet, min_len, max_len};
    S2sConfig mc = {(RnnCellKind)cell, layers, bidirectional, embed, hidden, attention, attn_hidden,
                    0, 0, 0, 0, 0, batch, (uint64_t)seed};
    return trainer_create(out, &tc, text, text_len > 0 ? (size_t)text_len : 0, &mc);
}

EMSCRIPTEN_KEEPALIVE void attnlab_s2s_destroy(Trainer *t) { trainer_destroy(t); }

EMSCRIPTEN_KEEPALIVE void attnlab_s2s_info(Trainer *t, AttnlabS2sInfo *info) {
    const Task *task = trainer_task(t);
    const S2sConfig *c = s2s_config(trainer_model(t));
    const TaskConfig *tc = trainer_task_config(t);
    *info = (AttnlabS2sInfo){
        .task = (int32_t)tc->kind,
        .alphabet = (int32_t)tc->alphabet,
        .min_length = tc->min_len,
        .max_length = tc->max_len,
        .input_vocabulary = task_in_vocab(task),
        .output_vocabulary = task_out_vocab(task),
        .max_input = task_max_in(task),
        .max_output = task_max_out(task),
        .fixed_input = task_fixed_in(task),
        .cell = (int32_t)c->cell,
        .layers = c->layers,
        .bidirectional = c->bidirectional,
        .embed = c->embed,
        .hidden = c->hidden,
        .attention = c->attention,
        .attn_hidden = c->attn_hidden,
        .batch = c->batch,
        .parameters = (double)s2s_num_params(trainer_model(t)),
        .steps = (double)s2s_steps(trainer_model(t)),
        .seed = (double)c->seed,
    };
}

EMSCRIPTEN_KEEPALIVE const char *attnlab_s2s_alphabet(Trainer *t, int output) {
    return output ? task_out_alphabet(trainer_task(t)) : task_in_alphabet(trainer_task(t));
}

EMSCRIPTEN_KEEPALIVE int attnlab_s2s_split_size(Trainer *t, int split) {
    return task_split_size(trainer_task(t), (TaskSplit)split);
}

/* The optimiser and its schedule as NnTrainOptions' fields (include/attnlab/optim.h). */
EMSCRIPTEN_KEEPALIVE int attnlab_s2s_train(Trainer *t, int optimizer, float lr, float clip, int schedule, int warmup,
                                           int decay_steps, float final_lr, int steps, int batch, float *losses,
                                           double *tokens) {
    NnTrainOptions o = {.optimizer = (NnOptimizer)optimizer, .lr = lr, .clip = clip, .schedule = (NnSchedule)schedule,
                        .warmup = warmup, .decay_steps = decay_steps, .final_lr = final_lr};
    return trainer_train(t, &o, steps, batch, losses, tokens);
}

EMSCRIPTEN_KEEPALIVE int attnlab_s2s_undo(Trainer *t) { return trainer_undo(t); }

EMSCRIPTEN_KEEPALIVE int attnlab_s2s_evaluate(Trainer *t, int split, int count, TrainerEval *out) {
    return trainer_evaluate(t, (TaskSplit)split, count, out);
}

/* text: text_len bytes of UTF-8 (NUL bytes included); lens (2 x i32): input and output lengths. */
EMSCRIPTEN_KEEPALIVE int attnlab_s2s_translate_n(Trainer *t, const char *text, int text_len, int beam, int32_t *in_ids,
                                                 int32_t *out_ids, int32_t *lens, float *alignment, char *output) {
    int in_len = 0, out_len = 0;
    NN_TRY(trainer_translate(t, text, text_len > 0 ? (size_t)text_len : 0, beam, in_ids, &in_len, out_ids, &out_len,
                             alignment, output));
    lens[0] = in_len;
    lens[1] = out_len;
    return NN_OK;
}

/* Greedy translation of text (as attnlab_s2s_translate_n, beam 1) and the
 * saliency (lens[0]) of output step `step` over the input tokens. */
EMSCRIPTEN_KEEPALIVE int attnlab_s2s_saliency_n(Trainer *t, const char *text, int text_len, int step, int32_t *in_ids,
                                                int32_t *out_ids, int32_t *lens, float *alignment, char *output,
                                                float *saliency) {
    int in_len = 0, out_len = 0;
    NN_TRY(trainer_saliency(t, text, text_len > 0 ? (size_t)text_len : 0, step, in_ids, &in_len, out_ids, &out_len,
                            alignment, output, saliency));
    lens[0] = in_len;
    lens[1] = out_len;
    return NN_OK;
}

/* The same for a NUL-terminated text (which cannot hold a NUL character). */
EMSCRIPTEN_KEEPALIVE int attnlab_s2s_translate(Trainer *t, const char *text, int beam, int32_t *in_ids,
                                               int32_t *out_ids, int32_t *lens, float *alignment, char *output) {
    return attnlab_s2s_translate_n(t, text, (int)strlen(text), beam, in_ids, out_ids, lens, alignment, output);
}

/* One example of a split as text (input and output, TASK_MAX_LEN + 1 bytes
 * each), drawn from the stream rng (2 x u32, low word first), which advances. */
EMSCRIPTEN_KEEPALIVE int attnlab_s2s_sample(Trainer *t, int split, uint32_t *rng, char *input, char *output) {
    uint64_t s = (uint64_t)rng[1] << 32 | rng[0];
    int st = task_sample(trainer_task(t), (TaskSplit)split, &s, input, output);
    rng[0] = (uint32_t)s;
    rng[1] = (uint32_t)(s >> 32);
    return st;
}

EMSCRIPTEN_KEEPALIVE double attnlab_s2s_save_size(Trainer *t) { return (double)trainer_save_size(t); }

EMSCRIPTEN_KEEPALIVE int attnlab_s2s_save(Trainer *t, uint8_t *bytes, int size) {
    return trainer_save(t, bytes, (size_t)size);
}

EMSCRIPTEN_KEEPALIVE int attnlab_s2s_load(const uint8_t *bytes, int size, Trainer **out) {
    return trainer_load(out, bytes, (size_t)size);
}

/* ---- the records above, field by field, for attnlab_constants() --------------- */

static const AttnlabField s2s_info_fields[] = {
    ATTNLAB_FIELD(AttnlabS2sInfo, task, "task", ATTNLAB_I32),
    ATTNLAB_FIELD(AttnlabS2sInfo, alphabet, "alphabet", ATTNLAB_I32),
    ATTNLAB_FIELD(AttnlabS2sInfo, min_length, "minLength", ATTNLAB_I32),
    ATTNLAB_FIELD(AttnlabS2sInfo, max_length, "maxLength", ATTNLAB_I32),
    ATTNLAB_FIELD(AttnlabS2sInfo, input_vocabulary, "inputVocabulary", ATTNLAB_I32),
    ATTNLAB_FIELD(AttnlabS2sInfo, output_vocabulary, "outputVocabulary", ATTNLAB_I32),
    ATTNLAB_FIELD(AttnlabS2sInfo, max_input, "maxInput", ATTNLAB_I32),
    ATTNLAB_FIELD(AttnlabS2sInfo, max_output, "maxOutput", ATTNLAB_I32),
    ATTNLAB_FIELD(AttnlabS2sInfo, fixed_input, "fixedInput", ATTNLAB_I32),
    ATTNLAB_FIELD(AttnlabS2sInfo, cell, "cell", ATTNLAB_I32),
    ATTNLAB_FIELD(AttnlabS2sInfo, layers, "layers", ATTNLAB_I32),
    ATTNLAB_FIELD(AttnlabS2sInfo, bidirectional, "bidirectional", ATTNLAB_I32),
    ATTNLAB_FIELD(AttnlabS2sInfo, embed, "embed", ATTNLAB_I32),
    ATTNLAB_FIELD(AttnlabS2sInfo, hidden, "hidden", ATTNLAB_I32),
    ATTNLAB_FIELD(AttnlabS2sInfo, attention, "attention", ATTNLAB_I32),
    ATTNLAB_FIELD(AttnlabS2sInfo, attn_hidden, "attnHidden", ATTNLAB_I32),
    ATTNLAB_FIELD(AttnlabS2sInfo, batch, "batch", ATTNLAB_I32),
    ATTNLAB_FIELD(AttnlabS2sInfo, parameters, "parameters", ATTNLAB_F64),
    ATTNLAB_FIELD(AttnlabS2sInfo, steps, "steps", ATTNLAB_F64),
    ATTNLAB_FIELD(AttnlabS2sInfo, seed, "seed", ATTNLAB_F64),
};

static const AttnlabField trainer_eval_fields[] = {
    ATTNLAB_FIELD(TrainerEval, loss, "loss", ATTNLAB_F64),
    ATTNLAB_FIELD(TrainerEval, token_accuracy, "tokenAccuracy", ATTNLAB_F64),
    ATTNLAB_FIELD(TrainerEval, sequence_accuracy, "sequenceAccuracy", ATTNLAB_F64),
    ATTNLAB_FIELD(TrainerEval, count, "count", ATTNLAB_I32),
    ATTNLAB_FIELD(TrainerEval, length_count, "lengthCount", ATTNLAB_I32),
    ATTNLAB_FIELD(TrainerEval, length_right, "lengthRight", ATTNLAB_I32),
};

ATTNLAB_RECORDS(attnlab_s2s_records, ATTNLAB_RECORD("S2sInfo", AttnlabS2sInfo, s2s_info_fields),
                ATTNLAB_RECORD("TrainerEval", TrainerEval, trainer_eval_fields));
