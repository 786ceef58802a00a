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
#include "core/vec.h"
#include "layers/layernorm.h"
#include "layers/linear.h"
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
    DecWeights *w = &m->w;
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
    add(m, &w->unembed, C * V, N, a, 1, "out_w", -1);
    add(m, &w->unembed_b, V, ZERO, 0, 0, "out_b", -1);
}

/* The one decoder's run over this model's weights (they stay where the table put them). */
static void bind_decoder(TfModel *m) {
    const TfConfig *c = &m->c;
    Gpt2 *d = &m->dec;
    d->c = (Gpt2Config){c->layers, c->heads, c->d_model, c->d_ff, c->context, m->V, LAYERNORM_EPS, 0, 0, TF_ROPE_BASE,
                        0, 0};
    d->w = m->w;
    if (!d->w.wpe) d->w.wpe = m->pos_table; /* sinusoidal positions: a fixed table added as learned ones are */
    d->rope = m->rope;
    d->ablate = m->ablate;
    d->ready = 1;
    d->packed = 0;
    d->score = c->score;
    d->score_beta = c->score == ATTN_SCORE_COSINE ? (nn_real)TF_COSINE_SCALE : 1;
    d->slopes = c->positional == TF_POS_ALIBI ? m->slopes : NULL;
    d->rope_half = 0;
    d->gen = (DecGenerateLimits){m->V, TF_MAX_TEXT_BYTES, TF_MAX_GENERATE};
}

/* Lays out the activations of batch B (base NULL: only counts). */
static size_t acts_layout(const TfModel *m, int B, nn_real *base, TfActs *a) {
    size_t N = (size_t)B * m->c.context, C = (size_t)m->c.d_model, V = (size_t)m->V;
    NnLayout l = {0};
#define TAKE(count) nn_layout_at(&l, base, (count))
    memset(a, 0, sizeof *a);
    size_t pass = gpt2_pass_layout(&m->dec, B, m->c.context, NULL, &a->pass);
    nn_real *blocks = TAKE(pass);
    gpt2_pass_layout(&m->dec, B, m->c.context, blocks, &a->pass);
    a->lnf = TAKE(N * C);
    a->lnf_mean = TAKE(N);
    a->lnf_rstd = TAKE(N);
    a->logits = TAKE(N * V);
    a->probs = TAKE(N * V);
    a->dln = TAKE(N * C);
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
    bind_decoder(&m);
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
    bind_decoder(m); /* its sizes now; its weights' places once the table has them */
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
    bind_decoder(m);
    st = tf_reserve(m, c->batch);
    return NN_CREATED(out, m, st, tf_model_destroy);
}

void tf_model_destroy(TfModel *m) {
    if (!m) return;
    opt_free(&m->opt);
    NN_FREE_ALL(m->pos_table, m->rope, m->acts_block, m);
}

/* ---- the model's passes ---------------------------------------------------------- */

/* The forward: the embedding and the blocks (the one decoder's batched pass), then the head here: the
 * final LayerNorm, the output layer, softmax and the cross-entropy of the scored positions. */
int tf_forward(TfModel *m, int B, int T, int with_targets, double *loss_out, int *scored) {
    const TfConfig *c = &m->c;
    TfActs *a = &m->a;
    const DecWeights *w = &m->w;
    int C = c->d_model, V = m->V, N = B * T;
    NN_TRY(gpt2_pass_forward(&m->dec, &a->pass, a->tokens, B, T, &a->out));
    const nn_real *res = a->out;
    LayerNormWeights lnf = {w->lnfw, w->lnfb};
    layernorm_forward(a->lnf, a->lnf_mean, a->lnf_rstd, res, &lnf, N, C);
    linear_forward(a->logits, a->lnf, w->unembed, w->unembed_b, N, C, V);
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
    const DecWeights *w = &m->w;
    DecWeights *g = &m->g;
    int C = c->d_model, V = m->V, N = B * T;
    size_t NC = (size_t)N * C;
    memset(a->dln, 0, sizeof(nn_real) * NC);
    linear_backward(a->dln, g->unembed, g->unembed_b, a->dlogits, a->lnf, w->unembed, N, C, V);
    nn_real *dres = a->pass.g.dres;
    memset(dres, 0, sizeof(nn_real) * NC);
    LayerNormWeights lnf = {w->lnfw, w->lnfb}, dlnf = {g->lnfw, g->lnfb};
    layernorm_backward(dres, &dlnf, a->dln, a->out, a->lnf_mean, a->lnf_rstd, &lnf, N, C);
    return gpt2_pass_backward(&m->dec, &a->pass, a->tokens, B, T, g);
}
