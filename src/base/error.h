/* Recording failures inside the engine (not a public header). The public side,
 * the status codes and nn_last_error(), is include/attnlab/nn.h. */
#ifndef ATTNLAB_BASE_ERROR_H
#define ATTNLAB_BASE_ERROR_H

#include <stddef.h>

#include "attnlab/nn.h"

/* Records a printf-style message and returns code (for `return nn_fail(...)`). */
int nn_fail(int code, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Empties the message: every API entry point starts with it. */
void nn_clear_error(void);

/* Returns the status of expr from the enclosing function unless it is NN_OK. */
#define NN_TRY(expr)                                                                               \
    do {                                                                                           \
        int nn_try_status_ = (expr);                                                               \
        if (nn_try_status_ != NN_OK) return nn_try_status_;                                        \
    } while (0)

/* The one check of a size or count: NN_OK if lo <= value <= hi, else
 * "name: value; it must be within lo..hi", NN_ERR_SHAPE below (too small
 * to be a shape) and NN_ERR_LIMIT above (past what the engine allows). */
int nn_check_size(const char *name, long long value, long long lo, long long hi);

/* NN_OK if all n values are finite, else NN_ERR_VALUE naming `what` and the index. */
int nn_check_finite(const char *what, const nn_real *x, size_t n);
/* The same for a (rows, cols) matrix, naming the element as the JS API does:
 * "queries[3][4] is NaN; values must be finite numbers". */
int nn_check_finite_matrix(const char *what, const nn_real *x, int rows, int cols);

#endif
