/* attnlab shared definitions: the real type, status codes and the last error.
 * Every function of the API that returns int returns an NnStatus; on failure
 * nn_last_error() says what went wrong and where. */
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

#ifdef __cplusplus
}
#endif
#endif
