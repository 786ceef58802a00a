/* Convolution layers of the image encoder, each a forward / backward pair.
 * Images are channels-last: x (H, W, C) row-major, one pixel's channels
 * contiguous, so a 3x3 convolution is im2col (H*W, 9*C) times the weights
 * (9*C, Co) on the packed GEMM of vec.h, and a 1x1 convolution is one GEMM.
 * Weights rows are ordered (ky, kx, ci). Same padding: outside pixels are 0.
 *
 * Dimension letters: H, W the map's size, C input channels, Co output
 * channels, N pixels (H*W) or cells. Nothing here allocates; backward passes
 * accumulate (+=) into dx, dw, db. */
#ifndef ATTNLAB_CONV_H
#define ATTNLAB_CONV_H

#include <stdint.h>

#include "attnlab/nn.h"

/* Reals of im2col scratch a 3x3 convolution needs: H * W * 9 * C. */
static inline long conv_col_size(int H, int W, int C) { return (long)H * W * 9 * C; }

/* y (H, W, Co) = conv3x3(x (H, W, C), w (9C, Co)) + b (Co); col: conv_col_size reals. */
void conv_3x3_forward(nn_real *y, const nn_real *x, const nn_real *w, const nn_real *b, int H, int W, int C, int Co,
                      nn_real *col);
/* dx (H, W, C) += (or NULL), dw (9C, Co) +=, db (Co) += given dy (H, W, Co). */
void conv_3x3_backward(nn_real *dx, nn_real *dw, nn_real *db, const nn_real *dy, const nn_real *x,
                       const nn_real *w, int H, int W, int C, int Co, nn_real *col);
/* The plain six-loop convolution the tests compare against. */
void conv_3x3_forward_ref(nn_real *y, const nn_real *x, const nn_real *w, const nn_real *b, int H, int W, int C,
                          int Co);

/* y = max(x, 0) over n values (y may equal x); dx += dy * [y > 0]. */
void conv_relu_forward(nn_real *y, const nn_real *x, long n);
void conv_relu_backward(nn_real *dx, const nn_real *dy, const nn_real *y, long n);

/* 2x2 max-pool, stride 2: y (H/2, W/2, C) (odd sizes drop the last row or
 * column), idx the argmax's index into x per output (for backward). */
void conv_pool_forward(nn_real *y, int32_t *idx, const nn_real *x, int H, int W, int C);
/* dx (H, W, C) += dy routed to each window's maximum. */
void conv_pool_backward(nn_real *dx, const nn_real *dy, const int32_t *idx, int H, int W, int C);

/* 1x1 convolution over N pixels: y (N, Co) = x (N, C) w (C, Co) + b (Co). */
void conv_1x1_forward(nn_real *y, const nn_real *x, const nn_real *w, const nn_real *b, int N, int C, int Co);
/* dx (N, C) += (or NULL), dw (C, Co) +=, db (Co) +=. */
void conv_1x1_backward(nn_real *dx, nn_real *dw, nn_real *db, const nn_real *dy, const nn_real *x,
                       const nn_real *w, int N, int C, int Co);

#endif
