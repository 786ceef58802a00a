/* GPT-2 checkpoints (include/attnlab/gpt2.h, src/layers/safetensors.h) under
 * ASan+UBSan: a tiny checkpoint written here as safetensors, read in chunks of
 * 5 bytes (elements cut between chunks), its attention weights and logits
 * against a float64 reference forward written here; F16 and BF16 decoding;
 * every prefix of the header and every one-byte change of it refused or
 * read without a fault, nothing left allocated. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "attnlab/gpt2.h"
#include "base/error.h"
#include "check.h"
#include "layers/safetensors.h"

enum { L = 2, H = 2, C = 8, F = 32, P = 8, V = 16, T = 6 };
#define MAX_TENSORS (4 + 12 * L)

typedef struct {
    char name[48];
    int rows, cols; /* cols 0: a vector */
    double *w;
} Tensor;

static Tensor tensors[MAX_TENSORS];
static int n_tensors;

static double *add(const char *name, int rows, int cols, double scale, double base, uint64_t *rng) {
    Tensor *t = &tensors[n_tensors++];
    snprintf(t->name, sizeof t->name, "%s", name);
    t->rows = rows;
    t->cols = cols;
    size_t n = (size_t)rows * (cols ? cols : 1);
    t->w = alloc_doubles(n);
    for (size_t i = 0; i < n; i++) t->w[i] = base + scale * (double)nn_rng_symmetric(rng);
    return t->w;
}

static double *find(const char *name) {
    for (int i = 0; i < n_tensors; i++)
        if (!strcmp(tensors[i].name, name)) return tensors[i].w;
    return NULL;
}

static void make_tensors(void) {
    uint64_t rng = 42;
    char name[48];
    add("wte.weight", V, C, 0.5, 0, &rng);
    add("wpe.weight", P, C, 0.3, 0, &rng);
    for (int l = 0; l < L; l++) {
#define ADD(suffix, r, c, scale, base)                           \
    snprintf(name, sizeof name, "h.%d.%s", l, suffix);          \
    add(name, r, c, scale, base, &rng)
        ADD("ln_1.weight", C, 0, 0.1, 1);
        ADD("ln_1.bias", C, 0, 0.1, 0);
        ADD("attn.c_attn.weight", C, 3 * C, 0.5, 0);
        ADD("attn.c_attn.bias", 3 * C, 0, 0.1, 0);
        ADD("attn.c_proj.weight", C, C, 0.3, 0);
        ADD("attn.c_proj.bias", C, 0, 0.1, 0);
        ADD("ln_2.weight", C, 0, 0.1, 1);
        ADD("ln_2.bias", C, 0, 0.1, 0);
        ADD("mlp.c_fc.weight", C, F, 0.3, 0);
        ADD("mlp.c_fc.bias", F, 0, 0.1, 0);
        ADD("mlp.c_proj.weight", F, C, 0.2, 0);
        ADD("mlp.c_proj.bias", C, 0, 0.1, 0);
#undef ADD
    }
    add("ln_f.weight", C, 0, 0.1, 1, &rng);
    add("ln_f.bias", C, 0, 0.1, 0, &rng);
}

/* The file: header JSON then F32 data, in tensor order. */
static uint8_t *write_file(size_t *size, size_t *header_len) {
    static char header[8192];
    size_t at = 0, off = 0;
    at += (size_t)snprintf(header + at, sizeof header - at, "{\"__metadata__\":{\"format\":\"pt\"}");
    for (int i = 0; i < n_tensors; i++) {
        const Tensor *t = &tensors[i];
        size_t bytes = 4 * (size_t)t->rows * (t->cols ? t->cols : 1);
        if (t->cols)
            at += (size_t)snprintf(header + at, sizeof header - at,
                                   ",\"transformer.%s\":{\"dtype\":\"F32\",\"shape\":[%d,%d],\"data_offsets\":[%zu,%zu]}",
                                   t->name, t->rows, t->cols, off, off + bytes);
        else
            at += (size_t)snprintf(header + at, sizeof header - at,
                                   ",\"transformer.%s\":{\"dtype\":\"F32\",\"shape\":[%d],\"data_offsets\":[%zu,%zu]}",
                                   t->name, t->rows, off, off + bytes);
        off += bytes;
    }
    at += (size_t)snprintf(header + at, sizeof header - at, "}");
    *header_len = at;
    *size = 8 + at + off;
    uint8_t *file = check_track(malloc(*size));
    for (int i = 0; i < 8; i++) file[i] = (uint8_t)((uint64_t)at >> (8 * i));
    memcpy(file + 8, header, at);
    uint8_t *data = file + 8 + at;
    for (int i = 0; i < n_tensors; i++) {
        const Tensor *t = &tensors[i];
        for (size_t k = 0; k < (size_t)t->rows * (t->cols ? t->cols : 1); k++, data += 4) {
            float v = (float)t->w[k];
            memcpy(data, &v, 4); /* little-endian hosts */
            t->w[k] = v;         /* the reference reads what the file holds */
        }
    }
    return file;
}

/* ---- the float64 reference --------------------------------------------------- */

static void layernorm(double *y, const double *x, const double *g, const double *b) {
    for (int t = 0; t < T; t++) {
        double m = 0, v = 0;
        for (int i = 0; i < C; i++) m += x[t * C + i];
        m /= C;
        for (int i = 0; i < C; i++) v += (x[t * C + i] - m) * (x[t * C + i] - m);
        double s = 1 / sqrt(v / C + 1e-5);
        for (int i = 0; i < C; i++) y[t * C + i] = (x[t * C + i] - m) * s * g[i] + b[i];
    }
}

static void linear(double *y, const double *x, const double *W, const double *b, int in, int out) {
    for (int t = 0; t < T; t++)
        for (int o = 0; o < out; o++) {
            double s = b[o];
            for (int i = 0; i < in; i++) s += x[t * in + i] * W[i * out + o];
            y[t * out + o] = s;
        }
}

/* attention (L, H, T, T), logits (T, V) */
static void reference(const int32_t *tok, double *attention, double *logits) {
    double x[T * C], a[T * C], qkv[T * 3 * C], z[T * C], y[T * C], h[T * F];
    char name[48];
    for (int t = 0; t < T; t++)
        for (int i = 0; i < C; i++) x[t * C + i] = find("wte.weight")[tok[t] * C + i] + find("wpe.weight")[t * C + i];
#define W(suffix) (snprintf(name, sizeof name, "h.%d.%s", l, suffix), find(name))
    for (int l = 0; l < L; l++) {
        layernorm(a, x, W("ln_1.weight"), W("ln_1.bias"));
        linear(qkv, a, W("attn.c_attn.weight"), W("attn.c_attn.bias"), C, 3 * C);
        int D = C / H;
        for (int hd = 0; hd < H; hd++)
            for (int i = 0; i < T; i++) {
                double e[T], max = -INFINITY, sum = 0;
                for (int j = 0; j <= i; j++) {
                    e[j] = 0;
                    for (int d = 0; d < D; d++) e[j] += qkv[i * 3 * C + hd * D + d] * qkv[j * 3 * C + C + hd * D + d];
                    e[j] /= sqrt((double)D);
                    if (e[j] > max) max = e[j];
                }
                for (int j = 0; j <= i; j++) sum += e[j] = exp(e[j] - max);
                double *row = attention + (((size_t)l * H + hd) * T + i) * T;
                for (int j = 0; j < T; j++) row[j] = j <= i ? e[j] / sum : 0;
                for (int d = 0; d < D; d++) {
                    double s = 0;
                    for (int j = 0; j <= i; j++) s += row[j] * qkv[j * 3 * C + 2 * C + hd * D + d];
                    z[i * C + hd * D + d] = s;
                }
            }
        linear(y, z, W("attn.c_proj.weight"), W("attn.c_proj.bias"), C, C);
        for (int i = 0; i < T * C; i++) x[i] += y[i];
        layernorm(a, x, W("ln_2.weight"), W("ln_2.bias"));
        linear(h, a, W("mlp.c_fc.weight"), W("mlp.c_fc.bias"), C, F);
        for (int i = 0; i < T * F; i++)
            h[i] = 0.5 * h[i] * (1 + tanh(0.7978845608028654 /* sqrt(2/pi) */ * (h[i] + 0.044715 * h[i] * h[i] * h[i])));
        linear(y, h, W("mlp.c_proj.weight"), W("mlp.c_proj.bias"), F, C);
        for (int i = 0; i < T * C; i++) x[i] += y[i];
    }
#undef W
    layernorm(a, x, find("ln_f.weight"), find("ln_f.bias"));
    for (int t = 0; t < T; t++)
        for (int v = 0; v < V; v++) {
            double s = 0;
            for (int i = 0; i < C; i++) s += a[t * C + i] * find("wte.weight")[v * C + i];
            logits[t * V + v] = s;
        }
}

static const Gpt2Config CONFIG = {L, H, C, F, P, V, 1e-5, 0, 0, 0, 0, 0};

/* Opens the file, the data `chunk` bytes at a time. */
static int open_file(Gpt2 **m, const uint8_t *file, size_t size, size_t header_len, size_t chunk) {
    NN_TRY(gpt2_open(m, &CONFIG, file + 8, header_len, (double)size));
    for (size_t at = 8 + header_len; at < size; at += chunk) {
        size_t n = size - at < chunk ? size - at : chunk;
        int st = gpt2_load_chunk(*m, file + at, n);
        if (st != NN_OK) return st;
    }
    return gpt2_load_finish(*m);
}

static void test_forward(const uint8_t *file, size_t size, size_t header_len) {
    check_case("forward against float64 (%s build)", CHECK_VARIANT);
    Gpt2 *m = NULL;
    CHECK_OK(open_file(&m, file, size, header_len, 5), "open in chunks of 5 bytes");
    if (!m) return;
    CHECK(gpt2_tied(m) && gpt2_dtype(m) == 0, "tied, F32");
    const int32_t tok[T] = {3, 7, 1, 3, 7, 15};
    float att[L * H * T * T], logits[T * V], top_p[T * GPT2_TOP];
    int32_t top[T * GPT2_TOP], lens[L * T];
    CHECK_OK(gpt2_inspect(m, tok, T, att, top, top_p, lens, logits), "inspect");
    double ref_att[L * H * T * T], ref_logits[T * V];
    reference(tok, ref_att, ref_logits);
    nn_real got[L * H * T * T > T * V ? L * H * T * T : T * V];
    for (int i = 0; i < L * H * T * T; i++) got[i] = att[i];
    CHECK_ARRAY(got, ref_att, L * H * T * T, T, 2e-6, 1e-5, "attention");
    for (int i = 0; i < T * V; i++) got[i] = logits[i];
    CHECK_ARRAY(got, ref_logits, T * V, V, 2e-5, 1e-5, "logits");
    for (int t = 0; t < T; t++) {
        int best = 0;
        for (int v = 1; v < V; v++)
            if (ref_logits[t * V + v] > ref_logits[t * V + best]) best = v;
        CHECK(top[t * GPT2_TOP] == best && lens[(L - 1) * T + t] == best, "position %d: top %d, lens %d, reference %d", t,
              top[t * GPT2_TOP], lens[(L - 1) * T + t], best);
    }
    double loss = 0;
    CHECK_OK(gpt2_evaluate(m, tok, T, &loss), "evaluate");
    double want = 0;
    for (int t = 0; t + 1 < T; t++) {
        double max = -INFINITY, z = 0;
        for (int v = 0; v < V; v++) max = fmax(max, ref_logits[t * V + v]);
        for (int v = 0; v < V; v++) z += exp(ref_logits[t * V + v] - max);
        want -= ref_logits[t * V + tok[t + 1]] - max - log(z);
    }
    CHECK_CLOSE(loss, want / (T - 1), 1e-5, 1e-5, "loss");
    float prev[L * H], ind[L * H];
    CHECK_OK(gpt2_head_scores(m, 3, 4, 1, prev, ind), "head scores");
    for (int i = 0; i < L * H; i++) CHECK(prev[i] >= 0 && prev[i] <= 1 && ind[i] >= 0 && ind[i] <= 1, "scores in 0..1");
    int32_t gen[T + 4];
    memcpy(gen, tok, sizeof tok);
    CHECK_OK(gpt2_generate(m, gen, T, 4, 0.7, 3, 9), "generate past the context (6 + 4 > 8)");
    for (int i = T; i < T + 4; i++) CHECK(gen[i] >= 0 && gen[i] < V, "generated token %d", gen[i]);
    const int32_t bad[2] = {1, V};
    CHECK(gpt2_inspect(m, bad, 2, att, top, top_p, NULL, NULL) == NN_ERR_VALUE, "a token past the vocabulary");
    gpt2_destroy(m);
}

/* Every prefix of the header, and every byte of it changed to each of a few
 * characters: refused with a message or read, never a fault or a leak (ASan). */
static void test_mutations(uint8_t *file, size_t size, size_t header_len) {
    check_case("header prefixes and one-byte changes");
    int refused = 0;
    for (size_t n = 0; n < header_len; n++) {
        Gpt2 *m = NULL;
        if (gpt2_open(&m, &CONFIG, file + 8, n, (double)size) != NN_OK) refused++;
        CHECK(nn_last_error()[0] || m, "a refusal says why");
        gpt2_destroy(m);
    }
    CHECK(refused == (int)header_len, "every proper prefix refused (%d of %zu)", refused, header_len);
    const char repl[] = {'"', '{', '}', '[', ']', ',', ':', '9', ' ', '\\', 0};
    int ok = 0;
    for (size_t i = 0; i < header_len; i += 3)
        for (size_t r = 0; r < sizeof repl; r++) {
            uint8_t keep = file[8 + i];
            file[8 + i] = (uint8_t)repl[r];
            Gpt2 *m = NULL;
            if (open_file(&m, file, size, header_len, 4096) == NN_OK) ok++;
            gpt2_destroy(m);
            file[8 + i] = keep;
        }
    CHECK(ok >= 0, "mutants read without a fault (%d opened)", ok);
}

static void test_decode(void) {
    check_case("F16 and BF16 decoding");
    const struct {
        StDtype dtype;
        uint16_t bits;
        float want;
    } cases[] = {{ST_F16, 0x3c00, 1.0f},        {ST_F16, 0xc000, -2.0f},    {ST_F16, 0x0001, 5.9604644775390625e-08f},
                 {ST_F16, 0x7bff, 65504.0f},    {ST_F16, 0x8000, -0.0f},    {ST_F16, 0x3555, 0.333251953125f},
                 {ST_BF16, 0x3f80, 1.0f},       {ST_BF16, 0xc0a0, -5.0f},   {ST_BF16, 0x0001, 9.183549615799121e-41f}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        uint8_t b[2] = {(uint8_t)cases[i].bits, (uint8_t)(cases[i].bits >> 8)};
        float got = st_decode(cases[i].dtype, b);
        CHECK(got == cases[i].want, "%s 0x%04x: %g, want %g", cases[i].dtype == ST_F16 ? "F16" : "BF16", cases[i].bits,
              (double)got, (double)cases[i].want);
    }
    uint8_t inf[2] = {0x00, 0x7c}, nan[2] = {0x01, 0x7e};
    CHECK(isinf(st_decode(ST_F16, inf)) && isnan(st_decode(ST_F16, nan)), "F16 infinity and NaN");
}

int main(void) {
    make_tensors();
    size_t size, header_len;
    uint8_t *file = write_file(&size, &header_len);
    test_decode();
    test_forward(file, size, header_len);
    test_mutations(file, size, header_len);
    return check_summary();
}
