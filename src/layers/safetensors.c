/* The safetensors header (src/layers/safetensors.h): a small JSON reader
 * bounded in length and depth, and the table of tensors it fills. */
#include "layers/safetensors.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"

int st_dtype_size(StDtype dtype) { return dtype == ST_F32 ? 4 : dtype == ST_OTHER ? 0 : 2; }

/* ---- a bounded JSON reader --------------------------------------------------- */

typedef struct {
    const uint8_t *s;
    size_t n, at;
    int depth;
} Json;

static int bad(const Json *j, const char *what) {
    return nn_fail(NN_ERR_VALUE, "header: not well-formed JSON at byte %zu (%s)", j->at, what);
}

static void skip_ws(Json *j) {
    while (j->at < j->n && (j->s[j->at] == ' ' || j->s[j->at] == '\t' || j->s[j->at] == '\n' || j->s[j->at] == '\r'))
        j->at++;
}

/* Whether the next byte (after spaces) is c; consumes it if so. */
static int eat(Json *j, char c) {
    skip_ws(j);
    if (j->at < j->n && j->s[j->at] == c) {
        j->at++;
        return 1;
    }
    return 0;
}

/* A string into out (cap bytes with the NUL; NULL: skipped). Escapes are
 * decoded only as far as a tensor name needs (\" \\ \/ and the control
 * letters); \uXXXX is kept as written. A string too long for out fails. */
static int read_string(Json *j, char *out, size_t cap) {
    if (!eat(j, '"')) return bad(j, "expected a string");
    size_t len = 0;
    while (j->at < j->n) {
        uint8_t c = j->s[j->at++];
        if (c == '"') {
            if (out) out[len] = 0;
            return NN_OK;
        }
        if (c < 0x20) return bad(j, "a control character in a string");
        if (c == '\\') {
            if (j->at >= j->n) break;
            uint8_t e = j->s[j->at++];
            const char *from = "\"\\/bfnrt", *to = "\"\\/\b\f\n\r\t";
            const char *k = e ? strchr(from, e) : NULL;
            if (e == 'u') {
                for (int i = 0; i < 4; i++, j->at++)
                    if (j->at >= j->n || !strchr("0123456789abcdefABCDEF", j->s[j->at]) || !j->s[j->at])
                        return bad(j, "a bad \\u escape");
                if (out) {
                    if (len + 6 >= cap) return nn_fail(NN_ERR_LIMIT, "header: a name past %zu bytes", cap - 1);
                    memcpy(out + len, j->s + j->at - 6, 6);
                }
                len += 6;
                continue;
            }
            if (!k) return bad(j, "a bad escape");
            c = (uint8_t)to[k - from];
        }
        if (out) {
            if (len + 1 >= cap) return nn_fail(NN_ERR_LIMIT, "header: a name or dtype past %zu bytes", cap - 1);
            out[len] = (char)c;
        }
        len++;
    }
    return bad(j, "a string without its closing quote");
}

/* A non-negative integer (what shapes and offsets are), at most 2^53. */
static int read_uint(Json *j, uint64_t *v) {
    skip_ws(j);
    size_t start = j->at;
    uint64_t x = 0;
    while (j->at < j->n && j->s[j->at] >= '0' && j->s[j->at] <= '9') {
        x = x * 10 + (uint64_t)(j->s[j->at++] - '0');
        if (x > ((uint64_t)1 << 53)) return bad(j, "an integer past 2^53");
    }
    if (j->at == start) return bad(j, "expected a non-negative integer");
    if (j->at < j->n && (j->s[j->at] == '.' || j->s[j->at] == 'e' || j->s[j->at] == 'E'))
        return bad(j, "expected an integer");
    *v = x;
    return NN_OK;
}

/* Any JSON value, skipped (the metadata), nesting at most ST_MAX_DEPTH. */
static int skip_value(Json *j) {
    skip_ws(j);
    if (j->at >= j->n) return bad(j, "expected a value");
    uint8_t c = j->s[j->at];
    if (c == '"') return read_string(j, NULL, 0);
    if (c == '{' || c == '[') {
        if (++j->depth > ST_MAX_DEPTH) return nn_fail(NN_ERR_LIMIT, "header: nested past %d levels", ST_MAX_DEPTH);
        j->at++;
        char close = c == '{' ? '}' : ']';
        if (!eat(j, close)) {
            do {
                if (c == '{') {
                    NN_TRY(read_string(j, NULL, 0));
                    if (!eat(j, ':')) return bad(j, "expected ':'");
                }
                NN_TRY(skip_value(j));
            } while (eat(j, ','));
            if (!eat(j, close)) return bad(j, "expected ',' or the closing bracket");
        }
        j->depth--;
        return NN_OK;
    }
    static const char *const words[] = {"true", "false", "null"};
    for (int i = 0; i < 3; i++) {
        size_t len = strlen(words[i]);
        if (j->n - j->at >= len && !memcmp(j->s + j->at, words[i], len)) {
            j->at += len;
            return NN_OK;
        }
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
        j->at++;
        while (j->at < j->n && strchr("0123456789.eE+-", j->s[j->at]) && j->s[j->at]) j->at++;
        return NN_OK;
    }
    return bad(j, "expected a value");
}

/* One tensor's entry: {"dtype": ..., "shape": [...], "data_offsets": [b, e]}. */
static int read_entry(Json *j, StTensor *t) {
    int seen[3] = {0, 0, 0};
    if (!eat(j, '{')) return bad(j, "a tensor's entry is not an object");
    if (!eat(j, '}')) {
        do {
            char key[32];
            NN_TRY(read_string(j, key, sizeof key));
            if (!eat(j, ':')) return bad(j, "expected ':'");
            if (!strcmp(key, "dtype")) {
                NN_TRY(read_string(j, t->dtype_name, sizeof t->dtype_name));
                seen[0]++;
            } else if (!strcmp(key, "shape") || !strcmp(key, "data_offsets")) {
                int shape = key[0] == 's';
                if (!eat(j, '[')) return bad(j, "expected an array");
                int n = 0;
                uint64_t v[ST_MAX_DIMS];
                if (!eat(j, ']')) {
                    do {
                        if (n == ST_MAX_DIMS)
                            return nn_fail(NN_ERR_LIMIT, "%s: %s past %d values", t->name, key, ST_MAX_DIMS);
                        NN_TRY(read_uint(j, &v[n++]));
                    } while (eat(j, ','));
                    if (!eat(j, ']')) return bad(j, "expected ',' or ']'");
                }
                if (shape) {
                    t->ndim = n;
                    for (int i = 0; i < n; i++) t->shape[i] = (int64_t)v[i];
                } else {
                    if (n != 2) return nn_fail(NN_ERR_VALUE, "%s: data_offsets has %d values, not 2", t->name, n);
                    t->begin = v[0];
                    t->end = v[1];
                }
                seen[shape ? 1 : 2]++;
            } else {
                NN_TRY(skip_value(j));
            }
        } while (eat(j, ','));
        if (!eat(j, '}')) return bad(j, "expected ',' or '}'");
    }
    static const char *const fields[3] = {"dtype", "shape", "data_offsets"};
    for (int i = 0; i < 3; i++)
        if (seen[i] != 1)
            return nn_fail(NN_ERR_VALUE, "%s: its entry has %s %s", t->name, seen[i] ? "more than one" : "no", fields[i]);
    static const char *const dtypes[3] = {"F32", "F16", "BF16"};
    t->dtype = ST_OTHER;
    for (int i = 0; i < 3; i++)
        if (!strcmp(t->dtype_name, dtypes[i])) t->dtype = (StDtype)i;
    return NN_OK;
}

static int by_begin(const void *a, const void *b) {
    const StTensor *x = *(const StTensor *const *)a, *y = *(const StTensor *const *)b;
    return x->begin < y->begin ? -1 : x->begin > y->begin ? 1 : (x->end > y->end) - (x->end < y->end);
}

static int by_name(const void *a, const void *b) {
    return strcmp((*(const StTensor *const *)a)->name, (*(const StTensor *const *)b)->name);
}

/* Sizes against dtype x shape, offsets inside the data, no overlap, no name twice. */
static int check_table(const StTable *t) {
    for (int i = 0; i < t->count; i++) {
        const StTensor *x = &t->tensors[i];
        if (x->begin > x->end || x->end > t->data_size)
            return nn_fail(NN_ERR_VALUE, "%s: data_offsets [%llu, %llu] are not inside the data (%llu bytes)", x->name,
                           (unsigned long long)x->begin, (unsigned long long)x->end, (unsigned long long)t->data_size);
        uint64_t count = 1;
        for (int d = 0; d < x->ndim; d++) {
            if (x->shape[d] > 0 && count > (((uint64_t)1 << 53) / (uint64_t)x->shape[d]))
                return nn_fail(NN_ERR_VALUE, "%s: its shape holds more than 2^53 values", x->name);
            count *= (uint64_t)x->shape[d];
        }
        int size = st_dtype_size(x->dtype);
        if (size && count * (uint64_t)size != x->end - x->begin)
            return nn_fail(NN_ERR_VALUE, "%s: %llu values of %s take %llu bytes, but its data_offsets span %llu", x->name,
                           (unsigned long long)count, x->dtype_name, (unsigned long long)(count * (uint64_t)size),
                           (unsigned long long)(x->end - x->begin));
    }
    size_t n = t->count > 0 ? (size_t)t->count : 1;
    const StTensor **order = malloc(sizeof *order * n);
    if (!order) return nn_fail(NN_ERR_NOMEM, "header: out of memory for %d tensors", t->count);
    for (int i = 0; i < t->count; i++) order[i] = &t->tensors[i];
    int st = NN_OK;
    qsort(order, (size_t)t->count, sizeof *order, by_name);
    for (int i = 1; i < t->count && st == NN_OK; i++)
        if (!strcmp(order[i - 1]->name, order[i]->name))
            st = nn_fail(NN_ERR_VALUE, "%s: the header names it twice", order[i]->name);
    qsort(order, (size_t)t->count, sizeof *order, by_begin);
    const StTensor *reach = NULL; /* the tensor that ends last among those before */
    for (int i = 0; i < t->count && st == NN_OK; i++) {
        const StTensor *x = order[i];
        if (x->begin == x->end) continue; /* an empty tensor holds no bytes */
        if (reach && x->begin < reach->end)
            st = nn_fail(NN_ERR_VALUE, "%s: its data [%llu, %llu) overlaps %s's [%llu, %llu)", x->name,
                         (unsigned long long)x->begin, (unsigned long long)x->end, reach->name,
                         (unsigned long long)reach->begin, (unsigned long long)reach->end);
        if (!reach || x->end > reach->end) reach = x;
    }
    free(order);
    return st;
}

/* Room for more entries: twice as many (16 at first), at most `most`. */
static int grow(StTable *table, int *cap, int most) {
    int next = *cap ? (*cap > most / 2 ? most : 2 * *cap) : (most < 16 ? most : 16);
    StTensor *t = realloc(table->tensors, sizeof *t * (size_t)next);
    if (!t) return nn_fail(NN_ERR_NOMEM, "header: out of memory for its tensors");
    memset(t + *cap, 0, sizeof *t * (size_t)(next - *cap));
    table->tensors = t;
    *cap = next;
    return NN_OK;
}

int st_parse(StTable *table, const uint8_t *json, size_t length, uint64_t file_size) {
    memset(table, 0, sizeof *table);
    if (length > ST_MAX_HEADER)
        return nn_fail(NN_ERR_LIMIT, "header: %zu bytes is past the limit of %d", length, ST_MAX_HEADER);
    if (file_size < 8 + (uint64_t)length)
        return nn_fail(NN_ERR_VALUE, "header: %zu bytes run past the end of the file", length);
    table->data_size = file_size - 8 - length;
    /* an entry takes at least 40 bytes of JSON: a bound on the tensors; the table grows as
     * entries are read (doubling), so a header of padding takes no table of its length */
    int most = (int)(length / 40 + 1), cap = 0;
    Json j = {json, length, 0, 1};
    int st = NN_OK;
    if (!eat(&j, '{')) st = bad(&j, "the header is not a JSON object");
    if (st == NN_OK && !eat(&j, '}')) {
        do {
            char name[ST_MAX_NAME];
            st = read_string(&j, name, sizeof name);
            if (st == NN_OK && !eat(&j, ':')) st = bad(&j, "expected ':'");
            if (st != NN_OK) break;
            if (!strcmp(name, "__metadata__")) {
                st = skip_value(&j);
            } else if (table->count == most) {
                st = nn_fail(NN_ERR_VALUE, "%s: more tensors than the header's length can describe", name);
            } else if (table->count == cap && (st = grow(table, &cap, most)) != NN_OK) {
                break;
            } else {
                StTensor *t = &table->tensors[table->count++];
                memcpy(t->name, name, sizeof name);
                st = read_entry(&j, t);
            }
        } while (st == NN_OK && eat(&j, ','));
        if (st == NN_OK && !eat(&j, '}')) st = bad(&j, "expected ',' or '}'");
    }
    /* the header may be padded with spaces to a multiple of 8 bytes */
    if (st == NN_OK) {
        skip_ws(&j);
        if (j.at != j.n) st = bad(&j, "bytes after the header's object");
    }
    if (st == NN_OK) st = check_table(table);
    if (st != NN_OK) st_free(table);
    return st;
}

void st_free(StTable *table) {
    free(table->tensors);
    table->tensors = NULL;
    table->count = 0;
}

float st_decode(StDtype dtype, const uint8_t *b) {
    union {
        uint32_t u;
        float f;
    } v;
    if (dtype == ST_F32) {
        v.u = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
        return v.f;
    }
    uint32_t h = (uint32_t)b[0] | (uint32_t)b[1] << 8;
    if (dtype == ST_BF16) { /* the top half of a float32 */
        v.u = h << 16;
        return v.f;
    }
    /* F16: sign, 5 exponent bits (bias 15), 10 mantissa bits */
    uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
    if (exp == 0x1f) v.u = sign | 0x7f800000u | man << 13; /* inf, NaN */
    else if (exp) v.u = sign | (exp + 112) << 23 | man << 13;
    else if (!man) v.u = sign;
    else { /* subnormal: man 2^-24 */
        float f = (float)man * 5.9604644775390625e-08f;
        return sign ? -f : f;
    }
    return v.f;
}
