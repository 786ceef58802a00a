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

#endif
