/* A recurrent cell's tensors in a model's parameter table: the views the
 * core's cells (include/attnlab/rnn.h) take, made from a model's weight and
 * gradient views. Not a public header. */
#ifndef ATTNLAB_LAYERS_CELL_H
#define ATTNLAB_LAYERS_CELL_H

#include "attnlab/rnn.h"
#include "layers/optim.h"

typedef struct {
    nn_real *Wx; /* (in, G*H) input weights */
    nn_real *Wh; /* (H, G*H) recurrent weights */
    nn_real *bx; /* (G*H) input bias */
    nn_real *bh; /* (G*H) recurrent bias */
} CellWeights;

/* Appends a cell of `in` inputs and H units to the table (an LSTM's forget
 * gates start at 1). */
void cell_add(OptParams *p, CellWeights *w, RnnCellKind kind, int in, int H);
RnnWeights cell_weights(const CellWeights *w);
RnnGrads cell_grads(const CellWeights *g);

#endif
