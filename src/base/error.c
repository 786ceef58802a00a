/* The last error: a status code's message, recorded where the failure is found
 * and read by the JS wrapper (or a native caller) with nn_last_error(). */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"

static char last_error[256];

const char *nn_last_error(void) { return last_error; }

void nn_clear_error(void) { last_error[0] = '\0'; }

/* Formats into a temporary first: callers may wrap the previous message,
 * nn_fail(st, "model file: %s", nn_last_error()). */
int nn_fail(int code, const char *fmt, ...) {
    char message[sizeof last_error];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    memcpy(last_error, message, sizeof message);
    return code;
}

/* 1 if any of x[0..n) may be NaN or infinite. A float is not finite exactly
 * when its exponent bits are all set; adding one to that field then carries
 * into the sign bit. Integer and/add/or with no branch: the compiler
 * vectorises it (a float test could not be, with no -ffast-math to reorder
 * it), so the usual all-finite case costs one pass at memory speed. The
 * double build has no such pass: it goes to the naming loop directly. */
static int any_not_finite(const nn_real *x, size_t n) {
#ifdef NN_DOUBLE
    (void)x, (void)n;
    return 1;
#else
    const uint32_t exponent = 0x7f800000u, one = 0x00800000u;
    uint32_t carry = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t bits;
        memcpy(&bits, x + i, sizeof bits);
        carry |= (bits & exponent) + one;
    }
    return (carry & 0x80000000u) != 0;
#endif
}

/* ERR_VALUE naming the first non-finite x[i] (some i < n): as element i,
 * or as [row][col] of a matrix of `cols` columns when cols > 0. */
static int name_not_finite(const char *what, const nn_real *x, size_t n, size_t cols) {
    size_t i = 0;
    while (i < n && isfinite(x[i])) i++;
    if (i == n) return NN_OK;
    const char *kind = isnan(x[i]) ? "NaN" : x[i] > 0 ? "Infinity" : "-Infinity";
    if (cols == 0) return nn_fail(NN_ERR_VALUE, "%s: element %zu is %s; values must be finite", what, i, kind);
    return nn_fail(NN_ERR_VALUE, "%s[%zu][%zu] is %s; values must be finite numbers", what, i / cols, i % cols, kind);
}

int nn_check_finite(const char *what, const nn_real *x, size_t n) {
    return any_not_finite(x, n) ? name_not_finite(what, x, n, 0) : NN_OK;
}

int nn_check_finite_matrix(const char *what, const nn_real *x, int rows, int cols) {
    size_t n = (size_t)rows * (size_t)cols;
    return any_not_finite(x, n) ? name_not_finite(what, x, n, (size_t)cols) : NN_OK;
}

int nn_check_size(const char *name, long long value, long long lo, long long hi) {
    if (value >= lo && value <= hi) return NN_OK;
    return nn_fail(value < lo ? NN_ERR_SHAPE : NN_ERR_LIMIT, "%s: %lld; it must be within %lld..%lld", name, value, lo, hi);
}
