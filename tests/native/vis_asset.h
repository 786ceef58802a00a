/* A synthetic digit set in the asset's format (include/attnlab/vision.h):
 * n digits of random greys, labelled 0, 1, ..., 9, 0, ... */
#ifndef ATTNLAB_TEST_VIS_ASSET_H
#define ATTNLAB_TEST_VIS_ASSET_H

#include <stdlib.h>
#include <string.h>

#include "check.h"

static inline uint8_t *make_vis_asset(Rng *r, int n, size_t *size) {
    *size = 24 + (size_t)n * (1 + 784);
    uint8_t *b = check_track(malloc(*size));
    memcpy(b, "ATNLDIG", 8);
    uint32_t head[4] = {1, (uint32_t)n, 28, 28};
    for (int i = 0; i < 4; i++)
        for (int k = 0; k < 4; k++) b[8 + 4 * i + k] = (uint8_t)(head[i] >> (8 * k));
    for (int i = 0; i < n; i++) b[24 + i] = (uint8_t)(i % 10);
    for (size_t i = 0; i < (size_t)n * 784; i++) b[24 + n + i] = (uint8_t)rng_int(r, 0, 255);
    return b;
}

#endif
