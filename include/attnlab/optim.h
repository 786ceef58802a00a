/* The optimiser options every trainable model takes (seq2seq, the image
 * model): Adam or plain SGD, with clipping by global gradient norm. */
#ifndef ATTNLAB_OPTIM_H
#define ATTNLAB_OPTIM_H

#include "attnlab/nn.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { NN_ADAM = 0, NN_SGD = 1 } NnOptimizer;

typedef struct {
    NnOptimizer optimizer; /* Adam or plain SGD */
    nn_real lr;            /* learning rate, finite and > 0 */
    nn_real clip;          /* max global gradient norm; 0 = no clipping */
} NnTrainOptions;

#ifdef __cplusplus
}
#endif
#endif
