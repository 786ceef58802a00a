/* The transformer's model file (tf_save / tf_load) and what a model shows:
 * a save loads back to the same bytes, weights, evaluation and inspection
 * (a text task's vocabulary included); the same seed saves the same bytes;
 * truncated, flipped and inconsistent files (checksums recomputed, so the
 * field checks are reached) are rejected with a message and no model; head
 * scores of a model whose heads are set by hand (a previous-token head, then
 * an induction head reading it); ablating a head changes the loss. */
#include <math.h>

#include "attnlab/transformer.h"
#include "base/bytes.h"
#include "base/hash.h"
#include "check.h"
#include "layers/model_file.h"
#include "models/transformer_internal.h"
#include "train/transformer_train.h"

static Transformer *make(TfTaskKind task, TfPositional pos, int d_ff, const char *text, uint64_t seed) {
    TfConfig c = {task, 2, 2, 16, d_ff, 16, pos, ATTN_SCORE_SCALED_DOT, 4, seed};
    Transformer *m = NULL;
    int st = tf_create(&m, &c, text, text ? strlen(text) : 0);
    CHECK(st == NN_OK, "tf_create: %s", nn_last_error());
    return m;
}

static uint8_t *saved(const Transformer *m, size_t *n) {
    *n = tf_save_size(m);
    uint8_t *b = malloc(*n);
    CHECK(b && tf_save(m, b, *n) == NN_OK, "tf_save: %s", nn_last_error());
    return b;
}

static void train(Transformer *m, int steps) {
    TfTrainOptions o = {steps, 4, (nn_real)3e-3, (nn_real)0.01, 1, 0, 1, 0, 0};
    CHECK(tf_train(m, &o, NULL) == NN_OK, "train: %s", nn_last_error());
}

static const char TEXT[] = "It was the best of times, it was the worst of times, it was the age of wisdom, it was "
                           "the age of foolishness, it was the epoch of belief, it was the epoch of incredulity.";

static void check_round_trip(TfTaskKind task, TfPositional pos, int d_ff, const char *text) {
    check_case("save / load task=%d positional=%d dFF=%d", (int)task, (int)pos, d_ff);
    Transformer *m = make(task, pos, d_ff, text, 5);
    if (!m) return;
    train(m, 3);
    /* the file holds float32 weights: in the double build the model's are
     * rounded to them first, so the saved and the loaded are the same model */
    for (size_t i = 0; i < tf_num_params(m); i++) m->model->opt.params[i] = (nn_real)(float)m->model->opt.params[i];
    size_t n;
    uint8_t *b = saved(m, &n);
    Transformer *l = NULL;
    CHECK(tf_load(&l, b, n) == NN_OK && l, "tf_load: %s", nn_last_error());
    if (!l) return;
    CHECK(tf_vocab(l) == tf_vocab(m) && tf_steps(l) == 3 && tf_seq_len(l) == tf_seq_len(m), "vocab %d/%d, steps %d",
          tf_vocab(l), tf_vocab(m), tf_steps(l));
    for (int v = 0; v < tf_vocab(m); v++) CHECK(!strcmp(tf_token_name(l, v), tf_token_name(m, v)), "token %d", v);
    const TfConfig *a = tf_config(m), *z = tf_config(l);
    CHECK(a->task == z->task && a->layers == z->layers && a->heads == z->heads && a->d_model == z->d_model &&
              a->d_ff == z->d_ff && a->context == z->context && a->positional == z->positional &&
              a->score == z->score && a->batch == z->batch && a->seed == z->seed,
          "the same configuration");
    size_t n2;
    uint8_t *b2 = saved(l, &n2);
    CHECK(n2 == n && !memcmp(b, b2, n), "the loaded model saves the same %zu bytes", n);
    double loss[2], acc[2];
    tf_evaluate(m, TF_SPLIT_TEST, 40, &loss[0], &acc[0]);
    tf_evaluate(l, TF_SPLIT_TEST, 40, &loss[1], &acc[1]);
    CHECK(loss[0] == loss[1] && acc[0] == acc[1], "evaluate: loss %.17g / %.17g, accuracy %g / %g", loss[0], loss[1],
          acc[0], acc[1]);
    int32_t tokens[16];
    for (int i = 0; i < 16; i++) tokens[i] = (i * 7) % tf_vocab(m);
    float att[2][2 * 2 * 16 * 16], p[2][16 * TF_TOP];
    int32_t ids[2][16 * TF_TOP], lens[2][2 * 16];
    tf_inspect(m, tokens, 16, att[0], ids[0], p[0], lens[0]);
    tf_inspect(l, tokens, 16, att[1], ids[1], p[1], lens[1]);
    CHECK(!memcmp(att[0], att[1], sizeof att[0]) && !memcmp(p[0], p[1], sizeof p[0]) &&
              !memcmp(ids[0], ids[1], sizeof ids[0]) && !memcmp(lens[0], lens[1], sizeof lens[0]),
          "inspect: the same attention, predictions and lens");
    /* training goes on from the saved step and stream */
    train(l, 1);
    CHECK(tf_steps(l) == 4, "steps after one more: %d", tf_steps(l));
    free(b2);
    free(b);
    tf_destroy(l);
    tf_destroy(m);
}

/* evaluate sums its loss per batch of the configured size, not of whatever
 * the buffers hold (a larger training batch grows them; a loaded model's hold one) */
static void check_evaluate_batches(void) {
    check_case("evaluate does not depend on the buffers' batch");
    Transformer *m = make(TF_TASK_COPY, TF_POS_LEARNED, 8, NULL, 6);
    if (!m) return;
    double loss[2], acc[2];
    tf_evaluate(m, TF_SPLIT_TEST, 50, &loss[0], &acc[0]);
    CHECK(tf_reserve(m->model, 7) == NN_OK, "reserve: %s", nn_last_error());
    tf_evaluate(m, TF_SPLIT_TEST, 50, &loss[1], &acc[1]);
    CHECK(loss[0] == loss[1] && acc[0] == acc[1], "loss %.17g, then %.17g", loss[0], loss[1]);
    tf_destroy(m);
}

static void check_same_seed(void) {
    check_case("same seed, same saved bytes");
    Transformer *a = make(TF_TASK_INDUCTION, TF_POS_ROPE, 0, NULL, 11), *b = make(TF_TASK_INDUCTION, TF_POS_ROPE, 0, NULL, 11);
    if (!a || !b) return;
    train(a, 2);
    train(b, 2);
    size_t na, nb;
    uint8_t *fa = saved(a, &na), *fb = saved(b, &nb);
    CHECK(na == nb && !memcmp(fa, fb, na), "two models of seed 11: %zu and %zu bytes, equal", na, nb);
    free(fa);
    free(fb);
    tf_destroy(a);
    tf_destroy(b);
}

/* ---- damaged files ---------------------------------------------------------------- */

static void put32(uint8_t *p, uint32_t v) { nn_put_u32(&p, v); }
static void fix_checksum(uint8_t *b, size_t n) { put32(b + n - 4, nn_fnv1a32(b, n - 4)); }

static void expect_rejected(const uint8_t *b, size_t n, const char *what, const char *message) {
    Transformer *m = (Transformer *)1;
    int st = tf_load(&m, b, n);
    CHECK(st != NN_OK && !m && nn_last_error()[0], "%s: status %d, message '%s'", what, st, nn_last_error());
    if (message) CHECK(strstr(nn_last_error(), message) != NULL, "%s: '%s' does not say '%s'", what, nn_last_error(), message);
    if (st == NN_OK) tf_destroy(m);
}

static void check_damaged(void) {
    Transformer *m = make(TF_TASK_TEXT, TF_POS_LEARNED, 8, TEXT, 3);
    if (!m) return;
    size_t n;
    uint8_t *b = saved(m, &n), *c = malloc(n + 8);
    check_case("model_file_kind: a transformer");
    int kind;
    uint32_t version;
    CHECK(model_file_kind(b, n, &kind, &version) == NN_OK && kind == MODEL_FILE_TRANSFORMER && version == 1,
          "kind %d, version %u: %s", kind, version, nn_last_error());
    check_case("damaged file: every truncation");
    for (size_t k = 0; k < n; k++) expect_rejected(b, k, "truncated", NULL);
    check_case("damaged file: flipped bits");
    for (size_t at = 0; at < n; at += 7) {
        memcpy(c, b, n);
        c[at] ^= (uint8_t)(1u << (at % 8));
        expect_rejected(c, n, "a flipped bit", NULL);
    }
    check_case("damaged file: a byte appended");
    memcpy(c, b, n);
    c[n] = 0;
    expect_rejected(c, n + 1, "one byte more", "bytes");
    /* fields at their offsets (include/attnlab/transformer.h), each with the checksum recomputed */
    const struct {
        const char *what;
        size_t at;
        uint32_t value;
        const char *message;
    } fields[] = {
        {"version 3", 8, 3, "version"},      {"version 2, no text past ASCII", 8, 2, "past ASCII"}, {"task 99", 12, 99, NULL},        {"layers 9", 16, 9, "layers"},
        {"layers 1", 16, 1, "parameters"},   {"heads 3", 20, 3, "heads"},      {"dModel 0", 24, 0, "dModel"},
        {"context 4", 32, 4, "context"},     {"context 1e6", 32, 1000000, "context"}, {"positional 9", 36, 9, "positional"},
        {"score 2", 40, 2, "score"},         {"batch 0", 44, 0, "batch"},      {"vocabulary 0", 48, 0, "vocabulary"},
        {"vocabulary 5", 48, 5, NULL},       {"steps -1", 52, 0xffffffffu, "step"}, {"text length 2^31", 72, 0x80000000u, "text"},
        {"text length 3", 72, 3, NULL},      {"task copy with a text", 12, TF_TASK_COPY, "text"},
    };
    for (size_t i = 0; i < sizeof fields / sizeof *fields; i++) {
        check_case("damaged file: %s", fields[i].what);
        memcpy(c, b, n);
        put32(c + fields[i].at, fields[i].value);
        fix_checksum(c, n);
        expect_rejected(c, n, fields[i].what, fields[i].message);
    }
    /* weights: the first and the last, NaN, infinite and past the limit */
    const float bad[3] = {NAN, INFINITY, 1e7f};
    size_t first = n - 4 - 4 * tf_num_params(m);
    for (int w = 0; w < 3; w++)
        for (int end = 0; end < 2; end++) {
            check_case("damaged file: weight %s = %g", end ? "last" : "first", (double)bad[w]);
            memcpy(c, b, n);
            uint8_t *p = c + (end ? n - 8 : first);
            nn_put_f32(&p, bad[w]);
            fix_checksum(c, n);
            expect_rejected(c, n, "a bad weight", "parameter");
        }
    check_case("another kind of file");
    memcpy(c, b, n);
    memcpy(c, "ATNLVIS", 8);
    expect_rejected(c, n, "an image model's magic", "loadVisionModel");
    free(b);
    free(c);
    tf_destroy(m);
}

/* ---- heads set by hand ------------------------------------------------------------ */

static nn_real *tensor(Transformer *m, const char *name) {
    size_t off, count;
    for (int i = 0; tf_tensor(m, i, &off, &count); i++)
        if (!strcmp(tf_tensor(m, i, &off, &count), name)) return m->model->opt.params + off;
    CHECK(0, "no tensor %s", name);
    return m->model->opt.params;
}

/* 'copy' sequences repeat k distinct digits (seq_task_repeat). The residual
 * stream holds a token one-hot (dims 0..V-1), a position one-hot (V..V+15)
 * and, written by layer 0's head 0, the previous token (P0..P0+V-1):
 *  - layer 0, head 0: query position t, key position j + 1: attends to t - 1,
 *    its value the token, written to the previous-token dims;
 *  - layer 1, head 0: query the token, key the previous token: at a repeat it
 *    attends to the position after the first occurrence (an induction head);
 *    position 0, whose "previous token" is its own, is keyed away.
 * Every row holds the same values in other places, so every LayerNorm is the
 * same affine map on every row, and the one-hots' matches are what differ. */
static void check_hand_built_heads(void) {
    check_case("head scores of heads set by hand");
    TfConfig c = {TF_TASK_COPY, 2, 2, 40, 0, 16, TF_POS_LEARNED, ATTN_SCORE_SCALED_DOT, 8, 1};
    Transformer *m = NULL;
    if (tf_create(&m, &c, NULL, 0) != NN_OK) return;
    int C = c.d_model, C3 = 3 * C, V = tf_vocab(m), P0 = V + 16, D = C / c.heads;
    const nn_real s = 3; /* a match scores s^2 |LN one-hot|^2 / sqrt(D) ~ 38 */
    memset(m->model->opt.params, 0, sizeof(nn_real) * tf_num_params(m));
    for (int l = 0; l < 2; l++) {
        char name[24];
        snprintf(name, sizeof name, "h%d.ln1_w", l);
        nn_real *g = tensor(m, name);
        for (int k = 0; k < C; k++) g[k] = 1;
    }
    nn_real *wte = tensor(m, "wte"), *wpe = tensor(m, "wpe");
    for (int v = 0; v < V; v++) wte[v * C + v] = 1;
    for (int t = 0; t < 16; t++) wpe[t * C + V + t] = 1;
    nn_real *q0 = tensor(m, "h0.qkv_w"), *proj0 = tensor(m, "h0.proj_w");
    for (int t = 0; t < 16; t++) q0[(V + t) * C3 + t] = s;                          /* query: e_t */
    for (int j = 0; j + 1 < D && j < 16; j++) q0[(V + j) * C3 + C + j + 1] = s;     /* key: e_{j+1} */
    for (int v = 0; v < V; v++) q0[v * C3 + 2 * C + v] = 1, proj0[v * C + P0 + v] = 1; /* value: the token */
    nn_real *q1 = tensor(m, "h1.qkv_w"), *b1 = tensor(m, "h1.qkv_b");
    for (int v = 0; v < V; v++) q1[v * C3 + v] = s, q1[(P0 + v) * C3 + C + v] = s;
    b1[D - 1] = 1;                   /* a constant query dim ... */
    q1[V * C3 + C + D - 1] = -10; /* ... that keys position 0 away */
    float prev[4], ind[4];
    CHECK(tf_head_scores(m, 32, prev, ind) == NN_OK, "head scores: %s", nn_last_error());
    CHECK(prev[0] > 0.99f, "layer 0 head 0: previousToken %.3f", (double)prev[0]);
    CHECK(ind[2] > 0.99f, "layer 1 head 0: induction %.3f", (double)ind[2]);
    for (int i = 0; i < 4; i++) {
        if (i != 0) CHECK(prev[i] < 0.5f, "head %d.%d: previousToken %.3f", i / 2, i % 2, (double)prev[i]);
        if (i != 2) CHECK(ind[i] < 0.5f, "head %d.%d: induction %.3f", i / 2, i % 2, (double)ind[i]);
    }
    tf_destroy(m);
}

static void check_ablation(void) {
    check_case("ablating a head changes the loss; clearing restores it");
    Transformer *m = make(TF_TASK_COPY, TF_POS_LEARNED, 16, NULL, 2);
    if (!m) return;
    train(m, 20);
    double base, ablated, again, acc;
    tf_evaluate(m, TF_SPLIT_TEST, 32, &base, &acc);
    const int32_t pair[2] = {1, 1};
    CHECK(tf_set_ablation(m, pair, 1) == NN_OK, "ablate: %s", nn_last_error());
    tf_evaluate(m, TF_SPLIT_TEST, 32, &ablated, &acc);
    tf_set_ablation(m, NULL, 0);
    tf_evaluate(m, TF_SPLIT_TEST, 32, &again, &acc);
    CHECK(fabs(ablated - base) > 1e-4 && again == base, "loss %.6f, ablated %.6f, cleared %.6f", base, ablated, again);
    tf_destroy(m);
}

int main(void) {
    check_round_trip(TF_TASK_INDUCTION, TF_POS_LEARNED, 0, NULL);
    check_round_trip(TF_TASK_COPY, TF_POS_SINUSOIDAL, 12, NULL);
    check_round_trip(TF_TASK_TEXT, TF_POS_ROPE, 8, TEXT);
    check_round_trip(TF_TASK_MODULAR, TF_POS_ALIBI, 0, NULL);
    check_evaluate_batches();
    check_same_seed();
    check_damaged();
    check_hand_built_heads();
    check_ablation();
    return check_summary();
}
