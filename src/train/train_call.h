/* The training spine every model (seq2seq, images, transformer) runs
 * through an adapter: one training call and one evaluation loop.
 *
 * The training call is all or nothing. The call snapshots the weights, the optimiser's moments and step
 * count (and whatever else the model says it moves), then runs its steps:
 * sample a batch, the model's forward and backward, the shared optimiser's
 * update (src/layers/optim.c) and the weight check; after the last step, a
 * probe forward. A step diverges when its loss, gradient norm or a weight
 * is not finite, or a weight passes MODEL_FILE_MAX_WEIGHT; the last step
 * also when the probe is not finite. Then, as on any failure, the model
 * goes back to where the call found it.
 * A model plugs in with a TrainAdapter.
 *
 * The evaluation loop runs a fixed set of a split's examples (the same draws
 * every call) through the model in batches of its configured size and adds
 * up the loss and the right answers; a model plugs in with an EvalAdapter.
 * Not a public header. */
#ifndef ATTNLAB_TRAIN_TRAIN_CALL_H
#define ATTNLAB_TRAIN_TRAIN_CALL_H

#include <stdint.h>

#include "attnlab/optim.h"
#include "layers/optim.h"

typedef struct {
    OptParams *opt;   /* the model's parameters, gradients, moments and step count (snapshot allocated) */
    uint64_t *stream; /* the training draws' state: kept before the steps, put back on failure */
    void *ctx;        /* the model's own, passed to each hook */
    /* draws the next training batch of B rows (the training stream advances) */
    int (*sample)(void *ctx, int B);
    /* the batch's forward and backward: its mean loss in *loss, the gradients
     * of that loss in opt->grads (zeroed first) */
    int (*gradients)(void *ctx, int B, double *loss);
    /* after the call's last update: NN_OK when a forward pass on a probe input
     * is finite, else NN_ERR_VALUE saying what is not; changes no weight */
    int (*probe)(void *ctx);
    /* what else a call moves (hard attention's baselines and draws): kept
     * before the steps (in the model, to outlive the call: train_undo) and
     * put back on failure or undo; NULL when nothing */
    void (*keep)(void *ctx);
    void (*restore)(void *ctx);
} TrainAdapter;

/* The call's checks alone (a model runs them before it grows its buffers):
 * steps within 1..NN_MAX_TRAIN_STEPS, the options, and room in the model's
 * step count. */
int train_check(const OptParams *p, const NnTrainOptions *o, int steps);

/* `steps` steps (1..NN_MAX_TRAIN_STEPS) of batches of B rows; losses (steps,
 * or NULL) gets each step's mean loss. NN_OK, or a status with the model as
 * it was before the call; a diverged step says which and the learning rate.
 * A cosine schedule with decay_steps 0 decays over this call's steps. */
int train_call(const TrainAdapter *a, const NnTrainOptions *o, int steps, int B, float *losses);

/* Puts the model back where the last train_call found it (the snapshot it
 * keeps after it returns, until the next call): weights, moments, step
 * counts, the training stream and what the adapter's restore puts back.
 * NN_ERR_ARG when no call was made. Undoing a call that failed, or undoing
 * twice, changes nothing more. */
int train_undo(const TrainAdapter *a);

/* What an evaluation adds up over its batches; each model reads its figures
 * from these (a mean loss, token and whole-answer accuracies). */
typedef struct {
    double loss;   /* the loss summed over the scored tokens */
    double scored; /* tokens scored */
    double right;  /* of them, answered right */
    double whole;  /* rows answered right to the last token */
} EvalSums;

typedef struct {
    void *ctx; /* the model's own, passed to each hook */
    /* rows per batch: the model's configured batch, whatever its buffers
     * hold now, so a loaded model evaluates exactly like the one that was saved */
    int batch;
    /* makes room for batches of up to `rows` rows */
    int (*reserve)(void *ctx, int rows);
    /* draws B rows of the split from *rng (which advances), runs them
     * through the model and adds to sums */
    int (*run)(void *ctx, int split, uint64_t *rng, int B, EvalSums *sums);
} EvalAdapter;

/* count examples (1..max) of the split, drawn from the stream that starts
 * at rng, in batches of a->batch rows; sums from 0. NN_OK or the first
 * failing hook's status. */
int train_evaluate(const EvalAdapter *a, int split, uint64_t rng, int count, int max, EvalSums *sums);

#endif
