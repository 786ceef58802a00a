/* Self-attention: Q = X Wq, K = X Wk, V = X Wv (row-vector convention, a NULL
 * projection is the identity), heads attend over contiguous column blocks,
 * the heads' contexts are concatenated and projected by Wo. The projections
 * split their rows across the pool's threads (gemm_parallel.h) and each head's
 * attention its row blocks (attn_forward / attn_backward); the heads run one
 * after another. */
#include <math.h>
#include <string.h>

#include "attnlab/attention.h"
#include "base/error.h"
#include "base/layout.h"
#include "base/pool.h"
#include "core/gemm_parallel.h"
#include "core/vec.h"

/* ---- multi-head attention over given Q, K, V ---------------------------------- */

/* One head's attention problem. */
static AttnConfig head_problem(const AttnHeadsConfig *c, int h) {
    AttnConfig a = {0};
    a.n_q = a.n_k = c->n;
    a.d_q = a.d_k = c->d_k;
    a.d_v = c->d_v;
    a.score = c->score;
    a.norm = ATTN_NORM_SOFTMAX;
    a.temperature = 1;
    a.causal = c->causal;
    a.alibi = c->alibi ? c->alibi[h] : 0;
    return a;
}

typedef struct {
    size_t qh, kh, vh, zh;     /* one head's Q, K (RoPE: turned), V, context (gathered) */
    size_t dqh, dkh, dvh, dzh; /* and their gradients */
    size_t attn;               /* attn_forward / attn_backward scratch */
    size_t total;              /* reals in all */
} HeadsScratch;

static HeadsScratch heads_layout_for(const AttnHeadsConfig *c, int most) {
    AttnConfig h = head_problem(c, 0); /* the scratch does not depend on the slope */
    h.alibi = 0;
    size_t n = (size_t)c->n, dk = (size_t)c->d_k, dv = (size_t)c->d_v;
    NnLayout l = {0};
    HeadsScratch s;
    s.qh = nn_layout_take(&l, n * dk);
    s.kh = nn_layout_take(&l, n * dk);
    s.vh = nn_layout_take(&l, n * dv);
    s.zh = nn_layout_take(&l, n * dv);
    s.dqh = nn_layout_take(&l, n * dk);
    s.dkh = nn_layout_take(&l, n * dk);
    s.dvh = nn_layout_take(&l, n * dv);
    s.dzh = nn_layout_take(&l, n * dv);
    s.attn = nn_layout_take(&l, most ? attn_scratch_size_most(&h) : attn_scratch_size(&h));
    s.total = l.size;
    return s;
}

static HeadsScratch heads_layout(const AttnHeadsConfig *c) { return heads_layout_for(c, 0); }

size_t attn_heads_scratch_size(const AttnHeadsConfig *c) { return heads_layout(c).total; }

size_t attn_heads_scratch_size_most(const AttnHeadsConfig *c) { return heads_layout_for(c, 1).total; }

/* Columns [c0, c0 + w) of src (n rows, ld apart) to dst (n, w); back with
 * scatter (=) or add (+=). Plain loops, not memcpy: a head's row is a few
 * dozen bytes, and WASM's memcpy is a call per row. */
static void gather_cols(nn_real *dst, const nn_real *src, int n, int ld, int c0, int w) {
    for (int i = 0; i < n; i++) {
        const nn_real *s = src + (size_t)i * ld + c0;
        nn_real *d = dst + (size_t)i * w;
        for (int c = 0; c < w; c++) d[c] = s[c];
    }
}
static void scatter_cols(nn_real *dst, const nn_real *src, int n, int ld, int c0, int w) {
    for (int i = 0; i < n; i++) {
        const nn_real *s = src + (size_t)i * w;
        nn_real *d = dst + (size_t)i * ld + c0;
        for (int c = 0; c < w; c++) d[c] = s[c];
    }
}
static void add_cols(nn_real *dst, const nn_real *src, int n, int ld, int c0, int w) {
    for (int i = 0; i < n; i++) {
        const nn_real *s = src + (size_t)i * w;
        nn_real *d = dst + (size_t)i * ld + c0;
        for (int c = 0; c < w; c++) d[c] += s[c];
    }
}

/* RoPE on rows x (n, d), its first r dimensions: sign +1: each pair (x0, x1) ->
 * (x0 cos - x1 sin, x0 sin + x1 cos), the rotation by t theta_i; sign -1: its
 * transpose (the backward's). Pair i is (2i, 2i+1), or (i, i + r/2) with
 * `half` (GPT-NeoX's rotate-half). Then q'_i . k'_j = q_i . R(j - i) k_j:
 * position enters only through the offset. */
static void rope_turn(nn_real *x, const nn_real *rope, int n, int d, int r, int half_pairs, nn_real sign) {
    int half = r / 2, step = half_pairs ? 1 : 2, other = half_pairs ? half : 1;
    for (int t = 0; t < n; t++) {
        const nn_real *cs = rope + (size_t)t * half * 2;
        nn_real *row = x + (size_t)t * d;
        for (int i = 0; i < half; i++) {
            nn_real *a = row + i * step, *b = a + other;
            nn_real c = cs[2 * i], sn = sign * cs[2 * i + 1], x0 = *a, x1 = *b;
            *a = x0 * c - x1 * sn;
            *b = x0 * sn + x1 * c;
        }
    }
}

void attn_rope_table(nn_real *out, int n, int pairs, int w, double base) {
    for (int t = 0; t < n; t++)
        for (int i = 0; i < pairs; i++) {
            double angle = t * pow(base, -2.0 * i / w);
            out[((size_t)t * pairs + i) * 2] = (nn_real)cos(angle);
            out[((size_t)t * pairs + i) * 2 + 1] = (nn_real)sin(angle);
        }
}

/* Head rows' RoPE, as the config asks (sign as rope_turn's). */
static void rope_heads(const AttnHeadsConfig *c, nn_real *x, int n, nn_real sign) {
    rope_turn(x, c->rope, n, c->d_k, c->rope_dims ? c->rope_dims : c->d_k, c->rope_half, sign);
}

/* Head hd's queries, keys and values gathered into scratch (RoPE applied). */
static void gather_head(const AttnHeadsConfig *c, const AttnHeadsIO *io, const HeadsScratch *s, nn_real *scratch,
                        int hd) {
    gather_cols(scratch + s->qh, io->q, c->n, io->ldq, hd * c->d_k, c->d_k);
    gather_cols(scratch + s->kh, io->k, c->n, io->ldk, hd * c->d_k, c->d_k);
    gather_cols(scratch + s->vh, io->v, c->n, io->ldv, hd * c->d_v, c->d_v);
    if (c->rope) {
        rope_heads(c, scratch + s->qh, c->n, 1);
        rope_heads(c, scratch + s->kh, c->n, 1);
    }
}

/* Head hd's scores, weights and context, in one head's scratch. */
static int head_forward(const AttnHeadsConfig *c, const AttnHeadsIO *io, nn_real *scratch, int hd) {
    HeadsScratch s = heads_layout(c);
    AttnParams p = {NULL, NULL, NULL, NULL, c->beta};
    size_t nn = (size_t)c->n * c->n;
    AttnConfig h = head_problem(c, hd);
    gather_head(c, io, &s, scratch, hd);
    NN_TRY(attn_check_config(&h, &p));
    NN_TRY(attn_forward_checked(&h, &p, io->scores + hd * nn, io->weights + hd * nn, scratch + s.zh, scratch + s.qh,
                                scratch + s.kh, scratch + s.vh, scratch + s.attn));
    if (c->ablate && c->ablate[hd]) memset(scratch + s.zh, 0, sizeof(nn_real) * (size_t)c->n * c->d_v);
    scatter_cols(io->context, scratch + s.zh, c->n, io->ldz, hd * c->d_v, c->d_v);
    return NN_OK;
}

int attn_heads_forward(const AttnHeadsConfig *c, const AttnHeadsIO *io, nn_real *scratch) {
    for (int hd = 0; hd < c->heads; hd++) NN_TRY(head_forward(c, io, scratch, hd));
    return NN_OK;
}

typedef struct {
    const AttnHeadsConfig *c;
    const AttnHeadsIO *io;
    nn_real *scratch;
    size_t each; /* one head's scratch */
    int copies;
} HeadsJob;

/* Thread tid's heads, in its own copy of the scratch (the pool's threads beyond the copies take none). */
static int heads_task(void *ctx, int tid, int n) {
    const HeadsJob *job = ctx;
    int used = n < job->copies ? n : job->copies, h0, h1;
    if (tid >= used) return NN_OK;
    nn_pool_range(job->c->heads, tid, used, &h0, &h1);
    for (int hd = h0; hd < h1; hd++) NN_TRY(head_forward(job->c, job->io, job->scratch + (size_t)tid * job->each, hd));
    return NN_OK;
}

int attn_heads_forward_split(const AttnHeadsConfig *c, const AttnHeadsIO *io, nn_real *scratch, int copies) {
    if (copies < 2 || c->heads < 2) return attn_heads_forward(c, io, scratch);
    HeadsJob job = {c, io, scratch, attn_heads_scratch_size(c), copies};
    double work = (double)c->heads * c->n * c->n * (c->d_k + c->d_v);
    return nn_pool_run(heads_task, &job, work);
}

/* ---- one query against cached keys and values (a decoder's cached step) -------- */

/* One head's single-query problem: keys 0..pos, all visible (the query is the last). */
static AttnConfig step_problem(const AttnHeadsConfig *c, int keys) {
    AttnConfig a = head_problem(c, 0);
    a.n_q = 1;
    a.n_k = keys;
    a.causal = 0;
    a.alibi = 0;
    return a;
}

typedef struct {
    size_t qh, kh, vh, zh, scores, weights, attn, total;
} StepScratch;

static StepScratch step_layout(const AttnHeadsConfig *c) {
    AttnConfig a = step_problem(c, c->n);
    size_t n = (size_t)c->n, dk = (size_t)c->d_k, dv = (size_t)c->d_v;
    NnLayout l = {0};
    StepScratch s;
    s.qh = nn_layout_take(&l, dk);
    s.kh = nn_layout_take(&l, n * dk);
    s.vh = nn_layout_take(&l, n * dv);
    s.zh = nn_layout_take(&l, dv);
    s.scores = nn_layout_take(&l, n);
    s.weights = nn_layout_take(&l, n);
    s.attn = nn_layout_take(&l, attn_scratch_size(&a));
    s.total = l.size;
    return s;
}

size_t attn_heads_step_scratch_size(const AttnHeadsConfig *c) { return step_layout(c).total; }

int attn_heads_step(const AttnHeadsConfig *c, int pos, const nn_real *q, const nn_real *k, int ldk, const nn_real *v,
                    int ldv, nn_real *z, nn_real *scratch) {
    if (pos < 0 || pos >= c->n)
        return nn_fail(NN_ERR_SHAPE, "attention step: position %d; need 0..%d", pos, c->n - 1);
    if (c->alibi) return nn_fail(NN_ERR_ARG, "attention step: ALiBi's offsets are not taken by the cached step");
    StepScratch s = step_layout(c);
    AttnParams p = {NULL, NULL, NULL, NULL, c->beta};
    AttnConfig a = step_problem(c, pos + 1);
    int r = c->rope_dims ? c->rope_dims : c->d_k;
    for (int hd = 0; hd < c->heads; hd++) {
        nn_real *zh = scratch + s.zh;
        if (c->ablate && c->ablate[hd]) {
            memset(z + (size_t)hd * c->d_v, 0, sizeof(nn_real) * c->d_v);
            continue;
        }
        gather_cols(scratch + s.qh, q, 1, 0, hd * c->d_k, c->d_k);
        gather_cols(scratch + s.kh, k, pos + 1, ldk, hd * c->d_k, c->d_k);
        gather_cols(scratch + s.vh, v, pos + 1, ldv, hd * c->d_v, c->d_v);
        if (c->rope) { /* the query at its position, key j at j: as attn_heads_forward turns them */
            rope_turn(scratch + s.qh, c->rope + (size_t)pos * r, 1, c->d_k, r, c->rope_half, 1);
            rope_turn(scratch + s.kh, c->rope, pos + 1, c->d_k, r, c->rope_half, 1);
        }
        NN_TRY(attn_forward(&a, &p, scratch + s.scores, scratch + s.weights, zh, scratch + s.qh, scratch + s.kh,
                            scratch + s.vh, scratch + s.attn));
        scatter_cols(z, zh, 1, 0, hd * c->d_v, c->d_v);
    }
    return NN_OK;
}

/* The forward in reverse, per head: dq^, dk^, dv from attn_backward on the
 * gathered (turned) rows, dq = R^T dq^, dk = R^T dk^ (RoPE), added into
 * the head's columns. ALiBi's bias is a constant: the same backward. */
int attn_heads_backward(const AttnHeadsConfig *c, const AttnHeadsIO *io, nn_real *dq, nn_real *dk, nn_real *dv,
                        const nn_real *dcontext, nn_real *scratch) {
    HeadsScratch s = heads_layout(c);
    AttnParams p = {NULL, NULL, NULL, NULL, c->beta};
    size_t nn = (size_t)c->n * c->n;
    int n = c->n;
    for (int hd = 0; hd < c->heads; hd++) {
        if (c->ablate && c->ablate[hd]) continue; /* its context is zero: no gradient */
        AttnConfig h = head_problem(c, hd);
        nn_real *dqh = scratch + s.dqh, *dkh = scratch + s.dkh, *dvh = scratch + s.dvh;
        gather_head(c, io, &s, scratch, hd);
        gather_cols(scratch + s.dzh, dcontext, n, io->ldz, hd * c->d_v, c->d_v);
        memset(dqh, 0, sizeof(nn_real) * (size_t)n * c->d_k);
        memset(dkh, 0, sizeof(nn_real) * (size_t)n * c->d_k);
        memset(dvh, 0, sizeof(nn_real) * (size_t)n * c->d_v);
        NN_TRY(attn_backward_checked(&h, &p, NULL, dqh, dkh, dvh, scratch + s.dzh, NULL, io->scores + hd * nn,
                                     io->weights + hd * nn, scratch + s.qh, scratch + s.kh, scratch + s.vh,
                                     scratch + s.attn));
        if (c->rope) {
            rope_heads(c, dqh, n, -1);
            rope_heads(c, dkh, n, -1);
        }
        if (dq) add_cols(dq, dqh, n, io->ldq, hd * c->d_k, c->d_k);
        if (dk) add_cols(dk, dkh, n, io->ldk, hd * c->d_k, c->d_k);
        if (dv) add_cols(dv, dvh, n, io->ldv, hd * c->d_v, c->d_v);
    }
    return NN_OK;
}

/* ---- self-attention: projections around the heads ------------------------------ */

/* The heads of a self-attention problem: plain softmax heads, no hooks. */
static AttnHeadsConfig self_heads(const SelfAttnConfig *c) {
    AttnHeadsConfig h = {c->n, c->heads, c->d_k / c->heads, c->d_v / c->heads, c->score, 1, c->causal, NULL, NULL, NULL, 0, 0};
    return h;
}

typedef struct {
    size_t dq, dk, dv, dz; /* full-width gradients (n, d_k | d_v) */
    size_t heads;          /* attn_heads_forward / _backward scratch */
    size_t total;          /* reals in all */
} SelfScratch;

static SelfScratch self_layout(const SelfAttnConfig *c) {
    AttnHeadsConfig h = self_heads(c);
    size_t n = (size_t)c->n;
    NnLayout l = {0};
    SelfScratch s;
    s.dq = nn_layout_take(&l, n * c->d_k);
    s.dk = nn_layout_take(&l, n * c->d_k);
    s.dv = nn_layout_take(&l, n * c->d_v);
    s.dz = nn_layout_take(&l, n * c->d_v);
    s.heads = nn_layout_take(&l, attn_heads_scratch_size(&h));
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
        return nn_check_size("x: tokens", c->n, 1, ATTN_MAX_TOKENS);
    if ((size_t)c->n * c->n > ATTN_MAX_CELLS)
        return nn_fail(NN_ERR_LIMIT, "x: %d tokens make %d x %d cells, past the limit of %d", c->n, c->n, c->n,
                       ATTN_MAX_CELLS);
    const int dims[4] = {c->d_in, c->d_k, c->d_v, c->d_out};
    const char *names[4] = {"x: columns", "wq/wk: columns", "wv: columns", "wo: columns"};
    for (int i = 0; i < 4; i++)
        if (dims[i] < 1 || dims[i] > ATTN_MAX_DIM)
            return nn_check_size(names[i], dims[i], 1, ATTN_MAX_DIM);
    if (c->heads < 1 || c->heads > ATTN_MAX_HEADS)
        return nn_check_size("heads", c->heads, 1, ATTN_MAX_HEADS);
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

int attn_self_forward(const SelfAttnConfig *c, const SelfAttnWeights *w, SelfAttnActs *a,
                      const nn_real *x, nn_real *scratch) {
    NN_TRY(attn_self_check(c, w, x));
    SelfScratch s = self_layout(c);
    AttnHeadsConfig h = self_heads(c);
    int n = c->n;
    const Projection in[3] = {{a->q, x, w->wq, c->d_in, c->d_k},
                              {a->k, x, w->wk, c->d_in, c->d_k},
                              {a->v, x, w->wv, c->d_in, c->d_v}};
    project_forward(in, 3, n);
    NN_TRY(attn_check_result("q", a->q, 0, n, c->d_k));
    NN_TRY(attn_check_result("k", a->k, 0, n, c->d_k));
    NN_TRY(attn_check_result("v", a->v, 0, n, c->d_v));
    AttnHeadsIO io = {a->q, a->k, a->v, c->d_k, c->d_k, c->d_v, a->context, c->d_v, a->scores, a->weights};
    NN_TRY(attn_heads_forward(&h, &io, scratch + s.heads));
    const Projection out = {a->output, a->context, w->wo, c->d_v, c->d_out};
    project_forward(&out, 1, n);
    return attn_check_result("output", a->output, 0, n, c->d_out);
}

int attn_self_backward(const SelfAttnConfig *c, const SelfAttnWeights *w, SelfAttnGrads *g,
                       nn_real *dx, const nn_real *doutput, const SelfAttnActs *a, const nn_real *x,
                       nn_real *scratch) {
    NN_TRY(attn_self_check(c, w, x));
    SelfScratch s = self_layout(c);
    AttnHeadsConfig h = self_heads(c);
    int n = c->n;
    nn_real *dq = scratch + s.dq, *dk = scratch + s.dk, *dv = scratch + s.dv, *dz = scratch + s.dz;
    memset(dz, 0, sizeof(nn_real) * (size_t)n * c->d_v);
    const Projection out = {a->output, a->context, w->wo, c->d_v, c->d_out};
    nn_real *dwo = g ? g->wo : NULL;
    project_backward(dz, &dwo, &doutput, &out, 1, n);
    memset(dq, 0, sizeof(nn_real) * (size_t)n * c->d_k);
    memset(dk, 0, sizeof(nn_real) * (size_t)n * c->d_k);
    memset(dv, 0, sizeof(nn_real) * (size_t)n * c->d_v);
    AttnHeadsIO io = {a->q, a->k, a->v, c->d_k, c->d_k, c->d_v, a->context, c->d_v, a->scores, a->weights};
    NN_TRY(attn_heads_backward(&h, &io, dq, dk, dv, dz, scratch + s.heads));
    const Projection in[3] = {{a->q, x, w->wq, c->d_in, c->d_k},
                              {a->k, x, w->wk, c->d_in, c->d_k},
                              {a->v, x, w->wv, c->d_in, c->d_v}};
    nn_real *const dw[3] = {g ? g->wq : NULL, g ? g->wk : NULL, g ? g->wv : NULL};
    const nn_real *const dy[3] = {dq, dk, dv};
    project_backward(dx, dw, dy, in, 3, n);
    return NN_OK;
}
