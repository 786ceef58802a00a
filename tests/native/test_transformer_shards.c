/* The transformer's data-parallel passes (src/models/transformer_shards.c),
 * run natively: nn_pool_split_serially(n) runs every region as n shares in
 * turn, and tf_set_shards(m->model, n) splits the batch into n shards, so each
 * replica's activations and gradient block are checked under the
 * sanitizers. Against one shard: the loss and every gradient of one batch
 * (the shards' sums in another order), with a batch smaller than the shard
 * count too; the same shard count twice gives the same bits; training
 * through tf_train takes the sharded passes. */
#include <string.h>

#include "attnlab/transformer.h"
#include "base/error.h"
#include "base/pool.h"
#include "check.h"
#include "models/transformer_internal.h"
#include "train/transformer_train.h"

static const int shards[] = {2, 3, 7};
#define N_SHARDS ((int)(sizeof shards / sizeof *shards))

/* the split's tolerance: the shards' partial sums added in another order */
#define SPLIT_ATOL 1e-6
#define SPLIT_RTOL 1e-4

static Transformer *model(void) {
    TfConfig c = {TF_TASK_INDUCTION, 2, 2, 8, 16, 16, TF_POS_LEARNED, ATTN_SCORE_SCALED_DOT, 6, 3};
    Transformer *m = NULL;
    int st = tf_create(&m, &c, NULL, 0);
    CHECK(st == NN_OK, "tf_create: %s", nn_last_error());
    return m;
}

/* B training sequences of the task, drawn from a fixed stream, into the model's batch. */
static void fill(Transformer *m, int B) {
    uint64_t rng = 0x5a4d;
    int n = 0, T = tf_seq_len(m);
    for (int b = 0; b < B; b++)
        tf_sample(m, TF_SPLIT_TRAIN, &rng, m->model->a.tokens + (size_t)b * T, m->model->a.targets + (size_t)b * T, &n);
}

/* One batch's loss and gradients on n shards (n serial shares of every region). */
static double pass(Transformer *m, int n, int B, nn_real *grads) {
    CHECK_OK(nn_pool_split_serially(n), "nn_pool_split_serially");
    CHECK_OK(tf_set_shards(m->model, n), "tf_set_shards");
    fill(m, B);
    int T = tf_seq_len(m), scored = 0;
    double loss = 0;
    CHECK_OK(tf_shards_forward(m->model, B, T, &loss, &scored), "tf_shards_forward");
    CHECK_OK(tf_shards_backward(m->model, B, T, scored), "tf_shards_backward");
    memcpy(grads, m->model->opt.grads, sizeof(nn_real) * m->model->opt.n);
    return loss;
}

static void test_passes(void) {
    Transformer *m = model();
    if (!m) return;
    size_t P = m->model->opt.n, mark = alloc_mark();
    nn_real *one = alloc_reals(P), *got = alloc_reals(P), *again = alloc_reals(P);
    for (int B = 1; B <= 6; B += 5) {
        double want = pass(m, 1, B, one);
        for (int i = 0; i < N_SHARDS; i++) {
            check_case("a batch of %d on %d shards against one", B, shards[i]);
            double loss = pass(m, shards[i], B, got);
            CHECK_CLOSE(loss, want, SPLIT_ATOL, SPLIT_RTOL, "loss");
            CHECK_ARRAY_R(got, one, P, P, SPLIT_ATOL, SPLIT_RTOL, "gradients");
            pass(m, shards[i], B, again);
            CHECK(memcmp(again, got, sizeof(nn_real) * P) == 0, "the same shards twice: bit for bit");
            if (B == 1) CHECK(memcmp(got, one, sizeof(nn_real) * P) == 0, "one row is one shard: bit for bit");
        }
    }
    alloc_release(mark);
    CHECK_OK(nn_pool_split_serially(1), "back to one share");
    tf_destroy(m);
}

static void test_train(void) {
    check_case("tf_train on 3 shards against one");
    Transformer *a = model(), *b = model();
    if (!a || !b) return;
    TfTrainOptions o = {4, 6, (nn_real)3e-3, 0, 0, 0, 1, 0, 0};
    float la[4], lb[4];
    CHECK_OK(tf_set_shards(a->model, 1), "one shard");
    CHECK_OK(tf_train(a, &o, la), "train on one shard");
    CHECK_OK(nn_pool_split_serially(3), "three shares");
    CHECK_OK(tf_set_shards(b->model, 3), "three shards");
    CHECK_OK(tf_train(b, &o, lb), "train on three shards");
    for (int s = 0; s < 4; s++) CHECK_CLOSE(lb[s], la[s], SPLIT_ATOL, SPLIT_RTOL, "a step's loss");
    CHECK(tf_set_shards(b->model, NN_MAX_THREADS + 1) == NN_ERR_LIMIT, "past NN_MAX_THREADS shards: ERR_LIMIT");
    CHECK_OK(nn_pool_split_serially(1), "back to one share");
    tf_destroy(a);
    tf_destroy(b);
}

int main(void) {
    test_passes();
    test_train();
    return check_summary();
}
