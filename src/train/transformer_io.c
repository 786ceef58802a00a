/* Saving and loading a transformer with its task (format in
 * include/attnlab/transformer.h, the common parts in src/layers/model_file.h).
 * Every field, the exact length, the checksum, every weight and the
 * configuration against its task are checked before the model is built. */
#include <math.h>
#include <string.h>

#include "base/bytes.h"
#include "base/error.h"
#include "layers/model_file.h"
#include "models/transformer_internal.h"
#include "train/transformer_train.h"
#include "tasks/sequence_tasks.h"

/* 1: a 'text' task's tokens are its text's bytes; 2: its characters (the layout is the same) */
static const uint32_t VERSIONS[] = {1, 2};
#define TF_BYTES_VERSION 1u
#define TF_CHARS_VERSION 2u
#define FIELDS 11                  /* the i32 fields after the version */
#define PROBE_STREAM 0x70726f6265ull /* the test sequence a loaded model is first run on */

/* bytes before the text */
#define HEAD_SIZE (MODEL_FILE_MAGIC + 4 + 4 * FIELDS + 8 + 8 + 4)

static size_t file_size(size_t text_len, size_t n_params) { return HEAD_SIZE + text_len + 8 + 4 * n_params + 4; }

/* Whether a task's text has a byte past ASCII: only there do the two versions read differently. */
static int text_past_ascii(TfTaskKind task, const uint8_t *text, size_t len) {
    for (size_t i = 0; i < len && task == TF_TASK_TEXT; i++)
        if (text[i] >= 0x80) return 1;
    return 0;
}

size_t tf_save_size(const Transformer *t) { return file_size(t->text_len, t->model->opt.n); }

int tf_save(const Transformer *t, uint8_t *bytes, size_t size) {
    const TfModel *m = t->model;
    nn_clear_error();
    if (size < tf_save_size(t)) return nn_fail(NN_ERR_SHAPE, "save: %zu bytes is too small (%zu needed)", size, tf_save_size(t));
    const TfConfig *c = &m->c;
    uint8_t *p = bytes;
    /* version 2 only where it reads differently: a text of characters past ASCII (the two cuts of ASCII agree) */
    int past_ascii = text_past_ascii(c->task, t->text, t->text_len);
    model_file_put_magic(&p, MODEL_FILE_TRANSFORMER, past_ascii && t->task.unit == SEQ_CHARS ? TF_CHARS_VERSION : TF_BYTES_VERSION);
    const int32_t f[FIELDS] = {(int32_t)c->task, c->layers, c->heads, c->d_model, c->d_ff, c->context,
                               (int32_t)c->positional, (int32_t)c->score, c->batch, m->V, m->opt.steps};
    model_file_put_i32s(&p, f, FIELDS);
    nn_put_u64(&p, c->seed);
    nn_put_u64(&p, t->train_rng);
    nn_put_u32(&p, (uint32_t)t->text_len);
    if (t->text_len) memcpy(p, t->text, t->text_len);
    p += t->text_len;
    model_file_put_weights(&p, &m->opt, bytes);
    return NN_OK;
}

/* What a file holds besides its parameters. */
typedef struct {
    TfConfig c;
    int vocab, steps;
    uint64_t train_rng;
    const uint8_t *text; /* in the file's bytes */
    size_t text_len, n_params;
    SeqUnit unit; /* how the text is cut into tokens: by the file's version */
} TfFile;

static int damaged(const char *what, long long value, long long lo, long long hi) {
    return nn_fail(NN_ERR_VALUE, "model file: %s %lld; it must be within %lld..%lld; the file is damaged", what, value, lo, hi);
}

/* Checks the whole file and leaves r at its parameters. */
static int read_file(ModelFileReader *r, const uint8_t *bytes, size_t size, TfFile *v) {
    uint32_t version;
    NN_TRY(model_file_open(r, MODEL_FILE_TRANSFORMER, bytes, size, VERSIONS, 2, &version));
    v->unit = version == 1 ? SEQ_BYTES : SEQ_CHARS;
    NN_TRY(model_file_need(r, HEAD_SIZE - r->at));
    int32_t f[FIELDS];
    model_file_i32s(r, f, FIELDS);
    v->c = (TfConfig){(TfTaskKind)f[0], f[1], f[2], f[3], f[4], f[5], (TfPositional)f[6], (AttnScore)f[7], f[8], 0};
    v->vocab = f[9];
    v->steps = f[10];
    v->c.seed = model_file_u64(r);
    v->train_rng = model_file_u64(r);
    uint32_t text_len = model_file_u32(r);
    int st = tf_check_config(&v->c);
    if (st != NN_OK) return nn_fail(NN_ERR_VALUE, "model file: bad configuration: %s; the file is damaged", nn_last_error());
    if (v->c.context < SEQ_MIN_CONTEXT || v->c.context > TF_MAX_CONTEXT)
        return damaged("context", v->c.context, SEQ_MIN_CONTEXT, TF_MAX_CONTEXT);
    if (v->vocab < 1 || v->vocab > TF_MAX_VOCAB) return damaged("vocabulary", v->vocab, 1, TF_MAX_VOCAB);
    NN_TRY(model_file_check_steps(v->steps));
    if (text_len > TF_MAX_TEXT_BYTES) return damaged("text length", text_len, 0, TF_MAX_TEXT_BYTES);
    NN_TRY(model_file_need(r, (size_t)text_len + 8));
    v->text = bytes + r->at;
    v->text_len = text_len;
    r->at += text_len;
    /* version 2 is written only where it reads differently (save's rule): one model, one file */
    if (version == TF_CHARS_VERSION && !text_past_ascii(v->c.task, v->text, v->text_len))
        return nn_fail(NN_ERR_VALUE, "model file: version %u marks a text with characters past ASCII, and this one has none "
                                     "(version %u); the file is damaged", TF_CHARS_VERSION, TF_BYTES_VERSION);
    uint64_t count = model_file_u64(r);
    v->n_params = tf_param_count(&v->c, v->vocab);
    NN_TRY(model_file_check_count(count, v->n_params));
    NN_TRY(model_file_length(r, file_size(v->text_len, v->n_params)));
    NN_TRY(model_file_checksum(bytes, bytes + size));
    return model_file_check_params(r, v->n_params);
}

/* The vocabulary of the task the file's configuration and text make must be
 * the file's: counted before the task is built (nothing the size of the text
 * is allocated for a file that lies about it). */
static int check_task(const TfFile *v) {
    int vocab = 0;
    if (seq_task_vocab(v->c.task, v->c.context, (const char *)v->text, v->text_len, v->unit, &vocab) != NN_OK)
        return nn_fail(NN_ERR_VALUE, "model file: its task does not take this configuration: %s", nn_last_error());
    if (vocab != v->vocab)
        return nn_fail(NN_ERR_VALUE, "model file: a vocabulary of %d tokens, but its task has %d; the file is damaged", v->vocab,
                       vocab);
    return NN_OK;
}

/* One forward pass over a test sequence: a model whose weights are each in
 * range can still overflow with them together; no model that loads fails it. */
static int probe(Transformer *t) {
    TfModel *m = t->model;
    uint64_t rng = PROBE_STREAM;
    int n = 0;
    NN_TRY(tf_sample(t, TF_SPLIT_TEST, &rng, m->a.tokens, m->a.targets, &n));
    int scored = 0;
    double loss = 0;
    int st = tf_forward(m, 1, n, 1, &loss, &scored);
    if (st == NN_OK) st = model_file_check_weights(m->a.probs, (size_t)n * m->V, "probability");
    if (st == NN_OK && !isfinite(loss)) st = nn_fail(NN_ERR_VALUE, "the loss is %g", loss);
    if (st != NN_OK) return nn_fail(NN_ERR_VALUE, "model file: its forward pass is not finite (%s); the file is damaged", nn_last_error());
    return NN_OK;
}

int tf_load(Transformer **out, const uint8_t *bytes, size_t size) {
    nn_clear_error();
    *out = NULL;
    ModelFileReader r;
    TfFile v;
    NN_TRY(read_file(&r, bytes, size, &v));
    NN_TRY(check_task(&v));
    /* the batch it was saved with must be one createTransformer takes */
    int st = tf_check_activations(&v.c, v.vocab);
    if (st != NN_OK) return nn_fail(NN_ERR_VALUE, "model file: %s; the file is damaged", nn_last_error());
    /* activations for one sequence: they grow with the batches that come */
    TfConfig one = v.c;
    one.batch = 1;
    Transformer *t;
    st = tf_create_cut(&t, &one, (const char *)v.text, v.text_len, v.unit);
    if (st != NN_OK)
        return st == NN_ERR_NOMEM ? st : nn_fail(NN_ERR_VALUE, "model file: its task does not take this configuration: %s", nn_last_error());
    TfModel *m = t->model;
    m->c.batch = v.c.batch;
    model_file_params(&r, m->opt.params, v.n_params);
    m->opt.steps = v.steps;
    t->train_rng = v.train_rng;
    st = probe(t);
    if (st != NN_OK) {
        tf_destroy(t);
        return st;
    }
    *out = t;
    return NN_OK;
}
