/* The optimiser options every trainable model takes (seq2seq, the image
 * model, the transformer): Adam, AdamW or plain SGD, with clipping by global
 * gradient norm, an optional linear warm-up and a cosine decay. */
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

/* Adam: Kingma & Ba's (beta1 0.9, beta2 0.999). AdamW: Loshchilov & Hutter's
 * decoupled weight decay, with GPT-style moment rates (0.9, 0.99); the decay
 * applies to the tensors a model marks (matrices and embeddings, not biases
 * or LayerNorm gains). SGD: p -= lr g. */
typedef enum { NN_ADAM = 0, NN_SGD = 1, NN_ADAMW = 2 } NnOptimizer;

/* The learning rate over the steps: constant, or a cosine from lr down to
 * final_lr (0: NN_LR_FLOOR lr) at step decay_steps (flat after it); either
 * after `warmup` steps of linear warm-up counted from the model's first step. */
typedef enum { NN_LR_CONSTANT = 0, NN_LR_COSINE = 1 } NnSchedule;
#define NN_LR_FLOOR 0.1

typedef struct {
    NnOptimizer optimizer; /* Adam, SGD or AdamW */
    nn_real lr;            /* (peak) learning rate, finite and > 0 */
    nn_real clip;          /* max global gradient norm; 0 = no clipping */
    nn_real weight_decay;  /* AdamW's decoupled decay of the marked tensors, finite and >= 0 */
    NnSchedule schedule;   /* constant (0) or cosine */
    int warmup;            /* steps of linear warm-up, >= 0 */
    int decay_steps;       /* cosine: the model's step where the decay reaches its end, >= 0
                            * (0: the end of the training call) */
    nn_real final_lr;      /* cosine: the rate at decay_steps, 0..lr (0: NN_LR_FLOOR lr) */
} NnTrainOptions;

#ifdef __cplusplus
}
#endif
#endif
