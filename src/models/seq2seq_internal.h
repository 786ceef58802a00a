/* The Seq2Seq struct and its layers, shared by seq2seq.c (parameters,
 * buffers), seq2seq_layers.c (each layer's forward and backward),
 * seq2seq_train.c (loss, training step, optimiser), seq2seq_decode.c and
 * seq2seq_io.c. Not a public header.
 *
 * Dimension letters: B batch rows, T input steps of this batch, U output
 * steps of this batch, E embedding, H encoder hidden per direction,
 * D = H * directions (decoder hidden, encoder output width), V output
 * vocabulary, A additive-attention hidden, W = 2D (with attention) or D,
 * the width of the output layer's input [c; s], S a recurrent step's cache
 * per row, K = S2S_MAX_BEAM. Sequence buffers are batch-major (B, T, .) with
 * this batch's T and U as strides, except the recurrent states, which are
 * time-major (T, B, H) so a step reads one contiguous block. */
#ifndef ATTNLAB_SEQ2SEQ_INTERNAL_H
#define ATTNLAB_SEQ2SEQ_INTERNAL_H

#include "attnlab/seq2seq.h"
#include "base/error.h"
#include "base/pool.h"
#include "layers/attend.h"
#include "layers/cell.h"
#include "layers/optim.h"
#include "layers/output.h"
#include "layers/shards.h"

/* Tensors in the parameter table: the encoder's 2 x 2 cells of 4, the
 * decoder's 4, 2 embeddings, up to 3 attention tensors and 4 output tensors. */
#define S2S_MAX_TENSORS (2 * 2 * 4 + 4 + 2 + 3 + 4)
_Static_assert(S2S_MAX_TENSORS <= OPT_MAX_TENSORS, "the parameter table holds every seq2seq tensor");
/* The loss's and the decoders' floor under a probability before its log: the output layer's. */
#define S2S_MIN_PROB OUTPUT_MIN_PROB

/* One pointer per tensor into the parameter (or gradient) block. */
typedef struct {
    nn_real *emb_in;       /* (in_vocab, E) */
    CellWeights enc[2][2]; /* [layer][direction], in = E or D, hidden H */
    nn_real *emb_out;      /* (out_vocab, E) */
    CellWeights dec;       /* in = E, hidden D */
    AttnWeights attn;      /* d = D, n_k = fixed_in (location), A */
    OutputWeights out;     /* (W, D), (D), (D, V), (V) */
} S2sWeights;

/* Activations (forward) and their gradients (backward), sized for Bm rows and
 * the longest sequences; each buffer holds one quantity only. */
typedef struct {
    /* encoder */
    nn_real *enc_x, *d_enc_x;           /* (B, T, E) input embeddings and their gradient */
    nn_real *enc_out[2], *d_enc_out[2]; /* (B, T, D) per layer: both directions' states, gradient */
    nn_real *enc_h[2][2], *enc_c[2][2]; /* (T, B, H) per layer, direction: states (c: LSTM only) */
    nn_real *enc_cache[2][2];           /* (T, B, S) per layer, direction: what each step's backward reads */
    nn_real *enc_dh[2], *enc_dc[2];     /* (B, H) dL/d(state) carried back in time: this step, previous step */
    nn_real *zeros;                     /* (B, D) the encoder's initial state */
    /* decoder */
    nn_real *h0, *c0;                   /* (B, D) decoder start state (from the encoder) */
    nn_real *d_h0, *d_c0;               /* (B, D) its gradient, into the encoder's final states */
    nn_real *dec_x, *d_dec_x;           /* (B, U, E) input embeddings (BOS, targets shifted), gradient */
    nn_real *dec_h, *dec_c;             /* (U, B, D) states (c: LSTM only) */
    nn_real *dec_cache;                 /* (U, B, S) */
    nn_real *dec_dh[2], *dec_dc[2];     /* (B, D) dL/d(state) carried back in time: this step, previous step */
    nn_real *query, *d_query;           /* (B, U, D) decoder states batch-major (attention queries), gradient */
    /* attention */
    nn_real *scores, *weights;          /* (B, U, T) */
    nn_real *ctx, *d_ctx;               /* (B, U, D) context vectors, gradient */
    /* output */
    nn_real *cat, *d_cat;               /* (B, U, W) [c; s] (or s without attention), gradient */
    nn_real *o, *d_o;                   /* (B, U, D) tanh([c; s] Wc + bc), gradient */
    nn_real *probs;                     /* (B, U, V) softmax(o Wout + bout) */
    nn_real *d_logits;                  /* (B, U, V) dL/d(o Wout + bout) */
    nn_real *logp;                      /* (B, V) decoding: log-probabilities of one step */
    /* beam search */
    nn_real *beam_h[2], *beam_c[2];     /* (K, D) beam states, current and next; K = min(Bm, S2S_MAX_BEAM) */
    nn_real *beam_align[2];             /* (K, U, T) alignments of live hypotheses, current and next */
    nn_real *best_align;                /* (U, T) the best finished hypothesis */
    nn_real *beam_logp;                 /* (K) log-probabilities of the live hypotheses */
    nn_real *scratch;                   /* a recurrent step's or attention's scratch */
} S2sActs;

/* The training batch forward() keeps for backward(), in one allocation. */
typedef struct {
    int32_t *in_ids;  /* (Bm, max_in) */
    int32_t *in_len;  /* (Bm) */
    int32_t *out_ids; /* (Bm, max_out) targets */
    int32_t *out_len; /* (Bm) */
    int32_t *enc_tok; /* (Bm, max_in) encoder input ids of this batch (B, T), PAD past each length */
    int32_t *dec_tok; /* (Bm, max_out) decoder input ids (B, U): BOS, then the targets shifted, PAD */
} S2sBatch;

struct Seq2Seq {
    S2sConfig c;          /* the configuration it was created with (c.batch: as created) */
    int dirs;             /* encoder directions: 1, or 2 when bidirectional */
    int D;                /* decoder hidden = encoder output width = hidden * dirs */
    int A;                /* additive attention's hidden size */
    int W;                /* width of the output layer's input: 2D with attention, D without */
    int Bm;               /* rows the buffers hold now: max(batch, S2S_MAX_BEAM) when created, grown by s2s_reserve */
    AttnConfig attn_cfg;  /* template: sizes and score; n_q, n_k, key_lengths per call */
    OptParams opt;        /* the parameter table, params, grads, Adam's state, steps taken (saved) */
    size_t n_acts;        /* reals in acts */
    nn_real *acts;        /* (n_acts) the activation block S2sActs points into */
    S2sWeights w, g;      /* views into opt.params and opt.grads */
    S2sActs a;            /* views into acts */
    S2sBatch batch;       /* the training batch, kept for backward */
    int32_t *ids;         /* the allocation behind batch */
    int32_t *key_lengths; /* (max_out) visible keys of each query row of one attention call */
    uint8_t *mask;        /* (Bm) rows still inside their input at an encoder step */
    int32_t *beam_tok;    /* (2, K, U) tokens of live hypotheses, then (U) the best finished */
    int32_t *dec_ids;     /* (Bm) the previous output symbol of each decoding row */
    int32_t *row_len;     /* (Bm) input length of each decoding row */
    int B;                /* rows of the last forward's batch */
    int T;                /* its input steps (longest input, or fixed_in) */
    int U;                /* its output steps (longest target) */
    int count;            /* its target tokens: the loss is their mean */
    int have_forward;     /* 1 between a forward and its backward */
    /* Data-parallel training (base/pool.h): a batch of B rows splits into
     * shards = min(replicas.n, B) contiguous row ranges (nn_pool_range). The
     * model runs shard 0 on its own buffers and into its own gradients;
     * replicas.at[s] runs shard s on its own activations and gradients with
     * the model's weights; the gradients are then summed in shard order.
     * replicas.n is the pool's thread count when the rows were sized, so one
     * thread count always splits a batch the same way, whichever threads run
     * the shards. The optimiser's passes split into as many ranges (opt.chunks). */
    ShardReplicas replicas;           /* n 1 without a pool: the model alone, as on one thread */
    int want_shards;                  /* s2s_set_shards' count, or 0: the pool's threads */
    int shards;                       /* shards of the last forward */
    int is_replica;                   /* 1: one shard's buffers (no decoding buffers, no replicas) */
    nn_real *grads;                   /* replica: (n params) its gradient block, which g points into */
};

/* Splits batches into n shards (1..NN_MAX_THREADS) from now on, or as many
 * as the pool has threads (n = 0), reallocating the replicas: the sharded
 * arithmetic without a pool, for the native tests. */
int s2s_set_shards(Seq2Seq *m, int n);

int s2s_check_batch(const Seq2Seq *m, int B, const int32_t *in_ids, const int32_t *in_len, const int32_t *out_ids,
                    const int32_t *out_len);

/* s2s_create with buffers for `rows` rows (1..S2S_MAX_BATCH) instead of
 * max(batch, S2S_MAX_BEAM): the loader's probe runs on one row, so a file
 * it rejects costs little more than its weights; s2s_reserve grows the rows
 * with the batches that come, and s2s_beam to the beam's width. */
int s2s_create_rows(Seq2Seq **out, const S2sConfig *c, int rows);

/* s2s_load whose model has buffers for `rows` rows (1..S2S_MAX_BATCH;
 * s2s_load: S2S_MAX_BEAM), after a probe pass on one row. */
int s2s_load_rows(Seq2Seq **out, const uint8_t *bytes, size_t size, int rows);

/* Checks a configuration and counts its parameters without allocating
 * (the loader checks a file's length against it first). */
int s2s_plan(const S2sConfig *c, size_t *n_params);

/* Layers (seq2seq_layers.c). Each _forward reads and writes the named
 * buffers of m->a for the batch shape (B, T, U); each _backward reads the
 * forward's buffers and its output gradient and accumulates into m->g. */
void s2s_encoder_forward(Seq2Seq *m, int B, int T, const int32_t *in_ids, const int32_t *in_len);
void s2s_encoder_backward(Seq2Seq *m, int B, int T, const int32_t *in_len);
void s2s_decoder_forward(Seq2Seq *m, int B, int U, const int32_t *out_ids, const int32_t *out_len);
void s2s_decoder_backward(Seq2Seq *m, int B, int U);
int s2s_attention_forward(Seq2Seq *m, int B, int T, int U, const int32_t *in_len);
int s2s_attention_backward(Seq2Seq *m, int B, int T, int U, const int32_t *in_len);
void s2s_output_forward(Seq2Seq *m, int n, const nn_real *cat, nn_real *o, nn_real *probs);
void s2s_output_backward(Seq2Seq *m, int n);
/* The backward of the whole model from d_logits (B, U, V), which the caller
 * has written after a forward of one shard: the loss's gradient, or a
 * saliency's one-hot. */
int s2s_backward_logits(Seq2Seq *m);
/* cat (n, W) = [ctx; query] rows, or query alone without attention */
void s2s_concat_forward(const Seq2Seq *m, int n, nn_real *cat, const nn_real *ctx, const nn_real *query);

#endif
