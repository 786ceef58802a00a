/* The tutorial's attention weights with libattnlab: the query "journey" scores
 * every word of "Your journey starts with one step" by dot product, softmax
 * turns the scores into weights, and the context is the weighted sum.
 *   make lib && cc -Iinclude example.c build/libattnlab.a -lm */
#include <stdio.h>
#include <stdlib.h>

#include "attnlab/attention.h"

int main(void) {
    const float x[6][3] = {
        {0.43f, 0.15f, 0.89f}, /* Your */
        {0.22f, 0.58f, 0.33f}, /* journey */
        {0.77f, 0.25f, 0.10f}, /* starts */
        {0.05f, 0.80f, 0.55f}, /* with */
        {0.57f, 0.85f, 0.64f}, /* one */
        {0.55f, 0.87f, 0.66f}, /* step */
    };
    AttnConfig c = {.n_q = 1, .n_k = 6, .d_q = 3, .d_k = 3, .d_v = 3, .score = ATTN_SCORE_DOT,
                    .norm = ATTN_NORM_SOFTMAX, .temperature = 1};
    AttnParams p = {.beta = 1};
    float scores[6], weights[6], context[3];
    float *scratch = malloc(sizeof(float) * attn_forward_scratch_size(&c));
    if (!scratch) return 1;
    /* queries: x[1] ("journey"); keys and values: all six words */
    int status = attn_forward(&c, &p, scores, weights, context, x[1], x[0], x[0], scratch);
    free(scratch);
    if (status != NN_OK) {
        fprintf(stderr, "attnlab: %s\n", nn_last_error());
        return 1;
    }
    printf("scores: ");
    for (int j = 0; j < 6; j++) printf(" %.4f", scores[j]);
    printf("\nweights:");
    for (int j = 0; j < 6; j++) printf(" %.4f", weights[j]);
    printf("\ncontext:");
    for (int d = 0; d < 3; d++) printf(" %.4f", context[d]);
    printf("\n");
    return 0;
}
