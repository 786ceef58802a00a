/* FNV-1a over bytes, in its 32-bit form (file checksums) and its 64-bit form
 * (task splits). One API: (data, length in bytes). */
#ifndef ATTNLAB_BASE_HASH_H
#define ATTNLAB_BASE_HASH_H

#include <stddef.h>
#include <stdint.h>

#define NN_FNV32_OFFSET 2166136261u
#define NN_FNV32_PRIME 16777619u
#define NN_FNV64_OFFSET 0xcbf29ce484222325ull
#define NN_FNV64_PRIME 0x100000001b3ull

static inline uint32_t nn_fnv1a32(const void *data, size_t n) {
    const uint8_t *p = (const uint8_t *)data;
    uint32_t h = NN_FNV32_OFFSET;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * NN_FNV32_PRIME;
    return h;
}

static inline uint64_t nn_fnv1a64(const void *data, size_t n) {
    const uint8_t *p = (const uint8_t *)data;
    uint64_t h = NN_FNV64_OFFSET;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * NN_FNV64_PRIME;
    return h;
}

#endif
