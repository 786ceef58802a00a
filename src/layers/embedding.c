/* Token embedding (src/layers/embedding.h). */
#include "layers/embedding.h"

#include <string.h>

#include "core/vec.h"

void embedding_forward(nn_real *x, const nn_real *table, const int32_t *tok, size_t n, int E) {
    for (size_t r = 0; r < n; r++) memcpy(x + r * E, table + (size_t)tok[r] * E, sizeof(nn_real) * E);
}

void embedding_backward(nn_real *dtable, const nn_real *dx, const int32_t *tok, size_t n, int E, int skip) {
    for (size_t r = 0; r < n; r++)
        if (tok[r] != skip) vec_axpy(dtable + (size_t)tok[r] * E, 1, dx + r * E, E);
}
