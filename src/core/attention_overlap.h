/* attn_forward in steps, for a caller that copies the results out of memory
 * while the pool's threads still compute them (the WASM boundary's attend
 * with copies; src/wasm/exports.c). The query rows go in blocks of
 * attn_row_blocks(); each block is marked in `done` when finished:
 *
 *   attn_overlap_begin   checks, packs and starts the row blocks on the
 *                        workers (on error nothing is left running);
 *   attn_overlap_share   computes blocks on the caller until `stop` blocks
 *                        are taken, then returns (all of them when the call
 *                        runs on one thread);
 *   attn_overlap_wait_block(b)  waits until block b is ATTN_BLOCK_DONE (its
 *                        rows of scores, weights and context are final) or
 *                        ATTN_BLOCK_FAILED; read blocks from 0 up and stop at
 *                        the first failed one;
 *   attn_overlap_end     waits for every thread and returns what attn_forward
 *                        would have, with its message.
 *
 * After a successful begin, share and end must follow, in that order; one
 * such forward at a time, and no other engine call in between. */
#ifndef ATTNLAB_CORE_ATTENTION_OVERLAP_H
#define ATTNLAB_CORE_ATTENTION_OVERLAP_H

#include <stdint.h>

#include "attnlab/attention.h"

#define ATTN_BLOCK_DONE 1
#define ATTN_BLOCK_FAILED 2

/* Row blocks of a forward (`done` holds one int32 per block), and their rows. */
int attn_row_blocks(const AttnConfig *c);
int attn_block_rows(void);

int attn_overlap_begin(const AttnConfig *c, const AttnParams *p, nn_real *scores, nn_real *weights,
                       nn_real *context, const nn_real *q, const nn_real *k, const nn_real *v,
                       nn_real *scratch, int32_t *done);
void attn_overlap_share(int stop);
int attn_overlap_wait_block(int b);
int attn_overlap_end(void);

#endif
