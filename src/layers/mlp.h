/* A two-layer perceptron with GELU, for the models to come (a transformer's
 * blocks): y = gelu(x W1 + b1) W2 + b2, GELU in its tanh form
 * gelu(u) = u/2 (1 + tanh(sqrt(2/pi) (u + 0.044715 u^3))).
 * Dimension letters: n rows, C channels, F hidden. Not a public header. */
#ifndef ATTNLAB_LAYERS_MLP_H
#define ATTNLAB_LAYERS_MLP_H

#include "layers/optim.h"

typedef struct {
    nn_real *W1; /* (C, F) */
    nn_real *b1; /* (F) */
    nn_real *W2; /* (F, C) */
    nn_real *b2; /* (C) */
} MlpWeights;

void mlp_add(OptParams *p, MlpWeights *w, int C, int F);

/* y (n, C); h (n, F) = x W1 + b1 and a (n, F) = gelu(h) kept for the backward; x (n, C);
 * exact 1: GELU's exact form u/2 (1 + erf(u / sqrt 2)) (GPT-NeoX's 'gelu'), 0: the tanh form. */
void mlp_forward(nn_real *y, nn_real *h, nn_real *a, const nn_real *x, const MlpWeights *w, int n, int C, int F,
                 int exact);
/* The same with W1 and W2 in vec_pack's panels (read-only weights packed once: a checkpoint's);
 * exact 1: GELU's exact form u/2 (1 + erf(u / sqrt 2)) (GPT-NeoX's 'gelu'), 0: the tanh form. */
void mlp_forward_packed(nn_real *y, nn_real *h, nn_real *a, const nn_real *x, const MlpWeights *w, int n, int C, int F,
                        int exact);
/* From dy (n, C): dx (n, C) +=, the weights' gradients g +=; da (n, F) is
 * scratch (then dL/dh). */
void mlp_backward(nn_real *dx, nn_real *da, MlpWeights *g, const nn_real *dy, const nn_real *x, const nn_real *h,
                  const nn_real *a, const MlpWeights *w, int n, int C, int F);

/* The activation alone, elementwise: y = gelu(x), and dx += gelu'(x) dy. */
void gelu_forward(nn_real *y, const nn_real *x, size_t n);
/* y = x/2 (1 + erf(x / sqrt 2)), the exact form. */
void gelu_exact_forward(nn_real *y, const nn_real *x, size_t n);
void gelu_backward(nn_real *dx, const nn_real *dy, const nn_real *x, size_t n);
/* dx += gelu'(x) dy of the exact form. */
void gelu_exact_backward(nn_real *dx, const nn_real *dy, const nn_real *x, size_t n);
/* From dy (n, C): dx (n, C) += the input's gradient alone (exact: GELU's
 * exact form); da (n, F) scratch, then dL/dh. */
void mlp_backward_input(nn_real *dx, nn_real *da, const nn_real *dy, const nn_real *h, const MlpWeights *w, int n, int C,
                        int F, int exact);
/* From dy (n, C) through W1, W2 in vec_pack's panels (mlp_forward_packed's
 * weights, read-only): dx (n, C) += the input's gradient alone; h the
 * forward's (n, F); da (n, F) scratch, then dL/dh; scratch holds
 * linear_backward_scratch of either weight (the larger). */
void mlp_backward_input_packed(nn_real *dx, nn_real *da, const nn_real *dy, const nn_real *h, const MlpWeights *w,
                               nn_real *scratch, int n, int C, int F, int exact);

#endif
