/* A recurrent cell's tensors (src/layers/cell.h). */
#include "layers/cell.h"

void cell_add(OptParams *p, CellWeights *w, RnnCellKind kind, int in, int H) {
    int GH = rnn_gates(kind) * H;
    opt_add(p, &w->Wx, (size_t)in * GH, in, OPT_INIT_UNIFORM);
    opt_add(p, &w->Wh, (size_t)H * GH, H, OPT_INIT_UNIFORM);
    opt_add(p, &w->bx, (size_t)GH, 0, kind == RNN_CELL_LSTM ? OPT_INIT_FORGET : OPT_INIT_ZERO);
    opt_add(p, &w->bh, (size_t)GH, 0, OPT_INIT_ZERO);
}

RnnWeights cell_weights(const CellWeights *w) { return (RnnWeights){w->Wx, w->Wh, w->bx, w->bh}; }
RnnGrads cell_grads(const CellWeights *g) { return (RnnGrads){g->Wx, g->Wh, g->bx, g->bh}; }
