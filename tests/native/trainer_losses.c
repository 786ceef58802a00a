/* Prints the losses of a short seeded training run as JSON, for the JS test
 * that checks the WASM builds train exactly like native C (same seed, same
 * draws, same numbers within float tolerance).
 *   trainer_losses <task> <min_len> <max_len> <cell> <attention> <seed> <steps> <batch> <lr> */
#include <stdio.h>
#include <stdlib.h>

#include "attnlab/trainer.h"

int main(int argc, char **argv) {
    if (argc != 10) {
        fprintf(stderr, "usage: %s task min_len max_len cell attention seed steps batch lr\n", argv[0]);
        return 2;
    }
    TaskConfig tc = {(TaskKind)atoi(argv[1]), TASK_DIGITS, atoi(argv[2]), atoi(argv[3])};
    int steps = atoi(argv[7]), batch = atoi(argv[8]);
    S2sConfig mc = {(RnnCellKind)atoi(argv[4]), 1, 0, 16, 32, atoi(argv[5]), 0, 0, 0, 0, 0, 0, batch,
                    (uint64_t)atoll(argv[6])};
    NnTrainOptions o = {.optimizer = NN_ADAM, .lr = (nn_real)atof(argv[9]), .clip = 5};
    Trainer *t;
    if (trainer_create(&t, &tc, NULL, 0, &mc) != NN_OK) {
        fprintf(stderr, "%s\n", nn_last_error());
        return 1;
    }
    float *losses = malloc(sizeof(float) * (size_t)steps);
    if (!losses || trainer_train(t, &o, steps, batch, losses, NULL) != NN_OK) {
        fprintf(stderr, "%s\n", nn_last_error());
        return 1;
    }
    printf("[");
    for (int i = 0; i < steps; i++) printf("%s%.9g", i ? "," : "", losses[i]);
    printf("]\n");
    free(losses);
    trainer_destroy(t);
    return 0;
}
