/* Vector and matrix kernels of the core, written once on the primitives of
 * simd.h. Every kernel has a naive reference (vec_*_ref) beside it that the
 * tests compare against. Matrices are row-major; ld* are row strides.
 * Products pack their right-hand panels on the caller's stack: threads may
 * run products at once. */
#ifndef ATTNLAB_VEC_H
#define ATTNLAB_VEC_H

#include <stddef.h>

#include "attnlab/nn.h"

/* sum_i x_i y_i */
nn_real vec_dot(const nn_real *x, const nn_real *y, int n);
/* y += a x */
void vec_axpy(nn_real *y, nn_real a, const nn_real *x, int n);
/* x *= a */
void vec_scale(nn_real *x, nn_real a, int n);
/* max_i x_i (n >= 1) */
nn_real vec_max(const nn_real *x, int n);
/* max_i x_i (n >= 1), or NaN when any x_i is NaN or infinite: one isfinite()
 * on the result checks the whole vector. */
nn_real vec_max_finite(const nn_real *x, int n);
/* y_i = exp(x_i - shift); returns sum_i y_i. y may equal x. Every x_i - shift
 * must be <= 88 (a softmax shifts by max_i x_i, so they are <= 0). exp is
 * exactly 0 where x_i - shift is below about -87.68 (exp ~ 8.3e-39). */
nn_real vec_exp_sum(nn_real *y, const nn_real *x, nn_real shift, int n);
/* y_i = exp((x_i - shift) / tau), tau > 0, each (x_i - shift) / tau <= 88:
 * the tempered softmax numerator. */
nn_real vec_exp_sum_tau(nn_real *y, const nn_real *x, nn_real shift, nn_real tau, int n);
/* y_i = tanh(x_i). y may equal x. */
void vec_tanh(nn_real *y, const nn_real *x, int n);
void vec_sigmoid(nn_real *y, const nn_real *x, int n); /* 1 / (1 + exp(-x)); y may alias x */
/* sum_i x_i */
nn_real vec_sum(const nn_real *x, int n);
/* max_i |x_i| (0 when n is 0), or a value that is not finite (inf or NaN)
 * when some x_i is not: one pass checks the values and bounds them. */
nn_real vec_max_abs(const nn_real *x, size_t n);

/* C (M,N) = [C +] A (M,K) . B (K,N) */
void vec_gemm_nn(nn_real *C, int ldc, const nn_real *A, int lda,
                 const nn_real *B, int ldb, int M, int N, int K, int accumulate);
/* C (M,N) = [C +] A^T . B  with A (K,M), B (K,N) */
void vec_gemm_tn(nn_real *C, int ldc, const nn_real *A, int lda,
                 const nn_real *B, int ldb, int M, int N, int K, int accumulate);
/* C (M,N) = [C +] A (M,K) . B^T  with B (N,K) */
void vec_gemm_nt(nn_real *C, int ldc, const nn_real *A, int lda,
                 const nn_real *B, int ldb, int M, int N, int K, int accumulate);

/* A right-hand operand packed once and reused by many products (attention
 * packs K^T and V once, then runs query blocks against them).
 * vec_pack: scale B with B (K,N) row-major, or B^T given as (N,K) when
 * transposed; a product then costs no separate pass to scale its result. */
size_t vec_packed_size(int N, int K);
void vec_pack(nn_real *packed, const nn_real *B, int ldb, int N, int K, int transposed, nn_real scale);
/* vec_pack's panels (NR columns each) of an N-column operand, and panels
 * [first, last) of it alone (threads pack their share of one operand) */
int vec_pack_panels(int N);
void vec_pack_range(nn_real *packed, const nn_real *B, int ldb, int N, int K, int transposed, nn_real scale,
                    int first, int last);
/* Columns one panel covers (the products' block width: a product split at
 * multiples of it computes each column as the whole product does) */
int vec_panel_width(void);
/* Panels [first, last) of B^T (N, K) in vec_pack's panels, from B (K, N) in
 * them, into out (N NR reals a panel): the same panels as vec_pack of B
 * transposed, without B's rows (a backward pass through weights kept only
 * packed, a strip of B^T's columns at a time). */
void vec_packed_transpose(nn_real *out, const nn_real *packed, int N, int K, int first, int last);
/* C (M,N) = [C +] A (M,K) . B, B from vec_pack with packed_k >= K rows
 * (only the first K rows and N columns are used) */
void vec_gemm_packed(nn_real *C, int ldc, const nn_real *A, int lda, const nn_real *packed,
                     int packed_k, int M, int N, int K, int accumulate);

/* Naive references (same contracts, plain loops). */
void vec_gemm_nn_ref(nn_real *C, int ldc, const nn_real *A, int lda,
                     const nn_real *B, int ldb, int M, int N, int K, int accumulate);
void vec_gemm_tn_ref(nn_real *C, int ldc, const nn_real *A, int lda,
                     const nn_real *B, int ldb, int M, int N, int K, int accumulate);
void vec_gemm_nt_ref(nn_real *C, int ldc, const nn_real *A, int lda,
                     const nn_real *B, int ldb, int M, int N, int K, int accumulate);

#endif
