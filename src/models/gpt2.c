/* GPT-2 checkpoints (include/attnlab/gpt2.h): the config's checks, the
 * tensors a config needs, and opening a safetensors file: its header
 * checked against the config before anything large is allocated, then the
 * weights converted chunk by chunk. The passes are in decoder_run.c. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab/attention.h"
#include "base/error.h"
#include "core/vec.h"
#include "layers/torch_file.h"
#include "models/decoder.h"
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
        return nn_fail(NN_ERR_VALUE, "%s must be a finite number > 0 (got %g)",
                       c->neox ? "layer_norm_eps" : "layer_norm_epsilon", c->epsilon);
    if (c->neox) {
        int D = c->d_model / c->heads;
        if (c->rotary_dims < 2 || c->rotary_dims > D || c->rotary_dims % 2)
            return nn_fail(NN_ERR_VALUE, "rotary_pct: %d of a head's %d dimensions turned; need an even number 2..%d",
                           c->rotary_dims, D, D);
        if (!(c->rotary_base > 0) || !isfinite(c->rotary_base))
            return nn_fail(NN_ERR_VALUE, "rotary_emb_base must be a finite number > 0 (got %g)", c->rotary_base);
    }
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
    return V * C + (c->neox ? 0 : (double)c->context * C) + c->layers * block + 2 * C + (tied ? 0 : V * C);
}

/* ---- the tensors a config needs ----------------------------------------------- */

typedef struct {
    char name[80];   /* without the "transformer." prefix */
    int ndim;
    int64_t shape[2];
    nn_real **slot;
    Gpt2Pack pack; /* how it is laid out in memory */
    int found;     /* index of the file's tensor + 1 */
    int group;     /* the block it goes in: 0 the embeddings, 1 + l layer l's, layers + 1 the rest */
    int head_d;    /* Gpt2Load's */
} Expect;

/* The expected tensors in block order (the unembedding last, untied only); returns their count. */
static int expected(Gpt2 *m, Expect *e, int tied) {
    const Gpt2Config *c = &m->c;
    int64_t C = c->d_model, F = c->d_ff;
    DecWeights *w = &m->w;
    int n = 0, group = 0, head_d = 0;
#define EXPECT(slot_, pack_, d0, d1, ...)                                 \
    do {                                                                  \
        snprintf(e[n].name, sizeof e[n].name, __VA_ARGS__);               \
        e[n].ndim = (d1) != 0 ? 2 : 1;                                      \
        e[n].shape[0] = (d0);                                             \
        e[n].shape[1] = (d1);                                             \
        e[n].slot = &(slot_);                                             \
        e[n].pack = (pack_);                                              \
        e[n].found = 0;                                                   \
        e[n].group = group;                                               \
        e[n].head_d = head_d;                                             \
        n++;                                                              \
    } while (0)
    /* A layer's tensors in each layout: its slot in DecWeights, GPT-2's name and GPT-NeoX's, and
     * its shape as (rows, cols) in C, F units (GPT-2's Conv1D [in, out]; GPT-NeoX's nn.Linear is
     * [out, in], B^T of the products' B); cols 0 for a vector. */
    enum { ONE_C = 1, THREE_C = 3, ONE_F = -1 };
    static const struct {
        size_t slot;
        const char *gpt2, *neox;
        int rows, cols;
    } layer[] = {
        {offsetof(DecWeights, ln1w), "h.%d.ln_1.weight", "gpt_neox.layers.%d.input_layernorm.weight", ONE_C, 0},
        {offsetof(DecWeights, ln1b), "h.%d.ln_1.bias", "gpt_neox.layers.%d.input_layernorm.bias", ONE_C, 0},
        {offsetof(DecWeights, qkvw), "h.%d.attn.c_attn.weight", "gpt_neox.layers.%d.attention.query_key_value.weight",
         ONE_C, THREE_C},
        {offsetof(DecWeights, qkvb), "h.%d.attn.c_attn.bias", "gpt_neox.layers.%d.attention.query_key_value.bias",
         THREE_C, 0},
        {offsetof(DecWeights, projw), "h.%d.attn.c_proj.weight", "gpt_neox.layers.%d.attention.dense.weight", ONE_C,
         ONE_C},
        {offsetof(DecWeights, projb), "h.%d.attn.c_proj.bias", "gpt_neox.layers.%d.attention.dense.bias", ONE_C, 0},
        {offsetof(DecWeights, ln2w), "h.%d.ln_2.weight", "gpt_neox.layers.%d.post_attention_layernorm.weight", ONE_C, 0},
        {offsetof(DecWeights, ln2b), "h.%d.ln_2.bias", "gpt_neox.layers.%d.post_attention_layernorm.bias", ONE_C, 0},
        {offsetof(DecWeights, fcw), "h.%d.mlp.c_fc.weight", "gpt_neox.layers.%d.mlp.dense_h_to_4h.weight", ONE_C, ONE_F},
        {offsetof(DecWeights, fcb), "h.%d.mlp.c_fc.bias", "gpt_neox.layers.%d.mlp.dense_h_to_4h.bias", ONE_F, 0},
        {offsetof(DecWeights, fcprojw), "h.%d.mlp.c_proj.weight", "gpt_neox.layers.%d.mlp.dense_4h_to_h.weight", ONE_F,
         ONE_C},
        {offsetof(DecWeights, fcprojb), "h.%d.mlp.c_proj.bias", "gpt_neox.layers.%d.mlp.dense_4h_to_h.bias", ONE_C, 0},
    };
#define UNITS(u) ((u) == ONE_F ? F : (u) * C)
    int neox = c->neox;
    /* the unembedding's matrix (the token embedding when tied) as the products' panels of its transpose */
    Gpt2Pack matrix = neox ? GPT2_PACK_TRANSPOSED : GPT2_PACK;
    EXPECT(w->wte, tied ? GPT2_PACK_TRANSPOSED : GPT2_ROWS, c->vocab, C, neox ? "gpt_neox.embed_in.weight" : "wte.weight");
    if (!neox) EXPECT(w->wpe, GPT2_ROWS, c->context, C, "wpe.weight");
    for (int l = 0; l < c->layers; l++) {
        group = 1 + l;
        for (size_t k = 0; k < sizeof layer / sizeof *layer; k++) {
            nn_real **slot = (nn_real **)((char *)w + layer[k].slot) + l;
            int64_t rows = UNITS(layer[k].rows), cols = layer[k].cols ? UNITS(layer[k].cols) : 0;
            /* GPT-NeoX's query_key_value: outputs (head, q|k|v, D) */
            int qkv = layer[k].slot == offsetof(DecWeights, qkvw) || layer[k].slot == offsetof(DecWeights, qkvb);
            head_d = neox && qkv ? (int)(C / c->heads) : 0;
            const char *name = neox ? layer[k].neox : layer[k].gpt2;
            if (cols && neox) EXPECT(*slot, matrix, cols, rows, name, l); /* [out, in] */
            else EXPECT(*slot, cols ? matrix : GPT2_ROWS, rows, cols, name, l);
        }
        head_d = 0;
    }
    group = c->layers + 1;
    EXPECT(w->lnfw, GPT2_ROWS, C, 0, neox ? "gpt_neox.final_layer_norm.weight" : "ln_f.weight");
    EXPECT(w->lnfb, GPT2_ROWS, C, 0, neox ? "gpt_neox.final_layer_norm.bias" : "ln_f.bias");
    if (!tied) EXPECT(w->unembed, GPT2_PACK_TRANSPOSED, c->vocab, C, neox ? "embed_out.weight" : "lm_head.weight");
#undef UNITS
#undef EXPECT
    return n;
}

static size_t tensor_count(const Expect *e);

int gpt2_tensors(Gpt2 *m, Gpt2Tensor *out) {
    Expect *e = malloc(sizeof *e * GPT2_MAX_EXPECTED);
    if (!e) return -1;
    int n = expected(m, e, m->tied);
    for (int k = 0; k < n; k++) out[k] = (Gpt2Tensor){e[k].slot, tensor_count(&e[k]), e[k].ndim == 2};
    free(e);
    return n;
}

/* name without the "transformer." prefix */
static const char *bare(const char *name) {
    static const char prefix[] = "transformer.";
    return strncmp(name, prefix, sizeof prefix - 1) ? name : name + sizeof prefix - 1;
}

/* The buffers Hugging Face saves with some files: the attention's causal mask
 * (GPT-2, GPT-NeoX) and GPT-NeoX's rotary frequencies. Not weights. */
static int ignored(const char *name) {
    int layer, end = 0;
    if (sscanf(name, "h.%d.attn.%n", &layer, &end) == 1 && end)
        return !strcmp(name + end, "bias") || !strcmp(name + end, "masked_bias");
    end = 0;
    if (sscanf(name, "gpt_neox.layers.%d.attention.%n", &layer, &end) == 1 && end)
        return !strcmp(name + end, "bias") || !strcmp(name + end, "masked_bias") ||
               !strcmp(name + end, "rotary_emb.inv_freq");
    return 0;
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
static int match(const StTable *t, Expect *e, int n, const char *arch) {
    for (int i = 0; i < t->count; i++) {
        const StTensor *x = &t->tensors[i];
        const char *name = bare(x->name);
        if (ignored(name)) continue;
        Expect *hit = NULL;
        for (int k = 0; k < n && !hit; k++)
            if (!strcmp(e[k].name, name)) hit = &e[k];
        if (!hit) return nn_fail(NN_ERR_VALUE, "%s: not a tensor of a %s checkpoint of this config", x->name, arch);
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

/* Whether the file has an unembedding of its own (GPT-2's lm_head, GPT-NeoX's embed_out). */
static int has_unembed(const StTable *t, int neox) {
    for (int i = 0; i < t->count; i++)
        if (!strcmp(bare(t->tensors[i].name), neox ? "embed_out.weight" : "lm_head.weight")) return 1;
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
    m->packed = 1;
    m->score = ATTN_SCORE_SCALED_DOT;
    m->score_beta = 1;
    m->rope_half = 1;
    m->gen = (DecGenerateLimits){c->vocab, GPT2_MAX_GENERATE + c->context, GPT2_MAX_GENERATE};
    /* a pytorch_model.bin (a zip) comes whole, its data counted from its first byte; a safetensors header alone */
    int st = torch_is_zip(header, header_len) ? torch_parse(&m->table, header, header_len, (uint64_t)file_size)
                                              : st_parse(&m->table, header, header_len, (uint64_t)file_size);
    int n = 0;
    if (st == NN_OK) {
        m->tied = !has_unembed(&m->table, c->neox);
        n = expected(m, e, m->tied);
        st = match(&m->table, e, n, c->neox ? "GPT-NeoX" : "GPT-2");
    }
    if (st == NN_OK) {
        m->params = gpt2_param_count(c, m->tied);
        st = check_weight_bytes(m->params);
    }
    /* everything is checked: now the weights, a block per group */
    size_t sizes[GPT2_MAX_LAYERS + 2] = {0};
    for (int k = 0; k < n && st == NN_OK; k++) sizes[e[k].group] += tensor_count(&e[k]);
    int allocated = 1;
    for (int g = 0; g < c->layers + 2 && st == NN_OK; g++)
        if (sizes[g]) allocated &= (m->blocks[g] = malloc(sizeof(nn_real) * sizes[g])) != NULL;
    if (st == NN_OK) {
        m->loads = malloc(sizeof *m->loads * (size_t)n);
        m->ablate = calloc((size_t)c->layers * c->heads, 1);
        if (c->neox) m->rope = malloc(sizeof(nn_real) * (size_t)c->context * c->rotary_dims);
        if (!allocated || !m->loads || !m->ablate || (c->neox && !m->rope))
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
        int g = e[k].group;
        size_t count = tensor_count(&e[k]);
        *e[k].slot = m->blocks[g] + at[g];
        int64_t cols = e[k].ndim == 2 ? e[k].shape[1] : 1;
        m->loads[k] = (Gpt2Load){x->begin, x->end, x->dtype, *e[k].slot, x->name, e[k].pack, cols, e[k].head_d};
        if (e[k].pack != GPT2_ROWS) { /* zeros in the last panel's padding (the file fills the rest) */
            int K, N;
            packed_shape(&e[k], &K, &N);
            size_t last = vec_packed_size(1, K);
            memset(*e[k].slot + count - last, 0, sizeof(nn_real) * last);
        }
        at[g] += count;
    }
    if (m->tied) m->w.unembed = m->w.wte;
    if (m->rope) attn_rope_table(m->rope, c->context, c->rotary_dims / 2, c->rotary_dims, c->rotary_base);
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
    int64_t D = x->head_d, width = rows / 3; /* GPT-NeoX's query_key_value: width C */
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
        /* output row (head h, s of q|k|v, d) of a head-major query_key_value is column s C + h D + d */
        int64_t out = D ? (row / D % 3) * width + row / (3 * D) * D + row % D : row;
        size_t at = (size_t)k;
        if (x->pack == GPT2_PACK) /* B (rows, cols): panel col / nr, row by row */
            at = (size_t)(col / nr) * rows * nr + (size_t)row * nr + (size_t)(col % nr);
        else if (x->pack == GPT2_PACK_TRANSPOSED) /* B^T: B (cols, rows), panel row / nr */
            at = (size_t)(out / nr) * cols * nr + (size_t)col * nr + (size_t)(out % nr);
        else if (cols == 1) /* a vector (a bias) */
            at = (size_t)out;
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
    if (m->opt) opt_free(m->opt);
    free(m->opt);
    free(m->ablate);
    free(m->rope);
    free(m);
}

const Gpt2Config *gpt2_config(const Gpt2 *m) { return &m->c; }
double gpt2_num_params(const Gpt2 *m) { return m->params; }
int gpt2_tied(const Gpt2 *m) { return m->tied; }
int gpt2_dtype(const Gpt2 *m) { return m->dtype; }

int gpt2_set_ablation(Gpt2 *m, const int32_t *pairs, int n) {
    return dec_set_ablation(m->ablate, m->c.heads, m->c.layers, m->c.heads, pairs, n);
}
