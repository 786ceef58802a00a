/* The WASM boundary for transformers (include/attnlab/transformer.h): a
 * Transformer* is an opaque handle in JS (web/engine/transformer.js). Every
 * function returns an NnStatus except the getters; the message is read with
 * attnlab_last_error(). The names, codes and limits JS validates options
 * with are in the one constants table (src/wasm/constants.c). */
#include <emscripten.h>
#include <math.h>
#include <stdio.h>

#include "attnlab/transformer.h"
#include "base/error.h"
#include "layers/model_file.h"

EMSCRIPTEN_KEEPALIVE int attnlab_tf_create(int task, const char *text, int text_len, int layers, int heads,
                                           int d_model, int d_ff, int context, int positional, int score, int batch,
                                           double seed, Transformer **out) {
    if (text_len < 0 || text_len > TF_MAX_TEXT_BYTES)
        return nn_fail(NN_ERR_LIMIT, "text: %d bytes is past the limit of %d", text_len, TF_MAX_TEXT_BYTES);
    TfConfig c = {(TfTaskKind)task, layers, heads, d_model, d_ff, context, (TfPositional)positional,
                  (AttnScore)score, batch, (uint64_t)seed};
    return tf_create(out, &c, text, (size_t)text_len);
}

EMSCRIPTEN_KEEPALIVE void attnlab_tf_destroy(Transformer *m) { tf_destroy(m); }

/* info (12 x i32): task, layers, heads, dModel, dFF, context, positional,
 * score, batch, vocabulary, sequence length, steps taken */
EMSCRIPTEN_KEEPALIVE void attnlab_tf_info(Transformer *m, int32_t *info) {
    const TfConfig *c = tf_config(m);
    const int32_t v[12] = {(int32_t)c->task, c->layers, c->heads, c->d_model, c->d_ff, c->context,
                           (int32_t)c->positional, (int32_t)c->score, c->batch, tf_vocab(m), tf_seq_len(m),
                           tf_steps(m)};
    for (int i = 0; i < 12; i++) info[i] = v[i];
}

EMSCRIPTEN_KEEPALIVE double attnlab_tf_parameters(Transformer *m) { return (double)tf_num_params(m); }
EMSCRIPTEN_KEEPALIVE double attnlab_tf_seed(Transformer *m) { return (double)tf_config(m)->seed; }
EMSCRIPTEN_KEEPALIVE const char *attnlab_tf_token(Transformer *m, int id) { return tf_token_name(m, id); }
EMSCRIPTEN_KEEPALIVE float *attnlab_tf_weights(Transformer *m) { return tf_params(m); }

/* Tensor i's name (NULL past the last); at (2 x f64): its offset and size in floats. */
EMSCRIPTEN_KEEPALIVE const char *attnlab_tf_tensor(Transformer *m, int i, double *at) {
    size_t offset = 0, count = 0;
    const char *name = tf_tensor(m, i, &offset, &count);
    at[0] = (double)offset;
    at[1] = (double)count;
    return name;
}

/* Overwrites tensor i with count floats from data (a block of the caller's):
 * the engine writes only into blocks it allocated, never into the model. */
EMSCRIPTEN_KEEPALIVE int attnlab_tf_set_tensor(Transformer *m, int i, const float *data, int count) {
    nn_clear_error();
    size_t offset = 0, n = 0;
    const char *name = tf_tensor(m, i, &offset, &n);
    if (!name) return nn_fail(NN_ERR_ARG, "setWeights: no tensor %d", i);
    if (count < 0 || (size_t)count != n)
        return nn_fail(NN_ERR_SHAPE, "setWeights: %s holds %zu numbers (got %d)", name, n, count);
    /* all or nothing: every value is checked before any is written */
    for (size_t k = 0; k < n; k++)
        if (!isfinite(data[k]) || fabs(data[k]) > MODEL_FILE_MAX_WEIGHT)
            return nn_fail(NN_ERR_VALUE, "setWeights: %s[%zu] is %g; weights must be finite numbers within -%g..%g",
                           name, k, (double)data[k], MODEL_FILE_MAX_WEIGHT, MODEL_FILE_MAX_WEIGHT);
    nn_real *p = tf_params(m) + offset;
    for (size_t k = 0; k < n; k++) p[k] = (nn_real)data[k];
    return NN_OK;
}

EMSCRIPTEN_KEEPALIVE int attnlab_tf_set_ablation(Transformer *m, const int32_t *pairs, int n) {
    return tf_set_ablation(m, pairs, n);
}

/* The schedule arguments every model's train export takes (NnTrainOptions'
 * fields); tf_train runs the cosine to NN_LR_FLOOR lr only, so it refuses
 * another schedule or final rate rather than ignore it. */
EMSCRIPTEN_KEEPALIVE int attnlab_tf_train(Transformer *m, int steps, int batch, float lr, float weight_decay,
                                          int schedule, int warmup, int decay_steps, float final_lr, float clip,
                                          float *losses) {
    if (schedule != NN_LR_COSINE && schedule != NN_LR_CONSTANT)
        return nn_fail(NN_ERR_ARG, "schedule: unknown schedule %d", schedule);
    TfTrainOptions o = {steps, batch, lr, weight_decay, warmup, decay_steps, clip, final_lr, schedule == NN_LR_CONSTANT};
    return tf_train(m, &o, losses);
}

EMSCRIPTEN_KEEPALIVE int attnlab_tf_undo(Transformer *m) { return tf_undo(m); }

/* out (2 x f64): loss, accuracy */
EMSCRIPTEN_KEEPALIVE int attnlab_tf_evaluate(Transformer *m, int split, int count, double *out) {
    return tf_evaluate(m, (TfSplit)split, count, &out[0], &out[1]);
}

/* One sequence from the stream rng (2 x u32, low word first), which advances; n (1 x i32). */
EMSCRIPTEN_KEEPALIVE int attnlab_tf_sample(Transformer *m, int split, uint32_t *rng, int32_t *tokens,
                                           int32_t *targets, int32_t *n) {
    uint64_t s = (uint64_t)rng[1] << 32 | rng[0];
    int len = 0;
    int st = tf_sample(m, (TfSplit)split, &s, tokens, targets, &len);
    rng[0] = (uint32_t)s;
    rng[1] = (uint32_t)(s >> 32);
    *n = len;
    return st;
}

EMSCRIPTEN_KEEPALIVE int attnlab_tf_inspect(Transformer *m, const int32_t *tokens, int n, float *attention,
                                            int32_t *top_ids, float *top_p, int32_t *lens) {
    return tf_inspect(m, tokens, n, attention, top_ids, top_p, lens);
}

EMSCRIPTEN_KEEPALIVE int attnlab_tf_generate(Transformer *m, int32_t *tokens, int n_prompt, int n_new,
                                             double temperature, int top_k, double seed) {
    return tf_generate(m, tokens, n_prompt, n_new, temperature, top_k, (uint64_t)seed);
}

EMSCRIPTEN_KEEPALIVE int attnlab_tf_head_scores(Transformer *m, int count, float *prev, float *ind) {
    return tf_head_scores(m, count, prev, ind);
}

EMSCRIPTEN_KEEPALIVE double attnlab_tf_save_size(Transformer *m) { return (double)tf_save_size(m); }

EMSCRIPTEN_KEEPALIVE int attnlab_tf_save(Transformer *m, uint8_t *bytes, int size) {
    return tf_save(m, bytes, size > 0 ? (size_t)size : 0);
}

EMSCRIPTEN_KEEPALIVE int attnlab_tf_load(const uint8_t *bytes, int size, Transformer **out) {
    return tf_load(out, bytes, size > 0 ? (size_t)size : 0);
}
