/* Regression fingerprints of the transformer: for fixed seeds, a few
 * training calls (AdamW with warm-up, the cosine schedule, weight decay,
 * clipping), then the saved file (tf_save, the bytes JS's m.save() returns),
 * every step's loss and the test split's loss hash to values recorded before
 * the transformer moved onto the shared layers (src/layers/optim.c, the one
 * training call, the core attention). Same seed, same bits: a refactor that
 * changes one weight, one summation order or one draw fails here. Two cases
 * train in shards (the threaded build's split) on the same arithmetic.
 *   test_transformer_fingerprint --print   prints this variant's table instead of checking */
#include <stdlib.h>
#include <string.h>

#include "attnlab/transformer.h"
#include "base/hash.h"
#include "base/pool.h"
#include "check.h"
#include "models/transformer_internal.h"
#include "train/transformer_train.h" /* tf_set_shards */

typedef struct {
    const char *name;
    TfConfig model;
    const char *text; /* TF_TASK_TEXT / TF_TASK_NAMES, else NULL */
    TfTrainOptions train;
    int calls, shards;
} TfFingerprintCase;

#define TEXT "the cat sat on the mat; the dog sat on the log. "
#define NAMES "anna\nbob\ncarla\ndmitri\neve\nfrank\ngita\nhugo\n"

/* TfConfig: task, layers, heads, dModel, dFF, context, positional, score, batch, seed;
 * TfTrainOptions: steps, batch, lr, weight decay, warmup, decay steps, clip, final lr, constant */
static const TfFingerprintCase CASES[] = {
    {"induction, attention only, learned, scaled dot", {TF_TASK_INDUCTION, 2, 2, 16, 0, 24, TF_POS_LEARNED, ATTN_SCORE_SCALED_DOT, 4, 1},
     NULL, {3, 4, 3e-3f, 0.1f, 2, 0, 1, 0, 0}, 2, 1},
    {"copy, MLP, sinusoidal, dot", {TF_TASK_COPY, 1, 4, 16, 32, 16, TF_POS_SINUSOIDAL, ATTN_SCORE_DOT, 4, 2},
     NULL, {3, 4, 1e-2f, 0, 0, 10, 0, 0, 0}, 2, 1},
    {"reverse, RoPE, cosine", {TF_TASK_REVERSE, 2, 2, 16, 16, 16, TF_POS_ROPE, ATTN_SCORE_COSINE, 3, 3},
     NULL, {2, 3, 5e-3f, 1, 1, 0, 0.5f, 0, 0}, 2, 1},
    {"sort, ALiBi, 3 shards", {TF_TASK_SORT, 1, 4, 16, 0, 16, TF_POS_ALIBI, ATTN_SCORE_SCALED_DOT, 6, 4},
     NULL, {3, 6, 3e-3f, 0.01f, 0, 0, 1, 0, 0}, 2, 3},
    {"modular, no positions", {TF_TASK_MODULAR, 1, 2, 16, 32, 8, TF_POS_NONE, ATTN_SCORE_SCALED_DOT, 4, 5},
     NULL, {3, 4, 3e-3f, 0.1f, 0, 0, 1, 0, 0}, 1, 1},
    {"text, learned, 2 shards", {TF_TASK_TEXT, 1, 2, 16, 16, 12, TF_POS_LEARNED, ATTN_SCORE_SCALED_DOT, 4, 6},
     TEXT, {3, 5, 3e-3f, 0.1f, 1, 0, 1, 0, 0}, 2, 2},
    {"names, RoPE", {TF_TASK_NAMES, 1, 2, 8, 16, 10, TF_POS_ROPE, ATTN_SCORE_SCALED_DOT, 4, 7},
     NAMES, {2, 4, 3e-3f, 0, 0, 0, 1, 0, 0}, 2, 1},
    {"dates, learned", {TF_TASK_DATES, 1, 2, 16, 16, 48, TF_POS_LEARNED, ATTN_SCORE_SCALED_DOT, 2, 8},
     NULL, {2, 2, 3e-3f, 0.1f, 0, 0, 1, 0, 0}, 1, 1},
};
#define N_CASES (int)(sizeof CASES / sizeof CASES[0])

/* Recorded from the transformer before it moved onto the shared layers, and
 * re-recorded once when it did: its attention became the core's multi-head
 * attention (attn_heads_*: each head one attn_forward, with its own
 * exponential, packed products and summation order; RoPE turns gathered
 * copies), and its loss's gradient the shared cross-entropy's, which
 * rounds weight p - weight where the model's own rounded p / n - 1 / n
 * (double: changed by the summation order too). The optimiser, the
 * schedule, the initial weights and the draws moved without changing a
 * bit (every case matched its first table then). The float builds (SSE and
 * scalar) agree to the bit; the double build has its own table. */
#ifdef NN_DOUBLE
static const uint64_t WANT[N_CASES] = {
    0x5e5097a3a0d0835full, 0xb4a40855ce7fbc5dull, 0x604199df808338b6ull,
    0xfa6547b60b4855beull, 0xbda14c2b6bc79861ull, 0x4ac95cf8e7193001ull,
    0xb32235f0da442ee7ull, 0xec25c4960e71bdcaull,
};
#else
static const uint64_t WANT[N_CASES] = {
    0x65d4844c82fc49d2ull, 0xcd108e3a755f4f86ull, 0x5d26f1b69f481ca8ull,
    0x33c0f4dcc08fcebaull, 0x2d7275007011e5b4ull, 0xd499cfe5ce3e70b0ull,
    0x8a45af092b6876d1ull, 0x7cda789bc9de117dull,
};
#endif

/* FNV-1a 64 over the saved file, every step's loss and the test loss and
 * accuracy (as float32) after the case's training calls (0 on failure). */
static uint64_t fingerprint(const TfFingerprintCase *k) {
    Transformer *m = NULL;
    uint64_t h = 0;
    if (tf_create(&m, &k->model, k->text, k->text ? strlen(k->text) : 0) != NN_OK) {
        CHECK(0, "tf_create: %s", nn_last_error());
        return 0;
    }
    int st = NN_OK;
    if (k->shards > 1) {
        st = nn_pool_split_serially(k->shards);
        if (st == NN_OK) st = tf_set_shards(m->model, k->shards);
    }
    int n_losses = k->calls * k->train.steps;
    float *losses = calloc((size_t)n_losses + 2, sizeof(float));
    for (int c = 0; c < k->calls && st == NN_OK && losses; c++) st = tf_train(m, &k->train, losses + c * k->train.steps);
    CHECK_OK(st, "tf_train");
    double loss = 0, acc = 0;
    if (st == NN_OK) st = tf_evaluate(m, TF_SPLIT_TEST, 5, &loss, &acc);
    CHECK_OK(st, "tf_evaluate");
    size_t n = tf_save_size(m);
    uint8_t *bytes = malloc(n);
    if (bytes && losses && st == NN_OK && tf_save(m, bytes, n) == NN_OK) {
        losses[n_losses] = (float)loss;
        losses[n_losses + 1] = (float)acc;
        h = nn_fnv1a64(bytes, n) ^ (nn_fnv1a64(losses, sizeof(float) * ((size_t)n_losses + 2)) * 31);
    }
    free(bytes);
    free(losses);
    tf_destroy(m);
    nn_pool_split_serially(1);
    return h;
}

int main(int argc, char **argv) {
    int print = argc > 1 && strcmp(argv[1], "--print") == 0;
    for (int i = 0; i < N_CASES; i++) {
        check_case("transformer fingerprint: %s", CASES[i].name);
        uint64_t h = fingerprint(&CASES[i]);
        if (print) printf("    0x%016llxull, /* %s */\n", (unsigned long long)h, CASES[i].name);
        else CHECK(h == WANT[i], "saved bytes and losses hash to 0x%016llx, recorded 0x%016llx", (unsigned long long)h,
                   (unsigned long long)WANT[i]);
    }
    return check_summary();
}
