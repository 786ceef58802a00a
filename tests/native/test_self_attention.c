/* attn_self_forward against the float64 reference of ref.h: no projections
 * (Q = K = V = X), wq/wk/wv, wo, 1/2/4 heads, causal, scores dot, scaled_dot
 * and cosine; agreement with attn_forward per head; permutation
 * equivariance; causality; the error paths. */
#include "attnlab/attention.h"
#include "check.h"
#include "fd.h"
#include "ref.h"

static const char *score_name(AttnScore s) {
    return s == ATTN_SCORE_DOT ? "dot" : s == ATTN_SCORE_SCALED_DOT ? "scaled_dot" : "cosine";
}

/* Which projections a case has. */

typedef struct {
    SelfAttnConfig c;
    SelfAttnWeights w;
    nn_real *x, *wq, *wk, *wv, *wo;
    SelfAttnActs a;
    nn_real *scratch;
    RefSelfActs r;
} SelfCase;

static void self_acts(SelfCase *t) {
    self_acts_alloc(&t->c, &t->a, &t->r);
    t->scratch = alloc_reals(attn_self_scratch_size(&t->c));
}

/* widths: d_k 8 and d_v 4 (or 8) with projections, d_out 3 or 5 with wo */
static void self_setup(SelfCase *t, Rng *r, int n, int d_in, int heads, Proj proj, AttnScore score, int causal) {
    memset(t, 0, sizeof *t);
    SelfAttnConfig *c = &t->c;
    c->n = n, c->d_in = d_in, c->heads = heads, c->score = score, c->causal = causal;
    proj_widths(c, proj);
    int qk = proj_has_qk(proj), has_v = proj_has_v(proj), has_o = proj_has_o(proj);
    double s = 1 / sqrt((double)d_in);
    t->x = alloc_random(r, (size_t)n * d_in, -1, 1);
    t->wq = qk ? alloc_random(r, (size_t)d_in * c->d_k, -1.5 * s, 1.5 * s) : NULL;
    t->wk = qk ? alloc_random(r, (size_t)d_in * c->d_k, -1.5 * s, 1.5 * s) : NULL;
    t->wv = has_v ? alloc_random(r, (size_t)d_in * c->d_v, -s, s) : NULL;
    t->wo = has_o ? alloc_random(r, (size_t)c->d_v * c->d_out, -1, 1) : NULL;
    t->w.wq = t->wq, t->w.wk = t->wk, t->w.wv = t->wv, t->w.wo = t->wo;
    self_acts(t);
}

static int self_forward(SelfCase *t) { return attn_self_forward(&t->c, &t->w, &t->a, t->x, t->scratch); }

static void check_self_against_ref(SelfCase *t) {
    SelfAttnConfig *c = &t->c;
    int st = self_forward(t);
    if (!CHECK(st == NN_OK, "attn_self_forward returned %d (%s)", st, nn_last_error())) return;
    ref_self_attention(c, &t->w, t->x, &t->r);
    size_t n = (size_t)c->n, cells = (size_t)c->heads * n * n;
    double at = TOL_FWD_ATOL, rt = TOL_FWD_RTOL;
    CHECK_ARRAY(t->a.q, t->r.q, n * c->d_k, c->d_k, at, rt, "acts.q");
    CHECK_ARRAY(t->a.k, t->r.k, n * c->d_k, c->d_k, at, rt, "acts.k");
    CHECK_ARRAY(t->a.v, t->r.v, n * c->d_v, c->d_v, at, rt, "acts.v");
    CHECK_ARRAY(t->a.scores, t->r.scores, cells, c->n, at, rt, "acts.scores (heads, n, n)");
    CHECK_ARRAY(t->a.weights, t->r.weights, cells, c->n, at, rt, "acts.weights (heads, n, n)");
    CHECK_ARRAY(t->a.context, t->r.context, n * c->d_v, c->d_v, at, rt, "acts.context");
    CHECK_ARRAY(t->a.output, t->r.output, n * c->d_out, c->d_out, at, rt, "acts.output");
}

static void test_reference(Rng *r) {
    static const int sizes[][2] = {{1, 8}, {5, 8}, {9, 4}, {7, 12}, {16, 8}};
    static const AttnScore scores[3] = {ATTN_SCORE_DOT, ATTN_SCORE_SCALED_DOT, ATTN_SCORE_COSINE};
    static const int heads[3] = {1, 2, 4};
    for (int si = 0; si < 5; si++)
        for (int proj = 0; proj < PROJ_COUNT; proj++)
            for (int hi = 0; hi < 3; hi++)
                for (int sc = 0; sc < 3; sc++)
                    for (int causal = 0; causal < 2; causal++) {
                        size_t mark = alloc_mark();
                        SelfCase t;
                        self_setup(&t, r, sizes[si][0], sizes[si][1], heads[hi], (Proj)proj, scores[sc], causal);
                        if (t.c.d_k % t.c.heads || t.c.d_v % t.c.heads) {
                            alloc_release(mark);
                            continue;
                        }
                        check_case("n=%d d_in=%d d_k=%d d_v=%d d_out=%d heads=%d proj=%s score=%s causal=%d", t.c.n,
                                   t.c.d_in, t.c.d_k, t.c.d_v, t.c.d_out, t.c.heads, proj_names[proj],
                                   score_name(scores[sc]), causal);
                        CHECK_OK(attn_self_check(&t.c, &t.w, t.x), "attn_self_check");
                        check_self_against_ref(&t);
                        if (proj == PROJ_NONE) {
                            /* no projections: Q = K = V = X, output = context */
                            size_t nd = (size_t)t.c.n * t.c.d_in;
                            CHECK_ARRAY_R(t.a.q, t.x, nd, t.c.d_in, 0, 0, "Q = X");
                            CHECK_ARRAY_R(t.a.k, t.x, nd, t.c.d_in, 0, 0, "K = X");
                            CHECK_ARRAY_R(t.a.v, t.x, nd, t.c.d_in, 0, 0, "V = X");
                            CHECK_ARRAY_R(t.a.output, t.a.context, nd, t.c.d_in, 0, 0, "output = context");
                        }
                        alloc_release(mark);
                    }
}

/* The tutorial's "self-attention without trainable weights": six 3-d
 * embeddings attend to each other; row 'journey' has the softmax weights of
 * the tutorial. */
static void test_tutorial(void) {
    static const double x6[18] = {0.43, 0.15, 0.89, 0.22, 0.58, 0.33, 0.77, 0.25, 0.10,
                                  0.05, 0.80, 0.55, 0.57, 0.85, 0.64, 0.55, 0.87, 0.66};
    static const double w_journey[6] = {0.1435, 0.1462, 0.1263, 0.1720, 0.2046, 0.2074};
    size_t mark = alloc_mark();
    SelfCase t;
    memset(&t, 0, sizeof t);
    t.c = (SelfAttnConfig){.n = 6, .d_in = 3, .d_k = 3, .d_v = 3, .d_out = 3, .heads = 1, .score = ATTN_SCORE_DOT};
    t.x = alloc_reals(18);
    for (int i = 0; i < 18; i++) t.x[i] = (nn_real)x6[i];
    self_acts(&t);
    check_case("tutorial self-attention without trainable weights");
    check_self_against_ref(&t);
    CHECK_ARRAY(t.a.weights + 6, w_journey, 6, 0, 5e-5 + 1e-6, 0, "weights of 'journey' to 4 decimals");
    /* z_2 = sum_j a_2j x_j in double */
    double e[6], s = 0, z[3] = {0, 0, 0};
    for (int j = 0; j < 6; j++) {
        e[j] = 0;
        for (int m = 0; m < 3; m++) e[j] += x6[3 + m] * x6[3 * j + m];
        s += e[j] = exp(e[j]);
    }
    for (int j = 0; j < 6; j++)
        for (int m = 0; m < 3; m++) z[m] += e[j] / s * x6[3 * j + m];
    CHECK_ARRAY(t.a.output + 3, z, 3, 0, TOL_FWD_ATOL, TOL_FWD_RTOL, "context of 'journey'");
    alloc_release(mark);
}

/* Each head is attn_forward on its column block of Q, K, V. */
static void test_heads_match_attn_forward(Rng *r) {
    static const AttnScore scores[3] = {ATTN_SCORE_DOT, ATTN_SCORE_SCALED_DOT, ATTN_SCORE_COSINE};
    for (int sc = 0; sc < 3; sc++)
        for (int causal = 0; causal < 2; causal++) {
            size_t mark = alloc_mark();
            SelfCase t;
            self_setup(&t, r, 6, 8, 2, PROJ_QKVO, scores[sc], causal);
            check_case("heads vs attn_forward, score=%s causal=%d", score_name(scores[sc]), causal);
            if (!CHECK_OK(self_forward(&t), "attn_self_forward")) {
                alloc_release(mark);
                continue;
            }
            int n = t.c.n, H = t.c.heads, dkh = t.c.d_k / H, dvh = t.c.d_v / H;
            AttnConfig hc = {.n_q = n, .n_k = n, .d_q = dkh, .d_k = dkh, .d_v = dvh, .score = scores[sc],
                             .norm = ATTN_NORM_SOFTMAX, .temperature = 1, .causal = causal};
            AttnParams p = {.beta = 1};
            for (int h = 0; h < H; h++) {
                nn_real *qh = alloc_reals((size_t)n * dkh), *kh = alloc_reals((size_t)n * dkh);
                nn_real *vh = alloc_reals((size_t)n * dvh), *zh = alloc_reals((size_t)n * dvh);
                nn_real *e = alloc_reals((size_t)n * n), *a = alloc_reals((size_t)n * n);
                nn_real *zs = alloc_reals((size_t)n * dvh), *scratch = alloc_reals(attn_scratch_size(&hc));
                for (int i = 0; i < n; i++) {
                    memcpy(qh + (size_t)i * dkh, t.a.q + (size_t)i * t.c.d_k + h * dkh, sizeof(nn_real) * dkh);
                    memcpy(kh + (size_t)i * dkh, t.a.k + (size_t)i * t.c.d_k + h * dkh, sizeof(nn_real) * dkh);
                    memcpy(vh + (size_t)i * dvh, t.a.v + (size_t)i * t.c.d_v + h * dvh, sizeof(nn_real) * dvh);
                    memcpy(zs + (size_t)i * dvh, t.a.context + (size_t)i * t.c.d_v + h * dvh, sizeof(nn_real) * dvh);
                }
                int st = attn_forward(&hc, &p, e, a, zh, qh, kh, vh, scratch);
                CHECK(st == NN_OK, "attn_forward head %d: %s", h, nn_last_error());
                size_t nn = (size_t)n * n;
                CHECK_ARRAY_R(t.a.scores + h * nn, e, nn, n, TOL_FWD_ATOL, TOL_FWD_RTOL, "head scores");
                CHECK_ARRAY_R(t.a.weights + h * nn, a, nn, n, TOL_FWD_ATOL, TOL_FWD_RTOL, "head weights");
                CHECK_ARRAY_R(zs, zh, (size_t)n * dvh, dvh, TOL_FWD_ATOL, TOL_FWD_RTOL, "head context block");
            }
            alloc_release(mark);
        }
}

/* Without a mask, permuting the tokens permutes the outputs' rows and both
 * axes of every head's weights. */
static void test_permutation(Rng *r) {
    static const AttnScore scores[3] = {ATTN_SCORE_DOT, ATTN_SCORE_SCALED_DOT, ATTN_SCORE_COSINE};
    for (int sc = 0; sc < 3; sc++)
        for (int proj = 0; proj < PROJ_COUNT; proj++) {
            size_t mark = alloc_mark();
            int n = 7;
            SelfCase t, u;
            self_setup(&t, r, n, 8, 2, (Proj)proj, scores[sc], 0);
            u = t;
            self_acts(&u);
            int perm[7] = {3, 0, 6, 1, 5, 2, 4}; /* row i of u.x is row perm[i] of t.x */
            u.x = alloc_reals((size_t)n * 8);
            for (int i = 0; i < n; i++) memcpy(u.x + (size_t)i * 8, t.x + (size_t)perm[i] * 8, sizeof(nn_real) * 8);
            check_case("permutation equivariance, score=%s proj=%s", score_name(scores[sc]), proj_names[proj]);
            int st1 = self_forward(&t), st2 = self_forward(&u);
            if (!CHECK(st1 == NN_OK && st2 == NN_OK, "attn_self_forward: %s", nn_last_error())) {
                alloc_release(mark);
                continue;
            }
            int d_out = t.c.d_out, H = t.c.heads;
            nn_real *out_p = alloc_reals((size_t)n * d_out), *w_p = alloc_reals((size_t)H * n * n);
            for (int i = 0; i < n; i++) {
                memcpy(out_p + (size_t)i * d_out, t.a.output + (size_t)perm[i] * d_out, sizeof(nn_real) * d_out);
                for (int h = 0; h < H; h++)
                    for (int j = 0; j < n; j++)
                        w_p[((size_t)h * n + i) * n + j] = t.a.weights[((size_t)h * n + perm[i]) * n + perm[j]];
            }
            CHECK_ARRAY_R(u.a.output, out_p, (size_t)n * d_out, d_out, TOL_FWD_ATOL, TOL_FWD_RTOL, "permuted output");
            CHECK_ARRAY_R(u.a.weights, w_p, (size_t)H * n * n, n, TOL_FWD_ATOL, TOL_FWD_RTOL, "permuted weights");
            alloc_release(mark);
        }
}

/* Causal: changing the last token leaves every earlier output unchanged. */
static void test_causality(Rng *r) {
    static const AttnScore scores[3] = {ATTN_SCORE_DOT, ATTN_SCORE_SCALED_DOT, ATTN_SCORE_COSINE};
    for (int sc = 0; sc < 3; sc++) {
        size_t mark = alloc_mark();
        int n = 6;
        SelfCase t, u;
        self_setup(&t, r, n, 4, 2, PROJ_QKVO, scores[sc], 1);
        u = t;
        self_acts(&u);
        u.x = alloc_reals((size_t)n * 4);
        memcpy(u.x, t.x, sizeof(nn_real) * (size_t)n * 4);
        for (int m = 0; m < 4; m++) u.x[(size_t)(n - 1) * 4 + m] += (nn_real)(0.5 + m);
        check_case("causality, score=%s", score_name(scores[sc]));
        CHECK(self_forward(&t) == NN_OK && self_forward(&u) == NN_OK, "attn_self_forward: %s", nn_last_error());
        size_t early = (size_t)(n - 1) * t.c.d_out;
        CHECK_ARRAY_R(u.a.output, t.a.output, early, t.c.d_out, TOL_FWD_ATOL, TOL_FWD_RTOL,
                      "outputs before the changed token");
        int moved = 0;
        for (int o = 0; o < t.c.d_out; o++) moved |= u.a.output[early + o] != t.a.output[early + o];
        CHECK(moved, "the changed token's own output did not change");
        alloc_release(mark);
    }
}

/* ---- errors ---------------------------------------------------------------- */

static const char *const status_names[] = {"OK", "SHAPE", "VALUE", "ARG", "PARAM", "LIMIT", "ZERO_SUM", "NOMEM"};
static const char *status_name(int s) { return s >= 0 && s <= 7 ? status_names[s] : "?"; }

/* attn_self_check and attn_self_forward return want (the acts were sized for
 * the valid case and must not be touched). */
static void expect_self_error(SelfCase *t, int want, const char *mention, const char *what) {
    check_case("error: %s", what);
    int st = attn_self_check(&t->c, &t->w, t->x);
    CHECK(st == want, "attn_self_check returned %s (%d), want %s: \"%s\"", status_name(st), st, status_name(want),
          nn_last_error());
    st = self_forward(t);
    CHECK(st == want, "attn_self_forward returned %s (%d), want %s: \"%s\"", status_name(st), st, status_name(want),
          nn_last_error());
    const char *msg = nn_last_error();
    CHECK(msg && msg[0], "nn_last_error() is empty after a failure");
    if (mention) CHECK(msg && strstr(msg, mention), "nn_last_error() \"%s\" does not mention \"%s\"", msg, mention);
}

static void test_errors(Rng *r) {
    size_t mark = alloc_mark();
    SelfCase t;

    /* sizes that do not fit together: a setup (n = 5, dot; widths of proj_widths), then
     * these sizes of SelfAttnConfig set to value */
    static const struct {
        int d_in, heads;
        Proj proj;
        size_t size[2]; /* offsets in SelfAttnConfig */
        int n_sizes, value;
        const char *what;
    } bad_sizes[] = {
        {8, 2, PROJ_QKVO, {offsetof(SelfAttnConfig, heads)}, 1, 3, "3 heads do not divide d_k = d_v = 8"},
        {8, 4, PROJ_QKV, {offsetof(SelfAttnConfig, heads)}, 1, 8, "8 heads divide d_k = 8 but not d_v = 4"},
        {6, 1, PROJ_VO, {offsetof(SelfAttnConfig, heads)}, 1, 4, "4 heads divide d_v = 4 but not d_k = 6"},
        {6, 1, PROJ_NONE, {offsetof(SelfAttnConfig, d_k)}, 1, 4, "wq/wk NULL with d_k != d_in"},
        {6, 1, PROJ_NONE, {offsetof(SelfAttnConfig, d_v), offsetof(SelfAttnConfig, d_out)}, 2, 4, "wv NULL with d_v != d_in"},
        {6, 1, PROJ_QKV, {offsetof(SelfAttnConfig, d_out)}, 1, 3, "wo NULL with d_out != d_v"},
        {8, 2, PROJ_QKVO, {offsetof(SelfAttnConfig, heads)}, 1, 0, "0 heads"},
        {8, 2, PROJ_QKVO, {offsetof(SelfAttnConfig, n)}, 1, 0, "n = 0"},
        {8, 2, PROJ_QKVO, {offsetof(SelfAttnConfig, d_in)}, 1, 0, "d_in = 0"},
    };
    for (size_t i = 0; i < sizeof bad_sizes / sizeof *bad_sizes; i++) {
        self_setup(&t, r, 5, bad_sizes[i].d_in, bad_sizes[i].heads, bad_sizes[i].proj, ATTN_SCORE_DOT, 0);
        for (int k = 0; k < bad_sizes[i].n_sizes; k++) *(int *)((char *)&t.c + bad_sizes[i].size[k]) = bad_sizes[i].value;
        expect_self_error(&t, NN_ERR_SHAPE, NULL, bad_sizes[i].what);
    }

    static const int bad_scores[4] = {ATTN_SCORE_GENERAL, ATTN_SCORE_ADDITIVE, ATTN_SCORE_LOCATION, 99};
    for (int i = 0; i < 4; i++) {
        self_setup(&t, r, 5, 8, 2, PROJ_QKVO, ATTN_SCORE_DOT, 0);
        t.c.score = (AttnScore)bad_scores[i];
        char what[64];
        snprintf(what, sizeof what, "self-attention with score %d", bad_scores[i]);
        expect_self_error(&t, NN_ERR_ARG, NULL, what);
    }

    /* one value that is not finite, in x or a weight (wo: d_v 8 x d_out 3) */
    static const struct {
        size_t array; /* offset of its pointer in SelfCase */
        int index;
        double value;
        const char *name, *what;
    } nonfinite[] = {
        {offsetof(SelfCase, x), 7, NAN, "x", "NaN in x"},
        {offsetof(SelfCase, wq), 3, INFINITY, "wq", "inf in wq"},
        {offsetof(SelfCase, wo), 8 * 3 - 1, NAN, "wo", "NaN in the last element of wo"},
    };
    for (size_t i = 0; i < sizeof nonfinite / sizeof *nonfinite; i++) {
        self_setup(&t, r, 5, 8, 2, PROJ_QKVO, ATTN_SCORE_DOT, 0);
        (*(nn_real **)((char *)&t + nonfinite[i].array))[nonfinite[i].index] = (nn_real)nonfinite[i].value;
        expect_self_error(&t, NN_ERR_VALUE, nonfinite[i].name, nonfinite[i].what);
    }

    {
        /* heads past ATTN_MAX_HEADS, dividing the widths */
        size_t m2 = alloc_mark();
        int H = ATTN_MAX_HEADS + 1;
        self_setup(&t, r, 2, 2 * H, 1, PROJ_NONE, ATTN_SCORE_DOT, 0);
        t.c.heads = H;
        expect_self_error(&t, NN_ERR_LIMIT, NULL, "heads = ATTN_MAX_HEADS + 1");
        alloc_release(m2);
    }
    {
        /* tokens past ATTN_MAX_TOKENS: attn_self_check only (acts would be 16M cells) */
        size_t m2 = alloc_mark();
        SelfAttnConfig c = {.n = ATTN_MAX_TOKENS + 1, .d_in = 1, .d_k = 1, .d_v = 1, .d_out = 1, .heads = 1,
                            .score = ATTN_SCORE_DOT};
        SelfAttnWeights w = {NULL, NULL, NULL, NULL};
        nn_real *x = alloc_random(r, (size_t)c.n, -1, 1);
        check_case("error: n = ATTN_MAX_TOKENS + 1");
        int st = attn_self_check(&c, &w, x);
        CHECK(st == NN_ERR_LIMIT, "attn_self_check returned %s (%d), want LIMIT", status_name(st), st);
        alloc_release(m2);
    }
    {
        /* backward validates too */
        self_setup(&t, r, 5, 8, 2, PROJ_QKVO, ATTN_SCORE_DOT, 0);
        CHECK_OK(self_forward(&t), "attn_self_forward");
        nn_real *dout = alloc_random(r, (size_t)5 * t.c.d_out, -1, 1);
        nn_real *dx = alloc_zeros((size_t)5 * 8);
        nn_real *scratch = alloc_reals(attn_self_scratch_size(&t.c));
        t.c.heads = 3;
        check_case("error: attn_self_backward with 3 heads for width 8");
        int st = attn_self_backward(&t.c, &t.w, NULL, dx, dout, &t.a, t.x, scratch);
        CHECK(st == NN_ERR_SHAPE, "attn_self_backward returned %s (%d), want SHAPE", status_name(st), st);
    }
    self_setup(&t, r, 5, 8, 4, PROJ_QKVO, ATTN_SCORE_COSINE, 1);
    check_case("valid call after errors");
    check_self_against_ref(&t);
    alloc_release(mark);
}

int main(void) {
    Rng r = {0x5e1f};
    test_tutorial();
    test_reference(&r);
    test_heads_match_attn_forward(&r);
    test_permutation(&r);
    test_causality(&r);
    test_errors(&r);
    return check_summary();
}
