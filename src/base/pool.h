/* A fork-join pool: one calling thread and up to NN_MAX_THREADS - 1 workers
 * sharing one WASM memory, each worker an instance of the same module with
 * its own stack. A parallel region runs task(ctx, tid, n) once on every
 * thread (tid 0 is the caller, which works too) and returns when all have
 * finished. Built with NN_THREADS (the attnlab-simd-mt.wasm build) only;
 * elsewhere every region runs on the caller alone, task(ctx, 0, 1), so the
 * single-thread builds and native code behave as if the pool were absent.
 *
 * Rules for a task: it never allocates (the caller sizes scratch per thread
 * beforehand, see nn_pool_threads()), it writes only its own slice of the
 * outputs, and a region started inside a task runs on that thread alone. */
#ifndef ATTNLAB_BASE_POOL_H
#define ATTNLAB_BASE_POOL_H

#define NN_MAX_THREADS 16

/* One thread's share of a region; returns NN_OK or an NnStatus. */
typedef int (*NnTask)(void *ctx, int tid, int n);

/* Threads a region may use: size per-thread scratch with it. Fixed from the
 * pool's creation to its destruction (1 without a pool). */
int nn_pool_threads(void);

/* Runs task on every thread when `work` (multiply-adds) is at least the
 * pool's threshold and no region is running, else task(ctx, 0, 1) on the
 * caller. Returns the status of the lowest thread id that failed, NN_OK if
 * none did. The message of a failure is recorded by whichever thread wrote
 * last: a caller that needs the exact message recomputes the failing part. */
int nn_pool_run(NnTask task, void *ctx, double work);

/* Splits count items into n near-equal contiguous ranges; thread tid gets
 * [*begin, *end). */
void nn_pool_range(int count, int tid, int n, int *begin, int *end);

/* ---- the pool's life, driven by the WASM boundary (parallel_exports.c) ---- */

/* Allocates the pool for `threads` threads (1..NN_MAX_THREADS) with a stack
 * of `stack_bytes` per worker; NN_OK or ERR_NOMEM / ERR_LIMIT. */
int nn_pool_create(int threads, int stack_bytes);
/* Top of worker tid's stack (1 <= tid < threads): the worker sets its stack
 * pointer there before calling anything else. */
void *nn_pool_stack_top(int tid);
/* A worker's loop: waits for regions and runs its share until nn_pool_stop(). */
void nn_pool_worker(int tid);
/* Regions whose work is below this run on the caller alone (default 2e6
 * multiply-adds, from tests/bench/crossover.mjs). */
void nn_pool_set_min_work(double work);
/* Asks the workers to leave their loops; later regions run on the caller alone. */
void nn_pool_stop(void);

/* For the tests of the single-thread builds: every later region runs as
 * `threads` shares one after another on the caller, task(ctx, 0, n) to
 * task(ctx, n - 1, n), whatever its work, and nn_pool_threads() says n, so
 * the splits, the per-thread scratch and the ordered reductions run natively,
 * under the sanitizers (a task never waits for another, so shares may run in
 * turn). Size scratch after setting it; 1 turns it off. NN_OK, or ERR_LIMIT
 * outside 1..NN_MAX_THREADS; the threaded build takes only 1 (ERR_ARG). */
int nn_pool_split_serially(int threads);

#endif
