/* The transformer's insides, shared by its files and its tests (not a
 * public header). Dimension letters as in attnlab/transformer.h. */
#ifndef ATTNLAB_MODELS_TRANSFORMER_INTERNAL_H
#define ATTNLAB_MODELS_TRANSFORMER_INTERNAL_H

#include <stdint.h>

#include "attnlab/attention.h"
#include "attnlab/transformer.h"
#include "base/pool.h"
#include "layers/mlp.h"
#include "layers/optim.h"
#include "layers/shards.h"
#include "models/decoder.h"

#define TF_MAX_TENSORS (4 + 12 * TF_MAX_LAYERS + 2)

/* One pointer per tensor; the gradients use the same struct. */
typedef struct {
    nn_real *wte;                    /* (V, C) token embedding */
    nn_real *wpe;                    /* (context, C) learned positions, else NULL */
    nn_real *ln1w[TF_MAX_LAYERS];    /* (C) */
    nn_real *ln1b[TF_MAX_LAYERS];    /* (C) */
    nn_real *qkvw[TF_MAX_LAYERS];    /* (C, 3C) queries | keys | values, heads in column blocks of D */
    nn_real *qkvb[TF_MAX_LAYERS];    /* (3C) */
    nn_real *projw[TF_MAX_LAYERS];   /* (C, C) */
    nn_real *projb[TF_MAX_LAYERS];   /* (C) */
    nn_real *ln2w[TF_MAX_LAYERS];    /* (C) (d_ff > 0 only, as the four below) */
    nn_real *ln2b[TF_MAX_LAYERS];    /* (C) */
    nn_real *fcw[TF_MAX_LAYERS];     /* (C, F) */
    nn_real *fcb[TF_MAX_LAYERS];     /* (F) */
    nn_real *fcprojw[TF_MAX_LAYERS]; /* (F, C) */
    nn_real *fcprojb[TF_MAX_LAYERS]; /* (C) */
    nn_real *lnfw, *lnfb;            /* (C) final LayerNorm */
    nn_real *outw;                   /* (C, V) output layer */
    nn_real *outb;                   /* (V) */
} TfWeights;

_Static_assert(TF_MAX_TENSORS <= OPT_MAX_TENSORS, "the parameter table holds every transformer tensor");

/* Saved activations for B x T rows (buffers sized for batch x context). */
typedef struct {
    nn_real *encoded;                  /* (B, T, C) embedding + position */
    nn_real *ln1[TF_MAX_LAYERS];       /* (B, T, C) */
    nn_real *ln1_mean[TF_MAX_LAYERS];  /* (B, T) */
    nn_real *ln1_rstd[TF_MAX_LAYERS];  /* (B, T) */
    nn_real *qkv[TF_MAX_LAYERS];       /* (B, T, 3C) queries | keys | values (RoPE turns copies, not these) */
    nn_real *scores[TF_MAX_LAYERS];    /* (B, H, T, T) attention scores, -inf above the diagonal */
    nn_real *att[TF_MAX_LAYERS];       /* (B, H, T, T) attention probabilities, 0 above the diagonal */
    nn_real *atty[TF_MAX_LAYERS];      /* (B, T, C) heads' contexts, concatenated */
    nn_real *res2[TF_MAX_LAYERS];      /* (B, T, C) residual after attention */
    nn_real *ln2[TF_MAX_LAYERS];       /* (B, T, C) (d_ff > 0 only, as the five below) */
    nn_real *ln2_mean[TF_MAX_LAYERS];  /* (B, T) */
    nn_real *ln2_rstd[TF_MAX_LAYERS];  /* (B, T) */
    nn_real *fch[TF_MAX_LAYERS];       /* (B, T, F) */
    nn_real *fch_gelu[TF_MAX_LAYERS];  /* (B, T, F) */
    nn_real *res3[TF_MAX_LAYERS];      /* (B, T, C) block output; res2[l] itself when d_ff = 0 */
    nn_real *lnf, *lnf_mean, *lnf_rstd; /* (B, T, C), (B, T), (B, T) */
    nn_real *logits;                   /* (B, T, V) */
    nn_real *probs;                    /* (B, T, V) */
    /* backward scratch, one layer's worth, reused layer after layer */
    nn_real *dres;   /* (B, T, C) dL/d(residual stream) at the current depth */
    nn_real *dln;    /* (B, T, C) dL/d(a LayerNorm's output) */
    nn_real *dqkv;   /* (B, T, 3C) */
    nn_real *datty;  /* (B, T, C) */
    nn_real *heads_scratch; /* attn_heads_forward / _backward's, for one sequence */
    nn_real *dmlp;   /* (B, T, F) mlp_backward's scratch */
    nn_real *dlogits; /* (B, T, V) */
    int32_t *tokens;  /* (B, T) the batch */
    int32_t *targets; /* (B, T) */
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
    TfWeights w, g;
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
    uint8_t ablate[TF_MAX_LAYERS][TF_MAX_HEADS];
    /* a one-sequence forward (B = 1) hands its activations to this hook at
     * decoder.h's sites (patching); NULL otherwise. With hook_x0, it starts at
     * block hook_from with that input (n, C), the blocks below not run. */
    const DecHook *hook;
    int hook_from;
    const nn_real *hook_x0;
};

/* Layer l's attention for sequences of T tokens: the core's multi-head
 * attention (attention.h), causal, with the model's RoPE table or ALiBi
 * slopes and the layer's ablated heads. */
AttnHeadsConfig tf_heads(const TfModel *m, int layer, int T);

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
/* The same from the logits' gradient already in m->a.dlogits (B, T, V);
 * a one-sequence pass hands the gradients at decoder.h's sites to m->hook. */
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
