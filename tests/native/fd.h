/* Helpers the gradient tests share: central finite differences of a scalar
 * loss, and the self-attention test shapes (which projections exist, the
 * widths they imply, the activation buffers of the engine and of ref.h). */
#ifndef ATTNLAB_TESTS_FD_H
#define ATTNLAB_TESTS_FD_H

#include "check.h"
#include "ref.h"

/* The loss at the current point of whatever ctx holds. */
typedef double (*FdLoss)(void *ctx);

/* dL/dx_i ~ (L(x + h e_i) - L(x - h e_i)) / (the step actually taken): x in
 * the engine's precision, where x +- h rounds to nn_real. */
static inline void fd_engine(nn_real *x, size_t n, double h, FdLoss loss, void *ctx, double *num) {
    for (size_t i = 0; i < n; i++) {
        nn_real x0 = x[i];
        nn_real xp = (nn_real)(x0 + h), xm = (nn_real)(x0 - h);
        x[i] = xp;
        double Lp = loss(ctx);
        x[i] = xm;
        double Lm = loss(ctx);
        x[i] = x0;
        num[i] = (Lp - Lm) / ((double)xp - (double)xm);
    }
}

/* The same over a float64 tensor (the reference of ref.h). */
static inline void fd_double(double *x, size_t n, double h, FdLoss loss, void *ctx, double *num) {
    for (size_t i = 0; i < n; i++) {
        double x0 = x[i];
        x[i] = x0 + h;
        double Lp = loss(ctx);
        x[i] = x0 - h;
        double Lm = loss(ctx);
        x[i] = x0;
        num[i] = (Lp - Lm) / (2 * h);
    }
}

/* The worst relative gap between a gradient g (n) of the loss and the central
 * differences of every x_i (step 1e-6), ignoring gaps under 1e-8. */
static inline double fd_worst(FdLoss loss, void *ctx, nn_real *x, const nn_real *g, size_t n) {
    size_t mark = alloc_mark();
    double *num = alloc_doubles(n), worst = 0;
    fd_engine(x, n, 1e-6, loss, ctx, num);
    for (size_t i = 0; i < n; i++) {
        double err = fabs(num[i] - g[i]) / (1e-6 + fabs(num[i]) + fabs(g[i]));
        if (fabs(num[i] - g[i]) > 1e-8 && err > worst) worst = err;
    }
    alloc_release(mark);
    return worst;
}

/* Which self-attention projections a case has. */
typedef enum { PROJ_NONE, PROJ_QKV, PROJ_QKVO, PROJ_VO, PROJ_O, PROJ_COUNT } Proj;
static const char *const proj_names[PROJ_COUNT] = {"none", "wq+wk+wv", "wq+wk+wv+wo", "wv+wo", "wo"};

static inline int proj_has_qk(Proj p) { return p == PROJ_QKV || p == PROJ_QKVO; }
static inline int proj_has_v(Proj p) { return p != PROJ_NONE && p != PROJ_O; }
static inline int proj_has_o(Proj p) { return p == PROJ_QKVO || p == PROJ_VO || p == PROJ_O; }

/* The widths a projection set implies: d_k 8 and d_v 4 (or 8) with
 * projections, d_out 3 or 5 with wo, else the input width. */
static inline void proj_widths(SelfAttnConfig *c, Proj proj) {
    c->d_k = proj_has_qk(proj) ? 8 : c->d_in;
    c->d_v = proj_has_v(proj) ? (proj == PROJ_QKVO ? 8 : 4) : c->d_in;
    c->d_out = proj_has_o(proj) ? (proj == PROJ_VO ? 5 : 3) : c->d_v;
}

/* Activations of the engine (NaN-poisoned) and of the reference for c. */
static inline void self_acts_alloc(const SelfAttnConfig *c, SelfAttnActs *a, RefSelfActs *r) {
    size_t n = (size_t)c->n, cells = (size_t)c->heads * n * n;
    /* the same buffers in the same order: q, k, v, scores, weights, context, output */
    const size_t size[] = {n * c->d_k, n * c->d_k, n * c->d_v, cells, cells, n * c->d_v, n * c->d_out};
    nn_real **engine[] = {&a->q, &a->k, &a->v, &a->scores, &a->weights, &a->context, &a->output};
    double **ref[] = {&r->q, &r->k, &r->v, &r->scores, &r->weights, &r->context, &r->output};
    for (size_t i = 0; i < sizeof size / sizeof *size; i++) {
        *engine[i] = alloc_reals(size[i]);
        *ref[i] = alloc_doubles(size[i]);
    }
}

#endif
