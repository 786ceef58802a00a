/* libFuzzer target: the model-file loader (trainer_load), on the bytes as
 * given and, so mutations get past the checksums to the fields behind them,
 * on a copy whose two FNV-1a checksums (the model's and the file's) are
 * recomputed. A file that loads must translate, save and load again to the
 * same bytes. Any status but NN_OK / NN_ERR_* is a finding; so is anything
 * the sanitizers see. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab/trainer.h"
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    try_load(data, size);
    uint8_t *copy = malloc(size ? size : 1);
    if (!copy) return 0;
    if (size) memcpy(copy, data, size);
    fix_checksums(copy, size);
    try_load(copy, size);
    free(copy);
    return 0;
}
