/* Looking inside a transformer (include/attnlab/transformer.h): its sizes and
 * tensors, head ablation, inspection (attention, predictions, logit lens) and
 * generation. Training and everything that draws from its task:
 * src/train/transformer_train.c. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "base/rng.h"
#include "core/vec.h"
#include "layers/layernorm.h"
#include "layers/linear.h"
#include "layers/output.h"
#include "models/decoder.h"
#include "models/decoder_view.h"
#include "models/transformer_internal.h"

const TfConfig *tfm_config(const TfModel *m) { return &m->c; }
int tfm_vocab(const TfModel *m) { return m->V; }
size_t tfm_num_params(const TfModel *m) { return m->opt.n; }
int tfm_steps(const TfModel *m) { return m->opt.steps; }
nn_real *tfm_params(TfModel *m) { return m->opt.params; }

const char *tfm_tensor(const TfModel *m, int i, size_t *offset, size_t *count) {
    if (i < 0 || i >= m->opt.n_tensors) return NULL;
    *offset = m->opt.tensors[i].offset;
    *count = m->opt.tensors[i].count;
    return m->opt.tensors[i].name;
}

int tfm_set_ablation(TfModel *m, const int32_t *pairs, int n) {
    return dec_set_ablation(&m->ablate[0][0], TF_MAX_HEADS, m->c.layers, m->c.heads, pairs, n);
}

int tfm_inspect(TfModel *m, const int32_t *tokens, int n, float *attention, int32_t *top_ids, float *top_p,
               int32_t *lens) {
    nn_clear_error();
    NN_TRY(dec_check_tokens(tokens, n, 1, m->c.context, m->V));
    const TfConfig *c = &m->c;
    TfActs *a = &m->a;
    int C = c->d_model, V = m->V, H = c->heads;
    memcpy(a->tokens, tokens, sizeof(int32_t) * n);
    NN_TRY(tf_forward(m, 1, n, 0, NULL, NULL));
    if (attention)
        for (size_t i = 0; i < (size_t)c->layers * H * n * n; i++)
            attention[i] = (float)a->att[i / ((size_t)H * n * n)][i % ((size_t)H * n * n)];
    int32_t ids[TF_TOP];
    float ps[TF_TOP];
    for (int t = 0; t < n; t++) {
        output_top_k(a->probs + (size_t)t * V, V, V < TF_TOP ? V : TF_TOP, ids, ps);
        for (int j = 0; j < TF_TOP; j++) {
            top_ids[t * TF_TOP + j] = j < V ? ids[j] : -1;
            top_p[t * TF_TOP + j] = j < V ? ps[j] : 0;
        }
    }
    if (!lens) return NN_OK;
    /* the logit lens: each layer's residual stream through the final LayerNorm
     * and output layer; this overwrites lnf and logits (the predictions are out) */
    for (int l = 0; l < c->layers; l++) {
        LayerNormWeights lnf = {m->w.lnfw, m->w.lnfb};
        layernorm_forward(a->lnf, a->lnf_mean, a->lnf_rstd, a->res3[l], &lnf, n, C);
        linear_forward(a->logits, a->lnf, m->w.outw, m->w.outb, n, C, V);
        for (int t = 0; t < n; t++) {
            const nn_real *z = a->logits + (size_t)t * V;
            lens[l * n + t] = dec_argmax(z, V);
        }
    }
    return NN_OK;
}

/* The last position's logits after tokens[0..n): the whole window (the
 * last `context` tokens) through the model. */
static int next_logits(void *ctx, const int32_t *tokens, int n, int step, const nn_real **z) {
    TfModel *m = ctx;
    (void)step;
    int T = n < m->c.context ? n : m->c.context;
    memcpy(m->a.tokens, tokens + n - T, sizeof(int32_t) * T);
    NN_TRY(tf_forward(m, 1, T, 0, NULL, NULL));
    *z = m->a.logits + (size_t)(T - 1) * m->V;
    return NN_OK;
}

int tfm_generate(TfModel *m, int32_t *tokens, int n_prompt, int n_new, double temperature, int k, uint64_t seed) {
    nn_clear_error();
    DecGenerateLimits lim = {m->V, TF_MAX_TEXT_BYTES, TF_MAX_GENERATE};
    return dec_generate(&lim, next_logits, m, tokens, n_prompt, n_new, temperature, k, seed);
}

/* ---- patching (decoder.h's dec_patch over this forward) ---- */

/* One run at a time (DecShape copies 1). */
static int patch_forward(void *model, const int32_t *tokens, int n, int copies, const DecHook *hook, int from,
                         const nn_real *x0, const nn_real **z) {
    TfModel *m = model;
    if (copies != 1) return nn_fail(NN_ERR_ARG, "patch: this model runs one patched run at a time (asked %d)", copies);
    memcpy(m->a.tokens, tokens, sizeof(int32_t) * n);
    m->hook = hook;
    m->hook_from = from;
    m->hook_x0 = x0;
    int st = tf_forward(m, 1, n, 0, NULL, NULL);
    m->hook = NULL;
    m->hook_x0 = NULL;
    *z = m->a.logits + (size_t)(n - 1) * m->V;
    return st;
}

/* The corrupt run forward, then d(logit[a] - logit[b]) at the last position
 * back through it (the weights' gradients it leaves are spent: training
 * zeroes them first). */
static int patch_backward(void *model, const int32_t *tokens, int n, int a, int b, const DecHook *hook) {
    TfModel *m = model;
    memcpy(m->a.tokens, tokens, sizeof(int32_t) * n);
    NN_TRY(tf_forward(m, 1, n, 0, NULL, NULL));
    int V = m->V;
    memset(m->a.dlogits, 0, sizeof(nn_real) * (size_t)n * V);
    m->a.dlogits[(size_t)(n - 1) * V + a] += 1;
    m->a.dlogits[(size_t)(n - 1) * V + b] -= 1;
    m->hook = hook;
    int st = tf_backward_logits(m, 1, n);
    m->hook = NULL;
    return st;
}

int tfm_logit_attribution(TfModel *m, const int32_t *tokens, int n, int a, int b, double *values, double *logit_diff) {
    nn_clear_error();
    DecView v;
    dec_view_tf(m, &v);
    return dec_logit_attribution(&v, patch_forward, m, tokens, n, m->c.context, a, b, values, logit_diff);
}

int tfm_patch(TfModel *m, const int32_t *clean, const int32_t *corrupt, int n, int a, int b, int target, int method,
              float *out, double *metrics) {
    nn_clear_error();
    DecShape s = {m->c.layers, m->c.heads, m->c.d_model, m->V, m->c.context, 1};
    if (method == DEC_PATCH_ATTRIBUTION)
        return dec_patch_attribution(&s, patch_forward, patch_backward, m, clean, corrupt, n, a, b,
                                     (DecPatchTarget)target, out, metrics, metrics + 1);
    return dec_patch(&s, patch_forward, m, clean, corrupt, n, a, b, (DecPatchTarget)target, out, metrics, metrics + 1);
}
