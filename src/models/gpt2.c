/* GPT-2 checkpoints (include/attnlab/gpt2.h): the config's checks, the
 * tensors a config needs, and opening a safetensors file: its header
 * checked against the config before anything large is allocated, then the
 * weights converted chunk by chunk. The passes are in gpt2_run.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab/attention.h"
#include "base/error.h"
#include "core/vec.h"
#include "models/gpt2_internal.h"

/* The weights' float32 bytes against the heap's room. */
static int check_weight_bytes(double params) {
    double bytes = params * sizeof(float), most = GPT2_MAX_WEIGHT_MB * 1e6;
    if (bytes > most)
        return nn_fail(NN_ERR_LIMIT, "the checkpoint's %.0f parameters take %.2f GB as float32, past the limit of %.2f GB "
                                     "(the WASM heap holds 4 GiB)",
                       params, bytes / 1e9, most / 1e9);
    return NN_OK;
}

int gpt2_check_config(const Gpt2Config *c) {
    nn_clear_error();
    const struct {
        const char *name;
        long long value, lo, hi;
    } sizes[] = {{"n_layer", c->layers, 1, GPT2_MAX_LAYERS},     {"n_head", c->heads, 1, GPT2_MAX_HEADS},
                 {"n_embd", c->d_model, 1, GPT2_MAX_DMODEL},     {"n_inner", c->d_ff, 1, GPT2_MAX_DFF},
                 {"n_positions", c->context, 1, GPT2_MAX_CONTEXT}, {"vocab_size", c->vocab, 1, GPT2_MAX_VOCAB}};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
        NN_TRY(nn_check_size(sizes[i].name, sizes[i].value, sizes[i].lo, sizes[i].hi));
    if (c->d_model % c->heads)
        return nn_fail(NN_ERR_SHAPE, "n_head: %d heads do not divide n_embd %d", c->heads, c->d_model);
    if (!(c->epsilon > 0) || !isfinite(c->epsilon))
        return nn_fail(NN_ERR_VALUE, "layer_norm_epsilon must be a finite number > 0 (got %g)", c->epsilon);
    /* one head's causal attention over the whole context must stay within the core's work limit */
    double work = (double)c->context * c->context * 2.0 * (c->d_model / c->heads);
    if (work > ATTN_MAX_WORK)
        return nn_fail(NN_ERR_LIMIT, "n_positions: %d tokens with heads of width %d take %.3g multiply-adds per head, "
                                     "past the attention's limit of %.3g",
                       c->context, c->d_model / c->heads, work, ATTN_MAX_WORK);
    /* the least a checkpoint of this config holds (tied): its size against the heap's room */
    return check_weight_bytes(gpt2_param_count(c, 1));
}

double gpt2_param_count(const Gpt2Config *c, int tied) {
    double C = c->d_model, F = c->d_ff, V = c->vocab;
    double block = 2 * C + C * 3 * C + 3 * C + C * C + C + 2 * C + C * F + F + F * C + C;
    return V * C + (double)c->context * C + c->layers * block + 2 * C + (tied ? 0 : V * C);
}

/* ---- the tensors a config needs ----------------------------------------------- */

typedef struct {
    char name[48];   /* without the "transformer." prefix */
    int ndim;
    int64_t shape[2];
    nn_real **slot;
    Gpt2Pack pack; /* how it is laid out in memory */
    int found;     /* index of the file's tensor + 1 */
} Expect;

/* The expected tensors in block order (lm_head last, untied only); returns their count. */
static int expected(Gpt2 *m, Expect *e, int tied) {
    const Gpt2Config *c = &m->c;
    int64_t C = c->d_model, F = c->d_ff;
    Gpt2Weights *w = &m->w;
    int n = 0;
#define EXPECT(slot_, pack_, d0, d1, ...)                                 \
    do {                                                                  \
        snprintf(e[n].name, sizeof e[n].name, __VA_ARGS__);               \
        e[n].ndim = (d1) != 0 ? 2 : 1;                                      \
        e[n].shape[0] = (d0);                                             \
        e[n].shape[1] = (d1);                                             \
        e[n].slot = &(slot_);                                             \
        e[n].pack = (pack_);                                              \
        e[n].found = 0;                                                   \
        n++;                                                              \
    } while (0)
    /* the unembedding's matrix (wte when tied) as the products' panels of its transpose */
    EXPECT(w->wte, tied ? GPT2_PACK_TRANSPOSED : GPT2_ROWS, c->vocab, C, "wte.weight");
    EXPECT(w->wpe, GPT2_ROWS, c->context, C, "wpe.weight");
    for (int l = 0; l < c->layers; l++) {
        EXPECT(w->ln1w[l], GPT2_ROWS, C, 0, "h.%d.ln_1.weight", l);
        EXPECT(w->ln1b[l], GPT2_ROWS, C, 0, "h.%d.ln_1.bias", l);
        EXPECT(w->qkvw[l], GPT2_PACK, C, 3 * C, "h.%d.attn.c_attn.weight", l);
        EXPECT(w->qkvb[l], GPT2_ROWS, 3 * C, 0, "h.%d.attn.c_attn.bias", l);
        EXPECT(w->projw[l], GPT2_PACK, C, C, "h.%d.attn.c_proj.weight", l);
        EXPECT(w->projb[l], GPT2_ROWS, C, 0, "h.%d.attn.c_proj.bias", l);
        EXPECT(w->ln2w[l], GPT2_ROWS, C, 0, "h.%d.ln_2.weight", l);
        EXPECT(w->ln2b[l], GPT2_ROWS, C, 0, "h.%d.ln_2.bias", l);
        EXPECT(w->fcw[l], GPT2_PACK, C, F, "h.%d.mlp.c_fc.weight", l);
        EXPECT(w->fcb[l], GPT2_ROWS, F, 0, "h.%d.mlp.c_fc.bias", l);
        EXPECT(w->fcprojw[l], GPT2_PACK, F, C, "h.%d.mlp.c_proj.weight", l);
        EXPECT(w->fcprojb[l], GPT2_ROWS, C, 0, "h.%d.mlp.c_proj.bias", l);
    }
    EXPECT(w->lnfw, GPT2_ROWS, C, 0, "ln_f.weight");
    EXPECT(w->lnfb, GPT2_ROWS, C, 0, "ln_f.bias");
    if (!tied) EXPECT(w->unembed, GPT2_PACK_TRANSPOSED, c->vocab, C, "lm_head.weight");
#undef EXPECT
    return n;
}

#define GPT2_MAX_EXPECTED (4 + 12 * GPT2_MAX_LAYERS + 1)

/* name without the "transformer." prefix */
static const char *bare(const char *name) {
    static const char prefix[] = "transformer.";
    return strncmp(name, prefix, sizeof prefix - 1) ? name : name + sizeof prefix - 1;
}

/* The attention's causal-mask buffers Hugging Face saves with some files: not weights. */
static int ignored(const char *name) {
    int layer, end = 0;
    if (sscanf(name, "h.%d.attn.%n", &layer, &end) != 1 || !end) return 0;
    return !strcmp(name + end, "bias") || !strcmp(name + end, "masked_bias");
}

static int same_shape(const StTensor *t, const Expect *e) {
    if (t->ndim != e->ndim) return 0;
    for (int d = 0; d < e->ndim; d++)
        if (t->shape[d] != e->shape[d]) return 0;
    return 1;
}

static void shape_text(char *out, size_t cap, int ndim, const int64_t *shape) {
    size_t at = (size_t)snprintf(out, cap, "[");
    for (int d = 0; d < ndim && at < cap; d++)
        at += (size_t)snprintf(out + at, cap - at, "%s%lld", d ? ", " : "", (long long)shape[d]);
    if (at < cap) snprintf(out + at, cap - at, "]");
}

/* Matches the file's tensors to the expected ones: every check of a name,
 * dtype and shape, each failure naming the tensor. */
static int match(const StTable *t, Expect *e, int n) {
    for (int i = 0; i < t->count; i++) {
        const StTensor *x = &t->tensors[i];
        const char *name = bare(x->name);
        if (ignored(name)) continue;
        Expect *hit = NULL;
        for (int k = 0; k < n && !hit; k++)
            if (!strcmp(e[k].name, name)) hit = &e[k];
        if (!hit) return nn_fail(NN_ERR_VALUE, "%s: not a tensor of a GPT-2 checkpoint of this config", x->name);
        if (hit->found)
            return nn_fail(NN_ERR_VALUE, "%s: the file holds it twice (as %s too)", x->name,
                           t->tensors[hit->found - 1].name);
        hit->found = i + 1;
        if (x->dtype == ST_OTHER)
            return nn_fail(NN_ERR_VALUE, "%s: dtype %s; weights must be F32, F16 or BF16", x->name, x->dtype_name);
        if (!same_shape(x, hit)) {
            char got[96], want[48];
            shape_text(got, sizeof got, x->ndim, x->shape);
            shape_text(want, sizeof want, hit->ndim, hit->shape);
            return nn_fail(NN_ERR_SHAPE, "%s: shape %s; the config needs %s", x->name, got, want);
        }
    }
    for (int k = 0; k < n; k++)
        if (!e[k].found) return nn_fail(NN_ERR_PARAM, "%s: the file has no such tensor, which the config needs", e[k].name);
    return NN_OK;
}

static int has_lm_head(const StTable *t) {
    for (int i = 0; i < t->count; i++)
        if (!strcmp(bare(t->tensors[i].name), "lm_head.weight")) return 1;
    return 0;
}

/* A packed tensor as the products' B (K, N): the file's (rows, cols), or its transpose. */
static void packed_shape(const Expect *e, int *K, int *N) {
    int d0 = (int)e->shape[0], d1 = e->ndim == 2 ? (int)e->shape[1] : 1;
    *K = e->pack == GPT2_PACK ? d0 : d1;
    *N = e->pack == GPT2_PACK ? d1 : d0;
}

/* Reals of an expected tensor in memory: a packed one's last panel is padded with zeros. */
static size_t tensor_count(const Expect *e) {
    int K, N;
    packed_shape(e, &K, &N);
    return e->pack == GPT2_ROWS ? (size_t)K * N : vec_packed_size(N, K);
}

/* The block expected tensor k goes in: 0 the embeddings, 1 + l layer l's, layers + 1 the rest. */
static int group_of(int k, int layers) { return k < 2 ? 0 : k < 2 + 12 * layers ? 1 + (k - 2) / 12 : layers + 1; }

static int by_begin(const void *a, const void *b) {
    const Gpt2Load *x = a, *y = b;
    return (x->begin > y->begin) - (x->begin < y->begin);
}

int gpt2_open(Gpt2 **out, const Gpt2Config *c, const uint8_t *header, size_t header_len, double file_size) {
    *out = NULL;
    NN_TRY(gpt2_check_config(c));
    if (!(file_size >= 0) || file_size > 9007199254740992.0)
        return nn_fail(NN_ERR_VALUE, "the file's size %g is not a byte count", file_size);
    Gpt2 *m = calloc(1, sizeof *m);
    Expect *e = malloc(sizeof *e * GPT2_MAX_EXPECTED);
    if (!m || !e) {
        free(m);
        free(e);
        return nn_fail(NN_ERR_NOMEM, "out of memory for a GPT-2");
    }
    m->c = *c;
    int st = st_parse(&m->table, header, header_len, (uint64_t)file_size);
    int n = 0;
    if (st == NN_OK) {
        m->tied = !has_lm_head(&m->table);
        n = expected(m, e, m->tied);
        st = match(&m->table, e, n);
    }
    if (st == NN_OK) {
        m->params = gpt2_param_count(c, m->tied);
        st = check_weight_bytes(m->params);
    }
    /* everything is checked: now the weights, a block per group */
    size_t sizes[GPT2_MAX_LAYERS + 2] = {0};
    for (int k = 0; k < n && st == NN_OK; k++) sizes[group_of(k, c->layers)] += tensor_count(&e[k]);
    int allocated = 1;
    for (int g = 0; g < c->layers + 2 && st == NN_OK; g++)
        if (sizes[g]) allocated &= (m->blocks[g] = malloc(sizeof(nn_real) * sizes[g])) != NULL;
    if (st == NN_OK) {
        m->loads = malloc(sizeof *m->loads * (size_t)n);
        m->ablate = calloc((size_t)c->layers * c->heads, 1);
        if (!allocated || !m->loads || !m->ablate)
            st = nn_fail(NN_ERR_NOMEM, "out of memory for %.0f parameters (%.2f GB)", m->params,
                         m->params * sizeof(nn_real) / 1e9);
    }
    if (st != NN_OK) {
        free(e);
        gpt2_destroy(m);
        return st;
    }
    size_t at[GPT2_MAX_LAYERS + 2] = {0};
    for (int k = 0; k < n; k++) {
        const StTensor *x = &m->table.tensors[e[k].found - 1];
        int g = group_of(k, c->layers);
        size_t count = tensor_count(&e[k]);
        *e[k].slot = m->blocks[g] + at[g];
        int64_t cols = e[k].ndim == 2 ? e[k].shape[1] : 1;
        m->loads[k] = (Gpt2Load){x->begin, x->end, x->dtype, *e[k].slot, x->name, e[k].pack, cols};
        if (e[k].pack != GPT2_ROWS) { /* zeros in the last panel's padding (the file fills the rest) */
            int K, N;
            packed_shape(&e[k], &K, &N);
            size_t last = vec_packed_size(1, K);
            memset(*e[k].slot + count - last, 0, sizeof(nn_real) * last);
        }
        at[g] += count;
    }
    if (m->tied) m->w.unembed = m->w.wte;
    m->dtype = (int)m->loads[0].dtype;
    m->n_loads = n;
    qsort(m->loads, (size_t)n, sizeof *m->loads, by_begin);
    free(e);
    *out = m;
    return NN_OK;
}

/* Elements of load x whose last byte is in [pos, pos + n) of the data: an
 * element that began in an earlier chunk takes its first bytes from the tail. */
static int convert(Gpt2 *m, const Gpt2Load *x, const uint8_t *bytes, uint64_t pos, size_t n) {
    int64_t es = st_dtype_size(x->dtype), begin = (int64_t)x->begin, p = (int64_t)pos;
    int64_t count = ((int64_t)x->end - begin) / es;
    int64_t lo = (p - begin + 1 + es - 1) / es - 1, hi = (p + (int64_t)n - begin) / es;
    if (lo < 0) lo = 0;
    if (hi > count) hi = count;
    /* element k is (row, col) of the file's row-major tensor; a packed one goes to its panel */
    int64_t cols = x->cols, rows = count / cols, row = lo / cols, col = lo % cols;
    int nr = vec_panel_width();
    for (int64_t k = lo; k < hi; k++) {
        int64_t e0 = begin + k * es;
        uint8_t b[4];
        for (int64_t i = 0; i < es; i++) {
            int64_t a = e0 + i;
            b[i] = a >= p ? bytes[a - p] : m->tail[8 - (p - a)];
        }
        float v = st_decode(x->dtype, b);
        if (!isfinite(v))
            return nn_fail(NN_ERR_VALUE, "%s[%lld] is %s; weights must be finite numbers", x->name, (long long)k,
                           isnan(v) ? "NaN" : "infinite");
        size_t at = (size_t)k;
        if (x->pack == GPT2_PACK) /* B (rows, cols): panel col / nr, row by row */
            at = (size_t)(col / nr) * rows * nr + (size_t)row * nr + (size_t)(col % nr);
        else if (x->pack == GPT2_PACK_TRANSPOSED) /* B^T: B (cols, rows), panel row / nr */
            at = (size_t)(row / nr) * cols * nr + (size_t)col * nr + (size_t)(row % nr);
        x->dst[at] = (nn_real)v;
        if (++col == cols) col = 0, row++;
    }
    return NN_OK;
}

int gpt2_load_chunk(Gpt2 *m, const uint8_t *bytes, size_t n) {
    nn_clear_error();
    if (m->ready) return nn_fail(NN_ERR_ARG, "the checkpoint is loaded already");
    if (m->loaded + n > m->table.data_size)
        return nn_fail(NN_ERR_VALUE, "the data runs past the %llu bytes the file holds",
                       (unsigned long long)m->table.data_size);
    uint64_t pos = m->loaded, end = pos + n;
    /* tensors that end before this chunk are done; those starting past it wait */
    while (m->next_load < m->n_loads && m->loads[m->next_load].end <= pos) m->next_load++;
    for (int i = m->next_load; i < m->n_loads && m->loads[i].begin < end; i++)
        if (m->loads[i].end > pos) NN_TRY(convert(m, &m->loads[i], bytes, pos, n));
    /* the last 8 bytes of the stream */
    for (size_t i = n > 8 ? n - 8 : 0; i < n; i++) {
        memmove(m->tail, m->tail + 1, 7);
        m->tail[7] = bytes[i];
    }
    m->loaded = end;
    return NN_OK;
}

int gpt2_load_finish(Gpt2 *m) {
    nn_clear_error();
    if (m->loaded != m->table.data_size)
        return nn_fail(NN_ERR_VALUE, "the data ends after %llu of its %llu bytes", (unsigned long long)m->loaded,
                       (unsigned long long)m->table.data_size);
    free(m->loads);
    m->loads = NULL;
    st_free(&m->table);
    m->ready = 1;
    return NN_OK;
}

int gpt2_check_ready(const Gpt2 *m) {
    return m->ready ? NN_OK : nn_fail(NN_ERR_ARG, "the checkpoint's weights are not all loaded");
}

void gpt2_destroy(Gpt2 *m) {
    if (!m) return;
    st_free(&m->table);
    free(m->loads);
    for (int g = 0; g < GPT2_MAX_LAYERS + 2; g++) free(m->blocks[g]);
    free(m->ablate);
    free(m);
}

const Gpt2Config *gpt2_config(const Gpt2 *m) { return &m->c; }
double gpt2_num_params(const Gpt2 *m) { return m->params; }
int gpt2_tied(const Gpt2 *m) { return m->tied; }
int gpt2_dtype(const Gpt2 *m) { return m->dtype; }

int gpt2_set_ablation(Gpt2 *m, const int32_t *pairs, int n) {
    nn_clear_error();
    int L = m->c.layers, H = m->c.heads;
    if (n < 0 || n > L * H) return nn_fail(NN_ERR_SHAPE, "ablate: %d heads; need 0..%d", n, L * H);
    for (int i = 0; i < n; i++)
        if (pairs[2 * i] < 0 || pairs[2 * i] >= L || pairs[2 * i + 1] < 0 || pairs[2 * i + 1] >= H)
            return nn_fail(NN_ERR_VALUE, "ablate[%d]: layer %d, head %d; the model has layers 0..%d and heads 0..%d", i,
                           pairs[2 * i], pairs[2 * i + 1], L - 1, H - 1);
    memset(m->ablate, 0, (size_t)L * H);
    for (int i = 0; i < n; i++) m->ablate[pairs[2 * i] * H + pairs[2 * i + 1]] = 1;
    return NN_OK;
}
