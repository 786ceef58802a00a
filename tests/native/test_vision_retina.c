/* The retina sensor (hard attention as in Mnih et al. 2014):
 *   - the retina against a plain reference (box averages, zeros outside);
 *   - finite differences (double build) of the classifier's whole path, the
 *     glimpse network and the pixels, with the location held still (W_loc = 0:
 *     a location is a sample, no gradient flows back through it); the
 *     baseline's gradient w (b_t - R) s_t;
 *   - the soft mix: share 1's pathwise gradient (every parameter, the location
 *     layer's included, and the pixels) against finite differences; share 0
 *     unchanged; share 0.5 splits the rows;
 *   - REINFORCE's average gradient of the location layer against the exact
 *     gradient of the expected reward, E[R] = integral N(l; mu, sigma^2) R(clip l) dl
 *     by quadrature on a fine grid, within its standard error;
 *   - the constant start (the first location is the same for any image), the
 *     uniform ablation, shards, errors. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab/vision.h"
#include "base/bytes.h"
#include "check.h"
#include "fd.h"
#include "models/vision_internal.h"
#include "train/vision_train.h"
#include "vis_asset.h"

#define R 20
#define Q 24
#define B 3
#define H 5
#define T 3

static VisConfig retina_config(int steps, int batch, int size, int scales) {
    VisConfig c = {R, Q, 1, {1, 0, 0}, RNN_CELL_GRU, H, ATTN_SCORE_DOT, VIS_HARD, steps, 0, 0, batch, 9,
                   VIS_START_CONSTANT, VIS_SENSOR_RETINA, size, scales, (nn_real)0.3};
    return c;
}

static VisionModel *retina_model(int steps, int batch, int size, int scales) {
    VisConfig c = retina_config(steps, batch, size, scales);
    VisionModel *m = NULL;
    CHECK(vis_create(&m, &c) == NN_OK, "create: %s", nn_last_error());
    return m;
}

/* rows random images, and T random labels per row (labels (rows, T), n (rows)). */
static nn_real *random_batch(Rng *r, int rows, int32_t *labels, int32_t *n) {
    nn_real *images = alloc_random(r, (size_t)rows * R * Q, 0, 1);
    for (int b = 0; b < rows; b++) {
        n[b] = T;
        for (int t = 0; t < T; t++) labels[b * T + t] = rng_int(r, 0, 9);
    }
    return images;
}

/* The block average of scale k's cell (i, j) with the patch's top-left pixel at (top, left). */
static double block_ref(const VisionModel *m, const nn_real *image, int top, int left, int k, int i, int j) {
    const VisConfig *c = &m->c;
    int f = 1 << k;
    double sum = 0;
    for (int y = top + i * f; y < top + (i + 1) * f; y++)
        for (int x = left + j * f; x < left + (j + 1) * f; x++)
            if (y >= 0 && y < c->rows && x >= 0 && x < c->cols) sum += image[y * c->cols + x];
    return sum / (f * f);
}

/* Row b's retina, recomputed plainly from the image and the location the model
 * used: the bilinear mix of the block averages at the four integer corners
 * around the patch's continuous corner (x = -1 the canvas's left edge, pixel
 * centres at half-integers). */
static double retina_ref(const VisionModel *m, const nn_real *image, const nn_real *xy, int k, int i, int j) {
    const VisConfig *c = &m->c;
    int side = c->retina_size << k;
    double left = (xy[0] + 1) / 2 * c->cols - 0.5 - side / 2, top = (xy[1] + 1) / 2 * c->rows - 0.5 - side / 2;
    int L = (int)floor(left), T0 = (int)floor(top);
    double ax = left - L, ay = top - T0;
    return (1 - ay) * ((1 - ax) * block_ref(m, image, T0, L, k, i, j) + ax * block_ref(m, image, T0, L + 1, k, i, j)) +
           ay * ((1 - ax) * block_ref(m, image, T0 + 1, L, k, i, j) + ax * block_ref(m, image, T0 + 1, L + 1, k, i, j));
}

static void retina_matches_reference(void) {
    check_case("retina: sub-pixel box averages of 3 scales around each step's location");
    VisionModel *m = retina_model(T, B, 4, 3);
    if (!m) return;
    Rng r = {3};
    nn_real *images = alloc_random(&r, (size_t)B * R * Q, 0, 1);
    /* locations far from the centre: patches reach past the canvas */
    for (int i = 0; i < 2 * H; i++) m->w.loc_w[i] = (nn_real)rng_uniform(&r, -3, 3);
    m->w.loc_b[0] = (nn_real)0.8;
    m->w.loc_b[1] = (nn_real)-0.9;
    int32_t pred[B * T];
    CHECK_OK(vis_forward(m, B, images, NULL, NULL, 0, NULL, pred), "forward");
    double worst = 0;
    int S = 4, K = vis_retina_k(&m->c);
    for (int t = 0; t < T; t++)
        for (int b = 0; b < B; b++) {
            const nn_real *xy = m->a.lclip + ((size_t)t * B + b) * 2, *rho = m->a.rho + ((size_t)t * B + b) * K;
            for (int k = 0; k < 3; k++)
                for (int i = 0; i < S; i++)
                    for (int j = 0; j < S; j++)
                        worst = fmax(worst, fabs(rho[(k * S + i) * S + j] - retina_ref(m, images + b * R * Q, xy, k, i, j)));
        }
    CHECK(worst < 1e-6, "retina vs reference: worst %g", worst);
    vis_destroy(m);
}

#ifdef NN_DOUBLE
typedef struct {
    VisionModel *m;
    nn_real *images;
    int32_t labels[B * T], n[B];
    int train; /* the forward samples (with a soft mix of 1: every row at mu_t) */
    nn_real *g, *dimages; /* (P), (B, R, Q) the engine's gradients at the point */
} Case;

static double case_loss(void *p) {
    Case *c = p;
    nn_real loss;
    vis_forward(c->m, B, c->images, c->labels, c->n, c->train, &loss, NULL);
    return loss;
}

/* A gradient check's case: random images, labels and weights, the location
 * layer held at W_loc = 0 with b_loc off the pixel edges (x = 0.37 is column
 * 16.44), and the engine's gradients there; share 1 trains with every row pathwise. */
static int case_setup(Case *c, uint64_t seed, int share) {
    VisionModel *m = c->m = retina_model(T, B, 4, 2);
    if (!m) return 0;
    Rng r = {seed};
    size_t P = vis_num_params(m), N = (size_t)B * R * Q;
    c->images = random_batch(&r, B, c->labels, c->n);
    nn_real *p = vis_params(m);
    for (size_t i = 0; i < P; i++) p[i] += (nn_real)(0.1 * rng_uniform(&r, -1, 1));
    memset(m->w.loc_w, 0, sizeof(nn_real) * 2 * H);
    m->w.loc_b[0] = (nn_real)0.37;
    m->w.loc_b[1] = (nn_real)-0.41;
    c->train = share;
    CHECK_OK(vis_set_soft_mix(m, (nn_real)share), "share");
    nn_real loss;
    c->dimages = alloc_zeros(N);
    c->g = alloc_reals(P);
    vis_zero_grad(m);
    CHECK_OK(vis_forward(m, B, c->images, c->labels, c->n, c->train, &loss, NULL), "forward");
    CHECK_OK(vis_backward(m, c->dimages), "backward");
    memcpy(c->g, vis_grads(m), sizeof(nn_real) * P);
    double wx = fd_worst(case_loss, c, c->images, c->dimages, N);
    CHECK(wx < 1e-5, "pixels (%zu): worst relative error %.3g", N, wx);
    return 1;
}

/* Share 0 (no sampling): every parameter but the location layer's (held at
 * W_loc = 0 so the location does not move under the differences; its gradient
 * is REINFORCE's alone, zero without sampling) and the pixels.
 * Share 1 (the soft mix): every row reads its glimpses at mu_t, so the loss is
 * a smooth function of every parameter, the location layer's too (through the
 * sub-pixel retina and the location network); W_loc = 0, so mu_t's gradient
 * stopping at s_t (as the engine's does) loses nothing. The baseline learns nothing. */
static void retina_gradcheck(RnnCellKind cell, int share) {
    check_case("retina gradcheck cell=%d, soft mix %d", (int)cell, share);
    Case c;
    if (!case_setup(&c, (share ? 53 : 17) + (uint64_t)cell, share)) return;
    VisionModel *m = c.m;
    size_t P = vis_num_params(m);
    nn_real *p = vis_params(m), *g = c.g;
    size_t loc = (size_t)(m->w.loc_w - p), loc_n = share ? 0 : 2 * H + 2, base = (size_t)(m->w.base_w - p);
    double worst = 0, gl = 0, gb = 0;
    /* the tensors before and after the location layer (W_loc, b_loc are adjacent in the table) */
    worst = fmax(worst, fd_worst(case_loss, &c, p, g, loc));
    worst = fmax(worst, fd_worst(case_loss, &c, p + loc + loc_n, g + loc + loc_n, P - loc - loc_n));
    CHECK(worst < 1e-5, "parameters (%zu): worst relative error %.3g", P - loc_n, worst);
    for (size_t i = 0; i < 2 * H + 2; i++) gl = fmax(gl, fabs(g[loc + i]));
    for (size_t i = 0; i < H + 1; i++) gb = fmax(gb, fabs(g[base + i]));
    if (share) {
        CHECK(gl > 1e-4, "the location layer learns from the answers (largest gradient %g)", gl);
        CHECK(gb == 0, "no sampled row: the baseline's gradient is 0 (%g)", gb);
    } else {
        CHECK(gl == 0, "no sampling, no REINFORCE: the location layer's gradient is 0 (%g)", gl);
    }
    vis_destroy(m);
}

/* The baseline's gradient: b_t = s_t W_b + b_b learns (b_t - R)^2 / 2 with
 * each step's weight 1/B; nothing else reads it. */
static void baseline_gradient(void) {
    check_case("retina: the baseline layer's gradient");
    VisionModel *m = retina_model(T, B, 4, 2);
    if (!m) return;
    Rng r = {23};
    nn_real *images = alloc_random(&r, (size_t)B * R * Q, 0, 1), loss;
    int32_t labels[B * T], n[B] = {T, T, T};
    for (int i = 0; i < B * T; i++) labels[i] = i % 2;
    vis_zero_grad(m);
    CHECK_OK(vis_forward(m, B, images, labels, n, 1, &loss, NULL), "forward");
    CHECK_OK(vis_backward(m, NULL), "backward");
    double want[H + 1] = {0};
    for (int t = 0; t < T; t++)
        for (int b = 0; b < B; b++) {
            double d = (m->a.base[t * B + b] - m->a.reward[b]) / B;
            for (int j = 0; j < H; j++) want[j] += d * m->a.hs[((size_t)t * B + b) * H + j];
            want[H] += d;
        }
    CHECK_ARRAY(m->g.base_w, want, H, H, 1e-12, 1e-9, "dW_b");
    CHECK_ARRAY(m->g.base_b, want + H, 1, 1, 1e-12, 1e-9, "db_b");
    vis_destroy(m);
}

/* The answer of a one-step model whose location is forced to l = (x, y)
 * (b_loc = atanh(l) with W_loc = 0, evaluated greedily). */
static int32_t answer_at(VisionModel *m, const nn_real *image, double x, double y) {
    x = fmin(fmax(x, -0.999999), 0.999999);
    y = fmin(fmax(y, -0.999999), 0.999999);
    m->w.loc_b[0] = (nn_real)atanh(x);
    m->w.loc_b[1] = (nn_real)atanh(y);
    int32_t pred;
    vis_forward(m, 1, image, NULL, NULL, 0, NULL, &pred);
    return pred;
}

/* One glimpse (T = 1), W_loc = 0 and W_l = 0 (so the answer depends on the
 * location through the retina alone, and the classifier's gradient does not
 * reach b_loc): the mean of the sampled gradients of b_loc must match
 * -dE[R]/db_loc, E[R](mu) = sum over a grid of N(l; mu, sigma^2) R(clip l) dA,
 * d/dmu_k = sum N (l_k - mu_k) / sigma^2 R dA, times dmu/db = 1 - mu^2. */
static void reinforce_matches_exact(void) {
    check_case("retina REINFORCE average gradient vs exact expected-reward gradient");
    enum { STEPS = 1, SAMPLES = 40000, GRID = 241 };
    VisConfig cfg = retina_config(STEPS, 1, 3, 1);
    VisionModel *m;
    if (!CHECK(vis_create(&m, &cfg) == NN_OK, "create: %s", nn_last_error())) return;
    Rng r = {29};
    /* a bright blob right of centre: where the model looks decides what it sees */
    nn_real *image = alloc_zeros((size_t)R * Q);
    for (int y = 6; y < 14; y++)
        for (int x = 13; x < 20; x++) image[y * Q + x] = (nn_real)rng_uniform(&r, 0.5, 1);
    memset(m->w.loc_w, 0, sizeof(nn_real) * 2 * H);
    memset(m->w.where_w, 0, sizeof(nn_real) * 2 * H);
    double sigma = cfg.sigma, mu[2] = {0.2, -0.1}, lo = -1.6, step = 3.2 / (GRID - 1);
    /* the reward: the answer is the one the model gives looking at the blob */
    int32_t label = answer_at(m, image, 0.33, 0);
    int on = 0;
    double exact[2] = {0}, ER = 0;
    for (int i = 0; i < GRID; i++)
        for (int j = 0; j < GRID; j++) {
            double x = lo + i * step, y = lo + j * step;
            double dens = exp(-((x - mu[0]) * (x - mu[0]) + (y - mu[1]) * (y - mu[1])) / (2 * sigma * sigma)) /
                          (6.283185307179586 * sigma * sigma) * step * step;
            int Rl = answer_at(m, image, x, y) == label;
            on += Rl;
            ER += dens * Rl;
            exact[0] += dens * Rl * (x - mu[0]) / (sigma * sigma) * (1 - mu[0] * mu[0]);
            exact[1] += dens * Rl * (y - mu[1]) / (sigma * sigma) * (1 - mu[1] * mu[1]);
        }
    CHECK(ER > 0.05 && ER < 0.95, "the reward depends on the location: E[R] = %.3f (%d of %d grid points)", ER, on,
          GRID * GRID);
    m->w.loc_b[0] = (nn_real)atanh(mu[0]);
    m->w.loc_b[1] = (nn_real)atanh(mu[1]);
    double mean[2] = {0}, sq[2] = {0};
    int32_t n = 1;
    for (int s = 0; s < SAMPLES; s++) {
        nn_real loss;
        vis_zero_grad(m);
        vis_forward(m, 1, image, &label, &n, 1, &loss, NULL);
        vis_backward(m, NULL);
        for (int k = 0; k < 2; k++) {
            mean[k] += m->g.loc_b[k];
            sq[k] += (double)m->g.loc_b[k] * m->g.loc_b[k];
        }
    }
    for (int k = 0; k < 2; k++) {
        double avg = mean[k] / SAMPLES, se = sqrt((sq[k] / SAMPLES - avg * avg) / SAMPLES);
        double z = fabs(avg + exact[k]) / se; /* the loss is -E[R] */
        CHECK(z < 4, "b_loc[%d]: REINFORCE %.4f +- %.4f vs exact %.4f (%.2f standard errors)", k, avg, se, -exact[k], z);
        CHECK(fabs(exact[k]) > 5 * se, "b_loc[%d]: the exact gradient %.4f stands out of the noise (%.4f)", k, exact[k], se);
    }
    vis_destroy(m);
}
#endif

/* Two images: the same s_0 and the same first location (the policy reads s_0
 * alone), then the glimpses read different pixels and the states part. */
static void constant_start(void) {
    check_case("retina: the constant start");
    VisionModel *m = retina_model(T, B, 4, 2);
    if (!m) return;
    Rng r = {31};
    nn_real *images = alloc_random(&r, (size_t)B * R * Q, 0, 1);
    for (int i = 0; i < 2 * H; i++) m->w.loc_w[i] = (nn_real)rng_uniform(&r, -2, 2); /* later steps move */
    for (int train = 0; train <= 1; train++) {
        int32_t labels[B * T] = {0}, n[B] = {T, T, T};
        nn_real loss, s[2][H], xy[2][2 * T];
        CHECK_OK(vis_forward(m, B, images, labels, n, train, &loss, NULL), "forward");
        for (int b = 0; b < 2; b++) {
            vis_start_state(m, b, s[b], NULL);
            vis_glimpses(m, b, xy[b]);
        }
        CHECK(memcmp(s[0], s[1], sizeof s[0]) == 0, "s_0 is the same for both images");
        const nn_real *mu = m->a.mu;
        CHECK(mu[0] == mu[2] && mu[1] == mu[3], "train %d: the first location's mean is the same (%g, %g)", train,
              (double)mu[0], (double)mu[1]);
        if (!train) CHECK(xy[0][0] == xy[1][0] && xy[0][1] == xy[1][1], "evaluating, the first glimpse is the same");
        double later = 0;
        for (int i = 2; i < 2 * T; i++) later = fmax(later, fabs(xy[0][i] - xy[1][i]));
        CHECK(later > 1e-4, "train %d: later glimpses depend on what the first one saw (%g)", train, later);
        vis_zero_grad(m);
    }
    vis_destroy(m);
}

/* Uniform locations: from their own stream, the same each evaluation,
 * spread over the canvas, no backward, the training stream untouched. */
static void uniform_locations(void) {
    check_case("retina: uniform locations");
    VisionModel *m = retina_model(T, B, 4, 2);
    if (!m) return;
    Rng r = {37};
    nn_real *images = alloc_random(&r, (size_t)B * R * Q, 0, 1), xy[2][2 * T], greedy[2 * T];
    int32_t labels[B * T] = {0}, n[B] = {T, T, T};
    uint64_t rng = m->rng;
    nn_real loss;
    for (int k = 0; k < 2; k++) {
        vis_set_uniform(m, 1);
        CHECK_OK(vis_forward(m, B, images, labels, n, 0, &loss, NULL), "forward");
        vis_glimpses(m, 2, xy[k]);
    }
    CHECK(vis_backward(m, NULL) == NN_ERR_ARG, "a uniform forward has no backward");
    vis_set_uniform(m, 0);
    CHECK_OK(vis_forward(m, B, images, labels, n, 0, &loss, NULL), "forward");
    vis_glimpses(m, 2, greedy);
    CHECK(memcmp(xy[0], xy[1], sizeof xy[0]) == 0, "restarted: the same locations");
    double spread = 0, off = 0;
    for (int i = 0; i < 2 * T; i++) {
        spread = fmax(spread, fabs(xy[0][i] - xy[0][i % 2]));
        off = fmax(off, fabs(xy[0][i] - greedy[i]));
    }
    CHECK(spread > 0.1 && off > 0.1, "spread over the canvas (%g), not the policy's (%g)", spread, off);
    CHECK(m->rng == rng, "the training stream did not move");
    vis_destroy(m);
}

/* The batch in 2, 3 or one-row shards: the whole batch's loss, gradients
 * (REINFORCE's too: the draws are the batch's), answers and glimpses. */
static void retina_shards(void) {
    check_case("retina: shards match the whole batch");
    enum { SBR = 5 };
    VisConfig c = retina_config(T, SBR, 4, 2);
    Rng r = {41};
    size_t N = (size_t)SBR * R * Q;
    int32_t labels[SBR * T], n[SBR];
    nn_real *images = random_batch(&r, SBR, labels, n);
    VisionModel *one;
    if (!CHECK(vis_create(&one, &c) == NN_OK, "create: %s", nn_last_error())) return;
    size_t P = vis_num_params(one);
    nn_real l1, ln, *d1 = alloc_zeros(N), *dn = alloc_zeros(N), xy1[2 * T], xyn[2 * T];
    int32_t p1[SBR * T], pn[SBR * T];
    vis_zero_grad(one);
    CHECK_OK(vis_forward(one, SBR, images, labels, n, 1, &l1, p1), "forward");
    vis_glimpses(one, SBR - 1, xy1);
    CHECK_OK(vis_backward(one, d1), "backward");
    double gmax = 0, dmax = 0;
    for (size_t i = 0; i < P; i++) gmax = fmax(gmax, fabs(vis_grads(one)[i]));
    for (size_t i = 0; i < N; i++) dmax = fmax(dmax, fabs(d1[i]));
    const int counts[] = {2, 3, SBR};
    for (int k = 0; k < 3; k++) {
        VisionModel *many;
        if (!CHECK(vis_create(&many, &c) == NN_OK && vis_set_shards(many, counts[k]) == NN_OK, "%d shards: %s", counts[k],
                   nn_last_error()))
            continue;
        memset(dn, 0, sizeof(nn_real) * N);
        vis_zero_grad(many);
        CHECK_OK(vis_forward(many, SBR, images, labels, n, 1, &ln, pn), "forward");
        vis_glimpses(many, SBR - 1, xyn);
        CHECK_OK(vis_backward(many, dn), "backward");
        CHECK_CLOSE(ln, l1, 0, 8 * TOL_EPS, "loss");
        CHECK_ARRAY_R(vis_grads(many), vis_grads(one), P, P, 64 * TOL_EPS * gmax, 0, "gradients");
        CHECK_ARRAY_R(dn, d1, N, N, 64 * TOL_EPS * dmax, 0, "pixel gradients");
        CHECK(memcmp(pn, p1, sizeof pn) == 0, "%d shards: the same answers", counts[k]);
        CHECK_ARRAY_R(xyn, xy1, 2 * T, 2, 0, 0, "the last row's glimpses");
        vis_destroy(many);
    }
    vis_destroy(one);
}

/* The soft mix on the retina: share 1 reads every glimpse at mu_t (the
 * evaluation's locations) and draws one more number per row; share 0 trains
 * exactly as a model never given a share; a share in between splits the rows. */
static void retina_soft_mix(void) {
    check_case("retina: the soft mix's shares");
    enum { MB = 6 };
    VisConfig c = retina_config(T, MB, 4, 2);
    Rng r = {59};
    int32_t labels[MB * T], n[MB], pred[MB * T];
    nn_real *images = random_batch(&r, MB, labels, n);
    VisionModel *a, *z, *one, *half;
    if (!CHECK(vis_create(&a, &c) == NN_OK && vis_create(&z, &c) == NN_OK && vis_create(&one, &c) == NN_OK &&
                   vis_create(&half, &c) == NN_OK,
               "create: %s", nn_last_error()))
        return;
    for (int i = 0; i < 2 * H; i++) { /* the same weights that spread the locations, in all four */
        nn_real w = (nn_real)rng_uniform(&r, -2, 2);
        a->w.loc_w[i] = z->w.loc_w[i] = one->w.loc_w[i] = half->w.loc_w[i] = w;
    }
    size_t P = vis_num_params(a);
    nn_real la, lz, l1, lh;
    CHECK_OK(vis_set_soft_mix(z, 0.6) == NN_OK ? vis_set_soft_mix(z, 0) : NN_ERR_VALUE, "share 0");
    CHECK_OK(vis_set_soft_mix(one, 1), "share 1");
    CHECK_OK(vis_set_soft_mix(half, 0.5), "share 0.5");
    VisionModel *all[] = {a, z, one, half};
    nn_real *loss[] = {&la, &lz, &l1, &lh};
    for (int k = 0; k < 4; k++) {
        vis_zero_grad(all[k]);
        CHECK(vis_forward(all[k], MB, images, labels, n, 1, loss[k], NULL) == NN_OK && vis_backward(all[k], NULL) == NN_OK,
              "model %d: %s", k, nn_last_error());
    }
    CHECK(la == lz && memcmp(vis_grads(a), vis_grads(z), sizeof(nn_real) * P) == 0 && a->rng == z->rng,
          "share 0: the same loss, gradients and stream as no share");
    CHECK(memcmp(a->a.lsamp, z->a.lsamp, sizeof(nn_real) * 2 * T * MB) == 0, "share 0: the same draws");
    double off = 0;
    for (int i = 0; i < 2 * T * MB; i++) off = fmax(off, fabs(one->a.lsamp[i] - one->a.mu[i]));
    CHECK(off == 0, "share 1: every glimpse at the policy's mean (%g off)", off);
    /* an evaluation forward reads mu_t as well: the same loss as share 1's */
    VisionModel *e;
    if (CHECK(vis_create(&e, &c) == NN_OK, "create: %s", nn_last_error())) {
        memcpy(vis_params(e), vis_params(one), sizeof(nn_real) * P);
        nn_real le;
        CHECK_OK(vis_forward(e, MB, images, labels, n, 0, &le, pred), "evaluate");
        CHECK_CLOSE(le, l1, 0, 8 * TOL_EPS, "share 1's loss is the evaluation's");
        vis_destroy(e);
    }
    int at_mu = 0;
    for (int b = 0; b < MB; b++) {
        int same = half->a.lsamp[b * 2] == half->a.mu[b * 2] && half->a.lsamp[b * 2 + 1] == half->a.mu[b * 2 + 1];
        at_mu += same;
        CHECK(same == (half->a.path[b] != 0), "share 0.5, row %d: at mu exactly when it is pathwise", b);
    }
    CHECK(at_mu > 0 && at_mu < MB, "share 0.5 splits the rows (%d of %d at mu)", at_mu, MB);
    for (int k = 0; k < 4; k++) vis_destroy(all[k]);
}

/* Version 3 files: written for the retina, loaded back to the same model;
 * a damaged sensor field or retina size is refused. Bad configurations name their option. */
static void files_and_errors(void) {
    Rng r = {43};
    size_t size;
    uint8_t *asset = make_vis_asset(&r, 200, &size);
    VisData *d;
    vis_data_create(&d, asset, size);
    ImgTaskConfig tc = {IMG_CLUTTERED, 2, 0, 0, 32};
    VisConfig mc = {0, 0, 1, {1, 0, 0}, RNN_CELL_LSTM, 8, ATTN_SCORE_DOT, VIS_HARD, 3, 0, 0.01, 8, 3, VIS_START_CONSTANT,
                    VIS_SENSOR_RETINA, 0, 0, 0};
    VisionTrainer *t, *u;
    check_case("retina: defaults, file version 3");
    if (CHECK(vtr_create(&t, d, &tc, &mc) == NN_OK, "create: %s", nn_last_error())) {
        const VisConfig *c = vis_config(vtr_model(t));
        CHECK(c->retina_size == 8 && c->retina_scales == 3 && fabs(c->sigma - 0.15) < 1e-7, "defaults on 32 x 32: %d, %d, %g",
              c->retina_size, c->retina_scales, (double)c->sigma);
        NnTrainOptions o = {.optimizer = NN_ADAM, .lr = 0.01f, .clip = 5};
        CHECK_OK(vtr_train(t, &o, 2, 8, NULL), "train");
        size_t n = vtr_save_size(t);
        uint8_t *bytes = check_track(malloc(n)), *again = check_track(malloc(n));
        vtr_save(t, bytes, n);
        const uint8_t *at = bytes + 8;
        CHECK(nn_get_u32(&at) == 3, "written as version 3");
        if (CHECK(vtr_load(&u, d, bytes, n) == NN_OK, "load: %s", nn_last_error())) {
            CHECK(vtr_save_size(u) == n && vtr_save(u, again, n) == NN_OK && memcmp(bytes, again, n) == 0,
                  "saved back byte for byte");
            VisEval a, b;
            vtr_evaluate(t, VIS_SPLIT_TEST, 20, 0, &a);
            vtr_evaluate(u, VIS_SPLIT_TEST, 20, 0, &b);
            /* the file holds float32 weights: the double build rounds them */
            CHECK(fabs(a.loss - b.loss) <= 1e-5 * fabs(a.loss) && a.accuracy == b.accuracy, "evaluates alike after a load");
            vtr_destroy(u);
        }
        /* the sensor field follows the start field (4 + 4 + 17 x 4 + 4 bytes in); damaged files are refused */
        size_t sensor_at = 8 + 4 + 17 * 4 + 4;
        const int32_t bad[][2] = {{0, 0}, {4, 0}, {8, 0}};
        for (int k = 0; k < 3; k++) {
            memcpy(again, bytes, n);
            again[sensor_at + bad[k][0]] = (uint8_t)bad[k][1];
            /* the checksum is checked after the header: a header refused first names its field */
            CHECK(vtr_load(&u, d, again, n) == NN_ERR_VALUE && strstr(nn_last_error(), k ? "retina" : "sensor"),
                  "field %d set to 0: %s", k, nn_last_error());
        }
        vtr_destroy(t);
    }
    check_case("retina: errors name the option");
    const struct {
        int sequence, mode, start, size, scales;
        double sigma;
        int status;
        const char *says;
    } cases[] = {
        {0, VIS_SOFT, VIS_START_CONSTANT, 4, 2, 0.1, NN_ERR_ARG, "sensor: the retina is hard attention"},
        {1, VIS_HARD, VIS_START_CONSTANT, 4, 2, 0.1, NN_ERR_ARG, "sensor: the retina reads one-digit tasks"},
        {0, VIS_HARD, VIS_START_MEAN, 4, 2, 0.1, NN_ERR_ARG, "sensor: the retina starts from the learned constant"},
        {0, VIS_HARD, VIS_START_CONSTANT, 1, 2, 0.1, NN_ERR_SHAPE, "retina.size"},
        {0, VIS_HARD, VIS_START_CONSTANT, 33, 2, 0.1, NN_ERR_LIMIT, "retina.size"},
        {0, VIS_HARD, VIS_START_CONSTANT, 4, 4, 0.1, NN_ERR_LIMIT, "retina.scales"},
        {0, VIS_HARD, VIS_START_CONSTANT, 4, 2, 0, NN_ERR_VALUE, "sigma"},
        {0, VIS_HARD, VIS_START_CONSTANT, 4, 2, NAN, NN_ERR_VALUE, "sigma"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        VisConfig c = retina_config(2, 1, cases[i].size, cases[i].scales);
        c.sequence = cases[i].sequence;
        c.mode = (VisMode)cases[i].mode;
        c.start = (VisStart)cases[i].start;
        c.sigma = (nn_real)cases[i].sigma;
        VisionModel *m = NULL;
        CHECK(vis_create(&m, &c) == cases[i].status && strstr(nn_last_error(), cases[i].says), "case %zu: %s", i,
              nn_last_error());
        vis_destroy(m);
    }
    VisConfig c = retina_config(2, 1, 4, 2);
    c.sensor = (VisSensor)2;
    VisionModel *m = NULL;
    CHECK(vis_create(&m, &c) == NN_ERR_ARG && strstr(nn_last_error(), "sensor"), "sensor 2: %s", nn_last_error());
    vis_data_destroy(d);
}

int main(void) {
    constant_start();
    uniform_locations();
    retina_shards();
    files_and_errors();
    retina_matches_reference();
    retina_soft_mix();
#ifdef NN_DOUBLE
    for (int share = 0; share <= 1; share++) {
        retina_gradcheck(RNN_CELL_GRU, share);
        retina_gradcheck(RNN_CELL_LSTM, share);
    }
    baseline_gradient();
    reinforce_matches_exact();
#endif
    return check_summary();
}
