/* The image-task training loop: a VisionModel bound to a task over the digit
 * set. It samples training batches from the train split, evaluates on a
 * fixed set of a split's examples, and reads single images (predict,
 * saliency). Seeds: the model's seed fixes its weights and the training
 * stream starts from it too, so a run is the same natively and in WASM.
 * Training calls are all or nothing (vtr_train in include/attnlab/vision.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/lifecycle.h"
#include "layers/model_file.h"
#include "models/vision_internal.h"
#include "train/train_call.h"
#include "train/vision_train.h"

#define EVAL_STREAM 0xE7A1D16175ull /* evaluation examples: the same set every call */

int vtr_config(const ImgTaskConfig *tc, const VisConfig *mc, VisConfig *c, size_t *n_params) {
    NN_TRY(img_task_check(tc));
    *c = *mc;
    c->rows = img_rows(tc);
    c->cols = img_cols(tc);
    c->sequence = tc->kind == IMG_MULTI;
    if (c->sensor == VIS_SENSOR_RETINA) { /* 0: the defaults, the finest scale about a fifth of the canvas */
        int side = c->rows < c->cols ? c->rows : c->cols, size = (side + 2) / 5;
        if (c->retina_size == 0) c->retina_size = size < 8 ? 8 : size > 16 ? 16 : size;
        if (c->retina_scales == 0) c->retina_scales = 3;
        if (c->sigma == 0) c->sigma = (nn_real)0.15;
    }
    if (c->sequence && c->steps != img_max_out(tc))
        return nn_fail(NN_ERR_VALUE, "steps: the multi task with up to %d digits answers in %d steps (got %d)", tc->max_digits,
                       img_max_out(tc), c->steps);
    return vis_plan(c, n_params);
}

/* The batch buffers for `rows` rows; on failure the old ones stay. */
static int alloc_rows(VisionTrainer *t, int rows) {
    const VisConfig *c = vis_config(t->model);
    size_t B = (size_t)rows, N = (size_t)c->rows * c->cols;
    nn_real *images = malloc(sizeof(nn_real) * B * N);
    int32_t *labels = malloc(sizeof(int32_t) * B * c->steps), *n_labels = malloc(sizeof(int32_t) * B),
            *pred = malloc(sizeof(int32_t) * B * c->steps);
    if (!images || !labels || !n_labels || !pred) {
        free(images), free(labels), free(n_labels), free(pred);
        return nn_fail(NN_ERR_NOMEM, "createVisionModel: out of memory for a batch of %zu images", B);
    }
    free(t->images), free(t->labels), free(t->n_labels), free(t->pred);
    t->images = images;
    t->labels = labels;
    t->n_labels = n_labels;
    t->pred = pred;
    return NN_OK;
}

int vtr_build(VisionTrainer **out, const VisData *d, const ImgTaskConfig *tc, const VisConfig *c, int rows) {
    *out = NULL;
    VisionTrainer *t = calloc(1, sizeof *t);
    if (!t) return nn_fail(NN_ERR_NOMEM, "createVisionModel: out of memory");
    t->data = d;
    t->task = *tc;
    t->batch = c->batch;
    t->rng = c->seed;
    VisConfig sized = *c;
    sized.batch = rows;
    int st = vis_create(&t->model, &sized);
    if (st == NN_OK) st = alloc_rows(t, rows);
    if (st != NN_OK) {
        vtr_destroy(t);
        return st;
    }
    *out = t;
    return NN_OK;
}

int vtr_keep(VisionTrainer *t) { return opt_snapshot(&t->model->opt); }

int vtr_create(VisionTrainer **out, const VisData *d, const ImgTaskConfig *tc, const VisConfig *mc) {
    *out = NULL;
    nn_clear_error();
    if (!d) return nn_fail(NN_ERR_PARAM, "createVisionModel: the digit set is not loaded");
    VisConfig c;
    size_t n;
    NN_TRY(vtr_config(tc, mc, &c, &n));
    NN_TRY(vtr_build(out, d, tc, &c, c.batch));
    int st = vtr_keep(*out);
    if (st != NN_OK) {
        vtr_destroy(*out);
        *out = NULL;
    }
    return st;
}

void vtr_destroy(VisionTrainer *t) {
    if (!t) return;
    vis_destroy(t->model);
    NN_FREE_ALL(t->images, t->labels, t->n_labels, t->pred, t);
}

VisionModel *vtr_model(VisionTrainer *t) { return t->model; }
const ImgTaskConfig *vtr_task(const VisionTrainer *t) { return &t->task; }
int vtr_batch(const VisionTrainer *t) { return t->batch; }

/* Batches of B rows, 1..VIS_MAX_BATCH: a batch larger than the buffers hold
 * moves the model into one created for it (its weights, optimiser state,
 * baselines and stream), so the result is the same as a model created that large. */
static int reserve(VisionTrainer *t, int B) {
    if (B < 1 || B > VIS_MAX_BATCH)
        return nn_check_size("batch", B, 1, VIS_MAX_BATCH);
    VisionModel *old = t->model;
    if (B <= old->c.batch) return NN_OK;
    VisConfig c = old->c;
    c.batch = B;
    VisionModel *m;
    NN_TRY(vis_create(&m, &c));
    int st = old->replicas.n != m->replicas.n ? vis_set_shards(m, old->replicas.n) : NN_OK;
    if (st == NN_OK && old->opt.kept) st = opt_snapshot(&m->opt);
    if (st == NN_OK) {
        t->model = m; /* alloc_rows sizes from it */
        if ((st = alloc_rows(t, B)) != NN_OK) t->model = old;
    }
    if (st != NN_OK) {
        vis_destroy(m);
        return st;
    }
    size_t P = old->opt.n;
    memcpy(m->opt.params, old->opt.params, sizeof(nn_real) * P);
    memcpy(m->opt.moments, old->opt.moments, sizeof(nn_real) * 2 * P);
    if (old->opt.kept) memcpy(m->opt.kept, old->opt.kept, sizeof(nn_real) * 3 * P);
    m->opt.steps = old->opt.steps;
    m->opt.moment_steps = old->opt.moment_steps;
    m->opt.kept_steps = old->opt.kept_steps;
    m->opt.kept_moment_steps = old->opt.kept_moment_steps;
    m->opt.kept_stream = old->opt.kept_stream;
    m->opt.called = old->opt.called;
    memcpy(m->baseline, old->baseline, sizeof m->baseline);
    m->rng = old->rng;
    m->soft_mix = old->soft_mix;
    m->mix_hold = old->mix_hold;
    m->mix_end = old->mix_end;
    vis_destroy(old);
    return NN_OK;
}

int vtr_sample_batch(VisionTrainer *t, VisSplit split, uint64_t *rng, int B) {
    const VisConfig *c = vis_config(t->model);
    size_t N = (size_t)c->rows * c->cols;
    for (int b = 0; b < B; b++) {
        int32_t *y = t->labels + (size_t)b * c->steps, n;
        NN_TRY(img_sample(t->data, &t->task, split, rng, t->images + b * N, y, &n, NULL));
        if (!c->sequence) { /* single-label tasks repeat the label: each step is a glimpse that answers */
            for (int s = 1; s < c->steps; s++) y[s] = y[0];
            n = c->steps;
        }
        t->n_labels[b] = n;
    }
    return NN_OK;
}

int vtr_check_forward(VisionTrainer *t) {
    VisionModel *m = t->model;
    nn_real loss = 0;
    vis_zero_grad(m);
    int st = vis_forward(m, 1, t->images, t->labels, t->n_labels, 0, &loss, NULL);
    /* the loss floors each probability before its log, so NaN shows in the probabilities only */
    if (st == NN_OK) st = nn_check_finite("probabilities", m->a.probs, (size_t)m->c.steps * m->V);
    if (st == NN_OK && !isfinite(loss)) st = nn_fail(NN_ERR_VALUE, "the loss is %g", (double)loss);
    if (st == NN_OK) st = vis_backward(m, NULL);
    nn_real norm = opt_grad_norm(&m->opt);
    if (st == NN_OK && !isfinite(norm)) st = nn_fail(NN_ERR_VALUE, "the gradient norm is %g", (double)norm);
    vis_zero_grad(m);
    if (st != NN_OK) return nn_fail(st, "its forward pass on an image is not finite (%s)", nn_last_error());
    return NN_OK;
}

/* ---- training: the image model's adapter of the one training call (train_call.h) ---- */

typedef struct {
    VisionTrainer *t;
} VisCall;

static int call_sample(void *ctx, int B) {
    VisionTrainer *t = ((VisCall *)ctx)->t;
    return vtr_sample_batch(t, VIS_SPLIT_TRAIN, &t->rng, B);
}

static int call_gradients(void *ctx, int B, double *loss) {
    VisionTrainer *t = ((VisCall *)ctx)->t;
    VisionModel *m = t->model;
    nn_real l = 0;
    vis_zero_grad(m);
    NN_TRY(vis_forward(m, B, t->images, t->labels, t->n_labels, 1, &l, NULL));
    *loss = l;
    return isfinite(l) ? vis_backward(m, NULL) : NN_OK; /* the call refuses a loss that is not finite */
}

static int call_probe(void *ctx) { return vtr_check_forward(((VisCall *)ctx)->t); }

static void call_keep(void *ctx) {
    VisCall *c = ctx;
    VisionModel *m = c->t->model;
    _Static_assert(sizeof c->t->kept_baseline == sizeof m->baseline, "the kept baselines are the model's");
    memcpy(c->t->kept_baseline, m->baseline, sizeof m->baseline);
    c->t->kept_model_rng = m->rng;
}

static void call_restore(void *ctx) {
    VisCall *c = ctx;
    VisionModel *m = c->t->model;
    memcpy(m->baseline, c->t->kept_baseline, sizeof m->baseline);
    m->rng = c->t->kept_model_rng;
    m->have_forward = 0;
}

int vtr_train(VisionTrainer *t, const NnTrainOptions *o, int steps, int B, float *losses) {
    nn_clear_error();
    NN_TRY(train_check(&t->model->opt, o, steps));
    NN_TRY(reserve(t, B)); /* may move the model into a larger one */
    VisCall call = {t};
    TrainAdapter a = {&t->model->opt, &t->rng, &call, call_sample, call_gradients, call_probe, call_keep, call_restore};
    return train_call(&a, o, steps, B, losses);
}

int vtr_undo(VisionTrainer *t) {
    nn_clear_error();
    VisCall call = {t};
    TrainAdapter a = {&t->model->opt, &t->rng, &call, NULL, NULL, NULL, call_keep, call_restore};
    return train_undo(&a);
}

/* ---- evaluation: the image model's adapter of the one evaluation loop (train_call.h) ---- */

typedef struct {
    VisionTrainer *t;
    int uniform; /* evaluate with uniform attention */
} VisEvalCall;

/* Room for the batches, then the attention as asked, on the model reserve may have replaced. */
static int eval_reserve(void *ctx, int rows) {
    VisEvalCall *e = ctx;
    NN_TRY(reserve(e->t, rows));
    vis_set_uniform(e->t->model, e->uniform);
    return NN_OK;
}

/* A batch's teacher-forced loss and its greedy answers: a multi-digit
 * answer's tokens up to END, a one-digit answer at the last glimpse. */
static int eval_run(void *ctx, int split, uint64_t *rng, int B, EvalSums *sum) {
    VisionTrainer *t = ((VisEvalCall *)ctx)->t;
    const VisConfig *c = vis_config(t->model);
    NN_TRY(vtr_sample_batch(t, (VisSplit)split, rng, B));
    nn_real loss;
    /* one-digit answers feed no tokens: the teacher-forced pass is the greedy one */
    NN_TRY(vis_forward(t->model, B, t->images, t->labels, t->n_labels, 0, &loss, c->sequence ? NULL : t->pred));
    long n_batch = 0;
    for (int b = 0; b < B; b++) n_batch += t->n_labels[b];
    sum->loss += (double)loss * n_batch;
    if (c->sequence) NN_TRY(vis_forward(t->model, B, t->images, NULL, NULL, 0, NULL, t->pred));
    for (int b = 0; b < B; b++) {
        const int32_t *y = t->labels + (size_t)b * c->steps, *p = t->pred + (size_t)b * c->steps;
        int n = t->n_labels[b], ok = 1;
        if (c->sequence) {
            for (int s = 0; s < n; s++) {
                sum->right += p[s] == y[s];
                ok &= p[s] == y[s];
            }
            sum->scored += n;
        } else {
            ok = p[c->steps - 1] == y[0];
            sum->right += ok;
            sum->scored++;
        }
        sum->whole += ok;
    }
    return NN_OK;
}

int vtr_evaluate(VisionTrainer *t, VisSplit split, int count, int uniform, VisEval *r) {
    nn_clear_error();
    if (uniform != 0 && uniform != 1) return nn_fail(NN_ERR_ARG, "attention: unknown evaluation attention %d", uniform);
    if (split != VIS_SPLIT_TRAIN && split != VIS_SPLIT_TEST) return nn_fail(NN_ERR_ARG, "split: unknown split %d", (int)split);
    VisEvalCall e = {t, uniform};
    EvalAdapter a = {&e, t->batch, eval_reserve, eval_run};
    EvalSums sum;
    int st = train_evaluate(&a, split, EVAL_STREAM + (uint64_t)split, count, VTR_MAX_EVAL, &sum);
    vis_set_uniform(t->model, 0);
    NN_TRY(st);
    const VisConfig *c = vis_config(t->model);
    r->count = count;
    r->accuracy = sum.right / sum.scored;
    r->sequence_accuracy = sum.whole / count;
    r->loss = sum.loss / (c->sequence ? sum.scored : (double)count * c->steps);
    return NN_OK;
}

int vtr_predict(VisionTrainer *t, const nn_real *image, int rows, int cols, int32_t *tokens, nn_real *weights,
                int32_t *locations) {
    NN_TRY(img_place(&t->task, image, rows, cols, t->images));
    NN_TRY(vis_forward(t->model, 1, t->images, NULL, NULL, 0, NULL, tokens));
    vis_attention(t->model, 0, weights, locations);
    return NN_OK;
}

int vtr_saliency(VisionTrainer *t, const nn_real *image, int rows, int cols, int step, nn_real *saliency) {
    NN_TRY(img_place(&t->task, image, rows, cols, t->images));
    return vis_saliency(t->model, t->images, step, saliency);
}

const nn_real *vtr_canvas(const VisionTrainer *t) { return t->images; }

void vtr_glimpses(const VisionTrainer *t, int32_t *glimpses) {
    const VisConfig *c = vis_config(t->model);
    nn_real xy[VIS_MAX_STEPS * 2];
    vis_glimpses(t->model, 0, xy);
    memset(glimpses, 0, sizeof(int32_t) * VIS_GLIMPSE_INTS * c->steps);
    if (c->sensor != VIS_SENSOR_RETINA) return;
    for (int s = 0; s < c->steps; s++) {
        int32_t *g = glimpses + s * VIS_GLIMPSE_INTS;
        for (int k = 0; k < c->retina_scales; k++) {
            int top, left, side;
            retina_box(c, xy + 2 * s, k, &top, &left, &side);
            g[2 + 3 * k] = top;
            g[3 + 3 * k] = left;
            g[4 + 3 * k] = side;
            if (k == 0) {
                g[0] = left + side / 2;
                g[1] = top + side / 2;
            }
        }
    }
}

int vtr_sample(VisionTrainer *t, VisSplit split, uint64_t *rng, nn_real *image, int32_t *labels, int *n, VisBox *boxes) {
    if (split != VIS_SPLIT_TRAIN && split != VIS_SPLIT_TEST) return nn_fail(NN_ERR_ARG, "split: unknown split %d", (int)split);
    return img_sample(t->data, &t->task, split, rng, image, labels, n, boxes);
}
