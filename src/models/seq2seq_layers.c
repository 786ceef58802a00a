/* The layers of the encoder-decoder, each a _forward / _backward pair side by
 * side: encoder (embedding, layers x directions of recurrent cells), decoder
 * (embedding, one recurrent layer, teacher forced), Luong attention, and the
 * output layer; embedding and output are the shared layers of src/layers/. Shapes use the letters of seq2seq_internal.h. A backward pass reads
 * its forward's buffers and the gradient of its output, and accumulates into
 * the parameter gradients m->g. */
#include <string.h>

#include "core/vec.h"
#include "layers/embedding.h"
#include "models/seq2seq_internal.h"

/* Backward through time: the gradient written for the previous step becomes
 * the one this step reads. */
static void swap_buffers(nn_real **a, nn_real **b) {
    nn_real *t = *a;
    *a = *b;
    *b = t;
}

/* ---- encoder ---------------------------------------------------------------- */

/* Time step s of direction d visits position t; its previous state is at prev. */
static int enc_position(int d, int s, int T) { return d == 0 ? s : T - 1 - s; }
static int enc_previous(int d, int t) { return d == 0 ? t - 1 : t + 1; }

/* mask (B): rows whose input is still running at position t */
static void enc_mask(uint8_t *mask, const int32_t *in_len, int B, int t) {
    for (int b = 0; b < B; b++) mask[b] = t < in_len[b];
}

/* One direction d of layer l over T steps: states enc_h/enc_c[l][d] (T, B, H),
 * and this direction's half of enc_out[l] (B, T, D). */
static void encoder_layer_forward(Seq2Seq *m, int l, int d, int B, int T, const int32_t *in_len) {
    const S2sConfig *c = &m->c;
    S2sActs *a = &m->a;
    int H = c->hidden, D = m->D, in = l == 0 ? c->embed : D;
    int lstm = c->cell == RNN_CELL_LSTM, S = rnn_step_cache(c->cell, H);
    const nn_real *x = l == 0 ? a->enc_x : a->enc_out[l - 1]; /* (B, T, in) */
    RnnWeights w = cell_weights(&m->w.enc[l][d]);
    nn_real *hs = a->enc_h[l][d], *cs = a->enc_c[l][d], *cache = a->enc_cache[l][d];
    for (int s = 0; s < T; s++) {
        int t = enc_position(d, s, T), prev = enc_previous(d, t);
        const nn_real *hp = s == 0 ? a->zeros : hs + (size_t)prev * B * H;
        const nn_real *cp = lstm ? (s == 0 ? a->zeros : cs + (size_t)prev * B * H) : NULL;
        enc_mask(m->mask, in_len, B, t);
        rnn_step_forward(c->cell, B, in, H, &w, hs + (size_t)t * B * H, lstm ? cs + (size_t)t * B * H : NULL,
                         cache + (size_t)t * B * S, x + (size_t)t * in, T * in, hp, cp, m->mask, a->scratch);
        for (int b = 0; b < B; b++)
            memcpy(a->enc_out[l] + ((size_t)b * T + t) * D + d * H, hs + ((size_t)t * B + b) * H, sizeof(nn_real) * H);
    }
}

/* Backward of encoder_layer_forward: from d_enc_out[l] (its half) and, for the
 * top layer, the gradient of the decoder's start state (d_h0, d_c0), into
 * d_x (B, T, in) (+=) and the cell's gradients. */
static void encoder_layer_backward(Seq2Seq *m, int l, int d, int B, int T, const int32_t *in_len) {
    const S2sConfig *c = &m->c;
    S2sActs *a = &m->a;
    int H = c->hidden, D = m->D, in = l == 0 ? c->embed : D, top = l == c->layers - 1;
    int lstm = c->cell == RNN_CELL_LSTM, S = rnn_step_cache(c->cell, H);
    const nn_real *x = l == 0 ? a->enc_x : a->enc_out[l - 1];
    nn_real *dx = l == 0 ? a->d_enc_x : a->d_enc_out[l - 1];
    RnnWeights w = cell_weights(&m->w.enc[l][d]);
    RnnGrads g = cell_grads(&m->g.enc[l][d]);
    const nn_real *hs = a->enc_h[l][d], *cs = a->enc_c[l][d], *cache = a->enc_cache[l][d];
    /* dL/d(state) after the last step: from the decoder's start state (top layer) or 0 */
    nn_real *dh = a->enc_dh[0], *dh_prev = a->enc_dh[1], *dc = a->enc_dc[0], *dc_prev = a->enc_dc[1];
    for (int b = 0; b < B; b++) {
        if (top) memcpy(dh + (size_t)b * H, a->d_h0 + (size_t)b * D + d * H, sizeof(nn_real) * H);
        else memset(dh + (size_t)b * H, 0, sizeof(nn_real) * H);
        if (lstm && top) memcpy(dc + (size_t)b * H, a->d_c0 + (size_t)b * D + d * H, sizeof(nn_real) * H);
        else if (lstm) memset(dc + (size_t)b * H, 0, sizeof(nn_real) * H);
    }
    for (int s = T - 1; s >= 0; s--) {
        int t = enc_position(d, s, T), prev = enc_previous(d, t);
        const nn_real *hp = s == 0 ? a->zeros : hs + (size_t)prev * B * H;
        const nn_real *cp = lstm ? (s == 0 ? a->zeros : cs + (size_t)prev * B * H) : NULL;
        enc_mask(m->mask, in_len, B, t);
        /* the state at t also went to enc_out: dh += d_enc_out[l] (b, t, this half) */
        for (int b = 0; b < B; b++)
            vec_axpy(dh + (size_t)b * H, 1, a->d_enc_out[l] + ((size_t)b * T + t) * D + d * H, H);
        rnn_step_backward(c->cell, B, in, H, &w, &g, dx + (size_t)t * in, T * in, dh_prev, dc_prev, dh, dc,
                          cache + (size_t)t * B * S, x + (size_t)t * in, T * in, hp, cp, m->mask, a->scratch);
        swap_buffers(&dh, &dh_prev);
        swap_buffers(&dc, &dc_prev);
    }
}

/* Embedding, then every layer and direction over this batch (T steps); the
 * top layer's outputs are in enc_out[top] (B, T, D) and the decoder's start
 * state in h0, c0 (B, D): the forward direction's state after the last step
 * (masked steps carried it), the backward direction's after reaching t = 0. */
void s2s_encoder_forward(Seq2Seq *m, int B, int T, const int32_t *in_ids, const int32_t *in_len) {
    const S2sConfig *c = &m->c;
    S2sActs *a = &m->a;
    int H = c->hidden, D = m->D, top = c->layers - 1, lstm = c->cell == RNN_CELL_LSTM;
    int32_t *tok = m->batch.enc_tok; /* (B, T) */
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++) tok[(size_t)b * T + t] = t < in_len[b] ? in_ids[(size_t)b * c->max_in + t] : S2S_PAD;
    embedding_forward(a->enc_x, m->w.emb_in, tok, (size_t)B * T, c->embed);
    memset(a->zeros, 0, sizeof(nn_real) * (size_t)B * D);
    for (int l = 0; l < c->layers; l++)
        for (int d = 0; d < m->dirs; d++) encoder_layer_forward(m, l, d, B, T, in_len);
    for (int d = 0; d < m->dirs; d++) {
        int t = d == 0 ? T - 1 : 0;
        for (int b = 0; b < B; b++) {
            memcpy(a->h0 + (size_t)b * D + d * H, a->enc_h[top][d] + ((size_t)t * B + b) * H, sizeof(nn_real) * H);
            if (lstm) memcpy(a->c0 + (size_t)b * D + d * H, a->enc_c[top][d] + ((size_t)t * B + b) * H, sizeof(nn_real) * H);
            else memset(a->c0 + (size_t)b * D + d * H, 0, sizeof(nn_real) * H);
        }
    }
}

/* From d_enc_out[top] (attention's keys and values) and d_h0, d_c0, top
 * layer first, down to the input embeddings. */
void s2s_encoder_backward(Seq2Seq *m, int B, int T, const int32_t *in_len) {
    const S2sConfig *c = &m->c;
    S2sActs *a = &m->a;
    for (int l = c->layers - 1; l >= 0; l--) {
        nn_real *dx = l == 0 ? a->d_enc_x : a->d_enc_out[l - 1];
        memset(dx, 0, sizeof(nn_real) * (size_t)B * T * (l == 0 ? c->embed : m->D));
        for (int d = 0; d < m->dirs; d++) encoder_layer_backward(m, l, d, B, T, in_len);
    }
    embedding_backward(m->g.emb_in, a->d_enc_x, m->batch.enc_tok, (size_t)B * T, c->embed, S2S_PAD);
}

/* ---- decoder (teacher forced) ---------------------------------------------- */

/* Inputs BOS, then the targets shifted right; U steps from (h0, c0); the
 * states go to dec_h (U, B, D) and, batch-major, to query (B, U, D). */
void s2s_decoder_forward(Seq2Seq *m, int B, int U, const int32_t *out_ids, const int32_t *out_len) {
    const S2sConfig *c = &m->c;
    S2sActs *a = &m->a;
    int E = c->embed, D = m->D, lstm = c->cell == RNN_CELL_LSTM, S = rnn_step_cache(c->cell, D);
    int32_t *tok = m->batch.dec_tok; /* (B, U) */
    for (int b = 0; b < B; b++)
        for (int t = 0; t < U; t++)
            tok[(size_t)b * U + t] = t == 0 ? S2S_BOS : t < out_len[b] ? out_ids[(size_t)b * c->max_out + t - 1] : S2S_PAD;
    embedding_forward(a->dec_x, m->w.emb_out, tok, (size_t)B * U, E);
    RnnWeights w = cell_weights(&m->w.dec);
    for (int t = 0; t < U; t++) {
        const nn_real *hp = t == 0 ? a->h0 : a->dec_h + (size_t)(t - 1) * B * D;
        const nn_real *cp = lstm ? (t == 0 ? a->c0 : a->dec_c + (size_t)(t - 1) * B * D) : NULL;
        rnn_step_forward(c->cell, B, E, D, &w, a->dec_h + (size_t)t * B * D, lstm ? a->dec_c + (size_t)t * B * D : NULL,
                         a->dec_cache + (size_t)t * B * S, a->dec_x + (size_t)t * E, U * E, hp, cp, NULL, a->scratch);
        for (int b = 0; b < B; b++)
            memcpy(a->query + ((size_t)b * U + t) * D, a->dec_h + ((size_t)t * B + b) * D, sizeof(nn_real) * D);
    }
}

/* From d_query (B, U, D) back through time into d_h0, d_c0 (B, D), the cell's
 * gradients and the output embeddings. */
void s2s_decoder_backward(Seq2Seq *m, int B, int U) {
    const S2sConfig *c = &m->c;
    S2sActs *a = &m->a;
    int E = c->embed, D = m->D, lstm = c->cell == RNN_CELL_LSTM, S = rnn_step_cache(c->cell, D);
    RnnWeights w = cell_weights(&m->w.dec);
    RnnGrads g = cell_grads(&m->g.dec);
    nn_real *dh = a->dec_dh[0], *dh_prev = a->dec_dh[1], *dc = a->dec_dc[0], *dc_prev = a->dec_dc[1];
    memset(a->d_dec_x, 0, sizeof(nn_real) * (size_t)B * U * E);
    memset(dh, 0, sizeof(nn_real) * (size_t)B * D);
    if (lstm) memset(dc, 0, sizeof(nn_real) * (size_t)B * D);
    for (int t = U - 1; t >= 0; t--) {
        /* the state at t went to step t + 1 (dh) and to the query at t */
        for (int b = 0; b < B; b++) vec_axpy(dh + (size_t)b * D, 1, a->d_query + ((size_t)b * U + t) * D, D);
        const nn_real *hp = t == 0 ? a->h0 : a->dec_h + (size_t)(t - 1) * B * D;
        const nn_real *cp = lstm ? (t == 0 ? a->c0 : a->dec_c + (size_t)(t - 1) * B * D) : NULL;
        rnn_step_backward(c->cell, B, E, D, &w, &g, a->d_dec_x + (size_t)t * E, U * E, dh_prev, lstm ? dc_prev : NULL,
                          dh, lstm ? dc : NULL, a->dec_cache + (size_t)t * B * S, a->dec_x + (size_t)t * E, U * E, hp, cp,
                          NULL, a->scratch);
        swap_buffers(&dh, &dh_prev);
        swap_buffers(&dc, &dc_prev);
    }
    memcpy(a->d_h0, dh, sizeof(nn_real) * (size_t)B * D);
    if (lstm) memcpy(a->d_c0, dc, sizeof(nn_real) * (size_t)B * D);
    embedding_backward(m->g.emb_out, a->d_dec_x, m->batch.dec_tok, (size_t)B * U, E, S2S_PAD);
}

/* ---- attention ---------------------------------------------------------------- */

/* The attention layer's buffers (src/layers/attend.h): row b's U queries over
 * its T encoder outputs, of which it sees in_len[b]. */
static AttendGrid attention_grid(Seq2Seq *m, int T, int U, const int32_t *in_len, AttnConfig *cfg) {
    S2sActs *a = &m->a;
    *cfg = m->attn_cfg;
    cfg->n_q = U;
    cfg->n_k = T;
    return (AttendGrid){a->query, a->enc_out[m->c.layers - 1], 0, in_len, m->key_lengths, a->scores, a->weights, a->ctx};
}

/* ctx (B, U, D) = attention(query (B, U, D), keys = values = enc_out[top] (B, T, D));
 * scores and weights (B, U, T) kept. */
int s2s_attention_forward(Seq2Seq *m, int B, int T, int U, const int32_t *in_len) {
    AttnConfig cfg;
    AttendGrid x = attention_grid(m, T, U, in_len, &cfg);
    return attend_forward(&x, &m->w.attn, &cfg, B, m->a.scratch);
}

/* From d_ctx: d_query += (queries), d_enc_out[top] = (keys and values are the
 * same encoder outputs: both gradients land there), attention parameters +=. */
int s2s_attention_backward(Seq2Seq *m, int B, int T, int U, const int32_t *in_len) {
    S2sActs *a = &m->a;
    int top = m->c.layers - 1;
    AttnConfig cfg;
    AttendGrid x = attention_grid(m, T, U, in_len, &cfg);
    memset(a->d_enc_out[top], 0, sizeof(nn_real) * (size_t)B * T * m->D);
    AttendGridGrads d = {a->d_ctx, NULL, a->d_query, a->d_enc_out[top]};
    return attend_backward(&d, &m->g.attn, &x, &m->w.attn, &cfg, B, a->scratch);
}

/* ---- output layer ------------------------------------------------------------- */

void s2s_concat_forward(const Seq2Seq *m, int n, nn_real *cat, const nn_real *ctx, const nn_real *query) {
    int D = m->D, W = m->W;
    for (size_t r = 0; r < (size_t)n; r++) {
        nn_real *cr = cat + r * W;
        if (m->c.attention >= 0) {
            memcpy(cr, ctx + r * D, sizeof(nn_real) * D);
            memcpy(cr + D, query + r * D, sizeof(nn_real) * D);
        } else {
            memcpy(cr, query + r * D, sizeof(nn_real) * D);
        }
    }
}

/* o (n, D) = tanh(cat Wc + bc) and probs (n, V) = softmax(o Wout + bout) for n rows of cat (n, W). */
void s2s_output_forward(Seq2Seq *m, int n, const nn_real *cat, nn_real *o, nn_real *probs) {
    output_forward(o, probs, cat, &m->w.out, n, m->W, m->D, m->c.out_vocab);
}

/* From d_logits (n, V): the output layer's gradients, d_o, then d_cat split
 * into d_ctx and d_query (both overwritten). */
void s2s_output_backward(Seq2Seq *m, int n) {
    S2sActs *a = &m->a;
    int D = m->D, W = m->W;
    memset(a->d_cat, 0, sizeof(nn_real) * (size_t)n * W);
    output_backward(a->d_cat, a->d_o, &m->g.out, a->d_logits, a->cat, a->o, &m->w.out, n, W, D, m->c.out_vocab);
    /* cat = [ctx; query] or query */
    int attn = m->c.attention >= 0;
    for (size_t r = 0; r < (size_t)n; r++) {
        memcpy(a->d_query + r * D, a->d_cat + r * W + (attn ? D : 0), sizeof(nn_real) * D);
        if (attn) memcpy(a->d_ctx + r * D, a->d_cat + r * W, sizeof(nn_real) * D);
    }
}
