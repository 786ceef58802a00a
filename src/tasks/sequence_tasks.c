/* The transformer's tasks (src/tasks/sequence_tasks.h). */
#include "tasks/sequence_tasks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/rng.h"
#include "base/utf8.h"
#include "tasks/symbols.h"

/* copy / reverse / sort: digits, then the separator and the padding */
#define DIGITS 10
#define SEP DIGITS
#define PAD (DIGITS + 1)
#define MAX_IN 10
/* induction: random letters, uniform with replacement, with a random segment
 * repeated later (Olsson et al. 2022). Only the repeat is predictable, and
 * only by looking back at the token after the earlier occurrence: there is no
 * counting shortcut (every letter is as likely everywhere). */
#define LETTERS 26
/* modular: a share of the p^2 pairs held out for the test split, fixed for every seed */
#define MODULAR_TEST_PERCENT 30
#define MODULAR_SPLIT_SEED 0x6d6f64756c6172ull

_Static_assert(NN_UTF8_MAX + 1 <= sizeof(((SeqTask *)0)->names[0]), "a token name holds a character's UTF-8");

static void name_chars(SeqTask *t, const char *chars, int n) {
    for (int i = 0; i < n; i++) t->names[i][0] = chars[i], t->names[i][1] = 0;
}

/* ---- a text's characters ---------------------------------------------------------- */

uint32_t seq_next_char(const char *text, size_t len, size_t *at, SeqUnit unit) {
    size_t n = 1;
    int32_t c = unit == SEQ_BYTES ? (uint8_t)text[*at] : nn_utf8_decode((const uint8_t *)text, len, *at, &n);
    *at += n;
    return (uint32_t)c;
}

int seq_alphabet_index(const SeqAlphabet *a, uint32_t c) {
    int lo = 0, hi = a->count;
    while (lo < hi) { /* the first index whose character is >= c */
        int mid = (lo + hi) / 2;
        if (a->chars[mid] < c) lo = mid + 1;
        else hi = mid;
    }
    return lo < a->count && a->chars[lo] == c ? lo : -1;
}

void seq_char_name(uint32_t c, SeqUnit unit, char name[8]) {
    if (unit == SEQ_CHARS) nn_utf8_encode(c, name);
    else if ((c >= 32 && c < 127) || c == '\n' || c == '\t') name[0] = (char)c, name[1] = 0;
    else snprintf(name, 8, "\\x%02x", (unsigned)c);
}

/* C0 and C1 control characters and DEL: no name holds one */
static int is_control(uint32_t c) { return c < 32 || (c >= 0x7F && c < 0xA0); }

int seq_alphabet(SeqAlphabet *a, const char *text, size_t len, SeqUnit unit, int names, int room) {
    a->count = 0;
    a->length = 0;
    int line = 1;
    for (size_t at = 0; at < len;) {
        size_t here = at, n = 1;
        int32_t c = unit == SEQ_BYTES ? (uint8_t)text[at] : nn_utf8_decode((const uint8_t *)text, len, at, &n);
        if (c < 0)
            return nn_fail(NN_ERR_VALUE, "text: the bytes at offset %zu (0x%02X...) are not UTF-8; a text must be UTF-8", here,
                           (uint8_t)text[here]);
        at += n;
        a->length++;
        line += c == '\n';
        if (names && (c == '\n' || c == '\r')) continue;
        if (names && is_control((uint32_t)c))
            return nn_fail(NN_ERR_VALUE, "text: line %d of the names has the control character U+%04X; a name holds none",
                           line, (unsigned)c);
        if (unit == SEQ_CHARS && c == 0)
            return nn_fail(NN_ERR_VALUE, "text: a NUL character (U+0000) at byte offset %zu; a text holds none", here);
        int i = 0, hi = a->count;
        while (i < hi) { /* where c goes in the sorted characters */
            int mid = (i + hi) / 2;
            if (a->chars[mid] < (uint32_t)c) i = mid + 1;
            else hi = mid;
        }
        if (i < a->count && a->chars[i] == (uint32_t)c) continue;
        if (a->count == room)
            return nn_fail(NN_ERR_LIMIT, "text: more than %d different characters (a new one at byte offset %zu); "
                                         "a vocabulary holds at most %d tokens", room, here, TF_MAX_VOCAB);
        memmove(a->chars + i + 1, a->chars + i, sizeof a->chars[0] * (size_t)(a->count - i));
        a->chars[i] = (uint32_t)c;
        a->count++;
    }
    return NN_OK;
}

/* The 'text' task: every character of the text a token, each next one scored. */
static int text_init(SeqTask *t, int context, const char *text, size_t len, SeqUnit unit) {
    if (len > TF_MAX_TEXT_BYTES) return nn_fail(NN_ERR_LIMIT, "text: %zu bytes is past the limit of %d", len, TF_MAX_TEXT_BYTES);
    SeqAlphabet a;
    NN_TRY(seq_alphabet(&a, text ? text : "", text ? len : 0, unit, 0, TF_MAX_VOCAB));
    if (a.length < SEQ_MIN_TEXT)
        return nn_fail(NN_ERR_SHAPE, "text: the 'text' task needs a text of at least %d characters (got %zu)", SEQ_MIN_TEXT,
                       a.length);
    for (int k = 0; k < a.count; k++) seq_char_name(a.chars[k], unit, t->names[k]);
    t->vocab = t->symbols = a.count;
    /* the last tenth is the test split; each split holds a whole window of n + 1 */
    size_t chars = a.length, tenth = chars / 10;
    size_t n = tenth > 1 ? tenth - 1 : 1;
    if (n < SEQ_MIN_CONTEXT - 1) n = SEQ_MIN_CONTEXT - 1;
    if (n > (size_t)context) n = (size_t)context;
    t->len = (int)n;
    size_t test = tenth > n + 1 ? tenth : n + 1;
    t->split_at = chars - test;
    if (t->split_at < n + 1)
        return nn_fail(NN_ERR_SHAPE, "text: %zu characters are too few for windows of %zu in both splits", chars, n + 1);
    if (!(t->text = malloc(chars))) return nn_fail(NN_ERR_NOMEM, "text: out of memory for %zu characters", chars);
    for (size_t at = 0, i = 0; at < len; i++) t->text[i] = (uint8_t)seq_alphabet_index(&a, seq_next_char(text, len, &at, unit));
    t->text_len = chars;
    return NN_OK;
}

int seq_task_init(SeqTask *t, TfTaskKind kind, int context, const char *text, size_t text_len, SeqUnit unit) {
    memset(t, 0, sizeof *t);
    t->kind = kind;
    t->unit = kind == TF_TASK_TEXT ? unit : SEQ_CHARS;
    NN_TRY(nn_check_size("context", context, SEQ_MIN_CONTEXT, TF_MAX_CONTEXT));
    if (kind != TF_TASK_TEXT && kind != TF_TASK_NAMES && text_len)
        return nn_fail(NN_ERR_ARG, "text: only the 'text' and 'names' tasks take a text");
    switch (kind) {
    case TF_TASK_INDUCTION:
        t->vocab = t->symbols = LETTERS;
        t->len = context;
        name_chars(t, "abcdefghijklmnopqrstuvwxyz", LETTERS);
        return NN_OK;
    case TF_TASK_COPY:
    case TF_TASK_REVERSE:
    case TF_TASK_SORT:
        t->vocab = DIGITS + 2;
        t->symbols = DIGITS;
        t->max_in = (context - 1) / 2 < MAX_IN ? (context - 1) / 2 : MAX_IN;
        t->len = 2 * t->max_in + 1;
        name_chars(t, "0123456789=.", DIGITS + 2);
        return NN_OK;
    case TF_TASK_MODULAR:
        t->vocab = TF_MODULUS + 2;
        t->symbols = TF_MODULUS;
        t->len = 5;
        for (int i = 0; i < TF_MODULUS; i++) { /* "0".."30" */
            char *s = t->names[i];
            if (i >= 10) *s++ = (char)('0' + i / 10);
            s[0] = (char)('0' + i % 10);
            s[1] = 0;
        }
        strcpy(t->names[TF_MODULUS], "+");
        strcpy(t->names[TF_MODULUS + 1], "=");
        return NN_OK;
    case TF_TASK_DATES: return seq_dates_init(t, context);
    case TF_TASK_NAMES: return seq_names_init(t, context, text, text_len);
    case TF_TASK_TEXT: return text_init(t, context, text, text_len, unit);
    default:
        return nn_fail(NN_ERR_ARG, "task: unknown task %d", (int)kind);
    }
}

int seq_task_vocab(TfTaskKind kind, int context, const char *text, size_t text_len, SeqUnit unit, int *vocab) {
    *vocab = 0;
    if ((kind != TF_TASK_TEXT && kind != TF_TASK_NAMES) || !text || text_len > TF_MAX_TEXT_BYTES) {
        SeqTask t; /* the other tasks' vocabularies are fixed (and a refused text allocates nothing) */
        int st = seq_task_init(&t, kind, context, text, text_len, unit);
        *vocab = t.vocab;
        seq_task_free(&t);
        return st;
    }
    int names = kind == TF_TASK_NAMES;
    SeqAlphabet a;
    NN_TRY(seq_alphabet(&a, text, text_len, names ? SEQ_CHARS : unit, names, TF_MAX_VOCAB - names));
    *vocab = a.count + names; /* and the names' end token */
    return NN_OK;
}

void seq_task_free(SeqTask *t) {
    seq_data_free(t);
    free(t->text);
    t->text = NULL;
}

/* The first k of a random permutation of 0..n-1 into out (k <= n <= 256). */
static void draw_distinct(uint64_t *rng, int n, int k, int32_t *out) {
    int32_t pool[256];
    for (int i = 0; i < n; i++) pool[i] = i;
    for (int i = 0; i < k; i++) {
        int j = i + nn_rng_below(rng, n - i);
        int32_t s = pool[i];
        pool[i] = pool[j];
        pool[j] = s;
        out[i] = pool[i];
    }
}

/* Random letters with a segment of L (n/3..n/2) copied from p1 to p2 >= p1 + L,
 * both at random: the distance varies, so a fixed positional look back does not
 * predict the repeat. The repeat's tokens after its first are scored. Returns
 * the distance p2 - p1 (source of position i in the repeat: i - d + 1). */
static int sample_induction(uint64_t *rng, int n, int32_t *tok, int32_t *tgt, int *p2_out, int *L_out) {
    int L = n / 3 + nn_rng_below(rng, n / 2 - n / 3 + 1);
    int p1 = nn_rng_below(rng, n - 2 * L + 1);
    int p2 = p1 + L + nn_rng_below(rng, n - 2 * L - p1 + 1);
    for (int i = 0; i < n; i++) tok[i] = nn_rng_below(rng, LETTERS);
    for (int i = 0; i < L; i++) tok[p2 + i] = tok[p1 + i];
    for (int i = 0; i < n; i++) tgt[i] = i >= p2 && i < p2 + L - 1 ? tok[i + 1] : -1;
    *p2_out = p2;
    *L_out = L;
    return p2 - p1;
}

static int modular_is_test(int a, int b) {
    uint64_t s = MODULAR_SPLIT_SEED ^ (uint64_t)(a * TF_MODULUS + b);
    return (int)(nn_rng_next(&s) % 100) < MODULAR_TEST_PERCENT;
}

void seq_task_sample(const SeqTask *t, TfSplit split, uint64_t *rng, int32_t *tok, int32_t *tgt) {
    int n = t->len;
    switch (t->kind) {
    case TF_TASK_INDUCTION: {
        int p2, L;
        sample_induction(rng, n, tok, tgt, &p2, &L);
        return;
    }
    case TF_TASK_MODULAR: {
        int a, b;
        do {
            a = nn_rng_below(rng, TF_MODULUS);
            b = nn_rng_below(rng, TF_MODULUS);
        } while (modular_is_test(a, b) != (split == TF_SPLIT_TEST));
        const int32_t s[5] = {a, TF_MODULUS, b, TF_MODULUS + 1, (a + b) % TF_MODULUS};
        for (int i = 0; i < 5; i++) tok[i] = s[i], tgt[i] = -1;
        tgt[3] = s[4];
        return;
    }
    case TF_TASK_DATES: seq_dates_sample(t, split, rng, tok, tgt); return;
    case TF_TASK_NAMES: seq_names_sample(t, split, rng, tok, tgt); return;
    case TF_TASK_TEXT: {
        size_t from = split == TF_SPLIT_TEST ? t->split_at : 0;
        size_t span = (split == TF_SPLIT_TEST ? t->text_len : t->split_at) - from - (size_t)n; /* >= 1 */
        size_t at = from + (size_t)(nn_rng_next(rng) % span);
        for (int i = 0; i < n; i++) tok[i] = t->text[at + i], tgt[i] = t->text[at + i + 1];
        return;
    }
    default: { /* copy, reverse, sort: "in=out" then padding */
        int32_t out[MAX_IN];
        SymbolsOp op = t->kind == TF_TASK_COPY ? SYMBOLS_COPY : t->kind == TF_TASK_REVERSE ? SYMBOLS_REVERSE : SYMBOLS_SORT;
        int L = task_symbols_draw(rng, op, DIGITS, 1, t->max_in, tok, out);
        tok[L] = SEP;
        for (int i = 0; i < L; i++) tok[L + 1 + i] = out[i];
        for (int i = 2 * L + 1; i < n; i++) tok[i] = PAD;
        for (int i = 0; i < n; i++) tgt[i] = i >= L && i < 2 * L ? tok[i + 1] : -1;
        return;
    }
    }
}

void seq_task_repeat(const SeqTask *t, uint64_t *rng, int32_t *tok, int32_t *source) {
    int n = t->len;
    for (int i = 0; i < n; i++) source[i] = -1;
    if (t->kind == TF_TASK_INDUCTION) { /* the task's own sequences */
        int32_t tgt[TF_MAX_CONTEXT];
        int p2, L, d = sample_induction(rng, n, tok, tgt, &p2, &L);
        for (int i = p2; i < p2 + L - 1; i++) source[i] = i - d + 1;
        return;
    }
    /* k symbols, distinct while the symbols last, then the same k again */
    int k = n / 2;
    if (k <= t->symbols) draw_distinct(rng, t->symbols, k, tok);
    else
        for (int i = 0; i < k; i++) tok[i] = nn_rng_below(rng, t->symbols);
    for (int i = k; i < n; i++) tok[i] = tok[i - k];
    for (int i = k; i < n && i - k + 1 < k; i++) source[i] = i - k + 1;
}
