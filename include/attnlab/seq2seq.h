/* attnlab encoder-decoder with attention.
 *
 * Encoder: embedding, then 1 or 2 recurrent layers (RNN, GRU or LSTM),
 * left-to-right or bidirectional (the two directions' states concatenated:
 * D = hidden * directions). Decoder: embedding and one recurrent layer of size
 * D, started from the encoder's final state (forward direction's last state,
 * backward direction's first). Attention, Luong style: the decoder state s_t
 * is the query over the encoder outputs h_1..h_n, context c_t = sum_j a_tj h_j,
 * then o_t = tanh(Wc [c_t; s_t] + bc), p_t = softmax(Wout o_t + bout).
 * Luong rather than Bahdanau's input feeding because the decoder states do not
 * depend on the contexts: attention for all output steps of a sequence is one
 * call of the core (attn_forward / attn_backward), exactly the op the
 * playground shows, and it is the model of TensorFlow.js's date-conversion
 * example that the benchmark compares against. With attention "none" the
 * decoder sees only the encoder's final state (the bottleneck): o_t = tanh(Wc s_t + bc).
 *
 * Training: cross-entropy with teacher forcing, Adam or SGD, gradient
 * clipping by global norm. Parameters, gradients, optimiser state and
 * activations each live in one allocation sized from a table at create time.
 * A seed fixes the initial weights (same natively and in WASM). */
#ifndef ATTNLAB_SEQ2SEQ_H
#define ATTNLAB_SEQ2SEQ_H

#include <stddef.h>
#include <stdint.h>

#include "attnlab/attention.h"
#include "attnlab/nn.h"
#include "attnlab/optim.h"
#include "attnlab/rnn.h"

#ifdef __cplusplus
extern "C" {
#endif

#define S2S_ATTN_NONE (-1)
#define S2S_MAX_HIDDEN 512
#define S2S_MAX_EMBED 512
#define S2S_MAX_VOCAB 256
#define S2S_MAX_LEN 64
#define S2S_MAX_BATCH 1024 /* rows of a training or evaluation batch (s2s_reserve grows a model up to it) */
#define S2S_MAX_BEAM 16
#define S2S_MAX_STEPS NN_MAX_OPT_STEPS /* optimiser steps a model can take (its step count is an int32) */

/* The model's vocabulary layout, which the tasks write their ids in
 * (include/attnlab/tasks.h): inputs are PAD, then symbols from S2S_FIRST_IN;
 * outputs are PAD, BOS (the decoder's first input), EOS (ends an answer),
 * then symbols from S2S_FIRST_OUT. */
enum { S2S_PAD = 0, S2S_BOS = 1, S2S_EOS = 2, S2S_FIRST_IN = 1, S2S_FIRST_OUT = 3 };

typedef struct {
    RnnCellKind cell;  /* recurrent cell of the encoder and the decoder */
    int layers;        /* encoder layers: 1 or 2 */
    int bidirectional; /* encoder reads both ways */
    int embed;         /* embedding size (input and output symbols) */
    int hidden;        /* encoder hidden size per direction */
    int attention;     /* an AttnScore, or S2S_ATTN_NONE */
    int attn_hidden;   /* additive score's hidden size (0: D) */
    int in_vocab;      /* input ids, PAD = 0 included */
    int out_vocab;     /* output ids, PAD = 0, BOS = 1, EOS = 2 included */
    int max_in;        /* longest input, tokens */
    int max_out;       /* longest output, tokens (EOS included) */
    int fixed_in;      /* location score: the one input length it supports (else 0) */
    int batch;         /* the batch the buffers are first sized for; s2s_reserve grows them */
    uint64_t seed;     /* initial weights */
} S2sConfig;

typedef struct Seq2Seq Seq2Seq; /* opaque */

int s2s_create(Seq2Seq **out, const S2sConfig *c);
void s2s_destroy(Seq2Seq *m);
const S2sConfig *s2s_config(const Seq2Seq *m);
size_t s2s_num_params(const Seq2Seq *m);
nn_real *s2s_params(Seq2Seq *m); /* the one parameter block (s2s_num_params reals) */
nn_real *s2s_grads(Seq2Seq *m);  /* its gradients, same layout */
int s2s_steps(const Seq2Seq *m); /* optimiser steps taken */

/* Grows the model's batch buffers so forward, backward and greedy decoding
 * take batches of up to `batch` rows (1..S2S_MAX_BATCH); never shrinks them.
 * The weights, optimiser state and saved file are unchanged. On NN_ERR_NOMEM
 * the model keeps its old buffers. */
int s2s_reserve(Seq2Seq *m, int batch);
/* Rows a batch may have now: at least config.batch and S2S_MAX_BEAM when
 * created, S2S_MAX_BEAM when loaded (a trainer's loaded model: 1 at first). */
int s2s_capacity(const Seq2Seq *m);

/* Teacher-forced forward: mean cross-entropy over the B sequences' valid
 * output tokens, written to *loss. in_ids (B, max_in), in_len (B),
 * out_ids (B, max_out) targets ending in EOS, out_len (B). Keeps what
 * s2s_backward needs. */
int s2s_forward(Seq2Seq *m, int B, const int32_t *in_ids, const int32_t *in_len, const int32_t *out_ids,
                const int32_t *out_len, nn_real *loss);
/* Gradients of the last forward's loss, accumulated into s2s_grads(). */
int s2s_backward(Seq2Seq *m);
void s2s_zero_grad(Seq2Seq *m);
/* Clips (global norm) and applies one optimiser step; returns the norm before
 * clipping in *norm. All or nothing: a gradient norm that is not finite, or an
 * update that would make a weight or the optimiser state non-finite, returns
 * NN_ERR_VALUE and changes nothing; past S2S_MAX_STEPS steps, NN_ERR_LIMIT. */
int s2s_update(Seq2Seq *m, const NnTrainOptions *o, nn_real *norm);
/* zero_grad + forward + backward + update. A loss that is not finite is
 * NN_ERR_VALUE before any update: a failed step leaves the weights as they were. */
int s2s_train_step(Seq2Seq *m, const NnTrainOptions *o, int B, const int32_t *in_ids, const int32_t *in_len,
                   const int32_t *out_ids, const int32_t *out_len, nn_real *loss);

/* Greedy decoding of B inputs: out_ids (B, max_out) up to and including EOS,
 * out_len (B) (max_out if no EOS), alignment (B, max_out, max_in) or NULL
 * (attention weights of each output step over the input tokens; zeros
 * without attention). */
int s2s_greedy(Seq2Seq *m, int B, const int32_t *in_ids, const int32_t *in_len, int32_t *out_ids,
               int32_t *out_len, nn_real *alignment);

/* Beam search for one input of length n: the best hypothesis (highest sum of
 * log-probabilities among those ending in EOS, else among all) in out_ids,
 * its length in *out_len, its alignment (max_out, max_in) or NULL, and its
 * log-probability in *logp. beam in 1..S2S_MAX_BEAM (1 = greedy). */
int s2s_beam(Seq2Seq *m, int beam, const int32_t *in_ids, int n, int32_t *out_ids, int32_t *out_len,
             nn_real *alignment, nn_real *logp);

/* Implicit attention: saliency (n) = |d log p(out_ids[step]) / d x_j|, the
 * L2 norm over the embedding of each of the n input tokens x_j, with the
 * decoder fed out_ids (max_out, out_len of them, as decoded). step in
 * 0..out_len-1. The weights are unchanged; the training activations are
 * overwritten, as by decoding. */
int s2s_saliency(Seq2Seq *m, const int32_t *in_ids, int n, const int32_t *out_ids, int out_len, int step,
                 nn_real *saliency);

/* One forward and backward pass on a fixed probe input (the first input
 * symbol at every position of the longest input the model reads, EOS at every
 * output step): NN_OK when every output probability and the gradient are
 * finite, else NN_ERR_VALUE saying what is not. The loader runs it on every
 * model it loads and training after every step. The weights and optimiser
 * state are unchanged; the gradients are left zero. */
int s2s_check_forward(Seq2Seq *m);

/* Copies the weights, the optimiser state and the step count aside
 * (NN_ERR_NOMEM if the copy cannot be allocated), and puts them back. */
int s2s_checkpoint(Seq2Seq *m);
void s2s_rollback(Seq2Seq *m);

/* Serialisation: a versioned little-endian format with the config, the
 * optimiser step count and all parameters. s2s_save_size() bytes. */
size_t s2s_save_size(const Seq2Seq *m);
int s2s_save(const Seq2Seq *m, uint8_t *bytes, size_t size);
int s2s_load(Seq2Seq **out, const uint8_t *bytes, size_t size);
/* Checks a file as s2s_load does, up to its forward pass, and returns its
 * configuration, without allocating anything. */
int s2s_load_config(const uint8_t *bytes, size_t size, S2sConfig *c);

#ifdef __cplusplus
}
#endif
#endif
