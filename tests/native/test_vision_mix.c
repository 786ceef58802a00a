/* Hard attention's soft mix (vis_set_soft_mix, Xu et al. 2015 sec. 4.1):
 *   - share 1: every row reads the expected context, so a hard model's loss,
 *     answers, parameter and pixel gradients are a soft model's with the same
 *     weights (the estimator on those rows is soft attention's exact gradient,
 *     itself checked by finite differences in test_vision.c), its baseline
 *     does not move and no row has a location;
 *   - share 0 (the default) trains bit for bit as a model never given a share;
 *   - a share in between splits the rows: those without a location read the
 *     soft model's context (their answers' probabilities are the soft
 *     model's), the others a sampled cell; split into shards, the batch gives
 *     the same loss, gradients and locations;
 *   - a share outside [0, 1] is NN_ERR_VALUE, a share on a model that does
 *     not sample (soft, none) NN_ERR_ARG, the retina takes one (its glimpses
 *     at the policy's mean: test_vision_retina.c), and a trainer that grows
 *     its batch keeps the share;
 *   - as a schedule over the model's steps (vis_set_soft_mix_schedule): the
 *     share at given steps, its checks, and a run split into calls trains
 *     bit for bit as one call. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab/vision.h"
#include "check.h"
#include "models/vision_internal.h" /* the share, the baseline, the probabilities */
#include "train/vision_train.h"
#include "vis_asset.h"

#define R 12
#define Q 16
#define B 8
#define T 2
#define H 6

static VisionModel *model(VisMode mode, int attention, int sequence) {
    VisConfig c = {R, Q, 2, {3, 4, 0}, RNN_CELL_GRU, H, attention, mode, T, sequence, 0.02, B, 5, VIS_START_CONSTANT,
                   VIS_SENSOR_GRID, 0, 0, 0};
    VisionModel *m = NULL;
    CHECK(vis_create(&m, &c) == NN_OK, "create: %s", nn_last_error());
    return m;
}

typedef struct {
    nn_real *images;
    int32_t labels[B * T], n[B];
} Batch;

static Batch batch(uint64_t seed) {
    Batch x;
    Rng r = {seed};
    x.images = alloc_random(&r, (size_t)B * R * Q, 0, 1);
    for (int b = 0; b < B; b++) {
        x.n[b] = 1 + b % T;
        for (int t = 0; t < T; t++) x.labels[b * T + t] = rng_int(&r, 0, VIS_TOKENS - 1);
    }
    return x;
}

/* A training forward and backward of x: the loss, gradients (into g, P) and pixel gradients (into dx). */
static nn_real pass(VisionModel *m, const Batch *x, nn_real *g, nn_real *dx) {
    nn_real loss = NAN;
    vis_zero_grad(m);
    memset(dx, 0, sizeof(nn_real) * B * R * Q);
    CHECK(vis_forward(m, B, x->images, x->labels, x->n, 1, &loss, NULL) == NN_OK, "forward: %s", nn_last_error());
    CHECK(vis_backward(m, dx) == NN_OK, "backward: %s", nn_last_error());
    memcpy(g, vis_grads(m), sizeof(nn_real) * vis_num_params(m));
    return loss;
}

/* pass() with only the rows where keep[b] == want in the loss: the others' loss weights zeroed before the backward. */
static void pass_rows(VisionModel *m, const Batch *x, const int *keep, int want, nn_real *g, nn_real *dx) {
    vis_zero_grad(m);
    memset(dx, 0, sizeof(nn_real) * B * R * Q);
    CHECK(vis_forward(m, B, x->images, x->labels, x->n, 1, NULL, NULL) == NN_OK, "forward: %s", nn_last_error());
    for (int t = 0; t < T; t++)
        for (int b = 0; b < B; b++)
            if (keep[b] != want) m->a.lw[t * B + b] = 0;
    CHECK(vis_backward(m, dx) == NN_OK, "backward: %s", nn_last_error());
    memcpy(g, vis_grads(m), sizeof(nn_real) * vis_num_params(m));
}

/* Largest |x_i|. */
static double max_abs(const nn_real *x, size_t n) {
    double d = 0;
    for (size_t i = 0; i < n; i++) d = fmax(d, fabs(x[i]));
    return d;
}

/* Gradients g (P) and pixel gradients d (N) against want_g, want_d, within `ulps` of the largest of each. */
static void check_grads(const nn_real *g, const nn_real *want_g, size_t P, const nn_real *d, const nn_real *want_d, size_t N,
                        double ulps, const char *what) {
    check_case("%s", what);
    CHECK_ARRAY_R(g, want_g, P, P, ulps * TOL_EPS * max_abs(want_g, P), 0, "gradients");
    CHECK_ARRAY_R(d, want_d, N, N, ulps * TOL_EPS * max_abs(want_d, N), 0, "pixel gradients");
}

static void share_one_is_soft(int attention, int sequence) {
    check_case("soft mix 1 = soft attention, score %d, sequence %d", attention, sequence);
    VisionModel *hard = model(VIS_HARD, attention, sequence), *soft = model(VIS_SOFT, attention, sequence);
    if (!hard || !soft) return;
    size_t P = vis_num_params(hard), N = (size_t)B * R * Q;
    CHECK(P == vis_num_params(soft) && memcmp(vis_params(hard), vis_params(soft), sizeof(nn_real) * P) == 0,
          "the same weights");
    CHECK(vis_set_soft_mix(hard, 1) == NN_OK, "share 1: %s", nn_last_error());
    Batch x = batch(71 + (uint64_t)attention);
    nn_real *gh = alloc_reals(P), *gs = alloc_reals(P), *dh = alloc_reals(N), *ds = alloc_reals(N);
    double before[VIS_MAX_STEPS];
    memcpy(before, hard->baseline, sizeof before);
    nn_real lh = pass(hard, &x, gh, dh), ls = pass(soft, &x, gs, ds);
    CHECK_CLOSE(lh, ls, 0, 4 * TOL_EPS, "loss");
    check_grads(gh, gs, P, dh, ds, N, 16, "soft mix 1 = soft attention: gradients");
    CHECK_ARRAY_R(hard->a.probs, soft->a.probs, (size_t)T * B * VIS_TOKENS, VIS_TOKENS, 1e-6, 1e-5, "probabilities");
    CHECK(memcmp(before, hard->baseline, sizeof before) == 0, "no sampled row: the baseline stays");
    int32_t loc[T];
    vis_attention(hard, B - 1, NULL, loc);
    CHECK(loc[0] == -1 && loc[T - 1] == -1, "no location (%d, %d)", loc[0], loc[T - 1]);
    vis_destroy(hard);
    vis_destroy(soft);
}

static void share_zero_is_unchanged(void) {
    check_case("soft mix 0 trains as before");
    VisionModel *a = model(VIS_HARD, ATTN_SCORE_DOT, 1), *b = model(VIS_HARD, ATTN_SCORE_DOT, 1);
    if (!a || !b) return;
    CHECK(vis_set_soft_mix(b, 0.7) == NN_OK && vis_set_soft_mix(b, 0) == NN_OK, "share 0: %s", nn_last_error());
    Batch x = batch(73);
    NnTrainOptions o = {.optimizer = NN_ADAM, .lr = 0.01f, .clip = 5};
    for (int s = 0; s < 3; s++)
        for (int i = 0; i < 2; i++) {
            VisionModel *m = i ? b : a;
            vis_zero_grad(m);
            CHECK(vis_forward(m, B, x.images, x.labels, x.n, 1, NULL, NULL) == NN_OK && vis_backward(m, NULL) == NN_OK &&
                      vis_update(m, &o, NULL) == NN_OK,
                  "step %d: %s", s, nn_last_error());
        }
    CHECK(memcmp(vis_params(a), vis_params(b), sizeof(nn_real) * vis_num_params(a)) == 0, "the same weights");
    CHECK(a->rng == b->rng, "the same sampling stream");
    vis_destroy(a);
    vis_destroy(b);
}

static void share_half_splits_rows(void) {
    check_case("soft mix 0.5: rows read the expected context or a sampled cell");
    VisionModel *hard = model(VIS_HARD, ATTN_SCORE_GENERAL, 0), *soft = model(VIS_SOFT, ATTN_SCORE_GENERAL, 0);
    if (!hard || !soft) return;
    CHECK(vis_set_soft_mix(hard, 0.5) == NN_OK, "share 0.5: %s", nn_last_error());
    Batch x = batch(79);
    size_t P = vis_num_params(hard), N = (size_t)B * R * Q;
    nn_real *g1 = alloc_reals(P), *d1 = alloc_reals(N), *gs = alloc_reals(P), *ds = alloc_reals(N);
    uint64_t stream = hard->rng;
    nn_real l1 = pass(hard, &x, g1, d1);
    pass(soft, &x, gs, ds);
    int expected = 0, sampled = 0;
    int32_t loc1[B][T];
    for (int b = 0; b < B; b++) {
        vis_attention(hard, b, NULL, loc1[b]);
        CHECK((loc1[b][0] < 0) == (loc1[b][T - 1] < 0), "row %d: one choice for all its steps", b);
        if (loc1[b][0] >= 0) {
            sampled++;
            continue;
        }
        expected++;
        for (int t = 0; t < T; t++) {
            size_t at = ((size_t)t * B + b) * VIS_TOKENS;
            CHECK_ARRAY_R(hard->a.probs + at, soft->a.probs + at, VIS_TOKENS, VIS_TOKENS, 1e-6, 1e-5, "soft row's probabilities");
        }
    }
    CHECK(expected > 0 && sampled > 0, "both kinds of rows (%d expected, %d sampled)", expected, sampled);
    /* row by row, the gradient is soft attention's on the expected rows and
     * hard attention's on the sampled ones: a hard model without a share,
     * from the same stream, draws the same locations (the rows' mix draws
     * come after them) */
    int is_expected[B];
    for (int b = 0; b < B; b++) is_expected[b] = loc1[b][0] < 0;
    VisionModel *mixed = model(VIS_HARD, ATTN_SCORE_GENERAL, 0), *plain = model(VIS_HARD, ATTN_SCORE_GENERAL, 0),
                *soft2 = model(VIS_SOFT, ATTN_SCORE_GENERAL, 0);
    if (!mixed || !plain || !soft2) return;
    CHECK(vis_set_soft_mix(mixed, 0.5) == NN_OK, "share 0.5: %s", nn_last_error());
    nn_real *gm = alloc_reals(P), *dm = alloc_reals(N), *gp = alloc_reals(P), *dp = alloc_reals(N);
    pass_rows(mixed, &x, is_expected, 0, gm, dm);
    pass_rows(plain, &x, is_expected, 0, gp, dp);
    check_grads(gm, gp, P, dm, dp, N, 16, "soft mix 0.5, sampled rows: hard attention's gradients");
    vis_destroy(mixed);
    mixed = model(VIS_HARD, ATTN_SCORE_GENERAL, 0);
    if (!mixed) return;
    CHECK(vis_set_soft_mix(mixed, 0.5) == NN_OK, "share 0.5: %s", nn_last_error());
    pass_rows(mixed, &x, is_expected, 1, gm, dm);
    pass_rows(soft2, &x, is_expected, 1, gp, dp);
    CHECK(max_abs(gp, P) > 0, "the expected rows have a gradient");
    check_grads(gm, gp, P, dm, dp, N, 16, "soft mix 0.5, expected rows: soft attention's gradients");
    vis_destroy(mixed);
    vis_destroy(plain);
    vis_destroy(soft2);
    /* the same forward on 3 shards: the draws are the whole batch's, in one order */
    VisionModel *many = model(VIS_HARD, ATTN_SCORE_GENERAL, 0);
    if (!many) return;
    CHECK(vis_set_shards(many, 3) == NN_OK && vis_set_soft_mix(many, 0.5) == NN_OK, "3 shards: %s", nn_last_error());
    CHECK(many->rng == stream, "the same stream");
    nn_real *g3 = alloc_reals(P), *d3 = alloc_reals(N);
    nn_real l3 = pass(many, &x, g3, d3);
    CHECK_CLOSE(l3, l1, 0, 8 * TOL_EPS, "loss on 3 shards");
    check_grads(g3, g1, P, d3, d1, N, 64, "soft mix 0.5 on 3 shards");
    for (int b = 0; b < B; b++) {
        int32_t loc[T];
        vis_attention(many, b, NULL, loc);
        CHECK(memcmp(loc, loc1[b], sizeof loc) == 0, "row %d: the same locations on 3 shards", b);
    }
    CHECK(memcmp(many->baseline, hard->baseline, sizeof hard->baseline) == 0, "the same baseline on 3 shards");
    vis_destroy(many);
    vis_destroy(hard);
    vis_destroy(soft);
}

static void errors_and_growth(void) {
    check_case("soft mix: errors, and a grown batch keeps the share");
    VisionModel *hard = model(VIS_HARD, ATTN_SCORE_DOT, 0), *soft = model(VIS_SOFT, ATTN_SCORE_DOT, 0),
                *none = model(VIS_SOFT, VIS_ATTN_NONE, 0);
    if (!hard || !soft || !none) return;
    const nn_real bad[] = {-0.1f, 1.5f, NAN, INFINITY};
    for (int i = 0; i < 4; i++)
        CHECK(vis_set_soft_mix(hard, bad[i]) == NN_ERR_VALUE && strstr(nn_last_error(), "softMix"), "share %g: %s",
              (double)bad[i], nn_last_error());
    CHECK(vis_set_soft_mix(soft, 0.5) == NN_ERR_ARG && strstr(nn_last_error(), "softMix"), "soft: %s", nn_last_error());
    CHECK(vis_set_soft_mix(none, 0.5) == NN_ERR_ARG, "none: %s", nn_last_error());
    CHECK(vis_set_soft_mix(soft, 0) == NN_OK, "share 0 on any model");
    VisConfig rc = {0, 0, 1, {1, 0, 0}, RNN_CELL_GRU, 8, ATTN_SCORE_DOT, VIS_HARD, 2, 0, 0, 4, 3, VIS_START_CONSTANT,
                    VIS_SENSOR_RETINA, 4, 2, 0.2};
    Rng r = {83};
    size_t size;
    uint8_t *asset = make_vis_asset(&r, 200, &size);
    VisData *d = NULL;
    VisionTrainer *t = NULL;
    ImgTaskConfig tc = {IMG_CLUTTERED, 2, 1, 1, 0};
    if (CHECK(vis_data_create(&d, asset, size) == NN_OK && vtr_create(&t, d, &tc, &rc) == NN_OK, "retina: %s", nn_last_error())) {
        NnTrainOptions o = {.optimizer = NN_ADAM, .lr = 0.01f, .clip = 5};
        float losses[2];
        CHECK(vis_set_soft_mix(vtr_model(t), 0.5) == NN_OK && vtr_train(t, &o, 2, 4, losses) == NN_OK,
              "the retina trains with a share: %s", nn_last_error());
        vtr_destroy(t);
        t = NULL;
    }
    VisConfig gc = {0, 0, 2, {3, 4, 0}, RNN_CELL_GRU, 8, ATTN_SCORE_DOT, VIS_HARD, 1, 0, 0.01, 4, 3, VIS_START_CONSTANT,
                    VIS_SENSOR_GRID, 0, 0, 0};
    if (CHECK(vtr_create(&t, d, &tc, &gc) == NN_OK, "grid: %s", nn_last_error())) {
        NnTrainOptions o = {.optimizer = NN_ADAM, .lr = 0.01f, .clip = 5};
        float losses[2];
        CHECK(vis_set_soft_mix(vtr_model(t), 1) == NN_OK && vtr_train(t, &o, 2, 9, losses) == NN_OK, "train 9 rows: %s",
              nn_last_error());
        CHECK(vtr_batch(t) == 4 && vtr_model(t)->c.batch == 9, "the buffers grew to 9 rows");
        CHECK(vtr_model(t)->soft_mix == 1, "the grown model keeps the share (%g)", (double)vtr_model(t)->soft_mix);
        CHECK(vtr_model(t)->baseline[0] == 0, "every row read the expected context: the baseline stays 0");
        vtr_destroy(t);
    }
    vis_data_destroy(d);
    vis_destroy(hard);
    vis_destroy(soft);
    vis_destroy(none);
}

/* A hard trainer on the grid of a cluttered canvas (batch 4, 1 glimpse). */
static VisionTrainer *grid_trainer(const VisData *d) {
    ImgTaskConfig tc = {IMG_CLUTTERED, 2, 1, 1, 0};
    VisConfig gc = {0, 0, 2, {3, 4, 0}, RNN_CELL_GRU, 8, ATTN_SCORE_DOT, VIS_HARD, 1, 0, 0.01, 4, 3, VIS_START_CONSTANT,
                    VIS_SENSOR_GRID, 0, 0, 0};
    VisionTrainer *t = NULL;
    CHECK(vtr_create(&t, d, &tc, &gc) == NN_OK, "grid: %s", nn_last_error());
    return t;
}

static void schedule_over_steps(void) {
    check_case("soft mix schedule: the share at given steps, its checks, chunks = one call");
    VisionModel *hard = model(VIS_HARD, ATTN_SCORE_DOT, 0);
    if (!hard) return;
    /* share 0.8 until step 4, falling linearly to 0 at step 8 */
    CHECK(vis_set_soft_mix_schedule(hard, 0.8f, 4, 8) == NN_OK, "schedule: %s", nn_last_error());
    const int at[] = {0, 3, 4, 5, 6, 7, 8, 100};
    const double want[] = {0.8, 0.8, 0.8, 0.6, 0.4, 0.2, 0, 0};
    for (int i = 0; i < 8; i++)
        CHECK(fabs((double)vis_soft_mix_at(hard, at[i]) - want[i]) < 1e-6, "step %d: share %g, expected %g", at[i],
              (double)vis_soft_mix_at(hard, at[i]), want[i]);
    CHECK(vis_set_soft_mix_schedule(hard, 1, 3, 3) == NN_OK && vis_soft_mix_at(hard, 2) == 1 && vis_soft_mix_at(hard, 3) == 0,
          "hold = end: the share until it, 0 from it");
    CHECK(vis_set_soft_mix(hard, 0.3f) == NN_OK && vis_soft_mix_at(hard, 0) == 0.3f &&
              vis_soft_mix_at(hard, NN_MAX_OPT_STEPS - 1) == 0.3f,
          "vis_set_soft_mix: the share at every step");
    CHECK(vis_set_soft_mix_schedule(hard, 0.5f, -1, 4) == NN_ERR_SHAPE && strstr(nn_last_error(), "softMix hold"),
          "hold -1: %s", nn_last_error());
    CHECK(vis_set_soft_mix_schedule(hard, 0.5f, 5, 4) == NN_ERR_SHAPE && strstr(nn_last_error(), "softMix end"),
          "end before hold: %s", nn_last_error());
    CHECK(vis_set_soft_mix_schedule(hard, 0.5f, 4, NN_MAX_OPT_STEPS + 1) == NN_ERR_LIMIT, "end past the count: %s",
          nn_last_error());
    CHECK(vis_set_soft_mix_schedule(hard, 2, 1, 2) == NN_ERR_VALUE, "share 2: %s", nn_last_error());
    CHECK(vis_soft_mix_at(hard, 0) == 0.3f && vis_soft_mix_at(hard, 1000) == 0.3f, "a refused schedule leaves the model's");
    vis_destroy(hard);

    Rng r = {91};
    size_t size;
    uint8_t *asset = make_vis_asset(&r, 200, &size);
    VisData *d = NULL;
    if (!CHECK(vis_data_create(&d, asset, size) == NN_OK, "data: %s", nn_last_error())) return;
    VisionTrainer *one = grid_trainer(d), *chunked = grid_trainer(d), *constant = grid_trainer(d);
    if (one && chunked && constant) {
        NnTrainOptions o = {.optimizer = NN_ADAM, .lr = 0.01f, .clip = 5};
        float losses[6], parts[6], flat[6];
        /* every row reads the expected context for 2 steps, then the share falls to 0 at step 4 */
        CHECK(vis_set_soft_mix_schedule(vtr_model(one), 1, 2, 4) == NN_OK && vtr_train(one, &o, 6, 4, losses) == NN_OK,
              "one call: %s", nn_last_error());
        CHECK(vis_set_soft_mix_schedule(vtr_model(chunked), 1, 2, 4) == NN_OK, "schedule: %s", nn_last_error());
        for (int c = 0; c < 3; c++) {
            CHECK(vtr_train(chunked, &o, 2, 4, parts + 2 * c) == NN_OK, "chunk %d: %s", c, nn_last_error());
            if (c == 0) CHECK(vtr_model(chunked)->baseline[0] == 0, "steps 1-2 read the expected context: no baseline");
        }
        const OptParams *a = &vtr_model(one)->opt, *b = &vtr_model(chunked)->opt;
        CHECK(a->n == b->n && memcmp(a->params, b->params, sizeof(nn_real) * a->n) == 0, "3 calls of 2 steps = 1 call of 6");
        CHECK(memcmp(losses, parts, sizeof losses) == 0, "the same losses");
        CHECK(vtr_model(one)->baseline[0] != 0, "the last steps sampled cells: the baseline moved");
        CHECK(vis_set_soft_mix(vtr_model(constant), 1) == NN_OK && vtr_train(constant, &o, 6, 4, flat) == NN_OK,
              "share 1: %s", nn_last_error());
        CHECK(memcmp(losses, flat, sizeof(float) * 2) == 0 && memcmp(losses, flat, sizeof losses) != 0,
              "the same as share 1 while it holds, not after");
    }
    vtr_destroy(one);
    vtr_destroy(chunked);
    vtr_destroy(constant);
    vis_data_destroy(d);
}

int main(void) {
    share_one_is_soft(ATTN_SCORE_DOT, 0);
    share_one_is_soft(ATTN_SCORE_ADDITIVE, 1);
    share_zero_is_unchanged();
    share_half_splits_rows();
    errors_and_growth();
    schedule_over_steps();
    return check_summary();
}
