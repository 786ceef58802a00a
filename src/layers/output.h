/* The output layer every model ends in, and its loss: o = tanh(x Wc + bc),
 * p = softmax(o Wout + bout), L = -log p_y. Both models feed it x = [c; s]
 * (the attention context and the decoder state) or s alone.
 * Dimension letters: n rows, W input width, D hidden, V vocabulary.
 * Not a public header. */
#ifndef ATTNLAB_LAYERS_OUTPUT_H
#define ATTNLAB_LAYERS_OUTPUT_H

#include <stdint.h>

#include "layers/optim.h"

/* Probabilities are floored here before their log, so a loss or a decoder's
 * log-probability stays finite when a probability underflows to 0. */
#define OUTPUT_MIN_PROB 1e-30

/* The layer's tensors in a model's weight (or gradient) view. */
typedef struct {
    nn_real *Wc;   /* (W, D) */
    nn_real *bc;   /* (D) */
    nn_real *Wout; /* (D, V) */
    nn_real *bout; /* (V) */
} OutputWeights;

/* Appends the layer's tensors to the parameter table (w: a field of the
 * weight view the table binds). */
void output_add(OptParams *p, OutputWeights *w, int W, int D, int V);

/* o (n, D) = tanh(x Wc + bc), probs (n, V) = softmax(o Wout + bout) for n rows of x (n, W). */
void output_forward(nn_real *o, nn_real *probs, const nn_real *x, const OutputWeights *w, int n, int W, int D, int V);

/* From dlogits (n, V) = dL/d(o Wout + bout): the layer's gradients g (+=),
 * d_o (n, D) (=, then the gradient before tanh), and dx (n, W) (+=). */
void output_backward(nn_real *dx, nn_real *d_o, OutputWeights *g, const nn_real *dlogits, const nn_real *x,
                     const nn_real *o, const OutputWeights *w, int n, int W, int D, int V);

/* -log p_y of one row of probabilities, p_y floored at OUTPUT_MIN_PROB, in double. */
double crossentropy_forward(const nn_real *probs, int y);

/* dlogits (V) of weight * (-log p_y) through the softmax: weight (p - onehot(y));
 * a row of weight 0 (padding, a step without a label) is all zeros. */
void crossentropy_backward(nn_real *dlogits, const nn_real *probs, int y, nn_real weight, int V);

/* The k largest of p (V) in decreasing order: their ids and values (ties: the lower id first). */
void output_top_k(const nn_real *p, int V, int k, int32_t *ids, float *probs);

#endif
