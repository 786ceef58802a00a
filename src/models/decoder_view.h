/* A read-only view of a decoder-only transformer's weights, whichever model
 * holds them: the one attnlab trains (TfModel, row-major tensors) and a
 * loaded checkpoint (Gpt2: GPT-2's or GPT-NeoX's, its matrices in
 * vec_pack's panels, the unembedding packed transposed and the token
 * embedding possibly tied to it). Analyses written against the view
 * (circuits.c) exist once for every architecture. Not a public header.
 *
 * Dimension letters: L layers, H heads, C d_model, D = C / H, V vocabulary.
 * Conventions are TransformerLens's: residual vectors are rows, a head reads
 * x W_Q, x W_K, x W_V (C, D) and writes z W_O (D, C). */
#ifndef ATTNLAB_MODELS_DECODER_VIEW_H
#define ATTNLAB_MODELS_DECODER_VIEW_H

#include "attnlab/gpt2.h"
#include "attnlab/nn.h"
#include "models/decoder.h"

/* A (rows, cols) matrix as a model stores it: row-major, or in vec_pack's
 * panels (the products' B); transposed: the stored matrix is (cols, rows),
 * this one its transpose. */
typedef struct {
    const nn_real *p;
    int rows, cols;
    int panels;
    int transposed;
} DecMatrix;

typedef struct {
    int layers, heads, d_model, d_head, vocab;
    const nn_real *ln1w[DEC_MAX_LAYERS]; /* (C) the gain of the LayerNorm the heads read through (ln_1) */
    DecMatrix qkv[DEC_MAX_LAYERS];       /* (C, 3C) queries | keys | values, head h in columns s C + h D.. */
    DecMatrix proj[DEC_MAX_LAYERS];      /* (C, C) the output projection, head h in rows h D.. */
    const nn_real *lnfw;                 /* (C) the final LayerNorm's gain */
    const nn_real *lnfb;                 /* (C) and its bias */
    double epsilon;                      /* its epsilon */
    DecMatrix embed;                     /* (V, C) W_E */
    DecMatrix unembed;                   /* (C, V) W_U */
    const nn_real *unembed_bias;         /* (V) the output layer's bias, or NULL (a checkpoint has none) */
} DecView;

/* The view of a decoder: a checkpoint's (NN_ERR_ARG while its weights are
 * not all in) or the one a model made here holds (TfModel's dec). */
int dec_view_gpt2(const Gpt2 *m, DecView *v);

/* Rows [r0, r0 + m) x columns [c0, c0 + n) of x into out (m, n) with row
 * stride ld, row i scaled by scale[r0 + i] when scale is not NULL. */
void dec_matrix_read(const DecMatrix *x, int r0, int c0, int m, int n, const nn_real *scale, nn_real *out, int ld);

/* Head h of layer l: which 0, 1, 2 reads W_Q, W_K, W_V (C, D) with ln_1's
 * gain folded in (diag(gamma) W); dec_view_wo reads W_O (D, C). */
void dec_view_read(const DecView *v, int l, int h, int which, nn_real *out);
void dec_view_wo(const DecView *v, int l, int h, nn_real *out);

/* Direct logit attribution (decoder_attribution.c) of logit[a] - logit[b]
 * at the last of n tokens (1..context), over the model's forward: values
 * (2 + L (H + 2) + 2) = embed, pos (block 0's input less the embedding),
 * then per layer its H heads, its attention bias and its MLP, then ln_f's
 * bias and the output bias (0 without one); they add up to *logit_diff. */
int dec_logit_attribution(const DecView *v, DecForward forward, void *model, const int32_t *tokens, int n, int context,
                          int a, int b, double *values, double *logit_diff);

#endif
