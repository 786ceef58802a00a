/* Layer normalisation over the last axis, for the models to come (a
 * transformer's blocks): y = (x - mean) / sqrt(var + eps) * weight + bias.
 * Dimension letters: n rows, C channels. Not a public header. */
#ifndef ATTNLAB_LAYERS_LAYERNORM_H
#define ATTNLAB_LAYERS_LAYERNORM_H

#include "layers/optim.h"

#define LAYERNORM_EPS 1e-5

typedef struct {
    nn_real *weight; /* (C) starts at 1 */
    nn_real *bias;   /* (C) starts at 0 */
} LayerNormWeights;

void layernorm_add(OptParams *p, LayerNormWeights *w, int C);

/* y (n, C); mean, rstd (n) kept for the backward; x (n, C). y may not alias x. */
void layernorm_forward(nn_real *y, nn_real *mean, nn_real *rstd, const nn_real *x, const LayerNormWeights *w, int n,
                       int C);
/* The same with the model's own epsilon (a checkpoint's layer_norm_epsilon). */
void layernorm_forward_eps(nn_real *y, nn_real *mean, nn_real *rstd, const nn_real *x, const LayerNormWeights *w,
                           int n, int C, double eps);
/* From dy (n, C): dx (n, C) +=, the weights' gradients g +=. */
void layernorm_backward(nn_real *dx, LayerNormWeights *g, const nn_real *dy, const nn_real *x, const nn_real *mean,
                        const nn_real *rstd, const LayerNormWeights *w, int n, int C);

#endif
