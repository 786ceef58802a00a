/* libFuzzer target: attn_forward / attn_backward and attn_self_forward with
 * fuzzer-chosen shapes, options and values.
 *
 * Input: 12 header bytes, then values.
 *   [0] score (mod 6)          [1] bits: 0 'sum', 1 causal, 2 key lengths,
 *                                  3 self-attention, 4 raw float bits, 5-7 projections
 *   [2] n_q  [3] n_k  [4] d_q  [5] d_k  [6] d_v  [7] hidden   (each 1..16)
 *   [8] heads (1..4)  [9..11] temperature and beta exponents, beta sign
 * Values: with bit 4 the bytes are raw float32 (NaN, inf, subnormals, all of
 * it); otherwise each pair of bytes (m, x) gives m/16 * 2^(x/3), up to ~1e25,
 * so products overflow now and then. Past the input's end values repeat.
 *
 * When a call succeeds its results must hold: visible scores finite, masked
 * ones -inf, weights finite, softmax weights >= 0 summing to 1, each weight
 * equal (in double) to the normalisation of the returned scores, each context
 * equal to the weighted sum of the values. A failure must carry a documented
 * code and a message. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab/attention.h"
#include "fuzz.h"

typedef struct {
    const uint8_t *p;
    size_t n, at;
    int raw;
} Values;

static float next_value(Values *v) {
    if (v->n == 0) return 0.5f;
    if (v->raw) {
        uint8_t b[4];
        for (int i = 0; i < 4; i++) b[i] = v->p[v->at++ % v->n];
        float f;
        memcpy(&f, b, 4);
        return f;
    }
    int8_t m = (int8_t)v->p[v->at++ % v->n], x = (int8_t)v->p[v->at++ % v->n];
    return ldexpf((float)m / 16, x / 3 > 83 ? 83 : x / 3);
}

static int next_byte(Values *v) { return v->n ? v->p[v->at++ % v->n] : 0; }

static nn_real *values(Values *v, size_t n) {
    nn_real *x = malloc((n ? n : 1) * sizeof *x);
    for (size_t i = 0; i < n; i++) x[i] = next_value(v);
    return x;
}

static int dim(uint8_t b) { return 1 + b % 16; }

static void check_attend_result(const AttnConfig *c, const nn_real *e, const nn_real *a, const nn_real *z,
                                const nn_real *v) {
    for (int i = 0; i < c->n_q; i++) {
        int L = attn_visible_keys(c, i);
        const nn_real *er = e + (size_t)i * c->n_k, *ar = a + (size_t)i * c->n_k;
        double m = -INFINITY, s = 0, sum_e = 0;
        for (int j = 0; j < c->n_k; j++) {
            if (j >= L) {
                FUZZ_ASSERT(isinf(er[j]) && er[j] < 0 && ar[j] == 0, "masked cell [%d][%d] is (%g, %g)", i, j,
                            (double)er[j], (double)ar[j]);
                continue;
            }
            FUZZ_ASSERT(isfinite(er[j]) && isfinite(ar[j]), "visible cell [%d][%d] is (%g, %g)", i, j, (double)er[j],
                        (double)ar[j]);
            m = er[j] > m ? er[j] : m;
            sum_e += er[j];
        }
        for (int j = 0; j < L; j++) s += exp(((double)er[j] - m) / c->temperature);
        double total = 0;
        for (int j = 0; j < L; j++) {
            double want = c->norm == ATTN_NORM_SOFTMAX ? exp(((double)er[j] - m) / c->temperature) / s : er[j] / sum_e;
            double tol = c->norm == ATTN_NORM_SOFTMAX ? 2e-6 : 1e-5 * fabs(want) + 1e-30;
            FUZZ_ASSERT(fabs(ar[j] - want) <= tol, "weight [%d][%d] = %.9g, want %.9g", i, j, (double)ar[j], want);
            if (c->norm == ATTN_NORM_SOFTMAX) FUZZ_ASSERT(ar[j] >= 0, "negative softmax weight");
            total += ar[j];
        }
        if (L > 0 && c->norm == ATTN_NORM_SOFTMAX) FUZZ_ASSERT(fabs(total - 1) < 1e-5, "weights sum to %.9g", total);
        for (int d = 0; d < c->d_v; d++) {
            double want = 0, mag = 0;
            for (int j = 0; j < L; j++) {
                want += (double)ar[j] * v[(size_t)j * c->d_v + d];
                mag += fabs((double)ar[j] * v[(size_t)j * c->d_v + d]);
            }
            nn_real got = z[(size_t)i * c->d_v + d];
            FUZZ_ASSERT(isfinite(got), "context [%d][%d] is %g", i, d, (double)got);
            FUZZ_ASSERT(fabs(got - want) <= 1e-5 * mag + 1e-37, "context [%d][%d] = %.9g, want %.9g", i, d,
                        (double)got, want);
        }
    }
}

static void fuzz_attend(const uint8_t *h, Values *vals) {
    AttnConfig c = {0};
    c.score = (AttnScore)(h[0] % ATTN_SCORE_COUNT);
    c.norm = h[1] & 1 ? ATTN_NORM_SUM : ATTN_NORM_SOFTMAX;
    c.causal = (h[1] >> 1) & 1;
    c.n_q = dim(h[2]), c.n_k = dim(h[3]), c.d_q = dim(h[4]), c.d_v = dim(h[6]);
    c.d_k = c.score == ATTN_SCORE_DOT || c.score == ATTN_SCORE_SCALED_DOT || c.score == ATTN_SCORE_COSINE ? c.d_q
                                                                                                        : dim(h[5]);
    c.hidden = c.score == ATTN_SCORE_ADDITIVE ? dim(h[7]) : 0;
    c.temperature = ldexpf(1, (int8_t)h[9] - 64 / 2) * (1 + (h[10] & 7) / 8.0f);
    if (h[9] == 0xff) c.temperature = 1e-40f;
    int32_t *kl = NULL;
    if ((h[1] >> 2) & 1) {
        kl = malloc(sizeof *kl * c.n_q);
        for (int i = 0; i < c.n_q; i++) kl[i] = next_byte(vals) % (c.n_k + 2); /* n_k + 1 is out of range */
        c.key_lengths = kl;
    }
    AttnParams p = {0};
    p.beta = ldexpf(h[11] & 0x80 ? -1.f : 1.f, (h[11] & 0x7f) - 64);
    nn_real *q = values(vals, (size_t)c.n_q * c.d_q), *k = values(vals, (size_t)c.n_k * c.d_k);
    nn_real *v = values(vals, (size_t)c.n_k * c.d_v);
    nn_real *W = NULL, *Wq = NULL, *Wk = NULL, *va = NULL;
    if (c.score == ATTN_SCORE_GENERAL) W = values(vals, (size_t)c.d_q * c.d_k);
    if (c.score == ATTN_SCORE_LOCATION) W = values(vals, (size_t)c.n_k * c.d_q);
    if (c.score == ATTN_SCORE_ADDITIVE) {
        Wq = values(vals, (size_t)c.hidden * c.d_q);
        Wk = values(vals, (size_t)c.hidden * c.d_k);
        va = values(vals, (size_t)c.hidden);
    }
    p.W = W, p.Wq = Wq, p.Wk = Wk, p.v = va;
    size_t cells = (size_t)c.n_q * c.n_k;
    nn_real *e = malloc(sizeof *e * cells), *a = malloc(sizeof *a * cells);
    nn_real *z = malloc(sizeof *z * (size_t)c.n_q * c.d_v);
    nn_real *scratch = malloc(sizeof *scratch * (attn_scratch_size(&c) + 1));
    int st = attn_forward(&c, &p, e, a, z, q, k, v, scratch);
    FUZZ_STATUS(st);
    if (st == NN_OK) {
        check_attend_result(&c, e, a, z, v);
        /* the context-only path agrees */
        nn_real *z2 = malloc(sizeof *z2 * (size_t)c.n_q * c.d_v);
        FUZZ_ASSERT(attn_forward(&c, &p, NULL, NULL, z2, q, k, v, scratch) == NN_OK, "context-only call failed: %s",
                    nn_last_error());
        FUZZ_ASSERT(memcmp(z, z2, sizeof *z * (size_t)c.n_q * c.d_v) == 0, "context-only call differs");
        free(z2);
        /* backward runs clean (gradients may overflow for huge inputs) */
        nn_real *dz = malloc(sizeof *dz * (size_t)c.n_q * c.d_v), *dq = calloc((size_t)c.n_q * c.d_q, sizeof *dq);
        nn_real *dk = calloc((size_t)c.n_k * c.d_k, sizeof *dk), *dv = calloc((size_t)c.n_k * c.d_v, sizeof *dv);
        for (size_t i = 0; i < (size_t)c.n_q * c.d_v; i++) dz[i] = 1;
        AttnParamGrads g = {0};
        FUZZ_STATUS(attn_backward(&c, &p, &g, dq, dk, dv, dz, NULL, e, a, q, k, v, scratch));
        free(dz), free(dq), free(dk), free(dv);
    }
    free(e), free(a), free(z), free(scratch), free(q), free(k), free(v), free(W), free(Wq), free(Wk), free(va), free(kl);
}

static void fuzz_self(const uint8_t *h, Values *vals) {
    SelfAttnConfig c = {0};
    static const AttnScore scores[3] = {ATTN_SCORE_DOT, ATTN_SCORE_SCALED_DOT, ATTN_SCORE_COSINE};
    c.score = scores[h[0] % 3];
    c.causal = (h[1] >> 1) & 1;
    c.heads = 1 + h[8] % 4;
    c.n = dim(h[2]);
    c.d_in = dim(h[4]);
    int use_qk = (h[1] >> 5) & 1, use_v = (h[1] >> 6) & 1, use_o = (h[1] >> 7) & 1;
    c.d_k = use_qk ? c.heads * (1 + h[5] % 4) : c.d_in;
    c.d_v = use_v ? c.heads * (1 + h[6] % 4) : c.d_in;
    c.d_out = use_o ? dim(h[7]) : c.d_v;
    nn_real *x = values(vals, (size_t)c.n * c.d_in);
    SelfAttnWeights w = {use_qk ? values(vals, (size_t)c.d_in * c.d_k) : NULL,
                         use_qk ? values(vals, (size_t)c.d_in * c.d_k) : NULL,
                         use_v ? values(vals, (size_t)c.d_in * c.d_v) : NULL,
                         use_o ? values(vals, (size_t)c.d_v * c.d_out) : NULL};
    size_t nn = (size_t)c.n * c.n;
    SelfAttnActs a = {malloc(sizeof(nn_real) * c.n * c.d_k), malloc(sizeof(nn_real) * c.n * c.d_k),
                      malloc(sizeof(nn_real) * c.n * c.d_v), malloc(sizeof(nn_real) * c.heads * nn),
                      malloc(sizeof(nn_real) * c.heads * nn), malloc(sizeof(nn_real) * c.n * c.d_v),
                      malloc(sizeof(nn_real) * c.n * c.d_out)};
    nn_real *scratch = malloc(sizeof(nn_real) * (attn_self_scratch_size(&c) + 1));
    int st = attn_self_forward(&c, &w, &a, x, scratch);
    FUZZ_STATUS(st);
    if (st == NN_OK) {
        for (size_t i = 0; i < (size_t)c.n * c.d_out; i++)
            FUZZ_ASSERT(isfinite(a.output[i]), "output[%zu] is %g", i, (double)a.output[i]);
        for (size_t i = 0; i < (size_t)c.heads * nn; i++)
            FUZZ_ASSERT(isfinite(a.weights[i]) && a.weights[i] >= 0 && a.weights[i] <= 1 + 1e-6, "weight %zu is %g", i,
                        (double)a.weights[i]);
        nn_real *dout = malloc(sizeof(nn_real) * c.n * c.d_out), *dx = calloc((size_t)c.n * c.d_in, sizeof(nn_real));
        for (size_t i = 0; i < (size_t)c.n * c.d_out; i++) dout[i] = 1;
        FUZZ_STATUS(attn_self_backward(&c, &w, NULL, dx, dout, &a, x, scratch));
        free(dout), free(dx);
    }
    free(x), free((void *)w.wq), free((void *)w.wk), free((void *)w.wv), free((void *)w.wo);
    free(a.q), free(a.k), free(a.v), free(a.scores), free(a.weights), free(a.context), free(a.output), free(scratch);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 12) return 0;
    Values vals = {data + 12, size - 12, 0, (data[1] >> 4) & 1};
    if ((data[1] >> 3) & 1) fuzz_self(data, &vals);
    else fuzz_attend(data, &vals);
    return 0;
}
