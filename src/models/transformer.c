/* A decoder-only transformer (include/attnlab/transformer.h): its tensors
 * in the shared parameter table (src/layers/optim.h), one block for the
 * activations, and the model's forward and backward passes: a short list
 * of the shared layers (embedding, LayerNorm, linear, the core's causal
 * multi-head attention with its RoPE / ALiBi hooks and ablation mask, the
 * GELU MLP, the cross-entropy). Training and the views of the model are in
 * transformer_run.c and src/train/. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/layout.h"
#include "base/lifecycle.h"
#include "base/rng.h"
#include "core/vec.h"
#include "layers/embedding.h"
#include "layers/layernorm.h"
#include "layers/linear.h"
#include "layers/mlp.h"
#include "layers/output.h"
#include "models/transformer_internal.h"

/* ---- the tensor table ------------------------------------------------------------ */

/* How tensors start: GPT-2's N(0, 0.02) (here uniform of that deviation, so
 * native and WASM draw the same reals), residual projections scaled by
 * 1/sqrt(2L); LayerNorm gains 1; biases 0. AdamW decays the matrices and
 * embeddings, not the biases or gains. */
#define TF_INIT_STD 0.02

static void add(TfModel *m, nn_real **slot, size_t count, OptInit init, double bound, int decay, const char *name,
                int layer) {
    char full[24];
    if (layer >= 0) snprintf(full, sizeof full, "h%d.%s", layer, name);
    else snprintf(full, sizeof full, "%s", name);
    opt_add_named(&m->opt, slot, count, init, bound, decay, full);
}

static void build_table(TfModel *m) {
    const TfConfig *c = &m->c;
    size_t C = (size_t)c->d_model, F = (size_t)c->d_ff, V = (size_t)m->V;
    TfWeights *w = &m->w;
    /* a uniform in [-a, a) has deviation a / sqrt(3) */
    double a = TF_INIT_STD * sqrt(3.0), res = a / sqrt(2.0 * c->layers);
    const OptInit N = OPT_INIT_DEVIATION, ONE = OPT_INIT_ONE, ZERO = OPT_INIT_ZERO;
    add(m, &w->wte, V * C, N, a, 1, "wte", -1);
    if (c->positional == TF_POS_LEARNED) add(m, &w->wpe, (size_t)c->context * C, N, a, 1, "wpe", -1);
    for (int l = 0; l < c->layers; l++) {
        add(m, &w->ln1w[l], C, ONE, 0, 0, "ln1_w", l);
        add(m, &w->ln1b[l], C, ZERO, 0, 0, "ln1_b", l);
        add(m, &w->qkvw[l], C * 3 * C, N, a, 1, "qkv_w", l);
        add(m, &w->qkvb[l], 3 * C, ZERO, 0, 0, "qkv_b", l);
        add(m, &w->projw[l], C * C, N, res, 1, "proj_w", l);
        add(m, &w->projb[l], C, ZERO, 0, 0, "proj_b", l);
        if (!F) continue;
        add(m, &w->ln2w[l], C, ONE, 0, 0, "ln2_w", l);
        add(m, &w->ln2b[l], C, ZERO, 0, 0, "ln2_b", l);
        add(m, &w->fcw[l], C * F, N, a, 1, "fc_w", l);
        add(m, &w->fcb[l], F, ZERO, 0, 0, "fc_b", l);
        add(m, &w->fcprojw[l], F * C, N, res, 1, "fcproj_w", l);
        add(m, &w->fcprojb[l], C, ZERO, 0, 0, "fcproj_b", l);
    }
    add(m, &w->lnfw, C, ONE, 0, 0, "lnf_w", -1);
    add(m, &w->lnfb, C, ZERO, 0, 0, "lnf_b", -1);
    add(m, &w->outw, C * V, N, a, 1, "out_w", -1);
    add(m, &w->outb, V, ZERO, 0, 0, "out_b", -1);
}

/* Lays out the activations of batch B (base NULL: only counts). */
static size_t acts_layout(const TfModel *m, int B, nn_real *base, TfActs *a) {
    const TfConfig *c = &m->c;
    size_t N = (size_t)B * c->context, C = (size_t)c->d_model, F = (size_t)c->d_ff, H = (size_t)c->heads;
    size_t T = (size_t)c->context, V = (size_t)m->V;
    NnLayout l = {0};
#define TAKE(count) (base ? base + nn_layout_take(&l, (count)) : (nn_layout_take(&l, (count)), (nn_real *)NULL))
    memset(a, 0, sizeof *a);
    a->encoded = TAKE(N * C);
    for (int i = 0; i < c->layers; i++) {
        a->ln1[i] = TAKE(N * C);
        a->ln1_mean[i] = TAKE(N);
        a->ln1_rstd[i] = TAKE(N);
        a->qkv[i] = TAKE(N * 3 * C);
        a->scores[i] = TAKE(N * H * T);
        a->att[i] = TAKE(N * H * T);
        a->atty[i] = TAKE(N * C);
        a->res2[i] = TAKE(N * C);
        if (F) {
            a->ln2[i] = TAKE(N * C);
            a->ln2_mean[i] = TAKE(N);
            a->ln2_rstd[i] = TAKE(N);
            a->fch[i] = TAKE(N * F);
            a->fch_gelu[i] = TAKE(N * F);
            a->res3[i] = TAKE(N * C);
        } else {
            a->res3[i] = a->res2[i]; /* attention only: the block's output is the residual after attention */
        }
    }
    a->lnf = TAKE(N * C);
    a->lnf_mean = TAKE(N);
    a->lnf_rstd = TAKE(N);
    a->logits = TAKE(N * V);
    a->probs = TAKE(N * V);
    a->dres = TAKE(N * C);
    a->dln = TAKE(N * C);
    a->dqkv = TAKE(N * 3 * C);
    a->datty = TAKE(N * C);
    AttnHeadsConfig hc = tf_heads(m, 0, (int)T);
    a->heads_scratch = TAKE(attn_heads_scratch_size(&hc));
    a->dmlp = TAKE(N * F);
    a->dlogits = TAKE(N * V);
    /* token ids, as reals' room (an int32 fits in a float's or double's bytes) */
    a->tokens = (int32_t *)TAKE(N);
    a->targets = (int32_t *)TAKE(N);
#undef TAKE
    return l.size;
}

/* Whether activations for batch B fit the limit (counted, not allocated). */
static int check_activations(const TfModel *m, int B, size_t *size) {
    NN_TRY(nn_check_size("batch", B, 1, TF_MAX_BATCH));
    TfActs a;
    *size = acts_layout(m, B, NULL, &a);
    if (*size > TF_MAX_ACTIVATIONS)
        return nn_fail(NN_ERR_LIMIT,
                       "batch: %d sequences of %d tokens need %zu activations, past the limit of %zu; use a smaller "
                       "batch, context, width or fewer layers",
                       B, m->c.context, *size, TF_MAX_ACTIVATIONS);
    return NN_OK;
}

int tf_reserve(TfModel *m, int B) {
    if (B <= m->acts_batch) return NN_OK;
    size_t size;
    NN_TRY(check_activations(m, B, &size));
    nn_real *block = malloc(sizeof(nn_real) * size);
    if (!block) return nn_fail(NN_ERR_NOMEM, "batch: out of memory for %zu activations", size);
    free(m->acts_block);
    m->acts_block = block;
    acts_layout(m, B, block, &m->a);
    m->acts_batch = B;
    return NN_OK;
}

int tf_check_config(const TfConfig *c) {
    if ((unsigned)c->task >= TF_TASK_COUNT) return nn_fail(NN_ERR_ARG, "task: unknown task %d", (int)c->task);
    const struct {
        const char *name;
        int value, lo, hi;
    } sizes[] = {{"layers", c->layers, 1, TF_MAX_LAYERS}, {"heads", c->heads, 1, TF_MAX_HEADS},
                 {"dModel", c->d_model, 1, TF_MAX_DMODEL}, {"dFF", c->d_ff, 0, TF_MAX_DFF},
                 {"batch", c->batch, 1, TF_MAX_BATCH}};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
        NN_TRY(nn_check_size(sizes[i].name, sizes[i].value, sizes[i].lo, sizes[i].hi));
    if (c->d_model % c->heads)
        return nn_fail(NN_ERR_SHAPE, "heads: %d heads do not divide dModel %d", c->heads, c->d_model);
    if ((unsigned)c->positional >= TF_POS_COUNT)
        return nn_fail(NN_ERR_ARG, "positional: unknown position encoding %d", (int)c->positional);
    if (c->score != ATTN_SCORE_SCALED_DOT && c->score != ATTN_SCORE_DOT && c->score != ATTN_SCORE_COSINE)
        return nn_fail(NN_ERR_ARG, "score: the transformer supports 'scaled_dot', 'dot' and 'cosine' (got %d)",
                       (int)c->score);
    return NN_OK;
}

size_t tf_param_count(const TfConfig *c, int vocab) {
    TfModel m; /* only the table: no blocks behind it */
    memset(&m, 0, sizeof m);
    m.c = *c;
    m.V = vocab;
    build_table(&m);
    return m.opt.n;
}

int tf_check_activations(const TfConfig *c, int vocab) {
    TfModel m; /* only the table and the sizes: nothing allocated */
    memset(&m, 0, sizeof m);
    m.c = *c;
    m.V = vocab;
    size_t size;
    return check_activations(&m, c->batch, &size);
}

int tf_model_create(TfModel **out, const TfConfig *c, int vocab, const char (*names)[8]) {
    nn_clear_error();
    *out = NULL;
    NN_TRY(tf_check_config(c));
    NN_TRY(nn_check_size("vocabulary", vocab, 1, TF_MAX_VOCAB));
    TfModel *m = calloc(1, sizeof *m);
    if (!m) return nn_fail(NN_ERR_NOMEM, "out of memory for a transformer");
    m->c = *c;
    m->V = vocab;
    memcpy(m->names, names, sizeof(m->names[0]) * (size_t)vocab);
    build_table(m);
    size_t P = m->opt.n, acts;
    /* every size is checked before anything large is allocated */
    int st = check_activations(m, c->batch, &acts);
    if (st != NN_OK) {
        free(m);
        return st;
    }
    int sinusoidal = c->positional == TF_POS_SINUSOIDAL, rope = c->positional == TF_POS_ROPE;
    int half = c->d_model / c->heads / 2;
    if (sinusoidal) m->pos_table = malloc(sizeof(nn_real) * c->context * c->d_model);
    if (rope) m->rope = malloc(sizeof(nn_real) * c->context * (half ? 2 * half : 1));
    /* the snapshot a failed training call goes back to, allocated now: training allocates nothing */
    if (opt_create(&m->opt, &m->w, &m->g, c->seed) != NN_OK || opt_snapshot(&m->opt) != NN_OK ||
        (sinusoidal && !m->pos_table) || (rope && !m->rope)) {
        tf_model_destroy(m);
        return nn_fail(NN_ERR_NOMEM, "out of memory for %zu parameters", P);
    }
    if (m->pos_table) /* PE(t, 2i) = sin(t / 10000^(2i/C)), PE(t, 2i+1) = cos(the same) */
        for (int t = 0; t < c->context; t++)
            for (int i = 0; i < c->d_model; i++) {
                double angle = t / pow(10000.0, (double)(i - i % 2) / c->d_model);
                m->pos_table[(size_t)t * c->d_model + i] = (nn_real)(i % 2 ? cos(angle) : sin(angle));
            }
    if (m->rope) attn_rope_table(m->rope, c->context, half, c->d_model / c->heads, TF_ROPE_BASE);
    for (int h = 0; h < c->heads; h++) m->slopes[h] = (nn_real)pow(2.0, -8.0 * (h + 1) / c->heads);
    st = tf_reserve(m, c->batch);
    return NN_CREATED(out, m, st, tf_model_destroy);
}

void tf_model_destroy(TfModel *m) {
    if (!m) return;
    opt_free(&m->opt);
    NN_FREE_ALL(m->pos_table, m->rope, m->acts_block, m);
}

/* ---- the model's passes ---------------------------------------------------------- */

/* Block l's MLP tensors as the shared layer's view. */
static MlpWeights tf_mlp(const TfWeights *w, int l) {
    return (MlpWeights){w->fcw[l], w->fcb[l], w->fcprojw[l], w->fcprojb[l]};
}

AttnHeadsConfig tf_heads(const TfModel *m, int layer, int T) {
    const TfConfig *c = &m->c;
    int D = c->d_model / c->heads;
    AttnHeadsConfig h = {T, c->heads, D, D, c->score, c->score == ATTN_SCORE_COSINE ? (nn_real)TF_COSINE_SCALE : 1, 1,
                         m->rope, c->positional == TF_POS_ALIBI ? m->slopes : NULL, m->ablate[layer], 0, 0};
    return h;
}

/* Sequence b's queries | keys | values in qkv (B, T, 3C) of layer l, its contexts in atty (B, T, C). */
static AttnHeadsIO heads_io(const TfModel *m, int l, int b, int T) {
    const TfActs *a = &m->a;
    int C = m->c.d_model, H = m->c.heads;
    const nn_real *q = a->qkv[l] + (size_t)b * T * 3 * C;
    size_t maps = (size_t)b * H * T * T;
    AttnHeadsIO io = {q, q + C, q + 2 * C, 3 * C, 3 * C, 3 * C, a->atty[l] + (size_t)b * T * C, C,
                      a->scores[l] + maps, a->att[l] + maps};
    return io;
}

int tf_forward(TfModel *m, int B, int T, int with_targets, double *loss_out, int *scored) {
    const TfConfig *c = &m->c;
    TfActs *a = &m->a;
    const TfWeights *w = &m->w;
    int C = c->d_model, F = c->d_ff, V = m->V, N = B * T;
    /* x = wte[token] + position */
    embedding_forward(a->encoded, w->wte, a->tokens, (size_t)N, C);
    const nn_real *pos = w->wpe ? w->wpe : m->pos_table;
    if (pos)
        for (int r = 0; r < N; r++) vec_axpy(a->encoded + (size_t)r * C, 1, pos + (size_t)(r % T) * C, C);
    nn_real *res = a->encoded;
    /* decoder.h's sites, for one sequence; patching may start at a later block from its input */
    const DecHook *hook = B == 1 ? m->hook : NULL;
    int from = hook && m->hook_x0 ? m->hook_from : 0;
    if (from) res = a->res3[from - 1];
    if (hook && m->hook_x0) memcpy(res, m->hook_x0, sizeof(nn_real) * (size_t)N * C);
    for (int l = from; l < c->layers; l++) {
        dec_at(hook, DEC_AT_RESID, l, res, T, C, C);
        LayerNormWeights ln1 = {w->ln1w[l], w->ln1b[l]};
        layernorm_forward(a->ln1[l], a->ln1_mean[l], a->ln1_rstd[l], res, &ln1, N, C);
        linear_forward(a->qkv[l], a->ln1[l], w->qkvw[l], w->qkvb[l], N, C, 3 * C);
        dec_at(hook, DEC_AT_VALUES, l, a->qkv[l] + 2 * C, T, C, 3 * C);
        AttnHeadsConfig hc = tf_heads(m, l, T);
        for (int b = 0; b < B; b++) {
            AttnHeadsIO io = heads_io(m, l, b, T);
            NN_TRY(attn_heads_forward(&hc, &io, a->heads_scratch));
        }
        if (dec_at(hook, DEC_AT_PATTERN, l, a->att[l], c->heads * T, T, T))
            dec_heads_context(a->att[l], a->qkv[l] + 2 * C, 3 * C, T, c->heads, C / c->heads, m->ablate[l], a->atty[l], C);
        dec_at(hook, DEC_AT_Z, l, a->atty[l], T, C, C);
        linear_forward(a->res2[l], a->atty[l], w->projw[l], w->projb[l], N, C, C);
        dec_at(hook, DEC_AT_ATTN, l, a->res2[l], T, C, C);
        vec_axpy(a->res2[l], 1, res, N * C);
        if (F) {
            LayerNormWeights ln2 = {w->ln2w[l], w->ln2b[l]};
            layernorm_forward(a->ln2[l], a->ln2_mean[l], a->ln2_rstd[l], a->res2[l], &ln2, N, C);
            MlpWeights mw = tf_mlp(w, l);
            mlp_forward(a->res3[l], a->fch[l], a->fch_gelu[l], a->ln2[l], &mw, N, C, F);
            dec_at(hook, DEC_AT_MLP, l, a->res3[l], T, C, C);
            vec_axpy(a->res3[l], 1, a->res2[l], N * C);
        }
        res = a->res3[l];
    }
    LayerNormWeights lnf = {w->lnfw, w->lnfb};
    layernorm_forward(a->lnf, a->lnf_mean, a->lnf_rstd, res, &lnf, N, C);
    linear_forward(a->logits, a->lnf, w->outw, w->outb, N, C, V);
    double loss = 0;
    int count = 0;
    for (int r = 0; r < N; r++) { /* p = softmax(logits); loss = -log p[target], the shared cross-entropy */
        const nn_real *z = a->logits + (size_t)r * V;
        nn_real *p = a->probs + (size_t)r * V;
        nn_real sum = vec_exp_sum(p, z, vec_max(z, V), V);
        vec_scale(p, 1 / sum, V);
        int y = with_targets ? a->targets[r] : -1;
        if (y >= 0) {
            loss += crossentropy_forward(p, y);
            count++;
        }
    }
    if (scored) *scored = count;
    if (loss_out) *loss_out = count ? loss / count : 0;
    return NN_OK;
}

int tf_backward(TfModel *m, int B, int T, int scored) {
    TfActs *a = &m->a;
    int V = m->V, N = B * T;
    /* loss = mean over scored rows of -log p[y]:  dz = (p - onehot(y)) / scored, 0 on unscored rows */
    nn_real inv = (nn_real)1 / scored;
    for (int r = 0; r < N; r++) {
        int y = a->targets[r];
        crossentropy_backward(a->dlogits + (size_t)r * V, a->probs + (size_t)r * V, y < 0 ? 0 : y, y < 0 ? 0 : inv, V);
    }
    return tf_backward_logits(m, B, T);
}

int tf_backward_logits(TfModel *m, int B, int T) {
    const TfConfig *c = &m->c;
    TfActs *a = &m->a;
    const TfWeights *w = &m->w;
    const TfWeights *g = &m->g;
    int C = c->d_model, F = c->d_ff, V = m->V, N = B * T;
    size_t NC = (size_t)N * C;
    /* one sequence's gradients at decoder.h's sites (attribution patching), as the forward's activations */
    const DecHook *hook = B == 1 ? m->hook : NULL;
    memset(a->dln, 0, sizeof(nn_real) * NC);
    linear_backward(a->dln, g->outw, g->outb, a->dlogits, a->lnf, w->outw, N, C, V);
    memset(a->dres, 0, sizeof(nn_real) * NC);
    const nn_real *last = c->layers ? a->res3[c->layers - 1] : a->encoded;
    LayerNormWeights lnf = {w->lnfw, w->lnfb}, dlnf = {g->lnfw, g->lnfb};
    layernorm_backward(a->dres, &dlnf, a->dln, last, a->lnf_mean, a->lnf_rstd, &lnf, N, C);
    for (int l = c->layers - 1; l >= 0; l--) {
        const nn_real *res = l ? a->res3[l - 1] : a->encoded;
        if (F) { /* res3 = res2 + mlp(ln2(res2)): dres (d res3) flows to res2 as is, plus through the MLP */
            dec_at(hook, DEC_AT_MLP, l, a->dres, T, C, C);
            memset(a->dln, 0, sizeof(nn_real) * NC);
            MlpWeights mw = tf_mlp(w, l), dmw = tf_mlp(g, l);
            mlp_backward(a->dln, a->dmlp, &dmw, a->dres, a->ln2[l], a->fch[l], a->fch_gelu[l], &mw, N, C, F);
            LayerNormWeights ln2 = {w->ln2w[l], w->ln2b[l]}, dln2 = {g->ln2w[l], g->ln2b[l]};
            layernorm_backward(a->dres, &dln2, a->dln, a->res2[l], a->ln2_mean[l], a->ln2_rstd[l], &ln2, N, C);
        }
        /* res2 = res + attention(ln1(res)) Wproj + bproj: dres (d res2) flows to res, plus through attention */
        dec_at(hook, DEC_AT_ATTN, l, a->dres, T, C, C);
        memset(a->datty, 0, sizeof(nn_real) * NC);
        linear_backward(a->datty, g->projw[l], g->projb[l], a->dres, a->atty[l], w->projw[l], N, C, C);
        dec_at(hook, DEC_AT_Z, l, a->datty, T, C, C);
        memset(a->dqkv, 0, sizeof(nn_real) * NC * 3);
        AttnHeadsConfig hc = tf_heads(m, l, T);
        for (int b = 0; b < B; b++) {
            AttnHeadsIO io = heads_io(m, l, b, T);
            nn_real *dq = a->dqkv + (size_t)b * T * 3 * C;
            NN_TRY(attn_heads_backward(&hc, &io, dq, dq + C, dq + 2 * C, a->datty + (size_t)b * T * C, a->heads_scratch));
        }
        dec_at(hook, DEC_AT_VALUES, l, a->dqkv + 2 * C, T, C, 3 * C);
        memset(a->dln, 0, sizeof(nn_real) * NC);
        linear_backward(a->dln, g->qkvw[l], g->qkvb[l], a->dqkv, a->ln1[l], w->qkvw[l], N, C, 3 * C);
        LayerNormWeights ln1 = {w->ln1w[l], w->ln1b[l]}, dln1 = {g->ln1w[l], g->ln1b[l]};
        layernorm_backward(a->dres, &dln1, a->dln, res, a->ln1_mean[l], a->ln1_rstd[l], &ln1, N, C);
        dec_at(hook, DEC_AT_RESID, l, a->dres, T, C, C);
    }
    /* x = wte[token] + wpe[t] */
    embedding_backward(g->wte, a->dres, a->tokens, (size_t)N, C, -1);
    if (g->wpe)
        for (int r = 0; r < N; r++) vec_axpy(g->wpe + (size_t)(r % T) * C, 1, a->dres + (size_t)r * C, C);
    return NN_OK;
}
