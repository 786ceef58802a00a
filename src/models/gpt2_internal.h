/* GPT-2's insides, shared by its files (not a public header). Dimension
 * letters as in attnlab/gpt2.h. */
#ifndef ATTNLAB_MODELS_GPT2_INTERNAL_H
#define ATTNLAB_MODELS_GPT2_INTERNAL_H

#include <stdint.h>

#include "attnlab/attention.h"
#include "attnlab/gpt2.h"
#include "layers/optim.h"
#include "layers/safetensors.h"
#include "models/decoder.h"

/* How a tensor is laid out in memory: as the file has it (row-major), or
 * packed once into the products' panels (vec_pack's layout, so no forward
 * packs a weight again): a Conv1D weight (in, out) as B, the unembedding
 * (V, C) as B^T. */
typedef enum { GPT2_ROWS, GPT2_PACK, GPT2_PACK_TRANSPOSED } Gpt2Pack;

/* Where one tensor of the file goes: bytes [begin, end) of the data, each
 * element converted to a real at dst, laid out as pack says (cols: the
 * file's row length). */
typedef struct {
    uint64_t begin, end;
    StDtype dtype;
    nn_real *dst;
    const char *name; /* into the model's table */
    Gpt2Pack pack;
    int64_t cols;
    int head_d; /* GPT-NeoX's query_key_value: its outputs (head, q|k|v, D) go to q|k|v (heads, D); else 0 */
} Gpt2Load;

struct Gpt2 {
    Gpt2Config c;
    int tied;
    int dtype;
    double params;
    /* the weights, a block per group: the embeddings, each layer's tensors, the
     * final LayerNorm with lm_head. No one allocation passes 2 GiB: the WASM
     * heap's sbrk takes a signed 32-bit increment, so a single larger request
     * fails even where the heap has room for it (gpt2-large's 3.1 GB). */
    nn_real *blocks[GPT2_MAX_LAYERS + 2];
    DecWeights w;
    nn_real *rope;   /* (context, r / 2, 2) GPT-NeoX's RoPE table, else NULL */
    uint8_t *ablate; /* (L, H) 1: the head's context is zero */
    /* loading: the file's table, the tensors to convert (sorted by begin),
     * bytes taken so far and the last 8 of them (an element may straddle two chunks) */
    StTable table;
    Gpt2Load *loads;
    int n_loads, next_load;
    uint64_t loaded;
    uint8_t tail[8];
    int ready; /* every weight converted */
    /* fine-tuning (gpt2_train.c): from the first training call, the weights
     * in one block (opt->params; blocks[] freed), their gradients (the view
     * g, laid out as w), moments and snapshot; NULL before */
    OptParams *opt;
    DecWeights g;
    uint64_t train_rng; /* the training windows' draws */
    /* how the blocks run: gpt2_open sets a checkpoint's; a model made here
     * (transformer.c) holds a Gpt2 over its own row-major weights with its
     * positions, score and ALiBi slopes (decoder_run.c runs both) */
    int packed;            /* 1: the matrices in vec_pack's panels (see DecWeights); 0: row-major */
    AttnScore score;       /* the heads' score */
    nn_real score_beta;    /* the cosine score's scale */
    const nn_real *slopes; /* (H) ALiBi's slopes, or NULL */
    int rope_half;         /* RoPE's pairs: 1 (i, i + r/2), GPT-NeoX's rotate-half; 0 (2i, 2i+1) */
    DecGenerateLimits gen; /* one generate call's prompt and new tokens */
};

/* Tensors a checkpoint's table may hold. */
#define GPT2_MAX_EXPECTED (4 + 12 * GPT2_MAX_LAYERS + 1)

/* One weight tensor: where the model's view points at it, its reals in
 * memory (a packed one's padding with it), whether AdamW decays it (a matrix). */
typedef struct {
    nn_real **slot;
    size_t count;
    int decay;
} Gpt2Tensor;

/* The model's weight tensors (out holds GPT2_MAX_EXPECTED); returns their count, or -1 out of memory. */
int gpt2_tensors(Gpt2 *m, Gpt2Tensor *out);

/* Reals of scratch gpt2_gradients takes for windows of T tokens. */
size_t gpt2_gradients_scratch(const Gpt2 *m, int T);
/* The gradients (+=, into dw, a view laid out as the weights) of the mean
 * cross-entropy of each window's next tokens: B windows of T + 1 tokens,
 * one after the other; the loss in *loss (NaN when a logit is not finite).
 * Allocates its scratch for the call. */
int gpt2_gradients(Gpt2 *m, DecWeights *dw, const int32_t *windows, int B, int T, double *loss);

/* One pass's buffers for `batch` runs of n tokens (pointers into one
 * block; the runs' rows one after the other, each run's maps its own).
 * Without keep, one block's activations, reused block after block
 * (inspection, generation, patching; a backward runs each block again from
 * its input); with keep, every block's (training's batched pass), K = L
 * copies of the buffers marked so (decoder_run.c's layer_of). */
typedef struct {
    int batch, n;        /* runs, and tokens per run, the buffers hold */
    int keep;
    nn_real *x;          /* (B n, C) the residual stream; keep: (L + 1, B n, C) each block's input, [L] the output */
    nn_real *xa;         /* keep: (L, B n, C) the residual after attention; else NULL */
    nn_real *ln;         /* (K, B n, C) ln_1's output (without keep, then ln_2's) */
    nn_real *mean, *rstd; /* (K, B n) */
    nn_real *ln2, *mean2, *rstd2; /* keep: ln_2's, as ln, mean, rstd; else NULL */
    nn_real *qkv;        /* (K, B n, 3C) */
    nn_real *atty;       /* (K, B n, C) the heads' contexts (without keep, then the MLP's output) */
    nn_real *attn;       /* (B n, C) the attention's output (c_proj of the contexts); NULL in training's
                          * sequential pass, which writes it into xa */
    nn_real *mlp;        /* keep, parallel: (B n, C) the MLP's output; else NULL */
    nn_real *h, *a;      /* (K, B n, F) the MLP's hidden layer before and after GELU */
    nn_real *scores;     /* (K, B, H, n, n) */
    nn_real *att;        /* (K, B, H, n, n) the attention weights */
    nn_real *heads;      /* attn_heads_forward_split's scratch: head_copies of one head's */
    int head_copies;     /* the pool's threads when the call began (keep: 1) */
    nn_real *step;       /* attn_heads_step's scratch (a cached step's attention), or NULL */
    nn_real *layers;     /* (L, n, C) each block's output, for the lens, or NULL */
    nn_real *logits;     /* (min(B n, 128), V), or NULL (keep) */
    nn_real *block;
    nn_real *kv;         /* generate's cache (L, n, 2C): each position's keys and values, or NULL */
    int kv_rows;         /* positions the cache holds per layer */
    int from;            /* a whole pass's first block (patching: the blocks below stand as x0) */
    int until;           /* and the block after its last (0: the last layer's); a backward reruns one */
    const nn_real *x0;   /* (n, C) block `from`'s input, or NULL: the embedding */
} Gpt2Run;

/* A backward's buffers for n rows: each block's input (a backward that
 * runs the blocks again), the gradients of one block's activations (reused
 * block after block), LayerNorm scratch and the room for a strip of a
 * weight transposed; fine-tuning's also a strip of a weight's gradient. */
typedef struct {
    nn_real *xs;            /* (L + 1, n, C) block l's input; [L] the last block's output; NULL (keep) */
    nn_real *dres, *dpar;   /* (n, C) the residual's gradient; a parallel block's input's */
    nn_real *dln, *dz, *xm; /* (n, C) a LayerNorm output's gradient; the contexts'; the residual after attention */
    nn_real *lny, *mean, *rstd; /* (n, C), (n), (n) a LayerNorm recomputed */
    nn_real *lng;           /* (2C) its weights' gradients when they are not kept */
    nn_real *dqkv;          /* (n, 3C) */
    nn_real *da;            /* (n, F) */
    nn_real *wt;            /* a strip of the widest weight transposed, in panels (with the unembedding: fine-tuning) */
    nn_real *wg;            /* a strip of the widest weight's gradient (fine-tuning), or NULL */
    nn_real *block;
} Gpt2Grads;

/* Training's batched pass over B sequences of T tokens (a model made here:
 * tf_forward, tf_backward): every block's activations kept, and the
 * backward's buffers. gpt2_pass_layout lays them out from base for up to B
 * x T (base NULL: only counts); gpt2_pass_forward runs the embedding and
 * the blocks, the last block's output (B T, C) in *out; gpt2_pass_backward
 * takes the gradient at that output in p->g.dres back through the blocks
 * and the embedding, adding the weights' gradients into dw. */
typedef struct {
    Gpt2Run r;
    Gpt2Grads g;
} Gpt2Pass;
size_t gpt2_pass_layout(const Gpt2 *m, int B, int T, nn_real *base, Gpt2Pass *p);
int gpt2_pass_forward(const Gpt2 *m, Gpt2Pass *p, const int32_t *tokens, int B, int T, const nn_real **out);
int gpt2_pass_backward(const Gpt2 *m, Gpt2Pass *p, const int32_t *tokens, int B, int T, DecWeights *dw);

/* Layer l's attention for sequences of n tokens: the core's multi-head
 * attention (attention.h), causal, with the model's score, RoPE table or
 * ALiBi slopes and the layer's ablated heads. */
AttnHeadsConfig gpt2_heads(const Gpt2 *m, int layer, int n);

/* Fills one sequence of a head-score measure: tokens (n) and, per position,
 * where an induction head looks from it (source, n; -1: nowhere). */
typedef void (*DecSequence)(void *ctx, int32_t *tokens, int32_t *source);
/* prev, ind (L, H): each head's mean attention from t to t - 1 over every
 * t >= 1, and to source[t] where it is >= 0 (decoder.h's
 * dec_add_head_scores), over `count` sequences of n tokens from next. */
int gpt2_scores_over(Gpt2 *m, int count, int n, DecSequence next, void *ctx, float *prev, float *ind);

/* Fails unless the model's weights are all in (a call between open and finish). */
int gpt2_check_ready(const Gpt2 *m);

#endif
