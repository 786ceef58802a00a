/* Saving and loading a VisionTrainer: the task, the model's configuration,
 * its training state and parameters (format in include/attnlab/vision.h). */
#include <string.h>

#include "base/bytes.h"
#include "base/error.h"
#include "base/hash.h"
#include "models/vision_internal.h"
#include "train/vision_train.h"

static const char MAGIC[8] = {'A', 'T', 'N', 'L', 'V', 'I', 'S', 0};
#define VIS_FORMAT_VERSION 1
#define TASK_FIELDS 4
#define MODEL_FIELDS 13

static uint64_t double_bits(double x) {
    uint64_t u;
    memcpy(&u, &x, 8);
    return u;
}

static double bits_double(uint64_t u) {
    double x;
    memcpy(&x, &u, 8);
    return x;
}

static size_t header_size(int steps) { return 8 + 4 + 4 * (TASK_FIELDS + MODEL_FIELDS) + 8 + 8 + 4 + 8 * (size_t)steps + 8 + 8 + 8; }

size_t vtr_save_size(const VisionTrainer *t) {
    const VisionModel *m = t->model;
    return header_size(m->c.steps) + 4 * m->opt.n + 4;
}

int vtr_save(const VisionTrainer *t, uint8_t *bytes, size_t size) {
    nn_clear_error();
    const VisionModel *m = t->model;
    const VisConfig *c = &m->c;
    if (size < vtr_save_size(t)) return nn_fail(NN_ERR_SHAPE, "save: %zu bytes is too small (%zu needed)", size, vtr_save_size(t));
    uint8_t *p = bytes;
    memcpy(p, MAGIC, 8);
    p += 8;
    nn_put_le(&p, VIS_FORMAT_VERSION, 4);
    int32_t f[TASK_FIELDS + MODEL_FIELDS] = {
        (int32_t)t->task.kind, t->task.clutter, t->task.min_digits, t->task.max_digits,
        c->rows, c->cols, c->layers, c->channels[0], c->channels[1], c->channels[2], (int32_t)c->cell, c->hidden,
        c->attention, (int32_t)c->mode, c->steps, c->sequence, c->batch};
    for (int i = 0; i < TASK_FIELDS + MODEL_FIELDS; i++) nn_put_le(&p, (uint32_t)f[i], 4);
    nn_put_le(&p, double_bits((double)c->entropy), 8);
    nn_put_le(&p, c->seed, 8);
    nn_put_le(&p, (uint32_t)m->opt.steps, 4);
    for (int s = 0; s < c->steps; s++) nn_put_le(&p, double_bits(m->baseline[s]), 8);
    nn_put_le(&p, m->rng, 8);
    nn_put_le(&p, t->rng, 8);
    nn_put_le(&p, (uint64_t)m->opt.n, 8);
    for (size_t i = 0; i < m->opt.n; i++) nn_put_f32(&p, (float)m->opt.params[i]);
    nn_put_le(&p, nn_fnv1a32(bytes, (size_t)(p - bytes)), 4);
    return NN_OK;
}

int vtr_load(VisionTrainer **out, const VisData *d, const uint8_t *bytes, size_t size) {
    *out = NULL;
    nn_clear_error();
    if (!bytes || size < 12 || memcmp(bytes, MAGIC, 8) != 0) return nn_fail(NN_ERR_VALUE, "model file: not an attnlab vision model");
    const uint8_t *p = bytes + 8;
    uint32_t version = (uint32_t)nn_get_le(&p, 4);
    if (version != VIS_FORMAT_VERSION)
        return nn_fail(NN_ERR_VALUE, "model file: format version %u; this engine reads version %u", version, VIS_FORMAT_VERSION);
    if (size < header_size(0) + 4) return nn_fail(NN_ERR_VALUE, "model file: truncated (%zu bytes)", size);
    int32_t f[TASK_FIELDS + MODEL_FIELDS];
    for (int i = 0; i < TASK_FIELDS + MODEL_FIELDS; i++) f[i] = (int32_t)nn_get_le(&p, 4);
    ImgTaskConfig tc = {(ImgTaskKind)f[0], f[1], f[2], f[3]};
    VisConfig c = {f[4], f[5], f[6], {f[7], f[8], f[9]}, (RnnCellKind)f[10], f[11], f[12], (VisMode)f[13], f[14], f[15], 0, f[16], 0};
    c.entropy = (nn_real)bits_double(nn_get_le(&p, 8));
    c.seed = nn_get_le(&p, 8);
    if (c.steps < 1 || c.steps > VIS_MAX_STEPS || size < header_size(c.steps) + 4)
        return nn_fail(NN_ERR_VALUE, "model file: truncated or damaged (%zu bytes, %d steps)", size, c.steps);
    VisionTrainer *t;
    int st = vtr_create(&t, d, &tc, &c);
    if (st != NN_OK) return nn_fail(st, "model file: bad configuration: %s", nn_last_error());
    VisionModel *m = t->model;
    if (size != vtr_save_size(t)) {
        size_t want = vtr_save_size(t);
        vtr_destroy(t);
        return nn_fail(NN_ERR_VALUE, "model file: %zu bytes, but its configuration needs %zu; truncated or damaged", size, want);
    }
    const uint8_t *end = bytes + size - 4, *q = end;
    if (nn_get_le(&q, 4) != nn_fnv1a32(bytes, (size_t)(end - bytes))) {
        vtr_destroy(t);
        return nn_fail(NN_ERR_VALUE, "model file: checksum mismatch; the file is damaged");
    }
    m->opt.steps = (int)nn_get_le(&p, 4);
    for (int s = 0; s < c.steps; s++) m->baseline[s] = bits_double(nn_get_le(&p, 8));
    m->rng = nn_get_le(&p, 8);
    t->rng = nn_get_le(&p, 8);
    if (nn_get_le(&p, 8) != m->opt.n) {
        vtr_destroy(t);
        return nn_fail(NN_ERR_VALUE, "model file: parameter count does not match its configuration");
    }
    for (size_t i = 0; i < m->opt.n; i++) m->opt.params[i] = nn_get_f32(&p);
    *out = t;
    return NN_OK;
}
