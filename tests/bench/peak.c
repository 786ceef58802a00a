// The machine's WASM SIMD128 multiply-add peak, measured for npm run bench.
//
// A register-blocked micro-kernel shaped like the inner loop of a GEMM: per
// iteration it loads R = 3 f32x4 vectors x_r from a small L1-resident buffer
// and updates a 3 x 3 block of independent accumulators with
//     acc[r][c] = acc[r][c] + x_r * y_c          (f32x4.mul, then f32x4.add)
// where the y_c (C = 3) stay in registers. The x_r change every iteration, so
// no product is loop-invariant and nothing can be hoisted; the accumulators
// are stored at the end so nothing is optimised away. WASM SIMD128 has no
// fused multiply-add: one mul + one add per lane counts as 2 flops, so an
// iteration is R*C * 4 lanes * 2 = 72 flops.
//
// Why 9 accumulators and not 12: V8's TurboFan allocates at most 15 xmm
// registers on x64 (xmm15 is its scratch). 12 accumulators plus their operands
// spill to the stack, the spills land inside the add chains and the kernel
// runs at ~60% of the rate measured here; 3 x 3 (9 accumulators + 3 y + 1 x +
// 1 product) fits. 9 chains are still enough to hide the add latency on cores
// with two FP add pipes (3 cycles x 2 pipes = 6 in flight).
//
// Built with -O3 -msimd128 and no -ffast-math: LLVM neither reassociates the
// adds nor contracts mul + add.
#include <emscripten/emscripten.h>
#include <wasm_simd128.h>

#define R 3                   // vectors loaded per iteration
#define C 3                   // vectors held in registers
#define STEPS 64              // distinct positions the loop cycles through
#define BUF (R * 4 * STEPS)   // 768 floats = 3 KiB: stays in L1

static float xs[BUF] __attribute__((aligned(16)));
static float ys[C * 4] __attribute__((aligned(16)));
static float out[R * C * 4] __attribute__((aligned(16)));

/** Flops one iteration of peak_run performs. */
EMSCRIPTEN_KEEPALIVE int peak_flops_per_iter(void) { return R * C * 4 * 2; }

/** Values near 1 and 1/2: nothing overflows or goes denormal for billions of iterations. */
EMSCRIPTEN_KEEPALIVE void peak_init(void) {
  for (int i = 0; i < BUF; i++) xs[i] = 1.0f + (float)(i & 7) * 0.0625f;
  for (int i = 0; i < C * 4; i++) ys[i] = 0.5f + (float)i * 0.015625f;
}

/**
 * Runs `iters` iterations; returns the sum of the stored accumulators, which
 * the caller can check (it is positive and finite whenever iters > 0).
 */
EMSCRIPTEN_KEEPALIVE float peak_run(int iters, float scale) {
  const v128_t s = wasm_f32x4_splat(scale);
  const v128_t y0 = wasm_f32x4_mul(wasm_v128_load(ys + 0), s);
  const v128_t y1 = wasm_f32x4_mul(wasm_v128_load(ys + 4), s);
  const v128_t y2 = wasm_f32x4_mul(wasm_v128_load(ys + 8), s);
  v128_t a00 = wasm_f32x4_splat(0.0f), a01 = a00, a02 = a00;
  v128_t a10 = a00, a11 = a00, a12 = a00;
  v128_t a20 = a00, a21 = a00, a22 = a00;
  for (int i = 0; i < iters; i++) {
    const float *p = xs + (i & (STEPS - 1)) * (R * 4);
    const v128_t x0 = wasm_v128_load(p + 0);
    a00 = wasm_f32x4_add(a00, wasm_f32x4_mul(x0, y0));
    a01 = wasm_f32x4_add(a01, wasm_f32x4_mul(x0, y1));
    a02 = wasm_f32x4_add(a02, wasm_f32x4_mul(x0, y2));
    const v128_t x1 = wasm_v128_load(p + 4);
    a10 = wasm_f32x4_add(a10, wasm_f32x4_mul(x1, y0));
    a11 = wasm_f32x4_add(a11, wasm_f32x4_mul(x1, y1));
    a12 = wasm_f32x4_add(a12, wasm_f32x4_mul(x1, y2));
    const v128_t x2 = wasm_v128_load(p + 8);
    a20 = wasm_f32x4_add(a20, wasm_f32x4_mul(x2, y0));
    a21 = wasm_f32x4_add(a21, wasm_f32x4_mul(x2, y1));
    a22 = wasm_f32x4_add(a22, wasm_f32x4_mul(x2, y2));
  }
  wasm_v128_store(out + 0, a00);
  wasm_v128_store(out + 4, a01);
  wasm_v128_store(out + 8, a02);
  wasm_v128_store(out + 12, a10);
  wasm_v128_store(out + 16, a11);
  wasm_v128_store(out + 20, a12);
  wasm_v128_store(out + 24, a20);
  wasm_v128_store(out + 28, a21);
  wasm_v128_store(out + 32, a22);
  float sum = 0.0f;
  for (int i = 0; i < R * C * 4; i++) sum += out[i];
  return sum;
}
