/* Matrix products on every thread of the pool: C's rows split in
 * contiguous ranges, one per thread (gemm_parallel.h). */
#include "core/gemm_parallel.h"

#include "base/pool.h"
#include "core/vec.h"

typedef struct {
    const VecGemm *products;
    int count;
} GemmJob;

/* Rows [r0, r1) of each product's C. Row r of A is at A + r lda, except for
 * A^T (A is (K, M)), whose row r is column r of A: A + r. */
static int gemm_rows_task(void *ctx, int tid, int n) {
    const GemmJob *job = ctx;
    for (int i = 0; i < job->count; i++) {
        const VecGemm *g = &job->products[i];
        int r0, r1;
        nn_pool_range(g->M, tid, n, &r0, &r1);
        if (r0 == r1) continue;
        nn_real *C = g->C + (size_t)r0 * g->ldc;
        switch (g->kind) {
        case VEC_GEMM_NN:
            vec_gemm_nn(C, g->ldc, g->A + (size_t)r0 * g->lda, g->lda, g->B, g->ldb, r1 - r0, g->N, g->K, g->accumulate);
            break;
        case VEC_GEMM_TN:
            vec_gemm_tn(C, g->ldc, g->A + r0, g->lda, g->B, g->ldb, r1 - r0, g->N, g->K, g->accumulate);
            break;
        case VEC_GEMM_NT:
            vec_gemm_nt(C, g->ldc, g->A + (size_t)r0 * g->lda, g->lda, g->B, g->ldb, r1 - r0, g->N, g->K, g->accumulate);
            break;
        }
    }
    return NN_OK;
}

void vec_gemm_parallel(const VecGemm *products, int count) {
    GemmJob job = {products, count};
    if (count == 0) return;
    double work = 0;
    for (int i = 0; i < count; i++) work += (double)products[i].M * products[i].N * products[i].K;
    nn_pool_run(gemm_rows_task, &job, work);
}

void vec_gemm_nn_parallel(nn_real *C, int ldc, const nn_real *A, int lda, const nn_real *B, int ldb, int M, int N,
                          int K, int accumulate) {
    const VecGemm g = {VEC_GEMM_NN, C, ldc, A, lda, B, ldb, M, N, K, accumulate};
    vec_gemm_parallel(&g, 1);
}

void vec_gemm_nt_parallel(nn_real *C, int ldc, const nn_real *A, int lda, const nn_real *B, int ldb, int M, int N,
                          int K, int accumulate) {
    const VecGemm g = {VEC_GEMM_NT, C, ldc, A, lda, B, ldb, M, N, K, accumulate};
    vec_gemm_parallel(&g, 1);
}
