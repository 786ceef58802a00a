/* pytorch_model.bin (src/layers/torch_file.h) under ASan+UBSan: a tiny GPT-2
 * written here as torch.save writes it (a zip of stored entries; data.pkl a
 * protocol-2 pickle of an OrderedDict of _rebuild_tensor_v2 calls on
 * persistent storages, globals met again by BINGET) and as safetensors:
 * the table has every tensor's name, dtype, shape and bytes; gpt2_open reads
 * the zip (its data in chunks of 5 bytes from its first byte) to the same
 * logits as the safetensors file; each refusal (a foreign global, an unknown
 * opcode, a memo index out of range, a stride that is not row-major, a
 * compressed storage, a storage past its entry, a file cut short) is
 * NN_ERR_VALUE naming it; every prefix of the file and every one-byte change
 * of it refused or read without a fault, nothing left allocated. */
#include <stdio.h>
#include <string.h>

#include "attnlab/gpt2.h"
#include "base/error.h"
#include "check.h"
#include "layers/safetensors.h"
#include "layers/torch_file.h"

enum { L = 1, H = 2, C = 8, F = 16, P = 8, V = 16, T = 6 };
#define N_TENSORS (3 + 12 * L + 2)

typedef struct {
    char name[48];
    int ndim, shape[2];
    float *w;
} Tensor;

static Tensor tensors[N_TENSORS];

static void make_tensors(void) {
    static const struct {
        const char *name;
        int rows, cols;
    } list[] = {{"wte.weight", V, C},
                {"wpe.weight", P, C},
                {"h.0.ln_1.weight", C, 0},
                {"h.0.ln_1.bias", C, 0},
                {"h.0.attn.c_attn.weight", C, 3 * C},
                {"h.0.attn.c_attn.bias", 3 * C, 0},
                {"h.0.attn.c_proj.weight", C, C},
                {"h.0.attn.c_proj.bias", C, 0},
                {"h.0.ln_2.weight", C, 0},
                {"h.0.ln_2.bias", C, 0},
                {"h.0.mlp.c_fc.weight", C, F},
                {"h.0.mlp.c_fc.bias", F, 0},
                {"h.0.mlp.c_proj.weight", F, C},
                {"h.0.mlp.c_proj.bias", C, 0},
                {"ln_f.weight", C, 0},
                {"ln_f.bias", C, 0},
                {"lm_head.weight", V, C}};
    uint64_t rng = 7;
    for (int i = 0; i < N_TENSORS; i++) {
        Tensor *t = &tensors[i];
        snprintf(t->name, sizeof t->name, "%s", list[i].name);
        t->ndim = list[i].cols ? 2 : 1;
        t->shape[0] = list[i].rows;
        t->shape[1] = list[i].cols;
        size_t n = (size_t)list[i].rows * (list[i].cols ? list[i].cols : 1);
        t->w = check_track(malloc(sizeof(float) * n));
        int gain = strstr(t->name, "ln_") && strstr(t->name, "weight");
        for (size_t k = 0; k < n; k++)
            t->w[k] = (float)(gain ? 1 + 0.1 * nn_rng_symmetric(&rng) : 0.4 * nn_rng_symmetric(&rng));
    }
}

static size_t numel(const Tensor *t) { return (size_t)t->shape[0] * (t->ndim == 2 ? (size_t)t->shape[1] : 1); }

/* ---- writing ------------------------------------------------------------------------- */

typedef struct {
    uint8_t b[1 << 16];
    size_t n;
} Buf;

static void put(Buf *b, const void *p, size_t n) {
    memcpy(b->b + b->n, p, n);
    b->n += n;
}
static void put1(Buf *b, int v) { b->b[b->n++] = (uint8_t)v; }
static void put_le(Buf *b, uint64_t v, int bytes) {
    for (int i = 0; i < bytes; i++) put1(b, (int)(v >> (8 * i)));
}

/* what write_pickle / write_zip get wrong on purpose */
enum { OK, FOREIGN_GLOBAL, UNKNOWN_OP, MEMO_OUT, STRIDE, COMPRESSED, BIG_STORAGE };

static int memo_n;
static void binput(Buf *p) {
    put1(p, 'q');
    put1(p, memo_n++);
}
static void str(Buf *p, const char *s) {
    put1(p, 'X');
    put_le(p, strlen(s), 4);
    put(p, s, strlen(s));
    binput(p);
}
static void int_op(Buf *p, int v) {
    if (v < 256) {
        put1(p, 'K');
        put1(p, v);
    } else {
        put1(p, 'M');
        put_le(p, (uint64_t)v, 2);
    }
}
/* GLOBAL the first time (memoized at *slot), BINGET after */
static void global(Buf *p, const char *text, int *slot) {
    if (*slot >= 0) {
        put1(p, 'h');
        put1(p, *slot);
        return;
    }
    put1(p, 'c');
    put(p, text, strlen(text));
    *slot = memo_n;
    binput(p);
}
static void ints(Buf *p, int n, const int *v) {
    for (int i = 0; i < n; i++) int_op(p, v[i]);
    put1(p, n == 1 ? 0x85 : 0x86); /* TUPLE1, TUPLE2 */
    binput(p);
}

static void write_pickle(Buf *p, int fault) {
    int od = -1, rebuild = -1, storage_type = -1, storage_str = -1, cpu = -1;
    memo_n = 0;
    p->n = 0;
    put1(p, 0x80);
    put1(p, 2);
    if (fault == UNKNOWN_OP) put1(p, 0xff);
    global(p, "collections\nOrderedDict\n", &od);
    put1(p, ')');
    put1(p, 'R');
    binput(p);
    put1(p, '(');
    for (int i = 0; i < N_TENSORS; i++) {
        const Tensor *t = &tensors[i];
        str(p, t->name);
        global(p, fault == FOREIGN_GLOBAL ? "os\nsystem\n" : "torch._utils\n_rebuild_tensor_v2\n", &rebuild);
        put1(p, '(');
        put1(p, '(');
        if (storage_str < 0) {
            storage_str = memo_n;
            str(p, "storage");
        } else {
            put1(p, 'h');
            put1(p, fault == MEMO_OUT && i == 3 ? 250 : storage_str);
        }
        global(p, "torch\nFloatStorage\n", &storage_type);
        char key[16];
        snprintf(key, sizeof key, "%d", i);
        str(p, key);
        if (cpu < 0) {
            cpu = memo_n;
            str(p, "cpu");
        } else {
            put1(p, 'h');
            put1(p, cpu);
        }
        int_op(p, (int)numel(t) * (fault == BIG_STORAGE && i == 1 ? 2 : 1));
        put1(p, 't');
        binput(p);
        put1(p, 'Q'); /* BINPERSID */
        int_op(p, 0);
        int stride[2] = {t->ndim == 2 ? t->shape[1] : 1, 1};
        if (fault == STRIDE && i == 4) stride[0] = 1, stride[1] = t->shape[0];
        ints(p, t->ndim, t->shape);
        ints(p, t->ndim, stride);
        put1(p, 0x89); /* NEWFALSE */
        global(p, "", &od);
        put1(p, ')');
        put1(p, 'R');
        binput(p);
        put1(p, 't');
        binput(p);
        put1(p, 'R');
        binput(p);
    }
    put1(p, 'u');
    put1(p, '.');
}

typedef struct {
    char name[48];
    const uint8_t *bytes;
    size_t n;
    int method;
    size_t local;
} ZipEntry;

/* The zip of the entries: local headers with their data, the central directory, the end record. */
static void write_zip(Buf *z, ZipEntry *e, int n) {
    z->n = 0;
    for (int i = 0; i < n; i++) {
        e[i].local = z->n;
        put_le(z, 0x04034b50, 4);
        put_le(z, 20, 2);
        put_le(z, 0, 2);
        put_le(z, (uint64_t)e[i].method, 2);
        put_le(z, 0, 8); /* time, date, crc (unread) */
        put_le(z, e[i].n, 4);
        put_le(z, e[i].n, 4);
        put_le(z, strlen(e[i].name), 2);
        put_le(z, 0, 2);
        put(z, e[i].name, strlen(e[i].name));
        put(z, e[i].bytes, e[i].n);
    }
    size_t dir = z->n;
    for (int i = 0; i < n; i++) {
        put_le(z, 0x02014b50, 4);
        put_le(z, 20, 2);
        put_le(z, 20, 2);
        put_le(z, 0, 2);
        put_le(z, (uint64_t)e[i].method, 2);
        put_le(z, 0, 8);
        put_le(z, e[i].n, 4);
        put_le(z, e[i].n, 4);
        put_le(z, strlen(e[i].name), 2);
        for (int k = 0; k < 3; k++) put_le(z, 0, 4); /* extra, comment, disk, attributes */
        put_le(z, e[i].local, 4);
        put(z, e[i].name, strlen(e[i].name));
    }
    size_t dir_size = z->n - dir;
    put_le(z, 0x06054b50, 4);
    put_le(z, 0, 4);
    put_le(z, (uint64_t)n, 2);
    put_le(z, (uint64_t)n, 2);
    put_le(z, dir_size, 4);
    put_le(z, dir, 4);
    put_le(z, 0, 2);
}

static Buf pkl, file;

static void write_bin(int fault) {
    static ZipEntry e[N_TENSORS + 2];
    write_pickle(&pkl, fault);
    int n = 0;
    e[n++] = (ZipEntry){"archive/data.pkl", pkl.b, pkl.n, 0, 0};
    for (int i = 0; i < N_TENSORS; i++, n++) {
        snprintf(e[n].name, sizeof e[n].name, "archive/data/%d", i);
        e[n].bytes = (const uint8_t *)tensors[i].w; /* little-endian hosts */
        e[n].n = sizeof(float) * numel(&tensors[i]);
        e[n].method = fault == COMPRESSED && i == 2 ? 8 : 0;
    }
    e[n++] = (ZipEntry){"archive/version", (const uint8_t *)"3\n", 2, 0, 0};
    write_zip(&file, e, n);
}

/* The same tensors as safetensors; returns the header's length (the file in *st). */
static size_t write_safetensors(Buf *st) {
    static char header[8192];
    size_t at = (size_t)snprintf(header, sizeof header, "{"), off = 0;
    for (int i = 0; i < N_TENSORS; i++) {
        const Tensor *t = &tensors[i];
        size_t bytes = sizeof(float) * numel(t);
        char shape[32];
        if (t->ndim == 2)
            snprintf(shape, sizeof shape, "%d,%d", t->shape[0], t->shape[1]);
        else
            snprintf(shape, sizeof shape, "%d", t->shape[0]);
        at += (size_t)snprintf(header + at, sizeof header - at,
                               "%s\"%s\":{\"dtype\":\"F32\",\"shape\":[%s],\"data_offsets\":[%zu,%zu]}", i ? "," : "",
                               t->name, shape, off, off + bytes);
        off += bytes;
    }
    at += (size_t)snprintf(header + at, sizeof header - at, "}");
    st->n = 0;
    put_le(st, at, 8);
    put(st, header, at);
    for (int i = 0; i < N_TENSORS; i++) put(st, tensors[i].w, sizeof(float) * numel(&tensors[i]));
    return at;
}

/* ---- checks --------------------------------------------------------------------------- */

static const Gpt2Config CONFIG = {
    .layers = L, .heads = H, .d_model = C, .d_ff = F, .context = P, .vocab = V, .epsilon = 1e-5};

/* Opens a checkpoint (header, then the data from data_at in chunks of 5 bytes) and returns its logits (T, V). */
static int open_logits(const uint8_t *header, size_t header_len, const uint8_t *data, size_t data_len, size_t size,
                       float *logits) {
    Gpt2 *m = NULL;
    int st = gpt2_open(&m, &CONFIG, header, header_len, (double)size);
    for (size_t at = 0; st == NN_OK && at < data_len; at += 5)
        st = gpt2_load_chunk(m, data + at, data_len - at < 5 ? data_len - at : 5);
    if (st == NN_OK) st = gpt2_load_finish(m);
    int32_t tokens[T] = {1, 5, 9, 2, 1, 5};
    if (st == NN_OK) st = gpt2_inspect(m, tokens, T, NULL, NULL, NULL, NULL, logits);
    gpt2_destroy(m);
    return st;
}

static void test_table(void) {
    check_case("the table of a file torch.save writes");
    write_bin(OK);
    StTable t;
    int st = torch_parse(&t, file.b, file.n, file.n);
    CHECK(st == NN_OK, "torch_parse: %s", nn_last_error());
    if (st != NN_OK) return;
    CHECK(t.count == N_TENSORS && t.data_size == file.n, "%d tensors, data %llu", t.count,
          (unsigned long long)t.data_size);
    for (int i = 0; i < t.count; i++) {
        const StTensor *x = &t.tensors[i];
        const Tensor *w = NULL;
        for (int k = 0; k < N_TENSORS; k++)
            if (!strcmp(tensors[k].name, x->name)) w = &tensors[k];
        CHECK(w != NULL, "%s: not a tensor written", x->name);
        if (!w) continue;
        CHECK(x->dtype == ST_F32 && !strcmp(x->dtype_name, "F32") && x->ndim == w->ndim && x->shape[0] == w->shape[0],
              "%s: dtype %s, %d dimensions", x->name, x->dtype_name, x->ndim);
        CHECK(x->end - x->begin == sizeof(float) * numel(w) && x->end <= file.n &&
                  !memcmp(file.b + x->begin, w->w, x->end - x->begin),
              "%s: bytes [%llu, %llu) are not its values", x->name, (unsigned long long)x->begin,
              (unsigned long long)x->end);
    }
    st_free(&t);
    CHECK(torch_is_zip(file.b, file.n) && !torch_is_zip((const uint8_t *)"PK\3", 3), "torch_is_zip");
}

static void test_logits(void) {
    check_case("gpt2_open: the zip's logits are the safetensors file's");
    static Buf st;
    size_t header_len = write_safetensors(&st);
    static float want[T * V], got[T * V];
    int s1 = open_logits(st.b + 8, header_len, st.b + 8 + header_len, st.n - 8 - header_len, st.n, want);
    write_bin(OK);
    int s2 = open_logits(file.b, file.n, file.b, file.n, file.n, got);
    CHECK(s1 == NN_OK && s2 == NN_OK, "safetensors %d, zip %d: %s", s1, s2, nn_last_error());
    CHECK(!memcmp(want, got, sizeof want), "the logits differ");
    check_case("gpt2_open: a zip given in part is refused");
    Gpt2 *m = NULL;
    CHECK(gpt2_open(&m, &CONFIG, file.b, file.n - 1, (double)file.n) == NN_ERR_VALUE && !m &&
              strstr(nn_last_error(), "the reader takes the whole file"),
          "%s", nn_last_error());
}

static void test_refusals(void) {
    static const struct {
        int fault;
        const char *message;
    } cases[] = {
        {FOREIGN_GLOBAL, "data.pkl: GLOBAL (0x63) at byte "},
        {FOREIGN_GLOBAL, "the global os system is not one a state dict uses"},
        {UNKNOWN_OP, "data.pkl: an unknown opcode (0xff) at byte 2: not an opcode a state dict uses"},
        {MEMO_OUT, "BINGET (0x68) at byte "},
        {MEMO_OUT, "memo index 250 out of range"},
        {STRIDE, "h.0.attn.c_attn.weight: stride (1, 8) is not its shape's contiguous row-major one (24, 1)"},
        {COMPRESSED, "zip: archive/data/2 is compressed (method 8)"},
        {BIG_STORAGE, "data.pkl: storage 1: 128 values of F32, but its entry holds 256 bytes"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        check_case("refused: %s", cases[i].message);
        write_bin(cases[i].fault);
        StTable t;
        int st = torch_parse(&t, file.b, file.n, file.n);
        CHECK(st == NN_ERR_VALUE && strstr(nn_last_error(), cases[i].message), "status %d: %s", st, nn_last_error());
        CHECK(t.tensors == NULL && t.count == 0, "a refused file leaves no table");
    }
    check_case("refused: a file cut short");
    write_bin(OK);
    StTable t;
    int st = torch_parse(&t, file.b, file.n - 1, file.n - 1);
    CHECK(st == NN_ERR_VALUE && strstr(nn_last_error(), "zip: no end record"), "status %d: %s", st, nn_last_error());
}

/* Every prefix and every one-byte change: a status with a message, or a table inside the file. */
static void test_damage(void) {
    write_bin(OK);
    static uint8_t copy[sizeof file.b];
    int bad = 0;
    for (size_t n = 0; n <= file.n + file.n; n++) {
        size_t len = n <= file.n ? n : file.n;
        memcpy(copy, file.b, file.n);
        if (n > file.n) copy[n - file.n - 1] ^= 0x5a;
        StTable t;
        int st = torch_parse(&t, copy, len, len);
        if (st != NN_OK && (st < NN_ERR_SHAPE || st > NN_ERR_NOMEM || !nn_last_error()[0])) bad++;
        for (int i = 0; st == NN_OK && i < t.count; i++)
            if (t.tensors[i].begin > t.tensors[i].end || t.tensors[i].end > len) bad++;
        if (st == NN_OK) st_free(&t);
    }
    check_case("every prefix and every one-byte change of a %zu-byte file", file.n);
    CHECK(bad == 0, "%d results without a status and message, or with bytes outside the file", bad);
}

int main(void) {
    make_tensors();
    test_table();
    test_logits();
    test_refusals();
    test_damage();
    return check_summary();
}
