// The engine's matrix products alone (src/core/vec.c, the kernels every model
// calls), for tests/bench/transformer-speed.mjs: it times the products of a
// transformer's training step, shape by shape, against the peak of
// tests/bench/peak.c. Built like the engine's SIMD build (-O3 -msimd128).
#include <emscripten/emscripten.h>
#include <stdlib.h>

#include "core/vec.h"

static nn_real *a, *b, *c;

// Operand buffers of n reals each, filled with small values; 0 when out of memory.
EMSCRIPTEN_KEEPALIVE int products_init(int n) {
    a = malloc(sizeof(nn_real) * (size_t)n);
    b = malloc(sizeof(nn_real) * (size_t)n);
    c = calloc((size_t)n, sizeof(nn_real));
    if (!a || !b || !c) return 0;
    for (int i = 0; i < n; i++) {
        a[i] = (nn_real)(i % 7) * 0.01f;
        b[i] = (nn_real)(i % 5) * 0.02f;
    }
    return 1;
}

// `reps` times C (M, N) += op(A) op(B): kind 0 A B, 1 A^T B, 2 A B^T, with
// the leading dimensions the model's buffers have.
EMSCRIPTEN_KEEPALIVE void products_run(int kind, int M, int N, int K, int lda, int ldb, int ldc, int reps) {
    for (int r = 0; r < reps; r++) {
        if (kind == 0) vec_gemm_nn(c, ldc, a, lda, b, ldb, M, N, K, 1);
        else if (kind == 1) vec_gemm_tn(c, ldc, a, lda, b, ldb, M, N, K, 1);
        else vec_gemm_nt(c, ldc, a, lda, b, ldb, M, N, K, 1);
    }
}
