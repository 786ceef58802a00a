/* Self-attention: Q = X Wq, K = X Wk, V = X Wv (row-vector convention, a NULL
 * projection is the identity), heads attend over contiguous column blocks,
 * the heads' contexts are concatenated and projected by Wo. The projections
 * split their rows across the pool's threads (gemm_parallel.h) and each head's
 * attention its row blocks (attn_forward / attn_backward); the heads run one
 * after another. */
#include <string.h>

#include "attnlab/attention.h"
#include "base/error.h"
#include "base/layout.h"
#include "core/gemm_parallel.h"
#include "core/vec.h"

/* The per-head attention problem. */
static AttnConfig head_config(const SelfAttnConfig *c) {
    AttnConfig h = {0};
    h.n_q = h.n_k = c->n;
    h.d_q = h.d_k = c->d_k / c->heads;
    h.d_v = c->d_v / c->heads;
    h.score = c->score;
    h.norm = ATTN_NORM_SOFTMAX;
    h.temperature = 1;
    h.causal = c->causal;
    return h;
}

static const AttnParams head_params = {NULL, NULL, NULL, NULL, 1};

typedef struct {
    size_t qh, kh, vh, zh;     /* one head's Q, K, V, context (gathered) */
    size_t dqh, dkh, dvh, dzh; /* and their gradients */
    size_t dq, dk, dv, dz;     /* full-width gradients (n, d_k | d_v) */
    size_t attn;               /* attn_forward / attn_backward scratch */
    size_t total;              /* reals in all */
} SelfScratch;

static SelfScratch self_layout(const SelfAttnConfig *c) {
    AttnConfig h = head_config(c);
    size_t n = (size_t)c->n, dkh = (size_t)h.d_k, dvh = (size_t)h.d_v;
    NnLayout l = {0};
    SelfScratch s;
    s.qh = nn_layout_take(&l, n * dkh);
    s.kh = nn_layout_take(&l, n * dkh);
    s.vh = nn_layout_take(&l, n * dvh);
    s.zh = nn_layout_take(&l, n * dvh);
    s.dqh = nn_layout_take(&l, n * dkh);
    s.dkh = nn_layout_take(&l, n * dkh);
    s.dvh = nn_layout_take(&l, n * dvh);
    s.dzh = nn_layout_take(&l, n * dvh);
    s.dq = nn_layout_take(&l, n * c->d_k);
    s.dk = nn_layout_take(&l, n * c->d_k);
    s.dv = nn_layout_take(&l, n * c->d_v);
    s.dz = nn_layout_take(&l, n * c->d_v);
    s.attn = nn_layout_take(&l, attn_scratch_size(&h));
    s.total = l.size;
    return s;
}

size_t attn_self_scratch_size(const SelfAttnConfig *c) { return self_layout(c).total; }

/* Projections X Wq, X Wk, X Wv, the heads' scores and contexts, and
 * context Wo, as multiply-adds (cosine's unit rows are a few more). */
double attn_self_work(const SelfAttnConfig *c) {
    double n = c->n, proj = (double)c->n * c->d_in * (2.0 * c->d_k + c->d_v);
    return proj + n * n * ((double)c->d_k + c->d_v) + n * c->d_v * (double)c->d_out;
}

int attn_self_check(const SelfAttnConfig *c, const SelfAttnWeights *w, const nn_real *x) {
    nn_clear_error();
    if (c->n < 1 || c->n > ATTN_MAX_TOKENS)
        return nn_fail(c->n < 1 ? NN_ERR_SHAPE : NN_ERR_LIMIT, "x: %d tokens; need 1..%d", c->n, ATTN_MAX_TOKENS);
    if ((size_t)c->n * c->n > ATTN_MAX_CELLS)
        return nn_fail(NN_ERR_LIMIT, "x: %d tokens make %d x %d cells, past the limit of %d", c->n, c->n, c->n,
                       ATTN_MAX_CELLS);
    const int dims[4] = {c->d_in, c->d_k, c->d_v, c->d_out};
    const char *names[4] = {"x: columns", "wq/wk: columns", "wv: columns", "wo: columns"};
    for (int i = 0; i < 4; i++)
        if (dims[i] < 1 || dims[i] > ATTN_MAX_DIM)
            return nn_fail(dims[i] < 1 ? NN_ERR_SHAPE : NN_ERR_LIMIT, "%s: %d; need 1..%d", names[i], dims[i],
                           ATTN_MAX_DIM);
    if (c->heads < 1 || c->heads > ATTN_MAX_HEADS)
        return nn_fail(c->heads < 1 ? NN_ERR_SHAPE : NN_ERR_LIMIT, "heads: %d; need 1..%d", c->heads, ATTN_MAX_HEADS);
    if (c->score != ATTN_SCORE_DOT && c->score != ATTN_SCORE_SCALED_DOT && c->score != ATTN_SCORE_COSINE)
        return nn_fail(NN_ERR_ARG, "score: self-attention supports 'dot', 'scaled_dot' and 'cosine' (got %d)",
                       (int)c->score);
    if ((!w->wq || !w->wk) && c->d_k != c->d_in)
        return nn_fail(NN_ERR_SHAPE, "%s: without it %s are x, so d_k must be %d (got %d)", w->wq ? "wk" : "wq",
                       w->wq ? "keys" : "queries", c->d_in, c->d_k);
    if (!w->wv && c->d_v != c->d_in)
        return nn_fail(NN_ERR_SHAPE, "wv: without it values are x, so d_v must be %d (got %d)", c->d_in, c->d_v);
    if (!w->wo && c->d_out != c->d_v)
        return nn_fail(NN_ERR_SHAPE, "wo: without it the output is the context, so d_out must be %d (got %d)",
                       c->d_v, c->d_out);
    if (c->d_k % c->heads)
        return nn_fail(NN_ERR_SHAPE, "heads: %d heads do not divide the query/key width %d", c->heads, c->d_k);
    if (c->d_v % c->heads)
        return nn_fail(NN_ERR_SHAPE, "heads: %d heads do not divide the value width %d", c->heads, c->d_v);
    if (attn_self_work(c) > ATTN_MAX_WORK)
        return nn_fail(NN_ERR_LIMIT,
                       "work: %d tokens, widths %d -> %d/%d -> %d take %.3g multiply-adds, past the limit of %.3g "
                       "(about a second); use fewer tokens or smaller widths",
                       c->n, c->d_in, c->d_k, c->d_v, c->d_out, attn_self_work(c), (double)ATTN_MAX_WORK);
    NN_TRY(nn_check_finite("x", x, (size_t)c->n * c->d_in));
    if (w->wq) NN_TRY(nn_check_finite("wq", w->wq, (size_t)c->d_in * c->d_k));
    if (w->wk) NN_TRY(nn_check_finite("wk", w->wk, (size_t)c->d_in * c->d_k));
    if (w->wv) NN_TRY(nn_check_finite("wv", w->wv, (size_t)c->d_in * c->d_v));
    if (w->wo) NN_TRY(nn_check_finite("wo", w->wo, (size_t)c->d_v * c->d_out));
    return NN_OK;
}

/* Projections Y (n, d_out) = X W: up to four, in one parallel region; a
 * NULL W is the identity, Y a copy of X (then d_out = d_in). */
typedef struct {
    nn_real *y;       /* (n, d_out) out */
    const nn_real *x; /* (n, d_in) */
    const nn_real *w; /* (d_in, d_out) or NULL */
    int d_in, d_out;
} Projection;

static void project_forward(const Projection *pr, int count, int n) {
    VecGemm g[4] = {{0}};
    int m = 0;
    for (int i = 0; i < count; i++) {
        if (pr[i].w)
            g[m++] = (VecGemm){VEC_GEMM_NN, pr[i].y, pr[i].d_out, pr[i].x, pr[i].d_in, pr[i].w, pr[i].d_out,
                               n, pr[i].d_out, pr[i].d_in, 0};
        else memcpy(pr[i].y, pr[i].x, sizeof(nn_real) * (size_t)n * pr[i].d_in);
    }
    vec_gemm_parallel(g, m);
}

/* Y = X W with dY = dy[i]: dX += dY W^T (or dY when W is NULL), dW += X^T dY,
 * every product in one region. The dX products share dx and M = n, so each
 * row of dx gets them in list order; the identities are added after them. */
static void project_backward(nn_real *dx, nn_real *const *dw, const nn_real *const *dy, const Projection *pr,
                             int count, int n) {
    VecGemm g[8] = {{0}};
    int m = 0;
    for (int i = 0; i < count; i++) {
        if (!pr[i].w) continue;
        if (dx)
            g[m++] = (VecGemm){VEC_GEMM_NT, dx, pr[i].d_in, dy[i], pr[i].d_out, pr[i].w, pr[i].d_out,
                               n, pr[i].d_in, pr[i].d_out, 1};
        if (dw[i])
            g[m++] = (VecGemm){VEC_GEMM_TN, dw[i], pr[i].d_out, pr[i].x, pr[i].d_in, dy[i], pr[i].d_out,
                               pr[i].d_in, pr[i].d_out, n, 1};
    }
    vec_gemm_parallel(g, m);
    for (int i = 0; i < count && dx; i++)
        if (!pr[i].w) vec_axpy(dx, 1, dy[i], n * pr[i].d_in);
}

/* Columns [c0, c0 + w) of src (n, ld) to dst (n, w), or back with scatter. */
static void gather_cols(nn_real *dst, const nn_real *src, int n, int ld, int c0, int w) {
    for (int i = 0; i < n; i++) memcpy(dst + (size_t)i * w, src + (size_t)i * ld + c0, sizeof(nn_real) * w);
}
static void scatter_cols(nn_real *dst, const nn_real *src, int n, int ld, int c0, int w) {
    for (int i = 0; i < n; i++) memcpy(dst + (size_t)i * ld + c0, src + (size_t)i * w, sizeof(nn_real) * w);
}

int attn_self_forward(const SelfAttnConfig *c, const SelfAttnWeights *w, SelfAttnActs *a,
                      const nn_real *x, nn_real *scratch) {
    NN_TRY(attn_self_check(c, w, x));
    SelfScratch s = self_layout(c);
    AttnConfig h = head_config(c);
    int n = c->n;
    size_t nn = (size_t)n * n;
    const Projection in[3] = {{a->q, x, w->wq, c->d_in, c->d_k},
                              {a->k, x, w->wk, c->d_in, c->d_k},
                              {a->v, x, w->wv, c->d_in, c->d_v}};
    project_forward(in, 3, n);
    NN_TRY(attn_check_result("q", a->q, 0, n, c->d_k));
    NN_TRY(attn_check_result("k", a->k, 0, n, c->d_k));
    NN_TRY(attn_check_result("v", a->v, 0, n, c->d_v));
    for (int hd = 0; hd < c->heads; hd++) {
        gather_cols(scratch + s.qh, a->q, n, c->d_k, hd * h.d_k, h.d_k);
        gather_cols(scratch + s.kh, a->k, n, c->d_k, hd * h.d_k, h.d_k);
        gather_cols(scratch + s.vh, a->v, n, c->d_v, hd * h.d_v, h.d_v);
        NN_TRY(attn_forward(&h, &head_params, a->scores + hd * nn, a->weights + hd * nn, scratch + s.zh,
                         scratch + s.qh, scratch + s.kh, scratch + s.vh, scratch + s.attn));
        scatter_cols(a->context, scratch + s.zh, n, c->d_v, hd * h.d_v, h.d_v);
    }
    const Projection out = {a->output, a->context, w->wo, c->d_v, c->d_out};
    project_forward(&out, 1, n);
    return attn_check_result("output", a->output, 0, n, c->d_out);
}

int attn_self_backward(const SelfAttnConfig *c, const SelfAttnWeights *w, SelfAttnGrads *g,
                       nn_real *dx, const nn_real *doutput, const SelfAttnActs *a, const nn_real *x,
                       nn_real *scratch) {
    NN_TRY(attn_self_check(c, w, x));
    SelfScratch s = self_layout(c);
    AttnConfig h = head_config(c);
    int n = c->n;
    size_t nn = (size_t)n * n;
    nn_real *dq = scratch + s.dq, *dk = scratch + s.dk, *dv = scratch + s.dv, *dz = scratch + s.dz;
    memset(dz, 0, sizeof(nn_real) * (size_t)n * c->d_v);
    const Projection out = {a->output, a->context, w->wo, c->d_v, c->d_out};
    nn_real *dwo = g ? g->wo : NULL;
    project_backward(dz, &dwo, &doutput, &out, 1, n);
    for (int hd = 0; hd < c->heads; hd++) {
        nn_real *dqh = scratch + s.dqh, *dkh = scratch + s.dkh, *dvh = scratch + s.dvh;
        gather_cols(scratch + s.qh, a->q, n, c->d_k, hd * h.d_k, h.d_k);
        gather_cols(scratch + s.kh, a->k, n, c->d_k, hd * h.d_k, h.d_k);
        gather_cols(scratch + s.vh, a->v, n, c->d_v, hd * h.d_v, h.d_v);
        gather_cols(scratch + s.dzh, dz, n, c->d_v, hd * h.d_v, h.d_v);
        memset(dqh, 0, sizeof(nn_real) * (size_t)n * h.d_k);
        memset(dkh, 0, sizeof(nn_real) * (size_t)n * h.d_k);
        memset(dvh, 0, sizeof(nn_real) * (size_t)n * h.d_v);
        NN_TRY(attn_backward(&h, &head_params, NULL, dqh, dkh, dvh, scratch + s.dzh, NULL, a->scores + hd * nn,
                          a->weights + hd * nn, scratch + s.qh, scratch + s.kh, scratch + s.vh,
                          scratch + s.attn));
        scatter_cols(dq, dqh, n, c->d_k, hd * h.d_k, h.d_k);
        scatter_cols(dk, dkh, n, c->d_k, hd * h.d_k, h.d_k);
        scatter_cols(dv, dvh, n, c->d_v, hd * h.d_v, h.d_v);
    }
    const Projection in[3] = {{a->q, x, w->wq, c->d_in, c->d_k},
                              {a->k, x, w->wk, c->d_in, c->d_k},
                              {a->v, x, w->wv, c->d_in, c->d_v}};
    nn_real *const dw[3] = {g ? g->wq : NULL, g ? g->wk : NULL, g ? g->wv : NULL};
    const nn_real *const dy[3] = {dq, dk, dv};
    project_backward(dx, dw, dy, in, 3, n);
    return NN_OK;
}
