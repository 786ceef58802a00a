/* A seq2seq model bound to its task: training on sampled batches, evaluation,
 * translation and saving both together (see include/attnlab/trainer.h). */
#include "attnlab/trainer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/bytes.h"
#include "base/error.h"
#include "base/lifecycle.h"
#include "layers/model_file.h"
#include "models/seq2seq_internal.h" /* s2s_load_rows, the parameter table */
#include "train/train_call.h"

#define TRAIN_STREAM 0x9e3779b97f4a7c15ull /* xor'ed into the seed: the training draws */
#define EVAL_STREAM 0x5eed0e7a1ull         /* + split: the fixed evaluation draws */

struct Trainer {
    TaskConfig tc;    /* the task's configuration (saved with the model) */
    char *text;       /* pairs text (owned), or NULL */
    size_t text_len;  /* its bytes */
    Task *task;       /* the task, owned */
    Seq2Seq *model;   /* the model, owned */
    uint64_t stream;  /* state of the training draws */
    int Bm;           /* rows the batch buffers below hold */
    int max_in;       /* the model's longest input */
    int max_out;      /* the model's longest output */
    int32_t *buf;     /* the one allocation behind the batch buffers */
    int32_t *in_ids;  /* (Bm, max_in) */
    int32_t *in_len;  /* (Bm) */
    int32_t *out_ids; /* (Bm, max_out) */
    int32_t *out_len; /* (Bm) */
    int32_t *pred;    /* (Bm, max_out) */
    int32_t *pred_len; /* (Bm) */
};

void trainer_destroy(Trainer *t) {
    if (!t) return;
    s2s_destroy(t->model);
    task_destroy(t->task);
    NN_FREE_ALL(t->text, t->buf, t);
}

/* The batch buffers for Bm rows; on failure the old ones stay. */
static int alloc_batches(Trainer *t, int Bm) {
    size_t n = (size_t)Bm * (t->max_in + 2 * t->max_out + 3);
    int32_t *buf = malloc(sizeof(int32_t) * n);
    if (!buf) return nn_fail(NN_ERR_NOMEM, "trainer: out of memory for batches of %d", Bm);
    free(t->buf);
    t->buf = buf;
    t->Bm = Bm;
    t->in_ids = t->buf;
    t->out_ids = t->in_ids + (size_t)Bm * t->max_in;
    t->pred = t->out_ids + (size_t)Bm * t->max_out;
    t->in_len = t->pred + (size_t)Bm * t->max_out;
    t->out_len = t->in_len + Bm;
    t->pred_len = t->out_len + Bm;
    return NN_OK;
}

/* Batches of B rows, 1..S2S_MAX_BATCH: grows the model's and the trainer's
 * buffers when B is larger than any batch so far. */
static int reserve_batch(Trainer *t, int B) {
    if (B < 1 || B > S2S_MAX_BATCH)
        return nn_check_size("batch", B, 1, S2S_MAX_BATCH);
    if (B <= t->Bm) return NN_OK;
    NN_TRY(s2s_reserve(t->model, B));
    return alloc_batches(t, B);
}

/* A model fits its task: the task's vocabularies, lengths and fixed input
 * length ('location' attention scores exactly that many positions). */
static int check_fits(const S2sConfig *c, const Task *task, const TaskConfig *tc) {
    if (c->attention == ATTN_SCORE_LOCATION && task_fixed_in(task) == 0)
        return nn_fail(NN_ERR_ARG, "attention: 'location' scores a fixed number of input positions, but this "
                                   "task's inputs vary in length (%d..%d); use a fixed length or another score",
                       tc->kind == TASK_DATES || tc->kind == TASK_PAIRS ? 1 : tc->min_len, task_max_in(task));
    if (c->in_vocab != task_in_vocab(task) || c->out_vocab != task_out_vocab(task) || c->max_in != task_max_in(task) ||
        c->max_out != task_max_out(task) || c->fixed_in != task_fixed_in(task))
        return nn_fail(NN_ERR_VALUE, "the model's vocabulary or lengths do not match its task");
    return NN_OK;
}

/* The model's configuration for a task: its vocabularies, lengths and fixed_in. */
static S2sConfig config_for(const S2sConfig *mc, const Task *task) {
    S2sConfig c = *mc;
    c.in_vocab = task_in_vocab(task);
    c.out_vocab = task_out_vocab(task);
    c.max_in = task_max_in(task);
    c.max_out = task_max_out(task);
    c.fixed_in = task_fixed_in(task);
    return c;
}

/* Builds the trainer from its task (made from tc and text when task is NULL)
 * and its model (made from mc when model is NULL); owns both from the call on. */
static int trainer_build(Trainer **out, const TaskConfig *tc, const char *text, size_t len, Task *task,
                         const S2sConfig *mc, Seq2Seq *model) {
    *out = NULL;
    Trainer *t = calloc(1, sizeof *t);
    if (!t) {
        s2s_destroy(model);
        task_destroy(task);
        return nn_fail(NN_ERR_NOMEM, "trainer: out of memory");
    }
    t->tc = *tc;
    t->task = task;
    t->model = model;
    int st = NN_OK;
    if (text && len) {
        if (!(t->text = malloc(len))) {
            st = nn_fail(NN_ERR_NOMEM, "pairs: out of memory for %zu bytes", len);
            goto fail;
        }
        memcpy(t->text, text, len);
        t->text_len = len;
    }
    if (!t->task && (st = task_create(&t->task, tc, text, len)) != NN_OK) goto fail;
    if (!t->model) {
        S2sConfig c = config_for(mc, t->task);
        if ((st = check_fits(&c, t->task, tc)) != NN_OK || (st = s2s_create(&t->model, &c)) != NN_OK) goto fail;
    }
    const S2sConfig *c = s2s_config(t->model);
    if ((st = check_fits(c, t->task, tc)) != NN_OK) goto fail;
    t->max_in = c->max_in;
    t->max_out = c->max_out;
    t->stream = c->seed ^ TRAIN_STREAM;
    /* a loaded model starts with one row; both grow with the batches */
    if ((st = alloc_batches(t, c->batch < s2s_capacity(t->model) ? c->batch : s2s_capacity(t->model))) != NN_OK) goto fail;
    /* the copy a failed training call goes back to, allocated now: training allocates nothing */
    if ((st = s2s_checkpoint(t->model)) != NN_OK) goto fail;
    *out = t;
    return NN_OK;
fail:
    trainer_destroy(t);
    return st;
}

int trainer_create(Trainer **out, const TaskConfig *tc, const char *text, size_t len, const S2sConfig *mc) {
    nn_clear_error();
    return trainer_build(out, tc, text, len, NULL, mc, NULL);
}

const Task *trainer_task(const Trainer *t) { return t->task; }
const TaskConfig *trainer_task_config(const Trainer *t) { return &t->tc; }
Seq2Seq *trainer_model(Trainer *t) { return t->model; }

/* Whether the task has training examples. */
static int check_trainable(const Trainer *t) {
    if (task_split_size(t->task, TASK_TRAIN) == 0)
        return nn_fail(NN_ERR_VALUE, "pairs: the train split is empty: none of the %d lines fell into it (a hash of each "
                                     "input puts 80%% of lines in train, 10%% in validation, 10%% in test); add more lines",
                       task_split_size(t->task, TASK_VALID) + task_split_size(t->task, TASK_TEST));
    return NN_OK;
}

/* ---- training: seq2seq's adapter of the one training call (train_call.h) ---- */

typedef struct {
    Trainer *t;
    double seen; /* target tokens of the steps so far */
} S2sCall;

static int call_sample(void *ctx, int B) {
    S2sCall *c = ctx;
    Trainer *t = c->t;
    NN_TRY(task_sample_batch(t->task, TASK_TRAIN, &t->stream, B, t->in_ids, t->in_len, t->out_ids, t->out_len));
    for (int b = 0; b < B; b++) c->seen += t->out_len[b];
    return NN_OK;
}

static int call_gradients(void *ctx, int B, double *loss) {
    Trainer *t = ((S2sCall *)ctx)->t;
    nn_real l = 0;
    s2s_zero_grad(t->model);
    NN_TRY(s2s_forward(t->model, B, t->in_ids, t->in_len, t->out_ids, t->out_len, &l));
    *loss = l;
    return isfinite(l) ? s2s_backward(t->model) : NN_OK; /* the call refuses a loss that is not finite */
}

static int call_probe(void *ctx) { return s2s_check_forward(((S2sCall *)ctx)->t->model); }

int trainer_train(Trainer *t, const NnTrainOptions *o, int steps, int B, float *losses, double *tokens) {
    nn_clear_error();
    OptParams *opt = &t->model->opt;
    NN_TRY(train_check(opt, o, steps));
    NN_TRY(check_trainable(t));
    NN_TRY(reserve_batch(t, B));
    S2sCall call = {t, 0};
    TrainAdapter a = {opt, &t->stream, &call, call_sample, call_gradients, call_probe, NULL, NULL};
    NN_TRY(train_call(&a, o, steps, B, losses));
    if (tokens) *tokens = call.seen;
    return NN_OK;
}

int trainer_undo(Trainer *t) {
    nn_clear_error();
    TrainAdapter a = {&t->model->opt, &t->stream, NULL, NULL, NULL, NULL, NULL, NULL};
    return train_undo(&a);
}

/* ---- evaluation: seq2seq's adapter of the one evaluation loop (train_call.h) ---- */

typedef struct {
    Trainer *t;
    TrainerEval *r; /* its per-length counts fill as the batches run */
} S2sEval;

static int eval_reserve(void *ctx, int rows) { return reserve_batch(((S2sEval *)ctx)->t, rows); }

/* A batch's teacher-forced loss and its greedy answers, token by token and whole. */
static int eval_run(void *ctx, int split, uint64_t *rng, int B, EvalSums *sum) {
    S2sEval *e = ctx;
    Trainer *t = e->t;
    NN_TRY(task_sample_batch(t->task, (TaskSplit)split, rng, B, t->in_ids, t->in_len, t->out_ids, t->out_len));
    nn_real l;
    NN_TRY(s2s_forward(t->model, B, t->in_ids, t->in_len, t->out_ids, t->out_len, &l));
    NN_TRY(s2s_greedy(t->model, B, t->in_ids, t->in_len, t->pred, t->pred_len, NULL));
    for (int b = 0; b < B; b++) {
        const int32_t *want = t->out_ids + (size_t)b * t->max_out, *got = t->pred + (size_t)b * t->max_out;
        int n = t->out_len[b], right = 0;
        for (int i = 0; i < n; i++) right += i < t->pred_len[b] && got[i] == want[i];
        sum->loss += (double)l * n;
        sum->scored += n;
        sum->right += right;
        int whole = right == n && t->pred_len[b] == n;
        sum->whole += whole;
        e->r->length_count[t->in_len[b]]++;
        e->r->length_right[t->in_len[b]] += whole;
    }
    return NN_OK;
}

int trainer_evaluate(Trainer *t, TaskSplit split, int count, TrainerEval *r) {
    nn_clear_error();
    memset(r, 0, sizeof *r);
    if ((unsigned)split > TASK_TEST) return nn_fail(NN_ERR_ARG, "split: unknown split %d (train, validation or test)", (int)split);
    S2sEval e = {t, r};
    EvalAdapter a = {&e, s2s_config(t->model)->batch, eval_reserve, eval_run};
    EvalSums sum;
    NN_TRY(train_evaluate(&a, split, EVAL_STREAM + (uint64_t)split, count, TRAINER_MAX_EVAL, &sum));
    r->loss = sum.loss / sum.scored;
    r->token_accuracy = sum.right / sum.scored;
    r->sequence_accuracy = sum.whole / count;
    r->count = count;
    return NN_OK;
}

int trainer_translate(Trainer *t, const char *text, size_t text_len, int beam, int32_t *in_ids, int *in_len, int32_t *out_ids,
                      int *out_len, nn_real *alignment, char *output) {
    nn_clear_error();
    NN_TRY(nn_check_size("beam", beam, 1, S2S_MAX_BEAM));
    int n = task_encode_input(t->task, text, text_len, in_ids, t->max_in);
    if (n < 0) return -n;
    const S2sConfig *c = s2s_config(t->model);
    if (c->fixed_in && n != c->fixed_in)
        return nn_fail(NN_ERR_SHAPE, "text: %d characters, but this model ('location' attention) reads exactly %d", n,
                       c->fixed_in);
    int32_t len = 0;
    nn_real logp;
    NN_TRY(s2s_beam(t->model, beam, in_ids, n, out_ids, &len, alignment, &logp));
    task_decode_output(t->task, out_ids, len, output, t->max_out + 1);
    *in_len = n;
    *out_len = len;
    return NN_OK;
}

int trainer_saliency(Trainer *t, const char *text, size_t text_len, int step, int32_t *in_ids, int *in_len,
                     int32_t *out_ids, int *out_len, nn_real *alignment, char *output, nn_real *saliency) {
    NN_TRY(trainer_translate(t, text, text_len, 1, in_ids, in_len, out_ids, out_len, alignment, output));
    return s2s_saliency(t->model, in_ids, *in_len, out_ids, *out_len, step, saliency);
}

/* ---- save / load ------------------------------------------------------------ */

static const uint32_t VERSIONS[] = {1};
#define TRAINER_FORMAT_VERSION 1u
#define TASK_FIELDS 4

static size_t header_size(size_t text_len) { return MODEL_FILE_MAGIC + 4 + 4 * TASK_FIELDS + 4 + text_len + 8; }

size_t trainer_save_size(const Trainer *t) { return header_size(t->text_len) + s2s_save_size(t->model) + 4; }

int trainer_save(const Trainer *t, uint8_t *bytes, size_t size) {
    nn_clear_error();
    size_t need = trainer_save_size(t);
    if (size < need) return nn_fail(NN_ERR_SHAPE, "save: %zu bytes is too small (%zu needed)", size, need);
    uint8_t *p = bytes;
    model_file_put_magic(&p, MODEL_FILE_TRAINER, TRAINER_FORMAT_VERSION);
    int32_t f[TASK_FIELDS] = {(int32_t)t->tc.kind, (int32_t)t->tc.alphabet, t->tc.min_len, t->tc.max_len};
    model_file_put_i32s(&p, f, TASK_FIELDS);
    nn_put_u32(&p, (uint32_t)t->text_len);
    if (t->text_len) memcpy(p, t->text, t->text_len);
    p += t->text_len;
    nn_put_u64(&p, t->stream);
    size_t model = s2s_save_size(t->model);
    NN_TRY(s2s_save(t->model, p, model));
    p += model;
    model_file_put_checksum(&p, bytes);
    return NN_OK;
}

/* The task of a file (pairs text inside it) and its model's configuration
 * checked against it, before the model is allocated. */
static int load_task(Task **task, const TaskConfig *tc, const char *text, size_t text_len, const uint8_t *model,
                     size_t model_size) {
    *task = NULL;
    S2sConfig c;
    NN_TRY(s2s_load_config(model, model_size, &c));
    NN_TRY(task_create(task, tc, text, text_len));
    if (check_fits(&c, *task, tc) != NN_OK) {
        task_destroy(*task);
        *task = NULL;
        return nn_fail(NN_ERR_VALUE, "model file: %s; the file is damaged", nn_last_error());
    }
    return NN_OK;
}

int trainer_load(Trainer **out, const uint8_t *bytes, size_t size) {
    *out = NULL;
    nn_clear_error();
    ModelFileReader r;
    uint32_t version;
    NN_TRY(model_file_open(&r, MODEL_FILE_TRAINER, bytes, size, VERSIONS, 1, &version));
    NN_TRY(model_file_need(&r, header_size(0) - r.at + 4));
    int32_t f[TASK_FIELDS];
    model_file_i32s(&r, f, TASK_FIELDS);
    size_t text_len = model_file_u32(&r);
    if (text_len > size || header_size(text_len) + 4 > size)
        return nn_fail(NN_ERR_VALUE, "model file: truncated (%zu bytes; its task text alone needs %zu)", size, text_len);
    NN_TRY(model_file_checksum(bytes, bytes + size));
    if ((f[0] == TASK_PAIRS) != (text_len > 0))
        return nn_fail(NN_ERR_VALUE, "model file: %zu bytes of pairs for task %d; the file is damaged", text_len, f[0]);
    const char *text = (const char *)bytes + r.at;
    r.at += text_len;
    uint64_t stream = model_file_u64(&r);
    const uint8_t *model = bytes + r.at, *end = bytes + size - 4;
    TaskConfig tc = {(TaskKind)f[0], (TaskAlphabet)f[1], f[2], f[3]};
    Task *task;
    Seq2Seq *m;
    int st = load_task(&task, &tc, text_len ? text : NULL, text_len, model, (size_t)(end - model));
    /* one row, as the probe needs: the trainer grows it with its batches */
    if (st == NN_OK && (st = s2s_load_rows(&m, model, (size_t)(end - model), 1)) != NN_OK) task_destroy(task);
    if (st == NN_OK) st = trainer_build(out, &tc, text_len ? text : NULL, text_len, task, NULL, m);
    if (st != NN_OK) return nn_fail(st, "%s%s", strncmp(nn_last_error(), "model file", 10) ? "model file: " : "", nn_last_error());
    (*out)->stream = stream;
    return NN_OK;
}
