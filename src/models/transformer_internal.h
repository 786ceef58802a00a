/* The transformer's insides, shared by its files and its tests (not a
 * public header). Dimension letters as in attnlab/transformer.h. */
#ifndef ATTNLAB_MODELS_TRANSFORMER_INTERNAL_H
#define ATTNLAB_MODELS_TRANSFORMER_INTERNAL_H

#include <stdint.h>

#include "attnlab/attention.h"
#include "attnlab/transformer.h"
#include "base/pool.h"
#include "layers/optim.h"
#include "layers/shards.h"
#include "models/decoder.h"
#include "models/gpt2_internal.h"

#define TF_MAX_TENSORS (4 + 12 * TF_MAX_LAYERS + 2)

_Static_assert(TF_MAX_TENSORS <= OPT_MAX_TENSORS, "the parameter table holds every transformer tensor");

/* Training's activations for B x T rows (buffers sized for batch x
 * context): the blocks' (the one decoder's batched pass, decoder_run.c) and
 * the head's: the final LayerNorm, the logits and the loss. */
typedef struct {
    Gpt2Pass pass;                      /* the embedding's and every block's, and their gradients' buffers */
    const nn_real *out;                 /* (B, T, C) the last block's output, in pass */
    nn_real *lnf, *lnf_mean, *lnf_rstd; /* (B, T, C), (B, T), (B, T) */
    nn_real *logits;                    /* (B, T, V) */
    nn_real *probs;                     /* (B, T, V) */
    nn_real *dln;                       /* (B, T, C) dL/d(the final LayerNorm's output) */
    nn_real *dlogits;                   /* (B, T, V) */
    int32_t *tokens;                    /* (B, T) the batch */
    int32_t *targets;                   /* (B, T) */
} TfActs;

/* The network: its configuration, vocabulary, tensors and buffers. It knows
 * no task: src/train/transformer_train.c binds one to it (struct Transformer). */
typedef struct TfModel TfModel;
struct TfModel {
    TfConfig c;
    int V;
    char names[TF_MAX_VOCAB][8]; /* each token's text: the vocabulary */
    /* the tensors (named, with AdamW's decay marks), their gradients, the
     * moments, the step count and the copy a failed training call goes back to */
    OptParams opt;
    DecWeights w, g;
    nn_real *pos_table; /* (context, C) sinusoidal positions, else NULL */
    nn_real *rope;      /* (context, D/2, 2) RoPE's cos, sin of t theta_i, else NULL */
    nn_real slopes[TF_MAX_HEADS]; /* ALiBi's m_h per head */
    nn_real *acts_block;
    TfActs a;
    int acts_batch; /* batch the activations hold */
    /* Data-parallel training (src/layers/shards.h): a batch splits into
     * min(replicas.n, B) row ranges; shard 0 runs on the model, shard s on
     * replicas.at[s] (the model's weights, its own activations and
     * gradients), the gradients then added in shard order. replicas.n is 0
     * until the first training call makes the replicas (the pool's threads,
     * or tf_set_shards'). */
    ShardReplicas replicas;
    uint8_t ablate[TF_MAX_LAYERS * TF_MAX_HEADS]; /* (L, H) 1: the head's context is zero */
    /* The one decoder's run over these weights (decoder_run.c, row-major, this
     * model's positions, score and slopes): inspection, the lens,
     * generation, patching and attribution; tf_forward and tf_backward are
     * training's batched passes. */
    Gpt2 dec;
};

/* The config's checks (NN_ERR_* with a message). */
int tf_check_config(const TfConfig *c);
/* Parameters of a model of that config and vocabulary (both checked). */
size_t tf_param_count(const TfConfig *c, int vocab);
/* Whether a model of that config and vocabulary can hold activations for
 * its batch (NN_ERR_LIMIT naming the sizes), without allocating. */
int tf_check_activations(const TfConfig *c, int vocab);
/* A model of vocabulary V (token ids 0..V-1, names[id] each token's text)
 * with fresh weights; it knows no task. */
int tf_model_create(TfModel **out, const TfConfig *c, int vocab, const char (*names)[8]);
void tf_model_destroy(TfModel *m);

/* The forward pass over m->a.tokens (B, T) into m->a.probs; with targets,
 * the mean cross-entropy over scored positions (0 if none) in *loss (or
 * NULL), their count in *scored (or NULL). NN_OK, or the attention's
 * NN_ERR_VALUE when a score or context overflows. */
int tf_forward(TfModel *m, int B, int T, int with_targets, double *loss, int *scored);
/* Gradients (+=) of that mean loss into the gradient view (zero it first). */
int tf_backward(TfModel *m, int B, int T, int scored);
/* The same from the logits' gradient already in m->a.dlogits (B, T, V). */
int tf_backward_logits(TfModel *m, int B, int T);
/* Grows the activations to hold batch B (NN_ERR_NOMEM / NN_ERR_LIMIT). */
int tf_reserve(TfModel *m, int B);

/* Data-parallel passes (transformer_shards.c) over the batch in m->a.tokens
 * and m->a.targets (B, T): the forward's mean loss over the scored
 * positions (their count in *scored), then the gradients of that loss into
 * m->grads (zeroed first). One shard runs tf_forward / tf_backward on the
 * model as they are; more split the rows. NN_OK or NN_ERR_NOMEM. */
int tf_shards_forward(TfModel *m, int B, int T, double *loss, int *scored);
int tf_shards_backward(TfModel *m, int B, int T, int scored);
/* Splits batches into n shards (1..NN_MAX_THREADS) from now on, or as many
 * as the pool has threads (n = 0): the sharded arithmetic without a pool,
 * for the native tests. tf_shards_free frees the replicas. */
int tf_set_shards(TfModel *m, int n);
void tf_shards_free(TfModel *m);

/* The model's own views (the public tf_* of transformer.h call these on the
 * model a Transformer binds). */
const TfConfig *tfm_config(const TfModel *m);
int tfm_vocab(const TfModel *m);
size_t tfm_num_params(const TfModel *m);
int tfm_steps(const TfModel *m);
nn_real *tfm_params(TfModel *m);
const char *tfm_tensor(const TfModel *m, int i, size_t *offset, size_t *count);
int tfm_set_ablation(TfModel *m, const int32_t *pairs, int n);
int tfm_inspect(TfModel *m, const int32_t *tokens, int n, float *attention, int32_t *top_ids, float *top_p,
                int32_t *lens);
int tfm_generate(TfModel *m, int32_t *tokens, int n_prompt, int n_new, double temperature, int top_k, uint64_t seed);
/* Direct logit attribution as gpt2_logit_attribution (include/attnlab/gpt2.h). */
int tfm_logit_attribution(TfModel *m, const int32_t *tokens, int n, int a, int b, double *values, double *logit_diff);
/* Activation patching as gpt2_patch (include/attnlab/gpt2.h). */
int tfm_patch(TfModel *m, const int32_t *clean, const int32_t *corrupt, int n, int a, int b, int target, int method,
              float *out, double *metrics);

#endif
