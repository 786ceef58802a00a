/* Model files (src/layers/model_file.h): the kind of a file from its header;
 * files whose every field, length and checksum are right but whose contents
 * are not a working model (a weight that is NaN or past the limit, a step
 * count out of range, a hard-mode baseline that is NaN, 'location' attention
 * on a task of varying lengths, a configuration that does not fit its file)
 * are rejected with NN_ERR_VALUE and no model; the forward checks the loaders
 * and training run; a model at the step limit loads and says it cannot train. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab/trainer.h"
#include "attnlab/vision.h"
#include "base/bytes.h"
#include "base/hash.h"
#include "check.h"
#include "layers/model_file.h"

/* A weight whose products with another overflow nn_real. */
#ifdef NN_DOUBLE
#define HUGE_WEIGHT 1e300
#else
#define HUGE_WEIGHT 3e38f
#endif

static const NnTrainOptions ADAM = {.optimizer = NN_ADAM, .lr = (nn_real)0.01, .clip = 5};

static void put32(uint8_t *b, size_t at, uint32_t v) {
    uint8_t *p = b + at;
    nn_put_u32(&p, v);
}

static void put_f32(uint8_t *b, size_t at, float x) {
    uint8_t *p = b + at;
    nn_put_f32(&p, x);
}

static void put_f64(uint8_t *b, size_t at, double x) {
    uint64_t u;
    memcpy(&u, &x, 8);
    uint8_t *p = b + at;
    nn_put_u64(&p, u);
}

/* ---- seq2seq files (a model with its task, trainer.h) ------------------------- */

/* A saved trainer (n bytes) and where its model starts. */
static uint8_t *saved_trainer(TaskKind kind, int min_len, int max_len, int attention, size_t *n, size_t *model) {
    TaskConfig tc = {kind, TASK_DIGITS, min_len, max_len};
    S2sConfig mc = {RNN_CELL_GRU, 1, 0, 8, 12, attention, 0, 0, 0, 0, 0, 0, 8, 3};
    Trainer *t = NULL;
    if (!CHECK_OK(trainer_create(&t, &tc, NULL, 0, &mc), "create")) return NULL;
    CHECK_OK(trainer_train(t, &ADAM, 2, 8, NULL, NULL), "train");
    *n = trainer_save_size(t);
    uint8_t *b = check_track(malloc(*n));
    CHECK_OK(trainer_save(t, b, *n), "save");
    *model = 40; /* no pairs text */
    trainer_destroy(t);
    return b;
}

/* Both checksums of a trainer file recomputed: the model's, then the file's. */
static void fix_trainer(uint8_t *b, size_t n, size_t model) {
    put32(b, n - 8, nn_fnv1a32(b + model, n - 8 - model));
    put32(b, n - 4, nn_fnv1a32(b, n - 4));
}

/* Loads b (n bytes): NN_ERR_VALUE, no model, and a message with `want` in it. */
static void rejects_trainer(const uint8_t *b, size_t n, const char *want) {
    Trainer *t = (Trainer *)&t;
    int st = trainer_load(&t, b, n);
    CHECK(st == NN_ERR_VALUE && t == NULL && strstr(nn_last_error(), want), "got %d (%s), wanted ERR_VALUE with '%s'", st,
          nn_last_error(), want);
    trainer_destroy(t == (Trainer *)&t ? NULL : t);
}

static void seq2seq_files(void) {
    size_t n, model;
    uint8_t *good = saved_trainer(TASK_REVERSE, 2, 6, ATTN_SCORE_GENERAL, &n, &model);
    if (!good) return;
    uint8_t *b = check_track(malloc(n));
    size_t params = model + 84, steps = model + 72;
    const struct {
        const char *name;
        size_t at;
        float value;
        const char *want;
    } weights[] = {{"a NaN weight", params + 40, NAN, "NaN"},
                   {"an infinite weight", params, INFINITY, "infinite"},
                   {"a weight of 3e38", n - 12, 3e38f, "past the limit"},
                   {"a weight of -2e6", params + 4, -2e6f, "past the limit"}};
    for (size_t i = 0; i < sizeof weights / sizeof weights[0]; i++) {
        check_case("seq2seq file with %s (checksums recomputed) is rejected", weights[i].name);
        memcpy(b, good, n);
        put_f32(b, weights[i].at, weights[i].value);
        fix_trainer(b, n, model);
        rejects_trainer(b, n, weights[i].want);
    }
    const uint32_t bad_steps[] = {0xFFFFFFFFu, 0x7FFFFFFFu, 0x80000000u};
    for (size_t i = 0; i < 3; i++) {
        check_case("seq2seq file with step count 0x%x is rejected", bad_steps[i]);
        memcpy(b, good, n);
        put32(b, steps, bad_steps[i]);
        fix_trainer(b, n, model);
        rejects_trainer(b, n, "step count");
    }
    check_case("a seq2seq model at the step limit loads, and says it cannot train further");
    memcpy(b, good, n);
    put32(b, steps, S2S_MAX_STEPS);
    fix_trainer(b, n, model);
    Trainer *t = NULL;
    if (CHECK_OK(trainer_load(&t, b, n), "load")) {
        int st = trainer_train(t, &ADAM, 1, 4, NULL, NULL);
        CHECK(st == NN_ERR_LIMIT && strstr(nn_last_error(), "steps"), "train: %d (%s)", st, nn_last_error());
        CHECK(s2s_steps(trainer_model(t)) == S2S_MAX_STEPS, "steps %d", s2s_steps(trainer_model(t)));
        trainer_destroy(t);
    }
    check_case("a file edited to 'location' attention on a task of varying lengths is rejected before allocating");
    /* the task reads 2..6 digits: location would need fixed_in = max_in = 6 */
    memcpy(b, good, n);
    put32(b, model + 12 + 4 * 5, ATTN_SCORE_LOCATION);
    put32(b, model + 12 + 4 * 11, 6);
    fix_trainer(b, n, model);
    rejects_trainer(b, n, "parameters"); /* its parameter count no longer fits */
    {
        /* the same edit with the parameter count and length made right (location's fixed_in x D = 72
         * weights for general's D x D = 144): the task check must catch it */
        size_t m = n - 4 * 72;
        uint8_t *c = check_track(malloc(m));
        memcpy(c, b, m - 8);
        uint8_t *q = c + model + 76;
        nn_put_u64(&q, (uint64_t)((n - params - 8) / 4 - 72));
        fix_trainer(c, m, model);
        rejects_trainer(c, m, "location");
    }
    check_case("a seq2seq file whose vocabulary no longer fits its task is rejected");
    memcpy(b, good, n);
    put32(b, 12, TASK_SORT); /* same alphabet and lengths: still fits */
    fix_trainer(b, n, model);
    Trainer *u = NULL;
    CHECK_OK(trainer_load(&u, b, n), "reverse relabelled sort");
    trainer_destroy(u);
    put32(b, 16, TASK_LETTERS);
    fix_trainer(b, n, model);
    rejects_trainer(b, n, "do not match its task");
}

/* The forward check: weights whose products overflow fail it, with NN_ERR_VALUE. */
static void forward_checks(void) {
    check_case("s2s_check_forward: fine on a model, NN_ERR_VALUE once its weights overflow together");
    size_t n, model;
    uint8_t *b = saved_trainer(TASK_COPY, 3, 5, ATTN_SCORE_ADDITIVE, &n, &model);
    Trainer *t = NULL;
    if (!b || !CHECK_OK(trainer_load(&t, b, n), "load")) return;
    Seq2Seq *m = trainer_model(t);
    CHECK_OK(s2s_check_forward(m), "check");
    nn_real *w = s2s_params(m);
    for (size_t i = 0; i < s2s_num_params(m); i++) w[i] = i % 2 ? HUGE_WEIGHT : -HUGE_WEIGHT;
    int st = s2s_check_forward(m);
    CHECK(st == NN_ERR_VALUE && strstr(nn_last_error(), "not finite"), "got %d (%s)", st, nn_last_error());
    trainer_destroy(t);
}

/* ---- image-model files -------------------------------------------------------- */

static VisData *digits(void) {
    Rng r = {5};
    int N = 200;
    size_t size = 24 + (size_t)N * (1 + 784);
    uint8_t *a = check_track(malloc(size)), *p = a;
    memcpy(p, "ATNLDIG", 8);
    p += 8;
    uint32_t head[4] = {1, (uint32_t)N, 28, 28};
    for (int i = 0; i < 4; i++) nn_put_u32(&p, head[i]);
    for (int i = 0; i < N; i++) *p++ = (uint8_t)(i % 10);
    for (size_t i = 0; i < (size_t)N * 784; i++) *p++ = (uint8_t)rng_int(&r, 0, 255);
    VisData *d = NULL;
    CHECK_OK(vis_data_create(&d, a, size), "digits");
    return d;
}

static uint8_t *saved_vision(const VisData *d, VisMode mode, size_t *n) {
    ImgTaskConfig tc = {IMG_CLUTTERED, 2, 2, 3, 0};
    VisConfig mc = {0, 0, 2, {4, 8, 0}, RNN_CELL_GRU, 16, ATTN_SCORE_DOT, mode, 2, 0, 0.01, 8, 7, VIS_START_MEAN, VIS_SENSOR_GRID, 0, 0, 0};
    VisionTrainer *t = NULL;
    if (!CHECK_OK(vtr_create(&t, d, &tc, &mc), "create")) return NULL;
    CHECK_OK(vtr_train(t, &ADAM, 2, 8, NULL), "train");
    *n = vtr_save_size(t);
    uint8_t *b = check_track(malloc(*n));
    CHECK_OK(vtr_save(t, b, *n), "save");
    vtr_destroy(t);
    return b;
}

static void fix_vision(uint8_t *b, size_t n) { put32(b, n - 4, nn_fnv1a32(b, n - 4)); }

static void rejects_vision(const VisData *d, const uint8_t *b, size_t n, const char *want) {
    VisionTrainer *t = (VisionTrainer *)&t;
    int st = vtr_load(&t, d, b, n);
    CHECK(st == NN_ERR_VALUE && t == NULL && strstr(nn_last_error(), want), "got %d (%s), wanted ERR_VALUE with '%s'", st,
          nn_last_error(), want);
    vtr_destroy(t == (VisionTrainer *)&t ? NULL : t);
}

static void vision_files(void) {
    VisData *d = digits();
    size_t n;
    uint8_t *good = saved_vision(d, VIS_HARD, &n);
    if (!good) return;
    uint8_t *b = check_track(malloc(n));
    /* layout (vision.h): 12 bytes | 17 x i32 | f64 entropy @80 | u64 seed @88 | u32 steps @96 | T f64 baselines @100 */
    const int T = 2;
    size_t params = 100 + 8 * T + 24;
    check_case("an image-model file loads and saves to the same bytes");
    VisionTrainer *t = NULL;
    if (CHECK_OK(vtr_load(&t, d, good, n), "load")) {
        CHECK(vtr_save(t, b, n) == NN_OK && memcmp(b, good, n) == 0, "saved bytes differ");
        vtr_destroy(t);
    }
    const struct {
        const char *name;
        size_t at;
        double value;
        int f64;
        const char *want;
    } cases[] = {{"a NaN weight", params + 12, NAN, 0, "NaN"},
                 {"a weight of 3e38", n - 8, 3e38, 0, "past the limit"},
                 {"a NaN baseline", 100, NAN, 1, "baseline"},
                 {"a baseline of 2", 108, 2, 1, "baseline"},
                 {"a NaN entropy", 80, NAN, 1, "entropy"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        check_case("image-model file with %s (checksum recomputed) is rejected", cases[i].name);
        memcpy(b, good, n);
        if (cases[i].f64) put_f64(b, cases[i].at, cases[i].value);
        else put_f32(b, cases[i].at, (float)cases[i].value);
        fix_vision(b, n);
        rejects_vision(d, b, n, cases[i].want);
    }
    const uint32_t bad_steps[] = {0xFFFFFFFFu, 0x7FFFFFFFu};
    for (size_t i = 0; i < 2; i++) {
        check_case("image-model file with step count 0x%x is rejected", bad_steps[i]);
        memcpy(b, good, n);
        put32(b, 96, bad_steps[i]);
        fix_vision(b, n);
        rejects_vision(d, b, n, "step count");
    }
    /* fields: task 12.. (kind, clutter, min, max), rows 28, cols 32, layers 36, channels 40..48, cell 52,
     * hidden 56, attention 60, mode 64, steps 68, sequence 72, batch 76 */
    const struct {
        const char *name;
        size_t at;
        uint32_t value;
        const char *want;
    } fields[] = {{"a large configuration (channels 64, hidden 256, batch 256)", 56, 256, "parameters"},
                  {"a canvas that is not its task's", 28, 28, "canvas"},
                  {"a sequence flag on a single-digit task", 72, 1, "canvas"},
                  {"batch 0", 76, 0, "batch"},
                  {"clutter 99", 16, 99, "clutter"},
                  {"task kind 7", 12, 7, "task"},
                  {"3 layers on 2 channel counts", 36, 3, "channels"}};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        check_case("image-model file with %s is rejected before allocating", fields[i].name);
        memcpy(b, good, n);
        put32(b, fields[i].at, fields[i].value);
        if (i == 0) {
            put32(b, 40, 64), put32(b, 44, 64), put32(b, 76, 256);
        }
        fix_vision(b, n);
        VisionTrainer *v = (VisionTrainer *)&v;
        int st = vtr_load(&v, d, b, n);
        CHECK(st != NN_OK && v == NULL && strstr(nn_last_error(), fields[i].want) && strstr(nn_last_error(), "model file"),
              "got %d (%s), wanted '%s'", st, nn_last_error(), fields[i].want);
        vtr_destroy(v == (VisionTrainer *)&v ? NULL : v);
    }
    check_case("vtr_load: the forward check rejects weights that overflow together");
    if (CHECK_OK(vtr_load(&t, d, good, n), "load")) {
        VisionModel *m = vtr_model(t);
        nn_real *w = vis_params(m);
        for (size_t i = 0; i < vis_num_params(m); i++) w[i] = (nn_real)(i % 2 ? 3e38 : -3e38);
        CHECK(vtr_save(t, b, n) == NN_OK, "save");
        rejects_vision(d, b, n, "past the limit");
        vtr_destroy(t);
    }
    vis_data_destroy(d);
}

/* ---- the kind of a file ------------------------------------------------------- */

static void kinds(void) {
    check_case("model_file_kind names each kind from its header, and refuses the rest");
    size_t n, model;
    uint8_t *b = saved_trainer(TASK_COPY, 2, 4, ATTN_SCORE_DOT, &n, &model);
    if (!b) return;
    int kind;
    uint32_t version;
    CHECK(model_file_kind(b, n, &kind, &version) == NN_OK && kind == MODEL_FILE_TRAINER && version == 1, "trainer: %d", kind);
    CHECK(model_file_kind(b + model, n - model - 4, &kind, &version) == NN_OK && kind == MODEL_FILE_SEQ2SEQ, "seq2seq: %d",
          kind);
    VisData *d = digits();
    size_t m;
    uint8_t *v = saved_vision(d, VIS_SOFT, &m);
    vis_data_destroy(d);
    if (v) CHECK(model_file_kind(v, m, &kind, &version) == NN_OK && kind == MODEL_FILE_VISION, "vision: %d", kind);
    if (v) { /* image files have three formats (2: the constant start, 3: the retina); a fourth is refused by the kind check already */
        put32(v, 8, 2);
        CHECK(model_file_kind(v, m, &kind, &version) == NN_OK && version == 2, "vision format 2: %s", nn_last_error());
        put32(v, 8, 3);
        CHECK(model_file_kind(v, m, &kind, &version) == NN_OK && version == 3, "vision format 3: %s", nn_last_error());
        put32(v, 8, 4);
        CHECK(model_file_kind(v, m, &kind, &version) == NN_ERR_VALUE && strstr(nn_last_error(), "versions 1..3"),
              "vision format 4: %s", nn_last_error());
        put32(v, 8, 1);
    }
    CHECK(model_file_kind(v, 11, &kind, &version) == NN_ERR_VALUE && kind == 0 && strstr(nn_last_error(), "truncated"),
          "11 bytes: %s", nn_last_error());
    static const uint8_t digit_set[16] = "ATNLDIG";
    CHECK(model_file_kind(digit_set, 16, &kind, &version) == NN_ERR_VALUE && strstr(nn_last_error(), "digit set"),
          "digits: %s", nn_last_error());
    CHECK(model_file_kind((const uint8_t *)"PK\003\004xxxxxxxx", 12, &kind, &version) == NN_ERR_VALUE &&
              strstr(nn_last_error(), "not an attnlab model"), "zip: %s", nn_last_error());
    CHECK(model_file_kind(NULL, 0, &kind, &version) == NN_ERR_VALUE, "nothing");
    put32(b, 8, 2);
    CHECK(model_file_kind(b, n, &kind, &version) == NN_ERR_VALUE && strstr(nn_last_error(), "version 2"), "version 2: %s",
          nn_last_error());
    check_case("each loader names the loader of another kind's file");
    VisionTrainer *vt = NULL;
    d = digits();
    put32(b, 8, 1);
    CHECK(vtr_load(&vt, d, b, n) == NN_ERR_VALUE && strstr(nn_last_error(), "loadSeq2Seq"), "vision loader: %s", nn_last_error());
    Trainer *t = NULL;
    if (v) CHECK(trainer_load(&t, v, m) == NN_ERR_VALUE && strstr(nn_last_error(), "loadVisionModel"), "s2s: %s", nn_last_error());
    vis_data_destroy(d);
}

int main(void) {
    kinds();
    seq2seq_files();
    forward_checks();
    vision_files();
    return check_summary();
}
