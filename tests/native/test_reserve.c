/* A model whose buffers cannot grow stays whole: s2s_reserve and
 * s2s_set_shards that run out of memory fail with NN_ERR_NOMEM and leave the
 * model as it was, so the next training step matches, bit for bit, a model
 * that never tried. The allocator here returns NULL for any block over 1 MB
 * (this binary's sanitizer options) instead of stopping the program; the
 * sanitizer prints one warning line for the refused block. */
#include <string.h>

#include "attnlab/seq2seq.h"
#include "check.h"
#include "models/seq2seq_internal.h" /* s2s_set_shards */
#include "s2s_config.h"

const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "allocator_may_return_null=1:max_allocation_size_mb=1"; }

enum { B = 4, T = 6, U = 5 };

/* One training step on a fixed batch; the loss and the weights' first values. */
static int train_step(Seq2Seq *m, nn_real *loss) {
    int32_t in_ids[B * T], in_len[B], out_ids[B * U], out_len[B];
    for (int b = 0; b < B; b++) {
        in_len[b] = 2 + b;
        out_len[b] = 1 + b;
        for (int t = 0; t < T; t++) in_ids[b * T + t] = 1 + (b + t) % 5;
        for (int t = 0; t < U; t++) out_ids[b * U + t] = t + 1 == out_len[b] ? S2S_EOS : 3 + (b * t) % 4;
    }
    NnTrainOptions o = {.optimizer = NN_ADAM, .lr = 0.01f, .clip = 5};
    return s2s_train_step(m, &o, B, in_ids, in_len, out_ids, out_len, loss);
}

int main(void) {
    S2sTestShape shape = {8, 8, T, U, B, 3};
    S2sConfig c = s2s_test_config(shape, RNN_CELL_LSTM, 1, 1, ATTN_SCORE_DOT);
    Seq2Seq *m = NULL, *fresh = NULL;
    if (!CHECK_OK(s2s_create(&m, &c), "create") || !CHECK_OK(s2s_create(&fresh, &c), "create")) return check_summary();

    check_case("s2s_reserve out of memory");
    int st = s2s_reserve(m, S2S_MAX_BATCH); /* activations past 1 MB */
    CHECK(st == NN_ERR_NOMEM, "status %d (%s)", st, nn_last_error());
    CHECK(s2s_capacity(m) == s2s_capacity(fresh), "capacity %d, was %d", s2s_capacity(m), s2s_capacity(fresh));

    check_case("after a failed reserve, training is that of a model that never tried");
    nn_real loss = 0, want = 0;
    CHECK_OK(train_step(m, &loss), "train step");
    CHECK_OK(train_step(fresh, &want), "train step (fresh)");
    CHECK(loss == want, "loss %.9g, fresh %.9g", (double)loss, (double)want);
    CHECK(memcmp(s2s_params(m), s2s_params(fresh), sizeof(nn_real) * s2s_num_params(m)) == 0, "weights differ");

    check_case("s2s_set_shards within memory, then training still matches");
    CHECK_OK(s2s_set_shards(m, 1), "one shard");
    CHECK_OK(train_step(m, &loss), "train step");
    CHECK_OK(train_step(fresh, &want), "train step (fresh)");
    CHECK(memcmp(s2s_params(m), s2s_params(fresh), sizeof(nn_real) * s2s_num_params(m)) == 0, "weights differ");
    s2s_destroy(m);
    s2s_destroy(fresh);
    return check_summary();
}
