/* The optimiser both models train with (src/layers/optim.c): the parameter
 * table binds weight and gradient views, Adam and SGD with clipping by global
 * norm match a float64 reference step by step, a step that would make any
 * value non-finite (or a bad option) changes nothing, and a rollback restores
 * weights, moments and the step count; a resumed model's moments count their
 * own steps and its learning rate ramps; every tensor starts as its kind says,
 * from one random stream that constant tensors do not draw from. */
#include <float.h>

#include "check.h"
#include "layers/optim.h"

/* A two-tensor model's weight (or gradient) view. */
typedef struct {
    nn_real *a; /* (3) */
    nn_real *b; /* (5) */
} View;

enum { N = 8 };

/* A table of a (3) and b (5), allocated, bound, with random weights and gradients. */
static int make(OptParams *p, View *w, View *g, Rng *r) {
    *p = (OptParams){0};
    opt_add(p, &w->a, 3, 3, OPT_INIT_ZERO);
    opt_add(p, &w->b, 5, 5, OPT_INIT_ZERO);
    if (!CHECK_OK(opt_alloc(p), "opt_alloc")) return 0;
    opt_bind(p, w, g);
    for (int i = 0; i < N; i++) {
        p->params[i] = (nn_real)rng_uniform(r, -1, 1);
        p->grads[i] = (nn_real)rng_uniform(r, -2, 2);
    }
    return 1;
}

static void test_table(Rng *r) {
    check_case("the table lays tensors out in order and binds both views");
    OptParams p;
    View w, g;
    if (!make(&p, &w, &g, r)) return;
    CHECK(p.n == N && p.n_tensors == 2, "n %zu, tensors %d", p.n, p.n_tensors);
    CHECK(w.a == p.params && w.b == p.params + 3, "weight view");
    CHECK(g.a == p.grads && g.b == p.grads + 3, "gradient view");
    opt_zero_grad(&p);
    int zero = 1;
    for (int i = 0; i < N; i++) zero &= p.grads[i] == 0;
    CHECK(zero, "opt_zero_grad");
    opt_free(&p);
}

/* Three steps against float64: norm, clipping factor, moments, bias corrections. */
static void test_steps(Rng *r) {
    for (int sgd = 0; sgd < 2; sgd++)
        for (int clip = 0; clip < 2; clip++) {
            check_case("%s, clip %s: three steps against float64", sgd ? "sgd" : "adam", clip ? "0.5" : "off");
            OptParams p;
            View w, g;
            if (!make(&p, &w, &g, r)) return;
            NnTrainOptions o = {.optimizer = sgd ? NN_SGD : NN_ADAM, .lr = (nn_real)0.01, .clip = clip ? (nn_real)0.5 : 0};
            double x[N], m[N] = {0}, v[N] = {0};
            for (int i = 0; i < N; i++) x[i] = p.params[i];
            for (int t = 1; t <= 3; t++) {
                double sq = 0;
                for (int i = 0; i < N; i++) sq += (double)p.grads[i] * p.grads[i];
                double norm = sqrt(sq), s = clip && norm > 0.5 ? 0.5 / norm : 1;
                for (int i = 0; i < N; i++) {
                    double gi = s * p.grads[i];
                    if (sgd) {
                        x[i] -= 0.01 * gi;
                        continue;
                    }
                    m[i] = 0.9 * m[i] + 0.1 * gi;
                    v[i] = 0.999 * v[i] + 0.001 * gi * gi;
                    x[i] -= 0.01 * (m[i] / (1 - pow(0.9, t))) / (sqrt(v[i] / (1 - pow(0.999, t))) + 1e-8);
                }
                nn_real got_norm;
                CHECK_OK(opt_update(&p, &o, &got_norm), "opt_update");
                CHECK_CLOSE(got_norm, norm, 0, 4 * TOL_EPS, "the norm before clipping");
                CHECK_ARRAY(p.params, x, N, 0, 1e-6, 16 * TOL_EPS, "weights");
                for (int i = 0; i < N; i++) p.grads[i] = (nn_real)rng_uniform(r, -2, 2);
            }
            CHECK(p.steps == 3, "steps %d", p.steps);
            opt_free(&p);
        }
}

/* Nothing changes: weights, moments and steps are as before the call. */
static void check_unchanged(const OptParams *p, const nn_real *params, const nn_real *moments, int steps,
                            const char *what) {
    CHECK(memcmp(p->params, params, sizeof(nn_real) * N) == 0 && memcmp(p->moments, moments, sizeof(nn_real) * 2 * N) == 0 &&
              p->steps == steps,
          "%s: the step changed the weights, the moments or the step count", what);
}

/* A table after one step of o, with copies of its weights and moments then. */
typedef struct {
    OptParams p;
    View w, g;
    nn_real params[N], moments[2 * N];
} AfterStep;

static int after_step(AfterStep *f, Rng *r, const NnTrainOptions *o) {
    if (!make(&f->p, &f->w, &f->g, r) || !CHECK_OK(opt_update(&f->p, o, NULL), "a first step")) return 0;
    memcpy(f->params, f->p.params, sizeof f->params);
    memcpy(f->moments, f->p.moments, sizeof f->moments);
    return 1;
}

static void test_refused(Rng *r) {
    check_case("refused steps change nothing");
    const NnTrainOptions adam = {.optimizer = NN_ADAM, .lr = (nn_real)0.01, .clip = 0};
    AfterStep f;
    if (!after_step(&f, r, &adam)) return;
    OptParams *const p = &f.p;
    nn_real *const params = f.params, *const moments = f.moments;
    const nn_real big = (nn_real)(sizeof(nn_real) == sizeof(double) ? DBL_MAX : FLT_MAX);
    static const struct {
        NnOptimizer optimizer;
        double lr, clip;
        int want;
        const char *what;
    } bad[] = {
        {NN_ADAM, 0, 0, NN_ERR_VALUE, "lr 0"},
        {NN_ADAM, -1, 0, NN_ERR_VALUE, "lr -1"},
        {NN_ADAM, NAN, 0, NN_ERR_VALUE, "lr NaN"},
        {NN_ADAM, 0.01, -1, NN_ERR_VALUE, "clip -1"},
        {NN_ADAM, 0.01, INFINITY, NN_ERR_VALUE, "clip inf"},
        {(NnOptimizer)7, 0.01, 0, NN_ERR_ARG, "optimizer 7"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        NnTrainOptions o = {.optimizer = bad[i].optimizer, .lr = (nn_real)bad[i].lr, .clip = (nn_real)bad[i].clip};
        CHECK(opt_update(p, &o, NULL) == bad[i].want, "%s: %s", bad[i].what, nn_last_error());
        check_unchanged(p, params, moments, 1, bad[i].what);
    }
    /* the last weight overflows under SGD: refused although every other one is fine */
    p->params[N - 1] = -(nn_real)0.9 * big;
    params[N - 1] = p->params[N - 1];
    for (int i = 0; i < N; i++) p->grads[i] = (nn_real)0.5;
    NnTrainOptions sgd = {.optimizer = NN_SGD, .lr = (nn_real)0.9 * big, .clip = 0};
    int st = opt_update(p, &sgd, NULL);
    CHECK(st == NN_ERR_VALUE && strstr(nn_last_error(), "weight 7"), "an overflowing weight: %d (%s)", st, nn_last_error());
    check_unchanged(p, params, moments, 1, "an overflowing weight");
    p->grads[2] = (nn_real)NAN;
    nn_real norm = 0;
    st = opt_update(p, &adam, &norm);
    CHECK(st == NN_ERR_VALUE && isnan(norm) && strstr(nn_last_error(), "gradient norm"), "a NaN gradient: %d (%s)", st,
          nn_last_error());
    check_unchanged(p, params, moments, 1, "a NaN gradient");
    opt_free(p);
}

static void test_rollback(Rng *r) {
    check_case("rollback restores the weights, the moments and the steps of the snapshot");
    const NnTrainOptions adam = {.optimizer = NN_ADAM, .lr = (nn_real)0.01, .clip = 1};
    AfterStep f;
    if (!after_step(&f, r, &adam)) return;
    opt_rollback(&f.p);
    check_unchanged(&f.p, f.params, f.moments, 1, "rollback without a snapshot");
    CHECK_OK(opt_snapshot(&f.p), "opt_snapshot");
    for (int t = 0; t < 2; t++) CHECK_OK(opt_update(&f.p, &adam, NULL), "a later step");
    CHECK(f.p.steps == 3 && memcmp(f.p.params, f.params, sizeof f.params) != 0, "the later steps moved the weights");
    opt_rollback(&f.p);
    check_unchanged(&f.p, f.params, f.moments, 1, "after rollback");
    opt_free(&f.p);
}

static void test_resumed(Rng *r) {
    check_case("a resumed model (moments fresh after 1000 steps): bias correction counts the moments' steps, and lr ramps");
    OptParams fresh, resumed;
    View w1, g1, w2, g2;
    if (!make(&fresh, &w1, &g1, r) || !make(&resumed, &w2, &g2, r)) return;
    memcpy(resumed.params, fresh.params, sizeof(nn_real) * N);
    memcpy(resumed.grads, fresh.grads, sizeof(nn_real) * N);
    resumed.steps = 1000; /* loaded from a file: moments zero, moment_steps 0 */
    const NnTrainOptions full = {.optimizer = NN_ADAM, .lr = (nn_real)0.01};
    NnTrainOptions ramped = full;
    /* step t (1-based) of the resumed model runs at lr t / OPT_RESUME_WARMUP with
     * bias correction t: the fresh model's step t at that learning rate */
    for (int t = 1; t <= 3; t++) {
        ramped.lr = (nn_real)(0.01 * t / OPT_RESUME_WARMUP);
        CHECK_OK(opt_update(&fresh, &ramped, NULL), "fresh step");
        CHECK_OK(opt_update(&resumed, &full, NULL), "resumed step");
        CHECK_ARRAY_R(resumed.params, fresh.params, N, 0, 0, 4 * TOL_EPS, "a resumed step's weights");
    }
    CHECK(resumed.steps == 1003 && resumed.moment_steps == 3 && fresh.moment_steps == 3, "counts %d %d",
          resumed.steps, resumed.moment_steps);
    /* past the ramp, the full rate */
    resumed.moment_steps = fresh.moment_steps = OPT_RESUME_WARMUP;
    fresh.steps = OPT_RESUME_WARMUP;
    CHECK_OK(opt_update(&fresh, &full, NULL), "fresh step");
    CHECK_OK(opt_update(&resumed, &full, NULL), "resumed step");
    CHECK_ARRAY_R(resumed.params, fresh.params, N, 0, 0, 4 * TOL_EPS, "past the ramp");
    opt_free(&fresh);
    opt_free(&resumed);
}

/* Each kind's start: constants exact, draws within their bound and not all
 * equal, the LSTM forget gates' quarter at 1; one stream in table order. */
static void test_init(void) {
    check_case("opt_init: every kind of start");
    enum { K = 6, C = 16 };
    struct {
        nn_real *t[K];
    } w, g, w2, g2;
    static const OptInit kinds[K] = {OPT_INIT_UNIFORM, OPT_INIT_ZERO, OPT_INIT_HE, OPT_INIT_ONE, OPT_INIT_FORGET, OPT_INIT_EMBED};
    static const int fan[K] = {4, 0, 6, 0, 0, 0};
    OptParams p = {0}, q = {0};
    for (int i = 0; i < K; i++) opt_add(&p, &w.t[i], C, fan[i], kinds[i]);
    /* the same drawn tensors without the constant ones between them */
    opt_add(&q, &w2.t[0], C, 4, OPT_INIT_UNIFORM);
    opt_add(&q, &w2.t[2], C, 6, OPT_INIT_HE);
    opt_add(&q, &w2.t[5], C, 0, OPT_INIT_EMBED);
    if (!CHECK_OK(opt_alloc(&p), "opt_alloc") || !CHECK_OK(opt_alloc(&q), "opt_alloc")) return;
    opt_bind(&p, &w, &g);
    opt_bind(&q, &w2, &g2);
    opt_init(&p, 77);
    opt_init(&q, 77);
    static const double bound[K] = {0.5, 0, 1.0, 1, 1, 1}; /* 1/sqrt(4), sqrt(6/6), ones, uniform(-1, 1) */
    for (int i = 0; i < K; i++) {
        int in_bound = 1, distinct = 0;
        for (int j = 0; j < C; j++) {
            double x = w.t[i][j];
            if (kinds[i] == OPT_INIT_FORGET) in_bound &= x == (j >= C / 4 && j < C / 2);
            else if (kinds[i] == OPT_INIT_ZERO || kinds[i] == OPT_INIT_ONE) in_bound &= x == bound[i];
            else in_bound &= x >= -bound[i] && x < bound[i];
            distinct += x != w.t[i][0];
        }
        CHECK(in_bound, "tensor %d (kind %d) starts outside its kind", i, (int)kinds[i]);
        int drawn = kinds[i] == OPT_INIT_UNIFORM || kinds[i] == OPT_INIT_HE || kinds[i] == OPT_INIT_EMBED;
        if (drawn) {
            CHECK(distinct > C / 2, "tensor %d: %d of %d values differ from the first", i, distinct, C);
            CHECK(memcmp(w.t[i], w2.t[i], sizeof(nn_real) * C) == 0, "tensor %d: the constant tensors drew numbers", i);
        }
    }
    opt_free(&p);
    opt_free(&q);
}

int main(void) {
    Rng r = {2024};
    test_table(&r);
    test_steps(&r);
    test_refused(&r);
    test_rollback(&r);
    test_resumed(&r);
    test_init();
    return check_summary();
}
