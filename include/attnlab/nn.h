/* attnlab shared definitions: the real type, status codes and the last error. */
#ifndef ATTNLAB_NN_H
#define ATTNLAB_NN_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The engine computes in float. NN_DOUBLE builds the whole core in double
 * (scalar path only): the gradient checks use it for finite differences. */
#ifdef NN_DOUBLE
typedef double nn_real;
#else
typedef float nn_real;
#endif

typedef enum {
    NN_OK = 0,
    NN_ERR_SHAPE = 1,    /* sizes that do not fit together, or zero sizes */
    NN_ERR_VALUE = 2,    /* NaN or infinity in an input, or a bad scalar */
    NN_ERR_ARG = 3,      /* unknown enum (score, normalisation, ...) */
    NN_ERR_PARAM = 4,    /* a parameter the operation needs is missing */
    NN_ERR_LIMIT = 5,    /* a size past a documented limit */
    NN_ERR_ZERO_SUM = 6, /* sum normalisation of scores that sum to zero */
    NN_ERR_NOMEM = 7     /* allocation failed at the API boundary */
} NnStatus;

/* Message of the most recent failure ("" if none). */
const char *nn_last_error(void);

/* Records a printf-style message and returns code (for `return nn_fail(...)`). */
int nn_fail(int code, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

void nn_clear_error(void);

/* Returns the status of expr from the enclosing function unless it is NN_OK. */
#define NN_TRY(expr)                                                                               \
    do {                                                                                           \
        int nn_try_status_ = (expr);                                                               \
        if (nn_try_status_ != NN_OK) return nn_try_status_;                                        \
    } while (0)

/* NN_OK if all n values are finite, else NN_ERR_VALUE naming `what` and the index. */
int nn_check_finite(const char *what, const nn_real *x, size_t n);

#ifdef __cplusplus
}
#endif
#endif
