/* libFuzzer target: the model-file loaders (trainer_load for seq2seq files,
 * vtr_load for image-model files, tf_load for transformers, picked by the
 * magic as JS's loaders are),
 * on the bytes as given and, so mutations get past the checksums to the
 * fields behind them, on a copy whose FNV-1a checksums (a seq2seq file's
 * model and file, an image-model or transformer file's one) are recomputed.
 * A file that loads must translate (or predict, or inspect), save and load again. Any status but
 * NN_OK / NN_ERR_* is a finding; so is anything the sanitizers see. Image
 * models read a small synthetic digit set made once. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab/trainer.h"
#include "attnlab/transformer.h"
#include "attnlab/vision.h"
#include "fuzz.h"

static uint32_t fnv1a(const uint8_t *p, size_t n) {
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 16777619u;
    return h;
}

static void put32(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}

/* File layout (trainer.h): magic(8) version(4) task(16) text_len(4) text u64
 * stream | model ... u32 model FNV | u32 file FNV. */
static void fix_checksums(uint8_t *b, size_t n) {
    if (n >= 12 && (memcmp(b, "ATNLVIS", 8) == 0 || memcmp(b, "ATNLTFM", 8) == 0)) { /* one checksum */
        put32(b + n - 4, fnv1a(b, n - 4));
        return;
    }
    if (n < 32 + 8) return;
    uint32_t text_len = (uint32_t)b[28] | (uint32_t)b[29] << 8 | (uint32_t)b[30] << 16 | (uint32_t)b[31] << 24;
    size_t model = 40 + (size_t)text_len;
    if (text_len < n && model + 8 <= n) put32(b + n - 8, fnv1a(b + model, n - 8 - model));
    put32(b + n - 4, fnv1a(b, n - 4));
}

static void try_load(const uint8_t *bytes, size_t size) {
    Trainer *t = NULL;
    int st = trainer_load(&t, bytes, size);
    FUZZ_STATUS(st);
    if (st != NN_OK) {
        FUZZ_ASSERT(t == NULL, "a failed load returned a model");
        return;
    }
    const Task *task = trainer_task(t);
    /* translate a few characters of its own alphabet */
    const char *alphabet = task_in_alphabet(task);
    char text[8] = {0};
    for (int i = 0; i < 3 && alphabet[0]; i++) text[i] = alphabet[i % strlen(alphabet)];
    const S2sConfig *mc = s2s_config(trainer_model(t));
    int max_in = task_max_in(task) > mc->max_in ? task_max_in(task) : mc->max_in;
    int max_out = task_max_out(task) > mc->max_out ? task_max_out(task) : mc->max_out;
    int32_t *in_ids = calloc((size_t)max_in + 2, sizeof *in_ids), *out_ids = calloc((size_t)max_out + 2, sizeof *out_ids);
    nn_real *alignment = calloc((size_t)(max_in + 2) * (max_out + 2), sizeof *alignment);
    char *output = calloc((size_t)max_out * 4 + 8, 1);
    int in_len = 0, out_len = 0;
    FUZZ_STATUS(trainer_translate(t, text, strlen(text), 1, in_ids, &in_len, out_ids, &out_len, alignment, output));
    free(in_ids), free(out_ids), free(alignment), free(output);
    /* save: the same bytes come back */
    size_t n = trainer_save_size(t);
    uint8_t *again = malloc(n);
    FUZZ_ASSERT(again != NULL, "out of memory");
    FUZZ_ASSERT(trainer_save(t, again, n) == NN_OK, "a loaded model does not save: %s", nn_last_error());
    Trainer *t2 = NULL;
    FUZZ_ASSERT(trainer_load(&t2, again, n) == NN_OK, "a saved model does not load: %s", nn_last_error());
    trainer_destroy(t2);
    free(again);
    trainer_destroy(t);
}

/* 60 digits of noise in the digit set's format, made once. */
static const VisData *digits(void) {
    static VisData *d;
    static uint8_t asset[24 + 60 * (1 + 784)];
    if (d) return d;
    memcpy(asset, "ATNLDIG", 8);
    uint32_t head[4] = {1, 60, 28, 28};
    for (int i = 0; i < 4; i++) put32(asset + 8 + 4 * i, head[i]);
    uint32_t x = 1;
    for (size_t i = 0; i < 60; i++) asset[24 + i] = (uint8_t)(i % 10);
    for (size_t i = 24 + 60; i < sizeof asset; i++) asset[i] = (uint8_t)((x = x * 1664525u + 1013904223u) >> 24);
    FUZZ_ASSERT(vis_data_create(&d, asset, sizeof asset) == NN_OK, "digits: %s", nn_last_error());
    return d;
}

static void try_load_vision(const uint8_t *bytes, size_t size) {
    VisionTrainer *t = NULL;
    int st = vtr_load(&t, digits(), bytes, size);
    FUZZ_STATUS(st);
    if (st != NN_OK) {
        FUZZ_ASSERT(t == NULL, "a failed load returned a model");
        return;
    }
    /* predict a stroke: every step's weights finite */
    static nn_real image[28 * 28], weights[VIS_MAX_STEPS * VIS_MAX_IMAGE * VIS_MAX_IMAGE];
    for (int i = 0; i < 28 * 28; i++) image[i] = (nn_real)(i % 28 == 14);
    int32_t tokens[VIS_MAX_STEPS], locations[VIS_MAX_STEPS];
    FUZZ_ASSERT(vtr_predict(t, image, 28, 28, tokens, weights, locations) == NN_OK, "a loaded model does not predict: %s",
                nn_last_error());
    int gr, gc;
    vis_grid(vtr_model(t), &gr, &gc);
    for (int i = 0; i < vis_config(vtr_model(t))->steps * gr * gc; i++)
        FUZZ_ASSERT(weights[i] == weights[i] && weights[i] - weights[i] == 0, "attention weight %d is not finite", i);
    size_t n = vtr_save_size(t);
    uint8_t *again = malloc(n);
    FUZZ_ASSERT(again != NULL, "out of memory");
    FUZZ_ASSERT(vtr_save(t, again, n) == NN_OK, "a loaded model does not save: %s", nn_last_error());
    FUZZ_ASSERT(n == size && memcmp(again, bytes, n) == 0, "a loaded model saves other bytes");
    VisionTrainer *t2 = NULL;
    FUZZ_ASSERT(vtr_load(&t2, digits(), again, n) == NN_OK, "a saved model does not load: %s", nn_last_error());
    vtr_destroy(t2);
    free(again);
    vtr_destroy(t);
}

static void try_load_transformer(const uint8_t *bytes, size_t size) {
    Transformer *m = NULL;
    int st = tf_load(&m, bytes, size);
    FUZZ_STATUS(st);
    if (st != NN_OK) {
        FUZZ_ASSERT(m == NULL, "a failed load returned a model");
        return;
    }
    /* inspect a few tokens: every attention weight and probability finite */
    const TfConfig *c = tf_config(m);
    enum { N = 6 };
    int32_t tokens[N], ids[N * TF_TOP], lens[TF_MAX_LAYERS * N];
    static float attention[TF_MAX_LAYERS * TF_MAX_HEADS * N * N];
    float p[N * TF_TOP];
    for (int i = 0; i < N; i++) tokens[i] = i % tf_vocab(m);
    FUZZ_STATUS(tf_inspect(m, tokens, N, attention, ids, p, lens));
    for (int i = 0; i < c->layers * c->heads * N * N; i++)
        FUZZ_ASSERT(attention[i] == attention[i] && attention[i] - attention[i] == 0, "attention weight %d is not finite", i);
    size_t n = tf_save_size(m);
    uint8_t *again = malloc(n);
    FUZZ_ASSERT(again != NULL, "out of memory");
    FUZZ_ASSERT(tf_save(m, again, n) == NN_OK, "a loaded model does not save: %s", nn_last_error());
    FUZZ_ASSERT(n == size && memcmp(again, bytes, n) == 0, "a loaded model saves other bytes");
    Transformer *m2 = NULL;
    FUZZ_ASSERT(tf_load(&m2, again, n) == NN_OK, "a saved model does not load: %s", nn_last_error());
    tf_destroy(m2);
    free(again);
    tf_destroy(m);
}

static void try_any(const uint8_t *bytes, size_t size) {
    if (size >= 8 && memcmp(bytes, "ATNLVIS", 8) == 0) try_load_vision(bytes, size);
    else if (size >= 8 && memcmp(bytes, "ATNLTFM", 8) == 0) try_load_transformer(bytes, size);
    else try_load(bytes, size);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    try_any(data, size);
    uint8_t *copy = malloc(size ? size : 1);
    if (!copy) return 0;
    if (size) memcpy(copy, data, size);
    fix_checksums(copy, size);
    try_any(copy, size);
    free(copy);
    return 0;
}
