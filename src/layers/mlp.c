/* A two-layer perceptron with GELU (src/layers/mlp.h). */
#include "layers/mlp.h"

#include <math.h>

#include "core/vec.h"

#define GELU_SCALE 0.7978845608028654 /* sqrt(2/pi) */
#define GELU_CUBE 0.044715

void gelu_forward(nn_real *y, const nn_real *x, size_t n) {
    for (size_t i = 0; i < n; i++) {
        double u = x[i];
        y[i] = (nn_real)(0.5 * u * (1 + tanh(GELU_SCALE * (u + GELU_CUBE * u * u * u))));
    }
}

/* gelu'(u) = (1 + tanh z)/2 + u/2 (1 - tanh^2 z) dz/du,  z = s (u + c u^3) */
static double gelu_grad(double u) {
    double t = tanh(GELU_SCALE * (u + GELU_CUBE * u * u * u));
    return 0.5 * (1 + t) + 0.5 * u * (1 - t * t) * GELU_SCALE * (1 + 3 * GELU_CUBE * u * u);
}

void gelu_backward(nn_real *dx, const nn_real *dy, const nn_real *x, size_t n) {
    for (size_t i = 0; i < n; i++) dx[i] += (nn_real)(dy[i] * gelu_grad(x[i]));
}

void mlp_add(OptParams *p, MlpWeights *w, int C, int F) {
    opt_add(p, &w->W1, (size_t)C * F, C, OPT_INIT_UNIFORM);
    opt_add(p, &w->b1, (size_t)F, 0, OPT_INIT_ZERO);
    opt_add(p, &w->W2, (size_t)F * C, F, OPT_INIT_UNIFORM);
    opt_add(p, &w->b2, (size_t)C, 0, OPT_INIT_ZERO);
}

void mlp_forward(nn_real *y, nn_real *h, nn_real *a, const nn_real *x, const MlpWeights *w, int n, int C, int F) {
    vec_gemm_nn(h, F, x, C, w->W1, F, n, F, C, 0);
    for (int r = 0; r < n; r++) vec_axpy(h + (size_t)r * F, 1, w->b1, F);
    gelu_forward(a, h, (size_t)n * F);
    vec_gemm_nn(y, C, a, F, w->W2, C, n, C, F, 0);
    for (int r = 0; r < n; r++) vec_axpy(y + (size_t)r * C, 1, w->b2, C);
}

void mlp_backward(nn_real *dx, nn_real *da, MlpWeights *g, const nn_real *dy, const nn_real *x, const nn_real *h,
                  const nn_real *a, const MlpWeights *w, int n, int C, int F) {
    /* y = a W2 + b2 */
    for (int r = 0; r < n; r++) vec_axpy(g->b2, 1, dy + (size_t)r * C, C);
    vec_gemm_tn(g->W2, C, a, F, dy, C, F, C, n, 1);
    vec_gemm_nt(da, F, dy, C, w->W2, C, n, F, C, 0);
    /* a = gelu(h): dh = gelu'(h) da, in place */
    for (size_t i = 0; i < (size_t)n * F; i++) da[i] = (nn_real)(da[i] * gelu_grad(h[i]));
    /* h = x W1 + b1 */
    for (int r = 0; r < n; r++) vec_axpy(g->b1, 1, da + (size_t)r * F, F);
    vec_gemm_tn(g->W1, F, x, C, da, F, C, F, n, 1);
    vec_gemm_nt(dx, C, da, F, w->W1, F, n, C, F, 1);
}
