/* Shared by the libFuzzer targets: a finding is a trap, so libFuzzer saves
 * the input and the run fails. */
#ifndef ATTNLAB_FUZZ_H
#define ATTNLAB_FUZZ_H

#include <stdio.h>

#include "attnlab/nn.h"

#define FUZZ_ASSERT(cond, ...)                                                                     \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "fuzz finding at %s:%d: ", __FILE__, __LINE__);                        \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\n");                                                                 \
            __builtin_trap();                                                                      \
        }                                                                                          \
    } while (0)

/* Every status is NN_OK or a documented NnStatus, with a message when not OK. */
#define FUZZ_STATUS(st)                                                                            \
    do {                                                                                           \
        int fuzz_st_ = (st);                                                                       \
        FUZZ_ASSERT(fuzz_st_ >= NN_OK && fuzz_st_ <= NN_ERR_NOMEM, "unknown status %d", fuzz_st_); \
        FUZZ_ASSERT(fuzz_st_ == NN_OK || nn_last_error()[0], "status %d without a message", fuzz_st_); \
    } while (0)

#endif
