/* Training a transformer and looking inside it (include/attnlab/transformer.h):
 * AdamW with warm-up and cosine decay, evaluation, sampling, inspection
 * (attention, predictions, logit lens), generation and head scores. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "base/rng.h"
#include "core/vec.h"
#include "layers/layernorm.h"
#include "layers/mlp.h"
#include "models/transformer_internal.h"

/* AdamW (Loshchilov & Hutter 2019) with GPT-style moment decay rates. */
#define ADAMW_BETA1 0.9
#define ADAMW_BETA2 0.99
#define ADAMW_EPS 1e-8
/* the cosine decay ends at this share of the peak learning rate */
#define TF_LR_FLOOR 0.1
#define TF_TEST_STREAM 0x7465737473706c74ull

const TfConfig *tf_config(const Transformer *m) { return &m->c; }
int tf_vocab(const Transformer *m) { return m->V; }
const char *tf_token_name(const Transformer *m, int id) { return id >= 0 && id < m->V ? m->task.names[id] : NULL; }
int tf_seq_len(const Transformer *m) { return m->task.len; }
size_t tf_num_params(const Transformer *m) { return m->n_params; }
int tf_steps(const Transformer *m) { return m->steps; }
nn_real *tf_params(Transformer *m) { return m->params; }

const char *tf_tensor(const Transformer *m, int i, size_t *offset, size_t *count) {
    if (i < 0 || i >= m->n_tensors) return NULL;
    *offset = m->tensors[i].offset;
    *count = m->tensors[i].count;
    return m->tensors[i].name;
}

int tf_set_ablation(Transformer *m, const int32_t *pairs, int n) {
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

/* Linear warm-up over the model's first `warmup` steps, then a cosine from
 * lr down to TF_LR_FLOOR lr at step `horizon`, flat after it. */
static double schedule(const TfTrainOptions *o, int step, int horizon) {
    if (step < o->warmup) return o->lr * (step + 1.0) / o->warmup;
    if (horizon <= o->warmup) return o->lr;
    double x = (double)(step - o->warmup) / (horizon - o->warmup);
    if (x > 1) x = 1;
    return o->lr * (TF_LR_FLOOR + (1 - TF_LR_FLOOR) * 0.5 * (1 + cos(3.14159265358979323846 * x)));
}

/* p -= lr (mhat / (sqrt(vhat) + eps) + wd p) on decayed tensors, without the wd term on the rest;
 * m = b1 m + (1 - b1) g, v = b2 v + (1 - b2) g^2, g the clipped gradient. */
static int adamw_step(Transformer *m, const TfTrainOptions *o, double lr) {
    double sq = 0;
    for (size_t i = 0; i < m->n_params; i++) sq += (double)m->grads[i] * m->grads[i];
    double norm = sqrt(sq);
    if (!isfinite(norm)) return nn_fail(NN_ERR_VALUE, "the gradient norm is %g; the step is not taken", norm);
    nn_real scale = (nn_real)(o->clip > 0 && norm > o->clip ? o->clip / norm : 1);
    double c1 = 1 - pow(ADAMW_BETA1, m->steps + 1), c2 = 1 - pow(ADAMW_BETA2, m->steps + 1);
    for (int k = 0; k < m->n_tensors; k++) {
        const TfTensor *t = &m->tensors[k];
        nn_real wd = t->decay ? o->weight_decay : 0;
        for (size_t i = t->offset; i < t->offset + t->count; i++) {
            nn_real g = m->grads[i] * scale;
            m->m1[i] = (nn_real)(ADAMW_BETA1 * m->m1[i] + (1 - ADAMW_BETA1) * g);
            m->m2[i] = (nn_real)(ADAMW_BETA2 * m->m2[i] + (1 - ADAMW_BETA2) * g * g);
            m->params[i] -= (nn_real)(lr * ((m->m1[i] / c1) / (sqrt(m->m2[i] / c2) + ADAMW_EPS) + wd * m->params[i]));
        }
    }
    m->steps++;
    return NN_OK;
}

static void fill_batch(Transformer *m, TfSplit split, uint64_t *rng, int B) {
    int n = m->task.len;
    for (int b = 0; b < B; b++)
        seq_task_sample(&m->task, split, rng, m->a.tokens + (size_t)b * n, m->a.targets + (size_t)b * n);
}

int tf_train(Transformer *m, const TfTrainOptions *o, float *losses) {
    nn_clear_error();
    if (o->steps < 1 || o->steps > TF_MAX_STEPS)
        return nn_fail(o->steps < 1 ? NN_ERR_SHAPE : NN_ERR_LIMIT, "steps: %d; need 1..%d", o->steps, TF_MAX_STEPS);
    if (o->batch < 1 || o->batch > TF_MAX_BATCH)
        return nn_fail(o->batch < 1 ? NN_ERR_SHAPE : NN_ERR_LIMIT, "batch: %d; need 1..%d", o->batch, TF_MAX_BATCH);
    if (!(o->lr > 0) || !isfinite(o->lr))
        return nn_fail(NN_ERR_VALUE, "lr must be a finite number > 0 (got %g)", (double)o->lr);
    if (!(o->weight_decay >= 0) || !isfinite(o->weight_decay))
        return nn_fail(NN_ERR_VALUE, "weightDecay must be a finite number >= 0 (got %g)", (double)o->weight_decay);
    if (!(o->clip >= 0) || !isfinite(o->clip))
        return nn_fail(NN_ERR_VALUE, "clip must be a finite number >= 0 (got %g)", (double)o->clip);
    if (o->warmup < 0 || o->decay_steps < 0)
        return nn_fail(NN_ERR_VALUE, "%s must be >= 0 (got %d)", o->warmup < 0 ? "warmup" : "decaySteps",
                       o->warmup < 0 ? o->warmup : o->decay_steps);
    NN_TRY(tf_reserve(m, o->batch));
    int T = m->task.len, horizon = o->decay_steps ? o->decay_steps : m->steps + o->steps;
    for (int s = 0; s < o->steps; s++) {
        fill_batch(m, TF_SPLIT_TRAIN, &m->train_rng, o->batch);
        int scored = 0;
        double loss = tf_forward(m, o->batch, T, 1, &scored);
        if (!isfinite(loss)) return nn_fail(NN_ERR_VALUE, "step %d: the loss is %g; the step is not taken", s, loss);
        memset(m->grads, 0, sizeof(nn_real) * m->n_params);
        if (scored) tf_backward(m, o->batch, T, scored);
        NN_TRY(adamw_step(m, o, schedule(o, m->steps, horizon)));
        if (losses) losses[s] = (float)loss;
    }
    return NN_OK;
}

int tf_evaluate(Transformer *m, TfSplit split, int count, double *loss_out, double *accuracy) {
    nn_clear_error();
    if ((unsigned)split > TF_SPLIT_TEST) return nn_fail(NN_ERR_ARG, "split: unknown split %d", (int)split);
    if (count < 1 || count > TF_MAX_EVALUATE)
        return nn_fail(count < 1 ? NN_ERR_SHAPE : NN_ERR_LIMIT, "count: %d; need 1..%d", count, TF_MAX_EVALUATE);
    uint64_t rng = m->c.seed ^ TF_TEST_STREAM ^ (uint64_t)split;
    int T = m->task.len, V = m->V;
    double loss = 0;
    long scored = 0, right = 0;
    for (int done = 0; done < count;) {
        int B = count - done < m->acts_batch ? count - done : m->acts_batch;
        fill_batch(m, split, &rng, B);
        int n = 0;
        loss += tf_forward(m, B, T, 1, &n) * n;
        scored += n;
        for (int r = 0; r < B * T; r++) {
            int y = m->a.targets[r];
            if (y < 0) continue;
            const nn_real *p = m->a.probs + (size_t)r * V;
            int best = 0;
            for (int v = 1; v < V; v++)
                if (p[v] > p[best]) best = v;
            right += best == y;
        }
        done += B;
    }
    *loss_out = scored ? loss / scored : 0;
    *accuracy = scored ? (double)right / scored : 0;
    return NN_OK;
}

int tf_sample(const Transformer *m, TfSplit split, uint64_t *rng, int32_t *tokens, int32_t *targets, int *n) {
    nn_clear_error();
    if ((unsigned)split > TF_SPLIT_TEST) return nn_fail(NN_ERR_ARG, "split: unknown split %d", (int)split);
    seq_task_sample(&m->task, split, rng, tokens, targets);
    *n = m->task.len;
    return NN_OK;
}

static int check_tokens(const Transformer *m, const int32_t *tokens, int n, int most) {
    if (n < 1 || n > most)
        return nn_fail(n < 1 ? NN_ERR_SHAPE : NN_ERR_LIMIT, "input: %d tokens; need 1..%d", n, most);
    for (int i = 0; i < n; i++)
        if (tokens[i] < 0 || tokens[i] >= m->V)
            return nn_fail(NN_ERR_VALUE, "input[%d]: token %d is not in the vocabulary 0..%d", i, tokens[i], m->V - 1);
    return NN_OK;
}

/* The k largest of p (V) in decreasing order. */
static void top_k(const nn_real *p, int V, int k, int32_t *ids, float *probs) {
    for (int j = 0; j < k; j++) ids[j] = -1, probs[j] = 0;
    for (int v = 0; v < V; v++) {
        int at = k;
        while (at > 0 && (ids[at - 1] < 0 || p[v] > probs[at - 1])) at--;
        if (at == k) continue;
        for (int j = k - 1; j > at; j--) ids[j] = ids[j - 1], probs[j] = probs[j - 1];
        ids[at] = v;
        probs[at] = (float)p[v];
    }
}

int tf_inspect(Transformer *m, const int32_t *tokens, int n, float *attention, int32_t *top_ids, float *top_p,
               int32_t *lens) {
    nn_clear_error();
    NN_TRY(check_tokens(m, tokens, n, m->c.context));
    const TfConfig *c = &m->c;
    TfActs *a = &m->a;
    int C = c->d_model, V = m->V, H = c->heads;
    memcpy(a->tokens, tokens, sizeof(int32_t) * n);
    tf_forward(m, 1, n, 0, NULL);
    if (attention)
        for (size_t i = 0; i < (size_t)c->layers * H * n * n; i++)
            attention[i] = (float)a->att[i / ((size_t)H * n * n)][i % ((size_t)H * n * n)];
    int32_t ids[TF_TOP];
    float ps[TF_TOP];
    for (int t = 0; t < n; t++) {
        top_k(a->probs + (size_t)t * V, V, V < TF_TOP ? V : TF_TOP, ids, ps);
        for (int j = 0; j < TF_TOP; j++) {
            top_ids[t * TF_TOP + j] = j < V ? ids[j] : -1;
            top_p[t * TF_TOP + j] = j < V ? ps[j] : 0;
        }
    }
    if (!lens) return NN_OK;
    /* the logit lens: each layer's residual stream through the final LayerNorm
     * and output layer; this overwrites lnf and logits (the predictions are out) */
    for (int l = 0; l < c->layers; l++) {
        layernorm_forward(a->lnf, a->lnf_mean, a->lnf_rstd, a->res3[l], m->w.lnfw, m->w.lnfb, n, C);
        mlp_linear_forward(a->logits, a->lnf, m->w.outw, m->w.outb, n, C, V);
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

int tf_generate(Transformer *m, int32_t *tokens, int n_prompt, int n_new, double temperature, int k, uint64_t seed) {
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
    nn_real w[256];
    for (int i = 0; i < n_new; i++) {
        int n = n_prompt + i, T = n < ctx ? n : ctx;
        memcpy(m->a.tokens, tokens + n - T, sizeof(int32_t) * T);
        tf_forward(m, 1, T, 0, NULL);
        const nn_real *z = m->a.logits + (size_t)(T - 1) * V;
        int best = 0;
        for (int v = 1; v < V; v++)
            if (z[v] > z[best]) best = v;
        if (temperature == 0) {
            tokens[n] = best;
            continue;
        }
        /* p ~ exp((z - max) / temperature) over the k most likely */
        int32_t ids[256];
        float ps[256];
        top_k(z, V, k, ids, ps);
        double sum = 0;
        for (int j = 0; j < k; j++) sum += w[j] = (nn_real)exp(((double)z[ids[j]] - z[best]) / temperature);
        double u = (double)(nn_rng_next(&rng) >> 11) / 9007199254740992.0 * sum;
        int j = 0;
        while (j < k - 1 && (u -= w[j]) >= 0) j++;
        tokens[n] = ids[j];
    }
    return NN_OK;
}

int tf_head_scores(Transformer *m, int count, float *prev, float *ind) {
    nn_clear_error();
    if (count < 1 || count > TF_MAX_EVALUATE)
        return nn_fail(count < 1 ? NN_ERR_SHAPE : NN_ERR_LIMIT, "count: %d; need 1..%d", count, TF_MAX_EVALUATE);
    int T = m->task.len, L = m->c.layers, H = m->c.heads;
    double sp[TF_MAX_LAYERS * TF_MAX_HEADS] = {0}, si[TF_MAX_LAYERS * TF_MAX_HEADS] = {0};
    long n_prev = 0, n_ind = 0;
    /* where an induction head should look, per position: in the targets'
     * buffer, which a forward pass without targets leaves alone */
    int32_t *source = m->a.targets;
    uint64_t rng = m->c.seed ^ TF_TEST_STREAM ^ 0x68656164ull;
    for (int done = 0; done < count;) {
        int B = count - done < m->acts_batch ? count - done : m->acts_batch;
        for (int b = 0; b < B; b++) seq_task_repeat(&m->task, &rng, m->a.tokens + (size_t)b * T, source + (size_t)b * T);
        tf_forward(m, B, T, 0, NULL);
        for (int b = 0; b < B; b++) {
            n_prev += T - 1;
            for (int t = 0; t < T; t++) n_ind += source[b * T + t] >= 0;
            for (int l = 0; l < L; l++)
                for (int h = 0; h < H; h++) {
                    const nn_real *P = m->a.att[l] + ((size_t)b * H + h) * T * T;
                    for (int t = 1; t < T; t++) sp[l * H + h] += P[(size_t)t * T + t - 1];
                    for (int t = 0; t < T; t++)
                        if (source[b * T + t] >= 0) si[l * H + h] += P[(size_t)t * T + source[b * T + t]];
                }
        }
        done += B;
    }
    for (int i = 0; i < L * H; i++) {
        prev[i] = (float)(n_prev ? sp[i] / n_prev : 0);
        ind[i] = (float)(n_ind ? si[i] / n_ind : 0);
    }
    return NN_OK;
}
