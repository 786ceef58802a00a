/* The 'text' and 'names' tasks read UTF-8 a character at a time: a token per
 * code point ("è", "δ", a 4-byte emoji), named by its UTF-8, every sampled
 * window whole characters; bytes that are not UTF-8 (a stray byte, a cut
 * character, an overlong form, a surrogate) are refused naming their offset,
 * as are a NUL character, more characters than a vocabulary holds and a text
 * shorter than TF_MIN_TEXT characters (whatever its bytes). A text past ASCII
 * is saved as format version 2 and loads with its characters; a format 1
 * file (a token per byte) still loads as it was trained. */
#include <string.h>

#include "attnlab/transformer.h"
#include "base/utf8.h"
#include "check.h"
#include "layers/model_file.h"
#include "train/transformer_train.h"

static TfConfig config(TfTaskKind task) {
    TfConfig c = {task, 1, 2, 16, 0, 16, TF_POS_LEARNED, ATTN_SCORE_SCALED_DOT, 4, 3};
    return c;
}

static Transformer *make(TfTaskKind task, const char *text) {
    TfConfig c = config(task);
    Transformer *m = NULL;
    CHECK(tf_create(&m, &c, text, strlen(text)) == NN_OK, "tf_create: %s", nn_last_error());
    return m;
}

/* The token whose name is `name`, or -1. */
static int token_of(const Transformer *m, const char *name) {
    for (int id = 0; id < tf_vocab(m); id++)
        if (strcmp(tf_token_name(m, id), name) == 0) return id;
    return -1;
}

/* Distinct code points of a valid UTF-8 string. */
static int distinct_chars(const char *s) {
    uint32_t seen[512];
    int count = 0;
    size_t len = strlen(s);
    for (size_t i = 0, n; i < len; i += n) {
        int32_t c = nn_utf8_decode((const uint8_t *)s, len, i, &n);
        int known = 0;
        for (int k = 0; k < count; k++) known |= seen[k] == (uint32_t)c;
        if (!known) seen[count++] = (uint32_t)c;
    }
    return count;
}

static void test_decode(void) {
    check_case("utf8 decode and encode");
    const struct {
        const char *bytes;
        int32_t want;
        size_t n;
    } cases[] = {
        {"a", 'a', 1},        {"\xc3\xa8", 0xE8, 2},        {"\xce\xb4", 0x3B4, 2},   {"\xe2\x82\xac", 0x20AC, 3},
        {"\xf0\x9f\x99\x82", 0x1F642, 4}, {"\xff", -1, 1},  {"\x80", -1, 1},          {"\xc3", -1, 1},
        {"\xc0\xaf", -1, 1},  {"\xe0\x80\xaf", -1, 1},      {"\xed\xa0\x80", -1, 1},  {"\xf4\x90\x80\x80", -1, 1},
        {"\xe2\x82", -1, 1},  {"\xc3(", -1, 1},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        size_t n = 0, len = strlen(cases[k].bytes);
        int32_t c = nn_utf8_decode((const uint8_t *)cases[k].bytes, len, 0, &n);
        CHECK(c == cases[k].want && n == cases[k].n, "case %zu: U+%X in %zu bytes, want U+%X in %zu", k, (unsigned)c, n,
              (unsigned)cases[k].want, cases[k].n);
        if (c >= 0) {
            char out[NN_UTF8_MAX + 1];
            CHECK(nn_utf8_encode((uint32_t)c, out) == (int)len && strcmp(out, cases[k].bytes) == 0, "case %zu encodes back", k);
        }
    }
}

/* Every sampled window of both splits is whole characters of the text, in order. */
static void check_windows(const Transformer *m, const char *text) {
    int32_t tok[TF_MAX_CONTEXT], tgt[TF_MAX_CONTEXT];
    char window[TF_MAX_CONTEXT * NN_UTF8_MAX + 1];
    for (int split = 0; split < 2; split++) {
        uint64_t rng = 5;
        for (int e = 0; e < 50; e++) {
            int n = 0;
            CHECK(tf_sample(m, (TfSplit)split, &rng, tok, tgt, &n) == NN_OK, "sample");
            window[0] = 0;
            for (int i = 0; i < n; i++) strcat(window, tf_token_name(m, tok[i]));
            CHECK(strstr(text, window) != NULL, "split %d window %d '%s' is not in the text", split, e, window);
            for (int i = 0; i + 1 < n; i++) CHECK(tgt[i] == tok[i + 1], "target %d", i);
        }
    }
}

static void test_characters(void) {
    const char *texts[] = {
        "crème brûlée, crème caramel, café au lait et crêpes. ",
        "αβγ δέλτα, ε ζήτα ήτα θήτα: ιώτα κάππα λάμδα. ",
        "rain 🌧 then sun 🌞, rain 🌧 then sun 🌞 again 🙂. ",
    };
    const char *chars[] = {"è", "δ", "🌞"};
    for (int k = 0; k < 3; k++) {
        check_case("characters of '%s'", texts[k]);
        Transformer *m = make(TF_TASK_TEXT, texts[k]);
        if (!m) continue;
        CHECK(tf_vocab(m) == distinct_chars(texts[k]), "vocabulary %d, distinct characters %d", tf_vocab(m),
              distinct_chars(texts[k]));
        CHECK(token_of(m, chars[k]) >= 0, "'%s' is a token", chars[k]);
        for (int id = 0; id < tf_vocab(m); id++) {
            const char *name = tf_token_name(m, id);
            size_t n = 0;
            CHECK(nn_utf8_decode((const uint8_t *)name, strlen(name), 0, &n) >= 0 && n == strlen(name),
                  "token %d '%s' is one whole character", id, name);
        }
        check_windows(m, texts[k]);
        tf_destroy(m);
    }
}

static void test_refused(void) {
    check_case("text errors");
    TfConfig c = config(TF_TASK_TEXT);
    Transformer *m = NULL;
    const struct {
        const char *text;
        int status;
        const char *says;
    } cases[] = {
        {"twenty characters ok\xff and more text", NN_ERR_VALUE, "offset 20"},
        {"a cut character at the end: \xc3", NN_ERR_VALUE, "offset 28"},
        {"an overlong slash \xc0\xaf in a text", NN_ERR_VALUE, "offset 18"},
        {"a surrogate \xed\xa0\x80 in a text here", NN_ERR_VALUE, "offset 12"},
        /* 19 characters of 38 bytes: too short, however many bytes */
        {"ééééééééééééééééééé", NN_ERR_SHAPE, "at least 20 characters (got 19)"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        int st = tf_create(&m, &c, cases[k].text, strlen(cases[k].text));
        CHECK(st == cases[k].status && !m, "case %zu: status %d", k, st);
        CHECK(strstr(nn_last_error(), cases[k].says) != NULL, "case %zu: '%s' does not say '%s'", k, nn_last_error(),
              cases[k].says);
    }
    static const char nul[] = "a text with a NUL \0 character inside";
    CHECK(tf_create(&m, &c, nul, sizeof nul - 1) == NN_ERR_VALUE && !m && strstr(nn_last_error(), "offset 18"), "NUL: %s",
          nn_last_error());
    /* 20 characters exactly: the shortest text */
    CHECK(tf_create(&m, &c, "éééééééééééééééééééé", 40) == NN_OK, "20 characters: %s", nn_last_error());
    tf_destroy(m);
    m = NULL;
    /* TF_MAX_VOCAB + 1 different characters: U+0100.. (2 bytes each) */
    char many[2 * (TF_MAX_VOCAB + 1) + 1];
    for (int i = 0; i <= TF_MAX_VOCAB; i++) nn_utf8_encode(0x100 + (uint32_t)i, many + 2 * i);
    CHECK(tf_create(&m, &c, many, strlen(many)) == NN_ERR_LIMIT && !m, "too many characters: %s", nn_last_error());
    CHECK(strstr(nn_last_error(), "256") && strstr(nn_last_error(), "offset 512"), "message: %s", nn_last_error());
    CHECK(tf_create(&m, &c, many, strlen(many) - 2) == NN_OK && tf_vocab(m) == TF_MAX_VOCAB, "256 characters: %s",
          nn_last_error());
    tf_destroy(m);
}

static void test_names(void) {
    check_case("names past ASCII");
    char list[2048] = "";
    const char *names[] = {"Zoë", "José", "Åsa", "Łukasz", "Chloé", "Renée", "Björn", "Jürgen", "Ana", "Bob"};
    for (int r = 0; r < 8; r++)
        for (int k = 0; k < 10; k++) {
            strcat(list, names[k]);
            list[strlen(list)] = "abcdefgh"[r], strcat(list, "\n");
        }
    Transformer *m = make(TF_TASK_NAMES, list);
    if (!m) return;
    CHECK(token_of(m, "\n") == 0 && token_of(m, "ë") > 0 && token_of(m, "Ł") > 0, "'\\n', 'ë', 'Ł' are tokens");
    CHECK(token_of(m, "\xc3") < 0, "no byte tokens");
    /* every sequence: whole names, each ending in the line break */
    int32_t tok[TF_MAX_CONTEXT], tgt[TF_MAX_CONTEXT];
    uint64_t rng = 9;
    int n = 0;
    CHECK(tf_sample(m, TF_SPLIT_TRAIN, &rng, tok, tgt, &n) == NN_OK && tok[0] == 0, "a sequence starts at a name");
    char seq[TF_MAX_CONTEXT * NN_UTF8_MAX + 1] = "";
    for (int i = 0; i < n; i++) strcat(seq, tf_token_name(m, tok[i]));
    char *end = strrchr(seq, '\n');
    CHECK(end != NULL, "'%s' holds a whole name", seq);
    if (end) end[0] = 0;
    for (char *name = strtok(seq, "\n"); name; name = strtok(NULL, "\n")) {
        char line[64];
        snprintf(line, sizeof line, "\n%s\n", name);
        CHECK(strstr(list, line + 1) == list || strstr(list, line), "'%s' is a name of the list", name);
    }
    tf_destroy(m);
}

static uint8_t *saved(const Transformer *m, size_t *n) {
    *n = tf_save_size(m);
    uint8_t *b = malloc(*n);
    CHECK(b && tf_save(m, b, *n) == NN_OK, "tf_save: %s", nn_last_error());
    return b;
}

static void test_files(void) {
    check_case("files of characters and of bytes");
    const char *text = "crème brûlée, crème caramel, café au lait et crêpes. ";
    TfConfig c = config(TF_TASK_TEXT);
    struct {
        SeqUnit unit;
        uint32_t version;
        const char *token; /* one of its vocabulary */
    } cuts[] = {{SEQ_CHARS, 2, "è"}, {SEQ_BYTES, 1, "\\xc3"}};
    for (int k = 0; k < 2; k++) {
        Transformer *m = NULL, *back = NULL;
        CHECK(tf_create_cut(&m, &c, text, strlen(text), cuts[k].unit) == NN_OK, "create: %s", nn_last_error());
        if (!m) continue;
        size_t n;
        uint8_t *b = saved(m, &n);
        int kind = 0;
        uint32_t version = 0;
        CHECK(model_file_kind(b, n, &kind, &version) == NN_OK && version == cuts[k].version, "version %u, want %u", version,
              cuts[k].version);
        CHECK(tf_load(&back, b, n) == NN_OK, "load: %s", nn_last_error());
        if (back) {
            CHECK(tf_vocab(back) == tf_vocab(m) && token_of(back, cuts[k].token) >= 0, "version %u loads with '%s'", version,
                  cuts[k].token);
            size_t n2;
            uint8_t *b2 = saved(back, &n2);
            CHECK(n2 == n && memcmp(b, b2, n) == 0, "version %u saves back the same bytes", version);
            free(b2);
        }
        free(b);
        tf_destroy(back);
        tf_destroy(m);
    }
    /* an ASCII text: both cuts agree, written as version 1 (what every earlier build reads) */
    Transformer *m = make(TF_TASK_TEXT, "plain ASCII text, twenty characters and more.");
    size_t n;
    uint8_t *b = saved(m, &n);
    int kind = 0;
    uint32_t version = 0;
    CHECK(model_file_kind(b, n, &kind, &version) == NN_OK && version == 1, "ASCII text: version %u", version);
    free(b);
    tf_destroy(m);
}

int main(void) {
    test_decode();
    test_characters();
    test_refused();
    test_names();
    test_files();
    return check_summary();
}
