/* Data-parallel training of a transformer (src/layers/shards.h): a batch of
 * B sequences splits into min(threads, B) contiguous row ranges, each
 * shard's forward and backward run on one thread with its own activations
 * and gradients, and the gradients are added in shard order, so a seed and
 * a thread count give one model bit for bit. One shard is the model alone:
 * tf_forward and tf_backward exactly as without threads. */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "layers/shards.h"
#include "models/transformer_internal.h"

/* ---- replicas ------------------------------------------------------------------ */

/* One shard's buffers for up to `rows` sequences: the model's configuration,
 * tensor table, weight view and position tables (read only while training),
 * its own gradients, with the gradient view pointed into them, and
 * activations. A replica owns its gradient block and its activations,
 * nothing else. */
static void replica_free(void *replica) {
    TfModel *r = replica;
    free(r->opt.grads);
    free(r->acts_block);
    free(r);
}

static void *replica_make(const void *model, int rows) {
    const TfModel *m = model;
    TfModel *r = malloc(sizeof *r);
    if (!r) return NULL;
    *r = *m;
    r->opt.moments = r->opt.kept = NULL; /* the model's, never the replica's */
    r->acts_block = NULL;
    r->acts_batch = 0;
    memset(&r->a, 0, sizeof r->a);
    memset(&r->replicas, 0, sizeof r->replicas);
    r->opt.grads = opt_alloc_grads(&m->opt, &m->w, &r->g);
    if (!r->opt.grads || tf_reserve(r, rows) != NN_OK) {
        replica_free(r);
        return NULL;
    }
    return r;
}

static nn_real *replica_grads(void *replica) { return ((TfModel *)replica)->opt.grads; }
static const ReplicaAdapter REPLICAS = {replica_make, replica_free, replica_grads};

void tf_shards_free(TfModel *m) { shards_free(&m->replicas); }

/* Replicas for n shards of batches of up to the model's batch; on failure the old ones stay. */
static int make_shards(TfModel *m, int n) {
    if (shards_set(&m->replicas, &REPLICAS, m, n, m->acts_batch, &m->opt) != NN_OK)
        return nn_fail(NN_ERR_NOMEM, "train: out of memory for the buffers of %d threads (batches of %d)", n,
                       m->acts_batch);
    return NN_OK;
}

int tf_set_shards(TfModel *m, int n) {
    NN_TRY(shards_check(n));
    return make_shards(m, n ? n : nn_pool_threads());
}

/* ---- the passes ------------------------------------------------------------------ */

/* A pass over the batch's shards: its sizes, and each shard's mean loss and scored positions. */
typedef struct {
    TfModel *m;
    int B, T, shards;
    int scored;                   /* backward: the whole batch's scored positions */
    double loss[NN_MAX_THREADS];  /* forward: each shard's mean loss */
    int count[NN_MAX_THREADS];    /* and its scored positions */
} TfPass;

/* Rows [b0, b1) of shard s, and the model (s = 0) or the replica that runs them. */
static TfModel *shard_rows(const TfPass *p, int s, int *b0, int *b1) {
    return shards_rows(&p->m->replicas, p->m, p->B, p->shards, s, b0, b1);
}

/* Shard s's forward; a replica first takes its rows of the batch and the ablated heads. */
static int forward_task(void *ctx, int s, double *total) {
    (void)total;
    TfPass *p = ctx;
    int b0, b1;
    TfModel *r = shard_rows(p, s, &b0, &b1);
    size_t at = (size_t)b0 * p->T, n = (size_t)(b1 - b0) * p->T;
    if (s) {
        memcpy(r->a.tokens, p->m->a.tokens + at, sizeof(int32_t) * n);
        memcpy(r->a.targets, p->m->a.targets + at, sizeof(int32_t) * n);
        memcpy(r->ablate, p->m->ablate, sizeof r->ablate);
    }
    return tf_forward(r, b1 - b0, p->T, 1, &p->loss[s], &p->count[s]);
}

/* Shard s's backward of the whole batch's mean loss: into the model's
 * gradients (shard 0, +=) or into its replica's, cleared first. */
static int backward_task(void *ctx, int s, double *total) {
    (void)total;
    TfPass *p = ctx;
    int b0, b1;
    TfModel *r = shard_rows(p, s, &b0, &b1);
    shards_clear_grads(&p->m->replicas, s, p->m->opt.n);
    return tf_backward(r, b1 - b0, p->T, p->scored);
}

/* Multiply-adds of a pass, roughly: one per parameter and token. */
static double pass_work(const TfModel *m, int B, int T) { return (double)m->opt.n * B * T; }

/* The shards of B rows, the replicas made (first call) and sized for them. */
static int prepare(TfModel *m, int B, TfPass *p) {
    if (!m->replicas.n) NN_TRY(make_shards(m, nn_pool_threads()));
    int shards = shards_count(&m->replicas, B), largest = (B + shards - 1) / shards;
    for (int s = 1; s < shards; s++) NN_TRY(tf_reserve(m->replicas.at[s], largest));
    p->m = m;
    p->B = B;
    p->shards = shards;
    return NN_OK;
}

int tf_shards_forward(TfModel *m, int B, int T, double *loss, int *scored) {
    TfPass p = {0};
    NN_TRY(prepare(m, B, &p));
    p.T = T;
    NN_TRY(shards_run(forward_task, &p, p.shards, pass_work(m, B, T), NULL));
    if (p.shards == 1) { /* the model alone: its own mean, as without threads */
        *loss = p.loss[0];
        *scored = p.count[0];
        return NN_OK;
    }
    double sum = 0;
    int count = 0;
    for (int s = 0; s < p.shards; s++) {
        sum += p.loss[s] * p.count[s];
        count += p.count[s];
    }
    *loss = count ? sum / count : 0;
    *scored = count;
    return NN_OK;
}

int tf_shards_backward(TfModel *m, int B, int T, int scored) {
    TfPass p = {0};
    NN_TRY(prepare(m, B, &p));
    p.T = T;
    p.scored = scored;
    opt_zero_grad(&m->opt);
    NN_TRY(shards_run(backward_task, &p, p.shards, pass_work(m, B, T), NULL));
    shards_sum_grads(&m->replicas, p.shards, m->opt.grads, m->opt.n);
    return NN_OK;
}
