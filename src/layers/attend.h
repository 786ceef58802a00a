/* An attention score's tensors in a model's parameter table: the views the
 * core's attention (include/attnlab/attention.h) takes, made from a model's
 * weight and gradient views, and the forward/backward pair of attention over
 * a grid of keys that both decoders call. Dimension letters: B rows, n_q
 * queries of a row, d query (= key = value) width, n_k keys (location scores
 * one position per key), A additive hidden.
 * Not a public header. */
#ifndef ATTNLAB_LAYERS_ATTEND_H
#define ATTNLAB_LAYERS_ATTEND_H

#include "attnlab/attention.h"
#include "layers/optim.h"

typedef struct {
    nn_real *W;    /* general (d, d) | location (n_k, d) */
    nn_real *Wq;   /* additive (A, d) */
    nn_real *Wk;   /* additive (A, d) */
    nn_real *v;    /* additive (A) */
    nn_real *beta; /* cosine (1) */
} AttnWeights;

/* Attention over a grid, the layer both decoders run: each of B rows has
 * n_q queries over its own grid of n_k keys (a sequence's encoder outputs,
 * an image's cells), the keys doubling as the values. Row b's block of each
 * buffer starts at b times the block's size. */
typedef struct {
    const nn_real *query;   /* (B, n_q, d) */
    const nn_real *keys;    /* (B, n_k, d) the grid; (n_k, d) when shared */
    int shared;             /* 1: every row attends over the one grid (the hypotheses of a beam) */
    const int32_t *lengths; /* (B) keys each row sees, or NULL: all n_k */
    int32_t *visible;       /* (n_q) workspace: the per-query lengths of one row (n_q > 1 with lengths) */
    nn_real *scores;        /* (B, n_q, n_k) */
    nn_real *weights;       /* (B, n_q, n_k) softmax of the scores */
    nn_real *context;       /* (B, n_q, d) weights x keys */
} AttendGrid;

/* Gradients of the grid's forward. */
typedef struct {
    const nn_real *d_context; /* (B, n_q, d) dL/dcontext */
    const nn_real *d_weights; /* (B, n_q, n_k) or NULL: a gradient on the weights themselves (REINFORCE) */
    nn_real *d_query;         /* (B, n_q, d) += */
    nn_real *d_keys;          /* (B, n_k, d) += both the keys' and the values' gradients (not shared) */
} AttendGridGrads;

/* x's scores, weights and context for B rows; cfg: the score, widths, n_q
 * and n_k (its key_lengths is set from x->lengths). */
int attend_forward(const AttendGrid *x, const AttnWeights *w, const AttnConfig *cfg, int B, nn_real *scratch);
/* From d->d_context (and d->d_weights): d->d_query, d->d_keys and the
 * attention tensors' gradients g (+=), reading the forward's buffers in x. */
int attend_backward(const AttendGridGrads *d, AttnWeights *g, const AttendGrid *x, const AttnWeights *w,
                    const AttnConfig *cfg, int B, nn_real *scratch);

/* Appends the tensors of `score` (an AttnScore; negative: no attention, none). */
void attend_add(OptParams *p, AttnWeights *w, int score, int d, int n_k, int A);
AttnParams attend_params(const AttnWeights *w);
/* The gradient view for attn_backward; attend_grads_end adds its beta (a
 * value, not a pointer, in AttnParamGrads) into g once the backward is done. */
AttnParamGrads attend_grads(const AttnWeights *g);
void attend_grads_end(AttnWeights *g, const AttnParamGrads *pg);

#endif
