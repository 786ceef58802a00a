/* pytorch_model.bin (src/layers/torch_file.h): the zip's central directory
 * read into a sorted list of entries, then data.pkl run through a small
 * stack machine that knows a state dict's opcodes and nothing else: it builds
 * plain values (integers, strings, tuples, dicts, storages, tensors), calls
 * nothing and imports nothing, and the dict it ends with becomes the table.
 *
 * The pickle's opcodes, as pickletools names them, and what each does here:
 *   PROTO 2 (first), STOP (last; one value left, the dict)
 *   MARK; TUPLE, TUPLE1/2/3, EMPTY_TUPLE; EMPTY_DICT, SETITEM, SETITEMS
 *   BINUNICODE, SHORT_BINUNICODE (UTF-8 checked); BININT, BININT1, BININT2,
 *   LONG1 (at most 64 bits); NONE, NEWTRUE, NEWFALSE
 *   BINPUT, LONG_BINPUT (the next index or one in use), BINGET, LONG_BINGET (one in use)
 *   GLOBAL: collections OrderedDict, torch._utils _rebuild_tensor_v2 and the
 *     storage types torch FloatStorage, HalfStorage, BFloat16Storage (weights)
 *     and BoolStorage, ByteStorage (the attention masks GPT-2 and GPT-NeoX save)
 *   REDUCE: OrderedDict() (no arguments), _rebuild_tensor_v2(storage, offset,
 *     size, stride, requires_grad, hooks)
 *   BINPERSID: ('storage', <storage type>, key, location, numel), the entry
 *     <archive>/data/<key>
 *   BUILD: on an OrderedDict, a dict or None as its state (the state dict's
 *     _metadata), dropped
 * Any other opcode or global is refused by name with its byte in data.pkl. */
#include "layers/torch_file.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/bytes.h"
#include "base/error.h"

static uint64_t le(const uint8_t *p, int bytes) { return nn_get_le(&p, bytes); }

/* up to cap - 1 bytes of s as text: bytes outside printable ASCII as '?' (names come from the file) */
static const char *printable(char *out, size_t cap, const uint8_t *s, size_t n) {
    size_t k = 0;
    for (; k < n && k + 1 < cap; k++) out[k] = s[k] >= 0x20 && s[k] < 0x7f ? (char)s[k] : '?';
    out[k] = 0;
    return out;
}

/* Room for need items of size elem at *p (holding *cap): doubles, at least 16. */
static int reserve(void *p, size_t *cap, size_t need, size_t elem) {
    if (need <= *cap) return NN_OK;
    size_t next = *cap ? *cap : 16;
    while (next < need) next *= 2;
    void *q = realloc(*(void **)p, next * elem);
    if (!q) return nn_fail(NN_ERR_NOMEM, "pytorch_model.bin: out of memory reading it");
    *(void **)p = q;
    *cap = next;
    return NN_OK;
}

/* ---- the zip --------------------------------------------------------------------- */

enum {
    ZIP_LOCAL = 0x04034b50,
    ZIP_CENTRAL = 0x02014b50,
    ZIP_END = 0x06054b50,
    ZIP64_END = 0x06064b50,
    ZIP64_LOCATOR = 0x07064b50,
    ZIP_CENTRAL_BYTES = 46,
    ZIP_LOCAL_BYTES = 30,
    ZIP_END_BYTES = 22,
    ZIP64_END_BYTES = 56,
    ZIP64_LOCATOR_BYTES = 20,
    ZIP_MAX_COMMENT = 0xffff,
};

typedef struct {
    const uint8_t *name;
    size_t name_len;
    uint64_t at, size; /* the entry's bytes [at, at + size) in the file */
    int method;        /* 0 stored */
} Entry;

typedef struct {
    Entry *e;
    size_t n;
} Zip;

static int zip_bad(const char *what, uint64_t at) {
    return nn_fail(NN_ERR_VALUE, "zip: %s (byte %llu); not a zip file PyTorch wrote", what, (unsigned long long)at);
}

static int by_entry_name(const void *a, const void *b) {
    const Entry *x = a, *y = b;
    size_t n = x->name_len < y->name_len ? x->name_len : y->name_len;
    int c = memcmp(x->name, y->name, n);
    return c ? c : (x->name_len > y->name_len) - (x->name_len < y->name_len);
}

/* The end record (and the zip64 one where it has one): the directory's place and entry count. */
static int zip_end(const uint8_t *f, uint64_t n, uint64_t *count, uint64_t *dir_at, uint64_t *dir_size) {
    if (n < ZIP_END_BYTES) return zip_bad("too short for a zip's end record", n);
    uint64_t at = n - ZIP_END_BYTES;
    for (;;) {
        if (le(f + at, 4) == ZIP_END && at + ZIP_END_BYTES + le(f + at + 20, 2) == n) break;
        if (at == 0 || n - ZIP_END_BYTES - at >= ZIP_MAX_COMMENT) return zip_bad("no end record", n);
        at--;
    }
    *count = le(f + at + 10, 2);
    *dir_size = le(f + at + 12, 4);
    *dir_at = le(f + at + 16, 4);
    if (at >= ZIP64_LOCATOR_BYTES && le(f + at - ZIP64_LOCATOR_BYTES, 4) == ZIP64_LOCATOR) {
        uint64_t z = le(f + at - ZIP64_LOCATOR_BYTES + 8, 8);
        if (z > n || n - z < ZIP64_END_BYTES || le(f + z, 4) != ZIP64_END)
            return zip_bad("a zip64 end record outside the file", z);
        *count = le(f + z + 32, 8);
        *dir_size = le(f + z + 40, 8);
        *dir_at = le(f + z + 48, 8);
    }
    if (*dir_at > n || *dir_size > n - *dir_at) return zip_bad("a central directory past the end of the file", *dir_at);
    if (*count > *dir_size / ZIP_CENTRAL_BYTES)
        return zip_bad("more entries than the central directory holds", *dir_at);
    if (*count > TORCH_MAX_ENTRIES)
        return nn_fail(NN_ERR_LIMIT, "zip: %llu entries is past the limit of %d", (unsigned long long)*count,
                       TORCH_MAX_ENTRIES);
    return NN_OK;
}

/* A central directory entry's zip64 extra field: the 64-bit sizes and offset its 32-bit ones stand for. */
static int zip64_extra(const uint8_t *x, size_t len, uint64_t *usize, uint64_t *csize, uint64_t *local, uint64_t at) {
    while (len >= 4) {
        size_t id = (size_t)le(x, 2), size = (size_t)le(x + 2, 2);
        if (size > len - 4) return zip_bad("an extra field past its entry", at);
        if (id == 1) {
            uint64_t *fields[3] = {usize, csize, local};
            size_t k = 4;
            for (int i = 0; i < 3; i++) {
                if (*fields[i] != 0xffffffffu) continue;
                if (k + 8 > 4 + size) return zip_bad("a zip64 extra field without its values", at);
                *fields[i] = le(x + k, 8);
                k += 8;
            }
        }
        x += 4 + size;
        len -= 4 + size;
    }
    return NN_OK;
}

static int zip_read(Zip *z, const uint8_t *f, uint64_t n) {
    uint64_t count = 0, at = 0, size = 0;
    NN_TRY(zip_end(f, n, &count, &at, &size));
    z->e = malloc(sizeof *z->e * (size_t)(count ? count : 1));
    if (!z->e) return nn_fail(NN_ERR_NOMEM, "zip: out of memory for %llu entries", (unsigned long long)count);
    uint64_t end = at + size;
    char name[80];
    for (uint64_t k = 0; k < count; k++) {
        if (end - at < ZIP_CENTRAL_BYTES || le(f + at, 4) != ZIP_CENTRAL)
            return zip_bad("a central directory entry is not one", at);
        const uint8_t *c = f + at;
        uint64_t flags = le(c + 8, 2), method = le(c + 10, 2), csize = le(c + 20, 4), usize = le(c + 24, 4);
        uint64_t nlen = le(c + 28, 2), xlen = le(c + 30, 2), clen = le(c + 32, 2), local = le(c + 42, 4);
        if (ZIP_CENTRAL_BYTES + nlen + xlen + clen > end - at)
            return zip_bad("a central directory entry past the directory", at);
        NN_TRY(zip64_extra(c + ZIP_CENTRAL_BYTES + nlen, (size_t)xlen, &usize, &csize, &local, at));
        printable(name, sizeof name, c + ZIP_CENTRAL_BYTES, (size_t)nlen);
        if (flags & 1) return nn_fail(NN_ERR_VALUE, "zip: %s is encrypted", name);
        if (local > n || n - local < ZIP_LOCAL_BYTES || le(f + local, 4) != ZIP_LOCAL)
            return nn_fail(NN_ERR_VALUE, "zip: %s: its local header (byte %llu) is not inside the file", name,
                           (unsigned long long)local);
        uint64_t lnlen = le(f + local + 26, 2), data = local + ZIP_LOCAL_BYTES + lnlen + le(f + local + 28, 2);
        if (lnlen != nlen || data > n || memcmp(f + local + ZIP_LOCAL_BYTES, c + ZIP_CENTRAL_BYTES, (size_t)nlen))
            return nn_fail(NN_ERR_VALUE, "zip: %s: its local header names another file", name);
        if (csize > n - data)
            return nn_fail(NN_ERR_VALUE,
                           "zip: %s: its %llu bytes at byte %llu run past the end of the file (%llu bytes)", name,
                           (unsigned long long)csize, (unsigned long long)data, (unsigned long long)n);
        if (method == 0 && usize != csize)
            return nn_fail(NN_ERR_VALUE, "zip: %s: stored, yet %llu bytes stand for %llu", name,
                           (unsigned long long)csize, (unsigned long long)usize);
        z->e[z->n++] = (Entry){c + ZIP_CENTRAL_BYTES, (size_t)nlen, data, csize, (int)method};
        at += ZIP_CENTRAL_BYTES + nlen + xlen + clen;
    }
    qsort(z->e, z->n, sizeof *z->e, by_entry_name);
    for (size_t k = 1; k < z->n; k++)
        if (!by_entry_name(&z->e[k - 1], &z->e[k]))
            return nn_fail(NN_ERR_VALUE, "zip: %s: the directory names it twice",
                           printable(name, sizeof name, z->e[k].name, z->e[k].name_len));
    return NN_OK;
}

/* The entry named prefix + tail into *out, stored (not compressed); none: an error if
 * required, else *out NULL. */
static int zip_find(const Zip *z, const char *prefix, const uint8_t *tail, size_t tail_len, int required,
                    const Entry **out) {
    char name[80], full[320];
    size_t plen = strlen(prefix);
    *out = NULL;
    if (plen + tail_len >= sizeof full)
        return nn_fail(NN_ERR_LIMIT, "zip: an entry's name past %zu bytes (%s%s)", sizeof full - 1, prefix,
                       printable(name, sizeof name, tail, tail_len));
    memcpy(full, prefix, plen);
    memcpy(full + plen, tail, tail_len);
    Entry key = {(const uint8_t *)full, plen + tail_len, 0, 0, 0};
    const Entry *e = bsearch(&key, z->e, z->n, sizeof *z->e, by_entry_name);
    printable(name, sizeof name, key.name, key.name_len);
    if (!e) return required ? nn_fail(NN_ERR_VALUE, "zip: no entry %s", name) : NN_OK;
    if (e->method != 0)
        return nn_fail(NN_ERR_VALUE, "zip: %s is compressed (method %d); a checkpoint's entries are stored", name,
                       e->method);
    *out = e;
    return NN_OK;
}

/* ---- data.pkl ---------------------------------------------------------------------- */

typedef enum { O_NONE, O_BOOL, O_INT, O_STR, O_TUPLE, O_DICT, O_GLOBAL, O_STORAGE, O_TENSOR } Kind;

typedef struct {
    Kind kind;
    int64_t i;        /* INT, BOOL: the value; GLOBAL: its index in GLOBALS; STORAGE, TENSOR: their index;
                         TUPLE: its first item in items; DICT: 1 an OrderedDict */
    size_t n;         /* STR: bytes; TUPLE: items */
    const uint8_t *s; /* STR: its bytes, in data.pkl */
} Obj;

static const struct {
    const char *module, *name;
} GLOBALS[] = {
    {"collections", "OrderedDict"}, {"torch._utils", "_rebuild_tensor_v2"}, {"torch", "FloatStorage"},
    {"torch", "HalfStorage"},       {"torch", "BFloat16Storage"},           {"torch", "BoolStorage"},
    {"torch", "ByteStorage"},
};
enum { G_ORDERED_DICT, G_REBUILD, G_STORAGE };
/* the storage types, in GLOBALS' order from G_STORAGE */
static const struct {
    StDtype dtype;
    const char *name;
    int size;
} STORAGES[] = {
    {ST_F32, "F32", 4}, {ST_F16, "F16", 2}, {ST_BF16, "BF16", 2}, {ST_OTHER, "BOOL", 1}, {ST_OTHER, "U8", 1}};

typedef struct {
    int type; /* index in STORAGES */
    const Entry *entry;
    char key[32];
} Storage;

typedef struct {
    size_t storage; /* index in storages */
    int64_t offset;
    int ndim;
    int64_t shape[ST_MAX_DIMS], stride[ST_MAX_DIMS];
} Tensor;

typedef struct {
    size_t dict, key, value; /* objects */
} Item;

typedef struct {
    const uint8_t *p; /* data.pkl */
    size_t n, at, op_at;
    uint8_t op;
    const Zip *zip;
    const char *archive; /* "<archive>/" */
    Obj *objs;
    size_t n_objs, cap_objs;
    size_t *stack, depth, cap_stack;
    size_t *marks, n_marks, cap_marks; /* stack depths */
    size_t *memo, n_memo, cap_memo;
    size_t *items, n_items, cap_items; /* tuples' objects */
    Item *dict_items;
    size_t n_dict_items, cap_dict_items;
    Storage *storages;
    size_t n_storages, cap_storages;
    Tensor *tensors;
    size_t n_tensors, cap_tensors;
} Pickle;

/* pickletools' names of every opcode (protocols 0-5), for the messages: the printable ones
 * as the opcode's character then its name, those from 0x80 on in order */
static const char *op_name(uint8_t op) {
    static const char *const printable_ops[] = {
        "(MARK",          ".STOP",        "0POP",       "1POP_MARK",        "2DUP",      "FFLOAT",      "IINT",
        "JBININT",        "KBININT1",     "LLONG",      "MBININT2",         "NNONE",     "PPERSID",     "QBINPERSID",
        "RREDUCE",        "SSTRING",      "TBINSTRING", "USHORT_BINSTRING", "VUNICODE",  "XBINUNICODE", "aAPPEND",
        "bBUILD",         "cGLOBAL",      "dDICT",      "}EMPTY_DICT",      "eAPPENDS",  "gGET",        "hBINGET",
        "iINST",          "jLONG_BINGET", "lLIST",      "]EMPTY_LIST",      "oOBJ",      "pPUT",        "qBINPUT",
        "rLONG_BINPUT",   "sSETITEM",     "tTUPLE",     ")EMPTY_TUPLE",     "uSETITEMS", "GBINFLOAT",   "BBINBYTES",
        "CSHORT_BINBYTES"};
    static const char *const high_ops[] = {
        "PROTO",     "NEWOBJ",     "EXT1",        "EXT2",           "EXT4",      "TUPLE1",           "TUPLE2",
        "TUPLE3",    "NEWTRUE",    "NEWFALSE",    "LONG1",          "LONG4",     "SHORT_BINUNICODE", "BINUNICODE8",
        "BINBYTES8", "EMPTY_SET",  "ADDITEMS",    "FROZENSET",      "NEWOBJ_EX", "STACK_GLOBAL",     "MEMOIZE",
        "FRAME",     "BYTEARRAY8", "NEXT_BUFFER", "READONLY_BUFFER"};
    if (op >= 0x80 && op - 0x80 < (int)(sizeof high_ops / sizeof *high_ops)) return high_ops[op - 0x80];
    for (size_t i = 0; i < sizeof printable_ops / sizeof *printable_ops; i++)
        if ((uint8_t)printable_ops[i][0] == op) return printable_ops[i] + 1;
    return "an unknown opcode";
}

/* "data.pkl: <OPCODE> (0x..) at byte N: <what>", NN_ERR_VALUE */
static int pk_bad(const Pickle *k, const char *what) {
    return nn_fail(NN_ERR_VALUE, "data.pkl: %s (0x%02x) at byte %zu: %s", op_name(k->op), k->op, k->op_at, what);
}

static int pk_push(Pickle *k, Obj o) {
    NN_TRY(reserve(&k->objs, &k->cap_objs, k->n_objs + 1, sizeof *k->objs));
    NN_TRY(reserve(&k->stack, &k->cap_stack, k->depth + 1, sizeof *k->stack));
    k->objs[k->n_objs] = o;
    k->stack[k->depth++] = k->n_objs++;
    return NN_OK;
}

/* Values on the stack above the last MARK. */
static size_t pk_avail(const Pickle *k) { return k->depth - (k->n_marks ? k->marks[k->n_marks - 1] : 0); }

static int pk_pop(Pickle *k, const Obj **out) {
    if (!pk_avail(k)) return pk_bad(k, "the stack is empty");
    *out = &k->objs[k->stack[--k->depth]];
    return NN_OK;
}

/* The bytes of an argument: n of them, inside data.pkl. */
static int pk_take(Pickle *k, size_t n, const uint8_t **out) {
    if (n > k->n - k->at) return pk_bad(k, "its argument runs past the end of data.pkl");
    *out = k->p + k->at;
    k->at += n;
    return NN_OK;
}

static int utf8_ok(const uint8_t *s, size_t n) {
    for (size_t i = 0; i < n;) {
        uint8_t c = s[i];
        size_t len = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
        if (!len || len > n - i) return 0;
        uint32_t cp = len == 1 ? c : c & (0x7f >> len);
        for (size_t j = 1; j < len; j++) {
            if ((s[i + j] & 0xc0) != 0x80) return 0;
            cp = cp << 6 | (s[i + j] & 0x3f);
        }
        static const uint32_t least[5] = {0, 0, 0x80, 0x800, 0x10000};
        if (cp < least[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
        i += len;
    }
    return 1;
}

/* GLOBAL's "module\nname\n": one of GLOBALS, or refused naming it. */
static int pk_global(Pickle *k) {
    const uint8_t *line[2];
    size_t len[2];
    for (int i = 0; i < 2; i++) {
        const uint8_t *nl = k->at < k->n ? memchr(k->p + k->at, '\n', k->n - k->at) : NULL;
        if (!nl) return pk_bad(k, "a module or name without its newline");
        line[i] = k->p + k->at;
        len[i] = (size_t)(nl - line[i]);
        k->at += len[i] + 1;
    }
    for (size_t g = 0; g < sizeof GLOBALS / sizeof *GLOBALS; g++)
        if (len[0] == strlen(GLOBALS[g].module) && !memcmp(line[0], GLOBALS[g].module, len[0]) &&
            len[1] == strlen(GLOBALS[g].name) && !memcmp(line[1], GLOBALS[g].name, len[1]))
            return pk_push(k, (Obj){O_GLOBAL, (int64_t)g, 0, NULL});
    char module[48], name[48], what[160];
    snprintf(what, sizeof what, "the global %s %s is not one a state dict uses",
             printable(module, sizeof module, line[0], len[0]), printable(name, sizeof name, line[1], len[1]));
    return pk_bad(k, what);
}

/* The top count values (above the last MARK) as a tuple. */
static int pk_tuple(Pickle *k, size_t count) {
    if (pk_avail(k) < count) return pk_bad(k, "fewer values on the stack than the tuple takes");
    NN_TRY(reserve(&k->items, &k->cap_items, k->n_items + count, sizeof *k->items));
    size_t first = k->n_items;
    if (count) memcpy(k->items + first, k->stack + k->depth - count, sizeof *k->items * count);
    k->n_items += count;
    k->depth -= count;
    return pk_push(k, (Obj){O_TUPLE, (int64_t)first, count, NULL});
}

static const Obj *item(const Pickle *k, const Obj *tuple, size_t i) {
    return &k->objs[k->items[tuple->i + (int64_t)i]];
}

static int is_str(const Obj *o, const char *s) {
    return o->kind == O_STR && o->n == strlen(s) && !memcmp(o->s, s, o->n);
}

/* BINPERSID's ('storage', type, key, location, numel): the storage entry <archive>/data/<key>. */
static int pk_storage(Pickle *k) {
    const Obj *pid = NULL;
    NN_TRY(pk_pop(k, &pid));
    if (pid->kind != O_TUPLE || pid->n != 5 || !is_str(item(k, pid, 0), "storage"))
        return pk_bad(k, "a persistent id that is not ('storage', type, key, location, numel)");
    const Obj *type = item(k, pid, 1), *key = item(k, pid, 2), *location = item(k, pid, 3), *numel = item(k, pid, 4);
    if (type->kind != O_GLOBAL || type->i < G_STORAGE) return pk_bad(k, "a storage whose type is not a storage type");
    if (key->kind != O_STR || location->kind != O_STR || numel->kind != O_INT || numel->i < 0)
        return pk_bad(k, "a storage's key, location or size is not a string, a string and an integer >= 0");
    if (key->n >= sizeof k->storages->key) return pk_bad(k, "a storage's key past 31 bytes");
    static const char dir[] = "data/";
    char prefix[300];
    snprintf(prefix, sizeof prefix, "%s%s", k->archive, dir);
    const Entry *e = NULL;
    NN_TRY(zip_find(k->zip, prefix, key->s, key->n, 1, &e));
    int t = (int)(type->i - G_STORAGE), es = STORAGES[t].size;
    char name[32];
    printable(name, sizeof name, key->s, key->n);
    if ((uint64_t)numel->i > e->size / (uint64_t)es || (uint64_t)numel->i * (uint64_t)es != e->size)
        return nn_fail(NN_ERR_VALUE, "data.pkl: storage %s: %lld values of %s, but its entry holds %llu bytes", name,
                       (long long)numel->i, STORAGES[t].name, (unsigned long long)e->size);
    NN_TRY(reserve(&k->storages, &k->cap_storages, k->n_storages + 1, sizeof *k->storages));
    Storage *s = &k->storages[k->n_storages];
    s->type = t;
    s->entry = e;
    memcpy(s->key, name, sizeof s->key);
    return pk_push(k, (Obj){O_STORAGE, (int64_t)k->n_storages++, 0, NULL});
}

/* A tuple of integers (a tensor's size or stride) into out; its length. */
static int pk_ints(const Pickle *k, const Obj *t, int64_t *out, int *ndim, const char *what) {
    char msg[96];
    if (t->kind != O_TUPLE) {
        snprintf(msg, sizeof msg, "_rebuild_tensor_v2's %s is not a tuple", what);
        return pk_bad(k, msg);
    }
    if (t->n > ST_MAX_DIMS) {
        snprintf(msg, sizeof msg, "_rebuild_tensor_v2's %s has %zu dimensions, past %d", what, t->n, ST_MAX_DIMS);
        return nn_fail(NN_ERR_LIMIT, "data.pkl: REDUCE at byte %zu: %s", k->op_at, msg);
    }
    for (size_t i = 0; i < t->n; i++) {
        const Obj *v = item(k, t, i);
        if (v->kind != O_INT || v->i < 0) {
            snprintf(msg, sizeof msg, "_rebuild_tensor_v2's %s holds something not an integer >= 0", what);
            return pk_bad(k, msg);
        }
        out[i] = v->i;
    }
    *ndim = (int)t->n;
    return NN_OK;
}

/* REDUCE: OrderedDict() or _rebuild_tensor_v2(storage, offset, size, stride, requires_grad, hooks). */
static int pk_reduce(Pickle *k) {
    const Obj *args = NULL, *fn = NULL;
    NN_TRY(pk_pop(k, &args));
    NN_TRY(pk_pop(k, &fn));
    if (fn->kind != O_GLOBAL || fn->i >= G_STORAGE || args->kind != O_TUPLE)
        return pk_bad(k, "only OrderedDict and _rebuild_tensor_v2 are called, with a tuple");
    if (fn->i == G_ORDERED_DICT) {
        if (args->n) return pk_bad(k, "OrderedDict with arguments");
        return pk_push(k, (Obj){O_DICT, 1, 0, NULL});
    }
    if (args->n != 6) return pk_bad(k, "_rebuild_tensor_v2 takes 6 arguments here");
    const Obj *storage = item(k, args, 0), *offset = item(k, args, 1), *grad = item(k, args, 4),
              *hooks = item(k, args, 5);
    if (storage->kind != O_STORAGE || offset->kind != O_INT || offset->i < 0 || grad->kind != O_BOOL ||
        hooks->kind != O_DICT)
        return pk_bad(k, "_rebuild_tensor_v2's arguments are not (storage, offset >= 0, size, stride, bool, dict)");
    Tensor t = {(size_t)storage->i, offset->i, 0, {0}, {0}};
    int strides = 0;
    NN_TRY(pk_ints(k, item(k, args, 2), t.shape, &t.ndim, "size"));
    NN_TRY(pk_ints(k, item(k, args, 3), t.stride, &strides, "stride"));
    if (strides != t.ndim) return pk_bad(k, "_rebuild_tensor_v2's size and stride differ in length");
    NN_TRY(reserve(&k->tensors, &k->cap_tensors, k->n_tensors + 1, sizeof *k->tensors));
    k->tensors[k->n_tensors] = t;
    return pk_push(k, (Obj){O_TENSOR, (int64_t)k->n_tensors++, 0, NULL});
}

/* SETITEM / SETITEMS: count (key, value) pairs from the top into the dict below them. */
static int pk_setitems(Pickle *k, size_t pairs) {
    size_t base = k->depth - 2 * pairs;
    const Obj *dict = &k->objs[k->stack[base - 1]];
    if (dict->kind != O_DICT) return pk_bad(k, "items set on something not a dict");
    NN_TRY(reserve(&k->dict_items, &k->cap_dict_items, k->n_dict_items + pairs, sizeof *k->dict_items));
    for (size_t i = 0; i < pairs; i++)
        k->dict_items[k->n_dict_items++] =
            (Item){k->stack[base - 1], k->stack[base + 2 * i], k->stack[base + 2 * i + 1]};
    k->depth = base;
    return NN_OK;
}

static int pk_memo(Pickle *k, uint64_t index, int put) {
    char msg[96];
    if (put) {
        if (!pk_avail(k)) return pk_bad(k, "the stack is empty");
        if (index > k->n_memo) {
            snprintf(msg, sizeof msg, "memo index %llu past the next one, %zu", (unsigned long long)index, k->n_memo);
            return pk_bad(k, msg);
        }
        if (index == k->n_memo) NN_TRY(reserve(&k->memo, &k->cap_memo, ++k->n_memo, sizeof *k->memo));
        k->memo[index] = k->stack[k->depth - 1];
        return NN_OK;
    }
    if (index >= k->n_memo) {
        snprintf(msg, sizeof msg, "memo index %llu out of range (the memo holds %zu)", (unsigned long long)index,
                 k->n_memo);
        return pk_bad(k, msg);
    }
    NN_TRY(reserve(&k->stack, &k->cap_stack, k->depth + 1, sizeof *k->stack));
    k->stack[k->depth++] = k->memo[index];
    return NN_OK;
}

/* One opcode at k->at. */
static int pk_step(Pickle *k, int *stop) {
    const uint8_t *a = NULL;
    const Obj *x = NULL;
    k->op_at = k->at;
    k->op = k->p[k->at++];
    if (k->op_at == 0 && k->op != 0x80) return pk_bad(k, "data.pkl must start with PROTO 2");
    switch (k->op) {
    case 0x80: /* PROTO */
        NN_TRY(pk_take(k, 1, &a));
        if (k->op_at != 0 || a[0] != 2) return pk_bad(k, "a state dict is pickled with protocol 2, once, first");
        return NN_OK;
    case '(': /* MARK */
        NN_TRY(reserve(&k->marks, &k->cap_marks, k->n_marks + 1, sizeof *k->marks));
        k->marks[k->n_marks++] = k->depth;
        return NN_OK;
    case 't': /* TUPLE */
        if (!k->n_marks) return pk_bad(k, "no MARK before it");
        NN_TRY(pk_tuple(k, pk_avail(k)));
        k->n_marks--; /* the tuple stands where the MARK was */
        return NN_OK;
    case ')': return pk_tuple(k, 0);
    case 0x85: return pk_tuple(k, 1);
    case 0x86: return pk_tuple(k, 2);
    case 0x87: return pk_tuple(k, 3);
    case '}': return pk_push(k, (Obj){O_DICT, 0, 0, NULL});
    case 'N': return pk_push(k, (Obj){O_NONE, 0, 0, NULL});
    case 0x88: return pk_push(k, (Obj){O_BOOL, 1, 0, NULL});
    case 0x89: return pk_push(k, (Obj){O_BOOL, 0, 0, NULL});
    case 'J': /* BININT: signed 32 bits */
        NN_TRY(pk_take(k, 4, &a));
        return pk_push(k, (Obj){O_INT, (int32_t)(uint32_t)le(a, 4), 0, NULL});
    case 'K': NN_TRY(pk_take(k, 1, &a)); return pk_push(k, (Obj){O_INT, a[0], 0, NULL});
    case 'M': NN_TRY(pk_take(k, 2, &a)); return pk_push(k, (Obj){O_INT, (int64_t)le(a, 2), 0, NULL});
    case 0x8a: { /* LONG1: n bytes, little-endian two's complement */
        NN_TRY(pk_take(k, 1, &a));
        size_t n = a[0];
        if (n > 8) return pk_bad(k, "an integer past 64 bits");
        NN_TRY(pk_take(k, n, &a));
        uint64_t v = n ? le(a, (int)n) : 0;
        if (n && n < 8 && (a[n - 1] & 0x80)) v |= ~(uint64_t)0 << (8 * n);
        return pk_push(k, (Obj){O_INT, (int64_t)v, 0, NULL});
    }
    case 'X':
    case 0x8c: { /* BINUNICODE (4-byte length), SHORT_BINUNICODE (1-byte) */
        int width = k->op == 'X' ? 4 : 1;
        NN_TRY(pk_take(k, (size_t)width, &a));
        uint64_t n = le(a, width); /* at most 2^32 - 1: a size_t */
        NN_TRY(pk_take(k, (size_t)n, &a));
        if (!utf8_ok(a, (size_t)n)) return pk_bad(k, "a string that is not UTF-8");
        return pk_push(k, (Obj){O_STR, 0, (size_t)n, a});
    }
    case 'q': NN_TRY(pk_take(k, 1, &a)); return pk_memo(k, a[0], 1);
    case 'r': NN_TRY(pk_take(k, 4, &a)); return pk_memo(k, le(a, 4), 1);
    case 'h': NN_TRY(pk_take(k, 1, &a)); return pk_memo(k, a[0], 0);
    case 'j': NN_TRY(pk_take(k, 4, &a)); return pk_memo(k, le(a, 4), 0);
    case 'c': return pk_global(k);
    case 'R': return pk_reduce(k);
    case 'Q': return pk_storage(k);
    case 's': /* SETITEM: dict key value */
        if (pk_avail(k) < 3) return pk_bad(k, "fewer than a dict, a key and a value on the stack");
        return pk_setitems(k, 1);
    case 'u': { /* SETITEMS: dict MARK key value ... */
        if (!k->n_marks) return pk_bad(k, "no MARK before it");
        size_t n = pk_avail(k);
        if (n % 2) return pk_bad(k, "a key without its value");
        k->n_marks--;
        if (pk_avail(k) < n + 1) return pk_bad(k, "no dict below the MARK");
        return pk_setitems(k, n / 2);
    }
    case 'b': /* BUILD: an OrderedDict's state (the state dict's _metadata), dropped */
        NN_TRY(pk_pop(k, &x));
        if (!pk_avail(k) || k->objs[k->stack[k->depth - 1]].kind != O_DICT || (x->kind != O_DICT && x->kind != O_NONE))
            return pk_bad(k, "a state that is not a dict, set on something not a dict");
        return NN_OK;
    case '.': /* STOP */
        if (k->n_marks || k->depth != 1) return pk_bad(k, "more than one value left on the stack, or a MARK");
        if (k->at != k->n) return pk_bad(k, "bytes after it");
        *stop = 1;
        return NN_OK;
    default: return pk_bad(k, "not an opcode a state dict uses");
    }
}

static void pk_free(Pickle *k) {
    free(k->objs);
    free(k->stack);
    free(k->marks);
    free(k->memo);
    free(k->items);
    free(k->dict_items);
    free(k->storages);
    free(k->tensors);
}

/* ---- the table ------------------------------------------------------------------------- */

/* One tensor of the state dict: contiguous row-major, its bytes inside its storage. */
static int table_entry(StTensor *out, const Pickle *k, const Obj *key, const Tensor *t) {
    if (key->kind != O_STR) return nn_fail(NN_ERR_VALUE, "data.pkl: the state dict has a key that is not a string");
    if (key->n >= ST_MAX_NAME || memchr(key->s, 0, key->n))
        return nn_fail(NN_ERR_LIMIT, "data.pkl: a tensor's name past %d bytes, or holding a NUL", ST_MAX_NAME - 1);
    memcpy(out->name, key->s, key->n);
    out->name[key->n] = 0;
    const Storage *s = &k->storages[t->storage];
    out->dtype = STORAGES[s->type].dtype;
    snprintf(out->dtype_name, sizeof out->dtype_name, "%s", STORAGES[s->type].name);
    out->ndim = t->ndim;
    /* its values (0 with a dimension of 0), and the row-major strides: products of the later sizes (of 1 for a 0) */
    uint64_t count = 1, all = 1, numel = s->entry->size / (uint64_t)STORAGES[s->type].size;
    int64_t want[ST_MAX_DIMS];
    for (int d = t->ndim - 1; d >= 0; d--) {
        out->shape[d] = t->shape[d];
        want[d] = (int64_t)all;
        uint64_t size = t->shape[d] > 1 ? (uint64_t)t->shape[d] : 1;
        if (all > ((uint64_t)1 << 53) / size)
            return nn_fail(NN_ERR_VALUE, "%s: its shape holds more than 2^53 values", out->name);
        all *= size;
        if (!t->shape[d]) count = 0;
    }
    if (count) count = all;
    for (int d = 0; d < t->ndim; d++) {
        if (t->shape[d] == 1 || t->stride[d] == want[d]) continue; /* a dimension of 1 takes any stride */
        char got[128] = "", row_major[128] = "";
        for (int i = 0; i < t->ndim; i++) {
            snprintf(got + strlen(got), sizeof got - strlen(got), "%s%lld", i ? ", " : "", (long long)t->stride[i]);
            snprintf(row_major + strlen(row_major), sizeof row_major - strlen(row_major), "%s%lld", i ? ", " : "",
                     (long long)want[i]);
        }
        return nn_fail(NN_ERR_VALUE,
                       "%s: stride (%s) is not its shape's contiguous row-major one (%s); only contiguous "
                       "tensors are read",
                       out->name, got, row_major);
    }
    if ((uint64_t)t->offset > numel || count > numel - (uint64_t)t->offset)
        return nn_fail(NN_ERR_VALUE, "%s: its values from %lld on are not inside its storage %s of %llu values",
                       out->name, (long long)t->offset, s->key, (unsigned long long)numel);
    uint64_t es = (uint64_t)STORAGES[s->type].size;
    out->begin = s->entry->at + (uint64_t)t->offset * es;
    out->end = out->begin + count * es;
    return NN_OK;
}

static int by_tensor_name(const void *a, const void *b) {
    return strcmp(((const StTensor *)a)->name, ((const StTensor *)b)->name);
}

/* The dict data.pkl ends with as the table. */
static int table_read(StTable *table, const Pickle *k) {
    size_t dict = k->stack[0], n = 0;
    if (k->objs[dict].kind != O_DICT) return nn_fail(NN_ERR_VALUE, "data.pkl: it holds no dict of tensors");
    for (size_t i = 0; i < k->n_dict_items; i++) n += k->dict_items[i].dict == dict;
    table->tensors = calloc(n ? n : 1, sizeof *table->tensors);
    if (!table->tensors) return nn_fail(NN_ERR_NOMEM, "pytorch_model.bin: out of memory for %zu tensors", n);
    for (size_t i = 0; i < k->n_dict_items; i++) {
        const Item *it = &k->dict_items[i];
        if (it->dict != dict) continue;
        const Obj *value = &k->objs[it->value];
        if (value->kind != O_TENSOR) {
            char name[64];
            const Obj *key = &k->objs[it->key];
            return nn_fail(NN_ERR_VALUE, "data.pkl: %s is not a tensor",
                           key->kind == O_STR ? printable(name, sizeof name, key->s, key->n) : "a value");
        }
        NN_TRY(table_entry(&table->tensors[table->count], k, &k->objs[it->key], &k->tensors[value->i]));
        table->count++;
    }
    /* sorted by name: the file's order is not a promise, and a name twice is refused */
    qsort(table->tensors, (size_t)table->count, sizeof *table->tensors, by_tensor_name);
    for (int i = 1; i < table->count; i++)
        if (!by_tensor_name(&table->tensors[i - 1], &table->tensors[i]))
            return nn_fail(NN_ERR_VALUE, "%s: the state dict names it twice", table->tensors[i].name);
    return NN_OK;
}

int torch_is_zip(const uint8_t *bytes, size_t n) { return n >= 4 && le(bytes, 4) == ZIP_LOCAL; }

int torch_parse(StTable *table, const uint8_t *file, size_t n, uint64_t file_size) {
    memset(table, 0, sizeof *table);
    if ((uint64_t)n != file_size)
        return nn_fail(NN_ERR_VALUE, "pytorch_model.bin: %zu of its %llu bytes given; the reader takes the whole file",
                       n, (unsigned long long)file_size);
    Zip zip = {NULL, 0};
    Pickle k;
    memset(&k, 0, sizeof k);
    int st = zip_read(&zip, file, file_size);
    char archive[272];
    const Entry *pkl = NULL;
    if (st == NN_OK) {
        /* the archive's folder: an entry's (torch.save puts every entry in it) */
        const Entry *first = zip.n ? &zip.e[0] : NULL;
        const uint8_t *slash = first ? memchr(first->name, '/', first->name_len) : NULL;
        size_t len = slash ? (size_t)(slash - first->name) + 1 : 0;
        if (!slash || len >= sizeof archive - 1 || memchr(first->name, 0, len))
            st = nn_fail(NN_ERR_VALUE, "zip: its entries are not in one folder; not a file torch.save wrote");
        else {
            memcpy(archive, first->name, len);
            archive[len] = 0;
            const Entry *order = NULL;
            static const char little[] = "little";
            st = zip_find(&zip, archive, (const uint8_t *)"byteorder", 9, 0, &order);
            if (st == NN_OK && order &&
                (order->size != sizeof little - 1 || memcmp(file + order->at, little, sizeof little - 1)))
                st = nn_fail(NN_ERR_VALUE,
                             "zip: its byteorder entry is not \"little\"; only little-endian files are read");
            if (st == NN_OK) st = zip_find(&zip, archive, (const uint8_t *)"data.pkl", 8, 1, &pkl);
            if (st == NN_OK && (pkl->size == 0 || pkl->size > TORCH_MAX_PICKLE))
                st = nn_fail(pkl->size ? NN_ERR_LIMIT : NN_ERR_VALUE, "data.pkl: %llu bytes; it must hold 1..%d",
                             (unsigned long long)pkl->size, TORCH_MAX_PICKLE);
        }
    }
    if (st == NN_OK) {
        k.p = file + pkl->at;
        k.n = (size_t)pkl->size;
        k.zip = &zip;
        k.archive = archive;
        int stop = 0;
        while (st == NN_OK && !stop) {
            if (k.at >= k.n) {
                k.op_at = k.at;
                st = nn_fail(NN_ERR_VALUE, "data.pkl: it ends at byte %zu without STOP", k.n);
            } else {
                st = pk_step(&k, &stop);
            }
        }
    }
    if (st == NN_OK) {
        table->data_size = file_size;
        st = table_read(table, &k);
    }
    pk_free(&k);
    free(zip.e);
    if (st != NN_OK) st_free(table);
    return st;
}
