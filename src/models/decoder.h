/* What every decoder-only transformer shares, whichever made it: the one
 * attnlab trains (transformer.c) and a loaded checkpoint (gpt2.c). One token
 * check, one ablation setter, one sampler and generate loop, one head-score
 * measure: each model supplies only its forward pass (not a public header). */
#ifndef ATTNLAB_MODELS_DECODER_H
#define ATTNLAB_MODELS_DECODER_H

#include <stdint.h>

#include "attnlab/gpt2.h"
#include "attnlab/nn.h"

#define DEC_MAX_LAYERS GPT2_MAX_LAYERS
#define DEC_MAX_HEADS GPT2_MAX_HEADS

/* The one parameter table of a decoder-only transformer, whichever made it:
 * one pointer per tensor (the gradients and a training call's views use the
 * same struct). Names as Hugging Face's GPT-2 (GPT-NeoX's: embed_in,
 * input_layernorm, query_key_value, dense, post_attention_layernorm,
 * dense_h_to_4h, dense_4h_to_h, final_layer_norm, embed_out). A model made
 * here holds every matrix row-major (in, out); a loaded checkpoint holds them
 * in vec_pack's panels of (in, out), the unembedding as the panels of its
 * transpose with the token embedding possibly tied to it (DecModel's packed). */
typedef struct {
    nn_real *wte;                      /* (V, C) token embedding */
    nn_real *wpe;                      /* (context, C) learned positions, else NULL */
    nn_real *ln1w[DEC_MAX_LAYERS];     /* (C) ln_1 */
    nn_real *ln1b[DEC_MAX_LAYERS];     /* (C) */
    nn_real *qkvw[DEC_MAX_LAYERS];     /* (C, 3C) c_attn: queries | keys | values, heads in column blocks of D */
    nn_real *qkvb[DEC_MAX_LAYERS];     /* (3C) */
    nn_real *projw[DEC_MAX_LAYERS];    /* (C, C) c_proj */
    nn_real *projb[DEC_MAX_LAYERS];    /* (C) */
    nn_real *ln2w[DEC_MAX_LAYERS];     /* (C) ln_2 (d_ff > 0 only, as the four below) */
    nn_real *ln2b[DEC_MAX_LAYERS];     /* (C) */
    nn_real *fcw[DEC_MAX_LAYERS];      /* (C, F) mlp.c_fc */
    nn_real *fcb[DEC_MAX_LAYERS];      /* (F) */
    nn_real *fcprojw[DEC_MAX_LAYERS];  /* (F, C) mlp.c_proj */
    nn_real *fcprojb[DEC_MAX_LAYERS];  /* (C) */
    nn_real *lnfw, *lnfb;              /* (C) ln_f */
    nn_real *unembed;                  /* (C, V) the unembedding (lm_head; wte itself when tied) */
    nn_real *unembed_b;                /* (V) its bias, or NULL (a checkpoint has none) */
} DecWeights;

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

/* ---- reading and replacing activations (patching) ------------------------------- */

/* Where a forward pass over one sequence (n tokens) hands its activations to
 * a hook, for each block l (layer), in this order. */
typedef enum {
    DEC_AT_RESID,   /* the block's input (n, C), before ln_1 */
    DEC_AT_VALUES,  /* the heads' values (n rows of C, `stride` apart): head h in columns hD..hD+D-1; before attention */
    DEC_AT_PATTERN, /* the heads' attention weights (H, n, n) after attention: a change makes the forward compute
                     * the heads' contexts again from them (dec_heads_context) */
    DEC_AT_Z,       /* the heads' contexts (n, C), before the output projection */
    DEC_AT_ATTN,    /* the attention's output (n, C): the projection with its bias, before it is added */
    DEC_AT_MLP,     /* the MLP's output (n, C) with its bias, before it is added (0 in an attention-only model) */
    DEC_AT_SITES
} DecSite;

/* at(): x holds rows of `cols` reals, `stride` apart (for DEC_AT_PATTERN, H n
 * rows of n); returns 1 when it changed x, else 0. */
typedef struct {
    int (*at)(void *ctx, DecSite site, int layer, nn_real *x, int rows, int cols, int stride);
    void *ctx;
} DecHook;

/* A forward's call at a site: hook->at(...) where there is a hook, else 0. */
static inline int dec_at(const DecHook *hook, DecSite site, int layer, nn_real *x, int rows, int cols, int stride) {
    return hook && hook->at(hook->ctx, site, layer, x, rows, cols, stride);
}

/* The heads' contexts z (n, C at z_stride) = P (H, n, n) times the values
 * (n, C at v_stride), head by head; an ablated head's (ablate[h]) zero. */
void dec_heads_context(const nn_real *P, const nn_real *v, int v_stride, int n, int H, int D, const uint8_t *ablate,
                       nn_real *z, int z_stride);

/* A model's forward pass for patching: `copies` runs of tokens[0..n) at
 * once (1..DecShape's copies; the patched runs of one layer share their
 * start), run i calling hooks[i] at every site (hooks NULL: none), the last
 * position's logits of each in *z (copies, V); from block `from` on, its
 * input x0 (n, C) standing for the blocks below in every run (from 0, x0
 * NULL: the whole pass from the embedding). */
typedef int (*DecForward)(void *model, const int32_t *tokens, int n, int copies, const DecHook *hooks, int from,
                          const nn_real *x0, const nn_real **z);

/* What patch replaces: a block's input, attention output or MLP output at one
 * position (layers x positions), or one head's contexts, values or pattern at
 * every position (layers x heads). */
typedef enum {
    DEC_PATCH_RESID,
    DEC_PATCH_ATTN,
    DEC_PATCH_MLP,
    DEC_PATCH_HEADS,
    DEC_PATCH_HEAD_VALUES,
    DEC_PATCH_HEAD_PATTERNS,
    DEC_PATCH_TARGETS
} DecPatchTarget;

/* A model's backward pass for attribution patching: the forward over
 * tokens[0..n) (no hook), then the gradient of logit[a] - logit[b] at the
 * last position back through it, handed to `hook` at every site but the
 * pattern (the gradient of each activation, laid out as the activation).
 * NULL for a model without one. */
typedef int (*DecBackward)(void *model, const int32_t *tokens, int n, int a, int b, const DecHook *hook);

/* How patch estimates a cell: running it, or to first order. */
typedef enum { DEC_PATCH_EXACT, DEC_PATCH_ATTRIBUTION, DEC_PATCH_METHODS } DecPatchMethod;

typedef struct {
    int layers, heads, d_model, vocab, context;
    int copies; /* runs the forward takes at once (1: one at a time) */
} DecShape;

/* Runs a patch hands one forward at most. */
#define DEC_PATCH_MAX_COPIES 64

/* Activation patching: m = logit[a] - logit[b] at the last position; the
 * corrupt run (n tokens) with one activation replaced by the clean run's:
 * out[cell] = (m_patched - m_corrupt) / (m_clean - m_corrupt), cells rows x
 * cols as the target says (out holds layers x max(n, heads)). m_clean and
 * m_corrupt out too. A patch in block l reruns blocks l.. only, from the
 * corrupt run's input to block l, up to s->copies of a layer's cells in one
 * forward. Allocates, for the call, the clean run's
 * activations at the target's site and the corrupt run's block inputs. NN_ERR_VALUE when the two runs give the
 * same m (nothing to recover), or a logit is not finite. */
int dec_patch(const DecShape *s, DecForward forward, void *model, const int32_t *clean, const int32_t *corrupt, int n,
              int a, int b, DecPatchTarget target, float *out, double *m_clean, double *m_corrupt);

/* Attribution patching, the first-order estimate of dec_patch's cells:
 * out[cell] = sum over the cell's activation of (act_clean - act_corrupt)
 * times d m / d act on the corrupt run, / (m_clean - m_corrupt): two
 * forwards and one backward. Not for patterns (NN_ERR_ARG), nor for a model
 * without a backward (backward NULL: NN_ERR_ARG). Allocates the two runs'
 * activations and the gradients at the target's site for the call. */
int dec_patch_attribution(const DecShape *s, DecForward forward, DecBackward backward, void *model,
                          const int32_t *clean, const int32_t *corrupt, int n, int a, int b, DecPatchTarget target,
                          float *out, double *m_clean, double *m_corrupt);

#endif
