/* attnlab attention core: scoring functions, normalisation, masks, context
 * vectors and self-attention, each with a forward and a backward pass.
 *
 * Conventions (as in the tutorials):
 *   scores   e_ij = score(q_i, k_j)                      (n_q, n_k)
 *   weights  a_ij = softmax_j(e_ij / tau)  or  e_ij / sum_j e_ij
 *   context  z_i  = sum_j a_ij v_j                        (n_q, d_v)
 * Matrices are row-major, one token per row. Scoring parameters use the
 * column-vector convention of the papers (W q); self-attention projections use
 * the row-vector convention of the tutorials (Q = X Wq, W is d_in x d_out).
 *
 * Dimension letters: n_q queries, n_k keys/values, d_q/d_k/d_v vector sizes,
 * h the hidden size of the additive score.
 *
 * Memory: no function here allocates. Forward and backward take a caller-owned
 * scratch buffer of attn_scratch_size() / attn_self_scratch_size() reals.
 * Backward passes accumulate (+=) into gradients; clear them first.
 *
 * Errors: every function returning int returns NN_OK or an NnStatus code and
 * records a message readable with nn_last_error(). */
#ifndef ATTNLAB_ATTENTION_H
#define ATTNLAB_ATTENTION_H

#include <stddef.h>
#include <stdint.h>

#include "attnlab/nn.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Size limits checked at the API boundary. */
#define ATTN_MAX_TOKENS 4096    /* n_q, n_k */
#define ATTN_MAX_DIM 4096       /* d_q, d_k, d_v, h, self-attention widths */
#define ATTN_MAX_CELLS (1 << 22) /* n_q * n_k (per head): 4M cells */
#define ATTN_MAX_HEADS 64
/* Work of one call in multiply-adds (attn_work, attn_self_work): at most 2^29,
 * about 0.2 s on the SIMD build and well under a second on the scalar one on
 * this project's machine, so no single call blocks a page for long. A tanh
 * unit of the additive score counts as ATTN_TANH_WORK multiply-adds (measured:
 * the additive score's inner step costs about as much as 24 of the others'). */
#define ATTN_MAX_WORK 536870912.0
#define ATTN_TANH_WORK 24
/* 'sum' normalisation: a row whose |sum e| <= n_visible * ATTN_SUM_EPS * sum |e|
 * is ERR_ZERO_SUM (its sum is float32 rounding noise). */
#define ATTN_SUM_EPS 1.1920928955078125e-07

typedef enum {
    ATTN_SCORE_DOT = 0,        /* q . k                      (d_q == d_k) */
    ATTN_SCORE_SCALED_DOT = 1, /* q . k / sqrt(d_k)          (d_q == d_k) */
    ATTN_SCORE_GENERAL = 2,    /* q^T W k,        W (d_q, d_k)           */
    ATTN_SCORE_ADDITIVE = 3,   /* v^T tanh(Wq q + Wk k), Wq (h, d_q), Wk (h, d_k), v (h) */
    ATTN_SCORE_COSINE = 4,     /* beta q . k / (|q| |k|), 0 if a norm is 0 (d_q == d_k) */
    ATTN_SCORE_LOCATION = 5,   /* e_i = W q_i,    W (n_k, d_q): keys unused */
    ATTN_SCORE_COUNT = 6
} AttnScore;

typedef enum {
    ATTN_NORM_SOFTMAX = 0, /* a_ij = exp((e_ij - m_i)/tau) / sum_j exp((e_ij - m_i)/tau), m_i = max_j e_ij */
    ATTN_NORM_SUM = 1,     /* a_ij = e_ij / sum_j e_ij (the tutorial's naive weights) */
    ATTN_NORM_COUNT = 2
} AttnNorm;

/* The score's name as the API spells it ("dot", "scaled_dot", ...), or NULL
 * for a code outside 0..ATTN_SCORE_COUNT-1. */
const char *attn_score_name(AttnScore score);

typedef struct {
    int n_q;      /* number of queries */
    int n_k;      /* number of keys (and values) */
    int d_q;      /* query size */
    int d_k;      /* key size */
    int d_v;      /* value size */
    int hidden;   /* additive score: hidden size h (0 otherwise) */
    AttnScore score;     /* scoring function */
    AttnNorm norm;       /* softmax or sum normalisation */
    nn_real temperature; /* softmax temperature tau > 0 (1 = plain softmax); with
                          * 'sum' it cancels, (e/tau) / sum(e/tau) = e / sum e */
    int causal;          /* query i sees keys j <= i */
    const int32_t *key_lengths; /* (n_q) or NULL: query i sees keys j < key_lengths[i] */
    nn_real alibi;       /* ALiBi's slope m (Press et al.): e_ij - m |i - j| (0: none), finite, >= 0 */
} AttnConfig;

/* Scoring parameters; only those the score needs are read. */
typedef struct {
    const nn_real *W;  /* general (d_q, d_k) | location (n_k, d_q) */
    const nn_real *Wq; /* additive (h, d_q) */
    const nn_real *Wk; /* additive (h, d_k) */
    const nn_real *v;  /* additive (h) */
    nn_real beta;      /* cosine sharpening (1 = plain cosine) */
} AttnParams;

/* Gradients of AttnParams, same shapes; NULL members are skipped. */
typedef struct {
    nn_real *W;   /* dL/dW (+=) */
    nn_real *Wq;  /* dL/dWq (+=) */
    nn_real *Wk;  /* dL/dWk (+=) */
    nn_real *v;   /* dL/dv (+=) */
    nn_real beta; /* dL/dbeta (+=) */
} AttnParamGrads;

/* Validates sizes, enums, parameters and the finiteness of every input.
 * Called by attn_forward; exposed so callers can check once up front. */
int attn_check(const AttnConfig *c, const AttnParams *p, const nn_real *q,
               const nn_real *k, const nn_real *v);
/* attn_check without its pass over the queries, keys and values: what a
 * caller needs before it sizes scratch for attn_forward, which checks the
 * rest (errors come in attn_check's order either way). */
int attn_check_config(const AttnConfig *c, const AttnParams *p);

/* attn_check, and whether attn_forward may still fail past it: *may_fail
 * (may be NULL) is 0 when the magnitudes of the inputs and parameters rule
 * out every overflow of a softmax forward, 1 otherwise ('sum' always: a row
 * may sum to rounding noise). Still one pass over queries, keys and values. */
int attn_check_bounds(const AttnConfig *c, const AttnParams *p, const nn_real *q,
                      const nn_real *k, const nn_real *v, int *may_fail);

/* Multiply-adds one forward call does (what ATTN_MAX_WORK bounds). */
double attn_work(const AttnConfig *c);

/* NN_OK if rows [i0, i1) of the result x (rows of d) are finite, else
 * NN_ERR_VALUE: "<what>[i][a] overflows float32". */
int attn_check_result(const char *what, const nn_real *x, int i0, int i1, int d);

/* Number of reals attn_forward / attn_backward need as scratch; the forward
 * alone needs only attn_forward_scratch_size(). */
size_t attn_scratch_size(const AttnConfig *c);
/* The same for any number of the pool's threads (the size above is for its
 * threads now): scratch laid out once for calls made under any split. */
size_t attn_scratch_size_most(const AttnConfig *c);
size_t attn_forward_scratch_size(const AttnConfig *c);

/* Number of keys query i may see: min(n_k, causal ? i+1 : n_k, key_lengths[i]). */
int attn_visible_keys(const AttnConfig *c, int i);

/* Forward. Masked scores are -INFINITY; a row with no visible key gets zero
 * weights and a zero context. A score, context value (or self-attention
 * projection / output) that overflows float32 is NN_ERR_VALUE naming it; a
 * 'sum' row within rounding of zero is NN_ERR_ZERO_SUM (ATTN_SUM_EPS). v may equal k. scores and weights may both be
 * NULL when only the context is wanted (they then live in scratch, a block
 * of rows at a time). */
int attn_forward(const AttnConfig *c, const AttnParams *p,
                 nn_real *scores,      /* (n_q, n_k) out */
                 nn_real *weights,     /* (n_q, n_k) out */
                 nn_real *context,     /* (n_q, d_v) out */
                 const nn_real *q,     /* (n_q, d_q) */
                 const nn_real *k,     /* (n_k, d_k) */
                 const nn_real *v,     /* (n_k, d_v) */
                 nn_real *scratch);

/* attn_forward without its checks, for a caller that has just run attn_check
 * or attn_check_bounds on the same arguments (and no pass over the inputs
 * twice). */
int attn_forward_checked(const AttnConfig *c, const AttnParams *p, nn_real *scores,
                         nn_real *weights, nn_real *context, const nn_real *q,
                         const nn_real *k, const nn_real *v, nn_real *scratch);

/* Backward: given dL/dcontext (and optionally dL/dweights, may be NULL),
 * accumulates dL/dq, dL/dk, dL/dv (each may be NULL) and parameter gradients.
 * scores and weights are the forward's outputs. */
int attn_backward(const AttnConfig *c, const AttnParams *p, AttnParamGrads *g,
                  nn_real *dq,              /* (n_q, d_q) += */
                  nn_real *dk,              /* (n_k, d_k) += */
                  nn_real *dv,              /* (n_k, d_v) += */
                  const nn_real *dcontext,  /* (n_q, d_v) */
                  const nn_real *dweights,  /* (n_q, n_k) or NULL */
                  const nn_real *scores,    /* (n_q, n_k) */
                  const nn_real *weights,   /* (n_q, n_k) */
                  const nn_real *q, const nn_real *k, const nn_real *v,
                  nn_real *scratch);

/* attn_backward without its checks, for a caller whose forward ran them on
 * the same arguments. */
int attn_backward_checked(const AttnConfig *c, const AttnParams *p, AttnParamGrads *g,
                          nn_real *dq, nn_real *dk, nn_real *dv, const nn_real *dcontext,
                          const nn_real *dweights, const nn_real *scores, const nn_real *weights,
                          const nn_real *q, const nn_real *k, const nn_real *v, nn_real *scratch);

/* ---- Multi-head attention over given queries, keys and values: what
 * self-attention runs between its projections, and the transformer's
 * attention layer. Head h reads columns [h d_k, (h+1) d_k) of Q and K and
 * [h d_v, (h+1) d_v) of V, rows ld apart, and writes its context to the
 * same columns of Z; each head is one attn_forward (softmax, temperature 1).
 * Hooks: RoPE (Su et al.) turns each head's query and key pairs (2i, 2i+1),
 * or GPT-NeoX's (i, i + r/2) over its first r dimensions, of row t by t theta_i before scoring (the caller's Q and K stay as they
 * are); ALiBi adds -m_h |i - j| to head h's scores; an ablated head's
 * context is zero and passes no gradient. */
typedef struct {
    int n;                 /* tokens */
    int heads;             /* 1..ATTN_MAX_HEADS */
    int d_k, d_v;          /* one head's query/key and value widths */
    AttnScore score;       /* dot, scaled_dot or cosine */
    nn_real beta;          /* cosine's scale (1 = plain cosine) */
    int causal;            /* token i sees tokens j <= i */
    const nn_real *rope;   /* (n, r / 2, 2) cos, sin of t theta_i (attn_rope_table), or NULL */
    const nn_real *alibi;  /* (heads) slopes m_h, or NULL */
    const uint8_t *ablate; /* (heads) 1: the head's context is zero, or NULL */
    int rope_dims;         /* r: the first r of each head's d_k turned (0: all d_k); even */
    int rope_half;         /* 0: pairs (2i, 2i+1) (Su et al.); 1: pairs (i, i + r/2), rotate-half (GPT-NeoX) */
} AttnHeadsConfig;

/* RoPE's table for n positions and `pairs` turned pairs of a width w:
 * out (n, pairs, 2) = cos, sin of t theta_i, theta_i = base^(-2i / w)
 * (w: the head's d_k, or GPT-NeoX's r turned dimensions). */
void attn_rope_table(nn_real *out, int n, int pairs, int w, double base);

typedef struct {
    const nn_real *q, *k, *v; /* (n, heads d_k), (n, heads d_k), (n, heads d_v) */
    int ldq, ldk, ldv;        /* their row strides */
    nn_real *context;         /* (n, heads d_v), rows ldz apart */
    int ldz;
    nn_real *scores;          /* (heads, n, n) */
    nn_real *weights;         /* (heads, n, n) */
} AttnHeadsIO;

size_t attn_heads_scratch_size(const AttnHeadsConfig *c);
/* The same for any number of the pool's threads (attn_scratch_size_most). */
size_t attn_heads_scratch_size_most(const AttnHeadsConfig *c);
/* Every head's scores, weights and context. The sizes are checked; the
 * values are not read twice: a query, key or value that is not finite
 * shows as a score or context that overflows (NN_ERR_VALUE), as do
 * overflows of finite ones. */
int attn_heads_forward(const AttnHeadsConfig *c, const AttnHeadsIO *io, nn_real *scratch);
/* The same with the heads split across the engine's threads, each whole head
 * on one thread (the same results bit for bit): scratch holds `copies` times
 * attn_heads_scratch_size, one per thread that takes heads. For one call of
 * many small heads (a GPT-2 layer), where splitting each head's rows makes a
 * parallel region per head. */
int attn_heads_forward_split(const AttnHeadsConfig *c, const AttnHeadsIO *io, nn_real *scratch, int copies);
/* One query of the same heads against keys and values already computed: a
 * decoder's cached step. The query row q (heads d_k) is at position pos
 * (0..c->n - 1); keys k and values v hold positions 0..pos, rows ldk / ldv
 * apart; each head's context goes to its columns of the row z (heads d_v).
 * RoPE turns the query at pos and key j at j, as attn_heads_forward does, so
 * a step gives the row attn_heads_forward gives for position pos (c->n is
 * the rows of the RoPE table); an ablated head's context is zero. ALiBi is
 * refused (NN_ERR_ARG). scratch: attn_heads_step_scratch_size(c) reals. */
size_t attn_heads_step_scratch_size(const AttnHeadsConfig *c);
int attn_heads_step(const AttnHeadsConfig *c, int pos, const nn_real *q, const nn_real *k, int ldk, const nn_real *v,
                    int ldv, nn_real *z, nn_real *scratch);
/* From dcontext (rows io->ldz apart): dq, dk, dv (+=, rows apart as q, k, v;
 * any may be NULL), from the forward's io. */
int attn_heads_backward(const AttnHeadsConfig *c, const AttnHeadsIO *io, nn_real *dq, nn_real *dk, nn_real *dv,
                        const nn_real *dcontext, nn_real *scratch);

/* ---- Self-attention: Q = X Wq, K = X Wk, V = X Wv, heads split the widths,
 * per head z = attention(Q_h, K_h, V_h), concat, output = concat Wo. A NULL
 * projection is the identity (the tutorial's "without trainable weights"). */
typedef struct {
    int n;       /* tokens */
    int d_in;    /* embedding size */
    int d_k;     /* total query/key width over heads (d_in when wq or wk is NULL) */
    int d_v;     /* total value width over heads (d_in when wv is NULL) */
    int d_out;   /* output width (d_v when wo is NULL) */
    int heads;   /* divides d_k and d_v */
    AttnScore score; /* dot, scaled_dot or cosine */
    int causal;      /* token i sees tokens j <= i */
} SelfAttnConfig;

typedef struct {
    const nn_real *wq; /* (d_in, d_k) or NULL */
    const nn_real *wk; /* (d_in, d_k) or NULL */
    const nn_real *wv; /* (d_in, d_v) or NULL */
    const nn_real *wo; /* (d_v, d_out) or NULL */
} SelfAttnWeights;

typedef struct {
    nn_real *wq; /* dL/dwq (+=), (d_in, d_k) or NULL */
    nn_real *wk; /* dL/dwk (+=), (d_in, d_k) or NULL */
    nn_real *wv; /* dL/dwv (+=), (d_in, d_v) or NULL */
    nn_real *wo; /* dL/dwo (+=), (d_v, d_out) or NULL */
} SelfAttnGrads;

/* Activations the forward writes and the backward reads. */
typedef struct {
    nn_real *q;       /* (n, d_k) */
    nn_real *k;       /* (n, d_k) */
    nn_real *v;       /* (n, d_v) */
    nn_real *scores;  /* (heads, n, n) */
    nn_real *weights; /* (heads, n, n) */
    nn_real *context; /* (n, d_v) heads concatenated */
    nn_real *output;  /* (n, d_out) */
} SelfAttnActs;

int attn_self_check(const SelfAttnConfig *c, const SelfAttnWeights *w, const nn_real *x);
double attn_self_work(const SelfAttnConfig *c); /* multiply-adds of one forward */
size_t attn_self_scratch_size(const SelfAttnConfig *c);
int attn_self_forward(const SelfAttnConfig *c, const SelfAttnWeights *w,
                      SelfAttnActs *a, const nn_real *x /* (n, d_in) */,
                      nn_real *scratch);
int attn_self_backward(const SelfAttnConfig *c, const SelfAttnWeights *w,
                       SelfAttnGrads *g,
                       nn_real *dx,             /* (n, d_in) += */
                       const nn_real *doutput,  /* (n, d_out) */
                       const SelfAttnActs *a, const nn_real *x,
                       nn_real *scratch);

#ifdef __cplusplus
}
#endif
#endif
