/* The one decoder every transformer runs (its API: include/attnlab/gpt2.h),
 * a loaded checkpoint (GPT-2's or GPT-NeoX's, its matrices in vec_pack's
 * panels) and one made here (transformer.c: row-major, its own positions,
 * scores and slopes) alike, as a short list of the shared layers, as in
 * llm.c: embedding, positions, per block LayerNorm -> linear (c_attn) -> the
 * core's causal multi-head attention -> linear (c_proj) -> residual,
 * LayerNorm -> the GELU MLP -> residual (or GPT-NeoX's parallel form); the
 * final LayerNorm and the unembedding. One block forward (a sequence,
 * several runs at once, training's batch with every activation kept, or
 * generate's cached step) and one block backward; then what is read off
 * them: inspect, evaluate, generate, head scores, patching, attribution,
 * fine-tuning's gradients, training's batched pass. Scratch is allocated per
 * call, at entry, from one size table (training's once, by its model); the
 * passes themselves allocate nothing. */
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

AttnHeadsConfig gpt2_heads(const Gpt2 *m, int layer, int n) {
    int D = m->c.d_model / m->c.heads;
    AttnHeadsConfig h = {n,        m->c.heads, D, D, m->score, m->score_beta, 1, m->rope, m->slopes,
                         m->ablate + layer * m->c.heads, m->c.rotary_dims, m->rope_half};
    return h;
}

/* ---- the layers, over the matrices as the model holds them (panels or rows) ---- */

/* out (N, OC) = x W + b. */
static void linear(const Gpt2 *m, nn_real *out, const nn_real *x, const nn_real *W, const nn_real *b, int N, int IC,
                   int OC) {
    if (m->packed) linear_forward_packed(out, x, W, b, N, IC, OC);
    else linear_forward(out, x, W, b, N, IC, OC);
}

/* The MLP: y (N, C), its hidden units h, a = gelu(h) (N, F) kept. */
static void mlp(const Gpt2 *m, nn_real *y, nn_real *h, nn_real *a, const nn_real *x, const MlpWeights *w, int N) {
    if (m->packed) mlp_forward_packed(y, h, a, x, w, N, m->c.d_model, m->c.d_ff, m->c.gelu_exact);
    else mlp_forward(y, h, a, x, w, N, m->c.d_model, m->c.d_ff, m->c.gelu_exact);
}

/* Lays out the buffers for `batch` runs of n tokens (base NULL: only
 * counts); keep: every block's activations (training's pass). */
static size_t run_layout(const Gpt2 *m, int n, int batch, int lens, int keep, nn_real *base, Gpt2Run *r) {
    size_t B = (size_t)batch, N = B * n, C = (size_t)m->c.d_model, F = (size_t)m->c.d_ff, H = (size_t)m->c.heads;
    size_t L = (size_t)m->c.layers, K = keep ? L : 1; /* copies of a block's buffers */
    size_t rows = N < GPT2_LOGIT_ROWS ? N : GPT2_LOGIT_ROWS;
    r->batch = batch;
    r->n = n;
    r->keep = keep;
    NnLayout l = {0};
#define TAKE(count) nn_layout_at(&l, base, (count))
#define KEPT(count) (keep ? TAKE(count) : NULL)
    r->x = TAKE((keep ? L + 1 : 1) * N * C);
    r->xa = KEPT(L * N * C);
    r->ln = TAKE(K * N * C);
    r->mean = TAKE(K * N);
    r->rstd = TAKE(K * N);
    r->ln2 = KEPT(L * N * C);
    r->mean2 = KEPT(L * N);
    r->rstd2 = KEPT(L * N);
    r->qkv = TAKE(K * N * 3 * C);
    r->atty = TAKE(K * N * C);
    /* training's sequential block writes its sums where they are kept (blocks_forward's direct) */
    int direct = keep && !(m->c.parallel && F);
    r->attn = direct ? NULL : TAKE(N * C);
    r->mlp = keep && !direct ? TAKE(N * C) : NULL;
    r->h = TAKE(K * N * F);
    r->a = TAKE(K * N * F);
    r->scores = TAKE(K * B * H * n * n);
    r->att = TAKE(K * B * H * n * n);
    AttnHeadsConfig hc = gpt2_heads(m, 0, n);
    r->head_copies = keep ? 1 : nn_pool_threads(); /* training's shards run on the pool's threads already */
    /* training's scratch is laid out once for passes made under any split of the pool */
    r->heads = TAKE((keep ? attn_heads_scratch_size_most(&hc) : attn_heads_scratch_size(&hc)) * (size_t)r->head_copies);
    r->step = keep ? NULL : TAKE(attn_heads_step_scratch_size(&hc));
    r->layers = lens && !keep ? TAKE(L * N * C) : NULL;
    r->logits = keep ? NULL : TAKE(rows * (size_t)m->c.vocab); /* training's head has its own */
#undef KEPT
#undef TAKE
    r->block = base;
    r->kv = NULL;
    r->kv_rows = 0;
    r->from = 0;
    r->until = 0;
    r->x0 = NULL;
    return l.size;
}

/* Block l's buffers: its own (keep) or the one block's, reused. */
typedef struct {
    nn_real *x;    /* (B n, C) the block's input */
    nn_real *xa;   /* the residual after attention, x + attn (without keep: x itself, in place) */
    nn_real *out;  /* the block's output (without keep: x itself, in place) */
    nn_real *ln1, *mean1, *rstd1, *ln2, *mean2, *rstd2;
    nn_real *qkv, *z, *scores, *att, *h, *a;
    nn_real *y;    /* the MLP's output */
} Gpt2Layer;

static Gpt2Layer layer_of(const Gpt2 *m, const Gpt2Run *r, int l) {
    size_t N = (size_t)r->batch * r->n, C = (size_t)m->c.d_model, F = (size_t)m->c.d_ff;
    size_t M = (size_t)r->batch * m->c.heads * r->n * r->n, k = r->keep ? (size_t)l : 0;
    Gpt2Layer y;
    y.x = r->x + k * N * C;
    y.xa = r->keep ? r->xa + k * N * C : r->x;
    y.out = r->keep ? y.x + N * C : r->x;
    y.ln1 = r->ln + k * N * C;
    y.mean1 = r->mean + k * N;
    y.rstd1 = r->rstd + k * N;
    y.ln2 = r->keep ? r->ln2 + k * N * C : y.ln1;
    y.mean2 = r->keep ? r->mean2 + k * N : y.mean1;
    y.rstd2 = r->keep ? r->rstd2 + k * N : y.rstd1;
    y.qkv = r->qkv + k * N * 3 * C;
    y.z = r->atty + k * N * C;
    y.scores = r->scores + k * M;
    y.att = r->att + k * M;
    y.h = r->h + k * N * F;
    y.a = r->a + k * N * F;
    y.y = r->keep ? r->mlp : r->atty; /* without keep the contexts are spent when the MLP runs */
    return y;
}

/* Reals of scratch one call may take (about 1 GB in float). */
#define GPT2_MAX_SCRATCH ((size_t)1 << 28)

static int run_create(const Gpt2 *m, int n, int batch, int lens, Gpt2Run *r) {
    size_t size = run_layout(m, n, batch, lens, 0, NULL, r);
    if (size > GPT2_MAX_SCRATCH)
        return nn_fail(NN_ERR_LIMIT, "input: %d tokens need %zu reals of scratch, past the limit of %zu; use fewer tokens",
                       n, size, GPT2_MAX_SCRATCH);
    nn_real *block = malloc(sizeof(nn_real) * size);
    if (!block) return nn_fail(NN_ERR_NOMEM, "out of memory for %d tokens' scratch (%zu reals)", n, size);
    run_layout(m, n, batch, lens, 0, block, r);
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

/* The blocks over B runs of tokens (n each, one after the other) at
 * positions pos0..: whole sequences (pos0 0, each run's attention over its
 * own rows; from a given block input, the same for every run) or one more
 * position after the cached ones (B 1, n 1, pos0 > 0: the core's attention
 * step of its query over the cache). The rows' keys and values go to the
 * cache when there is one. Without keep, r->x holds the last block's output,
 * run after run, and each block's output is kept in r->layers when it is
 * there (B 1); with keep, every block's activations stay (layer_of). A whole
 * sequence's pass hands run b's activations to hooks[b] (hooks NULL: none)
 * at each of decoder.h's sites; the row-wise layers take all runs' rows at
 * once (each weight read once for them). */
static int blocks_forward(const Gpt2 *m, Gpt2Run *r, const int32_t *tokens, int n, int B, int pos0,
                          const DecHook *hooks) {
    const Gpt2Config *c = &m->c;
    const DecWeights *w = &m->w;
    int C = c->d_model, F = c->d_ff, H = c->heads, BN = B * n, par = c->parallel && F;
    size_t NC = (size_t)n * C, BNC = (size_t)B * NC, maps = (size_t)H * n * n;
    /* x = wte[token] + wpe[t] (GPT-NeoX: no positions here; RoPE turns the queries and keys; a model made
     * here may add a fixed table), or block `from`'s input given */
    int given = pos0 == 0 && r->x0, from = given ? r->from : 0;
    nn_real *x0 = layer_of(m, r, from).x;
    if (given) {
        for (int b = 0; b < B; b++) memcpy(x0 + b * NC, r->x0, sizeof(nn_real) * NC);
    } else {
        embed(m, x0, tokens, BN);
        for (int b = 0; w->wpe && b < B; b++) vec_axpy(x0 + b * NC, 1, w->wpe + (size_t)pos0 * C, (int)NC);
    }
    if (pos0 > 0) hooks = NULL;
#define HOOK(b) (hooks ? &hooks[b] : NULL)
    int until = given && r->until ? r->until : c->layers;
    for (int l = from; l < until; l++) {
        Gpt2Layer y = layer_of(m, r, l);
        nn_real *x = y.x;
        for (int b = 0; b < B; b++) dec_at(HOOK(b), DEC_AT_RESID, l, x + b * NC, n, C, C);
        LayerNormWeights ln1 = {w->ln1w[l], w->ln1b[l]};
        layernorm_forward_eps(y.ln1, y.mean1, y.rstd1, x, &ln1, BN, C, c->epsilon);
        linear(m, y.qkv, y.ln1, w->qkvw[l], w->qkvb[l], BN, C, 3 * C);
        for (int b = 0; b < B; b++) dec_at(HOOK(b), DEC_AT_VALUES, l, y.qkv + 3 * b * NC + 2 * C, n, C, 3 * C);
        nn_real *kv = r->kv ? r->kv + (size_t)l * r->kv_rows * 2 * C : NULL;
        for (int t = 0; kv && t < n; t++)
            memcpy(kv + (size_t)(pos0 + t) * 2 * C, y.qkv + (size_t)t * 3 * C + C, sizeof(nn_real) * 2 * C);
        if (pos0 > 0) {
            AttnHeadsConfig hc = gpt2_heads(m, l, r->kv_rows);
            NN_TRY(attn_heads_step(&hc, pos0, y.qkv, kv, 2 * C, kv + C, 2 * C, y.z, r->step));
        } else {
            AttnHeadsConfig hc = gpt2_heads(m, l, n);
            for (int b = 0; b < B; b++) {
                nn_real *qkv = y.qkv + 3 * b * NC, *z = y.z + b * NC, *P = y.att + b * maps;
                AttnHeadsIO io = {qkv, qkv + C, qkv + 2 * C, 3 * C, 3 * C, 3 * C, z, C, y.scores + b * maps, P};
                NN_TRY(attn_heads_forward_split(&hc, &io, r->heads, r->head_copies));
                if (dec_at(HOOK(b), DEC_AT_PATTERN, l, P, H * n, n, n))
                    dec_heads_context(P, qkv + 2 * C, 3 * C, n, H, C / H, m->ablate + (size_t)l * H, z, C);
                dec_at(HOOK(b), DEC_AT_Z, l, z, n, C, C);
            }
        }
        /* the attention's output, c_proj of the contexts (the queries, keys, values and weights stay for a
         * backward pass); training's sequential block writes each sum where it is kept (no copies) */
        int direct = r->keep && !par;
        nn_real *attn = direct ? (F ? y.xa : y.out) : r->attn;
        linear(m, attn, y.z, w->projw[l], w->projb[l], BN, C, C);
        for (int b = 0; b < B; b++) dec_at(HOOK(b), DEC_AT_ATTN, l, attn + b * NC, n, C, C);
        /* x + attn(ln_1 x): in place, or the output itself plus x */
        nn_real *xa = direct ? attn : y.xa;
        if (direct) vec_axpy(attn, 1, x, (int)BNC);
        else if (!par) vec_axpy(xa, 1, attn, (int)BNC);
        if (F) {
            /* out = x + attn(ln_1 x) + mlp(ln_2 (x + attn(ln_1 x))); parallel: out = x + attn(ln_1 x) +
             * mlp(ln_2 x), both of the block's input */
            const nn_real *x2 = par ? x : xa;
            LayerNormWeights ln2 = {w->ln2w[l], w->ln2b[l]};
            layernorm_forward_eps(y.ln2, y.mean2, y.rstd2, x2, &ln2, BN, C, c->epsilon);
            MlpWeights mw = {w->fcw[l], w->fcb[l], w->fcprojw[l], w->fcprojb[l]};
            nn_real *mo = direct ? y.out : y.y;
            mlp(m, mo, y.h, y.a, y.ln2, &mw, BN);
            for (int b = 0; b < B; b++) dec_at(HOOK(b), DEC_AT_MLP, l, mo + b * NC, n, C, C);
            if (direct) {
                vec_axpy(y.out, 1, xa, (int)BNC);
            } else {
                if (y.out != x2) memcpy(y.out, x2, sizeof(nn_real) * BNC);
                if (par) vec_axpy(y.out, 1, attn, (int)BNC);
                vec_axpy(y.out, 1, y.y, (int)BNC);
            }
        } else if (y.out != xa) {
            memcpy(y.out, xa, sizeof(nn_real) * BNC);
        }
        if (r->layers) memcpy(r->layers + (size_t)l * NC, y.out, sizeof(nn_real) * NC);
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
    if (m->packed) vec_gemm_packed_parallel(r->logits, m->c.vocab, r->ln, C, m->w.unembed, rows, m->c.vocab, C, 0);
    else linear_forward(r->logits, r->ln, m->w.unembed, m->w.unembed_b, rows, C, m->c.vocab);
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
            return nn_fail(NN_ERR_VALUE, "the logits at position %d are not finite: the model's weights overflow "
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
    for (int r = k; r < GPT2_TOP; r++) ids[r] = -1; /* a vocabulary of fewer tokens */
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
    DecGenerateLimits lim = m->gen;
    NN_TRY(dec_check_generate(&lim, tokens, n_prompt, n_new, temperature, k));
    int ctx = m->c.context, C = m->c.d_model;
    int longest = n_prompt + n_new - 1 < ctx ? n_prompt + n_new - 1 : ctx;
    if (longest < 1) longest = 1;
    Generation g = {m, {0}, NULL};
    NN_TRY(run_create(m, longest, 1, 0, &g.r));
    g.r.kv_rows = longest;
    if (n_prompt <= ctx && n_new > 1 && !m->slopes) { /* ALiBi's offsets: every step the whole window */
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

int gpt2_scores_over(Gpt2 *m, int count, int n, DecSequence next, void *ctx, float *prev, float *ind) {
    NN_TRY(gpt2_check_ready(m));
    int L = m->c.layers, H = m->c.heads;
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
    int st = NN_OK;
    for (int b = 0; b < count && st == NN_OK; b++) {
        next(ctx, tok, source);
        n_prev += n - 1;
        for (int t = 0; t < n; t++) n_ind += source[t] >= 0;
        st = blocks_forward(m, &r, tok, n, 1, 0, &scores);
    }
    for (int i = 0; i < L * H && st == NN_OK; i++) {
        prev[i] = (float)(n_prev ? s.prev[i] / n_prev : 0);
        ind[i] = (float)(n_ind ? s.ind[i] / n_ind : 0);
    }
    free(sums);
    free(tok);
    run_free(&r);
    return st;
}

/* A checkpoint's sequences: `length` distinct tokens, then the same again
 * (the trained transformer's repeat, seq_task_repeat), over the whole vocabulary. */
typedef struct {
    int vocab, length;
    uint64_t rng;
} Repeats;

static void next_repeat(void *ctx, int32_t *tok, int32_t *source) {
    Repeats *q = ctx;
    int length = q->length, n = 2 * length;
    for (int i = 0; i < length; i++) {
        int32_t t;
        int fresh;
        do {
            t = (int32_t)nn_rng_below(&q->rng, q->vocab);
            fresh = 1;
            for (int j = 0; j < i; j++) fresh &= tok[j] != t;
        } while (!fresh);
        tok[i] = tok[i + length] = t;
    }
    for (int i = 0; i < n; i++) source[i] = i >= length && i - length + 1 < length ? i - length + 1 : -1;
}

int gpt2_head_scores(Gpt2 *m, int count, int length, uint64_t seed, float *prev, float *ind) {
    nn_clear_error();
    NN_TRY(gpt2_check_ready(m));
    NN_TRY(nn_check_size("count", count, 1, GPT2_MAX_EVALUATE));
    int most = m->c.context / 2 < m->c.vocab ? m->c.context / 2 : m->c.vocab;
    NN_TRY(nn_check_size("length", length, 2, most));
    Repeats q = {m->c.vocab, length, seed};
    return gpt2_scores_over(m, count, 2 * length, next_repeat, &q, prev, ind);
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

static size_t widest(size_t (*scratch)(int, int), int C, int F, int V) {
    size_t s = scratch(C, 3 * C), fc = scratch(C, F), fcproj = scratch(F, C), un = V ? scratch(C, V) : 0;
    s = fc > s ? fc : s;
    s = fcproj > s ? fcproj : s;
    return un > s ? un : s;
}

/* For n rows. train: fine-tuning's buffers too (the unembedding's strips, the weights' gradients'
 * strips); keep: a backward over kept activations (no block inputs of its own). */
static size_t grads_layout(const Gpt2 *m, int n, int train, int keep, nn_real *base, Gpt2Grads *g) {
    size_t N = (size_t)n, C = (size_t)m->c.d_model, F = (size_t)m->c.d_ff, L = (size_t)m->c.layers;
    int V = train ? m->c.vocab : 0;
    NnLayout l = {0};
#define TAKE(count) nn_layout_at(&l, base, (count))
    g->xs = keep ? NULL : TAKE((L + 1) * N * C);
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

/* dx (N, IC) += dy (N, OC) W^T, W as the model holds it. */
static void linear_grad_input(const Gpt2 *m, Gpt2Grads *g, nn_real *dx, const nn_real *dy, const nn_real *W, int N,
                              int IC, int OC) {
    if (m->packed) linear_backward_input_packed(dx, dy, W, g->wt, N, IC, OC);
    else linear_backward(dx, NULL, NULL, dy, NULL, W, N, IC, OC);
}

/* dW (laid out as W) += x^T dy, db (OC) += dy's column sums (NULL: skipped). */
static void linear_grad_weight(const Gpt2 *m, Gpt2Grads *g, nn_real *dW, nn_real *db, const nn_real *dy,
                               const nn_real *x, int N, int IC, int OC) {
    if (m->packed) linear_backward_weight_packed(dW, db, dy, x, g->wg, N, IC, OC);
    else linear_backward(NULL, dW, db, dy, x, NULL, N, IC, OC);
}

/* dx (n, C) += the MLP input's gradient from dy; g->da then dL/dh. */
static void mlp_grad_input(const Gpt2 *m, Gpt2Grads *g, nn_real *dx, const nn_real *dy, const nn_real *h,
                           const MlpWeights *w, int n) {
    int C = m->c.d_model, F = m->c.d_ff;
    if (m->packed) mlp_backward_input_packed(dx, g->da, dy, h, w, g->wt, n, C, F, m->c.gelu_exact);
    else mlp_backward_input(dx, g->da, dy, h, w, n, C, F, m->c.gelu_exact);
}

static int grads_create(const Gpt2 *m, int n, int train, Gpt2Grads *g) {
    size_t size = grads_layout(m, n, train, 0, NULL, g);
    nn_real *block = malloc(sizeof(nn_real) * size);
    if (!block) return nn_fail(NN_ERR_NOMEM, "out of memory for the backward pass of %d tokens (%zu reals)", n, size);
    grads_layout(m, n, train, 0, block, g);
    return NN_OK;
}

/* Keeps each block's input (DEC_AT_RESID) in ctx's rows (L + 1, n, C). */
static int keep_inputs(void *ctx, DecSite site, int layer, nn_real *x, int rows, int cols, int stride) {
    (void)stride;
    if (site == DEC_AT_RESID) memcpy((nn_real *)ctx + (size_t)layer * rows * cols, x, sizeof(nn_real) * rows * cols);
    return 0;
}

/* dx (n, C) += the gradient of LayerNorm w's input x from dy, with its
 * mean and deviation as the forward kept them (mean, rstd), or recomputed
 * (mean NULL); its weights' gradients into dgain, dbias (+=), or scratch
 * (NULL). */
static void layernorm_grad(const Gpt2 *m, Gpt2Grads *g, nn_real *dx, const nn_real *dy, const nn_real *x,
                           const nn_real *gain, const nn_real *bias, int n, nn_real *dgain, nn_real *dbias,
                           const nn_real *mean, const nn_real *rstd) {
    int C = m->c.d_model;
    LayerNormWeights w = {(nn_real *)gain, (nn_real *)bias}, dw = {g->lng, g->lng + C};
    if (dgain) dw = (LayerNormWeights){dgain, dbias};
    if (!mean) {
        layernorm_forward_eps(g->lny, g->mean, g->rstd, x, &w, n, C, m->c.epsilon);
        mean = g->mean;
        rstd = g->rstd;
    }
    layernorm_backward(dx, &dw, dy, x, mean, rstd, &w, n, C);
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

/* From g->dres, the gradient at the last block's output (B runs of n rows,
 * C), back through the blocks to the embedding. Without keep (B 1), each
 * block runs again from its input in g->xs for its activations
 * (forward_keeping first); with keep, the forward's stay in r. With dw (a
 * gradient view laid out as the weights) the weights' gradients are added
 * there, the embeddings' too. The activations' gradients go to `hook` at
 * the sites a forward hands (but the pattern), in the backward's order:
 * MLP, attention, contexts, values, block input. */
static int blocks_backward(const Gpt2 *m, Gpt2Run *r, Gpt2Grads *g, const int32_t *tokens, int n, int B,
                           DecWeights *dw, const DecHook *hook) {
    const DecWeights *w = &m->w;
    int C = m->c.d_model, F = m->c.d_ff, L = m->c.layers, H = m->c.heads, par = m->c.parallel && F, keep = r->keep;
    int BN = B * n;
    size_t NC = (size_t)n * C, BNC = (size_t)B * NC, maps = (size_t)H * n * n;
    int st = NN_OK;
    for (int l = L - 1; l >= 0 && st == NN_OK; l--) {
        Gpt2Layer y = layer_of(m, r, l);
        const nn_real *x = y.x;
        if (!keep) { /* block l again, from its input: its queries, keys, values, weights, hidden units and output stay */
            x = g->xs + (size_t)l * NC;
            r->from = l;
            r->until = l + 1;
            r->x0 = x;
            st = blocks_forward(m, r, tokens, n, 1, 0, NULL);
            r->from = r->until = 0;
            r->x0 = NULL;
            if (st != NN_OK) break;
        }
        if (F) {
            /* the MLP's output: its gradient is the block output's (both residual forms) */
            dec_at(hook, DEC_AT_MLP, l, g->dres, n, C, C);
            memset(g->dln, 0, sizeof(nn_real) * BNC);
            MlpWeights mw = {w->fcw[l], w->fcb[l], w->fcprojw[l], w->fcprojb[l]};
            mlp_grad_input(m, g, g->dln, g->dres, y.h, &mw, BN);
            if (dw) { /* c_proj from the hidden units after GELU, c_fc from ln_2's output with dL/dh */
                linear_grad_weight(m, g, dw->fcprojw[l], dw->fcprojb[l], g->dres, y.a, BN, F, C);
                linear_grad_weight(m, g, dw->fcw[l], dw->fcb[l], g->da, y.ln2, BN, C, F);
            }
            /* ln_2 reads the residual after attention (x + attn), or with a parallel residual the block's input;
             * its input's gradient adds to the residual's there: dres becomes d(x + attn), or dpar d x */
            const nn_real *x2 = par ? x : y.xa;
            if (par) {
                memcpy(g->dpar, g->dres, sizeof(nn_real) * BNC);
            } else if (!keep) {
                for (size_t i = 0; i < NC; i++) g->xm[i] = x[i] + r->attn[i];
                x2 = g->xm;
            }
            layernorm_grad(m, g, par ? g->dpar : g->dres, g->dln, x2, w->ln2w[l], w->ln2b[l], BN,
                           dw ? dw->ln2w[l] : NULL, dw ? dw->ln2b[l] : NULL, keep ? y.mean2 : NULL, y.rstd2);
        }
        /* the attention's output, c_proj of the contexts, the heads, c_attn, ln_1 */
        dec_at(hook, DEC_AT_ATTN, l, g->dres, n, C, C);
        if (dw) { /* c_proj's input: the contexts (without keep again, from the weights and values the block kept) */
            const nn_real *z = y.z;
            if (!keep) {
                dec_heads_context(y.att, y.qkv + 2 * C, 3 * C, n, H, C / H, m->ablate + (size_t)l * H, g->xm, C);
                z = g->xm;
            }
            linear_grad_weight(m, g, dw->projw[l], dw->projb[l], g->dres, z, BN, C, C);
        }
        memset(g->dz, 0, sizeof(nn_real) * BNC);
        linear_grad_input(m, g, g->dz, g->dres, w->projw[l], BN, C, C);
        dec_at(hook, DEC_AT_Z, l, g->dz, n, C, C);
        memset(g->dqkv, 0, sizeof(nn_real) * BNC * 3);
        AttnHeadsConfig hc = gpt2_heads(m, l, n);
        for (int b = 0; b < B && st == NN_OK; b++) {
            nn_real *q = y.qkv + 3 * b * NC, *dq = g->dqkv + 3 * b * NC;
            AttnHeadsIO io = {q, q + C, q + 2 * C, 3 * C, 3 * C, 3 * C, y.z + b * NC, C, y.scores + b * maps,
                              y.att + b * maps};
            st = attn_heads_backward(&hc, &io, dq, dq + C, dq + 2 * C, g->dz + b * NC, r->heads);
        }
        if (st != NN_OK) break;
        dec_at(hook, DEC_AT_VALUES, l, g->dqkv + 2 * C, n, C, 3 * C);
        if (dw) { /* c_attn from ln_1's output (without keep, recomputed) */
            const nn_real *ln = y.ln1;
            if (!keep) {
                LayerNormWeights ln1 = {w->ln1w[l], w->ln1b[l]};
                layernorm_forward_eps(g->lny, g->mean, g->rstd, x, &ln1, n, C, m->c.epsilon);
                ln = g->lny;
            }
            linear_grad_weight(m, g, dw->qkvw[l], dw->qkvb[l], g->dqkv, ln, BN, C, 3 * C);
        }
        memset(g->dln, 0, sizeof(nn_real) * BNC);
        linear_grad_input(m, g, g->dln, g->dqkv, w->qkvw[l], BN, C, 3 * C);
        nn_real *dx = par ? g->dpar : g->dres;
        layernorm_grad(m, g, dx, g->dln, x, w->ln1w[l], w->ln1b[l], BN, dw ? dw->ln1w[l] : NULL,
                       dw ? dw->ln1b[l] : NULL, keep ? y.mean1 : NULL, y.rstd1);
        if (par) {
            g->dpar = g->dres;
            g->dres = dx;
        }
        dec_at(hook, DEC_AT_RESID, l, g->dres, n, C, C);
    }
    if (st != NN_OK || !dw) return st;
    /* the embedding's rows (tied: in the unembedding's panels, as embed reads them) and the positions' */
    int nr = vec_panel_width();
    for (int i = 0; i < BN; i++) {
        const nn_real *d = g->dres + (size_t)i * C;
        if (m->tied) {
            nn_real *panel = dw->wte + (size_t)(tokens[i] / nr) * C * nr + tokens[i] % nr;
            for (int c = 0; c < C; c++) panel[(size_t)c * nr] += d[c];
        } else {
            vec_axpy(dw->wte + (size_t)tokens[i] * C, 1, d, C);
        }
    }
    for (int i = 0; dw->wpe && i < BN; i++) vec_axpy(dw->wpe + (size_t)(i % n) * C, 1, g->dres + (size_t)i * C, C);
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
                           NULL, NULL, NULL);
            st = blocks_backward(m, &p->r, &g, tokens, n, 1, NULL, hook);
        }
    }
    free(g.block);
    return st;
}

/* ---- fine-tuning: the weights' gradients of the next-token loss ---- */

size_t gpt2_gradients_scratch(const Gpt2 *m, int T) {
    Gpt2Run r;
    Gpt2Grads g;
    return run_layout(m, T, 1, 0, 0, NULL, &r) + grads_layout(m, T, 1, 0, NULL, &g);
}

int gpt2_gradients(Gpt2 *m, DecWeights *dw, const int32_t *windows, int B, int T, double *loss) {
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
            linear_grad_weight(m, &g, dw->unembed, dw->unembed_b, p.r.logits, p.r.ln, rows, C, V);
            memset(g.dln, 0, sizeof(nn_real) * rows * C);
            linear_grad_input(m, &g, g.dln, p.r.logits, m->w.unembed, rows, C, V);
            layernorm_grad(m, &g, g.dres + (size_t)t0 * C, g.dln, x + (size_t)t0 * C, m->w.lnfw, m->w.lnfb, rows,
                           dw->lnfw, dw->lnfb, NULL, NULL);
        }
        if (st == NN_OK && finite) st = blocks_backward(m, &p.r, &g, tokens, T, 1, dw, NULL);
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

/* ---- training's batched pass (a model made here) ---- */

size_t gpt2_pass_layout(const Gpt2 *m, int B, int T, nn_real *base, Gpt2Pass *p) {
    size_t run = run_layout(m, T, B, 0, 1, base, &p->r);
    return run + grads_layout(m, B * T, m->packed, 1, base ? base + run : NULL, &p->g);
}

int gpt2_pass_forward(const Gpt2 *m, Gpt2Pass *p, const int32_t *tokens, int B, int T, const nn_real **out) {
    p->r.n = T; /* the layers' buffers are laid out for this batch's shape, at the start of each one's room */
    p->r.batch = B;
    NN_TRY(blocks_forward(m, &p->r, tokens, T, B, 0, NULL));
    *out = layer_of(m, &p->r, m->c.layers).x;
    return NN_OK;
}

int gpt2_pass_backward(const Gpt2 *m, Gpt2Pass *p, const int32_t *tokens, int B, int T, DecWeights *dw) {
    return blocks_backward(m, &p->r, &p->g, tokens, T, B, dw, NULL);
}
