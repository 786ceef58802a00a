/* Attention over images: conv kernels against a plain reference; finite-
 * difference gradient checks (double build) for conv 3x3, ReLU + max-pool,
 * 1x1 conv, and the whole model (spatial attention, decoder, every score and
 * cell, down to the pixels); REINFORCE's average gradient against the exact
 * one on an enumerable case; a batch split into shards (the threaded build's
 * data parallelism) against the whole batch; tasks, splits, placement,
 * save / load, errors. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab/vision.h"
#include "check.h"
#include "core/conv.h"
#include "fd.h"
#include "models/vision_internal.h" /* vis_set_shards, the baseline */
#include "train/vision_train.h"   /* VTR_MAX_STEPS */
#include "vis_asset.h"

/* ---- op level ------------------------------------------------------------------ */

/* Shapes that take each path of im2col: the first layer's single channel, a
 * two-column map (every column a border), a one-row map, wider channels. */
static void conv_forward_matches_reference(void) {
    static const int shapes[][4] = {{7, 9, 3, 5}, {6, 8, 1, 8}, {5, 2, 2, 3}, {1, 6, 4, 16}, {4, 4, 16, 4}};
    Rng r = {11};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        const int H = shapes[s][0], W = shapes[s][1], C = shapes[s][2], Co = shapes[s][3];
        check_case("conv 3x3 forward vs reference, %d x %d x %d -> %d", H, W, C, Co);
        size_t mark = alloc_mark();
        nn_real *x = alloc_random(&r, (size_t)H * W * C, -1, 1), *w = alloc_random(&r, (size_t)9 * C * Co, -1, 1),
                *b = alloc_random(&r, Co, -1, 1), *y = alloc_reals((size_t)H * W * Co),
                *ref = alloc_reals((size_t)H * W * Co), *col = alloc_reals((size_t)conv_col_size(H, W, C));
        conv_3x3_forward(y, x, w, b, H, W, C, Co, col);
        conv_3x3_forward_ref(ref, x, w, b, H, W, C, Co);
        CHECK_ARRAY_R(y, ref, (size_t)H * W * Co, Co, TOL_FWD_ATOL, TOL_FWD_RTOL, "y");
        alloc_release(mark);
    }
}

/* The model tests' canvas, and the cells' names. */
#define GR 8
#define GQ 12
static const char *const CELLS[] = {"rnn", "gru", "lstm"};

#ifdef NN_DOUBLE
/* L = sum r . f(x): the worst relative gap between g and the central
 * differences of every input (fd.h). */
static double finite_worst(FdLoss loss, void *ctx, nn_real *x, const nn_real *g, size_t n) {
    return fd_worst(loss, ctx, x, g, n);
}

typedef struct {
    int H, W, C, Co;
    nn_real *x, *w, *b, *y, *r, *col;
    int32_t *idx;
} OpCase;

static double dot_r(const nn_real *y, const nn_real *r, size_t n) {
    double s = 0;
    for (size_t i = 0; i < n; i++) s += (double)y[i] * r[i];
    return s;
}

static double conv_loss(void *p) {
    OpCase *c = p;
    conv_3x3_forward(c->y, c->x, c->w, c->b, c->H, c->W, c->C, c->Co, c->col);
    return dot_r(c->y, c->r, (size_t)c->H * c->W * c->Co);
}

static double pool_loss(void *p) { /* L = r . pool(relu(x)) */
    OpCase *c = p;
    size_t n = (size_t)c->H * c->W * c->C;
    conv_relu_forward(c->col, c->x, (long)n);
    conv_pool_forward(c->y, c->idx, c->col, c->H, c->W, c->C);
    return dot_r(c->y, c->r, (size_t)(c->H / 2) * (c->W / 2) * c->C);
}

static double proj_loss(void *p) {
    OpCase *c = p;
    conv_1x1_forward(c->y, c->x, c->w, c->b, c->H * c->W, c->C, c->Co);
    return dot_r(c->y, c->r, (size_t)c->H * c->W * c->Co);
}

/* An op case of H x W x C -> Co: random x, w, b and loss weights r. */
static OpCase op_case(Rng *r, int H, int W, int C, int Co) {
    OpCase c = {H, W, C, Co, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    size_t nx = (size_t)H * W * C, ny = (size_t)H * W * Co;
    c.x = alloc_random(r, nx, -1, 1);
    c.w = alloc_random(r, (size_t)9 * C * Co, -1, 1);
    c.b = alloc_random(r, Co, -1, 1);
    c.y = alloc_reals(ny);
    c.r = alloc_random(r, ny, -1, 1);
    c.col = alloc_reals((size_t)conv_col_size(H, W, C));
    c.idx = alloc_ints(nx);
    return c;
}

/* conv 3x3: dx, dw, db of L = r . conv(x) against finite differences. */
static void conv_gradcheck(OpCase *c) {
    size_t nx = (size_t)c->H * c->W * c->C, nw = (size_t)9 * c->C * c->Co;
    nn_real *dx = alloc_zeros(nx), *dw = alloc_zeros(nw), *db = alloc_zeros(c->Co);
    check_case("gradcheck conv 3x3, %d x %d x %d -> %d", c->H, c->W, c->C, c->Co);
    conv_3x3_backward(dx, dw, db, c->r, c->x, c->w, c->H, c->W, c->C, c->Co, c->col);
    CHECK(finite_worst(conv_loss, c, c->x, dx, nx) < 1e-6, "dx");
    CHECK(finite_worst(conv_loss, c, c->w, dw, nw) < 1e-6, "dw");
    CHECK(finite_worst(conv_loss, c, c->b, db, c->Co) < 1e-6, "db");
}

static void op_gradchecks(void) {
    Rng r = {23};
    OpCase c = op_case(&r, 5, 7, 2, 3);
    size_t nx = (size_t)c.H * c.W * c.C, nw = (size_t)9 * c.C * c.Co;
    nn_real *dx = alloc_zeros(nx), *dw = alloc_zeros(nw), *db = alloc_zeros(c.Co);
    conv_gradcheck(&c);

    check_case("gradcheck ReLU + max-pool 2x2 (odd sizes)");
    memset(dx, 0, sizeof(nn_real) * nx);
    pool_loss(&c);
    nn_real *drelu = alloc_zeros(nx);
    conv_pool_backward(drelu, c.r, c.idx, c.H, c.W, c.C);
    conv_relu_backward(dx, drelu, c.col, (long)nx);
    CHECK(finite_worst(pool_loss, &c, c.x, dx, nx) < 1e-6, "dx");

    check_case("gradcheck 1x1 conv");
    memset(dx, 0, sizeof(nn_real) * nx);
    memset(dw, 0, sizeof(nn_real) * nw);
    memset(db, 0, sizeof(nn_real) * c.Co);
    conv_1x1_backward(dx, dw, db, c.r, c.x, c.w, c.H * c.W, c.C, c.Co);
    CHECK(finite_worst(proj_loss, &c, c.x, dx, nx) < 1e-6, "dx");
    CHECK(finite_worst(proj_loss, &c, c.w, dw, (size_t)c.C * c.Co) < 1e-6, "dw");
    CHECK(finite_worst(proj_loss, &c, c.b, db, c.Co) < 1e-6, "db");
}

/* conv 3x3 again on the first layer's single channel and on a two-column map,
 * where im2col and col2im take their border paths only. */
static void conv_gradcheck_shapes(void) {
    static const int shapes[][4] = {{4, 5, 1, 3}, {3, 2, 2, 2}};
    Rng r = {29};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        size_t mark = alloc_mark();
        OpCase c = op_case(&r, shapes[s][0], shapes[s][1], shapes[s][2], shapes[s][3]);
        conv_gradcheck(&c);
        alloc_release(mark);
    }
}

/* ---- model level: every parameter and every pixel ------------------------------- */

#define GB 2

typedef struct {
    VisionModel *m;
    nn_real *images;
    int32_t labels[GB * 4], n[GB];
} ModelCase;

static double model_loss(void *p) {
    ModelCase *c = p;
    nn_real loss;
    vis_forward(c->m, GB, c->images, c->labels, c->n, 0, &loss, NULL);
    return loss;
}

static void model_gradcheck(RnnCellKind cell, int attention, VisMode mode, int steps, int sequence, VisStart start) {
    check_case("gradcheck model cell=%s attention=%d mode=%d steps=%d sequence=%d start=%d", CELLS[cell], attention, mode,
               steps, sequence, start);
    VisConfig mc = {GR, GQ, 2, {3, 4, 0}, cell, 5, attention, mode, steps, sequence, 0.05, GB, 7, start, VIS_SENSOR_GRID, 0, 0, 0};
    ModelCase c;
    if (!CHECK(vis_create(&c.m, &mc) == NN_OK, "create: %s", nn_last_error())) return;
    Rng r = {101 + (uint64_t)attention * 7 + cell};
    c.images = alloc_random(&r, (size_t)GB * GR * GQ, 0, 1);
    for (int b = 0; b < GB; b++) {
        c.n[b] = sequence ? steps - b : steps;
        for (int t = 0; t < steps; t++) c.labels[b * steps + t] = rng_int(&r, 0, VIS_TOKENS - 1);
    }
    size_t P = vis_num_params(c.m), N = (size_t)GB * GR * GQ;
    nn_real *p = vis_params(c.m);
    for (size_t i = 0; i < P; i++) p[i] += 0.1 * rng_uniform(&r, -1, 1); /* biases off zero */
    nn_real loss, *dimages = alloc_zeros(N), *g = alloc_reals(P);
    vis_zero_grad(c.m);
    CHECK(vis_forward(c.m, GB, c.images, c.labels, c.n, 0, &loss, NULL) == NN_OK, "forward: %s", nn_last_error());
    CHECK(vis_backward(c.m, dimages) == NN_OK, "backward: %s", nn_last_error());
    memcpy(g, vis_grads(c.m), sizeof(nn_real) * P);
    double wp = finite_worst(model_loss, &c, p, g, P), wx = finite_worst(model_loss, &c, c.images, dimages, N);
    CHECK(wp < 1e-5, "parameters (%zu): worst relative error %.3g", P, wp);
    CHECK(wx < 1e-5, "pixels (%zu): worst relative error %.3g", N, wx);
    vis_destroy(c.m);
}

/* REINFORCE on an enumerable case: 6 locations scored by q^T W k, fixed
 * rewards R_l. J(W) = E_{l ~ a}[R_l] + lambda H(a); the estimator averages
 * d/dW [-(R_l - b) log a_l - lambda H(a)] over sampled l: its mean must match
 * -dJ/dW (exact: enumerated, differentiated by central differences) within
 * 4 standard errors, entry by entry. */
static double expected_reward(const AttnConfig *ac, const AttnParams *ap, const nn_real *q, const nn_real *k,
                              const double *R, double lambda, nn_real *sc, nn_real *w, nn_real *ctx, nn_real *scratch) {
    attn_forward(ac, ap, sc, w, ctx, q, k, k, scratch);
    double J = 0;
    for (int j = 0; j < ac->n_k; j++) J += w[j] * R[j] - (w[j] > 0 ? lambda * w[j] * log(w[j]) : 0);
    return J;
}

static void reinforce_matches_exact(void) {
    check_case("REINFORCE average gradient vs exact (enumerated) gradient");
    enum { G = 6, D = 3, SAMPLES = 20000 };
    Rng r = {5};
    AttnConfig ac = {1, G, D, D, D, 0, ATTN_SCORE_GENERAL, ATTN_NORM_SOFTMAX, 1, 0, NULL, 0};
    nn_real *q = alloc_random(&r, D, -1, 1), *k = alloc_random(&r, (size_t)G * D, -1, 1),
            *W = alloc_random(&r, (size_t)D * D, -1, 1), *sc = alloc_reals(G), *w = alloc_reals(G), *ctx = alloc_reals(D),
            *scratch = alloc_reals(attn_scratch_size(&ac)), *zeros = alloc_zeros(D), *dw = alloc_zeros(G),
            *gW = alloc_zeros((size_t)D * D);
    const double R[G] = {1, 0, 0.5, 0.2, 0.9, 0}, lambda = 0.05, baseline = 0.4;
    AttnParams ap = {W, NULL, NULL, NULL, 1};
    double exact[D * D], mean[D * D] = {0}, sq[D * D] = {0};
    for (int i = 0; i < D * D; i++) {
        nn_real keep = W[i];
        W[i] = keep + 1e-6;
        double jp = expected_reward(&ac, &ap, q, k, R, lambda, sc, w, ctx, scratch);
        W[i] = keep - 1e-6;
        double jm = expected_reward(&ac, &ap, q, k, R, lambda, sc, w, ctx, scratch);
        W[i] = keep;
        exact[i] = -(jp - jm) / 2e-6; /* the loss is -J */
    }
    expected_reward(&ac, &ap, q, k, R, lambda, sc, w, ctx, scratch);
    for (int s = 0; s < SAMPLES; s++) {
        double u = rng_uniform(&r, 0, 1), cum = 0;
        int l = G - 1;
        for (int j = 0; j < G; j++)
            if (u < (cum += w[j])) {
                l = j;
                break;
            }
        memset(dw, 0, sizeof(nn_real) * G);
        memset(gW, 0, sizeof(nn_real) * D * D);
        vis_reinforce_dweights(dw, w, G, l, (nn_real)(R[l] - baseline), (nn_real)lambda, 1);
        AttnParamGrads g = {gW, NULL, NULL, NULL, 0};
        attn_backward(&ac, &ap, &g, NULL, NULL, NULL, zeros, dw, sc, w, q, k, k, scratch);
        for (int i = 0; i < D * D; i++) {
            mean[i] += gW[i];
            sq[i] += (double)gW[i] * gW[i];
        }
    }
    int inside = 0;
    double worst = 0;
    for (int i = 0; i < D * D; i++) {
        double m = mean[i] / SAMPLES, var = sq[i] / SAMPLES - m * m, se = sqrt(var / SAMPLES);
        double z = fabs(m - exact[i]) / (se > 0 ? se : 1e-12);
        inside += z < 4;
        if (z > worst) worst = z;
    }
    CHECK(inside == D * D, "%d of %d entries within 4 standard errors (worst %.2f)", inside, D * D, worst);
    /* and not trivially: the exact gradient is not zero */
    double norm = 0;
    for (int i = 0; i < D * D; i++) norm += exact[i] * exact[i];
    CHECK(sqrt(norm) > 1e-2, "exact gradient norm %g", sqrt(norm));
}
#endif

/* ---- data-parallel shards ----------------------------------------------------- */

#define SB 7 /* rows of the sharded batches */

/* A batch split into 2, 3 or one-row shards (as the threaded build runs it,
 * here one shard after another) gives the whole batch's loss, gradients,
 * pixel gradients, answers, attention and hard mode's draws and baseline
 * within rounding; the same shard count trains the same weights bit for bit. */
static void shards_match(RnnCellKind cell, int attention, VisMode mode, int steps, int sequence, VisStart start) {
    check_case("shards cell=%s attention=%d mode=%d steps=%d sequence=%d start=%d", CELLS[cell], attention, mode, steps,
               sequence, start);
    VisConfig mc = {GR, GQ, 2, {3, 4, 0}, cell, 5, attention, mode, steps, sequence, 0.05, SB, 7, start, VIS_SENSOR_GRID, 0, 0, 0};
    Rng r = {303 + (uint64_t)attention * 5 + cell};
    size_t N = (size_t)SB * GR * GQ;
    nn_real *images = alloc_random(&r, N, 0, 1);
    int32_t labels[SB * VIS_MAX_STEPS], n[SB];
    for (int b = 0; b < SB; b++) {
        n[b] = sequence ? 1 + b % steps : steps;
        for (int t = 0; t < steps; t++) labels[b * steps + t] = rng_int(&r, 0, VIS_TOKENS - 1);
    }
    int train = mode == VIS_HARD; /* hard mode draws its locations when training */
    VisionModel *one;
    if (!CHECK(vis_create(&one, &mc) == NN_OK, "create: %s", nn_last_error())) return;
    size_t P = vis_num_params(one), G = (size_t)one->G;
    nn_real l1, ln, *d1 = alloc_zeros(N), *dn = alloc_zeros(N), w1[VIS_MAX_STEPS * 64], wn[VIS_MAX_STEPS * 64];
    int32_t p1[SB * VIS_MAX_STEPS], pn[SB * VIS_MAX_STEPS], loc1[VIS_MAX_STEPS], locn[VIS_MAX_STEPS];
    vis_zero_grad(one);
    CHECK(vis_forward(one, SB, images, labels, n, train, &l1, p1) == NN_OK, "forward: %s", nn_last_error());
    vis_attention(one, SB - 1, w1, loc1);
    CHECK(vis_backward(one, d1) == NN_OK, "backward: %s", nn_last_error());
    double gmax = 0, dmax = 0;
    for (size_t i = 0; i < P; i++) gmax = fmax(gmax, fabs(vis_grads(one)[i]));
    for (size_t i = 0; i < N; i++) dmax = fmax(dmax, fabs(d1[i]));
    const int counts[] = {2, 3, SB};
    for (int k = 0; k < 3; k++) {
        VisionModel *many;
        if (!CHECK(vis_create(&many, &mc) == NN_OK && vis_set_shards(many, counts[k]) == NN_OK, "%d shards: %s", counts[k],
                   nn_last_error()))
            continue;
        memset(dn, 0, sizeof(nn_real) * N);
        vis_zero_grad(many);
        CHECK(vis_forward(many, SB, images, labels, n, train, &ln, pn) == NN_OK, "forward: %s", nn_last_error());
        vis_attention(many, SB - 1, wn, locn);
        CHECK(vis_backward(many, dn) == NN_OK, "backward: %s", nn_last_error());
        CHECK_CLOSE(ln, l1, 0, 8 * TOL_EPS, "loss");
        /* sums over rows in another order: a few ulps of the largest gradient */
        CHECK_ARRAY_R(vis_grads(many), vis_grads(one), P, P, 64 * TOL_EPS * gmax, 0, "gradients");
        CHECK_ARRAY_R(dn, d1, N, N, 64 * TOL_EPS * dmax, 0, "pixel gradients");
        CHECK(memcmp(pn, p1, sizeof(int32_t) * SB * steps) == 0, "%d shards: the same answers", counts[k]);
        CHECK_ARRAY_R(wn, w1, (size_t)steps * G, G, 1e-6, 1e-5, "attention of the last row");
        CHECK(memcmp(locn, loc1, sizeof(int32_t) * steps) == 0, "%d shards: the same locations", counts[k]);
        CHECK(memcmp(many->baseline, one->baseline, sizeof one->baseline) == 0, "%d shards: the same baseline", counts[k]);
        vis_destroy(many);
    }
    /* three training steps twice on 3 shards: the same weights bit for bit */
    VisionModel *a, *b;
    if (CHECK(vis_create(&a, &mc) == NN_OK && vis_create(&b, &mc) == NN_OK, "create: %s", nn_last_error())) {
        CHECK(vis_set_shards(a, 3) == NN_OK && vis_set_shards(b, 3) == NN_OK, "3 shards: %s", nn_last_error());
        NnTrainOptions o = {.optimizer = NN_ADAM, .lr = 0.01f, .clip = 5};
        for (int s = 0; s < 3; s++)
            for (int i = 0; i < 2; i++) {
                VisionModel *m = i ? b : a;
                vis_zero_grad(m);
                CHECK(vis_forward(m, SB, images, labels, n, 1, &ln, NULL) == NN_OK && vis_backward(m, NULL) == NN_OK &&
                          vis_update(m, &o, NULL) == NN_OK,
                      "step %d: %s", s, nn_last_error());
            }
        CHECK(memcmp(vis_params(a), vis_params(b), sizeof(nn_real) * P) == 0, "3 shards twice: the same weights");
        /* fewer rows than shards */
        CHECK(vis_forward(a, 2, images, labels, n, 1, &ln, NULL) == NN_OK && vis_backward(a, NULL) == NN_OK,
              "2 rows on 3 shards: %s", nn_last_error());
        vis_destroy(a);
        vis_destroy(b);
    }
    vis_destroy(one);
}

/* ---- tasks, splits, placement ---------------------------------------------------- */

static void tasks_and_splits(void) {
    Rng r = {3};
    size_t size;
    uint8_t *asset = make_vis_asset(&r, 200, &size);
    VisData *d;
    check_case("digit set");
    if (!CHECK(vis_data_create(&d, asset, size) == NN_OK, "create: %s", nn_last_error())) return;
    CHECK(vis_data_count(d, VIS_SPLIT_TRAIN) == 160 && vis_data_count(d, VIS_SPLIT_TEST) == 40, "80/20 split");
    /* disjoint: no test digit's pixels equal any train digit's */
    int shared = 0, classes[10] = {0};
    for (int i = 0; i < 40; i++) {
        const uint8_t *a, *b;
        classes[vis_data_digit(d, VIS_SPLIT_TEST, i, &a)]++;
        for (int j = 0; j < 160; j++) {
            vis_data_digit(d, VIS_SPLIT_TRAIN, j, &b);
            shared += memcmp(a, b, 784) == 0;
        }
    }
    CHECK(shared == 0, "%d digits in both splits", shared);
    for (int c = 0; c < 10; c++) CHECK(classes[c] == 4, "class %d has %d test digits (balanced: 4)", c, classes[c]);
    VisData *bad;
    asset[3] = 'X';
    CHECK(vis_data_create(&bad, asset, size) == NN_ERR_VALUE && bad == NULL, "bad magic: %s", nn_last_error());
    asset[3] = 'L';
    CHECK(vis_data_create(&bad, asset, size - 1) == NN_ERR_SHAPE, "truncated: %s", nn_last_error());

    /* the last two: a cluttered canvas of 100 x 100, and one without clutter (where every inked pixel is the digit's) */
    ImgTaskConfig tasks[5] = {{IMG_CENTERED, 4, 2, 3, 0}, {IMG_CLUTTERED, 4, 2, 3, 0}, {IMG_MULTI, 4, 2, 3, 0},
                              {IMG_CLUTTERED, 8, 2, 3, 100}, {IMG_CLUTTERED, 0, 2, 3, 0}};
    CHECK(img_rows(&tasks[1]) == 60 && img_cols(&tasks[1]) == 60 && img_rows(&tasks[3]) == 100 && img_cols(&tasks[3]) == 100,
          "cluttered canvases: 60 by default, `size` when given");
    for (int k = 0; k < 5; k++) {
        check_case("task %d", k);
        int R = img_rows(&tasks[k]), Q = img_cols(&tasks[k]);
        nn_real *img = alloc_reals((size_t)R * Q), *img2 = alloc_reals((size_t)R * Q);
        int32_t y[4] = {0}, y2[4] = {0}, n, n2, lengths[5] = {0};
        uint64_t s1 = 9, s2 = 9;
        for (int i = 0; i < 50; i++) {
            VisBox boxes[4];
            CHECK(img_sample(d, &tasks[k], VIS_SPLIT_TEST, &s1, img, y, &n, boxes) == NN_OK, "sample: %s", nn_last_error());
            img_sample(d, &tasks[k], VIS_SPLIT_TEST, &s2, img2, y2, &n2, NULL);
            /* each digit's box: inside the canvas, at most a digit's size, ink on every edge of it */
            int digits = tasks[k].kind == IMG_MULTI ? n - 1 : 1;
            for (int t = 0; t < digits; t++) {
                VisBox b = boxes[t];
                CHECK(b.top >= 0 && b.left >= 0 && b.height >= 1 && b.width >= 1 && b.top + b.height <= R && b.left + b.width <= Q &&
                          b.height <= VIS_DIGIT_SIDE && b.width <= VIS_DIGIT_SIDE,
                      "box %d: %d,%d %dx%d on %dx%d", t, b.top, b.left, b.height, b.width, R, Q);
                double edges[4] = {0};
                for (int j = 0; j < b.width; j++) {
                    edges[0] += img[(size_t)b.top * Q + b.left + j];
                    edges[1] += img[(size_t)(b.top + b.height - 1) * Q + b.left + j];
                }
                for (int r = 0; r < b.height; r++) {
                    edges[2] += img[(size_t)(b.top + r) * Q + b.left];
                    edges[3] += img[(size_t)(b.top + r) * Q + b.left + b.width - 1];
                }
                CHECK(edges[0] > 0 && edges[1] > 0 && edges[2] > 0 && edges[3] > 0, "ink on each edge of box %d", t);
                if (t > 0) CHECK(boxes[t - 1].left + boxes[t - 1].width <= b.left, "multi: boxes left to right, apart");
            }
            if (tasks[k].clutter == 0 || tasks[k].kind != IMG_CLUTTERED) {
                /* no clutter: no ink outside the boxes */
                double outside = 0;
                for (int r = 0; r < R; r++)
                    for (int c = 0; c < Q; c++) {
                        int in = 0;
                        for (int t = 0; t < digits; t++)
                            in |= r >= boxes[t].top && r < boxes[t].top + boxes[t].height && c >= boxes[t].left &&
                                  c < boxes[t].left + boxes[t].width;
                        if (!in) outside += img[(size_t)r * Q + c];
                    }
                CHECK(outside == 0, "ink outside the digits' boxes: %g", outside);
            }
            CHECK(memcmp(img, img2, sizeof(nn_real) * R * Q) == 0 && memcmp(y, y2, sizeof y) == 0, "same seed, same example");
            double lo = 1, hi = 0;
            for (int p = 0; p < R * Q; p++) {
                if (img[p] < lo) lo = img[p];
                if (img[p] > hi) hi = img[p];
            }
            CHECK(lo >= 0 && hi <= 1 && hi > 0, "greys in [0, 1] with ink (%g..%g)", lo, hi);
            lengths[n]++;
            for (int t = 0; t < n; t++)
                CHECK(tasks[k].kind == IMG_MULTI && t == n - 1 ? y[t] == VIS_END : y[t] >= 0 && y[t] <= 9, "label %d", y[t]);
        }
        if (tasks[k].kind == IMG_MULTI) CHECK(lengths[3] > 0 && lengths[4] > 0, "2 and 3 digits both occur");
        else CHECK(lengths[1] == 50, "one label each");
    }
    ImgTaskConfig bad_task = {IMG_MULTI, 4, 3, 5, 0};
    CHECK(img_task_check(&bad_task) == NN_ERR_LIMIT, "5 digits: %s", nn_last_error());
    bad_task = (ImgTaskConfig){IMG_CLUTTERED, 99, 2, 3, 0};
    CHECK(img_task_check(&bad_task) == NN_ERR_LIMIT, "99 clutter pieces");
    bad_task = (ImgTaskConfig){IMG_CLUTTERED, 4, 2, 3, 101};
    CHECK(img_task_check(&bad_task) == NN_ERR_LIMIT && strstr(nn_last_error(), "size: 101; it must be within 28..100"),
          "101: %s", nn_last_error());
    bad_task = (ImgTaskConfig){IMG_CLUTTERED, 4, 2, 3, 27};
    CHECK(img_task_check(&bad_task) == NN_ERR_SHAPE, "27 is smaller than a digit");
    bad_task = (ImgTaskConfig){IMG_MULTI, 4, 2, 3, 60};
    CHECK(img_task_check(&bad_task) == NN_ERR_ARG && strstr(nn_last_error(), "only the cluttered task"), "multi has no size: %s",
          nn_last_error());

    check_case("img_place");
    nn_real canvas[28 * 28], *small = alloc_zeros(4), *big = alloc_zeros(56 * 56);
    small[0] = small[3] = 1;
    CHECK(img_place(&tasks[0], small, 2, 2, canvas) == NN_OK, "2 x 2");
    CHECK(canvas[13 * 28 + 13] == 1 && canvas[14 * 28 + 14] == 1 && canvas[13 * 28 + 14] == 0, "centred");
    for (int i = 0; i < 56 * 56; i++) big[i] = (nn_real)((i / 56) < 28);
    CHECK(img_place(&tasks[0], big, 56, 56, canvas) == NN_OK, "56 x 56 shrinks");
    CHECK(canvas[0] == 1 && canvas[27 * 28] == 0 && canvas[13 * 28 + 5] == 1 && canvas[14 * 28 + 5] == 0, "halved");
    small[1] = NAN;
    CHECK(img_place(&tasks[0], small, 2, 2, canvas) == NN_ERR_VALUE, "NaN: %s", nn_last_error());
    small[1] = 2;
    CHECK(img_place(&tasks[0], small, 2, 2, canvas) == NN_ERR_VALUE, "grey 2: %s", nn_last_error());
    CHECK(img_place(&tasks[0], big, 129, 1, canvas) == NN_ERR_LIMIT, "129 rows: %s", nn_last_error());
    CHECK(img_place(&tasks[0], big, 0, 5, canvas) == NN_ERR_SHAPE, "0 rows");
    vis_data_destroy(d);
}

/* ---- training, save / load, errors ------------------------------------------------- */

static void train_save_load(void) {
    Rng r = {31};
    size_t size;
    uint8_t *asset = make_vis_asset(&r, 300, &size);
    VisData *d;
    vis_data_create(&d, asset, size);
    const VisMode modes[2] = {VIS_SOFT, VIS_HARD};
    for (int k = 0; k < 2; k++) {
        check_case("train, save, load (multi, mode %d)", modes[k]);
        ImgTaskConfig tc = {IMG_MULTI, 4, 2, 3, 0};
        /* hard mode with the constant start: a format-2 file */
        VisConfig mc = {0, 0, 2, {4, 8, 0}, RNN_CELL_LSTM, 16, ATTN_SCORE_ADDITIVE, modes[k], 4, 0, 0.01, 8, 3,
                        modes[k] == VIS_HARD ? VIS_START_CONSTANT : VIS_START_MEAN, VIS_SENSOR_GRID, 0, 0, 0};
        VisionTrainer *t, *u;
        if (!CHECK(vtr_create(&t, d, &tc, &mc) == NN_OK, "create: %s", nn_last_error())) continue;
        NnTrainOptions o = {.optimizer = NN_ADAM, .lr = 0.003f, .clip = 5};
        float losses[3];
        CHECK(vtr_train(t, &o, 3, 8, losses) == NN_OK, "train: %s", nn_last_error());
        CHECK(isfinite(losses[0]) && isfinite(losses[2]), "finite losses");
        size_t n = vtr_save_size(t);
        uint8_t *bytes = check_track(malloc(n));
        CHECK(vtr_save(t, bytes, n) == NN_OK, "save: %s", nn_last_error());
        CHECK(vtr_load(&u, d, bytes, n) == NN_OK, "load: %s", nn_last_error());
        VisEval a, b;
        vtr_evaluate(t, VIS_SPLIT_TEST, 20, 0, &a);
        vtr_evaluate(u, VIS_SPLIT_TEST, 20, 0, &b);
        /* parameters are saved as float32: exact in the float builds, rounded in the double one */
        CHECK(fabs(a.loss - b.loss) <= 1e-5 * fabs(a.loss) && a.accuracy == b.accuracy, "same evaluation after load (loss %g, %g; accuracy %g, %g)",
              a.loss, b.loss, a.accuracy, b.accuracy);
        /* the training stream and hard mode's samples continue where they were */
        float la[2], lb[2];
        vtr_train(t, &o, 2, 8, la);
        VisionTrainer *v;
        vtr_load(&v, d, bytes, n);
        /* u trained nothing yet, v neither: u and v continue alike; t had moments */
        vtr_train(v, &o, 2, 8, lb);
        float lc[2];
        vtr_train(u, &o, 2, 8, lc);
        CHECK(lb[0] == lc[0] && lb[1] == lc[1], "two loads train alike");
        CHECK(la[0] == lb[0], "the first resumed step's loss equals the original's (%g vs %g)", la[0], lb[0]);
        vtr_destroy(v);
        CHECK(vtr_load(&v, d, bytes, n - 3) == NN_ERR_VALUE, "truncated: %s", nn_last_error());
        bytes[n / 2] ^= 1;
        CHECK(vtr_load(&v, d, bytes, n) == NN_ERR_VALUE && strstr(nn_last_error(), "checksum"), "damaged: %s", nn_last_error());
        bytes[0] = 'X';
        CHECK(vtr_load(&v, d, bytes, n) == NN_ERR_VALUE && strstr(nn_last_error(), "not an attnlab"), "foreign");
        /* predict and saliency on a drawn image */
        nn_real drawn[20 * 30], weights[4 * 250], sal[40 * 100];
        for (int i = 0; i < 600; i++) drawn[i] = (nn_real)(i % 7 == 0);
        int32_t tokens[4], locs[4];
        CHECK(vtr_predict(t, drawn, 20, 30, tokens, weights, locs) == NN_OK, "predict: %s", nn_last_error());
        double sum = 0;
        for (int g = 0; g < 250; g++) sum += weights[g];
        CHECK(fabs(sum - 1) < 1e-4, "weights of step 0 sum to %g", sum);
        CHECK(modes[k] == VIS_HARD ? locs[0] >= 0 && locs[0] < 250 : locs[0] == -1, "location %d", locs[0]);
        CHECK(vtr_saliency(t, drawn, 20, 30, 1, sal) == NN_OK, "saliency: %s", nn_last_error());
        double mass = 0;
        for (int i = 0; i < 4000; i++) mass += fabs(sal[i]);
        CHECK(mass > 0 && isfinite(mass), "saliency has mass %g", mass);
        CHECK(vtr_saliency(t, drawn, 20, 30, 4, sal) == NN_ERR_VALUE, "step 4: %s", nn_last_error());
        vtr_destroy(t);
        vtr_destroy(u);
    }
    check_case("errors");
    ImgTaskConfig tc = {IMG_CLUTTERED, 4, 2, 3, 0};
    VisConfig mc = {0, 0, 2, {8, 16, 0}, RNN_CELL_GRU, 32, ATTN_SCORE_DOT, VIS_SOFT, 1, 0, 0.01, 8, 1, VIS_START_MEAN, VIS_SENSOR_GRID, 0, 0, 0};
    VisionTrainer *t;
    mc.hidden = 0;
    CHECK(vtr_create(&t, d, &tc, &mc) == NN_ERR_SHAPE && t == NULL && strstr(nn_last_error(), "hidden"), "hidden 0: %s",
          nn_last_error());
    mc.hidden = 32;
    mc.layers = 7;
    CHECK(vtr_create(&t, d, &tc, &mc) == NN_ERR_LIMIT, "7 layers: %s", nn_last_error());
    mc.layers = 2;
    mc.attention = 42;
    CHECK(vtr_create(&t, d, &tc, &mc) == NN_ERR_ARG, "score 42: %s", nn_last_error());
    mc.attention = ATTN_SCORE_DOT;
    tc.kind = IMG_MULTI;
    CHECK(vtr_create(&t, d, &tc, &mc) == NN_ERR_VALUE && strstr(nn_last_error(), "steps"), "multi in 1 step: %s",
          nn_last_error());
    tc.kind = IMG_CLUTTERED;
    CHECK(vtr_create(&t, NULL, &tc, &mc) == NN_ERR_PARAM, "no digits: %s", nn_last_error());
    CHECK(vtr_create(&t, d, &tc, &mc) == NN_OK, "valid");
    NnTrainOptions o = {.optimizer = NN_ADAM, .lr = 0.003f, .clip = 5};
    CHECK(vtr_train(t, &o, 1, VIS_MAX_BATCH + 1, NULL) == NN_ERR_LIMIT && strstr(nn_last_error(), "batch"),
          "batch past the limit: %s", nn_last_error());
    CHECK(vtr_train(t, &o, 1, 0, NULL) == NN_ERR_SHAPE && strstr(nn_last_error(), "batch"), "batch 0: %s", nn_last_error());
    CHECK(vtr_train(t, &o, 0, 8, NULL) == NN_ERR_SHAPE && strstr(nn_last_error(), "steps"), "0 steps: %s", nn_last_error());
    CHECK(vtr_train(t, &o, VTR_MAX_STEPS + 1, 8, NULL) == NN_ERR_LIMIT && strstr(nn_last_error(), "steps"),
          "steps past the limit: %s", nn_last_error());
    o.lr = NAN;
    CHECK(vtr_train(t, &o, 1, 8, NULL) == NN_ERR_VALUE, "lr NaN: %s", nn_last_error());
    VisEval e;
    CHECK(vtr_evaluate(t, VIS_SPLIT_TEST, 0, 0, &e) == NN_ERR_SHAPE, "count 0: %s", nn_last_error());
    CHECK(vis_backward(vtr_model(t), NULL) == NN_ERR_ARG, "backward without forward: %s", nn_last_error());
    vtr_destroy(t);
    vis_data_destroy(d);
}


/* ---- the training contract: all or nothing; batches past the creation batch --------------- */

static uint8_t *vis_saved(VisionTrainer *t, size_t *n) {
    *n = vtr_save_size(t);
    uint8_t *b = check_track(malloc(*n));
    vtr_save(t, b, *n);
    return b;
}

static void train_rolls_back(void) {
    Rng r = {41};
    size_t size;
    uint8_t *asset = make_vis_asset(&r, 300, &size);
    VisData *d;
    vis_data_create(&d, asset, size);
    static const float LRS[] = {1e10f, 1e20f, 1e30f};
    const NnTrainOptions ok = {.optimizer = NN_ADAM, .lr = 0.003f, .clip = 5};
    for (int i = 0; i < 3; i++)
        for (int mode = VIS_SOFT; mode <= VIS_HARD; mode++)
            for (int steps = 1; steps <= 3; steps += 2) {
                check_case("lr %g, %d steps, mode %d: ERR_VALUE naming the step; weights, optimiser, baselines, "
                           "streams as before", (double)LRS[i], steps, mode);
                /* the smallest cluttered canvas (28 x 28): the rollback is the same at any size, and the
                   default 60 x 60 made these twelve cases most of the native suite's time */
                ImgTaskConfig tc = {IMG_CLUTTERED, 2, 2, 3, VIS_DIGIT_SIDE};
                VisConfig mc = {0, 0, 2, {4, 8, 0}, RNN_CELL_GRU, 16, ATTN_SCORE_DOT, (VisMode)mode, 2, 0, 0.01, 8, 3, VIS_START_MEAN, VIS_SENSOR_GRID, 0, 0, 0};
                VisionTrainer *t = NULL, *twin = NULL;
                if (!CHECK_OK(vtr_create(&t, d, &tc, &mc), "create") || !CHECK_OK(vtr_create(&twin, d, &tc, &mc), "twin"))
                    goto next;
                vtr_train(t, &ok, 2, 8, NULL);
                vtr_train(twin, &ok, 2, 8, NULL);
                size_t n, m;
                uint8_t *before = vis_saved(t, &n);
                nn_real drawn[28 * 28];
                for (int p = 0; p < 28 * 28; p++) drawn[p] = (nn_real)(p % 5 == 0);
                int32_t tok0[2], tok1[2];
                CHECK_OK(vtr_predict(t, drawn, 28, 28, tok0, NULL, NULL), "predict");
                NnTrainOptions huge = {.optimizer = NN_ADAM, .lr = LRS[i], .clip = 5};
                int st = vtr_train(t, &huge, steps, 8, NULL);
                CHECK(st == NN_ERR_VALUE && strstr(nn_last_error(), "diverged at step 3"), "got %d (%s)", st, nn_last_error());
                uint8_t *after = vis_saved(t, &m);
                CHECK(n == m && memcmp(before, after, n) == 0, "the saved model changed");
                CHECK(vtr_predict(t, drawn, 28, 28, tok1, NULL, NULL) == NN_OK && tok0[1] == tok1[1], "prediction %d -> %d (%s)",
                      tok0[1], tok1[1], nn_last_error());
                float a[2], b[2];
                CHECK_OK(vtr_train(t, &ok, 2, 8, a), "train after");
                CHECK_OK(vtr_train(twin, &ok, 2, 8, b), "twin");
                CHECK(memcmp(a, b, sizeof a) == 0, "losses after the failed call differ from a twin's (%g vs %g)", a[1], b[1]);
            next:
                vtr_destroy(t);
                vtr_destroy(twin);
            }
    check_case("a batch larger than at creation (or after loading) grows the model: the losses of one created for it");
    ImgTaskConfig tc = {IMG_CENTERED, 0, 1, 1, 0};
    VisConfig mc = {0, 0, 2, {4, 8, 0}, RNN_CELL_GRU, 16, ATTN_SCORE_DOT, VIS_HARD, 2, 0, 0.01, 8, 9, VIS_START_MEAN, VIS_SENSOR_GRID, 0, 0, 0};
    VisionTrainer *small = NULL, *big = NULL, *loaded = NULL;
    CHECK_OK(vtr_create(&small, d, &tc, &mc), "create");
    mc.batch = 20;
    CHECK_OK(vtr_create(&big, d, &tc, &mc), "create");
    if (small && big) {
        size_t n;
        uint8_t *b = vis_saved(small, &n);
        CHECK_OK(vtr_load(&loaded, d, b, n), "load");
        float x[3], y[3], z[3];
        CHECK(vtr_train(small, &ok, 1, 8, x) == NN_OK && vtr_train(small, &ok, 2, 20, x + 1) == NN_OK, "small: %s",
              nn_last_error());
        CHECK(vtr_train(big, &ok, 1, 8, y) == NN_OK && vtr_train(big, &ok, 2, 20, y + 1) == NN_OK, "big: %s", nn_last_error());
        CHECK(loaded && vtr_train(loaded, &ok, 1, 8, z) == NN_OK && vtr_train(loaded, &ok, 2, 20, z + 1) == NN_OK,
              "loaded: %s", nn_last_error());
        CHECK(memcmp(x, y, sizeof x) == 0 && memcmp(x, z, sizeof x) == 0, "losses differ: %.9g %.9g / %.9g %.9g / %.9g %.9g",
              x[1], x[2], y[1], y[2], z[1], z[2]);
        CHECK(vtr_batch(small) == 8, "the configured batch stays 8 (%d)", vtr_batch(small));
        size_t m;
        uint8_t *again = vis_saved(small, &m);
        CHECK(m == n && again[76] == 8, "saved batch %d", again[76]);
        VisEval e;
        CHECK(vtr_evaluate(small, VIS_SPLIT_TEST, 30, 0, &e) == NN_OK && e.count == 30, "evaluate: %s", nn_last_error());
    }
    vtr_destroy(small);
    vtr_destroy(big);
    vtr_destroy(loaded);
    vis_data_destroy(d);
}

/* The model-level cases: every score and cell, soft and hard, single answers and sequences, both starts. */
static const struct {
    RnnCellKind cell;
    int attention;
    VisMode mode;
    int steps, sequence;
    VisStart start;
} MODEL_CASES[] = {
    {RNN_CELL_GRU, ATTN_SCORE_SCALED_DOT, VIS_SOFT, 1, 0, 0}, {RNN_CELL_GRU, ATTN_SCORE_ADDITIVE, VIS_SOFT, 3, 1, 0},
    {RNN_CELL_LSTM, ATTN_SCORE_GENERAL, VIS_SOFT, 3, 1, 0},   {RNN_CELL_LSTM, ATTN_SCORE_COSINE, VIS_SOFT, 2, 0, 0},
    {RNN_CELL_RNN, ATTN_SCORE_LOCATION, VIS_SOFT, 2, 1, 0},   {RNN_CELL_GRU, ATTN_SCORE_DOT, VIS_HARD, 3, 1, 0},
    {RNN_CELL_LSTM, ATTN_SCORE_GENERAL, VIS_HARD, 2, 0, 0},   {RNN_CELL_GRU, VIS_ATTN_NONE, VIS_SOFT, 2, 1, 0},
    {RNN_CELL_GRU, ATTN_SCORE_SCALED_DOT, VIS_SOFT, 2, 0, VIS_START_CONSTANT},
    {RNN_CELL_LSTM, ATTN_SCORE_ADDITIVE, VIS_SOFT, 3, 1, VIS_START_CONSTANT},
    {RNN_CELL_LSTM, ATTN_SCORE_GENERAL, VIS_HARD, 2, 0, VIS_START_CONSTANT},
    {RNN_CELL_GRU, VIS_ATTN_NONE, VIS_SOFT, 2, 1, VIS_START_CONSTANT},
};

int main(void) {
    conv_forward_matches_reference();
#ifdef NN_DOUBLE
    op_gradchecks();
    conv_gradcheck_shapes();
#endif
    for (size_t i = 0; i < sizeof MODEL_CASES / sizeof MODEL_CASES[0]; i++) {
        RnnCellKind cell = MODEL_CASES[i].cell;
        int attention = MODEL_CASES[i].attention, steps = MODEL_CASES[i].steps, sequence = MODEL_CASES[i].sequence;
#ifdef NN_DOUBLE
        model_gradcheck(cell, attention, MODEL_CASES[i].mode, steps, sequence, MODEL_CASES[i].start);
#endif
        shards_match(cell, attention, MODEL_CASES[i].mode, steps, sequence, MODEL_CASES[i].start);
    }
#ifdef NN_DOUBLE
    reinforce_matches_exact();
#endif
    tasks_and_splits();
    train_save_load();
    train_rolls_back();
    return check_summary();
}
