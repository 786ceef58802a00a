/* The work splits of the threaded build, run natively: nn_pool_split_serially(n)
 * runs every parallel region as n shares in turn, so the row ranges, the
 * per-thread scratch and the ordered reductions are checked here under the
 * sanitizers. Against one share: products split by C's rows (bit for bit and
 * against the naive reference), attention forward (bit for bit) and backward
 * for every score and mask, self-attention forward and backward with heads;
 * the same share count twice gives the same bits. */
#include <math.h>
#include <string.h>

#include "attnlab/attention.h"
#include "base/error.h"
#include "base/pool.h"
#include "check.h"
#include "core/gemm_parallel.h"
#include "core/vec.h"
#include "layers/mlp.h"

static const int shares[] = {2, 3, 5};
#define N_SHARES ((int)(sizeof shares / sizeof *shares))

/* the split's tolerance: partial sums added in another order */
#define SPLIT_ATOL 1e-6
#define SPLIT_RTOL 1e-5

static int same_bits(const nn_real *a, const nn_real *b, size_t n) { return memcmp(a, b, n * sizeof *a) == 0; }

static void split(int n) {
    int st = nn_pool_split_serially(n);
    CHECK(st == NN_OK, "nn_pool_split_serially(%d): %s", n, nn_last_error());
}

/* ---- products ------------------------------------------------------------ */

static void test_gemm(Rng *r) {
    size_t mark = alloc_mark();
    enum { M = 13, N = 11, K = 9 };
    nn_real *a = alloc_random(r, M * K, -1, 1), *at = alloc_random(r, K * M, -1, 1);
    nn_real *b = alloc_random(r, K * N, -1, 1), *bt = alloc_random(r, N * K, -1, 1);
    nn_real *c0 = alloc_random(r, M * N, -1, 1);
    nn_real *want = alloc_reals(M * N), *one = alloc_reals(M * N), *got = alloc_reals(M * N);
    /* C = C0 + A B + A2^T B + A B2^T: three products accumulating into one C, in list order */
    memcpy(want, c0, sizeof(nn_real) * M * N);
    vec_gemm_nn_ref(want, N, a, K, b, N, M, N, K, 1);
    vec_gemm_tn_ref(want, N, at, M, b, N, M, N, K, 1);
    vec_gemm_nt_ref(want, N, a, K, bt, K, M, N, K, 1);
    for (int s = 0; s <= N_SHARES; s++) {
        int n = s == 0 ? 1 : shares[s - 1];
        split(n);
        nn_real *out = s == 0 ? one : got;
        memcpy(out, c0, sizeof(nn_real) * M * N);
        const VecGemm g[3] = {{VEC_GEMM_NN, out, N, a, K, b, N, M, N, K, 1},
                              {VEC_GEMM_TN, out, N, at, M, b, N, M, N, K, 1},
                              {VEC_GEMM_NT, out, N, a, K, bt, K, M, N, K, 1}};
        vec_gemm_parallel(g, 3);
        check_case("vec_gemm_parallel: NN + TN + NT into one C, %d shares", n);
        CHECK_ARRAY_R(out, want, M * N, N, TOL_FWD_ATOL, TOL_FWD_RTOL, "C against the naive products");
        if (s > 0) CHECK(same_bits(got, one, M * N), "C equals one share's bit for bit");
    }
    split(1);
    alloc_release(mark);
}

/* One product of few rows and many columns: its columns split at panel
 * boundaries (each thread packs only its panels), each kind, with a
 * partial last panel; then GELU split in whole chunks. */
static void test_gemm_columns(Rng *r) {
    size_t mark = alloc_mark();
    enum { M = 5, K = 7 };
    int N = 41 * vec_panel_width() + 3;
    nn_real *a = alloc_random(r, (size_t)M * K, -1, 1), *at = alloc_random(r, (size_t)K * M, -1, 1);
    nn_real *b = alloc_random(r, (size_t)K * N, -1, 1), *bt = alloc_random(r, (size_t)N * K, -1, 1);
    nn_real *c0 = alloc_random(r, (size_t)M * N, -1, 1);
    nn_real *want = alloc_reals((size_t)M * N), *one = alloc_reals((size_t)M * N), *got = alloc_reals((size_t)M * N);
    for (int kind = 0; kind < 3; kind++) {
        const char *name = kind == 0 ? "NN" : kind == 1 ? "TN" : "NT";
        memcpy(want, c0, sizeof(nn_real) * M * N);
        if (kind == 0) vec_gemm_nn_ref(want, N, a, K, b, N, M, N, K, 1);
        if (kind == 1) vec_gemm_tn_ref(want, N, at, M, b, N, M, N, K, 1);
        if (kind == 2) vec_gemm_nt_ref(want, N, a, K, bt, K, M, N, K, 1);
        for (int s = 0; s <= N_SHARES; s++) {
            int n = s == 0 ? 1 : shares[s - 1];
            split(n);
            nn_real *out = s == 0 ? one : got;
            memcpy(out, c0, sizeof(nn_real) * M * N);
            const VecGemm g = {(VecGemmKind)kind, out, N, kind == 1 ? at : a, kind == 1 ? M : K, kind == 2 ? bt : b,
                               kind == 2 ? K : N, M, N, K, 1};
            vec_gemm_parallel(&g, 1);
            check_case("vec_gemm_parallel: one %s product of %d x %d, columns split, %d shares", name, M, N, n);
            CHECK_ARRAY_R(out, want, (size_t)M * N, N, TOL_FWD_ATOL, TOL_FWD_RTOL, "C against the naive product");
            if (s > 0) CHECK(same_bits(got, one, (size_t)M * N), "C equals one share's bit for bit");
        }
    }
    size_t n_gelu = 64 * 37 + 5;
    nn_real *x = alloc_random(r, n_gelu, -6, 6), *y1 = alloc_reals(n_gelu), *y = alloc_reals(n_gelu);
    for (int s = 0; s <= N_SHARES; s++) {
        int n = s == 0 ? 1 : shares[s - 1];
        split(n);
        gelu_forward(s == 0 ? y1 : y, x, n_gelu);
        check_case("gelu_forward in whole chunks, %d shares", n);
        if (s > 0) CHECK(same_bits(y, y1, n_gelu), "equals one share's bit for bit");
        else
            for (size_t i = 0; i < n_gelu; i++) {
                double u = x[i], want_i = 0.5 * u * (1 + tanh(0.7978845608028654 * (u + 0.044715 * u * u * u)));
                CHECK_CLOSE(y1[i], want_i, 1e-6, 1e-5, "gelu(x) against float64");
            }
    }
    split(1);
    alloc_release(mark);
}

/* ---- attention ----------------------------------------------------------- */

typedef struct {
    const char *name;
    AttnScore score;
    AttnNorm norm;
    int n_q, n_k, d_q, d_k, d_v, hidden;
    float temperature;
    int causal, lengths, dweights; /* key lengths on some rows; dL/dweights given */
    double lo;                     /* inputs in [lo, 1): 0 keeps 'sum' scores positive */
} SplitCase;

static const SplitCase cases[] = {
    {"dot, dweights", ATTN_SCORE_DOT, ATTN_NORM_SOFTMAX, 37, 53, 7, 7, 5, 0, 1, 0, 0, 1, -1},
    {"scaled_dot, causal", ATTN_SCORE_SCALED_DOT, ATTN_NORM_SOFTMAX, 67, 67, 9, 9, 9, 0, 1, 1, 0, 0, -1},
    {"cosine, key lengths", ATTN_SCORE_COSINE, ATTN_NORM_SOFTMAX, 41, 29, 3, 3, 11, 0, 1, 0, 1, 0, -1},
    {"general, sum", ATTN_SCORE_GENERAL, ATTN_NORM_SUM, 33, 17, 5, 6, 4, 0, 1, 0, 0, 0, 0},
    {"additive, causal, key lengths, tau 0.7", ATTN_SCORE_ADDITIVE, ATTN_NORM_SOFTMAX, 39, 45, 4, 4, 6, 6, 0.7f, 1, 1,
     1, -1},
    {"location, tau 0.3", ATTN_SCORE_LOCATION, ATTN_NORM_SOFTMAX, 49, 13, 8, 2, 3, 0, 0.3f, 0, 0, 0, -1},
};

/* One call's inputs and the results of forward + backward. */
typedef struct {
    AttnConfig c;
    AttnParams p;
    nn_real *q, *k, *v, *dz, *dw;
    nn_real *scores, *weights, *context;
    nn_real *dq, *dk, *dv, *gW, *gWq, *gWk, *gv;
    size_t nW, nWq, nv;
    AttnParamGrads g;
} SplitRun;

static void split_inputs(SplitRun *t, const SplitCase *sc, Rng *r) {
    memset(t, 0, sizeof *t);
    AttnConfig *c = &t->c;
    c->n_q = sc->n_q, c->n_k = sc->n_k, c->d_q = sc->d_q, c->d_k = sc->d_k, c->d_v = sc->d_v, c->hidden = sc->hidden;
    c->score = sc->score, c->norm = sc->norm, c->temperature = sc->temperature, c->causal = sc->causal;
    if (sc->lengths) {
        int32_t *L = alloc_ints((size_t)c->n_q);
        for (int i = 0; i < c->n_q; i++) L[i] = (i * 7) % (c->n_k + 1);
        c->key_lengths = L;
    }
    t->q = alloc_random(r, (size_t)c->n_q * c->d_q, sc->lo, 1);
    t->k = alloc_random(r, (size_t)c->n_k * c->d_k, sc->lo, 1);
    t->v = alloc_random(r, (size_t)c->n_k * c->d_v, -1, 1);
    t->dz = alloc_random(r, (size_t)c->n_q * c->d_v, -1, 1);
    t->dw = sc->dweights ? alloc_random(r, (size_t)c->n_q * c->n_k, -1, 1) : NULL;
    t->p.beta = 3;
    if (sc->score == ATTN_SCORE_GENERAL) t->nW = (size_t)c->d_q * c->d_k;
    if (sc->score == ATTN_SCORE_LOCATION) t->nW = (size_t)c->n_k * c->d_q;
    if (sc->score == ATTN_SCORE_ADDITIVE) t->nWq = (size_t)c->hidden * c->d_q, t->nv = (size_t)c->hidden;
    t->p.W = t->nW ? alloc_random(r, t->nW, sc->lo, 1) : NULL;
    t->p.Wq = t->nWq ? alloc_random(r, t->nWq, -1, 1) : NULL;
    t->p.Wk = t->nWq ? alloc_random(r, (size_t)c->hidden * c->d_k, -1, 1) : NULL;
    t->p.v = t->nv ? alloc_random(r, t->nv, -1, 1) : NULL;
}

/* Forward and backward of t's inputs into fresh outputs, with scratch sized
 * for the current share count. */
static int split_run(SplitRun *t) {
    AttnConfig *c = &t->c;
    size_t nq = (size_t)c->n_q, nk = (size_t)c->n_k;
    t->scores = alloc_reals(nq * nk), t->weights = alloc_reals(nq * nk), t->context = alloc_reals(nq * c->d_v);
    t->dq = alloc_zeros(nq * c->d_q), t->dk = alloc_zeros(nk * c->d_k), t->dv = alloc_zeros(nk * c->d_v);
    t->gW = t->nW ? alloc_zeros(t->nW) : NULL;
    t->gWq = t->nWq ? alloc_zeros(t->nWq) : NULL;
    t->gWk = t->nWq ? alloc_zeros((size_t)c->hidden * c->d_k) : NULL;
    t->gv = t->nv ? alloc_zeros(t->nv) : NULL;
    AttnParamGrads g = {t->gW, t->gWq, t->gWk, t->gv, 0};
    nn_real *scratch = alloc_reals(attn_scratch_size(c));
    NN_TRY(attn_forward(c, &t->p, t->scores, t->weights, t->context, t->q, t->k, t->v, scratch));
    NN_TRY(attn_backward(c, &t->p, &g, t->dq, t->dk, t->dv, t->dz, t->dw, t->scores, t->weights, t->q, t->k, t->v,
                         scratch));
    t->g = g;
    return NN_OK;
}

/* Every backward result of got against want: within tolerance, or bit for bit. */
static void compare_grads(const SplitRun *got, const SplitRun *want, int bits) {
    const AttnConfig *c = &want->c;
    size_t nq = (size_t)c->n_q, nk = (size_t)c->n_k;
    const struct {
        const nn_real *g, *w;
        size_t n;
        const char *name;
    } all[] = {{got->dq, want->dq, nq * c->d_q, "dq"},           {got->dk, want->dk, nk * c->d_k, "dk"},
               {got->dv, want->dv, nk * c->d_v, "dv"},           {got->gW, want->gW, want->nW, "dW"},
               {got->gWq, want->gWq, want->nWq, "dWq"},          {got->gWk, want->gWk, want->nWq ? (size_t)c->hidden * c->d_k : 0, "dWk"},
               {got->gv, want->gv, want->nv, "dv (additive)"},   {&got->g.beta, &want->g.beta, 1, "dbeta"}};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) {
        if (!all[i].n) continue;
        if (bits) CHECK(same_bits(all[i].g, all[i].w, all[i].n), "%s bit for bit", all[i].name);
        else CHECK_ARRAY_R(all[i].g, all[i].w, all[i].n, 1, SPLIT_ATOL, SPLIT_RTOL, all[i].name);
    }
}

static void test_attention(Rng *r) {
    for (size_t ci = 0; ci < sizeof cases / sizeof *cases; ci++) {
        size_t mark = alloc_mark();
        const SplitCase *sc = &cases[ci];
        SplitRun one, got, again;
        split_inputs(&one, sc, r);
        split(1);
        check_case("attention (%s), one share", sc->name);
        if (!CHECK_OK(split_run(&one), "forward + backward")) continue;
        size_t cells = (size_t)sc->n_q * sc->n_k;
        for (int s = 0; s < N_SHARES; s++) {
            split(shares[s]);
            got = one, again = one; /* the same inputs, fresh outputs */
            check_case("attention (%s), %d shares", sc->name, shares[s]);
            if (!CHECK_OK(split_run(&got), "forward + backward") || !CHECK_OK(split_run(&again), "again")) continue;
            CHECK(same_bits(got.scores, one.scores, cells), "scores bit for bit");
            CHECK(same_bits(got.weights, one.weights, cells), "weights bit for bit");
            CHECK(same_bits(got.context, one.context, (size_t)sc->n_q * sc->d_v), "context bit for bit");
            compare_grads(&got, &one, 0);
            compare_grads(&again, &got, 1);
        }
        split(1);
        alloc_release(mark);
    }
}

/* ---- self-attention ------------------------------------------------------ */

typedef struct {
    SelfAttnActs a;
    nn_real *dx, *gq, *gk, *gv, *go;
} SelfRun;

static int self_run(SelfRun *t, const SelfAttnConfig *c, const SelfAttnWeights *w, const nn_real *x,
                    const nn_real *dout) {
    size_t n = (size_t)c->n, cells = (size_t)c->heads * n * n;
    t->a = (SelfAttnActs){alloc_reals(n * c->d_k), alloc_reals(n * c->d_k), alloc_reals(n * c->d_v), alloc_reals(cells),
                          alloc_reals(cells), alloc_reals(n * c->d_v), alloc_reals(n * c->d_out)};
    t->dx = alloc_zeros(n * c->d_in);
    t->gq = alloc_zeros((size_t)c->d_in * c->d_k), t->gk = alloc_zeros((size_t)c->d_in * c->d_k);
    t->gv = alloc_zeros((size_t)c->d_in * c->d_v), t->go = alloc_zeros((size_t)c->d_v * c->d_out);
    SelfAttnGrads g = {t->gq, t->gk, t->gv, t->go};
    nn_real *scratch = alloc_reals(attn_self_scratch_size(c));
    NN_TRY(attn_self_forward(c, w, &t->a, x, scratch));
    return attn_self_backward(c, w, &g, t->dx, dout, &t->a, x, scratch);
}

static void test_self(Rng *r) {
    const AttnScore scores[3] = {ATTN_SCORE_DOT, ATTN_SCORE_SCALED_DOT, ATTN_SCORE_COSINE};
    for (int si = 0; si < 3; si++) {
        size_t mark = alloc_mark();
        SelfAttnConfig c = {45, 12, 9, 6, 5, 3, scores[si], si != 1};
        double s = 1 / sqrt(12.0);
        nn_real *x = alloc_random(r, (size_t)c.n * c.d_in, -1, 1);
        SelfAttnWeights w = {alloc_random(r, (size_t)c.d_in * c.d_k, -s, s), alloc_random(r, (size_t)c.d_in * c.d_k, -s, s),
                             alloc_random(r, (size_t)c.d_in * c.d_v, -s, s), alloc_random(r, (size_t)c.d_v * c.d_out, -1, 1)};
        nn_real *dout = alloc_random(r, (size_t)c.n * c.d_out, -1, 1);
        size_t n = (size_t)c.n, cells = (size_t)c.heads * n * n;
        SelfRun one, got, again;
        split(1);
        check_case("selfAttention (%d heads, score %d, causal %d), one share", c.heads, (int)c.score, c.causal);
        if (!CHECK_OK(self_run(&one, &c, &w, x, dout), "forward + backward")) continue;
        for (int k = 0; k < N_SHARES; k++) {
            split(shares[k]);
            check_case("selfAttention (%d heads, score %d, causal %d), %d shares", c.heads, (int)c.score, c.causal,
                       shares[k]);
            if (!CHECK_OK(self_run(&got, &c, &w, x, dout), "forward + backward") ||
                !CHECK_OK(self_run(&again, &c, &w, x, dout), "again"))
                continue;
            CHECK(same_bits(got.a.q, one.a.q, n * c.d_k) && same_bits(got.a.v, one.a.v, n * c.d_v), "q, v bit for bit");
            CHECK(same_bits(got.a.weights, one.a.weights, cells), "weights bit for bit");
            CHECK(same_bits(got.a.output, one.a.output, n * c.d_out), "output bit for bit");
            CHECK_ARRAY_R(got.dx, one.dx, n * c.d_in, c.d_in, SPLIT_ATOL, SPLIT_RTOL, "dx");
            CHECK_ARRAY_R(got.gq, one.gq, (size_t)c.d_in * c.d_k, c.d_k, SPLIT_ATOL, SPLIT_RTOL, "dwq");
            CHECK_ARRAY_R(got.gk, one.gk, (size_t)c.d_in * c.d_k, c.d_k, SPLIT_ATOL, SPLIT_RTOL, "dwk");
            CHECK_ARRAY_R(got.gv, one.gv, (size_t)c.d_in * c.d_v, c.d_v, SPLIT_ATOL, SPLIT_RTOL, "dwv");
            CHECK_ARRAY_R(got.go, one.go, (size_t)c.d_v * c.d_out, c.d_out, SPLIT_ATOL, SPLIT_RTOL, "dwo");
            CHECK(same_bits(again.dx, got.dx, n * c.d_in) && same_bits(again.gq, got.gq, (size_t)c.d_in * c.d_k),
                  "the same shares twice: dx, dwq bit for bit");
        }
        split(1);
        alloc_release(mark);
    }
}

static void test_limits(void) {
    check_case("nn_pool_split_serially outside 1..NN_MAX_THREADS");
    CHECK(nn_pool_split_serially(0) == NN_ERR_LIMIT, "0 shares: ERR_LIMIT");
    CHECK(nn_pool_split_serially(NN_MAX_THREADS + 1) == NN_ERR_LIMIT, "NN_MAX_THREADS + 1 shares: ERR_LIMIT");
    CHECK(nn_pool_threads() == 1, "still one share");
}

int main(void) {
    Rng r = {0x5b117};
    test_gemm(&r);
    test_gemm_columns(&r);
    test_attention(&r);
    test_self(&r);
    test_limits();
    return check_summary();
}
