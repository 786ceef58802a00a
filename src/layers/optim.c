/* The parameter table and the optimiser shared by the models
 * (src/layers/optim.h). */
#include "layers/optim.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/pool.h"
#include "base/rng.h"

/* Adam's constants (Kingma & Ba's defaults); AdamW's second-moment rate is
 * GPT's (a shorter memory suits the transformer's short runs). */
#define ADAM_BETA1 0.9
#define ADAM_BETA2 0.999
#define ADAMW_BETA2 0.99
#define ADAM_EPS 1e-8

void opt_add(OptParams *p, nn_real **slot, size_t count, int fan_in, OptInit init) {
    p->tensors[p->n_tensors++] = (OptTensor){slot, p->n, count, fan_in, init, 0, 0, ""};
    p->n += count;
}

void opt_add_named(OptParams *p, nn_real **slot, size_t count, OptInit init, double bound, int decay, const char *name) {
    OptTensor *t = &p->tensors[p->n_tensors];
    opt_add(p, slot, count, 0, init);
    t->bound = bound;
    t->decay = decay;
    snprintf(t->name, sizeof t->name, "%s", name);
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

int opt_create(OptParams *p, void *w, void *g, uint64_t seed) {
    NN_TRY(opt_alloc(p));
    opt_bind(p, w, g);
    opt_init(p, seed);
    return NN_OK;
}

void opt_init(OptParams *p, uint64_t seed) {
    uint64_t s = seed;
    for (int i = 0; i < p->n_tensors; i++) {
        const OptTensor *t = &p->tensors[i];
        nn_real *x = p->params + t->offset;
        nn_real k = t->init == OPT_INIT_EMBED ? 1
                    : t->fan_in <= 0          ? 0
                    : t->init == OPT_INIT_HE  ? sqrt(6.0 / t->fan_in)
                                              : 1 / sqrt((double)t->fan_in);
        int draw = t->init == OPT_INIT_UNIFORM || t->init == OPT_INIT_HE || t->init == OPT_INIT_EMBED;
        if (t->init == OPT_INIT_DEVIATION) /* the bound in double, as given */
            for (size_t j = 0; j < t->count; j++) x[j] = (nn_real)(t->bound * nn_rng_symmetric(&s));
        else
            for (size_t j = 0; j < t->count; j++) x[j] = draw ? k * nn_rng_symmetric(&s) : t->init == OPT_INIT_ONE;
        if (t->init == OPT_INIT_FORGET) /* gate order i, f, g, o: the second quarter */
            for (size_t j = t->count / 4; j < t->count / 2; j++) x[j] = 1;
    }
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

nn_real *opt_alloc_grads(const OptParams *p, const void *w, void *g) {
    nn_real *grads = calloc(p->n, sizeof(nn_real));
    if (grads) opt_bind_grads(p, w, g, grads);
    return grads;
}

void opt_zero_grad(OptParams *p) { memset(p->grads, 0, sizeof(nn_real) * p->n); }

/* One parameter's step; returns 0 when the new values would not be finite.
 * SGD: p -= lr s g. Adam: m = b1 m + (1-b1) s g; v = b2 v + (1-b2) (s g)^2;
 * p -= lr mhat / (sqrt(vhat) + eps), mhat = m / c1, vhat = v / c2.
 * AdamW: the same moments (its own b2), p -= lr (mhat / (sqrt(vhat) + eps) + wd p),
 * wd the tensor's decay (0 for tensors not marked). */
typedef struct {
    NnOptimizer optimizer;
    double lr, c1, c2; /* learning rate, Adam's bias corrections 1 - b^t */
    nn_real scale;     /* clipping factor of the gradients */
    nn_real wd;        /* AdamW's decay of marked tensors */
} UpdateRule;

static inline int param_step(const UpdateRule *u, nn_real wd, nn_real g, nn_real *p, nn_real *mo, nn_real *vo) {
    if (u->optimizer == NN_SGD) {
        *p -= (nn_real)u->lr * u->scale * g;
        return isfinite(*p);
    }
    nn_real gr = g * u->scale;
    double b2 = u->optimizer == NN_ADAMW ? ADAMW_BETA2 : ADAM_BETA2;
    *mo = (nn_real)(ADAM_BETA1 * *mo + (1 - ADAM_BETA1) * gr);
    *vo = (nn_real)(b2 * *vo + (1 - b2) * gr * gr);
    if (u->optimizer == NN_ADAMW) *p -= (nn_real)(u->lr * ((*mo / u->c1) / (sqrt(*vo / u->c2) + ADAM_EPS) + wd * *p));
    else *p -= (nn_real)(u->lr * (*mo / u->c1) / (sqrt(*vo / u->c2) + ADAM_EPS));
    return isfinite(*p) && isfinite(*mo) && isfinite(*vo);
}

/* ---- the passes over the parameters, range by range ---------------------------- */

enum { PASS_NORM, PASS_CHECK, PASS_WRITE };

/* A pass over p->n parameters in `chunks` contiguous ranges (nn_pool_range);
 * thread tid takes ranges tid, tid + n, ... (all of them on the caller). */
typedef struct {
    OptParams *p;
    const UpdateRule *u;
    int pass, chunks;
    double sq[NN_MAX_THREADS];  /* PASS_NORM: each range's sum of g^2 */
    size_t bad[NN_MAX_THREADS]; /* PASS_CHECK: each range's first weight that would not be finite, or p->n */
} OptPass;

static int pass_task(void *ctx, int tid, int n) {
    OptPass *j = ctx;
    OptParams *p = j->p;
    nn_real *mo = p->moments, *vo = p->moments + p->n;
    for (int c = tid; c < j->chunks; c += n) {
        int b, e;
        nn_pool_range((int)p->n, c, j->chunks, &b, &e);
        size_t i = (size_t)b, end = (size_t)e;
        switch (j->pass) {
        case PASS_NORM: {
            double sq = 0;
            for (; i < end; i++) sq += (double)p->grads[i] * p->grads[i];
            j->sq[c] = sq;
            break;
        }
        case PASS_CHECK:
            j->bad[c] = p->n;
            for (int k = 0; k < p->n_tensors && j->bad[c] == p->n; k++) { /* the range's part of each tensor */
                const OptTensor *t = &p->tensors[k];
                size_t lo = t->offset > i ? t->offset : i, hi = t->offset + t->count < end ? t->offset + t->count : end;
                nn_real wd = t->decay ? j->u->wd : 0;
                for (size_t x = lo; x < hi; x++) {
                    nn_real w = p->params[x], mi = mo[x], vi = vo[x];
                    if (!param_step(j->u, wd, p->grads[x], &w, &mi, &vi)) {
                        j->bad[c] = x;
                        break;
                    }
                }
            }
            break;
        default:
            for (int k = 0; k < p->n_tensors; k++) {
                const OptTensor *t = &p->tensors[k];
                size_t lo = t->offset > i ? t->offset : i, hi = t->offset + t->count < end ? t->offset + t->count : end;
                nn_real wd = t->decay ? j->u->wd : 0;
                for (size_t x = lo; x < hi; x++) param_step(j->u, wd, p->grads[x], &p->params[x], &mo[x], &vo[x]);
            }
            break;
        }
    }
    return NN_OK;
}

/* Runs one pass; `per` multiply-adds per parameter (the pool's threshold reads it). */
static void run_pass(OptPass *j, int pass, double per) {
    j->pass = pass;
    j->chunks = j->p->chunks > 1 ? j->p->chunks : 1;
    if (j->chunks == 1) pass_task(j, 0, 1);
    else nn_pool_run(pass_task, j, per * (double)j->p->n);
}

/* sqrt(sum g^2) in double */
static double grad_norm(const OptParams *p) {
    OptPass j = {(OptParams *)p, NULL, 0, 0, {0}, {0}}; /* the norm pass only reads */
    run_pass(&j, PASS_NORM, 1);
    double sq = j.sq[0];
    for (int c = 1; c < j.chunks; c++) sq += j.sq[c];
    return sqrt(sq);
}

nn_real opt_grad_norm(const OptParams *p) { return (nn_real)grad_norm(p); }

int opt_check_options(const NnTrainOptions *o) {
    if ((unsigned)o->optimizer > NN_ADAMW)
        return nn_fail(NN_ERR_ARG, "optimizer: unknown optimiser %d (adam, sgd or adamw)", (int)o->optimizer);
    if (!(o->lr > 0) || !isfinite(o->lr)) return nn_fail(NN_ERR_VALUE, "lr must be a finite number > 0 (got %g)", (double)o->lr);
    if (!(o->clip >= 0) || !isfinite(o->clip)) return nn_fail(NN_ERR_VALUE, "clip must be a finite number >= 0 (got %g)", (double)o->clip);
    if (!(o->weight_decay >= 0) || !isfinite(o->weight_decay))
        return nn_fail(NN_ERR_VALUE, "weightDecay must be a finite number >= 0 (got %g)", (double)o->weight_decay);
    if ((unsigned)o->schedule > NN_LR_COSINE) return nn_fail(NN_ERR_ARG, "schedule: unknown schedule %d", (int)o->schedule);
    if (!(o->final_lr >= 0 && o->final_lr <= o->lr))
        return nn_fail(NN_ERR_VALUE, "finalLr must be within 0..lr (%g) (got %g)", (double)o->lr, (double)o->final_lr);
    if (o->warmup < 0 || o->decay_steps < 0)
        return nn_fail(NN_ERR_VALUE, "%s must be >= 0 (got %d)", o->warmup < 0 ? "warmup" : "decaySteps",
                       o->warmup < 0 ? o->warmup : o->decay_steps);
    return NN_OK;
}

double opt_lr(const NnTrainOptions *o, int step) {
    if (step < o->warmup) return o->lr * (step + 1.0) / o->warmup;
    if (o->schedule == NN_LR_CONSTANT || o->decay_steps <= o->warmup) return o->lr;
    double x = (double)(step - o->warmup) / (o->decay_steps - o->warmup);
    if (x > 1) x = 1;
    double floor = o->final_lr > 0 ? (double)o->final_lr / o->lr : NN_LR_FLOOR; /* its share of the peak */
    return o->lr * (floor + (1 - floor) * 0.5 * (1 + cos(3.14159265358979323846 * x)));
}

int opt_update(OptParams *p, const NnTrainOptions *o, nn_real *norm_out) {
    NN_TRY(opt_check_options(o));
    size_t P = p->n;
    double norm = grad_norm(p);
    if (norm_out) *norm_out = (nn_real)norm;
    if (!isfinite(norm)) return nn_fail(NN_ERR_VALUE, "the gradient norm is %g; the step is not taken", norm);
    double b2 = o->optimizer == NN_ADAMW ? ADAMW_BETA2 : ADAM_BETA2;
    /* the moments' own count for Adam's bias correction; a resumed model's learning rate ramps up */
    int t = p->moment_steps + 1;
    double lr = opt_lr(o, p->steps);
    if (o->optimizer != NN_SGD && p->moment_steps < p->steps && t < OPT_RESUME_WARMUP) lr *= (double)t / OPT_RESUME_WARMUP;
    UpdateRule u = {o->optimizer, lr, 1 - pow(ADAM_BETA1, t), 1 - pow(b2, t),
                    (nn_real)(o->clip > 0 && norm > o->clip ? o->clip / norm : 1), o->weight_decay};
    /* all or nothing: every new value is checked before any is written; an
     * Adam step costs some 30 multiply-adds' time (a square root, a division) */
    OptPass j = {p, &u, 0, 0, {0}, {0}};
    run_pass(&j, PASS_CHECK, 30);
    for (int c = 0; c < j.chunks; c++) /* the first weight that fails, as one loop would find it */
        if (j.bad[c] < P) return nn_fail(NN_ERR_VALUE, "the update would make weight %zu non-finite; the step is not taken", j.bad[c]);
    run_pass(&j, PASS_WRITE, 30);
    p->steps++;
    p->moment_steps++;
    return NN_OK;
}

int opt_snapshot(OptParams *p) {
    size_t P = p->n;
    if (!p->kept && !(p->kept = malloc(sizeof(nn_real) * 3 * P)))
        return nn_fail(NN_ERR_NOMEM, "out of memory for a copy of %zu parameters", P);
    memcpy(p->kept, p->params, sizeof(nn_real) * P);
    memcpy(p->kept + P, p->moments, sizeof(nn_real) * 2 * P);
    p->kept_steps = p->steps;
    p->kept_moment_steps = p->moment_steps;
    return NN_OK;
}

void opt_rollback(OptParams *p) {
    if (!p->kept) return;
    size_t P = p->n;
    memcpy(p->params, p->kept, sizeof(nn_real) * P);
    memcpy(p->moments, p->kept + P, sizeof(nn_real) * 2 * P);
    p->steps = p->kept_steps;
    p->moment_steps = p->kept_moment_steps;
}
