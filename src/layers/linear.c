/* A plain linear layer (src/layers/linear.h). */
#include "layers/linear.h"

#include <string.h>

#include "core/gemm_parallel.h"
#include "core/vec.h"

static void forward(VecGemmKind kind, nn_real *out, const nn_real *inp, const nn_real *w, const nn_real *b, int N, int IC,
                    int OC) {
    if (b)
        for (int i = 0; i < N; i++) memcpy(out + (size_t)i * OC, b, sizeof(nn_real) * OC);
    const VecGemm g = {kind, out, OC, inp, IC, w, OC, N, OC, IC, b != NULL};
    vec_gemm_parallel(&g, 1);
}

void linear_forward(nn_real *out, const nn_real *inp, const nn_real *w, const nn_real *b, int N, int IC, int OC) {
    forward(VEC_GEMM_NN, out, inp, w, b, N, IC, OC);
}

void linear_forward_packed(nn_real *out, const nn_real *inp, const nn_real *packed, const nn_real *b, int N, int IC,
                           int OC) {
    forward(VEC_GEMM_PACKED, out, inp, packed, b, N, IC, OC);
}

/* y = x W + b:  dx += dy W^T,  dW += x^T dy,  db += sum_rows dy */
void linear_backward(nn_real *dinp, nn_real *dw, nn_real *db, const nn_real *dout, const nn_real *inp,
                     const nn_real *w, int N, int IC, int OC) {
    if (dinp) vec_gemm_nt(dinp, IC, dout, OC, w, OC, N, IC, OC, 1);
    vec_gemm_tn(dw, OC, inp, IC, dout, OC, IC, OC, N, 1);
    if (db)
        for (int i = 0; i < N; i++) vec_axpy(db, 1, dout + (size_t)i * OC, OC);
}

/* dx += dy W^T with W (IC, OC) only in vec_pack's panels: W^T's panels made
 * in scratch (vec_packed_transpose), then one packed product. */
void linear_backward_input_packed(nn_real *dinp, const nn_real *dout, const nn_real *packed, nn_real *scratch, int N,
                                  int IC, int OC) {
    vec_packed_transpose(scratch, packed, OC, IC);
    vec_gemm_packed_parallel(dinp, IC, dout, OC, scratch, N, IC, OC, 1);
}
