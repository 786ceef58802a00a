/* The scoring functions of the attention op, one table entry each: what the
 * shared driver in attention.c (row blocks, normalisation, masks, context,
 * threads) asks of a score. Adding a score is adding one AttnScoreOps entry
 * to attn_score_ops (scores.c) and its code. Private to src/core.
 *
 * Dimension letters as in attnlab/attention.h: n_q, n_k, d_q, d_k, d_v, h. */
#ifndef ATTNLAB_CORE_SCORES_H
#define ATTNLAB_CORE_SCORES_H

#include <stddef.h>

#include "attnlab/attention.h"

/* Reals a score asks for in each of its scratch regions (0: none). */
typedef struct {
    size_t proj_q;    /* forward, n_q rows: projected or unit queries */
    size_t proj_k;    /* forward, n_k rows: projected or unit keys */
    size_t norms;     /* forward: row norms */
    size_t hid;       /* forward: one row per thread */
    size_t pack_s;    /* forward: the score product's right operand, packed (vec_packed_size) */
    size_t grad_q;    /* backward: gradients of the projections */
    size_t grad_c;    /* backward, n_q x n_k */
    size_t grad_part; /* backward: partial sums of threads 1.. */
} ScoreScratch;

/* Offsets (in reals) of every scratch region: one table drives the size and
 * the offsets (attn_scratch_layout). The score's regions hold what its
 * scratch hook says: */
typedef struct {
    size_t proj_q; /* general: Q W (n_q, d_k) | additive: Q Wq^T (n_q, h) | cosine: unit rows q_i/|q_i| */
    size_t proj_k; /* additive: K Wk^T (n_k, h) | cosine: unit rows k_j/|k_j| (n_k, d_k) */
    size_t norms;  /* cosine: |q_i| (n_q) then |k_j| (n_k) */
    size_t hid;    /* additive: one tanh row (h) per thread */
    size_t pack_s; /* forward: packed K^T (dot, cosine, general), K^T/sqrt(d_k) (scaled_dot) or W^T (location) */
    size_t pack_v; /* forward: packed V */
    size_t block_s, block_w; /* forward without score / weight outputs: one row block of each per thread */
    size_t forward; /* reals the forward needs: everything above (an offset, not a buffer) */
    size_t grad_s; /* backward: dL/dscores (n_q, n_k) */
    size_t grad_q; /* backward: d(Q W) | d(Q Wq^T), d(K Wk^T) | cosine: s (n_q), t (n_k), dE W, dE^T U */
    size_t grad_c; /* backward, cosine: c_ij, then dE_ij c_ij (n_q, n_k) */
    size_t grad_part; /* backward, additive: threads 1.. partial d(K Wk^T) (n_k, h), then partial dv (h) */
    size_t total;  /* reals forward + backward need */
} ScratchLayout;

ScratchLayout attn_scratch_layout(const AttnConfig *c);

/* An operand to pack: vec_pack's arguments. */
typedef struct {
    nn_real *packed; /* NULL: nothing to pack */
    const nn_real *B;
    int ld, N, K, transposed;
    nn_real scale;
} PackArgs;

/* A forward's score operands, shared by every row block. The driver fills
 * c, p, scratch and L; the score's prepare hook the rest. */
typedef struct {
    const AttnConfig *c;
    const AttnParams *p;
    nn_real *scratch;
    const ScratchLayout *L;
    const nn_real *a; /* the score product's left operand (n_q, kdim): Q, Qu or Q W (NULL: no product) */
    int kdim;
    PackArgs keys;    /* its right operand, packed once into scratch + L->pack_s (K^T, Ku^T or W^T) */
} ScoreForward;

/* What every thread of a backward reads. ds = dL/de (n_q, n_k), which the
 * score backwards may overwrite. */
typedef struct {
    const AttnConfig *c;
    const AttnParams *p;
    AttnParamGrads *g;
    nn_real *dq, *dk, *ds;
    const nn_real *dweights, *scores, *weights, *q, *k;
    nn_real *scratch;
    const ScratchLayout *L;
    nn_real ds_scale; /* what normalise_backward_rows scales dL/de by (AttnScoreOps.ds_scale) */
    int threads;      /* threads the last region ran on */
} BackwardJob;

/* Rows [i0, i1) of one block on thread tid. */
typedef void (*BackwardRows)(BackwardJob *job, int i0, int i1, int tid);

/* fn over `rows` rows (n_q or n_k) in blocks split across threads; `work` in
 * multiply-adds decides whether the split is worth it. */
void attn_run_rows(BackwardJob *job, BackwardRows fn, int rows, double work);

/* NN_OK, or ERR_SHAPE / ERR_LIMIT naming `what` when v is outside 1..limit. */
int attn_check_dim(const char *what, int v, int limit);

/* One scoring function. Each hook runs once per call (or per row block, for
 * rows); the loops over cells live inside the hooks. */
typedef struct {
    const char *name; /* as the API spells it */
    /* shapes and parameters, after the checks every score shares */
    int (*check)(const AttnConfig *c, const AttnParams *p);
    /* multiply-adds: *per_cell += the score's per (query, key) cell, *fixed += once per call */
    void (*work)(const AttnConfig *c, double *per_cell, double *fixed);
    /* an upper bound on |e_ij| and on every partial sum the forward computes
     * for it, given mq = max |q_ia| and mk = max |k_ja| (in double; inf when
     * it cannot say); attn_check_bounds compares it with the float range */
    double (*bound)(const AttnConfig *c, const AttnParams *p, double mq, double mk);
    /* the scratch the score needs, `threads` the most a region runs on */
    void (*scratch)(const AttnConfig *c, size_t threads, ScoreScratch *s);
    /* forward: work shared by every query row (projections, norms); sets f->a, f->kdim, f->keys */
    void (*prepare)(ScoreForward *f, const nn_real *q, const nn_real *k);
    /* forward: scores of query rows [i0, i1) against keys [0, nv) into e (i1 - i0 rows of n_k), on thread tid */
    void (*rows)(const ScoreForward *f, nn_real *e, int i0, int i1, int nv, int tid);
    /* backward: dL/de is scaled by this before the score's backward (NULL: by 1) */
    nn_real (*ds_scale)(const AttnConfig *c);
    /* backward: accumulates input and parameter gradients from job->ds = dL/de, which it may overwrite */
    void (*backward)(BackwardJob *job);
} AttnScoreOps;

extern const AttnScoreOps attn_score_ops[ATTN_SCORE_COUNT];

#endif
