/* Recurrent cells, one time step for a batch, forward and backward.
 *
 * Row-vector convention: a = x Wx + bx + h Wh + bh, with Wx (in, G*H),
 * Wh (H, G*H), gate blocks of H columns each. G = 1 (RNN), 3 (GRU), 4 (LSTM).
 *   RNN   h' = tanh(a)
 *   GRU   r = s(a_r), z = s(a_z), n = tanh(ax_n + bx_n + r * (ah_n + bh_n)),
 *         h' = (1 - z) * n + z * h                       (PyTorch's GRU)
 *   LSTM  i, f, g, o = s, s, tanh, s of a;  c' = f * c + i * g;  h' = o * tanh(c')
 * Rows whose mask is 0 carry their state unchanged (padding past a sequence's end).
 * Backward passes accumulate into gradients. */
#ifndef ATTNLAB_RNN_H
#define ATTNLAB_RNN_H

#include <stddef.h>
#include <stdint.h>

#include "attnlab/nn.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { RNN_CELL_RNN = 0, RNN_CELL_GRU = 1, RNN_CELL_LSTM = 2, RNN_CELL_COUNT = 3 } RnnCellKind;

/* Gate blocks per cell: 1, 3, 4. */
int rnn_gates(RnnCellKind kind);

typedef struct {
    const nn_real *Wx; /* (in, G*H) */
    const nn_real *Wh; /* (H, G*H) */
    const nn_real *bx; /* (G*H) */
    const nn_real *bh; /* (G*H) */
} RnnWeights;

typedef struct {
    nn_real *Wx; /* dL/dWx (+=), (in, G*H) */
    nn_real *Wh; /* dL/dWh (+=), (H, G*H) */
    nn_real *bx; /* dL/dbx (+=), (G*H) */
    nn_real *bh; /* dL/dbh (+=), (G*H) */
} RnnGrads;

/* Scratch one step needs, forward or backward: 2 * B * G * H. */
size_t rnn_step_scratch(RnnCellKind kind, int B, int H);

/* What one step saves for its backward: (B, S) where S = rnn_step_cache(kind, H). */
int rnn_step_cache(RnnCellKind kind, int H);

/* One step. x (B, in) rows at stride ldx; h, c (B, H) the previous state (c
 * only for LSTM, else NULL); writes h_out, c_out (B, H) and cache (B, S).
 * mask (B) or NULL: rows with mask 0 copy h (and c) through.
 * scratch: rnn_step_scratch(kind, B, H) reals. */
void rnn_step_forward(RnnCellKind kind, int B, int in, int H, const RnnWeights *w,
                      nn_real *h_out,        /* (B, H) */
                      nn_real *c_out,        /* (B, H) LSTM, else NULL */
                      nn_real *cache,        /* (B, S) */
                      const nn_real *x, int ldx, /* (B, in) */
                      const nn_real *h,      /* (B, H) */
                      const nn_real *c,      /* (B, H) LSTM, else NULL */
                      const uint8_t *mask,   /* (B) or NULL */
                      nn_real *scratch);

/* Backward of one step: given dh_out (and dc_out), accumulates dx (B, in)
 * at stride lddx (may be NULL), and writes (overwrites) dh, dc for the
 * previous state. scratch: rnn_step_scratch(kind, B, H) reals. */
void rnn_step_backward(RnnCellKind kind, int B, int in, int H, const RnnWeights *w, RnnGrads *g,
                       nn_real *dx, int lddx,  /* (B, in) += or NULL */
                       nn_real *dh,            /* (B, H) = */
                       nn_real *dc,            /* (B, H) = (LSTM) */
                       const nn_real *dh_out,  /* (B, H) */
                       const nn_real *dc_out,  /* (B, H) LSTM, else NULL */
                       const nn_real *cache, const nn_real *x, int ldx,
                       const nn_real *h, const nn_real *c, const uint8_t *mask,
                       nn_real *scratch);

#ifdef __cplusplus
}
#endif
#endif
