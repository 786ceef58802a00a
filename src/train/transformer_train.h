/* A transformer bound to its task: the public Transformer handle of
 * include/attnlab/transformer.h, shared by transformer_train.c and
 * transformer_io.c. The model (src/models/transformer_internal.h) knows
 * its vocabulary, not its task. Not a public header. */
#ifndef ATTNLAB_TRAIN_TRANSFORMER_TRAIN_H
#define ATTNLAB_TRAIN_TRANSFORMER_TRAIN_H

#include "models/transformer_internal.h"
#include "tasks/sequence_tasks.h"

struct Transformer {
    TfModel *model;     /* the network, owned */
    SeqTask task;       /* what it trains on and is evaluated on, owned */
    uint8_t *text;      /* the text the task was made from (saved with the model), or NULL */
    size_t text_len;
    uint64_t train_rng; /* the training draws (saved) */
};

/* tf_create with the text cut into tokens by `unit` (tf_create: characters;
 * a 'text' model of a format 1 file: bytes). */
int tf_create_cut(Transformer **out, const TfConfig *c, const char *text, size_t text_len, SeqUnit unit);

#endif
