/* The transformer's tasks on data (src/tasks/sequence_tasks.h):
 *   dates  "25th of June, 2009=2009-06-25" then padding: the seq2seq model's
 *          dates task (src/tasks/tasks.c) as one prompt -> answer sequence,
 *          drawn by that task's own generator, so its 16 formats, its years
 *          and its train / test split by calendar date are the same; the
 *          answer's characters are scored.
 *   names  first names, one per line of the given text (UTF-8), a token per
 *          character (code point), the line break the end token:
 *          "\nanna\nbob\n..." with every next character scored (the end
 *          token too, so a model learns where a name stops). A name's split
 *          comes from a hash of its letters, so no test name is trained on. */
#include <stdlib.h>
#include <string.h>

#include "attnlab/tasks.h"
#include "base/error.h"
#include "base/hash.h"
#include "base/rng.h"
#include "tasks/sequence_tasks.h"

#define DATE_SEP "="
#define DATE_PAD "_" /* after the answer; in neither date alphabet */
#define NAMES_TEST_PERCENT 10
#define NAME_END 0 /* the end-of-name token, named "\n" */

/* ---- dates ----------------------------------------------------------------------- */

/* Token id of a character of the dates' alphabets, added to the vocabulary if new. */
static void add_char(SeqTask *t, char c) {
    if (t->byte_id[(uint8_t)c] >= 0) return;
    t->byte_id[(uint8_t)c] = (int16_t)t->vocab;
    t->names[t->vocab][0] = c;
    t->names[t->vocab++][1] = 0;
}

int seq_dates_init(SeqTask *t, int context) {
    const TaskConfig tc = {TASK_DATES, TASK_DIGITS, 1, 1}; /* alphabet and lengths: unused by dates */
    NN_TRY(task_create(&t->dates, &tc, NULL, 0));
    memset(t->byte_id, 0xff, sizeof t->byte_id);
    for (const char *c = task_in_alphabet(t->dates); *c; c++) add_char(t, *c);
    for (const char *c = task_out_alphabet(t->dates); *c; c++) add_char(t, *c);
    t->symbols = t->vocab;
    strcpy(t->names[t->vocab++], DATE_SEP);
    strcpy(t->names[t->vocab++], DATE_PAD);
    t->max_in = task_max_in(t->dates);
    t->len = t->max_in + 1 + task_max_out(t->dates) - 1; /* input, "=", the answer (its EOS not a token here) */
    if (t->len > context)
        return nn_fail(NN_ERR_SHAPE, "context: %d; the 'dates' task needs at least %d (the longest date, '=' and the answer)",
                       context, t->len);
    return NN_OK;
}

void seq_dates_sample(const SeqTask *t, TfSplit split, uint64_t *rng, int32_t *tok, int32_t *tgt) {
    char in[TASK_MAX_LEN + 1], out[TASK_MAX_LEN + 1];
    int n = t->len, sep = t->symbols, pad = t->symbols + 1;
    for (int i = 0; i < n; i++) tok[i] = pad, tgt[i] = -1;
    /* the dates task always has examples of both splits: its sampling cannot fail */
    if (task_sample(t->dates, split == TF_SPLIT_TEST ? TASK_TEST : TASK_TRAIN, rng, in, out) != NN_OK) return;
    int L = (int)strlen(in), A = (int)strlen(out);
    for (int i = 0; i < L; i++) tok[i] = t->byte_id[(uint8_t)in[i]];
    tok[L] = sep;
    for (int i = 0; i < A; i++) tok[L + 1 + i] = t->byte_id[(uint8_t)out[i]];
    /* "=" predicts the answer's first character, ..., its last but one its last */
    for (int i = L; i < L + A; i++) tgt[i] = tok[i + 1];
}

/* ---- names ----------------------------------------------------------------------- */

static int names_is_test(const char *name, size_t n) {
    return (int)((nn_fnv1a64(name, n) >> 32) % 100) < NAMES_TEST_PERCENT;
}

int seq_names_init(SeqTask *t, int context, const char *text, size_t len) {
    if (!text || len == 0)
        return nn_fail(NN_ERR_SHAPE, "text: the 'names' task needs its list of names, one per line "
                                     "(engine.createTransformer loads it)");
    if (len > TF_MAX_TEXT_BYTES)
        return nn_fail(NN_ERR_LIMIT, "text: %zu bytes is past the limit of %d", len, TF_MAX_TEXT_BYTES);
    /* the vocabulary: the end token, then every character the names use, in code point order */
    SeqAlphabet a;
    NN_TRY(seq_alphabet(&a, text, len, SEQ_CHARS, 1, TF_MAX_VOCAB - 1));
    strcpy(t->names[NAME_END], "\n");
    for (int k = 0; k < a.count; k++) seq_char_name(a.chars[k], SEQ_CHARS, t->names[1 + k]);
    t->vocab = t->symbols = 1 + a.count;
    t->len = context;
    /* ids of every name with its end token (at most a token per byte), and each split's starts (one block for both) */
    if (!(t->text = malloc(len + 1)) || !(t->name_at[0] = malloc(sizeof(uint32_t) * (len + 1))))
        return nn_fail(NN_ERR_NOMEM, "text: out of memory for %zu bytes of names", len);
    uint32_t *starts = t->name_at[0];
    uint8_t *split = malloc(len + 1);
    if (!split) return nn_fail(NN_ERR_NOMEM, "text: out of memory for %zu bytes of names", len);
    int count = 0;
    for (size_t i = 0; i < len;) {
        size_t j = i;
        while (j < len && text[j] != '\n' && text[j] != '\r') j++;
        if (j > i) { /* a name (blank lines skipped); its split from its bytes */
            starts[count] = (uint32_t)t->text_len;
            split[count++] = (uint8_t)names_is_test(text + i, j - i);
            for (size_t at = i; at < j;) t->text[t->text_len++] = (uint8_t)(1 + seq_alphabet_index(&a, seq_next_char(text, j, &at, SEQ_CHARS)));
            t->text[t->text_len++] = NAME_END;
        }
        i = j + 1;
    }
    /* train starts then test starts, in the one block */
    uint32_t *sorted = malloc(sizeof(uint32_t) * (count ? count : 1));
    if (!sorted) {
        free(split);
        return nn_fail(NN_ERR_NOMEM, "text: out of memory for %d names", count);
    }
    for (int s = 0, k = 0; s < 2; s++)
        for (int i = 0; i < count; i++)
            if (split[i] == s) sorted[k++] = starts[i], t->n_names[s]++;
    memcpy(starts, sorted, sizeof(uint32_t) * count);
    t->name_at[1] = starts + t->n_names[0];
    free(sorted);
    free(split);
    if (t->n_names[0] == 0 || t->n_names[1] == 0)
        return nn_fail(NN_ERR_SHAPE, "text: %d names are too few for a train and a test split (%d%% of names are test)",
                       count, NAMES_TEST_PERCENT);
    return NN_OK;
}

void seq_names_sample(const SeqTask *t, TfSplit split, uint64_t *rng, int32_t *tok, int32_t *tgt) {
    int32_t seq[TF_MAX_CONTEXT + 1];
    int n = t->len, k = 0, s = split == TF_SPLIT_TEST;
    seq[k++] = NAME_END; /* every sequence starts at a name's start */
    while (k < n + 1) {
        const uint8_t *name = t->text + t->name_at[s][nn_rng_below(rng, t->n_names[s])];
        for (int i = 0; k < n + 1; i++) {
            seq[k++] = name[i];
            if (name[i] == NAME_END) break;
        }
    }
    for (int i = 0; i < n; i++) tok[i] = seq[i], tgt[i] = seq[i + 1];
}

void seq_data_free(SeqTask *t) {
    task_destroy(t->dates);
    t->dates = NULL;
    free(t->name_at[0]);
    t->name_at[0] = t->name_at[1] = NULL;
}
