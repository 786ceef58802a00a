/* Seq2seq saliency (implicit attention): |d log p(y_step) / d x_j| per input
 * token against central differences of log p over that token's embedding
 * row (double build; the input's tokens are distinct, so a row is one
 * position), for every cell and attention score; in every build, the
 * weights are untouched, the gradients left at zero, and a bad step is an
 * error that leaves the model usable. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "fd.h"
#include "s2s_config.h"
#include "models/seq2seq_internal.h"

enum { MAX_IN = 5, MAX_OUT = 4, IN_VOCAB = 7, OUT_VOCAB = 8, E = 4 }; /* E: the embedding of s2s_test_config */

static const char *const cells[] = {"rnn", "gru", "lstm"};

static S2sConfig config(RnnCellKind cell, int bidir, int attention) {
    return s2s_test_config((S2sTestShape){IN_VOCAB, OUT_VOCAB, MAX_IN, MAX_OUT, 2, 99}, cell, 1, bidir, attention);
}

#ifdef NN_DOUBLE
/* log p(out_ids[step]) of one teacher-forced example. */
typedef struct {
    Seq2Seq *m;
    const int32_t *in_ids, *out_ids;
    int n, out_len, step;
} LogpCase;

static double logp_of(void *ctx) {
    LogpCase *k = ctx;
    int32_t in_len = k->n, out_len = k->out_len;
    nn_real loss;
    if (s2s_forward(k->m, 1, k->in_ids, &in_len, k->out_ids, &out_len, &loss) != NN_OK) return NAN;
    return log(k->m->a.probs[(size_t)k->step * OUT_VOCAB + k->out_ids[k->step]]);
}
#endif

static void one_case(RnnCellKind cell, int bidir, int attention) {
    check_case("saliency %s bidir=%d attention=%d", cells[cell], bidir, attention);
    S2sConfig c = config(cell, bidir, attention);
    Seq2Seq *m;
    if (!CHECK(s2s_create(&m, &c) == NN_OK, "create: %s", nn_last_error())) return;
    Rng r = {5 + (uint64_t)cell * 7 + (uint64_t)attention};
    nn_real *p = s2s_params(m);
    size_t P = s2s_num_params(m);
    for (size_t i = 0; i < P; i++) p[i] += 0.3 * rng_uniform(&r, -1, 1); /* a model far from uniform outputs */
    int32_t in_ids[MAX_IN] = {3, 1, 6, 2, 5}, out_ids[MAX_OUT] = {4, 7, 3, 2};
    int n = attention == ATTN_SCORE_LOCATION ? MAX_IN : 4, out_len = MAX_OUT;
    nn_real before[4096];
    size_t keep = P < 4096 ? P : 4096;
    memcpy(before, p, sizeof(nn_real) * keep);
    for (int step = 0; step < out_len; step++) {
        nn_real sal[MAX_IN];
        if (!CHECK(s2s_saliency(m, in_ids, n, out_ids, out_len, step, sal) == NN_OK, "step %d: %s", step,
                   nn_last_error()))
            continue;
#ifdef NN_DOUBLE
        LogpCase lc = {m, in_ids, out_ids, n, out_len, step};
        double worst = 0;
        for (int j = 0; j < n; j++) {
            double num[E], norm = 0;
            fd_engine(m->w.emb_in + (size_t)in_ids[j] * E, E, 1e-6, logp_of, &lc, num);
            for (int e = 0; e < E; e++) norm += num[e] * num[e];
            norm = sqrt(norm);
            double err = fabs(norm - sal[j]) / (1e-7 + norm + fabs(sal[j]));
            worst = err > worst ? err : worst;
        }
        CHECK(worst < 1e-5, "step %d: worst relative error %.3g against finite differences", step, worst);
#else
        int finite = 1;
        for (int j = 0; j < n; j++) finite &= isfinite(sal[j]) && sal[j] >= 0;
        CHECK(finite, "step %d: saliency finite and non-negative", step);
#endif
    }
    CHECK(memcmp(before, p, sizeof(nn_real) * keep) == 0, "the weights are untouched");
    int zero = 1;
    for (size_t i = 0; i < P; i++) zero &= s2s_grads(m)[i] == 0;
    CHECK(zero, "the gradients are left at zero");
    nn_real sal[MAX_IN];
    CHECK(s2s_saliency(m, in_ids, n, out_ids, out_len, out_len, sal) == NN_ERR_VALUE &&
              strstr(nn_last_error(), "step") != NULL,
          "a step past the output: %s", nn_last_error());
    CHECK(s2s_saliency(m, in_ids, n, out_ids, out_len, -1, sal) == NN_ERR_VALUE, "a negative step");
    CHECK(s2s_saliency(m, in_ids, n, out_ids, 0, 0, sal) == NN_ERR_VALUE, "an empty output");
    CHECK(s2s_saliency(m, in_ids, n, out_ids, out_len, 0, sal) == NN_OK, "usable after the errors: %s",
          nn_last_error());
    s2s_destroy(m);
}

int main(void) {
    const int atts[] = {S2S_ATTN_NONE, ATTN_SCORE_DOT, ATTN_SCORE_SCALED_DOT, ATTN_SCORE_GENERAL, ATTN_SCORE_ADDITIVE,
                        ATTN_SCORE_COSINE, ATTN_SCORE_LOCATION};
    for (int cell = 0; cell < RNN_CELL_COUNT; cell++)
        for (int k = 0; k < 7; k++) one_case((RnnCellKind)cell, (k + cell) % 2, atts[k]);
    return check_summary();
}
