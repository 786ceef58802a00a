/* Token embedding, shared by the models: a table row per token id.
 * Dimension letters: n rows (tokens), E embedding width. Not a public header. */
#ifndef ATTNLAB_LAYERS_EMBEDDING_H
#define ATTNLAB_LAYERS_EMBEDDING_H

#include <stddef.h>
#include <stdint.h>

#include "attnlab/nn.h"

/* x (n, E) row r = table[tok[r]] */
void embedding_forward(nn_real *x, const nn_real *table, const int32_t *tok, size_t n, int E);
/* x = table[tok]: dtable[tok[r]] += dx row r, except rows whose token is
 * `skip` (padding, which carries no gradient; -1 skips none). */
void embedding_backward(nn_real *dtable, const nn_real *dx, const int32_t *tok, size_t n, int E, int skip);

#endif
