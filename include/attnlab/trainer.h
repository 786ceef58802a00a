/* attnlab trainer: a seq2seq model bound to a task. It samples training
 * batches from the task's train split, evaluates on a split, translates text
 * (greedy or beam) with the alignment matrix, and saves / loads the task and
 * the model together, so a saved file can translate on its own.
 *
 * Seeds: the model's seed fixes its initial weights; the training stream
 * (which examples are drawn) starts from the same seed, so a run is
 * reproducible natively and in WASM. Evaluation draws a fixed set of examples
 * per split (the same on every call), so numbers are comparable over time. */
#ifndef ATTNLAB_TRAINER_H
#define ATTNLAB_TRAINER_H

#include <stddef.h>
#include <stdint.h>

#include "attnlab/seq2seq.h"
#include "attnlab/tasks.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TRAINER_MAX_STEPS NN_MAX_TRAIN_STEPS /* optimiser steps per trainer_train call */
#define TRAINER_MAX_EVAL NN_MAX_EVAL          /* examples per evaluation */

typedef struct Trainer Trainer; /* opaque */

typedef struct {
    double loss;              /* mean cross-entropy per output token, teacher forced */
    double token_accuracy;    /* greedy outputs: correct tokens / target tokens (EOS included) */
    double sequence_accuracy; /* greedy outputs equal to the target, whole */
    int count;                /* examples evaluated */
    /* by input length (tokens): examples and whole-sequence successes */
    int length_count[TASK_MAX_LEN + 1];
    int length_right[TASK_MAX_LEN + 1];
} TrainerEval;

/* Creates the task (pairs: text of len bytes, else NULL) and a model for it.
 * The model config's vocabulary sizes, lengths and fixed_in are taken from
 * the task; the rest (cell, layers, sizes, attention, batch, seed) from *mc. */
int trainer_create(Trainer **out, const TaskConfig *tc, const char *text, size_t len, const S2sConfig *mc);
void trainer_destroy(Trainer *t);

const Task *trainer_task(const Trainer *t);
const TaskConfig *trainer_task_config(const Trainer *t);
Seq2Seq *trainer_model(Trainer *t);

/* steps optimiser steps on batches of B train examples. All or nothing: if a
 * step diverges (a loss, gradient norm or weight that is not finite, a weight
 * past MODEL_FILE_MAX_WEIGHT (1e6), or weights whose forward pass on the
 * probe input of s2s_check_forward is not finite) or fails otherwise, the
 * model, its optimiser state, its step count and the training draws go back
 * to where the call found them and it returns the error; divergence is
 * NN_ERR_VALUE, "training diverged at step N ... try a smaller learning rate".
 * The copy it goes back to is allocated with the trainer: a call that does not
 * grow the batch allocates nothing. A pairs task whose train split is empty
 * is NN_ERR_VALUE saying so; steps that would take the model past
 * S2S_MAX_STEPS, NN_ERR_LIMIT before any is taken.
 * Batches, B in 1..S2S_MAX_BATCH
 * (1024): a batch larger than any before grows the model's buffers (NN_ERR_NOMEM
 * if memory runs out, the model unchanged). losses (steps) or NULL receives
 * each step's mean loss; *tokens (or NULL) the target tokens seen. */
int trainer_train(Trainer *t, const NnTrainOptions *o, int steps, int B, float *losses, double *tokens);
/* The model as the last trainer_train call found it (weights, optimiser
 * state, steps, the training stream): NN_OK, or NN_ERR_ARG before any call. */
int trainer_undo(Trainer *t);

/* Loss and greedy accuracies on `count` examples of a split. */
int trainer_evaluate(Trainer *t, TaskSplit split, int count, TrainerEval *r);

/* Translates text (text_len bytes of UTF-8, see task_encode_input): in_ids (max_in) and *in_len its input ids, out_ids
 * (max_out) and *out_len the decoded ids up to and including EOS, alignment
 * (max_out, max_in) row-major, output (max_out + 1 bytes) the decoded text.
 * beam 1 is greedy. */
int trainer_translate(Trainer *t, const char *text, size_t text_len, int beam, int32_t *in_ids, int *in_len, int32_t *out_ids,
                      int *out_len, nn_real *alignment, char *output);

/* Greedy translation as trainer_translate (beam 1), then the saliency of
 * output step `step` over the in_len input tokens (see s2s_saliency). */
int trainer_saliency(Trainer *t, const char *text, size_t text_len, int step, int32_t *in_ids, int *in_len,
                     int32_t *out_ids, int *out_len, nn_real *alignment, char *output, nn_real *saliency);

/* Saving: magic "ATNLTRN\0" | u32 version | task config (4 x i32) | u32 text
 * length | text | u64 training stream | model (the seq2seq format) | u32 FNV-1a.
 * Loading checks the task, and the model's configuration against it
 * (vocabularies, lengths, the fixed input length of 'location' attention),
 * before the model is allocated, then s2s_load's checks. */
size_t trainer_save_size(const Trainer *t);
int trainer_save(const Trainer *t, uint8_t *bytes, size_t size);
int trainer_load(Trainer **out, const uint8_t *bytes, size_t size);

#ifdef __cplusplus
}
#endif
#endif
