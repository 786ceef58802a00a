/* The transformer's tasks on data (src/tasks/sequence_data.c): 'dates' is
 * the seq2seq dates task as "date=answer" (the answer scored, its test
 * dates the seq2seq task's test dates), 'names' reads names one per line
 * (every next character scored, disjoint splits); their errors; a few steps
 * of training lower the loss on names. */
#include <string.h>

#include "attnlab/tasks.h"
#include "attnlab/transformer.h"
#include "check.h"

static TfConfig config(TfTaskKind task, int context) {
    TfConfig c = {task, 1, 2, 16, 32, context, TF_POS_LEARNED, ATTN_SCORE_SCALED_DOT, 8, 7};
    return c;
}

/* The sequence's tokens [from, to) as text. */
static void text_of(const Transformer *m, const int32_t *tok, int from, int to, char *out) {
    out[0] = 0;
    for (int i = from; i < to; i++) strcat(out, tf_token_name(m, tok[i]));
}

static void test_dates(void) {
    check_case("dates");
    Transformer *m = NULL;
    TfConfig c = config(TF_TASK_DATES, 64);
    CHECK(tf_create(&m, &c, NULL, 0) == NN_OK, "create: %s", nn_last_error());
    if (!m) return;
    /* the seq2seq task draws the same examples from the same stream */
    Task *s2s = NULL;
    const TaskConfig tc = {TASK_DATES, TASK_DIGITS, 1, 1};
    CHECK(task_create(&s2s, &tc, NULL, 0) == NN_OK, "seq2seq task: %s", nn_last_error());
    int n = tf_seq_len(m);
    CHECK(n == task_max_in(s2s) + 1 + 10 && n <= 64, "sequence length %d", n);
    int32_t tok[TF_MAX_CONTEXT], tgt[TF_MAX_CONTEXT];
    for (int split = 0; split < 2; split++) {
        uint64_t rng = 11, rng2 = 11;
        for (int e = 0; e < 200; e++) {
            int len = 0;
            CHECK(tf_sample(m, (TfSplit)split, &rng, tok, tgt, &len) == NN_OK && len == n, "sample");
            char in[TASK_MAX_LEN + 1], out[TASK_MAX_LEN + 1], seq[512], answer[64];
            task_sample(s2s, split ? TASK_TEST : TASK_TRAIN, &rng2, in, out);
            int L = (int)strlen(in);
            text_of(m, tok, 0, L + 11, seq);
            char want[512];
            snprintf(want, sizeof want, "%s=%s", in, out);
            CHECK(strcmp(seq, want) == 0, "split %d example %d: '%s', want '%s'", split, e, seq, want);
            /* scored: exactly the positions from '=' to the answer's last but one, each the next token */
            int scored = 0;
            for (int i = 0; i < n; i++) {
                int want_scored = i >= L && i < L + 10;
                CHECK((tgt[i] >= 0) == want_scored, "example %d position %d scored %d", e, i, tgt[i] >= 0);
                if (tgt[i] >= 0) answer[scored++] = tf_token_name(m, tgt[i])[0], CHECK(tgt[i] == tok[i + 1], "target");
            }
            answer[scored] = 0;
            CHECK(strcmp(answer, out) == 0, "targets '%s', answer '%s'", answer, out);
            for (int i = L + 11; i < n; i++) CHECK(strcmp(tf_token_name(m, tok[i]), "_") == 0, "padding at %d", i);
        }
    }
    task_destroy(s2s);
    tf_destroy(m);
    /* a context too short for the longest date */
    c.context = 20;
    CHECK(tf_create(&m, &c, NULL, 0) == NN_ERR_SHAPE && !m, "short context");
    CHECK(strstr(nn_last_error(), "'dates' task needs at least") != NULL, "message: %s", nn_last_error());
    c.context = 64;
    CHECK(tf_create(&m, &c, "abc", 3) == NN_ERR_ARG && !m, "text passed to dates");
}

static const char NAMES[] = "anna\nbob\r\ncarl\n\nmary-jane\nzoe\nemma\nolivia\nliam\nnoah\nava\nmia\nlucas\n"
                            "ella\nleo\nluna\nhugo\nivy\njack\nkate\nmax\nnina\nomar\npaul\nrose\nsam\ntom\numa\n";

static void test_names(void) {
    check_case("names");
    Transformer *m = NULL;
    TfConfig c = config(TF_TASK_NAMES, 24);
    CHECK(tf_create(&m, &c, NAMES, strlen(NAMES)) == NN_OK, "create: %s", nn_last_error());
    if (!m) return;
    /* the end token first, then the characters in byte order */
    int distinct = 0, byte_seen[256] = {0};
    for (const char *p = NAMES; *p; p++)
        if (*p != '\n' && *p != '\r' && !byte_seen[(uint8_t)*p]++) distinct++;
    CHECK(tf_vocab(m) == 1 + distinct, "vocab %d, want %d", tf_vocab(m), 1 + distinct);
    CHECK(strcmp(tf_token_name(m, 0), "\n") == 0 && strcmp(tf_token_name(m, 1), "-") == 0 &&
              strcmp(tf_token_name(m, 2), "a") == 0,
          "names of tokens");
    CHECK(tf_seq_len(m) == 24, "sequence length %d", tf_seq_len(m));
    /* every name of a sequence is whole (but the last) and of one split only */
    char seen[2][64][16];
    int n_seen[2] = {0, 0};
    int32_t tok[TF_MAX_CONTEXT], tgt[TF_MAX_CONTEXT];
    for (int split = 0; split < 2; split++) {
        uint64_t rng = 5;
        for (int e = 0; e < 100; e++) {
            int n;
            tf_sample(m, (TfSplit)split, &rng, tok, tgt, &n);
            CHECK(tok[0] == 0, "starts at a name");
            for (int i = 0; i + 1 < n; i++) CHECK(tgt[i] == tok[i + 1], "target %d", i);
            CHECK(tgt[n - 1] >= 0, "last position scored");
            char name[32];
            int k = 0;
            for (int i = 1; i < n; i++) {
                if (tok[i] == 0) {
                    name[k] = 0;
                    char hay[sizeof NAMES + 2] = "\n", needle[40];
                    strcat(hay, NAMES);
                    snprintf(needle, sizeof needle, "\n%s\n", name);
                    CHECK(strstr(hay, needle) || strcmp(name, "bob") == 0, "'%s' is a name", name);
                    int known = 0;
                    for (int j = 0; j < n_seen[split]; j++) known |= strcmp(seen[split][j], name) == 0;
                    if (!known && n_seen[split] < 64) strcpy(seen[split][n_seen[split]++], name);
                    k = 0;
                } else if (k < 31) {
                    name[k++] = tf_token_name(m, tok[i])[0];
                }
            }
        }
    }
    CHECK(n_seen[0] > 0 && n_seen[1] > 0 && n_seen[0] + n_seen[1] <= 28, "train %d, test %d names", n_seen[0],
          n_seen[1]);
    for (int i = 0; i < n_seen[0]; i++)
        for (int j = 0; j < n_seen[1]; j++)
            CHECK(strcmp(seen[0][i], seen[1][j]) != 0, "'%s' in both splits", seen[0][i]);
    /* a few steps lower the loss (nats per character) on the names trained on;
     * a list this short has too few test names to generalise to */
    double before, after, acc;
    CHECK(tf_evaluate(m, TF_SPLIT_TRAIN, 32, &before, &acc) == NN_OK, "evaluate");
    TfTrainOptions o = {60, 16, 1e-2f, 0, 5, 0, 1, 0, 0};
    CHECK(tf_train(m, &o, NULL) == NN_OK, "train: %s", nn_last_error());
    tf_evaluate(m, TF_SPLIT_TRAIN, 32, &after, &acc);
    CHECK(after < before - 0.3, "train loss %.3f -> %.3f", before, after);
    int32_t gen[40] = {0};
    CHECK(tf_generate(m, gen, 1, 30, 0.8, 0, 3) == NN_OK, "generate: %s", nn_last_error());
    for (int i = 0; i < 31; i++) CHECK(gen[i] >= 0 && gen[i] < tf_vocab(m), "generated token %d", gen[i]);
    tf_destroy(m);
    /* errors: no list, a bad character, too few names for two splits */
    CHECK(tf_create(&m, &c, NULL, 0) == NN_ERR_SHAPE && !m, "no names");
    CHECK(tf_create(&m, &c, "anna\nb\x01ob\n", 10) == NN_ERR_VALUE && !m, "control character");
    CHECK(strstr(nn_last_error(), "line 2") != NULL, "message: %s", nn_last_error());
    CHECK(tf_create(&m, &c, "anna\n", 5) == NN_ERR_SHAPE && !m, "one name");
    CHECK(strstr(nn_last_error(), "too few") != NULL, "message: %s", nn_last_error());
}

int main(void) {
    test_dates();
    test_names();
    return check_summary();
}
