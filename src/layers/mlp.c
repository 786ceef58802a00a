/* A two-layer perceptron with GELU (src/layers/mlp.h). */
#include "layers/mlp.h"

#include <math.h>

#include "base/pool.h"
#include "core/gemm_parallel.h"
#include "core/vec.h"
#include "layers/linear.h"

#define GELU_SCALE 0.7978845608028654 /* sqrt(2/pi) */
#define GELU_CUBE 0.044715

/* GELU runs in chunks through the vector tanh (core/vec.h): libm's tanh on
 * every hidden unit took a third of a transformer's training step. */
#define GELU_CHUNK 64

/* t = tanh z, z = s (u + c u^3), for k <= GELU_CHUNK inputs */
static void gelu_tanh(nn_real *t, const nn_real *u, int k) {
    for (int i = 0; i < k; i++) t[i] = (nn_real)GELU_SCALE * (u[i] + (nn_real)GELU_CUBE * u[i] * u[i] * u[i]);
    vec_tanh(t, t, k);
}

/* gelu'(u) = (1 + tanh z)/2 + u/2 (1 - tanh^2 z) dz/du, into g (k <= GELU_CHUNK) */
static void gelu_grad(nn_real *g, const nn_real *u, int k) {
    gelu_tanh(g, u, k);
    for (int i = 0; i < k; i++) {
        nn_real t = g[i], x = u[i];
        g[i] = (nn_real)0.5 * (1 + t) +
               (nn_real)0.5 * x * (1 - t * t) * (nn_real)GELU_SCALE * (1 + 3 * (nn_real)GELU_CUBE * x * x);
    }
}

/* Chunks [c0, c1) of y = gelu(x) (n). */
static void gelu_chunks(nn_real *y, const nn_real *x, size_t n, size_t c0, size_t c1) {
    nn_real t[GELU_CHUNK];
    for (size_t i = c0 * GELU_CHUNK; i < n && i < c1 * GELU_CHUNK; i += GELU_CHUNK) {
        int k = n - i < GELU_CHUNK ? (int)(n - i) : GELU_CHUNK;
        gelu_tanh(t, x + i, k);
        for (int j = 0; j < k; j++) y[i + j] = (nn_real)0.5 * x[i + j] * (1 + t[j]);
    }
}

typedef struct {
    nn_real *y;
    const nn_real *x;
    size_t n;
} GeluJob;

static int gelu_task(void *ctx, int tid, int threads) {
    const GeluJob *j = ctx;
    int c0, c1;
    nn_pool_range((int)((j->n + GELU_CHUNK - 1) / GELU_CHUNK), tid, threads, &c0, &c1);
    gelu_chunks(j->y, j->x, j->n, (size_t)c0, (size_t)c1);
    return NN_OK;
}

/* Costs about this many multiply-adds an element (the vector tanh's polynomial and division). */
#define GELU_WORK 24

/* Whole chunks per thread: each chunk computes as it would on one thread. */
void gelu_forward(nn_real *y, const nn_real *x, size_t n) {
    GeluJob job = {y, x, n};
    nn_pool_run(gelu_task, &job, (double)n * GELU_WORK);
}

void gelu_backward(nn_real *dx, const nn_real *dy, const nn_real *x, size_t n) {
    nn_real g[GELU_CHUNK];
    for (size_t i = 0; i < n; i += GELU_CHUNK) {
        int k = n - i < GELU_CHUNK ? (int)(n - i) : GELU_CHUNK;
        gelu_grad(g, x + i, k);
        for (int j = 0; j < k; j++) dx[i + j] += dy[i + j] * g[j];
    }
}

void mlp_add(OptParams *p, MlpWeights *w, int C, int F) {
    opt_add(p, &w->W1, (size_t)C * F, C, OPT_INIT_UNIFORM);
    opt_add(p, &w->b1, (size_t)F, 0, OPT_INIT_ZERO);
    opt_add(p, &w->W2, (size_t)F * C, F, OPT_INIT_UNIFORM);
    opt_add(p, &w->b2, (size_t)C, 0, OPT_INIT_ZERO);
}

void gelu_exact_forward(nn_real *y, const nn_real *x, size_t n) {
    for (size_t i = 0; i < n; i++) y[i] = (nn_real)(0.5 * x[i] * (1 + erf(x[i] * 0.7071067811865476)));
}

/* gelu'(u) of the exact form: Phi(u) + u phi(u). */
static nn_real gelu_exact_grad(nn_real u) {
    double x = u;
    return (nn_real)(0.5 * (1 + erf(x * 0.7071067811865476)) + x * 0.3989422804014327 * exp(-0.5 * x * x));
}

/* d (n) *= gelu'(h), the tanh form or (exact) the erf form: a gradient
 * through the activation, in place. */
static void gelu_scale_grad(nn_real *d, const nn_real *h, size_t n, int exact) {
    nn_real gd[GELU_CHUNK];
    for (size_t i = 0; i < n; i += GELU_CHUNK) {
        int k = n - i < GELU_CHUNK ? (int)(n - i) : GELU_CHUNK;
        if (exact)
            for (int j = 0; j < k; j++) gd[j] = gelu_exact_grad(h[i + j]);
        else
            gelu_grad(gd, h + i, k);
        for (int j = 0; j < k; j++) d[i + j] *= gd[j];
    }
}

void gelu_exact_backward(nn_real *dx, const nn_real *dy, const nn_real *x, size_t n) {
    for (size_t i = 0; i < n; i++) dx[i] += dy[i] * gelu_exact_grad(x[i]);
}

static void forward(VecGemmKind kind, nn_real *y, nn_real *h, nn_real *a, const nn_real *x, const MlpWeights *w, int n,
                    int C, int F, int exact) {
    const VecGemm up = {kind, h, F, x, C, w->W1, F, n, F, C, 0};
    vec_gemm_parallel(&up, 1);
    for (int r = 0; r < n; r++) vec_axpy(h + (size_t)r * F, 1, w->b1, F);
    if (exact) gelu_exact_forward(a, h, (size_t)n * F);
    else gelu_forward(a, h, (size_t)n * F);
    const VecGemm down = {kind, y, C, a, F, w->W2, C, n, C, F, 0};
    vec_gemm_parallel(&down, 1);
    for (int r = 0; r < n; r++) vec_axpy(y + (size_t)r * C, 1, w->b2, C);
}

void mlp_forward(nn_real *y, nn_real *h, nn_real *a, const nn_real *x, const MlpWeights *w, int n, int C, int F,
                 int exact) {
    forward(VEC_GEMM_NN, y, h, a, x, w, n, C, F, exact);
}

void mlp_forward_packed(nn_real *y, nn_real *h, nn_real *a, const nn_real *x, const MlpWeights *w, int n, int C, int F,
                        int exact) {
    forward(VEC_GEMM_PACKED, y, h, a, x, w, n, C, F, exact);
}

void mlp_backward(nn_real *dx, nn_real *da, MlpWeights *g, const nn_real *dy, const nn_real *x, const nn_real *h,
                  const nn_real *a, const MlpWeights *w, int n, int C, int F) {
    /* y = a W2 + b2 */
    for (int r = 0; r < n; r++) vec_axpy(g->b2, 1, dy + (size_t)r * C, C);
    vec_gemm_tn(g->W2, C, a, F, dy, C, F, C, n, 1);
    vec_gemm_nt(da, F, dy, C, w->W2, C, n, F, C, 0);
    /* a = gelu(h): dh = gelu'(h) da, in place */
    gelu_scale_grad(da, h, (size_t)n * F, 0);
    /* h = x W1 + b1 */
    for (int r = 0; r < n; r++) vec_axpy(g->b1, 1, da + (size_t)r * F, F);
    vec_gemm_tn(g->W1, F, x, C, da, F, C, F, n, 1);
    vec_gemm_nt(dx, C, da, F, w->W1, F, n, C, F, 1);
}

/* The input's gradient alone, through row-major weights: the same steps
 * as mlp_backward's, no weight's gradient. */
void mlp_backward_input(nn_real *dx, nn_real *da, const nn_real *dy, const nn_real *h, const MlpWeights *w, int n, int C,
                        int F, int exact) {
    vec_gemm_nt(da, F, dy, C, w->W2, C, n, F, C, 0);
    gelu_scale_grad(da, h, (size_t)n * F, exact);
    vec_gemm_nt(dx, C, da, F, w->W1, F, n, C, F, 1);
}

/* The input's gradient alone, through packed read-only weights (a
 * checkpoint's): da = dy W2^T, dh = gelu'(h) da, dx += dh W1^T. */
void mlp_backward_input_packed(nn_real *dx, nn_real *da, const nn_real *dy, const nn_real *h, const MlpWeights *w,
                               nn_real *scratch, int n, int C, int F, int exact) {
    for (size_t i = 0, nF = (size_t)n * F; i < nF; i++) da[i] = 0;
    linear_backward_input_packed(da, dy, w->W2, scratch, n, F, C);
    gelu_scale_grad(da, h, (size_t)n * F, exact);
    linear_backward_input_packed(dx, da, w->W1, scratch, n, C, F);
}
