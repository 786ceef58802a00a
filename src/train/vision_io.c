/* Saving and loading a VisionTrainer: the task, the model's configuration,
 * its training state and parameters (format in include/attnlab/vision.h, the
 * common parts in src/layers/model_file.h). Nothing is allocated before every
 * field, the exact length, the checksum and every weight are checked. */
#include <math.h>
#include <string.h>

#include "base/bytes.h"
#include "base/error.h"
#include "layers/model_file.h"
#include "models/vision_internal.h"
#include "train/vision_train.h"

/* 1: the decoder starts from the grid's mean; 2: adds the start field; 3:
 * adds the sensor and the retina's fields. A model is written in the oldest
 * version that holds it, so older files round-trip unchanged. */
static const uint32_t VERSIONS[] = {1, 2, 3};
#define TASK_FIELDS 4
#define MODEL_FIELDS 13
#define PROBE_STREAM 0x9B0BE1ull /* the test image a loaded model is first run on */

static uint32_t version_of(const VisConfig *c) {
    return c->sensor == VIS_SENSOR_RETINA ? 3u : c->start == VIS_START_MEAN ? 1u : 2u;
}

static size_t header_size(uint32_t version, int steps) {
    return MODEL_FILE_MAGIC + 4 + 4 * (TASK_FIELDS + MODEL_FIELDS) + (version >= 2 ? 4 : 0) + (version >= 3 ? 12 + 8 : 0) +
           8 + 8 + 4 +
           8 * (size_t)steps + 8 + 8 + 8;
}

size_t vtr_save_size(const VisionTrainer *t) {
    const VisionModel *m = t->model;
    return header_size(version_of(&m->c), m->c.steps) + 4 * m->opt.n + 4;
}

int vtr_save(const VisionTrainer *t, uint8_t *bytes, size_t size) {
    nn_clear_error();
    const VisionModel *m = t->model;
    const VisConfig *c = &m->c;
    if (size < vtr_save_size(t)) return nn_fail(NN_ERR_SHAPE, "save: %zu bytes is too small (%zu needed)", size, vtr_save_size(t));
    uint8_t *p = bytes;
    uint32_t version = version_of(c);
    model_file_put_magic(&p, MODEL_FILE_VISION, version);
    int32_t f[TASK_FIELDS + MODEL_FIELDS] = {
        (int32_t)t->task.kind, t->task.clutter, t->task.min_digits, t->task.max_digits,
        c->rows, c->cols, c->layers, c->channels[0], c->channels[1], c->channels[2], (int32_t)c->cell, c->hidden,
        c->attention, (int32_t)c->mode, c->steps, c->sequence, t->batch};
    model_file_put_i32s(&p, f, TASK_FIELDS + MODEL_FIELDS);
    if (version >= 2) {
        int32_t start = (int32_t)c->start;
        model_file_put_i32s(&p, &start, 1);
    }
    if (version >= 3) {
        int32_t sensor[3] = {(int32_t)c->sensor, c->retina_size, c->retina_scales};
        model_file_put_i32s(&p, sensor, 3);
        model_file_put_f64(&p, (double)c->sigma);
    }
    model_file_put_f64(&p, (double)c->entropy);
    nn_put_u64(&p, c->seed);
    nn_put_u32(&p, (uint32_t)m->opt.steps);
    for (int s = 0; s < c->steps; s++) model_file_put_f64(&p, m->baseline[s]);
    nn_put_u64(&p, m->rng);
    nn_put_u64(&p, t->rng);
    model_file_put_weights(&p, &m->opt, bytes);
    return NN_OK;
}

/* What a file holds besides its parameters. */
typedef struct {
    ImgTaskConfig task;
    VisConfig c;
    size_t n_params;
    int steps;                      /* optimiser steps taken */
    double baseline[VIS_MAX_STEPS]; /* hard mode's */
    uint64_t model_rng, stream;
} VisFile;

/* Checks the whole file and leaves r at its parameters. */
static int read_header(ModelFileReader *r, const uint8_t *bytes, size_t size, VisFile *v) {
    uint32_t version;
    NN_TRY(model_file_open(r, MODEL_FILE_VISION, bytes, size, VERSIONS, 3, &version));
    NN_TRY(model_file_need(r, header_size(version, 0) - r->at + 4));
    int32_t f[TASK_FIELDS + MODEL_FIELDS];
    model_file_i32s(r, f, TASK_FIELDS + MODEL_FIELDS);
    /* a cluttered canvas's side is its rows (files hold rows and cols; before sizes, both were 60) */
    v->task = (ImgTaskConfig){(ImgTaskKind)f[0], f[1], f[2], f[3], f[0] == IMG_CLUTTERED ? f[4] : 0};
    VisConfig c = {f[4], f[5], f[6], {f[7], f[8], f[9]}, (RnnCellKind)f[10], f[11], f[12], (VisMode)f[13], f[14], f[15], 0, f[16], 0,
                   VIS_START_MEAN, VIS_SENSOR_GRID, 0, 0, 0};
    if (version >= 2) {
        int32_t start;
        model_file_i32s(r, &start, 1);
        /* version 2 is written only for the constant start */
        if (start != VIS_START_CONSTANT)
            return nn_fail(NN_ERR_VALUE, "model file: start %d in a version 2 file; the file is damaged", start);
        c.start = VIS_START_CONSTANT;
    }
    if (version >= 3) {
        int32_t sensor[3];
        model_file_i32s(r, sensor, 3);
        /* version 3 is written only for the retina */
        if (sensor[0] != VIS_SENSOR_RETINA)
            return nn_fail(NN_ERR_VALUE, "model file: sensor %d in a version 3 file; the file is damaged", sensor[0]);
        if (sensor[1] == 0 || sensor[2] == 0) /* vtr_config would read 0 as "the default": a file says what it holds */
            return nn_fail(NN_ERR_VALUE, "model file: a retina of size %d and %d scales; the file is damaged", sensor[1],
                           sensor[2]);
        c.sensor = VIS_SENSOR_RETINA;
        c.retina_size = sensor[1];
        c.retina_scales = sensor[2];
        double sigma = model_file_f64(r);
        c.sigma = (nn_real)sigma;
        if (!((double)c.sigma == sigma && sigma > 0 && sigma <= VIS_MAX_SIGMA))
            return nn_fail(NN_ERR_VALUE, "model file: sigma %.17g; it must be a kept value in (0, %d]; the file is damaged",
                           sigma, VIS_MAX_SIGMA);
    }
    double entropy = model_file_f64(r);
    c.entropy = (nn_real)entropy;
    /* saved from a real, so it reads back as the same real (else a load and a save would differ) */
    if (!((double)c.entropy == entropy))
        return nn_fail(NN_ERR_VALUE, "model file: entropy weight %.17g is not a value the engine keeps; the file is damaged",
                       entropy);
    c.seed = model_file_u64(r);
    if (c.steps < 1 || c.steps > VIS_MAX_STEPS)
        return nn_fail(NN_ERR_VALUE, "model file: %d decoder steps; it must be within 1..%d; the file is damaged", c.steps, VIS_MAX_STEPS);
    NN_TRY(model_file_need(r, header_size(version, c.steps) - r->at + 4));
    /* the configuration of its task: the canvas, the answer kind, every size in range */
    int st = vtr_config(&v->task, &c, &v->c, &v->n_params);
    if (st != NN_OK) return nn_fail(st, "model file: bad configuration: %s", nn_last_error());
    if (c.rows != v->c.rows || c.cols != v->c.cols || c.sequence != v->c.sequence)
        return nn_fail(NN_ERR_VALUE, "model file: a %d x %d canvas%s, but its task reads %d x %d%s; the file is damaged", c.rows,
                       c.cols, c.sequence ? " of sequences" : "", v->c.rows, v->c.cols, v->c.sequence ? " of sequences" : "");
    uint32_t steps = model_file_u32(r);
    NN_TRY(model_file_check_steps(steps));
    v->steps = (int)steps;
    for (int s = 0; s < c.steps; s++) {
        double b = model_file_f64(r); /* a moving average of rewards 0 and 1 */
        if (!(b >= 0 && b <= 1))
            return nn_fail(NN_ERR_VALUE, "model file: baseline %d is %g; it must be within 0..1; the file is damaged", s, b);
        v->baseline[s] = b;
    }
    v->model_rng = model_file_u64(r);
    v->stream = model_file_u64(r);
    uint64_t count = model_file_u64(r);
    NN_TRY(model_file_check_count(count, v->n_params));
    NN_TRY(model_file_length(r, header_size(version, c.steps) + 4 * v->n_params + 4));
    NN_TRY(model_file_checksum(bytes, bytes + size));
    return model_file_check_params(r, v->n_params);
}

int vtr_load(VisionTrainer **out, const VisData *d, const uint8_t *bytes, size_t size) {
    *out = NULL;
    nn_clear_error();
    if (!d) return nn_fail(NN_ERR_PARAM, "loadVisionModel: the digit set is not loaded");
    ModelFileReader r;
    VisFile v;
    NN_TRY(read_header(&r, bytes, size, &v));
    /* buffers for one image: they grow with the batches that come */
    VisionTrainer *t;
    NN_TRY(vtr_build(&t, d, &v.task, &v.c, 1));
    VisionModel *m = t->model;
    model_file_params(&r, m->opt.params, v.n_params);
    m->opt.steps = v.steps;
    memcpy(m->baseline, v.baseline, sizeof(double) * v.c.steps);
    m->rng = v.model_rng;
    t->rng = v.stream;
    /* weights in range can still overflow together: no model that loads fails its first pass */
    uint64_t probe = PROBE_STREAM;
    int st = vtr_sample_batch(t, VIS_SPLIT_TEST, &probe, 1);
    if (st == NN_OK && (st = vtr_check_forward(t)) != NN_OK)
        st = nn_fail(st, "model file: %s; the file is damaged", nn_last_error());
    if (st == NN_OK) st = vtr_keep(t);
    if (st != NN_OK) {
        vtr_destroy(t);
        return st;
    }
    *out = t;
    return NN_OK;
}
