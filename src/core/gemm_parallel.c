/* Matrix products on every thread of the pool (gemm_parallel.h): C's rows
 * split in contiguous ranges, one per thread; or, for one product of few rows
 * (a GPT-2 forward's 128 tokens against a 50,257-word unembedding), its
 * columns split at panel boundaries: each thread then packs only its own
 * panels of B, where a row split has every thread pack all of B. A column of
 * C is computed from the same panels either way, so the result is one
 * thread's bit for bit. */
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
        case VEC_GEMM_PACKED:
            vec_gemm_packed(C, g->ldc, g->A + (size_t)r0 * g->lda, g->lda, g->B, g->K, r1 - r0, g->N, g->K, g->accumulate);
            break;
        }
    }
    return NN_OK;
}

/* Columns [c0, c1) of one product, c0 a multiple of the kernel's panel width. */
static void gemm_columns(const VecGemm *g, int c0, int c1) {
    nn_real *C = g->C + c0;
    switch (g->kind) {
    case VEC_GEMM_NN:
        vec_gemm_nn(C, g->ldc, g->A, g->lda, g->B + c0, g->ldb, g->M, c1 - c0, g->K, g->accumulate);
        break;
    case VEC_GEMM_TN:
        vec_gemm_tn(C, g->ldc, g->A, g->lda, g->B + c0, g->ldb, g->M, c1 - c0, g->K, g->accumulate);
        break;
    case VEC_GEMM_NT:
        vec_gemm_nt(C, g->ldc, g->A, g->lda, g->B + (size_t)c0 * g->ldb, g->ldb, g->M, c1 - c0, g->K, g->accumulate);
        break;
    case VEC_GEMM_PACKED: /* c0 starts a panel */
        vec_gemm_packed(C, g->ldc, g->A, g->lda, g->B + (size_t)c0 * g->K, g->K, g->M, c1 - c0, g->K, g->accumulate);
        break;
    }
}

static int gemm_columns_task(void *ctx, int tid, int n) {
    const VecGemm *g = ((const GemmJob *)ctx)->products;
    int w = vec_panel_width(), p0, p1;
    nn_pool_range(vec_pack_panels(g->N), tid, n, &p0, &p1);
    int c0 = p0 * w, c1 = p1 * w < g->N ? p1 * w : g->N;
    if (c0 < c1) gemm_columns(g, c0, c1);
    return NN_OK;
}

/* Rows per thread below which one product's columns are split instead: its
 * packing (every panel of B, per thread under a row split) then weighs. */
#define GEMM_SPLIT_COLUMNS_ROWS 256

void vec_gemm_parallel(const VecGemm *products, int count) {
    GemmJob job = {products, count};
    if (count == 0) return;
    double work = 0;
    for (int i = 0; i < count; i++) work += (double)products[i].M * products[i].N * products[i].K;
    int n = nn_pool_threads();
    if (count == 1 && n > 1 && products->M < GEMM_SPLIT_COLUMNS_ROWS * n && vec_pack_panels(products->N) >= 4 * n)
        nn_pool_run(gemm_columns_task, &job, work);
    else
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

void vec_gemm_packed_parallel(nn_real *C, int ldc, const nn_real *A, int lda, const nn_real *packed, int M, int N, int K,
                              int accumulate) {
    const VecGemm g = {VEC_GEMM_PACKED, C, ldc, A, lda, packed, K, M, N, K, accumulate};
    vec_gemm_parallel(&g, 1);
}
