/* CNN encoder + recurrent attention decoder over its feature grid
 * (include/attnlab/vision.h): the parameter table, the activation block,
 * shard replicas, create / destroy, and the passes over a batch's shards.
 * The layers live in vision_layers.c, serialisation in vision_io.c.
 *
 * Dimension letters: B batch rows, R x Q canvas, C_l channels, G = gr x gc
 * grid cells, H hidden (= key/value size), V tokens, I = H + V the cell's
 * input, T steps, S the cell's cache per row. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/layout.h"
#include "base/lifecycle.h"
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
    int H = c->hidden;
    m->opt.n_tensors = 0;
    m->opt.n = 0;
    if (c->sensor == VIS_SENSOR_RETINA) {
        int K = vis_retina_k(c);
        add_tensor(m, &m->w.glimpse_w, (size_t)K * H, K, OPT_INIT_HE);
        add_tensor(m, &m->w.glimpse_b, (size_t)H, 0, OPT_INIT_ZERO);
        add_tensor(m, &m->w.where_w, (size_t)2 * H, 2, OPT_INIT_HE);
        add_tensor(m, &m->w.where_b, (size_t)H, 0, OPT_INIT_ZERO);
        add_tensor(m, &m->w.join_w, (size_t)2 * H * H, 2 * H, OPT_INIT_HE);
        add_tensor(m, &m->w.join_b, (size_t)H, 0, OPT_INIT_ZERO);
        /* small: the first locations stay near the centre, and tanh far from saturation */
        add_tensor(m, &m->w.loc_w, (size_t)H * 2, 4 * H, OPT_INIT_UNIFORM);
        add_tensor(m, &m->w.loc_b, 2, 0, OPT_INIT_ZERO);
        add_tensor(m, &m->w.base_w, (size_t)H, H, OPT_INIT_UNIFORM);
        add_tensor(m, &m->w.base_b, 1, 0, OPT_INIT_ZERO);
        add_tensor(m, &m->w.s0, (size_t)H, H, OPT_INIT_UNIFORM);
        cell_add(&m->opt, &m->w.cell, c->cell, m->I, H);
        output_add(&m->opt, &m->w.out, 2 * H, H, m->V);
        return;
    }
    for (int l = 0; l < c->layers; l++) {
        add_tensor(m, &m->w.conv_w[l], (size_t)9 * m->cin[l] * c->channels[l], 9 * m->cin[l], OPT_INIT_HE);
        add_tensor(m, &m->w.conv_b[l], (size_t)c->channels[l], 0, OPT_INIT_ZERO);
    }
    int CL = c->channels[c->layers - 1];
    add_tensor(m, &m->w.proj_w, (size_t)CL * H, CL, OPT_INIT_UNIFORM);
    add_tensor(m, &m->w.proj_b, (size_t)H, 0, OPT_INIT_ZERO);
    add_tensor(m, &m->w.pos, (size_t)m->G * H, 4 * H, OPT_INIT_UNIFORM);
    if (c->start == VIS_START_CONSTANT) {
        add_tensor(m, &m->w.s0, (size_t)H, H, OPT_INIT_UNIFORM); /* not zero: a zero query scores every cell alike */
    } else {
        add_tensor(m, &m->w.init_w, (size_t)H * H, H, OPT_INIT_UNIFORM);
        add_tensor(m, &m->w.init_b, (size_t)H, 0, OPT_INIT_ZERO);
    }
    cell_add(&m->opt, &m->w.cell, c->cell, m->I, H);
    attend_add(&m->opt, &m->w.attn, c->attention, H, m->G, H);
    output_add(&m->opt, &m->w.out, 2 * H, H, m->V);
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
    int conv = c->sensor == VIS_SENSOR_GRID; /* the retina has no CNN */
    for (int l = 0; conv && l < c->layers; l++) {
        size_t full = (size_t)m->hl[l] * m->wl[l] * c->channels[l];
        size_t half = (size_t)(m->hl[l] / 2) * (m->wl[l] / 2) * c->channels[l];
        carve(&a->conv_out[l], block, &at, B * full);
        carve(&a->d_conv_out[l], block, &at, B * full);
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
    carve(&a->ctx, block, &at, T * B * H);
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
    carve(&a->d_ctx, block, &at, B * H);
    carve(&a->d_o, block, &at, B * H);
    carve(&a->dlogits, block, &at, B * V);
    carve(&a->dweights, block, &at, B * G);
    carve(&a->zeros, block, &at, B * H);
    if (!conv) {
        size_t K = (size_t)vis_retina_k(c);
        carve(&a->mu, block, &at, T * B * 2);
        carve(&a->lsamp, block, &at, T * B * 2);
        carve(&a->lclip, block, &at, T * B * 2);
        carve(&a->base, block, &at, T * B);
        carve(&a->reward, block, &at, B);
        carve(&a->rho, block, &at, T * B * K);
        carve(&a->rho_gx, block, &at, T * B * K);
        carve(&a->rho_gy, block, &at, T * B * K);
        carve(&a->path, block, &at, B);
        carve(&a->d_l, block, &at, B * 2);
        carve(&a->hg, block, &at, T * B * H);
        carve(&a->hl, block, &at, T * B * H);
        carve(&a->join, block, &at, T * B * 2 * H);
        carve(&a->d_join, block, &at, B * 2 * H);
        carve(&a->d_hg, block, &at, B * H);
        carve(&a->d_hl, block, &at, B * H);
        carve(&a->d_rho, block, &at, B * K);
        carve(&a->d_mu, block, &at, B * 2);
        carve(&a->d_base, block, &at, B);
    }
    if (conv && c->attention != VIS_ATTN_NONE) {
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
    for (int l = 0; c->sensor == VIS_SENSOR_GRID && l < c->layers; l++) {
        if (block) m->idx[l] = block + at;
        at += (size_t)m->rows * (m->hl[l] / 2) * (m->wl[l] / 2) * c->channels[l];
    }
    if (block) {
        m->loc = block + at;
        m->tok = block + at + (size_t)c->steps * m->rows;
    }
    return at + 2 * (size_t)c->steps * m->rows;
}

/* The sizes derived from the configuration, the parameter table, and buffers of `rows` rows. */
static void plan(VisionModel *m, const VisConfig *c, int rows) {
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
    /* the retina reads no grid */
    int grid = c->sensor == VIS_SENSOR_GRID;
    m->gr = grid ? h : 0;
    m->gc = grid ? w : 0;
    m->G = m->gr * m->gc;
    m->V = VIS_TOKENS;
    m->I = c->hidden + m->V;
    int H = c->hidden;
    AttnConfig ac = {1, m->G, H, H, H, H, c->attention == VIS_ATTN_NONE ? ATTN_SCORE_DOT : (AttnScore)c->attention,
                     ATTN_NORM_SOFTMAX, 1, 0, NULL, 0};
    m->attn_cfg = ac;
    m->rows = rows;
    m->replicas.n = 1;
    build_table(m);
}

/* A model of configuration c with its sizes and table for `rows` rows, owning nothing yet; NULL when out of memory. */
static VisionModel *model_new(const VisConfig *c, int rows) {
    VisionModel *m = calloc(1, sizeof *m);
    if (m) plan(m, c, rows);
    return m;
}

/* ---- shard replicas ------------------------------------------------------- */

/* One shard's buffers for up to `rows` rows (layers/shards.h): planned from
 * the model's configuration, the model's weight view, its own activations,
 * indices and gradients. The model's weights must be bound (m->w) before.
 * A replica owns what the model owns (its grads instead of opt; no draws,
 * no replicas of its own), so vis_destroy frees either. */
static void *replica_make(const void *model, int rows) {
    const VisionModel *m = model;
    VisionModel *r = model_new(&m->c, rows);
    if (!r) return NULL;
    r->w = m->w;
    build_acts(r, NULL);
    r->acts = calloc(r->n_acts, sizeof(nn_real));
    r->ints = calloc(carve_ints(r, NULL), sizeof(int32_t));
    r->grads = opt_alloc_grads(&m->opt, &m->w, &r->g);
    if (!r->acts || !r->ints || !r->grads) {
        vis_destroy(r);
        return NULL;
    }
    build_acts(r, r->acts);
    carve_ints(r, r->ints);
    return r;
}

static void replica_free(void *replica) { vis_destroy(replica); }
static nn_real *replica_grads(void *replica) { return ((VisionModel *)replica)->grads; }
static const ReplicaAdapter REPLICAS = {replica_make, replica_free, replica_grads};

/* Replicas for n shards of batches of up to c.batch rows; on failure the old ones stay. */
static int set_shards(VisionModel *m, int n) {
    if (shards_set(&m->replicas, &REPLICAS, m, n, m->c.batch, &m->opt) != NN_OK)
        return nn_fail(NN_ERR_NOMEM, "createVisionModel: out of memory for the buffers of %d threads", n);
    m->have_forward = 0;
    return NN_OK;
}

int vis_set_shards(VisionModel *m, int n) {
    NN_TRY(shards_check(n));
    return set_shards(m, n ? n : nn_pool_threads());
}

/* ---- create / destroy ------------------------------------------------------ */

/* The sensor, and the retina's fields when it is one. */
static int check_retina(const VisConfig *c) {
    if (c->sensor != VIS_SENSOR_GRID && c->sensor != VIS_SENSOR_RETINA)
        return nn_fail(NN_ERR_ARG, "sensor: unknown sensor %d", (int)c->sensor);
    if (c->sensor == VIS_SENSOR_GRID) return NN_OK;
    if (c->mode != VIS_HARD || c->attention == VIS_ATTN_NONE)
        return nn_fail(NN_ERR_ARG, "sensor: the retina is hard attention; it takes mode 'hard' (not soft or none)");
    if (c->sequence)
        return nn_fail(NN_ERR_ARG, "sensor: the retina reads one-digit tasks (centered, cluttered), not multi");
    if (c->start != VIS_START_CONSTANT)
        return nn_fail(NN_ERR_ARG, "sensor: the retina starts from the learned constant (start 'constant')");
    NN_TRY(nn_check_size("retina.size", c->retina_size, VIS_MIN_RETINA, VIS_MAX_RETINA));
    NN_TRY(nn_check_size("retina.scales", c->retina_scales, 1, VIS_MAX_SCALES));
    if (!(c->sigma >= VIS_MIN_SIGMA && c->sigma <= VIS_MAX_SIGMA))
        return nn_fail(NN_ERR_VALUE, "sigma: %g; the location policy's spread must be within %g..%d", (double)c->sigma,
                       VIS_MIN_SIGMA, VIS_MAX_SIGMA);
    return NN_OK;
}

static int check_config(const VisConfig *c) {
    NN_TRY(nn_check_size("canvas: rows", c->rows, 2, VIS_MAX_IMAGE));
    NN_TRY(nn_check_size("canvas: columns", c->cols, 2, VIS_MAX_IMAGE));
    NN_TRY(nn_check_size("channels: conv layers", c->layers, 1, VIS_MAX_LAYERS));
    for (int l = 0; l < c->layers; l++) {
        char name[32];
        snprintf(name, sizeof name, "channels[%d]", l);
        NN_TRY(nn_check_size(name, c->channels[l], 1, VIS_MAX_CHANNELS));
    }
    if ((c->rows >> c->layers) < 1 || (c->cols >> c->layers) < 1)
        return nn_fail(NN_ERR_SHAPE, "channels: %d pooling layers leave no grid of a %d x %d canvas", c->layers, c->rows, c->cols);
    if ((unsigned)c->cell >= RNN_CELL_COUNT) return nn_fail(NN_ERR_ARG, "cell: unknown cell %d", (int)c->cell);
    NN_TRY(nn_check_size("hidden", c->hidden, 1, VIS_MAX_HIDDEN));
    if (c->attention != VIS_ATTN_NONE && (c->attention < 0 || c->attention >= ATTN_SCORE_COUNT))
        return nn_fail(NN_ERR_ARG, "attention: unknown score %d", c->attention);
    if (c->mode != VIS_SOFT && c->mode != VIS_HARD) return nn_fail(NN_ERR_ARG, "mode: unknown mode %d", (int)c->mode);
    if (c->start != VIS_START_MEAN && c->start != VIS_START_CONSTANT)
        return nn_fail(NN_ERR_ARG, "start: unknown start %d", (int)c->start);
    NN_TRY(nn_check_size("steps", c->steps, 1, VIS_MAX_STEPS));
    if (!(c->entropy >= 0) || !isfinite(c->entropy))
        return nn_fail(NN_ERR_VALUE, "entropy: %g; must be a finite number >= 0", (double)c->entropy);
    NN_TRY(nn_check_size("batch", c->batch, 1, VIS_MAX_BATCH));
    return check_retina(c);
}

int vis_plan(const VisConfig *c, size_t *n_params) {
    NN_TRY(check_config(c));
    VisionModel m = {0}; /* its table only */
    plan(&m, c, c->batch);
    *n_params = m.opt.n;
    return NN_OK;
}

int vis_create(VisionModel **out, const VisConfig *c) {
    *out = NULL;
    nn_clear_error();
    NN_TRY(check_config(c));
    VisionModel *m = model_new(c, c->batch);
    if (!m) return nn_fail(NN_ERR_NOMEM, "createVisionModel: out of memory");
    build_acts(m, NULL);
    /* the weights first: the shard replicas (set_shards) share this weight view */
    int st = opt_create(&m->opt, &m->w, &m->g, c->seed);
    m->acts = calloc(m->n_acts, sizeof(nn_real));
    m->ints = calloc(carve_ints(m, NULL), sizeof(int32_t));
    /* the retina's x and y (the grid's locations fit in one), then each row's soft-mix draw */
    m->draws = calloc((size_t)(2 * c->steps + 1) * c->batch, sizeof(double));
    if (st != NN_OK || !m->acts || !m->ints || !m->draws) {
        size_t params = m->opt.n, acts = m->n_acts;
        vis_destroy(m);
        return nn_fail(NN_ERR_NOMEM, "createVisionModel: out of memory for %zu parameters and %zu activations",
                       params, acts);
    }
    build_acts(m, m->acts);
    carve_ints(m, m->ints);
    m->rng = c->seed ^ 0x5EED0F1A77E4710Aull;
    st = set_shards(m, nn_pool_threads());
    return NN_CREATED(out, m, st, vis_destroy);
}

void vis_destroy(VisionModel *m) {
    if (!m) return;
    opt_free(&m->opt);
    NN_FREE_ALL(m->acts, m->ints, m->draws, m->grads);
    shards_free(&m->replicas);
    free(m);
}

const VisConfig *vis_config(const VisionModel *m) { return &m->c; }

void vis_grid(const VisionModel *m, int *gr, int *gc) {
    *gr = m->gr;
    *gc = m->gc;
}

/* ---- forward and backward over the batch's shards ----------------------------- */

/* A uniform draw in [0, 1) of 53 bits. */
static double uniform(uint64_t *rng) { return (double)(nn_rng_next(rng) >> 11) / 9007199254740992.0; }

/* A standard normal draw (Box-Muller; 1 - u is in (0, 1], so its log is finite). */
static double normal(uint64_t *rng) {
    double u = 1 - uniform(rng), v = uniform(rng);
    return sqrt(-2 * log(u)) * cos(6.283185307179586 * v);
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
    int uniform;                /* uniform attention (vis_set_uniform) */
    int mix;                    /* sampling with a soft mix: each row's draw follows the locations' */
    nn_real share;              /* the soft mix's share at this step (vis_soft_mix_at) */
    int mix_at;                 /* where in draws they start: after the locations' (T or 2T per row) */
    int hits[NN_MAX_THREADS][VIS_MAX_STEPS]; /* sampling: per shard and step, rows whose argmax is the label */
    int seen[NN_MAX_THREADS][VIS_MAX_STEPS]; /* and rows with a label at that step */
} VisPass;

/* Rows [b0, b1) of shard s of the last forward's batch, and the model or replica that runs them. */
static VisionModel *shard_rows(VisionModel *m, int s, int *b0, int *b1) {
    return shards_rows(&m->replicas, m, m->batch_B, m->shards, s, b0, b1);
}

/* Shard s's forward: its rows of the batch, and the whole batch's draws, baseline and label count. */
static int forward_task(void *ctx, int s, double *total) {
    VisPass *p = ctx;
    const VisConfig *c = &p->m->c;
    int b0, b1, T = c->steps;
    VisionModel *r = shard_rows(p->m, s, &b0, &b1);
    VisRows rows = {p->images + (size_t)b0 * c->rows * c->cols, p->labels ? p->labels + (size_t)b0 * T : NULL,
                    p->n_labels ? p->n_labels + b0 : NULL, p->pred ? p->pred + (size_t)b0 * T : NULL,
                    p->m->draws + b0, p->m->batch_B, p->m->baseline, p->count, p->sample, p->uniform, p->hits[s], p->seen[s],
                    p->mix ? p->m->draws + p->mix_at + b0 : NULL, p->share};
    return vis_rows_forward(r, b1 - b0, &rows, total);
}

/* Multiply-adds of a pass over B rows, roughly: the convolutions, and one per parameter and row. */
static double pass_work(const VisionModel *m, int B) {
    double per_row = (double)m->opt.n;
    if (m->c.sensor == VIS_SENSOR_RETINA) return per_row * m->c.steps * B; /* every weight once a step */
    for (int l = 0; l < m->c.layers; l++) per_row += 9.0 * m->hl[l] * m->wl[l] * m->cin[l] * m->c.channels[l];
    return per_row * B;
}

int vis_forward(VisionModel *m, int B, const nn_real *images, const int32_t *labels, const int32_t *n_labels,
                int train, nn_real *loss, int32_t *pred) {
    NN_TRY(check_batch(m, B, images, labels, n_labels));
    const VisConfig *c = &m->c;
    int T = c->steps;
    VisPass p = {.m = m, .images = images, .labels = labels, .n_labels = n_labels, .pred = pred};
    p.sample = train && c->mode == VIS_HARD && c->attention != VIS_ATTN_NONE && !m->uniform;
    p.uniform = m->uniform && c->attention != VIS_ATTN_NONE;
    if (labels)
        for (int b = 0; b < B; b++) p.count += n_labels[b];
    /* the draws in the order one thread takes them, so every split of the
     * batch draws alike; the retina's, x's plane then y's, each (T, B) */
    int retina = c->sensor == VIS_SENSOR_RETINA, n_draws = (retina ? 2 : 1) * T * B;
    if (p.sample && retina)
        for (int i = 0; i < n_draws; i++) m->draws[i] = normal(&m->rng);
    else if (p.sample)
        for (int i = 0; i < n_draws; i++) m->draws[i] = uniform(&m->rng);
    /* then each row's soft-mix draw, after the locations' (draws holds (2 T + 1) batch) */
    p.share = p.sample ? vis_soft_mix_at(m, m->opt.steps) : 0;
    p.mix = p.share > 0;
    p.mix_at = n_draws;
    for (int b = 0; p.mix && b < B; b++) m->draws[n_draws + b] = uniform(&m->rng);
    if (p.uniform && c->mode == VIS_HARD)
        for (int i = 0; i < n_draws; i++) m->draws[i] = uniform(&m->uniform_rng);
    m->have_forward = 0;
    m->batch_B = B;
    m->shards = shards_count(&m->replicas, B);
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
    m->uniform_forward = p.uniform;
    if (labels) {
        if (loss) *loss = (nn_real)(total / p.count);
        m->have_forward = !p.uniform; /* uniform attention is for evaluation: nothing to differentiate */
        m->trained_forward = p.sample;
    }
    return NN_OK;
}

/* Shard s's backward: into the model's gradients (shard 0, +=) or into its replica's, cleared first. */
static int backward_task(void *ctx, int s, double *total) {
    (void)total;
    VisPass *p = ctx;
    int b0, b1;
    VisionModel *r = shard_rows(p->m, s, &b0, &b1);
    shards_clear_grads(&p->m->replicas, s, p->m->opt.n);
    return vis_rows_backward(r, p->dimages ? p->dimages + (size_t)b0 * r->c.rows * r->c.cols : NULL);
}

int vis_backward(VisionModel *m, nn_real *dimages) {
    if (!m->have_forward) return nn_fail(NN_ERR_ARG, "backward: no forward with labels to differentiate");
    VisPass p = {.m = m, .dimages = dimages};
    NN_TRY(shards_run(backward_task, &p, m->shards, pass_work(m, m->batch_B), NULL));
    shards_sum_grads(&m->replicas, m->shards, m->opt.grads, m->opt.n);
    m->have_forward = 0;
    return NN_OK;
}

/* The model or replica whose buffers hold row b of the last forward, and *b its row there. */
static const VisionModel *row_owner(const VisionModel *m, int *b) {
    for (int s = 1; s < m->shards; s++) {
        int b0, b1;
        nn_pool_range(m->batch_B, s, m->shards, &b0, &b1);
        if (*b >= b0 && *b < b1) {
            *b -= b0;
            return m->replicas.at[s];
        }
    }
    return m;
}

void vis_set_uniform(VisionModel *m, int on) {
    m->uniform = on != 0;
    m->uniform_rng = 0x0F1A7A77E4710Dull; /* the same locations every evaluation */
}

int vis_set_soft_mix_schedule(VisionModel *m, nn_real share, int hold, int end) {
    const VisConfig *c = &m->c;
    if (!(share >= 0 && share <= 1))
        return nn_fail(NN_ERR_VALUE, "softMix: %g; it is a share of the rows, within [0, 1]", (double)share);
    if (share > 0 && (c->mode != VIS_HARD || c->attention == VIS_ATTN_NONE))
        return nn_fail(NN_ERR_ARG, "softMix: only hard attention samples locations to mix with the expected context "
                                   "or the policy's mean (mode 'hard'); this model's is %s",
                       c->attention == VIS_ATTN_NONE ? "none" : "soft");
    NN_TRY(nn_check_size("softMix hold (the step its share starts to fall)", hold, 0, NN_MAX_OPT_STEPS));
    NN_TRY(nn_check_size("softMix end (the step its share reaches 0)", end, hold, NN_MAX_OPT_STEPS));
    m->soft_mix = share;
    m->mix_hold = hold;
    m->mix_end = end;
    return NN_OK;
}

int vis_set_soft_mix(VisionModel *m, nn_real share) {
    return vis_set_soft_mix_schedule(m, share, NN_MAX_OPT_STEPS, NN_MAX_OPT_STEPS);
}

nn_real vis_soft_mix_at(const VisionModel *m, int taken) {
    if (taken < m->mix_hold) return m->soft_mix;
    if (taken >= m->mix_end) return 0;
    return m->soft_mix * (nn_real)((double)(m->mix_end - taken) / (m->mix_end - m->mix_hold));
}

void vis_start_state(const VisionModel *m, int b, nn_real *s0, nn_real *c0) {
    m = row_owner(m, &b);
    size_t H = (size_t)m->c.hidden;
    memcpy(s0, m->a.hs + (size_t)b * H, sizeof(nn_real) * H);
    if (c0) memcpy(c0, m->a.cs + (size_t)b * H, sizeof(nn_real) * H);
}

void vis_attention(const VisionModel *m, int b, nn_real *weights, int32_t *locations) {
    m = row_owner(m, &b);
    int B = m->B, G = m->G;
    for (int t = 0; t < m->c.steps; t++) {
        size_t tb = (size_t)t * B + b;
        if (weights) memcpy(weights + (size_t)t * G, m->a.weights + tb * G, sizeof(nn_real) * G);
        if (locations) locations[t] = m->loc[tb];
    }
}

void vis_glimpses(const VisionModel *m, int b, nn_real *xy) {
    m = row_owner(m, &b);
    for (int t = 0; t < m->c.steps; t++)
        for (int k = 0; k < 2; k++)
            xy[t * 2 + k] = m->c.sensor == VIS_SENSOR_RETINA ? m->a.lclip[((size_t)t * m->B + b) * 2 + k] : 0;
}

/* ---- the parameter table and the optimiser ------------------------------------ */

size_t vis_num_params(const VisionModel *m) { return m->opt.n; }
nn_real *vis_params(VisionModel *m) { return m->opt.params; }
nn_real *vis_grads(VisionModel *m) { return m->opt.grads; }
void vis_zero_grad(VisionModel *m) { opt_zero_grad(&m->opt); }
int vis_update(VisionModel *m, const NnTrainOptions *o, nn_real *norm) { return opt_update(&m->opt, o, norm); }
int vis_steps_taken(const VisionModel *m) { return m->opt.steps; }

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
