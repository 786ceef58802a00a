/* Matrix products split across the pool's threads (base/pool.h): each
 * thread computes a contiguous range of C's rows with the single-thread
 * kernel of vec.h, packing its own panels of B. A row of C depends only on
 * its row of A and on B, summed in the same order whichever thread runs it,
 * so the result equals one thread's bit for bit. Same contracts as the
 * vec_gemm_* functions; a product below the pool's threshold (or inside a
 * parallel region) runs on the calling thread. */
#ifndef ATTNLAB_CORE_GEMM_PARALLEL_H
#define ATTNLAB_CORE_GEMM_PARALLEL_H

#include "attnlab/nn.h"

/* C (M,N) = [C +] A (M,K) . B (K,N) */
void vec_gemm_nn_parallel(nn_real *C, int ldc, const nn_real *A, int lda, const nn_real *B, int ldb, int M, int N,
                          int K, int accumulate);
/* C (M,N) = [C +] A^T . B  with A (K,M), B (K,N) */
void vec_gemm_tn_parallel(nn_real *C, int ldc, const nn_real *A, int lda, const nn_real *B, int ldb, int M, int N,
                          int K, int accumulate);
/* C (M,N) = [C +] A (M,K) . B^T  with B (N,K) */
void vec_gemm_nt_parallel(nn_real *C, int ldc, const nn_real *A, int lda, const nn_real *B, int ldb, int M, int N,
                          int K, int accumulate);

#endif
