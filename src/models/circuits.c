/* Composition and copying scores (circuits.h) from the weight view alone,
 * on the pool's threads.
 *
 * Composition without C x C matrices. W_OV,i = W_V,i W_O,i and W_QK,j =
 * W_Q,j W_K,j^T have rank D, and only Frobenius norms are needed: for any F
 * with F^T F = W^T W (a D x D factor of the Gram matrix), |W X| = |F X|. So
 *   |W_V,i W_O,i W_Q,j W_K,j^T| = |F_V,i W_O,i W_Q,j F_K,j^T|,
 * a (D, C) . (C, D) product: O^_i = F_V,i W_O,i (D, C) against Q^_j =
 * W_Q,j F_K,j^T (C, D). K-composition uses W_K,j F_Q,j^T, V-composition
 * W_V,j F_O,j^T (F_O^T F_O = W_O,j W_O,j^T); the denominators are the same
 * blocks' norms (|W_QK,j| = |W_Q,j F_K,j^T|, |W_OV,j| = |W_V,j F_O,j^T|).
 * A later layer's three blocks for all its heads make one (C, 3C) matrix,
 * packed once into the products' panels; an earlier layer's O^ of all its
 * heads, stacked (H D, C), multiplies it in one product (the panels read
 * once for all the layer's heads, on the pool's threads), and the (D, D)
 * blocks' norms are summed in double. The Gram
 * matrices come from the same products; their factors are pivoted Cholesky
 * in double, which a rank-deficient head (a zero column) does not break.
 *
 * Copying: the full OV circuit (V, V) shares its nonzero eigenvalues with
 * W_O,h (diag(gamma_f) W_U W_E) W_V,h (D, D). The (C, C) middle is one
 * product summed over the vocabulary in chunks, each layer's W_V for all
 * heads meets it once, and each head's (D, D) matrix goes to the real
 * eigenvalue solver (core/eigen.h). */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/pool.h"
#include "core/eigen.h"
#include "core/gemm_parallel.h"
#include "core/vec.h"
#include "models/circuits.h"

#ifdef NN_DOUBLE
#define REAL_EPS DBL_EPSILON
#else
#define REAL_EPS FLT_EPSILON
#endif

/* A factor f (D, D) with f^T f = g (D, D, symmetric positive semidefinite,
 * destroyed): pivoted outer-product Cholesky, row s of f the s-th pivot's,
 * stopping where every remaining pivot is within rounding of zero, so a
 * singular g leaves rows of zeros. */
static void gram_factor(double *g, int D, nn_real *f, double *row, unsigned char *done) {
    if (D <= 0) return;
    double most = 0;
    for (int i = 0; i < D; i++) most = g[i * D + i] > most ? g[i * D + i] : most;
    double tol = most * D * REAL_EPS;
    for (int i = 0; i < D * D; i++) f[i] = 0;
    for (int i = 0; i < D; i++) done[i] = 0;
    for (int s = 0; s < D; s++) {
        int j = -1;
        for (int i = 0; i < D; i++)
            if (!done[i] && (j < 0 || g[i * D + i] > g[j * D + j])) j = i;
        if (j < 0 || !(g[j * D + j] > tol)) break;
        double piv = sqrt(g[j * D + j]);
        for (int i = 0; i < D; i++) row[i] = done[i] ? 0 : g[j * D + i] / piv;
        done[j] = 1;
        for (int i = 0; i < D; i++) {
            f[s * D + i] = (nn_real)row[i];
            if (done[i]) continue;
            for (int k = 0; k < D; k++)
                if (!done[k]) g[i * D + k] -= row[i] * row[k];
        }
    }
}

static void to_double(double *out, const nn_real *x, int n) {
    for (int i = 0; i < n; i++) out[i] = x[i];
}

/* |block|_F^2 of x (rows, cols) with row stride ld, in double. */
static double sum_squares(const nn_real *x, int rows, int cols, int ld) {
    double s = 0;
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++) s += (double)x[(size_t)i * ld + j] * x[(size_t)i * ld + j];
    return s;
}

/* ---- composition ------------------------------------------------------------- */

/* One thread's scratch. */
typedef struct {
    nn_real *wa, *wb, *wc; /* (C, D) W_Q, W_K, W_V of a head */
    nn_real *wo;           /* (D, C) */
    nn_real *z;            /* (D, D) a Gram matrix, a head's OV matrix */
    nn_real *fa, *fb, *fc; /* (D, D) Gram factors */
    double *g, *a;         /* (D, D) a Gram matrix; a head's OV matrix for the eigenvalues */
    double *re, *im, *row; /* (D) the eigenvalues; a factor's row */
    unsigned char *done;   /* (D) the pivots taken */
    int overflow;          /* a product of this thread's was not finite */
} Scratch;

typedef struct {
    const DecView *v;
    Scratch *s;     /* one per thread */
    nn_real *qhat;  /* (C, 3C) the later layer's [W_Q F_K^T | W_K F_Q^T | W_V F_O^T], head j in column blocks of D */
    nn_real *qpack; /* qhat in vec_pack's panels: packed once per later layer, read by every earlier layer */
    nn_real *ohat;  /* (H D, C) the earlier layer's O^_i = F_V,i W_O,i, head i in rows i D.. */
    nn_real *prod;  /* (H D, 3C) ohat Q^ */
    double *qk, *ov; /* (L H) |W_QK| and |W_OV| of each head */
    int later, earlier; /* the layers */
    float *out[3];  /* q, k, v */
} Composition;

/* f with f^T f = w^T w for w (C, D) (transposed 0), or w w^T for w (D, C). */
static void factor_of(Scratch *s, const nn_real *w, int C, int D, int transposed, nn_real *f) {
    nn_real *gram = s->z; /* (D, D) */
    if (transposed) vec_gemm_nt(gram, D, w, C, w, C, D, D, C, 0);
    else vec_gemm_tn(gram, D, w, D, w, D, D, D, C, 0);
    to_double(s->g, gram, D * D);
    for (int i = 0; i < D * D; i++)
        if (!isfinite(s->g[i])) s->overflow = 1;
    gram_factor(s->g, D, f, s->row, s->done);
}

/* Heads [b, e) of the later layer: their blocks of Q^ and their norms. */
static int later_task(void *ctx, int tid, int n) {
    Composition *c = ctx;
    const DecView *v = c->v;
    Scratch *s = &c->s[tid];
    int C = v->d_model, D = v->d_head, H = v->heads, l = c->later, b, e;
    nn_pool_range(H, tid, n, &b, &e);
    for (int h = b; h < e; h++) {
        dec_view_read(v, l, h, 0, s->wa);
        dec_view_read(v, l, h, 1, s->wb);
        dec_view_read(v, l, h, 2, s->wc);
        dec_view_wo(v, l, h, s->wo);
        factor_of(s, s->wa, C, D, 0, s->fa);
        factor_of(s, s->wb, C, D, 0, s->fb);
        factor_of(s, s->wo, C, D, 1, s->fc);
        nn_real *q = c->qhat + h * D;
        vec_gemm_nt(q, 3 * C, s->wa, D, s->fb, D, C, D, D, 0);         /* W_Q F_K^T */
        vec_gemm_nt(q + C, 3 * C, s->wb, D, s->fa, D, C, D, D, 0);     /* W_K F_Q^T */
        vec_gemm_nt(q + 2 * C, 3 * C, s->wc, D, s->fc, D, C, D, D, 0); /* W_V F_O^T */
        c->qk[l * H + h] = sqrt(sum_squares(q, C, D, 3 * C));
        c->ov[l * H + h] = sqrt(sum_squares(q + 2 * C, C, D, 3 * C));
    }
    return NN_OK;
}

/* Heads [b, e) of the earlier layer: their O^ = F_V W_O. */
static int ohat_task(void *ctx, int tid, int n) {
    Composition *c = ctx;
    const DecView *v = c->v;
    Scratch *s = &c->s[tid];
    int C = v->d_model, D = v->d_head, b, e;
    nn_pool_range(v->heads, tid, n, &b, &e);
    for (int h = b; h < e; h++) {
        dec_view_read(v, c->earlier, h, 2, s->wc);
        dec_view_wo(v, c->earlier, h, s->wo);
        factor_of(s, s->wc, C, D, 0, s->fc);
        vec_gemm_nn(c->ohat + (size_t)h * D * C, C, s->fc, D, s->wo, C, D, C, D, 0);
    }
    return NN_OK;
}

/* Heads [b, e) of the earlier layer: each one's row of the three scores
 * against the later layer's heads, from its D rows of the product. */
static int scores_task(void *ctx, int tid, int n) {
    Composition *c = ctx;
    const DecView *v = c->v;
    int C = v->d_model, D = v->d_head, H = v->heads, LH = v->layers * H, b, e;
    nn_pool_range(H, tid, n, &b, &e);
    for (int h0 = b; h0 < e; h0++) {
        int i = c->earlier * H + h0;
        const nn_real *z = c->prod + (size_t)h0 * D * 3 * C;
        for (int mode = 0; mode < 3; mode++)
            for (int h = 0; h < H; h++) {
                int j = c->later * H + h;
                double num = sqrt(sum_squares(z + mode * C + h * D, D, D, 3 * C));
                double den = c->ov[i] * (mode < 2 ? c->qk[j] : c->ov[j]);
                c->out[mode][(size_t)i * LH + j] = den > 0 ? (float)(num / den) : 0;
            }
    }
    return NN_OK;
}

static int all_finite(const float *x, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i])) return 0;
    return 1;
}

/* Per-thread scratch of the analyses: count reals and doubles, or lay them
 * out from base (NULL: count only). */
static size_t scratch_layout(const DecView *v, Scratch *s, nn_real *base, double *dbase, unsigned char *bytes,
                             size_t *doubles) {
    size_t C = (size_t)v->d_model, D = (size_t)v->d_head, at = 0;
#define TAKE(count) (base ? base + (at += (count)) - (count) : (at += (count), (nn_real *)NULL))
    s->wa = TAKE(C * D);
    s->wb = TAKE(C * D);
    s->wc = TAKE(C * D);
    s->wo = TAKE(C * D);
    s->z = TAKE(D * D);
    s->fa = TAKE(D * D);
    s->fb = TAKE(D * D);
    s->fc = TAKE(D * D);
#undef TAKE
    s->g = dbase;
    s->a = dbase ? dbase + D * D : NULL;
    s->re = dbase ? dbase + 2 * D * D : NULL;
    s->im = dbase ? dbase + 2 * D * D + D : NULL;
    s->row = dbase ? dbase + 2 * D * D + 2 * D : NULL;
    s->done = bytes;
    *doubles = 2 * D * D + 3 * D;
    return at;
}

/* Scratch for every thread plus `extra` reals and `extra_doubles` doubles
 * (returned in *shared and *shared_d). One allocation of each kind. */
typedef struct {
    nn_real *reals;
    double *doubles;
    unsigned char *bytes;
} Block;

static int scratch_create(const DecView *v, Scratch *s, int threads, size_t extra, size_t extra_doubles, Block *b,
                          nn_real **shared, double **shared_d, const char *what) {
    size_t nd, per = scratch_layout(v, s, NULL, NULL, NULL, &nd);
    size_t D = (size_t)v->d_head;
    b->reals = malloc(sizeof(nn_real) * (per * threads + extra));
    b->doubles = malloc(sizeof(double) * (nd * threads + extra_doubles));
    b->bytes = malloc(D * threads);
    if (!b->reals || !b->doubles || !b->bytes) {
        free(b->reals);
        free(b->doubles);
        free(b->bytes);
        return nn_fail(NN_ERR_NOMEM, "%s: out of memory for %zu numbers of scratch", what,
                       per * threads + extra + nd * threads + extra_doubles);
    }
    for (int t = 0; t < threads; t++)
        scratch_layout(v, &s[t], b->reals + per * t, b->doubles + nd * t, b->bytes + D * t, &nd);
    *shared = b->reals + per * threads;
    *shared_d = b->doubles + nd * threads;
    return NN_OK;
}

static void scratch_free(Block *b) {
    free(b->reals);
    free(b->doubles);
    free(b->bytes);
}

int circ_composition_scores(const DecView *v, float *q, float *k, float *vv) {
    int L = v->layers, H = v->heads, C = v->d_model, D = v->d_head, threads = nn_pool_threads();
    size_t LH = (size_t)L * H;
    memset(q, 0, sizeof(float) * LH * LH);
    memset(k, 0, sizeof(float) * LH * LH);
    memset(vv, 0, sizeof(float) * LH * LH);
    Scratch s[NN_MAX_THREADS];
    Block b;
    nn_real *qhat;
    double *norms;
    size_t packed = vec_packed_size(3 * C, C), HD = (size_t)H * D;
    NN_TRY(scratch_create(v, s, threads, (size_t)C * 3 * C + packed + HD * C + HD * 3 * C, 2 * LH, &b, &qhat, &norms,
                          "compositionScores"));
    nn_real *qpack = qhat + (size_t)C * 3 * C, *ohat = qpack + packed, *prod = ohat + HD * C;
    Composition c = {v, s, qhat, qpack, ohat, prod, norms, norms + LH, 0, 0, {q, k, vv}};
    for (int t = 0; t < threads; t++) s[t].overflow = 0;
    for (int l = 0; l < L; l++) {
        c.later = l;
        nn_pool_run(later_task, &c, (double)H * 6 * C * D * D);
        if (l == 0) continue;
        vec_pack(c.qpack, qhat, 3 * C, 3 * C, C, 0, 1);
        for (c.earlier = 0; c.earlier < l; c.earlier++) {
            nn_pool_run(ohat_task, &c, (double)H * 2 * C * D * D);
            vec_gemm_packed_parallel(prod, 3 * C, ohat, C, qpack, H * D, 3 * C, C, 0);
            nn_pool_run(scores_task, &c, (double)H * 3 * C * D);
        }
    }
    scratch_free(&b);
    int overflow = 0;
    for (int t = 0; t < threads; t++) overflow |= s[t].overflow;
    if (overflow || !all_finite(q, LH * LH) || !all_finite(k, LH * LH) || !all_finite(vv, LH * LH))
        return nn_fail(NN_ERR_VALUE, "compositionScores: the heads' products overflow float32");
    return NN_OK;
}

/* ---- copying ------------------------------------------------------------------- */

/* Chunks of the vocabulary summed at once into W_U W_E. */
#define CIRC_VOCAB_CHUNK 512

typedef struct {
    const DecView *v;
    Scratch *s;
    nn_real *uc, *ec;  /* (C, chunk) W_U's columns, (chunk, C) W_E's rows */
    int v0, kc;        /* the chunk */
    const nn_real *zl; /* (C, C) diag(gamma_f) W_U W_E W_V of one layer, head h in columns h D.. */
    int layer;
    float *out;
    unsigned char *failed; /* (H) a head whose eigenvalues did not converge */
} Copying;

/* Rows [b, e) of the chunk's two blocks (the stored matrices unpacked). */
static int chunk_task(void *ctx, int tid, int n) {
    Copying *c = ctx;
    int C = c->v->d_model, b, e;
    nn_pool_range(C + c->kc, tid, n, &b, &e);
    for (int r = b; r < e; r++) {
        if (r < C) dec_matrix_read(&c->v->unembed, r, c->v0, 1, c->kc, NULL, c->uc + (size_t)r * c->kc, c->kc);
        else dec_matrix_read(&c->v->embed, c->v0 + r - C, 0, 1, C, NULL, c->ec + (size_t)(r - C) * C, C);
    }
    return NN_OK;
}

/* Heads [b, e) of one layer: W_O,h zl[:, h D..] (D, D) and its eigenvalues. */
static int head_task(void *ctx, int tid, int n) {
    Copying *c = ctx;
    const DecView *v = c->v;
    Scratch *s = &c->s[tid];
    int C = v->d_model, D = v->d_head, b, e;
    nn_pool_range(v->heads, tid, n, &b, &e);
    for (int h = b; h < e; h++) {
        dec_view_wo(v, c->layer, h, s->wo);
        nn_real *m = s->z;
        vec_gemm_nn(m, D, s->wo, C, c->zl + h * D, C, D, D, C, 0);
        double *a = s->a, *re = s->re, *im = s->im;
        to_double(a, m, D * D);
        double trace = 0, moduli = 0;
        int finite = 1;
        for (int i = 0; i < D * D; i++) finite &= isfinite(a[i]) != 0;
        for (int i = 0; i < D; i++) trace += a[i * D + i];
        if (!finite || !eig_real(a, D, re, im)) { /* a product past float32's range, or no convergence */
            c->out[c->layer * v->heads + h] = NAN;
            c->failed[h] = finite;
            continue;
        }
        for (int i = 0; i < D; i++) moduli += hypot(re[i], im[i]);
        /* sum(lambda) is the trace: exact, where the eigenvalues' sum carries the solver's rounding */
        c->out[c->layer * v->heads + h] = moduli > 0 ? (float)(trace / moduli) : 0;
    }
    return NN_OK;
}

int circ_copying_scores(const DecView *v, float *out) {
    int L = v->layers, H = v->heads, C = v->d_model, D = v->d_head, V = v->vocab, threads = nn_pool_threads();
    int chunk = V < CIRC_VOCAB_CHUNK ? V : CIRC_VOCAB_CHUNK;
    Scratch s[NN_MAX_THREADS];
    Block b;
    nn_real *shared;
    double *unused;
    size_t CC = (size_t)C * C;
    NN_TRY(scratch_create(v, s, threads, 3 * CC + 2 * (size_t)chunk * C, 0, &b, &shared, &unused, "copyingScores"));
    nn_real *y = shared, *wv = y + CC, *zl = wv + CC;
    unsigned char failed[DEC_MAX_HEADS];
    Copying c = {v, s, zl + CC, zl + CC + (size_t)chunk * C, 0, 0, zl, 0, out, failed};
    /* y (C, C) = diag(gamma_f) W_U W_E, summed chunk by chunk over the vocabulary */
    for (int v0 = 0; v0 < V; v0 += chunk) {
        c.v0 = v0;
        c.kc = V - v0 < chunk ? V - v0 : chunk;
        nn_pool_run(chunk_task, &c, (double)(C + c.kc) * C);
        vec_gemm_nn_parallel(y, C, c.uc, c.kc, c.ec, C, C, C, c.kc, v0 > 0);
    }
    for (int i = 0; i < C; i++) vec_scale(y + (size_t)i * C, v->lnfw[i], C);
    int st = NN_OK;
    for (int l = 0; l < L && st == NN_OK; l++) {
        /* zl = y W_V of every head of the layer (ln_1's gain folded in) */
        dec_matrix_read(&v->qkv[l], 0, 2 * C, C, C, v->ln1w[l], wv, C);
        vec_gemm_nn_parallel(zl, C, y, C, wv, C, C, C, C, 0);
        c.layer = l;
        memset(failed, 0, sizeof failed);
        nn_pool_run(head_task, &c, (double)H * (D * D * C + 10.0 * D * D * D));
        for (int h = 0; h < H && st == NN_OK; h++)
            if (failed[h] || !isfinite(out[l * H + h]))
                st = nn_fail(NN_ERR_VALUE, "copyingScores: L%dH%d: %s", l, h,
                             failed[h] ? "the eigenvalues of its OV circuit did not converge"
                                       : "its OV circuit overflows float32");
    }
    scratch_free(&b);
    return st;
}
