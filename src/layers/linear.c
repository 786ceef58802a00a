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
    if (dw) vec_gemm_tn(dw, OC, inp, IC, dout, OC, IC, OC, N, 1);
    if (db)
        for (int i = 0; i < N; i++) vec_axpy(db, 1, dout + (size_t)i * OC, OC);
}

/* dx += dy W^T with W (IC, OC) only in vec_pack's panels: a strip of
 * W^T's columns at a time (LINEAR_STRIP panels) made in scratch
 * (vec_packed_transpose), then that strip's packed product. */
#define LINEAR_STRIP 8

size_t linear_backward_scratch(int IC, int OC) {
    int panels = vec_pack_panels(IC);
    return (size_t)(panels < LINEAR_STRIP ? panels : LINEAR_STRIP) * vec_panel_width() * (size_t)OC;
}

void linear_backward_input_packed(nn_real *dinp, const nn_real *dout, const nn_real *packed, nn_real *scratch, int N,
                                  int IC, int OC) {
    int panels = vec_pack_panels(IC), nr = vec_panel_width();
    for (int q = 0; q < panels; q += LINEAR_STRIP) {
        int last = panels - q < LINEAR_STRIP ? panels : q + LINEAR_STRIP;
        int c0 = q * nr, width = last * nr < IC ? last * nr - c0 : IC - c0;
        vec_packed_transpose(scratch, packed, OC, IC, q, last);
        vec_gemm_packed_parallel(dinp + c0, IC, dout, OC, scratch, N, width, OC, 1);
    }
}

/* dW += x^T dy into W's panels: a strip of LINEAR_STRIP panels' columns at a
 * time made row-major in scratch (one product), then added panel by panel. */
size_t linear_weight_grad_scratch(int IC, int OC) {
    int panels = vec_pack_panels(OC);
    return (size_t)(panels < LINEAR_STRIP ? panels : LINEAR_STRIP) * vec_panel_width() * (size_t)IC;
}

void linear_backward_weight_packed(nn_real *dpacked, nn_real *db, const nn_real *dout, const nn_real *inp,
                                   nn_real *scratch, int N, int IC, int OC) {
    int panels = vec_pack_panels(OC), nr = vec_panel_width();
    for (int q = 0; q < panels; q += LINEAR_STRIP) {
        int last = panels - q < LINEAR_STRIP ? panels : q + LINEAR_STRIP;
        int c0 = q * nr, width = last * nr < OC ? last * nr - c0 : OC - c0;
        VecGemm g = {VEC_GEMM_TN, scratch, width, inp, IC, dout + c0, OC, IC, width, N, 0};
        vec_gemm_parallel(&g, 1); /* the strip's rows split across the pool, one thread's results */
        for (int p = q; p < last; p++) {
            int cols = (p + 1) * nr <= OC ? nr : OC - p * nr;
            nn_real *panel = dpacked + (size_t)p * IC * nr;
            const nn_real *src = scratch + (p - q) * nr;
            for (int k = 0; k < IC; k++)
                for (int j = 0; j < cols; j++) panel[(size_t)k * nr + j] += src[(size_t)k * width + j];
        }
    }
    if (db)
        for (int i = 0; i < N; i++) vec_axpy(db, 1, dout + (size_t)i * OC, OC);
}
