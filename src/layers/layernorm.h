/* LayerNorm over rows (Ba et al. 2016), as a forward/backward pair:
 *   y = (x - mean) * rstd * w + b,  rstd = 1 / sqrt(var + LN_EPS)
 * N rows of C features; the forward keeps mean and rstd for the backward.
 * The backward accumulates (+=) into dx, dw and db. */
#ifndef ATTNLAB_LAYERS_LAYERNORM_H
#define ATTNLAB_LAYERS_LAYERNORM_H

#include "attnlab/nn.h"

#define LN_EPS 1e-5

void layernorm_forward(nn_real *out,       /* (N, C) */
                       nn_real *mean,      /* (N) */
                       nn_real *rstd,      /* (N) */
                       const nn_real *inp, /* (N, C) */
                       const nn_real *w,   /* (C) */
                       const nn_real *b,   /* (C) */
                       int N, int C);

void layernorm_backward(nn_real *dinp,       /* (N, C) += */
                        nn_real *dw,         /* (C) += */
                        nn_real *db,         /* (C) += */
                        const nn_real *dout, /* (N, C) */
                        const nn_real *inp,  /* (N, C) */
                        const nn_real *w,    /* (C) */
                        const nn_real *mean, /* (N) */
                        const nn_real *rstd, /* (N) */
                        int N, int C);

#endif
