/* The pool's side of the WASM boundary (src/base/pool.h), called by
 * web/engine/threads/: the caller creates the pool, each worker instance sets
 * its stack pointer to attnlab_pool_stack(tid) and enters
 * attnlab_pool_worker(tid), which returns after attnlab_pool_stop(). In the
 * single-thread builds a pool of one thread is all there is. Below them, the
 * backward passes the threads tests compare across thread counts. */
#include <emscripten.h>
#include <stdlib.h>

#include "attnlab/attention.h"
#include "base/error.h"
#include "base/pool.h"

/* Each worker's stack: the caller's is 1 MiB (TOTAL_STACK); the kernels
 * keep their buffers in scratch, so a worker needs far less. */
#define ATTNLAB_WORKER_STACK (256 << 10)

EMSCRIPTEN_KEEPALIVE int attnlab_pool_create(int threads) {
    nn_clear_error();
    return nn_pool_create(threads, ATTNLAB_WORKER_STACK);
}

/* Threads a parallel region uses (1 in the single-thread builds). */
EMSCRIPTEN_KEEPALIVE int attnlab_pool_threads(void) { return nn_pool_threads(); }

EMSCRIPTEN_KEEPALIVE void *attnlab_pool_stack(int tid) { return nn_pool_stack_top(tid); }

EMSCRIPTEN_KEEPALIVE void attnlab_pool_worker(int tid) { nn_pool_worker(tid); }

EMSCRIPTEN_KEEPALIVE void attnlab_pool_min_work(double work) { nn_pool_set_min_work(work); }

EMSCRIPTEN_KEEPALIVE void attnlab_pool_stop(void) { nn_pool_stop(); }

/* Most threads a pool takes (NN_MAX_THREADS). */
EMSCRIPTEN_KEEPALIVE int attnlab_pool_max_threads(void) { return NN_MAX_THREADS; }

/* ---- backward passes, for the tests and benches that split them ----------
 * The forward, then the backward of a loss L with dL/dcontext = dcontext
 * (and dL/dweights = dweights, or 0 when NULL); every gradient pointer may
 * be 0 and is accumulated into (+=). Scratch and activations are allocated
 * here, at the boundary. */

EMSCRIPTEN_KEEPALIVE int attnlab_attend_backward(int n_q, int n_k, int d_q, int d_k, int d_v, int hidden, int score,
                                                 int norm, float temperature, float beta, int causal,
                                                 const int32_t *key_lengths, const float *q, const float *k,
                                                 const float *v, const float *W, const float *Wq, const float *Wk,
                                                 const float *vv, const float *dcontext, const float *dweights,
                                                 float *dq, float *dk, float *dv, float *gW, float *gWq, float *gWk,
                                                 float *gv, float *gbeta) {
    AttnConfig c = {n_q, n_k, d_q, d_k, d_v, hidden, (AttnScore)score, (AttnNorm)norm,
                    temperature, causal, key_lengths, 0};
    AttnParams p = {W, Wq, Wk, vv, beta};
    AttnParamGrads g = {gW, gWq, gWk, gv, 0};
    NN_TRY(attn_check_config(&c, &p)); /* attn_forward checks the data */
    size_t cells = (size_t)n_q * n_k, reals = 2 * cells + (size_t)n_q * d_v + attn_scratch_size(&c) + 4;
    float *buf = malloc(sizeof(float) * reals);
    if (!buf) return nn_fail(NN_ERR_NOMEM, "attend backward: out of memory for %d x %d cells", n_q, n_k);
    float *scores = buf, *weights = scores + cells, *context = weights + cells, *scratch = context + (size_t)n_q * d_v;
    int status = attn_forward(&c, &p, scores, weights, context, q, k, v, scratch);
    if (status == NN_OK)
        status = attn_backward(&c, &p, &g, dq, dk, dv, dcontext, dweights, scores, weights, q, k, v, scratch);
    if (status == NN_OK && gbeta) *gbeta += g.beta;
    free(buf);
    return status;
}

EMSCRIPTEN_KEEPALIVE int attnlab_self_attention_backward(int n, int d_in, int d_k, int d_v, int d_out, int heads,
                                                         int score, int causal, const float *x, const float *wq,
                                                         const float *wk, const float *wv, const float *wo,
                                                         const float *doutput, float *dx, float *gwq, float *gwk,
                                                         float *gwv, float *gwo) {
    SelfAttnConfig c = {n, d_in, d_k, d_v, d_out, heads, (AttnScore)score, causal};
    SelfAttnWeights w = {wq, wk, wv, wo};
    SelfAttnGrads g = {gwq, gwk, gwv, gwo};
    NN_TRY(attn_self_check(&c, &w, x));
    size_t cells = (size_t)heads * n * n, rows = (size_t)n;
    size_t reals = rows * (2 * (size_t)d_k + 2 * (size_t)d_v + (size_t)d_out) + 2 * cells + attn_self_scratch_size(&c) + 4;
    float *buf = malloc(sizeof(float) * reals);
    if (!buf) return nn_fail(NN_ERR_NOMEM, "selfAttention backward: out of memory for %d tokens", n);
    SelfAttnActs a;
    a.q = buf;
    a.k = a.q + rows * d_k;
    a.v = a.k + rows * d_k;
    a.scores = a.v + rows * d_v;
    a.weights = a.scores + cells;
    a.context = a.weights + cells;
    a.output = a.context + rows * d_v;
    float *scratch = a.output + rows * d_out;
    int status = attn_self_forward(&c, &w, &a, x, scratch);
    if (status == NN_OK) status = attn_self_backward(&c, &w, &g, dx, doutput, &a, x, scratch);
    free(buf);
    return status;
}
