/* The retina sensor of the image model (Mnih et al. 2014, "Recurrent Models
 * of Visual Attention"), each layer a _forward / _backward pair: the
 * location policy and its baseline, the retina, the glimpse network. The
 * decoder (vision_layers.c) reads the glimpse g_t where the grid model reads
 * its attention context c_t. Shapes: B rows, T steps, H hidden, K =
 * scales * size^2 retina values; time-major (T, B, .) forward buffers. */
#include <math.h>
#include <string.h>

#include "core/vec.h"
#include "layers/linear.h"
#include "models/vision_internal.h"

/* ---- the location policy and its baseline ---------------------------------------- */

/* mu_t = tanh(s_t W_loc + b_loc), b_t = s_t W_b + b_b, and the location:
 * uniform, 2u - 1; sampling, mu_t + sigma eps (eps ~ N(0, 1) from the draws),
 * except on the soft mix's rows (vis_reads_expected), which read mu_t and
 * learn pathwise; else mu_t; clipped to [-1, 1] for the retina (the draw
 * itself is kept: its score (l - mu) / sigma^2 is the gradient of the
 * unclipped Gaussian's log). */
static void policy_forward(VisionModel *m, int B, int t, const VisRows *r) {
    const VisConfig *c = &m->c;
    VisActs *a = &m->a;
    int H = c->hidden, T = c->steps;
    size_t tb = (size_t)t * B;
    const nn_real *s = a->hs + tb * H;
    nn_real *mu = a->mu + tb * 2, *ls = a->lsamp + tb * 2, *lc = a->lclip + tb * 2;
    linear_forward(mu, s, m->w.loc_w, m->w.loc_b, B, H, 2);
    vec_tanh(mu, mu, 2 * B);
    linear_forward(a->base + tb, s, m->w.base_w, m->w.base_b, B, H, 1);
    for (int b = 0; b < B; b++) {
        int sample = r->sample && !vis_reads_expected(r, b);
        a->path[b] = r->sample && !sample;
        for (int k = 0; k < 2; k++) {
            size_t i = (size_t)b * 2 + k;
            double draw = (sample || r->uniform) ? r->draws[((size_t)k * T + t) * r->ld + b] : 0;
            ls[i] = r->uniform ? (nn_real)(2 * draw - 1) : sample ? mu[i] + c->sigma * (nn_real)draw : mu[i];
            lc[i] = ls[i] < -1 ? -1 : ls[i] > 1 ? 1 : ls[i];
        }
    }
    for (int b = 0; b < B; b++) m->loc[tb + b] = -1; /* no grid cell */
}

/* Sampled rows, L = sum_t w_t [-(R - b_t) log N(l_t; mu_t, sigma^2) + (R - b_t)^2 / 2],
 * R and the draw l_t constants:
 *   dL/dmu_t = -w_t (R - b_t) (l_t - mu_t) / sigma^2, through tanh (1 - mu^2) into W_loc, b_loc;
 *   dL/db_t = w_t (b_t - R) into W_b, b_b.
 * Neither reaches the core s_t: the policy's and the baseline's layers read it
 * as it is (the core learns from the answers alone). Passing the policy's
 * gradient on into the core, as the paper does, learnt far slower within the
 * bench's budget: at 2,000 steps on cluttered 60 x 60, 18% against 45%; its
 * single-sample gradient is noise to the classifier early on.
 * Pathwise rows (the soft mix: l_t = mu_t) read their glimpse where the
 * policy points, so the classifier's own loss is a function of mu_t:
 *   dL/dmu_t = dL/dl_t [|mu_t| < 1] (dl_t in d_l, the glimpse network's and the
 * retina's), through tanh into W_loc, b_loc. It stops at s_t as REINFORCE's
 * does: passed on into the core (the glimpse of step t depends on s_t through
 * mu_t) it made the locations jump between far corners from one round to the
 * next, and share 1 reached 20% of cluttered 60 x 60 after 2,000 steps against
 * 43% without (tests/bench/RESULTS.md). They train no baseline (their reward
 * is not a sample's). */
static void policy_backward(VisionModel *m, int B, int t) {
    const VisConfig *c = &m->c;
    VisActs *a = &m->a;
    int H = c->hidden, T = c->steps;
    size_t tb = (size_t)t * B;
    const nn_real *mu = a->mu + tb * 2, *ls = a->lsamp + tb * 2, *base = a->base + tb;
    nn_real var = c->sigma * c->sigma;
    for (int b = 0; b < B; b++) {
        /* each step's policy term weighs 1/B (the steps sum, as in the paper): T x the step's loss weight */
        nn_real w = a->lw[tb + b] * T, adv = a->reward[b] - base[b];
        a->d_base[b] = a->path[b] ? 0 : w * (base[b] - a->reward[b]);
        for (int k = 0; k < 2; k++) {
            size_t i = (size_t)b * 2 + k;
            nn_real inside = ls[i] > -1 && ls[i] < 1;
            a->d_mu[i] = a->path[b] ? a->d_l[i] * inside * (1 - mu[i] * mu[i])
                                    : -w * adv * (ls[i] - mu[i]) / var * (1 - mu[i] * mu[i]);
        }
    }
    const nn_real *s = a->hs + tb * H;
    linear_backward(NULL, m->g.loc_w, m->g.loc_b, a->d_mu, s, m->w.loc_w, B, H, 2);
    linear_backward(NULL, m->g.base_w, m->g.base_b, a->d_base, s, m->w.base_w, B, H, 1);
}

/* ---- the retina -------------------------------------------------------------------- */

void retina_box(const VisConfig *c, const nn_real *xy, int k, int *top, int *left, int *side) {
    /* the centre pixel: x = -1 is the left edge of column 0, x = 1 the right edge of column Q - 1 */
    int cx = (int)floor(((double)xy[0] + 1) / 2 * c->cols), cy = (int)floor(((double)xy[1] + 1) / 2 * c->rows);
    cx = cx < 0 ? 0 : cx >= c->cols ? c->cols - 1 : cx;
    cy = cy < 0 ? 0 : cy >= c->rows ? c->rows - 1 : cy;
    *side = c->retina_size << k;
    *left = cx - *side / 2;
    *top = cy - *side / 2;
}

/* Scale k's patch on the pixel lattice: its continuous top-left corner
 * (top, left) in pixel units is its box (retina_box) at the location's exact
 * pixel position, so a location at a pixel's centre reads that pixel's box. */
static void retina_corner(const VisConfig *c, const nn_real *xy, int k, double *top, double *left) {
    int side = c->retina_size << k;
    *left = ((double)xy[0] + 1) / 2 * c->cols - 0.5 - side / 2;
    *top = ((double)xy[1] + 1) / 2 * c->rows - 0.5 - side / 2;
}

static nn_real pixel(const nn_real *image, const VisConfig *c, int y, int x) {
    return y >= 0 && y < c->rows && x >= 0 && x < c->cols ? image[(size_t)y * c->cols + x] : 0;
}

/* rho (K): scale k's patch, side size 2^k around xy, averaged over 2^k x 2^k
 * blocks down to size x size, at a sub-pixel corner: with (T0, L0) its integer
 * part and (ay, ax) the rest, and A_uv the block average at (T0 + u, L0 + v),
 *   rho = (1 - ay) ((1 - ax) A00 + ax A01) + ay ((1 - ax) A10 + ax A11),
 * so rho moves smoothly with the location; pixels outside the canvas read 0.
 * gx, gy (K): d rho / dx, d rho / dy of the location in [-1, 1] (a pixel is 2 / cols of it):
 *   d rho / d left = (1 - ay) (A01 - A00) + ay (A11 - A10), d rho / d top likewise. */
static void retina_forward(nn_real *rho, nn_real *gx, nn_real *gy, const nn_real *image, const VisConfig *c,
                           const nn_real *xy) {
    int S = c->retina_size;
    for (int k = 0; k < c->retina_scales; k++) {
        int f = 1 << k;
        double topc, leftc;
        retina_corner(c, xy, k, &topc, &leftc);
        int T0 = (int)floor(topc), L0 = (int)floor(leftc);
        double ay = topc - T0, ax = leftc - L0, inv = 1.0 / (f * f);
        for (int i = 0; i < S; i++)
            for (int j = 0; j < S; j++) {
                /* the (f + 1) x (f + 1) window holds all four blocks: rows 0..f-1 or 1..f, columns likewise */
                double s00 = 0, s01 = 0, s10 = 0, s11 = 0;
                int y0 = T0 + i * f, x0 = L0 + j * f;
                for (int u = 0; u <= f; u++) {
                    double inner = 0, first = pixel(image, c, y0 + u, x0), last = pixel(image, c, y0 + u, x0 + f);
                    for (int v = 1; v < f; v++) inner += pixel(image, c, y0 + u, x0 + v);
                    if (u < f) s00 += first + inner, s01 += inner + last;
                    if (u > 0) s10 += first + inner, s11 += inner + last;
                }
                double a00 = s00 * inv, a01 = s01 * inv, a10 = s10 * inv, a11 = s11 * inv;
                size_t at = ((size_t)k * S + i) * S + j;
                rho[at] = (nn_real)((1 - ay) * ((1 - ax) * a00 + ax * a01) + ay * ((1 - ax) * a10 + ax * a11));
                gx[at] = (nn_real)(((1 - ay) * (a01 - a00) + ay * (a11 - a10)) * c->cols / 2);
                gy[at] = (nn_real)(((1 - ax) * (a10 - a00) + ax * (a11 - a01)) * c->rows / 2);
            }
    }
}

/* d image += each pixel's share of d rho: its weight in the window, wy(u) wx(v) / 4^k,
 * w(0) = 1 - a, w(f) = a, 1 between (in one block or in both of a pair) */
static void retina_backward(nn_real *dimage, const nn_real *drho, const VisConfig *c, const nn_real *xy) {
    int S = c->retina_size;
    for (int k = 0; k < c->retina_scales; k++) {
        int f = 1 << k;
        double topc, leftc;
        retina_corner(c, xy, k, &topc, &leftc);
        int T0 = (int)floor(topc), L0 = (int)floor(leftc);
        double ay = topc - T0, ax = leftc - L0, inv = 1.0 / (f * f);
        for (int i = 0; i < S; i++)
            for (int j = 0; j < S; j++) {
                double d = drho[((size_t)k * S + i) * S + j] * inv;
                for (int u = 0; u <= f; u++) {
                    int y = T0 + i * f + u;
                    if (y < 0 || y >= c->rows) continue;
                    double wy = u == 0 ? 1 - ay : u == f ? ay : 1;
                    for (int v = 0; v <= f; v++) {
                        int x = L0 + j * f + v;
                        double wx = v == 0 ? 1 - ax : v == f ? ax : 1;
                        if (x >= 0 && x < c->cols) dimage[(size_t)y * c->cols + x] += (nn_real)(d * wy * wx);
                    }
                }
            }
    }
}

/* ---- the glimpse network ----------------------------------------------------------- */

/* h_g = ReLU(rho W_g + b_g), h_l = ReLU(l W_l + b_l), join = [h_g; h_l],
 * g_t = ReLU(join W_gl + b_gl) into the context c_t (T, B, H) */
static void glimpse_forward(VisionModel *m, int B, int t) {
    const VisConfig *c = &m->c;
    VisActs *a = &m->a;
    int H = c->hidden, K = vis_retina_k(c);
    size_t tb = (size_t)t * B;
    nn_real *hg = a->hg + tb * H, *hl = a->hl + tb * H, *join = a->join + tb * 2 * H, *g = a->ctx + tb * H;
    linear_forward(hg, a->rho + tb * K, m->w.glimpse_w, m->w.glimpse_b, B, K, H);
    linear_forward(hl, a->lclip + tb * 2, m->w.where_w, m->w.where_b, B, 2, H);
    for (size_t i = 0; i < (size_t)B * H; i++) {
        hg[i] = hg[i] > 0 ? hg[i] : 0;
        hl[i] = hl[i] > 0 ? hl[i] : 0;
    }
    for (int b = 0; b < B; b++) {
        memcpy(join + (size_t)b * 2 * H, hg + (size_t)b * H, sizeof(nn_real) * H);
        memcpy(join + (size_t)b * 2 * H + H, hl + (size_t)b * H, sizeof(nn_real) * H);
    }
    linear_forward(g, join, m->w.join_w, m->w.join_b, B, 2 * H, H);
    for (size_t i = 0; i < (size_t)B * H; i++) g[i] = g[i] > 0 ? g[i] : 0;
}

/* From dg_t in d_ctx: the three layers' gradients, d rho into d_rho (=) when
 * the pixels or the location want it, d l_t into d_l (=) when the location
 * does (pathwise rows; a sampled location gets none). */
static void glimpse_backward(VisionModel *m, int B, int t, int want_rho, int want_l) {
    const VisConfig *c = &m->c;
    VisActs *a = &m->a;
    int H = c->hidden, K = vis_retina_k(c);
    size_t tb = (size_t)t * B;
    const nn_real *hg = a->hg + tb * H, *hl = a->hl + tb * H, *g = a->ctx + tb * H;
    for (size_t i = 0; i < (size_t)B * H; i++)
        if (!(g[i] > 0)) a->d_ctx[i] = 0;
    memset(a->d_join, 0, sizeof(nn_real) * B * 2 * H);
    linear_backward(a->d_join, m->g.join_w, m->g.join_b, a->d_ctx, a->join + tb * 2 * H, m->w.join_w, B, 2 * H, H);
    for (int b = 0; b < B; b++)
        for (int j = 0; j < H; j++) {
            size_t i = (size_t)b * H + j;
            a->d_hg[i] = hg[i] > 0 ? a->d_join[(size_t)b * 2 * H + j] : 0;
            a->d_hl[i] = hl[i] > 0 ? a->d_join[(size_t)b * 2 * H + H + j] : 0;
        }
    if (want_rho) memset(a->d_rho, 0, sizeof(nn_real) * B * K);
    linear_backward(want_rho ? a->d_rho : NULL, m->g.glimpse_w, m->g.glimpse_b, a->d_hg, a->rho + tb * K,
                    m->w.glimpse_w, B, K, H);
    if (want_l) memset(a->d_l, 0, sizeof(nn_real) * B * 2);
    linear_backward(want_l ? a->d_l : NULL, m->g.where_w, m->g.where_b, a->d_hl, a->lclip + tb * 2, m->w.where_w, B, 2, H);
}

/* ---- a step of the retina model ------------------------------------------------------ */

void retina_step_forward(VisionModel *m, int B, int t, const VisRows *r) {
    const VisConfig *c = &m->c;
    size_t N = (size_t)c->rows * c->cols, K = (size_t)vis_retina_k(c), tb = (size_t)t * B;
    policy_forward(m, B, t, r);
    for (int b = 0; b < B; b++)
        retina_forward(m->a.rho + (tb + b) * K, m->a.rho_gx + (tb + b) * K, m->a.rho_gy + (tb + b) * K, m->a.x + b * N, c,
                       m->a.lclip + (tb + b) * 2);
    glimpse_forward(m, B, t);
}

void retina_reward_forward(VisionModel *m, int B, const VisRows *r) {
    int T = m->c.steps, V = m->V;
    for (int b = 0; b < B; b++) {
        m->a.reward[b] = 0;
        if (!r->sample) continue;
        int last = r->n_labels[b] - 1;
        const nn_real *p = m->a.probs + ((size_t)last * B + b) * V;
        int guess = 0;
        for (int j = 1; j < V; j++)
            if (p[j] > p[guess]) guess = j;
        m->a.reward[b] = guess == r->labels[(size_t)b * T + last];
    }
}

void retina_step_backward(VisionModel *m, int B, int t, nn_real *dimages) {
    const VisConfig *c = &m->c;
    VisActs *a = &m->a;
    int H = c->hidden, path = 0;
    size_t N = (size_t)c->rows * c->cols, K = (size_t)vis_retina_k(c), tb = (size_t)t * B;
    for (int b = 0; m->trained_forward && b < B; b++) path |= a->path[b] != 0;
    for (int b = 0; b < B; b++) memcpy(a->d_ctx + (size_t)b * H, a->dcat + (size_t)b * 2 * H, sizeof(nn_real) * H);
    glimpse_backward(m, B, t, dimages != NULL || path, path);
    if (dimages)
        for (int b = 0; b < B; b++) retina_backward(dimages + b * N, a->d_rho + b * K, c, a->lclip + (tb + b) * 2);
    for (int b = 0; path && b < B; b++) { /* dl_t += d rho . d rho / dl on pathwise rows */
        if (!a->path[b]) continue;
        a->d_l[b * 2] += vec_dot(a->d_rho + b * K, a->rho_gx + (tb + b) * K, (int)K);
        a->d_l[b * 2 + 1] += vec_dot(a->d_rho + b * K, a->rho_gy + (tb + b) * K, (int)K);
    }
    if (m->trained_forward) policy_backward(m, B, t);
}
