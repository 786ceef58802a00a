/* Numbers at the edges of float32: tiny temperatures, large close scores,
 * scores and results that overflow, exp underflow, cosine of huge and tiny
 * vectors, the 'sum' rule near zero and the work limit. Every expected value
 * is worked out in double here (or by ref.h); the same file runs on the SIMD,
 * scalar and double builds. */
#include <float.h>

#include "attnlab/attention.h"
#include "check.h"
#include "core/vec.h"
#include "ref.h"

/* One small attend call on literal inputs: q (n_q, d), k (n_k, d), v (n_k, d_v). */
typedef struct {
    AttnConfig c;
    AttnParams p;
    nn_real *q, *k, *v, *scores, *weights, *context, *scratch;
} Call;

static void call_init(Call *t, AttnScore score, AttnNorm norm, double tau, int n_q, int n_k, int d, int d_v,
                      const double *q, const double *k, const double *v) {
    memset(t, 0, sizeof *t);
    t->c = (AttnConfig){.n_q = n_q, .n_k = n_k, .d_q = d, .d_k = d, .d_v = d_v, .score = score, .norm = norm,
                        .temperature = (nn_real)tau};
    t->p.beta = 1;
    t->q = alloc_reals((size_t)n_q * d);
    t->k = alloc_reals((size_t)n_k * d);
    t->v = alloc_reals((size_t)n_k * d_v);
    for (int i = 0; i < n_q * d; i++) t->q[i] = (nn_real)q[i];
    for (int i = 0; i < n_k * d; i++) t->k[i] = (nn_real)k[i];
    for (int i = 0; i < n_k * d_v; i++) t->v[i] = (nn_real)(v ? v[i] : k[i]);
    t->scores = alloc_reals((size_t)n_q * n_k);
    t->weights = alloc_reals((size_t)n_q * n_k);
    t->context = alloc_reals((size_t)n_q * d_v);
    t->scratch = alloc_reals(attn_scratch_size(&t->c));
}

static int call_forward(Call *t) {
    return attn_forward(&t->c, &t->p, t->scores, t->weights, t->context, t->q, t->k, t->v, t->scratch);
}

static int all_finite(const nn_real *x, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i])) return 0;
    return 1;
}

/* ---- softmax as exp((e - max) / tau) ------------------------------------- */

static void test_tiny_temperature(void) {
    size_t mark = alloc_mark();
    /* tau = 1e-40 (a float32 subnormal): the larger score takes all the weight */
    static const double q[1] = {1}, k[2] = {1, 2};
    Call t;
    call_init(&t, ATTN_SCORE_DOT, ATTN_NORM_SOFTMAX, 1e-40, 1, 2, 1, 1, q, k, NULL);
    check_case("temperature 1e-40, scores [1, 2]");
    int st = call_forward(&t);
    if (CHECK(st == NN_OK, "attn_forward returned %d (%s)", st, nn_last_error())) {
        static const double want[2] = {0, 1};
        CHECK_ARRAY(t.weights, want, 2, 0, 0, 0, "weights");
        CHECK_CLOSE(t.context[0], 2, 0, 0, "context");
    }
    /* ties share the weight equally however small tau is */
    static const double k2[3] = {2, 1, 2};
    call_init(&t, ATTN_SCORE_DOT, ATTN_NORM_SOFTMAX, 1e-40, 1, 3, 1, 1, q, k2, NULL);
    check_case("temperature 1e-40, scores [2, 1, 2]");
    st = call_forward(&t);
    if (CHECK(st == NN_OK, "attn_forward returned %d (%s)", st, nn_last_error())) {
        static const double want[3] = {0.5, 0, 0.5};
        CHECK_ARRAY(t.weights, want, 3, 0, 0, 0, "weights");
    }
    alloc_release(mark);
}

static void test_close_large_scores(void) {
    size_t mark = alloc_mark();
    /* e = [10000, 9999.5], tau = 0.3: a_0 = 1 / (1 + exp(-0.5 / 0.3)) = 0.841131...;
     * dividing before subtracting gave 0.841305 */
    static const double q[1] = {1}, k[2] = {10000, 9999.5};
    Call t;
    call_init(&t, ATTN_SCORE_DOT, ATTN_NORM_SOFTMAX, 0.3, 1, 2, 1, 1, q, k, NULL);
    check_case("scores [10000, 9999.5], tau 0.3");
    int st = call_forward(&t);
    if (CHECK(st == NN_OK, "attn_forward returned %d (%s)", st, nn_last_error())) {
        double a0 = 1 / (1 + exp(-0.5 / (double)(nn_real)0.3));
        double want[2] = {a0, 1 - a0};
        CHECK_ARRAY(t.weights, want, 2, 0, 4 * TOL_EPS, 0, "weights");
    }
    /* many large, close scores at several temperatures against ref.h */
    Rng r = {77};
    for (int trial = 0; trial < 24; trial++) {
        int n = rng_int(&r, 1, 40);
        double tau = trial % 3 == 0 ? 0.05 : trial % 3 == 1 ? 0.3 : 7;
        double base = rng_uniform(&r, -3e4, 3e4);
        double *kd = alloc_doubles((size_t)n), qd[1] = {1};
        for (int j = 0; j < n; j++) kd[j] = base + rng_uniform(&r, -2, 2);
        call_init(&t, ATTN_SCORE_DOT, ATTN_NORM_SOFTMAX, tau, 1, n, 1, 1, qd, kd, NULL);
        double *e = alloc_doubles((size_t)n), *a = alloc_doubles((size_t)n), z[1];
        /* the reference sees the float32-rounded keys and temperature */
        ref_attention(&t.c, &t.p, t.q, t.k, t.v, e, a, z);
        check_case("large close scores, n=%d, base %.0f, tau %g", n, base, tau);
        int st2 = call_forward(&t);
        if (CHECK(st2 == NN_OK, "attn_forward returned %d (%s)", st2, nn_last_error()))
            CHECK_ARRAY(t.weights, a, (size_t)n, 0, 1e-5, 1e-4, "weights");
    }
    alloc_release(mark);
}

/* ---- exp underflows to 0 -------------------------------------------------- */

static void test_exp_underflow(void) {
    size_t mark = alloc_mark();
    /* weight exp(-1000) is 0, so the huge value adds nothing: context 1 */
    static const double q[1] = {1}, k[2] = {-1000, 0}, v[2] = {3e38, 1};
    Call t;
    call_init(&t, ATTN_SCORE_DOT, ATTN_NORM_SOFTMAX, 1, 1, 2, 1, 1, q, k, v);
    check_case("keys [-1000, 0], values [3e38, 1]");
    int st = call_forward(&t);
    if (CHECK(st == NN_OK, "attn_forward returned %d (%s)", st, nn_last_error())) {
        CHECK(t.weights[0] == 0, "weight of the -1000 key: got %g, want 0", (double)t.weights[0]);
        CHECK_CLOSE(t.context[0], 1, 0, 0, "context");
    }
    /* the primitive: exp of anything below -87.3 (float; -745 in double) is
     * exactly 0, on every lane */
    const double under = sizeof(nn_real) == 8 ? -800.0 : -88.0;
    for (int n = 1; n <= 13; n++) {
        nn_real *x = alloc_reals((size_t)n), *y = alloc_reals((size_t)n);
        for (int i = 0; i < n; i++) x[i] = (nn_real)(i % 2 ? under - 50 * i : -1.0 * i);
        nn_real s = vec_exp_sum(y, x, 0, n);
        double want = 0;
        int ok = 1;
        for (int i = 0; i < n; i++) {
            if (i % 2) ok &= y[i] == 0;
            else want += exp(-1.0 * i);
        }
        check_case("vec_exp_sum underflow, n=%d", n);
        CHECK(ok, "exp of arguments below %g is not 0", under);
        CHECK_CLOSE(s, want, 0, 8 * TOL_EPS, "sum");
        nn_real s2 = vec_exp_sum_tau(y, x, 0, (nn_real)1e-30, n);
        CHECK_CLOSE(s2, 1, 0, 0, "sum at tau 1e-30 (only x = 0 survives)");
    }
    alloc_release(mark);
}

/* ---- overflow is an error, never a silent inf, NaN or fake mask -----------
 * BIG squared overflows nn_real; HUGE_V is near its largest value. */
#ifdef NN_DOUBLE
#define BIG 1e200
#define HUGE_V 1.5e308
#else
#define BIG 1e20
#define HUGE_V 3e38
#endif

static void test_score_overflow(void) {
    size_t mark = alloc_mark();
    Call t;
    /* a NaN score (inf - inf) next to a finite one: the max must not skip it */
    static const double q[2] = {BIG, BIG}, k[4] = {0, 0, BIG, -BIG};
    call_init(&t, ATTN_SCORE_DOT, ATTN_NORM_SOFTMAX, 1, 1, 2, 2, 2, q, k, NULL);
    check_case("a NaN score beside a finite one");
    int st = call_forward(&t);
    CHECK(st == NN_ERR_VALUE && strstr(nn_last_error(), "scores[0][1]"),
          "got status %d (%s), want ERR_VALUE naming scores[0][1]", st, nn_last_error());
    /* a score that overflows to -inf would look like a masked cell */
    static const double q1[1] = {BIG}, k1[2] = {1, -BIG};
    call_init(&t, ATTN_SCORE_DOT, ATTN_NORM_SOFTMAX, 1, 1, 2, 1, 1, q1, k1, NULL);
    check_case("an unmasked score of -inf");
    st = call_forward(&t);
    CHECK(st == NN_ERR_VALUE && strstr(nn_last_error(), "scores[0][1]") && strstr(nn_last_error(), "infinite"),
          "got status %d (%s), want ERR_VALUE naming scores[0][1]", st, nn_last_error());
    /* the same under 'sum' normalisation, and with a longer row (vector path) */
    call_init(&t, ATTN_SCORE_DOT, ATTN_NORM_SUM, 1, 1, 2, 1, 1, q1, k1, NULL);
    check_case("an overflowing score under 'sum'");
    st = call_forward(&t);
    CHECK(st == NN_ERR_VALUE, "got status %d (%s), want ERR_VALUE", st, nn_last_error());
    for (int n = 1; n <= 11; n++)
        for (int at = 0; at < n; at++) {
            double *kd = alloc_doubles((size_t)n), qd[1] = {BIG};
            for (int j = 0; j < n; j++) kd[j] = (1 / BIG) * (j + 1);
            kd[at] = (at % 2 ? -1 : 1) * BIG;
            call_init(&t, ATTN_SCORE_DOT, ATTN_NORM_SOFTMAX, 1, 1, n, 1, 1, qd, kd, NULL);
            check_case("n=%d, score %d overflows", n, at);
            char want[32];
            snprintf(want, sizeof want, "scores[0][%d]", at);
            st = call_forward(&t);
            CHECK(st == NN_ERR_VALUE && strstr(nn_last_error(), want), "got %d (%s), want ERR_VALUE naming %s", st,
                  nn_last_error(), want);
        }
    alloc_release(mark);
}

static void test_context_overflow(void) {
    size_t mark = alloc_mark();
    /* 'sum' weights [2, -1] on values [HUGE_V, -HUGE_V]: the context is 9e38 */
    static const double q[1] = {1}, k[2] = {1, -0.5}, v[2] = {HUGE_V, -HUGE_V};
    Call t;
    call_init(&t, ATTN_SCORE_DOT, ATTN_NORM_SUM, 1, 1, 2, 1, 1, q, k, v);
    check_case("context 9e38");
    int st = call_forward(&t);
    CHECK(st == NN_ERR_VALUE && strstr(nn_last_error(), "context[0][0]"),
          "got status %d (%s), want ERR_VALUE naming context[0][0]", st, nn_last_error());
    /* context-only call (scores and weights in scratch) says the same */
    call_init(&t, ATTN_SCORE_DOT, ATTN_NORM_SUM, 1, 1, 2, 1, 1, q, k, v);
    st = attn_forward(&t.c, &t.p, NULL, NULL, t.context, t.q, t.k, t.v, t.scratch);
    CHECK(st == NN_ERR_VALUE && strstr(nn_last_error(), "context"), "context only: got %d (%s)", st,
          nn_last_error());
    alloc_release(mark);
}

static void test_self_attention_overflow(void) {
    size_t mark = alloc_mark();
    nn_real x[1] = {(nn_real)BIG}, tiny[1] = {(nn_real)(1 / BIG)}, big[1] = {(nn_real)BIG};
    SelfAttnConfig c = {.n = 1, .d_in = 1, .d_k = 1, .d_v = 1, .d_out = 1, .heads = 1,
                        .score = ATTN_SCORE_SCALED_DOT};
    SelfAttnActs a = {alloc_reals(1), alloc_reals(1), alloc_reals(1), alloc_reals(1), alloc_reals(1),
                      alloc_reals(1), alloc_reals(1)};
    nn_real *scratch = alloc_reals(attn_self_scratch_size(&c));
    struct {
        const char *name, *want;
        SelfAttnWeights w;
    } cases[] = {
        {"output = context Wo overflows", "output[0][0]", {tiny, tiny, NULL, big}},
        {"V = X Wv overflows", "v[0][0]", {tiny, tiny, big, NULL}},
        {"Q = X Wq overflows", "q[0][0]", {big, tiny, NULL, NULL}},
    };
    for (int i = 0; i < 3; i++) {
        check_case("self-attention: %s", cases[i].name);
        int st = attn_self_forward(&c, &cases[i].w, &a, x, scratch);
        CHECK(st == NN_ERR_VALUE && strstr(nn_last_error(), cases[i].want),
              "got status %d (%s), want ERR_VALUE naming %s", st, nn_last_error(), cases[i].want);
    }
    alloc_release(mark);
}

/* ---- cosine on scaled norms ----------------------------------------------- */

static void test_cosine_scaled(void) {
    size_t mark = alloc_mark();
    struct {
        const char *name;
        double q[2], k[2], want;
    } cases[] = {
        {"[3e38, 3e38] with itself", {3e38, 3e38}, {3e38, 3e38}, 1},
        {"[3e38, 3e38] . [3e38, -3e38]", {3e38, 3e38}, {3e38, -3e38}, 0},
        {"norms above 1.8e19", {1e20, 0}, {1e20, 1e20}, 0.70710678118654752},
        {"[-3.4e38, 1] . [1, 0]", {-3.4e38, 1}, {1, 0}, -1},
        {"tiny [1e-23, 2e-23] with itself", {1e-23, 2e-23}, {1e-23, 2e-23}, 1},
        {"tiny [1e-23, 2e-23] . [2e-23, -1e-23]", {1e-23, 2e-23}, {2e-23, -1e-23}, 0},
        {"tiny [1e-23, 2e-23] . [1e-23, 0]", {1e-23, 2e-23}, {1e-23, 0}, 0.44721359549995794},
        {"subnormal [1e-44, 0] . [1, 1]", {1e-44, 0}, {1, 1}, 0.70710678118654752},
        {"huge . tiny", {3e38, 1e38}, {1e-30, 1e-30}, 0.89442719099991588},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        Call t;
        call_init(&t, ATTN_SCORE_COSINE, ATTN_NORM_SOFTMAX, 1, 1, 1, 2, 2, cases[i].q, cases[i].k, NULL);
        check_case("cosine %s", cases[i].name);
        /* the reference cosine of the float32-rounded inputs, in double */
        double qd[2] = {t.q[0], t.q[1]}, kd[2] = {t.k[0], t.k[1]};
        double want = (qd[0] * kd[0] + qd[1] * kd[1]) /
                      (sqrt(qd[0] * qd[0] + qd[1] * qd[1]) * sqrt(kd[0] * kd[0] + kd[1] * kd[1]));
        CHECK_CLOSE(want, cases[i].want, 1e-6, 0, "test bug: the listed cosine");
        int st = call_forward(&t);
        if (CHECK(st == NN_OK, "attn_forward returned %d (%s)", st, nn_last_error())) {
            CHECK_CLOSE(t.scores[0], want, 4 * TOL_EPS, 0, "score");
            CHECK(t.scores[0] <= 1 && t.scores[0] >= -1, "score %g outside [-1, 1]", (double)t.scores[0]);
        }
    }
    /* random rows with exponents across the float range against ref.h */
    Rng r = {2024};
    for (int trial = 0; trial < 60; trial++) {
        int n_q = rng_int(&r, 1, 5), n_k = rng_int(&r, 1, 9), d = rng_int(&r, 1, 11);
        double *qd = alloc_doubles((size_t)n_q * d), *kd = alloc_doubles((size_t)n_k * d);
        for (int i = 0; i < n_q; i++) {
            double s = pow(10, rng_uniform(&r, -40, 37.5));
            for (int a = 0; a < d; a++) qd[i * d + a] = s * rng_uniform(&r, -1, 1);
        }
        for (int j = 0; j < n_k; j++) {
            double s = pow(10, rng_uniform(&r, -40, 37.5));
            for (int a = 0; a < d; a++) kd[j * d + a] = s * rng_uniform(&r, -1, 1);
        }
        Call t;
        call_init(&t, ATTN_SCORE_COSINE, ATTN_NORM_SOFTMAX, 1, n_q, n_k, d, d, qd, kd, kd);
        t.p.beta = (nn_real)rng_uniform(&r, 0.5, 4);
        double *e = alloc_doubles((size_t)n_q * n_k), *a = alloc_doubles((size_t)n_q * n_k);
        double *z = alloc_doubles((size_t)n_q * d);
        ref_attention(&t.c, &t.p, t.q, t.k, t.v, e, a, z);
        check_case("cosine of rows scaled by 1e-40..1e37, %d x %d, d=%d", n_q, n_k, d);
        int st = call_forward(&t);
        if (CHECK(st == NN_OK, "attn_forward returned %d (%s)", st, nn_last_error())) {
            CHECK_ARRAY(t.scores, e, (size_t)n_q * n_k, n_k, 1e-5, 1e-5, "scores");
            CHECK_ARRAY(t.weights, a, (size_t)n_q * n_k, n_k, 1e-5, 1e-5, "weights");
            /* values span 1e-40..1e37 too: compare the context relative to its row's largest value */
            CHECK(all_finite(t.context, (size_t)n_q * d), "context not finite");
        }
    }
    alloc_release(mark);
}

/* ---- 'sum' normalisation near zero: one rule ------------------------------ */

static void test_sum_rule(void) {
    size_t mark = alloc_mark();
    struct {
        const char *name;
        double k[2];
        int want;
    } cases[] = {
        {"[1, -1]: exactly zero", {1, -1}, NN_ERR_ZERO_SUM},
        {"[1, -(1 - 2^-24)]: rounding noise", {1, -0.99999994039535522}, NN_ERR_ZERO_SUM},
        {"[1e-30, 0]: tiny but clean", {1e-30, 0}, NN_OK},
        {"[1, -0.999]: small, well above rounding", {1, -0.999}, NN_OK},
        {"[0, 0]", {0, 0}, NN_ERR_ZERO_SUM},
    };
    static const double q[1] = {1}, v[2] = {1, 2};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        Call t;
        call_init(&t, ATTN_SCORE_DOT, ATTN_NORM_SUM, 1, 1, 2, 1, 1, q, cases[i].k, v);
        check_case("sum: %s", cases[i].name);
        int st = call_forward(&t);
        CHECK(st == cases[i].want, "got status %d (%s), want %d", st, nn_last_error(), cases[i].want);
        if (st == NN_OK) {
            double k0 = t.k[0], k1 = t.k[1], s = k0 + k1;
            double want[2] = {k0 / s, k1 / s};
            CHECK_ARRAY(t.weights, want, 2, 0, 0, 4 * TOL_EPS, "weights e / sum e");
            CHECK(all_finite(t.context, 1), "context not finite");
        }
    }
    /* temperature cancels under 'sum' (documented): tau = 0.3 gives e / sum e */
    static const double k3[3] = {1, 2, 5};
    Call t;
    call_init(&t, ATTN_SCORE_DOT, ATTN_NORM_SUM, 0.3, 1, 3, 1, 1, q, k3, NULL);
    check_case("sum with temperature 0.3");
    int st = call_forward(&t);
    static const double want[3] = {0.125, 0.25, 0.625};
    if (CHECK(st == NN_OK, "got %d (%s)", st, nn_last_error())) CHECK_ARRAY(t.weights, want, 3, 0, 0, 2 * TOL_EPS, "weights");
    alloc_release(mark);
}

/* ---- the work limit ------------------------------------------------------- */

static void test_work_limit(void) {
    size_t mark = alloc_mark();
    /* sizes only: attn_check rejects before reading any input past the
     * parameters, so the inputs here are 1-element stand-ins where unread */
    struct {
        const char *name;
        AttnConfig c;
        int want;
    } cases[] = {
        {"additive 2048 x 2048, h 4096", {2048, 2048, 1, 1, 1, 4096, ATTN_SCORE_ADDITIVE, 0, 1, 0, NULL, 0}, NN_ERR_LIMIT},
        {"additive 2048 x 2048, h 64", {2048, 2048, 1, 1, 1, 64, ATTN_SCORE_ADDITIVE, 0, 1, 0, NULL, 0}, NN_ERR_LIMIT},
        {"additive 512 x 512, h 32", {512, 512, 1, 1, 1, 32, ATTN_SCORE_ADDITIVE, 0, 1, 0, NULL, 0}, NN_OK},
        {"dot 2048 x 2048, d 4096", {2048, 2048, 4096, 4096, 4096, 0, ATTN_SCORE_DOT, 0, 1, 0, NULL, 0}, NN_ERR_LIMIT},
        {"general 4096 x 1, 4096 x 4096 W", {4096, 1, 4096, 4096, 1, 0, ATTN_SCORE_GENERAL, 0, 1, 0, NULL, 0}, NN_ERR_LIMIT},
        {"location 2048 x 2048, d 4096", {2048, 2048, 4096, 1, 1, 0, ATTN_SCORE_LOCATION, 0, 1, 0, NULL, 0}, NN_ERR_LIMIT},
        {"scaled_dot 1024 x 1024, d 64", {1024, 1024, 64, 64, 64, 0, ATTN_SCORE_SCALED_DOT, 0, 1, 0, NULL, 0}, NN_OK},
        {"scaled_dot 2048 x 2048, d 64", {2048, 2048, 64, 64, 64, 0, ATTN_SCORE_SCALED_DOT, 0, 1, 0, NULL, 0}, NN_OK},
        {"scaled_dot 2048 x 2048, d 256", {2048, 2048, 256, 256, 256, 0, ATTN_SCORE_SCALED_DOT, 0, 1, 0, NULL, 0}, NN_ERR_LIMIT},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        AttnConfig *c = &cases[i].c;
        check_case("work limit: %s", cases[i].name);
        double work = attn_work(c);
        CHECK((work > ATTN_MAX_WORK) == (cases[i].want == NN_ERR_LIMIT), "attn_work %.3g vs the limit %.3g", work,
              ATTN_MAX_WORK);
        size_t hq = (size_t)c->hidden * c->d_q, hk = (size_t)c->hidden * c->d_k;
        size_t wn = c->score == ATTN_SCORE_GENERAL ? (size_t)c->d_q * c->d_k : (size_t)c->n_k * c->d_q;
        nn_real *q = alloc_zeros((size_t)c->n_q * c->d_q), *k = alloc_zeros((size_t)c->n_k * c->d_k);
        nn_real *v = alloc_zeros((size_t)c->n_k * c->d_v);
        AttnParams p = {.beta = 1};
        if (c->score == ATTN_SCORE_ADDITIVE) {
            p.Wq = alloc_zeros(hq);
            p.Wk = alloc_zeros(hk);
            p.v = alloc_zeros((size_t)c->hidden);
        } else if (c->score == ATTN_SCORE_GENERAL || c->score == ATTN_SCORE_LOCATION) {
            p.W = alloc_zeros(wn);
        }
        int st = attn_check(c, &p, q, k, v);
        CHECK(st == cases[i].want, "attn_check returned %d (%s), want %d", st, nn_last_error(), cases[i].want);
        if (st == NN_ERR_LIMIT) CHECK(strstr(nn_last_error(), "work") != NULL, "message: %s", nn_last_error());
        alloc_release(mark);
    }
    /* self-attention: 2048 tokens of width 512 is over 4.3e9 multiply-adds */
    SelfAttnConfig sc = {.n = 2048, .d_in = 512, .d_k = 512, .d_v = 512, .d_out = 512, .heads = 1,
                         .score = ATTN_SCORE_DOT};
    nn_real *x = alloc_zeros((size_t)sc.n * sc.d_in);
    SelfAttnWeights w = {NULL, NULL, NULL, NULL};
    check_case("self-attention work limit: 2048 tokens x 512");
    int st = attn_self_check(&sc, &w, x);
    CHECK(st == NN_ERR_LIMIT && strstr(nn_last_error(), "work"), "got %d (%s), want ERR_LIMIT", st, nn_last_error());
    sc.n = 1024, sc.d_in = sc.d_k = sc.d_v = sc.d_out = 64;
    check_case("self-attention within the limit: 1024 tokens x 64");
    st = attn_self_check(&sc, &w, x);
    CHECK(st == NN_OK, "got %d (%s)", st, nn_last_error());
    alloc_release(mark);
}

/* ---- vec_max_finite sees NaN and infinities anywhere ---------------------- */

static void test_max_finite(void) {
    size_t mark = alloc_mark();
    const double bad[3] = {NAN, INFINITY, -INFINITY};
    for (int n = 1; n <= 19; n++) {
        nn_real *x = alloc_reals((size_t)n);
        for (int i = 0; i < n; i++) x[i] = (nn_real)(-3 + 0.1 * i);
        check_case("vec_max_finite n=%d", n);
        CHECK(vec_max_finite(x, n) == x[n - 1], "finite row: got %g", (double)vec_max_finite(x, n));
        for (int at = 0; at < n; at++)
            for (int b = 0; b < 3; b++) {
                nn_real keep = x[at];
                x[at] = (nn_real)bad[b];
                CHECK(isnan(vec_max_finite(x, n)), "%g at %d: got %g, want NaN", bad[b], at,
                      (double)vec_max_finite(x, n));
                x[at] = keep;
            }
    }
    alloc_release(mark);
}

/* ---- attn_check_bounds: "cannot fail" only where the forward cannot -------
 * Every score on random inputs from magnitude 1 to past where its scores
 * overflow: a call attn_check_bounds calls safe (may_fail 0) must succeed
 * (the WASM boundary then writes the caller's outputs in place, so a failure
 * there would spoil them), and ordinary magnitudes must be called safe. A
 * 'sum' call always may fail. Bad inputs get attn_check's errors. */
static void test_check_bounds(void) {
    Rng r = {4242};
    enum { NQ = 5, NK = 7, D = 3, DV = 2, H = 4 };
    for (int score = 0; score < ATTN_SCORE_COUNT; score++)
        for (int norm = 0; norm < ATTN_NORM_COUNT; norm++)
            for (int e = 0; e <= 36; e += 4) { /* up to 1e36: float32 inputs */
                size_t mark = alloc_mark();
                double big = pow(10, e), half = pow(10, e / 2);
                AttnConfig c = {NQ, NK, D, D, DV, score == ATTN_SCORE_ADDITIVE ? H : 0, (AttnScore)score,
                                (AttnNorm)norm, 1, 0, NULL, 0};
                nn_real *q = alloc_random(&r, NQ * D, -big, big), *k = alloc_random(&r, NK * D, -big, big);
                nn_real *v = alloc_random(&r, NK * DV, -big, big);
                AttnParams p = {alloc_random(&r, score == ATTN_SCORE_LOCATION ? NK * D : D * D, -half, half),
                                alloc_random(&r, H * D, -half, half), alloc_random(&r, H * D, -half, half),
                                alloc_random(&r, H, -half, half), (nn_real)1.5};
                nn_real *out = alloc_reals(2 * NQ * NK + NQ * DV), *scratch = alloc_reals(attn_scratch_size(&c));
                int may_fail = -1, st = attn_check_bounds(&c, &p, q, k, v, &may_fail);
                check_case("%s %s at 1e%d", attn_score_name((AttnScore)score), norm ? "sum" : "softmax", e);
                CHECK(st == NN_OK && (may_fail == 0 || may_fail == 1), "check: %d (%s), may_fail %d", st,
                      nn_last_error(), may_fail);
                if (norm == ATTN_NORM_SUM) CHECK(may_fail == 1, "'sum' said it cannot fail");
                if (norm == ATTN_NORM_SOFTMAX && e == 0) CHECK(may_fail == 0, "magnitude 1 said it may fail");
                if (may_fail == 0) {
                    st = attn_forward(&c, &p, out, out + NQ * NK, out + 2 * NQ * NK, q, k, v, scratch);
                    CHECK(st == NN_OK, "called safe, then failed: %d (%s)", st, nn_last_error());
                }
                alloc_release(mark);
            }
    /* the additive score's pre-activation 1.5 * 3e38 + 2 * -3e38: inf + -inf = NaN in float32 (finite
     * in double) */
    nn_real q[1] = {1}, k[2] = {1.5f, 2}, Wq[1] = {0}, Wk[2] = {(nn_real)3e38, (nn_real)-3e38}, vv[1] = {1};
    AttnConfig c = {1, 1, 1, 2, 2, 1, ATTN_SCORE_ADDITIVE, ATTN_NORM_SOFTMAX, 1, 0, NULL, 0};
    AttnParams p = {NULL, Wq, Wk, vv, 1};
#ifdef NN_DOUBLE
    const int want_may_fail = 0;
#else
    const int want_may_fail = 1;
#endif
    int may_fail = -1, st = attn_check_bounds(&c, &p, q, k, k, &may_fail);
    check_case("additive, Wk 3e38");
    CHECK(st == NN_OK && may_fail == want_may_fail, "status %d, may_fail %d", st, may_fail);
    /* bad inputs: attn_check's error and message */
    q[0] = NAN;
    char want[256];
    int want_st = attn_check(&c, &p, q, k, k);
    snprintf(want, sizeof want, "%s", nn_last_error());
    check_case("a NaN query");
    CHECK(attn_check_bounds(&c, &p, q, k, k, &may_fail) == want_st && want_st == NN_ERR_VALUE &&
              strcmp(nn_last_error(), want) == 0,
          "got '%s', want '%s'", nn_last_error(), want);
}

int main(void) {
    test_tiny_temperature();
    test_close_large_scores();
    test_exp_underflow();
    test_score_overflow();
    test_context_overflow();
    test_self_attention_overflow();
    test_cosine_scaled();
    test_sum_rule();
    test_work_limit();
    test_max_finite();
    test_check_bounds();
    return check_summary();
}
