/* An attention score's tensors in a model's parameter table: the views the
 * core's attention (include/attnlab/attention.h) takes, made from a model's
 * weight and gradient views. Dimension letters: d query (= key) width, n_k
 * keys (location scores one position per key), A additive hidden.
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

/* Appends the tensors of `score` (an AttnScore; negative: no attention, none). */
void attend_add(OptParams *p, AttnWeights *w, int score, int d, int n_k, int A);
AttnParams attend_params(const AttnWeights *w);
/* The gradient view for attn_backward; attend_grads_end adds its beta (a
 * value, not a pointer, in AttnParamGrads) into g once the backward is done. */
AttnParamGrads attend_grads(const AttnWeights *g);
void attend_grads_end(AttnWeights *g, const AttnParamGrads *pg);

#endif
