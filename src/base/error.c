/* The last error: a status code's message, recorded where the failure is found
 * and read by the JS wrapper (or a native caller) with nn_last_error(). */
#include <math.h>
#include <stdarg.h>
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

int nn_check_finite(const char *what, const nn_real *x, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i]))
            return nn_fail(NN_ERR_VALUE, "%s: element %zu is %s; values must be finite", what, i,
                           isnan(x[i]) ? "NaN" : "infinite");
    return NN_OK;
}
