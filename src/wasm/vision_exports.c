/* The WASM boundary for image models (include/attnlab/vision.h): the digit
 * set and each VisionTrainer are opaque handles in JS. Every function returns
 * an NnStatus except the getters; the message is read with attnlab_last_error(). */
#include <emscripten.h>
#include <string.h>

#include "attnlab/vision.h"
#include "base/error.h"

EMSCRIPTEN_KEEPALIVE int attnlab_vis_data_create(const uint8_t *bytes, int size, VisData **out) {
    return vis_data_create(out, bytes, size > 0 ? (size_t)size : 0);
}

EMSCRIPTEN_KEEPALIVE void attnlab_vis_data_destroy(VisData *d) { vis_data_destroy(d); }

EMSCRIPTEN_KEEPALIVE int attnlab_vis_create(const VisData *d, int task, int clutter, int min_digits, int max_digits,
                                            int layers, int c0, int c1, int c2, int cell, int hidden, int attention,
                                            int mode, int steps, float entropy, int batch, double seed,
                                            VisionTrainer **out) {
    ImgTaskConfig tc = {(ImgTaskKind)task, clutter, min_digits, max_digits};
    VisConfig mc = {0, 0, layers, {c0, c1, c2}, (RnnCellKind)cell, hidden, attention, (VisMode)mode, steps, 0,
                    entropy, batch, (uint64_t)seed};
    return vtr_create(out, d, &tc, &mc);
}

EMSCRIPTEN_KEEPALIVE void attnlab_vis_destroy(VisionTrainer *t) { vtr_destroy(t); }

/* info (20 x i32): task, clutter, min_digits, max_digits, rows, cols, layers,
 * channels (3), cell, hidden, attention, mode, steps, batch, grid rows, grid
 * cols, sequence, 0; f64 (4): parameters, optimiser steps, seed, entropy. */
EMSCRIPTEN_KEEPALIVE void attnlab_vis_info(VisionTrainer *t, int32_t *info, double *f) {
    const ImgTaskConfig *tc = vtr_task(t);
    VisionModel *m = vtr_model(t);
    const VisConfig *c = vis_config(m);
    int gr, gc;
    vis_grid(m, &gr, &gc);
    int32_t v[20] = {(int32_t)tc->kind, tc->clutter, tc->min_digits, tc->max_digits, c->rows, c->cols, c->layers,
                     c->channels[0], c->channels[1], c->channels[2], (int32_t)c->cell, c->hidden, c->attention,
                     (int32_t)c->mode, c->steps, c->batch, gr, gc, c->sequence, 0};
    memcpy(info, v, sizeof v);
    f[0] = (double)vis_num_params(m);
    f[1] = (double)vis_steps_taken(m);
    f[2] = (double)c->seed;
    f[3] = (double)c->entropy;
}

EMSCRIPTEN_KEEPALIVE int attnlab_vis_train(VisionTrainer *t, int optimizer, float lr, float clip, int steps, int batch,
                                           float *losses) {
    NnTrainOptions o = {(NnOptimizer)optimizer, lr, clip};
    return vtr_train(t, &o, steps, batch, losses);
}

/* out (4 x f64): loss, accuracy, sequence accuracy, count. */
EMSCRIPTEN_KEEPALIVE int attnlab_vis_evaluate(VisionTrainer *t, int split, int count, double *out) {
    VisEval r;
    NN_TRY(vtr_evaluate(t, (VisSplit)split, count, &r));
    out[0] = r.loss;
    out[1] = r.accuracy;
    out[2] = r.sequence_accuracy;
    out[3] = r.count;
    return NN_OK;
}

EMSCRIPTEN_KEEPALIVE int attnlab_vis_predict(VisionTrainer *t, const float *image, int rows, int cols, int32_t *tokens,
                                             float *weights, int32_t *locations) {
    return vtr_predict(t, image, rows, cols, tokens, weights, locations);
}

EMSCRIPTEN_KEEPALIVE int attnlab_vis_saliency(VisionTrainer *t, const float *image, int rows, int cols, int step,
                                              float *saliency) {
    return vtr_saliency(t, image, rows, cols, step, saliency);
}

/* One example of a split: image (R, Q), labels (T), *n, drawn from the
 * stream rng (2 x u32, low word first), which advances. */
EMSCRIPTEN_KEEPALIVE int attnlab_vis_sample(VisionTrainer *t, int split, uint32_t *rng, float *image, int32_t *labels,
                                            int32_t *n) {
    uint64_t s = (uint64_t)rng[1] << 32 | rng[0];
    int count = 0;
    int st = vtr_sample(t, (VisSplit)split, &s, image, labels, &count);
    rng[0] = (uint32_t)s;
    rng[1] = (uint32_t)(s >> 32);
    *n = count;
    return st;
}

/* The canvas the last predict or saliency read (R, Q). */
EMSCRIPTEN_KEEPALIVE const float *attnlab_vis_canvas(VisionTrainer *t) { return vtr_canvas(t); }

EMSCRIPTEN_KEEPALIVE double attnlab_vis_save_size(VisionTrainer *t) { return (double)vtr_save_size(t); }

EMSCRIPTEN_KEEPALIVE int attnlab_vis_save(VisionTrainer *t, uint8_t *bytes, int size) {
    return vtr_save(t, bytes, (size_t)size);
}

EMSCRIPTEN_KEEPALIVE int attnlab_vis_load(const VisData *d, const uint8_t *bytes, int size, VisionTrainer **out) {
    return vtr_load(out, d, bytes, (size_t)size);
}
