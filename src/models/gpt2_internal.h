/* GPT-2's insides, shared by its files (not a public header). Dimension
 * letters as in attnlab/gpt2.h. */
#ifndef ATTNLAB_MODELS_GPT2_INTERNAL_H
#define ATTNLAB_MODELS_GPT2_INTERNAL_H

#include <stdint.h>

#include "attnlab/gpt2.h"
#include "layers/optim.h"
#include "layers/safetensors.h"

/* One pointer per tensor, into the model's blocks; the names are Hugging Face's GPT-2 ones
 * (GPT-NeoX's: embed_in, input_layernorm, query_key_value, dense, post_attention_layernorm,
 * dense_h_to_4h, dense_4h_to_h, final_layer_norm, embed_out). */
typedef struct {
    nn_real *wte;                   /* (V, C) wte.weight; tied: the unembedding's panels (see unembed) */
    nn_real *wpe;                   /* (context, C) wpe.weight; NULL for GPT-NeoX (RoPE) */
    nn_real *ln1w[GPT2_MAX_LAYERS]; /* (C) h.l.ln_1.weight, .bias */
    nn_real *ln1b[GPT2_MAX_LAYERS];
    nn_real *qkvw[GPT2_MAX_LAYERS];  /* (C, 3C) h.l.attn.c_attn.weight (Conv1D: [in, out]), queries | keys | values */
    nn_real *qkvb[GPT2_MAX_LAYERS];  /* (3C) */
    nn_real *projw[GPT2_MAX_LAYERS]; /* (C, C) h.l.attn.c_proj */
    nn_real *projb[GPT2_MAX_LAYERS]; /* (C) */
    nn_real *ln2w[GPT2_MAX_LAYERS];  /* (C) h.l.ln_2 */
    nn_real *ln2b[GPT2_MAX_LAYERS];
    nn_real *fcw[GPT2_MAX_LAYERS];     /* (C, F) h.l.mlp.c_fc */
    nn_real *fcb[GPT2_MAX_LAYERS];     /* (F) */
    nn_real *fcprojw[GPT2_MAX_LAYERS]; /* (F, C) h.l.mlp.c_proj */
    nn_real *fcprojb[GPT2_MAX_LAYERS]; /* (C) */
    nn_real *lnfw, *lnfb;              /* (C) ln_f */
    nn_real *unembed;                  /* (V, C) lm_head.weight, or wte itself when tied, as vec_pack's panels of its
                                          transpose (C, V); the Conv1D weights above are vec_pack's panels of (in, out) */
} Gpt2Weights;

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
    Gpt2Weights w;
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
    Gpt2Weights g;
    uint64_t train_rng; /* the training windows' draws */
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
int gpt2_gradients(Gpt2 *m, Gpt2Weights *dw, const int32_t *windows, int B, int T, double *loss);

/* Fails unless the model's weights are all in (a call between open and finish). */
int gpt2_check_ready(const Gpt2 *m);

#endif
