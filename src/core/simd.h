/* The one place that knows about vector instructions.
 *
 * VecF holds NN_VLEN reals. Three branches implement the same primitives:
 *   __wasm_simd128__  WebAssembly SIMD128 (f32x4)
 *   __SSE2__          native x86-64, so the native tests exercise a vector path
 *   scalar            a struct of 4 reals, lane by lane; forced by NN_SCALAR,
 *                     and always used by NN_DOUBLE (the gradient-check build)
 * Kernels in vec.c are written once on these primitives and never use
 * intrinsics. Baseline SIMD128 has no fused multiply-add: vf_madd is mul + add,
 * so every branch rounds the same way.
 *
 * NaN goes the same way through every branch's min and max: they are
 * SIMD128's pseudo-min and pseudo-max, lane by lane
 *     vf_max(a, b) = a < b ? b : a        vf_min(a, b) = b < a ? b : a
 * so a NaN in a comes out, a NaN in b does not. Kernels put the data first
 * and the bound second: a clamp such as vf_min(vf_max(x, lo), hi) (vf_exp's)
 * passes a NaN x on, so a NaN that reaches exp or tanh stays NaN and the
 * checks after them see it, on the scalar build as on the SIMD one. vf_hmax
 * folds the lanes with the same rule (vf_max1). */
#ifndef ATTNLAB_SIMD_H
#define ATTNLAB_SIMD_H

#include <math.h>
#include <stdint.h>

#include "attnlab/nn.h"

#define NN_VLEN 4

#if defined(NN_DOUBLE) || defined(NN_SCALAR)
#define NN_SIMD_SCALAR 1
#elif defined(__wasm_simd128__)
#define NN_SIMD_WASM 1
#include <wasm_simd128.h>
#elif defined(__SSE2__)
#define NN_SIMD_SSE 1
#include <emmintrin.h>
#else
#define NN_SIMD_SCALAR 1
#endif

#if defined(NN_SIMD_WASM)

typedef v128_t VecF;
static inline VecF vf_zero(void) { return wasm_f32x4_splat(0.0f); }
static inline VecF vf_splat(float x) { return wasm_f32x4_splat(x); }
static inline VecF vf_load(const float *p) { return wasm_v128_load(p); }
static inline void vf_store(float *p, VecF v) { wasm_v128_store(p, v); }
static inline VecF vf_add(VecF a, VecF b) { return wasm_f32x4_add(a, b); }
static inline VecF vf_sub(VecF a, VecF b) { return wasm_f32x4_sub(a, b); }
static inline VecF vf_mul(VecF a, VecF b) { return wasm_f32x4_mul(a, b); }
static inline VecF vf_div(VecF a, VecF b) { return wasm_f32x4_div(a, b); }
static inline VecF vf_max(VecF a, VecF b) { return wasm_f32x4_pmax(a, b); }
static inline VecF vf_min(VecF a, VecF b) { return wasm_f32x4_pmin(a, b); }
/* The float whose bits are t's shifted left by 23: its low mantissa bits moved
 * into the exponent field (see vf_exp). */
static inline VecF vf_shift_to_exponent(VecF t) { return wasm_i32x4_shl(t, 23); }
static inline float vf_hsum(VecF v) {
    return (wasm_f32x4_extract_lane(v, 0) + wasm_f32x4_extract_lane(v, 1)) +
           (wasm_f32x4_extract_lane(v, 2) + wasm_f32x4_extract_lane(v, 3));
}
static inline float vf_lane(VecF v, int l) {
    float t[4];
    wasm_v128_store(t, v);
    return t[l];
}

#elif defined(NN_SIMD_SSE)

typedef __m128 VecF;
static inline VecF vf_zero(void) { return _mm_setzero_ps(); }
static inline VecF vf_splat(float x) { return _mm_set1_ps(x); }
static inline VecF vf_load(const float *p) { return _mm_loadu_ps(p); }
static inline void vf_store(float *p, VecF v) { _mm_storeu_ps(p, v); }
static inline VecF vf_add(VecF a, VecF b) { return _mm_add_ps(a, b); }
static inline VecF vf_sub(VecF a, VecF b) { return _mm_sub_ps(a, b); }
static inline VecF vf_mul(VecF a, VecF b) { return _mm_mul_ps(a, b); }
static inline VecF vf_div(VecF a, VecF b) { return _mm_div_ps(a, b); }
/* maxps / minps return their second operand when either is NaN: swapped,
 * they are SIMD128's pmax / pmin exactly (signed zeros included) */
static inline VecF vf_max(VecF a, VecF b) { return _mm_max_ps(b, a); }
static inline VecF vf_min(VecF a, VecF b) { return _mm_min_ps(b, a); }
static inline VecF vf_shift_to_exponent(VecF t) { return _mm_castsi128_ps(_mm_slli_epi32(_mm_castps_si128(t), 23)); }
static inline float vf_hsum(VecF v) {
    float t[4];
    _mm_storeu_ps(t, v);
    return (t[0] + t[1]) + (t[2] + t[3]);
}
static inline float vf_lane(VecF v, int l) {
    float t[4];
    _mm_storeu_ps(t, v);
    return t[l];
}

#else /* scalar */

typedef struct {
    nn_real v[NN_VLEN];
} VecF;
#define VF_LANES(expr)                                                          \
    VecF r;                                                                     \
    for (int l = 0; l < NN_VLEN; l++) r.v[l] = (expr);                          \
    return r
static inline VecF vf_zero(void) { VF_LANES(0); }
static inline VecF vf_splat(nn_real x) { VF_LANES(x); }
static inline VecF vf_load(const nn_real *p) { VF_LANES(p[l]); }
static inline void vf_store(nn_real *p, VecF a) {
    for (int l = 0; l < NN_VLEN; l++) p[l] = a.v[l];
}
static inline VecF vf_add(VecF a, VecF b) { VF_LANES(a.v[l] + b.v[l]); }
static inline VecF vf_sub(VecF a, VecF b) { VF_LANES(a.v[l] - b.v[l]); }
static inline VecF vf_mul(VecF a, VecF b) { VF_LANES(a.v[l] * b.v[l]); }
static inline VecF vf_div(VecF a, VecF b) { VF_LANES(a.v[l] / b.v[l]); }
static inline VecF vf_max(VecF a, VecF b) { VF_LANES(a.v[l] < b.v[l] ? b.v[l] : a.v[l]); }
static inline VecF vf_min(VecF a, VecF b) { VF_LANES(b.v[l] < a.v[l] ? b.v[l] : a.v[l]); }
#ifndef NN_DOUBLE
static inline float vf_shift_lane(float t) {
    union { float f; uint32_t u; } x = {t};
    x.u <<= 23;
    return x.f;
}
static inline VecF vf_shift_to_exponent(VecF t) { VF_LANES(vf_shift_lane(t.v[l])); }
#endif
static inline nn_real vf_hsum(VecF a) { return (a.v[0] + a.v[1]) + (a.v[2] + a.v[3]); }
static inline nn_real vf_lane(VecF a, int l) { return a.v[l]; }
#undef VF_LANES

#endif

/* vf_max on one lane: a < b ? b : a */
static inline nn_real vf_max1(nn_real a, nn_real b) { return a < b ? b : a; }

/* The largest lane, folded (0 with 1, 2 with 3, then the two) by vf_max1. */
static inline nn_real vf_hmax(VecF v) {
    return vf_max1(vf_max1(vf_lane(v, 0), vf_lane(v, 1)), vf_max1(vf_lane(v, 2), vf_lane(v, 3)));
}

/* acc + a b (no FMA in baseline SIMD128, so mul then add everywhere). */
static inline VecF vf_madd(VecF acc, VecF a, VecF b) { return vf_add(acc, vf_mul(a, b)); }

#ifdef NN_DOUBLE
/* The gradient-check build computes exp and tanh in full double precision. */
static inline VecF vf_exp(VecF x) {
    VecF r;
    for (int l = 0; l < NN_VLEN; l++) r.v[l] = exp(x.v[l]);
    return r;
}
static inline VecF vf_exp_shifted(VecF x) { return vf_exp(x); }
static inline VecF vf_tanh(VecF x) {
    VecF r;
    for (int l = 0; l < NN_VLEN; l++) r.v[l] = tanh(x.v[l]);
    return r;
}
#else
/* exp(x) = 2^k e^t with k = round(x log2 e) and t = x - k ln 2 in
 * [-ln2/2, ln2/2], ln 2 in two parts (Cody-Waite) so t keeps full precision;
 * e^t = 1 + t p(t) by a degree-5 minimax polynomial (relative error 9.2e-8;
 * XNNPACK's rr2-p5 coefficients): about 2 ulp over the range.
 * Rounding: adding 1.5 * 2^23 + 127 leaves k + 127 in the low mantissa bits of
 * n, and those bits shifted into the exponent field are 2^k (the magic
 * number's own bits shift out).
 * One clamp per side and no masks: above 88 it saturates at exp(88) ~ 1.65e38;
 * at -88, k = -127 makes 2^k's bits all 0, so from x ~ -87.68 down (-inf
 * included) exp is exactly 0, and a weight that underflows cannot leak a huge
 * value into a weighted sum. Between -87.68 and -87.34 the result is
 * subnormal. vf_exp_shifted skips the upper clamp, for arguments known to be
 * <= 88 such as the x - max x of a softmax (above 88.7 it returns garbage). */
static inline VecF vf_exp_shifted(VecF x) {
    const VecF magic = vf_splat(12583039.0f); /* 1.5 * 2^23 + 127 */
    VecF xc = vf_max(x, vf_splat(-88.0f));
    VecF n = vf_add(vf_mul(xc, vf_splat(1.44269504088896341f)), magic);
    VecF s = vf_shift_to_exponent(n); /* 2^k */
    n = vf_sub(n, magic);
    VecF t = vf_add(vf_mul(n, vf_splat(-0.693145751953125f)), xc);
    t = vf_add(vf_mul(n, vf_splat(-1.428606765330187e-06f)), t);
    VecF p = vf_madd(vf_splat(4.1897822171e-02f), vf_splat(8.2892905921e-03f), t);
    p = vf_madd(vf_splat(1.6667652130e-01f), p, t);
    p = vf_madd(vf_splat(4.9999150634e-01f), p, t);
    p = vf_madd(vf_splat(9.9999970198e-01f), p, t);
    return vf_madd(s, vf_mul(t, s), p); /* 2^k (1 + t p) */
}
static inline VecF vf_exp(VecF x) { return vf_exp_shifted(vf_min(x, vf_splat(88.0f))); }
/* tanh(x) = 1 - 2 / (exp(2x) + 1): exact limits +-1, absolute error ~1e-7. */
static inline VecF vf_tanh(VecF x) {
    VecF e = vf_exp(vf_add(x, x));
    return vf_sub(vf_splat(1.0f), vf_div(vf_splat(2.0f), vf_add(e, vf_splat(1.0f))));
}
#endif

#endif
