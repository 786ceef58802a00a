/* attn_forward in steps, for a caller that copies the results out of memory
 * while the pool's threads still compute them (the WASM boundary's attend
 * with copies; src/wasm/exports.c). The query rows go in blocks of
 * attn_row_blocks(); each block is marked in `done` when finished:
 *
 *   attn_overlap_begin   checks, packs and starts the row blocks on the
 *                        workers (on error nothing is left running);
 *   attn_overlap_share   computes up to `count` more blocks on the caller;
 *                        returns 1 when it did and none failed, else 0 (nothing
 *                        left to take, a failure, or the call runs on one
 *                        thread: then the first call computes every block);
 *   attn_overlap_block(b)       block b's state now: 0 (waiting or running),
 *                        ATTN_BLOCK_DONE (its rows of scores, weights and
 *                        context are final) or ATTN_BLOCK_FAILED;
 *   attn_overlap_wait_block(b)  waits until block b is done or failed; read
 *                        blocks from 0 up and stop at the first failed one;
 *   attn_overlap_end     waits for every thread and returns what attn_forward
 *                        would have, with its message.
 *
 * A caller alternates: a block computed, then the blocks finished meanwhile
 * copied out, while the workers take the blocks it does not; then it waits
 * for the rest. Blocks are dealt one at a time, so the split follows how fast
 * each thread really runs.
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
int attn_overlap_share(int count);
int attn_overlap_block(int b);
int attn_overlap_wait_block(int b);
int attn_overlap_end(void);

#endif
