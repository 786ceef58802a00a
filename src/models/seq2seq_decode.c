/* Decoding: greedy (a batch) and beam search (one input), both returning the
 * alignment (output steps x input tokens) that the heatmap shows. Token ids
 * follow the model's vocabulary layout (include/attnlab/seq2seq.h): decoding
 * starts from S2S_BOS and a row ends at S2S_EOS; PAD and BOS are never produced. */
#include <math.h>
#include <string.h>

#include "layers/embedding.h"
#include "models/seq2seq_internal.h"

/* One decoder step for R rows. Row r continues from (h_prev, c_prev) row r
 * with previous symbol m->dec_ids[r], attending over the encoder outputs of
 * example r (shared: example 0 for every row, the hypotheses of one input),
 * of which it sees m->row_len[r]. Writes h_out, c_out (R, D), the attention
 * weights of each row over T inputs to a->weights (R, T) and
 * log-probabilities to a->logp (R, V). */
static int decode_step(Seq2Seq *m, int R, int T, int shared, const nn_real *h_prev, const nn_real *c_prev,
                       nn_real *h_out, nn_real *c_out) {
    const S2sConfig *c = &m->c;
    S2sActs *a = &m->a;
    int E = c->embed, D = m->D, V = c->out_vocab, lstm = c->cell == RNN_CELL_LSTM;
    embedding_forward(a->dec_x, m->w.emb_out, m->dec_ids, (size_t)R, E);
    RnnWeights dw = cell_weights(&m->w.dec);
    rnn_step_forward(c->cell, R, E, D, &dw, h_out, lstm ? c_out : NULL, a->dec_cache, a->dec_x, E, h_prev,
                     lstm ? c_prev : NULL, NULL, a->scratch);
    if (c->attention >= 0) {
        AttnConfig ac = m->attn_cfg;
        ac.n_q = 1;
        ac.n_k = T;
        AttendGrid x = {h_out, a->enc_out[c->layers - 1], shared, m->row_len, NULL, a->scores, a->weights, a->ctx};
        NN_TRY(attend_forward(&x, &m->w.attn, &ac, R, a->scratch));
    }
    s2s_concat_forward(m, R, a->cat, a->ctx, h_out);
    s2s_output_forward(m, R, a->cat, a->o, a->probs);
    for (size_t i = 0; i < (size_t)R * V; i++)
        a->logp[i] = log(a->probs[i] > (nn_real)S2S_MIN_PROB ? a->probs[i] : (nn_real)S2S_MIN_PROB);
    return NN_OK;
}

static int batch_steps(const int32_t *in_len, int B) {
    int T = 0;
    for (int b = 0; b < B; b++) T = in_len[b] > T ? in_len[b] : T;
    return T;
}

/* The most likely symbol of a row of log-probabilities (V): EOS or an output symbol. */
static int greedy_pick(const nn_real *lp, int V) {
    int best = S2S_EOS;
    for (int v = S2S_FIRST_OUT; v < V; v++) best = lp[v] > lp[best] ? v : best;
    return best;
}

int s2s_greedy(Seq2Seq *m, int B, const int32_t *in_ids, const int32_t *in_len, int32_t *out_ids, int32_t *out_len,
               nn_real *alignment) {
    nn_clear_error();
    NN_TRY(s2s_check_batch(m, B, in_ids, in_len, NULL, NULL));
    const S2sConfig *c = &m->c;
    S2sActs *a = &m->a;
    int D = m->D, V = c->out_vocab, U = c->max_out;
    int T = c->attention == ATTN_SCORE_LOCATION ? c->fixed_in : batch_steps(in_len, B);
    m->have_forward = 0; /* decoding overwrites the training activations */
    s2s_encoder_forward(m, B, T, in_ids, in_len);
    for (int b = 0; b < B; b++) {
        m->dec_ids[b] = S2S_BOS;
        m->row_len[b] = in_len[b];
        out_len[b] = U;
    }
    memset(out_ids, 0, sizeof(int32_t) * (size_t)B * U);
    if (alignment) memset(alignment, 0, sizeof(nn_real) * (size_t)B * U * c->max_in);
    nn_real *h = a->h0, *cs = a->c0;
    int live = B;
    for (int t = 0; t < U && live > 0; t++) {
        nn_real *ho = a->dec_h + (size_t)t * B * D, *co = a->dec_c ? a->dec_c + (size_t)t * B * D : NULL;
        NN_TRY(decode_step(m, B, T, 0, h, cs, ho, co));
        h = ho;
        cs = co;
        for (int b = 0; b < B; b++) {
            if (out_len[b] < U && t >= out_len[b]) continue; /* finished earlier */
            int best = greedy_pick(a->logp + (size_t)b * V, V);
            out_ids[(size_t)b * U + t] = best;
            m->dec_ids[b] = best;
            if (alignment && c->attention >= 0)
                memcpy(alignment + ((size_t)b * U + t) * c->max_in, a->weights + (size_t)b * T, sizeof(nn_real) * T);
            if (best == S2S_EOS) {
                out_len[b] = t + 1;
                live--;
            }
        }
    }
    return NN_OK;
}

/* ---- beam search ------------------------------------------------------------ */

/* An extension of a live hypothesis. */
typedef struct {
    int r;     /* the hypothesis (row of the live beam) */
    int v;     /* the symbol that extends it (EOS finishes it) */
    nn_real s; /* its log-probability after the extension */
} BeamChoice;

/* The search's state between steps: live hypotheses in slot cur of the
 * double buffers (tokens, alignments, states), and the best finished one. */
typedef struct {
    int32_t *tok[2];   /* (K, U) tokens of the live hypotheses, current and next */
    int32_t *best_tok; /* (U) the best finished hypothesis */
    int cur;           /* which of the double buffers holds the live hypotheses */
    int live;          /* live hypotheses */
    int best_len;      /* tokens of the best finished hypothesis (EOS included) */
    nn_real best;      /* its log-probability (-inf until one finishes) */
} Beam;

/* The best `beam` extensions of all live hypotheses by symbols EOS..V-1,
 * sorted by log-probability; returns how many (at most beam). */
static int beam_select(const Seq2Seq *m, const Beam *s, int beam, BeamChoice *chosen) {
    int V = m->c.out_vocab, k = 0;
    const nn_real *logp = m->a.beam_logp;
    for (int r = 0; r < s->live; r++)
        for (int v = S2S_EOS; v < V; v++) {
            nn_real sc = logp[r] + m->a.logp[(size_t)r * V + v];
            if (k < beam) k++;
            else if (sc <= chosen[k - 1].s) continue;
            int i = k - 1; /* insertion into the sorted list */
            while (i > 0 && chosen[i - 1].s < sc) {
                chosen[i] = chosen[i - 1];
                i--;
            }
            chosen[i] = (BeamChoice){r, v, sc};
        }
    return k;
}

/* Alignment rows 0..t-1 of hypothesis r, then this step's weights as row t. */
static void beam_copy_align(const Seq2Seq *m, nn_real *dst, const nn_real *src, int r, int t, int T) {
    int Tmax = m->c.max_in;
    memcpy(dst, src + (size_t)r * m->c.max_out * Tmax, sizeof(nn_real) * (size_t)t * Tmax);
    memset(dst + (size_t)t * Tmax, 0, sizeof(nn_real) * Tmax);
    if (m->c.attention >= 0) memcpy(dst + (size_t)t * Tmax, m->a.weights + (size_t)r * T, sizeof(nn_real) * T);
}

/* A hypothesis finished by EOS at step t: kept if it beats the best so far. */
static void beam_finish(Seq2Seq *m, Beam *s, const BeamChoice *ch, int t, int T) {
    if (ch->s <= s->best) return;
    s->best = ch->s;
    s->best_len = t + 1;
    memcpy(s->best_tok, s->tok[s->cur] + (size_t)ch->r * m->c.max_out, sizeof(int32_t) * t);
    s->best_tok[t] = ch->v;
    beam_copy_align(m, m->a.best_align, m->a.beam_align[s->cur], ch->r, t, T);
}

/* Live hypothesis i of the next step: hypothesis ch->r extended by ch->v, with
 * its new state (ho, co row ch->r). */
static void beam_extend(Seq2Seq *m, Beam *s, const BeamChoice *ch, int i, int t, int T, const nn_real *ho,
                        const nn_real *co, nn_real *new_logp) {
    S2sActs *a = &m->a;
    int U = m->c.max_out, D = m->D, nxt = 1 - s->cur;
    new_logp[i] = ch->s;
    memcpy(s->tok[nxt] + (size_t)i * U, s->tok[s->cur] + (size_t)ch->r * U, sizeof(int32_t) * t);
    s->tok[nxt][(size_t)i * U + t] = ch->v;
    beam_copy_align(m, a->beam_align[nxt] + (size_t)i * U * m->c.max_in, a->beam_align[s->cur], ch->r, t, T);
    memcpy(a->beam_h[nxt] + (size_t)i * D, ho + (size_t)ch->r * D, sizeof(nn_real) * D);
    if (m->c.cell == RNN_CELL_LSTM) memcpy(a->beam_c[nxt] + (size_t)i * D, co + (size_t)ch->r * D, sizeof(nn_real) * D);
    m->dec_ids[i] = ch->v;
}

/* One step of the search at output position t; returns 1 when it is over. */
static int beam_step(Seq2Seq *m, Beam *s, int beam, int t, int T, int n, int *status) {
    S2sActs *a = &m->a;
    int U = m->c.max_out;
    for (int r = 0; r < s->live; r++) m->row_len[r] = n;
    nn_real *ho = a->dec_h, *co = a->dec_c; /* the hypotheses' next states (c: LSTM only) */
    *status = decode_step(m, s->live, T, 1, a->beam_h[s->cur], a->beam_c[s->cur], ho, co);
    if (*status != NN_OK) return 1;
    BeamChoice chosen[S2S_MAX_BEAM];
    nn_real new_logp[S2S_MAX_BEAM];
    int k = beam_select(m, s, beam, chosen), nlive = 0;
    for (int i = 0; i < k; i++) {
        if (chosen[i].v == S2S_EOS) beam_finish(m, s, &chosen[i], t, T);
        else beam_extend(m, s, &chosen[i], nlive++, t, T, ho, co, new_logp);
    }
    memcpy(a->beam_logp, new_logp, sizeof(nn_real) * nlive);
    s->cur = 1 - s->cur;
    s->live = nlive;
    /* scores only fall: once a finished hypothesis beats every live one, stop */
    if (s->live > 0 && s->best >= a->beam_logp[0]) return 1;
    if (s->live > 0 && t == U - 1 && s->best == -INFINITY) {
        /* nothing ended in EOS: return the best live hypothesis as it stands */
        s->best = a->beam_logp[0];
        s->best_len = U;
        memcpy(s->best_tok, s->tok[s->cur], sizeof(int32_t) * U);
        memcpy(a->best_align, a->beam_align[s->cur], sizeof(nn_real) * (size_t)U * m->c.max_in);
    }
    return s->live == 0;
}

int s2s_beam(Seq2Seq *m, int beam, const int32_t *in_ids, int n, int32_t *out_ids, int32_t *out_len, nn_real *alignment,
             nn_real *logp_out) {
    nn_clear_error();
    NN_TRY(nn_check_size("beam", beam, 1, S2S_MAX_BEAM));
    int32_t len = n;
    NN_TRY(s2s_check_batch(m, 1, in_ids, &len, NULL, NULL));
    NN_TRY(s2s_reserve(m, beam)); /* one row per hypothesis (a loaded model starts with one) */
    const S2sConfig *c = &m->c;
    S2sActs *a = &m->a;
    int D = m->D, U = c->max_out, Tmax = c->max_in;
    int T = c->attention == ATTN_SCORE_LOCATION ? c->fixed_in : n;
    m->have_forward = 0; /* decoding overwrites the training activations */
    s2s_encoder_forward(m, 1, T, in_ids, &len);
    Beam s = {{m->beam_tok, m->beam_tok + (size_t)S2S_MAX_BEAM * U}, m->beam_tok + 2 * (size_t)S2S_MAX_BEAM * U,
              0, 1, 0, -INFINITY};
    memcpy(a->beam_h[0], a->h0, sizeof(nn_real) * D);
    memcpy(a->beam_c[0], a->c0, sizeof(nn_real) * D);
    a->beam_logp[0] = 0;
    m->dec_ids[0] = S2S_BOS;
    int status = NN_OK;
    for (int t = 0; t < U; t++)
        if (beam_step(m, &s, beam, t, T, n, &status)) break;
    NN_TRY(status);
    memset(out_ids, 0, sizeof(int32_t) * U);
    memcpy(out_ids, s.best_tok, sizeof(int32_t) * s.best_len);
    *out_len = s.best_len;
    if (alignment) {
        memset(alignment, 0, sizeof(nn_real) * (size_t)U * Tmax);
        memcpy(alignment, a->best_align, sizeof(nn_real) * (size_t)s.best_len * Tmax);
    }
    if (logp_out) *logp_out = s.best;
    return NN_OK;
}
