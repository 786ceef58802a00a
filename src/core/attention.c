/* Attention between queries and keys: scores, normalisation, masks, context
 * vectors; forward and backward side by side. */
#include <math.h>
#include <string.h>

#include "attnlab/attention.h"
#include "base/error.h"
#include "base/layout.h"
#include "core/vec.h"

static const char *const score_names[ATTN_SCORE_COUNT] = {
    "dot", "scaled_dot", "general", "additive", "cosine", "location"};

/* Query rows go in blocks of ATTN_ROW_BLOCK: a block's scores are still in
 * cache when they are normalised and multiplied by V. */
#define ATTN_ROW_BLOCK 16

/* ---- scratch layout: one table drives the size and the offsets ----------- */

typedef struct {
    size_t proj_q; /* general: Q W (n_q, d_k) | additive: Q Wq^T (n_q, h) */
    size_t proj_k; /* additive: K Wk^T (n_k, h) */
    size_t norms;  /* cosine: |q_i| (n_q) then |k_j| (n_k) */
    size_t hid;    /* additive: one tanh row (h) */
    size_t pack_s; /* forward: packed K^T (dot, scaled_dot, cosine, general) or W^T (location) */
    size_t pack_v; /* forward: packed V */
    size_t block_s, block_w; /* forward without score / weight outputs: one row block of each */
    size_t forward; /* reals the forward needs: everything above */
    size_t grad_s; /* backward: dL/dscores (n_q, n_k) */
    size_t grad_q; /* backward: d(Q W) | d(Q Wq^T), d(K Wk^T) | cosine norm terms */
    size_t total;
} ScratchLayout;

static ScratchLayout scratch_layout(const AttnConfig *c) {
    size_t nq = (size_t)c->n_q, nk = (size_t)c->n_k, dk = (size_t)c->d_k, h = (size_t)(c->hidden > 0 ? c->hidden : 0);
    int general = c->score == ATTN_SCORE_GENERAL, additive = c->score == ATTN_SCORE_ADDITIVE;
    int cosine = c->score == ATTN_SCORE_COSINE, location = c->score == ATTN_SCORE_LOCATION;
    NnLayout l = {0};
    ScratchLayout s;
    s.proj_q = nn_layout_take(&l, general ? nq * dk : additive ? nq * h : 0);
    s.proj_k = nn_layout_take(&l, additive ? nk * h : 0);
    s.norms = nn_layout_take(&l, cosine ? nq + nk : 0);
    s.hid = nn_layout_take(&l, additive ? h : 0);
    s.pack_s = nn_layout_take(&l, location ? vec_packed_size(c->n_k, c->d_q)
                                  : additive ? 0 : vec_packed_size(c->n_k, c->d_k));
    s.pack_v = nn_layout_take(&l, vec_packed_size(c->d_v, c->n_k));
    s.block_s = nn_layout_take(&l, (size_t)ATTN_ROW_BLOCK * nk);
    s.block_w = nn_layout_take(&l, (size_t)ATTN_ROW_BLOCK * nk);
    s.forward = l.size;
    s.grad_s = nn_layout_take(&l, nq * nk);
    s.grad_q = nn_layout_take(&l, general ? nq * dk : additive ? (nq + nk) * h : cosine ? nq + nk : 0);
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

int attn_check(const AttnConfig *c, const AttnParams *p, const nn_real *q, const nn_real *k,
               const nn_real *v) {
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
    if (c->key_lengths)
        for (int i = 0; i < c->n_q; i++)
            if (c->key_lengths[i] < 0 || c->key_lengths[i] > c->n_k)
                return nn_fail(NN_ERR_VALUE, "mask.keyLengths[%d] is %d; it must be within 0..%d", i,
                               (int)c->key_lengths[i], c->n_k);
    NN_TRY(nn_check_finite("queries", q, (size_t)c->n_q * c->d_q));
    NN_TRY(nn_check_finite("keys", k, (size_t)c->n_k * c->d_k));
    NN_TRY(nn_check_finite("values", v, (size_t)c->n_k * c->d_v));
    return NN_OK;
}

int attn_visible_keys(const AttnConfig *c, int i) {
    int L = c->n_k;
    if (c->causal && i + 1 < L) L = i + 1;
    if (c->key_lengths && c->key_lengths[i] < L) L = c->key_lengths[i];
    return L;
}

/* ---- scores --------------------------------------------------------------- */

static void norms_forward(nn_real *norms, const nn_real *x, int n, int d) {
    for (int i = 0; i < n; i++) norms[i] = sqrt(vec_dot(x + (size_t)i * d, x + (size_t)i * d, d));
}

/* Work shared by all query rows: projections, norms, packed K^T (or W^T).
 * Returns the left operand of the score product (Q or Q W), NULL for additive. */
static const nn_real *scores_prepare(const AttnConfig *c, const AttnParams *p, const nn_real *q,
                                     const nn_real *k, nn_real *scratch, const ScratchLayout *L) {
    int nq = c->n_q, nk = c->n_k, dq = c->d_q, dk = c->d_k, h = c->hidden;
    nn_real *pack = scratch + L->pack_s;
    switch (c->score) {
    case ATTN_SCORE_COSINE:
        norms_forward(scratch + L->norms, q, nq, dq);
        norms_forward(scratch + L->norms + nq, k, nk, dk);
        /* fall through */
    case ATTN_SCORE_DOT:
    case ATTN_SCORE_SCALED_DOT:
        vec_pack(pack, k, dk, nk, dk, 1);
        return q;
    case ATTN_SCORE_GENERAL:
        /* e = (Q W) K^T */
        vec_gemm_nn(scratch + L->proj_q, dk, q, dq, p->W, dk, nq, dk, dq, 0);
        vec_pack(pack, k, dk, nk, dk, 1);
        return scratch + L->proj_q;
    case ATTN_SCORE_LOCATION:
        /* e_i = W q_i, i.e. e = Q W^T with W (n_k, d_q) */
        vec_pack(pack, p->W, dq, nk, dq, 1);
        return q;
    case ATTN_SCORE_ADDITIVE:
        /* Pq = Q Wq^T, Pk = K Wk^T */
        vec_gemm_nt(scratch + L->proj_q, h, q, dq, p->Wq, dq, nq, h, dq, 0);
        vec_gemm_nt(scratch + L->proj_k, h, k, dk, p->Wk, dk, nk, h, dk, 0);
        return NULL;
    default:
        return NULL;
    }
}

/* Scores of query rows [i0, i1) against keys [0, nv) into e (i1 - i0, n_k);
 * a = scores_prepare(). */
static void scores_rows(const AttnConfig *c, const AttnParams *p, nn_real *e, const nn_real *a, int i0,
                        int i1, int nv, nn_real *scratch, const ScratchLayout *L) {
    int nk = c->n_k, h = c->hidden;
    int kdim = c->score == ATTN_SCORE_GENERAL ? c->d_k : c->d_q, lda = kdim; /* a is (n_q, kdim) */
    if (c->score == ATTN_SCORE_ADDITIVE) {
        /* e_ij = v . tanh(Pq_i + Pk_j) */
        const nn_real *pq = scratch + L->proj_q, *pk = scratch + L->proj_k;
        nn_real *t = scratch + L->hid;
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
    if (c->score == ATTN_SCORE_SCALED_DOT) {
        nn_real scale = 1 / sqrt((nn_real)c->d_k);
        for (int i = i0; i < i1; i++) vec_scale(e + (size_t)(i - i0) * nk, scale, nv);
    } else if (c->score == ATTN_SCORE_COSINE) {
        /* e_ij = beta q.k / (|q| |k|), 0 when a norm is 0 */
        const nn_real *nqv = scratch + L->norms, *nkv = nqv + c->n_q;
        for (int i = i0; i < i1; i++)
            for (int j = 0; j < nv; j++) {
                nn_real den = nqv[i] * nkv[j];
                e[(size_t)(i - i0) * nk + j] = den > 0 ? p->beta * e[(size_t)(i - i0) * nk + j] / den : 0;
            }
    }
}

/* Accumulates input and parameter gradients from ds = dL/de (n_q, n_k). */
static void scores_backward(const AttnConfig *c, const AttnParams *p, AttnParamGrads *g, nn_real *dq,
                            nn_real *dk, nn_real *ds, const nn_real *e, const nn_real *q,
                            const nn_real *k, nn_real *scratch, const ScratchLayout *L) {
    int nq = c->n_q, nk = c->n_k, dqn = c->d_q, dkn = c->d_k, h = c->hidden;
    if (c->score == ATTN_SCORE_SCALED_DOT) vec_scale(ds, 1 / sqrt((nn_real)dkn), nq * nk);
    switch (c->score) {
    case ATTN_SCORE_DOT:
    case ATTN_SCORE_SCALED_DOT:
        /* e = Q K^T [/ sqrt(d_k), applied to dE above]: dQ += dE K, dK += dE^T Q */
        if (dq) vec_gemm_nn(dq, dqn, ds, nk, k, dkn, nq, dqn, nk, 1);
        if (dk) vec_gemm_tn(dk, dkn, ds, nk, q, dqn, nk, dkn, nq, 1);
        break;
    case ATTN_SCORE_COSINE: {
        /* e = beta c, c = D_ij / (n_i m_j), D = Q K^T, n_i = |q_i|, m_j = |k_j|:
         * dbeta = sum dE c; dD = beta dE / (n m);
         * dn_i = -sum_j beta dE_ij c_ij / n_i; dq_i += dD K + dn_i q_i / n_i (same for k) */
        nn_real *nqv = scratch + L->norms, *nkv = nqv + nq;
        nn_real *gq = scratch + L->grad_q, *gk = gq + nq; /* dn_i / n_i and dm_j / m_j */
        norms_forward(nqv, q, nq, dqn);
        norms_forward(nkv, k, nk, dkn);
        for (int i = 0; i < nq; i++) gq[i] = 0;
        for (int j = 0; j < nk; j++) gk[j] = 0;
        nn_real dbeta = 0;
        for (int i = 0; i < nq; i++)
            for (int j = 0; j < nk; j++) {
                size_t ij = (size_t)i * nk + j;
                nn_real den = nqv[i] * nkv[j];
                if (!(den > 0)) {
                    ds[ij] = 0;
                    continue;
                }
                nn_real cij = vec_dot(q + (size_t)i * dqn, k + (size_t)j * dkn, dqn) / den;
                nn_real dc = p->beta * ds[ij];
                dbeta += ds[ij] * cij;
                gq[i] -= dc * cij / (nqv[i] * nqv[i]);
                gk[j] -= dc * cij / (nkv[j] * nkv[j]);
                ds[ij] = dc / den; /* now dL/dD */
            }
        if (g) g->beta += dbeta;
        if (dq) {
            vec_gemm_nn(dq, dqn, ds, nk, k, dkn, nq, dqn, nk, 1);
            for (int i = 0; i < nq; i++) vec_axpy(dq + (size_t)i * dqn, gq[i], q + (size_t)i * dqn, dqn);
        }
        if (dk) {
            vec_gemm_tn(dk, dkn, ds, nk, q, dqn, nk, dkn, nq, 1);
            for (int j = 0; j < nk; j++) vec_axpy(dk + (size_t)j * dkn, gk[j], k + (size_t)j * dkn, dkn);
        }
        break;
    }
    case ATTN_SCORE_GENERAL: {
        /* e = (Q W) K^T: d(QW) = dE K, dK += dE^T (QW), dQ += d(QW) W^T, dW += Q^T d(QW) */
        nn_real *qw = scratch + L->proj_q, *dqw = scratch + L->grad_q;
        vec_gemm_nn(qw, dkn, q, dqn, p->W, dkn, nq, dkn, dqn, 0);
        vec_gemm_nn(dqw, dkn, ds, nk, k, dkn, nq, dkn, nk, 0);
        if (dk) vec_gemm_tn(dk, dkn, ds, nk, qw, dkn, nk, dkn, nq, 1);
        if (dq) vec_gemm_nt(dq, dqn, dqw, dkn, p->W, dkn, nq, dqn, dkn, 1);
        if (g && g->W) vec_gemm_tn(g->W, dkn, q, dqn, dqw, dkn, dqn, dkn, nq, 1);
        break;
    }
    case ATTN_SCORE_ADDITIVE: {
        /* e_ij = v . t_ij, t_ij = tanh(Pq_i + Pk_j):
         * dv += dE_ij t_ij; du = dE_ij v (1 - t^2); dPq_i += du; dPk_j += du;
         * Pq = Q Wq^T: dQ += dPq Wq, dWq += dPq^T Q (same for K) */
        nn_real *pq = scratch + L->proj_q, *pk = scratch + L->proj_k, *t = scratch + L->hid;
        nn_real *dpq = scratch + L->grad_q, *dpk = dpq + (size_t)nq * h;
        vec_gemm_nt(pq, h, q, dqn, p->Wq, dqn, nq, h, dqn, 0);
        vec_gemm_nt(pk, h, k, dkn, p->Wk, dkn, nk, h, dkn, 0);
        memset(dpq, 0, sizeof(nn_real) * (size_t)(nq + nk) * h);
        for (int i = 0; i < nq; i++)
            for (int j = 0; j < nk; j++) {
                nn_real d = ds[(size_t)i * nk + j];
                if (d == 0) continue;
                memcpy(t, pq + (size_t)i * h, sizeof(nn_real) * h);
                vec_axpy(t, 1, pk + (size_t)j * h, h);
                vec_tanh(t, t, h);
                if (g && g->v) vec_axpy(g->v, d, t, h);
                for (int u = 0; u < h; u++) t[u] = d * p->v[u] * (1 - t[u] * t[u]);
                vec_axpy(dpq + (size_t)i * h, 1, t, h);
                vec_axpy(dpk + (size_t)j * h, 1, t, h);
            }
        if (dq) vec_gemm_nn(dq, dqn, dpq, h, p->Wq, dqn, nq, dqn, h, 1);
        if (dk) vec_gemm_nn(dk, dkn, dpk, h, p->Wk, dkn, nk, dkn, h, 1);
        if (g && g->Wq) vec_gemm_tn(g->Wq, dqn, dpq, h, q, dqn, h, dqn, nq, 1);
        if (g && g->Wk) vec_gemm_tn(g->Wk, dkn, dpk, h, k, dkn, h, dkn, nk, 1);
        break;
    }
    case ATTN_SCORE_LOCATION:
        /* e = Q W^T: dQ += dE W, dW += dE^T Q */
        if (dq) vec_gemm_nn(dq, dqn, ds, nk, p->W, dqn, nq, dqn, nk, 1);
        if (g && g->W) vec_gemm_tn(g->W, dqn, ds, nk, q, dqn, nk, dqn, nq, 1);
        break;
    default:
        break;
    }
    (void)e;
}

/* ---- normalisation -------------------------------------------------------- */

/* Rows [i0, i1) (e, a point at row i0) over their visible keys j < Lv:
 * softmax of e/tau or e / sum e. Masked cells get score -inf and weight 0. */
static int normalise_forward(const AttnConfig *c, nn_real *e, nn_real *a, int i0, int i1) {
    int nk = c->n_k;
    for (int i = i0; i < i1; i++) {
        nn_real *er = e + (size_t)(i - i0) * nk, *ar = a + (size_t)(i - i0) * nk;
        int Lv = attn_visible_keys(c, i);
        for (int j = Lv; j < nk; j++) {
            er[j] = -INFINITY;
            ar[j] = 0;
        }
        if (Lv == 0) continue;
        if (c->norm == ATTN_NORM_SOFTMAX) {
            nn_real m = vec_max(er, Lv);
            if (!isfinite(m)) return nn_fail(NN_ERR_VALUE, "scores: row %d overflows (%g); scale the inputs down", i, (double)m);
            nn_real s;
            if (c->temperature == 1) {
                s = vec_exp_sum(ar, er, m, Lv);
            } else {
                /* exp((e - m) / tau) */
                for (int j = 0; j < Lv; j++) ar[j] = er[j] / c->temperature;
                s = vec_exp_sum(ar, ar, m / c->temperature, Lv);
            }
            vec_scale(ar, 1 / s, Lv);
        } else {
            nn_real s = vec_sum(er, Lv);
            if (s == 0 || !isfinite(s))
                return nn_fail(NN_ERR_ZERO_SUM,
                               "normalize: 'sum' needs scores with a non-zero sum; row %d sums to %g (use softmax)",
                               i, (double)s);
            memcpy(ar, er, sizeof(nn_real) * Lv);
            vec_scale(ar, 1 / s, Lv);
            for (int j = 0; j < Lv; j++)
                if (!isfinite(ar[j]))
                    return nn_fail(NN_ERR_ZERO_SUM, "normalize: row %d sums to %g, too close to zero", i, (double)s);
        }
    }
    return NN_OK;
}

/* da (n_q, n_k) -> de in place, over visible keys:
 * softmax a = exp(e/tau)/Z:  de_j = a_j (da_j - sum_k da_k a_k) / tau
 * sum     a = e / S:         de_j = (da_j - sum_k da_k a_k) / S */
static void normalise_backward(const AttnConfig *c, nn_real *d, const nn_real *e, const nn_real *a) {
    int nk = c->n_k;
    for (int i = 0; i < c->n_q; i++) {
        nn_real *dr = d + (size_t)i * nk;
        const nn_real *ar = a + (size_t)i * nk, *er = e + (size_t)i * nk;
        int Lv = attn_visible_keys(c, i);
        nn_real dot = vec_dot(dr, ar, Lv);
        if (c->norm == ATTN_NORM_SOFTMAX) {
            for (int j = 0; j < Lv; j++) dr[j] = ar[j] * (dr[j] - dot) / c->temperature;
        } else {
            nn_real s = vec_sum(er, Lv);
            for (int j = 0; j < Lv; j++) dr[j] = (dr[j] - dot) / s;
        }
        for (int j = Lv; j < nk; j++) dr[j] = 0;
    }
}

/* ---- the whole op -------------------------------------------------------- */

/* Keys past a row block's last visible key are neither scored nor summed
 * (causal masks halve the work). */
int attn_forward(const AttnConfig *c, const AttnParams *p, nn_real *scores, nn_real *weights,
                 nn_real *context, const nn_real *q, const nn_real *k, const nn_real *v,
                 nn_real *scratch) {
    NN_TRY(attn_check(c, p, q, k, v));
    ScratchLayout L = scratch_layout(c);
    int nk = c->n_k, dv = c->d_v;
    const nn_real *a = scores_prepare(c, p, q, k, scratch, &L);
    nn_real *packed_v = scratch + L.pack_v;
    vec_pack(packed_v, v, dv, dv, nk, 0);
    for (int i0 = 0; i0 < c->n_q; i0 += ATTN_ROW_BLOCK) {
        int i1 = i0 + ATTN_ROW_BLOCK < c->n_q ? i0 + ATTN_ROW_BLOCK : c->n_q;
        int nv = 0; /* keys any row of the block sees */
        for (int i = i0; i < i1; i++) {
            int vis = attn_visible_keys(c, i);
            nv = vis > nv ? vis : nv;
        }
        /* without scores / weights outputs, the block's rows live in scratch */
        nn_real *e = scores ? scores + (size_t)i0 * nk : scratch + L.block_s;
        nn_real *w = weights ? weights + (size_t)i0 * nk : scratch + L.block_w;
        scores_rows(c, p, e, a, i0, i1, nv, scratch, &L);
        NN_TRY(normalise_forward(c, e, w, i0, i1));
        /* z_i = sum_j a_ij v_j, i.e. Z = A V */
        vec_gemm_packed(context + (size_t)i0 * dv, dv, w, nk, packed_v, nk, i1 - i0, dv, nv, 0);
    }
    return NN_OK;
}

int attn_backward(const AttnConfig *c, const AttnParams *p, AttnParamGrads *g, nn_real *dq,
                  nn_real *dk, nn_real *dv, const nn_real *dcontext, const nn_real *dweights,
                  const nn_real *scores, const nn_real *weights, const nn_real *q, const nn_real *k,
                  const nn_real *v, nn_real *scratch) {
    NN_TRY(attn_check(c, p, q, k, v));
    ScratchLayout L = scratch_layout(c);
    int nq = c->n_q, nk = c->n_k, dvn = c->d_v;
    nn_real *ds = scratch + L.grad_s;
    /* Z = A V: dA = dZ V^T (+ dweights), dV += A^T dZ */
    vec_gemm_nt(ds, nk, dcontext, dvn, v, dvn, nq, nk, dvn, 0);
    if (dweights) vec_axpy(ds, 1, dweights, nq * nk);
    if (dv) vec_gemm_tn(dv, dvn, weights, nk, dcontext, dvn, nk, dvn, nq, 1);
    normalise_backward(c, ds, scores, weights);
    scores_backward(c, p, g, dq, dk, ds, scores, q, k, scratch, &L);
    return NN_OK;
}
