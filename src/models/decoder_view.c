/* The weight view of every decoder (decoder_view.h): each model type fills
 * it from its own tensors, and one reader turns a block of any stored
 * matrix, row-major or packed, into row-major numbers. */
#include <stddef.h>

#include "base/error.h"
#include "core/vec.h"
#include "models/decoder_view.h"
#include "models/gpt2_internal.h"
#include "models/transformer_internal.h"

_Static_assert(TF_MAX_LAYERS <= DEC_MAX_LAYERS && TF_MAX_HEADS <= DEC_MAX_HEADS, "the view holds every transformer");

static DecMatrix rows_of(const nn_real *p, int rows, int cols) { return (DecMatrix){p, rows, cols, 0, 0}; }

int dec_view_gpt2(const Gpt2 *m, DecView *v) {
    NN_TRY(gpt2_check_ready(m));
    const Gpt2Config *c = &m->c;
    int C = c->d_model, V = c->vocab;
    *v = (DecView){.layers = c->layers, .heads = c->heads, .d_model = C, .d_head = C / c->heads, .vocab = V};
    /* a checkpoint's Conv1D weights (GPT-NeoX's nn.Linear ones too, transposed on loading, and
     * its query_key_value's head-major rows put in GPT-2's order) are the products' B in panels;
     * a model made here holds them row-major */
    int P = m->packed;
    for (int l = 0; l < c->layers; l++) {
        v->ln1w[l] = m->w.ln1w[l]; /* GPT-NeoX: input_layernorm */
        v->qkv[l] = (DecMatrix){m->w.qkvw[l], C, 3 * C, P, 0};
        v->proj[l] = (DecMatrix){m->w.projw[l], C, C, P, 0};
    }
    v->lnfw = m->w.lnfw;
    v->lnfb = m->w.lnfb;
    v->epsilon = c->epsilon;
    /* the unembedding (lm_head, GPT-NeoX's embed_out, or wte when tied) is packed as the panels of W_U (C, V) */
    v->unembed = (DecMatrix){m->w.unembed, C, V, P, 0};
    v->unembed_bias = m->w.unembed_b;
    v->embed = m->tied ? (DecMatrix){m->w.unembed, V, C, 1, 1} : rows_of(m->w.wte, V, C);
    return NN_OK;
}

void dec_matrix_read(const DecMatrix *x, int r0, int c0, int m, int n, const nn_real *scale, nn_real *out, int ld) {
    /* the stored matrix S (K, N): x itself, or x^T; a panel holds columns [p nr, p nr + nr) of every
     * row of S, row by row, so S(k, col) is at col / nr * K nr + k nr + col % nr. The steps along a
     * row of out are kept as running offsets: no division per element (this reads every head's
     * weights once per later layer). */
    size_t K = (size_t)(x->transposed ? x->cols : x->rows), N = (size_t)(x->transposed ? x->rows : x->cols);
    size_t nr = (size_t)vec_panel_width();
    for (int i = 0; i < m; i++) {
        nn_real g = scale ? scale[r0 + i] : 1;
        nn_real *o = out + (size_t)i * ld;
        if (!x->panels) { /* row-major S: along out's row, S's row (x) or S's column (x^T) */
            const nn_real *p = x->transposed ? x->p + (size_t)c0 * N + (size_t)(r0 + i) : x->p + (size_t)(r0 + i) * N + c0;
            size_t step = x->transposed ? N : 1;
            for (int j = 0; j < n; j++) o[j] = g * p[(size_t)j * step];
        } else if (x->transposed) { /* S(c0 + j, r0 + i): one panel column, nr apart */
            size_t col = (size_t)(r0 + i);
            const nn_real *p = x->p + col / nr * K * nr + (size_t)c0 * nr + col % nr;
            for (int j = 0; j < n; j++) o[j] = g * p[(size_t)j * nr];
        } else { /* S(r0 + i, c0 + j): runs of up to nr within a panel */
            size_t k = (size_t)(r0 + i), col = (size_t)c0;
            for (int j = 0; j < n;) {
                const nn_real *p = x->p + col / nr * K * nr + k * nr;
                for (size_t q = col % nr; q < nr && j < n; q++, j++, col++) o[j] = g * p[q];
            }
        }
    }
}

void dec_view_read(const DecView *v, int l, int h, int which, nn_real *out) {
    int C = v->d_model, D = v->d_head;
    dec_matrix_read(&v->qkv[l], 0, which * C + h * D, C, D, v->ln1w[l], out, D);
}

void dec_view_wo(const DecView *v, int l, int h, nn_real *out) {
    int C = v->d_model, D = v->d_head;
    dec_matrix_read(&v->proj[l], h * D, 0, D, C, NULL, out, C);
}
