/* Matrix products split across the pool's threads (base/pool.h): each
 * thread computes a contiguous range of C's rows with the single-thread
 * kernels of vec.h, packing its own panels of B. A row of C depends only on
 * its row of A and on B, summed in the same order whichever thread runs it,
 * so the result equals one thread's bit for bit. Same contracts as the
 * vec_gemm_* functions; products below the pool's threshold (or inside a
 * parallel region) run on the calling thread. */
#ifndef ATTNLAB_CORE_GEMM_PARALLEL_H
#define ATTNLAB_CORE_GEMM_PARALLEL_H

#include "attnlab/nn.h"

typedef enum { VEC_GEMM_NN, VEC_GEMM_TN, VEC_GEMM_NT, VEC_GEMM_PACKED } VecGemmKind;

/* One product: NN  C (M,N) = [C +] A (M,K) . B (K,N)
 *              TN  C (M,N) = [C +] A^T . B  with A (K,M), B (K,N)
 *              NT  C (M,N) = [C +] A (M,K) . B^T  with B (N,K)
 *              PACKED  C (M,N) = [C +] A (M,K) . B  with B in vec_pack's panels
 *                      (K rows each; ldb unused): weights packed once, as GPT-2's */
typedef struct {
    VecGemmKind kind;
    nn_real *C;
    int ldc;
    const nn_real *A;
    int lda;
    const nn_real *B;
    int ldb;
    int M, N, K, accumulate;
} VecGemm;

/* Runs `count` products in one parallel region, each thread its rows of
 * each, in list order. No product may read another's C; products that
 * accumulate into one C must have the same M (a row then belongs to one
 * thread, which adds the products in list order, as one thread would). */
void vec_gemm_parallel(const VecGemm *products, int count);

/* One product of each kind on the pool: vec_gemm_nn's and vec_gemm_nt's
 * contracts and results (bit for bit). */
void vec_gemm_nn_parallel(nn_real *C, int ldc, const nn_real *A, int lda, const nn_real *B, int ldb, int M, int N,
                          int K, int accumulate);
void vec_gemm_nt_parallel(nn_real *C, int ldc, const nn_real *A, int lda, const nn_real *B, int ldb, int M, int N,
                          int K, int accumulate);
/* vec_gemm_packed's contract (panels of K rows) and results, on the pool. */
void vec_gemm_packed_parallel(nn_real *C, int ldc, const nn_real *A, int lda, const nn_real *packed, int M, int N, int K,
                              int accumulate);

#endif
