/* The model file's common parts (src/layers/model_file.h). */
#include "layers/model_file.h"

#include <math.h>
#include <string.h>

#include "base/bytes.h"
#include "base/error.h"
#include "base/hash.h"

/* [kind]: the magic, what a message calls a file of that kind, and the API that loads it */
static const struct {
    char magic[MODEL_FILE_MAGIC];
    const char *name;
    const char *loader;
} KINDS[MODEL_FILE_KIND_COUNT] = {
    [MODEL_FILE_SEQ2SEQ] = {{'A', 'T', 'N', 'L', 'S', '2', 'S', 0}, "seq2seq model", "s2s_load"},
    [MODEL_FILE_TRAINER] = {{'A', 'T', 'N', 'L', 'T', 'R', 'N', 0}, "model file", "loadSeq2Seq"},
    [MODEL_FILE_VISION] = {{'A', 'T', 'N', 'L', 'V', 'I', 'S', 0}, "vision model", "loadVisionModel"},
    [MODEL_FILE_TRANSFORMER] = {{'A', 'T', 'N', 'L', 'T', 'F', 'M', 0}, "transformer", "loadModel"},
};
static const char DIGITS_MAGIC[MODEL_FILE_MAGIC] = {'A', 'T', 'N', 'L', 'D', 'I', 'G', 0};

/* The versions each kind has had; a reader may take fewer. */
static const uint32_t LATEST[MODEL_FILE_KIND_COUNT] = {[MODEL_FILE_SEQ2SEQ] = 1, [MODEL_FILE_TRAINER] = 1,
                                                       [MODEL_FILE_VISION] = 3, [MODEL_FILE_TRANSFORMER] = 2};

static int magic_kind(const uint8_t *bytes, size_t size) {
    if (size < MODEL_FILE_MAGIC) return 0;
    for (int k = 1; k < MODEL_FILE_KIND_COUNT; k++)
        if (memcmp(bytes, KINDS[k].magic, MODEL_FILE_MAGIC) == 0) return k;
    return 0;
}

int model_file_kind(const uint8_t *bytes, size_t size, int *kind, uint32_t *version) {
    nn_clear_error();
    *kind = 0;
    *version = 0;
    int k = bytes ? magic_kind(bytes, size) : 0;
    if (!k) {
        if (bytes && size >= MODEL_FILE_MAGIC && memcmp(bytes, DIGITS_MAGIC, MODEL_FILE_MAGIC) == 0)
            return nn_fail(NN_ERR_VALUE, "model file: this is the digit set, not a model");
        return nn_fail(NN_ERR_VALUE, "model file: not an attnlab model file (%zu bytes)", size);
    }
    if (size < MODEL_FILE_MAGIC + 4) return nn_fail(NN_ERR_VALUE, "model file: truncated (%zu bytes)", size);
    const uint8_t *p = bytes + MODEL_FILE_MAGIC;
    uint32_t v = nn_get_u32(&p);
    if (v < 1 || v > LATEST[k])
        return nn_fail(NN_ERR_VALUE, "model file: format version %u; this engine reads versions 1..%u", v, LATEST[k]);
    *kind = k;
    *version = v;
    return NN_OK;
}

int model_file_open(ModelFileReader *r, ModelFileKind kind, const uint8_t *bytes, size_t size,
                    const uint32_t *versions, int n_versions, uint32_t *version) {
    *r = (ModelFileReader){bytes, size, 0};
    int k = bytes ? magic_kind(bytes, size) : 0;
    if (k != (int)kind) {
        if (k) /* another kind of model: say which call loads it */
            return nn_fail(NN_ERR_VALUE, "model file: this is an attnlab %s; load it with %s", KINDS[k].name, KINDS[k].loader);
        return nn_fail(NN_ERR_VALUE, "model file: not an attnlab %s", KINDS[kind].name);
    }
    NN_TRY(model_file_need(r, MODEL_FILE_MAGIC + 4));
    r->at = MODEL_FILE_MAGIC;
    *version = model_file_u32(r);
    for (int i = 0; i < n_versions; i++)
        if (versions[i] == *version) return NN_OK;
    return nn_fail(NN_ERR_VALUE, "model file: format version %u; this engine reads version %u", *version,
                   versions[n_versions - 1]);
}

int model_file_need(const ModelFileReader *r, size_t n) {
    if (r->size - r->at < n) return nn_fail(NN_ERR_VALUE, "model file: truncated (%zu bytes)", r->size);
    return NN_OK;
}

int model_file_length(const ModelFileReader *r, size_t want) {
    if (r->size != want)
        return nn_fail(NN_ERR_VALUE, "model file: %zu bytes, but its configuration needs %zu; truncated or damaged", r->size,
                       want);
    return NN_OK;
}

int model_file_checksum(const uint8_t *from, const uint8_t *end) {
    const uint8_t *q = end - 4;
    if (end - from < 4 || nn_get_u32(&q) != nn_fnv1a32(from, (size_t)(end - 4 - from)))
        return nn_fail(NN_ERR_VALUE, "model file: checksum mismatch; the file is damaged");
    return NN_OK;
}

uint32_t model_file_u32(ModelFileReader *r) {
    const uint8_t *p = r->bytes + r->at;
    r->at += 4;
    return nn_get_u32(&p);
}

uint64_t model_file_u64(ModelFileReader *r) {
    const uint8_t *p = r->bytes + r->at;
    r->at += 8;
    return nn_get_u64(&p);
}

double model_file_f64(ModelFileReader *r) {
    uint64_t u = model_file_u64(r);
    double x;
    memcpy(&x, &u, 8);
    return x;
}

void model_file_i32s(ModelFileReader *r, int32_t *v, int n) {
    for (int i = 0; i < n; i++) v[i] = (int32_t)model_file_u32(r);
}

/* A weight a model may hold: finite and within the bound (NaN fails the comparison). */
static int weight_ok(double x) { return fabs(x) <= MODEL_FILE_MAX_WEIGHT; }

static int bad_weight(const char *what, size_t i, double x) {
    if (isfinite(x))
        return nn_fail(NN_ERR_VALUE, "%s %zu is %g, past the limit of %g", what, i, x,
                       MODEL_FILE_MAX_WEIGHT);
    return nn_fail(NN_ERR_VALUE, "%s %zu is %s", what, i, isnan(x) ? "NaN" : "infinite");
}

int model_file_check_params(const ModelFileReader *r, size_t n) {
    const uint8_t *p = r->bytes + r->at;
    for (size_t i = 0; i < n; i++) {
        float x = nn_get_f32(&p);
        if (!weight_ok(x)) return bad_weight("model file: parameter", i, x);
    }
    return NN_OK;
}

void model_file_params(ModelFileReader *r, nn_real *x, size_t n) {
    const uint8_t *p = r->bytes + r->at;
    for (size_t i = 0; i < n; i++) x[i] = nn_get_f32(&p);
    r->at += 4 * n;
}

void model_file_put_magic(uint8_t **p, ModelFileKind kind, uint32_t version) {
    memcpy(*p, KINDS[kind].magic, MODEL_FILE_MAGIC);
    *p += MODEL_FILE_MAGIC;
    nn_put_u32(p, version);
}

void model_file_put_i32s(uint8_t **p, const int32_t *v, int n) {
    for (int i = 0; i < n; i++) nn_put_u32(p, (uint32_t)v[i]);
}

void model_file_put_f64(uint8_t **p, double x) {
    uint64_t u;
    memcpy(&u, &x, 8);
    nn_put_u64(p, u);
}

void model_file_put_params(uint8_t **p, const nn_real *x, size_t n) {
    for (size_t i = 0; i < n; i++) nn_put_f32(p, (float)x[i]);
}

void model_file_put_checksum(uint8_t **p, const uint8_t *from) { nn_put_u32(p, nn_fnv1a32(from, (size_t)(*p - from))); }

void model_file_put_weights(uint8_t **p, const OptParams *opt, const uint8_t *from) {
    nn_put_u64(p, (uint64_t)opt->n);
    model_file_put_params(p, opt->params, opt->n);
    model_file_put_checksum(p, from);
}

int model_file_check_steps(long long steps) {
    if (steps < 0 || steps > NN_MAX_OPT_STEPS)
        return nn_fail(NN_ERR_VALUE, "model file: step count %lld is outside 0..%d; the file is damaged", steps, NN_MAX_OPT_STEPS);
    return NN_OK;
}

int model_file_check_count(uint64_t count, size_t want) {
    if (count != want)
        return nn_fail(NN_ERR_VALUE, "model file: %llu parameters, but its configuration has %zu; the file is damaged",
                       (unsigned long long)count, want);
    return NN_OK;
}

int model_file_check_weights(const nn_real *w, size_t n, const char *what) {
    for (size_t i = 0; i < n; i++)
        if (!weight_ok(w[i])) return bad_weight(what, i, w[i]);
    return NN_OK;
}
