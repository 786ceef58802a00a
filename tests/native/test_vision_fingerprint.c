/* Regression fingerprints of the image model: for fixed seeds and synthetic
 * images, a few training steps (forward, backward, Adam or SGD), then the
 * weights, the step count, hard mode's baselines and a greedy read of the
 * batch hash to values recorded before the model moved onto the shared
 * layers (src/layers/). Same seed, same bits: a refactor that changes one
 * weight, one summation order or one draw fails here. One case trains in
 * three shards (the threaded build's split) on the same arithmetic.
 *   test_vision_fingerprint --print   prints this variant's table instead of checking */
#include <stdlib.h>
#include <string.h>

#include "attnlab/vision.h"
#include "base/hash.h"
#include "check.h"
#include "models/vision_internal.h" /* vis_set_shards, the baseline */

typedef struct {
    const char *name;
    VisConfig model;
    NnTrainOptions train;
    int steps, shards;
} VisFingerprintCase;

/* VisConfig: rows, cols, layers, channels, cell, hidden, attention, mode,
 * steps, sequence, entropy, batch, seed, start (the mean start unless named),
 * the sensor (the grid) and the retina's fields (unused) */
static const VisFingerprintCase CASES[] = {
    {"soft, GRU, general, 2 layers", {12, 16, 2, {4, 6, 0}, RNN_CELL_GRU, 8, ATTN_SCORE_GENERAL, VIS_SOFT, 2, 1, 0, 5, 3, VIS_START_MEAN, VIS_SENSOR_GRID, 0, 0, 0},
     {.optimizer = NN_ADAM, .lr = 0.01f, .clip = 5}, 3, 1},
    {"hard, LSTM, additive, sequence", {8, 12, 1, {5, 0, 0}, RNN_CELL_LSTM, 6, ATTN_SCORE_ADDITIVE, VIS_HARD, 3, 1, 0.05f, 6, 7, VIS_START_MEAN, VIS_SENSOR_GRID, 0, 0, 0},
     {.optimizer = NN_ADAM, .lr = 0.02f, .clip = 5}, 3, 1},
    {"no attention, RNN, SGD", {8, 8, 2, {3, 4, 0}, RNN_CELL_RNN, 6, VIS_ATTN_NONE, VIS_SOFT, 2, 0, 0, 4, 11, VIS_START_MEAN, VIS_SENSOR_GRID, 0, 0, 0},
     {.optimizer = NN_SGD, .lr = 0.1f, .clip = 0}, 3, 1},
    {"soft, LSTM, cosine", {8, 12, 1, {4, 0, 0}, RNN_CELL_LSTM, 8, ATTN_SCORE_COSINE, VIS_SOFT, 2, 1, 0, 4, 5, VIS_START_MEAN, VIS_SENSOR_GRID, 0, 0, 0},
     {.optimizer = NN_ADAM, .lr = 0.01f, .clip = 5}, 2, 1},
    {"soft, GRU, location", {8, 8, 1, {4, 0, 0}, RNN_CELL_GRU, 6, ATTN_SCORE_LOCATION, VIS_SOFT, 2, 1, 0, 4, 9, VIS_START_MEAN, VIS_SENSOR_GRID, 0, 0, 0},
     {.optimizer = NN_ADAM, .lr = 0.01f, .clip = 5}, 2, 1},
    {"hard, GRU, scaled dot, 3 shards", {12, 12, 2, {3, 4, 0}, RNN_CELL_GRU, 8, ATTN_SCORE_SCALED_DOT, VIS_HARD, 3, 1, 0.01f, 7, 13, VIS_START_MEAN, VIS_SENSOR_GRID, 0, 0, 0},
     {.optimizer = NN_ADAM, .lr = 0.01f, .clip = 5}, 3, 3},
    {"constant start, soft, GRU, scaled dot",
     {12, 16, 2, {4, 6, 0}, RNN_CELL_GRU, 8, ATTN_SCORE_SCALED_DOT, VIS_SOFT, 2, 0, 0, 5, 17, VIS_START_CONSTANT, VIS_SENSOR_GRID, 0, 0, 0},
     {.optimizer = NN_ADAM, .lr = 0.01f, .clip = 5}, 3, 1},
    {"constant start, hard, LSTM, general, 2 shards",
     {8, 12, 1, {5, 0, 0}, RNN_CELL_LSTM, 6, ATTN_SCORE_GENERAL, VIS_HARD, 3, 1, 0.05f, 6, 19, VIS_START_CONSTANT, VIS_SENSOR_GRID, 0, 0, 0},
     {.optimizer = NN_ADAM, .lr = 0.02f, .clip = 5}, 3, 2},
};
#define N_CASES (int)(sizeof CASES / sizeof CASES[0])

/* Recorded from the model before it moved onto src/layers/ (the constant
 * start's two: when it was added). The float builds
 * (SSE and scalar) agree to the bit; the double build has its own table. */
#ifdef NN_DOUBLE
static const uint64_t WANT[N_CASES] = {
    0x8b09f8d5ca4dfb5eull, 0xfa607d8359261b37ull, 0x23fad00d1fc9d950ull,
    0x55bfb5d764a8ffbcull, 0x50199754c2795576ull, 0x0882c8e3a5517707ull,
    0x40bf998322b32f75ull, 0xc6dc54fe7458ba8dull,
};
#else
static const uint64_t WANT[N_CASES] = {
    0x8bce6dc449ab5c56ull, 0xe790b566770eed1aull, 0x9d0d51b7283cdd93ull,
    0x104f0554f0b0cce9ull, 0xd4668a8d24e9b7ebull, 0xafd3919f428f8b67ull,
    0xfaa148a16af4adddull, 0x5b87ebcec02080d1ull,
};
#endif

/* FNV-1a 64 over the trained weights, steps, baselines and a greedy read (0 on failure). */
static uint64_t fingerprint(const VisFingerprintCase *k) {
    const VisConfig *c = &k->model;
    VisionModel *m = NULL;
    if (!CHECK_OK(vis_create(&m, c), "vis_create")) return 0;
    uint64_t h = 0;
    size_t n = (size_t)c->batch * c->rows * c->cols, T = (size_t)c->steps;
    nn_real *images = malloc(sizeof(nn_real) * n);
    int32_t *labels = malloc(sizeof(int32_t) * c->batch * T), *n_labels = malloc(sizeof(int32_t) * c->batch),
            *pred = malloc(sizeof(int32_t) * c->batch * T);
    uint64_t s = c->seed * 7919 + 1;
    int ok = images && labels && n_labels && pred && CHECK_OK(vis_set_shards(m, k->shards), "shards");
    for (size_t i = 0; ok && i < n; i++) images[i] = (nn_real)(nn_rng_below(&s, 256) / 255.0);
    for (int b = 0; ok && b < c->batch; b++) {
        n_labels[b] = 1 + nn_rng_below(&s, c->steps);
        for (size_t t = 0; t < T; t++) labels[b * T + t] = nn_rng_below(&s, VIS_TOKENS);
    }
    for (int step = 0; ok && step < k->steps; step++) {
        nn_real loss = 0;
        vis_zero_grad(m);
        ok = CHECK_OK(vis_forward(m, c->batch, images, labels, n_labels, 1, &loss, NULL), "forward") &&
             CHECK_OK(vis_backward(m, NULL), "backward") && CHECK_OK(vis_update(m, &k->train, NULL), "update");
    }
    ok = ok && CHECK_OK(vis_forward(m, c->batch, images, NULL, NULL, 0, NULL, pred), "greedy read");
    if (ok) {
        int steps = vis_steps_taken(m);
        h = nn_fnv1a64(vis_params(m), sizeof(nn_real) * vis_num_params(m));
        h ^= nn_fnv1a64(&steps, sizeof steps) * 3;
        h ^= nn_fnv1a64(m->baseline, sizeof m->baseline) * 5;
        h ^= nn_fnv1a64(pred, sizeof(int32_t) * c->batch * T) * 7;
    }
    free(images);
    free(labels);
    free(n_labels);
    free(pred);
    vis_destroy(m);
    return h;
}

int main(int argc, char **argv) {
    int print = argc > 1 && strcmp(argv[1], "--print") == 0;
    for (int i = 0; i < N_CASES; i++) {
        check_case("image model fingerprint: %s", CASES[i].name);
        uint64_t h = fingerprint(&CASES[i]);
        if (print) printf("    0x%016llxull, /* %s */\n", (unsigned long long)h, CASES[i].name);
        else CHECK(h == WANT[i], "trained model hashes to 0x%016llx, recorded 0x%016llx", (unsigned long long)h,
                   (unsigned long long)WANT[i]);
    }
    return check_summary();
}
