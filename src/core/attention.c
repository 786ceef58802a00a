/* Attention between queries and keys: scores, normalisation, masks, context
 * vectors; forward and backward side by side. */
#include <math.h>
#include <string.h>

#include "attnlab/attention.h"
#include "core/vec.h"

static const char *const score_names[ATTN_SCORE_COUNT] = {
    "dot", "scaled_dot", "general", "additive", "cosine", "location"};

/* ---- scratch layout: one table drives the size and the offsets ----------- */

typedef struct {
    size_t pack;   /* transposed right-hand operand of a gemm_nt */
    size_t proj_q; /* general: Q W (n_q, d_k) | additive: Q Wq^T (n_q, h) */
    size_t proj_k; /* additive: K Wk^T (n_k, h) */
    size_t norms;  /* cosine: |q_i| (n_q) then |k_j| (n_k) */
    size_t hid;    /* additive: one tanh row (h) */
    size_t grad_s; /* backward: dL/dscores (n_q, n_k) */
    size_t grad_q; /* backward: d(Q W) | d(Q Wq^T), d(K Wk^T) | cosine norm terms */
    size_t total;
} ScratchLayout;

static size_t max_sz(size_t a, size_t b) { return a > b ? a : b; }

static ScratchLayout scratch_layout(const AttnConfig *c) {
    size_t nq = (size_t)c->n_q, nk = (size_t)c->n_k, dq = (size_t)c->d_q, dk = (size_t)c->d_k,
           dv = (size_t)c->d_v, h = (size_t)(c->hidden > 0 ? c->hidden : 0);
    size_t sizes[7] = {0};
    /* every gemm_nt below packs at most one of these */
    sizes[0] = max_sz(max_sz(dk * nk, dq * nk), max_sz(max_sz(dq * h, dk * h), max_sz(dv * nk, dq * dk)));
    if (c->score == ATTN_SCORE_GENERAL) sizes[1] = nq * dk;
    if (c->score == ATTN_SCORE_ADDITIVE) {
        sizes[1] = nq * h;
        sizes[2] = nk * h;
        sizes[4] = h;
    }
    if (c->score == ATTN_SCORE_COSINE) sizes[3] = nq + nk;
    sizes[5] = nq * nk;
    if (c->score == ATTN_SCORE_GENERAL) sizes[6] = nq * dk;
    if (c->score == ATTN_SCORE_ADDITIVE) sizes[6] = (nq + nk) * h;
    if (c->score == ATTN_SCORE_COSINE) sizes[6] = nq + nk;
    ScratchLayout s;
    size_t *field[7] = {&s.pack, &s.proj_q, &s.proj_k, &s.norms, &s.hid, &s.grad_s, &s.grad_q};
    size_t at = 0;
    for (int i = 0; i < 7; i++) {
        *field[i] = at;
        at += (sizes[i] + 3) & ~(size_t)3; /* keep vectors 16-byte aligned */
    }
    s.total = at;
    return s;
}

size_t attn_scratch_size(const AttnConfig *c) { return scratch_layout(c).total; }

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

/* e (n_q, n_k) = score(q_i, k_j), all cells; masking happens in normalisation. */
static void scores_forward(const AttnConfig *c, const AttnParams *p, nn_real *e, const nn_real *q,
                           const nn_real *k, nn_real *scratch, const ScratchLayout *L) {
    int nq = c->n_q, nk = c->n_k, dq = c->d_q, dk = c->d_k, h = c->hidden;
    nn_real *pack = scratch + L->pack;
    switch (c->score) {
    case ATTN_SCORE_DOT:
    case ATTN_SCORE_SCALED_DOT:
    case ATTN_SCORE_COSINE:
        /* e = Q K^T */
        vec_gemm_nt(e, nk, q, dq, k, dk, nq, nk, dq, 0, pack);
        if (c->score == ATTN_SCORE_SCALED_DOT) vec_scale(e, 1 / sqrt((nn_real)dk), nq * nk);
        if (c->score == ATTN_SCORE_COSINE) {
            /* e_ij = beta q.k / (|q| |k|), 0 when a norm is 0 */
            nn_real *nqv = scratch + L->norms, *nkv = nqv + nq;
            norms_forward(nqv, q, nq, dq);
            norms_forward(nkv, k, nk, dk);
            for (int i = 0; i < nq; i++)
                for (int j = 0; j < nk; j++) {
                    nn_real den = nqv[i] * nkv[j];
                    e[(size_t)i * nk + j] = den > 0 ? p->beta * e[(size_t)i * nk + j] / den : 0;
                }
        }
        break;
    case ATTN_SCORE_GENERAL: {
        /* e = (Q W) K^T */
        nn_real *qw = scratch + L->proj_q; /* (n_q, d_k) */
        vec_gemm_nn(qw, dk, q, dq, p->W, dk, nq, dk, dq, 0);
        vec_gemm_nt(e, nk, qw, dk, k, dk, nq, nk, dk, 0, pack);
        break;
    }
    case ATTN_SCORE_ADDITIVE: {
        /* e_ij = v . tanh(Pq_i + Pk_j) with Pq = Q Wq^T, Pk = K Wk^T */
        nn_real *pq = scratch + L->proj_q, *pk = scratch + L->proj_k, *t = scratch + L->hid;
        vec_gemm_nt(pq, h, q, dq, p->Wq, dq, nq, h, dq, 0, pack);
        vec_gemm_nt(pk, h, k, dk, p->Wk, dk, nk, h, dk, 0, pack);
        for (int i = 0; i < nq; i++)
            for (int j = 0; j < nk; j++) {
                memcpy(t, pq + (size_t)i * h, sizeof(nn_real) * h);
                vec_axpy(t, 1, pk + (size_t)j * h, h);
                vec_tanh(t, t, h);
                e[(size_t)i * nk + j] = vec_dot(p->v, t, h);
            }
        break;
    }
    case ATTN_SCORE_LOCATION:
        /* e_i = W q_i, i.e. e = Q W^T with W (n_k, d_q) */
        vec_gemm_nt(e, nk, q, dq, p->W, dq, nq, nk, dq, 0, pack);
        break;
    default:
        break;
    }
}

/* Accumulates input and parameter gradients from ds = dL/de (n_q, n_k). */
static void scores_backward(const AttnConfig *c, const AttnParams *p, AttnParamGrads *g, nn_real *dq,
                            nn_real *dk, nn_real *ds, const nn_real *e, const nn_real *q,
                            const nn_real *k, nn_real *scratch, const ScratchLayout *L) {
    int nq = c->n_q, nk = c->n_k, dqn = c->d_q, dkn = c->d_k, h = c->hidden;
    nn_real *pack = scratch + L->pack;
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
        if (dq) vec_gemm_nt(dq, dqn, dqw, dkn, p->W, dkn, nq, dqn, dkn, 1, pack);
        if (g && g->W) vec_gemm_tn(g->W, dkn, q, dqn, dqw, dkn, dqn, dkn, nq, 1);
        break;
    }
    case ATTN_SCORE_ADDITIVE: {
        /* e_ij = v . t_ij, t_ij = tanh(Pq_i + Pk_j):
         * dv += dE_ij t_ij; du = dE_ij v (1 - t^2); dPq_i += du; dPk_j += du;
         * Pq = Q Wq^T: dQ += dPq Wq, dWq += dPq^T Q (same for K) */
        nn_real *pq = scratch + L->proj_q, *pk = scratch + L->proj_k, *t = scratch + L->hid;
        nn_real *dpq = scratch + L->grad_q, *dpk = dpq + (size_t)nq * h;
        vec_gemm_nt(pq, h, q, dqn, p->Wq, dqn, nq, h, dqn, 0, pack);
        vec_gemm_nt(pk, h, k, dkn, p->Wk, dkn, nk, h, dkn, 0, pack);
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

/* Row i over its visible keys j < Lv: softmax of e/tau or e / sum e. Masked
 * cells get score -inf and weight 0. */
static int normalise_forward(const AttnConfig *c, nn_real *e, nn_real *a) {
    int nk = c->n_k;
    for (int i = 0; i < c->n_q; i++) {
        nn_real *er = e + (size_t)i * nk, *ar = a + (size_t)i * nk;
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

int attn_forward(const AttnConfig *c, const AttnParams *p, nn_real *scores, nn_real *weights,
                 nn_real *context, const nn_real *q, const nn_real *k, const nn_real *v,
                 nn_real *scratch) {
    NN_TRY(attn_check(c, p, q, k, v));
    ScratchLayout L = scratch_layout(c);
    scores_forward(c, p, scores, q, k, scratch, &L);
    NN_TRY(normalise_forward(c, scores, weights));
    /* z_i = sum_j a_ij v_j, i.e. Z = A V */
    vec_gemm_nn(context, c->d_v, weights, c->n_k, v, c->d_v, c->n_q, c->d_v, c->n_k, 0);
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
    vec_gemm_nt(ds, nk, dcontext, dvn, v, dvn, nq, nk, dvn, 0, scratch + L.pack);
    if (dweights) vec_axpy(ds, 1, dweights, nq * nk);
    if (dv) vec_gemm_tn(dv, dvn, weights, nk, dcontext, dvn, nk, dvn, nq, 1);
    normalise_backward(c, ds, scores, weights);
    scores_backward(c, p, g, dq, dk, ds, scores, q, k, scratch, &L);
    return NN_OK;
}
