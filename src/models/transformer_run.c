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
    nn_clear_error();
    if (n < 0 || n > TF_MAX_LAYERS * TF_MAX_HEADS)
        return nn_fail(NN_ERR_SHAPE, "ablate: %d heads; need 0..%d", n, m->c.layers * m->c.heads);
    for (int i = 0; i < n; i++)
        if (pairs[2 * i] < 0 || pairs[2 * i] >= m->c.layers || pairs[2 * i + 1] < 0 ||
            pairs[2 * i + 1] >= m->c.heads)
            return nn_fail(NN_ERR_VALUE, "ablate[%d]: layer %d, head %d; the model has layers 0..%d and heads 0..%d",
                           i, pairs[2 * i], pairs[2 * i + 1], m->c.layers - 1, m->c.heads - 1);
    memset(m->ablate, 0, sizeof m->ablate);
    for (int i = 0; i < n; i++) m->ablate[pairs[2 * i]][pairs[2 * i + 1]] = 1;
    return NN_OK;
}

static int check_tokens(const TfModel *m, const int32_t *tokens, int n, int most) {
    if (n < 1 || n > most)
        return nn_check_size("input: tokens", n, 1, most);
    for (int i = 0; i < n; i++)
        if (tokens[i] < 0 || tokens[i] >= m->V)
            return nn_fail(NN_ERR_VALUE, "input[%d]: token %d is not in the vocabulary 0..%d", i, tokens[i], m->V - 1);
    return NN_OK;
}

int tfm_inspect(TfModel *m, const int32_t *tokens, int n, float *attention, int32_t *top_ids, float *top_p,
               int32_t *lens) {
    nn_clear_error();
    NN_TRY(check_tokens(m, tokens, n, m->c.context));
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
            int best = 0;
            for (int v = 1; v < V; v++)
                if (z[v] > z[best]) best = v;
            lens[l * n + t] = best;
        }
    }
    return NN_OK;
}

int tfm_generate(TfModel *m, int32_t *tokens, int n_prompt, int n_new, double temperature, int k, uint64_t seed) {
    nn_clear_error();
    NN_TRY(check_tokens(m, tokens, n_prompt, TF_MAX_TEXT_BYTES));
    if (n_new < 0 || n_new > TF_MAX_GENERATE)
        return nn_fail(n_new < 0 ? NN_ERR_SHAPE : NN_ERR_LIMIT, "tokens: %d; need 0..%d", n_new, TF_MAX_GENERATE);
    if (!(temperature >= 0) || !isfinite(temperature))
        return nn_fail(NN_ERR_VALUE, "temperature must be a finite number >= 0 (got %g)", temperature);
    if (k < 0) return nn_fail(NN_ERR_VALUE, "topK must be >= 0 (got %d)", k);
    int V = m->V, ctx = m->c.context;
    if (k == 0 || k > V) k = V;
    uint64_t rng = seed;
    nn_real w[TF_MAX_VOCAB];
    for (int i = 0; i < n_new; i++) {
        int n = n_prompt + i, T = n < ctx ? n : ctx;
        memcpy(m->a.tokens, tokens + n - T, sizeof(int32_t) * T);
        NN_TRY(tf_forward(m, 1, T, 0, NULL, NULL));
        const nn_real *z = m->a.logits + (size_t)(T - 1) * V;
        int best = 0;
        for (int v = 1; v < V; v++)
            if (z[v] > z[best]) best = v;
        if (temperature == 0) {
            tokens[n] = best;
            continue;
        }
        /* p ~ exp((z - max) / temperature) over the k most likely */
        int32_t ids[TF_MAX_VOCAB];
        float ps[TF_MAX_VOCAB];
        output_top_k(z, V, k, ids, ps);
        double sum = 0;
        for (int j = 0; j < k; j++) sum += w[j] = (nn_real)exp(((double)z[ids[j]] - z[best]) / temperature);
        double u = (double)(nn_rng_next(&rng) >> 11) / 9007199254740992.0 * sum;
        int j = 0;
        while (j < k - 1 && (u -= w[j]) >= 0) j++;
        tokens[n] = ids[j];
    }
    return NN_OK;
}

