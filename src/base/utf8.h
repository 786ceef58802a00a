/* UTF-8 (RFC 3629), strictly: a character is the shortest form of a code
 * point in 0..0x10FFFF that is not a surrogate; anything else is not UTF-8.
 * One home for decoding (the seq2seq tasks' texts, the transformer's texts)
 * and encoding (a character's token name). */
#ifndef ATTNLAB_BASE_UTF8_H
#define ATTNLAB_BASE_UTF8_H

#include <stddef.h>
#include <stdint.h>

#define NN_UTF8_MAX 4 /* bytes of one character */

/* The character at s[i] (len bytes in all): its code point, or -1 when the
 * bytes there are not a whole, well-formed character; *n its bytes (1 for -1). */
static inline int32_t nn_utf8_decode(const uint8_t *s, size_t len, size_t i, size_t *n) {
    static const int32_t least[4] = {0, 0x80, 0x800, 0x10000}; /* the smallest code point of each length */
    uint8_t b = s[i];
    int extra = b < 0x80 ? 0 : (b & 0xE0) == 0xC0 ? 1 : (b & 0xF0) == 0xE0 ? 2 : (b & 0xF8) == 0xF0 ? 3 : -1;
    *n = 1;
    if (extra == 0) return b;
    if (extra < 0 || len - i <= (size_t)extra) return -1;
    int32_t cp = b & (0x3F >> extra);
    for (int k = 1; k <= extra; k++) {
        if ((s[i + k] & 0xC0) != 0x80) return -1;
        cp = cp << 6 | (s[i + k] & 0x3F);
    }
    if (cp < least[extra] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return -1;
    *n = (size_t)extra + 1;
    return cp;
}

/* cp (a valid code point) as UTF-8 into out, NUL-terminated; returns its bytes. */
static inline int nn_utf8_encode(uint32_t cp, char out[NN_UTF8_MAX + 1]) {
    int n = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    static const uint8_t lead[5] = {0, 0, 0xC0, 0xE0, 0xF0};
    for (int k = n - 1; k > 0; k--, cp >>= 6) out[k] = (char)(0x80 | (cp & 0x3F));
    out[0] = (char)(lead[n] | cp);
    out[n] = 0;
    return n;
}

#endif
