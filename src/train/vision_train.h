/* The VisionTrainer struct, shared by vision_train.c and vision_io.c. Not a public header. */
#ifndef ATTNLAB_VISION_TRAIN_H
#define ATTNLAB_VISION_TRAIN_H

#include "attnlab/vision.h"

#define VTR_MAX_STEPS NN_MAX_TRAIN_STEPS /* optimiser steps per vtr_train call */
#define VTR_MAX_EVAL NN_MAX_EVAL         /* examples per evaluation */

struct VisionTrainer {
    const VisData *data; /* borrowed */
    ImgTaskConfig task;
    VisionModel *model;  /* its configuration's batch: the rows its buffers hold now */
    int batch;           /* the batch it was created with (saved) */
    uint64_t rng;        /* the training stream */
    nn_real *images;     /* (rows, R, Q) */
    int32_t *labels;     /* (rows, T) */
    int32_t *n_labels;   /* (rows) */
    int32_t *pred;       /* (rows, T) */
    /* hard mode's baselines and the model's draws where the last training
     * call found them (what vtr_undo puts back with the weights) */
    double kept_baseline[VIS_MAX_STEPS];
    uint64_t kept_model_rng;
};

/* The model configuration of a task: mc with the task's canvas and answer
 * kind; checks the steps of a multi-digit task and the whole configuration
 * (vis_plan, without allocating), the parameter count in *n_params. */
int vtr_config(const ImgTaskConfig *tc, const VisConfig *mc, VisConfig *c, size_t *n_params);
/* A trainer for a checked configuration c (vtr_config) whose buffers hold
 * `rows` rows for now; the rollback copy is not allocated yet (vtr_keep). */
int vtr_build(VisionTrainer **out, const VisData *d, const ImgTaskConfig *tc, const VisConfig *c, int rows);
/* Allocates the copy a failed training call goes back to. */
int vtr_keep(VisionTrainer *t);
/* One forward and backward pass of the first image of the batch buffers
 * (teacher forced, no sampling): NN_OK when its probabilities, loss and
 * gradient are finite, else NN_ERR_VALUE saying what is not. The weights,
 * baselines and streams are unchanged; the gradients are left zero. */
int vtr_check_forward(VisionTrainer *t);
/* One example of a split (single-label tasks: the label at every step) into row 0..B-1 of the batch buffers. */
int vtr_sample_batch(VisionTrainer *t, VisSplit split, uint64_t *rng, int B);

#endif
