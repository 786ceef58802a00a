/* Saving and loading a model: a versioned little-endian format.
 *   magic "ATNLS2S\0" | u32 version | u32 config fields (13 x i32) | u64 seed |
 *   u32 steps | u64 parameter count | f32 parameters | u32 FNV-1a of all before
 * A file that is truncated, from another program, of another version, or
 * whose parameters do not fit its config is rejected with a clear message. */
#include <string.h>

#include "models/seq2seq_internal.h"

static const char MAGIC[8] = {'A', 'T', 'N', 'L', 'S', '2', 'S', 0};
#define S2S_FORMAT_VERSION 1u
#define S2S_CONFIG_FIELDS 13

static uint32_t fnv1a(const uint8_t *p, size_t n) {
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 16777619u;
    return h;
}

static void put32(uint8_t **p, uint32_t v) {
    for (int i = 0; i < 4; i++) *(*p)++ = (uint8_t)(v >> (8 * i));
}
static void put64(uint8_t **p, uint64_t v) {
    for (int i = 0; i < 8; i++) *(*p)++ = (uint8_t)(v >> (8 * i));
}
static uint32_t get32(const uint8_t **p) {
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) v |= (uint32_t)*(*p)++ << (8 * i);
    return v;
}
static uint64_t get64(const uint8_t **p) {
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v |= (uint64_t)*(*p)++ << (8 * i);
    return v;
}

static void config_fields(const S2sConfig *c, int32_t f[S2S_CONFIG_FIELDS]) {
    int32_t v[S2S_CONFIG_FIELDS] = {(int32_t)c->cell, c->layers, c->bidirectional, c->embed, c->hidden, c->attention,
                                    c->attn_hidden, c->in_vocab, c->out_vocab, c->max_in, c->max_out, c->fixed_in, c->batch};
    memcpy(f, v, sizeof v);
}

static size_t header_size(void) { return 8 + 4 + 4 * S2S_CONFIG_FIELDS + 8 + 4 + 8; }

size_t s2s_save_size(const Seq2Seq *m) { return header_size() + 4 * m->n_params + 4; }

int s2s_save(const Seq2Seq *m, uint8_t *bytes, size_t size) {
    if (size < s2s_save_size(m)) return nn_fail(NN_ERR_SHAPE, "save: %zu bytes is too small (%zu needed)", size, s2s_save_size(m));
    uint8_t *p = bytes;
    memcpy(p, MAGIC, 8);
    p += 8;
    put32(&p, S2S_FORMAT_VERSION);
    int32_t f[S2S_CONFIG_FIELDS];
    config_fields(&m->c, f);
    for (int i = 0; i < S2S_CONFIG_FIELDS; i++) put32(&p, (uint32_t)f[i]);
    put64(&p, m->c.seed);
    put32(&p, (uint32_t)m->steps);
    put64(&p, (uint64_t)m->n_params);
    for (size_t i = 0; i < m->n_params; i++) {
        float x = (float)m->params[i];
        uint32_t u;
        memcpy(&u, &x, 4);
        put32(&p, u);
    }
    put32(&p, fnv1a(bytes, (size_t)(p - bytes)));
    return NN_OK;
}

int s2s_load(Seq2Seq **out, const uint8_t *bytes, size_t size) {
    *out = NULL;
    nn_clear_error();
    if (size < 8 || memcmp(bytes, MAGIC, 8) != 0) return nn_fail(NN_ERR_VALUE, "model file: not an attnlab seq2seq model");
    if (size < header_size() + 4) return nn_fail(NN_ERR_VALUE, "model file: truncated (%zu bytes)", size);
    const uint8_t *p = bytes + 8;
    uint32_t version = get32(&p);
    if (version != S2S_FORMAT_VERSION)
        return nn_fail(NN_ERR_VALUE, "model file: format version %u; this engine reads version %u", version, S2S_FORMAT_VERSION);
    int32_t f[S2S_CONFIG_FIELDS];
    for (int i = 0; i < S2S_CONFIG_FIELDS; i++) f[i] = (int32_t)get32(&p);
    S2sConfig c = {(RnnCellKind)f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8], f[9], f[10], f[11], f[12], 0};
    c.seed = get64(&p);
    uint32_t steps = get32(&p);
    uint64_t count = get64(&p);
    Seq2Seq *m;
    int st = s2s_create(&m, &c);
    if (st != NN_OK) return nn_fail(st, "model file: bad configuration: %s", nn_last_error());
    if (count != m->n_params || size != s2s_save_size(m)) {
        size_t want = s2s_save_size(m);
        s2s_destroy(m);
        return nn_fail(NN_ERR_VALUE, "model file: %zu bytes with %llu parameters, but its configuration needs %zu bytes; truncated or damaged",
                       size, (unsigned long long)count, want);
    }
    const uint8_t *end = bytes + size - 4;
    const uint8_t *q = end;
    if (get32(&q) != fnv1a(bytes, (size_t)(end - bytes))) {
        s2s_destroy(m);
        return nn_fail(NN_ERR_VALUE, "model file: checksum mismatch; the file is damaged");
    }
    for (size_t i = 0; i < m->n_params; i++) {
        uint32_t u = get32(&p);
        float x;
        memcpy(&x, &u, 4);
        m->params[i] = x;
    }
    m->steps = (int)steps;
    *out = m;
    return NN_OK;
}
