/* The WASM boundary: every function JS may call is listed here, with flat
 * arguments (sizes, enum codes, heap pointers). Scratch is allocated here, at
 * the boundary, so the core's forward passes never allocate. Every function
 * returns an NnStatus; the message is read with attnlab_last_error(). */
#include <emscripten.h>
#include <malloc.h>
#include <stdlib.h>

#include "attnlab/attention.h"
#include "base/error.h"
#include "core/attention_overlap.h"

/* Scratch is the size table's count plus one 128-bit vector (4 floats) of
 * slack, so a vector load at the end of the last region stays inside. */
#define SCRATCH_SLACK_REALS 4

EMSCRIPTEN_KEEPALIVE const char *attnlab_last_error(void) { return nn_last_error(); }

/* Bytes currently allocated in the WASM heap (the leak tests watch it). */
EMSCRIPTEN_KEEPALIVE int attnlab_heap_used(void) { return (int)mallinfo().uordblks; }

/* 1 when these kernels were built for SIMD128. */
EMSCRIPTEN_KEEPALIVE int attnlab_simd(void) {
#if defined(__wasm_simd128__) && !defined(NN_SCALAR)
    return 1;
#else
    return 0;
#endif
}

/* attend's arguments, as JS passes them to attnlab_attend and attnlab_attend_begin */
#define ATTEND_ARGS                                                                                       \
    int n_q, int n_k, int d_q, int d_k, int d_v, int hidden, int score, int norm, float temperature,     \
        float beta, int causal, const int32_t *key_lengths, const float *q, const float *k, const float *v, \
        const float *W, const float *Wq, const float *Wk, const float *vv, float *scores, float *weights,  \
        float *context
#define ATTEND_CONFIG                                                                                     \
    AttnConfig c = {n_q, n_k, d_q, d_k, d_v, hidden, (AttnScore)score, (AttnNorm)norm,                   \
                    temperature, causal, key_lengths};                                                    \
    AttnParams p = {W, Wq, Wk, vv, beta}

EMSCRIPTEN_KEEPALIVE int attnlab_attend(ATTEND_ARGS) {
    ATTEND_CONFIG;
    NN_TRY(attn_check(&c, &p, q, k, v));
    float *scratch = malloc(sizeof(float) * (attn_forward_scratch_size(&c) + SCRATCH_SLACK_REALS));
    if (!scratch) return nn_fail(NN_ERR_NOMEM, "attend: out of memory for %d x %d cells", n_q, n_k);
    int status = attn_forward(&c, &p, scores, weights, context, q, k, v, scratch);
    free(scratch);
    return status;
}

/* attend read as it runs (src/core/attention_overlap.h): begin; share and
 * block, copying finished blocks out between shares; end, which frees what
 * begin allocated. */
static float *overlap_scratch;
static int32_t *overlap_done;

static void overlap_free(void) {
    free(overlap_scratch);
    free(overlap_done);
    overlap_scratch = NULL;
    overlap_done = NULL;
}

EMSCRIPTEN_KEEPALIVE int attnlab_attend_begin(ATTEND_ARGS) {
    ATTEND_CONFIG;
    NN_TRY(attn_check(&c, &p, q, k, v));
    overlap_scratch = malloc(sizeof(float) * (attn_forward_scratch_size(&c) + SCRATCH_SLACK_REALS));
    overlap_done = malloc(sizeof(int32_t) * (size_t)attn_row_blocks(&c));
    if (!overlap_scratch || !overlap_done) {
        overlap_free();
        return nn_fail(NN_ERR_NOMEM, "attend: out of memory for %d x %d cells", n_q, n_k);
    }
    int status = attn_overlap_begin(&c, &p, scores, weights, context, q, k, v, overlap_scratch, overlap_done);
    if (status != NN_OK) overlap_free();
    return status;
}

EMSCRIPTEN_KEEPALIVE int attnlab_attend_share(int count) { return attn_overlap_share(count); }

/* Row block `block`: 1 finished, 2 failed (read no further), 0 not yet;
 * with `wait`, only once it is finished or failed. */
EMSCRIPTEN_KEEPALIVE int attnlab_attend_block(int block, int wait) {
    int state = wait ? attn_overlap_wait_block(block) : attn_overlap_block(block);
    return state == ATTN_BLOCK_DONE ? 1 : state == ATTN_BLOCK_FAILED ? 2 : 0;
}

EMSCRIPTEN_KEEPALIVE int attnlab_attend_end(void) {
    int status = attn_overlap_end();
    overlap_free();
    return status;
}

/* Query rows per row block (the last block may have fewer). */
EMSCRIPTEN_KEEPALIVE int attnlab_attend_block_rows(void) { return attn_block_rows(); }

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
