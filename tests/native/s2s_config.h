/* The small seq2seq configuration the model tests share: embed 4, hidden 3,
 * additive attention's hidden 5, vocabularies and lengths given. */
#ifndef ATTNLAB_TESTS_S2S_CONFIG_H
#define ATTNLAB_TESTS_S2S_CONFIG_H

#include "attnlab/seq2seq.h"

typedef struct {
    int in_vocab, out_vocab; /* symbols, PAD/BOS/EOS included */
    int max_in, max_out;     /* longest input and output */
    int batch;               /* rows at creation */
    uint64_t seed;           /* the weights' seed */
} S2sTestShape;

static inline S2sConfig s2s_test_config(S2sTestShape s, RnnCellKind cell, int layers, int bidir, int attention) {
    S2sConfig c = {0};
    c.cell = cell;
    c.layers = layers;
    c.bidirectional = bidir;
    c.embed = 4;
    c.hidden = 3;
    c.attention = attention;
    c.attn_hidden = 5;
    c.in_vocab = s.in_vocab;
    c.out_vocab = s.out_vocab;
    c.max_in = s.max_in;
    c.max_out = s.max_out;
    c.fixed_in = attention == ATTN_SCORE_LOCATION ? s.max_in : 0;
    c.batch = s.batch;
    c.seed = s.seed;
    return c;
}

#endif
