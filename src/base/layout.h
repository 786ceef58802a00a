/* Size tables: one allocation carved into named buffers. Each buffer starts
 * at a multiple of NN_LAYOUT_ALIGN reals (16 bytes in float), so vector loads
 * of any buffer start aligned. Usage:
 *     NnLayout l = {0};
 *     s.scores = nn_layout_take(&l, n_q * n_k);   offsets, in reals
 *     s.total = l.size;                           reals to allocate */
#ifndef ATTNLAB_BASE_LAYOUT_H
#define ATTNLAB_BASE_LAYOUT_H

#include <stddef.h>

#include "attnlab/nn.h"

#define NN_LAYOUT_ALIGN 4 /* reals */

typedef struct {
    size_t size; /* reals reserved so far (the next buffer's offset) */
} NnLayout;

/* Reserves count reals (0 is allowed) and returns their offset. */
static inline size_t nn_layout_take(NnLayout *l, size_t count) {
    size_t at = l->size;
    l->size += (count + NN_LAYOUT_ALIGN - 1) & ~(size_t)(NN_LAYOUT_ALIGN - 1);
    return at;
}

/* The same reals as a pointer into the block at base, or NULL while base is
 * NULL (a first pass that only counts the size). */
static inline nn_real *nn_layout_at(NnLayout *l, nn_real *base, size_t count) {
    size_t at = nn_layout_take(l, count);
    return base ? base + at : NULL;
}

#endif
