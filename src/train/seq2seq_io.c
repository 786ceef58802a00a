/* Saving and loading a model: a versioned little-endian format.
 *   magic "ATNLS2S\0" | u32 version | u32 config fields (13 x i32) | u64 seed |
 *   u32 steps | u64 parameter count | f32 parameters | u32 FNV-1a of all before
 * (the common parts: src/layers/model_file.h). A file that is truncated, from
 * another program, of another version, whose parameters do not fit its
 * config, with a weight that is not finite or a step count out of range, or
 * whose forward pass is not finite is rejected with a clear message; nothing
 * is allocated before its fields and length are checked. */
#include <string.h>

#include "base/bytes.h"
#include "base/lifecycle.h"
#include "layers/model_file.h"
#include "models/seq2seq_internal.h"

static const uint32_t VERSIONS[] = {1};
#define S2S_FORMAT_VERSION 1u
#define S2S_CONFIG_FIELDS 13

static void config_fields(const S2sConfig *c, int32_t f[S2S_CONFIG_FIELDS]) {
    int32_t v[S2S_CONFIG_FIELDS] = {(int32_t)c->cell, c->layers, c->bidirectional, c->embed, c->hidden, c->attention,
                                    c->attn_hidden, c->in_vocab, c->out_vocab, c->max_in, c->max_out, c->fixed_in, c->batch};
    memcpy(f, v, sizeof v);
}

static size_t header_size(void) { return MODEL_FILE_MAGIC + 4 + 4 * S2S_CONFIG_FIELDS + 8 + 4 + 8; }

size_t s2s_save_size(const Seq2Seq *m) { return header_size() + 4 * m->opt.n + 4; }

int s2s_save(const Seq2Seq *m, uint8_t *bytes, size_t size) {
    if (size < s2s_save_size(m)) return nn_fail(NN_ERR_SHAPE, "save: %zu bytes is too small (%zu needed)", size, s2s_save_size(m));
    uint8_t *p = bytes;
    model_file_put_magic(&p, MODEL_FILE_SEQ2SEQ, S2S_FORMAT_VERSION);
    int32_t f[S2S_CONFIG_FIELDS];
    config_fields(&m->c, f);
    model_file_put_i32s(&p, f, S2S_CONFIG_FIELDS);
    nn_put_u64(&p, m->c.seed);
    nn_put_u32(&p, (uint32_t)m->opt.steps);
    model_file_put_weights(&p, &m->opt, bytes);
    return NN_OK;
}

/* Checks the whole file and leaves r at its parameters. */
static int read_header(ModelFileReader *r, const uint8_t *bytes, size_t size, S2sConfig *c, int *steps, size_t *n_params) {
    uint32_t version;
    NN_TRY(model_file_open(r, MODEL_FILE_SEQ2SEQ, bytes, size, VERSIONS, 1, &version));
    NN_TRY(model_file_need(r, header_size() - r->at + 4));
    int32_t f[S2S_CONFIG_FIELDS];
    model_file_i32s(r, f, S2S_CONFIG_FIELDS);
    *c = (S2sConfig){(RnnCellKind)f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8], f[9], f[10], f[11], f[12], 0};
    c->seed = model_file_u64(r);
    uint32_t taken = model_file_u32(r);
    uint64_t count = model_file_u64(r);
    int st = s2s_plan(c, n_params);
    if (st != NN_OK) return nn_fail(st, "model file: bad configuration: %s", nn_last_error());
    NN_TRY(model_file_check_steps(taken));
    NN_TRY(model_file_check_count(count, *n_params));
    NN_TRY(model_file_length(r, header_size() + 4 * *n_params + 4));
    NN_TRY(model_file_checksum(bytes, bytes + size));
    NN_TRY(model_file_check_params(r, *n_params));
    *steps = (int)taken;
    return NN_OK;
}

int s2s_load_config(const uint8_t *bytes, size_t size, S2sConfig *c) {
    nn_clear_error();
    ModelFileReader r;
    int steps;
    size_t n;
    return read_header(&r, bytes, size, c, &steps, &n);
}

int s2s_load(Seq2Seq **out, const uint8_t *bytes, size_t size) { return s2s_load_rows(out, bytes, size, S2S_MAX_BEAM); }

int s2s_load_rows(Seq2Seq **out, const uint8_t *bytes, size_t size, int rows) {
    *out = NULL;
    nn_clear_error();
    ModelFileReader r;
    S2sConfig c;
    int steps;
    size_t n;
    NN_TRY(read_header(&r, bytes, size, &c, &steps, &n));
    /* one row first, what the probe below runs on, so a file it rejects grows
     * memory by little more than its weights; then `rows`, and later as many
     * as the batches (and beams) that come. The configuration keeps its batch. */
    Seq2Seq *m;
    NN_TRY(s2s_create_rows(&m, &c, 1));
    model_file_params(&r, m->opt.params, n);
    m->opt.steps = steps;
    /* weights in range can still overflow together: no model that loads fails its first pass */
    int st = s2s_check_forward(m);
    if (st != NN_OK) st = nn_fail(st, "model file: %s; the file is damaged", nn_last_error());
    else st = s2s_reserve(m, rows);
    return NN_CREATED(out, m, st, s2s_destroy);
}
