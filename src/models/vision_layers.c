/* The layers of the image model, each a _forward / _backward pair side by
 * side, then the model as those layers in order and in reverse:
 *   encoder  L x conv block (conv 3x3, ReLU, max-pool 2x2), the projection to
 *            the keys and values kv (1x1 conv + learned positions)
 *   decoder  the start state s_0, then per step t: attention over the grid
 *            (c_t), the output layer (src/layers/output.c) over [c_t; s_t],
 *            its cross-entropy, and the cell s_{t+1} = cell([c_t; onehot(y_t)], s_t)
 *   retina   no encoder; c_t is the glimpse g_t of vision_retina.c's layers
 * Shapes use the letters of vision.c; decoder buffers are time-major (T, B, .)
 * and a step's backward reads the block of step t. A backward pass reads its
 * forward's buffers and accumulates into the parameter gradients m->g. */
#include <math.h>
#include <string.h>

#include "base/error.h"
#include "core/conv.h"
#include "core/vec.h"
#include "models/vision_internal.h"

/* ---- encoder ------------------------------------------------------------------ */

/* Layer l's input of row b: the image, or layer l - 1's pooled map. */
static const nn_real *block_input(const VisionModel *m, int l, int b) {
    size_t in = (size_t)m->hl[l] * m->wl[l] * m->cin[l];
    return (l == 0 ? m->a.x : m->a.pool[l - 1]) + (size_t)b * in;
}

/* pool_l (B, h/2, w/2, C_l) = maxpool(ReLU(conv3x3(x; W_l) + b_l)), computed as
 * ReLU(maxpool(conv3x3(x; W_l) + b_l)): max and ReLU commute, and the ReLU then
 * runs over a quarter of the values. conv_out holds the convolution before its
 * ReLU. Where the window's maximum is positive, the pool picks the same element
 * either way; where it is not, the output is 0 and no gradient passes. */
static void conv_block_forward(VisionModel *m, int B, int l) {
    VisActs *a = &m->a;
    int h = m->hl[l], w = m->wl[l], Ci = m->cin[l], Co = m->c.channels[l];
    size_t full = (size_t)h * w * Co, half = (size_t)(h / 2) * (w / 2) * Co;
    for (int b = 0; b < B; b++) {
        nn_real *y = a->conv_out[l] + (size_t)b * full, *pool = a->pool[l] + (size_t)b * half;
        conv_3x3_forward(y, block_input(m, l, b), m->w.conv_w[l], m->w.conv_b[l], h, w, Ci, Co, a->scratch);
        conv_pool_forward(pool, m->idx[l] + (size_t)b * half, y, h, w, Co);
        conv_relu_forward(pool, pool, (long)half);
    }
}

/* From d_pool[l]: into d_pool[l - 1] (=), or dimages (+=, or NULL) for the first layer. */
static void conv_block_backward(VisionModel *m, int B, int l, nn_real *dimages) {
    VisActs *a = &m->a;
    int h = m->hl[l], w = m->wl[l], Ci = m->cin[l], Co = m->c.channels[l];
    size_t in = (size_t)h * w * Ci, full = (size_t)h * w * Co, half = (size_t)(h / 2) * (w / 2) * Co;
    if (l > 0) memset(a->d_pool[l - 1], 0, sizeof(nn_real) * B * in);
    for (int b = 0; b < B; b++) {
        nn_real *dr = a->d_conv_out[l] + (size_t)b * full, *dp = a->d_pool[l] + (size_t)b * half;
        const nn_real *pool = a->pool[l] + (size_t)b * half;
        /* ReLU backward in place on d_pool, read only here: dp *= [pool > 0] */
        for (size_t i = 0; i < half; i++)
            if (!(pool[i] > 0)) dp[i] = 0;
        memset(dr, 0, sizeof(nn_real) * full);
        conv_pool_backward(dr, dp, m->idx[l] + (size_t)b * half, h, w, Co);
        nn_real *dx = l > 0 ? a->d_pool[l - 1] + (size_t)b * in : dimages ? dimages + (size_t)b * in : NULL;
        conv_3x3_backward(dx, m->g.conv_w[l], m->g.conv_b[l], dr, block_input(m, l, b), m->w.conv_w[l], h, w, Ci, Co,
                          a->scratch);
    }
}

/* kv (B, G, H) = pool_L Wp + bp + pos: without the positions the cells would
 * be a bag of features with no place */
static void project_forward(VisionModel *m, int B) {
    VisActs *a = &m->a;
    int H = m->c.hidden, L = m->c.layers;
    conv_1x1_forward(a->kv, a->pool[L - 1], m->w.proj_w, m->w.proj_b, B * m->G, m->c.channels[L - 1], H);
    for (int b = 0; b < B; b++) vec_axpy(a->kv + (size_t)b * m->G * H, 1, m->w.pos, m->G * H);
}

/* From d_kv: the positions' and the projection's gradients, d_pool[L - 1] (=). */
static void project_backward(VisionModel *m, int B) {
    VisActs *a = &m->a;
    int H = m->c.hidden, L = m->c.layers, CL = m->c.channels[L - 1];
    for (int b = 0; b < B; b++) vec_axpy(m->g.pos, 1, a->d_kv + (size_t)b * m->G * H, m->G * H);
    memset(a->d_pool[L - 1], 0, sizeof(nn_real) * B * m->G * CL);
    conv_1x1_backward(a->d_pool[L - 1], m->g.proj_w, m->g.proj_b, a->d_kv, a->pool[L - 1], m->w.proj_w, B * m->G, CL, H);
}

/* ---- decoder: the start state ------------------------------------------------------ */

/* mean_b = (1/G) sum_g kv_bg (start mean, and attention none's context);
 * start mean: s_0 = tanh(mean W0 + b0); start constant: s_0 = the learned s0
 * for every row. LSTM c_0 = 0. */
static void start_forward(VisionModel *m, int B) {
    VisActs *a = &m->a;
    int H = m->c.hidden, G = m->G;
    for (int b = 0; b < B; b++) {
        nn_real *mu = a->mean + (size_t)b * H;
        memset(mu, 0, sizeof(nn_real) * H);
        for (int g = 0; g < G; g++) vec_axpy(mu, (nn_real)1 / G, a->kv + ((size_t)b * G + g) * H, H);
    }
    memset(a->cs, 0, sizeof(nn_real) * B * H);
    if (m->c.start == VIS_START_CONSTANT) {
        for (int b = 0; b < B; b++) memcpy(a->hs + (size_t)b * H, m->w.s0, sizeof(nn_real) * H);
        return;
    }
    vec_gemm_nn(a->hs, H, a->mean, H, m->w.init_w, H, B, H, H, 0);
    for (int b = 0; b < B; b++) {
        vec_axpy(a->hs + (size_t)b * H, 1, m->w.init_b, H);
        vec_tanh(a->hs + (size_t)b * H, a->hs + (size_t)b * H, H);
    }
}

/* From ds_0 in dh. Start constant: ds0 += sum_b ds_0 (the image gets nothing
 * from the start). Start mean: dpre = ds_0 (1 - s_0^2), in place; dmean (in
 * d_o, whose output-layer lifetime ended with step 0's backward) spreads 1/G
 * to every cell of d_kv. */
static void start_backward(VisionModel *m, int B) {
    VisActs *a = &m->a;
    int H = m->c.hidden, G = m->G;
    if (m->c.start == VIS_START_CONSTANT) {
        for (int b = 0; b < B; b++) vec_axpy(m->g.s0, 1, a->dh + (size_t)b * H, H);
        return;
    }
    nn_real *dmean = a->d_o;
    for (size_t i = 0; i < (size_t)B * H; i++) a->dh[i] *= 1 - a->hs[i] * a->hs[i];
    vec_gemm_tn(m->g.init_w, H, a->mean, H, a->dh, H, H, H, B, 1);
    for (int b = 0; b < B; b++) vec_axpy(m->g.init_b, 1, a->dh + (size_t)b * H, H);
    vec_gemm_nt(dmean, H, a->dh, H, m->w.init_w, H, B, H, H, 0);
    for (int b = 0; b < B; b++)
        for (int g = 0; g < G; g++) vec_axpy(a->d_kv + ((size_t)b * G + g) * H, (nn_real)1 / G, dmean + (size_t)b * H, H);
}

/* ---- decoder: attention over the grid ---------------------------------------------- */

void vis_reinforce_dweights(nn_real *dweights, const nn_real *a, int n, int l, nn_real advantage, nn_real lambda,
                            nn_real scale) {
    /* L = -A log a_l - lambda H(a),  H = -sum_j a_j log a_j:
     * dL/da_j = -A [j == l] / a_l + lambda (log a_j + 1); a_j = 0 terms vanish (a log a -> 0) */
    for (int j = 0; j < n; j++)
        if (a[j] > 0) dweights[j] += scale * lambda * ((nn_real)log(a[j]) + 1);
    if (a[l] > 0) dweights[l] -= scale * advantage / a[l];
}

static int argmax(const nn_real *x, int n) {
    int best = 0;
    for (int j = 1; j < n; j++)
        if (x[j] > x[best]) best = j;
    return best;
}

/* Hard mode: the location of a (n) that the draw u in [0, 1) picks, or its argmax when not sampling. */
static int pick_location(const nn_real *a, int n, int sample, double u) {
    if (!sample) return argmax(a, n);
    int best = 0;
    double cum = 0;
    for (int j = 0; j < n; j++) {
        cum += a[j];
        if (a[j] > 0) best = j;
        if (u < cum) return j;
    }
    return best; /* rounding left u past the sum: the last location with weight */
}

/* The attention layer's buffers at step t (src/layers/attend.h): row b's
 * query s_t over its grid kv (G, H). */
static AttendGrid attention_grid(VisionModel *m, int B, int t) {
    VisActs *a = &m->a;
    size_t tb = (size_t)t * B;
    return (AttendGrid){a->hs + tb * m->c.hidden, a->kv, 0, NULL, NULL, a->scores + tb * m->G, a->weights + tb * m->G,
                        a->ctx + tb * m->c.hidden};
}

/* c_t = attention(s_t, kv) for every row: soft, the weighted sum; hard, the
 * cell the weights pick (drawn when sampling); none, the mean of the grid.
 * Uniform (evaluation only): weights 1/G, so soft reads the mean of the grid
 * (as none does) and hard a location drawn uniformly. */
static int attention_forward(VisionModel *m, int B, int t, const VisRows *r) {
    const VisConfig *c = &m->c;
    VisActs *a = &m->a;
    int H = c->hidden, G = m->G;
    AttendGrid x = attention_grid(m, B, t);
    if (c->attention == VIS_ATTN_NONE || r->uniform) {
        for (int b = 0; b < B; b++) {
            for (int g = 0; g < G; g++) x.weights[(size_t)b * G + g] = (nn_real)1 / G;
            memcpy(x.context + (size_t)b * H, a->mean + (size_t)b * H, sizeof(nn_real) * H);
        }
    } else {
        NN_TRY(attend_forward(&x, &m->w.attn, &m->attn_cfg, B, a->scratch));
    }
    for (int b = 0; b < B; b++) {
        size_t tb = (size_t)t * B + b;
        m->loc[tb] = -1;
        if (c->mode != VIS_HARD || c->attention == VIS_ATTN_NONE) continue;
        if (r->sample && vis_reads_expected(r, b)) continue; /* the soft context stays, location -1 */
        int draw = r->sample || r->uniform;
        int l = pick_location(x.weights + (size_t)b * G, G, draw, draw ? r->draws[(size_t)t * r->ld + b] : 0);
        m->loc[tb] = l;
        memcpy(x.context + (size_t)b * H, a->kv + ((size_t)b * G + l) * H, sizeof(nn_real) * H);
    }
    return NN_OK;
}

/* From dc_t (dcat's first half, copied to d_ctx): dq into dh (B, H), dkv into
 * d_kv; hard mode's scores learn from REINFORCE (and the entropy bonus) on
 * trained rows, and on rows that read the expected context (location -1) as
 * soft attention's do. */
static int attention_backward(VisionModel *m, int B, int t) {
    const VisConfig *c = &m->c;
    VisActs *a = &m->a;
    int H = c->hidden, G = m->G;
    for (int b = 0; b < B; b++) memcpy(a->d_ctx + (size_t)b * H, a->dcat + (size_t)b * 2 * H, sizeof(nn_real) * H);
    AttendGrid x = attention_grid(m, B, t);
    AttendGridGrads d = {a->d_ctx, NULL, a->dh, a->d_kv};
    if (c->attention == VIS_ATTN_NONE) { /* c_t = mean_g kv_g */
        for (int b = 0; b < B; b++)
            for (int g = 0; g < G; g++) vec_axpy(a->d_kv + ((size_t)b * G + g) * H, (nn_real)1 / G, a->d_ctx + (size_t)b * H, H);
        return NN_OK;
    }
    if (c->mode == VIS_SOFT) return attend_backward(&d, &m->g.attn, &x, &m->w.attn, &m->attn_cfg, B, a->scratch);
    /* hard: c_t = kv_l, so the context's gradient goes to that cell alone; the
     * weights learn from the REINFORCE gradient only (a zero context gradient),
     * on trained rows (the others' are zero: they add nothing) */
    int expected = 0; /* rows that read sum_g a_g kv_g: their d_ctx row stays for attend_backward */
    for (int b = 0; b < B; b++) {
        size_t tb = (size_t)t * B + b;
        if (m->loc[tb] < 0) {
            expected = 1;
            continue;
        }
        vec_axpy(a->d_kv + ((size_t)b * G + m->loc[tb]) * H, 1, a->d_ctx + (size_t)b * H, H);
    }
    if (!m->trained_forward) return NN_OK;
    memset(a->dweights, 0, sizeof(nn_real) * B * G);
    for (int b = 0; b < B; b++) {
        size_t tb = (size_t)t * B + b;
        if (m->loc[tb] < 0) continue;
        if (expected) memset(a->d_ctx + (size_t)b * H, 0, sizeof(nn_real) * H); /* its cell has its gradient */
        if (a->lw[tb] != 0)
            vis_reinforce_dweights(a->dweights + (size_t)b * G, x.weights + (size_t)b * G, G, m->loc[tb], a->adv[tb],
                                   c->entropy, a->lw[tb]);
    }
    d.d_context = expected ? a->d_ctx : a->zeros;
    d.d_weights = a->dweights;
    return attend_backward(&d, &m->g.attn, &x, &m->w.attn, &m->attn_cfg, B, a->scratch);
}

/* ---- decoder: the output layer over [c_t; s_t] ---------------------------------------- */

/* cat_t = [c_t; s_t], o_t = tanh(cat_t Wc + bc), p_t = softmax(o_t Wout + bout) */
static void output_step_forward(VisionModel *m, int B, int t) {
    VisActs *a = &m->a;
    int H = m->c.hidden, V = m->V;
    nn_real *cat = a->cat + (size_t)t * B * 2 * H;
    for (int b = 0; b < B; b++) {
        size_t tb = (size_t)t * B + b;
        memcpy(cat + (size_t)b * 2 * H, a->ctx + tb * H, sizeof(nn_real) * H);
        memcpy(cat + (size_t)b * 2 * H + H, a->hs + tb * H, sizeof(nn_real) * H);
    }
    output_forward(a->o + (size_t)t * B * H, a->probs + (size_t)t * B * V, cat, &m->w.out, B, 2 * H, H, V);
}

/* From dlogits: dcat (+=) = [dc_t; ds_t], and ds_t into dh. */
static void output_step_backward(VisionModel *m, int B, int t) {
    VisActs *a = &m->a;
    int H = m->c.hidden, V = m->V;
    output_backward(a->dcat, a->d_o, &m->g.out, a->dlogits, a->cat + (size_t)t * B * 2 * H, a->o + (size_t)t * B * H,
                    &m->w.out, B, 2 * H, H, V);
    for (int b = 0; b < B; b++) vec_axpy(a->dh + (size_t)b * H, 1, a->dcat + (size_t)b * 2 * H + H, H);
}

/* ---- decoder: the loss of step t ------------------------------------------------------ */

/* Each row's token y_t (its label, or the greedy guess past its labels or
 * without them), loss weight (1/count on a label, else 0) and hard mode's
 * advantage; += the labels' -log p_t(y) into *total. */
static void loss_forward(VisionModel *m, int B, int t, const VisRows *r, double *total) {
    VisActs *a = &m->a;
    int T = m->c.steps, V = m->V;
    for (int b = 0; b < B; b++) {
        size_t tb = (size_t)t * B + b;
        const nn_real *pr = a->probs + tb * V;
        int guess = argmax(pr, V);
        if (r->pred) r->pred[(size_t)b * T + t] = guess;
        int valid = r->labels && t < r->n_labels[b];
        int y = valid ? r->labels[(size_t)b * T + t] : guess;
        m->tok[tb] = y;
        a->lw[tb] = valid ? (nn_real)1 / r->count : 0;
        if (valid) *total += crossentropy_forward(pr, y);
        a->adv[tb] = valid && r->sample && !vis_reads_expected(r, b) ? (nn_real)((guess == y) - r->baseline[t]) : 0;
    }
}

/* dlogits (B, V) = lw (p_t - onehot(y_t)) */
static void loss_backward(VisionModel *m, int B, int t) {
    VisActs *a = &m->a;
    int V = m->V;
    for (int b = 0; b < B; b++) {
        size_t tb = (size_t)t * B + b;
        crossentropy_backward(a->dlogits + (size_t)b * V, a->probs + tb * V, m->tok[tb], a->lw[tb], V);
    }
}

/* ---- decoder: the cell ------------------------------------------------------------------ */

/* s_{t+1} = cell(xin_t, s_t), xin_t = [c_t; onehot(y_t)] (the token only for sequences) */
static void cell_forward(VisionModel *m, int B, int t) {
    const VisConfig *c = &m->c;
    VisActs *a = &m->a;
    int H = c->hidden, I = m->I, lstm = c->cell == RNN_CELL_LSTM;
    size_t S = (size_t)rnn_step_cache(c->cell, H);
    nn_real *xin = a->xin + (size_t)t * B * I;
    memset(xin, 0, sizeof(nn_real) * B * I);
    for (int b = 0; b < B; b++) {
        size_t tb = (size_t)t * B + b;
        memcpy(xin + (size_t)b * I, a->ctx + tb * H, sizeof(nn_real) * H);
        if (c->sequence) xin[(size_t)b * I + H + m->tok[tb]] = 1;
    }
    RnnWeights cw = cell_weights(&m->w.cell);
    rnn_step_forward(c->cell, B, I, H, &cw, a->hs + (size_t)(t + 1) * B * H, lstm ? a->cs + (size_t)(t + 1) * B * H : NULL,
                     a->cache + (size_t)t * B * S, xin, I, a->hs + (size_t)t * B * H, lstm ? a->cs + (size_t)t * B * H : NULL,
                     NULL, a->scratch);
}

/* From (dh, dc) = d s_{t+1}: the cell's gradients, dc_t into dcat's first half
 * (+=), and (dh, dc) become d s_t (the buffers swap with dh2, dc2). */
static void cell_backward(VisionModel *m, int B, int t) {
    const VisConfig *c = &m->c;
    VisActs *a = &m->a;
    int H = c->hidden, I = m->I, lstm = c->cell == RNN_CELL_LSTM;
    size_t S = (size_t)rnn_step_cache(c->cell, H);
    RnnWeights cw = cell_weights(&m->w.cell);
    RnnGrads cg = cell_grads(&m->g.cell);
    memset(a->dxin, 0, sizeof(nn_real) * B * I);
    rnn_step_backward(c->cell, B, I, H, &cw, &cg, a->dxin, I, a->dh2, lstm ? a->dc2 : NULL, a->dh, lstm ? a->dc : NULL,
                      a->cache + (size_t)t * B * S, a->xin + (size_t)t * B * I, I, a->hs + (size_t)t * B * H,
                      lstm ? a->cs + (size_t)t * B * H : NULL, NULL, a->scratch);
    for (int b = 0; b < B; b++) vec_axpy(a->dcat + (size_t)b * 2 * H, 1, a->dxin + (size_t)b * I, H);
    nn_real *swap = a->dh;
    a->dh = a->dh2;
    a->dh2 = swap;
    swap = a->dc;
    a->dc = a->dc2;
    a->dc2 = swap;
}

/* ---- the model: its layers in order, and in reverse ---------------------------------------- */

int vis_rows_forward(VisionModel *m, int B, const VisRows *r, double *total) {
    const VisConfig *c = &m->c;
    int T = c->steps, V = m->V;
    m->have_forward = 0;
    m->B = B;
    int retina = c->sensor == VIS_SENSOR_RETINA;
    memcpy(m->a.x, r->images, sizeof(nn_real) * B * c->rows * c->cols);
    if (!retina) {
        for (int l = 0; l < c->layers; l++) conv_block_forward(m, B, l);
        project_forward(m, B);
    }
    start_forward(m, B);
    *total = 0;
    for (int t = 0; t < T; t++) {
        if (retina)
            retina_step_forward(m, B, t, r);
        else
            NN_TRY(attention_forward(m, B, t, r));
        output_step_forward(m, B, t);
        loss_forward(m, B, t, r, total);
        if (t + 1 < T) cell_forward(m, B, t);
    }
    if (retina) retina_reward_forward(m, B, r);
    if (r->sample) /* the rewards of these rows, for the baseline */
        for (int t = 0; t < T; t++) {
            r->hits[t] = r->seen[t] = 0;
            for (int b = 0; b < B; b++)
                if (t < r->n_labels[b] && !vis_reads_expected(r, b)) {
                    r->hits[t] += argmax(m->a.probs + ((size_t)t * B + b) * V, V) == r->labels[(size_t)b * T + t];
                    r->seen[t]++;
                }
        }
    if (r->labels) {
        m->have_forward = 1;
        m->trained_forward = r->sample;
    }
    return NN_OK;
}

int vis_rows_backward(VisionModel *m, nn_real *dimages) {
    const VisConfig *c = &m->c;
    VisActs *a = &m->a;
    int B = m->B, H = c->hidden;
    memset(a->d_kv, 0, sizeof(nn_real) * B * m->G * H);
    memset(a->dh, 0, sizeof(nn_real) * B * H); /* d s_T: no step reads s_T */
    memset(a->dc, 0, sizeof(nn_real) * B * H);
    for (int t = c->steps - 1; t >= 0; t--) {
        memset(a->dcat, 0, sizeof(nn_real) * B * 2 * H); /* collects [dc_t; ds_t] */
        if (t + 1 < c->steps) cell_backward(m, B, t);
        loss_backward(m, B, t);
        output_step_backward(m, B, t);
        if (c->sensor == VIS_SENSOR_RETINA)
            retina_step_backward(m, B, t, dimages);
        else
            NN_TRY(attention_backward(m, B, t));
    }
    start_backward(m, B);
    if (c->sensor == VIS_SENSOR_RETINA) return NN_OK;
    project_backward(m, B);
    for (int l = c->layers - 1; l >= 0; l--) conv_block_backward(m, B, l, dimages);
    return NN_OK;
}
