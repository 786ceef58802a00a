/* The trainer (a model bound to its task): reproducible training for a seed,
 * loss going down, evaluation and translation, save/load round trips that
 * keep every number, rejected damaged files, and configuration errors. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab/trainer.h"
#include "check.h"

static const NnTrainOptions ADAM = {.optimizer = NN_ADAM, .lr = (nn_real)0.01, .clip = 5};

static Trainer *make(TaskKind kind, int min_len, int max_len, int cell, int attention, uint64_t seed) {
    TaskConfig tc = {kind, TASK_DIGITS, min_len, max_len};
    S2sConfig mc = {(RnnCellKind)cell, 1, 0, 8, 12, attention, 0, 0, 0, 0, 0, 0, 16, seed};
    Trainer *t = NULL;
    int st = trainer_create(&t, &tc, NULL, 0, &mc);
    CHECK(st == NN_OK, "trainer_create returned %d (%s)", st, nn_last_error());
    return t;
}

static void test_reproducible(void) {
    check_case("two trainers from one seed train to the same losses; another seed differs");
    float a[6], b[6], c[6];
    Trainer *t1 = make(TASK_REVERSE, 3, 6, RNN_CELL_GRU, ATTN_SCORE_ADDITIVE, 7);
    Trainer *t2 = make(TASK_REVERSE, 3, 6, RNN_CELL_GRU, ATTN_SCORE_ADDITIVE, 7);
    Trainer *t3 = make(TASK_REVERSE, 3, 6, RNN_CELL_GRU, ATTN_SCORE_ADDITIVE, 8);
    if (!t1 || !t2 || !t3) goto done;
    CHECK_OK(trainer_train(t1, &ADAM, 6, 16, a, NULL), "train");
    CHECK_OK(trainer_train(t2, &ADAM, 6, 16, b, NULL), "train");
    CHECK_OK(trainer_train(t3, &ADAM, 6, 16, c, NULL), "train");
    CHECK(memcmp(a, b, sizeof a) == 0, "same seed, different losses (%g vs %g)", a[5], b[5]);
    CHECK(memcmp(a, c, sizeof a) != 0, "different seeds, identical losses");
done:
    trainer_destroy(t1);
    trainer_destroy(t2);
    trainer_destroy(t3);
}

static void test_learns_copy(void) {
    check_case("copy of 2-4 digits with dot attention: loss falls and accuracy rises");
    Trainer *t = make(TASK_COPY, 2, 4, RNN_CELL_LSTM, ATTN_SCORE_DOT, 3);
    if (!t) return;
    TrainerEval before, after;
    CHECK_OK(trainer_evaluate(t, TASK_VALID, 64, &before), "evaluate");
    static float losses[300];
    double tokens = 0;
    CHECK_OK(trainer_train(t, &ADAM, 300, 16, losses, &tokens), "train");
    CHECK(tokens >= 300 * 16 * 3 && tokens <= 300 * 16 * 5, "tokens seen %g, expected 3..5 per example", tokens);
    CHECK_OK(trainer_evaluate(t, TASK_VALID, 64, &after), "evaluate");
    CHECK(after.loss < 0.5 * before.loss, "loss %g -> %g did not halve", before.loss, after.loss);
    CHECK(after.token_accuracy > before.token_accuracy + 0.3, "token accuracy %g -> %g", before.token_accuracy,
          after.token_accuracy);
    CHECK(after.count == 64, "count %d", after.count);
    CHECK(after.sequence_accuracy <= after.token_accuracy + 1e-12, "sequence accuracy above token accuracy");
    trainer_destroy(t);
}

static void test_translate(void) {
    check_case("translate: lengths, alignment rows sum to 1 over the input, errors");
    Trainer *t = make(TASK_REVERSE, 2, 6, RNN_CELL_GRU, ATTN_SCORE_ADDITIVE, 5);
    if (!t) return;
    int32_t in_ids[TASK_MAX_LEN], out_ids[TASK_MAX_LEN];
    nn_real *align = calloc((size_t)task_max_out(trainer_task(t)) * task_max_in(trainer_task(t)), sizeof(nn_real));
    char output[TASK_MAX_LEN + 2];
    int in_len = 0, out_len = 0;
    for (int beam = 1; beam <= 3; beam += 2) {
        int st = trainer_translate(t, "3141", 4, beam, in_ids, &in_len, out_ids, &out_len, align, output);
        CHECK(st == NN_OK, "beam %d: %s", beam, nn_last_error());
        CHECK(in_len == 4 && in_ids[0] == 1 + 3, "input ids: len %d, first %d", in_len, in_ids[0]);
        CHECK(out_len >= 1 && out_len <= task_max_out(trainer_task(t)), "output length %d", out_len);
        CHECK(strlen(output) <= (size_t)out_len, "output text '%s' longer than %d tokens", output, out_len);
        for (int r = 0; r < out_len; r++) {
            double s = 0;
            for (int j = 0; j < task_max_in(trainer_task(t)); j++) s += align[(size_t)r * task_max_in(trainer_task(t)) + j];
            CHECK(fabs(s - 1) < 1e-4, "beam %d: alignment row %d sums to %g", beam, r, s);
        }
    }
    int st = trainer_translate(t, "31x4", 4, 1, in_ids, &in_len, out_ids, &out_len, align, output);
    CHECK(st == NN_ERR_VALUE && strstr(nn_last_error(), "'x'"), "unknown character: %d (%s)", st, nn_last_error());
    st = trainer_translate(t, "", 0, 1, in_ids, &in_len, out_ids, &out_len, align, output);
    CHECK(st != NN_OK && nn_last_error()[0], "empty text: %d", st);
    st = trainer_translate(t, "12", 2, 0, in_ids, &in_len, out_ids, &out_len, align, output);
    CHECK(st == NN_ERR_SHAPE && strstr(nn_last_error(), "beam"), "beam 0: %d (%s)", st, nn_last_error());
    free(align);
    trainer_destroy(t);
}

static void test_save_load(void) {
    check_case("save/load keeps the task, the weights, the training stream; damaged files are rejected");
    Trainer *t = make(TASK_SORT, 2, 5, RNN_CELL_LSTM, ATTN_SCORE_GENERAL, 11);
    if (!t) return;
    float l[4];
    trainer_train(t, &ADAM, 4, 8, l, NULL);
    size_t n = trainer_save_size(t);
    uint8_t *bytes = malloc(n);
    CHECK_OK(trainer_save(t, bytes, n), "save");
    Trainer *u = NULL;
    int st = trainer_load(&u, bytes, n);
    CHECK_OK(st, "load");
    if (u) {
        TrainerEval a, b;
        trainer_evaluate(t, TASK_TEST, 20, &a);
        trainer_evaluate(u, TASK_TEST, 20, &b);
        /* files hold float32 weights: exact in the float builds, rounded in the double one */
        CHECK(fabs(a.loss - b.loss) <= 1e-5 * a.loss && a.token_accuracy == b.token_accuracy,
              "evaluation differs after load: %.9g vs %.9g", a.loss, b.loss);
        float x[3], y[3];
        trainer_train(t, &(NnTrainOptions){.optimizer = NN_SGD, .lr = (nn_real)0.1, .clip = 0}, 3, 8, x, NULL);
        trainer_train(u, &(NnTrainOptions){.optimizer = NN_SGD, .lr = (nn_real)0.1, .clip = 0}, 3, 8, y, NULL);
        CHECK(fabs(x[2] - y[2]) <= 1e-5f * x[2], "training continues differently after load (%.9g vs %.9g)", x[2], y[2]);
        CHECK(s2s_steps(trainer_model(u)) == 7, "steps after load and 3 more: %d", s2s_steps(trainer_model(u)));
        trainer_destroy(u);
    }
    Trainer *bad = NULL;
    st = trainer_load(&bad, bytes, n - 1);
    CHECK(st == NN_ERR_VALUE && bad == NULL && strstr(nn_last_error(), "model file"), "truncated: %d (%s)", st,
          nn_last_error());
    bytes[n / 2] ^= 0x40;
    st = trainer_load(&bad, bytes, n);
    CHECK(st == NN_ERR_VALUE && bad == NULL && strstr(nn_last_error(), "damaged"), "flipped bit: %d (%s)", st,
          nn_last_error());
    static const uint8_t foreign[32] = "PK\003\004 not a model at all....";
    st = trainer_load(&bad, foreign, sizeof foreign);
    CHECK(st == NN_ERR_VALUE && strstr(nn_last_error(), "not an attnlab"), "foreign: %d (%s)", st, nn_last_error());
    free(bytes);
    trainer_destroy(t);
}

static void test_pairs_round_trip(void) {
    check_case("a pairs trainer saves its lines and loads to the same alphabets");
    static const char text[] = "ab\tx\nba\ty\naa\txx\nbb\tyy\nab a\tz\n";
    TaskConfig tc = {TASK_PAIRS, TASK_DIGITS, 1, 1};
    S2sConfig mc = {RNN_CELL_RNN, 1, 1, 4, 6, ATTN_SCORE_COSINE, 0, 0, 0, 0, 0, 0, 4, 2};
    Trainer *t = NULL;
    int st = trainer_create(&t, &tc, text, sizeof text - 1, &mc);
    if (!CHECK_OK(st, "create")) return;
    size_t n = trainer_save_size(t);
    uint8_t *bytes = malloc(n);
    trainer_save(t, bytes, n);
    Trainer *u = NULL;
    st = trainer_load(&u, bytes, n);
    CHECK_OK(st, "load");
    if (u) {
        CHECK(strcmp(task_in_alphabet(trainer_task(u)), task_in_alphabet(trainer_task(t))) == 0, "input alphabets differ");
        CHECK(strcmp(task_out_alphabet(trainer_task(u)), task_out_alphabet(trainer_task(t))) == 0, "output alphabets differ");
        trainer_destroy(u);
    }
    free(bytes);
    trainer_destroy(t);
}

static void test_errors(void) {
    TaskConfig tc = {TASK_DATES, TASK_DIGITS, 1, 1};
    S2sConfig mc = {RNN_CELL_GRU, 1, 0, 8, 8, ATTN_SCORE_LOCATION, 0, 0, 0, 0, 0, 0, 4, 1};
    Trainer *t = (Trainer *)&tc;
    check_case("location attention on variable-length inputs is refused, by name");
    int st = trainer_create(&t, &tc, NULL, 0, &mc);
    CHECK(st == NN_ERR_ARG && t == NULL && strstr(nn_last_error(), "location"), "got %d (%s)", st, nn_last_error());
    check_case("location attention on fixed-length inputs is fine");
    TaskConfig fixed = {TASK_REVERSE, TASK_LETTERS, 5, 5};
    st = trainer_create(&t, &fixed, NULL, 0, &mc);
    CHECK(st == NN_OK, "got %d (%s)", st, nn_last_error());
    trainer_destroy(t);
    check_case("hidden 0, a bad task, a batch past the limit, zero steps");
    mc.attention = ATTN_SCORE_DOT;
    mc.hidden = 0;
    st = trainer_create(&t, &fixed, NULL, 0, &mc);
    CHECK(st != NN_OK && strstr(nn_last_error(), "hidden"), "hidden 0: %d (%s)", st, nn_last_error());
    mc.hidden = 8;
    TaskConfig bad = {(TaskKind)9, TASK_DIGITS, 1, 2};
    st = trainer_create(&t, &bad, NULL, 0, &mc);
    CHECK(st != NN_OK && nn_last_error()[0], "task 9: %d", st);
    st = trainer_create(&t, &fixed, NULL, 0, &mc);
    if (CHECK_OK(st, "create")) {
        st = trainer_train(t, &ADAM, 1, S2S_MAX_BATCH + 1, NULL, NULL);
        CHECK(st == NN_ERR_LIMIT && strstr(nn_last_error(), "batch"), "batch past the limit: %d (%s)", st, nn_last_error());
        st = trainer_train(t, &ADAM, 1, 0, NULL, NULL);
        CHECK(st == NN_ERR_SHAPE && strstr(nn_last_error(), "batch"), "batch 0: %d (%s)", st, nn_last_error());
        st = trainer_train(t, &ADAM, 0, 4, NULL, NULL);
        CHECK(st == NN_ERR_SHAPE && strstr(nn_last_error(), "steps"), "0 steps: %d (%s)", st, nn_last_error());
        TrainerEval r;
        st = trainer_evaluate(t, (TaskSplit)5, 4, &r);
        CHECK(st == NN_ERR_ARG && strstr(nn_last_error(), "split"), "split 5: %d (%s)", st, nn_last_error());
        trainer_destroy(t);
    }
}

static void test_batch_grows(void) {
    check_case("a batch larger than at creation grows the model: same losses as one created for it");
    Trainer *small = make(TASK_REVERSE, 2, 6, RNN_CELL_LSTM, ATTN_SCORE_ADDITIVE, 12); /* batch 16 */
    TaskConfig tc = {TASK_REVERSE, TASK_DIGITS, 2, 6};
    S2sConfig mc = {RNN_CELL_LSTM, 1, 0, 8, 12, ATTN_SCORE_ADDITIVE, 0, 0, 0, 0, 0, 0, 40, 12};
    Trainer *big = NULL;
    CHECK_OK(trainer_create(&big, &tc, NULL, 0, &mc), "create");
    if (!small || !big) goto done;
    float a[3], b[3], c[2];
    int st = trainer_train(small, &ADAM, 2, 8, a, NULL);
    CHECK(st == NN_OK, "batch 8 of 16: %d (%s)", st, nn_last_error());
    st = trainer_train(small, &ADAM, 1, 40, a + 2, NULL);
    CHECK(st == NN_OK && s2s_capacity(trainer_model(small)) >= 40, "batch 40 after 16: %d (%s), capacity %d", st,
          nn_last_error(), s2s_capacity(trainer_model(small)));
    CHECK(trainer_train(big, &ADAM, 2, 8, b, NULL) == NN_OK && trainer_train(big, &ADAM, 1, 40, b + 2, NULL) == NN_OK,
          "train: %s", nn_last_error());
    CHECK(memcmp(a, b, sizeof a) == 0, "losses differ: %.9g %.9g %.9g vs %.9g %.9g %.9g", a[0], a[1], a[2], b[0], b[1], b[2]);
    CHECK_OK(trainer_train(small, &ADAM, 2, 8, c, NULL), "a smaller batch after growing");
    TrainerEval r;
    CHECK(trainer_evaluate(small, TASK_VALID, 100, &r) == NN_OK && r.count == 100, "evaluate after growing: %s",
          nn_last_error());
done:
    trainer_destroy(small);
    trainer_destroy(big);
}


/* The saved bytes of t: its weights, step count and training stream. */
static uint8_t *saved(Trainer *t, size_t *n) {
    *n = trainer_save_size(t);
    uint8_t *b = malloc(*n);
    if (b) trainer_save(t, b, *n);
    return b;
}

static void test_divergence_rolls_back(void) {
    static const float LRS[] = {1e10f, 1e20f, 1e30f};
    static const int ATTENTION[] = {ATTN_SCORE_ADDITIVE, ATTN_SCORE_DOT};
    for (int i = 0; i < 3; i++)
        for (int k = 0; k < 2; k++)
            for (int steps = 1; steps <= 3; steps += 2) {
                check_case("lr %g, %d steps, attention %d: ERR_VALUE naming the step; the model, its optimiser state, "
                           "step count and draws as before", (double)LRS[i], steps, ATTENTION[k]);
                Trainer *t = make(TASK_REVERSE, 2, 6, RNN_CELL_GRU, ATTENTION[k], 5);
                Trainer *twin = make(TASK_REVERSE, 2, 6, RNN_CELL_GRU, ATTENTION[k], 5);
                if (!t || !twin) goto next;
                trainer_train(t, &ADAM, 2, 8, NULL, NULL); /* moments that are not zero */
                trainer_train(twin, &ADAM, 2, 8, NULL, NULL);
                size_t n, m;
                uint8_t *before = saved(t, &n);
                int32_t in_ids[TASK_MAX_LEN], out0[TASK_MAX_LEN], out1[TASK_MAX_LEN];
                char text0[TASK_MAX_LEN + 2], text1[TASK_MAX_LEN + 2];
                nn_real *align = calloc(6 * 7, sizeof(nn_real));
                int in_len, len0 = 0, len1 = 0;
                trainer_translate(t, "31415", 5, 1, in_ids, &in_len, out0, &len0, align, text0);
                NnTrainOptions huge = {.optimizer = NN_ADAM, .lr = LRS[i], .clip = 5};
                int st = trainer_train(t, &huge, steps, 8, NULL, NULL);
                CHECK(st == NN_ERR_VALUE && strstr(nn_last_error(), "diverged at step 3"), "got %d (%s)", st, nn_last_error());
                uint8_t *after = saved(t, &m);
                CHECK(before && after && n == m && memcmp(before, after, n) == 0, "the saved model changed");
                CHECK(trainer_translate(t, "31415", 5, 1, in_ids, &in_len, out1, &len1, align, text1) == NN_OK &&
                          strcmp(text0, text1) == 0, "translation '%s' -> '%s' (%s)", text0, text1, nn_last_error());
                /* Adam's moments too: both continue alike */
                float a[2], b[2];
                CHECK_OK(trainer_train(t, &ADAM, 2, 8, a, NULL), "train after");
                CHECK_OK(trainer_train(twin, &ADAM, 2, 8, b, NULL), "twin");
                CHECK(memcmp(a, b, sizeof a) == 0, "losses after the failed call differ from a twin's (%g vs %g)", a[1], b[1]);
                free(before), free(after), free(align);
            next:
                trainer_destroy(t);
                trainer_destroy(twin);
            }
}

static void test_empty_train_split(void) {
    check_case("pairs whose train split is empty: training says so (not 'diverged')");
    /* one line: a hash of its input decides its split; find one outside train */
    char text[16];
    Trainer *t = NULL;
    for (int c = 'a'; c <= 'z' && !t; c++) {
        snprintf(text, sizeof text, "%c%c\tx\n", c, c);
        TaskConfig tc = {TASK_PAIRS, TASK_DIGITS, 1, 1};
        S2sConfig mc = {RNN_CELL_GRU, 1, 0, 4, 6, ATTN_SCORE_DOT, 0, 0, 0, 0, 0, 0, 4, 1};
        if (trainer_create(&t, &tc, text, strlen(text), &mc) != NN_OK) continue;
        if (task_split_size(trainer_task(t), TASK_TRAIN) != 0) {
            trainer_destroy(t);
            t = NULL;
        }
    }
    if (!CHECK(t != NULL, "no line outside the train split")) return;
    int st = trainer_train(t, &ADAM, 1, 4, NULL, NULL);
    CHECK(st == NN_ERR_VALUE && strstr(nn_last_error(), "train split is empty") && !strstr(nn_last_error(), "diverged"),
          "got %d (%s)", st, nn_last_error());
    trainer_destroy(t);
}

int main(void) {
    test_divergence_rolls_back();
    test_empty_train_split();
    test_batch_grows();
    test_reproducible();
    test_learns_copy();
    test_translate();
    test_save_load();
    test_pairs_round_trip();
    test_errors();
    return check_summary();
}
