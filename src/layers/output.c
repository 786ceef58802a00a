/* The output layer and its cross-entropy (src/layers/output.h). */
#include "layers/output.h"

#include <math.h>

#include "core/vec.h"

void output_add(OptParams *p, OutputWeights *w, int W, int D, int V) {
    opt_add(p, &w->Wc, (size_t)W * D, W, OPT_INIT_UNIFORM);
    opt_add(p, &w->bc, (size_t)D, 0, OPT_INIT_ZERO);
    opt_add(p, &w->Wout, (size_t)D * V, D, OPT_INIT_UNIFORM);
    opt_add(p, &w->bout, (size_t)V, 0, OPT_INIT_ZERO);
}

void output_forward(nn_real *o, nn_real *probs, const nn_real *x, const OutputWeights *w, int n, int W, int D, int V) {
    vec_gemm_nn(o, D, x, W, w->Wc, D, n, D, W, 0);
    for (int r = 0; r < n; r++) {
        nn_real *orow = o + (size_t)r * D;
        vec_axpy(orow, 1, w->bc, D);
        vec_tanh(orow, orow, D);
    }
    vec_gemm_nn(probs, V, o, D, w->Wout, V, n, V, D, 0);
    for (int r = 0; r < n; r++) {
        nn_real *p = probs + (size_t)r * V;
        vec_axpy(p, 1, w->bout, V);
        nn_real s = vec_exp_sum(p, p, vec_max(p, V), V);
        vec_scale(p, 1 / s, V);
    }
}

void output_backward(nn_real *dx, nn_real *d_o, OutputWeights *g, const nn_real *dlogits, const nn_real *x,
                     const nn_real *o, const OutputWeights *w, int n, int W, int D, int V) {
    /* logits = o Wout + bout */
    for (size_t r = 0; r < (size_t)n; r++) vec_axpy(g->bout, 1, dlogits + r * V, V);
    vec_gemm_tn(g->Wout, V, o, D, dlogits, V, D, V, n, 1);
    vec_gemm_nt(d_o, D, dlogits, V, w->Wout, V, n, D, V, 0);
    /* o = tanh(x Wc + bc): d(x Wc + bc) = d_o (1 - o^2), in place in d_o */
    for (size_t r = 0; r < (size_t)n; r++) {
        nn_real *dr = d_o + r * D;
        const nn_real *orow = o + r * D;
        for (int u = 0; u < D; u++) dr[u] *= 1 - orow[u] * orow[u];
        vec_axpy(g->bc, 1, dr, D);
    }
    vec_gemm_tn(g->Wc, D, x, W, d_o, D, W, D, n, 1);
    vec_gemm_nt(dx, W, d_o, D, w->Wc, D, n, W, D, 1);
}

double crossentropy_forward(const nn_real *probs, int y) {
    nn_real p = probs[y];
    return -log(p > OUTPUT_MIN_PROB ? p : OUTPUT_MIN_PROB);
}

void crossentropy_backward(nn_real *dlogits, const nn_real *probs, int y, nn_real weight, int V) {
    /* weight p - weight onehot(y): the target's term rounds as weight p_y - weight */
    for (int v = 0; v < V; v++) dlogits[v] = weight * probs[v];
    dlogits[y] -= weight;
}

/* The k largest of p (V) in decreasing order. */
void output_top_k(const nn_real *p, int V, int k, int32_t *ids, float *probs) {
    for (int j = 0; j < k; j++) ids[j] = -1, probs[j] = 0;
    for (int v = 0; v < V; v++) {
        int at = k;
        while (at > 0 && (ids[at - 1] < 0 || p[v] > probs[at - 1])) at--;
        if (at == k) continue;
        for (int j = k - 1; j > at; j--) ids[j] = ids[j - 1], probs[j] = probs[j - 1];
        ids[at] = v;
        probs[at] = (float)p[v];
    }
}
