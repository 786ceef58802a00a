/* GPT-2's forward pass (include/attnlab/gpt2.h) as a short list of the
 * shared layers, as in llm.c: embedding, positions, per block LayerNorm ->
 * linear (c_attn) -> the core's causal multi-head attention -> linear
 * (c_proj) -> residual, LayerNorm -> the gelu_new MLP -> residual; the final
 * LayerNorm and the unembedding. Then what is read off it: inspect,
 * evaluate, generate, head scores. Scratch is allocated per call, at entry,
 * from one size table; the passes themselves allocate nothing. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab/attention.h"
#include "base/error.h"
#include "base/layout.h"
#include "base/pool.h"
#include "base/rng.h"
#include "core/gemm_parallel.h"
#include "core/vec.h"
#include "layers/embedding.h"
#include "layers/layernorm.h"
#include "layers/linear.h"
#include "layers/mlp.h"
#include "layers/output.h"
#include "models/decoder.h"
#include "models/decoder_view.h"
#include "models/gpt2_internal.h"

/* Rows of logits computed at once: the unembedding's (rows, V) scratch. */
#define GPT2_LOGIT_ROWS 128
/* Rows exact patching runs at once: a layer's patched runs together (the
 * weights read once for all of them), up to this many of their rows. */
#define GPT2_PATCH_ROWS 256

/* One call's buffers for `batch` runs of n tokens (pointers into one block;
 * the rows of the runs one after the other, each run's maps its own). */
typedef struct {
    int batch;           /* runs the buffers hold: 1, or a patch's runs of one layer */
    nn_real *x;          /* (B n, C) the residual stream (B: batch; the row buffers below hold B n rows too) */
    nn_real *ln;         /* (n, C) a LayerNorm's output, then a sub-layer's */
    nn_real *mean, *rstd; /* (n) */
    nn_real *qkv;        /* (n, 3C) */
    nn_real *atty;       /* (n, C) the heads' contexts, then the MLP's output */
    nn_real *attn;       /* (n, C) the attention's output (c_proj of the contexts) */
    nn_real *h, *a;      /* (n, F) the MLP's hidden layer before and after GELU */
    nn_real *scores;     /* (H, n, n) one layer's */
    nn_real *att;        /* (H, n, n) one layer's attention weights */
    nn_real *heads;      /* attn_heads_forward_split's scratch: head_copies of one head's */
    int head_copies;     /* the pool's threads when the call began */
    nn_real *step;       /* attn_heads_step's scratch (a cached step's attention) */
    nn_real *layers;     /* (L, n, C) each block's output, for the lens, or NULL */
    nn_real *logits;     /* (min(n, GPT2_LOGIT_ROWS), V) */
    nn_real *block;
    nn_real *kv;         /* generate's cache (L, n, 2C): each position's keys and values, or NULL */
    int kv_rows;         /* positions the cache holds per layer */
    int from;            /* a whole pass's first block (patching: the blocks below stand as x0) */
    int until;           /* and the block after its last (0: the last layer's); a backward reruns one */
    const nn_real *x0;   /* (n, C) block `from`'s input, or NULL: the embedding */
} Gpt2Run;

static AttnHeadsConfig heads_of(const Gpt2 *m, int layer, int n) {
    int D = m->c.d_model / m->c.heads;
    AttnHeadsConfig h = {n, m->c.heads, D, D, ATTN_SCORE_SCALED_DOT, 1, 1, m->rope, NULL, m->ablate + layer * m->c.heads,
                         m->c.rotary_dims, 1};
    return h;
}

/* Lays out the buffers for `batch` runs of n tokens (base NULL: only counts). */
static size_t run_layout(const Gpt2 *m, int n, int batch, int lens, nn_real *base, Gpt2Run *r) {
    size_t B = (size_t)batch, N = B * n, C = (size_t)m->c.d_model, F = (size_t)m->c.d_ff, H = (size_t)m->c.heads;
    size_t rows = N < GPT2_LOGIT_ROWS ? N : GPT2_LOGIT_ROWS;
    r->batch = batch;
    NnLayout l = {0};
#define TAKE(count) (base ? base + nn_layout_take(&l, (count)) : (nn_layout_take(&l, (count)), (nn_real *)NULL))
    r->x = TAKE(N * C);
    r->ln = TAKE(N * C);
    r->mean = TAKE(N);
    r->rstd = TAKE(N);
    r->qkv = TAKE(N * 3 * C);
    r->atty = TAKE(N * C);
    r->attn = TAKE(N * C);
    r->h = TAKE(N * F);
    r->a = TAKE(N * F);
    r->scores = TAKE(B * H * n * n);
    r->att = TAKE(B * H * n * n);
    AttnHeadsConfig hc = heads_of(m, 0, n);
    r->head_copies = nn_pool_threads();
    r->heads = TAKE(attn_heads_scratch_size(&hc) * (size_t)r->head_copies);
    r->step = TAKE(attn_heads_step_scratch_size(&hc));
    r->layers = lens ? TAKE((size_t)m->c.layers * N * C) : NULL;
    r->logits = TAKE(rows * (size_t)m->c.vocab);
#undef TAKE
    r->block = base;
    r->kv = NULL;
    r->kv_rows = 0;
    r->from = 0;
    r->until = 0;
    r->x0 = NULL;
    return l.size;
}

/* Reals of scratch one call may take (about 1 GB in float). */
#define GPT2_MAX_SCRATCH ((size_t)1 << 28)

static int run_create(const Gpt2 *m, int n, int batch, int lens, Gpt2Run *r) {
    size_t size = run_layout(m, n, batch, lens, NULL, r);
    if (size > GPT2_MAX_SCRATCH)
        return nn_fail(NN_ERR_LIMIT, "input: %d tokens need %zu reals of scratch, past the limit of %zu; use fewer tokens",
                       n, size, GPT2_MAX_SCRATCH);
    nn_real *block = malloc(sizeof(nn_real) * size);
    if (!block) return nn_fail(NN_ERR_NOMEM, "out of memory for %d tokens' scratch (%zu reals)", n, size);
    run_layout(m, n, batch, lens, block, r);
    return NN_OK;
}

static void run_free(Gpt2Run *r) { free(r->block); }

static int check_tokens(const Gpt2 *m, const int32_t *tokens, int n, int least, int most) {
    NN_TRY(gpt2_check_ready(m));
    return dec_check_tokens(tokens, n, least, most, m->c.vocab);
}

/* x (n, C) = the tokens' rows of wte: a row copied, or gathered from the
 * unembedding's panels when the two are tied (wte then is only those). */
static void embed(const Gpt2 *m, nn_real *x, const int32_t *tokens, int n) {
    int C = m->c.d_model;
    if (!m->tied) {
        embedding_forward(x, m->w.wte, tokens, (size_t)n, C);
        return;
    }
    int nr = vec_panel_width();
    for (int t = 0; t < n; t++) {
        const nn_real *panel = m->w.wte + (size_t)(tokens[t] / nr) * C * nr + tokens[t] % nr;
        for (int c = 0; c < C; c++) x[(size_t)t * C + c] = panel[(size_t)c * nr];
    }
}

/* The blocks over B runs of tokens (n) at positions pos0..: whole
 * sequences (pos0 0, each run's attention over its own rows; B > 1 only
 * from a given block input, the same for every run) or one more position
 * after the cached ones (B 1, n 1, pos0 > 0: the core's attention step of
 * its query over the cache). The rows' keys and values go to the cache when
 * there is one. r->x holds the last block's output, run after run; each
 * block's output is kept in r->layers when it is there (B 1). A whole
 * sequence's pass hands run b's activations to hooks[b] (hooks NULL: none)
 * at each of decoder.h's sites; the row-wise layers take all runs' rows at
 * once (each weight read once for them). */
static int blocks_forward(const Gpt2 *m, Gpt2Run *r, const int32_t *tokens, int n, int B, int pos0,
                          const DecHook *hooks) {
    const Gpt2Config *c = &m->c;
    const Gpt2Weights *w = &m->w;
    int C = c->d_model, F = c->d_ff, H = c->heads, BN = B * n;
    size_t NC = (size_t)n * C, BNC = (size_t)B * NC, maps = (size_t)H * n * n;
    /* x = wte[token] + wpe[t] (GPT-NeoX: no positions here; RoPE turns the queries and keys),
     * or block `from`'s input given */
    int given = pos0 == 0 && r->x0, from = given ? r->from : 0;
    if (given) {
        for (int b = 0; b < B; b++) memcpy(r->x + b * NC, r->x0, sizeof(nn_real) * NC);
    } else {
        embed(m, r->x, tokens, n);
        if (w->wpe) vec_axpy(r->x, 1, w->wpe + (size_t)pos0 * C, (int)NC);
    }
    if (pos0 > 0) hooks = NULL;
#define HOOK(b) (hooks ? &hooks[b] : NULL)
    int until = given && r->until ? r->until : c->layers;
    for (int l = from; l < until; l++) {
        for (int b = 0; b < B; b++) dec_at(HOOK(b), DEC_AT_RESID, l, r->x + b * NC, n, C, C);
        LayerNormWeights ln1 = {w->ln1w[l], w->ln1b[l]};
        layernorm_forward_eps(r->ln, r->mean, r->rstd, r->x, &ln1, BN, C, c->epsilon);
        linear_forward_packed(r->qkv, r->ln, w->qkvw[l], w->qkvb[l], BN, C, 3 * C);
        for (int b = 0; b < B; b++) dec_at(HOOK(b), DEC_AT_VALUES, l, r->qkv + 3 * b * NC + 2 * C, n, C, 3 * C);
        nn_real *kv = r->kv ? r->kv + (size_t)l * r->kv_rows * 2 * C : NULL;
        for (int t = 0; kv && t < n; t++)
            memcpy(kv + (size_t)(pos0 + t) * 2 * C, r->qkv + (size_t)t * 3 * C + C, sizeof(nn_real) * 2 * C);
        if (pos0 > 0) {
            AttnHeadsConfig hc = heads_of(m, l, r->kv_rows);
            NN_TRY(attn_heads_step(&hc, pos0, r->qkv, kv, 2 * C, kv + C, 2 * C, r->atty, r->step));
        } else {
            AttnHeadsConfig hc = heads_of(m, l, n);
            for (int b = 0; b < B; b++) {
                nn_real *qkv = r->qkv + 3 * b * NC, *z = r->atty + b * NC, *P = r->att + b * maps;
                AttnHeadsIO io = {qkv, qkv + C, qkv + 2 * C, 3 * C, 3 * C, 3 * C, z, C, r->scores + b * maps, P};
                NN_TRY(attn_heads_forward_split(&hc, &io, r->heads, r->head_copies));
                if (dec_at(HOOK(b), DEC_AT_PATTERN, l, P, H * n, n, n))
                    dec_heads_context(P, qkv + 2 * C, 3 * C, n, H, C / H, m->ablate + (size_t)l * H, z, C);
                dec_at(HOOK(b), DEC_AT_Z, l, z, n, C, C);
            }
        }
        /* the attention's output, c_proj of the contexts (the queries, keys, values and weights stay for a
         * backward pass that reruns this block) */
        nn_real *attn = r->attn;
        linear_forward_packed(attn, r->atty, w->projw[l], w->projb[l], BN, C, C);
        for (int b = 0; b < B; b++) dec_at(HOOK(b), DEC_AT_ATTN, l, attn + b * NC, n, C, C);
        if (!c->parallel) vec_axpy(r->x, 1, attn, (int)BNC); /* x += attn(ln_1 x) */
        LayerNormWeights ln2 = {w->ln2w[l], w->ln2b[l]};
        layernorm_forward_eps(r->ln, r->mean, r->rstd, r->x, &ln2, BN, C, c->epsilon);
        MlpWeights mw = {w->fcw[l], w->fcb[l], w->fcprojw[l], w->fcprojb[l]};
        /* x += mlp(ln_2 x) (atty holds the MLP's output: the contexts are spent); parallel:
         * x += attn(ln_1 x) + mlp(ln_2 x), both of the block's input */
        mlp_forward_packed(r->atty, r->h, r->a, r->ln, &mw, BN, C, F, c->gelu_exact);
        for (int b = 0; b < B; b++) dec_at(HOOK(b), DEC_AT_MLP, l, r->atty + b * NC, n, C, C);
        if (c->parallel) vec_axpy(r->x, 1, attn, (int)BNC);
        vec_axpy(r->x, 1, r->atty, (int)BNC);
        if (r->layers) memcpy(r->layers + (size_t)l * NC, r->x, sizeof(nn_real) * NC);
    }
#undef HOOK
    return NN_OK;
}

/* logits (rows, V) of rows of a residual stream x (rows, C): ln_f, then
 * the unembedding (V, C) as x U^T; rows <= GPT2_LOGIT_ROWS. ln is scratch (rows, C). */
static void unembed(const Gpt2 *m, Gpt2Run *r, const nn_real *x, int rows) {
    int C = m->c.d_model;
    LayerNormWeights lnf = {m->w.lnfw, m->w.lnfb};
    layernorm_forward_eps(r->ln, r->mean, r->rstd, x, &lnf, rows, C, m->c.epsilon);
    vec_gemm_packed_parallel(r->logits, m->c.vocab, r->ln, C, m->w.unembed, rows, m->c.vocab, C, 0);
}

/* In place: a row of logits (V) to probabilities. */
static void softmax_row(nn_real *z, int V) {
    nn_real sum = vec_exp_sum(z, z, vec_max(z, V), V);
    vec_scale(z, 1 / sum, V);
}

/* A hook copying each layer's attention weights (H n rows of n) to the
 * floats at ctx (L, H, n, n). */
static int copy_attention(void *ctx, DecSite site, int layer, nn_real *att, int rows, int cols, int stride) {
    (void)stride;
    if (site != DEC_AT_PATTERN) return 0;
    size_t size = (size_t)rows * cols;
    float *dst = (float *)ctx + (size_t)layer * size;
    for (size_t i = 0; i < size; i++) dst[i] = (float)att[i];
    return 0;
}

/* What is read off a block of rows of logits (rows, V), one row per item,
 * each row's result computed as one thread would: the top 5 with their
 * probabilities (and the logits copied out), the argmax (the lens), or the
 * cross-entropy of a target (evaluate). Output arrays start at row t0. */
typedef struct {
    nn_real *logits;
    int rows, V;
    float *logits_out;           /* (rows, V) or NULL */
    int32_t *top_ids;            /* (rows, GPT2_TOP) with top_p, or NULL */
    float *top_p;
    int32_t *argmax;             /* (rows) or NULL */
    double *loss;                /* (rows) with targets (rows), or NULL */
    const int32_t *targets;
    uint8_t *bad;                /* (rows) 1 where a logit is not finite; the row is then not read */
} LogitRows;

static int finite_row(const nn_real *z, int V) {
    for (int v = 0; v < V; v++)
        if (!isfinite(z[v])) return 0;
    return 1;
}

/* NN_ERR_VALUE when a row of logits was not finite. */
static int check_rows(const uint8_t *bad, int t0, int rows) {
    for (int i = 0; i < rows; i++)
        if (bad[i])
            return nn_fail(NN_ERR_VALUE, "the logits at position %d are not finite: the checkpoint's weights overflow "
                                         "float32 on this input",
                           t0 + i);
    return NN_OK;
}

static void logit_row(const LogitRows *j, int i) {
    int V = j->V;
    nn_real *z = j->logits + (size_t)i * V;
    j->bad[i] = !finite_row(z, V);
    if (j->bad[i]) return;
    if (j->argmax) j->argmax[i] = dec_argmax(z, V);
    if (j->loss) {
        softmax_row(z, V);
        j->loss[i] = crossentropy_forward(z, j->targets[i]);
    }
    if (j->logits_out)
        for (int v = 0; v < V; v++) j->logits_out[(size_t)i * V + v] = (float)z[v];
    if (!j->top_ids) return;
    /* the top 5 by logit, then their probabilities: exp(z - max) / sum, the sum in one pass
     * (no pass dividing all V) */
    int32_t *ids = j->top_ids + (size_t)i * GPT2_TOP;
    float *ps = j->top_p + (size_t)i * GPT2_TOP;
    int k = V < GPT2_TOP ? V : GPT2_TOP;
    output_top_k(z, V, k, ids, ps);
    nn_real sum = vec_exp_sum(z, z, z[ids[0]], V);
    for (int r = 0; r < GPT2_TOP; r++) ps[r] = r < k ? (float)(z[ids[r]] / sum) : 0;
}

static int logit_rows_task(void *ctx, int tid, int n) {
    const LogitRows *j = ctx;
    int b, e;
    nn_pool_range(j->rows, tid, n, &b, &e);
    for (int i = b; i < e; i++) logit_row(j, i);
    return NN_OK;
}

/* Each row costs a few passes over V (a scan, exponentials). */
static void read_logits(const LogitRows *j) { nn_pool_run(logit_rows_task, (void *)j, 8.0 * j->rows * j->V); }

int gpt2_inspect(Gpt2 *m, const int32_t *tokens, int n, float *attention, int32_t *top_ids, float *top_p,
                 int32_t *lens, float *logits) {
    nn_clear_error();
    NN_TRY(check_tokens(m, tokens, n, 1, m->c.context));
    int V = m->c.vocab, C = m->c.d_model, L = m->c.layers, H = m->c.heads;
    /* the results' bytes, counted in 64 bits: a 32-bit size would wrap past 4 GiB */
    uint64_t N = (uint64_t)n, bytes = N * GPT2_TOP * 8 + (attention ? 4 * (uint64_t)L * H * N * N : 0) +
                                     (lens ? 4 * (uint64_t)L * N : 0) + (logits ? 4 * N * (uint64_t)V : 0);
    if (bytes > (uint64_t)GPT2_MAX_RESULT_MB * 1000000)
        return nn_fail(NN_ERR_LIMIT, "inspect: %d tokens' results take %.0f bytes, past the limit of %d MB; use fewer "
                                     "tokens%s",
                       n, (double)bytes, GPT2_MAX_RESULT_MB, logits ? " or leave out the logits" : "");
    Gpt2Run r;
    NN_TRY(run_create(m, n, 1, lens != NULL, &r));
    DecHook copy = {copy_attention, attention};
    uint8_t bad[GPT2_LOGIT_ROWS];
    int st = blocks_forward(m, &r, tokens, n, 1, 0, attention ? &copy : NULL);
    for (int t0 = 0; t0 < n && st == NN_OK; t0 += GPT2_LOGIT_ROWS) {
        int rows = n - t0 < GPT2_LOGIT_ROWS ? n - t0 : GPT2_LOGIT_ROWS;
        unembed(m, &r, r.x + (size_t)t0 * C, rows);
        size_t t = (size_t)t0;
        LogitRows j = {r.logits, rows, V, logits ? logits + t * V : NULL, top_ids ? top_ids + t * GPT2_TOP : NULL,
                       top_ids ? top_p + t * GPT2_TOP : NULL, NULL, NULL, NULL, bad};
        read_logits(&j);
        st = check_rows(bad, t0, rows);
    }
    /* the logit lens: each block's output through ln_f and the unembedding */
    for (int l = 0; lens && l < m->c.layers && st == NN_OK; l++)
        for (int t0 = 0; t0 < n && st == NN_OK; t0 += GPT2_LOGIT_ROWS) {
            int rows = n - t0 < GPT2_LOGIT_ROWS ? n - t0 : GPT2_LOGIT_ROWS;
            unembed(m, &r, r.layers + ((size_t)l * n + t0) * C, rows);
            LogitRows j = {r.logits, rows, V, NULL, NULL, NULL, lens + l * n + t0, NULL, NULL, bad};
            read_logits(&j);
            st = check_rows(bad, t0, rows);
        }
    run_free(&r);
    return st;
}

int gpt2_evaluate(Gpt2 *m, const int32_t *tokens, int n, double *loss) {
    nn_clear_error();
    NN_TRY(check_tokens(m, tokens, n, 2, m->c.context));
    int V = m->c.vocab, C = m->c.d_model;
    Gpt2Run r;
    NN_TRY(run_create(m, n - 1, 1, 0, &r));
    int st = blocks_forward(m, &r, tokens, n - 1, 1, 0, NULL);
    double sum = 0;
    for (int t0 = 0; t0 < n - 1 && st == NN_OK; t0 += GPT2_LOGIT_ROWS) {
        int rows = n - 1 - t0 < GPT2_LOGIT_ROWS ? n - 1 - t0 : GPT2_LOGIT_ROWS;
        unembed(m, &r, r.x + (size_t)t0 * C, rows);
        double loss[GPT2_LOGIT_ROWS];
        uint8_t bad[GPT2_LOGIT_ROWS];
        LogitRows j = {r.logits, rows, V, NULL, NULL, NULL, NULL, loss, tokens + t0 + 1, bad};
        read_logits(&j);
        st = check_rows(bad, t0, rows);
        for (int i = 0; i < rows && st == NN_OK; i++) sum += loss[i]; /* in order: one thread's sum */
    }
    run_free(&r);
    *loss = sum / (n - 1);
    return st;
}

/* generate's state: the scratch and, while the text fits the context, the
 * keys and values of the positions so far (the cache). */
typedef struct {
    Gpt2 *m;
    Gpt2Run r;
    nn_real *kv;
} Generation;

/* The last position's logits after tokens[0..n): while the text fits the
 * context, the first call runs the prompt (filling the cache) and each
 * next one only the newest token (its attention over the cache); past the
 * context, the window slides and every position moves: the whole window. */
static int next_logits(void *ctx, const int32_t *tokens, int n, int step, const nn_real **z) {
    Generation *g = ctx;
    int C = g->m->c.d_model, T = n < g->m->c.context ? n : g->m->c.context;
    const nn_real *last = g->r.x + (size_t)(T - 1) * C;
    g->r.kv = n <= g->m->c.context ? g->kv : NULL; /* filled by the first pass, read and extended by the next ones */
    if (g->r.kv && step > 0) {
        NN_TRY(blocks_forward(g->m, &g->r, tokens + n - 1, 1, 1, n - 1, NULL));
        last = g->r.x;
    } else {
        NN_TRY(blocks_forward(g->m, &g->r, tokens + n - T, T, 1, 0, NULL));
    }
    unembed(g->m, &g->r, last, 1); /* the last position's logits only */
    *z = g->r.logits;
    return NN_OK;
}

int gpt2_generate(Gpt2 *m, int32_t *tokens, int n_prompt, int n_new, double temperature, int k, uint64_t seed) {
    nn_clear_error();
    NN_TRY(gpt2_check_ready(m));
    DecGenerateLimits lim = {m->c.vocab, GPT2_MAX_GENERATE + m->c.context, GPT2_MAX_GENERATE};
    NN_TRY(dec_check_generate(&lim, tokens, n_prompt, n_new, temperature, k));
    int ctx = m->c.context, C = m->c.d_model;
    int longest = n_prompt + n_new - 1 < ctx ? n_prompt + n_new - 1 : ctx;
    if (longest < 1) longest = 1;
    Generation g = {m, {0}, NULL};
    NN_TRY(run_create(m, longest, 1, 0, &g.r));
    g.r.kv_rows = longest;
    if (n_prompt <= ctx && n_new > 1) {
        g.kv = malloc(sizeof(nn_real) * (size_t)m->c.layers * longest * 2 * C);
        if (!g.kv) {
            run_free(&g.r);
            return nn_fail(NN_ERR_NOMEM, "out of memory for the keys and values of %d positions", longest);
        }
    }
    int st = dec_generate(&lim, next_logits, &g, tokens, n_prompt, n_new, temperature, k, seed);
    free(g.kv);
    run_free(&g.r);
    return st;
}

/* Head scores' sums over one sequence: source[t] is where an induction
 * head looks from t (-1: nowhere). */
typedef struct {
    const Gpt2 *m;
    const int32_t *source;
    double *prev, *ind; /* (L, H) sums */
} ScoreSums;

static int add_scores(void *ctx, DecSite site, int layer, nn_real *att, int rows, int n, int stride) {
    (void)rows, (void)stride;
    if (site != DEC_AT_PATTERN) return 0;
    ScoreSums *s = ctx;
    int H = s->m->c.heads;
    dec_add_head_scores(att, H, n, s->source, s->prev + layer * H, s->ind + layer * H);
    return 0;
}

int gpt2_head_scores(Gpt2 *m, int count, int length, uint64_t seed, float *prev, float *ind) {
    nn_clear_error();
    NN_TRY(gpt2_check_ready(m));
    NN_TRY(nn_check_size("count", count, 1, GPT2_MAX_EVALUATE));
    int most = m->c.context / 2 < m->c.vocab ? m->c.context / 2 : m->c.vocab;
    NN_TRY(nn_check_size("length", length, 2, most));
    int L = m->c.layers, H = m->c.heads, n = 2 * length;
    Gpt2Run r;
    NN_TRY(run_create(m, n, 1, 0, &r));
    double *sums = calloc((size_t)2 * L * H, sizeof(double));
    int32_t *tok = malloc(sizeof(int32_t) * 2 * (size_t)n);
    if (!sums || !tok) {
        free(sums);
        free(tok);
        run_free(&r);
        return nn_fail(NN_ERR_NOMEM, "out of memory for the head scores");
    }
    int32_t *source = tok + n;
    ScoreSums s = {m, source, sums, sums + L * H};
    DecHook scores = {add_scores, &s};
    long n_prev = 0, n_ind = 0;
    uint64_t rng = seed;
    int st = NN_OK;
    for (int b = 0; b < count && st == NN_OK; b++) {
        /* `length` distinct tokens, then the same again: the trained transformer's repeat
         * (seq_task_repeat), over the whole vocabulary */
        for (int i = 0; i < length; i++) {
            int32_t t;
            int fresh;
            do {
                t = (int32_t)nn_rng_below(&rng, m->c.vocab);
                fresh = 1;
                for (int j = 0; j < i; j++) fresh &= tok[j] != t;
            } while (!fresh);
            tok[i] = tok[i + length] = t;
        }
        for (int i = 0; i < n; i++) source[i] = i >= length && i - length + 1 < length ? i - length + 1 : -1;
        n_prev += n - 1;
        n_ind += length - 1;
        st = blocks_forward(m, &r, tok, n, 1, 0, &scores);
    }
    for (int i = 0; i < L * H && st == NN_OK; i++) {
        prev[i] = (float)(s.prev[i] / n_prev);
        ind[i] = (float)(s.ind[i] / n_ind);
    }
    free(sums);
    free(tok);
    run_free(&r);
    return st;
}

/* ---- patching (decoder.h's dec_patch over this forward) ---- */

typedef struct {
    const Gpt2 *m;
    Gpt2Run r;
} PatchRun;

/* decoder.h's DecForward: up to the run's batch of runs at once, only each
 * run's last position unembedded (gathered into attn's rows, spent). */
static int patch_forward(void *model, const int32_t *tokens, int n, int copies, const DecHook *hooks, int from,
                         const nn_real *x0, const nn_real **z) {
    PatchRun *p = model;
    if (copies < 1 || copies > p->r.batch || (copies > 1 && !x0))
        return nn_fail(NN_ERR_ARG, "patch: %d runs at once from %s; this run holds 1..%d from a block's input",
                       copies, x0 ? "a block's input" : "the embedding", p->r.batch);
    p->r.from = from;
    p->r.x0 = x0;
    int st = blocks_forward(p->m, &p->r, tokens, n, copies, 0, hooks);
    p->r.from = 0;
    p->r.x0 = NULL;
    NN_TRY(st);
    size_t C = (size_t)p->m->c.d_model;
    for (int i = 0; i < copies; i++)
        memcpy(p->r.attn + i * C, p->r.x + ((size_t)i * n + n - 1) * C, sizeof(nn_real) * C);
    unembed(p->m, &p->r, p->r.attn, copies);
    *z = p->r.logits;
    return NN_OK;
}

/* ---- the backward pass: the activations' gradients (attribution patching), with the weights' (fine-tuning) ---- */

/* A backward's buffers for n tokens: each block's input, the gradients of
 * one block's activations (reused block after block), LayerNorm scratch and
 * the room for a strip of a weight transposed; fine-tuning's also a strip of
 * a weight's gradient. */
typedef struct {
    nn_real *xs;            /* (L + 1, n, C) block l's input; [L] the last block's output */
    nn_real *dres, *dpar;   /* (n, C) the residual's gradient; a parallel block's input's */
    nn_real *dln, *dz, *xm; /* (n, C) a LayerNorm output's gradient; the contexts'; the residual after attention */
    nn_real *lny, *mean, *rstd; /* (n, C), (n), (n) a LayerNorm recomputed */
    nn_real *lng;           /* (2C) its weights' gradients when they are not kept */
    nn_real *dqkv;          /* (n, 3C) */
    nn_real *da;            /* (n, F) */
    nn_real *wt;            /* a strip of the widest weight transposed, in panels (with the unembedding: fine-tuning) */
    nn_real *wg;            /* a strip of the widest weight's gradient (fine-tuning), or NULL */
    nn_real *block;
} Gpt2Grads;

static size_t widest(size_t (*scratch)(int, int), int C, int F, int V) {
    size_t s = scratch(C, 3 * C), fc = scratch(C, F), fcproj = scratch(F, C), un = V ? scratch(C, V) : 0;
    s = fc > s ? fc : s;
    s = fcproj > s ? fcproj : s;
    return un > s ? un : s;
}

/* train: fine-tuning's buffers too (the unembedding's strips, the weights' gradients' strips). */
static size_t grads_layout(const Gpt2 *m, int n, int train, nn_real *base, Gpt2Grads *g) {
    size_t N = (size_t)n, C = (size_t)m->c.d_model, F = (size_t)m->c.d_ff, L = (size_t)m->c.layers;
    int V = train ? m->c.vocab : 0;
    NnLayout l = {0};
#define TAKE(count) (base ? base + nn_layout_take(&l, (count)) : (nn_layout_take(&l, (count)), (nn_real *)NULL))
    g->xs = TAKE((L + 1) * N * C);
    g->dres = TAKE(N * C);
    g->dpar = TAKE(N * C);
    g->dln = TAKE(N * C);
    g->dz = TAKE(N * C);
    g->xm = TAKE(N * C);
    g->lny = TAKE(N * C);
    g->mean = TAKE(N);
    g->rstd = TAKE(N);
    g->lng = TAKE(2 * C);
    g->dqkv = TAKE(N * 3 * C);
    g->da = TAKE(N * F);
    g->wt = TAKE(widest(linear_backward_scratch, (int)C, (int)F, V));
    g->wg = train ? TAKE(widest(linear_weight_grad_scratch, (int)C, (int)F, V)) : NULL;
#undef TAKE
    g->block = base;
    return l.size;
}

static int grads_create(const Gpt2 *m, int n, int train, Gpt2Grads *g) {
    size_t size = grads_layout(m, n, train, NULL, g);
    nn_real *block = malloc(sizeof(nn_real) * size);
    if (!block) return nn_fail(NN_ERR_NOMEM, "out of memory for the backward pass of %d tokens (%zu reals)", n, size);
    grads_layout(m, n, train, block, g);
    return NN_OK;
}

/* Keeps each block's input (DEC_AT_RESID) in ctx's rows (L + 1, n, C). */
static int keep_inputs(void *ctx, DecSite site, int layer, nn_real *x, int rows, int cols, int stride) {
    (void)stride;
    if (site == DEC_AT_RESID) memcpy((nn_real *)ctx + (size_t)layer * rows * cols, x, sizeof(nn_real) * rows * cols);
    return 0;
}

/* dx (n, C) += the gradient of LayerNorm w's input x from dy, its mean and
 * deviation recomputed; its weights' gradients into dgain, dbias (+=), or
 * scratch (NULL). */
static void layernorm_grad(const Gpt2 *m, Gpt2Grads *g, nn_real *dx, const nn_real *dy, const nn_real *x,
                           const nn_real *gain, const nn_real *bias, int n, nn_real *dgain, nn_real *dbias) {
    int C = m->c.d_model;
    LayerNormWeights w = {(nn_real *)gain, (nn_real *)bias}, dw = {g->lng, g->lng + C};
    if (dgain) dw = (LayerNormWeights){dgain, dbias};
    layernorm_forward_eps(g->lny, g->mean, g->rstd, x, &w, n, C, m->c.epsilon);
    layernorm_backward(dx, &dw, dy, x, g->mean, g->rstd, &w, n, C);
}

/* The forward over tokens (n) keeping each block's input in g->xs (and the
 * last block's output after them). */
static int forward_keeping(PatchRun *p, Gpt2Grads *g, const int32_t *tokens, int n) {
    DecHook keep = {keep_inputs, g->xs};
    NN_TRY(blocks_forward(p->m, &p->r, tokens, n, 1, 0, &keep));
    size_t NC = (size_t)n * p->m->c.d_model;
    memcpy(g->xs + (size_t)p->m->c.layers * NC, p->r.x, sizeof(nn_real) * NC);
    return NN_OK;
}

/* From g->dres, the gradient at the last block's output (n, C), back
 * through the blocks to the embedding, each block run again from its input
 * in g->xs for its activations (forward_keeping first). The weights stay
 * packed; with dw (a gradient view laid out as the weights) their gradients
 * are added there, the embeddings' too. The activations' gradients go to
 * `hook` at the sites a forward hands (but the pattern), in the backward's
 * order: MLP, attention, contexts, values, block input. */
static int blocks_backward(PatchRun *p, Gpt2Grads *g, const int32_t *tokens, int n, Gpt2Weights *dw,
                           const DecHook *hook) {
    const Gpt2 *m = p->m;
    const Gpt2Weights *w = &m->w;
    int C = m->c.d_model, F = m->c.d_ff, L = m->c.layers, H = m->c.heads, par = m->c.parallel;
    size_t NC = (size_t)n * C;
    int st = NN_OK;
    for (int l = L - 1; l >= 0 && st == NN_OK; l--) {
        const nn_real *x = g->xs + (size_t)l * NC;
        /* block l again, from its input: its queries, keys, values, weights, hidden units and output stay */
        p->r.from = l;
        p->r.until = l + 1;
        p->r.x0 = x;
        st = blocks_forward(m, &p->r, tokens, n, 1, 0, NULL);
        p->r.from = p->r.until = 0;
        p->r.x0 = NULL;
        if (st != NN_OK) break;
        /* the MLP's output: its gradient is the block output's (both residual forms) */
        dec_at(hook, DEC_AT_MLP, l, g->dres, n, C, C);
        memset(g->dln, 0, sizeof(nn_real) * NC);
        MlpWeights mw = {w->fcw[l], w->fcb[l], w->fcprojw[l], w->fcprojb[l]};
        mlp_backward_input_packed(g->dln, g->da, g->dres, p->r.h, &mw, g->wt, n, C, F, m->c.gelu_exact);
        if (dw) { /* c_proj from the hidden units after GELU, c_fc from ln_2's output (r.ln) with dL/dh */
            linear_backward_weight_packed(dw->fcprojw[l], dw->fcprojb[l], g->dres, p->r.a, g->wg, n, F, C);
            linear_backward_weight_packed(dw->fcw[l], dw->fcb[l], g->da, p->r.ln, g->wg, n, C, F);
        }
        /* ln_2 reads the residual after attention (x + attn), or with a parallel residual the block's input;
         * its input's gradient adds to the residual's there: dres becomes d(x + attn), or dpar d x */
        const nn_real *x2 = x;
        if (par) {
            memcpy(g->dpar, g->dres, sizeof(nn_real) * NC);
        } else {
            for (size_t i = 0; i < NC; i++) g->xm[i] = x[i] + p->r.attn[i];
            x2 = g->xm;
        }
        layernorm_grad(m, g, par ? g->dpar : g->dres, g->dln, x2, w->ln2w[l], w->ln2b[l], n, dw ? dw->ln2w[l] : NULL,
                       dw ? dw->ln2b[l] : NULL);
        /* the attention's output, c_proj of the contexts, the heads, c_attn, ln_1 */
        dec_at(hook, DEC_AT_ATTN, l, g->dres, n, C, C);
        nn_real *q = p->r.qkv;
        if (dw) { /* c_proj's input: the contexts again, from the weights and values the block kept */
            dec_heads_context(p->r.att, q + 2 * C, 3 * C, n, H, C / H, m->ablate + (size_t)l * H, g->xm, C);
            linear_backward_weight_packed(dw->projw[l], dw->projb[l], g->dres, g->xm, g->wg, n, C, C);
        }
        memset(g->dz, 0, sizeof(nn_real) * NC);
        linear_backward_input_packed(g->dz, g->dres, w->projw[l], g->wt, n, C, C);
        dec_at(hook, DEC_AT_Z, l, g->dz, n, C, C);
        memset(g->dqkv, 0, sizeof(nn_real) * NC * 3);
        AttnHeadsConfig hc = heads_of(m, l, n);
        AttnHeadsIO io = {q, q + C, q + 2 * C, 3 * C, 3 * C, 3 * C, p->r.atty, C, p->r.scores, p->r.att};
        st = attn_heads_backward(&hc, &io, g->dqkv, g->dqkv + C, g->dqkv + 2 * C, g->dz, p->r.heads);
        if (st != NN_OK) break;
        dec_at(hook, DEC_AT_VALUES, l, g->dqkv + 2 * C, n, C, 3 * C);
        if (dw) { /* c_attn from ln_1's output, recomputed */
            LayerNormWeights ln1 = {w->ln1w[l], w->ln1b[l]};
            layernorm_forward_eps(g->lny, g->mean, g->rstd, x, &ln1, n, C, m->c.epsilon);
            linear_backward_weight_packed(dw->qkvw[l], dw->qkvb[l], g->dqkv, g->lny, g->wg, n, C, 3 * C);
        }
        memset(g->dln, 0, sizeof(nn_real) * NC);
        linear_backward_input_packed(g->dln, g->dqkv, w->qkvw[l], g->wt, n, C, 3 * C);
        nn_real *dx = par ? g->dpar : g->dres;
        layernorm_grad(m, g, dx, g->dln, x, w->ln1w[l], w->ln1b[l], n, dw ? dw->ln1w[l] : NULL,
                       dw ? dw->ln1b[l] : NULL);
        if (par) {
            g->dpar = g->dres;
            g->dres = dx;
        }
        dec_at(hook, DEC_AT_RESID, l, g->dres, n, C, C);
    }
    if (st != NN_OK || !dw) return st;
    /* the embedding's rows (tied: in the unembedding's panels, as embed reads them) and the positions' */
    int nr = vec_panel_width();
    for (int t = 0; t < n; t++) {
        const nn_real *d = g->dres + (size_t)t * C;
        if (m->tied) {
            nn_real *panel = dw->wte + (size_t)(tokens[t] / nr) * C * nr + tokens[t] % nr;
            for (int c = 0; c < C; c++) panel[(size_t)c * nr] += d[c];
        } else {
            vec_axpy(dw->wte + (size_t)tokens[t] * C, 1, d, C);
        }
        if (dw->wpe) vec_axpy(dw->wpe + (size_t)t * C, 1, d, C);
    }
    return NN_OK;
}

/* decoder.h's DecBackward: the forward over tokens keeping each block's
 * input, then m = logit[a] - logit[b] at the last position back through
 * ln_f and the blocks; activations' gradients alone, to `hook`. */
static int patch_backward(void *model, const int32_t *tokens, int n, int a, int b, const DecHook *hook) {
    PatchRun *p = model;
    const Gpt2 *m = p->m;
    int C = m->c.d_model, L = m->c.layers;
    size_t NC = (size_t)n * C;
    Gpt2Grads g;
    NN_TRY(grads_create(m, n, 0, &g));
    int st = forward_keeping(p, &g, tokens, n);
    if (st == NN_OK) {
        /* m's gradient at ln_f's output of the last row: W_U's columns a less b */
        DecView v;
        st = dec_view_gpt2(m, &v);
        nn_real *u = g.dz, *ub = g.dz + C;
        if (st == NN_OK) {
            dec_matrix_read(&v.unembed, 0, a, C, 1, NULL, u, 1);
            dec_matrix_read(&v.unembed, 0, b, C, 1, NULL, ub, 1);
            for (int i = 0; i < C; i++) u[i] -= ub[i];
            memset(g.dres, 0, sizeof(nn_real) * NC);
            layernorm_grad(m, &g, g.dres + NC - C, u, g.xs + (size_t)L * NC + NC - C, m->w.lnfw, m->w.lnfb, 1, NULL,
                           NULL);
            st = blocks_backward(p, &g, tokens, n, NULL, hook);
        }
    }
    free(g.block);
    return st;
}

/* ---- fine-tuning: the weights' gradients of the next-token loss ---- */

size_t gpt2_gradients_scratch(const Gpt2 *m, int T) {
    Gpt2Run r;
    Gpt2Grads g;
    return run_layout(m, T, 1, 0, NULL, &r) + grads_layout(m, T, 1, NULL, &g);
}

int gpt2_gradients(Gpt2 *m, Gpt2Weights *dw, const int32_t *windows, int B, int T, double *loss) {
    int C = m->c.d_model, V = m->c.vocab, L = m->c.layers;
    size_t NC = (size_t)T * C;
    PatchRun p = {m, {0}};
    Gpt2Grads g;
    NN_TRY(run_create(m, T, 1, 0, &p.r));
    int st = grads_create(m, T, 1, &g);
    if (st != NN_OK) {
        run_free(&p.r);
        return st;
    }
    double sum = 0, scale = 1.0 / ((double)B * T);
    int finite = 1;
    for (int b = 0; b < B && st == NN_OK && finite; b++) {
        const int32_t *tokens = windows + (size_t)b * (T + 1);
        st = forward_keeping(&p, &g, tokens, T);
        memset(g.dres, 0, sizeof(nn_real) * NC);
        const nn_real *x = g.xs + (size_t)L * NC;
        for (int t0 = 0; t0 < T && st == NN_OK && finite; t0 += GPT2_LOGIT_ROWS) {
            int rows = T - t0 < GPT2_LOGIT_ROWS ? T - t0 : GPT2_LOGIT_ROWS;
            unembed(m, &p.r, x + (size_t)t0 * C, rows); /* ln_f's output in r.ln, the logits in r.logits */
            for (int i = 0; i < rows && finite; i++) {
                nn_real *z = p.r.logits + (size_t)i * V;
                int y = tokens[t0 + i + 1];
                finite = finite_row(z, V);
                if (!finite) break;
                softmax_row(z, V);
                sum += crossentropy_forward(z, y);
                z[y] -= 1; /* d loss / d logits: (p - onehot(y)) / (B T) */
                vec_scale(z, (nn_real)scale, V);
            }
            if (!finite) break;
            linear_backward_weight_packed(dw->unembed, NULL, p.r.logits, p.r.ln, g.wg, rows, C, V);
            memset(g.dln, 0, sizeof(nn_real) * rows * C);
            linear_backward_input_packed(g.dln, p.r.logits, m->w.unembed, g.wt, rows, C, V);
            layernorm_grad(m, &g, g.dres + (size_t)t0 * C, g.dln, x + (size_t)t0 * C, m->w.lnfw, m->w.lnfb, rows,
                           dw->lnfw, dw->lnfb);
        }
        if (st == NN_OK && finite) st = blocks_backward(&p, &g, tokens, T, dw, NULL);
    }
    free(g.block);
    run_free(&p.r);
    *loss = finite ? sum * scale : NAN; /* not finite: the training call refuses the step */
    return st;
}

int gpt2_logit_attribution(Gpt2 *m, const int32_t *tokens, int n, int a, int b, double *values, double *logit_diff) {
    nn_clear_error();
    DecView v;
    NN_TRY(dec_view_gpt2(m, &v));
    NN_TRY(nn_check_size("input: tokens", n, 1, m->c.context));
    PatchRun p = {m, {0}};
    NN_TRY(run_create(m, n, 1, 0, &p.r));
    int st = dec_logit_attribution(&v, patch_forward, &p, tokens, n, m->c.context, a, b, values, logit_diff);
    run_free(&p.r);
    return st;
}

int gpt2_patch(Gpt2 *m, const int32_t *clean, const int32_t *corrupt, int n, int a, int b, int target, int method,
               float *out, double *metrics) {
    nn_clear_error();
    NN_TRY(gpt2_check_ready(m));
    NN_TRY(nn_check_size("input: tokens", n, 1, m->c.context));
    /* exact patching runs a layer's cells together, up to GPT2_PATCH_ROWS rows at once */
    int cells = target <= DEC_PATCH_MLP ? n : m->c.heads;
    int copies = method == DEC_PATCH_EXACT ? GPT2_PATCH_ROWS / n : 1;
    copies = copies < 1 ? 1 : copies > cells ? cells : copies > DEC_PATCH_MAX_COPIES ? DEC_PATCH_MAX_COPIES : copies;
    PatchRun p = {m, {0}};
    NN_TRY(run_create(m, n, copies, 0, &p.r));
    DecShape s = {m->c.layers, m->c.heads, m->c.d_model, m->c.vocab, m->c.context, copies};
    int st = method == DEC_PATCH_ATTRIBUTION
                 ? dec_patch_attribution(&s, patch_forward, patch_backward, &p, clean, corrupt, n, a, b,
                                         (DecPatchTarget)target,
                                         out, metrics, metrics + 1)
                 : dec_patch(&s, patch_forward, &p, clean, corrupt, n, a, b, (DecPatchTarget)target, out, metrics,
                             metrics + 1);
    run_free(&p.r);
    return st;
}
