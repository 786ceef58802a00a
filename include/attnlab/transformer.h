/* attnlab decoder-only transformer: token embedding, positions, pre-LayerNorm
 * blocks of causal multi-head self-attention and a GELU MLP with residuals,
 * a final LayerNorm and an output layer, trained with AdamW on generated
 * sequence tasks (induction, copy, reverse, sort, modular, text). Every
 * head's attention, the per-layer logit lens and head ablation are exposed
 * so the model can be watched while it learns.
 *
 * Dimension letters: B batch, T tokens, C d_model, H heads, D = C / H head
 * size, F d_ff, V vocabulary, L layers.
 *
 * Errors: every function returning int returns NN_OK or an NnStatus and
 * records a message readable with nn_last_error(); nothing aborts. */
#ifndef ATTNLAB_TRANSFORMER_H
#define ATTNLAB_TRANSFORMER_H

#include <stddef.h>
#include <stdint.h>

#include "attnlab/attention.h"
#include "attnlab/nn.h"
#include "attnlab/optim.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Limits checked at creation. */
#define TF_MAX_LAYERS 8
#define TF_MAX_HEADS 16
#define TF_MAX_DMODEL 512
#define TF_MAX_DFF 2048
#define TF_MIN_CONTEXT 8 /* the shortest context every task fits */
#define TF_MAX_CONTEXT 256
#define TF_MAX_BATCH 256
#define TF_MAX_TEXT_BYTES (1 << 22) /* the 'text' and 'names' tasks' text, in UTF-8 */
#define TF_MIN_TEXT 20 /* characters of the 'text' task's text: a window of the shortest context in each split */
#define TF_MAX_VOCAB 256 /* tokens: a text's distinct characters; token ids fit a byte */
/* Reals of activations a model may hold (about 512 MB in float): batch x
 * context x the layers' widths; past it a smaller batch or context is asked for. */
#define TF_MAX_ACTIVATIONS ((size_t)1 << 27)
#define TF_MAX_STEPS NN_MAX_TRAIN_STEPS /* steps of one train call */
#define TF_MAX_EVALUATE 4096 /* sequences of one evaluate / headScores call */
#define TF_TOP 5             /* predictions inspect returns per position */
#define TF_MAX_GENERATE 4096 /* tokens of one generate call */
/* cosine score: e = TF_COSINE_SCALE q.k / (|q| |k|); a unit-range score
 * would keep the softmax near uniform over tens of keys */
#define TF_COSINE_SCALE 10.0
#define TF_ROPE_BASE 10000.0 /* RoPE's wavelengths run from 2 pi to 2 pi TF_ROPE_BASE tokens */

typedef enum {
    TF_POS_LEARNED = 0,    /* a trained vector per position */
    TF_POS_SINUSOIDAL = 1, /* Vaswani et al.'s fixed sines and cosines */
    TF_POS_NONE = 2,       /* none: order only through the causal mask */
    TF_POS_ALIBI = 3,      /* Press et al.'s linear biases: score - m_h (i - j), m_h = 2^(-8 (h + 1) / H) */
    TF_POS_ROPE = 4,       /* Su et al.'s rotary embedding: each head's query and key pairs (2i, 2i+1) turned by
                              t theta_i, theta_i = TF_ROPE_BASE^(-2i / D), so q.k depends on i - j */
    TF_POS_COUNT = 5
} TfPositional;

typedef enum {
    TF_TASK_INDUCTION = 0, /* random letters; a segment occurs twice, the repeat is scored */
    TF_TASK_COPY = 1,      /* "abc=abc" */
    TF_TASK_REVERSE = 2,   /* "abc=cba" */
    TF_TASK_SORT = 3,      /* "cab=abc" */
    TF_TASK_MODULAR = 4,   /* "a + b = c", c = (a + b) mod TF_MODULUS, one token per number */
    TF_TASK_TEXT = 5,      /* the user's text (UTF-8), one token per character (code point) */
    TF_TASK_DATES = 6,     /* "25th of June, 2009=2009-06-25": the seq2seq dates task (tasks.h), the answer scored */
    TF_TASK_NAMES = 7,     /* first names (the text: UTF-8, one per line), a token per character, every one scored */
    TF_TASK_COUNT = 8
} TfTaskKind;

#define TF_MODULUS 31

typedef enum { TF_SPLIT_TRAIN = 0, TF_SPLIT_TEST = 1 } TfSplit;

typedef struct {
    TfTaskKind task;
    int layers;              /* 1..TF_MAX_LAYERS */
    int heads;               /* 1..TF_MAX_HEADS, divides d_model */
    int d_model;             /* 1..TF_MAX_DMODEL */
    int d_ff;                /* 0 (attention only) or 1..TF_MAX_DFF */
    int context;             /* longest sequence, TF_MIN_CONTEXT..TF_MAX_CONTEXT */
    TfPositional positional; /* position encoding */
    AttnScore score;         /* ATTN_SCORE_SCALED_DOT, _DOT or _COSINE */
    int batch;               /* largest batch the buffers hold now (grows on demand) */
    uint64_t seed;           /* initial weights, training and test draws */
} TfConfig;

typedef struct {
    int steps;         /* optimiser steps to take */
    int batch;         /* sequences per step */
    nn_real lr;        /* peak learning rate > 0 */
    nn_real weight_decay; /* AdamW's decoupled decay of matrices and embeddings, >= 0 */
    int warmup;        /* steps of linear warm-up, counted from the model's first step */
    int decay_steps;   /* the step where the cosine decay ends (0: the end of this call) */
    nn_real clip;      /* max global gradient norm, 0 = none */
    nn_real final_lr;  /* the cosine's end rate, 0..lr (0: lr / 10, NN_LR_FLOOR) */
    int constant_lr;   /* 1: no decay after the warm-up (NN_LR_CONSTANT) */
} TfTrainOptions;

typedef struct Transformer Transformer;

/* A model bound to its task; text (text_len bytes of UTF-8) for the 'text' and
 * 'names' tasks only, a token per character: its distinct characters (at most
 * TF_MAX_VOCAB) are the vocabulary, each token named by the character's UTF-8. */
int tf_create(Transformer **out, const TfConfig *c, const char *text, size_t text_len);
void tf_destroy(Transformer *m);

const TfConfig *tf_config(const Transformer *m);
int tf_vocab(const Transformer *m);
/* A token's text ("a", "17", "=") or NULL outside 0..V-1. */
const char *tf_token_name(const Transformer *m, int id);
/* Length of the task's sequences (<= context). */
int tf_seq_len(const Transformer *m);
size_t tf_num_params(const Transformer *m);
int tf_steps(const Transformer *m);
/* All weights, in table order (for tests and for setting heads by hand). */
nn_real *tf_params(Transformer *m);
/* Tensor i of the table: its name ("h0.qkv_w"), offset and size in reals;
 * NULL past the last. */
const char *tf_tensor(const Transformer *m, int i, size_t *offset, size_t *count);

/* Heads whose outputs are zeroed in every forward pass from now on:
 * n (layer, head) pairs; n = 0 clears. */
int tf_set_ablation(Transformer *m, const int32_t *pairs, int n);

/* Trains; losses (steps) gets each step's mean loss over scored positions. */
int tf_train(Transformer *m, const TfTrainOptions *o, float *losses);
/* The model as the last tf_train call found it (weights, optimiser state,
 * steps, the training stream): NN_OK, or NN_ERR_ARG before any call. */
int tf_undo(Transformer *m);

/* Mean loss and accuracy over the scored positions of `count` sequences of
 * a split (the test split's sequences are the same on every call). */
int tf_evaluate(Transformer *m, TfSplit split, int count, double *loss, double *accuracy);

/* One sequence of a split from the stream *rng (which advances): tokens (n)
 * and targets (n: the token position t should predict, or -1 if unscored). */
int tf_sample(const Transformer *m, TfSplit split, uint64_t *rng, int32_t *tokens, int32_t *targets, int *n);

/* One forward pass over tokens (n <= context). attention (L, H, n, n) or
 * NULL; top_ids, top_p (n, TF_TOP) the most likely next tokens; lens (L, n)
 * or NULL: each layer's residual stream read through the final LayerNorm
 * and output layer, its top token. */
int tf_inspect(Transformer *m, const int32_t *tokens, int n, float *attention, int32_t *top_ids, float *top_p,
               int32_t *lens);

/* Direct logit attribution, as gpt2_logit_attribution (include/attnlab/gpt2.h)
 * says, the output bias's share last. */
int tf_logit_attribution(Transformer *m, const int32_t *tokens, int n, int a, int b, double *values, double *logit_diff);

/* Activation patching, as gpt2_patch (include/attnlab/gpt2.h) says: the
 * same code (src/models/decoder_patch.c) over this model's forward; method 1
 * (attribution) through its backward pass too. */
int tf_patch(Transformer *m, const int32_t *clean, const int32_t *corrupt, int n, int a, int b, int target, int method,
             float *out, double *metrics);

/* Appends n_new sampled tokens to tokens[0..n_prompt) (room for n_prompt +
 * n_new); temperature 0 = greedy; top_k 0 = all. Past the context the model
 * reads the last `context` tokens. */
int tf_generate(Transformer *m, int32_t *tokens, int n_prompt, int n_new, double temperature, int top_k,
                uint64_t seed);

/* prev, ind (L, H): mean attention from t to t - 1, and at a token's second
 * occurrence to the position after its first (Olsson et al. 2022), over
 * `count` sequences of repeated random symbols. */
int tf_head_scores(Transformer *m, int count, float *prev, float *ind);

/* The model file (src/layers/model_file.h, magic "ATNLTFM\0", version 1 or 2):
 *   magic | u32 version | i32 task, layers, heads, dModel, dFF, context,
 *   positional, score, batch, vocabulary, steps | u64 seed | u64 training
 *   stream | u32 text length | the task's text | u64 P | P x f32 weights
 *   | u32 FNV-1a of every byte before it.
 * The text is what the model was created from (tasks that take one), so a
 * loaded model has the same vocabulary and draws the same sequences; AdamW's
 * moments are not saved (training a loaded model restarts them). Version 2
 * marks a 'text' task whose text, past ASCII, is cut into a token per
 * character; version 1 cuts it into a token per byte (files saved before
 * texts were read as characters load as they were trained). The two cuts of
 * an ASCII text agree, so its files are written as version 1. */
size_t tf_save_size(const Transformer *m);
/* Writes tf_save_size(m) bytes; the same model always writes the same bytes. */
int tf_save(const Transformer *m, uint8_t *bytes, size_t size);
/* A model from a file: every field, the exact length, the checksum, every
 * weight and the configuration against its task are checked before the
 * model is built; then one forward pass must be finite. NN_ERR_VALUE with a
 * message for a file that is damaged or not a transformer's. */
int tf_load(Transformer **out, const uint8_t *bytes, size_t size);

#ifdef __cplusplus
}
#endif
#endif
