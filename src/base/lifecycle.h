/* The two ends every _create / _destroy pair shares: handing a built object
 * out (or destroying it when the last step failed), and freeing its buffers. */
#ifndef ATTNLAB_BASE_LIFECYCLE_H
#define ATTNLAB_BASE_LIFECYCLE_H

#include <stddef.h>
#include <stdlib.h>

#include "attnlab/nn.h"

/* free() on each of n pointers (NULL ones too, as free allows). */
static inline void nn_free_each(void *const *p, size_t n) {
    for (size_t i = 0; i < n; i++) free(p[i]);
}

/* Frees every pointer listed: NN_FREE_ALL(m->acts, m->ints, m). */
#define NN_FREE_ALL(...) \
    nn_free_each((void *const[]){__VA_ARGS__}, sizeof((void *const[]){__VA_ARGS__}) / sizeof(void *))

/* A create function's last line: NN_OK hands m out through *out, any other
 * status destroys m and is returned. st is read twice: pass a variable. */
#define NN_CREATED(out, m, st, destroy) ((st) == NN_OK ? (*(out) = (m), NN_OK) : ((destroy)(m), (st)))

#endif
