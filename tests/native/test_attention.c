/* attn_forward: the tutorial's worked example, every score x normalisation x
 * mask against the float64 reference of ref.h on random shapes, invariants
 * (uniform weights for identical keys, softmax shift invariance, masks,
 * stability on large scores) and the error paths of the API boundary. */
#include "attnlab/attention.h"
#include "check.h"
#include "ref.h"

static const char *const score_names[ATTN_SCORE_COUNT] = {"dot",    "scaled_dot", "general",
                                                          "additive", "cosine",   "location"};
static const char *const mask_names[4] = {"none", "causal", "key_lengths", "causal+key_lengths"};

/* One attention problem: inputs, parameters, outputs and scratch, each its own
 * exact-size allocation; outputs and scratch start as NaN. */
typedef struct {
    AttnConfig c;
    AttnParams p;
    nn_real *q, *k, *v;
    nn_real *W, *Wq, *Wk, *va;
    nn_real *scores, *weights, *context, *scratch;
    double *e_ref, *a_ref, *z_ref;
} Case;

static int dims_same(AttnScore s) {
    return s == ATTN_SCORE_DOT || s == ATTN_SCORE_SCALED_DOT || s == ATTN_SCORE_COSINE;
}

/* Inputs in [lo, hi); parameters too (scaled down a little for general). */
static void case_init(Case *t, Rng *r, double lo, double hi) {
    AttnConfig *c = &t->c;
    t->q = alloc_random(r, (size_t)c->n_q * c->d_q, lo, hi);
    t->k = alloc_random(r, (size_t)c->n_k * c->d_k, lo, hi);
    t->v = alloc_random(r, (size_t)c->n_k * c->d_v, -1, 1);
    t->W = t->Wq = t->Wk = t->va = NULL;
    memset(&t->p, 0, sizeof t->p);
    t->p.beta = 1;
    size_t h = (size_t)(c->hidden > 0 ? c->hidden : 0);
    if (c->score == ATTN_SCORE_GENERAL) t->W = alloc_random(r, (size_t)c->d_q * c->d_k, lo, hi);
    if (c->score == ATTN_SCORE_LOCATION) t->W = alloc_random(r, (size_t)c->n_k * c->d_q, lo, hi);
    if (c->score == ATTN_SCORE_ADDITIVE) {
        t->Wq = alloc_random(r, h * c->d_q, lo, hi);
        t->Wk = alloc_random(r, h * c->d_k, lo, hi);
        t->va = alloc_random(r, h, lo, hi);
    }
    t->p.W = t->W, t->p.Wq = t->Wq, t->p.Wk = t->Wk, t->p.v = t->va;
}

static void case_outputs(Case *t) {
    AttnConfig *c = &t->c;
    size_t cells = (size_t)c->n_q * c->n_k;
    t->scores = alloc_reals(cells);
    t->weights = alloc_reals(cells);
    t->context = alloc_reals((size_t)c->n_q * c->d_v);
    t->scratch = alloc_reals(attn_scratch_size(c));
    t->e_ref = alloc_doubles(cells);
    t->a_ref = alloc_doubles(cells);
    t->z_ref = alloc_doubles((size_t)c->n_q * c->d_v);
}

static int case_forward(Case *t) {
    return attn_forward(&t->c, &t->p, t->scores, t->weights, t->context, t->q, t->k, t->v, t->scratch);
}

/* Forward vs the reference, plus the structural facts every result obeys:
 * masked scores -inf, masked weights 0, visible weights summing to 1 (or all
 * 0 on an empty row, whose context is 0), nothing NaN. */
static void check_against_ref(Case *t, double atol, double rtol) {
    AttnConfig *c = &t->c;
    int st = case_forward(t);
    if (!CHECK(st == NN_OK, "attn_forward returned %d (%s)", st, nn_last_error())) return;
    int ref_st = ref_attention(c, &t->p, t->q, t->k, t->v, t->e_ref, t->a_ref, t->z_ref);
    CHECK(ref_st == 0, "test bug: the reference row sums to zero");
    size_t cells = (size_t)c->n_q * c->n_k;
    CHECK_ARRAY(t->scores, t->e_ref, cells, c->n_k, atol, rtol, "scores");
    CHECK_ARRAY(t->weights, t->a_ref, cells, c->n_k, atol, rtol, "weights");
    CHECK_ARRAY(t->context, t->z_ref, (size_t)c->n_q * c->d_v, c->d_v, atol, rtol, "context");
    int struct_ok = 1, bad_i = -1;
    for (int i = 0; i < c->n_q && struct_ok; i++) {
        int L = ref_visible(c, i);
        CHECK(attn_visible_keys(c, i) == L, "attn_visible_keys(row %d) = %d, want %d", i, attn_visible_keys(c, i), L);
        double s = 0;
        for (int j = 0; j < c->n_k; j++) {
            nn_real e = t->scores[(size_t)i * c->n_k + j], a = t->weights[(size_t)i * c->n_k + j];
            if (j >= L && !(isinf(e) && e < 0 && a == 0)) struct_ok = 0;
            if (j < L && (!isfinite(e) || !isfinite(a))) struct_ok = 0;
            s += a;
        }
        if (L > 0 && fabs(s - 1) > 1e-5 + 2 * c->n_k * TOL_EPS) struct_ok = 0;
        if (L == 0)
            for (int d = 0; d < c->d_v; d++) struct_ok &= t->context[(size_t)i * c->d_v + d] == 0;
        if (!struct_ok) bad_i = i;
    }
    CHECK(struct_ok, "row %d: masked cells not (-inf, 0), a NaN, weights not summing to 1, or a non-zero "
                     "context on an empty row", bad_i);
}

/* ---- the tutorial's example ("Your journey starts with one step") -------- */

static const double tutorial_inputs[6][3] = {
    {0.43, 0.15, 0.89}, /* Your    */
    {0.22, 0.58, 0.33}, /* journey */
    {0.77, 0.25, 0.10}, /* starts  */
    {0.05, 0.80, 0.55}, /* with    */
    {0.57, 0.85, 0.64}, /* one     */
    {0.55, 0.87, 0.66}, /* step    */
};

static void test_tutorial(void) {
    static const double scores[6] = {0.4753, 0.4937, 0.3474, 0.6565, 0.8296, 0.8434};
    static const double w_sum[6] = {0.1304, 0.1354, 0.0953, 0.1801, 0.2275, 0.2313};
    static const double w_softmax[6] = {0.1435, 0.1462, 0.1263, 0.1720, 0.2046, 0.2074};
    size_t mark = alloc_mark();
    nn_real *x = alloc_reals(18);
    for (int i = 0; i < 18; i++) x[i] = (nn_real)tutorial_inputs[i / 3][i % 3];
    /* 4 printed decimals, plus the float rounding */
    double atol4 = 5e-5 + 1e-6;
    for (int norm = 0; norm < 2; norm++) {
        /* query = "journey"; keys = values = all six rows (the same pointer) */
        AttnConfig c = {.n_q = 1, .n_k = 6, .d_q = 3, .d_k = 3, .d_v = 3, .score = ATTN_SCORE_DOT,
                        .norm = (AttnNorm)norm, .temperature = 1};
        AttnParams p = {.beta = 1};
        nn_real *e = alloc_reals(6), *a = alloc_reals(6), *z = alloc_reals(3);
        nn_real *scratch = alloc_reals(attn_scratch_size(&c));
        nn_real *query = alloc_reals(3);
        memcpy(query, x + 3, 3 * sizeof(nn_real));
        check_case("tutorial, query 'journey', norm=%s", norm ? "sum" : "softmax");
        int st = attn_forward(&c, &p, e, a, z, query, x, x, scratch);
        CHECK(st == NN_OK, "attn_forward returned %d (%s)", st, nn_last_error());
        double ew[6], s = 0;
        CHECK_ARRAY(e, scores, 6, 0, atol4, 0, "scores e_2j = x_2 . x_j");
        CHECK_ARRAY(a, norm ? w_sum : w_softmax, 6, 0, atol4, 0, "attention weights a_2j");
        /* context z_2 = sum_j a_2j x_j in double, from exact scores */
        for (int j = 0; j < 6; j++) {
            double d = 0;
            for (int m = 0; m < 3; m++) d += tutorial_inputs[1][m] * tutorial_inputs[j][m];
            ew[j] = norm ? d : exp(d);
            s += ew[j];
        }
        double zw[3] = {0, 0, 0}, asum = 0;
        for (int j = 0; j < 6; j++) {
            asum += a[j];
            for (int m = 0; m < 3; m++) zw[m] += ew[j] / s * tutorial_inputs[j][m];
        }
        CHECK_ARRAY(z, zw, 3, 0, TOL_FWD_ATOL, TOL_FWD_RTOL, "context z_2");
        CHECK_CLOSE(asum, 1, 4 * TOL_EPS, 0, "weights sum to 1");
    }
    /* every query at once: the 6 x 6 attention matrix of the tutorial */
    for (int norm = 0; norm < 2; norm++) {
        Case t = {.c = {.n_q = 6, .n_k = 6, .d_q = 3, .d_k = 3, .d_v = 3, .score = ATTN_SCORE_DOT,
                        .norm = (AttnNorm)norm, .temperature = 1}};
        t.p.beta = 1;
        t.q = t.k = t.v = x;
        case_outputs(&t);
        check_case("tutorial, all queries, norm=%s", norm ? "sum" : "softmax");
        check_against_ref(&t, TOL_FWD_ATOL, TOL_FWD_RTOL);
        CHECK_ARRAY(t.weights + 6, norm ? w_sum : w_softmax, 6, 0, atol4, 0, "row 'journey'");
    }
    alloc_release(mark);
}

/* ---- every score x normalisation x mask against the reference ------------ */

typedef struct {
    int n_q, n_k, d_q, d_k, d_v, h;
} Shape;

static const Shape shapes[] = {
    {1, 1, 1, 1, 1, 1},  {3, 5, 4, 4, 2, 3},   {6, 4, 3, 5, 7, 5},    {7, 7, 8, 8, 8, 6},
    {5, 9, 5, 3, 4, 2},  {2, 13, 9, 6, 3, 4},  {17, 10, 6, 6, 5, 8},  {4, 33, 12, 12, 9, 16},
};
#define N_SHAPES ((int)(sizeof shapes / sizeof shapes[0]))

/* key_lengths with a 0 (on row min(1, n_q - 1)) and random others in 1..n_k */
static int32_t *make_key_lengths(Rng *r, int n_q, int n_k) {
    int32_t *kl = alloc_ints((size_t)n_q);
    for (int i = 0; i < n_q; i++) kl[i] = rng_int(r, 1, n_k);
    kl[n_q > 1 ? 1 : 0] = 0;
    if (n_q > 2) kl[2] = n_k;
    return kl;
}

/* Sets up a case of shape s; returns the arena mark it starts at, for
 * alloc_release when the case is done. */
static size_t setup_case(Case *t, Rng *r, Shape s, AttnScore score, AttnNorm norm, double tau, int mask) {
    size_t mark = alloc_mark();
    memset(t, 0, sizeof *t);
    AttnConfig *c = &t->c;
    c->n_q = s.n_q, c->n_k = s.n_k, c->d_q = s.d_q, c->d_v = s.d_v;
    c->d_k = dims_same(score) ? s.d_q : s.d_k;
    c->hidden = score == ATTN_SCORE_ADDITIVE ? s.h : 0;
    c->score = score, c->norm = norm, c->temperature = (nn_real)tau;
    c->causal = mask == 1 || mask == 3;
    c->key_lengths = mask >= 2 ? make_key_lengths(r, c->n_q, c->n_k) : NULL;
    /* sum normalisation needs rows that do not sum to zero: positive inputs
     * and parameters give positive scores for every score function */
    if (norm == ATTN_NORM_SUM) case_init(t, r, 0.1, 1);
    else case_init(t, r, -1, 1);
    t->p.beta = norm == ATTN_NORM_SUM ? (nn_real)1.5 : (nn_real)2.5;
    case_outputs(t);
    return mark;
}

static void test_reference(Rng *r) {
    static const double taus[3] = {0.5, 1, 2};
    for (int si = 0; si < N_SHAPES; si++)
        for (int score = 0; score < ATTN_SCORE_COUNT; score++)
            for (int nt = 0; nt < 4; nt++) /* softmax at 3 temperatures, then sum */
                for (int mask = 0; mask < 4; mask++) {
                    AttnNorm norm = nt < 3 ? ATTN_NORM_SOFTMAX : ATTN_NORM_SUM;
                    double tau = nt < 3 ? taus[nt] : 1;
                    Case t;
                    size_t mark = setup_case(&t, r, shapes[si], (AttnScore)score, norm, tau, mask);
                    const Shape *s = &shapes[si];
                    check_case("shape nq=%d nk=%d dq=%d dk=%d dv=%d h=%d score=%s norm=%s tau=%g mask=%s", s->n_q,
                               s->n_k, t.c.d_q, t.c.d_k, s->d_v, t.c.hidden, score_names[score],
                               norm ? "sum" : "softmax", tau, mask_names[mask]);
                    CHECK_OK(attn_check(&t.c, &t.p, t.q, t.k, t.v), "attn_check");
                    check_against_ref(&t, TOL_FWD_ATOL, TOL_FWD_RTOL);
                    alloc_release(mark);
                }
}

/* From 512 queries the forward takes 32-row blocks, then 16-row ones for the
 * last 128 rows (600 = 14 x 32 + 8 x 16 + 8: a short last block); every row
 * must match the reference whatever its block, with every mask. */
static void test_long_blocks(Rng *r) {
    static const Shape shape = {600, 70, 8, 8, 5, 4};
    static const AttnScore scores[3] = {ATTN_SCORE_SCALED_DOT, ATTN_SCORE_COSINE, ATTN_SCORE_ADDITIVE};
    for (int si = 0; si < 3; si++)
        for (int nt = 0; nt < 2; nt++)
            for (int mask = 0; mask < 4; mask++) {
                AttnNorm norm = nt == 0 ? ATTN_NORM_SOFTMAX : ATTN_NORM_SUM;
                Case t;
                size_t mark = setup_case(&t, r, shape, scores[si], norm, 1, mask);
                check_case("600 queries: score=%s norm=%s mask=%s", score_names[scores[si]], nt ? "sum" : "softmax",
                           mask_names[mask]);
                check_against_ref(&t, TOL_FWD_ATOL, TOL_FWD_RTOL);
                alloc_release(mark);
            }
}

/* ---- special inputs -------------------------------------------------------- */

/* Cosine with a zero query and a zero key: those scores are 0, not NaN. */
static void test_cosine_zero(Rng *r) {
    for (int mask = 0; mask < 2; mask++) {
        Case t;
        size_t mark = setup_case(&t, r, (Shape){4, 5, 3, 3, 2, 0}, ATTN_SCORE_COSINE, ATTN_NORM_SOFTMAX, 1, mask);
        t.p.beta = -1.5;
        for (int a = 0; a < 3; a++) t.q[a] = 0, t.k[2 * 3 + a] = 0;
        check_case("cosine with a zero query (row 0) and a zero key (row 2), mask=%s", mask_names[mask]);
        check_against_ref(&t, TOL_FWD_ATOL, TOL_FWD_RTOL);
        int zeros = 1;
        for (int j = 0; j < ref_visible(&t.c, 0); j++) zeros &= t.scores[j] == 0;
        for (int i = 0; i < 4; i++) zeros &= i < 2 && mask ? 1 : t.scores[(size_t)i * 5 + 2] == 0;
        CHECK(zeros, "scores against a zero vector must be exactly 0");
        alloc_release(mark);
    }
}

/* A query with key length 0: scores -inf, weights 0, context 0, no NaN, for
 * both normalisations (sum must not report a zero sum for an empty row). */
static void test_empty_rows(Rng *r) {
    for (int norm = 0; norm < 2; norm++)
        for (int score = 0; score < ATTN_SCORE_COUNT; score++) {
            Case t;
            size_t mark = setup_case(&t, r, (Shape){3, 4, 3, 2, 5, 3}, (AttnScore)score, (AttnNorm)norm, 1, 2);
            int32_t *kl = (int32_t *)t.c.key_lengths;
            kl[0] = 0, kl[1] = 3, kl[2] = 0;
            check_case("key_lengths {0, 3, 0}, score=%s norm=%s", score_names[score], norm ? "sum" : "softmax");
            check_against_ref(&t, TOL_FWD_ATOL, TOL_FWD_RTOL);
            int ok = 1;
            for (int i = 0; i < 3; i += 2) {
                for (int j = 0; j < 4; j++) {
                    nn_real e = t.scores[(size_t)i * 4 + j], a = t.weights[(size_t)i * 4 + j];
                    ok &= isinf(e) && e < 0 && a == 0;
                }
                for (int d = 0; d < 5; d++) ok &= t.context[(size_t)i * 5 + d] == 0;
            }
            CHECK(ok, "empty rows must have scores -inf, weights 0 and context 0");
            alloc_release(mark);
        }
    /* every row empty: nothing to normalise, still OK */
    Case t;
    size_t mark = setup_case(&t, r, (Shape){2, 3, 2, 2, 2, 0}, ATTN_SCORE_DOT, ATTN_NORM_SUM, 1, 2);
    ((int32_t *)t.c.key_lengths)[0] = 0, ((int32_t *)t.c.key_lengths)[1] = 0;
    check_case("all key lengths 0, sum normalisation");
    check_against_ref(&t, TOL_FWD_ATOL, TOL_FWD_RTOL);
    alloc_release(mark);
}

/* All keys equal (all W rows equal for location): scores are equal along a
 * row, so softmax and sum both give 1/L over the L visible keys. */
static void test_identical_keys(Rng *r) {
    for (int score = 0; score < ATTN_SCORE_COUNT; score++)
        for (int norm = 0; norm < 2; norm++)
            for (int mask = 0; mask < 4; mask++) {
                Case t;
                size_t mark = setup_case(&t, r, (Shape){5, 6, 4, 3, 3, 4}, (AttnScore)score, (AttnNorm)norm, 0.5, mask);
                int dk = t.c.d_k, dq = t.c.d_q;
                for (int j = 1; j < 6; j++) memcpy(t.k + (size_t)j * dk, t.k, sizeof(nn_real) * dk);
                if (score == ATTN_SCORE_LOCATION)
                    for (int j = 1; j < 6; j++) memcpy(t.W + (size_t)j * dq, t.W, sizeof(nn_real) * dq);
                check_case("identical keys, score=%s norm=%s mask=%s", score_names[score], norm ? "sum" : "softmax",
                           mask_names[mask]);
                if (!CHECK_OK(case_forward(&t), "attn_forward")) {
                    alloc_release(mark);
                    continue;
                }
                double *want = alloc_doubles(30);
                double *ctx = alloc_doubles((size_t)5 * 3);
                for (int i = 0; i < 5; i++) {
                    int L = ref_visible(&t.c, i);
                    for (int j = 0; j < 6; j++) want[i * 6 + j] = j < L ? 1.0 / L : 0;
                    for (int d = 0; d < 3; d++) {
                        double z = 0;
                        for (int j = 0; j < L; j++) z += t.v[(size_t)j * 3 + d] / L;
                        ctx[i * 3 + d] = z;
                    }
                }
                CHECK_ARRAY(t.weights, want, 30, 6, 8 * TOL_EPS, 8 * TOL_EPS, "uniform weights");
                CHECK_ARRAY(t.context, ctx, 15, 3, TOL_FWD_ATOL, TOL_FWD_RTOL, "context = mean of visible values");
                alloc_release(mark);
            }
}

/* Softmax is invariant to a constant added along a row. Shifting every key by
 * one vector u adds q_i . u (dot), q_i . u / sqrt(d) (scaled) or q_i^T W u
 * (general) to row i; adding a vector b to every row of a location W adds
 * b . q_i. Weights and context stay; scores move by that row constant. */
static void test_shift_invariance(Rng *r) {
    static const AttnScore scores[4] = {ATTN_SCORE_DOT, ATTN_SCORE_SCALED_DOT, ATTN_SCORE_GENERAL,
                                        ATTN_SCORE_LOCATION};
    for (int si = 0; si < 4; si++)
        for (int mask = 0; mask < 4; mask++) {
            AttnScore score = scores[si];
            Case t, u;
            size_t mark = setup_case(&t, r, (Shape){6, 7, 5, 4, 3, 0}, score, ATTN_NORM_SOFTMAX, 0.7, mask);
            u = t;
            case_outputs(&u);
            AttnConfig *c = &t.c;
            int dk = c->d_k, dq = c->d_q;
            nn_real *shift = alloc_random(r, (size_t)(score == ATTN_SCORE_LOCATION ? dq : dk), -1, 1);
            double *row_const = alloc_doubles((size_t)c->n_q);
            if (score == ATTN_SCORE_LOCATION) {
                u.W = alloc_reals((size_t)c->n_k * dq);
                for (int j = 0; j < c->n_k; j++)
                    for (int a = 0; a < dq; a++) u.W[(size_t)j * dq + a] = t.W[(size_t)j * dq + a] + shift[a];
                u.p.W = u.W;
            } else {
                u.k = alloc_reals((size_t)c->n_k * dk);
                for (int j = 0; j < c->n_k; j++)
                    for (int b = 0; b < dk; b++) u.k[(size_t)j * dk + b] = t.k[(size_t)j * dk + b] + shift[b];
            }
            /* the row constant in double, from the rounded shifted inputs */
            for (int i = 0; i < c->n_q; i++) {
                const nn_real *qi = t.q + (size_t)i * dq;
                double s2 = 0;
                if (score == ATTN_SCORE_LOCATION) {
                    for (int a = 0; a < dq; a++) s2 += qi[a] * (double)shift[a];
                } else if (score == ATTN_SCORE_GENERAL) {
                    for (int a = 0; a < dq; a++)
                        for (int b = 0; b < dk; b++) s2 += qi[a] * (double)t.W[(size_t)a * dk + b] * shift[b];
                } else {
                    for (int a = 0; a < dq; a++) s2 += qi[a] * (double)shift[a];
                    if (score == ATTN_SCORE_SCALED_DOT) s2 /= sqrt((double)dk);
                }
                row_const[i] = s2;
            }
            check_case("shift invariance, score=%s mask=%s", score_names[score], mask_names[mask]);
            int st1 = case_forward(&t), st2 = case_forward(&u);
            if (!CHECK(st1 == NN_OK && st2 == NN_OK, "attn_forward: %d %d %s", st1, st2, nn_last_error())) {
                alloc_release(mark);
                continue;
            }
            size_t cells = (size_t)c->n_q * c->n_k;
            double *moved = alloc_doubles(cells);
            for (size_t ij = 0; ij < cells; ij++) moved[ij] = (double)t.scores[ij] + row_const[ij / (size_t)c->n_k];
            CHECK_ARRAY(u.scores, moved, cells, c->n_k, TOL_FWD_ATOL, TOL_FWD_RTOL, "scores move by a row constant");
            CHECK_ARRAY_R(u.weights, t.weights, cells, c->n_k, TOL_FWD_ATOL, TOL_FWD_RTOL, "weights unchanged");
            CHECK_ARRAY_R(u.context, t.context, (size_t)c->n_q * c->d_v, c->d_v, TOL_FWD_ATOL, TOL_FWD_RTOL,
                          "context unchanged");
            alloc_release(mark);
        }
}

/* Cosine ignores the lengths of q and k: scaling a query or a key by a
 * positive factor leaves every output unchanged. */
static void test_cosine_scale(Rng *r) {
    Case t, u;
    size_t mark = setup_case(&t, r, (Shape){4, 6, 5, 5, 3, 0}, ATTN_SCORE_COSINE, ATTN_NORM_SOFTMAX, 1, 0);
    u = t;
    case_outputs(&u);
    u.q = alloc_reals(20);
    u.k = alloc_reals(30);
    for (int i = 0; i < 20; i++) u.q[i] = t.q[i] * (nn_real)(i / 5 + 1) * 3;
    for (int i = 0; i < 30; i++) u.k[i] = t.k[i] * (nn_real)0.125 * (nn_real)(i / 5 + 1);
    check_case("cosine under positive rescaling of queries and keys");
    CHECK(case_forward(&t) == NN_OK && case_forward(&u) == NN_OK, "attn_forward: %s", nn_last_error());
    CHECK_ARRAY_R(u.scores, t.scores, 24, 6, TOL_FWD_ATOL, TOL_FWD_RTOL, "scores unchanged");
    CHECK_ARRAY_R(u.context, t.context, 12, 3, TOL_FWD_ATOL, TOL_FWD_RTOL, "context unchanged");
    alloc_release(mark);
}

/* v may equal k: the same pointer gives the same result as a copy. */
static void test_values_alias_keys(Rng *r) {
    for (int score = 0; score < ATTN_SCORE_COUNT; score++) {
        Case t, u;
        size_t mark = setup_case(&t, r, (Shape){5, 7, 6, 6, 6, 3}, (AttnScore)score, ATTN_NORM_SOFTMAX, 1, 1);
        memcpy(t.v, t.k, sizeof(nn_real) * (size_t)7 * 6);
        u = t;
        case_outputs(&u);
        u.v = u.k;
        check_case("v == k, score=%s", score_names[score]);
        CHECK(case_forward(&t) == NN_OK && case_forward(&u) == NN_OK, "attn_forward: %s", nn_last_error());
        size_t cells = (size_t)t.c.n_q * t.c.n_k, zn = (size_t)t.c.n_q * t.c.d_v;
        CHECK_ARRAY_R(u.weights, t.weights, cells, t.c.n_k, 0, 0, "weights with v == k");
        CHECK_ARRAY_R(u.context, t.context, zn, t.c.d_v, 0, 0, "context with v == k");
        alloc_release(mark);
    }
}

/* Scores in the thousands: the max shift keeps softmax finite. */
static void test_large_scores(Rng *r) {
    for (int nt = 0; nt < 2; nt++)
        for (int mask = 0; mask < 2; mask++) {
            Case t;
            size_t mark = setup_case(&t, r, (Shape){6, 9, 4, 4, 3, 0}, ATTN_SCORE_DOT, ATTN_NORM_SOFTMAX, nt ? 0.5 : 1, mask);
            for (int i = 0; i < 6 * 4; i++) t.q[i] *= 30;
            for (int i = 0; i < 9 * 4; i++) t.k[i] *= 30;
            check_case("scores up to ~3600, tau=%g mask=%s", nt ? 0.5 : 1.0, mask_names[mask]);
            /* a score's float error is ~|score| eps, so the weights' is ~3600 eps */
            double atol = TOL_FWD_ATOL + 4 * 3600 * TOL_EPS * 4;
            check_against_ref(&t, atol, TOL_FWD_RTOL);
            alloc_release(mark);
        }
}

/* ---- softmax at the edges of float exp ------------------------------------ */

/* Shifted scores (e - max)/tau from 0 down past -88, where float exp turns
 * subnormal (-87.34) and then 0: the weights match float64, those below -88
 * are exactly 0 (never negative, NaN or huge); at tiny temperatures (1e-3,
 * 1e-30) rows become one-hot, or split evenly on ties; masked rows stay
 * (-inf, 0). The scores are the keys (dot with queries of 1), placed in
 * permuted order so the max and the extremes fall on vector lanes and tails
 * alike, offset by 1000 at tau >= 0.5 so the shift is not 0. */
static void test_exp_edges(Rng *r) {
    static const double gaps[10] = {0, -1e-6, -0.05, -10, -87.0, -87.3, -87.5, -87.7, -88.5, -200};
    static const double taus[4] = {1, 0.5, 1e-3, 1e-30};
    for (int nt = 0; nt < 4; nt++)
        for (int mask = 0; mask < 4; mask++) {
            double tau = taus[nt], offset = tau >= 0.5 ? 1000 : 0;
            Case t;
            size_t mark = setup_case(&t, r, (Shape){12, 10, 1, 1, 3, 0}, ATTN_SCORE_DOT, ATTN_NORM_SOFTMAX, tau, mask);
            for (int i = 0; i < 12; i++) t.q[i] = 1;
            for (int j = 0; j < 10; j++) t.k[j] = (nn_real)(offset + gaps[(j * 3) % 10] * tau);
            check_case("shifted scores 0 .. -200, tau=%g mask=%s", tau, mask_names[mask]);
            check_against_ref(&t, TOL_FWD_ATOL, TOL_FWD_RTOL);
            int zeros = 1;
            for (int i = 0; i < 12; i++) {
                double m = -INFINITY;
                int L = ref_visible(&t.c, i);
                for (int j = 0; j < L; j++) m = t.k[j] > m ? t.k[j] : m;
                for (int j = 0; j < L; j++) {
                    nn_real a = t.weights[(size_t)i * 10 + j];
                    zeros &= a >= 0 && a <= 1;
                    /* float32 exp is 0 from -87.7 down (float64's is not) */
                    if (sizeof(nn_real) == 4 && ((double)t.k[j] - m) / (double)t.c.temperature < -88) zeros &= a == 0;
                }
            }
            CHECK(zeros, "a weight outside [0, 1], or one past exp's underflow that is not exactly 0");
            alloc_release(mark);
        }
}

/* Softmax over values near the float limit: the context, a weighted mean of
 * them, is finite, although sum_j exp_ij v_j (the unnormalised product the
 * forward computes first) overflows; with scores and weights returned and
 * with the context alone. */
static void test_values_near_limit(Rng *r) {
    const double huge = sizeof(nn_real) == 8 ? 1.5e308 : 3e38;
    for (int alone = 0; alone < 2; alone++)
        for (int mask = 0; mask < 2; mask++) {
            Case t;
            size_t mark = setup_case(&t, r, (Shape){20, 6, 3, 3, 2, 0}, ATTN_SCORE_SCALED_DOT, ATTN_NORM_SOFTMAX, 1, mask);
            for (int i = 0; i < 20 * 3; i++) t.q[i] *= (nn_real)0.01; /* near-uniform weights: sum_j exp_ij ~ 6 */
            for (int j = 0; j < 6; j++) {
                t.v[j * 2] = (nn_real)(huge * (1 - 0.01 * j));
                t.v[j * 2 + 1] = (nn_real)(j - 2.5);
            }
            check_case("values up to %g, mask=%s%s", huge, mask_names[mask], alone ? ", context alone" : "");
            if (!alone) {
                check_against_ref(&t, TOL_FWD_ATOL, TOL_FWD_RTOL);
            } else {
                int st = attn_forward(&t.c, &t.p, NULL, NULL, t.context, t.q, t.k, t.v, t.scratch);
                if (CHECK(st == NN_OK, "attn_forward returned %d (%s)", st, nn_last_error())) {
                    ref_attention(&t.c, &t.p, t.q, t.k, t.v, t.e_ref, t.a_ref, t.z_ref);
                    CHECK_ARRAY(t.context, t.z_ref, 20 * 2, 2, TOL_FWD_ATOL, TOL_FWD_RTOL, "context");
                }
            }
            alloc_release(mark);
        }
}

/* Huge but finite inputs may overflow a score; the engine then either fails
 * with a status or returns finite weights and context, never NaN silently. */
static void test_huge_inputs(Rng *r) {
    for (int score = 0; score < ATTN_SCORE_COUNT; score++)
        for (int norm = 0; norm < 2; norm++)
            for (int big = 0; big < 3; big++) {
                Case t;
                size_t mark = setup_case(&t, r, (Shape){3, 4, 2, 2, 2, 2}, (AttnScore)score, (AttnNorm)norm, 1, 0);
                double f = big == 0 ? 1e15 : big == 1 ? 1e19 : 1e30;
                for (int i = 0; i < 6; i++) t.q[i] *= (nn_real)f;
                for (int i = 0; i < 8; i++) t.k[i] *= (nn_real)f;
                check_case("inputs scaled by %g, score=%s norm=%s", f, score_names[score], norm ? "sum" : "softmax");
                int st = case_forward(&t);
                int finite = 1;
                for (int i = 0; i < 12; i++) finite &= isfinite(t.weights[i]) != 0;
                for (int i = 0; i < 6; i++) finite &= isfinite(t.context[i]) != 0;
                CHECK(st != NN_OK || finite, "status OK but NaN or infinite weights or context");
                CHECK(st == NN_OK || nn_last_error()[0], "status %d without a message", st);
                alloc_release(mark);
            }
}

static void test_visible_keys(void) {
    int32_t kl[5] = {0, 2, 9, 9, 1};
    AttnConfig c = {.n_q = 5, .n_k = 9, .d_q = 1, .d_k = 1, .d_v = 1, .temperature = 1};
    check_case("attn_visible_keys");
    int ok = 1;
    for (int causal = 0; causal < 2; causal++)
        for (int use_kl = 0; use_kl < 2; use_kl++) {
            c.causal = causal;
            c.key_lengths = use_kl ? kl : NULL;
            for (int i = 0; i < 5; i++) {
                int want = 9;
                if (causal && i + 1 < want) want = i + 1;
                if (use_kl && kl[i] < want) want = kl[i];
                if (attn_visible_keys(&c, i) != want) {
                    ok = 0;
                    CHECK(0, "causal=%d key_lengths=%d row %d: %d visible, want %d", causal, use_kl, i,
                          attn_visible_keys(&c, i), want);
                }
            }
        }
    CHECK(ok, "attn_visible_keys");
    /* n_q > n_k with causal: later queries see all keys */
    AttnConfig d = {.n_q = 6, .n_k = 3, .d_q = 1, .d_k = 1, .d_v = 1, .temperature = 1, .causal = 1};
    CHECK(attn_visible_keys(&d, 0) == 1 && attn_visible_keys(&d, 2) == 3 && attn_visible_keys(&d, 5) == 3,
          "causal with n_q > n_k: %d %d %d", attn_visible_keys(&d, 0), attn_visible_keys(&d, 2),
          attn_visible_keys(&d, 5));
}

/* ---- errors at the API boundary ------------------------------------------- */

static const char *const status_names[] = {"OK",    "SHAPE",    "VALUE", "ARG",
                                           "PARAM", "LIMIT",    "ZERO_SUM", "NOMEM"};
static const char *status_name(int s) { return s >= 0 && s <= 7 ? status_names[s] : "?"; }

/* attn_check and attn_forward both return want, and the message is not empty
 * (and contains `mention` when given). The engine stays usable afterwards. */
static void expect_error_from(Case *t, int want_check, int want, const char *mention, const char *what) {
    check_case("error: %s", what);
    int st_check = attn_check(&t->c, &t->p, t->q, t->k, t->v);
    CHECK(st_check == want_check, "attn_check returned %s (%d), want %s: \"%s\"", status_name(st_check), st_check,
          status_name(want_check), nn_last_error());
    /* attn_check_config fails alike, except on the queries', keys' or values'
     * data, which it does not read */
    const char *m = nn_last_error();
    int data = st_check != NN_OK && (strstr(m, "queries[") || strstr(m, "keys[") || strstr(m, "values["));
    int st_config = attn_check_config(&t->c, &t->p);
    CHECK(st_config == (data ? NN_OK : want_check), "attn_check_config returned %s (%d), want %s",
          status_name(st_config), st_config, status_name(data ? NN_OK : want_check));
    int st = case_forward(t);
    CHECK(st == want, "attn_forward returned %s (%d), want %s: \"%s\"", status_name(st), st, status_name(want),
          nn_last_error());
    const char *msg = nn_last_error();
    CHECK(msg && msg[0], "nn_last_error() is empty after a failure");
    if (mention) CHECK(msg && strstr(msg, mention), "nn_last_error() \"%s\" does not mention \"%s\"", msg, mention);
}

static void expect_error(Case *t, int want, const char *mention, const char *what) {
    expect_error_from(t, want, want, mention, what);
}

static void base_case(Case *t, Rng *r, AttnScore score, AttnNorm norm) {
    setup_case(t, r, (Shape){3, 4, 3, 3, 2, 2}, score, norm, 1, 0);
}

static void test_errors(Rng *r) {
    size_t mark = alloc_mark();
    Case t;

    for (int score = 0; score < ATTN_SCORE_COUNT; score++) {
        if (!dims_same((AttnScore)score)) continue;
        setup_case(&t, r, (Shape){3, 4, 3, 4, 2, 0}, ATTN_SCORE_GENERAL, ATTN_NORM_SOFTMAX, 1, 0); /* d_q 3, d_k 4 */
        t.c.score = (AttnScore)score;
        expect_error(&t, NN_ERR_SHAPE, NULL, "d_q != d_k with a dot-product score");
    }
    base_case(&t, r, ATTN_SCORE_DOT, ATTN_NORM_SOFTMAX);
    t.c.score = (AttnScore)99;
    expect_error(&t, NN_ERR_ARG, NULL, "score 99");
    t.c.score = (AttnScore)-1;
    expect_error(&t, NN_ERR_ARG, NULL, "score -1");
    t.c.score = ATTN_SCORE_COUNT;
    expect_error(&t, NN_ERR_ARG, NULL, "score ATTN_SCORE_COUNT");
    base_case(&t, r, ATTN_SCORE_DOT, ATTN_NORM_SOFTMAX);
    t.c.norm = (AttnNorm)7;
    expect_error(&t, NN_ERR_ARG, NULL, "norm 7");

    /* a parameter the score needs is missing: that member of AttnParams is NULL */
    static const struct {
        AttnScore score;
        size_t param; /* offset of the pointer in AttnParams */
        const char *what;
    } missing[] = {
        {ATTN_SCORE_GENERAL, offsetof(AttnParams, W), "general without W"},
        {ATTN_SCORE_LOCATION, offsetof(AttnParams, W), "location without W"},
        {ATTN_SCORE_ADDITIVE, offsetof(AttnParams, Wq), "additive without Wq"},
        {ATTN_SCORE_ADDITIVE, offsetof(AttnParams, Wk), "additive without Wk"},
        {ATTN_SCORE_ADDITIVE, offsetof(AttnParams, v), "additive without v"},
    };
    for (size_t i = 0; i < sizeof missing / sizeof *missing; i++) {
        base_case(&t, r, missing[i].score, ATTN_NORM_SOFTMAX);
        *(const nn_real **)((char *)&t.p + missing[i].param) = NULL;
        expect_error(&t, NN_ERR_PARAM, NULL, missing[i].what);
    }

    /* one input or parameter value that is not finite */
    static const struct {
        AttnScore score;
        size_t array; /* offset of the array's pointer in Case */
        int index;
        double value;
        const char *mention, *what;
    } nonfinite[] = {
        {ATTN_SCORE_DOT, offsetof(Case, k), 5, NAN, "keys", "NaN in keys"},
        {ATTN_SCORE_DOT, offsetof(Case, q), 8, INFINITY, "queries", "+inf in queries"},
        {ATTN_SCORE_DOT, offsetof(Case, v), 7, -INFINITY, "values", "-inf in values"},
        {ATTN_SCORE_GENERAL, offsetof(Case, W), 2, NAN, "W", "NaN in general W"},
        {ATTN_SCORE_ADDITIVE, offsetof(Case, va), 1, NAN, NULL, "NaN in additive v"},
    };
    for (size_t i = 0; i < sizeof nonfinite / sizeof *nonfinite; i++) {
        base_case(&t, r, nonfinite[i].score, ATTN_NORM_SOFTMAX);
        (*(nn_real **)((char *)&t + nonfinite[i].array))[nonfinite[i].index] = (nn_real)nonfinite[i].value;
        expect_error(&t, NN_ERR_VALUE, nonfinite[i].mention, nonfinite[i].what);
    }
    base_case(&t, r, ATTN_SCORE_COSINE, ATTN_NORM_SOFTMAX);
    t.p.beta = (nn_real)NAN;
    expect_error(&t, NN_ERR_VALUE, NULL, "cosine beta NaN");

    static const double bad_taus[4] = {0, -1, NAN, INFINITY};
    for (int i = 0; i < 4; i++) {
        base_case(&t, r, ATTN_SCORE_DOT, ATTN_NORM_SOFTMAX);
        t.c.temperature = (nn_real)bad_taus[i];
        char what[64];
        snprintf(what, sizeof what, "temperature %g", bad_taus[i]);
        expect_error(&t, NN_ERR_VALUE, NULL, what);
    }

    /* zero sizes */
    int *dims[5] = {&t.c.n_q, &t.c.n_k, &t.c.d_q, &t.c.d_k, &t.c.d_v};
    const char *dim_names[5] = {"n_q", "n_k", "d_q", "d_k", "d_v"};
    for (int d = 0; d < 5; d++) {
        base_case(&t, r, ATTN_SCORE_GENERAL, ATTN_NORM_SOFTMAX);
        *dims[d] = 0;
        char what[64];
        snprintf(what, sizeof what, "%s = 0", dim_names[d]);
        expect_error(&t, NN_ERR_SHAPE, NULL, what);
    }
    base_case(&t, r, ATTN_SCORE_ADDITIVE, ATTN_NORM_SOFTMAX);
    t.c.hidden = 0;
    expect_error(&t, NN_ERR_SHAPE, NULL, "additive hidden = 0");

    /* past ATTN_MAX_TOKENS: real inputs of that size, so nothing is read out of bounds */
    for (int which = 0; which < 2; which++) {
        size_t m2 = alloc_mark();
        memset(&t, 0, sizeof t);
        t.c.n_q = which ? ATTN_MAX_TOKENS + 1 : 1;
        t.c.n_k = which ? 1 : ATTN_MAX_TOKENS + 1;
        t.c.d_q = t.c.d_k = t.c.d_v = 1;
        t.c.score = ATTN_SCORE_DOT, t.c.norm = ATTN_NORM_SOFTMAX, t.c.temperature = 1;
        case_init(&t, r, -1, 1);
        case_outputs(&t);
        expect_error(&t, NN_ERR_LIMIT, NULL, which ? "n_q = ATTN_MAX_TOKENS + 1" : "n_k = ATTN_MAX_TOKENS + 1");
        alloc_release(m2);
    }
    {
        /* at the limit it works */
        size_t m2 = alloc_mark();
        memset(&t, 0, sizeof t);
        t.c.n_q = 1, t.c.n_k = ATTN_MAX_TOKENS, t.c.d_q = t.c.d_k = t.c.d_v = 1;
        t.c.score = ATTN_SCORE_DOT, t.c.norm = ATTN_NORM_SOFTMAX, t.c.temperature = 1;
        case_init(&t, r, -1, 1);
        case_outputs(&t);
        check_case("n_k = ATTN_MAX_TOKENS");
        check_against_ref(&t, TOL_FWD_ATOL, TOL_FWD_RTOL);
        alloc_release(m2);
    }
    {
        /* d past ATTN_MAX_DIM, and hidden past it */
        size_t m2 = alloc_mark();
        memset(&t, 0, sizeof t);
        t.c.n_q = 1, t.c.n_k = 1, t.c.d_q = t.c.d_k = ATTN_MAX_DIM + 1, t.c.d_v = 1;
        t.c.score = ATTN_SCORE_DOT, t.c.norm = ATTN_NORM_SOFTMAX, t.c.temperature = 1;
        case_init(&t, r, -1, 1);
        case_outputs(&t);
        expect_error(&t, NN_ERR_LIMIT, NULL, "d_k = ATTN_MAX_DIM + 1");
        memset(&t, 0, sizeof t);
        t.c.n_q = 1, t.c.n_k = 1, t.c.d_q = t.c.d_k = 1, t.c.d_v = 1, t.c.hidden = ATTN_MAX_DIM + 1;
        t.c.score = ATTN_SCORE_ADDITIVE, t.c.norm = ATTN_NORM_SOFTMAX, t.c.temperature = 1;
        case_init(&t, r, -1, 1);
        case_outputs(&t);
        expect_error(&t, NN_ERR_LIMIT, NULL, "hidden = ATTN_MAX_DIM + 1");
        alloc_release(m2);
    }
    {
        /* n_q n_k past ATTN_MAX_CELLS, each within ATTN_MAX_TOKENS: attn_check only,
         * so no 4M-cell outputs are needed */
        size_t m2 = alloc_mark();
        memset(&t, 0, sizeof t);
        t.c.n_q = ATTN_MAX_TOKENS, t.c.n_k = ATTN_MAX_CELLS / ATTN_MAX_TOKENS + 1;
        t.c.d_q = t.c.d_k = t.c.d_v = 1;
        t.c.score = ATTN_SCORE_DOT, t.c.norm = ATTN_NORM_SOFTMAX, t.c.temperature = 1;
        case_init(&t, r, -1, 1);
        check_case("error: n_q n_k past ATTN_MAX_CELLS");
        int st = attn_check(&t.c, &t.p, t.q, t.k, t.v);
        CHECK(st == NN_ERR_LIMIT, "attn_check returned %s (%d), want LIMIT: \"%s\"", status_name(st), st,
              nn_last_error());
        alloc_release(m2);
    }

    /* sum normalisation of a row summing to exactly 0: q = (1, 0), keys (1, 0), (-1, 0) */
    for (int mask = 0; mask < 2; mask++) {
        size_t m2 = alloc_mark();
        memset(&t, 0, sizeof t);
        t.c.n_q = 2, t.c.n_k = 2, t.c.d_q = t.c.d_k = 2, t.c.d_v = 1;
        t.c.score = ATTN_SCORE_DOT, t.c.norm = ATTN_NORM_SUM, t.c.temperature = 1;
        case_init(&t, r, -1, 1);
        case_outputs(&t);
        t.q[0] = 1, t.q[1] = 0, t.q[2] = 1, t.q[3] = 0;
        t.k[0] = 1, t.k[1] = 0, t.k[2] = -1, t.k[3] = 0;
        int32_t kl[2] = {2, 2};
        t.c.key_lengths = mask ? kl : NULL;
        /* attn_check sees no scores: only the forward can find the zero sum */
        expect_error_from(&t, NN_OK, NN_ERR_ZERO_SUM, NULL, "sum normalisation of scores summing to 0");
        /* masking the negative key away makes the row sum 1 */
        kl[0] = 1, kl[1] = 1;
        t.c.key_lengths = kl;
        check_case("sum normalisation, zero-sum row masked to a non-zero sum");
        check_against_ref(&t, TOL_FWD_ATOL, TOL_FWD_RTOL);
        alloc_release(m2);
    }

    /* backward validates too */
    base_case(&t, r, ATTN_SCORE_DOT, ATTN_NORM_SOFTMAX);
    {
        nn_real *dz = alloc_random(r, (size_t)3 * 2, -1, 1);
        nn_real *scratch = alloc_reals(attn_scratch_size(&t.c));
        CHECK_OK(case_forward(&t), "attn_forward");
        t.c.score = (AttnScore)99;
        check_case("error: attn_backward with score 99");
        int st = attn_backward(&t.c, &t.p, NULL, NULL, NULL, NULL, dz, NULL, t.scores, t.weights, t.q, t.k, t.v,
                               scratch);
        CHECK(st == NN_ERR_ARG, "attn_backward returned %s (%d), want ARG", status_name(st), st);
    }

    /* after all those failures a valid call still works */
    base_case(&t, r, ATTN_SCORE_ADDITIVE, ATTN_NORM_SOFTMAX);
    check_case("valid call after errors");
    check_against_ref(&t, TOL_FWD_ATOL, TOL_FWD_RTOL);
    alloc_release(mark);
}

int main(void) {
    Rng r = {0xa77e1ab};
    test_tutorial();
    test_reference(&r);
    test_long_blocks(&r);
    test_cosine_zero(&r);
    test_empty_rows(&r);
    test_identical_keys(&r);
    test_shift_invariance(&r);
    test_cosine_scale(&r);
    test_values_alias_keys(&r);
    test_large_scores(&r);
    test_exp_edges(&r);
    test_values_near_limit(&r);
    test_huge_inputs(&r);
    test_visible_keys();
    test_errors(&r);
    return check_summary();
}
