/* Saving and loading a model: a versioned little-endian format.
 *   magic "ATNLS2S\0" | u32 version | u32 config fields (13 x i32) | u64 seed |
 *   u32 steps | u64 parameter count | f32 parameters | u32 FNV-1a of all before
 * A file that is truncated, from another program, of another version, or
 * whose parameters do not fit its config is rejected with a clear message. */
#include <math.h>
#include <string.h>

#include "base/bytes.h"
#include "base/hash.h"
#include "models/seq2seq_internal.h"

static const char MAGIC[8] = {'A', 'T', 'N', 'L', 'S', '2', 'S', 0};
#define S2S_FORMAT_VERSION 1u
#define S2S_CONFIG_FIELDS 13

static void config_fields(const S2sConfig *c, int32_t f[S2S_CONFIG_FIELDS]) {
    int32_t v[S2S_CONFIG_FIELDS] = {(int32_t)c->cell, c->layers, c->bidirectional, c->embed, c->hidden, c->attention,
                                    c->attn_hidden, c->in_vocab, c->out_vocab, c->max_in, c->max_out, c->fixed_in, c->batch};
    memcpy(f, v, sizeof v);
}

static size_t header_size(void) { return 8 + 4 + 4 * S2S_CONFIG_FIELDS + 8 + 4 + 8; }

size_t s2s_save_size(const Seq2Seq *m) { return header_size() + 4 * m->opt.n + 4; }

int s2s_save(const Seq2Seq *m, uint8_t *bytes, size_t size) {
    if (size < s2s_save_size(m)) return nn_fail(NN_ERR_SHAPE, "save: %zu bytes is too small (%zu needed)", size, s2s_save_size(m));
    uint8_t *p = bytes;
    memcpy(p, MAGIC, 8);
    p += 8;
    nn_put_u32(&p, S2S_FORMAT_VERSION);
    int32_t f[S2S_CONFIG_FIELDS];
    config_fields(&m->c, f);
    for (int i = 0; i < S2S_CONFIG_FIELDS; i++) nn_put_u32(&p, (uint32_t)f[i]);
    nn_put_u64(&p, m->c.seed);
    nn_put_u32(&p, (uint32_t)m->opt.steps);
    nn_put_u64(&p, (uint64_t)m->opt.n);
    for (size_t i = 0; i < m->opt.n; i++) nn_put_f32(&p, (float)m->opt.params[i]);
    nn_put_u32(&p, nn_fnv1a32(bytes, (size_t)(p - bytes)));
    return NN_OK;
}

int s2s_load(Seq2Seq **out, const uint8_t *bytes, size_t size) {
    *out = NULL;
    nn_clear_error();
    if (size < 8 || memcmp(bytes, MAGIC, 8) != 0) return nn_fail(NN_ERR_VALUE, "model file: not an attnlab seq2seq model");
    if (size < header_size() + 4) return nn_fail(NN_ERR_VALUE, "model file: truncated (%zu bytes)", size);
    const uint8_t *p = bytes + 8;
    uint32_t version = nn_get_u32(&p);
    if (version != S2S_FORMAT_VERSION)
        return nn_fail(NN_ERR_VALUE, "model file: format version %u; this engine reads version %u", version, S2S_FORMAT_VERSION);
    int32_t f[S2S_CONFIG_FIELDS];
    for (int i = 0; i < S2S_CONFIG_FIELDS; i++) f[i] = (int32_t)nn_get_u32(&p);
    S2sConfig c = {(RnnCellKind)f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8], f[9], f[10], f[11], f[12], 0};
    c.seed = nn_get_u64(&p);
    uint32_t steps = nn_get_u32(&p);
    uint64_t count = nn_get_u64(&p);
    /* every field in range and the length right before anything is allocated */
    size_t n_params;
    int st = s2s_plan(&c, &n_params);
    if (st != NN_OK) return nn_fail(st, "model file: bad configuration: %s", nn_last_error());
    if (steps > S2S_MAX_STEPS)
        return nn_fail(NN_ERR_VALUE, "model file: step count %u is past the limit of %d; the file is damaged", steps,
                       S2S_MAX_STEPS);
    size_t want = header_size() + 4 * n_params + 4;
    if (count != n_params || size != want)
        return nn_fail(NN_ERR_VALUE, "model file: %zu bytes with %llu parameters, but its configuration needs %zu parameters in %zu bytes; truncated or damaged",
                       size, (unsigned long long)count, n_params, want);
    const uint8_t *end = bytes + size - 4;
    const uint8_t *q = end;
    if (nn_get_u32(&q) != nn_fnv1a32(bytes, (size_t)(end - bytes)))
        return nn_fail(NN_ERR_VALUE, "model file: checksum mismatch; the file is damaged");
    for (size_t i = 0; i < n_params; i++) {
        float x = nn_get_f32(&p);
        if (!isfinite(x)) return nn_fail(NN_ERR_VALUE, "model file: parameter %zu is %s; the file is damaged", i, isnan(x) ? "NaN" : "infinite");
    }
    /* the buffers start small (S2S_MAX_BEAM rows) and grow with the batches
     * that come; the configuration keeps the batch it was saved with */
    S2sConfig small = c;
    small.batch = c.batch < S2S_MAX_BEAM ? c.batch : S2S_MAX_BEAM;
    Seq2Seq *m;
    NN_TRY(s2s_create(&m, &small));
    m->c.batch = c.batch;
    p = bytes + header_size(); /* the parameters again */
    for (size_t i = 0; i < m->opt.n; i++) m->opt.params[i] = nn_get_f32(&p);
    m->opt.steps = (int)steps;
    *out = m;
    return NN_OK;
}
