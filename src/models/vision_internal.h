/* The VisionModel struct, shared by vision.c (parameters, buffers, shards),
 * vision_layers.c (its layers, forward and backward) and vision_io.c
 * (save / load). Not a public header. */
#ifndef ATTNLAB_VISION_INTERNAL_H
#define ATTNLAB_VISION_INTERNAL_H

#include "attnlab/vision.h"
#include "base/pool.h"
#include "layers/attend.h"
#include "layers/cell.h"
#include "layers/optim.h"
#include "layers/output.h"

/* Tensors in the parameter table: 2 per conv layer, the 1x1 projection's 2,
 * positions, the initial state's 2, the cell's 4, up to 3 attention and 4 output tensors. */
#define VIS_MAX_TENSORS (2 * VIS_MAX_LAYERS + 2 + 1 + 2 + 4 + 3 + 4)
_Static_assert(VIS_MAX_TENSORS <= OPT_MAX_TENSORS, "the parameter table holds every image-model tensor");

/* One pointer per tensor into the parameter (or gradient) block. */
typedef struct {
    nn_real *conv_w[VIS_MAX_LAYERS]; /* (9 C_{l-1}, C_l), C_{-1} = 1 */
    nn_real *conv_b[VIS_MAX_LAYERS]; /* (C_l) */
    nn_real *proj_w, *proj_b;        /* 1x1 conv (C_L, H), (H) */
    nn_real *pos;                    /* (G, H) learned position of each grid cell, added to kv */
    nn_real *init_w, *init_b;        /* start mean: s_0 = tanh(mean W0 + b0): (H, H), (H); else NULL */
    nn_real *s0;                     /* start constant: (H) s_0 itself; else NULL */
    CellWeights cell;                /* the decoder's cell: I = H + V inputs, H units */
    AttnWeights attn;                /* d = H, n_k = G (location), A = H */
    OutputWeights out;               /* (2H, H), (H), (H, V), (V) */
} VisWeights;

/* Activations for Bm rows (time-major decoder buffers: a step reads one block). */
typedef struct {
    nn_real *x;                       /* (B, R, Q) the images */
    nn_real *relu[VIS_MAX_LAYERS];    /* (B, h_l, w_l, C_l) conv + ReLU */
    nn_real *pool[VIS_MAX_LAYERS];    /* (B, h_l/2, w_l/2, C_l) */
    nn_real *d_relu[VIS_MAX_LAYERS];  /* gradients, same shapes */
    nn_real *d_pool[VIS_MAX_LAYERS];
    nn_real *kv, *d_kv;               /* (B, G, H) keys = values */
    nn_real *mean;                    /* (B, H) */
    nn_real *hs, *cs;                 /* (T, B, H) decoder states s_t (and LSTM cells) */
    nn_real *cache;                   /* (T, B, S) cell caches */
    nn_real *xin;                     /* (T, B, I) cell inputs [c_t; onehot(y_t)] */
    nn_real *scores, *weights;        /* (T, B, G) */
    nn_real *ctx;                     /* (T, B, H) context vectors c_t */
    nn_real *cat;                     /* (T, B, 2H) [c_t; s_t], the output layer's input */
    nn_real *o;                       /* (T, B, H) */
    nn_real *probs;                   /* (T, B, V) */
    nn_real *lw;                      /* (T, B) loss weight of each step: 1/count or 0 */
    nn_real *adv;                     /* (T, B) hard mode: reward - baseline */
    nn_real *dh, *dc, *dh2, *dc2;     /* (B, H) carried state gradients */
    nn_real *dxin;                    /* (B, I) */
    nn_real *dcat;                    /* (B, 2H) */
    nn_real *d_ctx;                   /* (B, H) dc_t: dcat's first half */
    nn_real *d_o;                     /* (B, H) the output layer's d_o; after the steps, start_backward's dmean */
    nn_real *dlogits;                 /* (B, V) */
    nn_real *dweights;                /* (B, G) REINFORCE gradient of the attention weights */
    nn_real *zeros;                   /* (max(H, B*H)) a zero context gradient / zero LSTM cell */
    nn_real *scratch;                 /* a cell step's, attention's or im2col's scratch */
} VisActs;

struct VisionModel {
    VisConfig c;
    int G, gr, gc, I, V;
    int hl[VIS_MAX_LAYERS], wl[VIS_MAX_LAYERS], cin[VIS_MAX_LAYERS]; /* layer l's input map */
    AttnConfig attn_cfg;
    OptParams opt;                /* the parameter table, params, grads, Adam's state, steps taken */
    size_t n_acts;
    nn_real *acts;                /* (n_acts) the activation block VisActs points into */
    VisWeights w, g;
    VisActs a;
    int32_t *idx[VIS_MAX_LAYERS]; /* (B, h_l/2, w_l/2, C_l) pool argmax, one int block */
    int32_t *ints;
    int32_t *loc;                 /* (T, B) attended location (hard), -1 otherwise */
    int32_t *tok;                 /* (T, B) token fed to the next step */
    double baseline[VIS_MAX_STEPS]; /* hard mode's moving-average reward per step */
    uint64_t rng;                 /* hard mode's sampling stream */
    double *draws;                /* (T, batch) hard mode: this forward's uniform draws, taken in (t, b) order */
    int rows;                     /* rows the buffers hold: c.batch, or a shard's */
    int B;                        /* rows of the last forward in these buffers */
    int have_forward, trained_forward;
    int uniform;                  /* vis_set_uniform: forwards read uniform attention */
    int uniform_forward;          /* the last forward did (it has no backward) */
    uint64_t uniform_rng;         /* hard mode's uniform locations, restarted by vis_set_uniform */
    /* Data-parallel training (src/layers/shards.h): shard 0 runs on the
     * model's buffers, shard s on replica[s] (its own activations, indices
     * and gradients, the model's weights); n_shards is the pool's thread
     * count at creation (or vis_set_shards'). */
    int n_shards;
    int shards;                       /* shards of the last forward */
    int batch_B;                      /* rows of the last forward's whole batch */
    struct VisionModel *replica[NN_MAX_THREADS]; /* [1..n_shards-1] */
    nn_real *grads;                   /* replica: (n params) its gradient block, which g points into */
};

/* One shard's rows of a forward (row 0: the shard's first row) and what it
 * reads of the whole batch. */
typedef struct {
    const nn_real *images;   /* (B, R, Q) */
    const int32_t *labels;   /* (B, T) or NULL: greedy */
    const int32_t *n_labels; /* (B) or NULL */
    int32_t *pred;           /* (B, T) the argmax tokens, or NULL */
    const double *draws;     /* hard mode, sampling: row b's draw at step t is draws[t * ld + b] */
    int ld;                  /* the whole batch's rows */
    const double *baseline;  /* (T) hard mode's reward baseline */
    int count;               /* the whole batch's labels: each one's loss weight is 1/count */
    int sample;              /* hard mode, training: locations are drawn */
    int uniform;             /* every attention map is the uniform one (hard: locations from draws) */
    int *hits, *seen;        /* (T) sampling: these rows whose argmax is the label, rows with a label */
} VisRows;

/* The model as its layers (vision_layers.c): the forward of B rows on m (the
 * model, or a shard's replica), += their loss's sum into *total (from 0);
 * the backward of its last forward into its gradients, dimages (B, R, Q) += or NULL. */
int vis_rows_forward(VisionModel *m, int B, const VisRows *r, double *total);
int vis_rows_backward(VisionModel *m, nn_real *dimages);

/* Splits batches into n shards (1..NN_MAX_THREADS) from now on, or as many
 * as the pool has threads (n = 0): the sharded arithmetic without a pool,
 * for the native tests. */
int vis_set_shards(VisionModel *m, int n);

#endif
