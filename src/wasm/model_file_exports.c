/* The WASM boundary for model files of any kind (src/layers/model_file.h):
 * what a file holds, from its header, so JS can pick the loader. */
#include <emscripten.h>

#include "layers/model_file.h"

/* *kind: 1 a bare seq2seq model (not loadable from JS), 2 a seq2seq model
 * with its task (loadSeq2Seq), 3 an image model (loadVisionModel), 4 a
 * transformer (loadModel); *version
 * its format version. NN_ERR_VALUE for a file that is none of them or of a
 * version this engine does not read. */
EMSCRIPTEN_KEEPALIVE int attnlab_model_file_kind(const uint8_t *bytes, int size, int32_t *kind, int32_t *version) {
    int k = 0;
    uint32_t v = 0;
    int st = model_file_kind(bytes, size > 0 ? (size_t)size : 0, &k, &v);
    *kind = k;
    *version = (int32_t)v;
    return st;
}
