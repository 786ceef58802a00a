/* Data-parallel training over the pool (base/pool.h): a batch of B rows
 * split into shards = min(threads, B) contiguous row ranges (nn_pool_range),
 * each shard's forward or backward run on one thread with its own
 * activations and gradients, the gradients then added in shard order. The
 * split depends only on the shard count, never on which thread runs a shard,
 * so a seed and a thread count give one model bit for bit. Not a public header. */
#ifndef ATTNLAB_LAYERS_SHARDS_H
#define ATTNLAB_LAYERS_SHARDS_H

#include <stddef.h>

#include "attnlab/nn.h"
#include "base/pool.h"
#include "layers/optim.h"

/* One shard's share of a pass over a model: NN_OK or an NnStatus; a forward
 * writes its loss's sum to *total. */
typedef int (*ShardTask)(void *model, int shard, double *total);

/* Runs task for shards 0..shards-1 (1..NN_MAX_THREADS) in one parallel
 * region of `work` multiply-adds: thread tid takes shards tid, tid + n, ...,
 * and the caller alone takes them all when the region runs there. *total
 * (unless NULL) is the shards' totals added in shard order. Returns the
 * status of the lowest thread that failed. */
int shards_run(ShardTask task, void *model, int shards, double work, double *total);

/* ---- replicas ------------------------------------------------------------------ */

/* Shard 0 runs on the model itself, shard s > 0 on replica s: a copy of the
 * model's sizes, configuration and weight view with its own activations and
 * its own gradient block (opt_alloc_grads), sized for the largest shard. A
 * model says how one replica is made for up to `rows` rows (NULL when out of
 * memory), how one is freed, and where a replica's gradient block is (the
 * model's parameter count, in the layout of the model's gradients). */
typedef struct {
    void *(*make)(const void *model, int rows);
    void (*free)(void *replica);
    nn_real *(*grads)(void *replica);
} ReplicaAdapter;

/* A model's replicas: n shards (0: none made yet; 1: the model alone), at[s]
 * running shard s for s in 1..n-1; at[0] is NULL (shard 0 is the model). */
typedef struct {
    const ReplicaAdapter *adapter;
    int n;
    void *at[NN_MAX_THREADS];
} ShardReplicas;

/* NN_OK when n is a shard count a model can be asked for: 0 (as many as the
 * pool has threads) to NN_MAX_THREADS; else NN_ERR_LIMIT saying so. */
int shards_check(int n);

/* Makes replicas 1..n-1 (n in 1..NN_MAX_THREADS) into *out for batches of up
 * to `rows` rows split into n shards, each holding the largest shard
 * nn_pool_range makes of them. On failure frees those made and returns
 * NN_ERR_NOMEM with no message (the model says what it was sizing). */
int shards_make(ShardReplicas *out, const ReplicaAdapter *a, const void *model, int n, int rows);

/* Frees the replicas (none when n <= 1); n becomes 0. */
void shards_free(ShardReplicas *r);

/* Frees r's replicas and takes made's in their place; the optimiser's
 * passes over the model's parameters split into as many chunks. */
void shards_install(ShardReplicas *r, const ShardReplicas *made, OptParams *opt);

/* shards_make then shards_install: on failure r stays as it was. */
int shards_set(ShardReplicas *r, const ReplicaAdapter *a, const void *model, int n, int rows, OptParams *opt);

/* The shards a batch of B rows splits into: min(n, B). */
int shards_count(const ShardReplicas *r, int B);

/* Rows [*b0, *b1) of shard s of a batch of B rows in `shards` shards, and what
 * runs them: the model (s = 0) or replica s. */
void *shards_rows(const ShardReplicas *r, void *model, int B, int shards, int s, int *b0, int *b1);

/* Zeroes replica s's gradient block of n reals before its backward adds into
 * it; nothing for shard 0, whose backward adds into the model's. */
void shards_clear_grads(const ShardReplicas *r, int s, size_t n);

/* grads (n) += replica s's gradients, s = 1..shards-1 in shard order: the
 * model's gradients hold shard 0's, and then the whole batch's. */
void shards_sum_grads(const ShardReplicas *r, int shards, nn_real *grads, size_t n);

#endif
