/* The transformer (include/attnlab/transformer.h): finite-difference checks
 * of causal attention's backward (under each score, with a head ablated) and
 * of the whole model's gradient (under each position encoding, RoPE included) (LayerNorm and the GELU MLP alone are
 * checked in test_layers.c); the
 * forward against a float64 reference written here from the formulas; the
 * limits' errors; same seed, same weights; the loss falls on 'copy'.
 * In the double build (NN_DOUBLE) differences use h = 1e-6 and tight
 * tolerances; float builds use h = 3e-3 and compare whole gradients by their
 * relative error, since float differences are noisy. */
#include <math.h>

#include "attnlab/transformer.h"
#include "check.h"
#include "fd.h"
#include "core/vec.h"
#include "layers/layernorm.h"
#include "models/transformer_internal.h"
#include "train/transformer_train.h"

#ifdef NN_DOUBLE
#define FD_H 1e-6
#define FD_ATOL 1e-7
#define FD_RTOL 1e-5
#else
#define FD_H 3e-3
#define FD_REL 3e-2 /* |analytic - numeric| / |numeric| over a whole gradient */
#endif

/* The analytic gradient g against differences num (n values). */
static void check_grad(const nn_real *g, const double *num, size_t n, const char *what) {
#ifdef NN_DOUBLE
    CHECK_ARRAY(g, num, n, 0, FD_ATOL, FD_RTOL, what);
#else
    double diff = 0, ref = 0;
    for (size_t i = 0; i < n; i++) {
        diff += (g[i] - num[i]) * (g[i] - num[i]);
        ref += num[i] * num[i];
    }
    CHECK(sqrt(diff) <= FD_REL * sqrt(ref) + 1e-6, "%s: relative error %.3g", what, sqrt(diff / (ref + 1e-30)));
#endif
}

/* ---- attention alone: L = sum(out * R) ------------------------------------------------- */

/* The transformer's attention layer: the core's multi-head attention
 * (attn_heads_*) over each sequence's fused queries | keys | values. */
typedef struct {
    int N, C, B, T, H;
    AttnHeadsConfig hc;
    nn_real *x, *out, *R, *scores, *weights, *scratch;
} Layer;

static AttnHeadsIO layer_io(const Layer *l, int b) {
    const nn_real *q = l->x + (size_t)b * l->T * 3 * l->C;
    size_t maps = (size_t)b * l->H * l->T * l->T;
    AttnHeadsIO io = {q, q + l->C, q + 2 * l->C, 3 * l->C, 3 * l->C, 3 * l->C, l->out + (size_t)b * l->T * l->C, l->C,
                      l->scores + maps, l->weights + maps};
    return io;
}

static void layer_forward(Layer *l) {
    for (int b = 0; b < l->B; b++) {
        AttnHeadsIO io = layer_io(l, b);
        CHECK_OK(attn_heads_forward(&l->hc, &io, l->scratch), "attn_heads_forward");
    }
}

static double layer_loss(void *ctx) {
    Layer *l = ctx;
    layer_forward(l);
    double s = 0;
    size_t n = (size_t)l->N * l->C;
    for (size_t i = 0; i < n; i++) s += (double)l->out[i] * l->R[i];
    return s;
}

static void check_attention(Rng *r, AttnScore score, int ablate_head, int alibi, int rope) {
    static const char *const score_names[] = {"dot", "scaled_dot", "general", "additive", "cosine", "location"};
    check_case("causal attention %s B=2 T=5 C=8 H=2 ablate=%d alibi=%d rope=%d", score_names[score], ablate_head, alibi,
               rope);
    int B = 2, T = 5, C = 8, H = 2, N = B * T, D = C / H;
    uint8_t ablate[2] = {0, 0};
    if (ablate_head >= 0) ablate[ablate_head] = 1;
    const nn_real slopes[2] = {(nn_real)0.25, (nn_real)0.0625};
    nn_real table[5 * 2 * 2]; /* (T, D/2, 2): cos, sin of t theta_i */
    for (int t = 0; t < T; t++)
        for (int i = 0; i < D / 2; i++) {
            double angle = t * pow(TF_ROPE_BASE, -2.0 * i / D);
            table[(t * (D / 2) + i) * 2] = (nn_real)cos(angle);
            table[(t * (D / 2) + i) * 2 + 1] = (nn_real)sin(angle);
        }
    /* rope 2: GPT-NeoX's rotate-half over the first 2 of each head's 4 dimensions */
    if (rope == 2) attn_rope_table(table, T, 1, 2, 10000.0);
    Layer l = {.N = N, .C = C, .B = B, .T = T, .H = H};
    l.hc = (AttnHeadsConfig){T, H, D, D, score, score == ATTN_SCORE_COSINE ? (nn_real)TF_COSINE_SCALE : 1, 1,
                             rope ? table : NULL, alibi ? slopes : NULL, ablate, rope == 2 ? 2 : 0, rope == 2};
    l.x = alloc_random(r, (size_t)N * 3 * C, -1.5, 1.5);
    l.out = alloc_reals((size_t)N * C);
    l.R = alloc_random(r, (size_t)N * C, -1, 1);
    l.scores = alloc_reals((size_t)B * H * T * T);
    l.weights = alloc_reals((size_t)B * H * T * T);
    l.scratch = alloc_reals(attn_heads_scratch_size(&l.hc));
    layer_forward(&l);
    /* probabilities: rows sum to 1 over j <= i, exactly 0 above the diagonal */
    double worst = 0;
    int above = 0;
    for (int bh = 0; bh < B * H; bh++)
        for (int i = 0; i < T; i++) {
            double s = 0;
            for (int j = 0; j < T; j++) {
                nn_real p = l.weights[((size_t)bh * T + i) * T + j];
                if (j > i) above += p != 0;
                s += p;
            }
            worst = fmax(worst, fabs(s - 1));
        }
    CHECK(worst < 1e-5 && !above, "rows sum to 1 (worst %.3g), %d weights above the diagonal", worst, above);
    if (ablate_head >= 0) {
        int nonzero = 0;
        for (int i = 0; i < N; i++)
            for (int d = 0; d < D; d++) nonzero += l.out[(size_t)i * C + ablate_head * D + d] != 0;
        CHECK(!nonzero, "the ablated head's output is zero (%d values are not)", nonzero);
    }
    /* the cached step: each position's query against the keys and values so far gives the row the whole pass
     * gave (ALiBi refused) */
    nn_real *step = alloc_reals(attn_heads_step_scratch_size(&l.hc)), z[8];
    double step_worst = 0;
    int step_status = NN_OK;
    for (int b = 0; b < B && step_status == NN_OK; b++)
        for (int t = 0; t < T && step_status == NN_OK; t++) {
            const nn_real *q = l.x + ((size_t)b * T + t) * 3 * C, *k = l.x + (size_t)b * T * 3 * C + C;
            step_status = attn_heads_step(&l.hc, t, q, k, 3 * C, k + C, 3 * C, z, step);
            for (int c = 0; c < C && step_status == NN_OK; c++)
                step_worst = fmax(step_worst, fabs((double)z[c] - l.out[((size_t)b * T + t) * C + c]));
        }
    if (alibi) CHECK(step_status == NN_ERR_ARG, "the cached step refuses ALiBi (status %d)", step_status);
    else CHECK(step_status == NN_OK && step_worst < 1e-5, "cached step = the whole pass's row (worst %.3g; %s)", step_worst,
               step_status == NN_OK ? "ok" : nn_last_error());
    nn_real *dqkv = alloc_zeros((size_t)N * 3 * C);
    for (int b = 0; b < B; b++) {
        AttnHeadsIO io = layer_io(&l, b);
        nn_real *dq = dqkv + (size_t)b * T * 3 * C;
        CHECK_OK(attn_heads_backward(&l.hc, &io, dq, dq + C, dq + 2 * C, l.R + (size_t)b * T * C, l.scratch),
                 "attn_heads_backward");
    }
    double *num = alloc_doubles((size_t)N * 3 * C);
    fd_engine(l.x, (size_t)N * 3 * C, FD_H, layer_loss, &l, num);
    check_grad(dqkv, num, (size_t)N * 3 * C, "attention dqkv");
}

/* ---- the whole model ------------------------------------------------------------ */

typedef struct {
    Transformer *m;
    int B, T;
    int32_t *tokens, *targets;
} Whole;

static double whole_loss(void *ctx) {
    Whole *w = ctx;
    memcpy(w->m->model->a.tokens, w->tokens, sizeof(int32_t) * w->B * w->T);
    memcpy(w->m->model->a.targets, w->targets, sizeof(int32_t) * w->B * w->T);
    double loss = 0;
    CHECK_OK(tf_forward(w->m->model, w->B, w->T, 1, &loss, NULL), "tf_forward");
    return loss;
}

static Transformer *small_model(TfTaskKind task, TfPositional pos, AttnScore score, int d_ff, uint64_t seed) {
    TfConfig c = {task, 2, 2, 8, d_ff, 8, pos, score, 2, seed};
    Transformer *m = NULL;
    int st = tf_create(&m, &c, NULL, 0);
    CHECK(st == NN_OK, "tf_create: %s", nn_last_error());
    return m;
}

/* Sequences of the model's own task, with the weights moved off their start
 * (LayerNorm gains of 1 and zero biases hide terms a wrong backward would drop). */
static void whole_setup(Whole *w, Rng *r) {
    Transformer *m = w->m;
    w->B = 2;
    w->T = tf_seq_len(m);
    w->tokens = alloc_ints((size_t)w->B * w->T);
    w->targets = alloc_ints((size_t)w->B * w->T);
    uint64_t s = 5;
    int n;
    for (int b = 0; b < w->B; b++) tf_sample(m, TF_SPLIT_TRAIN, &s, w->tokens + b * w->T, w->targets + b * w->T, &n);
    for (size_t i = 0; i < tf_num_params(m); i++) m->model->opt.params[i] += (nn_real)rng_uniform(r, -0.3, 0.3);
}

static void check_whole(Rng *r, TfPositional pos, AttnScore score, int d_ff) {
    check_case("model gradient positional=%d score=%d dFF=%d", (int)pos, (int)score, d_ff);
    Transformer *m = small_model(TF_TASK_COPY, pos, score, d_ff, 3);
    if (!m) return;
    Whole w = {m, 0, 0, NULL, NULL};
    whole_setup(&w, r);
    double loss = whole_loss(&w);
    int scored = 0;
    CHECK_OK(tf_forward(m->model, w.B, w.T, 1, NULL, &scored), "tf_forward");
    CHECK(scored > 0 && isfinite(loss), "a finite loss over %d scored positions", scored);
    memset(m->model->opt.grads, 0, sizeof(nn_real) * m->model->opt.n);
    CHECK_OK(tf_backward(m->model, w.B, w.T, scored), "tf_backward");
    size_t P = tf_num_params(m);
    nn_real *g = alloc_reals(P);
    memcpy(g, m->model->opt.grads, sizeof(nn_real) * P);
    double *num = alloc_doubles(P);
    fd_engine(m->model->opt.params, P, FD_H, whole_loss, &w, num);
    for (int i = 0; i < m->model->opt.n_tensors; i++) {
        size_t off, count;
        const char *name = tf_tensor(m, i, &off, &count);
        check_grad(g + off, num + off, count, name);
    }
    tf_destroy(m);
}

/* ---- a float64 reference forward, from the formulas ------------------------- */

static void ref_ln(double *y, const double *x, const nn_real *w, const nn_real *b, int C) {
    double m = 0, v = 0;
    for (int c = 0; c < C; c++) m += x[c] / C;
    for (int c = 0; c < C; c++) v += (x[c] - m) * (x[c] - m) / C;
    for (int c = 0; c < C; c++) y[c] = (x[c] - m) / sqrt(v + LAYERNORM_EPS) * w[c] + b[c];
}

static void ref_linear(double *y, const double *x, const nn_real *w, const nn_real *b, int IC, int OC) {
    for (int o = 0; o < OC; o++) {
        double s = b ? b[o] : 0;
        for (int i = 0; i < IC; i++) s += x[i] * w[(size_t)i * OC + o];
        y[o] = s;
    }
}

/* RoPE at position t: each head's query and key pairs (2i, 2i+1) turned by t base^(-2i/D) */
static void ref_rope(double *qkv, int t, int C, int H) {
    int D = C / H;
    for (int s = 0; s < 2 * H; s++)
        for (int i = 0; i < D / 2; i++) {
            double *x = qkv + s * D + 2 * i, a = t * pow(TF_ROPE_BASE, -2.0 * i / D), x0 = x[0], x1 = x[1];
            x[0] = x0 * cos(a) - x1 * sin(a);
            x[1] = x0 * sin(a) + x1 * cos(a);
        }
}

/* logits (T, V) of one sequence */
static void ref_forward(const Transformer *m, const int32_t *tok, int T, double *logits) {
    const TfConfig *c = &m->model->c;
    const DecWeights *w = &m->model->w;
    int C = c->d_model, H = c->heads, D = C / H, F = c->d_ff, V = m->model->V;
    double *x = alloc_doubles((size_t)T * C), *h = alloc_doubles((size_t)T * C), *qkv = alloc_doubles((size_t)T * 3 * C),
           *y = alloc_doubles((size_t)T * C), *o = alloc_doubles(C), *f = alloc_doubles(F ? F : 1);
    for (int t = 0; t < T; t++)
        for (int k = 0; k < C; k++) {
            double p = 0;
            if (c->positional == TF_POS_LEARNED) p = w->wpe[t * C + k];
            if (c->positional == TF_POS_SINUSOIDAL) {
                double angle = t / pow(10000.0, (double)(k - k % 2) / C);
                p = k % 2 ? cos(angle) : sin(angle);
            }
            x[t * C + k] = w->wte[tok[t] * C + k] + p;
        }
    for (int l = 0; l < c->layers; l++) {
        for (int t = 0; t < T; t++) {
            ref_ln(h + t * C, x + t * C, w->ln1w[l], w->ln1b[l], C);
            ref_linear(qkv + t * 3 * C, h + t * C, w->qkvw[l], w->qkvb[l], C, 3 * C);
            if (c->positional == TF_POS_ROPE) ref_rope(qkv + t * 3 * C, t, C, H);
        }
        for (int hd = 0; hd < H; hd++)
            for (int i = 0; i < T; i++) {
                double e[TF_MAX_CONTEXT], mx = -INFINITY, s = 0;
                for (int j = 0; j <= i; j++) {
                    const double *q = qkv + i * 3 * C + hd * D, *k = qkv + j * 3 * C + C + hd * D;
                    double dot = 0, qq = 0, kk = 0;
                    for (int d = 0; d < D; d++) dot += q[d] * k[d], qq += q[d] * q[d], kk += k[d] * k[d];
                    e[j] = c->score == ATTN_SCORE_SCALED_DOT ? dot / sqrt(D)
                           : c->score == ATTN_SCORE_COSINE   ? TF_COSINE_SCALE * dot / sqrt(qq * kk)
                                                             : dot;
                    if (c->positional == TF_POS_ALIBI) e[j] -= pow(2.0, -8.0 * (hd + 1) / H) * (i - j);
                    mx = fmax(mx, e[j]);
                }
                for (int j = 0; j <= i; j++) s += e[j] = exp(e[j] - mx);
                for (int d = 0; d < D; d++) {
                    double z = 0;
                    for (int j = 0; j <= i; j++) z += e[j] / s * qkv[j * 3 * C + 2 * C + hd * D + d];
                    y[i * C + hd * D + d] = m->model->ablate[l * H + hd] ? 0 : z;
                }
            }
        for (int t = 0; t < T; t++) {
            ref_linear(o, y + t * C, w->projw[l], w->projb[l], C, C);
            for (int k = 0; k < C; k++) x[t * C + k] += o[k];
            if (!F) continue;
            ref_ln(h + t * C, x + t * C, w->ln2w[l], w->ln2b[l], C);
            ref_linear(f, h + t * C, w->fcw[l], w->fcb[l], C, F);
            for (int k = 0; k < F; k++) f[k] = 0.5 * f[k] * (1 + tanh(sqrt(2 / 3.14159265358979323846) * (f[k] + 0.044715 * pow(f[k], 3))));
            double *tmp = alloc_doubles(F);
            memcpy(tmp, f, sizeof(double) * F);
            for (int k = 0; k < C; k++) {
                double s = w->fcprojb[l][k];
                for (int j = 0; j < F; j++) s += tmp[j] * w->fcprojw[l][(size_t)j * C + k];
                x[t * C + k] += s;
            }
        }
    }
    for (int t = 0; t < T; t++) {
        ref_ln(h + t * C, x + t * C, w->lnfw, w->lnfb, C);
        ref_linear(logits + (size_t)t * V, h + t * C, w->unembed, w->unembed_b, C, V);
    }
}

static void check_reference(Rng *r, TfPositional pos, AttnScore score, int d_ff, int ablate) {
    check_case("forward vs float64 reference positional=%d score=%d dFF=%d ablate=%d", (int)pos, (int)score, d_ff,
               ablate);
    Transformer *m = small_model(TF_TASK_COPY, pos, score, d_ff, 9);
    if (!m) return;
    Whole w = {m, 0, 0, NULL, NULL};
    whole_setup(&w, r);
    if (ablate) {
        const int32_t pairs[2] = {1, 0};
        CHECK(tf_set_ablation(m, pairs, 1) == NN_OK, "ablate: %s", nn_last_error());
    }
    whole_loss(&w);
    for (int b = 0; b < w.B; b++) {
        double *want = alloc_doubles((size_t)w.T * m->model->V);
        ref_forward(m, w.tokens + b * w.T, w.T, want);
        CHECK_ARRAY(m->model->a.logits + (size_t)b * w.T * m->model->V, want, (size_t)w.T * m->model->V, m->model->V, 20 * TOL_FWD_ATOL,
                    20 * TOL_FWD_RTOL, "logits");
    }
    tf_destroy(m);
}

/* RoPE makes a score depend on the distance only: the same query and key
 * tokens at (i, j) and (i + s, j + s) score the same; without positions they
 * would too, so the check is that the scores do differ with the distance.
 * The scores are the core attention's, with the model's RoPE table. */
static void check_rope_relative(void) {
    check_case("RoPE: scores depend on i - j only");
    TfConfig c = {TF_TASK_INDUCTION, 1, 2, 16, 0, 16, TF_POS_ROPE, ATTN_SCORE_DOT, 1, 4};
    Transformer *m = NULL;
    CHECK(tf_create(&m, &c, NULL, 0) == NN_OK, "tf_create: %s", nn_last_error());
    if (!m) return;
    int C = c.d_model, T = 12, H = c.heads;
    nn_real *qkv = alloc_random(&(Rng){3}, (size_t)T * 3 * C, -1, 1);
    for (int t = 1; t < T; t++) /* every row the same query and key */
        memcpy(qkv + (size_t)t * 3 * C, qkv, sizeof(nn_real) * 3 * C);
    AttnHeadsConfig hc = gpt2_heads(&m->model->dec, 0, T);
    hc.causal = 0;
    nn_real *scores = alloc_reals((size_t)H * T * T), *weights = alloc_reals((size_t)H * T * T);
    nn_real *z = alloc_reals((size_t)T * C), *scratch = alloc_reals(attn_heads_scratch_size(&hc));
    AttnHeadsIO io = {qkv, qkv + C, qkv + 2 * C, 3 * C, 3 * C, 3 * C, z, C, scores, weights};
    CHECK_OK(attn_heads_forward(&hc, &io, scratch), "attn_heads_forward");
    double worst = 0, spread = 0;
    for (int dist = 0; dist < 4; dist++) { /* head 0: e(i, j) with i = j + dist */
        double first = scores[(size_t)dist * T];
        spread = fmax(spread, fabs(first - scores[0]));
        for (int j = 1; j + dist < T; j++) worst = fmax(worst, fabs(scores[(size_t)(j + dist) * T + j] - first));
    }
    CHECK(worst < 1e-4 && spread > 1e-3, "scores at one distance differ by %.3g; across distances by %.3g", worst, spread);
    tf_destroy(m);
}

/* ---- the boundary ------------------------------------------------------------------ */

static void check_limits(void) {
    const TfConfig ok = {TF_TASK_INDUCTION, 2, 4, 64, 0, 64, TF_POS_LEARNED, ATTN_SCORE_SCALED_DOT, 4, 1};
    struct {
        const char *what;
        TfConfig c;
        int status;
    } cases[] = {
        {"layers 9", ok, NN_ERR_LIMIT},  {"layers 0", ok, NN_ERR_SHAPE},   {"heads 17", ok, NN_ERR_LIMIT},
        {"dModel 513", ok, NN_ERR_LIMIT}, {"context 257", ok, NN_ERR_LIMIT}, {"context 4", ok, NN_ERR_SHAPE},
        {"heads 3 of 64", ok, NN_ERR_SHAPE}, {"dFF 4096", ok, NN_ERR_LIMIT}, {"score general", ok, NN_ERR_ARG},
        {"batch 257", ok, NN_ERR_LIMIT}, {"task 99", ok, NN_ERR_ARG},     {"positional 7", ok, NN_ERR_ARG},
    };
    cases[0].c.layers = 9, cases[1].c.layers = 0, cases[2].c.heads = 17, cases[3].c.d_model = 513;
    cases[4].c.context = 257, cases[5].c.context = 4, cases[6].c.heads = 3, cases[7].c.d_ff = 4096;
    cases[8].c.score = ATTN_SCORE_GENERAL, cases[9].c.batch = 257, cases[10].c.task = 99;
    cases[11].c.positional = 7;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        check_case("limit: %s", cases[i].what);
        Transformer *m = (Transformer *)1;
        int st = tf_create(&m, &cases[i].c, NULL, 0);
        CHECK(st == cases[i].status && !m && nn_last_error()[0], "status %d (want %d), message '%s'", st,
              cases[i].status, nn_last_error());
    }
    check_case("text task without a text");
    TfConfig t = ok;
    t.task = TF_TASK_TEXT;
    Transformer *m = NULL;
    CHECK(tf_create(&m, &t, "short", 5) == NN_ERR_SHAPE && !m, "a 5-byte text: %s", nn_last_error());
    check_case("a batch of activations past the limit");
    TfConfig big = {TF_TASK_INDUCTION, 8, 16, 512, 2048, 256, TF_POS_LEARNED, ATTN_SCORE_SCALED_DOT, 256, 1};
    CHECK(tf_create(&m, &big, NULL, 0) == NN_ERR_LIMIT && strstr(nn_last_error(), "smaller"), "%s", nn_last_error());
}

static void check_calls(void) {
    check_case("bad arguments to a model's calls");
    TfConfig c = {TF_TASK_COPY, 1, 2, 8, 0, 16, TF_POS_LEARNED, ATTN_SCORE_SCALED_DOT, 4, 1};
    Transformer *m = NULL;
    if (tf_create(&m, &c, NULL, 0) != NN_OK) return;
    const int32_t bad[2] = {1, 2};
    CHECK(tf_set_ablation(m, bad, 1) == NN_ERR_VALUE, "ablate layer 1 of 1: %s", nn_last_error());
    const int32_t tokens[3] = {0, 99, 1};
    int32_t ids[3 * TF_TOP];
    float p[3 * TF_TOP];
    CHECK(tf_inspect(m, tokens, 3, NULL, ids, p, NULL) == NN_ERR_VALUE, "token 99: %s", nn_last_error());
    TfTrainOptions o = {1, 4, 0, 0, 0, 0, 1, 0, 0};
    CHECK(tf_train(m, &o, NULL) == NN_ERR_VALUE, "lr 0: %s", nn_last_error());
    o.lr = (nn_real)1e-3;
    o.weight_decay = -1;
    CHECK(tf_train(m, &o, NULL) == NN_ERR_VALUE, "weight decay -1: %s", nn_last_error());
    double loss, acc;
    CHECK(tf_evaluate(m, TF_SPLIT_TEST, 0, &loss, &acc) == NN_ERR_SHAPE, "count 0: %s", nn_last_error());
    tf_destroy(m);
}

static void check_seed(void) {
    check_case("same seed, same weights; another seed, others");
    TfConfig c = {TF_TASK_INDUCTION, 2, 4, 16, 32, 16, TF_POS_LEARNED, ATTN_SCORE_SCALED_DOT, 4, 7};
    Transformer *a = NULL, *b = NULL, *d = NULL;
    tf_create(&a, &c, NULL, 0);
    tf_create(&b, &c, NULL, 0);
    c.seed = 8;
    tf_create(&d, &c, NULL, 0);
    if (!a || !b || !d) return;
    size_t bytes = sizeof(nn_real) * tf_num_params(a);
    CHECK(!memcmp(a->model->opt.params, b->model->opt.params, bytes), "seed 7 twice: the same bytes");
    CHECK(memcmp(a->model->opt.params, d->model->opt.params, bytes), "seeds 7 and 8 differ");
    TfTrainOptions o = {3, 4, (nn_real)3e-3, (nn_real)0.01, 1, 0, 1, 0, 0};
    tf_train(a, &o, NULL);
    tf_train(b, &o, NULL);
    CHECK(!memcmp(a->model->opt.params, b->model->opt.params, bytes), "three steps from the same seed: the same bytes");
    tf_destroy(a);
    tf_destroy(b);
    tf_destroy(d);
}

static void check_copy_learns(void) {
    check_case("the loss falls on 'copy'");
    TfConfig c = {TF_TASK_COPY, 2, 2, 32, 64, 16, TF_POS_LEARNED, ATTN_SCORE_SCALED_DOT, 16, 1};
    Transformer *m = NULL;
    if (tf_create(&m, &c, NULL, 0) != NN_OK) return;
    double before, after, acc;
    tf_evaluate(m, TF_SPLIT_TEST, 64, &before, &acc);
    TfTrainOptions o = {80, 16, (nn_real)1e-2, 0, 10, 0, 1, 0, 0}; /* 2.49 -> 1.09; 150 steps at 3e-3 took twice as long */
    CHECK(tf_train(m, &o, NULL) == NN_OK, "train: %s", nn_last_error());
    tf_evaluate(m, TF_SPLIT_TEST, 64, &after, &acc);
    CHECK(after < 0.7 * before, "test loss %.3f -> %.3f", before, after);
    tf_destroy(m);
}

int main(void) {
    Rng r = {42};
    const AttnScore scores[3] = {ATTN_SCORE_SCALED_DOT, ATTN_SCORE_DOT, ATTN_SCORE_COSINE};
    for (int s = 0; s < 3; s++) {
        check_attention(&r, scores[s], -1, 0, 0);
        check_attention(&r, scores[s], 1, s == 1, s == 2);
        check_attention(&r, scores[s], -1, s == 0, 1);
        check_attention(&r, scores[s], s == 2 ? 0 : -1, 0, 2);
    }
    for (int s = 0; s < 3; s++) check_whole(&r, TF_POS_LEARNED, scores[s], s == 0 ? 12 : 0);
    check_whole(&r, TF_POS_SINUSOIDAL, ATTN_SCORE_SCALED_DOT, 12);
    check_whole(&r, TF_POS_ALIBI, ATTN_SCORE_SCALED_DOT, 0);
    check_whole(&r, TF_POS_ROPE, ATTN_SCORE_SCALED_DOT, 12);
    check_whole(&r, TF_POS_ROPE, ATTN_SCORE_COSINE, 0);
    check_rope_relative();
    for (int p = 0; p < TF_POS_COUNT; p++)
        for (int s = 0; s < 3; s++) check_reference(&r, (TfPositional)p, scores[s], p == 1 ? 0 : 12, s == 2);
    check_limits();
    check_calls();
    check_seed();
    check_copy_learns();
    return check_summary();
}
