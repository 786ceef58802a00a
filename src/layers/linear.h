/* A plain linear layer, y = x W + b, forward and backward: the transformer's
 * attention projections and its logits. W (IC, OC), b (OC) or NULL; N rows.
 * The backward accumulates (+=) into every gradient; a NULL gradient is
 * skipped (the input's alone reads no inp, the weight's alone no w). Not a public header. */
#ifndef ATTNLAB_LAYERS_LINEAR_H
#define ATTNLAB_LAYERS_LINEAR_H

#include "attnlab/nn.h"

void linear_forward(nn_real *out,       /* (N, OC) */
                    const nn_real *inp, /* (N, IC) */
                    const nn_real *w,   /* (IC, OC) */
                    const nn_real *b,   /* (OC) or NULL */
                    int N, int IC, int OC);

/* The same with W in vec_pack's panels (vec_packed_size(OC, IC) reals): read-only
 * weights packed once (GPT-2's), the same results bit for bit. */
void linear_forward_packed(nn_real *out, const nn_real *inp, const nn_real *packed, const nn_real *b, int N, int IC,
                           int OC);

void linear_backward(nn_real *dinp,       /* (N, IC) += or NULL */
                     nn_real *dw,         /* (IC, OC) += or NULL */
                     nn_real *db,         /* (OC) += or NULL */
                     const nn_real *dout, /* (N, OC) */
                     const nn_real *inp,  /* (N, IC) */
                     const nn_real *w,    /* (IC, OC) */
                     int N, int IC, int OC);

/* The input's gradient alone, dinp (N, IC) += dout (N, OC) W^T, with W in
 * vec_pack's panels (a checkpoint's weights, read-only: no weight
 * gradients); scratch holds linear_backward_scratch(IC, OC) reals (a strip
 * of W^T, under a megabyte for GPT-2's widths). */
size_t linear_backward_scratch(int IC, int OC);
void linear_backward_input_packed(nn_real *dinp, const nn_real *dout, const nn_real *packed, nn_real *scratch, int N,
                                  int IC, int OC);
/* The weight's gradient in vec_pack's panels (fine-tuning a checkpoint):
 * dpacked (IC, OC in panels, as the weight) += inp^T dout, db (OC) += the
 * columns' sums (NULL: skipped); scratch holds linear_weight_grad_scratch(IC,
 * OC) reals (a strip of the gradient, row-major). */
size_t linear_weight_grad_scratch(int IC, int OC);
void linear_backward_weight_packed(nn_real *dpacked, nn_real *db, const nn_real *dout, const nn_real *inp,
                                   nn_real *scratch, int N, int IC, int OC);

#endif
