/* The optimiser options every trainable model takes (seq2seq, the image
 * model): Adam or plain SGD, with clipping by global gradient norm. */
#ifndef ATTNLAB_OPTIM_H
#define ATTNLAB_OPTIM_H

#include "attnlab/nn.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Every model's limits for one call: optimiser steps per training call,
 * examples per evaluation (TRAINER_* and VTR_* are these). */
#define NN_MAX_TRAIN_STEPS 100000
#define NN_MAX_EVAL 100000
/* Optimiser steps a model can take in all: its step count is an int32 that
 * Adam's bias correction reads as steps + 1. */
#define NN_MAX_OPT_STEPS 0x7FFFFFFE

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
