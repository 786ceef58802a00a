/* Vector primitives and matrix products on top of simd.h. */
#include "core/vec.h"

#include <stdint.h>
#include <string.h>

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
    for (; i < n; i++) m = vf_max1(m, x[i]);
    return m;
}

/* x_i * 0 is 0 for finite x_i and NaN for NaN or +-inf: adding those up
 * alongside the max flags a non-finite element whatever vf_max does with it
 * (a max alone skips NaN on some branches and -inf everywhere). */
nn_real vec_max_finite(const nn_real *x, int n) {
    int i = 0;
    nn_real m = x[0], bad = 0;
    if (n >= NN_VLEN) {
        /* two of each accumulator: the adds are a latency chain */
        VecF vm = vf_load(x), vm1 = vm, vbad = vf_zero(), vbad1 = vf_zero(), zero = vf_zero();
        for (; i + 2 * NN_VLEN <= n; i += 2 * NN_VLEN) {
            VecF x0 = vf_load(x + i), x1 = vf_load(x + i + NN_VLEN);
            vm = vf_max(vm, x0);
            vm1 = vf_max(vm1, x1);
            vbad = vf_madd(vbad, x0, zero);
            vbad1 = vf_madd(vbad1, x1, zero);
        }
        for (; i + NN_VLEN <= n; i += NN_VLEN) {
            VecF xi = vf_load(x + i);
            vm = vf_max(vm, xi);
            vbad = vf_madd(vbad, xi, zero);
        }
        m = vf_hmax(vf_max(vm, vm1));
        bad = vf_hsum(vf_add(vbad, vbad1));
    }
    for (; i < n; i++) {
        m = vf_max1(m, x[i]);
        bad += x[i] * 0;
    }
    return m + bad;
}

nn_real vec_sum(const nn_real *x, int n) {
    VecF acc = vf_zero();
    int i = 0;
    for (; i + NN_VLEN <= n; i += NN_VLEN) acc = vf_add(acc, vf_load(x + i));
    nn_real s = vf_hsum(acc);
    for (; i < n; i++) s += x[i];
    return s;
}

/* On the bits: with the sign cleared, finite values order as integers as
 * they do as numbers, and every inf or NaN is above them all. An integer
 * mask and max the compiler vectorises: one pass at memory speed. */
nn_real vec_max_abs(const nn_real *x, size_t n) {
#ifdef NN_DOUBLE
    typedef uint64_t Bits;
    const Bits magnitude = 0x7fffffffffffffffull;
#else
    typedef uint32_t Bits;
    const Bits magnitude = 0x7fffffffu;
#endif
    Bits m = 0;
    for (size_t i = 0; i < n; i++) {
        Bits b;
        memcpy(&b, x + i, sizeof b);
        b &= magnitude;
        m = b > m ? b : m;
    }
    nn_real r;
    memcpy(&r, &m, sizeof r);
    return r;
}

/* y_i = exp((x_i - shift) / tau), or exp(x_i - shift) when !divide (a
 * constant in each caller, so each gets its own loop); returns the sum.
 * Subtracting before dividing keeps close, large scores apart (their
 * difference is exact) and lets a tiny tau send every x_i < shift to
 * -inf, i.e. weight 0, instead of overflowing x_i / tau. The tail goes
 * through the vector exp too (padded), so every element of a row is rounded
 * the same way whatever its position. */
static inline __attribute__((always_inline)) nn_real exp_sum(nn_real *y, const nn_real *x, nn_real shift,
                                                             nn_real tau, int divide, int n) {
    VecF vs = vf_splat(shift), vt = vf_splat(tau), acc = vf_zero(), acc1 = vf_zero();
#define EXP_ARG(p) (divide ? vf_div(vf_sub(vf_load(p), vs), vt) : vf_sub(vf_load(p), vs))
    int i = 0;
    /* two independent exps per iteration: the polynomial is a latency chain */
    for (; i + 4 * NN_VLEN <= n; i += 4 * NN_VLEN) {
        VecF e0 = vf_exp_shifted(EXP_ARG(x + i));
        VecF e1 = vf_exp_shifted(EXP_ARG(x + i + NN_VLEN));
        VecF e2 = vf_exp_shifted(EXP_ARG(x + i + 2 * NN_VLEN));
        VecF e3 = vf_exp_shifted(EXP_ARG(x + i + 3 * NN_VLEN));
        vf_store(y + i, e0);
        vf_store(y + i + NN_VLEN, e1);
        vf_store(y + i + 2 * NN_VLEN, e2);
        vf_store(y + i + 3 * NN_VLEN, e3);
        acc = vf_add(acc, vf_add(e0, e2));
        acc1 = vf_add(acc1, vf_add(e1, e3));
    }
    acc = vf_add(acc, acc1);
    for (; i + NN_VLEN <= n; i += NN_VLEN) {
        VecF e = vf_exp_shifted(EXP_ARG(x + i));
        vf_store(y + i, e);
        acc = vf_add(acc, e);
    }
    nn_real s = vf_hsum(acc);
    if (i < n) {
        nn_real t[NN_VLEN];
        for (int l = 0; l < NN_VLEN; l++) t[l] = i + l < n ? x[i + l] : shift;
        vf_store(t, vf_exp_shifted(EXP_ARG(t)));
        for (int l = 0; i + l < n; l++) {
            y[i + l] = t[l];
            s += t[l];
        }
    }
#undef EXP_ARG
    return s;
}

static __attribute__((noinline)) nn_real exp_sum_plain(nn_real *y, const nn_real *x, nn_real shift, int n) {
    return exp_sum(y, x, shift, 1, 0, n);
}

static __attribute__((noinline)) nn_real exp_sum_tempered(nn_real *y, const nn_real *x, nn_real shift, nn_real tau,
                                                          int n) {
    return exp_sum(y, x, shift, tau, 1, n);
}

nn_real vec_exp_sum(nn_real *y, const nn_real *x, nn_real shift, int n) { return exp_sum_plain(y, x, shift, n); }

nn_real vec_exp_sum_tau(nn_real *y, const nn_real *x, nn_real shift, nn_real tau, int n) {
    return tau == 1 ? exp_sum_plain(y, x, shift, n) : exp_sum_tempered(y, x, shift, tau, n);
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

/* sigmoid(x) = 1 / (1 + exp(-x)) */
void vec_sigmoid(nn_real *y, const nn_real *x, int n) {
    const VecF one = vf_splat(1);
    int i = 0;
    for (; i + NN_VLEN <= n; i += NN_VLEN)
        vf_store(y + i, vf_div(one, vf_add(one, vf_exp(vf_sub(vf_zero(), vf_load(x + i))))));
    if (i < n) {
        nn_real t[NN_VLEN] = {0};
        for (int l = 0; i + l < n; l++) t[l] = x[i + l];
        vf_store(t, vf_div(one, vf_add(one, vf_exp(vf_sub(vf_zero(), vf_load(t))))));
        for (int l = 0; i + l < n; l++) y[i + l] = t[l];
    }
}

/* ---- matrix products -------------------------------------------------------
 * GotoBLAS-style: B is packed, 8 columns x KC rows at a time, into a
 * contiguous panel (zero-padded past N), then one register-blocked
 * micro-kernel computes each MR x 8 block of C as a sum of outer products:
 * per p, MR broadcasts of A(r, p) times the panel's two vectors. Packing
 * keeps the kernel's loads sequential (B rows 4 KiB apart would alias in L1).
 * A is read through (a_rs, a_cs) strides, so one kernel serves A and A^T.
 * MR x NV = 2 x 4 vectors (8 accumulators) measured fastest in V8 among 2x4,
 * 4x2, 3x3, 5x2, 3x4, 6x2: larger blocks spill the 15 x86-64 vector
 * registers V8 allocates (about 50 GFLOP/s at 1024x1024x64, ~93% of the
 * one-core peak of tests/bench/peak.c). The kernel steps pointers rather than
 * indexing by p (Emscripten compiles without loop strength reduction, so an
 * index costs a shift and adds per load) and ends on the panel pointer, not a
 * count (a count's add and compare per step kept V8's loop front-end bound:
 * 88% of the peak against 92% on Zen 4); it does not unroll p: LLVM then
 * groups the unrolled steps by accumulator and V8 spills. */

#ifndef GEMM_MR
#define GEMM_MR 2
#endif
#ifndef GEMM_NV
#define GEMM_NV 4
#endif
#define GEMM_NR (GEMM_NV * NN_VLEN)
#define GEMM_KC 256

static inline __attribute__((always_inline)) void gemm_block(int MR, nn_real *C, int ldc, const nn_real *A,
                                                             int a_rs, int a_cs, const nn_real *panel,
                                                             int K, int accumulate) {
    VecF c[GEMM_MR][GEMM_NV];
    const nn_real *a[GEMM_MR]; /* A(r, p), stepped along p */
    for (int r = 0; r < MR; r++) {
        a[r] = A + (size_t)r * a_rs;
        for (int v = 0; v < GEMM_NV; v++) c[r][v] = vf_zero();
    }
    for (const nn_real *end = panel + (size_t)K * GEMM_NR; panel < end; panel += GEMM_NR) {
        VecF b[GEMM_NV];
        for (int v = 0; v < GEMM_NV; v++) b[v] = vf_load(panel + v * NN_VLEN);
        for (int r = 0; r < MR; r++) {
            VecF s = vf_splat(*a[r]);
            a[r] += a_cs;
            for (int v = 0; v < GEMM_NV; v++) c[r][v] = vf_madd(c[r][v], s, b[v]);
        }
    }
    for (int r = 0; r < MR; r++)
        for (int v = 0; v < GEMM_NV; v++) {
            nn_real *cp = C + (size_t)r * ldc + v * NN_VLEN;
            vf_store(cp, accumulate ? vf_add(c[r][v], vf_load(cp)) : c[r][v]);
        }
}

/* Rows [0, M) of one column block: MR rows at a time, then single rows.
 * Contiguous A (a_cs = 1, the common case) gets its own inlined copy so the
 * kernel's loads need no stride multiply. */
static void gemm_rows(nn_real *C, int ldc, const nn_real *A, int a_rs, int a_cs, const nn_real *panel,
                      int M, int K, int accumulate) {
    int i = 0;
    if (a_cs == 1)
        for (; i + GEMM_MR <= M; i += GEMM_MR)
            gemm_block(GEMM_MR, C + (size_t)i * ldc, ldc, A + (size_t)i * a_rs, a_rs, 1, panel, K, accumulate);
    else
        for (; i + GEMM_MR <= M; i += GEMM_MR)
            gemm_block(GEMM_MR, C + (size_t)i * ldc, ldc, A + (size_t)i * a_rs, a_rs, a_cs, panel, K, accumulate);
    for (; i < M; i++)
        gemm_block(1, C + (size_t)i * ldc, ldc, A + (size_t)i * a_rs, a_rs, a_cs, panel, K, accumulate);
}

/* C (M, w) = [C +] A . panel for one column block of width w <= NR; a
 * partial block goes through a tile, MR rows at a time. */
static void gemm_panel(nn_real *C, int ldc, const nn_real *A, int a_rs, int a_cs, const nn_real *panel,
                       int M, int w, int K, int accumulate) {
    if (w == GEMM_NR) {
        gemm_rows(C, ldc, A, a_rs, a_cs, panel, M, K, accumulate);
        return;
    }
    nn_real tile[GEMM_MR * GEMM_NR];
    for (int i = 0; i < M; i += GEMM_MR) {
        int mr = M - i < GEMM_MR ? M - i : GEMM_MR;
        gemm_rows(tile, GEMM_NR, A + (size_t)i * a_rs, a_rs, a_cs, panel, mr, K, 0);
        for (int r = 0; r < mr; r++)
            for (int jj = 0; jj < w; jj++) {
                nn_real *c = C + (size_t)(i + r) * ldc + jj;
                *c = accumulate ? *c + tile[r * GEMM_NR + jj] : tile[r * GEMM_NR + jj];
            }
    }
}

/* rows [0, K) of columns [j, j + w) of scale B(p, j), B(p, j) = B[p*b_rs + j*b_cs],
 * as a panel */
static void pack_panel(nn_real *panel, const nn_real *B, size_t b_rs, size_t b_cs, int j, int w, int K,
                       nn_real scale) {
    for (int p = 0; p < K; p++, panel += GEMM_NR) {
        const nn_real *b = B + (size_t)p * b_rs + (size_t)j * b_cs;
        int jj = 0;
        if (scale == 1)
            for (; jj < w; jj++) panel[jj] = b[jj * b_cs];
        else
            for (; jj < w; jj++) panel[jj] = scale * b[jj * b_cs];
        for (; jj < GEMM_NR; jj++) panel[jj] = 0;
    }
}

/* Columns per block of the products' loops: for each block, each chunk of
 * GEMM_KC along K runs over every panel of the block, so A's chunk (M x KC)
 * is read from L2 once per block rather than once per panel, and the block
 * of C (M x nc) stays there across the chunks. Few rows (a transformer's
 * tokens against wide weights) make blocks of many panels; A's chunk then
 * comes from L2 instead of being streamed again from L3 for every panel,
 * which also held back two threads sharing L3. Many rows make blocks of one
 * panel: the order before. Each C element still adds its chunks' sums in
 * order of k, so the results are the same bit for bit. */
#define GEMM_BLOCK_BYTES (128 * 1024)

static int column_block(int M) {
    int panels = GEMM_BLOCK_BYTES / ((int)sizeof(nn_real) * GEMM_NR * (M > 0 ? M : 1));
    return (panels > 1 ? panels : 1) * GEMM_NR;
}

static void zero_matrix(nn_real *C, int ldc, int M, int N) {
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) C[(size_t)i * ldc + j] = 0;
}

/* C (M,N) = [C +] A . B with A(i,p) = A[i*a_rs + p*a_cs] and
 * B(p,j) = B[p*b_rs + j*b_cs] (b_cs = 1 for B, b_rs = 1 for B^T). */
static void gemm_strided(nn_real *C, int ldc, const nn_real *A, int a_rs, int a_cs, const nn_real *B,
                         int b_rs, int b_cs, int M, int N, int K, int accumulate) {
    if (K == 0) {
        if (!accumulate) zero_matrix(C, ldc, M, N);
        return;
    }
    /* The panel (16 KiB) lives on the caller's stack: no product allocates,
     * and threads running products at once each pack their own. */
    nn_real panel[GEMM_KC * GEMM_NR] __attribute__((aligned(16)));
    int nc = column_block(M);
    for (int j0 = 0; j0 < N; j0 += nc) {
        int j1 = N - j0 < nc ? N : j0 + nc;
        for (int k0 = 0; k0 < K; k0 += GEMM_KC) {
            int kc = K - k0 < GEMM_KC ? K - k0 : GEMM_KC;
            for (int j = j0; j < j1; j += GEMM_NR) {
                int w = N - j < GEMM_NR ? N - j : GEMM_NR;
                pack_panel(panel, B + (size_t)k0 * b_rs, b_rs, b_cs, j, w, kc, 1);
                gemm_panel(C + j, ldc, A + (size_t)k0 * a_cs, a_rs, a_cs, panel, M, w, kc, accumulate || k0 > 0);
            }
        }
    }
}

int vec_pack_panels(int N) { return (N + GEMM_NR - 1) / GEMM_NR; }

int vec_panel_width(void) { return GEMM_NR; }

size_t vec_packed_size(int N, int K) { return (size_t)vec_pack_panels(N) * GEMM_NR * (size_t)K; }

/* Panel j holds rows [0, K) of columns [j*NR, j*NR + NR), contiguous. */
void vec_pack_range(nn_real *packed, const nn_real *B, int ldb, int N, int K, int transposed, nn_real scale,
                    int first, int last) {
    size_t b_rs = transposed ? 1 : (size_t)ldb, b_cs = transposed ? (size_t)ldb : 1;
    for (int panel = first; panel < last; panel++) {
        int j = panel * GEMM_NR;
        pack_panel(packed + (size_t)panel * K * GEMM_NR, B, b_rs, b_cs, j, N - j < GEMM_NR ? N - j : GEMM_NR, K,
                   scale);
    }
}

void vec_pack(nn_real *packed, const nn_real *B, int ldb, int N, int K, int transposed, nn_real scale) {
    vec_pack_range(packed, B, ldb, N, K, transposed, scale, 0, vec_pack_panels(N));
}

/* Row k of B (K, N) is, in panel j, the NR reals at j K NR + k NR; row c of
 * B^T (N, K) takes column c of B, one real from each of B's rows. Panels of
 * the output are written in order; each reads NR of B's rows, a strip that
 * stays in cache while its columns are gathered. */
void vec_packed_transpose(nn_real *out, const nn_real *packed, int N, int K, int first, int last) {
    for (int q = first; q < last; q++) {
        int k0 = q * GEMM_NR, w = K - k0 < GEMM_NR ? K - k0 : GEMM_NR;
        nn_real *panel = out + (size_t)(q - first) * N * GEMM_NR;
        for (int c = 0; c < N; c++, panel += GEMM_NR) {
            const nn_real *col = packed + (size_t)(c / GEMM_NR) * K * GEMM_NR + (size_t)k0 * GEMM_NR + c % GEMM_NR;
            int jj = 0;
            for (; jj < w; jj++) panel[jj] = col[(size_t)jj * GEMM_NR];
            for (; jj < GEMM_NR; jj++) panel[jj] = 0;
        }
    }
}

void vec_gemm_packed(nn_real *C, int ldc, const nn_real *A, int lda, const nn_real *packed, int packed_k,
                     int M, int N, int K, int accumulate) {
    if (K == 0) {
        if (!accumulate) zero_matrix(C, ldc, M, N);
        return;
    }
    int nc = column_block(M);
    for (int j0 = 0; j0 < N; j0 += nc) {
        int j1 = N - j0 < nc ? N : j0 + nc;
        for (int k0 = 0; k0 < K; k0 += GEMM_KC) {
            int kc = K - k0 < GEMM_KC ? K - k0 : GEMM_KC;
            for (int j = j0; j < j1; j += GEMM_NR) {
                int w = N - j < GEMM_NR ? N - j : GEMM_NR;
                const nn_real *panel = packed + (size_t)(j / GEMM_NR) * packed_k * GEMM_NR + (size_t)k0 * GEMM_NR;
                gemm_panel(C + j, ldc, A + k0, lda, 1, panel, M, w, kc, accumulate || k0 > 0);
            }
        }
    }
}

void vec_gemm_nn(nn_real *C, int ldc, const nn_real *A, int lda, const nn_real *B, int ldb,
                 int M, int N, int K, int accumulate) {
    gemm_strided(C, ldc, A, lda, 1, B, ldb, 1, M, N, K, accumulate);
}

void vec_gemm_tn(nn_real *C, int ldc, const nn_real *A, int lda, const nn_real *B, int ldb,
                 int M, int N, int K, int accumulate) {
    gemm_strided(C, ldc, A, 1, lda, B, ldb, 1, M, N, K, accumulate);
}

void vec_gemm_nt(nn_real *C, int ldc, const nn_real *A, int lda, const nn_real *B, int ldb,
                 int M, int N, int K, int accumulate) {
    gemm_strided(C, ldc, A, lda, 1, B, 1, ldb, M, N, K, accumulate);
}

/* ---- naive references --------------------------------------------------- */

/* gemm_strided in plain loops: A[i][p] at A[i a_rs + p a_cs], B[p][j] at B[p b_rs + j b_cs]. */
static void gemm_strided_ref(nn_real *C, int ldc, const nn_real *A, int a_rs, int a_cs, const nn_real *B, int b_rs,
                             int b_cs, int M, int N, int K, int accumulate) {
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            nn_real s = 0;
            for (int p = 0; p < K; p++) s += A[(size_t)i * a_rs + (size_t)p * a_cs] * B[(size_t)p * b_rs + (size_t)j * b_cs];
            C[(size_t)i * ldc + j] = accumulate ? C[(size_t)i * ldc + j] + s : s;
        }
}

void vec_gemm_nn_ref(nn_real *C, int ldc, const nn_real *A, int lda, const nn_real *B, int ldb,
                     int M, int N, int K, int accumulate) {
    gemm_strided_ref(C, ldc, A, lda, 1, B, ldb, 1, M, N, K, accumulate);
}

void vec_gemm_tn_ref(nn_real *C, int ldc, const nn_real *A, int lda, const nn_real *B, int ldb,
                     int M, int N, int K, int accumulate) {
    gemm_strided_ref(C, ldc, A, 1, lda, B, ldb, 1, M, N, K, accumulate);
}

void vec_gemm_nt_ref(nn_real *C, int ldc, const nn_real *A, int lda, const nn_real *B, int ldb,
                     int M, int N, int K, int accumulate) {
    gemm_strided_ref(C, ldc, A, lda, 1, B, 1, ldb, M, N, K, accumulate);
}
