/* The one-row load (s2s_load_rows): the loader's probe runs on a model of one
 * row, which then grows on demand, so a file the probe rejects never costs a
 * batch's rows. A model loaded with one row decodes as the saved one: beam
 * search grows it to the beam's width, a batch needs s2s_reserve (the
 * trainer's path) and is refused, not overrun, without it; s2s_load keeps
 * its S2S_MAX_BEAM rows. A file of finite weights whose probe fails is
 * rejected from the one-row model and leaves nothing behind. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "models/seq2seq_internal.h" /* s2s_load_rows, the weight views */
#include "s2s_config.h"

enum { B = 3, T = 7, U = 6, BEAM = 4 };

static uint8_t *save(const Seq2Seq *m, size_t *n) {
    *n = s2s_save_size(m);
    uint8_t *bytes = malloc(*n);
    if (!bytes || s2s_save(m, bytes, *n) != NN_OK) {
        CHECK(0, "save: %s", nn_last_error());
        free(bytes);
        return NULL;
    }
    return bytes;
}

/* A trained model, so that decoding picks more than one symbol. */
static Seq2Seq *trained(RnnCellKind cell, int attention, int32_t *in_ids, int32_t *in_len) {
    S2sTestShape shape = {9, 9, T, U, 8, 3};
    S2sConfig c = s2s_test_config(shape, cell, 1, 1, attention);
    Seq2Seq *m = NULL;
    if (!CHECK_OK(s2s_create(&m, &c), "create")) return NULL;
    int32_t out_ids[B * U], out_len[B];
    for (int b = 0; b < B; b++) {
        in_len[b] = attention == ATTN_SCORE_LOCATION ? T : 3 + b;
        out_len[b] = 2 + b;
        for (int t = 0; t < T; t++) in_ids[b * T + t] = 1 + (b * 3 + t) % 8;
        for (int t = 0; t < U; t++) out_ids[b * U + t] = t + 1 == out_len[b] ? S2S_EOS : 3 + (b + 2 * t) % 6;
    }
    NnTrainOptions o = {.optimizer = NN_ADAM, .lr = 0.05f, .clip = 5};
    nn_real loss;
    for (int i = 0; i < 20; i++) CHECK_OK(s2s_train_step(m, &o, B, in_ids, in_len, out_ids, out_len, &loss), "train");
    return m;
}

static void test_one_row(RnnCellKind cell, int attention) {
    check_case("a model loaded with one row decodes as the saved one (cell %d, attention %d)", (int)cell, attention);
    int32_t in_ids[B * T], in_len[B];
    Seq2Seq *m = trained(cell, attention, in_ids, in_len), *one = NULL, *beam_rows = NULL;
    size_t n;
    uint8_t *bytes = m ? save(m, &n) : NULL;
    if (!bytes || !CHECK_OK(s2s_load_rows(&one, bytes, n, 1), "load with one row")) goto done;
    CHECK(s2s_capacity(one) == 1, "capacity %d", s2s_capacity(one));

    int32_t want[U], got[U], want_len, got_len;
    nn_real want_lp, got_lp, want_align[U * T], got_align[U * T];
    CHECK_OK(s2s_beam(m, BEAM, in_ids, in_len[0], want, &want_len, want_align, &want_lp), "beam");
    CHECK_OK(s2s_beam(one, BEAM, in_ids, in_len[0], got, &got_len, got_align, &got_lp), "beam, loaded");
    /* the file holds float32 weights: the double build's loaded model rounds them */
    CHECK(got_len == want_len && memcmp(got, want, sizeof(int32_t) * want_len) == 0, "beam %d: the same hypothesis", BEAM);
    CHECK_CLOSE(got_lp, want_lp, 1e-5, 1e-5, "its log p");
    CHECK_ARRAY_R(got_align, want_align, U * T, T, 1e-5, 1e-5, "its alignment");
    CHECK(s2s_capacity(one) == BEAM, "the beam grew it to %d rows: %d", BEAM, s2s_capacity(one));

    int32_t gw[B * U], gwl[B], gg[B * U], ggl[B];
    CHECK_OK(s2s_greedy(m, B, in_ids, in_len, gw, gwl, NULL), "greedy");
    CHECK(s2s_greedy(one, BEAM + 1, in_ids, in_len, gg, ggl, NULL) == NN_ERR_LIMIT, "a batch past its rows is refused");
    CHECK_OK(s2s_greedy(one, B, in_ids, in_len, gg, ggl, NULL), "greedy, loaded");
    CHECK(memcmp(gg, gw, sizeof gw) == 0 && memcmp(ggl, gwl, sizeof gwl) == 0, "greedy decodes the same");

    CHECK_OK(s2s_load(&beam_rows, bytes, n), "s2s_load");
    CHECK(beam_rows && s2s_capacity(beam_rows) == S2S_MAX_BEAM, "s2s_load: capacity %d",
          beam_rows ? s2s_capacity(beam_rows) : 0);
done:
    s2s_destroy(beam_rows);
    s2s_destroy(one);
    s2s_destroy(m);
    free(bytes);
}

/* Finite weights within the file's limit whose gradient is not finite: zero
 * embeddings and biases keep every state at 0, and decoder recurrent weights
 * of +-1e6 multiply the gradient by about 1e6 per step back in time. */
static void test_probe_rejects(void) {
    check_case("a file whose probe fails is rejected from a one-row model");
    S2sTestShape shape = {9, 9, 64, 64, 64, 8};
    S2sConfig c = s2s_test_config(shape, RNN_CELL_LSTM, 2, 1, ATTN_SCORE_ADDITIVE);
    Seq2Seq *m = NULL, *got = NULL;
    if (!CHECK_OK(s2s_create(&m, &c), "create")) return;
    S2sWeights *w = &m->w;
    int H = c.hidden, D = m->D, G = 4; /* LSTM: 4 gates */
    memset(w->emb_in, 0, sizeof(nn_real) * c.in_vocab * c.embed);
    memset(w->emb_out, 0, sizeof(nn_real) * c.out_vocab * c.embed);
    for (int l = 0; l < c.layers; l++)
        for (int d = 0; d < m->dirs; d++) {
            memset(w->enc[l][d].bx, 0, sizeof(nn_real) * G * H);
            memset(w->enc[l][d].bh, 0, sizeof(nn_real) * G * H);
        }
    memset(w->dec.bx, 0, sizeof(nn_real) * G * D);
    memset(w->dec.bh, 0, sizeof(nn_real) * G * D);
    for (int i = 0; i < D * G * D; i++) w->dec.Wh[i] = i % 3 ? 1e6f : -1e6f;
    size_t n;
    uint8_t *bytes = save(m, &n);
    if (bytes) {
        int st = s2s_load_rows(&got, bytes, n, 1);
        CHECK(st == NN_ERR_VALUE && got == NULL && strstr(nn_last_error(), "probe"), "status %d: %s", st,
              nn_last_error());
    }
    s2s_destroy(got);
    s2s_destroy(m);
    free(bytes);
}

int main(void) {
    test_one_row(RNN_CELL_LSTM, ATTN_SCORE_ADDITIVE);
    test_one_row(RNN_CELL_GRU, S2S_ATTN_NONE);
    test_one_row(RNN_CELL_RNN, ATTN_SCORE_LOCATION);
    test_probe_rejects();
    return check_summary();
}
