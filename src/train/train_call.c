/* The training spine: the one training call and the one evaluation loop (src/train/train_call.h). */
#include "train/train_call.h"

#include <math.h>
#include <string.h>

#include "base/error.h"
#include "layers/model_file.h"

int train_check(const OptParams *p, const NnTrainOptions *o, int steps) {
    NN_TRY(nn_check_size("steps", steps, 1, NN_MAX_TRAIN_STEPS));
    NN_TRY(opt_check_options(o));
    if (p->steps > NN_MAX_OPT_STEPS - steps)
        return nn_fail(NN_ERR_LIMIT, "steps: the model has taken %d steps; %d more would pass the %d it can count",
                       p->steps, steps, NN_MAX_OPT_STEPS);
    return NN_OK;
}

/* The model as the last call found it: weights, moments, counts, draws and
 * whatever else the model keeps. */
static void back_to_snapshot(const TrainAdapter *a) {
    opt_rollback(a->opt);
    *a->stream = a->opt->kept_stream;
    if (a->restore) a->restore(a->ctx);
}

int train_call(const TrainAdapter *a, const NnTrainOptions *o, int steps, int B, float *losses) {
    OptParams *p = a->opt;
    NN_TRY(train_check(p, o, steps));
    NnTrainOptions call = *o;
    if (call.schedule == NN_LR_COSINE && call.decay_steps == 0) call.decay_steps = p->steps + steps;
    NN_TRY(opt_snapshot(p));
    p->kept_stream = *a->stream;
    p->called = 1;
    if (a->keep) a->keep(a->ctx);
    int first = p->steps + 1, st = NN_OK;
    for (int s = 0; s < steps && st == NN_OK; s++) {
        double loss = 0;
        st = a->sample(a->ctx, B);
        if (st == NN_OK) st = a->gradients(a->ctx, B, &loss);
        if (st == NN_OK && !isfinite(loss)) st = nn_fail(NN_ERR_VALUE, "the loss is %g; the step is not taken", loss);
        if (st == NN_OK) st = opt_update(p, &call, NULL);
        if (st == NN_OK) st = model_file_check_weights(p->params, p->n, "weight");
        /* the next step's loss checks each step's weights on a batch; the
         * probe checks the weights the call ends with */
        if (st == NN_OK && s == steps - 1) st = a->probe(a->ctx);
        if (st == NN_ERR_VALUE)
            st = nn_fail(st, "training diverged at step %d (%s); the model is kept as it was before this call; try a "
                             "smaller learning rate (lr is %g)", first + s, nn_last_error(), (double)o->lr);
        if (losses) losses[s] = (float)loss;
    }
    if (st != NN_OK) back_to_snapshot(a);
    return st;
}

int train_undo(const TrainAdapter *a) {
    if (!a->opt->called) return nn_fail(NN_ERR_ARG, "undoTrain: the model has had no training call to undo");
    back_to_snapshot(a);
    return NN_OK;
}

int train_evaluate(const EvalAdapter *a, int split, uint64_t rng, int count, int max, EvalSums *sums) {
    memset(sums, 0, sizeof *sums);
    NN_TRY(nn_check_size("count", count, 1, max));
    int chunk = a->batch;
    NN_TRY(a->reserve(a->ctx, count < chunk ? count : chunk));
    for (int done = 0; done < count;) {
        int B = count - done < chunk ? count - done : chunk;
        NN_TRY(a->run(a->ctx, split, &rng, B, sums));
        done += B;
    }
    return NN_OK;
}
