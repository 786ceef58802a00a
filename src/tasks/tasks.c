/* Sequence-to-sequence tasks generated from a seed (include/attnlab/tasks.h):
 * copy / reverse / sort of digits or letters, dates in many formats to ISO,
 * and the user's own pairs. Splits come from a hash of each example's source,
 * so they never overlap and are the same natively and in WASM. */
#include "attnlab/tasks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/hash.h"
#include "base/rng.h"
#include "base/utf8.h"
#include "tasks/symbols.h"

#define DATE_FORMATS 16
#define FIRST_YEAR 1950
#define LAST_YEAR 2049
#define DATE_OUT_LEN 10 /* "YYYY-MM-DD" */
#define MAX_ATTEMPTS 100000 /* rejection sampling into a split */

static const char DIGITS[] = "0123456789";
static const char LETTERS[] = "abcdefghijklmnopqrstuvwxyz";
static const char DATE_IN[] = " ',-./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
static const char DATE_OUT[] = "-0123456789";
static const char *const SPLIT_NAMES[3] = {"train", "validation", "test"};

struct Task {
    TaskConfig c;                          /* as created */
    char in_alpha[TASK_MAX_ALPHABET + 1];  /* input symbols in id order, NUL-terminated */
    char out_alpha[TASK_MAX_ALPHABET + 1]; /* output symbols in id order, NUL-terminated */
    int16_t in_id[256];  /* character -> input id, 0 when not in the alphabet */
    int16_t out_id[256]; /* character -> output id, 0 when not in the alphabet */
    int max_in;   /* longest input, characters */
    int max_out;  /* longest output, tokens (EOS included) */
    int fixed_in; /* the one input length, or 0 when lengths vary */
    /* pairs: the text copied with NULs at the tab and line ends */
    char *text;
    int32_t *lines; /* (n_lines, 2): offsets of input and output */
    int n_lines;             /* pairs in the text */
    int32_t *split_lines[3]; /* line numbers of each split, into one block */
    int split_n[3];          /* lines in each split */
};

/* 80 / 10 / 10 by the source's hash. */
static TaskSplit split_of(const char *source) {
    int bucket = (int)((nn_fnv1a64(source, strlen(source)) >> 32) % 10);
    return bucket < 8 ? TASK_TRAIN : bucket == 8 ? TASK_VALID : TASK_TEST;
}

/* ---- dates ---------------------------------------------------------------------- */

static const char *const MONTHS[12] = {"January", "February", "March",     "April",   "May",      "June",
                                       "July",    "August",   "September", "October", "November", "December"};
static const char *const WEEKDAYS[7] = {"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"};

typedef struct {
    int y, m, d, wd; /* m 1..12, d 1..31, wd 0 = Monday */
} Date;

/* Days since 1970-01-01 to a civil date (H. Hinnant's algorithm). */
static Date date_from_days(int32_t z) {
    Date r;
    r.wd = (int)(((z % 7) + 7 + 3) % 7); /* 1970-01-01 was a Thursday (3) */
    z += 719468;
    int32_t era = (z >= 0 ? z : z - 146096) / 146097;
    int32_t doe = z - era * 146097;
    int32_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int32_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int32_t mp = (5 * doy + 2) / 153;
    r.d = (int)(doy - (153 * mp + 2) / 5 + 1);
    r.m = (int)(mp < 10 ? mp + 3 : mp - 9);
    r.y = (int)(yoe + era * 400 + (r.m <= 2));
    return r;
}

static int32_t days_from_civil(int y, int m, int d) {
    y -= m <= 2;
    int32_t era = (y >= 0 ? y : y - 399) / 400;
    int32_t yoe = y - era * 400;
    int32_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    int32_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static const char *suffix(int d) {
    if (d >= 11 && d <= 13) return "th";
    return d % 10 == 1 ? "st" : d % 10 == 2 ? "nd" : d % 10 == 3 ? "rd" : "th";
}

static void lower(char *dst, const char *src, int n) {
    int i = 0;
    for (; src[i] && i < n - 1; i++) dst[i] = (char)(src[i] >= 'A' && src[i] <= 'Z' ? src[i] + 32 : src[i]);
    dst[i] = 0;
}

/* The date in format f (0..DATE_FORMATS-1). */
static void format_date(char *out, int f, Date t) {
    const char *month = MONTHS[t.m - 1], *day = WEEKDAYS[t.wd];
    char mon[4] = {month[0], month[1], month[2], 0}, mon_l[4], month_l[16], day_l[16], wd3[4] = {day[0], day[1], day[2], 0};
    lower(mon_l, mon, 4);
    lower(month_l, month, 16);
    lower(day_l, day, 16);
    int yy = t.y % 100;
    size_t n = TASK_MAX_LEN + 1;
    switch (f) {
    case 0: snprintf(out, n, "%d%s of %s, %d", t.d, suffix(t.d), month, t.y); break;       /* 25th of June, 2009 */
    case 1: snprintf(out, n, "%s, %d %s %d", day, t.d, month, t.y); break;                 /* Thursday, 25 June 2009 */
    case 2: snprintf(out, n, "%02d/%02d/%02d", t.m, t.d, yy); break;                        /* 06/25/09 */
    case 3: snprintf(out, n, "%s %d %d", mon_l, t.d, t.y); break;                           /* jun 25 2009 */
    case 4: snprintf(out, n, "%d %s %d", t.d, month, t.y); break;                           /* 25 June 2009 */
    case 5: snprintf(out, n, "%s %d, %d", month, t.d, t.y); break;                          /* June 25, 2009 */
    case 6: snprintf(out, n, "%02d.%02d.%d", t.d, t.m, t.y); break;                         /* 25.06.2009 */
    case 7: snprintf(out, n, "%02d-%s-%d", t.d, mon, t.y); break;                           /* 25-Jun-2009 */
    case 8: snprintf(out, n, "%s %d, '%02d", mon, t.d, yy); break;                          /* Jun 25, '09 */
    case 9: snprintf(out, n, "%d/%d/%d", t.m, t.d, t.y); break;                             /* 6/25/2009 */
    case 10: snprintf(out, n, "%s %s %d %d", day_l, month_l, t.d, t.y); break;              /* thursday june 25 2009 */
    case 11: snprintf(out, n, "%s, %d %s %d", wd3, t.d, mon, t.y); break;                   /* Thu, 25 Jun 2009 */
    case 12: snprintf(out, n, "%s %d%s, %d", month, t.d, suffix(t.d), t.y); break;          /* June 25th, 2009 */
    case 13: snprintf(out, n, "%d %s %02d", t.d, mon_l, yy); break;                         /* 25 jun 09 */
    case 14: snprintf(out, n, "the %d%s of %s %d", t.d, suffix(t.d), month_l, t.y); break;  /* the 25th of june 2009 */
    default: snprintf(out, n, "%d %s %d", t.y, month, t.d); break;                       /* 2009 June 25 */
    }
}

static int32_t first_day(void) { return days_from_civil(FIRST_YEAR, 1, 1); }
static int32_t day_count(void) { return days_from_civil(LAST_YEAR + 1, 1, 1) - first_day(); }

/* ---- creation --------------------------------------------------------------------- */

static void set_alphabets(Task *t, const char *in, const char *out) {
    snprintf(t->in_alpha, sizeof t->in_alpha, "%s", in);
    snprintf(t->out_alpha, sizeof t->out_alpha, "%s", out);
    memset(t->in_id, 0, sizeof t->in_id);
    memset(t->out_id, 0, sizeof t->out_id);
    for (int i = 0; t->in_alpha[i]; i++) t->in_id[(uint8_t)t->in_alpha[i]] = (int16_t)(TASK_FIRST_IN + i);
    for (int i = 0; t->out_alpha[i]; i++) t->out_id[(uint8_t)t->out_alpha[i]] = (int16_t)(TASK_FIRST_OUT + i);
}

/* Sorted set of the characters at the offsets (input side 0 or output side 1). */
static void collect(const Task *t, int side, char *alpha) {
    uint8_t seen[256] = {0};
    for (int l = 0; l < t->n_lines; l++)
        for (const char *p = t->text + t->lines[2 * l + side]; *p; p++) seen[(uint8_t)*p] = 1;
    int n = 0;
    for (int ch = 32; ch < 127; ch++)
        if (seen[ch]) alpha[n++] = (char)ch;
    alpha[n] = 0;
}

static int parse_pairs(Task *t, const char *text, size_t len) {
    if (!text || len == 0) return nn_fail(NN_ERR_VALUE, "pairs: no lines; give lines \"input<TAB>output\"");
    if (!(t->text = malloc(len + 1))) return nn_fail(NN_ERR_NOMEM, "pairs: out of memory for %zu bytes", len);
    memcpy(t->text, text, len);
    t->text[len] = 0;
    size_t n_lines = 1;
    for (size_t i = 0; i < len; i++) n_lines += text[i] == '\n';
    if (n_lines > TASK_MAX_PAIRS + 1)
        return nn_fail(NN_ERR_LIMIT, "pairs: %zu lines is past the limit of %d", n_lines, TASK_MAX_PAIRS);
    if (!(t->lines = malloc(sizeof(int32_t) * 2 * n_lines)) || !(t->split_lines[0] = malloc(sizeof(int32_t) * n_lines)))
        return nn_fail(NN_ERR_NOMEM, "pairs: out of memory for %zu lines", n_lines);
    char *p = t->text, *end = t->text + len;
    int line_no = 0;
    while (p < end) {
        line_no++;
        char *eol = memchr(p, '\n', (size_t)(end - p));
        if (!eol) eol = end;
        char *stop = eol > p && eol[-1] == '\r' ? eol - 1 : eol;
        *stop = 0;
        *eol = 0;
        if (stop == p) { /* blank line */
            p = eol + 1;
            continue;
        }
        char *tab = memchr(p, '\t', (size_t)(stop - p));
        if (!tab) return nn_fail(NN_ERR_VALUE, "pairs: line %d has no tab between input and output", line_no);
        *tab = 0;
        const char *in = p, *out = tab + 1;
        size_t in_n = (size_t)(tab - p), out_n = (size_t)(stop - out);
        if (in_n == 0) return nn_fail(NN_ERR_VALUE, "pairs: line %d has an empty input", line_no);
        if (out_n == 0) return nn_fail(NN_ERR_VALUE, "pairs: line %d has an empty output", line_no);
        if (in_n > TASK_MAX_LEN || out_n > TASK_MAX_LEN - 1)
            return nn_fail(NN_ERR_VALUE, "pairs: line %d is too long (input %zu, output %zu characters; at most %d and %d)",
                           line_no, in_n, out_n, TASK_MAX_LEN, TASK_MAX_LEN - 1);
        for (const char *q = in; q < stop; q++) {
            if (q == tab) continue;
            if (*q == '\t') return nn_fail(NN_ERR_VALUE, "pairs: line %d has more than one tab", line_no);
            if ((uint8_t)*q < 32 || (uint8_t)*q > 126)
                return nn_fail(NN_ERR_VALUE, "pairs: line %d, column %d has character code %d; only printable ASCII is allowed",
                               line_no, (int)(q - in) + 1, (uint8_t)*q);
        }
        t->lines[2 * t->n_lines] = (int32_t)(in - t->text);
        t->lines[2 * t->n_lines + 1] = (int32_t)(out - t->text);
        t->n_lines++;
        if ((int)in_n > t->max_in) t->max_in = (int)in_n;
        if ((int)out_n + 1 > t->max_out) t->max_out = (int)out_n + 1;
        p = eol + 1;
    }
    if (t->n_lines == 0) return nn_fail(NN_ERR_VALUE, "pairs: no lines; give lines \"input<TAB>output\"");
    char in_alpha[TASK_MAX_ALPHABET + 1], out_alpha[TASK_MAX_ALPHABET + 1];
    collect(t, 0, in_alpha);
    collect(t, 1, out_alpha);
    set_alphabets(t, in_alpha, out_alpha);
    /* the split of each line, by its input; split_lines[0..2] share one block */
    int fixed = (int)strlen(t->text + t->lines[0]);
    for (int l = 0; l < t->n_lines; l++) {
        const char *in = t->text + t->lines[2 * l];
        t->split_n[split_of(in)]++;
        if ((int)strlen(in) != fixed) fixed = 0;
    }
    t->fixed_in = fixed;
    t->split_lines[1] = t->split_lines[0] + t->split_n[0];
    t->split_lines[2] = t->split_lines[1] + t->split_n[1];
    int fill[3] = {0, 0, 0};
    for (int l = 0; l < t->n_lines; l++) {
        TaskSplit s = split_of(t->text + t->lines[2 * l]);
        t->split_lines[s][fill[s]++] = l;
    }
    return NN_OK;
}

int task_create(Task **out, const TaskConfig *c, const char *text, size_t len) {
    *out = NULL;
    nn_clear_error();
    if ((unsigned)c->kind >= TASK_KIND_COUNT)
        return nn_fail(NN_ERR_ARG, "task: unknown task %d (copy, reverse, sort, dates or pairs)", (int)c->kind);
    int generated = c->kind <= TASK_SORT;
    /* checked for every task (dates and pairs ignore them), so a saved task loads back */
    if (c->alphabet != TASK_DIGITS && c->alphabet != TASK_LETTERS)
        return nn_fail(NN_ERR_ARG, "alphabet: unknown alphabet %d (digits or letters)", (int)c->alphabet);
    if (c->min_len < 1 || c->min_len > TASK_MAX_LEN - 1)
        return nn_fail(NN_ERR_VALUE, "minLength: %d; it must be within 1..%d", c->min_len, TASK_MAX_LEN - 1);
    if (c->max_len < c->min_len || c->max_len > TASK_MAX_LEN - 1)
        return nn_fail(NN_ERR_VALUE, "maxLength: %d; it must be within minLength (%d)..%d", c->max_len, c->min_len,
                       TASK_MAX_LEN - 1);
    Task *t = calloc(1, sizeof *t);
    if (!t) return nn_fail(NN_ERR_NOMEM, "task: out of memory");
    t->c = *c;
    int st = NN_OK;
    if (generated) {
        const char *a = c->alphabet == TASK_DIGITS ? DIGITS : LETTERS;
        set_alphabets(t, a, a);
        t->max_in = c->max_len;
        t->max_out = c->max_len + 1;
        t->fixed_in = c->min_len == c->max_len ? c->min_len : 0;
    } else if (c->kind == TASK_DATES) {
        set_alphabets(t, DATE_IN, DATE_OUT);
        /* every weekday x month x day-width combination occurs within 2001..2007 */
        char s[TASK_MAX_LEN + 1];
        int32_t d0 = days_from_civil(2001, 1, 1), d1 = days_from_civil(2008, 1, 1);
        for (int32_t z = d0; z < d1; z++)
            for (int f = 0; f < DATE_FORMATS; f++) {
                format_date(s, f, date_from_days(z));
                int n = (int)strlen(s);
                if (n > t->max_in) t->max_in = n;
            }
        t->max_out = DATE_OUT_LEN + 1; /* EOS */
    } else {
        st = parse_pairs(t, text, len);
    }
    if (st != NN_OK) {
        task_destroy(t);
        return st;
    }
    *out = t;
    return NN_OK;
}

void task_destroy(Task *t) {
    if (!t) return;
    free(t->text);
    free(t->lines);
    free(t->split_lines[0]);
    free(t);
}

int task_in_vocab(const Task *t) { return TASK_FIRST_IN + (int)strlen(t->in_alpha); }
int task_out_vocab(const Task *t) { return TASK_FIRST_OUT + (int)strlen(t->out_alpha); }
int task_max_in(const Task *t) { return t->max_in; }
int task_max_out(const Task *t) { return t->max_out; }
int task_fixed_in(const Task *t) { return t->fixed_in; }
const char *task_in_alphabet(const Task *t) { return t->in_alpha; }
const char *task_out_alphabet(const Task *t) { return t->out_alpha; }
int task_split_size(const Task *t, TaskSplit split) {
    if (t->c.kind != TASK_PAIRS || (unsigned)split > TASK_TEST) return -1;
    return t->split_n[split];
}

/* NN_ERR_VALUE naming the character at byte i and its position (1-based, in characters). */
static int unknown_char(const char *text, size_t len, size_t i) {
    int position = 1;
    size_t n;
    for (size_t j = 0; j < i; j += n, position++) nn_utf8_decode((const uint8_t *)text, len, j, &n);
    int32_t cp = nn_utf8_decode((const uint8_t *)text, len, i, &n);
    if (cp >= 32 && cp < 127)
        return nn_fail(NN_ERR_VALUE, "text: character '%c' at position %d is not in this task's input alphabet", (char)cp,
                       position);
    if (cp < 0)
        return nn_fail(NN_ERR_VALUE, "text: byte 0x%02X at position %d is not UTF-8 text", (uint8_t)text[i], position);
    return nn_fail(NN_ERR_VALUE, "text: character U+%04X at position %d is not in this task's input alphabet", (unsigned)cp,
                   position);
}

int task_encode_input(const Task *t, const char *text, size_t len, int32_t *ids, int max) {
    if (len == 0) return -nn_fail(NN_ERR_VALUE, "text: empty; type something to translate");
    int limit = max < TASK_MAX_LEN ? max : TASK_MAX_LEN;
    if (len > (size_t)limit)
        return -nn_fail(NN_ERR_VALUE, "text: %zu bytes; this model reads at most %d characters", len, limit);
    for (size_t i = 0; i < len; i++)
        if (!t->in_id[(uint8_t)text[i]]) return -unknown_char(text, len, i);
    for (size_t i = 0; i < len; i++) ids[i] = t->in_id[(uint8_t)text[i]];
    return (int)len;
}

void task_decode_output(const Task *t, const int32_t *ids, int n, char *text, int max) {
    int out = 0, size = (int)strlen(t->out_alpha);
    for (int i = 0; i < n && out < max - 1; i++) {
        if (ids[i] == TASK_EOS) break;
        if (ids[i] >= TASK_FIRST_OUT && ids[i] < TASK_FIRST_OUT + size) text[out++] = t->out_alpha[ids[i] - TASK_FIRST_OUT];
    }
    if (max > 0) text[out] = 0;
}

/* ---- sampling ------------------------------------------------------------------- */

static void generate(const Task *t, uint64_t *rng, char *input, char *output, char *source) {
    if (t->c.kind == TASK_DATES) {
        Date d = date_from_days(first_day() + nn_rng_below(rng, day_count()));
        format_date(input, nn_rng_below(rng, DATE_FORMATS), d);
        snprintf(output, TASK_MAX_LEN + 1, "%04d-%02d-%02d", d.y, d.m, d.d);
        strcpy(source, output); /* the split follows the calendar date */
        return;
    }
    _Static_assert(TASK_MAX_ALPHABET <= SYMBOLS_MAX, "an alphabet task_symbols_draw takes");
    int32_t in[TASK_MAX_LEN], out[TASK_MAX_LEN];
    SymbolsOp op = t->c.kind == TASK_COPY ? SYMBOLS_COPY : t->c.kind == TASK_REVERSE ? SYMBOLS_REVERSE : SYMBOLS_SORT;
    int n = task_symbols_draw(rng, op, (int)strlen(t->in_alpha), t->c.min_len, t->c.max_len, in, out);
    for (int i = 0; i < n; i++) input[i] = t->in_alpha[in[i]], output[i] = t->in_alpha[out[i]];
    input[n] = output[n] = 0;
    strcpy(source, input);
}

int task_sample(const Task *t, TaskSplit split, uint64_t *rng, char *input, char *output) {
    if ((unsigned)split > TASK_TEST) return nn_fail(NN_ERR_ARG, "split: unknown split %d", (int)split);
    if (t->c.kind == TASK_PAIRS) {
        if (t->split_n[split] == 0)
            return nn_fail(NN_ERR_VALUE, "split: the %s split has no lines (too few pairs: %d in all)", SPLIT_NAMES[split],
                           t->n_lines);
        int l = t->split_lines[split][nn_rng_below(rng, t->split_n[split])];
        strcpy(input, t->text + t->lines[2 * l]);
        strcpy(output, t->text + t->lines[2 * l + 1]);
        return NN_OK;
    }
    char source[TASK_MAX_LEN + 1];
    for (int attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
        generate(t, rng, input, output, source);
        if (split_of(source) == split) return NN_OK;
    }
    return nn_fail(NN_ERR_VALUE, "split: no example of the %s split found; the task has too few distinct inputs "
                                 "(lengths %d..%d)", SPLIT_NAMES[split], t->c.min_len, t->c.max_len);
}

int task_sample_batch(const Task *t, TaskSplit split, uint64_t *rng, int B, int32_t *in_ids, int32_t *in_len,
                      int32_t *out_ids, int32_t *out_len) {
    char input[TASK_MAX_LEN + 1], output[TASK_MAX_LEN + 1];
    for (int b = 0; b < B; b++) {
        NN_TRY(task_sample(t, split, rng, input, output));
        int32_t *in = in_ids + (size_t)b * t->max_in, *out = out_ids + (size_t)b * t->max_out;
        int n = (int)strlen(input), m = (int)strlen(output);
        memset(in, 0, sizeof(int32_t) * t->max_in);
        memset(out, 0, sizeof(int32_t) * t->max_out);
        for (int i = 0; i < n; i++) in[i] = t->in_id[(uint8_t)input[i]];
        for (int i = 0; i < m; i++) out[i] = t->out_id[(uint8_t)output[i]];
        out[m] = TASK_EOS;
        in_len[b] = n;
        out_len[b] = m + 1;
    }
    return NN_OK;
}
