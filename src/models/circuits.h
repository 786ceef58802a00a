/* Weight-only circuit analyses of a decoder (Elhage et al. 2021, "A
 * Mathematical Framework for Transformer Circuits"), in TransformerLens's
 * conventions, written once against the weight view (decoder_view.h) so
 * every architecture has them. Not a public header. */
#ifndef ATTNLAB_MODELS_CIRCUITS_H
#define ATTNLAB_MODELS_CIRCUITS_H

#include "models/decoder_view.h"

/* Composition scores, q, k, vv each (L H, L H): row i = l H + h the earlier
 * head, column j the later, 0 unless i's layer is below j's. With W_Q, W_K,
 * W_V (ln_1's gain folded in), W_OV = W_V W_O and W_QK = W_Q W_K^T (C, C):
 *   q  = |W_OV,i W_QK,j|   / (|W_OV,i| |W_QK,j|)
 *   k  = |W_OV,i W_QK,j^T| / (|W_OV,i| |W_QK,j|)
 *   vv = |W_OV,i W_OV,j|   / (|W_OV,i| |W_OV,j|)     (Frobenius norms)
 * 0 where a denominator is 0. NN_OK, NN_ERR_NOMEM, or NN_ERR_VALUE when a
 * product overflows float. */
int circ_composition_scores(const DecView *v, float *q, float *k, float *vv);

/* Copying scores (L, H): sum(lambda) / sum(|lambda|) over the eigenvalues of
 * the head's full OV circuit W_E W_OV diag(gamma_f) W_U (V, V), read from
 * the (D, D) product W_O diag(gamma_f) W_U W_E W_V with the same nonzero
 * eigenvalues; 1 when every eigenvalue is a positive real (the head copies
 * the token it attends to), 0 for a head whose circuit is 0. NN_OK,
 * NN_ERR_NOMEM, or NN_ERR_VALUE naming a head whose eigenvalues did not
 * converge or whose product overflows float. */
int circ_copying_scores(const DecView *v, float *out);

#endif
