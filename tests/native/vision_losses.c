/* Prints the losses of a short seeded image-model training run as JSON, for
 * the JS test that checks the WASM builds train like native C.
 *   vision_losses <digits.bin> <task> <attention> <mode> <seed> <steps> <batch> <start>
 * (channels 4, 8; hidden 16; GRU; Adam, lr 0.002, clip 5: the JS test's model) */
#include <stdio.h>
#include <stdlib.h>

#include "attnlab/vision.h"

int main(int argc, char **argv) {
    if (argc != 9) {
        fprintf(stderr, "usage: %s digits.bin task attention mode seed steps batch start\n", argv[0]);
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    if (!f) {
        fprintf(stderr, "cannot open %s\n", argv[1]);
        return 1;
    }
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *bytes = malloc((size_t)size);
    if (!bytes || fread(bytes, 1, (size_t)size, f) != (size_t)size) return 1;
    fclose(f);
    VisData *d;
    if (vis_data_create(&d, bytes, (size_t)size) != NN_OK) {
        fprintf(stderr, "%s\n", nn_last_error());
        return 1;
    }
    int steps = atoi(argv[6]), batch = atoi(argv[7]);
    ImgTaskConfig tc = {(ImgTaskKind)atoi(argv[2]), 4, 2, 3, 0};
    VisConfig mc = {0, 0, 2, {4, 8, 0}, RNN_CELL_GRU, 16, atoi(argv[3]), (VisMode)atoi(argv[4]), 1, 0, 0.01f, batch,
                    (uint64_t)atoll(argv[5]), (VisStart)atoi(argv[8]), VIS_SENSOR_GRID, 0, 0, 0};
    NnTrainOptions o = {.optimizer = NN_ADAM, .lr = 0.002f, .clip = 5};
    VisionTrainer *t;
    float *losses = malloc(sizeof(float) * (size_t)steps);
    if (!losses || vtr_create(&t, d, &tc, &mc) != NN_OK || vtr_train(t, &o, steps, batch, losses) != NN_OK) {
        fprintf(stderr, "%s\n", nn_last_error());
        return 1;
    }
    printf("[");
    for (int i = 0; i < steps; i++) printf("%s%.9g", i ? ", " : "", (double)losses[i]);
    printf("]\n");
    vtr_destroy(t);
    vis_data_destroy(d);
    free(losses);
    free(bytes);
    return 0;
}
