/* The scoring functions e_ij = score(q_i, k_j), one table entry each (see
 * scores.h): checks, work, scratch, then the forward and the backward side by
 * side. The hooks run once per call or per row block; the loops over cells
 * are inside them. */
#include <math.h>
#include <string.h>

#include "base/error.h"
#include "base/pool.h"
#include "core/gemm_parallel.h"
#include "core/scores.h"
#include "core/vec.h"

/* ---- shared by the product scores --------------------------------------- */

/* dot, scaled_dot and cosine compare queries and keys of one size. */
static int check_same_size(const AttnConfig *c, const AttnParams *p) {
    (void)p;
    if (c->d_q != c->d_k)
        return nn_fail(NN_ERR_SHAPE, "keys: score '%s' needs queries and keys of one size, got %d and %d columns",
                       attn_score_ops[c->score].name, c->d_q, c->d_k);
    return NN_OK;
}

/* e = A B: a product of d_k per cell */
static void work_dk(const AttnConfig *c, double *per_cell, double *fixed) {
    (void)fixed;
    *per_cell += c->d_k;
}

/* q_i . k_j: every partial sum is below d_k max|q| max|k| (scaled_dot's
 * packed keys k / sqrt(d_k) are no larger than k) */
static double dot_bound(const AttnConfig *c, const AttnParams *p, double mq, double mk) {
    (void)p;
    return c->d_k * mq * mk;
}

/* The packed keys K^T (n_k panels of d_k) alone. */
static void scratch_keys(const AttnConfig *c, size_t threads, ScoreScratch *s) {
    (void)threads;
    s->pack_s = vec_packed_size(c->n_k, c->d_k);
}

/* e = A B with A = f->a (n_q, kdim) and B packed in f->keys: rows [i0, i1)
 * against keys [0, nv). */
static void product_rows(const ScoreForward *f, nn_real *e, int i0, int i1, int nv, int tid) {
    (void)tid;
    int kdim = f->kdim; /* f->a is (n_q, kdim) */
    vec_gemm_packed(e, f->c->n_k, f->a + (size_t)i0 * kdim, kdim, f->scratch + f->L->pack_s, kdim, i1 - i0, nv,
                    kdim, 0);
}

/* ---- dot: e = Q K^T; scaled_dot: e = Q K^T / sqrt(d_k) ------------------- */

/* e = Q (K / sqrt(d_k))^T: the scale rides on the packed keys (exact when d_k
 * is a power of 4, within a rounding otherwise) */
static void dot_prepare(ScoreForward *f, const nn_real *q, const nn_real *k) {
    const AttnConfig *c = f->c;
    f->a = q;
    f->kdim = c->d_q;
    f->keys = (PackArgs){f->scratch + f->L->pack_s, k, c->d_k, c->n_k, c->d_k, 1, 1};
    if (c->score == ATTN_SCORE_SCALED_DOT) f->keys.scale = 1 / sqrt((nn_real)c->d_k);
}

/* scaled_dot's 1 / sqrt(d_k), applied to dE by normalise_backward_rows */
static nn_real scaled_dot_ds_scale(const AttnConfig *c) { return 1 / sqrt((nn_real)c->d_k); }

/* e = Q K^T [/ sqrt(d_k)] (the scale already applied to dE): dQ += dE K, dK += dE^T Q */
static void dot_backward(BackwardJob *job) {
    const AttnConfig *c = job->c;
    int nq = c->n_q, nk = c->n_k, dqn = c->d_q, dkn = c->d_k, m = 0;
    VecGemm g[2] = {{0}};
    if (job->dq) g[m++] = (VecGemm){VEC_GEMM_NN, job->dq, dqn, job->ds, nk, job->k, dkn, nq, dqn, nk, 1};
    if (job->dk) g[m++] = (VecGemm){VEC_GEMM_TN, job->dk, dkn, job->ds, nk, job->q, dqn, nk, dkn, nq, 1};
    vec_gemm_parallel(g, m);
}

/* ---- general: e = (Q W) K^T, W (d_q, d_k) --------------------------------- */

static int general_check(const AttnConfig *c, const AttnParams *p) {
    if (!p->W) return nn_fail(NN_ERR_PARAM, "params.W: score 'general' needs W (%d x %d)", c->d_q, c->d_k);
    return nn_check_finite("params.W", p->W, (size_t)c->d_q * c->d_k);
}

static void general_work(const AttnConfig *c, double *per_cell, double *fixed) {
    *fixed += (double)c->n_q * c->d_q * c->d_k;
    *per_cell += c->d_k;
}

/* Q W, then (Q W) . k_j */
static double general_bound(const AttnConfig *c, const AttnParams *p, double mq, double mk) {
    double qw = c->d_q * mq * vec_max_abs(p->W, (size_t)c->d_q * c->d_k);
    return fmax(qw, c->d_k * qw * mk);
}

static void general_scratch(const AttnConfig *c, size_t threads, ScoreScratch *s) {
    scratch_keys(c, threads, s);
    s->proj_q = (size_t)c->n_q * c->d_k;
    s->grad_q = (size_t)c->n_q * c->d_k;
}

static void general_prepare(ScoreForward *f, const nn_real *q, const nn_real *k) {
    const AttnConfig *c = f->c;
    nn_real *qw = f->scratch + f->L->proj_q;
    vec_gemm_nn(qw, c->d_k, q, c->d_q, f->p->W, c->d_k, c->n_q, c->d_k, c->d_q, 0);
    f->a = qw;
    f->kdim = c->d_k;
    f->keys = (PackArgs){f->scratch + f->L->pack_s, k, c->d_k, c->n_k, c->d_k, 1, 1};
}

/* e = (Q W) K^T: d(QW) = dE K, dK += dE^T (QW), dQ += d(QW) W^T, dW += Q^T d(QW) */
static void general_backward(BackwardJob *job) {
    const AttnConfig *c = job->c;
    const nn_real *W = job->p->W, *ds = job->ds, *q = job->q, *k = job->k;
    AttnParamGrads *g = job->g;
    int nq = c->n_q, nk = c->n_k, dqn = c->d_q, dkn = c->d_k;
    nn_real *qw = job->scratch + job->L->proj_q, *dqw = job->scratch + job->L->grad_q;
    const VecGemm first[2] = {{VEC_GEMM_NN, qw, dkn, q, dqn, W, dkn, nq, dkn, dqn, 0},
                              {VEC_GEMM_NN, dqw, dkn, ds, nk, k, dkn, nq, dkn, nk, 0}};
    vec_gemm_parallel(first, 2);
    VecGemm then[3] = {{0}};
    int m = 0;
    if (job->dk) then[m++] = (VecGemm){VEC_GEMM_TN, job->dk, dkn, ds, nk, qw, dkn, nk, dkn, nq, 1};
    if (job->dq) then[m++] = (VecGemm){VEC_GEMM_NT, job->dq, dqn, dqw, dkn, W, dkn, nq, dqn, dkn, 1};
    if (g && g->W) then[m++] = (VecGemm){VEC_GEMM_TN, g->W, dkn, q, dqn, dqw, dkn, dqn, dkn, nq, 1};
    vec_gemm_parallel(then, m);
}

/* ---- location: e_i = W q_i, i.e. e = Q W^T with W (n_k, d_q) -------------- */

static int location_check(const AttnConfig *c, const AttnParams *p) {
    if (!p->W) return nn_fail(NN_ERR_PARAM, "params.W: score 'location' needs W (%d x %d)", c->n_k, c->d_q);
    return nn_check_finite("params.W", p->W, (size_t)c->n_k * c->d_q);
}

static void location_work(const AttnConfig *c, double *per_cell, double *fixed) {
    (void)fixed;
    *per_cell += c->d_q;
}

static double location_bound(const AttnConfig *c, const AttnParams *p, double mq, double mk) {
    (void)mk;
    return c->d_q * mq * vec_max_abs(p->W, (size_t)c->n_k * c->d_q);
}

static void location_scratch(const AttnConfig *c, size_t threads, ScoreScratch *s) {
    (void)threads;
    s->pack_s = vec_packed_size(c->n_k, c->d_q);
}

static void location_prepare(ScoreForward *f, const nn_real *q, const nn_real *k) {
    (void)k; /* keys unused */
    const AttnConfig *c = f->c;
    f->a = q;
    f->kdim = c->d_q;
    f->keys = (PackArgs){f->scratch + f->L->pack_s, f->p->W, c->d_q, c->n_k, c->d_q, 1, 1};
}

/* e = Q W^T: dQ += dE W, dW += dE^T Q */
static void location_backward(BackwardJob *job) {
    const AttnConfig *c = job->c;
    AttnParamGrads *g = job->g;
    int nq = c->n_q, nk = c->n_k, dqn = c->d_q, m = 0;
    VecGemm prods[2] = {{0}};
    if (job->dq) prods[m++] = (VecGemm){VEC_GEMM_NN, job->dq, dqn, job->ds, nk, job->p->W, dqn, nq, dqn, nk, 1};
    if (g && g->W) prods[m++] = (VecGemm){VEC_GEMM_TN, g->W, dqn, job->ds, nk, job->q, dqn, nk, dqn, nq, 1};
    vec_gemm_parallel(prods, m);
}

/* ---- cosine: e_ij = beta q_i . k_j / (|q_i| |k_j|), 0 when a norm is 0 ---- */

static int cosine_check(const AttnConfig *c, const AttnParams *p) {
    NN_TRY(check_same_size(c, p));
    if (!isfinite(p->beta)) return nn_fail(NN_ERR_VALUE, "params.beta must be finite (got %g)", (double)p->beta);
    return NN_OK;
}

static void cosine_work(const AttnConfig *c, double *per_cell, double *fixed) {
    *fixed += ((double)c->n_q + c->n_k) * c->d_k * 3;
    *per_cell += c->d_k;
}

/* unit rows of any finite vectors, cosines clamped to [-1, 1] */
static double cosine_bound(const AttnConfig *c, const AttnParams *p, double mq, double mk) {
    (void)c, (void)mq, (void)mk;
    return fabs(p->beta);
}

static void cosine_scratch(const AttnConfig *c, size_t threads, ScoreScratch *s) {
    size_t nq = (size_t)c->n_q, nk = (size_t)c->n_k, dk = (size_t)c->d_k;
    scratch_keys(c, threads, s);
    s->proj_q = nq * dk;
    s->proj_k = nk * dk;
    s->norms = nq + nk;
    s->grad_q = nq + nk + (nq + nk) * dk;
    s->grad_c = nq * nk;
}

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

/* e = beta Qu Ku^T on unit rows */
static void cosine_prepare(ScoreForward *f, const nn_real *q, const nn_real *k) {
    const AttnConfig *c = f->c;
    const ScratchLayout *L = f->L;
    nn_real *qu = f->scratch + L->proj_q, *ku = f->scratch + L->proj_k;
    unit_rows(qu, f->scratch + L->norms, q, c->n_q, c->d_q);
    unit_rows(ku, f->scratch + L->norms + c->n_q, k, c->n_k, c->d_k);
    f->a = qu;
    f->kdim = c->d_q;
    f->keys = (PackArgs){f->scratch + L->pack_s, ku, c->d_k, c->n_k, c->d_k, 1, 1};
}

/* e_ij = beta cos_ij, the unit rows' dot product clamped to [-1, 1]
 * (rounding may take it just past); 0 when a row is zero */
static void cosine_rows(const ScoreForward *f, nn_real *e, int i0, int i1, int nv, int tid) {
    int nk = f->c->n_k;
    nn_real beta = f->p->beta;
    product_rows(f, e, i0, i1, nv, tid);
    for (int i = i0; i < i1; i++)
        for (int j = 0; j < nv; j++) {
            nn_real *eij = e + (size_t)(i - i0) * nk + j;
            nn_real cij = *eij > 1 ? 1 : *eij < -1 ? -1 : *eij;
            *eij = beta * cij;
        }
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
    attn_run_rows(job, cosine_x_rows, nq, cells);
    VecGemm g[2] = {{0}};
    int m = 0;
    if (job->dq) g[m++] = (VecGemm){VEC_GEMM_NN, dw, d, job->ds, nk, w, d, nq, d, nk, 0};
    if (job->dk) g[m++] = (VecGemm){VEC_GEMM_TN, dtu, d, job->ds, nk, u, d, nk, d, nq, 0};
    vec_gemm_parallel(g, m);
    if (job->dq) attn_run_rows(job, cosine_dq_rows, nq, cells);
    if (job->dk) attn_run_rows(job, cosine_dk_rows, nk, cells);
    if (job->g) {
        nn_real dbeta = 0;
        for (int i = 0; i < nq; i++) dbeta += s[i];
        job->g->beta += dbeta;
    }
}

/* ---- additive: e_ij = v . tanh(Pq_i + Pk_j), Pq = Q Wq^T, Pk = K Wk^T ----- */

static int additive_check(const AttnConfig *c, const AttnParams *p) {
    NN_TRY(attn_check_dim("params: additive hidden size", c->hidden, ATTN_MAX_DIM));
    if (!p->Wq) return nn_fail(NN_ERR_PARAM, "params.Wq: score 'additive' needs Wq (%d x %d)", c->hidden, c->d_q);
    if (!p->Wk) return nn_fail(NN_ERR_PARAM, "params.Wk: score 'additive' needs Wk (%d x %d)", c->hidden, c->d_k);
    if (!p->v) return nn_fail(NN_ERR_PARAM, "params.v: score 'additive' needs v (length %d)", c->hidden);
    NN_TRY(nn_check_finite("params.Wq", p->Wq, (size_t)c->hidden * c->d_q));
    NN_TRY(nn_check_finite("params.Wk", p->Wk, (size_t)c->hidden * c->d_k));
    return nn_check_finite("params.v", p->v, (size_t)c->hidden);
}

/* h tanh units per cell, each worth ATTN_TANH_WORK; the projections once */
static void additive_work(const AttnConfig *c, double *per_cell, double *fixed) {
    double h = c->hidden > 0 ? c->hidden : 0;
    *fixed += ((double)c->n_q * c->d_q + (double)c->n_k * c->d_k) * h;
    *per_cell += h * ATTN_TANH_WORK;
}

/* the pre-activations Pq_i + Pk_j, then v . tanh(...) with |tanh| <= 1 */
static double additive_bound(const AttnConfig *c, const AttnParams *p, double mq, double mk) {
    size_t h = (size_t)c->hidden;
    double pre = c->d_q * mq * vec_max_abs(p->Wq, h * c->d_q) + c->d_k * mk * vec_max_abs(p->Wk, h * c->d_k);
    return fmax(pre, (double)h * vec_max_abs(p->v, h));
}

static void additive_scratch(const AttnConfig *c, size_t threads, ScoreScratch *s) {
    size_t nq = (size_t)c->n_q, nk = (size_t)c->n_k, h = (size_t)(c->hidden > 0 ? c->hidden : 0);
    s->proj_q = nq * h;
    s->proj_k = nk * h;
    s->hid = threads * h;
    s->grad_q = (nq + nk) * h;
    s->grad_part = (threads - 1) * (nk * h + h);
}

/* Pq = Q Wq^T, Pk = K Wk^T; no product to pack */
static void additive_prepare(ScoreForward *f, const nn_real *q, const nn_real *k) {
    const AttnConfig *c = f->c;
    int h = c->hidden;
    vec_gemm_nt(f->scratch + f->L->proj_q, h, q, c->d_q, f->p->Wq, c->d_q, c->n_q, h, c->d_q, 0);
    vec_gemm_nt(f->scratch + f->L->proj_k, h, k, c->d_k, f->p->Wk, c->d_k, c->n_k, h, c->d_k, 0);
    f->a = NULL;
    f->kdim = 0;
    f->keys = (PackArgs){0};
}

/* e_ij = v . tanh(Pq_i + Pk_j), in the calling thread's tanh row t */
static void additive_rows(const ScoreForward *f, nn_real *e, int i0, int i1, int nv, int tid) {
    int nk = f->c->n_k, h = f->c->hidden;
    const nn_real *pq = f->scratch + f->L->proj_q, *pk = f->scratch + f->L->proj_k, *v = f->p->v;
    nn_real *t = f->scratch + f->L->hid + (size_t)tid * h;
    for (int i = i0; i < i1; i++)
        for (int j = 0; j < nv; j++) {
            memcpy(t, pq + (size_t)i * h, sizeof(nn_real) * h);
            vec_axpy(t, 1, pk + (size_t)j * h, h);
            vec_tanh(t, t, h);
            e[(size_t)(i - i0) * nk + j] = vec_dot(v, t, h);
        }
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

static void additive_grad_rows(BackwardJob *job, int i0, int i1, int tid) {
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
    attn_run_rows(job, additive_grad_rows, nq, (double)nq * nk * h * ATTN_TANH_WORK);
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

/* ---- the table ------------------------------------------------------------ */

const AttnScoreOps attn_score_ops[ATTN_SCORE_COUNT] = {
    [ATTN_SCORE_DOT] = {"dot", check_same_size, work_dk, dot_bound, scratch_keys, dot_prepare, product_rows, NULL,
                        dot_backward},
    [ATTN_SCORE_SCALED_DOT] = {"scaled_dot", check_same_size, work_dk, dot_bound, scratch_keys, dot_prepare,
                               product_rows, scaled_dot_ds_scale, dot_backward},
    [ATTN_SCORE_GENERAL] = {"general", general_check, general_work, general_bound, general_scratch, general_prepare,
                            product_rows, NULL, general_backward},
    [ATTN_SCORE_ADDITIVE] = {"additive", additive_check, additive_work, additive_bound, additive_scratch,
                             additive_prepare, additive_rows, NULL, additive_backward},
    [ATTN_SCORE_COSINE] = {"cosine", cosine_check, cosine_work, cosine_bound, cosine_scratch, cosine_prepare,
                           cosine_rows, NULL, cosine_backward},
    [ATTN_SCORE_LOCATION] = {"location", location_check, location_work, location_bound, location_scratch,
                             location_prepare, product_rows, NULL, location_backward},
};
