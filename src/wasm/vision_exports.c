/* The WASM boundary for image models (include/attnlab/vision.h): the digit
 * set and each VisionTrainer are opaque handles in JS. Every function returns
 * an NnStatus except the getters; the message is read with attnlab_last_error(). */
#include <emscripten.h>
#include <string.h>

#include "attnlab/vision.h"
#include "base/error.h"
#include "wasm/boundary.h"

EMSCRIPTEN_KEEPALIVE int attnlab_vis_data_create(const uint8_t *bytes, int size, VisData **out) {
    return vis_data_create(out, bytes, size > 0 ? (size_t)size : 0);
}

EMSCRIPTEN_KEEPALIVE void attnlab_vis_data_destroy(VisData *d) { vis_data_destroy(d); }

EMSCRIPTEN_KEEPALIVE int attnlab_vis_create(const VisData *d, int task, int clutter, int size, int min_digits, int max_digits,
                                            int layers, int c0, int c1, int c2, int cell, int hidden, int attention,
                                            int mode, int steps, float entropy, int batch, double seed,
                                            int start, int sensor, int retina_size, int retina_scales, double sigma,
                                            VisionTrainer **out) {
    /* sigma 0 asks for the default: a value float32 rounds to 0 must not */
    if (sigma != 0 && !(sigma >= VIS_MIN_SIGMA && sigma <= VIS_MAX_SIGMA))
        return nn_fail(NN_ERR_VALUE, "sigma: %g; the location policy's spread must be within %g..%d", sigma, VIS_MIN_SIGMA,
                       VIS_MAX_SIGMA);
    ImgTaskConfig tc = {(ImgTaskKind)task, clutter, min_digits, max_digits, size};
    VisConfig mc = {0, 0, layers, {c0, c1, c2}, (RnnCellKind)cell, hidden, attention, (VisMode)mode, steps, 0,
                    entropy, batch, (uint64_t)seed, (VisStart)start, (VisSensor)sensor, retina_size, retina_scales, (nn_real)sigma};
    return vtr_create(out, d, &tc, &mc);
}

EMSCRIPTEN_KEEPALIVE void attnlab_vis_destroy(VisionTrainer *t) { vtr_destroy(t); }

EMSCRIPTEN_KEEPALIVE void attnlab_vis_info(VisionTrainer *t, AttnlabVisInfo *info) {
    const ImgTaskConfig *tc = vtr_task(t);
    VisionModel *m = vtr_model(t);
    const VisConfig *c = vis_config(m);
    /* by group: the task, the canvas and model, the decoder, the counts */
    *info = (AttnlabVisInfo){
        .task = (int32_t)tc->kind, .clutter = tc->clutter, .min_digits = tc->min_digits, .max_digits = tc->max_digits,
        .rows = c->rows, .cols = c->cols, .layers = c->layers, .cell = (int32_t)c->cell, .hidden = c->hidden,
        .attention = c->attention, .mode = (int32_t)c->mode, .steps = c->steps, .batch = vtr_batch(t), .sequence = c->sequence,
        .parameters = (double)vis_num_params(m), .optimizer_steps = (double)vis_steps_taken(m), .seed = (double)c->seed,
        .entropy = (double)c->entropy, .start = (int32_t)c->start,
        .sensor = (int32_t)c->sensor, .retina_size = c->retina_size, .retina_scales = c->retina_scales, .sigma = (double)c->sigma,
    };
    memcpy(info->channels, c->channels, sizeof info->channels);
    int gr, gc;
    vis_grid(m, &gr, &gc);
    info->grid_rows = gr;
    info->grid_cols = gc;
}

/* The optimiser and its schedule as NnTrainOptions' fields (include/attnlab/optim.h); soft_mix,
 * mix_hold, mix_end: hard mode's share of rows reading the expected context, held until the
 * model's step mix_hold and 0 from mix_end (vis_set_soft_mix_schedule). */
EMSCRIPTEN_KEEPALIVE int attnlab_vis_train(VisionTrainer *t, int optimizer, float lr, float clip, int schedule, int warmup,
                                           int decay_steps, float final_lr, int steps, int batch, float *losses,
                                           float soft_mix, int mix_hold, int mix_end) {
    NnTrainOptions o = {.optimizer = (NnOptimizer)optimizer, .lr = lr, .clip = clip, .schedule = (NnSchedule)schedule,
                        .warmup = warmup, .decay_steps = decay_steps, .final_lr = final_lr};
    NN_TRY(vis_set_soft_mix_schedule(vtr_model(t), soft_mix, mix_hold, mix_end));
    return vtr_train(t, &o, steps, batch, losses);
}

EMSCRIPTEN_KEEPALIVE int attnlab_vis_undo(VisionTrainer *t) { return vtr_undo(t); }

EMSCRIPTEN_KEEPALIVE int attnlab_vis_evaluate(VisionTrainer *t, int split, int count, int uniform, VisEval *result) {
    return vtr_evaluate(t, (VisSplit)split, count, uniform, result);
}

EMSCRIPTEN_KEEPALIVE int attnlab_vis_predict(VisionTrainer *t, const float *image, int rows, int cols, int32_t *tokens,
                                             float *weights, int32_t *locations) {
    return vtr_predict(t, image, rows, cols, tokens, weights, locations);
}

EMSCRIPTEN_KEEPALIVE int attnlab_vis_saliency(VisionTrainer *t, const float *image, int rows, int cols, int step,
                                              float *saliency) {
    return vtr_saliency(t, image, rows, cols, step, saliency);
}

/* One example of a split: image (R, Q), labels (T), *n, boxes (T x 4 int32:
 * top, left, height, width of each digit), drawn from the stream rng (2 x u32,
 * low word first), which advances. */
EMSCRIPTEN_KEEPALIVE int attnlab_vis_sample(VisionTrainer *t, int split, uint32_t *rng, float *image, int32_t *labels,
                                            int32_t *n, VisBox *boxes) {
    uint64_t s = (uint64_t)rng[1] << 32 | rng[0];
    int count = 0;
    int st = vtr_sample(t, (VisSplit)split, &s, image, labels, &count, boxes);
    rng[0] = (uint32_t)s;
    rng[1] = (uint32_t)(s >> 32);
    *n = count;
    return st;
}

/* The retina's glimpses of the last predict (T x VIS_GLIMPSE_INTS, vtr_glimpses). */
EMSCRIPTEN_KEEPALIVE void attnlab_vis_glimpses(VisionTrainer *t, int32_t *glimpses) { vtr_glimpses(t, glimpses); }

/* The canvas the last predict or saliency read (R, Q). */
EMSCRIPTEN_KEEPALIVE const float *attnlab_vis_canvas(VisionTrainer *t) { return vtr_canvas(t); }

EMSCRIPTEN_KEEPALIVE double attnlab_vis_save_size(VisionTrainer *t) { return (double)vtr_save_size(t); }

EMSCRIPTEN_KEEPALIVE int attnlab_vis_save(VisionTrainer *t, uint8_t *bytes, int size) {
    return vtr_save(t, bytes, (size_t)size);
}

EMSCRIPTEN_KEEPALIVE int attnlab_vis_load(const VisData *d, const uint8_t *bytes, int size, VisionTrainer **out) {
    return vtr_load(out, d, bytes, (size_t)size);
}

/* ---- the records above, field by field, for attnlab_constants() --------------- */

/* One field of AttnlabVisInfo: its member, JS name and type. */
#define VIS_INFO(member, js_name, type) ATTNLAB_FIELD(AttnlabVisInfo, member, js_name, ATTNLAB_##type)

/* by group, as attnlab_vis_info fills them */
static const AttnlabField vis_info_fields[] = {
    VIS_INFO(task, "task", I32), VIS_INFO(clutter, "clutter", I32), VIS_INFO(min_digits, "minDigits", I32),
    VIS_INFO(max_digits, "maxDigits", I32), VIS_INFO(rows, "rows", I32), VIS_INFO(cols, "cols", I32),
    VIS_INFO(layers, "layers", I32), VIS_INFO(channels, "channels", I32), VIS_INFO(cell, "cell", I32),
    VIS_INFO(hidden, "hidden", I32), VIS_INFO(attention, "attention", I32), VIS_INFO(mode, "mode", I32),
    VIS_INFO(steps, "steps", I32), VIS_INFO(batch, "batch", I32), VIS_INFO(grid_rows, "gridRows", I32),
    VIS_INFO(grid_cols, "gridCols", I32), VIS_INFO(sequence, "sequence", I32),
    VIS_INFO(start, "start", I32), VIS_INFO(sensor, "sensor", I32), VIS_INFO(retina_size, "retinaSize", I32),
    VIS_INFO(retina_scales, "retinaScales", I32), VIS_INFO(sigma, "sigma", F64), VIS_INFO(parameters, "parameters", F64),
    VIS_INFO(optimizer_steps, "optimizerSteps", F64), VIS_INFO(seed, "seed", F64), VIS_INFO(entropy, "entropy", F64),
};

static const AttnlabField vis_eval_fields[] = {
    ATTNLAB_FIELD(VisEval, loss, "loss", ATTNLAB_F64), ATTNLAB_FIELD(VisEval, accuracy, "accuracy", ATTNLAB_F64),
    ATTNLAB_FIELD(VisEval, sequence_accuracy, "sequenceAccuracy", ATTNLAB_F64),
    ATTNLAB_FIELD(VisEval, count, "count", ATTNLAB_I32),
};

ATTNLAB_RECORDS(attnlab_vis_records, ATTNLAB_RECORD("VisInfo", AttnlabVisInfo, vis_info_fields),
                ATTNLAB_RECORD("VisEval", VisEval, vis_eval_fields));
