/* attnlab attention over images: real handwritten digits (MNIST), image tasks
 * generated from a seed, and a CNN encoder whose feature grid a recurrent
 * decoder queries with attention at every output step.
 *
 * Data: the digit set is one binary asset (scripts/mnist.mjs writes it):
 *   "ATNLDIG\0" | u32 version | u32 N | u32 rows | u32 cols | N labels (u8) | N x rows x cols pixels (u8)
 * The digits are interleaved class by class (0, 1, ..., 9, 0, ...); the test
 * split is every VIS_TEST_EVERY-th block of ten by index, the train split the rest:
 * no digit is in both, and clutter is cut only from digits of the same split.
 *
 * Tasks (src/tasks/images.c), greys in [0, 1] on a canvas:
 *   centered   the 28 x 28 digit                                 -> its class
 *   cluttered  60 x 60 (`size` x `size`, 28..100), the digit at a random
 *              place, plus `clutter` 8 x 8 pieces cut from other digits -> its class
 *   multi      40 x 100, 2-3 digits left to right, random gaps and vertical
 *              jitter                                            -> the digits, then END
 * Output tokens: 0-9 the digits, VIS_END = 10 the end of a multi-digit answer.
 *
 * Model (src/models/vision.c). Dimension letters: B batch rows, R x Q the
 * canvas (rows, cols), C_l the channels of conv layer l, G = gr x gc the
 * feature grid's cells, H the hidden size (= the key/value size), V = 11
 * output tokens, T decoder steps.
 *   encoder  L times: conv 3x3 (same padding) -> ReLU -> max-pool 2x2, then a
 *            1x1 conv to H plus a learned position per cell: the grid's
 *            cells are the keys and values kv_g = proj(f_g) + pos_g       (G, H)
 *   decoder  start `constant`: s_0 = a learned vector, the same for every image, so
 *            the first query is content-based and the only route from the
 *            image to the answer is what the model attends to; start `mean`
 *            (files of format 1): s_0 = tanh(W0 mean_g kv_g + b0). LSTM c_0 = 0
 *            either way (h_0 alone carries the learned start). For t < T:
 *              a_t = attention(query s_t, keys kv, values kv)            (G)
 *              soft: c_t = sum_g a_tg kv_g;  hard: c_t = kv_l, l ~ a_t (argmax
 *              when evaluating);  none: c_t = mean_g kv_g (global average pooling)
 *              o_t = tanh(Wc [c_t; s_t] + bc),  p_t = softmax(Wout o_t + bout)
 *              s_{t+1} = cell([c_t; onehot(y_t)], s_t)   (y_t the target when training, else the
 *              prediction; a zero vector for single-label tasks, whose label must not leak)
 * Hard mode: the classifier learns by backprop through the sampled context;
 * the attention (scores and the query's path) also by REINFORCE with reward
 * r_t = [argmax p_t == y_t], a moving-average baseline per step and an
 * entropy bonus: loss += -(r_t - b_t) log a_tl - lambda H(a_t).
 * Single-label tasks: every step predicts the label (each step is a glimpse);
 * the answer is the last step's. With a soft mix (vis_set_soft_mix), a share
 * of the rows read the expected context sum_g a_tg kv_g instead while training.
 *
 * Sensor `retina` (Mnih et al. 2014, src/models/vision_retina.c), hard mode on
 * one-digit tasks: no CNN and no grid; at every step t
 *   policy   mu_t = tanh(s_t W_loc + b_loc) (2), baseline b_t = s_t W_b + b_b;
 *            l_t ~ N(mu_t, sigma^2) clipped to [-1, 1]^2 while training, mu_t when evaluating
 *            (l = (x, y), -1 the canvas's left / top edge, +1 its right / bottom one)
 *   retina   rho_t: `scales` patches of side size * 2^k centred on l_t (pixels outside
 *            the canvas are 0), each box-averaged down to size x size at a sub-pixel
 *            position (the bilinear mix of the four whole-pixel box averages around
 *            it), so rho_t is differentiable in l_t
 *   glimpse  g_t = ReLU([ReLU(rho_t W_g + b_g); ReLU(l_t W_l + b_l)] W_gl + b_gl)   (H)
 *   then c_t = g_t in the decoder above (the output layer over [g_t; s_t], the cell).
 * s_0 is the learned constant, so the first location's distribution is the
 * same for every image. The classifier learns by backprop; the policy by
 * REINFORCE with reward R = [the last step's answer is right]:
 *   loss += -(R - b_t) log N(l_t; mu_t, sigma^2) + (R - b_t)^2 / 2, b_t's gradient
 * into W_b, b_b only, the policy's into W_loc, b_loc only (the core learns from
 * the answers; l_t is a sample: no gradient flows back through it). With a soft
 * mix (vis_set_soft_mix), a share of the rows read every glimpse at l_t = mu_t
 * instead, as evaluation does, and learn where to look from the answers' own
 * gradient (d loss / d l_t through the retina and the location network, on
 * into W_loc, b_loc; it stops at s_t, as REINFORCE's does); they take no
 * REINFORCE term and train no baseline.
 *
 * Memory: parameters, gradients, optimiser state and activations each live in
 * one allocation sized from a table at create time; forward passes do not
 * allocate. Errors: NnStatus codes with nn_last_error(). */
#ifndef ATTNLAB_VISION_H
#define ATTNLAB_VISION_H

#include <stddef.h>
#include <stdint.h>

#include "attnlab/attention.h"
#include "attnlab/nn.h"
#include "attnlab/optim.h"
#include "attnlab/rnn.h"

#ifdef __cplusplus
extern "C" {
#endif

#define VIS_DIGIT_SIDE 28
#define VIS_TEST_EVERY 5     /* digit i is a test digit when (i / 10) % 5 == 4: 20% */
#define VIS_TOKENS 11        /* 0-9, END */
#define VIS_END 10
#define VIS_MAX_LAYERS 3
#define VIS_MAX_CHANNELS 64
#define VIS_MAX_HIDDEN 256
#define VIS_MAX_STEPS 8
#define VIS_MAX_BATCH 256
#define VIS_MAX_CLUTTER 32
#define VIS_MAX_IMAGE 128    /* predict(): images up to 128 x 128 */
#define VIS_MAX_DIGITS 3     /* multi: 2-3 digits */
#define VIS_CLUTTER_SIDE 8
#define VIS_CLUTTERED_SIDE 60     /* the cluttered canvas's side by default */
#define VIS_MAX_CLUTTERED_SIDE 100 /* and at most */

#define VIS_MIN_RETINA 2
#define VIS_MAX_RETINA 32
#define VIS_MAX_SCALES 3
#define VIS_MAX_SIGMA 1
#define VIS_MIN_SIGMA 1e-3 /* a narrower policy would draw the same place every time and its REINFORCE gradient (1/sigma^2) overflow */

#define VIS_ATTN_NONE (-1)   /* global average pooling, no attention */

typedef enum { VIS_SPLIT_TRAIN = 0, VIS_SPLIT_TEST = 1 } VisSplit;

/* ---- the digit set ------------------------------------------------------- */
typedef struct VisData VisData; /* opaque */

/* Parses (and copies) the asset's uncompressed bytes. */
int vis_data_create(VisData **out, const uint8_t *bytes, size_t size);
void vis_data_destroy(VisData *d);
int vis_data_count(const VisData *d, VisSplit split);
/* Digit i of a split: its label, and its pixels (28 x 28 u8) in *pixels. */
int vis_data_digit(const VisData *d, VisSplit split, int i, const uint8_t **pixels);

/* ---- image tasks (src/tasks/images.c) ------------------------------------- */
typedef enum { IMG_CENTERED = 0, IMG_CLUTTERED = 1, IMG_MULTI = 2, IMG_KIND_COUNT = 3 } ImgTaskKind;

typedef struct {
    ImgTaskKind kind;
    int clutter;    /* cluttered: 8 x 8 pieces, 0..VIS_MAX_CLUTTER (default 4) */
    int min_digits; /* multi: 1..max_digits */
    int max_digits; /* multi: ..VIS_MAX_DIGITS */
    int size;       /* cluttered: the canvas's side, VIS_DIGIT_SIDE..VIS_MAX_CLUTTERED_SIDE; 0 = VIS_CLUTTERED_SIDE.
                       The other tasks' canvases are fixed: 0 */
} ImgTaskConfig;

/* Where a digit lies on the canvas: the bounding box of its ink (pixels > 0). */
typedef struct {
    int32_t top, left, height, width;
} VisBox;

int img_task_check(const ImgTaskConfig *c);
int img_rows(const ImgTaskConfig *c);    /* canvas rows R */
int img_cols(const ImgTaskConfig *c);    /* canvas cols Q */
int img_max_out(const ImgTaskConfig *c); /* longest answer in tokens (multi: END included) */

/* One example: image (R, Q) greys in [0, 1], labels (img_max_out) padded with
 * VIS_END, *n_labels the answer's length; boxes (img_max_out, may be NULL):
 * each digit's box, in the labels' order. *rng advances. */
int img_sample(const VisData *d, const ImgTaskConfig *c, VisSplit split, uint64_t *rng, nn_real *image,
               int32_t *labels, int *n_labels, VisBox *boxes);

/* Places an image of rows x cols greys on the canvas (R, Q): centred, and
 * shrunk by box filtering when larger than the canvas. */
int img_place(const ImgTaskConfig *c, const nn_real *image, int rows, int cols, nn_real *canvas);

/* ---- the model (src/models/vision.c) --------------------------------------- */
typedef enum { VIS_SOFT = 0, VIS_HARD = 1 } VisMode;
/* The decoder's start state: from the grid's mean (0, as models before the
 * constant start were), or a learned constant. */
typedef enum { VIS_START_MEAN = 0, VIS_START_CONSTANT = 1 } VisStart;
/* What the decoder reads: the CNN's feature grid, or a retina (hard mode only). */
typedef enum { VIS_SENSOR_GRID = 0, VIS_SENSOR_RETINA = 1 } VisSensor;

typedef struct {
    int rows, cols;                  /* canvas R x Q */
    int layers;                      /* conv layers, 1..VIS_MAX_LAYERS */
    int channels[VIS_MAX_LAYERS];    /* C_l */
    RnnCellKind cell;                /* GRU or LSTM (RNN accepted) */
    int hidden;                      /* H, also the key/value size */
    int attention;                   /* an AttnScore, or VIS_ATTN_NONE */
    VisMode mode;                    /* soft or hard (ignored with none) */
    int steps;                       /* decoder steps T */
    int sequence;                    /* answers are sequences: feed each token to the next step */
    nn_real entropy;                 /* hard mode's entropy bonus lambda */
    int batch;                       /* largest batch */
    uint64_t seed;                   /* initial weights and hard mode's samples */
    VisStart start;                  /* the decoder's start state */
    VisSensor sensor;                /* the grid (the fields above) or the retina (below; hard mode, one-digit tasks) */
    int retina_size;                 /* retina: each scale's side after averaging, VIS_MIN_RETINA..VIS_MAX_RETINA */
    int retina_scales;               /* retina: patches of side size * 2^k, k < scales, 1..VIS_MAX_SCALES */
    nn_real sigma;                   /* retina: the location policy's standard deviation while training, > 0 */
} VisConfig;

typedef struct VisionModel VisionModel; /* opaque */

int vis_create(VisionModel **out, const VisConfig *c);
/* Checks a configuration and counts its parameters without allocating
 * (the loader checks a file's length against it first). */
int vis_plan(const VisConfig *c, size_t *n_params);
void vis_destroy(VisionModel *m);
const VisConfig *vis_config(const VisionModel *m);
void vis_grid(const VisionModel *m, int *gr, int *gc); /* the feature grid gr x gc */
/* The parameter table: one block of weights (vis_num_params reals), their
 * gradients in the same layout, the optimiser steps taken. */
size_t vis_num_params(const VisionModel *m);
nn_real *vis_params(VisionModel *m);
nn_real *vis_grads(VisionModel *m);
int vis_steps_taken(const VisionModel *m);

/* Forward over B images (B, R, Q). labels (B, T) and n_labels (B): with
 * labels, teacher forcing and the mean cross-entropy over valid steps in
 * *loss (and for hard mode, training = sampled locations); without (NULL),
 * greedy decoding. train: sample hard locations (else argmax). Writes the
 * predicted tokens (B, T) if pred is not NULL. */
int vis_forward(VisionModel *m, int B, const nn_real *images, const int32_t *labels, const int32_t *n_labels,
                int train, nn_real *loss, int32_t *pred);
/* Gradients of the last teacher-forced forward, accumulated (+= ) into vis_grads().
 * dimages (B, R, Q) += d loss / d pixels, or NULL. */
int vis_backward(VisionModel *m, nn_real *dimages);
void vis_zero_grad(VisionModel *m);
int vis_update(VisionModel *m, const NnTrainOptions *o, nn_real *norm);

/* Evaluation with every attention map replaced by the uniform one (on != 0):
 * soft, c_t = the grid's mean; hard, a location drawn uniformly from a stream
 * that restarts at a fixed seed with each call (the training stream is not
 * touched). Ignored with attention none. The forwards it governs cannot be
 * differentiated (vis_backward fails on them). */
void vis_set_uniform(VisionModel *m, int on);

/* Hard mode (Xu et al. 2015, sec. 4.1, who read the expectation with probability
 * 0.5 for all of training; the annealing below is attnlab's): from the next training forward on,
 * each row reads, with probability `share`, on the grid the expected context
 * sum_g a_tg kv_g at every step (soft attention's, with its exact gradient)
 * instead of a sampled cell; on the retina its glimpses at the policy's mean
 * mu_t instead of a drawn location, with the pathwise gradient of the loss in
 * the location. Those rows take no REINFORCE term and do not move the
 * baseline. Drawn once per row per forward from the sampling stream, after the
 * locations' draws (only when share > 0, so share 0, the default, draws and
 * trains as before). Annealed to 0 by the end of training, the model learns to
 * answer from one sampled cell or location. share in [0, 1] (NN_ERR_VALUE),
 * > 0 only for hard attention (NN_ERR_ARG). Evaluation always reads the argmax
 * cell or mu_t. */
int vis_set_soft_mix(VisionModel *m, nn_real share);
/* The soft mix as a schedule over the model's optimiser steps (so a run split
 * into calls anneals as one call does): the step taken after k steps reads
 * with the share
 *   share                              k < hold
 *   share (end - k) / (end - hold)     hold <= k < end
 *   0                                  k >= end
 * hold within 0..NN_MAX_OPT_STEPS, end within hold..NN_MAX_OPT_STEPS
 * (NN_ERR_SHAPE below, NN_ERR_LIMIT above), the share as vis_set_soft_mix's.
 * vis_set_soft_mix(m, share) is the schedule (share, NN_MAX_OPT_STEPS,
 * NN_MAX_OPT_STEPS): the share at every step. On error the model keeps its
 * schedule. */
int vis_set_soft_mix_schedule(VisionModel *m, nn_real share, int hold, int end);
/* The share of the step taken after `taken` optimiser steps (the schedule above). */
nn_real vis_soft_mix_at(const VisionModel *m, int taken);

/* The decoder's start state of row b of the last forward: s_0 (H) and, for
 * LSTM, c_0 (H) (c0 may be NULL). */
void vis_start_state(const VisionModel *m, int b, nn_real *s0, nn_real *c0);

/* What the last forward showed for row b: attention weights (T, G) and hard
 * mode's locations (T) (-1 without); either may be NULL. */
void vis_attention(const VisionModel *m, int b, nn_real *weights, int32_t *locations);
/* The retina's locations of row b of the last forward: (T, 2) as (x, y) in
 * [-1, 1] (zeros with the grid). */
void vis_glimpses(const VisionModel *m, int b, nn_real *xy);

/* Implicit attention: d log p_step(y) / d pixels (R, Q) for the greedy answer
 * y of one image. Leaves the model's gradients dirty (zero them before training). */
int vis_saliency(VisionModel *m, const nn_real *image, int step, nn_real *saliency);

/* REINFORCE + entropy gradient of hard attention with respect to the weights
 * a (n) for a sampled location l and advantage A = r - baseline, scaled by
 * `scale`:  d/da_j [ -A log a_l - lambda H(a) ] = -A [j == l] / a_l + lambda (log a_j + 1).
 * (+= into dweights; zero weights contribute nothing.) Shared with the tests. */
void vis_reinforce_dweights(nn_real *dweights, const nn_real *a, int n, int l, nn_real advantage, nn_real lambda,
                            nn_real scale);


/* ---- training loop (src/train/vision_train.c) ------------------------------ */
typedef struct VisionTrainer VisionTrainer; /* opaque; borrows the VisData */

typedef struct {
    double loss;              /* mean cross-entropy per answer token, teacher forced */
    double accuracy;          /* greedy tokens right / answer tokens */
    double sequence_accuracy; /* whole answers right */
    int count;
} VisEval;

int vtr_create(VisionTrainer **out, const VisData *d, const ImgTaskConfig *tc, const VisConfig *mc);
void vtr_destroy(VisionTrainer *t);
VisionModel *vtr_model(VisionTrainer *t);
const ImgTaskConfig *vtr_task(const VisionTrainer *t);
/* The batch the model was created with (saved with it; evaluation runs in
 * batches of it). Training takes batches of 1..VIS_MAX_BATCH: a batch larger
 * than any before moves the model into a new one created for it (its
 * weights, optimiser state, baselines and streams; NN_ERR_NOMEM if memory
 * runs out, the model unchanged). So a VisionModel* from vtr_model() and a
 * vis_config() pointer taken before a vtr_train or vtr_evaluate call may be
 * freed by it: take them again after each such call. */
int vtr_batch(const VisionTrainer *t);
/* steps (1..VTR_MAX_STEPS) optimiser steps on batches of B train images. All
 * or nothing, as trainer_train: if a step diverges (a loss, gradient or weight
 * that is not finite, a weight past 1e6, or weights whose forward pass on the
 * batch's first image is not finite) or fails otherwise, the weights, the
 * optimiser state and step count, hard mode's baselines and both random
 * streams go back to where the call found them; divergence is NN_ERR_VALUE,
 * "training diverged at step N ...". The copy is allocated with the model. */
int vtr_train(VisionTrainer *t, const NnTrainOptions *o, int steps, int B, float *losses);
/* The model as the last vtr_train call found it (weights, optimiser state,
 * steps, baselines, streams): NN_OK, or NN_ERR_ARG before any call. */
int vtr_undo(VisionTrainer *t);
/* uniform: every attention map replaced by the uniform one (vis_set_uniform). */
int vtr_evaluate(VisionTrainer *t, VisSplit split, int count, int uniform, VisEval *r);
/* One image (rows x cols greys) placed on the canvas and read greedily:
 * tokens (T), weights (T, G), locations (T). */
int vtr_predict(VisionTrainer *t, const nn_real *image, int rows, int cols, int32_t *tokens, nn_real *weights,
                int32_t *locations);
/* d log p(token of step) / d pixels of the canvas (R, Q) for the greedy answer. */
int vtr_saliency(VisionTrainer *t, const nn_real *image, int rows, int cols, int step, nn_real *saliency);
/* The retina's glimpses of the last vtr_predict on the canvas, VIS_GLIMPSE_INTS
 * per step (T of them): the centre pixel x, y, then each scale's square
 * patch top, left, side (zeros past the scales, and with the grid). */
#define VIS_GLIMPSE_INTS (2 + 3 * VIS_MAX_SCALES)
void vtr_glimpses(const VisionTrainer *t, int32_t *glimpses);
/* The canvas the last vtr_predict / vtr_saliency read (R, Q). */
const nn_real *vtr_canvas(const VisionTrainer *t);
/* A sampled example of a split with its labels (labels (img_max_out), *n). */
int vtr_sample(VisionTrainer *t, VisSplit split, uint64_t *rng, nn_real *image, int32_t *labels, int *n, VisBox *boxes);
/* Saving (src/train/vision_io.c), the task and the model together, little-endian:
 * "ATNLVIS\0" | u32 version | 4 x i32 task | 13 x i32 model config | [version >= 2: i32 start]
 * | [version 3: i32 sensor | i32 retina size | i32 retina scales | f64 sigma] | f64 entropy
 * | u64 seed | u32 optimiser steps | T x f64 baselines | u64 sampling stream
 * | u64 training stream | u64 P | P x f32 parameters | u32 FNV-1a of all before.
 * Models that start from the mean are written as version 1 (so files saved
 * before the constant start round-trip byte for byte), grid models with the
 * constant start as 2, retina models as 3.
 * The optimiser's moments are not saved: training resumes with fresh ones.
 * Loading checks every field (the task, the configuration against it, the
 * step count, baselines in [0, 1]), the exact length, the checksum and every
 * weight before anything is allocated, then runs the model on one test image
 * and rejects it (NN_ERR_VALUE) unless that pass is finite. */
size_t vtr_save_size(const VisionTrainer *t);
int vtr_save(const VisionTrainer *t, uint8_t *bytes, size_t size);
int vtr_load(VisionTrainer **out, const VisData *d, const uint8_t *bytes, size_t size);

#ifdef __cplusplus
}
#endif
#endif
