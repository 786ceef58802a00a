/* The engine's one random number generator: splitmix64 (S. Vigna), integer
 * arithmetic only, so native and WASM builds draw the same numbers from a seed. */
#ifndef ATTNLAB_BASE_RNG_H
#define ATTNLAB_BASE_RNG_H

#include <stdint.h>

#include "attnlab/nn.h"

/* Advances *state and returns 64 random bits. */
static inline uint64_t nn_rng_next(uint64_t *state) {
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Uniform integer in [0, n), n >= 1 (from the top 31 bits). */
static inline int nn_rng_below(uint64_t *state, int n) { return (int)((nn_rng_next(state) >> 33) % (uint64_t)n); }

/* Uniform in [-1, 1) from the top 24 bits: exactly representable, so the same
 * reals natively and in WASM. */
static inline nn_real nn_rng_symmetric(uint64_t *state) {
    return (nn_real)((int32_t)(nn_rng_next(state) >> 40) - (1 << 23)) / (nn_real)(1 << 23);
}

#endif
