/* The WASM boundary for activation patching (src/models/decoder_patch.c)
 * and direct logit attribution (src/models/decoder_attribution.c)
 * of every decoder: a transformer made here (Transformer*) and a checkpoint
 * (Gpt2*), each through its own forward pass into the same patching code.
 * out (L, n or H) floats and metrics (2) doubles of the caller's
 * (web/engine/transformer.js). */
#include <emscripten.h>

#include "attnlab/gpt2.h"
#include "attnlab/transformer.h"

EMSCRIPTEN_KEEPALIVE int attnlab_tf_patch(Transformer *m, const int32_t *clean, const int32_t *corrupt, int n, int a,
                                          int b, int target, int method, float *out, double *metrics) {
    return tf_patch(m, clean, corrupt, n, a, b, target, method, out, metrics);
}

EMSCRIPTEN_KEEPALIVE int attnlab_gpt2_patch(Gpt2 *m, const int32_t *clean, const int32_t *corrupt, int n, int a, int b,
                                            int target, int method, float *out, double *metrics) {
    return gpt2_patch(m, clean, corrupt, n, a, b, target, method, out, metrics);
}

EMSCRIPTEN_KEEPALIVE int attnlab_tf_logit_attribution(Transformer *m, const int32_t *tokens, int n, int a, int b,
                                                      double *values, double *logit_diff) {
    return tf_logit_attribution(m, tokens, n, a, b, values, logit_diff);
}

EMSCRIPTEN_KEEPALIVE int attnlab_gpt2_logit_attribution(Gpt2 *m, const int32_t *tokens, int n, int a, int b,
                                                        double *values, double *logit_diff) {
    return gpt2_logit_attribution(m, tokens, n, a, b, values, logit_diff);
}
