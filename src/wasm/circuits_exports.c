/* The WASM boundary for the circuit analyses (src/models/circuits.h) of
 * every decoder: a transformer made here (Transformer*, through the decoder
 * it holds) and a checkpoint (Gpt2*), read through the one weight view
 * (decoder_view.h), so the analyses behind these exports are the same code. q, k, v are (L H, L H)
 * and out (L, H) floats of the caller's (web/engine/transformer.js). */
#include <emscripten.h>

#include "base/error.h"
#include "models/circuits.h"
#include "models/transformer_internal.h"
#include "train/transformer_train.h"

EMSCRIPTEN_KEEPALIVE int attnlab_tf_composition_scores(Transformer *t, float *q, float *k, float *v) {
    nn_clear_error();
    DecView view;
    NN_TRY(dec_view_gpt2(&t->model->dec, &view));
    return circ_composition_scores(&view, q, k, v);
}

EMSCRIPTEN_KEEPALIVE int attnlab_tf_copying_scores(Transformer *t, float *out) {
    nn_clear_error();
    DecView view;
    NN_TRY(dec_view_gpt2(&t->model->dec, &view));
    return circ_copying_scores(&view, out);
}

EMSCRIPTEN_KEEPALIVE int attnlab_gpt2_composition_scores(Gpt2 *m, float *q, float *k, float *v) {
    nn_clear_error();
    DecView view;
    NN_TRY(dec_view_gpt2(m, &view));
    return circ_composition_scores(&view, q, k, v);
}

EMSCRIPTEN_KEEPALIVE int attnlab_gpt2_copying_scores(Gpt2 *m, float *out) {
    nn_clear_error();
    DecView view;
    NN_TRY(dec_view_gpt2(m, &view));
    return circ_copying_scores(&view, out);
}
