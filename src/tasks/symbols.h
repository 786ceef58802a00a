/* The copy, reverse and sort sequences, one generator for the seq2seq tasks
 * (src/tasks/tasks.c, over an alphabet's characters) and the transformer's
 * (src/tasks/sequence_tasks.c, over digit tokens): both draw alike. */
#ifndef ATTNLAB_TASKS_SYMBOLS_H
#define ATTNLAB_TASKS_SYMBOLS_H

#include <stdint.h>

typedef enum { SYMBOLS_COPY = 0, SYMBOLS_REVERSE = 1, SYMBOLS_SORT = 2 } SymbolsOp;
#define SYMBOLS_MAX 256 /* largest alphabet */

/* Draws a length n uniform in min_len..max_len, then n symbols uniform in
 * 0..symbols-1 into in (n); out (n) gets them copied, reversed or sorted
 * ascending. Returns n. 1 <= symbols <= SYMBOLS_MAX, min_len <= max_len. */
int task_symbols_draw(uint64_t *rng, SymbolsOp op, int symbols, int min_len, int max_len, int32_t *in, int32_t *out);

#endif
