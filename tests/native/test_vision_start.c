/* The image decoder's start state and the uniform-attention ablation:
 *   - with the constant start, two different images give the same s_0 (and
 *     LSTM c_0) and so the same first query: the model cannot tell them apart
 *     before its first glimpse; with the mean start they differ;
 *   - uniform soft attention reads the grid's mean, so a soft model with no
 *     attention tensors (scaled dot) evaluated with uniform attention answers
 *     exactly as the same weights with attention none (average pooling);
 *   - uniform hard attention draws its locations from a stream that restarts
 *     every evaluation, leaves training's stream alone and cannot be
 *     differentiated;
 *   - the file format: mean-start models are written as version 1, constant
 *     ones as version 2, and both load back to the same evaluation. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab/vision.h"
#include "base/bytes.h"
#include "check.h"
#include "fd.h"
#include "models/vision_internal.h" /* the sampling stream */
#include "train/vision_train.h"
#include "vis_asset.h"

#define R 12
#define Q 16
#define B 3
#define H 6

static VisionModel *model(RnnCellKind cell, int attention, VisMode mode, VisStart start) {
    VisConfig c = {R, Q, 2, {3, 4, 0}, cell, H, attention, mode, 2, 0, 0.01, B, 5, start, VIS_SENSOR_GRID, 0, 0, 0};
    VisionModel *m = NULL;
    CHECK(vis_create(&m, &c) == NN_OK, "create: %s", nn_last_error());
    return m;
}

/* Largest |a_i - b_i|. */
static double max_diff(const nn_real *a, const nn_real *b, int n) {
    double d = 0;
    for (int i = 0; i < n; i++) d = fmax(d, fabs((double)a[i] - (double)b[i]));
    return d;
}

static void start_state(void) {
    Rng r = {41};
    nn_real *images = alloc_random(&r, (size_t)B * R * Q, 0, 1);
    const RnnCellKind cells[2] = {RNN_CELL_GRU, RNN_CELL_LSTM};
    for (int k = 0; k < 2; k++)
        for (int start = VIS_START_MEAN; start <= VIS_START_CONSTANT; start++) {
            check_case("start state, cell %d, start %d: rows 0 and 1 (different images)", cells[k], start);
            VisionModel *m = model(cells[k], ATTN_SCORE_GENERAL, VIS_SOFT, (VisStart)start);
            if (!m) continue;
            int32_t pred[B * 2];
            CHECK(vis_forward(m, B, images, NULL, NULL, 0, NULL, pred) == NN_OK, "forward: %s", nn_last_error());
            int gr, gc;
            vis_grid(m, &gr, &gc);
            nn_real s[2][H], c[2][H], w[2][2 * 12];
            CHECK(gr * gc == 12, "a 3 x 4 grid");
            for (int b = 0; b < 2; b++) {
                vis_start_state(m, b, s[b], c[b]);
                vis_attention(m, b, w[b], NULL);
            }
            double ds = max_diff(s[0], s[1], H), dc = max_diff(c[0], c[1], H), dw = max_diff(w[0], w[1], 12);
            if (start == VIS_START_CONSTANT) {
                CHECK(ds == 0 && dc == 0, "s_0 and c_0 are the same for both images (differ by %g, %g)", ds, dc);
                CHECK(max_diff(s[0], m->w.s0, H) == 0, "s_0 is the learned vector");
            } else {
                CHECK(ds > 1e-4, "the mean start differs between images (%g)", ds);
            }
            /* either way the first step's attention reads the images' content */
            CHECK(dw > 1e-6, "step 0's attention differs between the images (%g)", dw);
            vis_destroy(m);
        }
}

static void uniform_soft_is_pooling(void) {
    check_case("uniform soft attention = average pooling with the same weights");
    Rng r = {43};
    nn_real *images = alloc_random(&r, (size_t)B * R * Q, 0, 1);
    int32_t labels[B * 2] = {1, 1, 4, 4, 7, 7}, n[B] = {2, 2, 2};
    VisionModel *soft = model(RNN_CELL_GRU, ATTN_SCORE_SCALED_DOT, VIS_SOFT, VIS_START_CONSTANT);
    VisionModel *none = model(RNN_CELL_GRU, VIS_ATTN_NONE, VIS_SOFT, VIS_START_CONSTANT);
    if (!soft || !none) return;
    /* a few steps, so the weights are not the initial ones */
    NnTrainOptions o = {.optimizer = NN_ADAM, .lr = 0.05f, .clip = 5};
    nn_real loss;
    for (int s = 0; s < 3; s++) {
        vis_zero_grad(soft);
        vis_forward(soft, B, images, labels, n, 1, &loss, NULL);
        vis_backward(soft, NULL);
        vis_update(soft, &o, NULL);
    }
    /* scaled dot has no tensors: the two tables hold the same parameters */
    CHECK(vis_num_params(soft) == vis_num_params(none), "same tables (%zu, %zu)", vis_num_params(soft),
          vis_num_params(none));
    memcpy(vis_params(none), vis_params(soft), sizeof(nn_real) * vis_num_params(soft));
    nn_real l_soft, l_uniform, l_none;
    int32_t p_uniform[B * 2], p_none[B * 2];
    vis_forward(soft, B, images, labels, n, 0, &l_soft, NULL);
    vis_set_uniform(soft, 1);
    CHECK(vis_forward(soft, B, images, labels, n, 0, &l_uniform, p_uniform) == NN_OK, "uniform: %s", nn_last_error());
    nn_real w[2 * 12]; /* a 3 x 4 grid */
    vis_attention(soft, 1, w, NULL);
    CHECK(vis_backward(soft, NULL) == NN_ERR_ARG, "a uniform forward has no backward: %s", nn_last_error());
    vis_set_uniform(soft, 0);
    CHECK(vis_forward(none, B, images, labels, n, 0, &l_none, p_none) == NN_OK, "none: %s", nn_last_error());
    CHECK(l_uniform == l_none && memcmp(p_uniform, p_none, sizeof p_none) == 0, "uniform loss %.9g = pooling's %.9g",
          (double)l_uniform, (double)l_none);
    CHECK(l_soft != l_uniform, "the model's own attention gives another loss (%.9g)", (double)l_soft);
    double dev = 0;
    for (int g = 0; g < 2 * 12; g++) dev = fmax(dev, fabs(w[g] - 1.0 / 12));
    CHECK(dev < 1e-7, "every weight is 1/G (off by %g)", dev);
    vis_destroy(soft);
    vis_destroy(none);
}

static void uniform_hard_locations(void) {
    check_case("uniform hard attention: its own stream, the same every time");
    Rng r = {47};
    nn_real *images = alloc_random(&r, (size_t)B * R * Q, 0, 1);
    VisionModel *m = model(RNN_CELL_GRU, ATTN_SCORE_GENERAL, VIS_HARD, VIS_START_CONSTANT);
    if (!m) return;
    uint64_t rng = m->rng;
    int32_t loc[2][2 * B], greedy[2 * B];
    for (int k = 0; k < 2; k++) {
        vis_set_uniform(m, 1);
        CHECK(vis_forward(m, B, images, NULL, NULL, 0, NULL, NULL) == NN_OK, "forward: %s", nn_last_error());
        for (int b = 0; b < B; b++) vis_attention(m, b, NULL, loc[k] + 2 * b);
    }
    vis_set_uniform(m, 0);
    vis_forward(m, B, images, NULL, NULL, 0, NULL, NULL);
    for (int b = 0; b < B; b++) vis_attention(m, b, NULL, greedy + 2 * b);
    CHECK(memcmp(loc[0], loc[1], sizeof loc[0]) == 0, "restarted: the same locations");
    CHECK(memcmp(loc[0], greedy, sizeof greedy) != 0, "not the argmax locations");
    int distinct = 0;
    for (int i = 1; i < 2 * B; i++) distinct |= loc[0][i] != loc[0][0];
    CHECK(distinct, "the draws spread over the grid");
    CHECK(m->rng == rng, "the training stream did not move");
    vis_destroy(m);
}

static void files_and_evaluate(void) {
    Rng r = {53};
    size_t size;
    uint8_t *asset = make_vis_asset(&r, 200, &size);
    VisData *d;
    vis_data_create(&d, asset, size);
    ImgTaskConfig tc = {IMG_CLUTTERED, 2, 0, 0, 32};
    for (int start = VIS_START_MEAN; start <= VIS_START_CONSTANT; start++) {
        check_case("file version and uniform evaluation, start %d", start);
        VisConfig mc = {0, 0, 2, {3, 4, 0}, RNN_CELL_GRU, 8, ATTN_SCORE_SCALED_DOT, VIS_HARD, 2, 0, 0.01, 8, 3, (VisStart)start, VIS_SENSOR_GRID, 0, 0, 0};
        VisionTrainer *t, *u;
        if (!CHECK(vtr_create(&t, d, &tc, &mc) == NN_OK, "create: %s", nn_last_error())) continue;
        size_t n = vtr_save_size(t);
        uint8_t *bytes = check_track(malloc(n));
        vtr_save(t, bytes, n);
        const uint8_t *at = bytes + 8;
        uint32_t version = nn_get_u32(&at);
        CHECK(version == (start == VIS_START_MEAN ? 1u : 2u), "written as version %u", version);
        CHECK(vtr_load(&u, d, bytes, n) == NN_OK, "load: %s", nn_last_error());
        CHECK(vis_config(vtr_model(u))->start == (VisStart)start, "loads with its start");
        VisEval a, b, c;
        CHECK(vtr_evaluate(t, VIS_SPLIT_TEST, 20, 1, &a) == NN_OK, "uniform: %s", nn_last_error());
        vtr_evaluate(t, VIS_SPLIT_TEST, 20, 1, &b);
        vtr_evaluate(u, VIS_SPLIT_TEST, 20, 1, &c);
        CHECK(a.loss == b.loss && a.accuracy == b.accuracy, "the same every call");
        CHECK(fabs(a.loss - c.loss) <= 1e-5 * fabs(a.loss) && a.accuracy == c.accuracy, "and after a load (%.9g, %.9g)", a.loss,
              c.loss);
        CHECK(vtr_evaluate(t, VIS_SPLIT_TEST, 20, 2, &a) == NN_ERR_ARG && strstr(nn_last_error(), "attention"), "flag 2: %s",
              nn_last_error());
        vtr_destroy(t);
        vtr_destroy(u);
    }
    check_case("start: unknown value");
    VisConfig bad = {R, Q, 1, {3, 0, 0}, RNN_CELL_GRU, H, ATTN_SCORE_DOT, VIS_SOFT, 1, 0, 0, 1, 1, (VisStart)2, VIS_SENSOR_GRID, 0, 0, 0};
    VisionModel *m;
    CHECK(vis_create(&m, &bad) == NN_ERR_ARG && strstr(nn_last_error(), "start"), "start 2: %s", nn_last_error());
    vis_data_destroy(d);
}

int main(void) {
    start_state();
    uniform_soft_is_pooling();
    uniform_hard_locations();
    files_and_evaluate();
    return check_summary();
}
