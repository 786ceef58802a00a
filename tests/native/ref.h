/* A float64 reference of attention and self-attention, written from the
 * formulas of attnlab/attention.h with plain loops and no code from the core.
 * The tests compare the engine against it, and the gradient checks of the
 * float builds take finite differences of it. */
#ifndef ATTNLAB_TESTS_REF_H
#define ATTNLAB_TESTS_REF_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "attnlab/attention.h"

/* AttnParams in double. */
typedef struct {
    const double *W, *Wq, *Wk, *v;
    double beta;
} RefParams;

static inline double *ref_copy(const nn_real *x, size_t n) {
    double *d = malloc((n ? n : 1) * sizeof(double));
    if (!d) abort();
    for (size_t i = 0; i < n; i++) d[i] = x ? (double)x[i] : 0;
    return d;
}

/* Keys query i sees: j < min(n_k, causal ? i + 1 : n_k, key_lengths[i]). */
static inline int ref_visible(const AttnConfig *c, int i) {
    int L = c->n_k;
    if (c->causal && i + 1 < L) L = i + 1;
    if (c->key_lengths && c->key_lengths[i] < L) L = c->key_lengths[i];
    return L < 0 ? 0 : L;
}

/* e_ij = score(q_i, k_j) for row i of queries q and row j of keys k. */
static inline double ref_score(const AttnConfig *c, const RefParams *p, const double *q, const double *k,
                               int j) {
    int dq = c->d_q, dk = c->d_k, h = c->hidden;
    double s = 0;
    switch (c->score) {
    case ATTN_SCORE_DOT:
    case ATTN_SCORE_SCALED_DOT:
    case ATTN_SCORE_COSINE: {
        double nq = 0, nk = 0;
        for (int a = 0; a < dq; a++) {
            s += q[a] * k[a];
            nq += q[a] * q[a];
            nk += k[a] * k[a];
        }
        if (c->score == ATTN_SCORE_SCALED_DOT) return s / sqrt((double)dk);
        if (c->score == ATTN_SCORE_COSINE) return nq > 0 && nk > 0 ? p->beta * s / (sqrt(nq) * sqrt(nk)) : 0;
        return s;
    }
    case ATTN_SCORE_GENERAL: /* q^T W k, W (d_q, d_k) */
        for (int a = 0; a < dq; a++)
            for (int b = 0; b < dk; b++) s += q[a] * p->W[(size_t)a * dk + b] * k[b];
        return s;
    case ATTN_SCORE_ADDITIVE: /* v^T tanh(Wq q + Wk k) */
        for (int u = 0; u < h; u++) {
            double t = 0;
            for (int a = 0; a < dq; a++) t += p->Wq[(size_t)u * dq + a] * q[a];
            for (int b = 0; b < dk; b++) t += p->Wk[(size_t)u * dk + b] * k[b];
            s += p->v[u] * tanh(t);
        }
        return s;
    case ATTN_SCORE_LOCATION: /* (W q)_j, W (n_k, d_q) */
        for (int a = 0; a < dq; a++) s += p->W[(size_t)j * dq + a] * q[a];
        return s;
    default:
        return NAN;
    }
}

/* Scores (masked cells -inf), weights (masked 0) and context; a row without
 * visible keys has zero weights and context. Returns -1 if a sum-normalised
 * row sums to exactly zero, else 0. */
static inline int ref_attention_d(const AttnConfig *c, const RefParams *p, const double *q, const double *k,
                                  const double *v, double *e, double *a, double *z) {
    int nq = c->n_q, nk = c->n_k, dv = c->d_v, status = 0;
    for (int i = 0; i < nq; i++) {
        double *er = e + (size_t)i * nk, *ar = a + (size_t)i * nk;
        int L = ref_visible(c, i);
        for (int j = 0; j < nk; j++) {
            er[j] = j < L ? ref_score(c, p, q + (size_t)i * c->d_q, k + (size_t)j * c->d_k, j) : -INFINITY;
            ar[j] = 0;
        }
        if (L > 0 && c->norm == ATTN_NORM_SOFTMAX) {
            double m = -INFINITY, s = 0;
            for (int j = 0; j < L; j++) m = er[j] > m ? er[j] : m;
            for (int j = 0; j < L; j++) s += ar[j] = exp((er[j] - m) / c->temperature);
            for (int j = 0; j < L; j++) ar[j] /= s;
        } else if (L > 0) {
            double s = 0;
            for (int j = 0; j < L; j++) s += er[j];
            if (s == 0) status = -1;
            for (int j = 0; j < L; j++) ar[j] = er[j] / s;
        }
        for (int d = 0; d < dv; d++) {
            double acc = 0;
            for (int j = 0; j < L; j++) acc += ar[j] * v[(size_t)j * dv + d];
            z[(size_t)i * dv + d] = acc;
        }
    }
    return status;
}

/* The same from the engine's types. */
static inline int ref_attention(const AttnConfig *c, const AttnParams *p, const nn_real *q, const nn_real *k,
                                const nn_real *v, double *e, double *a, double *z) {
    size_t h = (size_t)(c->hidden > 0 ? c->hidden : 0);
    size_t w_n = c->score == ATTN_SCORE_GENERAL    ? (size_t)c->d_q * c->d_k
                 : c->score == ATTN_SCORE_LOCATION ? (size_t)c->n_k * c->d_q
                                                   : 0;
    double *qd = ref_copy(q, (size_t)c->n_q * c->d_q), *kd = ref_copy(k, (size_t)c->n_k * c->d_k),
           *vd = ref_copy(v, (size_t)c->n_k * c->d_v);
    double *W = ref_copy(w_n ? p->W : NULL, w_n);
    int add = c->score == ATTN_SCORE_ADDITIVE;
    double *Wq = ref_copy(add ? p->Wq : NULL, add ? h * c->d_q : 0);
    double *Wk = ref_copy(add ? p->Wk : NULL, add ? h * c->d_k : 0);
    double *va = ref_copy(add ? p->v : NULL, add ? h : 0);
    RefParams rp = {W, Wq, Wk, va, (double)p->beta};
    int status = ref_attention_d(c, &rp, qd, kd, vd, e, a, z);
    free(qd), free(kd), free(vd), free(W), free(Wq), free(Wk), free(va);
    return status;
}

/* ---- self-attention --------------------------------------------------------
 * Q = X Wq, K = X Wk, V = X Wv (identity when NULL), head h attends with
 * columns [h d_k/H, (h+1) d_k/H) of Q and K and the matching block of V,
 * softmax at temperature 1, cosine with beta 1; output = concat(Z) Wo. */

typedef struct {
    const double *wq, *wk, *wv, *wo; /* NULL: identity */
} RefSelfWeights;

typedef struct {
    double *q, *k, *v;          /* (n, d_k), (n, d_k), (n, d_v) */
    double *scores, *weights;   /* (heads, n, n) */
    double *context, *output;   /* (n, d_v), (n, d_out) */
} RefSelfActs;

/* Y (n, d_out) = X W, or X when W is NULL. */
static inline void ref_project(double *y, const double *x, const double *w, int n, int d_in, int d_out) {
    for (int i = 0; i < n; i++)
        for (int o = 0; o < d_out; o++) {
            double s = 0;
            if (!w) s = x[(size_t)i * d_in + o];
            else
                for (int a = 0; a < d_in; a++) s += x[(size_t)i * d_in + a] * w[(size_t)a * d_out + o];
            y[(size_t)i * d_out + o] = s;
        }
}

static inline void ref_self_attention_d(const SelfAttnConfig *c, const RefSelfWeights *w, const double *x,
                                        RefSelfActs *r) {
    int n = c->n, H = c->heads, dkh = c->d_k / H, dvh = c->d_v / H;
    ref_project(r->q, x, w->wq, n, c->d_in, c->d_k);
    ref_project(r->k, x, w->wk, n, c->d_in, c->d_k);
    ref_project(r->v, x, w->wv, n, c->d_in, c->d_v);
    AttnConfig hc = {0};
    hc.n_q = hc.n_k = n;
    hc.d_q = hc.d_k = dkh;
    hc.d_v = dvh;
    hc.score = c->score;
    hc.norm = ATTN_NORM_SOFTMAX;
    hc.temperature = 1;
    hc.causal = c->causal;
    RefParams rp = {NULL, NULL, NULL, NULL, 1};
    double *qh = malloc(sizeof(double) * (size_t)n * dkh), *kh = malloc(sizeof(double) * (size_t)n * dkh);
    double *vh = malloc(sizeof(double) * (size_t)n * dvh), *zh = malloc(sizeof(double) * (size_t)n * dvh);
    if (!qh || !kh || !vh || !zh) abort();
    for (int hd = 0; hd < H; hd++) {
        for (int i = 0; i < n; i++) {
            for (int a = 0; a < dkh; a++) {
                qh[(size_t)i * dkh + a] = r->q[(size_t)i * c->d_k + hd * dkh + a];
                kh[(size_t)i * dkh + a] = r->k[(size_t)i * c->d_k + hd * dkh + a];
            }
            for (int a = 0; a < dvh; a++) vh[(size_t)i * dvh + a] = r->v[(size_t)i * c->d_v + hd * dvh + a];
        }
        ref_attention_d(&hc, &rp, qh, kh, vh, r->scores + (size_t)hd * n * n, r->weights + (size_t)hd * n * n, zh);
        for (int i = 0; i < n; i++)
            for (int a = 0; a < dvh; a++) r->context[(size_t)i * c->d_v + hd * dvh + a] = zh[(size_t)i * dvh + a];
    }
    ref_project(r->output, r->context, w->wo, n, c->d_v, c->d_out);
    free(qh), free(kh), free(vh), free(zh);
}

/* The same from the engine's types; r's arrays are the caller's. */
static inline void ref_self_attention(const SelfAttnConfig *c, const SelfAttnWeights *w, const nn_real *x,
                                      RefSelfActs *r) {
    double *xd = ref_copy(x, (size_t)c->n * c->d_in);
    double *wq = w->wq ? ref_copy(w->wq, (size_t)c->d_in * c->d_k) : NULL;
    double *wk = w->wk ? ref_copy(w->wk, (size_t)c->d_in * c->d_k) : NULL;
    double *wv = w->wv ? ref_copy(w->wv, (size_t)c->d_in * c->d_v) : NULL;
    double *wo = w->wo ? ref_copy(w->wo, (size_t)c->d_v * c->d_out) : NULL;
    RefSelfWeights rw = {wq, wk, wv, wo};
    ref_self_attention_d(c, &rw, xd, r);
    free(xd), free(wq), free(wk), free(wv), free(wo);
}

#endif
