/* Seq2seq: finite-difference gradient checks of the whole model (double
 * build) for every cell, encoder shape and attention score; in the float
 * builds, a tiny batch is overfitted (the loss must fall) and runs repeat
 * bit for bit from a seed; a batch split into shards (the threaded build's
 * data parallelism, run one shard after another) gives the whole batch's
 * gradients. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab/seq2seq.h"
#include "check.h"
#include "fd.h"
#include "models/seq2seq_internal.h" /* s2s_set_shards */
#include "s2s_config.h"

enum { B = 3, MAX_IN = 5, MAX_OUT = 4, IN_VOCAB = 7, OUT_VOCAB = 8 };

/* n rows of random inputs and targets (inputs of MAX_IN with fixed). */
static void make_rows(Rng *r, int fixed, int n, int32_t *in_ids, int32_t *in_len, int32_t *out_ids, int32_t *out_len) {
    memset(in_ids, 0, sizeof(int32_t) * n * MAX_IN);
    memset(out_ids, 0, sizeof(int32_t) * n * MAX_OUT);
    for (int b = 0; b < n; b++) {
        in_len[b] = fixed ? MAX_IN : rng_int(r, 1, MAX_IN);
        out_len[b] = rng_int(r, 1, MAX_OUT);
        for (int t = 0; t < in_len[b]; t++) in_ids[b * MAX_IN + t] = rng_int(r, 1, IN_VOCAB - 1);
        for (int t = 0; t < out_len[b] - 1; t++) out_ids[b * MAX_OUT + t] = rng_int(r, 3, OUT_VOCAB - 1);
        out_ids[b * MAX_OUT + out_len[b] - 1] = 2;
    }
}

static void make_batch(Rng *r, int fixed, int32_t *in_ids, int32_t *in_len, int32_t *out_ids, int32_t *out_len) {
    make_rows(r, fixed, B, in_ids, in_len, out_ids, out_len);
}

static S2sConfig config(RnnCellKind cell, int layers, int bidir, int attention) {
    return s2s_test_config((S2sTestShape){IN_VOCAB, OUT_VOCAB, MAX_IN, MAX_OUT, B, 1234}, cell, layers, bidir, attention);
}

static const char *const cells[] = {"rnn", "gru", "lstm"};

/* One batch drawn from seed, and a model of config c trained on it for 300
 * Adam steps (lr 0.05, clip 5); the first and last losses. NULL (and a
 * failed check) if creating it or a step fails. */
typedef struct {
    int32_t in_ids[B * MAX_IN], in_len[B], out_ids[B * MAX_OUT], out_len[B];
} Batch;

static Seq2Seq *overfit_batch(const S2sConfig *c, uint64_t seed, Batch *k, nn_real *first, nn_real *last) {
    Seq2Seq *m;
    if (!CHECK_OK(s2s_create(&m, c), "create")) return NULL;
    Rng r = {seed};
    make_batch(&r, c->attention == ATTN_SCORE_LOCATION, k->in_ids, k->in_len, k->out_ids, k->out_len);
    NnTrainOptions o = {.optimizer = NN_ADAM, .lr = 0.05f, .clip = 5};
    for (int s = 0; s < 300; s++) {
        if (!CHECK(s2s_train_step(m, &o, B, k->in_ids, k->in_len, k->out_ids, k->out_len, last) == NN_OK, "step %d: %s", s,
                   nn_last_error())) {
            s2s_destroy(m);
            return NULL;
        }
        if (s == 0) *first = *last;
    }
    return m;
}

#ifdef NN_DOUBLE
/* Every parameter of a small model against central differences of the loss. */
/* The teacher-forced loss of one fixed batch, for finite differences. */
typedef struct {
    Seq2Seq *m;
    const int32_t *in_ids, *in_len, *out_ids, *out_len;
} S2sLossCase;

static double s2s_loss_of(void *ctx) {
    S2sLossCase *k = ctx;
    nn_real loss;
    if (s2s_forward(k->m, B, k->in_ids, k->in_len, k->out_ids, k->out_len, &loss) != NN_OK) return NAN;
    return loss;
}

static void gradcheck(RnnCellKind cell, int layers, int bidir, int attention) {
    check_case("gradcheck %s layers=%d bidir=%d attention=%d", cells[cell], layers, bidir, attention);
    S2sConfig c = config(cell, layers, bidir, attention);
    Seq2Seq *m;
    if (!CHECK_OK(s2s_create(&m, &c), "create")) return;
    Rng r = {77 + (uint64_t)attention * 13 + cell};
    int32_t in_ids[B * MAX_IN], in_len[B], out_ids[B * MAX_OUT], out_len[B];
    make_batch(&r, attention == ATTN_SCORE_LOCATION, in_ids, in_len, out_ids, out_len);
    nn_real *p = s2s_params(m);
    size_t P = s2s_num_params(m);
    /* move biases off zero so every path is exercised */
    for (size_t i = 0; i < P; i++) p[i] += 0.05 * rng_uniform(&r, -1, 1);
    nn_real loss;
    s2s_zero_grad(m);
    CHECK_OK(s2s_forward(m, B, in_ids, in_len, out_ids, out_len, &loss), "forward");
    CHECK_OK(s2s_backward(m), "backward");
    nn_real *g = malloc(sizeof(nn_real) * P);
    double *num = malloc(sizeof(double) * P);
    memcpy(g, s2s_grads(m), sizeof(nn_real) * P);
    S2sLossCase lc = {m, in_ids, in_len, out_ids, out_len};
    fd_engine(p, P, 1e-6, s2s_loss_of, &lc, num);
    double worst = 0;
    size_t worst_i = 0;
    for (size_t i = 0; i < P; i++) {
        double err = fabs(num[i] - g[i]) / (1e-6 + fabs(num[i]) + fabs(g[i]));
        if (fabs(num[i] - g[i]) > 1e-8 && err > worst) {
            worst = err;
            worst_i = i;
        }
    }
    CHECK(worst < 1e-5, "max relative gradient error %.3g at parameter %zu (of %zu)", worst, worst_i, P);
    free(g);
    free(num);
    s2s_destroy(m);
}
#else
/* Overfitting one small batch: the loss must fall well below its start. */
static void overfit(RnnCellKind cell, int layers, int bidir, int attention) {
    check_case("overfit %s layers=%d bidir=%d attention=%d", cells[cell], layers, bidir, attention);
    S2sConfig c = config(cell, layers, bidir, attention);
    Batch k;
    nn_real first = 0, loss = 0;
    Seq2Seq *m = overfit_batch(&c, 99, &k, &first, &loss);
    if (!m) return;
    CHECK(isfinite(loss) && loss < 0.25f * first, "loss %g -> %g", (double)first, (double)loss);
    s2s_destroy(m);
}
#endif

/* After overfitting a batch, greedy decoding reproduces it; beam 1 equals
 * greedy; a wider beam never finds a less likely sequence; save -> load keeps
 * the outputs; truncated, damaged or foreign files are rejected. */
static void decode_and_io(RnnCellKind cell, int attention) {
    check_case("decode+io %s attention=%d", cells[cell], attention);
    S2sConfig c = config(cell, 1, 1, attention);
    Batch k;
    nn_real first = 0, loss = 0;
    Seq2Seq *m = overfit_batch(&c, 31, &k, &first, &loss);
    if (!m) return;
    int32_t got[B * MAX_OUT], got_len[B];
    nn_real align[B * MAX_OUT * MAX_IN];
    CHECK_OK(s2s_greedy(m, B, k.in_ids, k.in_len, got, got_len, align), "greedy");
    for (int b = 0; b < B; b++) {
        CHECK(got_len[b] == k.out_len[b] && memcmp(got + b * MAX_OUT, k.out_ids + b * MAX_OUT, sizeof(int32_t) * k.out_len[b]) == 0,
              "row %d decodes to its target (loss %g)", b, (double)loss);
        if (attention >= 0)
            for (int t = 0; t < got_len[b]; t++) {
                double sum = 0;
                for (int j = 0; j < MAX_IN; j++) sum += align[(b * MAX_OUT + t) * MAX_IN + j];
                CHECK(fabs(sum - 1) < 1e-4, "alignment row %d,%d sums to %g", b, t, sum);
            }
    }
    int32_t bt[MAX_OUT], bl;
    nn_real lp1, lp4, balign[MAX_OUT * MAX_IN];
    CHECK_OK(s2s_beam(m, 1, k.in_ids, k.in_len[0], bt, &bl, balign, &lp1), "beam 1");
    CHECK(bl == got_len[0] && memcmp(bt, got, sizeof(int32_t) * bl) == 0, "beam 1 equals greedy");
    CHECK_OK(s2s_beam(m, 4, k.in_ids, k.in_len[0], bt, &bl, balign, &lp4), "beam 4");
    CHECK(lp4 >= lp1 - 1e-5, "beam 4 log p %g >= beam 1 log p %g", (double)lp4, (double)lp1);
    CHECK(s2s_beam(m, 99, k.in_ids, k.in_len[0], bt, &bl, NULL, NULL) == NN_ERR_LIMIT, "beam past limit");

    size_t size = s2s_save_size(m);
    uint8_t *bytes = malloc(size);
    CHECK(s2s_save(m, bytes, size) == NN_OK, "save");
    Seq2Seq *m2;
    CHECK_OK(s2s_load(&m2, bytes, size), "load");
    if (m2) {
        int32_t got2[B * MAX_OUT], len2[B];
        s2s_greedy(m2, B, k.in_ids, k.in_len, got2, len2, NULL);
        CHECK(memcmp(got2, got, sizeof got) == 0 && memcmp(len2, got_len, sizeof len2) == 0, "loaded model decodes the same");
        s2s_destroy(m2);
    }
    CHECK(s2s_load(&m2, bytes, size - 7) == NN_ERR_VALUE && m2 == NULL, "truncated: %s", nn_last_error());
    bytes[size / 2] ^= 0x40;
    CHECK(s2s_load(&m2, bytes, size) == NN_ERR_VALUE && strstr(nn_last_error(), "checksum"), "damaged: %s", nn_last_error());
    memcpy(bytes, "PK\3\4....", 8);
    CHECK(s2s_load(&m2, bytes, size) == NN_ERR_VALUE && strstr(nn_last_error(), "not an attnlab"), "foreign: %s", nn_last_error());
    free(bytes);
    s2s_destroy(m);
}

static void errors(void) {
    check_case("config errors");
    Seq2Seq *m = NULL;
    S2sConfig c = config(RNN_CELL_GRU, 1, 0, ATTN_SCORE_DOT);
    c.hidden = 0;
    CHECK(s2s_create(&m, &c) == NN_ERR_SHAPE && m == NULL, "hidden 0: %s", nn_last_error());
    CHECK(strstr(nn_last_error(), "hidden") != NULL, "message names hidden: %s", nn_last_error());
    c = config(RNN_CELL_GRU, 1, 0, ATTN_SCORE_DOT);
    c.hidden = S2S_MAX_HIDDEN + 1;
    CHECK(s2s_create(&m, &c) == NN_ERR_LIMIT, "hidden past limit");
    c = config(RNN_CELL_GRU, 1, 0, ATTN_SCORE_LOCATION);
    c.fixed_in = 0;
    CHECK(s2s_create(&m, &c) == NN_ERR_VALUE && strstr(nn_last_error(), "location"), "location with variable lengths: %s",
          nn_last_error());
    c = config(7, 1, 0, ATTN_SCORE_DOT);
    CHECK(s2s_create(&m, &c) == NN_ERR_ARG, "unknown cell");
    c = config(RNN_CELL_GRU, 3, 0, ATTN_SCORE_DOT);
    CHECK(s2s_create(&m, &c) == NN_ERR_VALUE, "3 layers");
    c = config(RNN_CELL_GRU, 1, 0, ATTN_SCORE_DOT);
    CHECK(s2s_create(&m, &c) == NN_OK, "valid");
    int32_t in_ids[B * MAX_IN] = {0}, in_len[B] = {2, 9, 1}, out_ids[B * MAX_OUT] = {0}, out_len[B] = {1, 1, 1};
    in_ids[0] = in_ids[1] = 1;
    for (int b = 0; b < B; b++) out_ids[b * MAX_OUT] = 2;
    nn_real loss;
    CHECK(s2s_forward(m, B, in_ids, in_len, out_ids, out_len, &loss) == NN_ERR_SHAPE, "input too long: %s", nn_last_error());
    s2s_destroy(m);
}

static void determinism(void) {
    check_case("determinism");
    S2sConfig c = config(RNN_CELL_LSTM, 2, 1, ATTN_SCORE_ADDITIVE);
    Seq2Seq *a, *b;
    s2s_create(&a, &c);
    s2s_create(&b, &c);
    CHECK(memcmp(s2s_params(a), s2s_params(b), sizeof(nn_real) * s2s_num_params(a)) == 0, "same seed, same weights");
    Rng r = {5};
    int32_t in_ids[B * MAX_IN], in_len[B], out_ids[B * MAX_OUT], out_len[B];
    make_batch(&r, 0, in_ids, in_len, out_ids, out_len);
    NnTrainOptions o = {.optimizer = NN_ADAM, .lr = 0.01f, .clip = 1};
    nn_real la = 0, lb = 0;
    for (int s = 0; s < 5; s++) {
        s2s_train_step(a, &o, B, in_ids, in_len, out_ids, out_len, &la);
        s2s_train_step(b, &o, B, in_ids, in_len, out_ids, out_len, &lb);
    }
    CHECK(la == lb && memcmp(s2s_params(a), s2s_params(b), sizeof(nn_real) * s2s_num_params(a)) == 0, "same run");
    s2s_destroy(a);
    s2s_destroy(b);
}

/* Data-parallel shards (as the threaded build runs them, here one after the
 * other): a batch split into 2, 3 or one-row shards gives the loss and the
 * gradients of the whole batch within rounding (only the order of the sums
 * over rows changes), repeats bit for bit, grows with the batch, takes
 * batches with fewer rows than shards, and leaves decoding and saliency as
 * they are on one shard. */
enum { SB = 7 }; /* rows of the sharded batches */

static void shards(RnnCellKind cell, int layers, int bidir, int attention) {
    check_case("shards %s layers=%d bidir=%d attention=%d", cells[cell], layers, bidir, attention);
    S2sConfig c = config(cell, layers, bidir, attention);
    Seq2Seq *one, *many;
    if (!CHECK_OK(s2s_create(&one, &c), "create") || !CHECK_OK(s2s_create(&many, &c), "create")) return;
    size_t P = s2s_num_params(one);
    Rng r = {41 + (uint64_t)cell * 7 + (uint64_t)(attention + 1)};
    int32_t in_ids[SB * MAX_IN], in_len[SB], out_ids[SB * MAX_OUT], out_len[SB];
    make_rows(&r, attention == ATTN_SCORE_LOCATION, SB, in_ids, in_len, out_ids, out_len);
    nn_real l1, ln;
    s2s_zero_grad(one);
    CHECK_OK(s2s_forward(one, SB, in_ids, in_len, out_ids, out_len, &l1), "forward, one shard");
    CHECK_OK(s2s_backward(one), "backward, one shard");
    const int counts[] = {2, 3, SB, 2 * SB};
    for (int i = 0; i < 4; i++) {
        check_case("shards %s layers=%d bidir=%d attention=%d: %d shards", cells[cell], layers, bidir, attention, counts[i]);
        CHECK_OK(s2s_set_shards(many, counts[i]), "set shards");
        s2s_zero_grad(many);
        CHECK_OK(s2s_forward(many, SB, in_ids, in_len, out_ids, out_len, &ln), "forward");
        CHECK_OK(s2s_backward(many), "backward");
        CHECK_CLOSE(ln, l1, 0, 8 * TOL_EPS, "loss");
        /* each gradient is a sum over rows; its order changes: a few ulps of the largest gradient */
        double gmax = 0;
        for (size_t j = 0; j < P; j++) gmax = fmax(gmax, fabs(s2s_grads(one)[j]));
        CHECK_ARRAY_R(s2s_grads(many), s2s_grads(one), P, P, 64 * TOL_EPS * gmax, 0, "gradients");
    }
    check_case("shards %s layers=%d bidir=%d attention=%d: training", cells[cell], layers, bidir, attention);
    /* the same shard count twice: the same weights bit for bit */
    Seq2Seq *again;
    CHECK_OK(s2s_create(&again, &c), "create");
    CHECK_OK(s2s_set_shards(again, 3), "3 shards");
    CHECK_OK(s2s_set_shards(many, 3), "3 shards");
    NnTrainOptions o = {.optimizer = NN_ADAM, .lr = 0.01f, .clip = 1};
    nn_real la = 0, lb = 0;
    for (int s = 0; s < 3; s++) {
        CHECK_OK(s2s_train_step(many, &o, SB, in_ids, in_len, out_ids, out_len, &la), "step");
        CHECK_OK(s2s_train_step(again, &o, SB, in_ids, in_len, out_ids, out_len, &lb), "step");
        CHECK_OK(s2s_train_step(one, &o, SB, in_ids, in_len, out_ids, out_len, &l1), "step");
    }
    CHECK(la == lb && memcmp(s2s_params(many), s2s_params(again), sizeof(nn_real) * P) == 0, "3 shards twice: the same run");
    /* Adam's first steps move each weight by about lr whatever the gradient's size, so a
     * weight whose gradient is rounding noise may move by up to 3 lr; most agree closely */
    size_t off = 0;
    for (size_t j = 0; j < P; j++) off += fabs(s2s_params(many)[j] - s2s_params(one)[j]) > 1e-4;
    CHECK(off <= P / 50, "3 shards vs one after 3 steps: %zu of %zu weights differ by more than 1e-4", off, P);
    CHECK_CLOSE(la, l1, 1e-4, 1e-3, "loss after 3 steps");
    /* the optimiser's check, range by range, names the weight one loop names:
     * two gradients that step their weights past the float range, in the
     * second and third of three ranges; the first is named */
#ifdef NN_DOUBLE
    const nn_real big = 1e150; /* its square is in range */
#else
    const nn_real big = 1e18f;
#endif
    NnTrainOptions huge = {.optimizer = NN_SGD, .lr = big * big, .clip = 0};
    char one_error[256];
    for (int i = 0; i < 2; i++) {
        Seq2Seq *m = i ? many : one;
        s2s_zero_grad(m);
        s2s_grads(m)[P / 2] = s2s_grads(m)[P - 1] = big; /* lr x big = big^3 is past the range; the norm is not */
        CHECK(s2s_update(m, &huge, NULL) == NN_ERR_VALUE, "a step to infinity: %s", nn_last_error());
        if (!i) snprintf(one_error, sizeof one_error, "%s", nn_last_error());
    }
    CHECK(strcmp(nn_last_error(), one_error) == 0 && strstr(one_error, "weight") != NULL,
          "3 shards: '%s', one shard: '%s'", nn_last_error(), one_error);
    /* fewer rows than shards; then more rows than the model held (its replicas grow) */
    CHECK_OK(s2s_train_step(many, &o, 2, in_ids, in_len, out_ids, out_len, &la), "2 rows, 3 shards");
    CHECK(s2s_reserve(many, 40) == NN_OK, "reserve 40");
    int32_t big_in[40 * MAX_IN], big_in_len[40], big_out[40 * MAX_OUT], big_out_len[40];
    make_rows(&r, attention == ATTN_SCORE_LOCATION, 40, big_in, big_in_len, big_out, big_out_len);
    CHECK_OK(s2s_train_step(many, &o, 40, big_in, big_in_len, big_out, big_out_len, &la), "40 rows, 3 shards");
    /* decoding and saliency run on the model's own buffers as before */
    int32_t got[SB * MAX_OUT], got_len[SB];
    CHECK_OK(s2s_greedy(many, SB, in_ids, in_len, got, got_len, NULL), "greedy after sharded training");
    nn_real sal[MAX_IN];
    CHECK_OK(s2s_saliency(many, in_ids, in_len[0], got, got_len[0], 0, sal), "saliency after sharded training");
    s2s_destroy(again);
    s2s_destroy(one);
    s2s_destroy(many);
}

int main(void) {
    const int atts[] = {S2S_ATTN_NONE, ATTN_SCORE_DOT, ATTN_SCORE_SCALED_DOT, ATTN_SCORE_GENERAL, ATTN_SCORE_ADDITIVE,
                        ATTN_SCORE_COSINE, ATTN_SCORE_LOCATION};
    for (int cell = 0; cell < RNN_CELL_COUNT; cell++)
        for (int k = 0; k < 7; k++) {
            int layers = 1 + (k + cell) % 2, bidir = (k + cell / 2) % 2;
#ifdef NN_DOUBLE
            gradcheck((RnnCellKind)cell, layers, bidir, atts[k]);
#else
            overfit((RnnCellKind)cell, layers, bidir, atts[k]);
#endif
        }
#ifdef NN_DOUBLE
    gradcheck(RNN_CELL_LSTM, 2, 1, ATTN_SCORE_DOT);
    gradcheck(RNN_CELL_GRU, 2, 1, ATTN_SCORE_ADDITIVE);
#endif
    decode_and_io(RNN_CELL_GRU, ATTN_SCORE_DOT);
    decode_and_io(RNN_CELL_LSTM, ATTN_SCORE_ADDITIVE);
    decode_and_io(RNN_CELL_RNN, S2S_ATTN_NONE);
    decode_and_io(RNN_CELL_GRU, ATTN_SCORE_LOCATION);
    errors();
    determinism();
    for (int cell = 0; cell < RNN_CELL_COUNT; cell++)
        for (int k = 0; k < 7; k++) shards((RnnCellKind)cell, 1 + k % 2, (k + cell) % 2, atts[k]);
    return check_summary();
}
