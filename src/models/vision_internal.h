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
#include "layers/shards.h"

/* Tensors in the parameter table: 2 per conv layer, the 1x1 projection's 2,
 * positions, the initial state's 2, the cell's 4, up to 3 attention and 4
 * output tensors (the retina's 10, s_0, the cell's and the output's are fewer). */
#define VIS_MAX_TENSORS (2 * VIS_MAX_LAYERS + 2 + 1 + 2 + 4 + 3 + 4)
_Static_assert(10 + 1 + 4 + 4 <= VIS_MAX_TENSORS, "the retina model's table fits too");
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
    /* the retina sensor (K = scales * size^2 its values), else NULL */
    nn_real *glimpse_w, *glimpse_b;  /* h_g = ReLU(rho W_g + b_g): (K, H), (H) */
    nn_real *where_w, *where_b;      /* h_l = ReLU(l W_l + b_l): (2, H), (H) */
    nn_real *join_w, *join_b;        /* g = ReLU([h_g; h_l] W_gl + b_gl): (2H, H), (H) */
    nn_real *loc_w, *loc_b;          /* mu = tanh(s W_loc + b_loc): (H, 2), (2) */
    nn_real *base_w, *base_b;        /* b = s W_b + b_b: (H, 1), (1) */
} VisWeights;

/* Activations for Bm rows (time-major decoder buffers: a step reads one block). */
typedef struct {
    nn_real *x;                       /* (B, R, Q) the images */
    nn_real *conv_out[VIS_MAX_LAYERS]; /* (B, h_l, w_l, C_l) conv + bias (the ReLU follows the pool) */
    nn_real *pool[VIS_MAX_LAYERS];     /* (B, h_l/2, w_l/2, C_l) after the ReLU */
    nn_real *d_conv_out[VIS_MAX_LAYERS]; /* gradients, same shapes */
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
    /* the retina (vision_retina.c): time-major (T, B, .) for the forward, (B, .) gradients */
    nn_real *mu, *lsamp, *lclip;      /* (T, B, 2) the policy's mean, the drawn location, it clipped */
    nn_real *base;                    /* (T, B) the baseline b_t */
    nn_real *reward;                  /* (B) R: the last step's answer is right (sampled rows) */
    nn_real *rho;                     /* (T, B, K) the retina's values */
    nn_real *rho_gx, *rho_gy;         /* (T, B, K) d rho / dx, d rho / dy of the location */
    nn_real *path;                    /* (B) 1: the row read mu_t and learns pathwise (the soft mix) */
    nn_real *hg, *hl, *join;          /* (T, B, H), (T, B, H), (T, B, 2H) [h_g; h_l] */
    nn_real *d_join, *d_hg, *d_hl;    /* (B, 2H), (B, H), (B, H) */
    nn_real *d_rho;                   /* (B, K) */
    nn_real *d_mu, *d_base;           /* (B, 2), (B) */
    nn_real *d_l;                     /* (B, 2) d l_t of pathwise rows */
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
    int32_t *loc;                 /* (T, B) attended location (hard), -1 otherwise (and on rows that read the expected context) */
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
    /* vis_set_soft_mix_schedule: the share, held until step mix_hold, 0 from
     * step mix_end; a setting of the training calls, not saved */
    nn_real soft_mix;
    int mix_hold, mix_end;
    /* Data-parallel training (src/layers/shards.h): shard 0 runs on the
     * model's buffers, shard s on replicas.at[s] (its own activations,
     * indices and gradients, the model's weights); replicas.n is the pool's
     * thread count at creation (or vis_set_shards'). */
    ShardReplicas replicas;
    int shards;                       /* shards of the last forward */
    int batch_B;                      /* rows of the last forward's whole batch */
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
    const double *mix;       /* sampling with a soft mix: row b's draw is mix[b]; else NULL */
    nn_real soft_mix;        /* the share: row b reads the expected context when mix[b] < soft_mix */
} VisRows;

/* Hard mode, sampling: row b reads the expected context (the grid) or its
 * glimpses at the policy's mean (the retina) this forward (vis_set_soft_mix). */
static inline int vis_reads_expected(const VisRows *r, int b) { return r->mix && r->mix[b] < r->soft_mix; }

/* The retina's values per glimpse, K = scales * size^2. */
static inline int vis_retina_k(const VisConfig *c) { return c->retina_scales * c->retina_size * c->retina_size; }

/* The retina's layers (vision_retina.c), step t of B rows: the policy, the
 * location, the retina and the glimpse network into the context c_t
 * (forward); the reward after the last step; the glimpse network's and the
 * policy's backward (d s_t into dh, d pixels into dimages += or NULL). */
void retina_step_forward(VisionModel *m, int B, int t, const VisRows *r);
void retina_reward_forward(VisionModel *m, int B, const VisRows *r);
void retina_step_backward(VisionModel *m, int B, int t, nn_real *dimages);
/* The pixel box of scale k's patch around the location (x, y) in [-1, 1] on an R x Q canvas. */
void retina_box(const VisConfig *c, const nn_real *xy, int k, int *top, int *left, int *side);

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
