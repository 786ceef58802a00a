/* The decoder's shared parts (models/decoder.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/rng.h"
#include "models/decoder.h"

int dec_check_tokens(const int32_t *tokens, int n, int least, int most, int vocab) {
    NN_TRY(nn_check_size("input: tokens", n, least, most));
    for (int i = 0; i < n; i++)
        if (tokens[i] < 0 || tokens[i] >= vocab)
            return nn_fail(NN_ERR_VALUE, "input[%d]: token %d is not in the vocabulary 0..%d", i, tokens[i], vocab - 1);
    return NN_OK;
}

int dec_set_ablation(uint8_t *ablate, int stride, int layers, int heads, const int32_t *pairs, int n) {
    nn_clear_error();
    if (n < 0 || n > layers * heads) return nn_fail(NN_ERR_SHAPE, "ablate: %d heads; need 0..%d", n, layers * heads);
    for (int i = 0; i < n; i++)
        if (pairs[2 * i] < 0 || pairs[2 * i] >= layers || pairs[2 * i + 1] < 0 || pairs[2 * i + 1] >= heads)
            return nn_fail(NN_ERR_VALUE, "ablate[%d]: layer %d, head %d; the model has layers 0..%d and heads 0..%d", i,
                           pairs[2 * i], pairs[2 * i + 1], layers - 1, heads - 1);
    for (int l = 0; l < layers; l++) memset(ablate + (size_t)l * stride, 0, (size_t)heads);
    for (int i = 0; i < n; i++) ablate[(size_t)pairs[2 * i] * stride + pairs[2 * i + 1]] = 1;
    return NN_OK;
}

int dec_argmax(const nn_real *z, int V) {
    int best = 0;
    for (int v = 1; v < V; v++)
        if (z[v] > z[best]) best = v;
    return best;
}

/* The k-th largest of x (V, reordered), 1 <= k <= V: Hoare's selection. */
static double kth_largest(double *x, int V, int k) {
    int lo = 0, hi = V - 1, want = k - 1;
    while (lo < hi) {
        double pivot = x[lo + (hi - lo) / 2];
        int i = lo, j = hi;
        while (i <= j) {
            while (x[i] > pivot) i++;
            while (x[j] < pivot) j--;
            if (i <= j) {
                double t = x[i];
                x[i++] = x[j];
                x[j--] = t;
            }
        }
        if (want <= j) hi = j;
        else if (want >= i) lo = i;
        else break;
    }
    return x[want];
}

int dec_sample(const nn_real *z, int V, int k, double temperature, uint64_t *rng, double *w) {
    for (int v = 0; v < V; v++) w[v] = z[v];
    double floor_z = k < V ? kth_largest(w, V, k) : -INFINITY, top = z[dec_argmax(z, V)], sum = 0;
    int ties = k; /* places left for logits equal to the k-th, once the larger ones have theirs */
    for (int v = 0; v < V; v++) ties -= z[v] > floor_z;
    for (int v = 0; v < V; v++) {
        int in = z[v] > floor_z || (z[v] == floor_z && ties-- > 0);
        w[v] = in ? exp(((double)z[v] - top) / temperature) : 0;
        sum += w[v];
    }
    double u = (double)(nn_rng_next(rng) >> 11) / 9007199254740992.0 * sum;
    int last = 0;
    for (int v = 0; v < V; v++) {
        if (w[v] == 0) continue;
        last = v;
        if ((u -= w[v]) < 0) return v;
    }
    return last;
}

int dec_check_generate(const DecGenerateLimits *lim, const int32_t *tokens, int n_prompt, int n_new, double temperature,
                       int k) {
    NN_TRY(dec_check_tokens(tokens, n_prompt, 1, lim->max_prompt, lim->vocab));
    if (n_new < 0 || n_new > lim->max_new)
        return nn_fail(n_new < 0 ? NN_ERR_SHAPE : NN_ERR_LIMIT, "tokens: %d; need 0..%d", n_new, lim->max_new);
    if (!(temperature >= 0) || !isfinite(temperature))
        return nn_fail(NN_ERR_VALUE, "temperature must be a finite number >= 0 (got %g)", temperature);
    if (k < 0) return nn_fail(NN_ERR_VALUE, "topK must be >= 0 (got %d)", k);
    return NN_OK;
}

int dec_generate(const DecGenerateLimits *lim, DecNextLogits next, void *model, int32_t *tokens, int n_prompt,
                 int n_new, double temperature, int k, uint64_t seed) {
    int V = lim->vocab;
    NN_TRY(dec_check_generate(lim, tokens, n_prompt, n_new, temperature, k));
    if (k == 0 || k > V) k = V;
    double *w = temperature > 0 && n_new > 0 ? malloc(sizeof(double) * (size_t)V) : NULL;
    if (temperature > 0 && n_new > 0 && !w) return nn_fail(NN_ERR_NOMEM, "out of memory for the sampling weights");
    uint64_t rng = seed;
    int st = NN_OK;
    for (int i = 0; i < n_new; i++) {
        int n = n_prompt + i;
        const nn_real *z = NULL;
        if ((st = next(model, tokens, n, i, &z)) != NN_OK) break;
        for (int v = 0; v < V && st == NN_OK; v++)
            if (!isfinite(z[v]))
                st = nn_fail(NN_ERR_VALUE, "the logits at position %d are not finite: the weights overflow float32 on "
                                           "this input",
                             n - 1);
        if (st != NN_OK) break;
        tokens[n] = temperature == 0 ? dec_argmax(z, V) : dec_sample(z, V, k, temperature, &rng, w);
    }
    free(w);
    return st;
}

void dec_add_head_scores(const nn_real *P, int heads, int n, const int32_t *source, double *prev, double *ind) {
    for (int h = 0; h < heads; h++) {
        const nn_real *A = P + (size_t)h * n * n;
        for (int t = 1; t < n; t++) prev[h] += A[(size_t)t * n + t - 1];
        for (int t = 0; t < n; t++)
            if (source[t] >= 0) ind[h] += A[(size_t)t * n + source[t]];
    }
}
