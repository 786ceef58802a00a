/* Models that stay sound: a training call that diverges changes nothing and
 * says so; a model file is checked field by field, and its length against
 * what it declares, before anything is allocated; text the task cannot
 * encode is an error naming the character and its position.
 * Allocation sizes come from the sanitizer's malloc hooks (every native
 * test runs under ASan). */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab/trainer.h"
#include "base/bytes.h"
#include "base/hash.h"
#include "check.h"

/* ---- what the heap does while a call runs ------------------------------------ */

int __sanitizer_install_malloc_and_free_hooks(void (*malloc_hook)(const volatile void *, size_t),
                                              void (*free_hook)(const volatile void *));
size_t __sanitizer_get_allocated_size(const volatile void *p);

static size_t heap_live, heap_peak; /* bytes allocated since heap_watch(), and their peak */
static int heap_on;

static void on_malloc(const volatile void *p, size_t size) {
    (void)p;
    if (!heap_on) return;
    heap_live += size;
    if (heap_live > heap_peak) heap_peak = heap_live;
}
static void on_free(const volatile void *p) {
    if (heap_on && p) {
        size_t size = __sanitizer_get_allocated_size(p);
        heap_live = size < heap_live ? heap_live - size : 0;
    }
}
static void heap_watch(void) {
    heap_live = heap_peak = 0;
    heap_on = 1;
}
static size_t heap_unwatch(void) {
    heap_on = 0;
    return heap_peak;
}

/* ---- model files ------------------------------------------------------------------ */

/* Offsets in a trainer file (trainer.h): header, pairs text, stream, then the model (seq2seq.h). */
#define TRAINER_HEADER 40 /* magic 8, version 4, task config 16, text length 4, stream 8 */
#define MODEL_STEPS 72    /* in the model: magic 8, version 4, config 52, seed 8 */
#define MODEL_COUNT 76    /* then the step count 4; the parameter count 8 */
#define MODEL_CONFIG 12   /* the 13 config fields after magic and version */

static const NnTrainOptions ADAM = {.optimizer = NN_ADAM, .lr = (nn_real)0.01, .clip = 5};

static Trainer *make(int batch, int max_len) {
    TaskConfig tc = {TASK_REVERSE, TASK_DIGITS, 2, max_len};
    S2sConfig mc = {RNN_CELL_GRU, 1, 0, 4, 8, ATTN_SCORE_DOT, 0, 0, 0, 0, 0, 0, batch, 5};
    Trainer *t = NULL;
    int st = trainer_create(&t, &tc, NULL, 0, &mc);
    CHECK(st == NN_OK, "create: %d (%s)", st, nn_last_error());
    return t;
}

static uint8_t *save(const Trainer *t, size_t *n) {
    *n = trainer_save_size(t);
    uint8_t *bytes = malloc(*n);
    if (bytes && trainer_save(t, bytes, *n) != NN_OK) {
        free(bytes);
        return NULL;
    }
    return bytes;
}

/* Rewrites the model's and the file's checksums after an edit (no pairs text). */
static void reseal(uint8_t *file, size_t n) {
    uint8_t *model = file + TRAINER_HEADER, *p = file + n - 8;
    nn_put_u32(&p, nn_fnv1a32(model, (size_t)(file + n - 8 - model)));
    p = file + n - 4;
    nn_put_u32(&p, nn_fnv1a32(file, n - 4));
}

static void put_at(uint8_t *at, uint32_t v) { nn_put_u32(&at, v); }

/* ---- a diverging call changes nothing ------------------------------------------------- */

static void test_divergence(void) {
    check_case("a step that is not finite: NN_ERR_VALUE naming the step, the model as before the call");
    Trainer *t = make(8, 6);
    if (!t) return;
    CHECK_OK(trainer_train(t, &ADAM, 3, 8, NULL, NULL), "warm-up");
    /* a weight gone NaN (as a C caller can write): no step may carry on from it */
    Seq2Seq *m = trainer_model(t);
    nn_real *p = s2s_params(m), *keep = malloc(sizeof(nn_real) * s2s_num_params(m)), p0 = p[0];
    p[0] = (nn_real)NAN;
    memcpy(keep, p, sizeof(nn_real) * s2s_num_params(m));
    size_t n0, n1;
    uint8_t *before = save(t, &n0);
    float losses[5];
    int st = trainer_train(t, &ADAM, 5, 8, losses, NULL);
    CHECK(st == NN_ERR_VALUE, "returned %d (%s)", st, nn_last_error());
    CHECK(strstr(nn_last_error(), "training diverged at step 4 ") && strstr(nn_last_error(), "smaller learning rate"),
          "message: %s", nn_last_error());
    uint8_t *after = save(t, &n1);
    CHECK(before && after && n0 == n1 && memcmp(before, after, n0) == 0, "the saved model changed");
    CHECK(memcmp(keep, s2s_params(m), sizeof(nn_real) * s2s_num_params(m)) == 0, "the weights changed"); /* NaN bits too */
    CHECK(s2s_steps(m) == 3, "steps %d after the failed call, 3 before", s2s_steps(m));
    check_case("after a diverged call, the weights restored, the model trains and translates");
    p[0] = p0;
    CHECK(trainer_train(t, &ADAM, 2, 8, losses, NULL) == NN_OK && isfinite(losses[1]), "train: %s", nn_last_error());
    int32_t in_ids[8], out_ids[8];
    int in_len, out_len;
    char out[16];
    nn_real align[8 * 8];
    st = trainer_translate(t, "1234", 4, 1, in_ids, &in_len, out_ids, &out_len, align, out);
    CHECK(st == NN_OK && out_len >= 1, "translate: %d (%s)", st, nn_last_error());
    free(keep);
    free(before);
    free(after);
    trainer_destroy(t);
}

/* An update that would overflow a weight is refused whole: nothing changes. */
static void test_update_overflow(void) {
    check_case("an update that would make a weight infinite is not taken");
    Trainer *t = make(8, 6);
    if (!t) return;
    Seq2Seq *m = trainer_model(t);
    size_t P = s2s_num_params(m);
    nn_real *p = s2s_params(m);
    const nn_real big = (nn_real)(sizeof(nn_real) == sizeof(double) ? DBL_MAX : FLT_MAX);
    p[0] = -(nn_real)0.9 * big;
    nn_real *keep = malloc(sizeof(nn_real) * P);
    memcpy(keep, p, sizeof(nn_real) * P);
    for (int opt = 0; opt < 2; opt++) {
        s2s_zero_grad(m);
        for (size_t i = 0; i < P; i++) s2s_grads(m)[i] = (nn_real)0.5;
        NnTrainOptions o = {.optimizer = (NnOptimizer)opt, .lr = (nn_real)0.9 * big, .clip = 0};
        int st = s2s_update(m, &o, NULL);
        CHECK(st == NN_ERR_VALUE && strstr(nn_last_error(), "weight 0"), "%s: %d (%s)", opt ? "sgd" : "adam", st,
              nn_last_error());
        CHECK(memcmp(keep, p, sizeof(nn_real) * P) == 0 && s2s_steps(m) == 0, "%s: weights or steps changed",
              opt ? "sgd" : "adam");
    }
    free(keep);
    trainer_destroy(t);
}

/* ---- model files: every field in range ---------------------------------------------- */

/* The saved file (n bytes) with the u32 at offset `at` set to value and the
 * checksums resealed, loaded into *u. */
static int load_with(uint8_t *file, size_t n, size_t at, uint32_t value, Trainer **u) {
    put_at(file + at, value);
    reseal(file, n);
    *u = NULL;
    return trainer_load(u, file, n);
}

static void test_step_count(void) {
    Trainer *t = make(8, 6);
    if (!t) return;
    size_t n;
    uint8_t *file = save(t, &n);
    const size_t STEPS = TRAINER_HEADER + MODEL_STEPS;
    Trainer *u;
    check_case("a step count of 0xFFFFFFFF is rejected");
    int st = load_with(file, n, STEPS, 0xFFFFFFFFu, &u);
    CHECK(st == NN_ERR_VALUE && u == NULL && strstr(nn_last_error(), "step count"), "0xFFFFFFFF: %d (%s)", st,
          nn_last_error());
    trainer_destroy(u);
    check_case("a step count of 0x7FFFFFFF (steps++ would overflow) is rejected");
    st = load_with(file, n, STEPS, 0x7FFFFFFFu, &u);
    CHECK(st == NN_ERR_VALUE && u == NULL, "0x7FFFFFFF: %d (%s)", st, nn_last_error());
    if (u) trainer_train(u, &ADAM, 1, 4, NULL, NULL); /* the overflow, if it loaded */
    trainer_destroy(u);
    check_case("a model at the step limit loads, and training it is NN_ERR_LIMIT with the model unchanged");
    st = load_with(file, n, STEPS, S2S_MAX_STEPS, &u);
    CHECK(st == NN_OK, "S2S_MAX_STEPS: %d (%s)", st, nn_last_error());
    if (u) {
        st = trainer_train(u, &ADAM, 1, 4, NULL, NULL);
        CHECK(st == NN_ERR_LIMIT && s2s_steps(trainer_model(u)) == S2S_MAX_STEPS, "train at the limit: %d (%s), steps %d",
              st, nn_last_error(), s2s_steps(trainer_model(u)));
    }
    trainer_destroy(u);
    check_case("a call that fails at its third step leaves the model as the call found it");
    st = load_with(file, n, STEPS, S2S_MAX_STEPS - 2, &u);
    if (CHECK(st == NN_OK, "load: %d (%s)", st, nn_last_error())) {
        size_t n1, n2;
        uint8_t *a = save(u, &n1);
        st = trainer_train(u, &ADAM, 5, 4, NULL, NULL);
        uint8_t *b = save(u, &n2);
        CHECK(st == NN_ERR_LIMIT && s2s_steps(trainer_model(u)) == S2S_MAX_STEPS - 2, "%d (%s), steps %d", st,
              nn_last_error(), s2s_steps(trainer_model(u)));
        CHECK(a && b && n1 == n2 && memcmp(a, b, n1) == 0, "the saved model changed");
        free(a);
        free(b);
    }
    trainer_destroy(u);
    free(file);
    trainer_destroy(t);
}

/* Each config field set out of range (checksums resealed): rejected by name. */
static void test_config_fields(void) {
    Trainer *t = make(8, 6);
    if (!t) return;
    size_t n;
    uint8_t *file = save(t, &n);
    uint8_t *copy = malloc(n);
    static const struct {
        int field;
        int32_t value;
        const char *mention;
    } bad[] = {{0, 7, "cell"},       {1, 3, "layers"},    {2, 2, "bidirectional"}, {3, 0, "embed"},
               {4, 100000, "hidden"}, {5, 9, "attention"}, {6, -1, "attnHidden"},   {7, 1, "vocabulary"},
               {8, 300, "vocabulary"}, {9, 65, "lengths"},  {10, 0, "lengths"},      {11, 40, "fixed input"},
               {12, 0, "batch"},     {12, 5000, "batch"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        check_case("config field %d = %d is rejected, naming %s", bad[i].field, (int)bad[i].value, bad[i].mention);
        memcpy(copy, file, n);
        Trainer *u;
        int st = load_with(copy, n, TRAINER_HEADER + MODEL_CONFIG + 4 * bad[i].field, (uint32_t)bad[i].value, &u);
        CHECK(st != NN_OK && u == NULL && strstr(nn_last_error(), bad[i].mention), "%d (%s)", st, nn_last_error());
        trainer_destroy(u);
    }
    check_case("a NaN weight (checksums resealed) is rejected");
    memcpy(copy, file, n);
    Trainer *u;
    int st = load_with(copy, n, TRAINER_HEADER + MODEL_COUNT + 8, 0x7fc00000u, &u); /* the first weight: NaN */
    CHECK(st == NN_ERR_VALUE && u == NULL && strstr(nn_last_error(), "NaN"), "%d (%s)", st, nn_last_error());
    trainer_destroy(u);
    free(copy);
    free(file);
    trainer_destroy(t);
}

/* ---- model files: the length first, then small buffers ------------------------------- */

static void test_length_before_allocation(void) {
    check_case("a 132-byte file declaring a large model is rejected before it allocates");
    Trainer *t = make(8, 6);
    if (!t) return;
    size_t n;
    uint8_t *file = save(t, &n);
    uint8_t *config = file + TRAINER_HEADER + MODEL_CONFIG;
    const int32_t big[13] = {RNN_CELL_LSTM, 2, 1, 512, 512, ATTN_SCORE_ADDITIVE, 512, 256, 256, 64, 64, 0, 1024};
    for (int i = 0; i < 13; i++) put_at(config + 4 * i, (uint32_t)big[i]);
    size_t small = 132; /* the header, the model's header and a few bytes */
    uint8_t *p = file + small - 4;
    nn_put_u32(&p, nn_fnv1a32(file, small - 4));
    Trainer *u = NULL;
    heap_watch();
    int st = trainer_load(&u, file, small);
    size_t peak = heap_unwatch();
    CHECK(st == NN_ERR_VALUE && u == NULL, "132 bytes: %d (%s)", st, nn_last_error());
    CHECK(peak < 64 * 1024, "loading a 132-byte file allocated %zu bytes at its peak", peak);
    trainer_destroy(u);
    free(file);
    trainer_destroy(t);

    check_case("loading a small model saved with batch 1024 allocates in proportion to the file");
    t = make(1024, 63);
    if (!t) return;
    file = save(t, &n);
    heap_watch();
    st = trainer_load(&u, file, n);
    peak = heap_unwatch();
    CHECK_OK(st, "load");
    /* the buffers of S2S_MAX_BEAM rows (beam alignments, 64 x 64 steps) plus a multiple of the
     * file; the batch's 1024 rows come when a batch that large does */
    CHECK(peak < 32 * n + (4 << 20), "a %zu-byte file allocated %zu bytes at its peak", n, peak);
    if (u) {
        CHECK(s2s_config(trainer_model(u))->batch == 1024, "batch %d", s2s_config(trainer_model(u))->batch);
        size_t n2;
        uint8_t *again = save(u, &n2);
        CHECK(again && n2 == n && memcmp(again, file, n) == 0, "the file saved again differs");
        CHECK_OK(trainer_train(u, &ADAM, 1, 1024, NULL, NULL), "train with batch 1024");
        free(again);
    }
    trainer_destroy(u);
    free(file);
    trainer_destroy(t);
}

/* ---- translate: characters the task cannot encode ------------------------------------ */

static void test_translate_characters(void) {
    Trainer *t = make(8, 6);
    if (!t) return;
    int32_t in_ids[8], out_ids[8];
    int in_len, out_len;
    char out[16];
    nn_real align[8 * 8];
    static const struct {
        const char *text;
        size_t len;
        const char *mention;
    } bad[] = {
        {"12\0003", 4, "U+0000 at position 3"},
        {"1\xc3\xa9" "3", 4, "U+00E9 at position 2"},
        {"\xe2\x82\xac" "12", 5, "U+20AC at position 1"},
        {"12x", 3, "'x' at position 3"},
        {"1\xff", 2, "byte 0xFF at position 2"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        check_case("translate: %s", bad[i].mention);
        int st = trainer_translate(t, bad[i].text, bad[i].len, 1, in_ids, &in_len, out_ids, &out_len, align, out);
        CHECK(st == NN_ERR_VALUE && strstr(nn_last_error(), bad[i].mention), "%d (%s)", st, nn_last_error());
    }
    check_case("translate: the whole text, not up to a NUL");
    int st = trainer_translate(t, "1234", 4, 1, in_ids, &in_len, out_ids, &out_len, align, out);
    CHECK(st == NN_OK && in_len == 4, "%d (%s), in_len %d", st, nn_last_error(), in_len);
    trainer_destroy(t);
}

int main(void) {
    __sanitizer_install_malloc_and_free_hooks(on_malloc, on_free);
    test_divergence();
    test_update_overflow();
    test_step_count();
    test_config_fields();
    test_length_before_allocation();
    test_translate_characters();
    return check_summary();
}
