/* LayerNorm forward and backward (src/layers/layernorm.h). */
#include "layers/layernorm.h"

#include <math.h>

#include "core/vec.h"

void layernorm_forward(nn_real *out, nn_real *mean, nn_real *rstd, const nn_real *inp, const nn_real *w,
                       const nn_real *b, int N, int C) {
    for (int i = 0; i < N; i++) {
        const nn_real *x = inp + (size_t)i * C;
        nn_real *y = out + (size_t)i * C;
        /* two passes: mean first, then the variance about it (no cancellation) */
        double m = 0, v = 0;
        for (int c = 0; c < C; c++) m += x[c];
        m /= C;
        for (int c = 0; c < C; c++) v += (x[c] - m) * (x[c] - m);
        v /= C;
        nn_real s = (nn_real)(1.0 / sqrt(v + LN_EPS));
        for (int c = 0; c < C; c++) y[c] = ((x[c] - (nn_real)m) * s) * w[c] + b[c];
        mean[i] = (nn_real)m;
        rstd[i] = s;
    }
}

/* With xhat = (x - mean) rstd and g = dy * w:
 *   dx = rstd (g - mean(g) - xhat mean(g xhat)),  dw += dy xhat,  db += dy. */
void layernorm_backward(nn_real *dinp, nn_real *dw, nn_real *db, const nn_real *dout, const nn_real *inp,
                        const nn_real *w, const nn_real *mean, const nn_real *rstd, int N, int C) {
    for (int i = 0; i < N; i++) {
        const nn_real *x = inp + (size_t)i * C, *dy = dout + (size_t)i * C;
        nn_real *dx = dinp + (size_t)i * C;
        nn_real m = mean[i], s = rstd[i];
        double g_mean = 0, gx_mean = 0;
        for (int c = 0; c < C; c++) {
            nn_real xhat = (x[c] - m) * s, g = dy[c] * w[c];
            g_mean += g;
            gx_mean += g * xhat;
        }
        g_mean /= C;
        gx_mean /= C;
        for (int c = 0; c < C; c++) {
            nn_real xhat = (x[c] - m) * s, g = dy[c] * w[c];
            db[c] += dy[c];
            dw[c] += dy[c] * xhat;
            dx[c] += s * (g - (nn_real)g_mean - xhat * (nn_real)gx_mean);
        }
    }
}
