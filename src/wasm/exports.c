/* The WASM boundary: every function JS may call is listed here, with flat
 * arguments (sizes, enum codes, heap pointers). Scratch is allocated here, at
 * the boundary, so the core's forward passes never allocate. Every function
 * returns an NnStatus; the message is read with attnlab_last_error(). */
#include <emscripten.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab/attention.h"
#include "base/error.h"

/* Scratch is the size table's count plus one 128-bit vector (4 floats) of
 * slack, so a vector load at the end of the last region stays inside. */
#define SCRATCH_SLACK_REALS 4

EMSCRIPTEN_KEEPALIVE const char *attnlab_last_error(void) { return nn_last_error(); }

/* Bytes currently allocated in the WASM heap (the leak tests watch it). */
/* mallinfo's counts are ints: read as unsigned, past 2 GiB of a 4 GiB heap they stay right (a fine-tuned
 * GPT-2 small holds 3.5 GB). */
EMSCRIPTEN_KEEPALIVE double attnlab_heap_used(void) { return (double)(unsigned)mallinfo().uordblks; }

/* 1 when these kernels were built for SIMD128. */
EMSCRIPTEN_KEEPALIVE int attnlab_simd(void) {
#if defined(__wasm_simd128__) && !defined(NN_SCALAR)
    return 1;
#else
    return 0;
#endif
}

/* The forward of a call that may fail past its checks (attn_check_bounds)
 * writes a block of its own, copied to scores, weights and context only on
 * success: those may be the views of the previous call (copy: false), which
 * a failing call must leave as they were. scores and weights may be NULL. */
static int attend_staged(const AttnConfig *c, const AttnParams *p, float *scores, float *weights, float *context,
                         const float *q, const float *k, const float *v, float *scratch) {
    size_t cells = (size_t)c->n_q * c->n_k, ns = scores ? cells : 0, nw = weights ? cells : 0;
    size_t nz = (size_t)c->n_q * c->d_v;
    float *stage = malloc(sizeof(float) * (ns + nw + nz));
    if (!stage) return nn_fail(NN_ERR_NOMEM, "attend: out of memory for %d x %d cells", c->n_q, c->n_k);
    float *s = scores ? stage : NULL, *w = weights ? stage + ns : NULL, *z = stage + ns + nw;
    int status = attn_forward_checked(c, p, s, w, z, q, k, v, scratch);
    if (status == NN_OK) {
        if (scores) memcpy(scores, s, sizeof(float) * ns);
        if (weights) memcpy(weights, w, sizeof(float) * nw);
        memcpy(context, z, sizeof(float) * nz);
    }
    free(stage);
    return status;
}

EMSCRIPTEN_KEEPALIVE int attnlab_attend(int n_q, int n_k, int d_q, int d_k, int d_v, int hidden, int score,
                                        int norm, float temperature, float beta, int causal,
                                        const int32_t *key_lengths, const float *q, const float *k,
                                        const float *v, const float *W, const float *Wq, const float *Wk,
                                        const float *vv, float *scores, float *weights, float *context) {
    AttnConfig c = {n_q, n_k, d_q, d_k, d_v, hidden, (AttnScore)score, (AttnNorm)norm,
                    temperature, causal, key_lengths, 0};
    AttnParams p = {W, Wq, Wk, vv, beta};
    int may_fail;
    NN_TRY(attn_check_bounds(&c, &p, q, k, v, &may_fail)); /* the one pass over the data */
    float *scratch = malloc(sizeof(float) * (attn_forward_scratch_size(&c) + SCRATCH_SLACK_REALS));
    if (!scratch) return nn_fail(NN_ERR_NOMEM, "attend: out of memory for %d x %d cells", n_q, n_k);
    int status = may_fail ? attend_staged(&c, &p, scores, weights, context, q, k, v, scratch)
                          : attn_forward_checked(&c, &p, scores, weights, context, q, k, v, scratch);
    free(scratch);
    return status;
}

EMSCRIPTEN_KEEPALIVE int attnlab_self_attention(int n, int d_in, int d_k, int d_v, int d_out, int heads,
                                                int score, int causal, const float *x, const float *wq,
                                                const float *wk, const float *wv, const float *wo,
                                                float *q, float *k, float *v, float *scores,
                                                float *weights, float *context, float *output) {
    SelfAttnConfig c = {n, d_in, d_k, d_v, d_out, heads, (AttnScore)score, causal};
    SelfAttnWeights w = {wq, wk, wv, wo};
    SelfAttnActs a = {q, k, v, scores, weights, context, output};
    NN_TRY(attn_self_check(&c, &w, x));
    float *scratch = malloc(sizeof(float) * (attn_self_scratch_size(&c) + SCRATCH_SLACK_REALS));
    if (!scratch) return nn_fail(NN_ERR_NOMEM, "selfAttention: out of memory for %d tokens", n);
    int status = attn_self_forward(&c, &w, &a, x, scratch);
    free(scratch);
    return status;
}
