/* The Seq2Seq struct, shared by seq2seq.c (training), seq2seq_decode.c and
 * seq2seq_io.c. Not a public header. */
#ifndef ATTNLAB_SEQ2SEQ_INTERNAL_H
#define ATTNLAB_SEQ2SEQ_INTERNAL_H

#include "attnlab/seq2seq.h"
#include "base/error.h"

#define TASK_BOS_ID 1
#define TASK_EOS_ID 2
#define S2S_MAX_TENSORS 40

enum { S2S_INIT_ZERO, S2S_INIT_UNIFORM, S2S_INIT_EMBED, S2S_INIT_FORGET, S2S_INIT_BETA };

typedef struct {
    nn_real *Wx; /* (in, G*H) */
    nn_real *Wh; /* (H, G*H) */
    nn_real *bx; /* (G*H) */
    nn_real *bh; /* (G*H) */
} S2sCellParams;

/* One pointer per tensor into the parameter (or gradient) block. */
typedef struct {
    nn_real *emb_in;         /* (in_vocab, E) */
    S2sCellParams enc[2][2]; /* [layer][direction], in = E or D, hidden H */
    nn_real *emb_out;        /* (out_vocab, E) */
    S2sCellParams dec;       /* in = E, hidden D */
    nn_real *attn_W;         /* general (D, D) | location (fixed_in, D) */
    nn_real *attn_Wq;        /* additive (A, D) */
    nn_real *attn_Wk;        /* additive (A, D) */
    nn_real *attn_v;         /* additive (A) */
    nn_real *attn_beta;      /* cosine (1) */
    nn_real *Wc;             /* (W, D) */
    nn_real *bc;             /* (D) */
    nn_real *Wout;           /* (D, V) */
    nn_real *bout;           /* (V) */
} S2sWeights;

typedef struct {
    nn_real **slot; /* the field of Seq2Seq.w that points at it */
    size_t offset;  /* into the block */
    size_t count;
    int fan_in; /* uniform(-1/sqrt(fan_in), 1/sqrt(fan_in)) */
    int init;
} S2sTensor;

/* Activations, sized for Bm rows and the longest sequences. */
typedef struct {
    nn_real *enc_x, *d_enc_x;           /* (B, T, E) */
    nn_real *enc_out[2], *d_enc_out[2]; /* (B, T, D) per layer */
    nn_real *enc_h[2][2], *enc_c[2][2]; /* (T, B, H) per layer, direction */
    nn_real *enc_cache[2][2];           /* (T, B, S) */
    nn_real *zeros;                     /* (B, D) */
    nn_real *h0, *c0;                   /* (B, D) decoder start state */
    nn_real *dec_x, *d_dec_x;           /* (B, U, E) */
    nn_real *dec_h, *dec_c;             /* (U, B, D) */
    nn_real *dec_cache;                 /* (U, B, S) */
    nn_real *query, *d_query;           /* (B, U, D) decoder states, batch-major */
    nn_real *scores, *weights;          /* (B, U, T) */
    nn_real *ctx;                       /* (B, U, D) */
    nn_real *cat, *d_cat;               /* (B, U, W) [c; s] */
    nn_real *o;                         /* (B, U, D) */
    nn_real *probs;                     /* (B, U, V) */
    nn_real *dh, *dc, *dh2, *dc2;       /* (B, D) carried gradients */
    nn_real *carry;                     /* (4, B, H) encoder carried gradients */
    nn_real *beam_h[2], *beam_c[2];     /* (K, D) beam states, current and next */
    nn_real *beam_align[2];             /* (K, U, T) alignments of live hypotheses */
    nn_real *best_align;                /* (U, T) the best finished hypothesis */
    nn_real *beam_logp;                 /* (K) */
    nn_real *scratch;                   /* a recurrent step's or attention's scratch */
} S2sActs;

struct Seq2Seq {
    S2sConfig c;
    int dirs, D, A, W, Bm;
    AttnConfig attn_cfg; /* template: sizes and score; n_q, n_k, key_lengths per call */
    S2sTensor tensors[S2S_MAX_TENSORS];
    int n_tensors;
    size_t n_params, n_acts;
    nn_real *params, *grads, *opt, *acts; /* the four allocations */
    S2sWeights w, g;                      /* views into params and grads */
    S2sActs a;
    int32_t *key_lengths; /* (max_out) */
    int32_t *ids;         /* the forward's batch, kept for backward */
    uint8_t *mask;        /* (Bm) */
    int32_t *beam_tok;    /* (2, K, U) tokens of live hypotheses, then (U) the best finished */
    int32_t *dec_ids;     /* (Bm) the previous output symbol of each decoding row */
    int32_t *row_len;     /* (Bm) input length of each decoding row */
    int B, T, U, count, have_forward;
    int steps;
};

RnnWeights s2s_cell_weights(const S2sCellParams *p);
AttnParams s2s_attn_params(const Seq2Seq *m);
int s2s_check_batch(const Seq2Seq *m, int B, const int32_t *in_ids, const int32_t *in_len, const int32_t *out_ids,
                    const int32_t *out_len);
void s2s_encode(Seq2Seq *m, int B, int T, const int32_t *in_ids, const int32_t *in_len);
void s2s_output(Seq2Seq *m, int n, const nn_real *cat, nn_real *o, nn_real *probs);

#endif
