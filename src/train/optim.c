/* The parameter table and the optimiser shared by the models
 * (src/train/optim.h). */
#include "train/optim.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"

/* Adam's constants (Kingma & Ba's defaults). */
#define ADAM_BETA1 0.9
#define ADAM_BETA2 0.999
#define ADAM_EPS 1e-8

void opt_add(OptParams *p, nn_real **slot, size_t count, int fan_in, int init) {
    p->tensors[p->n_tensors++] = (OptTensor){slot, p->n, count, fan_in, init};
    p->n += count;
}

int opt_alloc(OptParams *p) {
    p->params = calloc(p->n, sizeof(nn_real));
    p->grads = calloc(p->n, sizeof(nn_real));
    p->moments = calloc(2 * p->n, sizeof(nn_real));
    return p->params && p->grads && p->moments ? NN_OK : NN_ERR_NOMEM;
}

void opt_free(OptParams *p) {
    free(p->params);
    free(p->grads);
    free(p->moments);
    free(p->kept);
}

void opt_bind_grads(const OptParams *p, const void *w, void *g, nn_real *grads) {
    /* slots are addresses inside w; the same offset in g is the same field */
    for (int i = 0; i < p->n_tensors; i++) {
        const OptTensor *t = &p->tensors[i];
        size_t field = (size_t)((const char *)t->slot - (const char *)w);
        *(nn_real **)((char *)g + field) = grads + t->offset;
    }
}

void opt_bind(const OptParams *p, void *w, void *g) {
    for (int i = 0; i < p->n_tensors; i++) *p->tensors[i].slot = p->params + p->tensors[i].offset;
    opt_bind_grads(p, w, g, p->grads);
}

void opt_zero_grad(OptParams *p) { memset(p->grads, 0, sizeof(nn_real) * p->n); }

nn_real opt_grad_norm(const OptParams *p) {
    double sq = 0;
    for (size_t i = 0; i < p->n; i++) sq += (double)p->grads[i] * p->grads[i];
    return (nn_real)sqrt(sq);
}

/* One parameter's step; returns 0 when the new values would not be finite.
 * SGD: p -= lr s g. Adam: m = b1 m + (1-b1) s g; v = b2 v + (1-b2) (s g)^2;
 * p -= lr mhat / (sqrt(vhat) + eps), mhat = m / c1, vhat = v / c2. */
typedef struct {
    NnOptimizer optimizer;
    double lr, c1, c2; /* learning rate, Adam's bias corrections 1 - b^t */
    nn_real scale;     /* clipping factor of the gradients */
} UpdateRule;

static inline int param_step(const UpdateRule *u, nn_real g, nn_real *p, nn_real *mo, nn_real *vo) {
    if (u->optimizer == NN_SGD) {
        *p -= (nn_real)u->lr * u->scale * g;
        return isfinite(*p);
    }
    nn_real gr = g * u->scale;
    *mo = (nn_real)(ADAM_BETA1 * *mo + (1 - ADAM_BETA1) * gr);
    *vo = (nn_real)(ADAM_BETA2 * *vo + (1 - ADAM_BETA2) * gr * gr);
    *p -= (nn_real)(u->lr * (*mo / u->c1) / (sqrt(*vo / u->c2) + ADAM_EPS));
    return isfinite(*p) && isfinite(*mo) && isfinite(*vo);
}

int opt_update(OptParams *p, const NnTrainOptions *o, nn_real *norm_out) {
    if (!(o->lr > 0) || !isfinite(o->lr)) return nn_fail(NN_ERR_VALUE, "lr must be a finite number > 0 (got %g)", (double)o->lr);
    if (!(o->clip >= 0) || !isfinite(o->clip)) return nn_fail(NN_ERR_VALUE, "clip must be a finite number >= 0 (got %g)", (double)o->clip);
    if ((unsigned)o->optimizer > NN_SGD) return nn_fail(NN_ERR_ARG, "optimizer: unknown optimiser %d (adam or sgd)", (int)o->optimizer);
    size_t P = p->n;
    nn_real norm = opt_grad_norm(p);
    if (norm_out) *norm_out = norm;
    if (!isfinite(norm)) return nn_fail(NN_ERR_VALUE, "the gradient norm is %g; the step is not taken", (double)norm);
    UpdateRule u = {o->optimizer, o->lr, 1 - pow(ADAM_BETA1, p->steps + 1), 1 - pow(ADAM_BETA2, p->steps + 1),
                    o->clip > 0 && norm > o->clip ? o->clip / norm : 1};
    /* all or nothing: every new value is checked before any is written */
    nn_real *mo = p->moments, *vo = p->moments + P;
    for (size_t i = 0; i < P; i++) {
        nn_real w = p->params[i], mi = mo[i], vi = vo[i];
        if (!param_step(&u, p->grads[i], &w, &mi, &vi))
            return nn_fail(NN_ERR_VALUE, "the update would make weight %zu non-finite; the step is not taken", i);
    }
    for (size_t i = 0; i < P; i++) param_step(&u, p->grads[i], &p->params[i], &mo[i], &vo[i]);
    p->steps++;
    return NN_OK;
}

int opt_snapshot(OptParams *p) {
    size_t P = p->n;
    if (!p->kept && !(p->kept = malloc(sizeof(nn_real) * 3 * P)))
        return nn_fail(NN_ERR_NOMEM, "out of memory for a copy of %zu parameters", P);
    memcpy(p->kept, p->params, sizeof(nn_real) * P);
    memcpy(p->kept + P, p->moments, sizeof(nn_real) * 2 * P);
    p->kept_steps = p->steps;
    return NN_OK;
}

void opt_rollback(OptParams *p) {
    if (!p->kept) return;
    size_t P = p->n;
    memcpy(p->params, p->kept, sizeof(nn_real) * P);
    memcpy(p->moments, p->kept + P, sizeof(nn_real) * 2 * P);
    p->steps = p->kept_steps;
}
