/* Data-parallel training over the pool (src/layers/shards.h). */
#include "layers/shards.h"

#include <string.h>

#include "base/error.h"
#include "core/vec.h"

typedef struct {
    ShardTask task;
    void *model;
    int shards;
    double total[NN_MAX_THREADS]; /* each shard's loss sum */
} ShardJob;

static int shard_job(void *ctx, int tid, int n) {
    ShardJob *j = ctx;
    for (int s = tid; s < j->shards; s += n) NN_TRY(j->task(j->model, s, &j->total[s]));
    return NN_OK;
}

int shards_run(ShardTask task, void *model, int shards, double work, double *total) {
    ShardJob job = {task, model, shards, {0}};
    int st = shards == 1 ? shard_job(&job, 0, 1) : nn_pool_run(shard_job, &job, work);
    if (total) {
        *total = job.total[0];
        for (int s = 1; s < shards; s++) *total += job.total[s];
    }
    return st;
}

/* ---- replicas ------------------------------------------------------------------ */

int shards_check(int n) {
    if (n < 0 || n > NN_MAX_THREADS) return nn_fail(NN_ERR_LIMIT, "shards: %d is outside 0..%d", n, NN_MAX_THREADS);
    return NN_OK;
}

int shards_make(ShardReplicas *out, const ReplicaAdapter *a, const void *model, int n, int rows) {
    int largest = (rows + n - 1) / n;
    memset(out, 0, sizeof *out);
    out->adapter = a;
    for (int s = 1; s < n; s++)
        if (!(out->at[s] = a->make(model, largest))) {
            shards_free(out);
            return NN_ERR_NOMEM;
        }
    out->n = n;
    return NN_OK;
}

void shards_free(ShardReplicas *r) {
    for (int s = 1; s < NN_MAX_THREADS; s++)
        if (r->at[s]) r->adapter->free(r->at[s]);
    memset(r->at, 0, sizeof r->at);
    r->n = 0;
}

void shards_install(ShardReplicas *r, const ShardReplicas *made, OptParams *opt) {
    shards_free(r);
    *r = *made;
    opt->chunks = made->n;
}

int shards_set(ShardReplicas *r, const ReplicaAdapter *a, const void *model, int n, int rows, OptParams *opt) {
    ShardReplicas made;
    NN_TRY(shards_make(&made, a, model, n, rows));
    shards_install(r, &made, opt);
    return NN_OK;
}

int shards_count(const ShardReplicas *r, int B) { return B < r->n ? B : r->n; }

void *shards_rows(const ShardReplicas *r, void *model, int B, int shards, int s, int *b0, int *b1) {
    nn_pool_range(B, s, shards, b0, b1);
    return s ? r->at[s] : model;
}

void shards_clear_grads(const ShardReplicas *r, int s, size_t n) {
    if (s) memset(r->adapter->grads(r->at[s]), 0, sizeof(nn_real) * n);
}

void shards_sum_grads(const ShardReplicas *r, int shards, nn_real *grads, size_t n) {
    for (int s = 1; s < shards; s++) vec_axpy(grads, 1, r->adapter->grads(r->at[s]), (int)n);
}
