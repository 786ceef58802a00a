/* Data-parallel training over the pool (src/layers/shards.h). */
#include "layers/shards.h"

#include "base/error.h"

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

int shards_replicas(void *out[NN_MAX_THREADS], int n, int rows, const void *model, ReplicaCreate create,
                    ReplicaDestroy destroy) {
    int largest = (rows + n - 1) / n;
    for (int s = 0; s < NN_MAX_THREADS; s++) out[s] = NULL;
    for (int s = 1; s < n; s++)
        if (!(out[s] = create(model, largest))) {
            while (--s >= 1) destroy(out[s]);
            return NN_ERR_NOMEM;
        }
    return NN_OK;
}
