/* Attention between queries and keys: scores, normalisation, masks, context
 * vectors; forward and backward side by side. */
#include <math.h>
#include <string.h>

#include "attnlab/attention.h"
#include "base/error.h"
#include "base/layout.h"
#include "base/pool.h"
#include "core/gemm_parallel.h"
#include "core/vec.h"

static const char *const score_names[ATTN_SCORE_COUNT] = {
    "dot", "scaled_dot", "general", "additive", "cosine", "location"};

const char *attn_score_name(AttnScore score) {
    return (unsigned)score < ATTN_SCORE_COUNT ? score_names[score] : NULL;
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

static ScratchLayout scratch_layout(const AttnConfig *c) {
    size_t nq = (size_t)c->n_q, nk = (size_t)c->n_k, dk = (size_t)c->d_k, h = (size_t)(c->hidden > 0 ? c->hidden : 0);
    int general = c->score == ATTN_SCORE_GENERAL, additive = c->score == ATTN_SCORE_ADDITIVE;
    int cosine = c->score == ATTN_SCORE_COSINE, location = c->score == ATTN_SCORE_LOCATION;
    size_t threads = (size_t)nn_pool_threads(); /* 1 in the single-thread builds */
    NnLayout l = {0};
    ScratchLayout s;
    s.proj_q = nn_layout_take(&l, general || cosine ? nq * dk : additive ? nq * h : 0);
    s.proj_k = nn_layout_take(&l, additive ? nk * h : cosine ? nk * dk : 0);
    s.norms = nn_layout_take(&l, cosine ? nq + nk : 0);
    s.hid = nn_layout_take(&l, additive ? threads * h : 0);
    s.pack_s = nn_layout_take(&l, location ? vec_packed_size(c->n_k, c->d_q)
                                  : additive ? 0 : vec_packed_size(c->n_k, c->d_k));
    s.pack_v = nn_layout_take(&l, vec_packed_size(c->d_v, c->n_k));
    s.block_s = nn_layout_take(&l, threads * block_rows_max(c) * nk);
    s.block_w = nn_layout_take(&l, threads * block_rows_max(c) * nk);
    s.forward = l.size;
    s.grad_s = nn_layout_take(&l, nq * nk);
    s.grad_q = nn_layout_take(&l, general ? nq * dk : additive ? (nq + nk) * h : cosine ? nq + nk + (nq + nk) * dk : 0);
    s.grad_c = nn_layout_take(&l, cosine ? nq * nk : 0);
    s.grad_part = nn_layout_take(&l, additive ? (threads - 1) * (nk * h + h) : 0);
    s.total = l.size;
    return s;
}

size_t attn_scratch_size(const AttnConfig *c) { return scratch_layout(c).total; }

size_t attn_forward_scratch_size(const AttnConfig *c) { return scratch_layout(c).forward; }

/* ---- checks at the boundary ---------------------------------------------- */

static int check_dim(const char *what, int v, int limit) {
    if (v < 1) return nn_fail(NN_ERR_SHAPE, "%s must be at least 1 (got %d)", what, v);
    if (v > limit) return nn_fail(NN_ERR_LIMIT, "%s is %d, past the limit of %d", what, v, limit);
    return NN_OK;
}

/* Multiply-adds of one forward call, in double so no size overflows: the
 * score (per cell: d_k for the dot family, d_q for location, h tanh units
 * for additive, each worth ATTN_TANH_WORK), projections, and the context
 * (per cell: d_v). */
double attn_work(const AttnConfig *c) {
    double nq = c->n_q, nk = c->n_k, dq = c->d_q, dk = c->d_k, h = c->hidden > 0 ? c->hidden : 0;
    double cells = nq * nk, per_cell = c->d_v, fixed = 0;
    switch (c->score) {
    case ATTN_SCORE_GENERAL:
        fixed = nq * dq * dk;
        per_cell += dk;
        break;
    case ATTN_SCORE_ADDITIVE:
        fixed = (nq * dq + nk * dk) * h;
        per_cell += h * ATTN_TANH_WORK;
        break;
    case ATTN_SCORE_LOCATION:
        per_cell += dq;
        break;
    case ATTN_SCORE_COSINE:
        fixed = (nq + nk) * dk * 3;
        per_cell += dk;
        break;
    default:
        per_cell += dk;
        break;
    }
    return cells * per_cell + fixed;
}

int attn_check_config(const AttnConfig *c, const AttnParams *p) {
    nn_clear_error();
    if ((unsigned)c->score >= ATTN_SCORE_COUNT)
        return nn_fail(NN_ERR_ARG, "score: unknown scoring function %d", (int)c->score);
    if ((unsigned)c->norm >= ATTN_NORM_COUNT)
        return nn_fail(NN_ERR_ARG, "normalize: unknown normalisation %d", (int)c->norm);
    NN_TRY(check_dim("queries: number of rows", c->n_q, ATTN_MAX_TOKENS));
    NN_TRY(check_dim("keys: number of rows", c->n_k, ATTN_MAX_TOKENS));
    NN_TRY(check_dim("queries: number of columns", c->d_q, ATTN_MAX_DIM));
    NN_TRY(check_dim("keys: number of columns", c->d_k, ATTN_MAX_DIM));
    NN_TRY(check_dim("values: number of columns", c->d_v, ATTN_MAX_DIM));
    if ((size_t)c->n_q * (size_t)c->n_k > ATTN_MAX_CELLS)
        return nn_fail(NN_ERR_LIMIT, "queries x keys: %d x %d cells is past the limit of %d", c->n_q,
                       c->n_k, ATTN_MAX_CELLS);
    if (!(c->temperature > 0) || !isfinite(c->temperature))
        return nn_fail(NN_ERR_VALUE, "temperature must be a finite number > 0 (got %g)",
                       (double)c->temperature);
    const char *name = score_names[c->score];
    switch (c->score) {
    case ATTN_SCORE_DOT:
    case ATTN_SCORE_SCALED_DOT:
    case ATTN_SCORE_COSINE:
        if (c->d_q != c->d_k)
            return nn_fail(NN_ERR_SHAPE,
                           "keys: score '%s' needs queries and keys of one size, got %d and %d columns",
                           name, c->d_q, c->d_k);
        if (c->score == ATTN_SCORE_COSINE && !isfinite(p->beta))
            return nn_fail(NN_ERR_VALUE, "params.beta must be finite (got %g)", (double)p->beta);
        break;
    case ATTN_SCORE_GENERAL:
        if (!p->W) return nn_fail(NN_ERR_PARAM, "params.W: score 'general' needs W (%d x %d)", c->d_q, c->d_k);
        NN_TRY(nn_check_finite("params.W", p->W, (size_t)c->d_q * c->d_k));
        break;
    case ATTN_SCORE_ADDITIVE:
        NN_TRY(check_dim("params: additive hidden size", c->hidden, ATTN_MAX_DIM));
        if (!p->Wq) return nn_fail(NN_ERR_PARAM, "params.Wq: score 'additive' needs Wq (%d x %d)", c->hidden, c->d_q);
        if (!p->Wk) return nn_fail(NN_ERR_PARAM, "params.Wk: score 'additive' needs Wk (%d x %d)", c->hidden, c->d_k);
        if (!p->v) return nn_fail(NN_ERR_PARAM, "params.v: score 'additive' needs v (length %d)", c->hidden);
        NN_TRY(nn_check_finite("params.Wq", p->Wq, (size_t)c->hidden * c->d_q));
        NN_TRY(nn_check_finite("params.Wk", p->Wk, (size_t)c->hidden * c->d_k));
        NN_TRY(nn_check_finite("params.v", p->v, (size_t)c->hidden));
        break;
    case ATTN_SCORE_LOCATION:
        if (!p->W) return nn_fail(NN_ERR_PARAM, "params.W: score 'location' needs W (%d x %d)", c->n_k, c->d_q);
        NN_TRY(nn_check_finite("params.W", p->W, (size_t)c->n_k * c->d_q));
        break;
    default:
        break;
    }
    if (attn_work(c) > ATTN_MAX_WORK)
        return nn_fail(NN_ERR_LIMIT,
                       "work: %d x %d cells with score '%s' take %.3g multiply-adds, past the limit of %.3g "
                       "(about a second); use fewer tokens or smaller vectors",
                       c->n_q, c->n_k, name, attn_work(c), (double)ATTN_MAX_WORK);
    if (c->key_lengths)
        for (int i = 0; i < c->n_q; i++)
            if (c->key_lengths[i] < 0 || c->key_lengths[i] > c->n_k)
                return nn_fail(NN_ERR_VALUE, "mask.keyLengths[%d] is %d; it must be within 0..%d", i,
                               (int)c->key_lengths[i], c->n_k);
    return NN_OK;
}

int attn_check(const AttnConfig *c, const AttnParams *p, const nn_real *q, const nn_real *k,
               const nn_real *v) {
    NN_TRY(attn_check_config(c, p));
    /* the JS API leaves these checks to here (one SIMD pass, not a JS loop) */
    NN_TRY(nn_check_finite_matrix("queries", q, c->n_q, c->d_q));
    NN_TRY(nn_check_finite_matrix("keys", k, c->n_k, c->d_k));
    NN_TRY(nn_check_finite_matrix("values", v, c->n_k, c->d_v));
    return NN_OK;
}

int attn_visible_keys(const AttnConfig *c, int i) {
    int L = c->n_k;
    if (c->causal && i + 1 < L) L = i + 1;
    if (c->key_lengths && c->key_lengths[i] < L) L = c->key_lengths[i];
    return L;
}

/* ---- scores --------------------------------------------------------------- */

/* u_i = x_i / |x_i| and norms_i = |x_i| for n rows of size d, computed on
 * x_i / max_a |x_ia| so that neither the squares of huge values (|x| above
 * ~1.8e19) overflow nor those of tiny ones (below ~1e-19) underflow: every
 * finite non-zero row gets its unit vector. A zero row gets u = 0, norm 0;
 * a norm past the float range is +inf (only ever a divisor). */
static void unit_rows(nn_real *u, nn_real *norms, const nn_real *x, int n, int d) {
    for (int i = 0; i < n; i++) {
        const nn_real *xi = x + (size_t)i * d;
        nn_real *ui = u + (size_t)i * d, s = 0;
        for (int a = 0; a < d; a++) s = fabs(xi[a]) > s ? fabs(xi[a]) : s;
        if (s == 0) {
            memset(ui, 0, sizeof(nn_real) * d);
            norms[i] = 0;
            continue;
        }
        for (int a = 0; a < d; a++) ui[a] = xi[a] / s;
        nn_real r = sqrt(vec_dot(ui, ui, d)); /* in [1, sqrt(d)] */
        vec_scale(ui, 1 / r, d);
        norms[i] = s * r;
    }
}

/* An operand to pack: vec_pack's arguments. */
typedef struct {
    nn_real *packed;
    const nn_real *B;
    int ld, N, K, transposed;
    nn_real scale;
} PackArgs;

/* Panels [first, last) of one operand. */
static void pack_panels(const PackArgs *a, int first, int last) {
    vec_pack_range(a->packed, a->B, a->ld, a->N, a->K, a->transposed, a->scale, first, last);
}

/* Work shared by all query rows: projections and norms; *keys is what the
 * score product's right operand packs from (K^T, Ku^T or W^T; none for
 * additive). Returns the left operand of the score product (Q, Qu or Q W),
 * NULL for additive. */
static const nn_real *scores_prepare(const AttnConfig *c, const AttnParams *p, const nn_real *q,
                                     const nn_real *k, nn_real *scratch, const ScratchLayout *L,
                                     PackArgs *keys) {
    int nq = c->n_q, nk = c->n_k, dq = c->d_q, dk = c->d_k, h = c->hidden;
    *keys = (PackArgs){scratch + L->pack_s, k, dk, nk, dk, 1, 1};
    switch (c->score) {
    case ATTN_SCORE_COSINE:
        /* e = beta Qu Ku^T on unit rows */
        unit_rows(scratch + L->proj_q, scratch + L->norms, q, nq, dq);
        unit_rows(scratch + L->proj_k, scratch + L->norms + nq, k, nk, dk);
        keys->B = scratch + L->proj_k;
        return scratch + L->proj_q;
    case ATTN_SCORE_DOT:
    case ATTN_SCORE_SCALED_DOT:
        /* e = Q (K / sqrt(d_k))^T: the scale rides on the packed keys (exact
         * when d_k is a power of 4, within a rounding otherwise) */
        if (c->score == ATTN_SCORE_SCALED_DOT) keys->scale = 1 / sqrt((nn_real)dk);
        return q;
    case ATTN_SCORE_GENERAL:
        /* e = (Q W) K^T */
        vec_gemm_nn(scratch + L->proj_q, dk, q, dq, p->W, dk, nq, dk, dq, 0);
        return scratch + L->proj_q;
    case ATTN_SCORE_LOCATION:
        /* e_i = W q_i, i.e. e = Q W^T with W (n_k, d_q) */
        *keys = (PackArgs){scratch + L->pack_s, p->W, dq, nk, dq, 1, 1};
        return q;
    case ATTN_SCORE_ADDITIVE:
        /* Pq = Q Wq^T, Pk = K Wk^T */
        vec_gemm_nt(scratch + L->proj_q, h, q, dq, p->Wq, dq, nq, h, dq, 0);
        vec_gemm_nt(scratch + L->proj_k, h, k, dk, p->Wk, dk, nk, h, dk, 0);
        keys->packed = NULL;
        return NULL;
    default:
        keys->packed = NULL;
        return NULL;
    }
}

/* The keys (transposed) and the values, packed once for every row block:
 * the panels of both split across the threads. */
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

/* Scores of query rows [i0, i1) against keys [0, nv) into e (i1 - i0, n_k);
 * a = scores_prepare(), t: the calling thread's tanh row (additive). */
static void scores_rows(const AttnConfig *c, const AttnParams *p, nn_real *e, const nn_real *a, int i0,
                        int i1, int nv, nn_real *t, nn_real *scratch, const ScratchLayout *L) {
    int nk = c->n_k, h = c->hidden;
    int kdim = c->score == ATTN_SCORE_GENERAL ? c->d_k : c->d_q, lda = kdim; /* a is (n_q, kdim) */
    if (c->score == ATTN_SCORE_ADDITIVE) {
        /* e_ij = v . tanh(Pq_i + Pk_j) */
        const nn_real *pq = scratch + L->proj_q, *pk = scratch + L->proj_k;
        for (int i = i0; i < i1; i++)
            for (int j = 0; j < nv; j++) {
                memcpy(t, pq + (size_t)i * h, sizeof(nn_real) * h);
                vec_axpy(t, 1, pk + (size_t)j * h, h);
                vec_tanh(t, t, h);
                e[(size_t)(i - i0) * nk + j] = vec_dot(p->v, t, h);
            }
        return;
    }
    vec_gemm_packed(e, nk, a + (size_t)i0 * lda, lda, scratch + L->pack_s, kdim, i1 - i0, nv,
                    kdim, 0);
    if (c->score == ATTN_SCORE_COSINE) {
        /* e_ij = beta cos_ij, the unit rows' dot product clamped to [-1, 1]
         * (rounding may take it just past); 0 when a row is zero */
        for (int i = i0; i < i1; i++)
            for (int j = 0; j < nv; j++) {
                nn_real *eij = e + (size_t)(i - i0) * nk + j;
                nn_real cij = *eij > 1 ? 1 : *eij < -1 ? -1 : *eij;
                *eij = p->beta * cij;
            }
    }
}

/* ---- backward, split across threads ---------------------------------------
 * Products go through gemm_parallel.h (C's rows split: one thread's result
 * exactly). Per-row work runs on row blocks interleaved over the threads;
 * a gradient summed over query rows either runs split over its own rows
 * (keys) or, for additive's dPk and dv, in per-thread partial buffers
 * reduced in thread order: deterministic for a given thread count. */

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
    int threads; /* threads the last region ran on */
} BackwardJob;

/* Rows [i0, i1) of one block on thread tid. */
typedef void (*BackwardRows)(BackwardJob *job, int i0, int i1, int tid);

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

/* fn over `rows` rows (n_q or n_k) in blocks split across threads; `work`
 * in multiply-adds decides whether the split is worth it. */
static void run_rows(BackwardJob *job, BackwardRows fn, int rows, double work) {
    RowsRegion r = {job, fn, rows};
    nn_pool_run(rows_task, &r, work);
}

/* One backward per score: each accumulates input and parameter gradients
 * from ds = dL/de (n_q, n_k), which it may overwrite. */

/* e = Q K^T [/ sqrt(d_k)] (the scale applied to dE by normalise_backward_rows):
 * dQ += dE K, dK += dE^T Q */
static void dot_backward(const AttnConfig *c, nn_real *dq, nn_real *dk, nn_real *ds, const nn_real *q,
                         const nn_real *k) {
    int nq = c->n_q, nk = c->n_k, dqn = c->d_q, dkn = c->d_k, m = 0;
    VecGemm g[2] = {{0}};
    if (dq) g[m++] = (VecGemm){VEC_GEMM_NN, dq, dqn, ds, nk, k, dkn, nq, dqn, nk, 1};
    if (dk) g[m++] = (VecGemm){VEC_GEMM_TN, dk, dkn, ds, nk, q, dqn, nk, dkn, nq, 1};
    vec_gemm_parallel(g, m);
}

/* e_ij = beta c_ij, c_ij = u_i . w_j with unit rows u_i = q_i / n_i,
 * w_j = k_j / m_j (a zero row has u = 0, n = 0). With x_ij = dE_ij c_ij,
 * s_i = sum_j x_ij, t_j = sum_i x_ij:
 * dbeta = sum_i s_i;
 * dq_i += beta (sum_j dE_ij w_j - s_i u_i) / n_i, i.e. beta ((dE W)_i - s_i u_i) / n_i;
 * dk_j += beta (sum_i dE_ij u_i - t_j w_j) / m_j, i.e. beta ((dE^T U)_j - t_j w_j) / m_j.
 * Everything is in unit rows, so no product of norms can overflow. */
static void cosine_x_rows(BackwardJob *job, int i0, int i1, int tid) {
    (void)tid;
    const AttnConfig *c = job->c;
    int nk = c->n_k;
    nn_real *x = job->scratch + job->L->grad_c, *s = job->scratch + job->L->grad_q;
    for (int i = i0; i < i1; i++) {
        nn_real *xi = x + (size_t)i * nk, sum = 0;
        const nn_real *di = job->ds + (size_t)i * nk;
        for (int j = 0; j < nk; j++) {
            xi[j] *= di[j];
            sum += xi[j];
        }
        s[i] = sum;
    }
}

static void cosine_dq_rows(BackwardJob *job, int i0, int i1, int tid) {
    (void)tid;
    const AttnConfig *c = job->c;
    const ScratchLayout *L = job->L;
    int d = c->d_q, nq = c->n_q, nk = c->n_k;
    const nn_real *u = job->scratch + L->proj_q, *norms = job->scratch + L->norms;
    const nn_real *s = job->scratch + L->grad_q, *dw = s + nq + nk; /* dE W */
    for (int i = i0; i < i1; i++) {
        if (!(norms[i] > 0)) continue;
        nn_real *dqi = job->dq + (size_t)i * d, a = job->p->beta / norms[i];
        vec_axpy(dqi, a, dw + (size_t)i * d, d);
        vec_axpy(dqi, -a * s[i], u + (size_t)i * d, d);
    }
}

/* key rows [j0, j1): t_j, then dk_j */
static void cosine_dk_rows(BackwardJob *job, int j0, int j1, int tid) {
    (void)tid;
    const AttnConfig *c = job->c;
    const ScratchLayout *L = job->L;
    int d = c->d_k, nq = c->n_q, nk = c->n_k;
    const nn_real *w = job->scratch + L->proj_k, *norms = job->scratch + L->norms + nq;
    const nn_real *x = job->scratch + L->grad_c, *dtu = job->scratch + L->grad_q + nq + nk + (size_t)nq * d;
    nn_real *t = job->scratch + L->grad_q + nq;
    for (int j = j0; j < j1; j++) {
        nn_real sum = 0;
        for (int i = 0; i < nq; i++) sum += x[(size_t)i * nk + j];
        t[j] = sum;
        if (!(norms[j] > 0)) continue;
        nn_real *dkj = job->dk + (size_t)j * d, a = job->p->beta / norms[j];
        vec_axpy(dkj, a, dtu + (size_t)j * d, d);
        vec_axpy(dkj, -a * sum, w + (size_t)j * d, d);
    }
}

static void cosine_backward(BackwardJob *job) {
    const AttnConfig *c = job->c;
    const ScratchLayout *L = job->L;
    int nq = c->n_q, nk = c->n_k, d = c->d_q;
    nn_real *scratch = job->scratch, *u = scratch + L->proj_q, *w = scratch + L->proj_k;
    nn_real *s = scratch + L->grad_q, *dw = s + nq + nk, *dtu = dw + (size_t)nq * d;
    unit_rows(u, scratch + L->norms, job->q, nq, d);
    unit_rows(w, scratch + L->norms + nq, job->k, nk, d);
    double cells = (double)nq * nk;
    const VecGemm cosines = {VEC_GEMM_NT, scratch + L->grad_c, nk, u, d, w, d, nq, nk, d, 0}; /* c = U W^T */
    vec_gemm_parallel(&cosines, 1);
    run_rows(job, cosine_x_rows, nq, cells);
    VecGemm g[2] = {{0}};
    int m = 0;
    if (job->dq) g[m++] = (VecGemm){VEC_GEMM_NN, dw, d, job->ds, nk, w, d, nq, d, nk, 0};
    if (job->dk) g[m++] = (VecGemm){VEC_GEMM_TN, dtu, d, job->ds, nk, u, d, nk, d, nq, 0};
    vec_gemm_parallel(g, m);
    if (job->dq) run_rows(job, cosine_dq_rows, nq, cells);
    if (job->dk) run_rows(job, cosine_dk_rows, nk, cells);
    if (job->g) {
        nn_real dbeta = 0;
        for (int i = 0; i < nq; i++) dbeta += s[i];
        job->g->beta += dbeta;
    }
}

/* e = (Q W) K^T: d(QW) = dE K, dK += dE^T (QW), dQ += d(QW) W^T, dW += Q^T d(QW) */
static void general_backward(const AttnConfig *c, const AttnParams *p, AttnParamGrads *g, nn_real *dq, nn_real *dk,
                             const nn_real *ds, const nn_real *q, const nn_real *k, nn_real *scratch,
                             const ScratchLayout *L) {
    int nq = c->n_q, nk = c->n_k, dqn = c->d_q, dkn = c->d_k;
    nn_real *qw = scratch + L->proj_q, *dqw = scratch + L->grad_q;
    const VecGemm first[2] = {{VEC_GEMM_NN, qw, dkn, q, dqn, p->W, dkn, nq, dkn, dqn, 0},
                              {VEC_GEMM_NN, dqw, dkn, ds, nk, k, dkn, nq, dkn, nk, 0}};
    vec_gemm_parallel(first, 2);
    VecGemm then[3] = {{0}};
    int m = 0;
    if (dk) then[m++] = (VecGemm){VEC_GEMM_TN, dk, dkn, ds, nk, qw, dkn, nk, dkn, nq, 1};
    if (dq) then[m++] = (VecGemm){VEC_GEMM_NT, dq, dqn, dqw, dkn, p->W, dkn, nq, dqn, dkn, 1};
    if (g && g->W) then[m++] = (VecGemm){VEC_GEMM_TN, g->W, dkn, q, dqn, dqw, dkn, dqn, dkn, nq, 1};
    vec_gemm_parallel(then, m);
}

/* e_ij = v . t_ij, t_ij = tanh(Pq_i + Pk_j):
 * dv += dE_ij t_ij; du = dE_ij v (1 - t^2); dPq_i += du; dPk_j += du;
 * Pq = Q Wq^T: dQ += dPq Wq, dWq += dPq^T Q (same for K).
 * Query rows split across threads: dPq_i is the row's own; thread 0 adds
 * dPk and dv in place, thread t > 0 into its partials (additive_partials). */
static void additive_partials(const BackwardJob *job, int tid, nn_real **dpk, nn_real **gv) {
    const ScratchLayout *L = job->L;
    size_t nk = (size_t)job->c->n_k, h = (size_t)job->c->hidden, others = (size_t)nn_pool_threads() - 1;
    nn_real *part = job->scratch + L->grad_part;
    *dpk = tid == 0 ? job->scratch + L->grad_q + (size_t)job->c->n_q * h : part + (size_t)(tid - 1) * nk * h;
    *gv = !job->g || !job->g->v ? NULL : tid == 0 ? job->g->v : part + others * nk * h + (size_t)(tid - 1) * h;
}

static void additive_rows(BackwardJob *job, int i0, int i1, int tid) {
    const AttnConfig *c = job->c;
    const ScratchLayout *L = job->L;
    int nk = c->n_k, h = c->hidden;
    const nn_real *pq = job->scratch + L->proj_q, *pk = job->scratch + L->proj_k, *v = job->p->v;
    nn_real *t = job->scratch + L->hid + (size_t)tid * h, *dpq = job->scratch + L->grad_q, *dpk, *gv;
    additive_partials(job, tid, &dpk, &gv);
    for (int i = i0; i < i1; i++)
        for (int j = 0; j < nk; j++) {
            nn_real d = job->ds[(size_t)i * nk + j];
            if (d == 0) continue;
            memcpy(t, pq + (size_t)i * h, sizeof(nn_real) * h);
            vec_axpy(t, 1, pk + (size_t)j * h, h);
            vec_tanh(t, t, h);
            if (gv) vec_axpy(gv, d, t, h);
            for (int u = 0; u < h; u++) t[u] = d * v[u] * (1 - t[u] * t[u]);
            vec_axpy(dpq + (size_t)i * h, 1, t, h);
            vec_axpy(dpk + (size_t)j * h, 1, t, h);
        }
}

static void additive_backward(BackwardJob *job) {
    const AttnConfig *c = job->c;
    const AttnParams *p = job->p;
    AttnParamGrads *g = job->g;
    const ScratchLayout *L = job->L;
    int nq = c->n_q, nk = c->n_k, dqn = c->d_q, dkn = c->d_k, h = c->hidden;
    nn_real *scratch = job->scratch, *pq = scratch + L->proj_q, *pk = scratch + L->proj_k;
    nn_real *dpq = scratch + L->grad_q, *dpk = dpq + (size_t)nq * h;
    size_t others = (size_t)nn_pool_threads() - 1;
    const VecGemm proj[2] = {{VEC_GEMM_NT, pq, h, job->q, dqn, p->Wq, dqn, nq, h, dqn, 0},
                             {VEC_GEMM_NT, pk, h, job->k, dkn, p->Wk, dkn, nk, h, dkn, 0}};
    vec_gemm_parallel(proj, 2);
    memset(dpq, 0, sizeof(nn_real) * (size_t)(nq + nk) * h);
    memset(scratch + L->grad_part, 0, sizeof(nn_real) * others * ((size_t)nk * h + h));
    run_rows(job, additive_rows, nq, (double)nq * nk * h * ATTN_TANH_WORK);
    for (int tid = 1; tid < job->threads; tid++) { /* in thread order */
        nn_real *part_pk, *part_v;
        additive_partials(job, tid, &part_pk, &part_v);
        vec_axpy(dpk, 1, part_pk, nk * h);
        if (part_v) vec_axpy(g->v, 1, part_v, h);
    }
    VecGemm grads[4] = {{0}};
    int m = 0;
    if (job->dq) grads[m++] = (VecGemm){VEC_GEMM_NN, job->dq, dqn, dpq, h, p->Wq, dqn, nq, dqn, h, 1};
    if (job->dk) grads[m++] = (VecGemm){VEC_GEMM_NN, job->dk, dkn, dpk, h, p->Wk, dkn, nk, dkn, h, 1};
    if (g && g->Wq) grads[m++] = (VecGemm){VEC_GEMM_TN, g->Wq, dqn, dpq, h, job->q, dqn, h, dqn, nq, 1};
    if (g && g->Wk) grads[m++] = (VecGemm){VEC_GEMM_TN, g->Wk, dkn, dpk, h, job->k, dkn, h, dkn, nk, 1};
    vec_gemm_parallel(grads, m);
}

/* e = Q W^T: dQ += dE W, dW += dE^T Q */
static void location_backward(const AttnConfig *c, const AttnParams *p, AttnParamGrads *g, nn_real *dq,
                              const nn_real *ds, const nn_real *q) {
    int nq = c->n_q, nk = c->n_k, dqn = c->d_q, m = 0;
    VecGemm prods[2] = {{0}};
    if (dq) prods[m++] = (VecGemm){VEC_GEMM_NN, dq, dqn, ds, nk, p->W, dqn, nq, dqn, nk, 1};
    if (g && g->W) prods[m++] = (VecGemm){VEC_GEMM_TN, g->W, dqn, ds, nk, q, dqn, nk, dqn, nq, 1};
    vec_gemm_parallel(prods, m);
}

/* Dispatches job->ds = dL/de to the score's backward. */
static void scores_backward(BackwardJob *job) {
    const AttnConfig *c = job->c;
    switch (c->score) {
    case ATTN_SCORE_DOT:
    case ATTN_SCORE_SCALED_DOT: dot_backward(c, job->dq, job->dk, job->ds, job->q, job->k); break;
    case ATTN_SCORE_COSINE: cosine_backward(job); break;
    case ATTN_SCORE_GENERAL:
        general_backward(c, job->p, job->g, job->dq, job->dk, job->ds, job->q, job->k, job->scratch, job->L);
        break;
    case ATTN_SCORE_ADDITIVE: additive_backward(job); break;
    case ATTN_SCORE_LOCATION: location_backward(c, job->p, job->g, job->dq, job->ds, job->q); break;
    default: break;
    }
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
 * then, for scaled_dot (e = q.k / sqrt(d_k)), de is scaled by 1 / sqrt(d_k). */
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
        if (c->score == ATTN_SCORE_SCALED_DOT) vec_scale(dr, 1 / sqrt((nn_real)c->d_k), Lv);
    }
}

/* ---- the whole op -------------------------------------------------------- */

/* What every thread of a forward reads: the call, its prepared operands, the
 * first failing row block of each thread (-1: none). */
typedef struct {
    const AttnConfig *c;
    const AttnParams *p;
    nn_real *scores, *weights, *context, *scratch;
    const nn_real *a; /* scores_prepare() */
    const ScratchLayout *L;
    int threads; /* threads the region ran on */
    int next;    /* the next row block to take */
    int failed[NN_MAX_THREADS];
} ForwardJob;

/* Row block b (forward_block_rows) on thread tid. Keys past the
 * block's last visible key are neither scored nor summed (causal masks halve
 * the work). */
static int forward_block(const ForwardJob *job, int b, int tid) {
    const AttnConfig *c = job->c;
    const ScratchLayout *L = job->L;
    nn_real *scratch = job->scratch;
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
    nn_real *t = scratch + L->hid + (size_t)tid * (c->hidden > 0 ? c->hidden : 0);
    nn_real inv[ATTN_ROW_BLOCK_LONG]; /* 1 / sum of each row's softmax numerators */
    nn_real *z = job->context + (size_t)i0 * dv;
    scores_rows(c, job->p, e, job->a, i0, i1, nv, t, scratch, L);
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
    int blocks = forward_blocks(job->c);
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
    ScratchLayout L = scratch_layout(c);
    ForwardJob job = {c, p, scores, weights, context, scratch, NULL, &L, 1, 0, {0}};
    PackJob pack = {{0}, {scratch + L.pack_v, v, c->d_v, c->d_v, c->n_k, 0, 1}};
    job.a = scores_prepare(c, p, q, k, scratch, &L, &pack.keys);
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
    ScratchLayout L = scratch_layout(c);
    int nq = c->n_q, nk = c->n_k, dvn = c->d_v;
    BackwardJob job = {c, p, g, dq, dk, scratch + L.grad_s, dweights, scores, weights, q, k, scratch, &L, 1};
    /* Z = A V: dA = dZ V^T (+ dweights), dV += A^T dZ */
    const VecGemm first[2] = {{VEC_GEMM_NT, job.ds, nk, dcontext, dvn, v, dvn, nq, nk, dvn, 0},
                              {VEC_GEMM_TN, dv, dvn, weights, nk, dcontext, dvn, nk, dvn, nq, 1}};
    vec_gemm_parallel(first, dv ? 2 : 1);
    run_rows(&job, normalise_backward_rows, nq, (double)nq * nk * 4);
    scores_backward(&job);
    return NN_OK;
}
