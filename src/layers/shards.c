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
