/* A model's trainable parameters in one place: the table of its tensors
 * over one block, their gradients, the optimiser's state and step count,
 * and a snapshot to roll a failed call back to. Seq2seq and the image model
 * keep theirs here; each says how its tensors start. Not a public header. */
#ifndef ATTNLAB_LAYERS_OPTIM_H
#define ATTNLAB_LAYERS_OPTIM_H

#include <stdint.h>

#include "attnlab/optim.h"

/* Room in the table; each model checks at compile time that its largest
 * table fits (S2S_MAX_TENSORS, VIS_MAX_TENSORS). */
#define OPT_MAX_TENSORS 104

/* How a tensor starts (opt_init): zeros; uniform(-k, k) with k = 1/sqrt(fan_in);
 * He uniform, k = sqrt(6/fan_in), before a ReLU; uniform(-1, 1) (embeddings);
 * zeros with the LSTM forget-gate biases 1 (remember by default); ones;
 * GPT-2's N(0, std) as a uniform of that deviation, uniform(-k, k) with
 * k = std sqrt(3) given per tensor (opt_add_deviation). */
typedef enum {
    OPT_INIT_ZERO,
    OPT_INIT_UNIFORM,
    OPT_INIT_HE,
    OPT_INIT_EMBED,
    OPT_INIT_FORGET,
    OPT_INIT_ONE,
    OPT_INIT_DEVIATION
} OptInit;

typedef struct {
    nn_real **slot; /* the field of the model's weight view that points at it */
    size_t offset;  /* where it starts in the block, in reals */
    size_t count;   /* its reals */
    int fan_in;     /* inputs per output, for the initial scale (0: none) */
    OptInit init;   /* how it starts */
    double bound;   /* OPT_INIT_DEVIATION: the uniform's half-width k */
    int decay;      /* AdamW decays it (matrices, embeddings) */
    char name[24];  /* its name in the model ("h0.qkv_w"), or "" */
} OptTensor;

typedef struct {
    OptTensor tensors[OPT_MAX_TENSORS]; /* the table, in block order */
    int n_tensors;                      /* entries used */
    size_t n;                           /* reals in params (and in grads) */
    nn_real *params;                    /* (n) all weights, in table order */
    nn_real *grads;                     /* (n) their gradients */
    nn_real *moments;                   /* (2, n) Adam's first and second moments */
    nn_real *kept;                      /* (3, n) opt_snapshot's copy of params and moments, or NULL */
    int steps;                          /* optimiser steps taken */
    int moment_steps;                   /* of them, the steps the moments have seen: fewer than steps in a model
                                         * loaded from a file (saved without its moments), whose moments start at
                                         * zero there (Adam's bias correction counts these, and the learning rate
                                         * ramps up over OPT_RESUME_WARMUP of them) */
    int kept_steps, kept_moment_steps;  /* the two counts at the snapshot */
    uint64_t kept_stream;               /* the training call's draws' state at the snapshot (train_call.c) */
    int called;                         /* a training call kept the snapshot (train_undo has a state to go to) */
    int chunks;                         /* opt_update's passes run in this many contiguous ranges, one
                                         * parallel region each (the model's shard count; 0 or 1: plain loops) */
} OptParams;

/* Appends a tensor of count reals to the table (before opt_alloc); the
 * table has room for the model's largest one (see OPT_MAX_TENSORS). */
void opt_add(OptParams *p, nn_real **slot, size_t count, int fan_in, OptInit init);
/* Appends a named tensor that starts as init (OPT_INIT_DEVIATION: uniform(-bound,
 * bound); ZERO, ONE: constant), and that AdamW decays when `decay` is set. */
void opt_add_named(OptParams *p, nn_real **slot, size_t count, OptInit init, double bound, int decay, const char *name);
/* Allocates params, grads and moments, zeroed: NN_OK, or NN_ERR_NOMEM with
 * no message (the model says what it was creating). */
int opt_alloc(OptParams *p);
void opt_free(OptParams *p);
/* The table's blocks in one call: opt_alloc, opt_bind of the weight view w
 * and gradient view g, opt_init from seed. NN_OK, or NN_ERR_NOMEM with no
 * message (the model says what it was creating). */
int opt_create(OptParams *p, void *w, void *g, uint64_t seed);
/* Writes every tensor's initial values, in table order, from one random
 * stream started at seed (tensors that start constant draw nothing). */
void opt_init(OptParams *p, uint64_t seed);
/* Points every slot of the weight view w into params and the same field of
 * the gradient view g (a struct of the same type) into grads. */
void opt_bind(const OptParams *p, void *w, void *g);
/* Points every field of the gradient view g into another block of p->n
 * reals (a shard's own gradients); w is the weight view the table's slots
 * were registered in. */
void opt_bind_grads(const OptParams *p, const void *w, void *g, nn_real *grads);
/* A shard's own gradient block: p->n zeroed reals, with the gradient view g
 * pointing into it as opt_bind_grads does; NULL when out of memory. */
nn_real *opt_alloc_grads(const OptParams *p, const void *w, void *g);
void opt_zero_grad(OptParams *p);
/* sqrt(sum g^2) over all gradients, accumulated in double (range by range,
 * then the ranges' sums in order, with p->chunks ranges). */
nn_real opt_grad_norm(const OptParams *p);
/* The options' checks (NN_ERR_VALUE / NN_ERR_ARG naming the option). */
int opt_check_options(const NnTrainOptions *o);
/* The learning rate of the model's step `step` (0-based) under o's schedule. */
double opt_lr(const NnTrainOptions *o, int step);
/* Steps over which a resumed model's Adam (or AdamW) learning rate (moments
 * restarted at zero after moment_steps < steps) ramps up from
 * lr / OPT_RESUME_WARMUP to lr (SGD, which keeps no moments, is not ramped): a trained model's first steps with fresh moments would otherwise each
 * move every weight by about lr and throw it off what it learned. */
#define OPT_RESUME_WARMUP 200

/* Clips (global norm) and applies one step at opt_lr(o, p->steps) (ramped
 * for a resumed model, above); the norm
 * before clipping in *norm (or NULL). All or nothing: a bad option, a
 * gradient norm that is not finite, or an update that would make a weight
 * or the optimiser state non-finite returns NN_ERR_VALUE and changes nothing. */
int opt_update(OptParams *p, const NnTrainOptions *o, nn_real *norm);
/* Copies the weights, the moments and the step count aside (NN_ERR_NOMEM if
 * the copy cannot be allocated); opt_rollback puts them back (if any). */
int opt_snapshot(OptParams *p);
void opt_rollback(OptParams *p);

#endif
