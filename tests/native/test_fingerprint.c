/* Regression fingerprints: for fixed seeds, a few training steps and then the
 * saved model file (trainer_save, the bytes JS's m.save() returns) hash to
 * values recorded before the engine's restructuring. Same seed, same bytes:
 * a refactor that changes any weight, the step count or the format fails here.
 * The WASM builds check the same cases in tests/js/native-match.test.mjs.
 *   test_fingerprint --print   prints this variant's table instead of checking */
#include <stdlib.h>
#include <string.h>

#include "attnlab/trainer.h"
#include "base/hash.h"
#include "check.h"

typedef struct {
    const char *name;
    TaskConfig task;
    const char *pairs; /* TASK_PAIRS text, else NULL */
    S2sConfig model;   /* vocabulary and lengths come from the task */
    NnTrainOptions train;
    int steps, batch;
} FingerprintCase;

#define PAIRS_TEXT "abc\tcba\nhello\tolleh\nxy\tyx\nattn\tntta\nlab\tbal\nseq\tqes\nkey\tyek\nquery\tyreuq\n"

/* S2sConfig: cell, layers, bidirectional, embed, hidden, attention, attn_hidden,
 * (vocabularies, lengths, fixed_in from the task), batch, seed */
static const FingerprintCase CASES[] = {
    {"reverse, GRU, additive", {TASK_REVERSE, TASK_DIGITS, 3, 8}, NULL,
     {RNN_CELL_GRU, 1, 0, 16, 24, ATTN_SCORE_ADDITIVE, 0, 0, 0, 0, 0, 0, 16, 4}, {.optimizer = NN_ADAM, .lr = 0.01f, .clip = 5}, 4, 8},
    {"sort, LSTM 2 layers bidirectional, dot", {TASK_SORT, TASK_DIGITS, 2, 7}, NULL,
     {RNN_CELL_LSTM, 2, 1, 12, 16, ATTN_SCORE_DOT, 0, 0, 0, 0, 0, 0, 8, 7}, {.optimizer = NN_ADAM, .lr = 0.005f, .clip = 1}, 3, 8},
    {"copy letters, RNN, general, SGD", {TASK_COPY, TASK_LETTERS, 2, 6}, NULL,
     {RNN_CELL_RNN, 1, 0, 10, 12, ATTN_SCORE_GENERAL, 0, 0, 0, 0, 0, 0, 6, 11}, {.optimizer = NN_SGD, .lr = 0.1f, .clip = 0}, 3, 6},
    {"dates, LSTM bidirectional, cosine", {TASK_DATES, TASK_DIGITS, 1, 1}, NULL,
     {RNN_CELL_LSTM, 1, 1, 16, 16, ATTN_SCORE_COSINE, 0, 0, 0, 0, 0, 0, 4, 3}, {.optimizer = NN_ADAM, .lr = 0.01f, .clip = 5}, 2, 4},
    {"copy fixed length, GRU, location", {TASK_COPY, TASK_DIGITS, 5, 5}, NULL,
     {RNN_CELL_GRU, 1, 0, 8, 16, ATTN_SCORE_LOCATION, 0, 0, 0, 0, 0, 0, 8, 5}, {.optimizer = NN_ADAM, .lr = 0.01f, .clip = 5}, 3, 8},
    {"reverse, GRU 2 layers, scaled dot", {TASK_REVERSE, TASK_DIGITS, 2, 6}, NULL,
     {RNN_CELL_GRU, 2, 0, 8, 12, ATTN_SCORE_SCALED_DOT, 0, 0, 0, 0, 0, 0, 8, 9}, {.optimizer = NN_ADAM, .lr = 0.01f, .clip = 5}, 3, 8},
    {"sort, LSTM, no attention", {TASK_SORT, TASK_DIGITS, 3, 6}, NULL,
     {RNN_CELL_LSTM, 1, 0, 8, 16, S2S_ATTN_NONE, 0, 0, 0, 0, 0, 0, 8, 2}, {.optimizer = NN_ADAM, .lr = 0.01f, .clip = 5}, 3, 8},
    {"pairs, RNN bidirectional, additive 8", {TASK_PAIRS, TASK_DIGITS, 1, 1}, PAIRS_TEXT,
     {RNN_CELL_RNN, 1, 1, 8, 8, ATTN_SCORE_ADDITIVE, 8, 0, 0, 0, 0, 0, 4, 21}, {.optimizer = NN_ADAM, .lr = 0.02f, .clip = 5}, 3, 4},
};
#define N_CASES (int)(sizeof CASES / sizeof CASES[0])

/* Recorded from the engine before its restructuring, one per case; the
 * cosine case re-recorded when cosine scores moved to unit rows (so norms
 * of huge or tiny vectors neither overflow nor underflow) and when cosine's
 * backward became matrix products split by rows (the same gradient, summed
 * in another order), each rounding differently in float32 (double:
 * unchanged); the float cases re-recorded
 * once more when exp became a degree-5 polynomial and softmax rows began to
 * be normalised on the context (double: unchanged), and once more when the
 * loss moved onto the output layer's cross-entropy (src/layers/output.c),
 * whose target term rounds as p/n - 1/n where the model's own rounded
 * (p - 1)/n (double: unchanged). The float
 * builds (SSE, scalar, and both WASM builds) agree to the bit: every kernel
 * rounds the same way (no FMA, the same summation order); the double build
 * saves the float32 of weights trained in double. */
#ifdef NN_DOUBLE
static const uint64_t WANT[N_CASES] = {
    0x2b18393645c13008ull, 0x560984faba93f95full, 0xb084a02507b8b321ull, 0xb79f60726e2511a9ull,
    0xa36723144ee1e8dcull, 0xf57624a0c578dfabull, 0xa4581b509cbb3a21ull, 0x911546995ce34b44ull,
};
#else
static const uint64_t WANT[N_CASES] = {
    0xe90638ecf52afb2aull, 0x3bcd9cd710dc21eeull, 0x7ef1ba867edeaa74ull, 0xbc4eff2038ce110eull,
    0xf7e45134fbd03a28ull, 0x9ddebed993ae7ff5ull, 0x88aa632d34ba7d6aull, 0x506033a8b461ae5eull,
};
#endif

/* FNV-1a 64 of the saved file after the case's training steps (0 on failure). */
static uint64_t fingerprint(const FingerprintCase *k) {
    Trainer *t = NULL;
    const char *text = k->pairs;
    uint64_t h = 0;
    if (trainer_create(&t, &k->task, text, text ? strlen(text) : 0, &k->model) != NN_OK) {
        CHECK(0, "trainer_create: %s", nn_last_error());
        return 0;
    }
    int st = trainer_train(t, &k->train, k->steps, k->batch, NULL, NULL);
    CHECK_OK(st, "train");
    size_t n = trainer_save_size(t);
    uint8_t *bytes = malloc(n);
    if (bytes && st == NN_OK && trainer_save(t, bytes, n) == NN_OK) h = nn_fnv1a64(bytes, n);
    free(bytes);
    trainer_destroy(t);
    return h;
}

int main(int argc, char **argv) {
    int print = argc > 1 && strcmp(argv[1], "--print") == 0;
    for (int i = 0; i < N_CASES; i++) {
        check_case("save() fingerprint: %s", CASES[i].name);
        uint64_t h = fingerprint(&CASES[i]);
        if (print) printf("    0x%016llxull, /* %s */\n", (unsigned long long)h, CASES[i].name);
        else CHECK(h == WANT[i], "saved bytes hash to 0x%016llx, recorded 0x%016llx", (unsigned long long)h,
                   (unsigned long long)WANT[i]);
    }
    return check_summary();
}
