/* Linear, GELU and the GELU MLP, forward and backward (src/layers/mlp.h). */
#include "layers/mlp.h"

#include <math.h>
#include <string.h>

#include "core/vec.h"

#define GELU_K 0.7978845608028654 /* sqrt(2 / pi) */
#define GELU_A 0.044715

void mlp_linear_forward(nn_real *out, const nn_real *inp, const nn_real *w, const nn_real *b, int N, int IC,
                        int OC) {
    if (b)
        for (int i = 0; i < N; i++) memcpy(out + (size_t)i * OC, b, sizeof(nn_real) * OC);
    vec_gemm_nn(out, OC, inp, IC, w, OC, N, OC, IC, b != NULL);
}

/* y = x W + b:  dx += dy W^T,  dW += x^T dy,  db += sum_rows dy */
void mlp_linear_backward(nn_real *dinp, nn_real *dw, nn_real *db, const nn_real *dout, const nn_real *inp,
                         const nn_real *w, int N, int IC, int OC) {
    if (dinp) vec_gemm_nt(dinp, IC, dout, OC, w, OC, N, IC, OC, 1);
    vec_gemm_tn(dw, OC, inp, IC, dout, OC, IC, OC, N, 1);
    if (db)
        for (int i = 0; i < N; i++) vec_axpy(db, 1, dout + (size_t)i * OC, OC);
}

void mlp_gelu_forward(nn_real *out, const nn_real *inp, int n) {
    /* u = k (x + a x^3) into out, tanh in place, then 0.5 x (1 + tanh u) */
    for (int i = 0; i < n; i++) {
        nn_real x = inp[i];
        out[i] = (nn_real)GELU_K * (x + (nn_real)GELU_A * x * x * x);
    }
    vec_tanh(out, out, n);
    for (int i = 0; i < n; i++) out[i] = (nn_real)0.5 * inp[i] * (1 + out[i]);
}

/* y = 0.5 x (1 + t), t = tanh(u), u = k (x + a x^3):
 * dy/dx = 0.5 (1 + t) + 0.5 x (1 - t^2) k (1 + 3 a x^2) */
void mlp_gelu_backward(nn_real *dinp, const nn_real *dout, const nn_real *inp, int n) {
    for (int i = 0; i < n; i++) {
        nn_real x = inp[i];
        nn_real t = (nn_real)tanh(GELU_K * (x + GELU_A * x * x * x));
        nn_real d = (nn_real)0.5 * (1 + t) +
                    (nn_real)0.5 * x * (1 - t * t) * (nn_real)GELU_K * (1 + 3 * (nn_real)GELU_A * x * x);
        dinp[i] += dout[i] * d;
    }
}

void mlp_forward(nn_real *out, MlpActs *a, const nn_real *inp, const nn_real *w1, const nn_real *b1,
                 const nn_real *w2, const nn_real *b2, int N, int C, int F) {
    mlp_linear_forward(a->h, inp, w1, b1, N, C, F);
    mlp_gelu_forward(a->g, a->h, N * F);
    mlp_linear_forward(out, a->g, w2, b2, N, F, C);
}

/* The forward read in reverse: dg = dy W2^T (and dW2, db2), dh = dg gelu'(h),
 * then dx, dW1, db1 from dh. */
void mlp_backward(nn_real *dinp, nn_real *dw1, nn_real *db1, nn_real *dw2, nn_real *db2, const nn_real *dout,
                  const MlpActs *a, const nn_real *inp, const nn_real *w1, const nn_real *w2, int N, int C, int F,
                  nn_real *scratch) {
    size_t nf = (size_t)N * F;
    nn_real *dg = scratch, *dh = scratch + nf;
    memset(scratch, 0, sizeof(nn_real) * 2 * nf);
    mlp_linear_backward(dg, dw2, db2, dout, a->g, w2, N, F, C);
    mlp_gelu_backward(dh, dg, a->h, N * F);
    mlp_linear_backward(dinp, dw1, db1, dh, inp, w1, N, C, F);
}
