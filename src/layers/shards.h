/* Data-parallel training over the pool (base/pool.h): a batch of B rows
 * split into shards = min(threads, B) contiguous row ranges (nn_pool_range),
 * each shard's forward or backward run on one thread with its own
 * activations and gradients, the gradients then added in shard order. The
 * split depends only on the shard count, never on which thread runs a shard,
 * so a seed and a thread count give one model bit for bit. Not a public header. */
#ifndef ATTNLAB_LAYERS_SHARDS_H
#define ATTNLAB_LAYERS_SHARDS_H

#include "attnlab/nn.h"
#include "base/pool.h"

/* One shard's share of a pass over a model: NN_OK or an NnStatus; a forward
 * writes its loss's sum to *total. */
typedef int (*ShardTask)(void *model, int shard, double *total);

/* Runs task for shards 0..shards-1 (1..NN_MAX_THREADS) in one parallel
 * region of `work` multiply-adds: thread tid takes shards tid, tid + n, ...,
 * and the caller alone takes them all when the region runs there. *total
 * (unless NULL) is the shards' totals added in shard order. Returns the
 * status of the lowest thread that failed. */
int shards_run(ShardTask task, void *model, int shards, double work, double *total);

/* Shard 0 runs on the model itself, shard s > 0 on replica s: a copy of the
 * model's sizes, configuration and weight view with its own activations and
 * its own gradient block (opt_alloc_grads), sized for the largest shard. A
 * model says how one replica is made (NULL when out of memory) and unmade. */
typedef void *(*ReplicaCreate)(const void *model, int rows);
typedef void (*ReplicaDestroy)(void *replica);

/* Makes replicas 1..n-1 into out (out[0] = NULL) for batches of up to `rows`
 * rows split into n shards, each holding the largest shard nn_pool_range
 * makes of them. On failure destroys those made and returns NN_ERR_NOMEM
 * with no message (the model says what it was sizing). */
int shards_replicas(void *out[NN_MAX_THREADS], int n, int rows, const void *model, ReplicaCreate create,
                    ReplicaDestroy destroy);

#endif
