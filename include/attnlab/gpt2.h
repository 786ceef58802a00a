/* attnlab GPT-2: a GPT-2-family or GPT-NeoX checkpoint (Hugging Face's
 * model.safetensors and its config.json) opened in the one decoder attnlab
 * runs (src/models/decoder_run.c, which runs the transformers made here too):
 * token and learned position embeddings (GPT-NeoX: rotary), pre-LayerNorm
 * blocks of causal multi-head attention and a GELU MLP with residuals
 * (sequential or parallel), a final LayerNorm and the unembedding (tied to
 * the token embedding or its own lm_head). Every head's attention, heads
 * ablated, the logit lens, loss, generation, the previous-token / induction
 * head scores, patching, attribution and fine-tuning.
 *
 * Dimension letters: T tokens, C d_model, H heads, D = C / H, F d_ff,
 * V vocabulary, L layers.
 *
 * Errors: every function returning int returns NN_OK or an NnStatus and
 * records a message readable with nn_last_error(); nothing aborts. */
#ifndef ATTNLAB_GPT2_H
#define ATTNLAB_GPT2_H

#include <stddef.h>
#include <stdint.h>

#include "attnlab/nn.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GPT2_MAX_LAYERS 64
#define GPT2_MAX_HEADS 64
#define GPT2_MAX_DMODEL 4096
#define GPT2_MAX_DFF 16384
#define GPT2_MAX_CONTEXT 2048 /* tokens: the attention core takes 2048 x 2048 cells per head (ATTN_MAX_CELLS) */
#define GPT2_MAX_VOCAB (1 << 20)
/* Megabytes (10^6 bytes) of float32 weights a checkpoint may hold: the WASM
 * heap is 4 GiB, and the activations, a chunk of the file and the attention
 * maps need the rest. gpt2-large (774 M parameters, 3.10 GB) fits; gpt2-xl
 * (1.56 B) does not. */
#define GPT2_MAX_WEIGHT_MB 3400
/* Megabytes (10^6 bytes) of results one inspect call may return (attention
 * maps, logits, lens): every size is counted in 64 bits and refused past
 * this before anything is allocated. */
#define GPT2_MAX_RESULT_MB 1024
#define GPT2_TOP 5              /* predictions per position */
#define GPT2_MAX_EVALUATE 256   /* sequences of one headScores call */
#define GPT2_MAX_GENERATE 1024  /* tokens of one generate call */
/* Fine-tuning (gpt2_train): megabytes (10^6 bytes) its state may take (the
 * weights, their gradients, Adam's two moments, the copy a failed call goes
 * back to: seven floats a parameter, and one call's scratch), checked before
 * anything is allocated; tokens of text one call draws its windows from;
 * windows in a batch. */
#define GPT2_MAX_TRAIN_MB 3600
#define GPT2_MAX_TRAIN_TOKENS (1 << 22)
#define GPT2_MAX_BATCH 64

typedef struct {
    int layers;     /* n_layer */
    int heads;      /* n_head, divides d_model */
    int d_model;    /* n_embd */
    int d_ff;       /* n_inner (4 d_model when the config has none) */
    int context;    /* n_positions */
    int vocab;      /* vocab_size */
    double epsilon; /* layer_norm_epsilon, > 0 */
    /* GPT-NeoX (Pythia): its tensor names (gpt_neox.*, embed_out), nn.Linear weights
     * [out, in], query_key_value's output head-major; no learned positions but RoPE */
    int neox;
    int rotary_dims;    /* GPT-NeoX: the first r = rotary_pct D of each head's dimensions turned, even, 2..D */
    double rotary_base; /* GPT-NeoX: rotary_emb_base, > 0 */
    int parallel;       /* 1: x + attn(ln_1 x) + mlp(ln_2 x) (use_parallel_residual); 0: one after the other */
    int gelu_exact;     /* 1: GELU's exact (erf) form ('gelu'); 0: the tanh form ('gelu_new') */
} Gpt2Config;

typedef struct Gpt2 Gpt2;

/* The config's checks (NN_ERR_* naming the field as config.json does). */
int gpt2_check_config(const Gpt2Config *c);
/* Parameters of a model of that config: tied 1 when the unembedding is the
 * token embedding (no lm_head.weight). */
double gpt2_param_count(const Gpt2Config *c, int tied);

/* Opening a checkpoint of file_size bytes, given its header (the JSON after
 * the 8-byte length, header_len bytes): every tensor's name, dtype, shape
 * and offsets are checked against the config, and the weights' size against
 * GPT2_MAX_WEIGHT_MB, before the weights are allocated. The model then
 * takes the data in order: gpt2_load_chunk with consecutive pieces of the
 * bytes after the header (any sizes), then gpt2_load_finish. A weight that
 * is NaN or infinite fails the chunk that holds it. */
int gpt2_open(Gpt2 **out, const Gpt2Config *c, const uint8_t *header, size_t header_len, double file_size);
int gpt2_load_chunk(Gpt2 *m, const uint8_t *bytes, size_t n);
int gpt2_load_finish(Gpt2 *m);
void gpt2_destroy(Gpt2 *m);

const Gpt2Config *gpt2_config(const Gpt2 *m);
double gpt2_num_params(const Gpt2 *m);
int gpt2_tied(const Gpt2 *m);
/* The file's dtype: 0 F32, 1 F16, 2 BF16 (the first weight's). */
int gpt2_dtype(const Gpt2 *m);

/* Heads whose outputs are zeroed in every forward pass from now on:
 * n (layer, head) pairs; n = 0 clears. */
int gpt2_set_ablation(Gpt2 *m, const int32_t *pairs, int n);

/* One forward pass over tokens (1 <= n <= context). Each output may be NULL:
 * attention (L, H, n, n); top_ids, top_p (n, GPT2_TOP) the most likely next
 * tokens; lens (L, n) each layer's residual read through the final LayerNorm
 * and the unembedding, its top token; logits (n, V). Results past
 * GPT2_MAX_RESULT_MB: NN_ERR_LIMIT; logits that are not finite (weights that
 * overflow float32 on this input): NN_ERR_VALUE, as in evaluate and generate. */
int gpt2_inspect(Gpt2 *m, const int32_t *tokens, int n, float *attention, int32_t *top_ids, float *top_p,
                 int32_t *lens, float *logits);

/* Mean cross-entropy (nats) of tokens[t + 1] given tokens[0..t], over the
 * n - 1 predictions (2 <= n <= context). */
int gpt2_evaluate(Gpt2 *m, const int32_t *tokens, int n, double *loss);

/* Fine-tuning on a text's tokens (n_data of them, each < vocab): `steps`
 * AdamW steps (with warm-up and a cosine decay to final_lr, 0: lr / 10, or a
 * constant rate), each on `batch` windows of length + 1 tokens drawn from
 * data (the mean cross-entropy of each window's next tokens). All or
 * nothing, as every model's training call (a diverging step puts the model
 * back where the call found it). The first call lays the weights out in one
 * block with their gradients and moments: NN_ERR_LIMIT naming the bytes
 * past GPT2_MAX_TRAIN_MB before anything is allocated. losses (steps) gets
 * each step's loss. */
typedef struct {
    int steps, batch, length;
    float lr, weight_decay;
    int warmup, decay_steps;
    float clip, final_lr;
    int constant_lr; /* 1: the rate stays lr after warm-up */
} Gpt2TrainOptions;
int gpt2_train(Gpt2 *m, const int32_t *data, int n_data, const Gpt2TrainOptions *o, float *losses);
/* The model as the last gpt2_train call found it: NN_OK, or NN_ERR_ARG before any call. */
int gpt2_undo(Gpt2 *m);
/* Optimiser steps taken (0 until fine-tuned). */
int gpt2_steps(const Gpt2 *m);

/* Appends n_new tokens to tokens[0..n_prompt) (room for n_prompt + n_new);
 * temperature 0 = greedy, top_k 0 = all. Past the context the model reads
 * the last `context` tokens. */
int gpt2_generate(Gpt2 *m, int32_t *tokens, int n_prompt, int n_new, double temperature, int top_k, uint64_t seed);

/* prev, ind (L, H): over `count` sequences of `length` distinct random
 * tokens repeated once (2 length tokens, drawn from seed), the mean
 * attention from t to t - 1, and from a token's second occurrence to the
 * position after its first (Olsson et al. 2022): the trained transformer's
 * measure (tf_head_scores). */
int gpt2_head_scores(Gpt2 *m, int count, int length, uint64_t seed, float *prev, float *ind);
/* Direct logit attribution of logit[a] - logit[b] at the last of n tokens:
 * values (2 + L (H + 2) + 2): embed, pos, per layer H heads, the attention
 * bias and the MLP, ln_f's bias, the output bias (0); their sum is
 * *logit_diff (src/models/decoder_attribution.c). */
int gpt2_logit_attribution(Gpt2 *m, const int32_t *tokens, int n, int a, int b, double *values, double *logit_diff);
/* Activation patching (TransformerLens's conventions): the corrupt run of n
 * tokens with one activation of the clean run put back, for every cell of
 * the target (0 block inputs, 1 attention outputs, 2 MLP outputs: layers x
 * n positions; 3 heads' contexts, 4 values, 5 patterns: layers x heads);
 * out[cell] = (m_patched - m_corrupt) / (m_clean - m_corrupt), m = logit[a]
 * - logit[b] at the last position; metrics[0] = m_clean, [1] = m_corrupt.
 * method 0 runs every cell; 1 (attribution patching) estimates them to
 * first order: two forwards and one backward pass (not for patterns). */
int gpt2_patch(Gpt2 *m, const int32_t *clean, const int32_t *corrupt, int n, int a, int b, int target, int method,
               float *out, double *metrics);

#ifdef __cplusplus
}
#endif
#endif
