/* A decoder-only transformer (include/attnlab/transformer.h): its tensors,
 * one block for weights, gradients and AdamW's moments, one for the
 * activations, the causal attention layer and the model's forward and
 * backward passes. Training and the views of the model are in
 * transformer_run.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/layout.h"
#include "base/rng.h"
#include "core/vec.h"
#include "layers/embedding.h"
#include "layers/layernorm.h"
#include "layers/linear.h"
#include "layers/mlp.h"
#include "layers/output.h"
#include "models/transformer_internal.h"

/* ---- causal multi-head attention ----------------------------------------------- */

static nn_real score_scale(AttnScore score, int D) {
    if (score == ATTN_SCORE_SCALED_DOT) return (nn_real)(1.0 / sqrt((double)D));
    return score == ATTN_SCORE_COSINE ? (nn_real)TF_COSINE_SCALE : 1;
}

/* cosine: unit rows of each head's query and key, and their norms (a zero
 * vector stays zero: its score is 0) */
static void unit_rows(nn_real *qkn, nn_real *qk_norm, const nn_real *qkv, int N, int C, int H) {
    int D = C / H;
    for (int r = 0; r < N; r++)
        for (int s = 0; s < 2 * H; s++) { /* s < H: query of head s, else key of head s - H */
            const nn_real *x = qkv + (size_t)r * 3 * C + (size_t)s * D;
            nn_real *u = qkn + (size_t)r * 2 * C + (size_t)s * D;
            nn_real norm = (nn_real)sqrt((double)vec_dot(x, x, D));
            qk_norm[(size_t)r * 2 * H + s] = norm;
            for (int d = 0; d < D; d++) u[d] = norm > 0 ? x[d] / norm : 0;
        }
}

/* Per sequence b and head h, with Q, K, V the head's column blocks:
 *   P = softmax_causal(scale Q K^T [- m_h (i - j)])   (T, T), P_ij = 0 for j > i
 *   Y = P V                           (T, D) into atty's block */
void tf_attention_forward(nn_real *atty, nn_real *att, nn_real *qkn, nn_real *qk_norm, const nn_real *qkv, int B,
                          int T, int C, int H, AttnScore score, const uint8_t *ablate, const nn_real *slopes) {
    int D = C / H, C3 = 3 * C, cosine = score == ATTN_SCORE_COSINE;
    nn_real scale = score_scale(score, D);
    if (cosine) unit_rows(qkn, qk_norm, qkv, B * T, C, H);
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++) {
            const nn_real *base = qkv + (size_t)b * T * C3 + (size_t)h * D;
            const nn_real *q = cosine ? qkn + (size_t)b * T * 2 * C + (size_t)h * D : base;
            const nn_real *k = cosine ? q + C : base + C;
            int ld = cosine ? 2 * C : C3;
            nn_real *P = att + ((size_t)b * H + h) * T * T;
            nn_real *Y = atty + (size_t)b * T * C + (size_t)h * D;
            vec_gemm_nt(P, T, q, ld, k, ld, T, T, D, 0);
            for (int i = 0; i < T; i++) {
                nn_real *row = P + (size_t)i * T;
                vec_scale(row, scale, i + 1);
                if (slopes)
                    for (int j = 0; j < i; j++) row[j] -= slopes[h] * (nn_real)(i - j);
                nn_real sum = vec_exp_sum(row, row, vec_max(row, i + 1), i + 1);
                vec_scale(row, 1 / sum, i + 1);
                memset(row + i + 1, 0, sizeof(nn_real) * (size_t)(T - i - 1));
            }
            if (ablate && ablate[h])
                for (int i = 0; i < T; i++) memset(Y + (size_t)i * C, 0, sizeof(nn_real) * D);
            else vec_gemm_nn(Y, C, P, T, base + 2 * C, C3, T, D, T, 0);
        }
}

/* The forward in reverse, per (b, h):
 *   dP = dY V^T;  dV += P^T dY;  dS_ij = P_ij (dP_ij - sum_k P_ik dP_ik) scale
 *   dQ += dS K;  dK += dS^T Q
 * cosine: dQ, dK are first taken for the unit rows q^ = q / |q|, then
 *   dq = (dq^ - q^ (q^ . dq^)) / |q|. An ablated head's output is zero: no gradient.
 * ALiBi's bias is a constant: the same backward. */
void tf_attention_backward(nn_real *dqkv, nn_real *dp, const nn_real *datty, const nn_real *att, const nn_real *qkv,
                           const nn_real *qkn, const nn_real *qk_norm, int B, int T, int C, int H, AttnScore score,
                           const uint8_t *ablate) {
    int D = C / H, C3 = 3 * C, cosine = score == ATTN_SCORE_COSINE;
    nn_real scale = score_scale(score, D);
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++) {
            if (ablate && ablate[h]) continue;
            const nn_real *base = qkv + (size_t)b * T * C3 + (size_t)h * D;
            const nn_real *q = cosine ? qkn + (size_t)b * T * 2 * C + (size_t)h * D : base;
            const nn_real *k = cosine ? q + C : base + C;
            int ld = cosine ? 2 * C : C3;
            nn_real *dbase = dqkv + (size_t)b * T * C3 + (size_t)h * D;
            const nn_real *P = att + ((size_t)b * H + h) * T * T;
            const nn_real *dY = datty + (size_t)b * T * C + (size_t)h * D;
            vec_gemm_nt(dp, T, dY, C, base + 2 * C, C3, T, T, D, 0);
            vec_gemm_tn(dbase + 2 * C, C3, P, T, dY, C, T, D, T, 1);
            for (int i = 0; i < T; i++) {
                const nn_real *p = P + (size_t)i * T;
                nn_real *d = dp + (size_t)i * T;
                nn_real dot = vec_dot(p, d, i + 1);
                for (int j = 0; j <= i; j++) d[j] = p[j] * (d[j] - dot) * scale;
                memset(d + i + 1, 0, sizeof(nn_real) * (size_t)(T - i - 1));
            }
            vec_gemm_nn(dbase, C3, dp, T, k, ld, T, D, T, 1);
            vec_gemm_tn(dbase + C, C3, dp, T, q, ld, T, D, T, 1);
        }
    if (!cosine) return;
    for (int r = 0; r < B * T; r++)
        for (int s = 0; s < 2 * H; s++) {
            nn_real *dx = dqkv + (size_t)r * C3 + (size_t)s * D;
            const nn_real *u = qkn + (size_t)r * 2 * C + (size_t)s * D;
            nn_real norm = qk_norm[(size_t)r * 2 * H + s];
            if (!(norm > 0)) {
                memset(dx, 0, sizeof(nn_real) * D);
                continue;
            }
            nn_real ud = vec_dot(u, dx, D);
            for (int d = 0; d < D; d++) dx[d] = (dx[d] - u[d] * ud) / norm;
        }
}

/* ---- rotary positions (RoPE) ---------------------------------------------------- */

/* sign +1: (x0, x1) -> (x0 cos - x1 sin, x0 sin + x1 cos), the rotation by t theta_i;
 * sign -1: its transpose, the rotation back */
static void rope_turn(nn_real *qkv, const nn_real *rope, int B, int T, int C, int H, nn_real sign) {
    int D = C / H, half = D / 2;
    for (int r = 0; r < B * T; r++) {
        const nn_real *cs = rope + (size_t)(r % T) * half * 2;
        for (int s = 0; s < 2 * H; s++) { /* s < H: query of head s, else key of head s - H */
            nn_real *x = qkv + (size_t)r * 3 * C + (size_t)s * D;
            for (int i = 0; i < half; i++) {
                nn_real c = cs[2 * i], sn = sign * cs[2 * i + 1], x0 = x[2 * i], x1 = x[2 * i + 1];
                x[2 * i] = x0 * c - x1 * sn;
                x[2 * i + 1] = x0 * sn + x1 * c;
            }
        }
    }
}

/* q'_t = R(t) q_t, k'_t = R(t) k_t: then q'_i . k'_j = q_i . R(j - i) k_j depends on i - j only */
void tf_rope_forward(nn_real *qkv, const nn_real *rope, int B, int T, int C, int H) {
    rope_turn(qkv, rope, B, T, C, H, 1);
}

/* dq = R(t)^T dq', dk = R(t)^T dk' (dv passes unchanged) */
void tf_rope_backward(nn_real *dqkv, const nn_real *rope, int B, int T, int C, int H) {
    rope_turn(dqkv, rope, B, T, C, H, -1);
}

/* ---- the tensor table ------------------------------------------------------------ */

/* How tensors start: GPT-2's N(0, 0.02) (here uniform of that deviation, so
 * native and WASM draw the same reals), residual projections scaled by
 * 1/sqrt(2L); LayerNorm gains 1; biases 0. AdamW decays the matrices and
 * embeddings, not the biases or gains. */
#define TF_INIT_STD 0.02

static void add(Transformer *m, nn_real **slot, size_t count, OptInit init, double bound, int decay, const char *name,
                int layer) {
    char full[24];
    if (layer >= 0) snprintf(full, sizeof full, "h%d.%s", layer, name);
    else snprintf(full, sizeof full, "%s", name);
    opt_add_named(&m->opt, slot, count, init, bound, decay, full);
}

static void build_table(Transformer *m) {
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
static size_t acts_layout(const Transformer *m, int B, nn_real *base, TfActs *a) {
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
        if (c->score == ATTN_SCORE_COSINE) {
            a->qkn[i] = TAKE(N * 2 * C);
            a->qk_norm[i] = TAKE(N * 2 * H);
        }
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
    a->dp = TAKE(T * T);
    a->dmlp = TAKE(N * F);
    a->dlogits = TAKE(N * V);
    /* token ids, as reals' room (an int32 fits in a float's or double's bytes) */
    a->tokens = (int32_t *)TAKE(N);
    a->targets = (int32_t *)TAKE(N);
#undef TAKE
    return l.size;
}

/* Whether activations for batch B fit the limit (counted, not allocated). */
static int check_activations(const Transformer *m, int B, size_t *size) {
    if (B > TF_MAX_BATCH) return nn_fail(NN_ERR_LIMIT, "batch: %d; it must be within 1..%d", B, TF_MAX_BATCH);
    TfActs a;
    *size = acts_layout(m, B, NULL, &a);
    if (*size > TF_MAX_ACTIVATIONS)
        return nn_fail(NN_ERR_LIMIT,
                       "batch: %d sequences of %d tokens need %zu activations, past the limit of %zu; use a smaller "
                       "batch, context, width or fewer layers",
                       B, m->c.context, *size, TF_MAX_ACTIVATIONS);
    return NN_OK;
}

int tf_reserve(Transformer *m, int B) {
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
        if (sizes[i].value < sizes[i].lo || sizes[i].value > sizes[i].hi)
            return nn_fail(sizes[i].value < sizes[i].lo ? NN_ERR_SHAPE : NN_ERR_LIMIT, "%s: %d; need %d..%d",
                           sizes[i].name, sizes[i].value, sizes[i].lo, sizes[i].hi);
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
    Transformer m; /* only the table: no blocks behind it */
    memset(&m, 0, sizeof m);
    m.c = *c;
    m.V = vocab;
    build_table(&m);
    return m.opt.n;
}

int tf_check_activations(const TfConfig *c, int vocab) {
    Transformer m; /* only the table and the sizes: nothing allocated */
    memset(&m, 0, sizeof m);
    m.c = *c;
    m.V = vocab;
    size_t size;
    return check_activations(&m, c->batch, &size);
}

int tf_keep_text(Transformer *m, const char *text, size_t text_len) {
    if (!text_len) return NN_OK;
    if (!(m->text = malloc(text_len))) return nn_fail(NN_ERR_NOMEM, "text: out of memory for %zu bytes", text_len);
    memcpy(m->text, text, text_len);
    m->text_len = text_len;
    return NN_OK;
}

int tf_model_create(Transformer **out, const TfConfig *c, int vocab) {
    nn_clear_error();
    *out = NULL;
    NN_TRY(tf_check_config(c));
    if (vocab < 1 || vocab > TF_MAX_VOCAB) return nn_fail(NN_ERR_LIMIT, "vocab: %d; need 1..%d", vocab, TF_MAX_VOCAB);
    Transformer *m = calloc(1, sizeof *m);
    if (!m) return nn_fail(NN_ERR_NOMEM, "out of memory for a transformer");
    m->c = *c;
    m->V = vocab;
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
    if (m->rope) /* theta_i = base^(-2i / D) */
        for (int t = 0; t < c->context; t++)
            for (int i = 0; i < half; i++) {
                double angle = t * pow(TF_ROPE_BASE, -2.0 * i / (c->d_model / c->heads));
                m->rope[((size_t)t * half + i) * 2] = (nn_real)cos(angle);
                m->rope[((size_t)t * half + i) * 2 + 1] = (nn_real)sin(angle);
            }
    for (int h = 0; h < c->heads; h++) m->slopes[h] = (nn_real)pow(2.0, -8.0 * (h + 1) / c->heads);
    m->train_rng = c->seed ^ 0x747261696e696e67ull;
    st = tf_reserve(m, c->batch);
    if (st != NN_OK) {
        tf_model_destroy(m);
        return st;
    }
    *out = m;
    return NN_OK;
}

void tf_model_destroy(Transformer *m) {
    if (!m) return;
    opt_free(&m->opt);
    free(m->pos_table);
    free(m->rope);
    free(m->text);
    free(m->acts_block);
    free(m);
}

/* ---- the model's passes ---------------------------------------------------------- */

/* Block l's MLP tensors as the shared layer's view. */
static MlpWeights tf_mlp(const TfWeights *w, int l) {
    return (MlpWeights){w->fcw[l], w->fcb[l], w->fcprojw[l], w->fcprojb[l]};
}

double tf_forward(Transformer *m, int B, int T, int with_targets, int *scored) {
    const TfConfig *c = &m->c;
    TfActs *a = &m->a;
    const TfWeights *w = &m->w;
    int C = c->d_model, F = c->d_ff, H = c->heads, V = m->V, N = B * T;
    /* x = wte[token] + position */
    embedding_forward(a->encoded, w->wte, a->tokens, (size_t)N, C);
    const nn_real *pos = w->wpe ? w->wpe : m->pos_table;
    if (pos)
        for (int r = 0; r < N; r++) vec_axpy(a->encoded + (size_t)r * C, 1, pos + (size_t)(r % T) * C, C);
    const nn_real *res = a->encoded;
    for (int l = 0; l < c->layers; l++) {
        LayerNormWeights ln1 = {w->ln1w[l], w->ln1b[l]};
        layernorm_forward(a->ln1[l], a->ln1_mean[l], a->ln1_rstd[l], res, &ln1, N, C);
        linear_forward(a->qkv[l], a->ln1[l], w->qkvw[l], w->qkvb[l], N, C, 3 * C);
        if (m->rope) tf_rope_forward(a->qkv[l], m->rope, B, T, C, H);
        tf_attention_forward(a->atty[l], a->att[l], a->qkn[l], a->qk_norm[l], a->qkv[l], B, T, C, H, c->score,
                             m->ablate[l], c->positional == TF_POS_ALIBI ? m->slopes : NULL);
        linear_forward(a->res2[l], a->atty[l], w->projw[l], w->projb[l], N, C, C);
        vec_axpy(a->res2[l], 1, res, N * C);
        if (F) {
            LayerNormWeights ln2 = {w->ln2w[l], w->ln2b[l]};
            layernorm_forward(a->ln2[l], a->ln2_mean[l], a->ln2_rstd[l], a->res2[l], &ln2, N, C);
            MlpWeights mw = tf_mlp(w, l);
            mlp_forward(a->res3[l], a->fch[l], a->fch_gelu[l], a->ln2[l], &mw, N, C, F);
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
    return count ? loss / count : 0;
}

void tf_backward(Transformer *m, int B, int T, int scored) {
    const TfConfig *c = &m->c;
    TfActs *a = &m->a;
    const TfWeights *w = &m->w;
    const TfWeights *g = &m->g;
    int C = c->d_model, F = c->d_ff, H = c->heads, V = m->V, N = B * T;
    size_t NC = (size_t)N * C;
    /* loss = mean over scored rows of -log p[y]:  dz = (p - onehot(y)) / scored */
    for (int r = 0; r < N; r++) {
        nn_real *dz = a->dlogits + (size_t)r * V;
        int y = a->targets[r];
        if (y < 0) {
            memset(dz, 0, sizeof(nn_real) * V);
            continue;
        }
        for (int v = 0; v < V; v++) dz[v] = a->probs[(size_t)r * V + v] / scored;
        dz[y] -= (nn_real)1 / scored;
    }
    memset(a->dln, 0, sizeof(nn_real) * NC);
    linear_backward(a->dln, g->outw, g->outb, a->dlogits, a->lnf, w->outw, N, C, V);
    memset(a->dres, 0, sizeof(nn_real) * NC);
    const nn_real *last = c->layers ? a->res3[c->layers - 1] : a->encoded;
    LayerNormWeights lnf = {w->lnfw, w->lnfb}, dlnf = {g->lnfw, g->lnfb};
    layernorm_backward(a->dres, &dlnf, a->dln, last, a->lnf_mean, a->lnf_rstd, &lnf, N, C);
    for (int l = c->layers - 1; l >= 0; l--) {
        const nn_real *res = l ? a->res3[l - 1] : a->encoded;
        if (F) { /* res3 = res2 + mlp(ln2(res2)): dres (d res3) flows to res2 as is, plus through the MLP */
            memset(a->dln, 0, sizeof(nn_real) * NC);
            MlpWeights mw = tf_mlp(w, l), dmw = tf_mlp(g, l);
            mlp_backward(a->dln, a->dmlp, &dmw, a->dres, a->ln2[l], a->fch[l], a->fch_gelu[l], &mw, N, C, F);
            LayerNormWeights ln2 = {w->ln2w[l], w->ln2b[l]}, dln2 = {g->ln2w[l], g->ln2b[l]};
            layernorm_backward(a->dres, &dln2, a->dln, a->res2[l], a->ln2_mean[l], a->ln2_rstd[l], &ln2, N, C);
        }
        /* res2 = res + attention(ln1(res)) Wproj + bproj: dres (d res2) flows to res, plus through attention */
        memset(a->datty, 0, sizeof(nn_real) * NC);
        linear_backward(a->datty, g->projw[l], g->projb[l], a->dres, a->atty[l], w->projw[l], N, C, C);
        memset(a->dqkv, 0, sizeof(nn_real) * NC * 3);
        tf_attention_backward(a->dqkv, a->dp, a->datty, a->att[l], a->qkv[l], a->qkn[l], a->qk_norm[l], B, T, C, H,
                              c->score, m->ablate[l]);
        if (m->rope) tf_rope_backward(a->dqkv, m->rope, B, T, C, H);
        memset(a->dln, 0, sizeof(nn_real) * NC);
        linear_backward(a->dln, g->qkvw[l], g->qkvb[l], a->dqkv, a->ln1[l], w->qkvw[l], N, C, 3 * C);
        LayerNormWeights ln1 = {w->ln1w[l], w->ln1b[l]}, dln1 = {g->ln1w[l], g->ln1b[l]};
        layernorm_backward(a->dres, &dln1, a->dln, res, a->ln1_mean[l], a->ln1_rstd[l], &ln1, N, C);
    }
    /* x = wte[token] + wpe[t] */
    embedding_backward(g->wte, a->dres, a->tokens, (size_t)N, C, -1);
    if (g->wpe)
        for (int r = 0; r < N; r++) vec_axpy(g->wpe + (size_t)(r % T) * C, 1, a->dres + (size_t)r * C, C);
}
