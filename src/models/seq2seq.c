/* Encoder-decoder with attention: parameters, forward, backward, optimiser.
 * Decoding (greedy, beam) lives in seq2seq_decode.c, serialisation in
 * seq2seq_io.c; both share the model through seq2seq_internal.h.
 *
 * Dimension letters: B batch rows, T input steps of this batch, U output
 * steps of this batch, E embedding, H encoder hidden per direction,
 * D = H * directions (decoder hidden, encoder output width), V output
 * vocabulary, A additive-attention hidden, W = 2D (with attention) or D,
 * the width of the output layer's input [c; s]. Sequence buffers are
 * batch-major (B, T, .) with this batch's T and U as strides, except the
 * recurrent states, which are time-major (T, B, H) so a step reads one
 * contiguous block. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/layout.h"
#include "base/rng.h"
#include "core/vec.h"
#include "models/seq2seq_internal.h"

/* ---- the parameter table ------------------------------------------------- */

static void add_tensor(Seq2Seq *m, nn_real **slot, size_t count, int fan_in, int init) {
    S2sTensor *t = &m->tensors[m->n_tensors++];
    t->slot = slot;
    t->offset = m->n_params;
    t->count = count;
    t->fan_in = fan_in;
    t->init = init;
    m->n_params += count;
}

static void add_cell(Seq2Seq *m, S2sCellParams *p, int in, int H) {
    int GH = rnn_gates(m->c.cell) * H;
    add_tensor(m, &p->Wx, (size_t)in * GH, in, S2S_INIT_UNIFORM);
    add_tensor(m, &p->Wh, (size_t)H * GH, H, S2S_INIT_UNIFORM);
    add_tensor(m, &p->bx, (size_t)GH, 0, m->c.cell == RNN_CELL_LSTM ? S2S_INIT_FORGET : S2S_INIT_ZERO);
    add_tensor(m, &p->bh, (size_t)GH, 0, S2S_INIT_ZERO);
}

/* Builds the table of tensors (offsets into the one parameter block). */
static void build_table(Seq2Seq *m) {
    const S2sConfig *c = &m->c;
    int D = m->D, E = c->embed, H = c->hidden;
    m->n_tensors = 0;
    m->n_params = 0;
    add_tensor(m, &m->w.emb_in, (size_t)c->in_vocab * E, 0, S2S_INIT_EMBED);
    for (int l = 0; l < c->layers; l++)
        for (int d = 0; d < m->dirs; d++) add_cell(m, &m->w.enc[l][d], l == 0 ? E : D, H);
    add_tensor(m, &m->w.emb_out, (size_t)c->out_vocab * E, 0, S2S_INIT_EMBED);
    add_cell(m, &m->w.dec, E, D);
    switch (c->attention) {
    case ATTN_SCORE_GENERAL: add_tensor(m, &m->w.attn_W, (size_t)D * D, D, S2S_INIT_UNIFORM); break;
    case ATTN_SCORE_LOCATION: add_tensor(m, &m->w.attn_W, (size_t)c->fixed_in * D, D, S2S_INIT_UNIFORM); break;
    case ATTN_SCORE_ADDITIVE:
        add_tensor(m, &m->w.attn_Wq, (size_t)m->A * D, D, S2S_INIT_UNIFORM);
        add_tensor(m, &m->w.attn_Wk, (size_t)m->A * D, D, S2S_INIT_UNIFORM);
        add_tensor(m, &m->w.attn_v, (size_t)m->A, m->A, S2S_INIT_UNIFORM);
        break;
    case ATTN_SCORE_COSINE: add_tensor(m, &m->w.attn_beta, 1, 0, S2S_INIT_BETA); break;
    default: break;
    }
    add_tensor(m, &m->w.Wc, (size_t)m->W * D, m->W, S2S_INIT_UNIFORM);
    add_tensor(m, &m->w.bc, (size_t)D, 0, S2S_INIT_ZERO);
    add_tensor(m, &m->w.Wout, (size_t)D * c->out_vocab, D, S2S_INIT_UNIFORM);
    add_tensor(m, &m->w.bout, (size_t)c->out_vocab, 0, S2S_INIT_ZERO);
}

/* Points every tensor slot of `w` into `block` (params or grads). */
static void bind(Seq2Seq *m, S2sWeights *w, nn_real *block) {
    /* slots are addresses inside m->w; translate to the same field of w */
    for (int i = 0; i < m->n_tensors; i++) {
        size_t field = (size_t)((char *)m->tensors[i].slot - (char *)&m->w);
        *(nn_real **)((char *)w + field) = block + m->tensors[i].offset;
    }
}

static void init_params(Seq2Seq *m) {
    uint64_t s = m->c.seed;
    for (int i = 0; i < m->n_tensors; i++) {
        const S2sTensor *t = &m->tensors[i];
        nn_real *p = m->params + t->offset;
        nn_real k = t->fan_in > 0 ? 1 / sqrt((nn_real)t->fan_in) : 0;
        for (size_t j = 0; j < t->count; j++) {
            switch (t->init) {
            case S2S_INIT_UNIFORM: p[j] = k * nn_rng_symmetric(&s); break;
            case S2S_INIT_EMBED: p[j] = nn_rng_symmetric(&s); break;
            case S2S_INIT_BETA: p[j] = 1; break;
            default: p[j] = 0; break;
            }
        }
        if (t->init == S2S_INIT_FORGET) {
            /* LSTM forget-gate bias 1: remember by default (gate order i, f, g, o) */
            int Hc = (int)(t->count / 4);
            for (int j = Hc; j < 2 * Hc; j++) p[j] = 1;
        }
    }
}

/* ---- activations: one block, carved by a table ---------------------------- */

/* Reserves count reals of the activation block; NULL for 0 or before the block exists. */
static nn_real *act(Seq2Seq *m, NnLayout *l, size_t count) {
    size_t at = nn_layout_take(l, count);
    return m->acts && count ? m->acts + at : NULL;
}

/* Carves the activation block (sizes m->n_acts when m->acts is still NULL). */
static void build_acts(Seq2Seq *m) {
    const S2sConfig *c = &m->c;
    size_t B = (size_t)m->Bm, T = (size_t)c->max_in, U = (size_t)c->max_out, E = (size_t)c->embed,
           H = (size_t)c->hidden, D = (size_t)m->D, V = (size_t)c->out_vocab, W = (size_t)m->W;
    size_t Se = (size_t)rnn_step_cache(c->cell, c->hidden), Sd = (size_t)rnn_step_cache(c->cell, m->D);
    size_t attn = c->attention >= 0, lstm = c->cell == RNN_CELL_LSTM, K = S2S_MAX_BEAM;
    AttnConfig ac = m->attn_cfg;
    ac.n_q = (int)U;
    ac.n_k = (int)T;
    size_t scratch = rnn_step_scratch(c->cell, (int)B, m->D);
    size_t as = attn ? attn_scratch_size(&ac) : 0;
    if (as > scratch) scratch = as;
    NnLayout l = {0};
    S2sActs *a = &m->a;
    a->enc_x = act(m, &l, B * T * E);
    a->d_enc_x = act(m, &l, B * T * E);
    for (int i = 0; i < c->layers; i++) {
        a->enc_out[i] = act(m, &l, B * T * D);
        a->d_enc_out[i] = act(m, &l, B * T * D);
        for (int d = 0; d < m->dirs; d++) {
            a->enc_h[i][d] = act(m, &l, T * B * H);
            a->enc_c[i][d] = act(m, &l, lstm * T * B * H);
            a->enc_cache[i][d] = act(m, &l, T * B * Se);
        }
    }
    a->zeros = act(m, &l, B * D);
    a->h0 = act(m, &l, B * D);
    a->c0 = act(m, &l, B * D);
    a->dec_x = act(m, &l, B * U * E);
    a->d_dec_x = act(m, &l, B * U * E);
    a->dec_h = act(m, &l, U * B * D);
    a->dec_c = act(m, &l, lstm * U * B * D);
    a->dec_cache = act(m, &l, U * B * Sd);
    a->query = act(m, &l, B * U * D);
    a->d_query = act(m, &l, B * U * D);
    a->scores = act(m, &l, attn * B * U * T);
    a->weights = act(m, &l, attn * B * U * T);
    a->ctx = act(m, &l, attn * B * U * D);
    a->cat = act(m, &l, B * U * W);
    a->d_cat = act(m, &l, B * U * W);
    a->o = act(m, &l, B * U * D);
    a->probs = act(m, &l, B * U * V);
    a->dh = act(m, &l, B * D);
    a->dc = act(m, &l, B * D);
    a->dh2 = act(m, &l, B * D);
    a->dc2 = act(m, &l, B * D);
    a->carry = act(m, &l, 4 * B * H);
    for (int i = 0; i < 2; i++) {
        a->beam_h[i] = act(m, &l, K * D);
        a->beam_c[i] = act(m, &l, K * D);
        a->beam_align[i] = act(m, &l, K * U * T);
    }
    a->best_align = act(m, &l, U * T);
    a->beam_logp = act(m, &l, K);
    a->scratch = act(m, &l, scratch);
    m->n_acts = l.size;
}

/* ---- create / destroy ------------------------------------------------------ */

static int check_config(const S2sConfig *c) {
    if ((unsigned)c->cell >= RNN_CELL_COUNT) return nn_fail(NN_ERR_ARG, "cell: unknown cell %d (rnn, gru or lstm)", (int)c->cell);
    if (c->layers < 1 || c->layers > 2) return nn_fail(NN_ERR_VALUE, "layers: %d; the encoder has 1 or 2 layers", c->layers);
    if (c->hidden < 1 || c->hidden > S2S_MAX_HIDDEN)
        return nn_fail(c->hidden < 1 ? NN_ERR_VALUE : NN_ERR_LIMIT, "hidden: %d; it must be within 1..%d", c->hidden, S2S_MAX_HIDDEN);
    if (c->embed < 1 || c->embed > S2S_MAX_EMBED)
        return nn_fail(c->embed < 1 ? NN_ERR_VALUE : NN_ERR_LIMIT, "embed: %d; it must be within 1..%d", c->embed, S2S_MAX_EMBED);
    if (c->attention < S2S_ATTN_NONE || c->attention >= ATTN_SCORE_COUNT)
        return nn_fail(NN_ERR_ARG, "attention: unknown scoring function %d", c->attention);
    if (c->attn_hidden < 0 || c->attn_hidden > S2S_MAX_HIDDEN)
        return nn_fail(NN_ERR_LIMIT, "attnHidden: %d; it must be within 0..%d", c->attn_hidden, S2S_MAX_HIDDEN);
    if (c->in_vocab < 2 || c->in_vocab > S2S_MAX_VOCAB || c->out_vocab < 4 || c->out_vocab > S2S_MAX_VOCAB)
        return nn_fail(NN_ERR_LIMIT, "vocabulary: %d input and %d output symbols; each must be within 2..%d", c->in_vocab,
                       c->out_vocab, S2S_MAX_VOCAB);
    if (c->max_in < 1 || c->max_in > S2S_MAX_LEN || c->max_out < 1 || c->max_out > S2S_MAX_LEN)
        return nn_fail(NN_ERR_LIMIT, "lengths: inputs up to %d and outputs up to %d tokens; each must be within 1..%d",
                       c->max_in, c->max_out, S2S_MAX_LEN);
    if (c->batch < 1 || c->batch > S2S_MAX_BATCH)
        return nn_fail(c->batch < 1 ? NN_ERR_VALUE : NN_ERR_LIMIT, "batch: %d; it must be within 1..%d", c->batch, S2S_MAX_BATCH);
    if (c->attention == ATTN_SCORE_LOCATION && (c->fixed_in < 1 || c->fixed_in != c->max_in))
        return nn_fail(NN_ERR_VALUE,
                       "attention: 'location' scores each input position with its own weights, so it needs inputs of one "
                       "fixed length; this task's inputs vary in length (use another score)");
    return NN_OK;
}

int s2s_create(Seq2Seq **out, const S2sConfig *c) {
    *out = NULL;
    nn_clear_error();
    NN_TRY(check_config(c));
    Seq2Seq *m = calloc(1, sizeof *m);
    if (!m) return nn_fail(NN_ERR_NOMEM, "seq2seq: out of memory");
    m->c = *c;
    m->dirs = c->bidirectional ? 2 : 1;
    m->D = c->hidden * m->dirs;
    m->A = c->attn_hidden > 0 ? c->attn_hidden : m->D;
    m->W = c->attention >= 0 ? 2 * m->D : m->D;
    m->Bm = c->batch > S2S_MAX_BEAM ? c->batch : S2S_MAX_BEAM;
    m->attn_cfg = (AttnConfig){0};
    m->attn_cfg.d_q = m->attn_cfg.d_k = m->attn_cfg.d_v = m->D;
    m->attn_cfg.hidden = c->attention == ATTN_SCORE_ADDITIVE ? m->A : 0;
    m->attn_cfg.score = c->attention >= 0 ? (AttnScore)c->attention : ATTN_SCORE_DOT;
    m->attn_cfg.norm = ATTN_NORM_SOFTMAX;
    m->attn_cfg.temperature = 1;
    build_table(m);
    build_acts(m);
    m->params = calloc(m->n_params, sizeof(nn_real));
    m->grads = calloc(m->n_params, sizeof(nn_real));
    m->opt = calloc(2 * m->n_params, sizeof(nn_real));
    m->acts = calloc(m->n_acts, sizeof(nn_real));
    m->key_lengths = calloc((size_t)c->max_out, sizeof(int32_t));
    m->ids = calloc((size_t)m->Bm * (c->max_in + 2 * c->max_out + 2), sizeof(int32_t));
    m->mask = calloc((size_t)m->Bm, 1);
    m->beam_tok = calloc((2 * S2S_MAX_BEAM + 1) * (size_t)c->max_out, sizeof(int32_t));
    m->dec_ids = calloc(2 * (size_t)m->Bm, sizeof(int32_t));
    m->row_len = m->dec_ids ? m->dec_ids + m->Bm : NULL;
    if (!m->params || !m->grads || !m->opt || !m->acts || !m->key_lengths || !m->ids || !m->mask || !m->beam_tok ||
        !m->dec_ids) {
        size_t n_params = m->n_params, n_acts = m->n_acts;
        s2s_destroy(m);
        return nn_fail(NN_ERR_NOMEM, "seq2seq: out of memory for %zu parameters and %zu activations", n_params, n_acts);
    }
    bind(m, &m->w, m->params);
    bind(m, &m->g, m->grads);
    build_acts(m);
    init_params(m);
    *out = m;
    return NN_OK;
}

void s2s_destroy(Seq2Seq *m) {
    if (!m) return;
    free(m->params);
    free(m->grads);
    free(m->opt);
    free(m->acts);
    free(m->key_lengths);
    free(m->ids);
    free(m->mask);
    free(m->beam_tok);
    free(m->dec_ids);
    free(m);
}

const S2sConfig *s2s_config(const Seq2Seq *m) { return &m->c; }
size_t s2s_num_params(const Seq2Seq *m) { return m->n_params; }
nn_real *s2s_params(Seq2Seq *m) { return m->params; }
nn_real *s2s_grads(Seq2Seq *m) { return m->grads; }
int s2s_steps(const Seq2Seq *m) { return m->steps; }
void s2s_zero_grad(Seq2Seq *m) { memset(m->grads, 0, sizeof(nn_real) * m->n_params); }

/* ---- shared pieces (also used by decoding) ------------------------------- */

RnnWeights s2s_cell_weights(const S2sCellParams *p) { return (RnnWeights){p->Wx, p->Wh, p->bx, p->bh}; }

AttnParams s2s_attn_params(const Seq2Seq *m) {
    AttnParams p = {m->w.attn_W, m->w.attn_Wq, m->w.attn_Wk, m->w.attn_v, 1};
    if (m->w.attn_beta) p.beta = m->w.attn_beta[0];
    return p;
}

int s2s_check_batch(const Seq2Seq *m, int B, const int32_t *in_ids, const int32_t *in_len, const int32_t *out_ids,
                    const int32_t *out_len) {
    const S2sConfig *c = &m->c;
    if (B < 1 || B > m->Bm) return nn_fail(NN_ERR_LIMIT, "batch: %d rows; this model takes 1..%d", B, m->Bm);
    for (int b = 0; b < B; b++) {
        if (in_len[b] < 1 || in_len[b] > c->max_in)
            return nn_fail(NN_ERR_SHAPE, "inputs: row %d has length %d; it must be within 1..%d", b, in_len[b], c->max_in);
        if (c->attention == ATTN_SCORE_LOCATION && in_len[b] != c->fixed_in)
            return nn_fail(NN_ERR_SHAPE, "inputs: row %d has length %d, but 'location' attention needs exactly %d", b,
                           in_len[b], c->fixed_in);
        for (int t = 0; t < in_len[b]; t++) {
            int id = in_ids[(size_t)b * c->max_in + t];
            if (id < 1 || id >= c->in_vocab)
                return nn_fail(NN_ERR_VALUE, "inputs: row %d, position %d has symbol id %d outside 1..%d", b, t, id, c->in_vocab - 1);
        }
        if (out_ids) {
            if (out_len[b] < 1 || out_len[b] > c->max_out)
                return nn_fail(NN_ERR_SHAPE, "outputs: row %d has length %d; it must be within 1..%d", b, out_len[b], c->max_out);
            for (int t = 0; t < out_len[b]; t++) {
                int id = out_ids[(size_t)b * c->max_out + t];
                if (id < 2 || id >= c->out_vocab)
                    return nn_fail(NN_ERR_VALUE, "outputs: row %d, position %d has symbol id %d outside 2..%d", b, t, id,
                                   c->out_vocab - 1);
            }
        }
    }
    return NN_OK;
}

/* Encoder over this batch (T steps); leaves the top layer's outputs in
 * enc_out[top] (B, T, D) and the decoder's initial state in h0, c0 (B, D). */
void s2s_encode(Seq2Seq *m, int B, int T, const int32_t *in_ids, const int32_t *in_len) {
    const S2sConfig *c = &m->c;
    S2sActs *a = &m->a;
    int E = c->embed, H = c->hidden, D = m->D;
    int lstm = c->cell == RNN_CELL_LSTM, S = rnn_step_cache(c->cell, H);
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++) {
            int id = t < in_len[b] ? in_ids[(size_t)b * c->max_in + t] : 0;
            memcpy(a->enc_x + ((size_t)b * T + t) * E, m->w.emb_in + (size_t)id * E, sizeof(nn_real) * E);
        }
    memset(a->zeros, 0, sizeof(nn_real) * (size_t)B * D);
    for (int l = 0; l < c->layers; l++) {
        const nn_real *x = l == 0 ? a->enc_x : a->enc_out[l - 1];
        int in = l == 0 ? E : D;
        for (int d = 0; d < m->dirs; d++) {
            RnnWeights w = s2s_cell_weights(&m->w.enc[l][d]);
            nn_real *hs = a->enc_h[l][d], *cs = a->enc_c[l][d], *cache = a->enc_cache[l][d];
            for (int s = 0; s < T; s++) {
                int t = d == 0 ? s : T - 1 - s;
                int prev = d == 0 ? t - 1 : t + 1; /* the step before, in this direction */
                const nn_real *hp = s == 0 ? a->zeros : hs + (size_t)prev * B * H;
                const nn_real *cp = lstm ? (s == 0 ? a->zeros : cs + (size_t)prev * B * H) : NULL;
                for (int b = 0; b < B; b++) m->mask[b] = t < in_len[b];
                rnn_step_forward(c->cell, B, in, H, &w, hs + (size_t)t * B * H, lstm ? cs + (size_t)t * B * H : NULL,
                                 cache + (size_t)t * B * S, x + (size_t)t * in, T * in, hp, cp, m->mask, a->scratch);
                for (int b = 0; b < B; b++)
                    memcpy(a->enc_out[l] + ((size_t)b * T + t) * D + d * H, hs + ((size_t)t * B + b) * H, sizeof(nn_real) * H);
            }
        }
    }
    /* decoder start: forward direction's state after the last step (masked
     * steps carried it), backward direction's state after reaching t = 0 */
    int top = c->layers - 1;
    for (int d = 0; d < m->dirs; d++) {
        int t = d == 0 ? T - 1 : 0;
        for (int b = 0; b < B; b++) {
            memcpy(a->h0 + (size_t)b * D + d * H, a->enc_h[top][d] + ((size_t)t * B + b) * H, sizeof(nn_real) * H);
            if (lstm) memcpy(a->c0 + (size_t)b * D + d * H, a->enc_c[top][d] + ((size_t)t * B + b) * H, sizeof(nn_real) * H);
            else memset(a->c0 + (size_t)b * D + d * H, 0, sizeof(nn_real) * H);
        }
    }
}

/* o = tanh([c; s] Wc + bc) and p = softmax(o Wout + bout) for n rows of cat (n, W). */
void s2s_output(Seq2Seq *m, int n, const nn_real *cat, nn_real *o, nn_real *probs) {
    int D = m->D, V = m->c.out_vocab;
    vec_gemm_nn(o, D, cat, m->W, m->w.Wc, D, n, D, m->W, 0);
    for (int r = 0; r < n; r++) {
        nn_real *orow = o + (size_t)r * D;
        vec_axpy(orow, 1, m->w.bc, D);
        vec_tanh(orow, orow, D);
    }
    vec_gemm_nn(probs, V, o, D, m->w.Wout, V, n, V, D, 0);
    for (int r = 0; r < n; r++) {
        nn_real *p = probs + (size_t)r * V;
        vec_axpy(p, 1, m->w.bout, V);
        nn_real mx = vec_max(p, V);
        nn_real s = vec_exp_sum(p, p, mx, V);
        vec_scale(p, 1 / s, V);
    }
}

/* ---- training forward / backward ------------------------------------------ */

int s2s_forward(Seq2Seq *m, int B, const int32_t *in_ids, const int32_t *in_len, const int32_t *out_ids,
                const int32_t *out_len, nn_real *loss) {
    nn_clear_error();
    NN_TRY(s2s_check_batch(m, B, in_ids, in_len, out_ids, out_len));
    const S2sConfig *c = &m->c;
    S2sActs *a = &m->a;
    int T = 0, U = 0, E = c->embed, D = m->D, V = c->out_vocab, Wd = m->W;
    for (int b = 0; b < B; b++) {
        T = in_len[b] > T ? in_len[b] : T;
        U = out_len[b] > U ? out_len[b] : U;
    }
    if (c->attention == ATTN_SCORE_LOCATION) T = c->fixed_in;
    m->B = B;
    m->T = T;
    m->U = U;
    /* keep the batch for backward */
    int32_t *ki = m->ids, *kl = ki + (size_t)B * c->max_in, *ko = kl + B, *kol = ko + (size_t)B * c->max_out;
    memcpy(ki, in_ids, sizeof(int32_t) * (size_t)B * c->max_in);
    memcpy(kl, in_len, sizeof(int32_t) * B);
    memcpy(ko, out_ids, sizeof(int32_t) * (size_t)B * c->max_out);
    memcpy(kol, out_len, sizeof(int32_t) * B);

    s2s_encode(m, B, T, in_ids, in_len);

    /* decoder inputs: BOS, then the targets shifted right (teacher forcing) */
    int lstm = c->cell == RNN_CELL_LSTM, Sd = rnn_step_cache(c->cell, D);
    for (int b = 0; b < B; b++)
        for (int t = 0; t < U; t++) {
            int id = t == 0 ? TASK_BOS_ID : (t < out_len[b] ? out_ids[(size_t)b * c->max_out + t - 1] : 0);
            memcpy(a->dec_x + ((size_t)b * U + t) * E, m->w.emb_out + (size_t)id * E, sizeof(nn_real) * E);
        }
    RnnWeights dw = s2s_cell_weights(&m->w.dec);
    for (int t = 0; t < U; t++) {
        const nn_real *hp = t == 0 ? a->h0 : a->dec_h + (size_t)(t - 1) * B * D;
        const nn_real *cp = lstm ? (t == 0 ? a->c0 : a->dec_c + (size_t)(t - 1) * B * D) : NULL;
        rnn_step_forward(c->cell, B, E, D, &dw, a->dec_h + (size_t)t * B * D, lstm ? a->dec_c + (size_t)t * B * D : NULL,
                         a->dec_cache + (size_t)t * B * Sd, a->dec_x + (size_t)t * E, U * E, hp, cp, NULL, a->scratch);
        for (int b = 0; b < B; b++)
            memcpy(a->query + ((size_t)b * U + t) * D, a->dec_h + ((size_t)t * B + b) * D, sizeof(nn_real) * D);
    }

    /* attention: all U queries of a sequence over its T encoder outputs in one call */
    if (c->attention >= 0) {
        AttnParams ap = s2s_attn_params(m);
        AttnConfig ac = m->attn_cfg;
        ac.n_q = U;
        ac.n_k = T;
        ac.key_lengths = m->key_lengths;
        for (int b = 0; b < B; b++) {
            for (int t = 0; t < U; t++) m->key_lengths[t] = in_len[b];
            const nn_real *keys = a->enc_out[c->layers - 1] + (size_t)b * T * D;
            NN_TRY(attn_forward(&ac, &ap, a->scores + (size_t)b * U * T, a->weights + (size_t)b * U * T,
                                a->ctx + (size_t)b * U * D, a->query + (size_t)b * U * D, keys, keys, a->scratch));
        }
    }
    /* cat = [c; s] */
    for (size_t r = 0; r < (size_t)B * U; r++) {
        nn_real *cr = a->cat + r * Wd;
        if (c->attention >= 0) {
            memcpy(cr, a->ctx + r * D, sizeof(nn_real) * D);
            memcpy(cr + D, a->query + r * D, sizeof(nn_real) * D);
        } else {
            memcpy(cr, a->query + r * D, sizeof(nn_real) * D);
        }
    }
    s2s_output(m, B * U, a->cat, a->o, a->probs);
    double total = 0;
    int count = 0;
    for (int b = 0; b < B; b++)
        for (int t = 0; t < out_len[b]; t++) {
            nn_real p = a->probs[((size_t)b * U + t) * V + out_ids[(size_t)b * c->max_out + t]];
            total -= log(p > 1e-30 ? p : 1e-30);
            count++;
        }
    m->count = count;
    *loss = (nn_real)(total / count);
    m->have_forward = 1;
    return NN_OK;
}

int s2s_backward(Seq2Seq *m) {
    if (!m->have_forward) return nn_fail(NN_ERR_ARG, "backward: call forward first");
    const S2sConfig *c = &m->c;
    S2sActs *a = &m->a;
    S2sWeights *g = &m->g;
    int B = m->B, T = m->T, U = m->U, E = c->embed, H = c->hidden, D = m->D, V = c->out_vocab, Wd = m->W;
    int lstm = c->cell == RNN_CELL_LSTM;
    const int32_t *in_ids = m->ids, *in_len = in_ids + (size_t)B * c->max_in;
    const int32_t *out_ids = in_len + B, *out_len = out_ids + (size_t)B * c->max_out;

    /* loss = -(1/count) sum log p_target: dlogits = (p - onehot) / count, 0 on padding */
    nn_real *dlog = a->probs; /* overwritten in place */
    nn_real inv = (nn_real)1 / m->count;
    for (int b = 0; b < B; b++)
        for (int t = 0; t < U; t++) {
            nn_real *p = dlog + ((size_t)b * U + t) * V;
            if (t >= out_len[b]) {
                memset(p, 0, sizeof(nn_real) * V);
                continue;
            }
            p[out_ids[(size_t)b * c->max_out + t]] -= 1;
            vec_scale(p, inv, V);
        }
    size_t n = (size_t)B * U;
    /* logits = o Wout + bout */
    for (size_t r = 0; r < n; r++) vec_axpy(g->bout, 1, dlog + r * V, V);
    vec_gemm_tn(g->Wout, V, a->o, D, dlog, V, D, V, (int)n, 1);
    nn_real *dob = a->d_query; /* (n, D) reused for do, then overwritten below */
    vec_gemm_nt(dob, D, dlog, V, m->w.Wout, V, (int)n, D, V, 0);
    /* o = tanh(cat Wc + bc) */
    for (size_t r = 0; r < n; r++) {
        nn_real *dr = dob + r * D;
        const nn_real *orow = a->o + r * D;
        for (int u = 0; u < D; u++) dr[u] *= 1 - orow[u] * orow[u];
        vec_axpy(g->bc, 1, dr, D);
    }
    vec_gemm_tn(g->Wc, D, a->cat, Wd, dob, D, Wd, D, (int)n, 1);
    vec_gemm_nt(a->d_cat, Wd, dob, D, m->w.Wc, D, (int)n, Wd, D, 0);
    /* split d_cat into d(query) and d(ctx) */
    nn_real *dq = a->d_query;
    for (size_t r = 0; r < n; r++) memcpy(dq + r * D, a->d_cat + r * Wd + (c->attention >= 0 ? D : 0), sizeof(nn_real) * D);
    int top = c->layers - 1;
    memset(a->d_enc_out[top], 0, sizeof(nn_real) * (size_t)B * T * D);
    if (c->attention >= 0) {
        AttnParams ap = s2s_attn_params(m);
        AttnParamGrads apg = {g->attn_W, g->attn_Wq, g->attn_Wk, g->attn_v, 0};
        AttnConfig ac = m->attn_cfg;
        ac.n_q = U;
        ac.n_k = T;
        ac.key_lengths = m->key_lengths;
        nn_real *dctx = a->ctx; /* context no longer needed: reuse for d(ctx) */
        for (size_t r = 0; r < n; r++) memcpy(dctx + r * D, a->d_cat + r * Wd, sizeof(nn_real) * D);
        for (int b = 0; b < B; b++) {
            for (int t = 0; t < U; t++) m->key_lengths[t] = in_len[b];
            const nn_real *keys = a->enc_out[top] + (size_t)b * T * D;
            nn_real *dkeys = a->d_enc_out[top] + (size_t)b * T * D;
            /* keys and values are the same encoder outputs: both gradients land in dkeys */
            NN_TRY(attn_backward(&ac, &ap, &apg, dq + (size_t)b * U * D, dkeys, dkeys, dctx + (size_t)b * U * D, NULL,
                                 a->scores + (size_t)b * U * T, a->weights + (size_t)b * U * T, a->query + (size_t)b * U * D,
                                 keys, keys, a->scratch));
        }
        if (g->attn_beta) g->attn_beta[0] += apg.beta;
    }

    /* decoder BPTT */
    RnnWeights dw = s2s_cell_weights(&m->w.dec);
    RnnGrads dg = {g->dec.Wx, g->dec.Wh, g->dec.bx, g->dec.bh};
    int Sd = rnn_step_cache(c->cell, D);
    memset(a->d_dec_x, 0, sizeof(nn_real) * (size_t)B * U * E);
    nn_real *dh = a->dh, *dc = a->dc, *dh_next = a->dh2, *dc_next = a->dc2;
    memset(dh, 0, sizeof(nn_real) * (size_t)B * D);
    memset(dc, 0, sizeof(nn_real) * (size_t)B * D);
    for (int t = U - 1; t >= 0; t--) {
        /* dh (from step t+1) + d(query_t) */
        for (int b = 0; b < B; b++) vec_axpy(dh + (size_t)b * D, 1, dq + ((size_t)b * U + t) * D, D);
        const nn_real *hp = t == 0 ? a->h0 : a->dec_h + (size_t)(t - 1) * B * D;
        const nn_real *cp = lstm ? (t == 0 ? a->c0 : a->dec_c + (size_t)(t - 1) * B * D) : NULL;
        rnn_step_backward(c->cell, B, E, D, &dw, &dg, a->d_dec_x + (size_t)t * E, U * E, dh_next, lstm ? dc_next : NULL, dh,
                          lstm ? dc : NULL, a->dec_cache + (size_t)t * B * Sd, a->dec_x + (size_t)t * E, U * E, hp, cp, NULL,
                          a->scratch);
        nn_real *sw = dh; dh = dh_next; dh_next = sw;
        sw = dc; dc = dc_next; dc_next = sw;
    }
    /* embeddings of the decoder inputs */
    for (int b = 0; b < B; b++)
        for (int t = 0; t < U; t++) {
            int id = t == 0 ? TASK_BOS_ID : (t < out_len[b] ? out_ids[(size_t)b * c->max_out + t - 1] : 0);
            vec_axpy(g->emb_out + (size_t)id * E, 1, a->d_dec_x + ((size_t)b * U + t) * E, E);
        }
    /* dh, dc now hold dL/d(h0, c0): into the encoder's final states */
    nn_real *dh0 = dh, *dc0 = dc;

    /* encoder BPTT, top layer first */
    int S = rnn_step_cache(c->cell, H);
    for (int l = top; l >= 0; l--) {
        int in = l == 0 ? E : D;
        nn_real *dxl = l == 0 ? a->d_enc_x : a->d_enc_out[l - 1];
        memset(dxl, 0, sizeof(nn_real) * (size_t)B * T * in);
        const nn_real *x = l == 0 ? a->enc_x : a->enc_out[l - 1];
        for (int d = 0; d < m->dirs; d++) {
            RnnWeights w = s2s_cell_weights(&m->w.enc[l][d]);
            RnnGrads eg = {g->enc[l][d].Wx, g->enc[l][d].Wh, g->enc[l][d].bx, g->enc[l][d].bh};
            nn_real *hs = a->enc_h[l][d], *cs = a->enc_c[l][d], *cache = a->enc_cache[l][d];
            /* carried gradients, current and next: four (B, H) blocks of carry */
            nn_real *eh = a->carry, *ehn = a->carry + (size_t)B * H;
            nn_real *ec = lstm ? a->carry + 2 * (size_t)B * H : NULL, *ecn = lstm ? a->carry + 3 * (size_t)B * H : NULL;
            /* the top layer starts from the gradient of the decoder's start state */
            for (int b = 0; b < B; b++) {
                if (l == top) memcpy(eh + (size_t)b * H, dh0 + (size_t)b * D + d * H, sizeof(nn_real) * H);
                else memset(eh + (size_t)b * H, 0, sizeof(nn_real) * H);
                if (lstm) {
                    if (l == top) memcpy(ec + (size_t)b * H, dc0 + (size_t)b * D + d * H, sizeof(nn_real) * H);
                    else memset(ec + (size_t)b * H, 0, sizeof(nn_real) * H);
                }
            }
            for (int s = T - 1; s >= 0; s--) {
                int t = d == 0 ? s : T - 1 - s;
                int prev = d == 0 ? t - 1 : t + 1;
                const nn_real *hp = s == 0 ? a->zeros : hs + (size_t)prev * B * H;
                const nn_real *cp = lstm ? (s == 0 ? a->zeros : cs + (size_t)prev * B * H) : NULL;
                for (int b = 0; b < B; b++) {
                    m->mask[b] = t < in_len[b];
                    vec_axpy(eh + (size_t)b * H, 1, a->d_enc_out[l] + ((size_t)b * T + t) * D + d * H, H);
                }
                rnn_step_backward(c->cell, B, in, H, &w, &eg, dxl + (size_t)t * in, T * in, ehn, ecn, eh, ec,
                                  cache + (size_t)t * B * S, x + (size_t)t * in, T * in, hp, cp, m->mask, a->scratch);
                nn_real *sw = eh; eh = ehn; ehn = sw;
                if (lstm) { sw = ec; ec = ecn; ecn = sw; }
            }
        }
    }
    for (int b = 0; b < B; b++)
        for (int t = 0; t < in_len[b]; t++)
            vec_axpy(g->emb_in + (size_t)in_ids[(size_t)b * c->max_in + t] * E, 1, a->d_enc_x + ((size_t)b * T + t) * E, E);
    m->have_forward = 0;
    return NN_OK;
}

/* ---- optimiser ----------------------------------------------------------- */

int s2s_update(Seq2Seq *m, const S2sTrainOptions *o, nn_real *norm_out) {
    if (!(o->lr > 0) || !isfinite(o->lr)) return nn_fail(NN_ERR_VALUE, "lr must be a finite number > 0 (got %g)", (double)o->lr);
    if (!(o->clip >= 0) || !isfinite(o->clip)) return nn_fail(NN_ERR_VALUE, "clip must be a finite number >= 0 (got %g)", (double)o->clip);
    size_t P = m->n_params;
    double sq = 0;
    for (size_t i = 0; i < P; i++) sq += (double)m->grads[i] * m->grads[i];
    nn_real norm = (nn_real)sqrt(sq);
    if (norm_out) *norm_out = norm;
    if (!isfinite(norm)) return nn_fail(NN_ERR_VALUE, "gradients are not finite; lower the learning rate");
    nn_real scale = o->clip > 0 && norm > o->clip ? o->clip / norm : 1;
    m->steps++;
    if (o->optimizer == S2S_SGD) {
        for (size_t i = 0; i < P; i++) m->params[i] -= o->lr * scale * m->grads[i];
        return NN_OK;
    }
    /* Adam: m = b1 m + (1-b1) g; v = b2 v + (1-b2) g^2; p -= lr mhat / (sqrt(vhat) + eps) */
    const double b1 = 0.9, b2 = 0.999, eps = 1e-8;
    double c1 = 1 - pow(b1, m->steps), c2 = 1 - pow(b2, m->steps);
    nn_real *mo = m->opt, *vo = m->opt + P;
    for (size_t i = 0; i < P; i++) {
        nn_real gr = m->grads[i] * scale;
        mo[i] = (nn_real)(b1 * mo[i] + (1 - b1) * gr);
        vo[i] = (nn_real)(b2 * vo[i] + (1 - b2) * gr * gr);
        m->params[i] -= (nn_real)(o->lr * (mo[i] / c1) / (sqrt(vo[i] / c2) + eps));
    }
    return NN_OK;
}

int s2s_train_step(Seq2Seq *m, const S2sTrainOptions *o, int B, const int32_t *in_ids, const int32_t *in_len,
                   const int32_t *out_ids, const int32_t *out_len, nn_real *loss) {
    s2s_zero_grad(m);
    NN_TRY(s2s_forward(m, B, in_ids, in_len, out_ids, out_len, loss));
    NN_TRY(s2s_backward(m));
    return s2s_update(m, o, NULL);
}
