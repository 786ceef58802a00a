/* Little-endian integers in byte buffers (the model file formats). Each call
 * reads or writes at *p and advances it; callers check the length first. */
#ifndef ATTNLAB_BASE_BYTES_H
#define ATTNLAB_BASE_BYTES_H

#include <stdint.h>
#include <string.h>

static inline void nn_put_le(uint8_t **p, uint64_t v, int bytes) {
    for (int i = 0; i < bytes; i++) *(*p)++ = (uint8_t)(v >> (8 * i));
}

static inline uint64_t nn_get_le(const uint8_t **p, int bytes) {
    uint64_t v = 0;
    for (int i = 0; i < bytes; i++) v |= (uint64_t)*(*p)++ << (8 * i);
    return v;
}

static inline void nn_put_u32(uint8_t **p, uint32_t v) { nn_put_le(p, v, 4); }
static inline void nn_put_u64(uint8_t **p, uint64_t v) { nn_put_le(p, v, 8); }
static inline uint32_t nn_get_u32(const uint8_t **p) { return (uint32_t)nn_get_le(p, 4); }
static inline uint64_t nn_get_u64(const uint8_t **p) { return nn_get_le(p, 8); }

/* IEEE binary32 through its bit pattern (the format stores float32 whatever nn_real is). */
static inline void nn_put_f32(uint8_t **p, float x) {
    uint32_t u;
    memcpy(&u, &x, 4);
    nn_put_u32(p, u);
}
static inline float nn_get_f32(const uint8_t **p) {
    uint32_t u = nn_get_u32(p);
    float x;
    memcpy(&x, &u, 4);
    return x;
}

#endif
