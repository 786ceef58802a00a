/* Attention between queries and keys: the shared driver around the scores
 * of scores.c (checks, scratch, row blocks, threads), normalisation, masks
 * and context vectors; forward and backward side by side. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "attnlab/attention.h"
#include "base/error.h"
#include "base/layout.h"
#include "base/pool.h"
#include "core/gemm_parallel.h"
#include "core/scores.h"
#include "core/vec.h"

const char *attn_score_name(AttnScore score) {
    return (unsigned)score < ATTN_SCORE_COUNT ? attn_score_ops[score].name : NULL;
}

/* Query rows go in blocks: a block's scores are still in cache when they are
 * normalised and multiplied by V. From 512 queries the forward takes 32-row
 * blocks (each packed key panel then serves more rows: about 1% faster than
 * 16 at n = 1024 on one thread) but for its last 128 rows, which go in
 * 16-row blocks: the thread that takes the last block keeps the others
 * waiting for less. Shorter sequences go in 16-row blocks throughout, so
 * they still split across threads; the backward's per-row work takes 16.
 * Every row's result is the same whatever its block. */
#define ATTN_ROW_BLOCK 16
#define ATTN_ROW_BLOCK_LONG 32
#define ATTN_LONG_QUERIES 512
#define ATTN_SHORT_TAIL 128

/* Query rows before the forward's 16-row blocks start (a multiple of 32;
 * 0 below ATTN_LONG_QUERIES). */
static int long_rows(const AttnConfig *c) {
    if (c->n_q < ATTN_LONG_QUERIES) return 0;
    return (c->n_q - ATTN_SHORT_TAIL) / ATTN_ROW_BLOCK_LONG * ATTN_ROW_BLOCK_LONG;
}

/* Rows of the forward's largest block: each thread's share of the block scratch. */
static int block_rows_max(const AttnConfig *c) {
    return long_rows(c) > 0 ? ATTN_ROW_BLOCK_LONG : ATTN_ROW_BLOCK;
}

/* The forward's row blocks, and block b's query rows [*i0, *i1). */
static int forward_blocks(const AttnConfig *c) {
    int lr = long_rows(c);
    return lr / ATTN_ROW_BLOCK_LONG + (c->n_q - lr + ATTN_ROW_BLOCK - 1) / ATTN_ROW_BLOCK;
}

static void forward_block_rows(const AttnConfig *c, int b, int *i0, int *i1) {
    int lr = long_rows(c), nl = lr / ATTN_ROW_BLOCK_LONG;
    *i0 = b < nl ? b * ATTN_ROW_BLOCK_LONG : lr + (b - nl) * ATTN_ROW_BLOCK;
    *i1 = *i0 + (b < nl ? ATTN_ROW_BLOCK_LONG : ATTN_ROW_BLOCK);
    if (*i1 > c->n_q) *i1 = c->n_q;
}

/* ---- scratch layout: one table drives the size and the offsets ----------- */

/* The score's regions come first, then the driver's, in a fixed order; the
 * score decides their sizes (ScoreScratch). */
static ScratchLayout scratch_layout(const AttnConfig *c, size_t threads) {
    size_t nq = (size_t)c->n_q, nk = (size_t)c->n_k;
    ScoreScratch own = {0};
    if ((unsigned)c->score < ATTN_SCORE_COUNT) attn_score_ops[c->score].scratch(c, threads, &own);
    NnLayout l = {0};
    ScratchLayout s;
    s.proj_q = nn_layout_take(&l, own.proj_q);
    s.proj_k = nn_layout_take(&l, own.proj_k);
    s.norms = nn_layout_take(&l, own.norms);
    s.hid = nn_layout_take(&l, own.hid);
    s.pack_s = nn_layout_take(&l, own.pack_s);
    s.pack_v = nn_layout_take(&l, vec_packed_size(c->d_v, c->n_k));
    s.block_s = nn_layout_take(&l, threads * block_rows_max(c) * nk);
    s.block_w = nn_layout_take(&l, threads * block_rows_max(c) * nk);
    s.forward = l.size;
    s.grad_s = nn_layout_take(&l, nq * nk);
    s.grad_q = nn_layout_take(&l, own.grad_q);
    s.grad_c = nn_layout_take(&l, own.grad_c);
    s.grad_part = nn_layout_take(&l, own.grad_part);
    s.total = l.size;
    return s;
}

/* For the threads a region runs on now (1 in the single-thread builds). */
ScratchLayout attn_scratch_layout(const AttnConfig *c) { return scratch_layout(c, (size_t)nn_pool_threads()); }

size_t attn_scratch_size(const AttnConfig *c) { return attn_scratch_layout(c).total; }

size_t attn_scratch_size_most(const AttnConfig *c) { return scratch_layout(c, NN_MAX_THREADS).total; }

size_t attn_forward_scratch_size(const AttnConfig *c) { return attn_scratch_layout(c).forward; }

/* ---- checks at the boundary ---------------------------------------------- */

int attn_check_dim(const char *what, int v, int limit) {
    if (v < 1) return nn_fail(NN_ERR_SHAPE, "%s must be at least 1 (got %d)", what, v);
    if (v > limit) return nn_fail(NN_ERR_LIMIT, "%s is %d, past the limit of %d", what, v, limit);
    return NN_OK;
}

/* Multiply-adds of one forward call, in double so no size overflows: the
 * score's (per cell and once per call: AttnScoreOps.work) and the context's
 * (per cell: d_v). A score code out of range counts as dot's. */
double attn_work(const AttnConfig *c) {
    double cells = (double)c->n_q * c->n_k, per_cell = c->d_v, fixed = 0;
    attn_score_ops[(unsigned)c->score < ATTN_SCORE_COUNT ? c->score : ATTN_SCORE_DOT].work(c, &per_cell, &fixed);
    return cells * per_cell + fixed;
}

int attn_check_config(const AttnConfig *c, const AttnParams *p) {
    nn_clear_error();
    if ((unsigned)c->score >= ATTN_SCORE_COUNT)
        return nn_fail(NN_ERR_ARG, "score: unknown scoring function %d", (int)c->score);
    if ((unsigned)c->norm >= ATTN_NORM_COUNT)
        return nn_fail(NN_ERR_ARG, "normalize: unknown normalisation %d", (int)c->norm);
    NN_TRY(attn_check_dim("queries: number of rows", c->n_q, ATTN_MAX_TOKENS));
    NN_TRY(attn_check_dim("keys: number of rows", c->n_k, ATTN_MAX_TOKENS));
    NN_TRY(attn_check_dim("queries: number of columns", c->d_q, ATTN_MAX_DIM));
    NN_TRY(attn_check_dim("keys: number of columns", c->d_k, ATTN_MAX_DIM));
    NN_TRY(attn_check_dim("values: number of columns", c->d_v, ATTN_MAX_DIM));
    if ((size_t)c->n_q * (size_t)c->n_k > ATTN_MAX_CELLS)
        return nn_fail(NN_ERR_LIMIT, "queries x keys: %d x %d cells is past the limit of %d", c->n_q,
                       c->n_k, ATTN_MAX_CELLS);
    if (!(c->temperature > 0) || !isfinite(c->temperature))
        return nn_fail(NN_ERR_VALUE, "temperature must be a finite number > 0 (got %g)",
                       (double)c->temperature);
    NN_TRY(attn_score_ops[c->score].check(c, p));
    if (attn_work(c) > ATTN_MAX_WORK)
        return nn_fail(NN_ERR_LIMIT,
                       "work: %d x %d cells with score '%s' take %.3g multiply-adds, past the limit of %.3g "
                       "(about a second); use fewer tokens or smaller vectors",
                       c->n_q, c->n_k, attn_score_ops[c->score].name, attn_work(c), (double)ATTN_MAX_WORK);
    if (!(c->alibi >= 0) || !isfinite(c->alibi))
        return nn_fail(NN_ERR_VALUE, "alibi: the slope must be a finite number >= 0 (got %g)", (double)c->alibi);
    if (c->key_lengths)
        for (int i = 0; i < c->n_q; i++)
            if (c->key_lengths[i] < 0 || c->key_lengths[i] > c->n_k)
                return nn_fail(NN_ERR_VALUE, "mask.keyLengths[%d] is %d; it must be within 0..%d", i,
                               (int)c->key_lengths[i], c->n_k);
    return NN_OK;
}

/* max |x| of a finite matrix into *max_abs, or the error naming its first
 * value that is not finite. */
static int check_finite_max(const char *what, const nn_real *x, int rows, int cols, double *max_abs) {
    *max_abs = vec_max_abs(x, (size_t)rows * cols);
    return isfinite(*max_abs) ? NN_OK : nn_check_finite_matrix(what, x, rows, cols);
}

#ifdef NN_DOUBLE
#define REAL_MAX DBL_MAX
#else
#define REAL_MAX FLT_MAX
#endif

/* Past the checks, a softmax forward fails only when a score or a context
 * value overflows. Its partial sums are bounded by the score's bound and,
 * for the context, by n_k max |v| (each softmax numerator is at most 1):
 * below half the largest real, which the rounding of at most ATTN_MAX_DIM
 * terms cannot double, nothing overflows. A 'sum' row may sum to rounding
 * noise and its weights to anything, so that normalisation always may fail. */
static int forward_may_fail(const AttnConfig *c, const AttnParams *p, double mq, double mk, double mv) {
    const double limit = REAL_MAX / 2;
    if (c->norm != ATTN_NORM_SOFTMAX) return 1;
    double bias = (double)c->alibi * c->n_k; /* ALiBi's largest term */
    return !(attn_score_ops[c->score].bound(c, p, mq, mk) + bias < limit && c->n_k * mv < limit);
}

int attn_check_bounds(const AttnConfig *c, const AttnParams *p, const nn_real *q, const nn_real *k,
                      const nn_real *v, int *may_fail) {
    double mq, mk, mv;
    if (may_fail) *may_fail = 1;
    NN_TRY(attn_check_config(c, p));
    /* the JS API leaves these checks to here (one pass, not a JS loop) */
    NN_TRY(check_finite_max("queries", q, c->n_q, c->d_q, &mq));
    NN_TRY(check_finite_max("keys", k, c->n_k, c->d_k, &mk));
    NN_TRY(check_finite_max("values", v, c->n_k, c->d_v, &mv));
    if (may_fail) *may_fail = forward_may_fail(c, p, mq, mk, mv);
    return NN_OK;
}

int attn_check(const AttnConfig *c, const AttnParams *p, const nn_real *q, const nn_real *k,
               const nn_real *v) {
    return attn_check_bounds(c, p, q, k, v, NULL);
}

int attn_visible_keys(const AttnConfig *c, int i) {
    int L = c->n_k;
    if (c->causal && i + 1 < L) L = i + 1;
    if (c->key_lengths && c->key_lengths[i] < L) L = c->key_lengths[i];
    return L;
}


/* ---- packing and per-row work split across threads ------------------------ */

/* Panels [first, last) of one operand. */
static void pack_panels(const PackArgs *a, int first, int last) {
    vec_pack_range(a->packed, a->B, a->ld, a->N, a->K, a->transposed, a->scale, first, last);
}

/* The keys (the score's right operand) and the values, packed once for
 * every row block: the panels of both split across the threads. */
typedef struct {
    PackArgs keys, values;
} PackJob;

static int pack_task(void *ctx, int tid, int n) {
    const PackJob *job = ctx;
    const PackArgs *k = &job->keys, *v = &job->values;
    int pk = k->packed ? vec_pack_panels(k->N) : 0, total = pk + vec_pack_panels(v->N), b, e;
    nn_pool_range(total, tid, n, &b, &e);
    if (b < pk) pack_panels(k, b, e < pk ? e : pk);
    if (e > pk) pack_panels(v, b > pk ? b - pk : 0, e - pk);
    return NN_OK;
}

/* The backward, split across threads: products go through gemm_parallel.h
 * (C's rows split: one thread's result exactly). Per-row work runs on row
 * blocks interleaved over the threads; a gradient summed over query rows
 * either runs split over its own rows (keys) or, for additive's dPk and dv,
 * in per-thread partial buffers reduced in thread order: deterministic for a
 * given thread count. */
typedef struct {
    BackwardJob *job;
    BackwardRows fn;
    int rows;
} RowsRegion;

static int rows_task(void *ctx, int tid, int n) {
    RowsRegion *r = ctx;
    int blocks = (r->rows + ATTN_ROW_BLOCK - 1) / ATTN_ROW_BLOCK;
    if (tid == 0) r->job->threads = n;
    for (int b = tid; b < blocks; b += n) { /* interleaved: causal rows grow longer */
        int i0 = b * ATTN_ROW_BLOCK, i1 = i0 + ATTN_ROW_BLOCK < r->rows ? i0 + ATTN_ROW_BLOCK : r->rows;
        r->fn(r->job, i0, i1, tid);
    }
    return NN_OK;
}

void attn_run_rows(BackwardJob *job, BackwardRows fn, int rows, double work) {
    RowsRegion r = {job, fn, rows};
    nn_pool_run(rows_task, &r, work);
}

/* ---- normalisation -------------------------------------------------------- */

/* The first non-finite score of row i (whose visible keys are j < Lv). */
static int score_overflow(const nn_real *er, int i, int Lv) {
    int j = 0;
    while (j < Lv && isfinite(er[j])) j++;
    return nn_fail(NN_ERR_VALUE, "scores[%d][%d] overflows float32 (%s); scale the inputs or parameters down", i,
                   j < Lv ? j : 0, j < Lv && isnan(er[j]) ? "NaN" : "infinite");
}

/* Rows [i0, i1) (e, a point at row i0) over their visible keys j < Lv:
 * softmax a = exp((e - max)/tau) left unnormalised, inv[i - i0] = 1 / sum_j a_ij
 * (forward_block applies it), or a = e / sum e, normalised, inv = 1. Masked
 * cells get score -inf and weight 0; a visible score is never -inf: one that
 * overflows is an error, so it cannot pass for a masked cell.
 * The 'sum' rule: a row whose |sum_j e_ij| <= Lv eps sum_j |e_ij| (eps the
 * float32 unit roundoff) is ERR_ZERO_SUM; below that bound the sum is
 * rounding noise and so are the weights. Past it every weight is finite. */
static int normalise_forward(const AttnConfig *c, nn_real *e, nn_real *a, nn_real *inv, int i0, int i1) {
    int nk = c->n_k;
    for (int i = i0; i < i1; i++) {
        nn_real *er = e + (size_t)(i - i0) * nk, *ar = a + (size_t)(i - i0) * nk;
        int Lv = attn_visible_keys(c, i);
        inv[i - i0] = 1;
        for (int j = Lv; j < nk; j++) {
            er[j] = -INFINITY;
            ar[j] = 0;
        }
        if (Lv == 0) continue;
        nn_real m = vec_max_finite(er, Lv); /* NaN when any score is not finite */
        if (!isfinite(m)) return score_overflow(er, i, Lv);
        if (c->norm == ATTN_NORM_SOFTMAX) {
            inv[i - i0] = 1 / vec_exp_sum_tau(ar, er, m, c->temperature, Lv); /* sum >= 1: the max gives exp(0) */
        } else {
            double s = 0, mag = 0; /* in double: neither overflows */
            for (int j = 0; j < Lv; j++) {
                s += er[j];
                mag += fabs(er[j]);
            }
            if (!(fabs(s) > Lv * ATTN_SUM_EPS * mag))
                return nn_fail(NN_ERR_ZERO_SUM,
                               "normalize: 'sum' needs scores with a non-zero sum; row %d sums to %g, within "
                               "rounding of zero (use softmax)",
                               i, (double)s);
            for (int j = 0; j < Lv; j++) ar[j] = (nn_real)(er[j] / s);
        }
    }
    return NN_OK;
}

/* a_ij *= inv[i - i0] over the visible keys of rows [i0, i1) (a points at row i0) */
static void normalise_weights(const AttnConfig *c, nn_real *a, const nn_real *inv, int i0, int i1) {
    for (int i = i0; i < i1; i++)
        if (inv[i - i0] != 1) vec_scale(a + (size_t)(i - i0) * c->n_k, inv[i - i0], attn_visible_keys(c, i));
}

/* NN_OK if rows [i0, i1) of x (n, d) are finite, else ERR_VALUE naming what
 * overflowed. */
int attn_check_result(const char *what, const nn_real *x, int i0, int i1, int d) {
    for (int i = i0; i < i1; i++)
        for (int a = 0; a < d; a++)
            if (!isfinite(x[(size_t)i * d + a]))
                return nn_fail(NN_ERR_VALUE, "%s[%d][%d] overflows float32 (%s); scale the inputs down", what, i, a,
                               isnan(x[(size_t)i * d + a]) ? "NaN" : "infinite");
    return NN_OK;
}

/* da (n_q, n_k) -> de in place for query rows [i0, i1), over visible keys
 * (da = dZ V^T, plus dweights when given):
 * softmax a = exp(e/tau)/Z:  de_j = a_j (da_j - sum_k da_k a_k) / tau
 * sum     a = e / S:         de_j = (da_j - sum_k da_k a_k) / S
 * then de is scaled by the score's ds_scale (scaled_dot: e = q.k / sqrt(d_k),
 * so 1 / sqrt(d_k)). */
static void normalise_backward_rows(BackwardJob *job, int i0, int i1, int tid) {
    (void)tid;
    const AttnConfig *c = job->c;
    int nk = c->n_k;
    for (int i = i0; i < i1; i++) {
        nn_real *dr = job->ds + (size_t)i * nk;
        const nn_real *ar = job->weights + (size_t)i * nk, *er = job->scores + (size_t)i * nk;
        if (job->dweights) vec_axpy(dr, 1, job->dweights + (size_t)i * nk, nk);
        int Lv = attn_visible_keys(c, i);
        nn_real dot = vec_dot(dr, ar, Lv);
        if (c->norm == ATTN_NORM_SOFTMAX) {
            for (int j = 0; j < Lv; j++) dr[j] = ar[j] * (dr[j] - dot) / c->temperature;
        } else {
            nn_real s = vec_sum(er, Lv);
            for (int j = 0; j < Lv; j++) dr[j] = (dr[j] - dot) / s;
        }
        for (int j = Lv; j < nk; j++) dr[j] = 0;
        if (job->ds_scale != 1) vec_scale(dr, job->ds_scale, Lv);
    }
}

/* ALiBi: e_ij -= m |i - j| over the visible keys of rows [i0, i1) (e points
 * at row i0); a constant bias, so the backward is unchanged. */
static void add_alibi(const AttnConfig *c, nn_real *e, int i0, int i1) {
    for (int i = i0; i < i1; i++) {
        nn_real *er = e + (size_t)(i - i0) * c->n_k;
        int Lv = attn_visible_keys(c, i);
        for (int j = 0; j < Lv; j++) er[j] -= c->alibi * (nn_real)(i > j ? i - j : j - i);
    }
}

/* ---- the whole op -------------------------------------------------------- */

/* What every thread of a forward reads: the call and its score's prepared
 * operands, the outputs, the first failing row block of each thread (-1: none). */
typedef struct {
    ScoreForward s; /* c, p, scratch, L and the score's operands */
    const AttnScoreOps *score;
    nn_real *scores, *weights, *context;
    int threads; /* threads the region ran on */
    int next;    /* the next row block to take */
    int failed[NN_MAX_THREADS];
} ForwardJob;

/* Row block b (forward_block_rows) on thread tid. Keys past the
 * block's last visible key are neither scored nor summed (causal masks halve
 * the work). */
static int forward_block(const ForwardJob *job, int b, int tid) {
    const AttnConfig *c = job->s.c;
    const ScratchLayout *L = job->s.L;
    nn_real *scratch = job->s.scratch;
    int nk = c->n_k, dv = c->d_v, i0, i1;
    forward_block_rows(c, b, &i0, &i1);
    int nv = 0; /* keys any row of the block sees */
    for (int i = i0; i < i1; i++) {
        int vis = attn_visible_keys(c, i);
        nv = vis > nv ? vis : nv;
    }
    /* without scores / weights outputs, the block's rows live in the thread's scratch */
    size_t own = (size_t)tid * block_rows_max(c) * nk;
    nn_real *e = job->scores ? job->scores + (size_t)i0 * nk : scratch + L->block_s + own;
    nn_real *w = job->weights ? job->weights + (size_t)i0 * nk : scratch + L->block_w + own;
    nn_real inv[ATTN_ROW_BLOCK_LONG]; /* 1 / sum of each row's softmax numerators */
    nn_real *z = job->context + (size_t)i0 * dv;
    job->score->rows(&job->s, e, i0, i1, nv, tid);
    if (c->alibi != 0) add_alibi(c, e, i0, i1);
    NN_TRY(normalise_forward(c, e, w, inv, i0, i1));
    /* z_i = sum_j a_ij v_j = (sum_j exp_ij v_j) / s_i, i.e. Z = A V: 1/s_i
     * scales the d_v values of z_i rather than the n_k weights (they are
     * scaled only when returned) */
    vec_gemm_packed(z, dv, w, nk, scratch + L->pack_v, nk, i1 - i0, dv, nv, 0);
    for (int i = 0; i < i1 - i0; i++) vec_scale(z + (size_t)i * dv, inv[i], dv);
    if (job->weights) normalise_weights(c, w, inv, i0, i1);
    if (isfinite(vec_max_finite(z, (i1 - i0) * dv))) return NN_OK;
    /* Values near the float limit: sum_j exp_ij v_j may overflow where
     * sum_j a_ij v_j does not. The block again, on normalised weights. */
    if (!job->weights) normalise_weights(c, w, inv, i0, i1);
    vec_gemm_packed(z, dv, w, nk, scratch + L->pack_v, nk, i1 - i0, dv, nv, 0);
    return attn_check_result("context", job->context, i0, i1, dv);
}

/* Thread tid's share of the row blocks: each thread takes the next block
 * until none is left, so a core that runs slower (causal rows grow longer
 * down the matrix; a VM's cores contend on their host) takes fewer. A block's
 * result does not depend on the thread that computes it. Blocks are taken in
 * order, so every block before the lowest one that failed was computed. */
static int forward_rows(void *ctx, int tid, int n) {
    ForwardJob *job = ctx;
    int blocks = forward_blocks(job->s.c);
    if (tid == 0) job->threads = n;
    for (;;) {
        int b = __atomic_fetch_add(&job->next, 1, __ATOMIC_RELAXED);
        if (b >= blocks) break;
        int status = forward_block(job, b, tid);
        if (status != NN_OK) {
            job->failed[tid] = b;
            return status;
        }
    }
    return NN_OK;
}

int attn_forward(const AttnConfig *c, const AttnParams *p, nn_real *scores, nn_real *weights,
                 nn_real *context, const nn_real *q, const nn_real *k, const nn_real *v,
                 nn_real *scratch) {
    NN_TRY(attn_check(c, p, q, k, v));
    return attn_forward_checked(c, p, scores, weights, context, q, k, v, scratch);
}

int attn_forward_checked(const AttnConfig *c, const AttnParams *p, nn_real *scores, nn_real *weights,
                         nn_real *context, const nn_real *q, const nn_real *k, const nn_real *v,
                         nn_real *scratch) {
    ScratchLayout L = attn_scratch_layout(c);
    const AttnScoreOps *score = &attn_score_ops[c->score];
    ForwardJob job = {{c, p, scratch, &L, NULL, 0, {0}}, score, scores, weights, context, 1, 0, {0}};
    score->prepare(&job.s, q, k);
    PackJob pack = {job.s.keys, {scratch + L.pack_v, v, c->d_v, c->d_v, c->n_k, 0, 1}};
    nn_pool_run(pack_task, &pack, attn_work(c));
    for (int t = 0; t < NN_MAX_THREADS; t++) job.failed[t] = -1;
    int status = nn_pool_run(forward_rows, &job, attn_work(c));
    if (status == NN_OK || job.threads == 1) return status;
    /* The first failing block, as one thread would have met it, recomputed
     * here so the recorded message is its own. */
    int first = -1;
    for (int t = 0; t < job.threads; t++)
        if (job.failed[t] >= 0 && (first < 0 || job.failed[t] < first)) first = job.failed[t];
    return forward_block(&job, first, 0);
}

int attn_backward(const AttnConfig *c, const AttnParams *p, AttnParamGrads *g, nn_real *dq,
                  nn_real *dk, nn_real *dv, const nn_real *dcontext, const nn_real *dweights,
                  const nn_real *scores, const nn_real *weights, const nn_real *q, const nn_real *k,
                  const nn_real *v, nn_real *scratch) {
    NN_TRY(attn_check(c, p, q, k, v));
    return attn_backward_checked(c, p, g, dq, dk, dv, dcontext, dweights, scores, weights, q, k, v, scratch);
}

int attn_backward_checked(const AttnConfig *c, const AttnParams *p, AttnParamGrads *g, nn_real *dq,
                          nn_real *dk, nn_real *dv, const nn_real *dcontext, const nn_real *dweights,
                          const nn_real *scores, const nn_real *weights, const nn_real *q, const nn_real *k,
                          const nn_real *v, nn_real *scratch) {
    ScratchLayout L = attn_scratch_layout(c);
    const AttnScoreOps *score = &attn_score_ops[c->score];
    int nq = c->n_q, nk = c->n_k, dvn = c->d_v;
    nn_real ds_scale = score->ds_scale ? score->ds_scale(c) : 1;
    BackwardJob job = {c, p, g, dq, dk, scratch + L.grad_s, dweights, scores, weights, q, k, scratch, &L,
                       ds_scale, 1};
    /* Z = A V: dA = dZ V^T (+ dweights), dV += A^T dZ */
    const VecGemm first[2] = {{VEC_GEMM_NT, job.ds, nk, dcontext, dvn, v, dvn, nq, nk, dvn, 0},
                              {VEC_GEMM_TN, dv, dvn, weights, nk, dcontext, dvn, nk, dvn, nq, 1}};
    vec_gemm_parallel(first, dv ? 2 : 1);
    attn_run_rows(&job, normalise_backward_rows, nq, (double)nq * nk * 4);
    score->backward(&job);
    return NN_OK;
}
