/* The tasks: outputs right for their inputs, dates in every format back to
 * the right ISO date (weekdays included), splits that never overlap in the
 * 80/10/10 proportions, determinism for a seed, batches, pairs errors naming
 * their line, and encode/decode. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab/tasks.h"
#include "check.h"

static Task *make(TaskKind kind, TaskAlphabet a, int lo, int hi) {
    TaskConfig c = {kind, a, lo, hi};
    Task *t = NULL;
    int st = task_create(&t, &c, NULL, 0);
    CHECK(st == NN_OK, "task_create(%d): %d (%s)", (int)kind, st, nn_last_error());
    return t;
}

static void test_generated(void) {
    const char *names[3] = {"copy", "reverse", "sort"};
    for (int k = TASK_COPY; k <= TASK_SORT; k++)
        for (int a = 0; a < 2; a++) {
            check_case("%s of %s, lengths 3..9", names[k], a ? "letters" : "digits");
            Task *t = make((TaskKind)k, (TaskAlphabet)a, 3, 9);
            if (!t) continue;
            CHECK(task_in_vocab(t) == (a ? 27 : 11) && task_out_vocab(t) == (a ? 29 : 13), "vocabularies %d, %d",
                  task_in_vocab(t), task_out_vocab(t));
            CHECK(task_max_in(t) == 9 && task_max_out(t) == 10 && task_fixed_in(t) == 0, "lengths");
            uint64_t rng = 42;
            char in[TASK_MAX_LEN + 1], out[TASK_MAX_LEN + 1], want[TASK_MAX_LEN + 1];
            int bad = 0, lens[10] = {0};
            for (int i = 0; i < 500; i++) {
                task_sample(t, (TaskSplit)(i % 3), &rng, in, out);
                int n = (int)strlen(in);
                lens[n < 10 ? n : 0]++;
                for (int j = 0; j < n; j++) bad += strchr(task_in_alphabet(t), in[j]) == NULL;
                if (k == TASK_COPY) strcpy(want, in);
                if (k == TASK_REVERSE) {
                    for (int j = 0; j < n; j++) want[j] = in[n - 1 - j];
                    want[n] = 0;
                }
                if (k == TASK_SORT) { /* insertion sort, independent of the task's counting sort */
                    strcpy(want, in);
                    for (int x = 1; x < n; x++)
                        for (int y = x; y > 0 && want[y - 1] > want[y]; y--) {
                            char c = want[y];
                            want[y] = want[y - 1];
                            want[y - 1] = c;
                        }
                }
                bad += strcmp(out, want) != 0;
            }
            CHECK(bad == 0, "%d wrong examples", bad);
            int all = 1;
            for (int n = 3; n <= 9; n++) all &= lens[n] > 20;
            CHECK(all && lens[0] == 0 && lens[1] == 0 && lens[2] == 0, "lengths outside 3..9 or missing");
            task_destroy(t);
        }
}

static const char *MONTHS[12] = {"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"};

/* Independent check: the ISO date's day, month and year all appear in the input. */
static int date_matches(const char *in, const char *iso) {
    int y, m, d;
    if (sscanf(iso, "%4d-%2d-%2d", &y, &m, &d) != 3) return 0;
    if (y < 1950 || y > 2049 || m < 1 || m > 12 || d < 1 || d > 31) return 0;
    char low[TASK_MAX_LEN + 1];
    int i = 0;
    for (; in[i]; i++) low[i] = (char)(in[i] >= 'A' && in[i] <= 'Z' ? in[i] + 32 : in[i]);
    low[i] = 0;
    char yy[8], day[8], mm[8], mm0[8];
    snprintf(yy, sizeof yy, "%02d", y % 100);
    snprintf(day, sizeof day, "%d", d);
    snprintf(mm, sizeof mm, "%d", m);
    snprintf(mm0, sizeof mm0, "%02d", m);
    int has_month = strstr(low, MONTHS[m - 1]) || strstr(low, mm);
    return strstr(low, yy) && strstr(low, day) && has_month;
}

static void test_dates(void) {
    check_case("dates: every output is ISO for its input, at least 15 formats, years 1950-2049");
    Task *t = make(TASK_DATES, TASK_DIGITS, 1, 1);
    if (!t) return;
    CHECK(task_max_out(t) == 11, "max_out %d", task_max_out(t));
    CHECK(task_max_in(t) >= 22 && task_max_in(t) <= TASK_MAX_LEN, "max_in %d", task_max_in(t));
    CHECK(strcmp(task_out_alphabet(t), "-0123456789") == 0, "output alphabet '%s'", task_out_alphabet(t));
    uint64_t rng = 7;
    char in[TASK_MAX_LEN + 1], out[TASK_MAX_LEN + 1];
    int bad = 0, min_year = 9999, max_year = 0, shapes = 0;
    char seen[64][24];
    for (int i = 0; i < 5000; i++) {
        task_sample(t, (TaskSplit)(i % 3), &rng, in, out);
        bad += !date_matches(in, out);
        if (bad == 1 && !date_matches(in, out)) CHECK(0, "'%s' -> '%s' does not match", in, out);
        int y = atoi(out);
        if (y < min_year) min_year = y;
        if (y > max_year) max_year = y;
        /* a format's shape: letters -> a, digits -> 9 (collapsed runs) */
        char shape[24];
        int n = 0;
        for (int j = 0; in[j] && n < 23; j++) {
            char c = in[j] >= '0' && in[j] <= '9' ? '9' : (in[j] | 32) >= 'a' && (in[j] | 32) <= 'z' ? 'a' : in[j];
            if (n == 0 || shape[n - 1] != c) shape[n++] = c;
        }
        shape[n] = 0;
        int known = 0;
        for (int s = 0; s < shapes; s++) known |= strcmp(seen[s], shape) == 0;
        if (!known && shapes < 64) strcpy(seen[shapes++], shape);
        CHECK(task_encode_input(t, in, strlen(in), (int32_t[TASK_MAX_LEN]){0}, TASK_MAX_LEN) == (int)strlen(in),
              "'%s' does not encode", in);
    }
    CHECK(bad == 0, "%d dates do not match their inputs", bad);
    CHECK(shapes >= 12, "only %d distinct format shapes", shapes);
    CHECK(min_year >= 1950 && max_year <= 2049 && min_year < 1955 && max_year > 2044, "years %d..%d", min_year, max_year);
    task_destroy(t);
}

static void test_weekdays(void) {
    check_case("dates: weekday names are right (2009-06-25 Thursday, 1950-01-01 Sunday, 2049-12-31 Friday)");
    Task *t = make(TASK_DATES, TASK_DIGITS, 1, 1);
    if (!t) return;
    struct { const char *iso, *day; } known[] = {{"2009-06-25", "hursday"}, {"1950-01-01", "unday"}, {"2049-12-31", "riday"},
                                                 {"2000-02-29", "uesday"}};
    int found[4] = {0}, wrong = 0;
    uint64_t rng = 99;
    char in[TASK_MAX_LEN + 1], out[TASK_MAX_LEN + 1];
    /* draw until each known date has appeared in a weekday format */
    for (int i = 0; i < 3000000 && (found[0] + found[1] + found[2] + found[3]) < 4; i++) {
        task_sample(t, (TaskSplit)(i % 3), &rng, in, out);
        for (int k = 0; k < 4; k++)
            if (strcmp(out, known[k].iso) == 0 && strstr(in, "day")) {
                found[k] = 1;
                wrong += strstr(in, known[k].day) == NULL;
                if (strstr(in, known[k].day) == NULL) CHECK(0, "'%s' for %s", in, known[k].iso);
            }
    }
    CHECK(found[0] + found[1] + found[2] + found[3] == 4, "known dates not drawn with a weekday");
    CHECK(wrong == 0, "%d wrong weekdays", wrong);
    task_destroy(t);
}

static void test_splits(void) {
    for (int k = 0; k < 2; k++) {
        check_case("%s: splits never overlap and are about 80/10/10", k ? "dates" : "reverse 4..6");
        Task *t = k ? make(TASK_DATES, TASK_DIGITS, 1, 1) : make(TASK_REVERSE, TASK_DIGITS, 4, 6);
        if (!t) continue;
        /* source -> split over many draws from each split */
        enum { N = 3000 };
        static char src[3][N][TASK_MAX_LEN + 1];
        uint64_t rng = 5;
        char in[TASK_MAX_LEN + 1], out[TASK_MAX_LEN + 1];
        for (int s = 0; s < 3; s++)
            for (int i = 0; i < N; i++) {
                task_sample(t, (TaskSplit)s, &rng, in, out);
                strcpy(src[s][i], k ? out : in);
            }
        int overlap = 0;
        for (int a = 0; a < 3; a++)
            for (int b = a + 1; b < 3; b++)
                for (int i = 0; i < N; i += 7)
                    for (int j = 0; j < N; j++) overlap += strcmp(src[a][i], src[b][j]) == 0;
        CHECK(overlap == 0, "%d sources in two splits", overlap);
        task_destroy(t);
    }
}

static void test_proportions(void) {
    check_case("pairs: 2000 distinct lines split about 80/10/10");
    char *text = malloc(2000 * 16), *p = text;
    for (int i = 0; i < 2000; i++) p += sprintf(p, "w%d\t%d\n", i * 7919, i);
    TaskConfig c = {TASK_PAIRS, TASK_DIGITS, 1, 1};
    Task *t = NULL;
    if (CHECK_OK(task_create(&t, &c, text, (size_t)(p - text)), "create")) {
        int n0 = task_split_size(t, TASK_TRAIN), n1 = task_split_size(t, TASK_VALID), n2 = task_split_size(t, TASK_TEST);
        CHECK(n0 + n1 + n2 == 2000 && n0 > 1500 && n0 < 1700 && n1 > 140 && n1 < 260 && n2 > 140 && n2 < 260,
              "split sizes %d / %d / %d", n0, n1, n2);
        task_destroy(t);
    }
    free(text);
}

static void test_determinism_and_batch(void) {
    check_case("same seed, same batch; padding, EOS and lengths");
    Task *t = make(TASK_SORT, TASK_LETTERS, 2, 7);
    if (!t) return;
    enum { B = 8 };
    int32_t in1[B * 7], il1[B], out1[B * 8], ol1[B], in2[B * 7], il2[B], out2[B * 8], ol2[B];
    uint64_t r1 = 123, r2 = 123;
    task_sample_batch(t, TASK_TRAIN, &r1, B, in1, il1, out1, ol1);
    task_sample_batch(t, TASK_TRAIN, &r2, B, in2, il2, out2, ol2);
    CHECK(memcmp(in1, in2, sizeof in1) == 0 && memcmp(out1, out2, sizeof out1) == 0 && r1 == r2, "batches differ");
    int bad = 0;
    for (int b = 0; b < B; b++) {
        bad += ol1[b] != il1[b] + 1 || out1[b * 8 + ol1[b] - 1] != TASK_EOS;
        for (int i = il1[b]; i < 7; i++) bad += in1[b * 7 + i] != TASK_PAD;
        for (int i = ol1[b]; i < 8; i++) bad += out1[b * 8 + i] != TASK_PAD;
        for (int i = 0; i < il1[b]; i++) bad += in1[b * 7 + i] < 1 || in1[b * 7 + i] > 26;
        char text[16];
        task_decode_output(t, out1 + b * 8, 8, text, sizeof text);
        bad += (int)strlen(text) != il1[b];
    }
    CHECK(bad == 0, "%d padding/EOS/length faults", bad);
    int32_t ids[8];
    CHECK(task_encode_input(t, "cab", 3, ids, 7) == 3 && ids[0] == 3 && ids[1] == 1 && ids[2] == 2, "encode 'cab'");
    int st = task_encode_input(t, "caB", 3, ids, 7);
    CHECK(st == -NN_ERR_VALUE && strstr(nn_last_error(), "'B' at position 3"), "'caB': %d (%s)", st, nn_last_error());
    st = task_encode_input(t, "abcdefgh", 8, ids, 7);
    CHECK(st < 0 && strstr(nn_last_error(), "at most 7"), "too long: %d (%s)", st, nn_last_error());
    CHECK(task_encode_input(t, "", 0, ids, 7) < 0, "empty text accepted");
    task_destroy(t);
    check_case("fixed length: min = max");
    t = make(TASK_COPY, TASK_DIGITS, 5, 5);
    if (t) CHECK(task_fixed_in(t) == 5, "fixed_in %d", task_fixed_in(t));
    task_destroy(t);
}

static int pairs_error(const char *text, int want_code, const char *want) {
    TaskConfig c = {TASK_PAIRS, TASK_DIGITS, 1, 1};
    Task *t = (Task *)&c;
    int st = task_create(&t, &c, text, strlen(text));
    int ok = st == want_code && t == NULL && strstr(nn_last_error(), want) != NULL;
    CHECK(ok, "pairs '%s': got %d (%s), want %d with '%s'", text, st, nn_last_error(), want_code, want);
    return ok;
}

static void test_pairs(void) {
    check_case("pairs: alphabets, lengths, splits from the lines; errors name the line");
    static const char text[] = "hello\tbonjour\r\n\ncat\tchat\ndog\tchien\nbird\toiseau\nfish\tpoisson\nhorse\tcheval\n"
                               "cow\tvache\npig\tcochon\nsheep\tmouton\ngoat\tchevre\nduck\tcanard\nmouse\tsouris\n";
    TaskConfig c = {TASK_PAIRS, TASK_DIGITS, 1, 1};
    Task *t = NULL;
    int st = task_create(&t, &c, text, sizeof text - 1);
    if (CHECK_OK(st, "create")) {
        CHECK(task_max_in(t) == 5 && task_max_out(t) == 8, "lengths %d, %d", task_max_in(t), task_max_out(t));
        CHECK(strcmp(task_in_alphabet(t), "abcdefghiklmoprstuw") == 0, "input alphabet '%s'", task_in_alphabet(t));
        int total = task_split_size(t, TASK_TRAIN) + task_split_size(t, TASK_VALID) + task_split_size(t, TASK_TEST);
        CHECK(total == 12, "split sizes add to %d", total);
        uint64_t rng = 3;
        char in[TASK_MAX_LEN + 1], out[TASK_MAX_LEN + 1];
        int bad = 0;
        for (int i = 0; i < 200; i++)
            if (task_sample(t, TASK_TRAIN, &rng, in, out) == NN_OK) {
                char line[2 * TASK_MAX_LEN + 4];
                snprintf(line, sizeof line, "%s\t%s\n", in, out);
                bad += strstr(text, line) == NULL && !(strcmp(in, "hello") == 0 && strcmp(out, "bonjour") == 0);
            }
        CHECK(bad == 0, "%d sampled pairs not in the text", bad);
        for (int s = 0; s < 3; s++)
            if (task_split_size(t, (TaskSplit)s) == 0) {
                st = task_sample(t, (TaskSplit)s, &rng, in, out);
                CHECK(st == NN_ERR_VALUE && strstr(nn_last_error(), "no lines"), "empty split %d: %d", s, st);
            }
        task_destroy(t);
    }
    pairs_error("ab\tcd\nno tab here\n", NN_ERR_VALUE, "line 2 has no tab");
    pairs_error("ab\tcd\n\n\t\n", NN_ERR_VALUE, "line 3 has an empty input");
    pairs_error("ab\t\n", NN_ERR_VALUE, "line 1 has an empty output");
    pairs_error("ab\tcd\nx\ty\tz\n", NN_ERR_VALUE, "line 2 has more than one tab");
    pairs_error("ab\tcd\nok\tfine\nbad\t\x01\n", NN_ERR_VALUE, "line 3, column 5");
    pairs_error("ab\tcd\ncaf\xc3\xa9\tx\n", NN_ERR_VALUE, "line 2");
    pairs_error("\n\n", NN_ERR_VALUE, "no lines");
    char longline[200];
    memset(longline, 'a', 70);
    strcpy(longline + 70, "\tb\n");
    pairs_error(longline, NN_ERR_VALUE, "line 1 is too long");
}

static void test_config_errors(void) {
    check_case("bad configurations fail with a message, nothing allocated");
    TaskConfig bad[] = {{(TaskKind)7, TASK_DIGITS, 1, 2}, {TASK_COPY, (TaskAlphabet)5, 1, 2}, {TASK_COPY, TASK_DIGITS, 0, 2},
                        {TASK_COPY, TASK_DIGITS, 5, 4}, {TASK_COPY, TASK_DIGITS, 1, 99}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        Task *t = (Task *)bad;
        int st = task_create(&t, &bad[i], NULL, 0);
        CHECK(st != NN_OK && t == NULL && nn_last_error()[0], "config %zu: %d", i, st);
    }
    check_case("a task with too few distinct inputs reports the empty split instead of looping");
    Task *t = make(TASK_COPY, TASK_DIGITS, 1, 1);
    if (!t) return;
    uint64_t rng = 1;
    char in[TASK_MAX_LEN + 1], out[TASK_MAX_LEN + 1];
    int fails = 0;
    for (int s = 0; s < 3; s++) fails += task_sample(t, (TaskSplit)s, &rng, in, out) != NN_OK;
    CHECK(fails == 0 || strstr(nn_last_error(), "split"), "error '%s'", nn_last_error());
    task_destroy(t);
}

int main(void) {
    test_generated();
    test_dates();
    test_weekdays();
    test_splits();
    test_proportions();
    test_determinism_and_batch();
    test_pairs();
    test_config_errors();
    return check_summary();
}
