/* Vector primitives and matrix products on top of simd.h. */
#include "core/vec.h"

#include "core/simd.h"

/* ---- vector primitives: a vector body, then a scalar tail ---------------- */

nn_real vec_dot(const nn_real *x, const nn_real *y, int n) {
    VecF a0 = vf_zero(), a1 = vf_zero();
    int i = 0;
    for (; i + 2 * NN_VLEN <= n; i += 2 * NN_VLEN) {
        a0 = vf_madd(a0, vf_load(x + i), vf_load(y + i));
        a1 = vf_madd(a1, vf_load(x + i + NN_VLEN), vf_load(y + i + NN_VLEN));
    }
    for (; i + NN_VLEN <= n; i += NN_VLEN) a0 = vf_madd(a0, vf_load(x + i), vf_load(y + i));
    nn_real s = vf_hsum(vf_add(a0, a1));
    for (; i < n; i++) s += x[i] * y[i];
    return s;
}

void vec_axpy(nn_real *y, nn_real a, const nn_real *x, int n) {
    VecF va = vf_splat(a);
    int i = 0;
    for (; i + NN_VLEN <= n; i += NN_VLEN) vf_store(y + i, vf_madd(vf_load(y + i), va, vf_load(x + i)));
    for (; i < n; i++) y[i] += a * x[i];
}

void vec_scale(nn_real *x, nn_real a, int n) {
    VecF va = vf_splat(a);
    int i = 0;
    for (; i + NN_VLEN <= n; i += NN_VLEN) vf_store(x + i, vf_mul(vf_load(x + i), va));
    for (; i < n; i++) x[i] *= a;
}

nn_real vec_max(const nn_real *x, int n) {
    int i = 0;
    nn_real m = x[0];
    if (n >= NN_VLEN) {
        VecF vm = vf_load(x);
        for (i = NN_VLEN; i + NN_VLEN <= n; i += NN_VLEN) vm = vf_max(vm, vf_load(x + i));
        m = vf_hmax(vm);
    }
    for (; i < n; i++) m = x[i] > m ? x[i] : m;
    return m;
}

nn_real vec_sum(const nn_real *x, int n) {
    VecF acc = vf_zero();
    int i = 0;
    for (; i + NN_VLEN <= n; i += NN_VLEN) acc = vf_add(acc, vf_load(x + i));
    nn_real s = vf_hsum(acc);
    for (; i < n; i++) s += x[i];
    return s;
}

/* The tail goes through the vector exp too (padded), so every element of a
 * row is rounded the same way whatever its position. */
nn_real vec_exp_sum(nn_real *y, const nn_real *x, nn_real shift, int n) {
    VecF vs = vf_splat(shift), acc = vf_zero();
    int i = 0;
    for (; i + NN_VLEN <= n; i += NN_VLEN) {
        VecF e = vf_exp(vf_sub(vf_load(x + i), vs));
        vf_store(y + i, e);
        acc = vf_add(acc, e);
    }
    nn_real s = vf_hsum(acc);
    if (i < n) {
        nn_real t[NN_VLEN] = {0};
        for (int l = 0; i + l < n; l++) t[l] = x[i + l] - shift;
        vf_store(t, vf_exp(vf_load(t)));
        for (int l = 0; i + l < n; l++) {
            y[i + l] = t[l];
            s += t[l];
        }
    }
    return s;
}

void vec_tanh(nn_real *y, const nn_real *x, int n) {
    int i = 0;
    for (; i + NN_VLEN <= n; i += NN_VLEN) vf_store(y + i, vf_tanh(vf_load(x + i)));
    if (i < n) {
        nn_real t[NN_VLEN] = {0};
        for (int l = 0; i + l < n; l++) t[l] = x[i + l];
        vf_store(t, vf_tanh(vf_load(t)));
        for (int l = 0; i + l < n; l++) y[i + l] = t[l];
    }
}

/* ---- matrix products -------------------------------------------------------
 * One register-blocked micro-kernel computes an MR x 8 block of C as a sum of
 * outer products: for each p, MR broadcasts of A(r, p) times two vectors of
 * B(p, j..j+7). A is read through (a_rs, a_cs) strides, so the same kernel
 * serves A and A^T. MR = 6 keeps 12 accumulators + 2 B vectors + 1 broadcast
 * within the 16 vector registers of x86-64 that the WASM engine maps onto. */

#define GEMM_MR 6
#define GEMM_NR (2 * NN_VLEN)

static inline void gemm_block(int MR, nn_real *C, int ldc, const nn_real *A, int a_rs, int a_cs,
                              const nn_real *B, int ldb, int K, int accumulate) {
    VecF c0[GEMM_MR], c1[GEMM_MR];
    for (int r = 0; r < MR; r++) c0[r] = c1[r] = vf_zero();
    for (int p = 0; p < K; p++) {
        VecF b0 = vf_load(B + (size_t)p * ldb);
        VecF b1 = vf_load(B + (size_t)p * ldb + NN_VLEN);
        for (int r = 0; r < MR; r++) {
            VecF a = vf_splat(A[(size_t)r * a_rs + (size_t)p * a_cs]);
            c0[r] = vf_madd(c0[r], a, b0);
            c1[r] = vf_madd(c1[r], a, b1);
        }
    }
    for (int r = 0; r < MR; r++) {
        nn_real *c = C + (size_t)r * ldc;
        if (accumulate) {
            c0[r] = vf_add(c0[r], vf_load(c));
            c1[r] = vf_add(c1[r], vf_load(c + NN_VLEN));
        }
        vf_store(c, c0[r]);
        vf_store(c + NN_VLEN, c1[r]);
    }
}

/* Columns left over after the 8-wide blocks: one vector, then scalars. */
static void gemm_edge_cols(nn_real *C, int ldc, const nn_real *A, int a_rs, int a_cs,
                           const nn_real *B, int ldb, int M, int j0, int N, int K, int accumulate) {
    for (int i = 0; i < M; i++) {
        const nn_real *a = A + (size_t)i * a_rs;
        nn_real *c = C + (size_t)i * ldc;
        int j = j0;
        for (; j + NN_VLEN <= N; j += NN_VLEN) {
            VecF acc = vf_zero();
            for (int p = 0; p < K; p++)
                acc = vf_madd(acc, vf_splat(a[(size_t)p * a_cs]), vf_load(B + (size_t)p * ldb + j));
            if (accumulate) acc = vf_add(acc, vf_load(c + j));
            vf_store(c + j, acc);
        }
        for (; j < N; j++) {
            nn_real s = 0;
            for (int p = 0; p < K; p++) s += a[(size_t)p * a_cs] * B[(size_t)p * ldb + j];
            c[j] = accumulate ? c[j] + s : s;
        }
    }
}

/* C (M,N) = [C +] A . B where A(i,p) = A[i*a_rs + p*a_cs] and B is (K,N). */
static void gemm_strided(nn_real *C, int ldc, const nn_real *A, int a_rs, int a_cs,
                         const nn_real *B, int ldb, int M, int N, int K, int accumulate) {
    if (K == 0) {
        if (!accumulate)
            for (int i = 0; i < M; i++)
                for (int j = 0; j < N; j++) C[(size_t)i * ldc + j] = 0;
        return;
    }
    int n_full = N - N % GEMM_NR;
    for (int j = 0; j < n_full; j += GEMM_NR) {
        int i = 0;
        for (; i + GEMM_MR <= M; i += GEMM_MR)
            gemm_block(GEMM_MR, C + (size_t)i * ldc + j, ldc, A + (size_t)i * a_rs, a_rs, a_cs,
                       B + j, ldb, K, accumulate);
        switch (M - i) { /* constant MR per case, so each inlined copy keeps registers */
        case 5: gemm_block(5, C + (size_t)i * ldc + j, ldc, A + (size_t)i * a_rs, a_rs, a_cs, B + j, ldb, K, accumulate); break;
        case 4: gemm_block(4, C + (size_t)i * ldc + j, ldc, A + (size_t)i * a_rs, a_rs, a_cs, B + j, ldb, K, accumulate); break;
        case 3: gemm_block(3, C + (size_t)i * ldc + j, ldc, A + (size_t)i * a_rs, a_rs, a_cs, B + j, ldb, K, accumulate); break;
        case 2: gemm_block(2, C + (size_t)i * ldc + j, ldc, A + (size_t)i * a_rs, a_rs, a_cs, B + j, ldb, K, accumulate); break;
        case 1: gemm_block(1, C + (size_t)i * ldc + j, ldc, A + (size_t)i * a_rs, a_rs, a_cs, B + j, ldb, K, accumulate); break;
        default: break;
        }
    }
    if (n_full < N) gemm_edge_cols(C, ldc, A, a_rs, a_cs, B, ldb, M, n_full, N, K, accumulate);
}

void vec_gemm_nn(nn_real *C, int ldc, const nn_real *A, int lda, const nn_real *B, int ldb,
                 int M, int N, int K, int accumulate) {
    gemm_strided(C, ldc, A, lda, 1, B, ldb, M, N, K, accumulate);
}

void vec_gemm_tn(nn_real *C, int ldc, const nn_real *A, int lda, const nn_real *B, int ldb,
                 int M, int N, int K, int accumulate) {
    gemm_strided(C, ldc, A, 1, lda, B, ldb, M, N, K, accumulate);
}

void vec_gemm_nt(nn_real *C, int ldc, const nn_real *A, int lda, const nn_real *B, int ldb,
                 int M, int N, int K, int accumulate, nn_real *pack) {
    /* pack (K,N) = B^T, so the kernel streams contiguous rows of it */
    for (int j = 0; j < N; j++)
        for (int p = 0; p < K; p++) pack[(size_t)p * N + j] = B[(size_t)j * ldb + p];
    gemm_strided(C, ldc, A, lda, 1, pack, N, M, N, K, accumulate);
}

/* ---- naive references --------------------------------------------------- */

void vec_gemm_nn_ref(nn_real *C, int ldc, const nn_real *A, int lda, const nn_real *B, int ldb,
                     int M, int N, int K, int accumulate) {
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            nn_real s = 0;
            for (int p = 0; p < K; p++) s += A[(size_t)i * lda + p] * B[(size_t)p * ldb + j];
            C[(size_t)i * ldc + j] = accumulate ? C[(size_t)i * ldc + j] + s : s;
        }
}

void vec_gemm_tn_ref(nn_real *C, int ldc, const nn_real *A, int lda, const nn_real *B, int ldb,
                     int M, int N, int K, int accumulate) {
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            nn_real s = 0;
            for (int p = 0; p < K; p++) s += A[(size_t)p * lda + i] * B[(size_t)p * ldb + j];
            C[(size_t)i * ldc + j] = accumulate ? C[(size_t)i * ldc + j] + s : s;
        }
}

void vec_gemm_nt_ref(nn_real *C, int ldc, const nn_real *A, int lda, const nn_real *B, int ldb,
                     int M, int N, int K, int accumulate) {
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            nn_real s = 0;
            for (int p = 0; p < K; p++) s += A[(size_t)i * lda + p] * B[(size_t)j * ldb + p];
            C[(size_t)i * ldc + j] = accumulate ? C[(size_t)i * ldc + j] + s : s;
        }
}
