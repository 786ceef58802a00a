#define _POSIX_C_SOURCE 199309L
/* Native training throughput of the benchmark model (TensorFlow.js's
 * date-conversion-attention example): LSTM encoder and decoder of 64 units,
 * embedding 64, inputs of 12 symbols (36 ids), outputs of 10 (13 ids), Luong
 * dot attention, [context; state] -> Dense(64, tanh) -> softmax, batch 128,
 * Adam. Random ids, full lengths. Prints "native examples/s <x>". */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "attnlab/seq2seq.h"

enum { B = 128, N_IN = 12, N_OUT = 10, IN_VOCAB = 36, OUT_VOCAB = 13 };

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv) {
    int steps = argc > 1 ? atoi(argv[1]) : 30;
    S2sConfig c = {RNN_CELL_LSTM, 1, 0, 64, 64, ATTN_SCORE_DOT, 0, IN_VOCAB, OUT_VOCAB, N_IN, N_OUT, 0, B, 1};
    Seq2Seq *m;
    if (s2s_create(&m, &c) != NN_OK) {
        fprintf(stderr, "s2s_create: %s\n", nn_last_error());
        return 1;
    }
    static int32_t in_ids[B * N_IN], in_len[B], out_ids[B * N_OUT], out_len[B];
    uint64_t s = 12345;
    for (int b = 0; b < B; b++) {
        for (int t = 0; t < N_IN; t++) s = s * 6364136223846793005ull + 1, in_ids[b * N_IN + t] = 1 + (int)((s >> 33) % (IN_VOCAB - 1));
        for (int t = 0; t < N_OUT - 1; t++) s = s * 6364136223846793005ull + 1, out_ids[b * N_OUT + t] = 3 + (int)((s >> 33) % 10);
        out_ids[b * N_OUT + N_OUT - 1] = 2; /* EOS */
        in_len[b] = N_IN;
        out_len[b] = N_OUT;
    }
    NnTrainOptions o = {.optimizer = NN_ADAM, .lr = (nn_real)0.001, .clip = 0};
    nn_real loss;
    for (int i = 0; i < 3; i++) s2s_train_step(m, &o, B, in_ids, in_len, out_ids, out_len, &loss); /* warm-up */
    double t0 = now();
    for (int i = 0; i < steps; i++) {
        if (s2s_train_step(m, &o, B, in_ids, in_len, out_ids, out_len, &loss) != NN_OK) {
            fprintf(stderr, "train: %s\n", nn_last_error());
            return 1;
        }
    }
    double dt = now() - t0;
    printf("native examples/s %.1f (ms/step %.3f, loss %.4f)\n", steps * B / dt, 1e3 * dt / steps, (double)loss);
    s2s_destroy(m);
    return 0;
}
