/* Activation patching, once for every decoder (models/decoder.h): each
 * model's forward pass hands its activations to a hook at the sites of
 * DecSite; this file records the clean run's at the target's site and
 * replays the corrupt run with one cell of them put back, cell by cell. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "models/decoder.h"

void dec_heads_context(const nn_real *P, const nn_real *v, int v_stride, int n, int H, int D, const uint8_t *ablate,
                       nn_real *z, int z_stride) {
    for (int h = 0; h < H; h++)
        for (int t = 0; t < n; t++) {
            nn_real *row = z + (size_t)t * z_stride + (size_t)h * D;
            memset(row, 0, sizeof(nn_real) * D);
            if (ablate && ablate[h]) continue;
            const nn_real *p = P + ((size_t)h * n + t) * n;
            for (int s = 0; s < n; s++) {
                if (p[s] == 0) continue;
                const nn_real *vs = v + (size_t)s * v_stride + (size_t)h * D;
                for (int d = 0; d < D; d++) row[d] += p[s] * vs[d];
            }
        }
}

/* Reals patch keeps of the clean run at most (1 GB in float): a longer
 * input's patterns are refused before anything is allocated. */
#define DEC_PATCH_MAX_KEPT ((size_t)1 << 28)

static const DecSite SITE_OF[DEC_PATCH_TARGETS] = {DEC_AT_RESID, DEC_AT_ATTN,  DEC_AT_MLP,
                                                   DEC_AT_Z,     DEC_AT_VALUES, DEC_AT_PATTERN};

typedef struct {
    const DecShape *s;
    nn_real *inputs; /* (layers, n, C) the corrupt run's block inputs, or NULL while they are kept */
    DecPatchTarget target;
    DecSite site;
    int n;
    nn_real *kept; /* (layers, per) the clean run's activations at the site */
    size_t per;
    int record;    /* 1: the clean run, copying; 0: a corrupt run, replacing (layer, cell) */
    int layer, cell;
} Patching;

/* Keeps the corrupt run's block inputs (the starts of the patched runs). */
static int keep_inputs(void *ctx, DecSite site, int layer, nn_real *x, int rows, int cols, int stride) {
    Patching *p = ctx;
    if (site == DEC_AT_RESID)
        for (int r = 0; r < rows; r++)
            memcpy(p->inputs + ((size_t)layer * rows + r) * cols, x + (size_t)r * stride, sizeof(nn_real) * cols);
    return 0;
}

static int patch_at(void *ctx, DecSite site, int layer, nn_real *x, int rows, int cols, int stride) {
    Patching *p = ctx;
    if (site != p->site || (!p->record && layer != p->layer)) return 0;
    nn_real *kept = p->kept + (size_t)layer * p->per;
    if (p->record) {
        for (int r = 0; r < rows; r++) memcpy(kept + (size_t)r * cols, x + (size_t)r * stride, sizeof(nn_real) * cols);
        return 0;
    }
    int D = p->s->d_model / p->s->heads, c = p->cell;
    switch (p->target) {
    case DEC_PATCH_HEADS:
    case DEC_PATCH_HEAD_VALUES: /* head c's columns, every position */
        for (int r = 0; r < rows; r++)
            memcpy(x + (size_t)r * stride + (size_t)c * D, kept + (size_t)r * cols + (size_t)c * D, sizeof(nn_real) * D);
        break;
    case DEC_PATCH_HEAD_PATTERNS: /* head c's n rows */
        for (int r = c * p->n; r < (c + 1) * p->n; r++)
            memcpy(x + (size_t)r * stride, kept + (size_t)r * cols, sizeof(nn_real) * cols);
        break;
    default: /* one position's row */
        memcpy(x + (size_t)c * stride, kept + (size_t)c * cols, sizeof(nn_real) * cols);
    }
    return 1;
}

/* Both inputs' tokens and the answer's two, checked. */
static int check_pair(const DecShape *s, const int32_t *clean, const int32_t *corrupt, int n, int a, int b) {
    NN_TRY(dec_check_tokens(clean, n, 1, s->context, s->vocab));
    NN_TRY(dec_check_tokens(corrupt, n, 1, s->context, s->vocab));
    if (a < 0 || a >= s->vocab || b < 0 || b >= s->vocab)
        return nn_fail(NN_ERR_VALUE, "answer: tokens %d and %d; the vocabulary is 0..%d", a, b, s->vocab - 1);
    return NN_OK;
}

/* logit[a] - logit[b] of `copies` runs (hooks: one each, or NULL) from block
 * `from` (their input x0) into m (copies), finite. */
static int metrics(const DecShape *s, DecForward forward, void *model, const int32_t *tokens, int n, int copies,
                   const DecHook *hooks, int from, const nn_real *x0, int a, int b, const char *run, double *m) {
    const nn_real *z = NULL;
    NN_TRY(forward(model, tokens, n, copies, hooks, from, x0, &z));
    for (int i = 0; i < copies; i++, z += s->vocab) {
        m[i] = (double)z[a] - (double)z[b];
        if (!isfinite(m[i]))
            return nn_fail(NN_ERR_VALUE, "the %s run's logits of the answer are not finite (%g, %g)", run,
                           (double)z[a], (double)z[b]);
    }
    return NN_OK;
}

static int metric(const DecShape *s, DecForward forward, void *model, const int32_t *tokens, int n,
                  const DecHook *hook, int a, int b, const char *run, double *m) {
    return metrics(s, forward, model, tokens, n, 1, hook, 0, NULL, a, b, run, m);
}

int dec_patch(const DecShape *s, DecForward forward, void *model, const int32_t *clean, const int32_t *corrupt, int n,
              int a, int b, DecPatchTarget target, float *out, double *m_clean, double *m_corrupt) {
    if ((unsigned)target >= DEC_PATCH_TARGETS) return nn_fail(NN_ERR_ARG, "target: unknown code %d", (int)target);
    NN_TRY(check_pair(s, clean, corrupt, n, a, b));
    /* counted in 64 bits (a 32-bit size_t would wrap) before anything is allocated */
    uint64_t L64 = (uint64_t)s->layers, N64 = (uint64_t)n, C64 = (uint64_t)s->d_model;
    uint64_t per64 = target == DEC_PATCH_HEAD_PATTERNS ? (uint64_t)s->heads * N64 * N64 : N64 * C64;
    if (L64 * (per64 + N64 * C64) > DEC_PATCH_MAX_KEPT)
        return nn_fail(NN_ERR_LIMIT, "%d tokens' activations (the target's and the block inputs, %.0f reals) pass the "
                                     "limit of %zu; use fewer tokens",
                       n, (double)(L64 * (per64 + N64 * C64)), DEC_PATCH_MAX_KEPT);
    size_t L = (size_t)L64, N = (size_t)N64, per = (size_t)per64, inputs = L * N * (size_t)C64;
    Patching p = {s, NULL, target, SITE_OF[target], n, NULL, per, 1, 0, 0};
    /* zeroed: a site a model does not have (an attention-only model's MLP) stays 0 and never patches */
    p.kept = calloc(L * per + inputs, sizeof(nn_real));
    if (!p.kept)
        return nn_fail(NN_ERR_NOMEM, "out of memory for the clean run's activations (%zu reals)", L * per + inputs);
    p.inputs = p.kept + L * per;
    DecHook hook = {patch_at, &p}, keep = {keep_inputs, &p};
    int st = metric(s, forward, model, clean, n, &hook, a, b, "clean", m_clean);
    if (st == NN_OK) st = metric(s, forward, model, corrupt, n, &keep, a, b, "corrupt", m_corrupt);
    double span = *m_clean - *m_corrupt;
    if (st == NN_OK && span == 0)
        st = nn_fail(NN_ERR_VALUE, "the clean and corrupt runs give the same logit difference (%g): there is "
                                   "nothing for a patch to recover; choose inputs or an answer they disagree on",
                     *m_clean);
    int cols = target <= DEC_PATCH_MLP ? n : s->heads;
    int copies = s->copies < 1 ? 1 : s->copies > DEC_PATCH_MAX_COPIES ? DEC_PATCH_MAX_COPIES : s->copies;
    Patching cell[DEC_PATCH_MAX_COPIES];
    DecHook hooks[DEC_PATCH_MAX_COPIES];
    double m[DEC_PATCH_MAX_COPIES];
    p.record = 0;
    /* a layer's cells, up to `copies` runs at once from its corrupt input */
    for (int l = 0; st == NN_OK && l < s->layers; l++)
        for (int c0 = 0; st == NN_OK && c0 < cols; c0 += copies) {
            int k = cols - c0 < copies ? cols - c0 : copies;
            for (int i = 0; i < k; i++) {
                cell[i] = p;
                cell[i].layer = l;
                cell[i].cell = c0 + i;
                hooks[i] = (DecHook){patch_at, &cell[i]};
            }
            st = metrics(s, forward, model, corrupt, n, k, hooks, l, p.inputs + (size_t)l * N * s->d_model, a, b,
                         "patched", m);
            for (int i = 0; st == NN_OK && i < k; i++)
                out[(size_t)l * cols + c0 + i] = (float)((m[i] - *m_corrupt) / span + 0.0); /* + 0.0: no -0 */
        }
    free(p.kept);
    return st;
}

/* The sum over cell c of layer l's activation of x * y (each rows x cols, dense). */
static double cell_dot(const Patching *p, const nn_real *x, const nn_real *y, const nn_real *z, int rows, int cols, int c) {
    int D = p->s->d_model / p->s->heads;
    double sum = 0;
    for (int r = 0; r < rows; r++) {
        if (p->target <= DEC_PATCH_MLP && r != c) continue; /* one position's row */
        int i0 = p->target <= DEC_PATCH_MLP ? 0 : c * D, i1 = p->target <= DEC_PATCH_MLP ? cols : i0 + D;
        for (int i = i0; i < i1; i++) {
            size_t k = (size_t)r * cols + i;
            sum += ((double)x[k] - (double)y[k]) * (double)z[k];
        }
    }
    return sum;
}

int dec_patch_attribution(const DecShape *s, DecForward forward, DecBackward backward, void *model,
                          const int32_t *clean, const int32_t *corrupt, int n, int a, int b, DecPatchTarget target,
                          float *out, double *m_clean, double *m_corrupt) {
    if ((unsigned)target >= DEC_PATCH_TARGETS) return nn_fail(NN_ERR_ARG, "target: unknown code %d", (int)target);
    if (target == DEC_PATCH_HEAD_PATTERNS)
        return nn_fail(NN_ERR_ARG, "method 'attribution' estimates a patch through the gradient of an activation; "
                                   "patterns are patched with method 'exact'");
    if (!backward)
        return nn_fail(NN_ERR_ARG, "method 'attribution' needs a backward pass, which this model does not have here; "
                                   "method 'exact' runs every cell");
    NN_TRY(check_pair(s, clean, corrupt, n, a, b));
    uint64_t per64 = (uint64_t)n * (uint64_t)s->d_model, all64 = 3 * (uint64_t)s->layers * per64;
    if (all64 > DEC_PATCH_MAX_KEPT)
        return nn_fail(NN_ERR_LIMIT, "%d tokens' activations and gradients (%.0f reals) pass the limit of %zu; use fewer "
                                     "tokens",
                       n, (double)all64, DEC_PATCH_MAX_KEPT);
    size_t per = (size_t)per64, layer = (size_t)s->layers * per;
    nn_real *block = calloc(3 * layer, sizeof(nn_real));
    if (!block) return nn_fail(NN_ERR_NOMEM, "out of memory for the activations and gradients (%zu reals)", 3 * layer);
    Patching p = {s, NULL, target, SITE_OF[target], n, block, per, 1, 0, 0};
    DecHook record = {patch_at, &p};
    int st = metric(s, forward, model, clean, n, &record, a, b, "clean", m_clean);
    p.kept = block + layer;
    if (st == NN_OK) st = metric(s, forward, model, corrupt, n, &record, a, b, "corrupt", m_corrupt);
    double span = *m_clean - *m_corrupt;
    if (st == NN_OK && span == 0)
        st = nn_fail(NN_ERR_VALUE, "the clean and corrupt runs give the same logit difference (%g): there is "
                                   "nothing for a patch to recover; choose inputs or an answer they disagree on",
                     *m_clean);
    p.kept = block + 2 * layer;
    if (st == NN_OK) st = backward(model, corrupt, n, a, b, &record);
    int cols = target <= DEC_PATCH_MLP ? n : s->heads;
    for (int l = 0; st == NN_OK && l < s->layers; l++)
        for (int c = 0; c < cols; c++) {
            size_t at = (size_t)l * per;
            double sum = cell_dot(&p, block + at, block + layer + at, block + 2 * layer + at, n, s->d_model, c);
            out[(size_t)l * cols + c] = (float)(sum / span + 0.0);
        }
    free(block);
    return st;
}
