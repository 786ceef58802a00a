/* The WASM boundary for seq2seq models bound to tasks (include/attnlab/trainer.h):
 * a Trainer* is an opaque handle in JS. Every function returns an NnStatus
 * except the getters; the message is read with attnlab_last_error(). */
#include <emscripten.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab/trainer.h"
#include "base/error.h"

EMSCRIPTEN_KEEPALIVE int attnlab_s2s_create(int kind, int alphabet, int min_len, int max_len, const char *text,
                                            int text_len, int cell, int layers, int bidirectional, int embed,
                                            int hidden, int attention, int attn_hidden, int batch, double seed,
                                            Trainer **out) {
    TaskConfig tc = {(TaskKind)kind, (TaskAlphabet)alphabet, min_len, max_len};
    S2sConfig mc = {(RnnCellKind)cell, layers, bidirectional, embed, hidden, attention, attn_hidden,
                    0, 0, 0, 0, 0, batch, (uint64_t)seed};
    return trainer_create(out, &tc, text, text_len > 0 ? (size_t)text_len : 0, &mc);
}

EMSCRIPTEN_KEEPALIVE void attnlab_s2s_destroy(Trainer *t) { trainer_destroy(t); }

/* info (16 x i32): task kind, alphabet, min_len, max_len, in_vocab, out_vocab,
 * max_in, max_out, fixed_in, cell, layers, bidirectional, embed, hidden,
 * attention, batch; then *params (parameter count), *steps. */
EMSCRIPTEN_KEEPALIVE void attnlab_s2s_info(Trainer *t, int32_t *info, double *params, double *steps,
                                           double *seed) {
    const Task *task = trainer_task(t);
    const S2sConfig *c = s2s_config(trainer_model(t));
    const TaskConfig *tc = trainer_task_config(t);
    int32_t v[16] = {(int32_t)tc->kind, (int32_t)tc->alphabet, tc->min_len, tc->max_len, task_in_vocab(task), task_out_vocab(task), task_max_in(task), task_max_out(task),
                     task_fixed_in(task), (int32_t)c->cell, c->layers, c->bidirectional, c->embed, c->hidden,
                     c->attention, c->batch};
    memcpy(info, v, sizeof v);
    *params = (double)s2s_num_params(trainer_model(t));
    *steps = (double)s2s_steps(trainer_model(t));
    *seed = (double)c->seed;
}

EMSCRIPTEN_KEEPALIVE const char *attnlab_s2s_alphabet(Trainer *t, int output) {
    return output ? task_out_alphabet(trainer_task(t)) : task_in_alphabet(trainer_task(t));
}

EMSCRIPTEN_KEEPALIVE int attnlab_s2s_split_size(Trainer *t, int split) {
    return task_split_size(trainer_task(t), (TaskSplit)split);
}

EMSCRIPTEN_KEEPALIVE int attnlab_s2s_train(Trainer *t, int optimizer, float lr, float clip, int steps, int batch,
                                           float *losses, double *tokens) {
    S2sTrainOptions o = {(S2sOptimizer)optimizer, lr, clip};
    return trainer_train(t, &o, steps, batch, losses, tokens);
}

/* out (4 x f64): loss, token accuracy, sequence accuracy, count;
 * by_length (2 x (TASK_MAX_LEN + 1) x i32): examples, then successes, by input length. */
EMSCRIPTEN_KEEPALIVE int attnlab_s2s_evaluate(Trainer *t, int split, int count, double *out, int32_t *by_length) {
    TrainerEval r;
    NN_TRY(trainer_evaluate(t, (TaskSplit)split, count, &r));
    memcpy(by_length, r.length_count, sizeof r.length_count);
    memcpy(by_length + TASK_MAX_LEN + 1, r.length_right, sizeof r.length_right);
    out[0] = r.loss;
    out[1] = r.token_accuracy;
    out[2] = r.sequence_accuracy;
    out[3] = r.count;
    return NN_OK;
}

/* lens (2 x i32): input and output lengths. */
EMSCRIPTEN_KEEPALIVE int attnlab_s2s_translate(Trainer *t, const char *text, int beam, int32_t *in_ids,
                                               int32_t *out_ids, int32_t *lens, float *alignment, char *output) {
    int in_len = 0, out_len = 0;
    NN_TRY(trainer_translate(t, text, beam, in_ids, &in_len, out_ids, &out_len, alignment, output));
    lens[0] = in_len;
    lens[1] = out_len;
    return NN_OK;
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
