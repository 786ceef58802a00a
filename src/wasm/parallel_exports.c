/* The pool's side of the WASM boundary (src/base/pool.h), called by
 * web/engine/threads/: the caller creates the pool, each worker instance sets
 * its stack pointer to attnlab_pool_stack(tid) and enters
 * attnlab_pool_worker(tid), which returns after attnlab_pool_stop(). In the
 * single-thread builds a pool of one thread is all there is. */
#include <emscripten.h>

#include "base/error.h"
#include "base/pool.h"

/* Each worker's stack: the caller's is 1 MiB (TOTAL_STACK); the kernels
 * keep their buffers in scratch, so a worker needs far less. */
#define ATTNLAB_WORKER_STACK (256 << 10)

EMSCRIPTEN_KEEPALIVE int attnlab_pool_create(int threads) {
    nn_clear_error();
    return nn_pool_create(threads, ATTNLAB_WORKER_STACK);
}

/* Threads a parallel region uses (1 in the single-thread builds). */
EMSCRIPTEN_KEEPALIVE int attnlab_pool_threads(void) { return nn_pool_threads(); }

EMSCRIPTEN_KEEPALIVE void *attnlab_pool_stack(int tid) { return nn_pool_stack_top(tid); }

EMSCRIPTEN_KEEPALIVE void attnlab_pool_worker(int tid) { nn_pool_worker(tid); }

EMSCRIPTEN_KEEPALIVE void attnlab_pool_min_work(double work) { nn_pool_set_min_work(work); }

EMSCRIPTEN_KEEPALIVE void attnlab_pool_stop(void) { nn_pool_stop(); }

/* Most threads a pool takes (NN_MAX_THREADS). */
EMSCRIPTEN_KEEPALIVE int attnlab_pool_max_threads(void) { return NN_MAX_THREADS; }
