/* Fine-tuning a checkpoint (include/attnlab/gpt2.h's gpt2_train): the one
 * training call every model runs (src/train/train_call.c: AdamW with
 * warm-up and cosine decay, all or nothing) over windows drawn from a text's
 * tokens. The weights stay in the products' panels, as a checkpoint keeps
 * them; their gradients are laid out the same, so AdamW's elementwise
 * update serves both. The first call moves the weights into the shared
 * parameter table's one block (layers/optim.h), the matrices first (AdamW
 * decays them) and the gains and biases after. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/rng.h"
#include "models/decoder.h"
#include "models/gpt2_internal.h"
#include "train/train_call.h"

#define GPT2_TRAIN_STREAM 0x6674756e696e6731ull /* the windows' draws start here */

int gpt2_steps(const Gpt2 *m) { return m->opt ? m->opt->steps : 0; }

/* The weights in one block with their gradients and moments (the first
 * call): NN_ERR_LIMIT past GPT2_MAX_TRAIN_MB, counted before anything is
 * allocated, with a call's scratch for windows of T tokens. */
static int prepare(Gpt2 *m, int T) {
    if (m->opt) return NN_OK;
    Gpt2Tensor *t = malloc(sizeof *t * GPT2_MAX_EXPECTED);
    if (!t) return nn_fail(NN_ERR_NOMEM, "out of memory for the checkpoint's table");
    int n = gpt2_tensors(m, t);
    size_t reals = 0, decayed = 0;
    for (int k = 0; k < n; k++) {
        reals += t[k].count;
        decayed += t[k].decay ? t[k].count : 0;
    }
    /* weights, gradients, two moments, the snapshot's weights and moments: 7 a parameter */
    double need = ((double)reals * 7 + (double)gpt2_gradients_scratch(m, T)) * sizeof(nn_real);
    if (need > GPT2_MAX_TRAIN_MB * 1e6 || reals > (size_t)INT32_MAX) {
        free(t);
        return nn_fail(NN_ERR_LIMIT, "fine-tuning this checkpoint takes %.0f bytes (its %zu weights, their "
                                     "gradients, Adam's two moments and the copy a failed call goes back to, and "
                                     "the call's scratch), past the limit of %d MB",
                       need, reals, GPT2_MAX_TRAIN_MB);
    }
    OptParams *o = calloc(1, sizeof *o);
    if (o) o->n = reals;
    if (!o || opt_alloc(o) != NN_OK) {
        if (o) opt_free(o);
        free(o);
        free(t);
        return nn_fail(NN_ERR_NOMEM, "out of memory for fine-tuning's %zu weights, gradients and moments", reals);
    }
    o->n_tensors = 2;
    o->tensors[0] = (OptTensor){NULL, 0, decayed, 0, OPT_INIT_ZERO, 0, 1, "matrices"};
    o->tensors[1] = (OptTensor){NULL, decayed, reals - decayed, 0, OPT_INIT_ZERO, 0, 0, "gains and biases"};
    size_t at[2] = {0, decayed};
    for (int k = 0; k < n; k++) {
        size_t *next = &at[!t[k].decay];
        nn_real **grad = (nn_real **)((char *)&m->g + ((char *)t[k].slot - (char *)&m->w));
        memcpy(o->params + *next, *t[k].slot, sizeof(nn_real) * t[k].count);
        *t[k].slot = o->params + *next;
        *grad = o->grads + *next;
        *next += t[k].count;
    }
    free(t);
    if (m->tied) {
        m->w.unembed = m->w.wte;
        m->g.unembed = m->g.wte;
    }
    for (int g = 0; g < GPT2_MAX_LAYERS + 2; g++) {
        free(m->blocks[g]);
        m->blocks[g] = NULL;
    }
    m->opt = o;
    m->train_rng = GPT2_TRAIN_STREAM;
    return NN_OK;
}

/* ---- the checkpoint's adapter of the one training call (train_call.h) ---- */

typedef struct {
    Gpt2 *m;
    const int32_t *data;
    int n_data, T;
    int32_t *windows; /* (B, T + 1) */
} Gpt2Call;

static int call_sample(void *ctx, int B) {
    Gpt2Call *c = ctx;
    for (int b = 0; b < B; b++) {
        int start = nn_rng_below(&c->m->train_rng, c->n_data - c->T);
        memcpy(c->windows + (size_t)b * (c->T + 1), c->data + start, sizeof(int32_t) * (c->T + 1));
    }
    return NN_OK;
}

static int call_gradients(void *ctx, int B, double *loss) {
    Gpt2Call *c = ctx;
    opt_zero_grad(c->m->opt);
    return gpt2_gradients(c->m, &c->m->g, c->windows, B, c->T, loss);
}

/* The first window through the updated weights: its logits finite. */
static int call_probe(void *ctx) {
    Gpt2Call *c = ctx;
    double loss;
    int n = c->T + 1 < c->m->c.context ? c->T + 1 : c->m->c.context;
    int st = n < 2 ? NN_OK : gpt2_evaluate(c->m, c->windows, n, &loss);
    if (st != NN_OK) return nn_fail(st, "its forward pass on a probe window is not finite (%s)", nn_last_error());
    return NN_OK;
}

int gpt2_train(Gpt2 *m, const int32_t *data, int n_data, const Gpt2TrainOptions *o, float *losses) {
    nn_clear_error();
    NN_TRY(gpt2_check_ready(m));
    NnTrainOptions opt = {NN_ADAMW, o->lr, o->clip, o->weight_decay, o->constant_lr ? NN_LR_CONSTANT : NN_LR_COSINE,
                          o->warmup, o->decay_steps, o->final_lr};
    static const OptParams untrained; /* a model's table before its first call: no steps taken */
    NN_TRY(train_check(m->opt ? m->opt : &untrained, &opt, o->steps));
    NN_TRY(nn_check_size("batch", o->batch, 1, GPT2_MAX_BATCH));
    NN_TRY(nn_check_size("length", o->length, 1, m->c.context));
    if (n_data < o->length + 1)
        return nn_fail(NN_ERR_SHAPE, "the text has %d tokens; windows of length %d need at least %d", n_data,
                       o->length, o->length + 1);
    NN_TRY(dec_check_tokens(data, n_data, o->length + 1, GPT2_MAX_TRAIN_TOKENS, m->c.vocab));
    NN_TRY(prepare(m, o->length));
    Gpt2Call call = {m, data, n_data, o->length, malloc(sizeof(int32_t) * (size_t)o->batch * (o->length + 1))};
    if (!call.windows) return nn_fail(NN_ERR_NOMEM, "out of memory for a batch of %d windows", o->batch);
    TrainAdapter a = {m->opt, &m->train_rng, &call, call_sample, call_gradients, call_probe, NULL, NULL};
    int st = train_call(&a, &opt, o->steps, o->batch, losses);
    free(call.windows);
    return st;
}

int gpt2_undo(Gpt2 *m) {
    nn_clear_error();
    if (!m->opt) return nn_fail(NN_ERR_ARG, "no training call to undo");
    TrainAdapter a = {m->opt, &m->train_rng, NULL, NULL, NULL, NULL, NULL, NULL};
    return train_undo(&a);
}
