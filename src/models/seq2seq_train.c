/* Training: the model's forward and backward as its layers in order and in
 * reverse, the cross-entropy loss, and the optimiser (Adam or SGD with
 * clipping by global norm). Shapes use the letters of seq2seq_internal.h. */
#include <math.h>
#include <string.h>

#include "core/vec.h"
#include "models/seq2seq_internal.h"

/* Adam's constants (Kingma & Ba's defaults). */
#define ADAM_BETA1 0.9
#define ADAM_BETA2 0.999
#define ADAM_EPS 1e-8

/* ---- loss ------------------------------------------------------------------ */

/* loss = -(1/count) sum log p_target over each row's out_len targets (PAD past them). */
static nn_real loss_forward(Seq2Seq *m, int B, int U, const int32_t *out_ids, const int32_t *out_len) {
    const nn_real *probs = m->a.probs; /* (B, U, V) */
    int V = m->c.out_vocab;
    double total = 0;
    int count = 0;
    for (int b = 0; b < B; b++)
        for (int t = 0; t < out_len[b]; t++) {
            nn_real p = probs[((size_t)b * U + t) * V + out_ids[(size_t)b * m->c.max_out + t]];
            total -= log(p > S2S_MIN_PROB ? p : S2S_MIN_PROB);
            count++;
        }
    m->count = count;
    return (nn_real)(total / count);
}

/* d_logits (B, U, V) = (p - onehot(target)) / count on targets, 0 on padding. */
static void loss_backward(Seq2Seq *m, int B, int U, const int32_t *out_ids, const int32_t *out_len) {
    int V = m->c.out_vocab;
    nn_real inv = (nn_real)1 / m->count;
    for (int b = 0; b < B; b++)
        for (int t = 0; t < U; t++) {
            nn_real *d = m->a.d_logits + ((size_t)b * U + t) * V;
            if (t >= out_len[b]) {
                memset(d, 0, sizeof(nn_real) * V);
                continue;
            }
            memcpy(d, m->a.probs + ((size_t)b * U + t) * V, sizeof(nn_real) * V);
            d[out_ids[(size_t)b * m->c.max_out + t]] -= 1;
            vec_scale(d, inv, V);
        }
}

/* ---- the model, layer by layer ----------------------------------------------------- */

/* Keeps the batch for backward and sets this batch's B, T, U. */
static void keep_batch(Seq2Seq *m, int B, const int32_t *in_ids, const int32_t *in_len, const int32_t *out_ids,
                       const int32_t *out_len) {
    const S2sConfig *c = &m->c;
    int T = 0, U = 0;
    for (int b = 0; b < B; b++) {
        T = in_len[b] > T ? in_len[b] : T;
        U = out_len[b] > U ? out_len[b] : U;
    }
    m->B = B;
    m->T = c->attention == ATTN_SCORE_LOCATION ? c->fixed_in : T;
    m->U = U;
    memcpy(m->batch.in_ids, in_ids, sizeof(int32_t) * (size_t)B * c->max_in);
    memcpy(m->batch.in_len, in_len, sizeof(int32_t) * B);
    memcpy(m->batch.out_ids, out_ids, sizeof(int32_t) * (size_t)B * c->max_out);
    memcpy(m->batch.out_len, out_len, sizeof(int32_t) * B);
}

int s2s_forward(Seq2Seq *m, int B, const int32_t *in_ids, const int32_t *in_len, const int32_t *out_ids,
                const int32_t *out_len, nn_real *loss) {
    nn_clear_error();
    NN_TRY(s2s_check_batch(m, B, in_ids, in_len, out_ids, out_len));
    keep_batch(m, B, in_ids, in_len, out_ids, out_len);
    const S2sBatch *k = &m->batch;
    int T = m->T, U = m->U;
    S2sActs *a = &m->a;
    m->have_forward = 0;
    s2s_encoder_forward(m, B, T, k->in_ids, k->in_len);
    s2s_decoder_forward(m, B, U, k->out_ids, k->out_len);
    if (m->c.attention >= 0) NN_TRY(s2s_attention_forward(m, B, T, U, k->in_len));
    s2s_concat_forward(m, B * U, a->cat, a->ctx, a->query);
    s2s_output_forward(m, B * U, a->cat, a->o, a->probs);
    *loss = loss_forward(m, B, U, k->out_ids, k->out_len);
    m->have_forward = 1;
    return NN_OK;
}

int s2s_backward(Seq2Seq *m) {
    if (!m->have_forward) return nn_fail(NN_ERR_ARG, "backward: call forward first");
    const S2sBatch *k = &m->batch;
    loss_backward(m, m->B, m->U, k->out_ids, k->out_len);
    return s2s_backward_logits(m);
}

int s2s_backward_logits(Seq2Seq *m) {
    const S2sBatch *k = &m->batch;
    int B = m->B, T = m->T, U = m->U;
    s2s_output_backward(m, B * U);
    if (m->c.attention >= 0) NN_TRY(s2s_attention_backward(m, B, T, U, k->in_len));
    else memset(m->a.d_enc_out[m->c.layers - 1], 0, sizeof(nn_real) * (size_t)B * T * m->D);
    s2s_decoder_backward(m, B, U);
    s2s_encoder_backward(m, B, T, k->in_len);
    m->have_forward = 0;
    return NN_OK;
}

/* ---- optimiser ----------------------------------------------------------- */

/* One parameter's step; returns 0 when the new values would not be finite.
 * SGD: p -= lr s g. Adam: m = b1 m + (1-b1) s g; v = b2 v + (1-b2) (s g)^2;
 * p -= lr mhat / (sqrt(vhat) + eps), mhat = m / c1, vhat = v / c2. */
typedef struct {
    S2sOptimizer optimizer;
    double lr, c1, c2; /* learning rate, Adam's bias corrections 1 - b^t */
    nn_real scale;     /* clipping factor of the gradients */
} UpdateRule;

static inline int param_step(const UpdateRule *u, nn_real g, nn_real *p, nn_real *mo, nn_real *vo) {
    if (u->optimizer == S2S_SGD) {
        *p -= (nn_real)u->lr * u->scale * g;
        return isfinite(*p);
    }
    nn_real gr = g * u->scale;
    *mo = (nn_real)(ADAM_BETA1 * *mo + (1 - ADAM_BETA1) * gr);
    *vo = (nn_real)(ADAM_BETA2 * *vo + (1 - ADAM_BETA2) * gr * gr);
    *p -= (nn_real)(u->lr * (*mo / u->c1) / (sqrt(*vo / u->c2) + ADAM_EPS));
    return isfinite(*p) && isfinite(*mo) && isfinite(*vo);
}

int s2s_update(Seq2Seq *m, const S2sTrainOptions *o, nn_real *norm_out) {
    if (!(o->lr > 0) || !isfinite(o->lr)) return nn_fail(NN_ERR_VALUE, "lr must be a finite number > 0 (got %g)", (double)o->lr);
    if (!(o->clip >= 0) || !isfinite(o->clip)) return nn_fail(NN_ERR_VALUE, "clip must be a finite number >= 0 (got %g)", (double)o->clip);
    if (m->steps >= S2S_MAX_STEPS)
        return nn_fail(NN_ERR_LIMIT, "steps: the model has taken %d steps, the most it can count", m->steps);
    size_t P = m->n_params;
    double sq = 0;
    for (size_t i = 0; i < P; i++) sq += (double)m->grads[i] * m->grads[i];
    nn_real norm = (nn_real)sqrt(sq);
    if (norm_out) *norm_out = norm;
    if (!isfinite(norm)) return nn_fail(NN_ERR_VALUE, "the gradient norm is %g; the step is not taken", (double)norm);
    UpdateRule u = {o->optimizer, o->lr, 1 - pow(ADAM_BETA1, m->steps + 1), 1 - pow(ADAM_BETA2, m->steps + 1),
                    o->clip > 0 && norm > o->clip ? o->clip / norm : 1};
    /* all or nothing: every new value is checked before any is written */
    nn_real *mo = m->opt, *vo = m->opt + P;
    for (size_t i = 0; i < P; i++) {
        nn_real p = m->params[i], mi = mo[i], vi = vo[i];
        if (!param_step(&u, m->grads[i], &p, &mi, &vi))
            return nn_fail(NN_ERR_VALUE, "the update would make weight %zu non-finite; the step is not taken", i);
    }
    for (size_t i = 0; i < P; i++) param_step(&u, m->grads[i], &m->params[i], &mo[i], &vo[i]);
    m->steps++;
    return NN_OK;
}

int s2s_train_step(Seq2Seq *m, const S2sTrainOptions *o, int B, const int32_t *in_ids, const int32_t *in_len,
                   const int32_t *out_ids, const int32_t *out_len, nn_real *loss) {
    s2s_zero_grad(m);
    NN_TRY(s2s_forward(m, B, in_ids, in_len, out_ids, out_len, loss));
    if (!isfinite(*loss)) return nn_fail(NN_ERR_VALUE, "the loss is %g; the step is not taken", (double)*loss);
    NN_TRY(s2s_backward(m));
    return s2s_update(m, o, NULL);
}
