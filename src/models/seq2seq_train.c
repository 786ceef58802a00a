/* Training: the model's forward and backward as its layers in order and in
 * reverse, the cross-entropy loss, and the optimiser step (src/layers/optim.c).
 * Shapes use the letters of seq2seq_internal.h. */
#include <math.h>
#include <string.h>

#include "core/vec.h"
#include "layers/shards.h"
#include "models/seq2seq_internal.h"

/* ---- loss ------------------------------------------------------------------ */

/* The loss's sum -sum log p_target over each row's out_len targets (PAD past
 * them), in double: the output layer's cross-entropy (src/layers/output.c);
 * the caller divides by the batch's target count. */
static double loss_forward(const Seq2Seq *m, int B, int U, const int32_t *out_ids, const int32_t *out_len) {
    int V = m->c.out_vocab;
    double total = 0;
    for (int b = 0; b < B; b++)
        for (int t = 0; t < out_len[b]; t++)
            total += crossentropy_forward(m->a.probs + ((size_t)b * U + t) * V, out_ids[(size_t)b * m->c.max_out + t]);
    return total;
}

/* d_logits (B, U, V) = (p - onehot(target)) / count on targets, 0 on padding
 * (weight 0; its target is PAD, as ids past out_len are not read);
 * count: the target tokens of the whole batch, whichever rows these are. */
static void loss_backward(Seq2Seq *m, int count, int B, int U, const int32_t *out_ids, const int32_t *out_len) {
    int V = m->c.out_vocab;
    nn_real inv = (nn_real)1 / count;
    for (int b = 0; b < B; b++)
        for (int t = 0; t < U; t++) {
            size_t row = ((size_t)b * U + t) * V;
            int target = t < out_len[b];
            crossentropy_backward(m->a.d_logits + row, m->a.probs + row,
                                  target ? out_ids[(size_t)b * m->c.max_out + t] : S2S_PAD, target ? inv : 0, V);
        }
}

/* ---- the model, layer by layer ----------------------------------------------------- */

/* Keeps the batch for backward and sets this batch's B, T, U, target count
 * and shards. */
static void keep_batch(Seq2Seq *m, int B, const int32_t *in_ids, const int32_t *in_len, const int32_t *out_ids,
                       const int32_t *out_len) {
    const S2sConfig *c = &m->c;
    int T = 0, U = 0, count = 0;
    for (int b = 0; b < B; b++) {
        T = in_len[b] > T ? in_len[b] : T;
        U = out_len[b] > U ? out_len[b] : U;
        count += out_len[b];
    }
    m->B = B;
    m->T = c->attention == ATTN_SCORE_LOCATION ? c->fixed_in : T;
    m->U = U;
    m->count = count;
    m->shards = shards_count(&m->replicas, B);
    memcpy(m->batch.in_ids, in_ids, sizeof(int32_t) * (size_t)B * c->max_in);
    memcpy(m->batch.in_len, in_len, sizeof(int32_t) * B);
    memcpy(m->batch.out_ids, out_ids, sizeof(int32_t) * (size_t)B * c->max_out);
    memcpy(m->batch.out_len, out_len, sizeof(int32_t) * B);
}

/* Shard s of the kept batch: its rows and the model or replica that runs
 * them. Every shard runs at the whole batch's T and U. */
typedef struct {
    Seq2Seq *r; /* the model (shard 0) or replica[s] */
    int B;      /* its rows */
    const int32_t *in_ids, *in_len, *out_ids, *out_len; /* its rows of the kept batch */
} S2sShard;

static S2sShard shard_of(Seq2Seq *m, int s) {
    const S2sBatch *k = &m->batch;
    int b0, b1;
    Seq2Seq *r = shards_rows(&m->replicas, m, m->B, m->shards, s, &b0, &b1);
    return (S2sShard){r, b1 - b0, k->in_ids + (size_t)b0 * m->c.max_in, k->in_len + b0,
                      k->out_ids + (size_t)b0 * m->c.max_out, k->out_len + b0};
}

/* Backward from d_logits (B, U, V) of r's rows: output, attention, decoder, encoder. */
static int logits_backward(Seq2Seq *r, int B, int T, int U, const int32_t *in_len) {
    s2s_output_backward(r, B * U);
    if (r->c.attention >= 0) NN_TRY(s2s_attention_backward(r, B, T, U, in_len));
    else memset(r->a.d_enc_out[r->c.layers - 1], 0, sizeof(nn_real) * (size_t)B * T * r->D);
    s2s_decoder_backward(r, B, U);
    s2s_encoder_backward(r, B, T, in_len);
    return NN_OK;
}

/* The forward of shard s; its loss's sum in *total. */
static int shard_forward(Seq2Seq *m, int s, double *total) {
    S2sShard h = shard_of(m, s);
    Seq2Seq *r = h.r;
    int T = m->T, U = m->U;
    S2sActs *a = &r->a;
    s2s_encoder_forward(r, h.B, T, h.in_ids, h.in_len);
    s2s_decoder_forward(r, h.B, U, h.out_ids, h.out_len);
    if (m->c.attention >= 0) NN_TRY(s2s_attention_forward(r, h.B, T, U, h.in_len));
    s2s_concat_forward(r, h.B * U, a->cat, a->ctx, a->query);
    s2s_output_forward(r, h.B * U, a->cat, a->o, a->probs);
    *total = loss_forward(r, h.B, U, h.out_ids, h.out_len);
    return NN_OK;
}

/* The backward of shard s's loss: into the model's gradients (shard 0, +=)
 * or into its replica's, cleared first. */
static int shard_backward(Seq2Seq *m, int s) {
    S2sShard h = shard_of(m, s);
    shards_clear_grads(&m->replicas, s, m->opt.n);
    loss_backward(h.r, m->count, h.B, m->U, h.out_ids, h.out_len);
    return logits_backward(h.r, h.B, m->T, m->U, h.in_len);
}

static int forward_task(void *m, int s, double *total) { return shard_forward(m, s, total); }
static int backward_task(void *m, int s, double *total) {
    (void)total;
    return shard_backward(m, s);
}

/* work of a pass: about one multiply-add per parameter and row */
static double pass_work(const Seq2Seq *m) { return (double)m->opt.n * m->B; }

int s2s_forward(Seq2Seq *m, int B, const int32_t *in_ids, const int32_t *in_len, const int32_t *out_ids,
                const int32_t *out_len, nn_real *loss) {
    nn_clear_error();
    NN_TRY(s2s_check_batch(m, B, in_ids, in_len, out_ids, out_len));
    keep_batch(m, B, in_ids, in_len, out_ids, out_len);
    m->have_forward = 0;
    double total = 0;
    NN_TRY(shards_run(forward_task, m, m->shards, pass_work(m), &total));
    *loss = (nn_real)(total / m->count);
    m->have_forward = 1;
    return NN_OK;
}

int s2s_backward(Seq2Seq *m) {
    if (!m->have_forward) return nn_fail(NN_ERR_ARG, "backward: call forward first");
    m->have_forward = 0;
    NN_TRY(shards_run(backward_task, m, m->shards, pass_work(m), NULL));
    shards_sum_grads(&m->replicas, m->shards, m->opt.grads, m->opt.n);
    return NN_OK;
}

int s2s_backward_logits(Seq2Seq *m) {
    if (m->shards != 1) return nn_fail(NN_ERR_ARG, "backward: the forward ran in %d shards; this backward takes one", m->shards);
    m->have_forward = 0;
    return logits_backward(m, m->B, m->T, m->U, m->batch.in_len);
}

/* ---- optimiser ----------------------------------------------------------- */

int s2s_update(Seq2Seq *m, const NnTrainOptions *o, nn_real *norm) {
    if (m->opt.steps >= S2S_MAX_STEPS)
        return nn_fail(NN_ERR_LIMIT, "steps: the model has taken %d steps, the most it can count", m->opt.steps);
    return opt_update(&m->opt, o, norm);
}

int s2s_check_forward(Seq2Seq *m) {
    const S2sConfig *c = &m->c;
    int32_t in_ids[S2S_MAX_LEN] = {0}, out_ids[S2S_MAX_LEN], in_len = c->fixed_in ? c->fixed_in : c->max_in,
            out_len = c->max_out;
    for (int i = 0; i < in_len; i++) in_ids[i] = S2S_FIRST_IN;
    for (int i = 0; i < out_len; i++) out_ids[i] = S2S_EOS;
    nn_real loss = 0;
    s2s_zero_grad(m);
    int st = s2s_forward(m, 1, in_ids, &in_len, out_ids, &out_len, &loss);
    /* the loss floors each probability before its log, so NaN shows in the probabilities only */
    if (st == NN_OK) st = nn_check_finite("probabilities", m->a.probs, (size_t)m->U * c->out_vocab);
    if (st == NN_OK) st = s2s_backward(m);
    nn_real norm = opt_grad_norm(&m->opt);
    if (st == NN_OK && !isfinite(norm)) st = nn_fail(NN_ERR_VALUE, "the gradient norm is %g", (double)norm);
    s2s_zero_grad(m);
    if (st != NN_OK) return nn_fail(st, "its forward pass on a probe input is not finite (%s)", nn_last_error());
    return NN_OK;
}

int s2s_train_step(Seq2Seq *m, const NnTrainOptions *o, int B, const int32_t *in_ids, const int32_t *in_len,
                   const int32_t *out_ids, const int32_t *out_len, nn_real *loss) {
    s2s_zero_grad(m);
    NN_TRY(s2s_forward(m, B, in_ids, in_len, out_ids, out_len, loss));
    if (!isfinite(*loss)) return nn_fail(NN_ERR_VALUE, "the loss is %g; the step is not taken", (double)*loss);
    NN_TRY(s2s_backward(m));
    return s2s_update(m, o, NULL);
}
