/* Decoding: greedy (a batch) and beam search (one input), both returning the
 * alignment (output steps x input tokens) that the heatmap shows. */
#include <math.h>
#include <string.h>

#include "core/vec.h"
#include "models/seq2seq_internal.h"

/* One decoder step for R rows. Row r continues from (h_prev, c_prev) row r
 * with previous symbol m->dec_ids[r], attending over the encoder outputs of
 * example ex[r] (ex = NULL: example 0 for every row; its input length is
 * m->row_len[r]). Writes h_out, c_out (R, D), the attention weights of each
 * row over T inputs to a->weights (R, T) and log-probabilities to a->probs (R, V). */
static int decode_step(Seq2Seq *m, int R, int T, const int *ex, const nn_real *h_prev, const nn_real *c_prev,
                       nn_real *h_out, nn_real *c_out) {
    const S2sConfig *c = &m->c;
    S2sActs *a = &m->a;
    int E = c->embed, D = m->D, V = c->out_vocab, lstm = c->cell == RNN_CELL_LSTM;
    for (int r = 0; r < R; r++) memcpy(a->dec_x + (size_t)r * E, m->w.emb_out + (size_t)m->dec_ids[r] * E, sizeof(nn_real) * E);
    RnnWeights dw = s2s_cell_weights(&m->w.dec);
    rnn_step_forward(c->cell, R, E, D, &dw, h_out, lstm ? c_out : NULL, a->dec_cache, a->dec_x, E, h_prev,
                     lstm ? c_prev : NULL, NULL, a->scratch);
    for (int r = 0; r < R; r++) {
        nn_real *cat = a->cat + (size_t)r * m->W;
        if (c->attention >= 0) {
            AttnParams ap = s2s_attn_params(m);
            AttnConfig ac = m->attn_cfg;
            ac.n_q = 1;
            ac.n_k = T;
            ac.key_lengths = m->row_len + r;
            const nn_real *keys = a->enc_out[c->layers - 1] + (size_t)(ex ? ex[r] : 0) * T * D;
            NN_TRY(attn_forward(&ac, &ap, a->scores + (size_t)r * T, a->weights + (size_t)r * T, cat, h_out + (size_t)r * D,
                                keys, keys, a->scratch));
            memcpy(cat + D, h_out + (size_t)r * D, sizeof(nn_real) * D);
        } else {
            memcpy(cat, h_out + (size_t)r * D, sizeof(nn_real) * D);
        }
    }
    s2s_output(m, R, a->cat, a->o, a->probs);
    for (size_t i = 0; i < (size_t)R * V; i++) a->probs[i] = log(a->probs[i] > 1e-30f ? a->probs[i] : 1e-30f);
    return NN_OK;
}

static int batch_steps(const int32_t *in_len, int B) {
    int T = 0;
    for (int b = 0; b < B; b++) T = in_len[b] > T ? in_len[b] : T;
    return T;
}

int s2s_greedy(Seq2Seq *m, int B, const int32_t *in_ids, const int32_t *in_len, int32_t *out_ids, int32_t *out_len,
               nn_real *alignment) {
    nn_clear_error();
    NN_TRY(s2s_check_batch(m, B, in_ids, in_len, NULL, NULL));
    const S2sConfig *c = &m->c;
    S2sActs *a = &m->a;
    int D = m->D, V = c->out_vocab, U = c->max_out;
    int T = c->attention == ATTN_SCORE_LOCATION ? c->fixed_in : batch_steps(in_len, B);
    s2s_encode(m, B, T, in_ids, in_len);
    int ex[S2S_MAX_BATCH > S2S_MAX_BEAM ? S2S_MAX_BATCH : S2S_MAX_BEAM];
    for (int b = 0; b < B; b++) {
        ex[b] = b;
        m->dec_ids[b] = TASK_BOS_ID;
        m->row_len[b] = in_len[b];
        out_len[b] = U;
    }
    memset(out_ids, 0, sizeof(int32_t) * (size_t)B * U);
    if (alignment) memset(alignment, 0, sizeof(nn_real) * (size_t)B * U * c->max_in);
    nn_real *h = a->h0, *cs = a->c0;
    int live = B;
    for (int t = 0; t < U && live > 0; t++) {
        nn_real *ho = a->dec_h + (size_t)t * B * D, *co = a->dec_c ? a->dec_c + (size_t)t * B * D : NULL;
        NN_TRY(decode_step(m, B, T, ex, h, cs, ho, co));
        h = ho;
        cs = co;
        for (int b = 0; b < B; b++) {
            if (out_len[b] < U && t >= out_len[b]) continue; /* finished earlier */
            const nn_real *lp = a->probs + (size_t)b * V;
            int best = 2; /* never PAD or BOS */
            for (int v = 3; v < V; v++) best = lp[v] > lp[best] ? v : best;
            out_ids[(size_t)b * U + t] = best;
            m->dec_ids[b] = best;
            if (alignment && c->attention >= 0)
                memcpy(alignment + ((size_t)b * U + t) * c->max_in, a->weights + (size_t)b * T, sizeof(nn_real) * T);
            if (best == TASK_EOS_ID) {
                out_len[b] = t + 1;
                live--;
            }
        }
    }
    return NN_OK;
}

int s2s_beam(Seq2Seq *m, int beam, const int32_t *in_ids, int n, int32_t *out_ids, int32_t *out_len, nn_real *alignment,
             nn_real *logp_out) {
    nn_clear_error();
    if (beam < 1 || beam > S2S_MAX_BEAM) return nn_fail(NN_ERR_LIMIT, "beam: %d; it must be within 1..%d", beam, S2S_MAX_BEAM);
    int32_t len = n;
    NN_TRY(s2s_check_batch(m, 1, in_ids, &len, NULL, NULL));
    const S2sConfig *c = &m->c;
    S2sActs *a = &m->a;
    int D = m->D, V = c->out_vocab, U = c->max_out, Tmax = c->max_in;
    int T = c->attention == ATTN_SCORE_LOCATION ? c->fixed_in : n;
    s2s_encode(m, 1, T, in_ids, &len);
    int32_t *tok[2] = {m->beam_tok, m->beam_tok + (size_t)S2S_MAX_BEAM * U}, *best_tok = m->beam_tok + 2 * (size_t)S2S_MAX_BEAM * U;
    nn_real *logp = a->beam_logp, new_logp[S2S_MAX_BEAM];
    int cur = 0, live = 1, best_len = 0;
    nn_real best = -INFINITY;
    memcpy(a->beam_h[0], a->h0, sizeof(nn_real) * D);
    memcpy(a->beam_c[0], a->c0, sizeof(nn_real) * D);
    logp[0] = 0;
    m->dec_ids[0] = TASK_BOS_ID;
    for (int t = 0; t < U && live > 0; t++) {
        for (int r = 0; r < live; r++) m->row_len[r] = n;
        nn_real *ho = a->dec_h, *co = a->dec_c ? a->dec_c : a->dec_h + (size_t)S2S_MAX_BEAM * D;
        NN_TRY(decode_step(m, live, T, NULL, a->beam_h[cur], a->beam_c[cur], ho, co));
        /* the best `beam` extensions of all live hypotheses (symbols 2..V-1) */
        int chosen_r[S2S_MAX_BEAM], chosen_v[S2S_MAX_BEAM], k = 0;
        nn_real chosen_s[S2S_MAX_BEAM];
        for (int r = 0; r < live; r++)
            for (int v = 2; v < V; v++) {
                nn_real s = logp[r] + a->probs[(size_t)r * V + v];
                if (k < beam) k++;
                else if (s <= chosen_s[k - 1]) continue;
                int i = k - 1; /* insertion into the sorted list */
                while (i > 0 && chosen_s[i - 1] < s) {
                    chosen_s[i] = chosen_s[i - 1];
                    chosen_r[i] = chosen_r[i - 1];
                    chosen_v[i] = chosen_v[i - 1];
                    i--;
                }
                chosen_s[i] = s;
                chosen_r[i] = r;
                chosen_v[i] = v;
            }
        int nxt = 1 - cur, nlive = 0;
        for (int i = 0; i < k; i++) {
            int r = chosen_r[i], v = chosen_v[i];
            if (v == TASK_EOS_ID) {
                if (chosen_s[i] > best) { /* a finished hypothesis */
                    best = chosen_s[i];
                    best_len = t + 1;
                    memcpy(best_tok, tok[cur] + (size_t)r * U, sizeof(int32_t) * t);
                    best_tok[t] = v;
                    memcpy(a->best_align, a->beam_align[cur] + (size_t)r * U * Tmax, sizeof(nn_real) * (size_t)t * Tmax);
                    memset(a->best_align + (size_t)t * Tmax, 0, sizeof(nn_real) * Tmax);
                    if (c->attention >= 0) memcpy(a->best_align + (size_t)t * Tmax, a->weights + (size_t)r * T, sizeof(nn_real) * T);
                }
                continue;
            }
            new_logp[nlive] = chosen_s[i];
            memcpy(tok[nxt] + (size_t)nlive * U, tok[cur] + (size_t)r * U, sizeof(int32_t) * t);
            tok[nxt][(size_t)nlive * U + t] = v;
            nn_real *al = a->beam_align[nxt] + (size_t)nlive * U * Tmax;
            memcpy(al, a->beam_align[cur] + (size_t)r * U * Tmax, sizeof(nn_real) * (size_t)t * Tmax);
            memset(al + (size_t)t * Tmax, 0, sizeof(nn_real) * Tmax);
            if (c->attention >= 0) memcpy(al + (size_t)t * Tmax, a->weights + (size_t)r * T, sizeof(nn_real) * T);
            memcpy(a->beam_h[nxt] + (size_t)nlive * D, ho + (size_t)r * D, sizeof(nn_real) * D);
            if (c->cell == RNN_CELL_LSTM) memcpy(a->beam_c[nxt] + (size_t)nlive * D, co + (size_t)r * D, sizeof(nn_real) * D);
            m->dec_ids[nlive] = v;
            nlive++;
        }
        for (int i = 0; i < nlive; i++) logp[i] = new_logp[i];
        cur = nxt;
        live = nlive;
        /* scores only fall: once a finished hypothesis beats every live one, stop */
        if (live > 0 && best >= logp[0]) break;
        if (live > 0 && t == U - 1 && best == -INFINITY) {
            /* nothing ended in EOS: return the best live hypothesis as it stands */
            best = logp[0];
            best_len = U;
            memcpy(best_tok, tok[cur], sizeof(int32_t) * U);
            memcpy(a->best_align, a->beam_align[cur], sizeof(nn_real) * (size_t)U * Tmax);
        }
    }
    memset(out_ids, 0, sizeof(int32_t) * U);
    memcpy(out_ids, best_tok, sizeof(int32_t) * best_len);
    *out_len = best_len;
    if (alignment) {
        memset(alignment, 0, sizeof(nn_real) * (size_t)U * Tmax);
        memcpy(alignment, a->best_align, sizeof(nn_real) * (size_t)best_len * Tmax);
    }
    if (logp_out) *logp_out = best;
    return NN_OK;
}
