/* CNN encoder + recurrent attention decoder over its feature grid
 * (include/attnlab/vision.h): parameters, forward, backward, optimiser.
 * Serialisation lives in vision_io.c.
 *
 * Dimension letters: B batch rows, R x Q canvas, C_l channels, G = gr x gc
 * grid cells, H hidden (= key/value size), V tokens, I = H + V the cell's
 * input, T steps, S the cell's cache per row. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/layout.h"
#include "base/rng.h"
#include "core/conv.h"
#include "core/vec.h"
#include "layers/shards.h"
#include "models/vision_internal.h"

/* ---- the parameter table ------------------------------------------------- */

static void add_tensor(VisionModel *m, nn_real **slot, size_t count, int fan_in, OptInit init) {
    opt_add(&m->opt, slot, count, fan_in, init);
}

static void build_table(VisionModel *m) {
    const VisConfig *c = &m->c;
    int H = c->hidden, GH = rnn_gates(c->cell) * H;
    m->opt.n_tensors = 0;
    m->opt.n = 0;
    for (int l = 0; l < c->layers; l++) {
        add_tensor(m, &m->w.conv_w[l], (size_t)9 * m->cin[l] * c->channels[l], 9 * m->cin[l], OPT_INIT_HE);
        add_tensor(m, &m->w.conv_b[l], (size_t)c->channels[l], 0, OPT_INIT_ZERO);
    }
    int CL = c->channels[c->layers - 1];
    add_tensor(m, &m->w.proj_w, (size_t)CL * H, CL, OPT_INIT_UNIFORM);
    add_tensor(m, &m->w.proj_b, (size_t)H, 0, OPT_INIT_ZERO);
    add_tensor(m, &m->w.pos, (size_t)m->G * H, 4 * H, OPT_INIT_UNIFORM);
    add_tensor(m, &m->w.init_w, (size_t)H * H, H, OPT_INIT_UNIFORM);
    add_tensor(m, &m->w.init_b, (size_t)H, 0, OPT_INIT_ZERO);
    add_tensor(m, &m->w.Wx, (size_t)m->I * GH, m->I, OPT_INIT_UNIFORM);
    add_tensor(m, &m->w.Wh, (size_t)H * GH, H, OPT_INIT_UNIFORM);
    add_tensor(m, &m->w.bx, (size_t)GH, 0, c->cell == RNN_CELL_LSTM ? OPT_INIT_FORGET : OPT_INIT_ZERO);
    add_tensor(m, &m->w.bh, (size_t)GH, 0, OPT_INIT_ZERO);
    switch (c->attention) {
    case ATTN_SCORE_GENERAL: add_tensor(m, &m->w.attn_W, (size_t)H * H, H, OPT_INIT_UNIFORM); break;
    case ATTN_SCORE_LOCATION: add_tensor(m, &m->w.attn_W, (size_t)m->G * H, H, OPT_INIT_UNIFORM); break;
    case ATTN_SCORE_ADDITIVE:
        add_tensor(m, &m->w.attn_Wq, (size_t)H * H, H, OPT_INIT_UNIFORM);
        add_tensor(m, &m->w.attn_Wk, (size_t)H * H, H, OPT_INIT_UNIFORM);
        add_tensor(m, &m->w.attn_v, (size_t)H, H, OPT_INIT_UNIFORM);
        break;
    case ATTN_SCORE_COSINE: add_tensor(m, &m->w.attn_beta, 1, 0, OPT_INIT_ONE); break;
    default: break;
    }
    add_tensor(m, &m->w.Wc, (size_t)2 * H * H, 2 * H, OPT_INIT_UNIFORM);
    add_tensor(m, &m->w.bc, (size_t)H, 0, OPT_INIT_ZERO);
    add_tensor(m, &m->w.Wout, (size_t)H * m->V, H, OPT_INIT_UNIFORM);
    add_tensor(m, &m->w.bout, (size_t)m->V, 0, OPT_INIT_ZERO);
}

/* ---- activations: one block, carved by a table ---------------------------- */

/* Reserves count reals of the block (NULL while sizing) for *slot. */
static void carve(nn_real **slot, nn_real *block, NnLayout *l, size_t count) {
    size_t at = nn_layout_take(l, count);
    if (block) *slot = block + at;
}

static void build_acts(VisionModel *m, nn_real *block) {
    const VisConfig *c = &m->c;
    size_t B = (size_t)m->rows, H = (size_t)c->hidden, T = (size_t)c->steps, G = (size_t)m->G, V = (size_t)m->V,
           I = (size_t)m->I, S = (size_t)rnn_step_cache(c->cell, c->hidden);
    VisActs *a = &m->a;
    NnLayout at = {0};
    carve(&a->x, block, &at, B * c->rows * c->cols);
    size_t scratch = rnn_step_scratch(c->cell, (int)B, c->hidden);
    for (int l = 0; l < c->layers; l++) {
        size_t full = (size_t)m->hl[l] * m->wl[l] * c->channels[l];
        size_t half = (size_t)(m->hl[l] / 2) * (m->wl[l] / 2) * c->channels[l];
        carve(&a->relu[l], block, &at, B * full);
        carve(&a->d_relu[l], block, &at, B * full);
        carve(&a->pool[l], block, &at, B * half);
        carve(&a->d_pool[l], block, &at, B * half);
        size_t col = (size_t)conv_col_size(m->hl[l], m->wl[l], m->cin[l]);
        if (col > scratch) scratch = col;
    }
    carve(&a->kv, block, &at, B * G * H);
    carve(&a->d_kv, block, &at, B * G * H);
    carve(&a->mean, block, &at, B * H);
    carve(&a->hs, block, &at, T * B * H);
    carve(&a->cs, block, &at, T * B * H);
    carve(&a->cache, block, &at, T * B * S);
    carve(&a->xin, block, &at, T * B * I);
    carve(&a->scores, block, &at, T * B * G);
    carve(&a->weights, block, &at, T * B * G);
    carve(&a->cat, block, &at, T * B * 2 * H);
    carve(&a->o, block, &at, T * B * H);
    carve(&a->probs, block, &at, T * B * V);
    carve(&a->lw, block, &at, T * B);
    carve(&a->adv, block, &at, T * B);
    carve(&a->dh, block, &at, B * H);
    carve(&a->dc, block, &at, B * H);
    carve(&a->dh2, block, &at, B * H);
    carve(&a->dc2, block, &at, B * H);
    carve(&a->dxin, block, &at, B * I);
    carve(&a->dcat, block, &at, B * 2 * H);
    carve(&a->dout, block, &at, B * H);
    carve(&a->dlogits, block, &at, B * V);
    carve(&a->dweights, block, &at, G);
    carve(&a->zeros, block, &at, B * H);
    if (c->attention != VIS_ATTN_NONE) {
        AttnConfig ac = m->attn_cfg;
        if (attn_scratch_size(&ac) > scratch) scratch = attn_scratch_size(&ac);
    }
    carve(&a->scratch, block, &at, scratch);
    m->n_acts = at.size;
}

/* The integer buffers for m->rows rows: each layer's pool argmax, then loc
 * and tok. Sizes them (block NULL) or carves m->ints. */
static size_t carve_ints(VisionModel *m, int32_t *block) {
    const VisConfig *c = &m->c;
    size_t at = 0;
    for (int l = 0; l < c->layers; l++) {
        if (block) m->idx[l] = block + at;
        at += (size_t)m->rows * (m->hl[l] / 2) * (m->wl[l] / 2) * c->channels[l];
    }
    if (block) {
        m->loc = block + at;
        m->tok = block + at + (size_t)c->steps * m->rows;
    }
    return at + 2 * (size_t)c->steps * m->rows;
}

/* ---- shard replicas ------------------------------------------------------- */

static void replica_destroy(VisionModel *r) {
    if (!r) return;
    free(r->acts);
    free(r->ints);
    free(r->grads);
    free(r);
}

/* One shard's buffers for up to `rows` rows: the model's sizes and weight
 * view, its own activations, indices and gradients (g views them); NULL when
 * out of memory. The model's weights must be bound (m->w) before. */
static VisionModel *replica_create(const VisionModel *m, int rows) {
    VisionModel *r = malloc(sizeof *r);
    if (!r) return NULL;
    *r = *m; /* sizes, configuration and the weight view; everything owned is replaced below */
    r->opt = (OptParams){0};
    r->draws = NULL;
    r->n_shards = 1;
    memset(r->replica, 0, sizeof r->replica);
    r->rows = rows;
    r->have_forward = 0;
    build_acts(r, NULL);
    r->acts = calloc(r->n_acts, sizeof(nn_real));
    r->ints = calloc(carve_ints(r, NULL), sizeof(int32_t));
    r->grads = calloc(m->opt.n, sizeof(nn_real));
    if (!r->acts || !r->ints || !r->grads) {
        replica_destroy(r);
        return NULL;
    }
    build_acts(r, r->acts);
    carve_ints(r, r->ints);
    opt_bind_grads(&m->opt, &m->w, &r->g, r->grads);
    return r;
}

/* Replicas for n shards of batches of up to c.batch rows; on failure the old ones stay. */
static int set_shards(VisionModel *m, int n) {
    VisionModel *replica[NN_MAX_THREADS] = {0};
    int rows = (m->c.batch + n - 1) / n; /* the largest shard nn_pool_range makes of a full batch */
    for (int s = 1; s < n; s++)
        if (!(replica[s] = replica_create(m, rows))) {
            while (--s >= 1) replica_destroy(replica[s]);
            return nn_fail(NN_ERR_NOMEM, "createVisionModel: out of memory for the buffers of %d threads", n);
        }
    for (int s = 1; s < m->n_shards; s++) replica_destroy(m->replica[s]);
    memcpy(m->replica, replica, sizeof replica);
    m->n_shards = n;
    m->opt.chunks = n; /* the optimiser's passes split alike */
    m->have_forward = 0;
    return NN_OK;
}

int vis_set_shards(VisionModel *m, int n) {
    if (n < 0 || n > NN_MAX_THREADS) return nn_fail(NN_ERR_LIMIT, "shards: %d is outside 0..%d", n, NN_MAX_THREADS);
    return set_shards(m, n ? n : nn_pool_threads());
}

/* ---- create / destroy ------------------------------------------------------ */

static int check_config(const VisConfig *c) {
    if (c->rows < 2 || c->cols < 2 || c->rows > VIS_MAX_IMAGE || c->cols > VIS_MAX_IMAGE)
        return nn_fail(NN_ERR_SHAPE, "canvas: %d x %d; allowed 2..%d on each side", c->rows, c->cols, VIS_MAX_IMAGE);
    if (c->layers < 1 || c->layers > VIS_MAX_LAYERS)
        return nn_fail(NN_ERR_LIMIT, "channels: %d conv layers; allowed 1..%d", c->layers, VIS_MAX_LAYERS);
    for (int l = 0; l < c->layers; l++)
        if (c->channels[l] < 1 || c->channels[l] > VIS_MAX_CHANNELS)
            return nn_fail(NN_ERR_LIMIT, "channels: layer %d has %d; allowed 1..%d", l + 1, c->channels[l], VIS_MAX_CHANNELS);
    if ((c->rows >> c->layers) < 1 || (c->cols >> c->layers) < 1)
        return nn_fail(NN_ERR_SHAPE, "channels: %d pooling layers leave no grid of a %d x %d canvas", c->layers, c->rows, c->cols);
    if ((unsigned)c->cell >= RNN_CELL_COUNT) return nn_fail(NN_ERR_ARG, "cell: unknown cell %d", (int)c->cell);
    if (c->hidden < 1 || c->hidden > VIS_MAX_HIDDEN)
        return nn_fail(NN_ERR_LIMIT, "hidden: %d; allowed 1..%d", c->hidden, VIS_MAX_HIDDEN);
    if (c->attention != VIS_ATTN_NONE && (c->attention < 0 || c->attention >= ATTN_SCORE_COUNT))
        return nn_fail(NN_ERR_ARG, "attention: unknown score %d", c->attention);
    if (c->mode != VIS_SOFT && c->mode != VIS_HARD) return nn_fail(NN_ERR_ARG, "mode: unknown mode %d", (int)c->mode);
    if (c->steps < 1 || c->steps > VIS_MAX_STEPS)
        return nn_fail(NN_ERR_LIMIT, "steps: %d; allowed 1..%d", c->steps, VIS_MAX_STEPS);
    if (!(c->entropy >= 0) || !isfinite(c->entropy))
        return nn_fail(NN_ERR_VALUE, "entropy: %g; must be a finite number >= 0", (double)c->entropy);
    if (c->batch < 1 || c->batch > VIS_MAX_BATCH)
        return nn_fail(NN_ERR_LIMIT, "batch: %d; allowed 1..%d", c->batch, VIS_MAX_BATCH);
    return NN_OK;
}

int vis_create(VisionModel **out, const VisConfig *c) {
    *out = NULL;
    nn_clear_error();
    NN_TRY(check_config(c));
    VisionModel *m = calloc(1, sizeof *m);
    if (!m) return nn_fail(NN_ERR_NOMEM, "createVisionModel: out of memory");
    m->c = *c;
    int h = c->rows, w = c->cols, cin = 1;
    for (int l = 0; l < c->layers; l++) {
        m->hl[l] = h;
        m->wl[l] = w;
        m->cin[l] = cin;
        h /= 2;
        w /= 2;
        cin = c->channels[l];
    }
    m->gr = h;
    m->gc = w;
    m->G = h * w;
    m->V = VIS_TOKENS;
    m->I = c->hidden + m->V;
    int H = c->hidden;
    AttnConfig ac = {1, m->G, H, H, H, H, c->attention == VIS_ATTN_NONE ? ATTN_SCORE_DOT : (AttnScore)c->attention,
                     ATTN_NORM_SOFTMAX, 1, 0, NULL};
    m->attn_cfg = ac;
    m->rows = c->batch;
    build_table(m);
    build_acts(m, NULL);
    int st = opt_alloc(&m->opt);
    m->acts = calloc(m->n_acts, sizeof(nn_real));
    m->ints = calloc(carve_ints(m, NULL), sizeof(int32_t));
    m->draws = calloc((size_t)c->steps * c->batch, sizeof(double));
    if (st != NN_OK || !m->acts || !m->ints || !m->draws) {
        size_t params = m->opt.n, acts = m->n_acts;
        vis_destroy(m);
        return nn_fail(NN_ERR_NOMEM, "createVisionModel: out of memory for %zu parameters and %zu activations",
                       params, acts);
    }
    opt_bind(&m->opt, &m->w, &m->g); /* before the replicas: they share this weight view */
    build_acts(m, m->acts);
    carve_ints(m, m->ints);
    m->n_shards = 1;
    if ((st = set_shards(m, nn_pool_threads())) != NN_OK) {
        vis_destroy(m);
        return st;
    }
    opt_init(&m->opt, c->seed);
    m->rng = c->seed ^ 0x5EED0F1A77E4710Aull;
    *out = m;
    return NN_OK;
}

void vis_destroy(VisionModel *m) {
    if (!m) return;
    opt_free(&m->opt);
    free(m->acts);
    free(m->ints);
    free(m->draws);
    for (int s = 1; s < m->n_shards; s++) replica_destroy(m->replica[s]);
    free(m);
}

const VisConfig *vis_config(const VisionModel *m) { return &m->c; }
size_t vis_num_params(const VisionModel *m) { return m->opt.n; }
nn_real *vis_params(VisionModel *m) { return m->opt.params; }
nn_real *vis_grads(VisionModel *m) { return m->opt.grads; }
int vis_steps_taken(const VisionModel *m) { return m->opt.steps; }
void vis_zero_grad(VisionModel *m) { opt_zero_grad(&m->opt); }

void vis_grid(const VisionModel *m, int *gr, int *gc) {
    *gr = m->gr;
    *gc = m->gc;
}

static AttnParams attn_params(const VisionModel *m) {
    AttnParams p = {m->w.attn_W, m->w.attn_Wq, m->w.attn_Wk, m->w.attn_v, m->w.attn_beta ? m->w.attn_beta[0] : 1};
    return p;
}

static RnnWeights cell_weights(const VisionModel *m) {
    RnnWeights w = {m->w.Wx, m->w.Wh, m->w.bx, m->w.bh};
    return w;
}

/* ---- the encoder: L x (conv 3x3, ReLU, max-pool 2x2), 1x1 conv ------------- */

static void encoder_forward(VisionModel *m, int B) {
    const VisConfig *c = &m->c;
    VisActs *a = &m->a;
    for (int b = 0; b < B; b++)
        for (int l = 0; l < c->layers; l++) {
            int h = m->hl[l], w = m->wl[l], Ci = m->cin[l], Co = c->channels[l];
            size_t in = (size_t)h * w * Ci, full = (size_t)h * w * Co, half = (size_t)(h / 2) * (w / 2) * Co;
            const nn_real *x = l == 0 ? a->x + (size_t)b * in : a->pool[l - 1] + (size_t)b * in;
            nn_real *y = a->relu[l] + (size_t)b * full;
            conv_3x3_forward(y, x, m->w.conv_w[l], m->w.conv_b[l], h, w, Ci, Co, a->scratch);
            conv_relu_forward(y, y, (long)full);
            conv_pool_forward(a->pool[l] + (size_t)b * half, m->idx[l] + (size_t)b * half, y, h, w, Co);
        }
    int H = c->hidden, CL = c->channels[c->layers - 1];
    conv_1x1_forward(a->kv, a->pool[c->layers - 1], m->w.proj_w, m->w.proj_b, B * m->G, CL, H);
    /* kv_bg += pos_g: without it the cells are a bag of features with no place */
    for (int b = 0; b < B; b++) vec_axpy(a->kv + (size_t)b * m->G * H, 1, m->w.pos, m->G * H);
}

/* Backward from d_kv; dimages (B, R, Q) += or NULL. */
static void encoder_backward(VisionModel *m, int B, nn_real *dimages) {
    const VisConfig *c = &m->c;
    VisActs *a = &m->a;
    int H = c->hidden, L = c->layers, CL = c->channels[L - 1];
    size_t last = (size_t)B * m->G * CL;
    for (int b = 0; b < B; b++) vec_axpy(m->g.pos, 1, a->d_kv + (size_t)b * m->G * H, m->G * H);
    memset(a->d_pool[L - 1], 0, sizeof(nn_real) * last);
    conv_1x1_backward(a->d_pool[L - 1], m->g.proj_w, m->g.proj_b, a->d_kv, a->pool[L - 1], m->w.proj_w, B * m->G, CL, H);
    for (int l = L - 1; l >= 0; l--) {
        int h = m->hl[l], w = m->wl[l], Ci = m->cin[l], Co = c->channels[l];
        size_t in = (size_t)h * w * Ci, full = (size_t)h * w * Co, half = (size_t)(h / 2) * (w / 2) * Co;
        if (l > 0) memset(a->d_pool[l - 1], 0, sizeof(nn_real) * B * in);
        for (int b = 0; b < B; b++) {
            nn_real *dr = a->d_relu[l] + (size_t)b * full;
            memset(dr, 0, sizeof(nn_real) * full);
            conv_pool_backward(dr, a->d_pool[l] + (size_t)b * half, m->idx[l] + (size_t)b * half, h, w, Co);
            /* ReLU backward in place: dr *= [relu > 0] (conv_relu_backward accumulates; dr would double) */
            const nn_real *y = a->relu[l] + (size_t)b * full;
            for (size_t i = 0; i < full; i++)
                if (!(y[i] > 0)) dr[i] = 0;
            const nn_real *x = l == 0 ? a->x + (size_t)b * in : a->pool[l - 1] + (size_t)b * in;
            nn_real *dx = l > 0 ? a->d_pool[l - 1] + (size_t)b * in : dimages ? dimages + (size_t)b * in : NULL;
            conv_3x3_backward(dx, m->g.conv_w[l], m->g.conv_b[l], dr, x, m->w.conv_w[l], h, w, Ci, Co, a->scratch);
        }
    }
}

/* ---- hard attention ---------------------------------------------------------- */

void vis_reinforce_dweights(nn_real *dweights, const nn_real *a, int n, int l, nn_real advantage, nn_real lambda,
                            nn_real scale) {
    /* L = -A log a_l - lambda H(a),  H = -sum_j a_j log a_j:
     * dL/da_j = -A [j == l] / a_l + lambda (log a_j + 1); a_j = 0 terms vanish (a log a -> 0) */
    for (int j = 0; j < n; j++)
        if (a[j] > 0) dweights[j] += scale * lambda * ((nn_real)log(a[j]) + 1);
    if (a[l] > 0) dweights[l] -= scale * advantage / a[l];
}

/* A uniform draw in [0, 1) of 53 bits. */
static double uniform(uint64_t *rng) { return (double)(nn_rng_next(rng) >> 11) / 9007199254740992.0; }

/* The location of a (n) that the draw u in [0, 1) picks, or its argmax when not sampling. */
static int pick_location(const nn_real *a, int n, int sample, double u) {
    int best = 0;
    if (!sample) {
        for (int j = 1; j < n; j++)
            if (a[j] > a[best]) best = j;
        return best;
    }
    double cum = 0;
    for (int j = 0; j < n; j++) {
        cum += a[j];
        if (a[j] > 0) best = j;
        if (u < cum) return j;
    }
    return best; /* rounding left u past the sum: the last location with weight */
}

/* ---- the decoder ------------------------------------------------------------- */

static int argmax(const nn_real *x, int n) {
    int best = 0;
    for (int j = 1; j < n; j++)
        if (x[j] > x[best]) best = j;
    return best;
}

/* Attention of step t for every row: weights, context c_t into cat's first
 * half; hard mode's draw for row b at draws[t * ld + b] when sampling. */
static int attend_forward(VisionModel *m, int B, int t, int sample, const double *draws, int ld) {
    const VisConfig *c = &m->c;
    VisActs *a = &m->a;
    int H = c->hidden, G = m->G;
    AttnParams p = attn_params(m);
    for (int b = 0; b < B; b++) {
        size_t tb = (size_t)t * B + b;
        nn_real *w = a->weights + tb * G, *ctx = a->cat + tb * 2 * H;
        const nn_real *kv = a->kv + (size_t)b * G * H;
        m->loc[tb] = -1;
        if (c->attention == VIS_ATTN_NONE) {
            for (int g = 0; g < G; g++) w[g] = (nn_real)1 / G;
            memcpy(ctx, a->mean + (size_t)b * H, sizeof(nn_real) * H);
            continue;
        }
        NN_TRY(attn_forward(&m->attn_cfg, &p, a->scores + tb * G, w, ctx, a->hs + tb * H, kv, kv, a->scratch));
        if (c->mode == VIS_HARD) {
            int l = pick_location(w, G, sample, sample ? draws[(size_t)t * ld + b] : 0);
            m->loc[tb] = l;
            memcpy(ctx, kv + (size_t)l * H, sizeof(nn_real) * H);
        }
    }
    return NN_OK;
}

/* o_t = tanh([c_t; s_t] Wc + bc), p_t = softmax(o_t Wout + bout) for the B rows of step t. */
static void output_forward(VisionModel *m, int B, int t) {
    VisActs *a = &m->a;
    int H = m->c.hidden, V = m->V;
    nn_real *cat = a->cat + (size_t)t * B * 2 * H, *o = a->o + (size_t)t * B * H, *p = a->probs + (size_t)t * B * V;
    for (int b = 0; b < B; b++) memcpy(cat + (size_t)b * 2 * H + H, a->hs + ((size_t)t * B + b) * H, sizeof(nn_real) * H);
    vec_gemm_nn(o, H, cat, 2 * H, m->w.Wc, H, B, H, 2 * H, 0);
    for (int b = 0; b < B; b++) {
        vec_axpy(o + (size_t)b * H, 1, m->w.bc, H);
        vec_tanh(o + (size_t)b * H, o + (size_t)b * H, H);
    }
    vec_gemm_nn(p, V, o, H, m->w.Wout, V, B, V, H, 0);
    for (int b = 0; b < B; b++) {
        nn_real *r = p + (size_t)b * V;
        vec_axpy(r, 1, m->w.bout, V);
        nn_real s = vec_exp_sum(r, r, vec_max(r, V), V);
        vec_scale(r, 1 / s, V);
    }
}

static int check_batch(const VisionModel *m, int B, const nn_real *images, const int32_t *labels,
                       const int32_t *n_labels) {
    if (B < 1 || B > m->c.batch) return nn_fail(NN_ERR_LIMIT, "batch: %d rows; this model takes 1..%d", B, m->c.batch);
    NN_TRY(nn_check_finite("images", images, (size_t)B * m->c.rows * m->c.cols));
    if (!labels) return NN_OK;
    for (int b = 0; b < B; b++) {
        if (n_labels[b] < 1 || n_labels[b] > m->c.steps)
            return nn_fail(NN_ERR_SHAPE, "labels: row %d has %d tokens; this model reads 1..%d", b, n_labels[b], m->c.steps);
        for (int t = 0; t < n_labels[b]; t++)
            if (labels[(size_t)b * m->c.steps + t] < 0 || labels[(size_t)b * m->c.steps + t] >= m->V)
                return nn_fail(NN_ERR_VALUE, "labels: row %d step %d is %d; tokens are 0..%d", b, t,
                               labels[(size_t)b * m->c.steps + t], m->V - 1);
    }
    return NN_OK;
}

/* A forward pass over the whole batch, shard by shard: its arguments, and
 * what each shard reports back for hard mode's baseline. */
typedef struct {
    VisionModel *m;
    const nn_real *images;      /* (B, R, Q) */
    const int32_t *labels;      /* (B, T) or NULL */
    const int32_t *n_labels;    /* (B) or NULL */
    int32_t *pred;              /* (B, T) or NULL */
    nn_real *dimages;           /* backward: (B, R, Q) += or NULL */
    int count;                  /* the batch's valid steps: each one's loss weight is 1/count */
    int sample;                 /* hard mode, training: locations are drawn */
    int hits[NN_MAX_THREADS][VIS_MAX_STEPS]; /* sampling: per shard and step, rows whose argmax is the label */
    int seen[NN_MAX_THREADS][VIS_MAX_STEPS]; /* and rows with a label at that step */
} VisPass;

/* The forward of B rows on m (the model, or a shard's replica) from images
 * (B, R, Q), labels (B, T) / n_labels (B) or NULL, pred (B, T) or NULL; the
 * loss's sum into *total. draws (T, ld) and baseline (T): the whole batch's,
 * read. With sampling, hits and seen (T) count this shard's rows for the
 * baseline's update. */
static int rows_forward(VisionModel *m, int B, const VisPass *p, int b0, double *total, int *hits, int *seen) {
    const VisConfig *c = &m->c;
    VisActs *a = &m->a;
    int H = c->hidden, G = m->G, V = m->V, T = c->steps, I = m->I, count = p->count, sample = p->sample;
    const nn_real *images = p->images + (size_t)b0 * c->rows * c->cols;
    const int32_t *labels = p->labels ? p->labels + (size_t)b0 * T : NULL;
    const int32_t *n_labels = p->n_labels ? p->n_labels + b0 : NULL;
    int32_t *pred = p->pred ? p->pred + (size_t)b0 * T : NULL;
    const double *draws = p->m->draws + b0, *baseline = p->m->baseline;
    int ld = p->m->batch_B;
    m->have_forward = 0;
    m->B = B;
    memcpy(a->x, images, sizeof(nn_real) * B * c->rows * c->cols);
    encoder_forward(m, B);
    /* mean_b = (1/G) sum_g kv_bg;  s_0 = tanh(mean W0 + b0), LSTM c_0 = 0 */
    for (int b = 0; b < B; b++) {
        nn_real *mu = a->mean + (size_t)b * H;
        memset(mu, 0, sizeof(nn_real) * H);
        for (int g = 0; g < G; g++) vec_axpy(mu, (nn_real)1 / G, a->kv + ((size_t)b * G + g) * H, H);
    }
    vec_gemm_nn(a->hs, H, a->mean, H, m->w.init_w, H, B, H, H, 0);
    for (int b = 0; b < B; b++) {
        vec_axpy(a->hs + (size_t)b * H, 1, m->w.init_b, H);
        vec_tanh(a->hs + (size_t)b * H, a->hs + (size_t)b * H, H);
    }
    memset(a->cs, 0, sizeof(nn_real) * B * H);
    *total = 0;
    RnnWeights cw = cell_weights(m);
    int lstm = c->cell == RNN_CELL_LSTM;
    for (int t = 0; t < T; t++) {
        NN_TRY(attend_forward(m, B, t, sample, draws, ld));
        output_forward(m, B, t);
        for (int b = 0; b < B; b++) {
            size_t tb = (size_t)t * B + b;
            const nn_real *pr = a->probs + tb * V;
            int guess = argmax(pr, V);
            if (pred) pred[(size_t)b * T + t] = guess;
            int valid = labels && t < n_labels[b];
            int y = valid ? labels[(size_t)b * T + t] : guess;
            m->tok[tb] = y;
            a->lw[tb] = valid ? (nn_real)1 / count : 0;
            if (valid) *total -= log(pr[y] > 0 ? (double)pr[y] : DBL_MIN); /* p underflowed: a huge but finite loss */
            a->adv[tb] = valid && sample ? (nn_real)((guess == y) - baseline[t]) : 0;
        }
        if (t + 1 == T) break;
        /* s_{t+1} = cell([c_t; onehot(y_t)], s_t) */
        nn_real *xin = a->xin + (size_t)t * B * I;
        memset(xin, 0, sizeof(nn_real) * B * I);
        for (int b = 0; b < B; b++) {
            size_t tb = (size_t)t * B + b;
            memcpy(xin + (size_t)b * I, a->cat + tb * 2 * H, sizeof(nn_real) * H);
            if (c->sequence) xin[(size_t)b * I + H + m->tok[tb]] = 1;
        }
        size_t S = (size_t)rnn_step_cache(c->cell, H);
        rnn_step_forward(c->cell, B, I, H, &cw, a->hs + (size_t)(t + 1) * B * H,
                         lstm ? a->cs + (size_t)(t + 1) * B * H : NULL, a->cache + (size_t)t * B * S, xin, I,
                         a->hs + (size_t)t * B * H, lstm ? a->cs + (size_t)t * B * H : NULL, NULL, a->scratch);
    }
    if (sample) /* the rewards of this shard's rows, for the baseline */
        for (int t = 0; t < T; t++) {
            hits[t] = seen[t] = 0;
            for (int b = 0; b < B; b++)
                if (t < n_labels[b]) {
                    size_t tb = (size_t)t * B + b;
                    hits[t] += argmax(a->probs + tb * V, V) == labels[(size_t)b * T + t];
                    seen[t]++;
                }
        }
    if (labels) {
        m->have_forward = 1;
        m->trained_forward = sample;
    }
    return NN_OK;
}

/* Rows [b0, b1) of shard s of the last forward's batch, and the model or replica that runs them. */
static VisionModel *shard_rows(VisionModel *m, int s, int *b0, int *b1) {
    nn_pool_range(m->batch_B, s, m->shards, b0, b1);
    return s ? m->replica[s] : m;
}

static int forward_task(void *ctx, int s, double *total) {
    VisPass *p = ctx;
    int b0, b1;
    VisionModel *r = shard_rows(p->m, s, &b0, &b1);
    return rows_forward(r, b1 - b0, p, b0, total, p->hits[s], p->seen[s]);
}

/* Multiply-adds of a pass over B rows, roughly: the convolutions, and one per parameter and row. */
static double pass_work(const VisionModel *m, int B) {
    double per_row = (double)m->opt.n;
    for (int l = 0; l < m->c.layers; l++) per_row += 9.0 * m->hl[l] * m->wl[l] * m->cin[l] * m->c.channels[l];
    return per_row * B;
}

int vis_forward(VisionModel *m, int B, const nn_real *images, const int32_t *labels, const int32_t *n_labels,
                int train, nn_real *loss, int32_t *pred) {
    NN_TRY(check_batch(m, B, images, labels, n_labels));
    const VisConfig *c = &m->c;
    int T = c->steps;
    VisPass p = {.m = m, .images = images, .labels = labels, .n_labels = n_labels, .pred = pred};
    p.sample = train && c->mode == VIS_HARD && c->attention != VIS_ATTN_NONE;
    if (labels)
        for (int b = 0; b < B; b++) p.count += n_labels[b];
    /* the draws in the order one thread takes them, so every split of the batch draws alike */
    if (p.sample)
        for (int i = 0; i < T * B; i++) m->draws[i] = uniform(&m->rng);
    m->have_forward = 0;
    m->batch_B = B;
    m->shards = B < m->n_shards ? B : m->n_shards;
    double total = 0;
    NN_TRY(shards_run(forward_task, &p, m->shards, pass_work(m, B), &total));
    if (p.sample) /* b_t <- 0.9 b_t + 0.1 mean reward (after this batch's advantages used the old b_t) */
        for (int t = 0; t < T; t++) {
            int hits = 0, seen = 0;
            for (int s = 0; s < m->shards; s++) {
                hits += p.hits[s][t];
                seen += p.seen[s][t];
            }
            if (seen) m->baseline[t] = 0.9 * m->baseline[t] + 0.1 * hits / seen;
        }
    if (labels) {
        if (loss) *loss = (nn_real)(total / p.count);
        m->have_forward = 1;
        m->trained_forward = p.sample;
    }
    return NN_OK;
}

/* Backward of step t's attention for every row: dctx row b at dctx + b * ldctx
 * (dcat's first half); dq accumulates into dh (B, H), dkv into d_kv. */
static int attend_backward(VisionModel *m, int B, int t, const nn_real *dctx, int ldctx) {
    const VisConfig *c = &m->c;
    VisActs *a = &m->a;
    int H = c->hidden, G = m->G;
    AttnParams p = attn_params(m);
    AttnParamGrads g = {m->g.attn_W, m->g.attn_Wq, m->g.attn_Wk, m->g.attn_v, 0};
    for (int b = 0; b < B; b++) {
        size_t tb = (size_t)t * B + b;
        const nn_real *dc = dctx + (size_t)b * ldctx, *kv = a->kv + (size_t)b * G * H;
        nn_real *dkv = a->d_kv + (size_t)b * G * H, *q = a->hs + tb * H;
        if (c->attention == VIS_ATTN_NONE) { /* c_t = mean_g kv_g */
            for (int gi = 0; gi < G; gi++) vec_axpy(dkv + (size_t)gi * H, (nn_real)1 / G, dc, H);
            continue;
        }
        const nn_real *sc = a->scores + tb * G, *w = a->weights + tb * G;
        if (c->mode == VIS_SOFT) {
            NN_TRY(attn_backward(&m->attn_cfg, &p, &g, a->dh + (size_t)b * H, dkv, dkv, dc, NULL, sc, w, q, kv, kv, a->scratch));
            continue;
        }
        /* hard: c_t = kv_l; the scores learn from REINFORCE (and the entropy bonus) */
        int l = m->loc[tb];
        vec_axpy(dkv + (size_t)l * H, 1, dc, H);
        if (!m->trained_forward || a->lw[tb] == 0) continue;
        memset(a->dweights, 0, sizeof(nn_real) * G);
        vis_reinforce_dweights(a->dweights, w, G, l, a->adv[tb], c->entropy, a->lw[tb]);
        NN_TRY(attn_backward(&m->attn_cfg, &p, &g, a->dh + (size_t)b * H, dkv, NULL, a->zeros, a->dweights, sc, w, q, kv,
                             kv, a->scratch));
    }
    if (m->g.attn_beta) m->g.attn_beta[0] += g.beta;
    return NN_OK;
}

/* The backward of the last forward's B rows on m (the model or a shard's
 * replica) into its gradients; dimages (B, R, Q) += or NULL. */
static int rows_backward(VisionModel *m, nn_real *dimages) {
    const VisConfig *c = &m->c;
    VisActs *a = &m->a;
    int B = m->B, H = c->hidden, G = m->G, V = m->V, T = c->steps, I = m->I, lstm = c->cell == RNN_CELL_LSTM;
    size_t S = (size_t)rnn_step_cache(c->cell, H);
    RnnWeights cw = cell_weights(m);
    RnnGrads cg = {m->g.Wx, m->g.Wh, m->g.bx, m->g.bh};
    memset(a->d_kv, 0, sizeof(nn_real) * B * G * H);
    memset(a->dh, 0, sizeof(nn_real) * B * H);
    memset(a->dc, 0, sizeof(nn_real) * B * H);
    for (int t = T - 1; t >= 0; t--) {
        /* dcat (B, 2H) collects dc_t (first half) and ds_t (second half) */
        memset(a->dcat, 0, sizeof(nn_real) * B * 2 * H);
        if (t + 1 < T) {
            /* s_{t+1} = cell(xin_t, s_t): dxin_t, and (dh, dc) become the gradients of s_t */
            memset(a->dxin, 0, sizeof(nn_real) * B * I);
            rnn_step_backward(c->cell, B, I, H, &cw, &cg, a->dxin, I, a->dh2, lstm ? a->dc2 : NULL, a->dh,
                              lstm ? a->dc : NULL, a->cache + (size_t)t * B * S, a->xin + (size_t)t * B * I, I,
                              a->hs + (size_t)t * B * H, lstm ? a->cs + (size_t)t * B * H : NULL, NULL, a->scratch);
            for (int b = 0; b < B; b++) vec_axpy(a->dcat + (size_t)b * 2 * H, 1, a->dxin + (size_t)b * I, H);
            nn_real *swap = a->dh;
            a->dh = a->dh2;
            a->dh2 = swap;
            swap = a->dc;
            a->dc = a->dc2;
            a->dc2 = swap;
        } else {
            memset(a->dh, 0, sizeof(nn_real) * B * H);
        }
        /* p = softmax(o Wout + bout): dlogits = lw (p - onehot(y)) */
        const nn_real *p = a->probs + (size_t)t * B * V, *o = a->o + (size_t)t * B * H, *cat = a->cat + (size_t)t * B * 2 * H;
        for (int b = 0; b < B; b++) {
            size_t tb = (size_t)t * B + b;
            nn_real *dl = a->dlogits + (size_t)b * V;
            for (int v = 0; v < V; v++) dl[v] = a->lw[tb] * p[(size_t)b * V + v];
            dl[m->tok[tb]] -= a->lw[tb];
        }
        vec_gemm_tn(m->g.Wout, V, o, H, a->dlogits, V, H, V, B, 1);
        for (int b = 0; b < B; b++) vec_axpy(m->g.bout, 1, a->dlogits + (size_t)b * V, V);
        /* o = tanh(cat Wc + bc): dpre = (dlogits Wout^T) (1 - o^2) */
        vec_gemm_nt(a->dout, H, a->dlogits, V, m->w.Wout, V, B, H, V, 0);
        for (size_t i = 0; i < (size_t)B * H; i++) a->dout[i] *= 1 - o[i] * o[i];
        vec_gemm_tn(m->g.Wc, H, cat, 2 * H, a->dout, H, 2 * H, H, B, 1);
        for (int b = 0; b < B; b++) vec_axpy(m->g.bc, 1, a->dout + (size_t)b * H, H);
        vec_gemm_nt(a->dcat, 2 * H, a->dout, H, m->w.Wc, H, B, 2 * H, H, 1);
        for (int b = 0; b < B; b++) vec_axpy(a->dh + (size_t)b * H, 1, a->dcat + (size_t)b * 2 * H + H, H);
        /* c_t = attention(s_t, kv): dq into dh, dkv */
        NN_TRY(attend_backward(m, B, t, a->dcat, 2 * H));
    }
    /* s_0 = tanh(mean W0 + b0): dpre = ds_0 (1 - s_0^2); dmean spreads 1/G to every cell */
    for (size_t i = 0; i < (size_t)B * H; i++) a->dh[i] *= 1 - a->hs[i] * a->hs[i];
    vec_gemm_tn(m->g.init_w, H, a->mean, H, a->dh, H, H, H, B, 1);
    for (int b = 0; b < B; b++) vec_axpy(m->g.init_b, 1, a->dh + (size_t)b * H, H);
    vec_gemm_nt(a->dout, H, a->dh, H, m->w.init_w, H, B, H, H, 0);
    for (int b = 0; b < B; b++)
        for (int g = 0; g < G; g++) vec_axpy(a->d_kv + ((size_t)b * G + g) * H, (nn_real)1 / G, a->dout + (size_t)b * H, H);
    encoder_backward(m, B, dimages);
    return NN_OK;
}

/* Shard s's backward: into the model's gradients (shard 0, +=) or into its replica's, cleared first. */
static int backward_task(void *ctx, int s, double *total) {
    (void)total;
    VisPass *p = ctx;
    int b0, b1;
    VisionModel *r = shard_rows(p->m, s, &b0, &b1);
    if (s) memset(r->grads, 0, sizeof(nn_real) * p->m->opt.n);
    return rows_backward(r, p->dimages ? p->dimages + (size_t)b0 * r->c.rows * r->c.cols : NULL);
}

int vis_backward(VisionModel *m, nn_real *dimages) {
    if (!m->have_forward) return nn_fail(NN_ERR_ARG, "backward: no forward with labels to differentiate");
    VisPass p = {.m = m, .dimages = dimages};
    NN_TRY(shards_run(backward_task, &p, m->shards, pass_work(m, m->batch_B), NULL));
    /* the model's gradients hold shard 0's; add the others' in shard order */
    for (int s = 1; s < m->shards; s++) vec_axpy(m->opt.grads, 1, m->replica[s]->grads, (int)m->opt.n);
    m->have_forward = 0;
    return NN_OK;
}

void vis_attention(const VisionModel *m, int b, nn_real *weights, int32_t *locations) {
    for (int s = 1; s < m->shards; s++) { /* row b is in the shard whose rows hold it */
        int b0, b1;
        nn_pool_range(m->batch_B, s, m->shards, &b0, &b1);
        if (b >= b0 && b < b1) {
            vis_attention(m->replica[s], b - b0, weights, locations);
            return;
        }
    }
    int B = m->B, G = m->G;
    for (int t = 0; t < m->c.steps; t++) {
        size_t tb = (size_t)t * B + b;
        if (weights) memcpy(weights + (size_t)t * G, m->a.weights + tb * G, sizeof(nn_real) * G);
        if (locations) locations[t] = m->loc[tb];
    }
}

/* ---- optimiser ------------------------------------------------------------- */

int vis_update(VisionModel *m, const NnTrainOptions *o, nn_real *norm) { return opt_update(&m->opt, o, norm); }

/* ---- implicit attention -------------------------------------------------------- */

int vis_saliency(VisionModel *m, const nn_real *image, int step, nn_real *saliency) {
    const VisConfig *c = &m->c;
    int T = c->steps;
    if (step < 0 || step >= T) return nn_fail(NN_ERR_VALUE, "step: %d; this model answers in steps 0..%d", step, T - 1);
    int32_t tokens[VIS_MAX_STEPS], n = T;
    /* the greedy answer, then the same path teacher-forced on it, so the
     * backward differentiates exactly what the reader saw */
    NN_TRY(vis_forward(m, 1, image, NULL, NULL, 0, NULL, tokens));
    NN_TRY(vis_forward(m, 1, image, tokens, &n, 0, NULL, NULL));
    /* L = -log p_step(token): only that step's loss weight stays */
    for (int t = 0; t < T; t++) m->a.lw[t] = t == step;
    size_t N = (size_t)c->rows * c->cols;
    memset(saliency, 0, sizeof(nn_real) * N);
    NN_TRY(vis_backward(m, saliency));
    vec_scale(saliency, -1, (int)N); /* d log p / dx = -dL/dx */
    return NN_OK;
}
