/* Training a transformer on its task (include/attnlab/transformer.h): the
 * binding between the model (src/models, which knows only sizes and token
 * ids) and its generated task (src/tasks/sequence_tasks.h): creation, the
 * one training call (src/train/train_call.c: AdamW with warm-up and cosine
 * decay, all or nothing) over sampled batches, evaluation over the scored
 * positions, sampling, and head scores on repeated sequences. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "layers/output.h"
#include "layers/shards.h"
#include "models/decoder.h"
#include "models/transformer_internal.h"
#include "tasks/sequence_tasks.h"
#include "train/train_call.h"
#include "train/transformer_train.h"

#define TF_TEST_STREAM 0x7465737473706c74ull
#define TF_TRAIN_STREAM 0x747261696e696e67ull /* xor'ed into the seed: the training draws */

int tf_create(Transformer **out, const TfConfig *c, const char *text, size_t text_len) {
    return tf_create_cut(out, c, text, text_len, SEQ_CHARS);
}

int tf_create_cut(Transformer **out, const TfConfig *c, const char *text, size_t text_len, SeqUnit unit) {
    nn_clear_error();
    *out = NULL;
    NN_TRY(tf_check_config(c));
    Transformer *t = calloc(1, sizeof *t);
    if (!t) return nn_fail(NN_ERR_NOMEM, "out of memory for a transformer");
    int st = seq_task_init(&t->task, c->task, c->context, text, text_len, unit);
    if (st == NN_OK) st = tf_model_create(&t->model, c, t->task.vocab, (const char (*)[8])t->task.names);
    if (st == NN_OK && text_len && !(t->text = malloc(text_len))) /* what tf_save writes */
        st = nn_fail(NN_ERR_NOMEM, "text: out of memory for %zu bytes", text_len);
    if (st != NN_OK) {
        tf_destroy(t);
        return st;
    }
    if (text_len) memcpy(t->text, text, text_len);
    t->text_len = text_len;
    t->train_rng = c->seed ^ TF_TRAIN_STREAM;
    *out = t;
    return NN_OK;
}

void tf_destroy(Transformer *t) {
    if (!t) return;
    seq_task_free(&t->task);
    if (t->model) tf_shards_free(t->model);
    tf_model_destroy(t->model);
    free(t->text);
    free(t);
}

/* ---- the model's views, through the binding ---------------------------------- */

const TfConfig *tf_config(const Transformer *t) { return tfm_config(t->model); }
int tf_vocab(const Transformer *t) { return tfm_vocab(t->model); }
size_t tf_num_params(const Transformer *t) { return tfm_num_params(t->model); }
int tf_steps(const Transformer *t) { return tfm_steps(t->model); }
nn_real *tf_params(Transformer *t) { return tfm_params(t->model); }
const char *tf_tensor(const Transformer *t, int i, size_t *offset, size_t *count) {
    return tfm_tensor(t->model, i, offset, count);
}
int tf_set_ablation(Transformer *t, const int32_t *pairs, int n) { return tfm_set_ablation(t->model, pairs, n); }
int tf_inspect(Transformer *t, const int32_t *tokens, int n, float *attention, int32_t *top_ids, float *top_p,
               int32_t *lens) {
    return tfm_inspect(t->model, tokens, n, attention, top_ids, top_p, lens);
}
int tf_logit_attribution(Transformer *t, const int32_t *tokens, int n, int a, int b, double *values, double *logit_diff) {
    return tfm_logit_attribution(t->model, tokens, n, a, b, values, logit_diff);
}
int tf_patch(Transformer *t, const int32_t *clean, const int32_t *corrupt, int n, int a, int b, int target, int method,
             float *out, double *metrics) {
    return tfm_patch(t->model, clean, corrupt, n, a, b, target, method, out, metrics);
}
int tf_generate(Transformer *t, int32_t *tokens, int n_prompt, int n_new, double temperature, int top_k, uint64_t seed) {
    return tfm_generate(t->model, tokens, n_prompt, n_new, temperature, top_k, seed);
}
const char *tf_token_name(const Transformer *t, int id) {
    return id >= 0 && id < t->model->V ? t->model->names[id] : NULL;
}
int tf_seq_len(const Transformer *t) { return t->task.len; }

static void fill_batch(Transformer *t, TfSplit split, uint64_t *rng, int B) {
    TfModel *m = t->model;
    int n = t->task.len;
    for (int b = 0; b < B; b++)
        seq_task_sample(&t->task, split, rng, m->a.tokens + (size_t)b * n, m->a.targets + (size_t)b * n);
}

/* ---- training: the transformer's adapter of the one training call (train_call.h) ---- */

typedef struct {
    Transformer *t;
} TfCall;

static int call_sample(void *ctx, int B) {
    Transformer *t = ((TfCall *)ctx)->t;
    fill_batch(t, TF_SPLIT_TRAIN, &t->train_rng, B);
    return NN_OK;
}

static int call_gradients(void *ctx, int B, double *loss) {
    Transformer *t = ((TfCall *)ctx)->t;
    TfModel *m = t->model;
    int T = t->task.len, scored = 0;
    NN_TRY(tf_shards_forward(m, B, T, loss, &scored));
    if (!isfinite(*loss)) return NN_OK; /* the call refuses the step */
    if (scored) return tf_shards_backward(m, B, T, scored);
    opt_zero_grad(&m->opt);
    return NN_OK;
}

/* The start of the batch's first sequence (TF_MIN_CONTEXT tokens) through
 * the updated weights: its probabilities finite. A short probe: weights
 * that overflow do so on any input, and the call's batches each went
 * through a whole forward already. */
static int call_probe(void *ctx) {
    Transformer *t = ((TfCall *)ctx)->t;
    TfModel *m = t->model;
    int T = t->task.len < TF_MIN_CONTEXT ? t->task.len : TF_MIN_CONTEXT;
    int st = tf_forward(m, 1, T, 0, NULL, NULL);
    if (st == NN_OK) st = nn_check_finite("probabilities", m->a.probs, (size_t)T * m->V);
    if (st != NN_OK) return nn_fail(st, "its forward pass on a probe sequence is not finite (%s)", nn_last_error());
    return NN_OK;
}

int tf_train(Transformer *t, const TfTrainOptions *o, float *losses) {
    TfModel *m = t->model;
    nn_clear_error();
    /* AdamW with warm-up and (unless constant) a cosine decay to final_lr, lr / 10 by default */
    NnTrainOptions opt = {NN_ADAMW, o->lr, o->clip, o->weight_decay, o->constant_lr ? NN_LR_CONSTANT : NN_LR_COSINE,
                          o->warmup, o->decay_steps, o->final_lr};
    NN_TRY(train_check(&m->opt, &opt, o->steps));
    NN_TRY(nn_check_size("batch", o->batch, 1, TF_MAX_BATCH));
    NN_TRY(tf_reserve(m, o->batch));
    TfCall call = {t};
    TrainAdapter a = {&m->opt, &t->train_rng, &call, call_sample, call_gradients, call_probe, NULL, NULL};
    return train_call(&a, &opt, o->steps, o->batch, losses);
}

int tf_undo(Transformer *t) {
    nn_clear_error();
    TrainAdapter a = {&t->model->opt, &t->train_rng, NULL, NULL, NULL, NULL, NULL, NULL};
    return train_undo(&a);
}

/* ---- evaluation: the transformer's adapter of the one evaluation loop (train_call.h) ---- */

static int eval_reserve(void *ctx, int rows) { return tf_reserve(((Transformer *)ctx)->model, rows); }

/* A batch's loss over its scored positions, and the most probable token at each. */
static int eval_run(void *ctx, int split, uint64_t *rng, int B, EvalSums *sum) {
    Transformer *t = ctx;
    TfModel *m = t->model;
    int T = t->task.len, V = m->V, n = 0;
    fill_batch(t, (TfSplit)split, rng, B);
    double mean = 0;
    NN_TRY(tf_forward(m, B, T, 1, &mean, &n));
    sum->loss += mean * n;
    sum->scored += n;
    for (int r = 0; r < B * T; r++) {
        int y = m->a.targets[r];
        if (y < 0) continue;
        const nn_real *p = m->a.probs + (size_t)r * V;
        /* a loss is never the floor of a probability that underflowed */
        if (!(p[y] > OUTPUT_MIN_PROB))
            return nn_fail(NN_ERR_VALUE, "evaluate: the model gives a right token probability %g (its logits are "
                                         "past what float32 resolves): its weights are broken; train it again or "
                                         "load an earlier save", (double)p[y]);
        int best = 0;
        for (int v = 1; v < V; v++)
            if (p[v] > p[best]) best = v;
        sum->right += best == y;
    }
    return NN_OK;
}

int tf_evaluate(Transformer *t, TfSplit split, int count, double *loss_out, double *accuracy) {
    TfModel *m = t->model;
    nn_clear_error();
    if ((unsigned)split > TF_SPLIT_TEST) return nn_fail(NN_ERR_ARG, "split: unknown split %d", (int)split);
    EvalAdapter a = {t, m->c.batch, eval_reserve, eval_run};
    EvalSums sum;
    NN_TRY(train_evaluate(&a, split, m->c.seed ^ TF_TEST_STREAM ^ (uint64_t)split, count, TF_MAX_EVALUATE, &sum));
    *loss_out = sum.scored ? sum.loss / sum.scored : 0;
    *accuracy = sum.scored ? sum.right / sum.scored : 0;
    return NN_OK;
}

int tf_sample(const Transformer *t, TfSplit split, uint64_t *rng, int32_t *tokens, int32_t *targets, int *n) {
    nn_clear_error();
    if ((unsigned)split > TF_SPLIT_TEST) return nn_fail(NN_ERR_ARG, "split: unknown split %d", (int)split);
    seq_task_sample(&t->task, split, rng, tokens, targets);
    *n = t->task.len;
    return NN_OK;
}

/* The task's repeated sequences, each with where an induction head looks. */
typedef struct {
    Transformer *t;
    uint64_t rng;
} Repeats;

static void next_repeat(void *ctx, int32_t *tokens, int32_t *source) {
    Repeats *q = ctx;
    seq_task_repeat(&q->t->task, &q->rng, tokens, source);
}

int tf_head_scores(Transformer *t, int count, float *prev, float *ind) {
    nn_clear_error();
    NN_TRY(nn_check_size("count", count, 1, TF_MAX_EVALUATE));
    Repeats q = {t, t->model->c.seed ^ TF_TEST_STREAM ^ 0x68656164ull};
    return gpt2_scores_over(&t->model->dec, count, t->task.len, next_repeat, &q, prev, ind);
}
