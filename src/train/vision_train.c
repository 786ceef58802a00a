/* The image-task training loop: a VisionModel bound to a task over the digit
 * set. It samples training batches from the train split, evaluates on a
 * fixed set of a split's examples, and reads single images (predict,
 * saliency). Seeds: the model's seed fixes its weights and the training
 * stream starts from it too, so a run is the same natively and in WASM. */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "models/vision_internal.h"
#include "train/vision_train.h"

#define EVAL_STREAM 0xE7A1D16175ull /* evaluation examples: the same set every call */

int vtr_create(VisionTrainer **out, const VisData *d, const ImgTaskConfig *tc, const VisConfig *mc) {
    *out = NULL;
    nn_clear_error();
    if (!d) return nn_fail(NN_ERR_PARAM, "createVisionModel: the digit set is not loaded");
    NN_TRY(img_task_check(tc));
    VisConfig c = *mc;
    c.rows = img_rows(tc);
    c.cols = img_cols(tc);
    c.sequence = tc->kind == IMG_MULTI;
    if (c.sequence && c.steps != img_max_out(tc))
        return nn_fail(NN_ERR_VALUE, "steps: the multi task with up to %d digits answers in %d steps (got %d)", tc->max_digits,
                       img_max_out(tc), c.steps);
    VisionTrainer *t = calloc(1, sizeof *t);
    if (!t) return nn_fail(NN_ERR_NOMEM, "createVisionModel: out of memory");
    t->data = d;
    t->task = *tc;
    int st = vis_create(&t->model, &c);
    if (st != NN_OK) {
        free(t);
        return st;
    }
    size_t B = (size_t)c.batch, N = (size_t)c.rows * c.cols;
    t->images = malloc(sizeof(nn_real) * B * N);
    t->labels = malloc(sizeof(int32_t) * B * c.steps);
    t->n_labels = malloc(sizeof(int32_t) * B);
    t->pred = malloc(sizeof(int32_t) * B * c.steps);
    if (!t->images || !t->labels || !t->n_labels || !t->pred) {
        vtr_destroy(t);
        return nn_fail(NN_ERR_NOMEM, "createVisionModel: out of memory for a batch of %zu images", B);
    }
    t->rng = c.seed;
    *out = t;
    return NN_OK;
}


void vtr_destroy(VisionTrainer *t) {
    if (!t) return;
    vis_destroy(t->model);
    free(t->images);
    free(t->labels);
    free(t->n_labels);
    free(t->pred);
    free(t);
}

VisionModel *vtr_model(VisionTrainer *t) { return t->model; }
const ImgTaskConfig *vtr_task(const VisionTrainer *t) { return &t->task; }

/* B examples of a split into the batch buffers; single-label tasks repeat the
 * label at every step (each step is a glimpse that answers). */
static int sample_batch(VisionTrainer *t, VisSplit split, uint64_t *rng, int B) {
    const VisConfig *c = vis_config(t->model);
    size_t N = (size_t)c->rows * c->cols;
    for (int b = 0; b < B; b++) {
        int32_t *y = t->labels + (size_t)b * c->steps, n;
        NN_TRY(img_sample(t->data, &t->task, split, rng, t->images + b * N, y, &n));
        if (!c->sequence) {
            for (int s = 1; s < c->steps; s++) y[s] = y[0];
            n = c->steps;
        }
        t->n_labels[b] = n;
    }
    return NN_OK;
}

static int check_batch(const VisionTrainer *t, int B) {
    int Bm = vis_config(t->model)->batch;
    if (B < 1 || B > Bm) return nn_fail(NN_ERR_LIMIT, "batch: %d; this model was created for batches up to %d", B, Bm);
    return NN_OK;
}

int vtr_train(VisionTrainer *t, const NnTrainOptions *o, int steps, int B, float *losses) {
    nn_clear_error();
    NN_TRY(check_batch(t, B));
    if (steps < 0 || steps > VTR_MAX_STEPS) return nn_fail(NN_ERR_LIMIT, "steps: %d; allowed 0..%d", steps, VTR_MAX_STEPS);
    for (int s = 0; s < steps; s++) {
        nn_real loss;
        NN_TRY(sample_batch(t, VIS_SPLIT_TRAIN, &t->rng, B));
        vis_zero_grad(t->model);
        NN_TRY(vis_forward(t->model, B, t->images, t->labels, t->n_labels, 1, &loss, NULL));
        NN_TRY(vis_backward(t->model, NULL));
        NN_TRY(vis_update(t->model, o, NULL));
        if (losses) losses[s] = (float)loss;
    }
    return NN_OK;
}

int vtr_evaluate(VisionTrainer *t, VisSplit split, int count, VisEval *r) {
    nn_clear_error();
    if (count < 1 || count > VTR_MAX_EVAL) return nn_fail(NN_ERR_LIMIT, "count: %d; allowed 1..%d", count, VTR_MAX_EVAL);
    if (split != VIS_SPLIT_TRAIN && split != VIS_SPLIT_TEST) return nn_fail(NN_ERR_ARG, "split: unknown split %d", (int)split);
    const VisConfig *c = vis_config(t->model);
    uint64_t rng = EVAL_STREAM + (uint64_t)split;
    double loss_sum = 0;
    long tokens = 0, right = 0, whole = 0;
    for (int done = 0; done < count;) {
        int B = count - done < c->batch ? count - done : c->batch;
        NN_TRY(sample_batch(t, split, &rng, B));
        nn_real loss;
        /* one-digit answers feed no tokens: the teacher-forced pass is the greedy one */
        NN_TRY(vis_forward(t->model, B, t->images, t->labels, t->n_labels, 0, &loss, c->sequence ? NULL : t->pred));
        long n_batch = 0;
        for (int b = 0; b < B; b++) n_batch += t->n_labels[b];
        loss_sum += (double)loss * n_batch;
        if (c->sequence) NN_TRY(vis_forward(t->model, B, t->images, NULL, NULL, 0, NULL, t->pred));
        for (int b = 0; b < B; b++) {
            const int32_t *y = t->labels + (size_t)b * c->steps, *p = t->pred + (size_t)b * c->steps;
            int n = t->n_labels[b], ok = 1;
            if (c->sequence) {
                /* the answer's tokens up to END, greedy */
                for (int s = 0; s < n; s++) {
                    right += p[s] == y[s];
                    ok &= p[s] == y[s];
                }
                tokens += n;
            } else { /* the last glimpse answers */
                ok = p[c->steps - 1] == y[0];
                right += ok;
                tokens++;
            }
            whole += ok;
        }
        done += B;
    }
    r->count = count;
    r->accuracy = (double)right / tokens;
    r->sequence_accuracy = (double)whole / count;
    r->loss = loss_sum / (c->sequence ? (double)tokens : (double)count * c->steps);
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

int vtr_sample(VisionTrainer *t, VisSplit split, uint64_t *rng, nn_real *image, int32_t *labels, int *n) {
    if (split != VIS_SPLIT_TRAIN && split != VIS_SPLIT_TEST) return nn_fail(NN_ERR_ARG, "split: unknown split %d", (int)split);
    return img_sample(t->data, &t->task, split, rng, image, labels, n);
}
