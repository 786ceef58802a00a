/* Convolution, ReLU, max-pool and 1x1 convolution, forward and backward
 * (see conv.h). The 3x3 convolution is im2col + GEMM: col (N, 9C) holds, for
 * every output pixel, its 3x3 neighbourhood (zeros outside), so
 *   y = col . w + b                       (N, Co)
 *   dw += col^T . dy,  db += sum_n dy,  dcol = dy . w^T,  dx += col2im(dcol). */
#include <string.h>

#include "core/conv.h"
#include "core/vec.h"

/* col (H*W, 9C): row p = (i, j) holds x[i+ky-1][j+kx-1][ci] at (ky*3 + kx)*C + ci.
 * For a fixed ky the three kx taps are three neighbouring pixels, contiguous
 * in x, so each (p, ky) is one run of 3C reals (zeros where it leaves the
 * map): plain loops rather than a library copy per tap, which for the first
 * layer (C = 1) would be a call per real. */
static inline __attribute__((always_inline)) void im2col_c(nn_real *col, const nn_real *x, int H, int W, int C) {
    size_t K = (size_t)9 * C, run = (size_t)3 * C;
    for (int i = 0; i < H; i++)
        for (int ky = 0; ky < 3; ky++) {
            int y = i + ky - 1;
            nn_real *dst = col + (size_t)i * W * K + ky * run;
            if (y < 0 || y >= H) {
                for (int j = 0; j < W; j++, dst += K)
                    for (size_t e = 0; e < run; e++) dst[e] = 0;
                continue;
            }
            const nn_real *src = x + (size_t)y * W * C;
            for (int j = 0; j < W; j++, dst += K) {
                if (j == 0 || j == W - 1) { /* a border column: one tap is outside */
                    for (int kx = 0; kx < 3; kx++) {
                        int xx = j + kx - 1;
                        for (int ci = 0; ci < C; ci++)
                            dst[kx * C + ci] = xx < 0 || xx >= W ? 0 : src[(size_t)xx * C + ci];
                    }
                    continue;
                }
                const nn_real *s = src + (size_t)(j - 1) * C;
                for (size_t e = 0; e < run; e++) dst[e] = s[e];
            }
        }
}

/* The first layer's single channel gets its own copy, with runs of 3 reals
 * the compiler unrolls (the generic loops spent more on loop control than on
 * copying there: about a tenth of a training step). */
static void im2col(nn_real *col, const nn_real *x, int H, int W, int C) {
    if (C == 1)
        im2col_c(col, x, H, W, 1);
    else
        im2col_c(col, x, H, W, C);
}

/* dx += col2im(dcol): the transpose of im2col, one run of 3C per (p, ky). */
static void col2im(nn_real *dx, const nn_real *dcol, int H, int W, int C) {
    size_t K = (size_t)9 * C, run = (size_t)3 * C;
    for (int i = 0; i < H; i++)
        for (int ky = 0; ky < 3; ky++) {
            int y = i + ky - 1;
            if (y < 0 || y >= H) continue;
            const nn_real *src = dcol + (size_t)i * W * K + ky * run;
            nn_real *row = dx + (size_t)y * W * C;
            for (int j = 0; j < W; j++, src += K) {
                if (j == 0 || j == W - 1) {
                    for (int kx = 0; kx < 3; kx++) {
                        int xx = j + kx - 1;
                        if (xx < 0 || xx >= W) continue;
                        for (int ci = 0; ci < C; ci++) row[(size_t)xx * C + ci] += src[kx * C + ci];
                    }
                    continue;
                }
                nn_real *d = row + (size_t)(j - 1) * C;
                for (size_t e = 0; e < run; e++) d[e] += src[e];
            }
        }
}

/* Plain loops the compiler vectorises along o: a row is a few vectors (Co
 * of 16 or 32), too short for a call per row. Each y[n][o] + b[o] and each
 * db[o]'s sum in n order round as vec_axpy's did. */
static void add_bias(nn_real *y, const nn_real *b, int N, int Co) {
    for (int n = 0; n < N; n++, y += Co)
        for (int o = 0; o < Co; o++) y[o] += b[o];
}

static void sum_rows(nn_real *db, const nn_real *dy, int N, int Co) {
    for (int n = 0; n < N; n++, dy += Co)
        for (int o = 0; o < Co; o++) db[o] += dy[o];
}

void conv_3x3_forward(nn_real *y, const nn_real *x, const nn_real *w, const nn_real *b, int H, int W, int C, int Co,
                      nn_real *col) {
    int N = H * W;
    im2col(col, x, H, W, C);
    vec_gemm_nn(y, Co, col, 9 * C, w, Co, N, Co, 9 * C, 0);
    add_bias(y, b, N, Co);
}

void conv_3x3_backward(nn_real *dx, nn_real *dw, nn_real *db, const nn_real *dy, const nn_real *x,
                       const nn_real *w, int H, int W, int C, int Co, nn_real *col) {
    int N = H * W, K = 9 * C;
    im2col(col, x, H, W, C); /* the forward's col, rebuilt rather than kept */
    vec_gemm_tn(dw, Co, col, K, dy, Co, K, Co, N, 1);
    sum_rows(db, dy, N, Co);
    if (!dx) return;
    /* col's lifetime as the forward's im2col ends here; it now holds dcol = dy . w^T */
    vec_gemm_nt(col, K, dy, Co, w, Co, N, K, Co, 0);
    col2im(dx, col, H, W, C);
}

void conv_3x3_forward_ref(nn_real *y, const nn_real *x, const nn_real *w, const nn_real *b, int H, int W, int C,
                          int Co) {
    for (int i = 0; i < H; i++)
        for (int j = 0; j < W; j++)
            for (int o = 0; o < Co; o++) {
                double s = b[o];
                for (int ky = 0; ky < 3; ky++)
                    for (int kx = 0; kx < 3; kx++) {
                        int yy = i + ky - 1, xx = j + kx - 1;
                        if (yy < 0 || yy >= H || xx < 0 || xx >= W) continue;
                        for (int c = 0; c < C; c++)
                            s += (double)x[((size_t)yy * W + xx) * C + c] * w[((size_t)(ky * 3 + kx) * C + c) * Co + o];
                    }
                y[((size_t)i * W + j) * Co + o] = (nn_real)s;
            }
}

void conv_relu_forward(nn_real *y, const nn_real *x, long n) {
    for (long i = 0; i < n; i++) y[i] = x[i] > 0 ? x[i] : 0;
}

void conv_relu_backward(nn_real *dx, const nn_real *dy, const nn_real *y, long n) {
    for (long i = 0; i < n; i++)
        if (y[i] > 0) dx[i] += dy[i];
}

/* Each window's four inputs in the order (0,0), (0,1), (1,0), (1,1), the first
 * of equal maxima kept; pointers to the four rows of channels, so the inner
 * loop runs along c with no index arithmetic. */
void conv_pool_forward(nn_real *y, int32_t *idx, const nn_real *x, int H, int W, int C) {
    int Hp = H / 2, Wp = W / 2;
    int32_t right = C, down = W * C;
    for (int i = 0; i < Hp; i++)
        for (int j = 0; j < Wp; j++) {
            int32_t at0 = (int32_t)(((size_t)(2 * i) * W + 2 * j) * C);
            const nn_real *p00 = x + at0, *p01 = p00 + right, *p10 = p00 + down, *p11 = p10 + right;
            size_t o = ((size_t)i * Wp + j) * C;
            for (int c = 0; c < C; c++) {
                nn_real v = p00[c];
                int32_t at = 0;
                if (p01[c] > v) v = p01[c], at = right;
                if (p10[c] > v) v = p10[c], at = down;
                if (p11[c] > v) v = p11[c], at = down + right;
                y[o + c] = v;
                idx[o + c] = at0 + at + c;
            }
        }
}

void conv_pool_backward(nn_real *dx, const nn_real *dy, const int32_t *idx, int H, int W, int C) {
    size_t n = (size_t)(H / 2) * (W / 2) * C;
    for (size_t o = 0; o < n; o++) dx[idx[o]] += dy[o];
}

void conv_1x1_forward(nn_real *y, const nn_real *x, const nn_real *w, const nn_real *b, int N, int C, int Co) {
    vec_gemm_nn(y, Co, x, C, w, Co, N, Co, C, 0);
    add_bias(y, b, N, Co);
}

void conv_1x1_backward(nn_real *dx, nn_real *dw, nn_real *db, const nn_real *dy, const nn_real *x,
                       const nn_real *w, int N, int C, int Co) {
    vec_gemm_tn(dw, Co, x, C, dy, Co, C, Co, N, 1);
    sum_rows(db, dy, N, Co);
    if (dx) vec_gemm_nt(dx, C, dy, Co, w, Co, N, C, Co, 1);
}
