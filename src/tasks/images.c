/* The digit set (the MNIST asset) and the image tasks generated from it with
 * a seed: centered, cluttered and multi (include/attnlab/vision.h). */
#include <stdlib.h>
#include <string.h>

#include "attnlab/vision.h"
#include "base/bytes.h"
#include "base/error.h"
#include "base/rng.h"

static const char MAGIC[8] = {'A', 'T', 'N', 'L', 'D', 'I', 'G', 0};
#define DIGIT_PIXELS (VIS_DIGIT_SIDE * VIS_DIGIT_SIDE)

struct VisData {
    int n;              /* digits */
    uint8_t *labels;    /* (n) */
    uint8_t *pixels;    /* (n, 28, 28) */
    int count[2];       /* per split */
    int32_t *index[2];  /* (count) digit indices of each split */
};

int vis_data_create(VisData **out, const uint8_t *bytes, size_t size) {
    *out = NULL;
    nn_clear_error();
    if (!bytes || size < 24 || memcmp(bytes, MAGIC, 8) != 0)
        return nn_fail(NN_ERR_VALUE, "digits: not an attnlab digit set (bad magic or %zu bytes)", size);
    const uint8_t *p = bytes + 8;
    uint32_t version = nn_get_u32(&p), n = nn_get_u32(&p), rows = nn_get_u32(&p), cols = nn_get_u32(&p);
    if (version != 1) return nn_fail(NN_ERR_VALUE, "digits: version %u is not supported (expected 1)", version);
    if (rows != VIS_DIGIT_SIDE || cols != VIS_DIGIT_SIDE)
        return nn_fail(NN_ERR_SHAPE, "digits: %u x %u images; expected 28 x 28", rows, cols);
    if (n < 2 * VIS_TEST_EVERY || n > 1000000 || size != 24 + (size_t)n * (1 + DIGIT_PIXELS))
        return nn_fail(NN_ERR_SHAPE, "digits: %zu bytes do not hold %u digits", size, n);
    for (uint32_t i = 0; i < n; i++)
        if (bytes[24 + i] > 9) return nn_fail(NN_ERR_VALUE, "digits: label %u of digit %u is not 0-9", bytes[24 + i], i);
    VisData *d = calloc(1, sizeof *d);
    if (!d) return nn_fail(NN_ERR_NOMEM, "digits: out of memory");
    d->n = (int)n;
    d->labels = malloc(n);
    d->pixels = malloc((size_t)n * DIGIT_PIXELS);
    d->index[0] = malloc(sizeof(int32_t) * n);
    d->index[1] = malloc(sizeof(int32_t) * n);
    if (!d->labels || !d->pixels || !d->index[0] || !d->index[1]) {
        vis_data_destroy(d);
        return nn_fail(NN_ERR_NOMEM, "digits: out of memory for %u digits", n);
    }
    memcpy(d->labels, bytes + 24, n);
    memcpy(d->pixels, bytes + 24 + n, (size_t)n * DIGIT_PIXELS);
    for (int i = 0; i < (int)n; i++) {
        /* blocks of ten (one digit of each class, as the asset interleaves them) */
        int s = (i / 10) % VIS_TEST_EVERY == VIS_TEST_EVERY - 1 ? VIS_SPLIT_TEST : VIS_SPLIT_TRAIN;
        d->index[s][d->count[s]++] = i;
    }
    *out = d;
    return NN_OK;
}

void vis_data_destroy(VisData *d) {
    if (!d) return;
    free(d->labels);
    free(d->pixels);
    free(d->index[0]);
    free(d->index[1]);
    free(d);
}

int vis_data_count(const VisData *d, VisSplit split) { return d->count[split == VIS_SPLIT_TEST]; }

int vis_data_digit(const VisData *d, VisSplit split, int i, const uint8_t **pixels) {
    int at = d->index[split == VIS_SPLIT_TEST][i];
    *pixels = d->pixels + (size_t)at * DIGIT_PIXELS;
    return d->labels[at];
}

/* ---- tasks ---------------------------------------------------------------- */

int img_task_check(const ImgTaskConfig *c) {
    if ((unsigned)c->kind >= IMG_KIND_COUNT) return nn_fail(NN_ERR_ARG, "task: unknown image task %d", (int)c->kind);
    NN_TRY(nn_check_size("clutter", c->clutter, 0, VIS_MAX_CLUTTER));
    if (c->kind == IMG_CLUTTERED && c->size != 0) NN_TRY(nn_check_size("size", c->size, VIS_DIGIT_SIDE, VIS_MAX_CLUTTERED_SIDE));
    if (c->kind != IMG_CLUTTERED && c->size != 0)
        return nn_fail(NN_ERR_ARG, "size: only the cluttered task's canvas has a size to choose (got %d)", c->size);
    if (c->kind == IMG_MULTI) {
        NN_TRY(nn_check_size("digits: the fewest", c->min_digits, 1, VIS_MAX_DIGITS));
        NN_TRY(nn_check_size("digits: the most", c->max_digits, c->min_digits, VIS_MAX_DIGITS));
    }
    return NN_OK;
}

static int cluttered_side(const ImgTaskConfig *c) { return c->size ? c->size : VIS_CLUTTERED_SIDE; }
int img_rows(const ImgTaskConfig *c) { return c->kind == IMG_CENTERED ? 28 : c->kind == IMG_CLUTTERED ? cluttered_side(c) : 40; }
int img_cols(const ImgTaskConfig *c) { return c->kind == IMG_CENTERED ? 28 : c->kind == IMG_CLUTTERED ? cluttered_side(c) : 100; }
int img_max_out(const ImgTaskConfig *c) { return c->kind == IMG_MULTI ? c->max_digits + 1 : 1; }

/* canvas = max(canvas, patch): h x w pixels of a digit from (sy, sx), at (y, x);
 * box (may be NULL): the bounding box of the patch's ink on the canvas */
static void paste(nn_real *canvas, int Q, const uint8_t *digit, int sy, int sx, int h, int w, int y, int x, VisBox *box) {
    int top = h, bottom = -1, left = w, right = -1;
    for (int i = 0; i < h; i++)
        for (int j = 0; j < w; j++) {
            uint8_t ink = digit[(sy + i) * VIS_DIGIT_SIDE + sx + j];
            nn_real v = (nn_real)ink / 255;
            nn_real *p = canvas + (size_t)(y + i) * Q + x + j;
            if (v > *p) *p = v;
            if (ink) {
                if (i < top) top = i;
                if (i > bottom) bottom = i;
                if (j < left) left = j;
                if (j > right) right = j;
            }
        }
    if (!box) return;
    if (bottom < 0) top = left = 0, bottom = h - 1, right = w - 1; /* a blank digit: its whole square */
    *box = (VisBox){y + top, x + left, bottom - top + 1, right - left + 1};
}

int img_sample(const VisData *d, const ImgTaskConfig *c, VisSplit split, uint64_t *rng, nn_real *image,
               int32_t *labels, int *n_labels, VisBox *boxes) {
    nn_clear_error();
    NN_TRY(img_task_check(c));
    int R = img_rows(c), Q = img_cols(c), count = vis_data_count(d, split), S = VIS_DIGIT_SIDE;
    const uint8_t *px;
    memset(image, 0, sizeof(nn_real) * R * Q);
    for (int i = 0; i < img_max_out(c); i++) labels[i] = VIS_END;
    if (c->kind == IMG_CENTERED) {
        labels[0] = vis_data_digit(d, split, nn_rng_below(rng, count), &px);
        paste(image, Q, px, 0, 0, S, S, 0, 0, boxes);
        *n_labels = 1;
    } else if (c->kind == IMG_CLUTTERED) {
        /* clutter first, the digit over it (max blending either way) */
        for (int k = 0; k < c->clutter; k++) {
            vis_data_digit(d, split, nn_rng_below(rng, count), &px);
            int sy = 4 + nn_rng_below(rng, S - 8 - VIS_CLUTTER_SIDE + 1), sx = 4 + nn_rng_below(rng, S - 8 - VIS_CLUTTER_SIDE + 1);
            paste(image, Q, px, sy, sx, VIS_CLUTTER_SIDE, VIS_CLUTTER_SIDE, nn_rng_below(rng, R - VIS_CLUTTER_SIDE + 1),
                  nn_rng_below(rng, Q - VIS_CLUTTER_SIDE + 1), NULL);
        }
        labels[0] = vis_data_digit(d, split, nn_rng_below(rng, count), &px);
        paste(image, Q, px, 0, 0, S, S, nn_rng_below(rng, R - S + 1), nn_rng_below(rng, Q - S + 1), boxes);
        *n_labels = 1;
    } else {
        int n = c->min_digits + nn_rng_below(rng, c->max_digits - c->min_digits + 1);
        /* the free columns Q - n*28 split into n + 1 random gaps */
        int cuts[VIS_MAX_DIGITS + 1], free_cols = Q - n * S, sum = 0;
        for (int i = 0; i <= n; i++) sum += cuts[i] = 1 + nn_rng_below(rng, 16);
        int x = 0;
        for (int i = 0; i < n; i++) {
            int gap = cuts[i] * free_cols / sum;
            x += gap;
            labels[i] = vis_data_digit(d, split, nn_rng_below(rng, count), &px);
            paste(image, Q, px, 0, 0, S, S, nn_rng_below(rng, R - S + 1), x, boxes ? boxes + i : NULL);
            x += S;
        }
        labels[n] = VIS_END;
        *n_labels = n + 1;
    }
    return NN_OK;
}

int img_place(const ImgTaskConfig *c, const nn_real *image, int rows, int cols, nn_real *canvas) {
    nn_clear_error();
    NN_TRY(img_task_check(c));
    NN_TRY(nn_check_size("image: rows", rows, 1, VIS_MAX_IMAGE));
    NN_TRY(nn_check_size("image: columns", cols, 1, VIS_MAX_IMAGE));
    NN_TRY(nn_check_finite("image", image, (size_t)rows * cols));
    for (int i = 0; i < rows * cols; i++)
        if (image[i] < 0 || image[i] > 1)
            return nn_fail(NN_ERR_VALUE, "image: pixel %d is %g; greys must be in [0, 1]", i, (double)image[i]);
    int R = img_rows(c), Q = img_cols(c);
    /* shrink factor f >= 1 so the image fits; output pixel (i, j) averages the
     * source box [i f, (i+1) f) x [j f, (j+1) f) (whole source pixels, nearest) */
    double f = 1;
    if (rows > R || cols > Q) f = rows * Q > cols * R ? (double)rows / R : (double)cols / Q;
    int h = (int)(rows / f + 0.5), w = (int)(cols / f + 0.5);
    if (h > R) h = R;
    if (w > Q) w = Q;
    if (h < 1) h = 1;
    if (w < 1) w = 1;
    int y0 = (R - h) / 2, x0 = (Q - w) / 2;
    memset(canvas, 0, sizeof(nn_real) * R * Q);
    for (int i = 0; i < h; i++)
        for (int j = 0; j < w; j++) {
            int a = (int)(i * f), b = (int)((i + 1) * f), l = (int)(j * f), r = (int)((j + 1) * f);
            if (b <= a) b = a + 1;
            if (r <= l) r = l + 1;
            if (b > rows) b = rows;
            if (r > cols) r = cols;
            double s = 0;
            for (int y = a; y < b; y++)
                for (int x = l; x < r; x++) s += image[(size_t)y * cols + x];
            canvas[(size_t)(y0 + i) * Q + x0 + j] = (nn_real)(s / ((b - a) * (r - l)));
        }
    return NN_OK;
}
