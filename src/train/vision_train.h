/* The VisionTrainer struct, shared by vision_train.c and vision_io.c. Not a public header. */
#ifndef ATTNLAB_VISION_TRAIN_H
#define ATTNLAB_VISION_TRAIN_H

#include "attnlab/vision.h"

#define VTR_MAX_STEPS 100000 /* optimiser steps per vtr_train call */
#define VTR_MAX_EVAL 100000  /* examples per evaluation */

struct VisionTrainer {
    const VisData *data; /* borrowed */
    ImgTaskConfig task;
    VisionModel *model;
    uint64_t rng;        /* the training stream */
    nn_real *images;     /* (Bm, R, Q) */
    int32_t *labels;     /* (Bm, T) */
    int32_t *n_labels;   /* (Bm) */
    int32_t *pred;       /* (Bm, T) */
};

#endif
