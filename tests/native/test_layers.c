/* The layers the models share (src/layers/): the output layer against a plain
 * float64 reference, its cross-entropy (the floor under a probability, rows
 * of weight 0), embedding rows and their gradient (padding carries none); in
 * the double build, finite-difference gradient checks of the output layer
 * with its loss and of the embedding. Every backward accumulates (+=). */
#include <math.h>
#include <string.h>

#include "check.h"
#include "fd.h"
#include "layers/embedding.h"
#include "layers/output.h"

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
/* The worst relative gap between the analytic gradient g and the central differences of x. */
static double fd_worst(FdLoss loss, void *ctx, nn_real *x, const nn_real *g, size_t n) {
    size_t mark = alloc_mark();
    double *num = alloc_doubles(n), worst = 0;
    fd_engine(x, n, 1e-6, loss, ctx, num);
    for (size_t i = 0; i < n; i++) {
        double err = fabs(num[i] - g[i]) / (1e-6 + fabs(num[i]) + fabs(g[i]));
        if (fabs(num[i] - g[i]) > 1e-8 && err > worst) worst = err;
    }
    alloc_release(mark);
    return worst;
}

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

int main(void) {
    test_output_forward();
    test_crossentropy();
#ifdef NN_DOUBLE
    test_output_gradients();
#endif
    test_embedding();
    return check_summary();
}
