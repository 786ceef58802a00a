/* Training a transformer on its task (include/attnlab/transformer.h): the
 * binding between the model (src/models, which knows only sizes and token
 * ids) and its generated task (src/tasks/sequence_tasks.h): creation, AdamW
 * with warm-up and cosine decay over sampled batches, evaluation over the
 * scored positions, sampling, and head scores on repeated sequences. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "layers/shards.h"
#include "models/transformer_internal.h"
#include "tasks/sequence_tasks.h"

/* AdamW (Loshchilov & Hutter 2019) with GPT-style moment decay rates. */
#define ADAMW_BETA1 0.9
#define ADAMW_BETA2 0.99
#define ADAMW_EPS 1e-8
/* the cosine decay ends at this share of the peak learning rate */
#define TF_LR_FLOOR 0.1
#define TF_TEST_STREAM 0x7465737473706c74ull

int tf_create(Transformer **out, const TfConfig *c, const char *text, size_t text_len) {
    nn_clear_error();
    *out = NULL;
    NN_TRY(tf_check_config(c));
    SeqTask *task = calloc(1, sizeof *task);
    if (!task) return nn_fail(NN_ERR_NOMEM, "out of memory for a task");
    int st = seq_task_init(task, c->task, c->context, text, text_len);
    if (st == NN_OK) st = tf_model_create(out, c, task->vocab);
    if (st != NN_OK) {
        seq_task_free(task);
        free(task);
        return st;
    }
    (*out)->task = task;
    if ((st = tf_keep_text(*out, text, text_len)) != NN_OK) { /* what tf_save writes */
        tf_destroy(*out);
        *out = NULL;
    }
    return st;
}

void tf_destroy(Transformer *m) {
    if (!m) return;
    if (m->task) seq_task_free(m->task);
    free(m->task);
    tf_shards_free(m);
    tf_model_destroy(m);
}

const char *tf_token_name(const Transformer *m, int id) { return id >= 0 && id < m->V ? m->task->names[id] : NULL; }
int tf_seq_len(const Transformer *m) { return m->task->len; }

/* Linear warm-up over the model's first `warmup` steps, then a cosine from
 * lr down to TF_LR_FLOOR lr at step `horizon`, flat after it. */
static double schedule(const TfTrainOptions *o, int step, int horizon) {
    if (step < o->warmup) return o->lr * (step + 1.0) / o->warmup;
    if (horizon <= o->warmup) return o->lr;
    double x = (double)(step - o->warmup) / (horizon - o->warmup);
    if (x > 1) x = 1;
    return o->lr * (TF_LR_FLOOR + (1 - TF_LR_FLOOR) * 0.5 * (1 + cos(3.14159265358979323846 * x)));
}

/* AdamW's passes over the parameters in contiguous ranges, one per shard
 * (nn_pool_range), as the other models' optimiser: the gradient's squared
 * norm as the ranges' sums added in range order (one range: one sum, as
 * without threads), then the update, each weight's on its own. */
typedef struct {
    Transformer *m;
    int ranges;
    nn_real wd;       /* the decoupled weight decay of decayed tensors */
    nn_real scale;    /* the clip's factor on the gradient */
    double lr, c1, c2; /* the step's rate, Adam's bias corrections 1 - b^t */
} AdamPass;

static int norm_task(void *ctx, int r, double *sq) {
    const AdamPass *p = ctx;
    int b, e;
    nn_pool_range((int)p->m->n_params, r, p->ranges, &b, &e);
    for (int i = b; i < e; i++) *sq += (double)p->m->grads[i] * p->m->grads[i];
    return NN_OK;
}

/* p -= lr (mhat / (sqrt(vhat) + eps) + wd p) on decayed tensors, without the wd term on the rest;
 * m = b1 m + (1 - b1) g, v = b2 v + (1 - b2) g^2, g the clipped gradient. */
static int update_task(void *ctx, int r, double *unused) {
    (void)unused;
    const AdamPass *p = ctx;
    Transformer *m = p->m;
    int b, e;
    nn_pool_range((int)m->n_params, r, p->ranges, &b, &e);
    for (int k = 0; k < m->n_tensors; k++) {
        const TfTensor *t = &m->tensors[k];
        size_t lo = t->offset > (size_t)b ? t->offset : (size_t)b;
        size_t hi = t->offset + t->count < (size_t)e ? t->offset + t->count : (size_t)e;
        nn_real wd = t->decay ? p->wd : 0;
        for (size_t i = lo; i < hi; i++) {
            nn_real g = m->grads[i] * p->scale;
            m->m1[i] = (nn_real)(ADAMW_BETA1 * m->m1[i] + (1 - ADAMW_BETA1) * g);
            m->m2[i] = (nn_real)(ADAMW_BETA2 * m->m2[i] + (1 - ADAMW_BETA2) * g * g);
            m->params[i] -=
                (nn_real)(p->lr * ((m->m1[i] / p->c1) / (sqrt(m->m2[i] / p->c2) + ADAMW_EPS) + wd * m->params[i]));
        }
    }
    return NN_OK;
}

static int adamw_step(Transformer *m, const TfTrainOptions *o, double lr) {
    AdamPass p = {m, m->n_shards > 1 ? m->n_shards : 1, o->weight_decay, 1, lr, 0, 0};
    double sq = 0, P = (double)m->n_params;
    NN_TRY(shards_run(norm_task, &p, p.ranges, P, &sq));
    double norm = sqrt(sq);
    if (!isfinite(norm)) return nn_fail(NN_ERR_VALUE, "the gradient norm is %g; the step is not taken", norm);
    p.scale = (nn_real)(o->clip > 0 && norm > o->clip ? o->clip / norm : 1);
    p.c1 = 1 - pow(ADAMW_BETA1, m->steps + 1);
    p.c2 = 1 - pow(ADAMW_BETA2, m->steps + 1);
    /* a step costs some 30 multiply-adds' time (a square root, a division), as in layers/optim.c */
    NN_TRY(shards_run(update_task, &p, p.ranges, 30 * P, NULL));
    m->steps++;
    return NN_OK;
}

static void fill_batch(Transformer *m, TfSplit split, uint64_t *rng, int B) {
    int n = m->task->len;
    for (int b = 0; b < B; b++)
        seq_task_sample(m->task, split, rng, m->a.tokens + (size_t)b * n, m->a.targets + (size_t)b * n);
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
    int T = m->task->len, horizon = o->decay_steps ? o->decay_steps : m->steps + o->steps;
    for (int s = 0; s < o->steps; s++) {
        fill_batch(m, TF_SPLIT_TRAIN, &m->train_rng, o->batch);
        int scored = 0;
        double loss = 0;
        NN_TRY(tf_shards_forward(m, o->batch, T, &loss, &scored));
        if (!isfinite(loss)) return nn_fail(NN_ERR_VALUE, "step %d: the loss is %g; the step is not taken", s, loss);
        if (scored) NN_TRY(tf_shards_backward(m, o->batch, T, scored));
        else memset(m->grads, 0, sizeof(nn_real) * m->n_params);
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
    int T = m->task->len, V = m->V;
    double loss = 0;
    long scored = 0, right = 0;
    /* batches of the configured size, whatever the buffers hold: the loss sums
     * per batch, so a model and its saved copy give the same figures */
    NN_TRY(tf_reserve(m, m->c.batch));
    for (int done = 0; done < count;) {
        int B = count - done < m->c.batch ? count - done : m->c.batch;
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
    seq_task_sample(m->task, split, rng, tokens, targets);
    *n = m->task->len;
    return NN_OK;
}

int tf_head_scores(Transformer *m, int count, float *prev, float *ind) {
    nn_clear_error();
    if (count < 1 || count > TF_MAX_EVALUATE)
        return nn_fail(count < 1 ? NN_ERR_SHAPE : NN_ERR_LIMIT, "count: %d; need 1..%d", count, TF_MAX_EVALUATE);
    int T = m->task->len, L = m->c.layers, H = m->c.heads;
    double sp[TF_MAX_LAYERS * TF_MAX_HEADS] = {0}, si[TF_MAX_LAYERS * TF_MAX_HEADS] = {0};
    long n_prev = 0, n_ind = 0;
    /* where an induction head should look, per position: in the targets'
     * buffer, which a forward pass without targets leaves alone */
    int32_t *source = m->a.targets;
    uint64_t rng = m->c.seed ^ TF_TEST_STREAM ^ 0x68656164ull;
    for (int done = 0; done < count;) {
        int B = count - done < m->acts_batch ? count - done : m->acts_batch;
        for (int b = 0; b < B; b++) seq_task_repeat(m->task, &rng, m->a.tokens + (size_t)b * T, source + (size_t)b * T);
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
