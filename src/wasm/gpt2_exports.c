/* The WASM boundary for GPT-2 checkpoints (include/attnlab/gpt2.h): a Gpt2*
 * is an opaque handle in JS (web/engine/gpt2.js). Every function returns an
 * NnStatus except the getters; the message is read with attnlab_last_error().
 * The limits JS checks options against are in the constants table. */
#include <emscripten.h>

#include "attnlab/gpt2.h"
#include "attnlab/optim.h"
#include "base/error.h"

/* arch: 0 GPT-2 (the rest ignored), 1 GPT-NeoX with rotary_dims, rotary_base, parallel, gelu_exact. */
#define ARCH_ARGS int arch, int rotary_dims, double rotary_base, int parallel, int gelu_exact
static Gpt2Config config_of(int layers, int heads, int d_model, int d_ff, int context, int vocab, double epsilon,
                            ARCH_ARGS) {
    Gpt2Config c = {layers, heads, d_model, d_ff, context, vocab, epsilon, arch != 0, rotary_dims, rotary_base,
                    parallel != 0, gelu_exact != 0};
    return c;
}
#define ARCH arch, rotary_dims, rotary_base, parallel, gelu_exact

/* Parameters of a checkpoint of that config (the config unchecked: a size to report). */
EMSCRIPTEN_KEEPALIVE double attnlab_gpt2_param_count(int layers, int heads, int d_model, int d_ff, int context,
                                                     int vocab, int tied, ARCH_ARGS) {
    Gpt2Config c = config_of(layers, heads, d_model, d_ff, context, vocab, 1e-5, ARCH);
    return gpt2_param_count(&c, tied);
}

EMSCRIPTEN_KEEPALIVE int attnlab_gpt2_check_config(int layers, int heads, int d_model, int d_ff, int context, int vocab,
                                                   double epsilon, ARCH_ARGS) {
    Gpt2Config c = config_of(layers, heads, d_model, d_ff, context, vocab, epsilon, ARCH);
    return gpt2_check_config(&c);
}

EMSCRIPTEN_KEEPALIVE int attnlab_gpt2_open(int layers, int heads, int d_model, int d_ff, int context, int vocab,
                                           double epsilon, ARCH_ARGS, const uint8_t *header, int header_len,
                                           double file_size, Gpt2 **out) {
    Gpt2Config c = config_of(layers, heads, d_model, d_ff, context, vocab, epsilon, ARCH);
    return gpt2_open(out, &c, header, header_len > 0 ? (size_t)header_len : 0, file_size);
}

EMSCRIPTEN_KEEPALIVE int attnlab_gpt2_load_chunk(Gpt2 *m, const uint8_t *bytes, int n) {
    return gpt2_load_chunk(m, bytes, n > 0 ? (size_t)n : 0);
}

EMSCRIPTEN_KEEPALIVE int attnlab_gpt2_load_finish(Gpt2 *m) { return gpt2_load_finish(m); }
EMSCRIPTEN_KEEPALIVE void attnlab_gpt2_destroy(Gpt2 *m) { gpt2_destroy(m); }
EMSCRIPTEN_KEEPALIVE double attnlab_gpt2_parameters(Gpt2 *m) { return gpt2_num_params(m); }
EMSCRIPTEN_KEEPALIVE int attnlab_gpt2_dtype(Gpt2 *m) { return gpt2_dtype(m); }

EMSCRIPTEN_KEEPALIVE int attnlab_gpt2_set_ablation(Gpt2 *m, const int32_t *pairs, int n) {
    return gpt2_set_ablation(m, pairs, n);
}

EMSCRIPTEN_KEEPALIVE int attnlab_gpt2_inspect(Gpt2 *m, const int32_t *tokens, int n, float *attention, int32_t *ids,
                                              float *p, int32_t *lens, float *logits) {
    return gpt2_inspect(m, tokens, n, attention, ids, p, lens, logits);
}

/* out (1 x f64): the loss */
EMSCRIPTEN_KEEPALIVE int attnlab_gpt2_evaluate(Gpt2 *m, const int32_t *tokens, int n, double *out) {
    return gpt2_evaluate(m, tokens, n, out);
}

/* Fine-tuning on tokens (n of them): the schedule arguments every model's train export takes (NnTrainOptions'
 * fields), the windows' length; losses (steps). */
EMSCRIPTEN_KEEPALIVE int attnlab_gpt2_train(Gpt2 *m, const int32_t *tokens, int n, int steps, int batch, int length,
                                            float lr, float weight_decay, int schedule, int warmup, int decay_steps,
                                            float final_lr, float clip, float *losses) {
    if (schedule != NN_LR_COSINE && schedule != NN_LR_CONSTANT)
        return nn_fail(NN_ERR_ARG, "schedule: unknown schedule %d", schedule);
    Gpt2TrainOptions o = {steps, batch, length, lr, weight_decay, warmup, decay_steps, clip, final_lr,
                          schedule == NN_LR_CONSTANT};
    return gpt2_train(m, tokens, n, &o, losses);
}

EMSCRIPTEN_KEEPALIVE int attnlab_gpt2_undo(Gpt2 *m) { return gpt2_undo(m); }
EMSCRIPTEN_KEEPALIVE int attnlab_gpt2_steps(Gpt2 *m) { return gpt2_steps(m); }

EMSCRIPTEN_KEEPALIVE int attnlab_gpt2_generate(Gpt2 *m, int32_t *tokens, int n_prompt, int n_new, double temperature,
                                               int top_k, double seed) {
    return gpt2_generate(m, tokens, n_prompt, n_new, temperature, top_k, (uint64_t)seed);
}

EMSCRIPTEN_KEEPALIVE int attnlab_gpt2_head_scores(Gpt2 *m, int count, int length, double seed, float *prev,
                                                  float *ind) {
    return gpt2_head_scores(m, count, length, (uint64_t)seed, prev, ind);
}
