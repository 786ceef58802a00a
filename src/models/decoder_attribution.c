/* Direct logit attribution, once for every decoder (models/decoder.h,
 * decoder_view.h): one forward pass whose hook keeps the last position's
 * block input 0, heads' contexts, attention and MLP outputs; the weight view
 * gives W_E, W_O, the final LayerNorm and W_U. Each component c of the final
 * residual x = embed + pos + sum over blocks (heads + attention bias + MLP)
 * is read through the final LayerNorm as TransformerLens does: its value is
 * ((c - mean(c)) / sigma * gamma) . (W_U[:, a] - W_U[:, b]), sigma the
 * final residual's sqrt(var + eps); beta . (W_U[:, a] - W_U[:, b]) is
 * ln_f's bias, and an output bias's b[a] - b[b] its own. The values add up
 * to the logit difference. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "models/decoder.h"
#include "models/decoder_view.h"

typedef struct {
    int n, C;
    nn_real *x0;   /* (C) block 0's input at the last position */
    nn_real *z;    /* (L, C) the heads' contexts there */
    nn_real *attn; /* (L, C) the attention outputs */
    nn_real *mlp;  /* (L, C) the MLP outputs (0 where a model has none) */
} LastRow;

static int keep_last(void *ctx, DecSite site, int layer, nn_real *x, int rows, int cols, int stride) {
    LastRow *k = ctx;
    const nn_real *row = x + (size_t)(rows - 1) * stride;
    nn_real *to = site == DEC_AT_RESID && layer == 0 ? k->x0
                  : site == DEC_AT_Z                  ? k->z + (size_t)layer * k->C
                  : site == DEC_AT_ATTN               ? k->attn + (size_t)layer * k->C
                  : site == DEC_AT_MLP                ? k->mlp + (size_t)layer * k->C
                                                      : NULL;
    if (to) memcpy(to, row, sizeof(nn_real) * cols);
    return 0;
}

/* (c - mean(c)) / sigma * gamma . u, in double. */
static double through_lnf(const double *c, int C, double sigma, const nn_real *gamma, const double *u) {
    double mean = 0, sum = 0;
    for (int i = 0; i < C; i++) mean += c[i];
    mean /= C;
    for (int i = 0; i < C; i++) sum += (c[i] - mean) / sigma * gamma[i] * u[i];
    return sum;
}

int dec_logit_attribution(const DecView *v, DecForward forward, void *model, const int32_t *tokens, int n, int context,
                          int a, int b, double *values, double *logit_diff) {
    NN_TRY(dec_check_tokens(tokens, n, 1, context, v->vocab));
    if (a < 0 || a >= v->vocab || b < 0 || b >= v->vocab)
        return nn_fail(NN_ERR_VALUE, "answer: tokens %d and %d; the vocabulary is 0..%d", a, b, v->vocab - 1);
    int L = v->layers, H = v->heads, C = v->d_model, D = v->d_head;
    size_t reals = (size_t)C * (1 + 3 * (size_t)L + 3) + (size_t)D * C, doubles = (size_t)C * (4 + (size_t)L * (H + 2));
    nn_real *block = calloc(reals, sizeof(nn_real));
    double *d = calloc(doubles, sizeof(double));
    if (!block || !d) {
        free(block);
        free(d);
        return nn_fail(NN_ERR_NOMEM, "out of memory for the attribution's rows");
    }
    LastRow k = {n, C, block, block + C, block + C + (size_t)L * C, block + C + 2 * (size_t)L * C};
    nn_real *ua = k.mlp + (size_t)L * C, *ub = ua + C, *e = ub + C, *wo = e + C;
    DecHook hook = {keep_last, &k};
    const nn_real *z = NULL;
    int st = forward(model, tokens, n, 1, &hook, 0, NULL, &z);
    if (st == NN_OK) {
        *logit_diff = (double)z[a] - (double)z[b];
        if (!isfinite(*logit_diff)) st = nn_fail(NN_ERR_VALUE, "the answer's logits are not finite (%g, %g)", z[a], z[b]);
    }
    if (st == NN_OK) {
        /* u = W_U[:, a] - W_U[:, b]; every component as doubles: embed, pos, L x (H heads, bias, MLP) */
        dec_matrix_read(&v->unembed, 0, a, C, 1, NULL, ua, 1);
        dec_matrix_read(&v->unembed, 0, b, C, 1, NULL, ub, 1);
        dec_matrix_read(&v->embed, tokens[n - 1], 0, 1, C, NULL, e, C);
        double *u = d, *x = u + C, *comp = x + C;
        for (int i = 0; i < C; i++) {
            u[i] = (double)ua[i] - (double)ub[i];
            comp[i] = e[i];                               /* embed */
            comp[C + i] = (double)k.x0[i] - (double)e[i]; /* pos: what block 0's input adds to the embedding */
            x[i] = k.x0[i];
        }
        double *c = comp + 2 * (size_t)C;
        for (int l = 0; l < L; l++) {
            double *bias = c + (size_t)H * C;
            for (int i = 0; i < C; i++) bias[i] = k.attn[(size_t)l * C + i];
            for (int h = 0; h < H; h++, c += C) {
                dec_view_wo(v, l, h, wo); /* (D, C) */
                const nn_real *zh = k.z + (size_t)l * C + (size_t)h * D;
                for (int i = 0; i < C; i++) {
                    double s = 0;
                    for (int j = 0; j < D; j++) s += (double)zh[j] * wo[(size_t)j * C + i];
                    c[i] = s;
                    bias[i] -= s; /* the attention's output less its heads: its bias */
                }
            }
            c += C; /* past the bias */
            for (int i = 0; i < C; i++) c[i] = k.mlp[(size_t)l * C + i];
            c += C;
            for (int i = 0; i < C; i++) x[i] += (double)k.attn[(size_t)l * C + i] + (double)k.mlp[(size_t)l * C + i];
        }
        /* sigma of the final residual (population variance) */
        double mean = 0, var = 0;
        for (int i = 0; i < C; i++) mean += x[i];
        mean /= C;
        for (int i = 0; i < C; i++) var += (x[i] - mean) * (x[i] - mean);
        double sigma = sqrt(var / C + v->epsilon);
        int count = 2 + L * (H + 2);
        for (int j = 0; j < count; j++) values[j] = through_lnf(comp + (size_t)j * C, C, sigma, v->lnfw, u);
        double beta = 0;
        for (int i = 0; i < C; i++) beta += (double)v->lnfb[i] * u[i];
        values[count] = beta;
        values[count + 1] = v->unembed_bias ? (double)v->unembed_bias[a] - (double)v->unembed_bias[b] : 0;
    }
    free(block);
    free(d);
    return st;
}
