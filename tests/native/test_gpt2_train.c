/* Fine-tuning checkpoints (gpt2_train, include/attnlab/gpt2.h): for tiny
 * checkpoints written here in four layouts (GPT-2 tied, GPT-2 with its own
 * lm_head, GPT-NeoX with rotary 0.25, a parallel residual and the exact
 * GELU, GPT-NeoX with rotary 1, a sequential residual and the tanh GELU),
 * every weight's gradient of the next-token loss (gpt2_gradients, through
 * the weights in their packed panels) against central differences of the
 * loss (gpt2_evaluate's forward); then training lowers the loss, undo puts
 * every weight back, and bad arguments change nothing. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "attnlab/gpt2.h"
#include "base/error.h"
#include "check.h"
#include "models/gpt2_internal.h"

enum { C = 16, H = 2, F = 24, P = 12, V = 20, L = 2, T = 5, B = 2 };

#ifdef NN_DOUBLE
#define FD_H 1e-6
#define FD_ATOL 1e-7
#define FD_RTOL 1e-5
#else
#define FD_H 3e-3
#define FD_ATOL 3e-3
#define FD_RTOL 5e-2
#endif

typedef struct {
    const char *name;
    int neox, tied, rotary_dims, parallel, gelu_exact;
} Layout;

static const Layout LAYOUTS[] = {
    {"GPT-2 tied", 0, 1, 0, 0, 0},
    {"GPT-2 with lm_head", 0, 0, 0, 0, 0},
    {"GPT-NeoX rotary 0.25, parallel, exact GELU", 1, 0, 2, 1, 1},
    {"GPT-NeoX rotary 1, sequential, tanh GELU", 1, 0, 8, 0, 0},
};

/* The file: header JSON then F32 data, tensors of random values (gains near 1). */
typedef struct {
    char header[16384];
    size_t at, off;
    float data[40000];
    size_t n;
    uint64_t rng;
} Writer;

static void tensor(Writer *w, const char *name, int rows, int cols, double scale, double base) {
    size_t count = (size_t)rows * (cols ? cols : 1), bytes = 4 * count;
    if (cols)
        w->at += (size_t)snprintf(w->header + w->at, sizeof w->header - w->at,
                                  ",\"%s\":{\"dtype\":\"F32\",\"shape\":[%d,%d],\"data_offsets\":[%zu,%zu]}", name, rows,
                                  cols, w->off, w->off + bytes);
    else
        w->at += (size_t)snprintf(w->header + w->at, sizeof w->header - w->at,
                                  ",\"%s\":{\"dtype\":\"F32\",\"shape\":[%d],\"data_offsets\":[%zu,%zu]}", name, rows,
                                  w->off, w->off + bytes);
    w->off += bytes;
    for (size_t i = 0; i < count; i++) w->data[w->n++] = (float)(base + scale * nn_rng_symmetric(&w->rng));
}

static Gpt2 *open_layout(const Layout *y) {
    static Writer w;
    memset(&w, 0, sizeof w);
    w.rng = 7;
    w.at = (size_t)snprintf(w.header, sizeof w.header, "{\"__metadata__\":{\"format\":\"pt\"}");
    char name[96];
#define T2(fmt, r, c, scale, base)                        \
    snprintf(name, sizeof name, fmt, l);                  \
    tensor(&w, name, r, c, scale, base)
    if (!y->neox) {
        tensor(&w, "wte.weight", V, C, 0.5, 0);
        tensor(&w, "wpe.weight", P, C, 0.3, 0);
        for (int l = 0; l < L; l++) {
            T2("h.%d.ln_1.weight", C, 0, 0.1, 1);
            T2("h.%d.ln_1.bias", C, 0, 0.1, 0);
            T2("h.%d.attn.c_attn.weight", C, 3 * C, 0.5, 0);
            T2("h.%d.attn.c_attn.bias", 3 * C, 0, 0.1, 0);
            T2("h.%d.attn.c_proj.weight", C, C, 0.3, 0);
            T2("h.%d.attn.c_proj.bias", C, 0, 0.1, 0);
            T2("h.%d.ln_2.weight", C, 0, 0.1, 1);
            T2("h.%d.ln_2.bias", C, 0, 0.1, 0);
            T2("h.%d.mlp.c_fc.weight", C, F, 0.3, 0);
            T2("h.%d.mlp.c_fc.bias", F, 0, 0.1, 0);
            T2("h.%d.mlp.c_proj.weight", F, C, 0.2, 0);
            T2("h.%d.mlp.c_proj.bias", C, 0, 0.1, 0);
        }
        tensor(&w, "ln_f.weight", C, 0, 0.1, 1);
        tensor(&w, "ln_f.bias", C, 0, 0.1, 0);
        if (!y->tied) tensor(&w, "lm_head.weight", V, C, 0.5, 0);
    } else {
        tensor(&w, "gpt_neox.embed_in.weight", V, C, 0.5, 0);
        for (int l = 0; l < L; l++) {
            T2("gpt_neox.layers.%d.input_layernorm.weight", C, 0, 0.1, 1);
            T2("gpt_neox.layers.%d.input_layernorm.bias", C, 0, 0.1, 0);
            T2("gpt_neox.layers.%d.post_attention_layernorm.weight", C, 0, 0.1, 1);
            T2("gpt_neox.layers.%d.post_attention_layernorm.bias", C, 0, 0.1, 0);
            T2("gpt_neox.layers.%d.attention.query_key_value.weight", 3 * C, C, 0.5, 0);
            T2("gpt_neox.layers.%d.attention.query_key_value.bias", 3 * C, 0, 0.1, 0);
            T2("gpt_neox.layers.%d.attention.dense.weight", C, C, 0.3, 0);
            T2("gpt_neox.layers.%d.attention.dense.bias", C, 0, 0.1, 0);
            T2("gpt_neox.layers.%d.mlp.dense_h_to_4h.weight", F, C, 0.3, 0);
            T2("gpt_neox.layers.%d.mlp.dense_h_to_4h.bias", F, 0, 0.1, 0);
            T2("gpt_neox.layers.%d.mlp.dense_4h_to_h.weight", C, F, 0.2, 0);
            T2("gpt_neox.layers.%d.mlp.dense_4h_to_h.bias", C, 0, 0.1, 0);
        }
        tensor(&w, "gpt_neox.final_layer_norm.weight", C, 0, 0.1, 1);
        tensor(&w, "gpt_neox.final_layer_norm.bias", C, 0, 0.1, 0);
        tensor(&w, "embed_out.weight", V, C, 0.5, 0);
    }
#undef T2
    w.at += (size_t)snprintf(w.header + w.at, sizeof w.header - w.at, "}");
    Gpt2Config c = {L, H, C, F, P, V, 1e-5, y->neox, y->rotary_dims, 10000, y->parallel, y->gelu_exact};
    Gpt2 *m = NULL;
    int st = gpt2_open(&m, &c, (const uint8_t *)w.header, w.at, (double)(8 + w.at + w.off));
    if (st == NN_OK) st = gpt2_load_chunk(m, (const uint8_t *)w.data, w.off);
    if (st == NN_OK) st = gpt2_load_finish(m);
    CHECK_OK(st, "open the checkpoint");
    if (st != NN_OK) {
        gpt2_destroy(m);
        return NULL;
    }
    return m;
}

static const int32_t WINDOWS[B * (T + 1)] = {3, 7, 1, 19, 3, 7, 11, 0, 4, 4, 9, 2};

/* The loss gpt2_gradients differentiates: each window's mean next-token
 * cross-entropy, averaged (the windows are of one length). */
static double loss_of(void *ctx) {
    Gpt2 *m = ctx;
    double sum = 0;
    for (int b = 0; b < B; b++) {
        double l = 0;
        if (gpt2_evaluate(m, WINDOWS + b * (T + 1), T + 1, &l) != NN_OK) return NAN;
        sum += l;
    }
    return sum / B;
}

static void test_gradients(const Layout *y) {
    check_case("%s: every weight's gradient against central differences (%s build)", y->name, CHECK_VARIANT);
    Gpt2 *m = open_layout(y);
    if (!m) return;
    Gpt2Tensor t[GPT2_MAX_EXPECTED];
    int n = gpt2_tensors(m, t);
    /* a gradient view laid out as the weights */
    DecWeights dw;
    memset(&dw, 0, sizeof dw);
    size_t mark = alloc_mark();
    for (int k = 0; k < n; k++) {
        nn_real **slot = (nn_real **)((char *)&dw + ((char *)t[k].slot - (char *)&m->w));
        *slot = alloc_reals(t[k].count);
        memset(*slot, 0, sizeof(nn_real) * t[k].count);
    }
    if (y->tied) dw.unembed = dw.wte;
    double loss = 0;
    CHECK_OK(gpt2_gradients(m, &dw, WINDOWS, B, T, &loss), "gpt2_gradients");
    CHECK_CLOSE(loss, loss_of(m), 20 * TOL_EPS, 20 * TOL_EPS, "its loss is evaluate's");
    int bad = 0;
    size_t checked = 0;
    double worst = 0;
    for (int k = 0; k < n; k++) {
        nn_real *x = *t[k].slot, *g = *(nn_real **)((char *)&dw + ((char *)t[k].slot - (char *)&m->w));
        for (size_t i = 0; i < t[k].count; i++) {
            nn_real x0 = x[i], xp = (nn_real)(x0 + FD_H), xm = (nn_real)(x0 - FD_H);
            x[i] = xp;
            double lp = loss_of(m);
            x[i] = xm;
            double lm = loss_of(m);
            x[i] = x0;
            double num = (lp - lm) / ((double)xp - (double)xm), gap = fabs(num - g[i]);
            checked++;
            if (gap > FD_ATOL + FD_RTOL * fabs(num)) {
                if (bad++ < 5)
                    CHECK(0, "%s: tensor %d element %zu: gradient %.9g, differences %.9g", y->name, k, i,
                          (double)g[i], num);
            }
            if (gap / (FD_ATOL + fabs(num)) > worst) worst = gap / (FD_ATOL + fabs(num));
        }
    }
    CHECK(bad == 0, "%s: %d of %zu gradients off the differences (worst relative gap %.3g)", y->name, bad, checked,
          worst);
    CHECK(checked > 4000, "%s: %zu weights checked", y->name, checked);
    alloc_release(mark);
    gpt2_destroy(m);
}

static void test_training(const Layout *y) {
    check_case("%s: training lowers the loss, undo puts it back, bad calls change nothing (%s build)", y->name,
               CHECK_VARIANT);
    Gpt2 *m = open_layout(y);
    if (!m) return;
    /* a text of a repeated phrase: the next token is always known */
    int32_t data[240];
    static const int32_t phrase[] = {5, 9, 2, 14, 7, 1, 18, 3};
    for (int i = 0; i < 240; i++) data[i] = phrase[i % 8];
    double before = 0, after = 0, undone = 0;
    CHECK_OK(gpt2_evaluate(m, data, 12, &before), "evaluate before");
    float losses[40];
    Gpt2TrainOptions o = {40, 4, 8, 0.01f, 0.0f, 0, 0, 1.0f, 0.0f, 1};
    Gpt2TrainOptions bad = o;
    bad.batch = GPT2_MAX_BATCH + 1;
    CHECK(gpt2_train(m, data, 240, &bad, losses) == NN_ERR_LIMIT && m->opt == NULL, "a batch past the limit: refused before anything is allocated");
    bad = o;
    bad.length = P + 1;
    CHECK(gpt2_train(m, data, 240, &bad, losses) == NN_ERR_LIMIT, "windows longer than the context: refused");
    CHECK(gpt2_train(m, data, 8, &o, losses) == NN_ERR_SHAPE, "a text shorter than a window: refused");
    int32_t wrong[240];
    memcpy(wrong, data, sizeof wrong);
    wrong[100] = V;
    CHECK(gpt2_train(m, wrong, 240, &o, losses) == NN_ERR_VALUE && strstr(nn_last_error(), "100"),
          "a token past the vocabulary: refused naming it (%s)", nn_last_error());
    CHECK(gpt2_undo(m) == NN_ERR_ARG, "undo before any call: refused");
    CHECK(gpt2_steps(m) == 0 && m->opt == NULL, "no state made by refused calls");
    CHECK_OK(gpt2_train(m, data, 240, &o, losses), "train");
    CHECK_OK(gpt2_evaluate(m, data, 12, &after), "evaluate after");
    CHECK(gpt2_steps(m) == 40, "40 steps counted (%d)", gpt2_steps(m));
    CHECK(after < before * 0.5, "the loss fell from %.4f to %.4f", before, after);
    CHECK(losses[39] < losses[0], "the last step's loss %.4f under the first's %.4f", (double)losses[39],
          (double)losses[0]);
    CHECK_OK(gpt2_undo(m), "undo");
    CHECK_OK(gpt2_evaluate(m, data, 12, &undone), "evaluate after undo");
    CHECK(undone == before && gpt2_steps(m) == 0, "undo: the loss is the first one again (%.9g, %.9g)", undone, before);
    /* a diverging call (a huge rate) goes back by itself */
    Gpt2TrainOptions wild = o;
    wild.lr = 1e30f;
    wild.clip = 0;
    int st = gpt2_train(m, data, 240, &wild, losses);
    double kept = 0;
    CHECK_OK(gpt2_evaluate(m, data, 12, &kept), "evaluate after a diverged call");
    CHECK(st == NN_ERR_VALUE && kept == before && gpt2_steps(m) == 0,
          "a diverging call: NN_ERR_VALUE (%d: %s), the model as it was", st, nn_last_error());
    gpt2_destroy(m);
}

int main(void) {
    for (size_t i = 0; i < sizeof LAYOUTS / sizeof *LAYOUTS; i++) {
        test_gradients(&LAYOUTS[i]);
        test_training(&LAYOUTS[i]);
    }
    return check_summary();
}
