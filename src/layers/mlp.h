/* The position-wise layers of a transformer block, forward/backward pairs:
 *   linear   y = x W + b                       W (C_in, C_out), b (C_out) or NULL
 *   gelu     y = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))   (GPT-2's form)
 *   mlp      y = gelu(x W1 + b1) W2 + b2       W1 (C, F), W2 (F, C)
 * N rows. Backward passes accumulate (+=) into every gradient; a NULL input
 * gradient is skipped. */
#ifndef ATTNLAB_LAYERS_MLP_H
#define ATTNLAB_LAYERS_MLP_H

#include "attnlab/nn.h"

void mlp_linear_forward(nn_real *out,       /* (N, OC) */
                        const nn_real *inp, /* (N, IC) */
                        const nn_real *w,   /* (IC, OC) */
                        const nn_real *b,   /* (OC) or NULL */
                        int N, int IC, int OC);

void mlp_linear_backward(nn_real *dinp,       /* (N, IC) += or NULL */
                         nn_real *dw,         /* (IC, OC) += */
                         nn_real *db,         /* (OC) += or NULL */
                         const nn_real *dout, /* (N, OC) */
                         const nn_real *inp,  /* (N, IC) */
                         const nn_real *w,    /* (IC, OC) */
                         int N, int IC, int OC);

void mlp_gelu_forward(nn_real *out, const nn_real *inp, int n);
/* dinp += dout * gelu'(inp) */
void mlp_gelu_backward(nn_real *dinp, const nn_real *dout, const nn_real *inp, int n);

/* The saved activations of one MLP. */
typedef struct {
    nn_real *h; /* (N, F) x W1 + b1 */
    nn_real *g; /* (N, F) gelu(h) */
} MlpActs;

void mlp_forward(nn_real *out,        /* (N, C) */
                 MlpActs *a,          /* saved for the backward */
                 const nn_real *inp,  /* (N, C) */
                 const nn_real *w1, const nn_real *b1, const nn_real *w2, const nn_real *b2, int N, int C, int F);

/* scratch: 2 N F reals (dL/dg, dL/dh). */
void mlp_backward(nn_real *dinp,                                      /* (N, C) += */
                  nn_real *dw1, nn_real *db1, nn_real *dw2, nn_real *db2, /* += */
                  const nn_real *dout,                                /* (N, C) */
                  const MlpActs *a, const nn_real *inp, const nn_real *w1, const nn_real *w2, int N, int C, int F,
                  nn_real *scratch);

#endif
