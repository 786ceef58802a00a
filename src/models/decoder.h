/* What every decoder-only transformer shares, whichever made it: the one
 * attnlab trains (transformer.c) and a loaded checkpoint (gpt2.c). One token
 * check, one ablation setter, one sampler and generate loop, one head-score
 * measure: each model supplies only its forward pass (not a public header). */
#ifndef ATTNLAB_MODELS_DECODER_H
#define ATTNLAB_MODELS_DECODER_H

#include <stdint.h>

#include "attnlab/nn.h"

/* n tokens (least..most), each an id of the vocabulary 0..vocab-1: NN_OK, or
 * the size's code, or NN_ERR_VALUE naming the first that is not. */
int dec_check_tokens(const int32_t *tokens, int n, int least, int most, int vocab);

/* Heads switched off: pairs (layer, head) x n set ablate[layer * stride + head]
 * (every other 0), after checking each against layers x heads; a bad list
 * changes nothing. */
int dec_set_ablation(uint8_t *ablate, int stride, int layers, int heads, const int32_t *pairs, int n);

/* The first id of the largest logit. */
int dec_argmax(const nn_real *z, int V);

/* A draw from p ~ exp((z - max) / temperature) over the k largest logits of
 * z (V), 1 <= k <= V; ties at the k-th go to the lower ids. w (V) is scratch. */
int dec_sample(const nn_real *z, int V, int k, double temperature, uint64_t *rng, double *w);

/* A model's next-token logits for generate: *z = the last position's (V)
 * after tokens[0..n) (the window it reads is the model's choice), step the
 * count of tokens made before; NN_OK or the pass's error. */
typedef int (*DecNextLogits)(void *model, const int32_t *tokens, int n, int step, const nn_real **z);

typedef struct {
    int vocab;
    int max_prompt; /* prompt tokens taken */
    int max_new;    /* tokens made in one call */
} DecGenerateLimits;

/* generate's arguments, checked (one wording for every model). */
int dec_check_generate(const DecGenerateLimits *lim, const int32_t *tokens, int n_prompt, int n_new, double temperature,
                       int k);

/* generate: n_new tokens appended to tokens[0..n_prompt) (the buffer holds
 * n_prompt + n_new), each the argmax at temperature 0, else a draw of
 * dec_sample over the top k (0: all) from the seed's stream. Arguments are
 * checked first (dec_check_generate); logits that are not finite are
 * NN_ERR_VALUE naming the position. */
int dec_generate(const DecGenerateLimits *lim, DecNextLogits next, void *model, int32_t *tokens, int n_prompt,
                 int n_new, double temperature, int k, uint64_t seed);

/* Head scores' sums from one layer's attention of one sequence: weights P
 * (heads, n, n); the previous-token weight of every t >= 1 and, where
 * source[t] >= 0, the weight on source[t] (an induction head's target) are
 * added to prev[h] and ind[h]. */
void dec_add_head_scores(const nn_real *P, int heads, int n, const int32_t *source, double *prev, double *ind);

#endif
