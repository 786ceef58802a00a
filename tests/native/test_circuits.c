/* The circuit analyses' pieces under ASan+UBSan: the real eigenvalue solver
 * (core/eigen.h) on matrices of known spectra (diagonal, triangular,
 * rotation blocks hidden by an orthogonal similarity, defective Jordan
 * blocks, zeros, a nilpotent matrix, companion matrices, a 64 x 64 mixed
 * spectrum, non-finite entries); and the composition and copying scores
 * (models/circuits.h) of a weight view built here, row-major and in
 * vec_pack's panels with a tied embedding, against a float64 reference
 * written from the definitions (C x C products, the V x V full OV circuit),
 * with the pool's splits run as shares in turn. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/pool.h"
#include "check.h"
#include "core/eigen.h"
#include "core/vec.h"
#include "models/circuits.h"

/* ---- eigenvalues ------------------------------------------------------------------ */

/* Whether every wanted eigenvalue (wr + i wi) has its own computed one within tol. */
static int same_spectrum(const double *re, const double *im, const double *wr, const double *wi, int n, double tol,
                         double *worst) {
    int used[256] = {0};
    *worst = 0;
    for (int k = 0; k < n; k++) {
        int best = -1;
        double bd = INFINITY;
        for (int i = 0; i < n; i++) {
            double d = hypot(re[i] - wr[k], im[i] - wi[k]);
            if (!used[i] && d < bd) bd = d, best = i;
        }
        if (best < 0) return 0;
        used[best] = 1;
        if (bd > *worst) *worst = bd;
    }
    return *worst <= tol;
}

static void check_spectrum(const char *what, double *a, int n, const double *wr, const double *wi, double tol) {
    double re[256], im[256], worst;
    check_case("%s", what);
    CHECK(eig_real(a, n, re, im), "%s: converged", what);
    CHECK(same_spectrum(re, im, wr, wi, n, tol, &worst), "%s: eigenvalues off by %.3g (tol %.3g)", what, worst, tol);
}

/* b = q^T a q for a random orthogonal q (a product of n reflections): the same spectrum, no longer visible. */
static void hide(double *a, int n, Rng *rng) {
    double v[256];
    for (int r = 0; r < n; r++) {
        double vv = 0;
        for (int i = 0; i < n; i++) { v[i] = rng_uniform(rng, 0, 1) - 0.5; vv += v[i] * v[i]; }
        for (int j = 0; j < n; j++) { /* a = (I - 2 v v^T / vv) a */
            double s = 0;
            for (int i = 0; i < n; i++) s += v[i] * a[i * n + j];
            for (int i = 0; i < n; i++) a[i * n + j] -= 2 * s / vv * v[i];
        }
        for (int i = 0; i < n; i++) { /* a = a (I - 2 v v^T / vv) */
            double s = 0;
            for (int j = 0; j < n; j++) s += a[i * n + j] * v[j];
            for (int j = 0; j < n; j++) a[i * n + j] -= 2 * s / vv * v[j];
        }
    }
}

static void test_eigenvalues(void) {
    Rng rng = {7};
    double a[64 * 64], wr[64], wi[64];
    { /* diagonal and upper triangular */
        double d[5] = {3, -1, 0.5, 0, 2};
        memset(a, 0, sizeof(double) * 25);
        for (int i = 0; i < 5; i++) a[i * 5 + i] = d[i], wr[i] = d[i], wi[i] = 0;
        check_spectrum("diagonal", a, 5, wr, wi, 1e-14);
        memset(a, 0, sizeof(double) * 25);
        for (int i = 0; i < 5; i++)
            for (int j = i; j < 5; j++) a[i * 5 + j] = i == j ? d[i] : rng_uniform(&rng, 0, 1) * 4 - 2;
        check_spectrum("upper triangular", a, 5, wr, wi, 1e-12);
    }
    { /* rotation blocks: [[c, -s], [s, c]] r has r e^{+-i theta}; with a real 1.5 beside them, hidden */
        int n = 5;
        memset(a, 0, sizeof(double) * 25);
        double rs[2] = {1, 0.7}, th[2] = {0.3, 2.5};
        for (int b = 0; b < 2; b++) {
            int o = 2 * b;
            a[o * n + o] = a[(o + 1) * n + o + 1] = rs[b] * cos(th[b]);
            a[o * n + o + 1] = -rs[b] * sin(th[b]);
            a[(o + 1) * n + o] = rs[b] * sin(th[b]);
            wr[o] = wr[o + 1] = rs[b] * cos(th[b]);
            wi[o] = rs[b] * sin(th[b]);
            wi[o + 1] = -wi[o];
        }
        a[4 * n + 4] = wr[4] = 1.5;
        wi[4] = 0;
        hide(a, n, &rng);
        check_spectrum("rotation blocks", a, n, wr, wi, 1e-12);
        /* the pure rotation by 90 degrees: +-i, and a copy of it scaled by 1e-30 and 1e30 */
        double rot[4] = {0, -1, 1, 0}, w2r[2] = {0, 0}, w2i[2] = {1, -1};
        memcpy(a, rot, sizeof rot);
        check_spectrum("rotation by 90 degrees", a, 2, w2r, w2i, 1e-15);
        for (int e = -30; e <= 30; e += 60) {
            double s = pow(10, e), z[2] = {w2i[0] * s, w2i[1] * s};
            for (int i = 0; i < 4; i++) a[i] = rot[i] * s;
            check_spectrum(e < 0 ? "rotation scaled by 1e-30" : "rotation scaled by 1e30", a, 2, w2r, z, 1e-15 * s);
        }
    }
    { /* defective: a Jordan block of 2 (size 3) and one of -1 (size 2), hidden; eigenvalues to eps^(1/3) */
        int n = 5;
        memset(a, 0, sizeof(double) * 25);
        double d[5] = {2, 2, 2, -1, -1};
        for (int i = 0; i < n; i++) a[i * n + i] = d[i], wr[i] = d[i], wi[i] = 0;
        a[0 * n + 1] = a[1 * n + 2] = a[3 * n + 4] = 1;
        hide(a, n, &rng);
        check_spectrum("Jordan blocks", a, n, wr, wi, 1e-4);
    }
    { /* zeros: the zero matrix, and a nilpotent one (strictly upper triangular) */
        memset(a, 0, sizeof(double) * 16);
        for (int i = 0; i < 4; i++) wr[i] = wi[i] = 0;
        check_spectrum("zero matrix", a, 4, wr, wi, 0);
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 4; j++) a[i * 4 + j] = j > i ? 1 + i + j : 0;
        check_spectrum("nilpotent", a, 4, wr, wi, 1e-3);
        memset(a, 0, sizeof(double) * 9);
        a[0] = 3; /* rank one: 3, 0, 0 */
        double w3[3] = {3, 0, 0}, z3[3] = {0};
        check_spectrum("rank one", a, 3, w3, z3, 1e-15);
    }
    { /* the companion matrix of (x - 1)(x - 2)(x - 3)(x - 4) and of (x^2 + 1)(x - 2) */
        double c4[16] = {10, -35, 50, -24, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0};
        double r4[4] = {1, 2, 3, 4}, z4[4] = {0};
        memcpy(a, c4, sizeof c4);
        check_spectrum("companion of roots 1..4", a, 4, r4, z4, 1e-10);
        double c3[9] = {2, -1, 2, 1, 0, 0, 0, 1, 0}, r3[3] = {2, 0, 0}, i3[3] = {0, 1, -1};
        memcpy(a, c3, sizeof c3);
        check_spectrum("companion of roots 2, +-i", a, 3, r3, i3, 1e-12);
    }
    { /* 64 x 64: 20 complex pairs and 24 reals of many sizes, hidden */
        int n = 64;
        memset(a, 0, sizeof(double) * n * n);
        for (int b = 0; b < 20; b++) {
            int o = 2 * b;
            double x = rng_uniform(&rng, 0, 1) * 4 - 2, y = 0.1 + rng_uniform(&rng, 0, 1) * 2;
            a[o * n + o] = a[(o + 1) * n + o + 1] = x;
            a[o * n + o + 1] = -y;
            a[(o + 1) * n + o] = y;
            wr[o] = wr[o + 1] = x;
            wi[o] = y;
            wi[o + 1] = -y;
        }
        for (int i = 40; i < n; i++) a[i * n + i] = wr[i] = (rng_uniform(&rng, 0, 1) - 0.5) * pow(10, i % 4 - 1), wi[i] = 0;
        hide(a, n, &rng);
        check_spectrum("64 x 64, mixed", a, n, wr, wi, 1e-9);
    }
    { /* a non-finite entry: refused */
        double re[2], im[2];
        double bad[4] = {1, NAN, 0, 1};
        check_case("non-finite");
        CHECK(!eig_real(bad, 2, re, im), "NaN refused");
        bad[1] = INFINITY;
        CHECK(!eig_real(bad, 2, re, im), "infinity refused");
    }
}

/* ---- the scores ------------------------------------------------------------------- */

enum { L = 3, HH = 2, C = 8, D = C / HH, V = 12 };

typedef struct {
    double ln1[L][C], qkv[L][C * 3 * C], proj[L][C * C], lnf[C], wte[V * C], wu[C * V];
} Weights;

static void random_weights(Weights *w, Rng *rng, int tied) {
    for (int l = 0; l < L; l++) {
        for (int i = 0; i < C; i++) w->ln1[l][i] = 0.5 + rng_uniform(rng, 0, 1);
        for (int i = 0; i < C * 3 * C; i++) w->qkv[l][i] = rng_uniform(rng, 0, 1) - 0.5;
        for (int i = 0; i < C * C; i++) w->proj[l][i] = rng_uniform(rng, 0, 1) - 0.5;
    }
    for (int i = 0; i < C; i++) w->lnf[i] = 0.5 + rng_uniform(rng, 0, 1);
    for (int i = 0; i < V * C; i++) w->wte[i] = rng_uniform(rng, 0, 1) - 0.5;
    for (int c = 0; c < C; c++)
        for (int v = 0; v < V; v++) w->wu[c * V + v] = tied ? w->wte[v * C + c] : rng_uniform(rng, 0, 1) - 0.5;
    /* layer 1, head 1 reads nothing through its values: a zero W_V (a rank-deficient Gram) */
    for (int c = 0; c < C; c++)
        for (int d = 0; d < D; d++) w->qkv[1][c * 3 * C + 2 * C + D + d] = 0;
}

/* W_{Q,K,V} (which 0, 1, 2) of head (l, h) with ln_1 folded: (C, D); W_O (D, C) */
static void head_in(const Weights *w, int l, int h, int which, double *out) {
    for (int c = 0; c < C; c++)
        for (int d = 0; d < D; d++) out[c * D + d] = w->ln1[l][c] * w->qkv[l][c * 3 * C + which * C + h * D + d];
}
static void head_out(const Weights *w, int l, int h, double *out) {
    for (int d = 0; d < D; d++)
        for (int c = 0; c < C; c++) out[d * C + c] = w->proj[l][(h * D + d) * C + c];
}

/* out (m, n) = a (m, k) b (k, n); tb: b given as (n, k) */
static void mul(double *out, const double *a, const double *b, int m, int k, int n, int tb) {
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            double s = 0;
            for (int p = 0; p < k; p++) s += a[i * k + p] * (tb ? b[j * k + p] : b[p * n + j]);
            out[i * n + j] = s;
        }
}

static double fro(const double *x, int n) {
    double s = 0;
    for (int i = 0; i < n; i++) s += x[i] * x[i];
    return sqrt(s);
}

/* W_OV (C, C) and W_QK (C, C) of head (l, h) */
static void ov_qk(const Weights *w, int l, int h, double *ov, double *qk) {
    double a[C * D], b[C * D], o[D * C];
    head_in(w, l, h, 2, a);
    head_out(w, l, h, o);
    mul(ov, a, o, C, D, C, 0);
    head_in(w, l, h, 0, a);
    head_in(w, l, h, 1, b);
    mul(qk, a, b, C, D, C, 1);
}

static void reference(const Weights *w, double *q, double *k, double *v, double *copy) {
    int LH = L * HH;
    memset(q, 0, sizeof(double) * LH * LH);
    memset(k, 0, sizeof(double) * LH * LH);
    memset(v, 0, sizeof(double) * LH * LH);
    double ovi[C * C], qki[C * C], ovj[C * C], qkj[C * C], qkt[C * C], p[C * C];
    for (int i = 0; i < LH; i++)
        for (int j = 0; j < LH; j++) {
            if (i / HH >= j / HH) continue;
            ov_qk(w, i / HH, i % HH, ovi, qki);
            ov_qk(w, j / HH, j % HH, ovj, qkj);
            for (int r = 0; r < C; r++)
                for (int c = 0; c < C; c++) qkt[r * C + c] = qkj[c * C + r];
            double no = fro(ovi, C * C), nq = fro(qkj, C * C), nv = fro(ovj, C * C);
            mul(p, ovi, qkj, C, C, C, 0);
            q[i * LH + j] = no * nq > 0 ? fro(p, C * C) / (no * nq) : 0;
            mul(p, ovi, qkt, C, C, C, 0);
            k[i * LH + j] = no * nq > 0 ? fro(p, C * C) / (no * nq) : 0;
            mul(p, ovi, ovj, C, C, C, 0);
            v[i * LH + j] = no * nv > 0 ? fro(p, C * C) / (no * nv) : 0;
        }
    /* copying: the full OV circuit W_E W_OV diag(gamma_f) W_U (V, V) itself */
    for (int i = 0; i < LH; i++) {
        double ov[C * C], qk[C * C], e_ov[V * C], u[C * V], full[V * V], re[V], im[V];
        ov_qk(w, i / HH, i % HH, ov, qk);
        for (int c = 0; c < C; c++)
            for (int t = 0; t < V; t++) u[c * V + t] = w->lnf[c] * w->wu[c * V + t];
        mul(e_ov, w->wte, ov, V, C, C, 0);
        mul(full, e_ov, u, V, C, V, 0);
        double trace = 0, moduli = 0;
        for (int t = 0; t < V; t++) trace += full[t * V + t];
        CHECK(eig_real(full, V, re, im), "the reference's eigenvalues converge");
        for (int t = 0; t < V; t++) moduli += hypot(re[t], im[t]);
        copy[i] = moduli > 0 ? trace / moduli : 0;
    }
}

/* The view of w: row-major, or packed (every matrix in vec_pack's panels, the embedding tied to the unembedding). */
typedef struct {
    nn_real ln1[L][C], qkv[L][C * 3 * C], proj[L][C * C], lnf[C], wte[V * C], wu[C * V];
    nn_real *packed[2 * L + 1];
} Stored;

static void store(const Weights *w, Stored *s, DecView *v, int packed) {
    *v = (DecView){.layers = L, .heads = HH, .d_model = C, .d_head = D, .vocab = V};
    for (int l = 0; l < L; l++) {
        for (int i = 0; i < C; i++) s->ln1[l][i] = (nn_real)w->ln1[l][i];
        for (int i = 0; i < C * 3 * C; i++) s->qkv[l][i] = (nn_real)w->qkv[l][i];
        for (int i = 0; i < C * C; i++) s->proj[l][i] = (nn_real)w->proj[l][i];
        v->ln1w[l] = s->ln1[l];
        v->qkv[l] = (DecMatrix){s->qkv[l], C, 3 * C, 0, 0};
        v->proj[l] = (DecMatrix){s->proj[l], C, C, 0, 0};
    }
    for (int i = 0; i < C; i++) s->lnf[i] = (nn_real)w->lnf[i];
    for (int i = 0; i < V * C; i++) s->wte[i] = (nn_real)w->wte[i];
    for (int i = 0; i < C * V; i++) s->wu[i] = (nn_real)w->wu[i];
    v->lnfw = s->lnf;
    v->embed = (DecMatrix){s->wte, V, C, 0, 0};
    v->unembed = (DecMatrix){s->wu, C, V, 0, 0};
    memset(s->packed, 0, sizeof s->packed);
    if (!packed) return;
    for (int l = 0; l < L; l++) {
        s->packed[2 * l] = malloc(sizeof(nn_real) * vec_packed_size(3 * C, C));
        s->packed[2 * l + 1] = malloc(sizeof(nn_real) * vec_packed_size(C, C));
        vec_pack(s->packed[2 * l], s->qkv[l], 3 * C, 3 * C, C, 0, 1);
        vec_pack(s->packed[2 * l + 1], s->proj[l], C, C, C, 0, 1);
        v->qkv[l] = (DecMatrix){s->packed[2 * l], C, 3 * C, 1, 0};
        v->proj[l] = (DecMatrix){s->packed[2 * l + 1], C, C, 1, 0};
    }
    s->packed[2 * L] = malloc(sizeof(nn_real) * vec_packed_size(V, C)); /* W_U (C, V) as B, from (V, C) transposed */
    vec_pack(s->packed[2 * L], s->wte, C, V, C, 1, 1);
    v->unembed = (DecMatrix){s->packed[2 * L], C, V, 1, 0};
    v->embed = (DecMatrix){s->packed[2 * L], V, C, 1, 1};
}

static void unstore(Stored *s) {
    for (int i = 0; i < 2 * L + 1; i++) free(s->packed[i]);
}

static void test_scores(void) {
    int LH = L * HH;
    static Weights w;
    static Stored s;
    double rq[L * HH * L * HH], rk[L * HH * L * HH], rv[L * HH * L * HH], rc[L * HH];
    float q[L * HH * L * HH], k[L * HH * L * HH], v[L * HH * L * HH], cp[L * HH];
    nn_real got[L * HH * L * HH];
    for (int packed = 0; packed < 2; packed++) {
        Rng rng = {11 + (uint64_t)packed};
        random_weights(&w, &rng, packed);
        reference(&w, rq, rk, rv, rc);
        DecView view;
        store(&w, &s, &view, packed);
        for (int threads = 1; threads <= 3; threads++) {
            CHECK_OK(nn_pool_split_serially(threads), "split");
            check_case("%s view, %d share%s", packed ? "packed, tied" : "row-major", threads, threads > 1 ? "s" : "");
            CHECK_OK(circ_composition_scores(&view, q, k, v), "compositionScores");
            const float *outs[3] = {q, k, v};
            const double *refs[3] = {rq, rk, rv};
            const char *names[3] = {"q composition", "k composition", "v composition"};
            for (int m = 0; m < 3; m++) {
                for (int i = 0; i < LH * LH; i++) got[i] = (nn_real)outs[m][i];
                CHECK_ARRAY(got, refs[m], (size_t)LH * LH, LH, 1e-5, 1e-4, names[m]);
                int zeros = 1;
                for (int i = 0; i < LH; i++)
                    for (int j = 0; j < LH; j++)
                        if (i / HH >= j / HH) zeros &= outs[m][i * LH + j] == 0;
                CHECK(zeros, "%s: every entry whose row's layer is not earlier is exactly 0", names[m]);
            }
            CHECK_OK(circ_copying_scores(&view, cp), "copyingScores");
            for (int i = 0; i < LH; i++) got[i] = (nn_real)cp[i];
            CHECK_ARRAY(got, rc, (size_t)LH, HH, 1e-5, 1e-4, "copying scores");
            CHECK(cp[1 * HH + 1] == 0, "a head with W_V = 0 copies nothing (got %g)", cp[1 * HH + 1]);
        }
        CHECK_OK(nn_pool_split_serially(1), "split");
        unstore(&s);
    }
#ifndef NN_DOUBLE
    /* weights whose products pass float32's range: coded errors, not scores of 0 */
    uint64_t seed = 5;
    Rng rng = {seed};
    random_weights(&w, &rng, 0);
    for (int i = 0; i < C * 3 * C; i++) w.qkv[0][i] *= 1e25;
    for (int i = 0; i < C * C; i++) w.proj[0][i] *= 1e20;
    DecView view;
    store(&w, &s, &view, 0);
    check_case("overflow");
    CHECK(circ_composition_scores(&view, q, k, v) == NN_ERR_VALUE, "composition: %s", nn_last_error());
    CHECK(strstr(nn_last_error(), "overflow") != NULL, "the message says so: %s", nn_last_error());
    CHECK(circ_copying_scores(&view, cp) == NN_ERR_VALUE, "copying: %s", nn_last_error());
    CHECK(strstr(nn_last_error(), "L0H0") != NULL, "the message names the head: %s", nn_last_error());
    unstore(&s);
#endif
}

int main(void) {
    test_eigenvalues();
    test_scores();
    return check_summary();
}
