/* The copy, reverse and sort sequences (src/tasks/symbols.h). */
#include "tasks/symbols.h"

#include "base/rng.h"

int task_symbols_draw(uint64_t *rng, SymbolsOp op, int symbols, int min_len, int max_len, int32_t *in, int32_t *out) {
    int n = min_len + nn_rng_below(rng, max_len - min_len + 1);
    for (int i = 0; i < n; i++) in[i] = nn_rng_below(rng, symbols);
    if (op == SYMBOLS_SORT) { /* counting sort over the alphabet */
        int count[SYMBOLS_MAX] = {0}, o = 0;
        for (int i = 0; i < n; i++) count[in[i]]++;
        for (int a = 0; a < symbols; a++)
            while (count[a]--) out[o++] = a;
    } else {
        for (int i = 0; i < n; i++) out[i] = op == SYMBOLS_REVERSE ? in[n - 1 - i] : in[i];
    }
    return n;
}
