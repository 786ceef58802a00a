/* Finite-difference checks of attn_backward and attn_self_backward.
 *
 * Loss L = sum(context * R) [+ sum(weights * R2)] for fixed random R, R2
 * (self-attention: L = sum(output * R)); gradients by central differences
 *   dL/dx_i ~ (L(x + h e_i) - L(x - h e_i)) / (2h).
 * Two numerical references:
 *   - differences of the engine's own forward. In the double build (NN_DOUBLE)
 *     h = 1e-6 and the tolerance is tight; in float builds h = 3e-3 and the
 *     tolerance loose, since float differences are noisy;
 *   - in float builds also differences of the float64 reference of ref.h,
 *     which are accurate, so the float backward is held to a tighter bound.
 * Also: backward accumulates (twice gives double), NULL gradients are skipped. */
#include "attnlab/attention.h"
#include "check.h"
#include "fd.h"
#include "ref.h"

#ifdef NN_DOUBLE
#define FD_H 1e-6
#define FD_ATOL 1e-7
#define FD_RTOL 1e-6
#else
#define FD_H 3e-3
#define FD_ATOL 2e-3
#define FD_RTOL 2e-2
#endif
/* float builds: the analytic float gradient vs differences of the float64 reference */
#define REF_H 1e-6
#define REF_ATOL 5e-5
#define REF_RTOL 5e-4
/* Repeated or partial backward calls round their internal sums (of terms of
 * order 1) in another order: a few ulps of 1, far from a missing or doubled term. */
#define ACC_ATOL (32 * TOL_EPS)

/* Accumulation, for the attention and the self-attention cases alike: copies
 * of the count gradients grad[k] (n[k] reals) of the tensors in use (x[k]
 * not NULL; NULL for the others) before a second backward... */
static void keep_grads(nn_real **first, nn_real *const *grad, nn_real *const *x, const size_t *n, int count) {
    for (int k = 0; k < count; k++) {
        first[k] = x[k] ? alloc_reals(n[k]) : NULL;
        if (first[k]) memcpy(first[k], grad[k], sizeof(nn_real) * n[k]);
    }
}

/* ...which accumulates: every gradient is then twice the first. */
static void check_doubled(nn_real *const *grad, nn_real *const *first, const size_t *n, const char *const *names,
                          int count) {
    for (int k = 0; k < count; k++) {
        if (!first[k]) continue;
        double *twice = alloc_doubles(n[k]);
        for (size_t i = 0; i < n[k]; i++) twice[i] = 2.0 * first[k][i];
        char what[96];
        snprintf(what, sizeof what, "%s after two backward calls = 2 x one call", names[k]);
        CHECK_ARRAY(grad[k], twice, n[k], 0, ACC_ATOL, 8 * TOL_EPS, what);
    }
}

static const char *const score_names[ATTN_SCORE_COUNT] = {"dot",    "scaled_dot", "general",
                                                          "additive", "cosine",   "location"};
static const char *const mask_names[4] = {"none", "causal", "key_lengths", "causal+key_lengths"};

/* ---- attention ------------------------------------------------------------- */

enum { T_Q, T_K, T_V, T_W, T_WQ, T_WK, T_VA, T_BETA, T_COUNT };
static const char *const tensor_names[T_COUNT] = {"dq", "dk", "dv", "dW", "dWq", "dWk", "dv (additive)", "dbeta"};

typedef struct {
    AttnConfig c;
    nn_real *x[T_COUNT];  /* inputs and parameters (NULL: unused by the score) */
    double *xd[T_COUNT];  /* float64 copies for the reference */
    size_t n[T_COUNT];
    nn_real *grad[T_COUNT];
    nn_real *R, *R2;      /* dL/dcontext (n_q, d_v), dL/dweights (n_q, n_k) or NULL */
    nn_real *scores, *weights, *context, *scratch;
    double *e, *a, *z;
} GradCase;

static AttnParams grad_params(const GradCase *t) {
    AttnParams p = {t->x[T_W], t->x[T_WQ], t->x[T_WK], t->x[T_VA], t->x[T_BETA][0]};
    return p;
}

static double engine_loss(GradCase *t) {
    AttnParams p = grad_params(t);
    int st = attn_forward(&t->c, &p, t->scores, t->weights, t->context, t->x[T_Q], t->x[T_K], t->x[T_V],
                          t->scratch);
    if (st != NN_OK) return NAN;
    double L = 0;
    for (size_t i = 0; i < (size_t)t->c.n_q * t->c.d_v; i++) L += (double)t->context[i] * t->R[i];
    if (t->R2)
        for (size_t i = 0; i < (size_t)t->c.n_q * t->c.n_k; i++) L += (double)t->weights[i] * t->R2[i];
    return L;
}

static double ref_loss(GradCase *t) {
    RefParams p = {t->xd[T_W], t->xd[T_WQ], t->xd[T_WK], t->xd[T_VA], t->xd[T_BETA][0]};
    ref_attention_d(&t->c, &p, t->xd[T_Q], t->xd[T_K], t->xd[T_V], t->e, t->a, t->z);
    double L = 0;
    for (size_t i = 0; i < (size_t)t->c.n_q * t->c.d_v; i++) L += t->z[i] * t->R[i];
    if (t->R2)
        for (size_t i = 0; i < (size_t)t->c.n_q * t->c.n_k; i++) L += t->a[i] * t->R2[i];
    return L;
}

static double engine_loss_of(void *t) { return engine_loss(t); }
static double ref_loss_of(void *t) { return ref_loss(t); }

/* Central differences of the engine's forward (and of the reference) over tensor k, into num. */
static void engine_fd(GradCase *t, int k, double *num) { fd_engine(t->x[k], t->n[k], FD_H, engine_loss_of, t, num); }
static void ref_fd(GradCase *t, int k, double *num) { fd_double(t->xd[k], t->n[k], REF_H, ref_loss_of, t, num); }

/* Forward at the unperturbed point, then backward into the gradients
 * (which the caller zeroes, or not, to test accumulation). */
static int run_backward(GradCase *t, nn_real *dq, nn_real *dk, nn_real *dv, AttnParamGrads *g) {
    AttnParams p = grad_params(t);
    int st = attn_forward(&t->c, &p, t->scores, t->weights, t->context, t->x[T_Q], t->x[T_K], t->x[T_V],
                          t->scratch);
    if (st != NN_OK) return st;
    /* a fresh NaN scratch: backward may not depend on what the forward left there */
    nn_real *scratch = alloc_reals(attn_scratch_size(&t->c));
    return attn_backward(&t->c, &p, g, dq, dk, dv, t->R, t->R2, t->scores, t->weights, t->x[T_Q], t->x[T_K],
                         t->x[T_V], scratch);
}

typedef struct {
    int n_q, n_k, d_q, d_k, d_v, h;
    int32_t key_lengths[4];
} GradShape;

static const GradShape grad_shapes[2] = {
    {3, 4, 3, 4, 2, 3, {2, 0, 4, 0}},
    {4, 3, 2, 3, 3, 2, {3, 1, 0, 2}},
};

static void grad_setup(GradCase *t, Rng *r, const GradShape *s, AttnScore score, AttnNorm norm, double tau,
                       int mask, int with_dweights) {
    memset(t, 0, sizeof *t);
    AttnConfig *c = &t->c;
    int same = score == ATTN_SCORE_DOT || score == ATTN_SCORE_SCALED_DOT || score == ATTN_SCORE_COSINE;
    c->n_q = s->n_q, c->n_k = s->n_k, c->d_q = s->d_q, c->d_k = same ? s->d_q : s->d_k, c->d_v = s->d_v;
    c->hidden = score == ATTN_SCORE_ADDITIVE ? s->h : 0;
    c->score = score, c->norm = norm, c->temperature = (nn_real)tau;
    c->causal = mask == 1 || mask == 3;
    if (mask >= 2) {
        int32_t *kl = alloc_ints((size_t)c->n_q);
        memcpy(kl, s->key_lengths, sizeof(int32_t) * (size_t)c->n_q);
        c->key_lengths = kl;
    }
    size_t h = (size_t)c->hidden;
    t->n[T_Q] = (size_t)c->n_q * c->d_q;
    t->n[T_K] = (size_t)c->n_k * c->d_k;
    t->n[T_V] = (size_t)c->n_k * c->d_v;
    if (score == ATTN_SCORE_GENERAL) t->n[T_W] = (size_t)c->d_q * c->d_k;
    if (score == ATTN_SCORE_LOCATION) t->n[T_W] = (size_t)c->n_k * c->d_q;
    if (score == ATTN_SCORE_ADDITIVE) t->n[T_WQ] = h * c->d_q, t->n[T_WK] = h * c->d_k, t->n[T_VA] = h;
    t->n[T_BETA] = 1;
    /* sum normalisation: positive inputs and parameters keep row sums away from 0 */
    double lo = norm == ATTN_NORM_SUM ? 0.2 : -1, hi = 1;
    for (int k = 0; k < T_COUNT; k++) {
        if (!t->n[k]) continue;
        t->x[k] = alloc_random(r, t->n[k], k == T_V ? -1 : lo, hi);
        t->grad[k] = alloc_zeros(t->n[k]);
        t->xd[k] = alloc_doubles(t->n[k]);
    }
    t->x[T_BETA][0] = norm == ATTN_NORM_SUM ? (nn_real)1.5 : (nn_real)2.5;
    for (int k = 0; k < T_COUNT; k++)
        for (size_t i = 0; i < t->n[k]; i++) t->xd[k][i] = (double)t->x[k][i];
    size_t cells = (size_t)c->n_q * c->n_k;
    t->R = alloc_random(r, (size_t)c->n_q * c->d_v, -1, 1);
    t->R2 = with_dweights ? alloc_random(r, cells, -1, 1) : NULL;
    t->scores = alloc_reals(cells);
    t->weights = alloc_reals(cells);
    t->context = alloc_reals((size_t)c->n_q * c->d_v);
    t->scratch = alloc_reals(attn_scratch_size(c));
    t->e = alloc_doubles(cells);
    t->a = alloc_doubles(cells);
    t->z = alloc_doubles((size_t)c->n_q * c->d_v);
}

static void test_attn_case(Rng *r, const GradShape *s, AttnScore score, AttnNorm norm, double tau, int mask,
                           int with_dweights) {
    size_t mark = alloc_mark();
    GradCase t;
    grad_setup(&t, r, s, score, norm, tau, mask, with_dweights);
    check_case("attn_backward nq=%d nk=%d score=%s norm=%s tau=%g mask=%s dweights=%s", t.c.n_q, t.c.n_k,
               score_names[score], norm ? "sum" : "softmax", tau, mask_names[mask], with_dweights ? "R2" : "NULL");
    AttnParamGrads g = {t.grad[T_W], t.grad[T_WQ], t.grad[T_WK], t.grad[T_VA], 0};
    int st = run_backward(&t, t.grad[T_Q], t.grad[T_K], t.grad[T_V], &g);
    if (!CHECK(st == NN_OK, "forward/backward returned %d (%s)", st, nn_last_error())) {
        alloc_release(mark);
        return;
    }
    t.grad[T_BETA][0] = g.beta;
    double *num = alloc_doubles(t.n[T_Q] + t.n[T_K] + t.n[T_V] + 64 * 64);
    for (int k = 0; k < T_COUNT; k++) {
        if (!t.x[k]) continue;
        if (k == T_BETA && score != ATTN_SCORE_COSINE) {
            CHECK(g.beta == 0, "dbeta = %g for a score without beta", (double)g.beta);
            continue;
        }
        char what[96];
        engine_fd(&t, k, num);
        snprintf(what, sizeof what, "%s vs differences of attn_forward", tensor_names[k]);
        int cols = k == T_Q ? t.c.d_q : k == T_K ? t.c.d_k : k == T_V ? t.c.d_v : 0;
        CHECK_ARRAY(t.grad[k], num, t.n[k], cols, FD_ATOL, FD_RTOL, what);
#ifndef NN_DOUBLE
        ref_fd(&t, k, num);
        snprintf(what, sizeof what, "%s vs differences of the float64 reference", tensor_names[k]);
        CHECK_ARRAY(t.grad[k], num, t.n[k], cols, REF_ATOL, REF_RTOL, what);
#else
        (void)ref_fd;
#endif
    }

    /* a second backward accumulates: every gradient doubles */
    nn_real *first[T_COUNT];
    keep_grads(first, t.grad, t.x, t.n, T_COUNT);
    st = run_backward(&t, t.grad[T_Q], t.grad[T_K], t.grad[T_V], &g);
    CHECK(st == NN_OK, "second backward returned %d", st);
    t.grad[T_BETA][0] = g.beta;
    check_doubled(t.grad, first, t.n, tensor_names, T_COUNT);

    /* NULL gradients are skipped: dq alone (g NULL), then dk, dv with an
     * AttnParamGrads whose members are all NULL; same values as above */
    nn_real *dq = alloc_zeros(t.n[T_Q]), *dk = alloc_zeros(t.n[T_K]), *dv = alloc_zeros(t.n[T_V]);
    AttnParamGrads none = {NULL, NULL, NULL, NULL, 0};
    st = run_backward(&t, dq, NULL, NULL, NULL);
    CHECK(st == NN_OK, "backward with only dq returned %d", st);
    st = run_backward(&t, NULL, dk, dv, &none);
    CHECK(st == NN_OK, "backward with only dk, dv returned %d", st);
    CHECK_ARRAY_R(dq, first[T_Q], t.n[T_Q], t.c.d_q, ACC_ATOL, 8 * TOL_EPS, "dq computed alone");
    CHECK_ARRAY_R(dk, first[T_K], t.n[T_K], t.c.d_k, ACC_ATOL, 8 * TOL_EPS, "dk computed without dq");
    CHECK_ARRAY_R(dv, first[T_V], t.n[T_V], t.c.d_v, ACC_ATOL, 8 * TOL_EPS, "dv computed without dq");
    CHECK_CLOSE(none.beta, first[T_BETA][0], ACC_ATOL, 8 * TOL_EPS, "dbeta with NULL parameter gradients");
    alloc_release(mark);
}

static void test_attn_grads(Rng *r) {
    for (int si = 0; si < 2; si++)
        for (int score = 0; score < ATTN_SCORE_COUNT; score++)
            for (int nt = 0; nt < 3; nt++) /* softmax tau 1, softmax tau 0.6, sum */
                for (int mask = 0; mask < 4; mask++)
                    for (int dw = 0; dw < 2; dw++)
                        test_attn_case(r, &grad_shapes[si], (AttnScore)score,
                                       nt < 2 ? ATTN_NORM_SOFTMAX : ATTN_NORM_SUM, nt == 1 ? 0.6 : 1, mask, dw);
}

/* Cosine at a zero query and a zero key: the score there is the constant 0,
 * the gradients stay finite, and dv (smooth in v) still matches differences. */
static void test_cosine_zero(Rng *r) {
    for (int mask = 0; mask < 4; mask++) {
        size_t mark = alloc_mark();
        GradCase t;
        grad_setup(&t, r, &grad_shapes[0], ATTN_SCORE_COSINE, ATTN_NORM_SOFTMAX, 1, mask, 1);
        for (int a = 0; a < t.c.d_q; a++) t.x[T_Q][a] = 0, t.x[T_K][(size_t)1 * t.c.d_k + a] = 0;
        check_case("cosine gradients with a zero query (row 0) and a zero key (row 1), mask=%s", mask_names[mask]);
        AttnParamGrads g = {NULL, NULL, NULL, NULL, 0};
        int st = run_backward(&t, t.grad[T_Q], t.grad[T_K], t.grad[T_V], &g);
        if (!CHECK(st == NN_OK, "forward/backward returned %d (%s)", st, nn_last_error())) {
            alloc_release(mark);
            continue;
        }
        int finite = isfinite(g.beta) != 0;
        for (int k = T_Q; k <= T_V; k++)
            for (size_t i = 0; i < t.n[k]; i++) finite &= isfinite(t.grad[k][i]) != 0;
        CHECK(finite, "NaN or infinite gradient at a zero vector");
        double *num = alloc_doubles(t.n[T_V]);
        engine_fd(&t, T_V, num);
        CHECK_ARRAY(t.grad[T_V], num, t.n[T_V], t.c.d_v, FD_ATOL, FD_RTOL, "dv vs differences of attn_forward");
        t.grad[T_BETA][0] = g.beta;
        engine_fd(&t, T_BETA, num);
        CHECK_ARRAY(t.grad[T_BETA], num, 1, 0, FD_ATOL, FD_RTOL, "dbeta vs differences of attn_forward");
        alloc_release(mark);
    }
}

/* ---- self-attention --------------------------------------------------------- */

enum { S_X, S_WQ, S_WK, S_WV, S_WO, S_COUNT };
static const char *const self_names[S_COUNT] = {"dx", "dwq", "dwk", "dwv", "dwo"};


typedef struct {
    SelfAttnConfig c;
    nn_real *x[S_COUNT];
    double *xd[S_COUNT];
    size_t n[S_COUNT];
    nn_real *grad[S_COUNT];
    nn_real *R; /* dL/doutput (n, d_out) */
    SelfAttnActs a;
    nn_real *scratch;
    RefSelfActs ra;
} SelfGradCase;

static SelfAttnWeights self_weights(const SelfGradCase *t) {
    SelfAttnWeights w = {t->x[S_WQ], t->x[S_WK], t->x[S_WV], t->x[S_WO]};
    return w;
}

static double self_engine_loss(SelfGradCase *t) {
    SelfAttnWeights w = self_weights(t);
    if (attn_self_forward(&t->c, &w, &t->a, t->x[S_X], t->scratch) != NN_OK) return NAN;
    double L = 0;
    for (size_t i = 0; i < (size_t)t->c.n * t->c.d_out; i++) L += (double)t->a.output[i] * t->R[i];
    return L;
}

static double self_ref_loss(SelfGradCase *t) {
    RefSelfWeights w = {t->xd[S_WQ], t->xd[S_WK], t->xd[S_WV], t->xd[S_WO]};
    ref_self_attention_d(&t->c, &w, t->xd[S_X], &t->ra);
    double L = 0;
    for (size_t i = 0; i < (size_t)t->c.n * t->c.d_out; i++) L += t->ra.output[i] * t->R[i];
    return L;
}

static double self_engine_loss_of(void *t) { return self_engine_loss(t); }
static double self_ref_loss_of(void *t) { return self_ref_loss(t); }

static void self_engine_fd(SelfGradCase *t, int k, double *num) {
    fd_engine(t->x[k], t->n[k], FD_H, self_engine_loss_of, t, num);
}
static void self_ref_fd(SelfGradCase *t, int k, double *num) {
    fd_double(t->xd[k], t->n[k], REF_H, self_ref_loss_of, t, num);
}

static int self_run_backward(SelfGradCase *t, nn_real *dx, SelfAttnGrads *g) {
    SelfAttnWeights w = self_weights(t);
    int st = attn_self_forward(&t->c, &w, &t->a, t->x[S_X], t->scratch);
    if (st != NN_OK) return st;
    nn_real *scratch = alloc_reals(attn_self_scratch_size(&t->c));
    return attn_self_backward(&t->c, &w, g, dx, t->R, &t->a, t->x[S_X], scratch);
}

static void self_setup(SelfGradCase *t, Rng *r, int n, int d_in, int heads, Proj proj, AttnScore score,
                       int causal) {
    memset(t, 0, sizeof *t);
    SelfAttnConfig *c = &t->c;
    c->n = n, c->d_in = d_in, c->heads = heads, c->score = score, c->causal = causal;
    proj_widths(c, proj);
    int qk = proj_has_qk(proj), has_v = proj_has_v(proj), has_o = proj_has_o(proj);
    t->n[S_X] = (size_t)n * d_in;
    t->n[S_WQ] = t->n[S_WK] = qk ? (size_t)d_in * c->d_k : 0;
    t->n[S_WV] = has_v ? (size_t)d_in * c->d_v : 0;
    t->n[S_WO] = has_o ? (size_t)c->d_v * c->d_out : 0;
    for (int k = 0; k < S_COUNT; k++) {
        if (!t->n[k]) continue;
        t->x[k] = alloc_random(r, t->n[k], -1, 1);
        t->xd[k] = alloc_doubles(t->n[k]);
        for (size_t i = 0; i < t->n[k]; i++) t->xd[k][i] = (double)t->x[k][i];
        t->grad[k] = alloc_zeros(t->n[k]);
    }
    t->R = alloc_random(r, (size_t)n * c->d_out, -1, 1);
    self_acts_alloc(c, &t->a, &t->ra);
    t->scratch = alloc_reals(attn_self_scratch_size(c));
}

static void test_self_case(Rng *r, int heads, Proj proj, AttnScore score, int causal) {
    size_t mark = alloc_mark();
    SelfGradCase t;
    self_setup(&t, r, 4, 4, heads, proj, score, causal);
    if (t.c.d_k % heads || t.c.d_v % heads) {
        alloc_release(mark);
        return;
    }
    check_case("attn_self_backward heads=%d proj=%s score=%s causal=%d", heads, proj_names[proj],
               score_names[score], causal);
    SelfAttnGrads g = {t.grad[S_WQ], t.grad[S_WK], t.grad[S_WV], t.grad[S_WO]};
    int st = self_run_backward(&t, t.grad[S_X], &g);
    if (!CHECK(st == NN_OK, "forward/backward returned %d (%s)", st, nn_last_error())) {
        alloc_release(mark);
        return;
    }
    double *num = alloc_doubles(64);
    for (int k = 0; k < S_COUNT; k++) {
        if (!t.x[k]) continue;
        char what[96];
        self_engine_fd(&t, k, num);
        snprintf(what, sizeof what, "%s vs differences of attn_self_forward", self_names[k]);
        CHECK_ARRAY(t.grad[k], num, t.n[k], 0, FD_ATOL, FD_RTOL, what);
#ifndef NN_DOUBLE
        self_ref_fd(&t, k, num);
        snprintf(what, sizeof what, "%s vs differences of the float64 reference", self_names[k]);
        CHECK_ARRAY(t.grad[k], num, t.n[k], 0, REF_ATOL, REF_RTOL, what);
#else
        (void)self_ref_fd;
#endif
    }

    /* accumulation: twice gives double */
    nn_real *first[S_COUNT];
    keep_grads(first, t.grad, t.x, t.n, S_COUNT);
    st = self_run_backward(&t, t.grad[S_X], &g);
    CHECK(st == NN_OK, "second backward returned %d", st);
    check_doubled(t.grad, first, t.n, self_names, S_COUNT);

    /* NULL gradients skipped: dx alone with g NULL; weights alone with dx NULL */
    nn_real *dx = alloc_zeros(t.n[S_X]);
    st = self_run_backward(&t, dx, NULL);
    CHECK(st == NN_OK, "backward with only dx returned %d", st);
    CHECK_ARRAY_R(dx, first[S_X], t.n[S_X], 0, ACC_ATOL, 8 * TOL_EPS, "dx computed alone");
    if (proj != PROJ_NONE) {
        SelfAttnGrads g2 = {NULL, NULL, NULL, NULL};
        for (int k = S_WQ; k < S_COUNT; k++)
            if (t.x[k]) {
                nn_real *buf = alloc_zeros(t.n[k]);
                if (k == S_WQ) g2.wq = buf;
                if (k == S_WK) g2.wk = buf;
                if (k == S_WV) g2.wv = buf;
                if (k == S_WO) g2.wo = buf;
            }
        st = self_run_backward(&t, NULL, &g2);
        CHECK(st == NN_OK, "backward without dx returned %d", st);
        nn_real *bufs[S_COUNT] = {NULL, g2.wq, g2.wk, g2.wv, g2.wo};
        for (int k = S_WQ; k < S_COUNT; k++)
            if (bufs[k]) {
                char what[96];
                snprintf(what, sizeof what, "%s computed without dx", self_names[k]);
                CHECK_ARRAY_R(bufs[k], first[k], t.n[k], 0, ACC_ATOL, 8 * TOL_EPS, what);
            }
    }
    alloc_release(mark);
}

static void test_self_grads(Rng *r) {
    static const AttnScore scores[3] = {ATTN_SCORE_DOT, ATTN_SCORE_SCALED_DOT, ATTN_SCORE_COSINE};
    static const int heads[3] = {1, 2, 4};
    for (int proj = 0; proj < PROJ_COUNT; proj++)
        for (int hi = 0; hi < 3; hi++)
            for (int sc = 0; sc < 3; sc++)
                for (int causal = 0; causal < 2; causal++) test_self_case(r, heads[hi], (Proj)proj, scores[sc], causal);
}

int main(void) {
    Rng r = {0x6ad};
    Rng zero = {0x2e70};
    test_attn_grads(&r);
    test_self_grads(&r);
    test_cosine_zero(&zero); /* own stream: the draws above stay as they were */
    return check_summary();
}
