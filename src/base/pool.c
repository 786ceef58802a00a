/* The fork-join pool (pool.h). A region: the caller publishes the task, bumps
 * `generation` and wakes the workers (memory.atomic.notify); every thread runs
 * its share; each worker then bumps `done`, which the caller spins on (a
 * page's main thread may not block in memory.atomic.wait, and a region is
 * short). Idle workers spin briefly, then block on `generation`. */
#include "base/pool.h"

#include "attnlab/nn.h"
#include "base/error.h"

void nn_pool_range(int count, int tid, int n, int *begin, int *end) {
    int base = count / n, extra = count % n; /* the first `extra` ranges take one more */
    *begin = tid * base + (tid < extra ? tid : extra);
    *end = *begin + base + (tid < extra ? 1 : 0);
}

#if defined(NN_THREADS) && defined(__wasm_atomics__)
#include <stdint.h>
#include <stdlib.h>

/* Iterations an idle worker polls before it blocks, about 5 ns each under V8
 * (so ~0.16 ms): long enough to bridge the serial work between the regions
 * of one call (selfAttention's heads, a backward's products) and between
 * back-to-back calls, where waking a blocked worker costs tens of
 * microseconds per region; short enough that an idle page costs no CPU.
 * tests/bench/crossover.mjs measured 4,096 (~20 us) against 32,768: two
 * threads on selfAttention's forward + backward at n = 1024, 1.55x -> 1.86x. */
#define POOL_SPIN 32768

typedef struct {
    int32_t threads;    /* the caller and the workers */
    int32_t generation; /* bumped once per region */
    int32_t done;       /* workers that finished the current region */
    int32_t running;    /* 1 while a region runs: regions inside it run on one thread */
    int32_t stop;       /* 1: workers leave their loops */
    NnTask task;
    void *ctx;
    int32_t status[NN_MAX_THREADS];
    char *stacks;       /* threads - 1 stacks of stack_bytes */
    int32_t stack_bytes;
    double min_work;
} Pool;

static Pool *pool; /* one per memory: every instance sees the same pointer */

static int32_t load(int32_t *p) { return __atomic_load_n(p, __ATOMIC_SEQ_CST); }
static void store(int32_t *p, int32_t v) { __atomic_store_n(p, v, __ATOMIC_SEQ_CST); }

/* Records thread tid's status. Out of line, so the status's address is
 * computed after the task returns: with it computed before and kept across
 * the task's call as the operand of an atomic store, V8's baseline compiler
 * (Liftoff, Node 20) was seen to store at address 0 + offset instead. */
__attribute__((noinline)) static void set_status(Pool *p, int tid, int32_t status) {
    store(&p->status[tid], status);
}

int nn_pool_threads(void) { return pool && !load(&pool->stop) ? pool->threads : 1; }

int nn_pool_create(int threads, int stack_bytes) {
    if (pool) return nn_fail(NN_ERR_ARG, "threads: this engine already has a pool");
    if (threads < 1 || threads > NN_MAX_THREADS)
        return nn_fail(NN_ERR_LIMIT, "threads: %d is outside 1..%d", threads, NN_MAX_THREADS);
    stack_bytes = (stack_bytes + 15) & ~15;
    Pool *p = calloc(1, sizeof(Pool));
    char *stacks = p ? aligned_alloc(16, (size_t)stack_bytes * (threads - 1) + 16) : NULL;
    if (!stacks) {
        free(p);
        return nn_fail(NN_ERR_NOMEM, "threads: out of memory for %d stacks", threads - 1);
    }
    p->threads = threads;
    p->stacks = stacks;
    p->stack_bytes = stack_bytes;
    /* Measured by tests/bench/crossover.mjs (1 vs 2 threads, n = 8..512,
     * d = 16..64, on a shared 2-core machine): attend's crossovers fell at
     * 0.8e6..1.6e6 multiply-adds for most sizes in the quietest run (median
     * 1.2e6) and at 6.3e6 in busier runs; 2e6 loses little below either. */
    p->min_work = 2e6;
    pool = p;
    return NN_OK;
}

void *nn_pool_stack_top(int tid) {
    if (!pool || tid < 1 || tid >= pool->threads) return NULL;
    return pool->stacks + (size_t)pool->stack_bytes * tid; /* stack tid - 1 grows down from here */
}

void nn_pool_set_min_work(double work) {
    if (pool) pool->min_work = work;
}

void nn_pool_stop(void) {
    if (!pool) return;
    store(&pool->stop, 1);
    __atomic_add_fetch(&pool->generation, 1, __ATOMIC_SEQ_CST);
    __builtin_wasm_memory_atomic_notify(&pool->generation, (unsigned)-1);
}

void nn_pool_worker(int tid) {
    Pool *p = pool;
    if (!p || tid < 1 || tid >= p->threads) return;
    int32_t seen = 0; /* regions start at generation 1 */
    for (;;) {
        int32_t g;
        for (int spin = 0; (g = load(&p->generation)) == seen; spin++)
            if (spin >= POOL_SPIN) __builtin_wasm_memory_atomic_wait32(&p->generation, seen, -1);
        seen = g;
        if (load(&p->stop)) return;
        set_status(p, tid, p->task(p->ctx, tid, p->threads));
        __atomic_add_fetch(&p->done, 1, __ATOMIC_SEQ_CST);
    }
}

int nn_pool_run(NnTask task, void *ctx, double work) {
    Pool *p = pool;
    if (!p || p->threads == 1 || load(&p->stop) || work < p->min_work || load(&p->running))
        return task(ctx, 0, 1);
    int n = p->threads;
    store(&p->running, 1);
    p->task = task;
    p->ctx = ctx;
    store(&p->done, 0);
    __atomic_add_fetch(&p->generation, 1, __ATOMIC_SEQ_CST);
    __builtin_wasm_memory_atomic_notify(&p->generation, (unsigned)(n - 1));
    set_status(p, 0, task(ctx, 0, n));
    while (load(&p->done) < n - 1) {
    }
    store(&p->running, 0);
    for (int t = 0; t < n; t++)
        if (load(&p->status[t]) != NN_OK) return load(&p->status[t]);
    return NN_OK;
}

int nn_pool_split_serially(int threads) {
    if (threads == 1) return NN_OK;
    return nn_fail(NN_ERR_ARG, "threads: the threaded build splits regions across its pool, not serially");
}

#else /* one thread: every region runs on the caller */

/* nn_pool_split_serially(): the shares a region runs as, and whether one runs */
static int serial_shares = 1, serial_running;

int nn_pool_threads(void) { return serial_shares; }

int nn_pool_run(NnTask task, void *ctx, double work) {
    (void)work;
    if (serial_shares == 1 || serial_running) return task(ctx, 0, 1);
    serial_running = 1;
    int status = NN_OK;
    for (int t = 0; t < serial_shares; t++) {
        int st = task(ctx, t, serial_shares);
        if (status == NN_OK) status = st; /* the lowest share's failure, as the pool reports it */
    }
    serial_running = 0;
    return status;
}

int nn_pool_split_serially(int threads) {
    if (threads < 1 || threads > NN_MAX_THREADS)
        return nn_fail(NN_ERR_LIMIT, "threads: %d is outside 1..%d", threads, NN_MAX_THREADS);
    serial_shares = threads;
    return NN_OK;
}

int nn_pool_create(int threads, int stack_bytes) {
    (void)stack_bytes;
    if (threads == 1) return NN_OK;
    return nn_fail(NN_ERR_ARG, "threads: this build runs on one thread (asked for %d)", threads);
}

void *nn_pool_stack_top(int tid) {
    (void)tid;
    return 0;
}

void nn_pool_worker(int tid) { (void)tid; }

void nn_pool_set_min_work(double work) { (void)work; }

void nn_pool_stop(void) {}

#endif
