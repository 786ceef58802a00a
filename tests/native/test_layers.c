/* The layers the models share (src/layers/): the output layer against a plain
 * float64 reference, its cross-entropy (the floor under a probability, rows
 * of weight 0), embedding rows and their gradient (padding carries none); in
 * the double build, finite-difference gradient checks of the output layer
 * with its loss and of the embedding. seq2seq's loss is that cross-entropy
 * to the bit. Attention over a grid (attend.c): each row the core's
 * attention over its own keys, and in the double build its dQuery, dKeys and
 * tensors' gradients against finite differences. Every backward accumulates (+=).
 * Layer norm and the GELU perceptron (the next model's blocks): forward
 * against float64, gradients against finite differences (double build).
 * Shard replicas: each sized for the largest shard, none left behind when
 * one cannot be made; shards' rows, gradients cleared and summed in shard
 * order, replacing a set; a replica's gradient view points into its own block. */
#include <math.h>
#include <string.h>

#include "check.h"
#include "fd.h"
#include "layers/attend.h"
#include "layers/embedding.h"
#include "layers/layernorm.h"
#include "layers/linear.h"
#include "layers/mlp.h"
#include "core/vec.h"
#include "layers/output.h"
#include "layers/shards.h"
#include "models/seq2seq_internal.h" /* the loss's gradient buffer, d_logits */

/* ---- the output layer -------------------------------------------------------------- */

/* Sizes of the cases: n rows, W inputs, D hidden, V vocabulary. */
enum { N = 5, WI = 7, D = 4, V = 6 };

typedef struct {
    OptParams p;
    OutputWeights w, g;
    nn_real *x, *o, *probs, *dlogits, *dx, *d_o;
    int32_t y[N];
    nn_real weight[N]; /* loss weight of each row (one row 0: padding) */
} OutCase;

static void out_case(OutCase *c, Rng *r) {
    memset(c, 0, sizeof *c);
    output_add(&c->p, &c->w, WI, D, V);
    if (!CHECK_OK(opt_alloc(&c->p), "opt_alloc")) return;
    opt_bind(&c->p, &c->w, &c->g);
    for (size_t i = 0; i < c->p.n; i++) c->p.params[i] = (nn_real)rng_uniform(r, -1, 1);
    c->x = alloc_random(r, (size_t)N * WI, -1, 1);
    c->o = alloc_reals((size_t)N * D);
    c->probs = alloc_reals((size_t)N * V);
    c->dlogits = alloc_reals((size_t)N * V);
    c->dx = alloc_random(r, (size_t)N * WI, -1, 1); /* += onto whatever is there */
    c->d_o = alloc_reals((size_t)N * D);
    for (int i = 0; i < N; i++) {
        c->y[i] = rng_int(r, 0, V - 1);
        c->weight[i] = i == 2 ? 0 : (nn_real)rng_uniform(r, 0.1, 1);
    }
}

/* L = sum_r weight_r (-log p_r(y_r)) */
static double out_loss(void *ctx) {
    OutCase *c = ctx;
    output_forward(c->o, c->probs, c->x, &c->w, N, WI, D, V);
    double L = 0;
    for (int i = 0; i < N; i++) L += c->weight[i] * crossentropy_forward(c->probs + (size_t)i * V, c->y[i]);
    return L;
}

static void test_output_forward(void) {
    check_case("output layer and loss forward against float64");
    Rng r = {5};
    OutCase c;
    out_case(&c, &r);
    if (!c.p.params) return;
    double L = out_loss(&c), want_L = 0;
    double o[N * D], p[N * V];
    for (int i = 0; i < N; i++) {
        for (int u = 0; u < D; u++) {
            double s = c.w.bc[u];
            for (int k = 0; k < WI; k++) s += (double)c.x[i * WI + k] * c.w.Wc[k * D + u];
            o[i * D + u] = tanh(s);
        }
        double mx = -INFINITY, sum = 0;
        for (int v = 0; v < V; v++) {
            double s = c.w.bout[v];
            for (int u = 0; u < D; u++) s += o[i * D + u] * c.w.Wout[u * V + v];
            p[i * V + v] = s;
            mx = s > mx ? s : mx;
        }
        for (int v = 0; v < V; v++) sum += p[i * V + v] = exp(p[i * V + v] - mx);
        for (int v = 0; v < V; v++) p[i * V + v] /= sum;
        want_L -= c.weight[i] * log(p[i * V + c.y[i]]);
    }
    CHECK_CLOSE(L, want_L, TOL_FWD_ATOL, TOL_FWD_RTOL, "weighted loss");
    CHECK_ARRAY(c.o, o, (size_t)N * D, D, TOL_FWD_ATOL, TOL_FWD_RTOL, "o");
    CHECK_ARRAY(c.probs, p, (size_t)N * V, V, TOL_FWD_ATOL, TOL_FWD_RTOL, "probs");
    opt_free(&c.p);
}

static void test_crossentropy(void) {
    check_case("cross-entropy: floor, weight 0, the gradient's rows");
    nn_real p[4] = {0, 0.25f, 0.75f, 0}, d[4];
    CHECK_CLOSE(crossentropy_forward(p, 2), -log(0.75), 1e-12, 1e-7, "-log p_y");
    double floor = crossentropy_forward(p, 0);
    CHECK(isfinite(floor) && fabs(floor + log(OUTPUT_MIN_PROB)) < 1e-9, "p_y = 0 floors to -log(%g), got %g",
          OUTPUT_MIN_PROB, floor);
    crossentropy_backward(d, p, 2, 0.5f, 4);
    double want[4] = {0, 0.125, -0.125, 0};
    CHECK_ARRAY(d, want, 4, 4, 1e-7, 0, "weight (p - onehot)");
    crossentropy_backward(d, p, 1, 0, 4);
    int zero = 1;
    for (int v = 0; v < 4; v++) zero &= d[v] == 0 && !signbit(d[v]);
    CHECK(zero, "a row of weight 0 is +0 everywhere");
}

#ifdef NN_DOUBLE
static void test_output_gradients(void) {
    check_case("gradcheck: output layer + cross-entropy");
    Rng r = {17};
    OutCase c;
    out_case(&c, &r);
    if (!c.p.params) return;
    nn_real *dx0 = alloc_reals((size_t)N * WI);
    memcpy(dx0, c.dx, sizeof(nn_real) * N * WI);
    opt_zero_grad(&c.p);
    out_loss(&c);
    for (int i = 0; i < N; i++)
        crossentropy_backward(c.dlogits + (size_t)i * V, c.probs + (size_t)i * V, c.y[i], c.weight[i], V);
    output_backward(c.dx, c.d_o, &c.g, c.dlogits, c.x, c.o, &c.w, N, WI, D, V);
    for (size_t i = 0; i < (size_t)N * WI; i++) c.dx[i] -= dx0[i]; /* what the backward added */
    CHECK(fd_worst(out_loss, &c, c.x, c.dx, (size_t)N * WI) < 1e-6, "dx");
    CHECK(fd_worst(out_loss, &c, c.w.Wc, c.g.Wc, (size_t)WI * D) < 1e-6, "dWc");
    CHECK(fd_worst(out_loss, &c, c.w.bc, c.g.bc, D) < 1e-6, "dbc");
    CHECK(fd_worst(out_loss, &c, c.w.Wout, c.g.Wout, (size_t)D * V) < 1e-6, "dWout");
    CHECK(fd_worst(out_loss, &c, c.w.bout, c.g.bout, V) < 1e-6, "dbout");
    opt_free(&c.p);
}
#endif

/* seq2seq's loss is the output layer's cross-entropy: after a forward and
 * backward, each step's d_logits is crossentropy_backward of its
 * probabilities, to the bit (weight 1/count on a target, 0 past a row's
 * length), and the loss is the mean of crossentropy_forward. */
static void test_seq2seq_loss(void) {
    check_case("seq2seq's loss is the shared cross-entropy, to the bit");
    enum { B = 3, LEN = 5 };
    S2sConfig c = {RNN_CELL_GRU, 1, 0, 6, 8, ATTN_SCORE_DOT, 0, 9, 9, LEN, LEN, 0, B, 4};
    Seq2Seq *m = NULL;
    if (!CHECK_OK(s2s_create(&m, &c), "s2s_create")) return;
    int32_t in_ids[B * LEN], out_ids[B * LEN], in_len[B] = {5, 2, 4}, out_len[B] = {3, 5, 1};
    for (int i = 0; i < B * LEN; i++) {
        in_ids[i] = 1 + (i * 5) % 8;
        out_ids[i] = 2 + (i * 3) % 7;
    }
    nn_real loss = 0;
    s2s_zero_grad(m);
    CHECK_OK(s2s_forward(m, B, in_ids, in_len, out_ids, out_len, &loss), "forward");
    CHECK_OK(s2s_backward(m), "backward");
    int U = m->U, nv = c.out_vocab, count = 0, same = 1;
    double total = 0;
    nn_real want[16];
    for (int b = 0; b < B; b++)
        for (int t = 0; t < U; t++) {
            size_t row = ((size_t)b * U + t) * nv;
            int target = t < out_len[b];
            if (target) {
                total += crossentropy_forward(m->a.probs + row, out_ids[b * LEN + t]);
                count++;
            }
            crossentropy_backward(want, m->a.probs + row, target ? out_ids[b * LEN + t] : S2S_PAD,
                                  target ? (nn_real)1 / (out_len[0] + out_len[1] + out_len[2]) : 0, nv);
            same &= memcmp(want, m->a.d_logits + row, sizeof(nn_real) * nv) == 0;
        }
    CHECK(same, "d_logits is crossentropy_backward of each step's probabilities");
    CHECK(loss == (nn_real)(total / count), "the loss %.9g is the mean cross-entropy %.9g", (double)loss, total / count);
    s2s_destroy(m);
}

/* ---- attention over a grid ---------------------------------------------------------- */

/* Rows, queries of a row, keys of a row, width, additive hidden. */
enum { GB = 2, GQ = 3, GK = 4, GD = 5, GA = 3 };

typedef struct {
    OptParams p;
    AttnWeights w, g;
    AttnConfig cfg;
    AttendGrid x;
    nn_real *query, *keys, *scratch;
    const nn_real *r_ctx, *r_w; /* the loss's coefficients on the context and the weights */
    int32_t lengths[GB], visible[GQ];
} GridCase;

static void grid_case(GridCase *c, AttnScore score, Rng *r) {
    memset(c, 0, sizeof *c);
    attend_add(&c->p, &c->w, score, GD, GK, GA);
    if (!CHECK_OK(opt_alloc(&c->p), "opt_alloc")) return;
    opt_bind(&c->p, &c->w, &c->g);
    for (size_t i = 0; i < c->p.n; i++) c->p.params[i] = (nn_real)rng_uniform(r, -1, 1);
    if (c->w.beta) c->w.beta[0] = 1.5f;
    c->cfg = (AttnConfig){GQ, GK, GD, GD, GD, score == ATTN_SCORE_ADDITIVE ? GA : 0, score, ATTN_NORM_SOFTMAX, 1, 0, NULL, 0};
    c->lengths[0] = GK; /* row 1 sees its first two keys only */
    c->lengths[1] = 2;
    c->query = alloc_random(r, (size_t)GB * GQ * GD, -1, 1);
    c->keys = alloc_random(r, (size_t)GB * GK * GD, -1, 1);
    c->r_ctx = alloc_random(r, (size_t)GB * GQ * GD, -1, 1);
    c->r_w = alloc_random(r, (size_t)GB * GQ * GK, -1, 1);
    c->scratch = alloc_reals(attn_scratch_size(&c->cfg));
    c->x = (AttendGrid){c->query, c->keys, 0, c->lengths, c->visible, alloc_reals((size_t)GB * GQ * GK),
                        alloc_reals((size_t)GB * GQ * GK), alloc_reals((size_t)GB * GQ * GD)};
}

/* L = r_ctx . context + r_w . weights */
static double grid_loss(void *ctx) {
    GridCase *c = ctx;
    if (attend_forward(&c->x, &c->w, &c->cfg, GB, c->scratch) != NN_OK) return NAN;
    double L = 0;
    for (int i = 0; i < GB * GQ * GD; i++) L += (double)c->r_ctx[i] * c->x.context[i];
    for (int i = 0; i < GB * GQ * GK; i++) L += (double)c->r_w[i] * c->x.weights[i];
    return L;
}

/* The forward is the core's attention of each row on its own keys; the
 * backward's dQuery, dKeys (keys and values both) and tensors' gradients
 * against finite differences (double build). */
static void test_attend_grid(void) {
    static const AttnScore scores[] = {ATTN_SCORE_DOT, ATTN_SCORE_GENERAL, ATTN_SCORE_ADDITIVE, ATTN_SCORE_COSINE,
                                       ATTN_SCORE_LOCATION};
    for (size_t k = 0; k < sizeof scores / sizeof scores[0]; k++) {
        AttnScore score = scores[k];
        check_case("attention over a grid: %s", attn_score_name(score));
        size_t mark = alloc_mark();
        Rng r = {31 + k};
        GridCase c;
        grid_case(&c, score, &r);
        if (!c.p.params) return;
        double L = grid_loss(&c);
        CHECK(isfinite(L), "forward: %s", nn_last_error());
        /* row 1 against the core's own call on its keys, seeing 2 of them */
        AttnConfig one = c.cfg;
        int32_t two[GQ] = {2, 2, 2};
        one.key_lengths = two;
        nn_real *ctx1 = alloc_reals((size_t)GQ * GD), *w1 = alloc_reals((size_t)GQ * GK), *s1 = alloc_reals((size_t)GQ * GK);
        AttnParams ap = attend_params(&c.w);
        const nn_real *k1 = c.keys + (size_t)GK * GD;
        CHECK_OK(attn_forward(&one, &ap, s1, w1, ctx1, c.query + (size_t)GQ * GD, k1, k1, c.scratch), "attn_forward");
        CHECK(memcmp(ctx1, c.x.context + (size_t)GQ * GD, sizeof(nn_real) * GQ * GD) == 0 &&
                  memcmp(w1, c.x.weights + (size_t)GQ * GK, sizeof(nn_real) * GQ * GK) == 0,
              "row 1 is the core's attention over its own keys");
        CHECK(c.x.weights[(size_t)GQ * GK + 3] == 0, "row 1 gives its unseen keys no weight");
#ifdef NN_DOUBLE
        nn_real *dq = alloc_zeros((size_t)GB * GQ * GD), *dk = alloc_zeros((size_t)GB * GK * GD);
        opt_zero_grad(&c.p);
        AttendGridGrads d = {c.r_ctx, c.r_w, dq, dk};
        CHECK_OK(attend_backward(&d, &c.g, &c.x, &c.w, &c.cfg, GB, c.scratch), "attend_backward");
        CHECK(fd_worst(grid_loss, &c, c.query, dq, (size_t)GB * GQ * GD) < 1e-6, "dQuery");
        CHECK(fd_worst(grid_loss, &c, c.keys, dk, (size_t)GB * GK * GD) < 1e-6, "dKeys");
        if (c.w.W) CHECK(fd_worst(grid_loss, &c, c.w.W, c.g.W, (size_t)(score == ATTN_SCORE_LOCATION ? GK : GD) * GD) < 1e-6, "dW");
        if (c.w.Wq) CHECK(fd_worst(grid_loss, &c, c.w.Wq, c.g.Wq, (size_t)GA * GD) < 1e-6, "dWq");
        if (c.w.Wk) CHECK(fd_worst(grid_loss, &c, c.w.Wk, c.g.Wk, (size_t)GA * GD) < 1e-6, "dWk");
        if (c.w.v) CHECK(fd_worst(grid_loss, &c, c.w.v, c.g.v, GA) < 1e-6, "dv");
        if (c.w.beta) CHECK(fd_worst(grid_loss, &c, c.w.beta, c.g.beta, 1) < 1e-6, "dbeta");
#endif
        opt_free(&c.p);
        alloc_release(mark);
    }
}

/* ---- embedding ------------------------------------------------------------------ */

enum { ROWS = 6, E = 3, VOCAB = 5, PAD = 0 };

typedef struct {
    nn_real *table, *x, *r;
    int32_t tok[ROWS];
} EmbCase;

static double emb_loss(void *ctx) { /* L = r . embedding(tok) */
    EmbCase *c = ctx;
    embedding_forward(c->x, c->table, c->tok, ROWS, E);
    double L = 0;
    for (int i = 0; i < ROWS * E; i++) L += (double)c->x[i] * c->r[i];
    return L;
}

static void test_embedding(void) {
    check_case("embedding: rows of the table, padding carries no gradient");
    Rng r = {29};
    EmbCase c = {alloc_random(&r, VOCAB * E, -1, 1), alloc_reals(ROWS * E), alloc_random(&r, ROWS * E, -1, 1),
                 {3, PAD, 1, 3, 4, PAD}};
    emb_loss(&c);
    int rows = 1;
    for (int i = 0; i < ROWS; i++) rows &= memcmp(c.x + i * E, c.table + c.tok[i] * E, sizeof(nn_real) * E) == 0;
    CHECK(rows, "x row r = table[tok[r]]");
    nn_real *dt = alloc_zeros(VOCAB * E);
    embedding_backward(dt, c.r, c.tok, ROWS, E, PAD);
    double want[VOCAB * E] = {0};
    for (int i = 0; i < ROWS; i++)
        for (int k = 0; k < E && c.tok[i] != PAD; k++) want[c.tok[i] * E + k] += c.r[i * E + k];
    CHECK_ARRAY(dt, want, VOCAB * E, E, 1e-12, 1e-6, "dtable");
#ifdef NN_DOUBLE
    /* without a padding id every row's gradient lands, as finite differences say */
    memset(dt, 0, sizeof(nn_real) * VOCAB * E);
    embedding_backward(dt, c.r, c.tok, ROWS, E, -1);
    CHECK(fd_worst(emb_loss, &c, c.table, dt, VOCAB * E) < 1e-6, "gradcheck dtable");
#endif
}

/* ---- layer norm and the GELU perceptron ------------------------------------------ */

enum { LN = 4, LC = 6, LF = 5 };

typedef struct {
    OptParams p;
    LayerNormWeights lw, lg;
    MlpWeights mw, mg;
    nn_real *x, *y, *mean, *rstd, *h, *a, *da, *r, *dx;
    MlpWeights packed; /* W1, W2 in vec_pack's panels (b1, b2 mw's), as a checkpoint keeps them */
    int exact;         /* the packed forward's GELU: 1 the erf form */
} BlockCase;

static void block_case(BlockCase *c, Rng *r) {
    memset(c, 0, sizeof *c);
    layernorm_add(&c->p, &c->lw, LC);
    mlp_add(&c->p, &c->mw, LC, LF);
    if (!CHECK_OK(opt_alloc(&c->p), "opt_alloc")) return;
    /* opt_bind takes one view; two layers' views bind through the slots (the gradients below) */
    for (int i = 0; i < c->p.n_tensors; i++) *c->p.tensors[i].slot = c->p.params + c->p.tensors[i].offset;
    c->lg = (LayerNormWeights){c->p.grads + (c->lw.weight - c->p.params), c->p.grads + (c->lw.bias - c->p.params)};
    c->mg = (MlpWeights){c->p.grads + (c->mw.W1 - c->p.params), c->p.grads + (c->mw.b1 - c->p.params),
                         c->p.grads + (c->mw.W2 - c->p.params), c->p.grads + (c->mw.b2 - c->p.params)};
    for (size_t i = 0; i < c->p.n; i++) c->p.params[i] = (nn_real)rng_uniform(r, -1, 1);
    c->x = alloc_random(r, LN * LC, -2, 2);
    c->y = alloc_reals(LN * LC);
    c->mean = alloc_reals(LN);
    c->rstd = alloc_reals(LN);
    c->h = alloc_reals(LN * LF);
    c->a = alloc_reals(LN * LF);
    c->da = alloc_reals(LN * LF);
    c->r = alloc_random(r, LN * LC, -1, 1);
    c->dx = alloc_zeros(LN * LC);
}

static double ln_loss(void *ctx) { /* L = r . layernorm(x) */
    BlockCase *c = ctx;
    layernorm_forward(c->y, c->mean, c->rstd, c->x, &c->lw, LN, LC);
    double L = 0;
    for (int i = 0; i < LN * LC; i++) L += (double)c->y[i] * c->r[i];
    return L;
}

static double mlp_loss(void *ctx) { /* L = r . mlp(x) */
    BlockCase *c = ctx;
    mlp_forward(c->y, c->h, c->a, c->x, &c->mw, LN, LC, LF, 0);
    double L = 0;
    for (int i = 0; i < LN * LC; i++) L += (double)c->y[i] * c->r[i];
    return L;
}

#ifdef NN_DOUBLE
static double mlp_packed_loss(void *ctx) { /* L = r . mlp(x), the packed forward */
    BlockCase *c = ctx;
    mlp_forward_packed(c->y, c->h, c->a, c->x, &c->packed, LN, LC, LF, c->exact);
    double L = 0;
    for (int i = 0; i < LN * LC; i++) L += (double)c->y[i] * c->r[i];
    return L;
}
#endif

static double gelu_ref(double u) { return 0.5 * u * (1 + tanh(sqrt(2 / 3.14159265358979323846) * (u + 0.044715 * u * u * u))); }

static void test_blocks_forward(void) {
    Rng r = {41};
    BlockCase c;
    block_case(&c, &r);
    if (!c.p.params) return;
    check_case("layer norm forward against float64");
    ln_loss(&c);
    double want[LN * LC];
    for (int i = 0; i < LN; i++) {
        double m = 0, v = 0;
        for (int k = 0; k < LC; k++) m += c.x[i * LC + k] / (double)LC;
        for (int k = 0; k < LC; k++) v += (c.x[i * LC + k] - m) * (c.x[i * LC + k] - m) / LC;
        for (int k = 0; k < LC; k++)
            want[i * LC + k] = (c.x[i * LC + k] - m) / sqrt(v + LAYERNORM_EPS) * c.lw.weight[k] + c.lw.bias[k];
    }
    CHECK_ARRAY(c.y, want, LN * LC, LC, TOL_FWD_ATOL, TOL_FWD_RTOL, "y");
    check_case("GELU perceptron forward against float64");
    mlp_loss(&c);
    for (int i = 0; i < LN; i++) {
        double a[LF];
        for (int f = 0; f < LF; f++) {
            double s = c.mw.b1[f];
            for (int k = 0; k < LC; k++) s += (double)c.x[i * LC + k] * c.mw.W1[k * LF + f];
            a[f] = gelu_ref(s);
        }
        for (int k = 0; k < LC; k++) {
            double s = c.mw.b2[k];
            for (int f = 0; f < LF; f++) s += a[f] * c.mw.W2[f * LC + k];
            want[i * LC + k] = s;
        }
    }
    CHECK_ARRAY(c.y, want, LN * LC, LC, TOL_FWD_ATOL, TOL_FWD_RTOL, "y");
    nn_real u[3] = {0, 10, -10}, g[3];
    gelu_forward(g, u, 3);
    CHECK(g[0] == 0 && fabs(g[1] - 10) < 1e-5 && fabs(g[2]) < 1e-5, "gelu(0, 10, -10) = %g, %g, %g", (double)g[0],
          (double)g[1], (double)g[2]);
    opt_free(&c.p);
}

#ifdef NN_DOUBLE
static void test_blocks_gradients(void) {
    Rng r = {43};
    BlockCase c;
    block_case(&c, &r);
    if (!c.p.params) return;
    check_case("gradcheck: layer norm");
    ln_loss(&c);
    layernorm_backward(c.dx, &c.lg, c.r, c.x, c.mean, c.rstd, &c.lw, LN, LC);
    CHECK(fd_worst(ln_loss, &c, c.x, c.dx, LN * LC) < 1e-6, "dx");
    CHECK(fd_worst(ln_loss, &c, c.lw.weight, c.lg.weight, LC) < 1e-6, "dweight");
    CHECK(fd_worst(ln_loss, &c, c.lw.bias, c.lg.bias, LC) < 1e-6, "dbias");
    check_case("gradcheck: GELU perceptron");
    memset(c.dx, 0, sizeof(nn_real) * LN * LC);
    mlp_loss(&c);
    mlp_backward(c.dx, c.da, &c.mg, c.r, c.x, c.h, c.a, &c.mw, LN, LC, LF);
    CHECK(fd_worst(mlp_loss, &c, c.x, c.dx, LN * LC) < 1e-6, "dx");
    CHECK(fd_worst(mlp_loss, &c, c.mw.W1, c.mg.W1, LC * LF) < 1e-6, "dW1");
    CHECK(fd_worst(mlp_loss, &c, c.mw.b1, c.mg.b1, LF) < 1e-6, "db1");
    CHECK(fd_worst(mlp_loss, &c, c.mw.W2, c.mg.W2, LF * LC) < 1e-6, "dW2");
    CHECK(fd_worst(mlp_loss, &c, c.mw.b2, c.mg.b2, LC) < 1e-6, "db2");
    /* the input's gradient alone through packed weights (a checkpoint's), both GELU forms */
    nn_real *scratch = alloc_reals(linear_backward_scratch(LC, LF) > linear_backward_scratch(LF, LC)
                                       ? linear_backward_scratch(LC, LF)
                                       : linear_backward_scratch(LF, LC));
    c.packed = c.mw;
    c.packed.W1 = alloc_reals(vec_packed_size(LF, LC));
    c.packed.W2 = alloc_reals(vec_packed_size(LC, LF));
    vec_pack(c.packed.W1, c.mw.W1, LF, LF, LC, 0, 1);
    vec_pack(c.packed.W2, c.mw.W2, LC, LC, LF, 0, 1);
    for (c.exact = 0; c.exact < 2; c.exact++) {
        check_case("gradcheck: GELU perceptron, packed weights, input only, %s GELU", c.exact ? "erf" : "tanh");
        memset(c.dx, 0, sizeof(nn_real) * LN * LC);
        mlp_packed_loss(&c);
        mlp_backward_input_packed(c.dx, c.da, c.r, c.h, &c.packed, scratch, LN, LC, LF, c.exact);
        CHECK(fd_worst(mlp_packed_loss, &c, c.x, c.dx, LN * LC) < 1e-6, "dx");
    }
    check_case("gradcheck: GELU's erf form");
    nn_real u[5] = {-3, -0.5, 0, 0.7, 2.5}, du[5] = {0}, one[5] = {1, 1, 1, 1, 1};
    gelu_exact_backward(du, one, u, 5);
    for (int i = 0; i < 5; i++) {
        double e = 1e-6, fd = (0.5 * (u[i] + e) * (1 + erf((u[i] + e) / sqrt(2))) -
                               0.5 * (u[i] - e) * (1 + erf((u[i] - e) / sqrt(2)))) / (2 * e);
        CHECK(fabs(du[i] - fd) < 1e-8, "gelu'(%g) = %g, central differences %g", (double)u[i], (double)du[i], fd);
    }
    opt_free(&c.p);
}
#endif

/* linear_backward_input_packed over strips of W^T against float64 dy W^T: widths of
 * one part strip, exactly one, and many with a part panel at the end. */
static void test_linear_input_packed(void) {
    Rng r = {47};
    static const int shapes[][3] = {{3, 5, 4}, {2, 128, 9}, {5, 300, 70}, {1, 17, 1}}; /* N, IC, OC */
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        int N = shapes[s][0], IC = shapes[s][1], OC = shapes[s][2];
        check_case("linear input gradient through packed weights, N=%d IC=%d OC=%d", N, IC, OC);
        nn_real *w = alloc_random(&r, (size_t)IC * OC, -1, 1), *dy = alloc_random(&r, (size_t)N * OC, -1, 1);
        nn_real *dx = alloc_random(&r, (size_t)N * IC, -1, 1), *packed = alloc_reals(vec_packed_size(OC, IC));
        nn_real *scratch = alloc_reals(linear_backward_scratch(IC, OC));
        double *want = alloc_doubles((size_t)N * IC);
        for (int i = 0; i < N; i++)
            for (int k = 0; k < IC; k++) {
                double sum = dx[(size_t)i * IC + k];
                for (int j = 0; j < OC; j++) sum += (double)dy[(size_t)i * OC + j] * w[(size_t)k * OC + j];
                want[(size_t)i * IC + k] = sum;
            }
        vec_pack(packed, w, OC, OC, IC, 0, 1);
        linear_backward_input_packed(dx, dy, packed, scratch, N, IC, OC);
        CHECK_ARRAY(dx, want, (size_t)N * IC, IC, TOL_FWD_ATOL * OC, TOL_FWD_RTOL, "dx += dy W^T");
    }
}

/* ---- shard replicas --------------------------------------------------------------- */

typedef struct {
    int made, fail_at;        /* creations so far; the one that fails (0: none) */
    int rows[NN_MAX_THREADS]; /* rows each creation asked for */
} ReplicaLog;

static int replica_tokens[NN_MAX_THREADS]; /* what the fake replicas point at */
static int undone;                         /* replicas destroyed */

static void *fake_make(const void *model, int rows) {
    ReplicaLog *log = (ReplicaLog *)model;
    if (++log->made == log->fail_at) return NULL;
    log->rows[log->made - 1] = rows;
    return &replica_tokens[log->made];
}

static void fake_free(void *replica) {
    (void)replica;
    undone++;
}

static nn_real fake_grads_block[NN_MAX_THREADS][2]; /* replica s's gradients */

static nn_real *fake_grads(void *replica) { return fake_grads_block[(int *)replica - replica_tokens]; }

static void test_replicas(void) {
    static const ReplicaAdapter fake = {fake_make, fake_free, fake_grads};
    check_case("shard replicas: sizes, and a failed one undoes the others");
    ShardReplicas set;
    ReplicaLog log = {0, 0, {0}};
    CHECK_OK(shards_make(&set, &fake, &log, 4, 10), "4 shards of 10 rows");
    CHECK(log.made == 3 && set.n == 4 && set.at[0] == NULL && set.at[1] && set.at[2] && set.at[3] && set.at[4] == NULL,
          "replicas 1..3, made %d", log.made);
    CHECK(log.rows[0] == 3 && log.rows[1] == 3 && log.rows[2] == 3, "each holds the largest shard of 10 rows in 4 (3)");

    check_case("shard replicas: rows, cleared and summed gradients in shard order");
    int b0, b1, e0, e1;
    CHECK(shards_rows(&set, &log, 10, 4, 0, &b0, &b1) == &log && b0 == 0, "shard 0 is the model");
    nn_pool_range(10, 2, 4, &e0, &e1);
    CHECK(shards_rows(&set, &log, 10, 4, 2, &b0, &b1) == set.at[2] && b0 == e0 && b1 == e1,
          "shard 2 is replica 2, rows %d..%d", b0, b1);
    CHECK(shards_count(&set, 3) == 3 && shards_count(&set, 10) == 4, "min(n, B) shards");
    for (int s = 1; s < 4; s++) fake_grads_block[s][0] = fake_grads_block[s][1] = (nn_real)s;
    shards_clear_grads(&set, 2, 2);
    nn_real sum[2] = {10, 20};
    shards_sum_grads(&set, 4, sum, 2);
    CHECK(sum[0] == 14 && sum[1] == 24 && fake_grads_block[2][0] == 0, "10 + 1 + 0 + 3, 20 + 1 + 0 + 3: %g %g",
          (double)sum[0], (double)sum[1]);
    undone = 0;
    OptParams chunked = {0};
    ShardReplicas two;
    log = (ReplicaLog){0, 0, {0}};
    CHECK_OK(shards_make(&two, &fake, &log, 2, 10), "2 shards of 10 rows");
    shards_install(&set, &two, &chunked);
    CHECK(undone == 3 && set.n == 2 && set.at[1] && !set.at[2] && chunked.chunks == 2,
          "installing frees the 3 old replicas (%d) and sets the optimiser's chunks", undone);
    shards_free(&set);
    CHECK(undone == 4 && set.n == 0, "freed");
    CHECK(shards_check(NN_MAX_THREADS) == NN_OK && shards_check(-1) == NN_ERR_LIMIT &&
              shards_check(NN_MAX_THREADS + 1) == NN_ERR_LIMIT, "shard counts 0..%d", NN_MAX_THREADS);

    check_case("shard replicas: a failed one undoes the others");
    log = (ReplicaLog){0, 3, {0}};
    undone = 0;
    int st = shards_make(&set, &fake, &log, 5, 10);
    CHECK(st == NN_ERR_NOMEM && undone == 2 && set.n == 0, "the third of four fails: NN_ERR_NOMEM (%d), %d of 2 made undone", st,
          undone);

    check_case("a replica's gradient view points into its own block");
    struct {
        nn_real *a, *b;
    } w, g, rg;
    OptParams p = {0};
    opt_add(&p, &w.a, 2, 2, OPT_INIT_ZERO);
    opt_add(&p, &w.b, 3, 3, OPT_INIT_ZERO);
    if (!CHECK_OK(opt_alloc(&p), "opt_alloc")) return;
    opt_bind(&p, &w, &g);
    nn_real *grads = opt_alloc_grads(&p, &w, &rg);
    CHECK(grads && rg.a == grads && rg.b == grads + 2 && g.a == p.grads && grads[0] == 0 && grads[4] == 0,
          "the view, zeroed");
    free(grads);
    opt_free(&p);
}

int main(void) {
    test_output_forward();
    test_crossentropy();
    test_seq2seq_loss();
    test_attend_grid();
#ifdef NN_DOUBLE
    test_output_gradients();
#endif
    test_embedding();
    test_blocks_forward();
    test_linear_input_packed();
#ifdef NN_DOUBLE
    test_blocks_gradients();
#endif
    test_replicas();
    return check_summary();
}
