/* Matrix products on every thread of the pool: C's rows split in
 * contiguous ranges, one per thread (gemm_parallel.h). */
#include "core/gemm_parallel.h"

#include "base/pool.h"
#include "core/vec.h"

typedef enum { GEMM_NN, GEMM_TN, GEMM_NT } GemmKind;

typedef struct {
    GemmKind kind;
    nn_real *C;
    const nn_real *A, *B;
    int ldc, lda, ldb, M, N, K, accumulate;
} GemmJob;

/* Rows [r0, r1) of C. Row r of A is at A + r lda, except for A^T (A is
 * (K, M)), whose row r is column r of A: A + r. */
static int gemm_rows_task(void *ctx, int tid, int n) {
    const GemmJob *j = ctx;
    int r0, r1;
    nn_pool_range(j->M, tid, n, &r0, &r1);
    if (r0 == r1) return NN_OK;
    nn_real *C = j->C + (size_t)r0 * j->ldc;
    switch (j->kind) {
    case GEMM_NN:
        vec_gemm_nn(C, j->ldc, j->A + (size_t)r0 * j->lda, j->lda, j->B, j->ldb, r1 - r0, j->N, j->K, j->accumulate);
        break;
    case GEMM_TN:
        vec_gemm_tn(C, j->ldc, j->A + r0, j->lda, j->B, j->ldb, r1 - r0, j->N, j->K, j->accumulate);
        break;
    case GEMM_NT:
        vec_gemm_nt(C, j->ldc, j->A + (size_t)r0 * j->lda, j->lda, j->B, j->ldb, r1 - r0, j->N, j->K, j->accumulate);
        break;
    }
    return NN_OK;
}

static void gemm_parallel(GemmKind kind, nn_real *C, int ldc, const nn_real *A, int lda, const nn_real *B, int ldb,
                          int M, int N, int K, int accumulate) {
    GemmJob job = {kind, C, A, B, ldc, lda, ldb, M, N, K, accumulate};
    nn_pool_run(gemm_rows_task, &job, (double)M * N * K);
}

void vec_gemm_nn_parallel(nn_real *C, int ldc, const nn_real *A, int lda, const nn_real *B, int ldb, int M, int N,
                          int K, int accumulate) {
    gemm_parallel(GEMM_NN, C, ldc, A, lda, B, ldb, M, N, K, accumulate);
}

void vec_gemm_tn_parallel(nn_real *C, int ldc, const nn_real *A, int lda, const nn_real *B, int ldb, int M, int N,
                          int K, int accumulate) {
    gemm_parallel(GEMM_TN, C, ldc, A, lda, B, ldb, M, N, K, accumulate);
}

void vec_gemm_nt_parallel(nn_real *C, int ldc, const nn_real *A, int lda, const nn_real *B, int ldb, int M, int N,
                          int K, int accumulate) {
    gemm_parallel(GEMM_NT, C, ldc, A, lda, B, ldb, M, N, K, accumulate);
}
