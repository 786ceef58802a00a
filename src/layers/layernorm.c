/* Layer normalisation (src/layers/layernorm.h). Row statistics in double, so
 * a row of large, nearly equal values keeps its variance. */
#include "layers/layernorm.h"

#include <math.h>

void layernorm_add(OptParams *p, LayerNormWeights *w, int C) {
    opt_add(p, &w->weight, (size_t)C, 0, OPT_INIT_ONE);
    opt_add(p, &w->bias, (size_t)C, 0, OPT_INIT_ZERO);
}

void layernorm_forward(nn_real *y, nn_real *mean, nn_real *rstd, const nn_real *x, const LayerNormWeights *w, int n,
                       int C) {
    layernorm_forward_eps(y, mean, rstd, x, w, n, C, LAYERNORM_EPS);
}

void layernorm_forward_eps(nn_real *y, nn_real *mean, nn_real *rstd, const nn_real *x, const LayerNormWeights *w,
                           int n, int C, double eps) {
    for (int r = 0; r < n; r++) {
        const nn_real *xr = x + (size_t)r * C;
        nn_real *yr = y + (size_t)r * C;
        double m = 0, v = 0;
        for (int i = 0; i < C; i++) m += xr[i];
        m /= C;
        for (int i = 0; i < C; i++) v += (xr[i] - m) * (xr[i] - m);
        double s = 1 / sqrt(v / C + eps);
        for (int i = 0; i < C; i++) yr[i] = (nn_real)((xr[i] - m) * s) * w->weight[i] + w->bias[i];
        mean[r] = (nn_real)m;
        rstd[r] = (nn_real)s;
    }
}

void layernorm_backward(nn_real *dx, LayerNormWeights *g, const nn_real *dy, const nn_real *x, const nn_real *mean,
                        const nn_real *rstd, const LayerNormWeights *w, int n, int C) {
    for (int r = 0; r < n; r++) {
        const nn_real *xr = x + (size_t)r * C, *dyr = dy + (size_t)r * C;
        nn_real *dxr = dx + (size_t)r * C;
        /* y = xhat weight + bias, xhat = (x - mean) rstd:
         * dx = rstd (dxhat - mean(dxhat) - xhat mean(dxhat xhat)), dxhat = dy weight */
        double mean_d = 0, mean_dx = 0;
        for (int i = 0; i < C; i++) {
            double xhat = (xr[i] - mean[r]) * rstd[r], d = (double)dyr[i] * w->weight[i];
            mean_d += d;
            mean_dx += d * xhat;
            g->bias[i] += dyr[i];
            g->weight[i] += (nn_real)(dyr[i] * xhat);
        }
        mean_d /= C;
        mean_dx /= C;
        for (int i = 0; i < C; i++) {
            double xhat = (xr[i] - mean[r]) * rstd[r], d = (double)dyr[i] * w->weight[i];
            dxr[i] += (nn_real)(rstd[r] * (d - mean_d - xhat * mean_dx));
        }
    }
}
