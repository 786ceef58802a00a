/* Recurrent cells: one batched time step, forward and backward side by side. */
#include <math.h>
#include <string.h>

#include "attnlab/rnn.h"
#include "core/vec.h"

int rnn_gates(RnnCellKind kind) { return kind == RNN_CELL_LSTM ? 4 : kind == RNN_CELL_GRU ? 3 : 1; }

/* RNN: t | GRU: r, z, n, (h Wh_n + bh_n) | LSTM: i, f, g, o, tanh(c') */
int rnn_step_cache(RnnCellKind kind, int H) { return kind == RNN_CELL_LSTM ? 5 * H : kind == RNN_CELL_GRU ? 4 * H : H; }

size_t rnn_step_scratch(RnnCellKind kind, int B, int H) { return 2 * (size_t)B * rnn_gates(kind) * H; }

/* y (B, G*H) = x W + b for x rows at stride ldx */
static void affine(nn_real *y, const nn_real *x, int ldx, const nn_real *W, const nn_real *b, int B, int in, int GH) {
    vec_gemm_nn(y, GH, x, ldx, W, GH, B, GH, in, 0);
    for (int r = 0; r < B; r++) vec_axpy(y + (size_t)r * GH, 1, b, GH);
}

void rnn_step_forward(RnnCellKind kind, int B, int in, int H, const RnnWeights *w, nn_real *h_out, nn_real *c_out,
                      nn_real *cache, const nn_real *x, int ldx, const nn_real *h, const nn_real *c,
                      const uint8_t *mask, nn_real *scratch) {
    int G = rnn_gates(kind), GH = G * H, S = rnn_step_cache(kind, H);
    nn_real *ax = scratch, *ah = scratch + (size_t)B * GH;
    affine(ax, x, ldx, w->Wx, w->bx, B, in, GH);
    affine(ah, h, H, w->Wh, w->bh, B, H, GH);
    for (int r = 0; r < B; r++) {
        const nn_real *hr = h + (size_t)r * H, *axr = ax + (size_t)r * GH, *ahr = ah + (size_t)r * GH;
        nn_real *ho = h_out + (size_t)r * H, *cr = cache + (size_t)r * S;
        if (mask && !mask[r]) {
            memcpy(ho, hr, sizeof(nn_real) * H);
            if (kind == RNN_CELL_LSTM) memcpy(c_out + (size_t)r * H, c + (size_t)r * H, sizeof(nn_real) * H);
            memset(cr, 0, sizeof(nn_real) * S);
            continue;
        }
        /* pre-activations into the cache, then the nonlinearities as vector ops */
        if (kind == RNN_CELL_RNN) {
            for (int u = 0; u < H; u++) cr[u] = axr[u] + ahr[u];
            vec_tanh(cr, cr, H);
            memcpy(ho, cr, sizeof(nn_real) * H);
        } else if (kind == RNN_CELL_GRU) {
            nn_real *rg = cr, *zg = cr + H, *ng = cr + 2 * H, *hn = cr + 3 * H;
            for (int u = 0; u < 2 * H; u++) rg[u] = axr[u] + ahr[u];
            vec_sigmoid(rg, rg, 2 * H); /* r and z */
            for (int u = 0; u < H; u++) {
                hn[u] = ahr[2 * H + u];
                ng[u] = axr[2 * H + u] + rg[u] * hn[u];
            }
            vec_tanh(ng, ng, H);
            for (int u = 0; u < H; u++) ho[u] = (1 - zg[u]) * ng[u] + zg[u] * hr[u];
        } else {
            const nn_real *cp = c + (size_t)r * H;
            nn_real *co = c_out + (size_t)r * H;
            nn_real *ig = cr, *fg = cr + H, *gg = cr + 2 * H, *og = cr + 3 * H, *tc = cr + 4 * H;
            for (int u = 0; u < 4 * H; u++) cr[u] = axr[u] + ahr[u];
            vec_sigmoid(ig, ig, 2 * H); /* i and f */
            vec_tanh(gg, gg, H);
            vec_sigmoid(og, og, H);
            for (int u = 0; u < H; u++) co[u] = fg[u] * cp[u] + ig[u] * gg[u];
            vec_tanh(tc, co, H);
            for (int u = 0; u < H; u++) ho[u] = og[u] * tc[u];
        }
    }
}

void rnn_step_backward(RnnCellKind kind, int B, int in, int H, const RnnWeights *w, RnnGrads *g, nn_real *dx,
                       int lddx, nn_real *dh, nn_real *dc, const nn_real *dh_out, const nn_real *dc_out,
                       const nn_real *cache, const nn_real *x, int ldx, const nn_real *h, const nn_real *c,
                       const uint8_t *mask, nn_real *scratch) {
    int G = rnn_gates(kind), GH = G * H, S = rnn_step_cache(kind, H);
    nn_real *dax = scratch, *dah = scratch + (size_t)B * GH; /* dL/d(x Wx + bx), dL/d(h Wh + bh) */
    for (int r = 0; r < B; r++) {
        const nn_real *cr = cache + (size_t)r * S, *dho = dh_out + (size_t)r * H, *hr = h + (size_t)r * H;
        nn_real *dxr = dax + (size_t)r * GH, *dhr = dah + (size_t)r * GH;
        if (mask && !mask[r]) {
            memset(dxr, 0, sizeof(nn_real) * GH);
            memset(dhr, 0, sizeof(nn_real) * GH);
            continue;
        }
        if (kind == RNN_CELL_RNN) {
            /* h' = tanh(a): da = dh' (1 - h'^2) */
            for (int u = 0; u < H; u++) dxr[u] = dhr[u] = dho[u] * (1 - cr[u] * cr[u]);
        } else if (kind == RNN_CELL_GRU) {
            /* h' = (1 - z) n + z h; n = tanh(ax_n + r hn); r, z = s(a_r), s(a_z) */
            const nn_real *rg = cr, *zg = cr + H, *ng = cr + 2 * H, *hn = cr + 3 * H;
            for (int u = 0; u < H; u++) {
                nn_real dn = dho[u] * (1 - zg[u]) * (1 - ng[u] * ng[u]);
                nn_real dz = dho[u] * (hr[u] - ng[u]) * zg[u] * (1 - zg[u]);
                nn_real dr = dn * hn[u] * rg[u] * (1 - rg[u]);
                dxr[u] = dhr[u] = dr;
                dxr[H + u] = dhr[H + u] = dz;
                dxr[2 * H + u] = dn;
                dhr[2 * H + u] = dn * rg[u];
            }
        } else {
            /* c' = f c + i g; h' = o tanh(c') */
            const nn_real *ig = cr, *fg = cr + H, *gg = cr + 2 * H, *og = cr + 3 * H, *tc = cr + 4 * H;
            const nn_real *cp = c + (size_t)r * H, *dco = dc_out ? dc_out + (size_t)r * H : NULL;
            nn_real *dcr = dc + (size_t)r * H;
            for (int u = 0; u < H; u++) {
                nn_real dct = (dco ? dco[u] : 0) + dho[u] * og[u] * (1 - tc[u] * tc[u]);
                dxr[u] = dct * gg[u] * ig[u] * (1 - ig[u]);
                dxr[H + u] = dct * cp[u] * fg[u] * (1 - fg[u]);
                dxr[2 * H + u] = dct * ig[u] * (1 - gg[u] * gg[u]);
                dxr[3 * H + u] = dho[u] * tc[u] * og[u] * (1 - og[u]);
                dcr[u] = dct * fg[u];
            }
            memcpy(dhr, dxr, sizeof(nn_real) * GH);
        }
    }
    /* a = x Wx + bx + h Wh + bh */
    if (g) {
        for (int r = 0; r < B; r++) {
            vec_axpy(g->bx, 1, dax + (size_t)r * GH, GH);
            vec_axpy(g->bh, 1, dah + (size_t)r * GH, GH);
        }
        vec_gemm_tn(g->Wx, GH, x, ldx, dax, GH, in, GH, B, 1);
        vec_gemm_tn(g->Wh, GH, h, H, dah, GH, H, GH, B, 1);
    }
    if (dx) vec_gemm_nt(dx, lddx, dax, GH, w->Wx, GH, B, in, GH, 1);
    vec_gemm_nt(dh, H, dah, GH, w->Wh, GH, B, H, GH, 0);
    for (int r = 0; r < B; r++) {
        nn_real *dhr = dh + (size_t)r * H;
        const nn_real *dho = dh_out + (size_t)r * H;
        if (mask && !mask[r]) {
            memcpy(dhr, dho, sizeof(nn_real) * H);
            if (kind == RNN_CELL_LSTM) {
                if (dc_out) memcpy(dc + (size_t)r * H, dc_out + (size_t)r * H, sizeof(nn_real) * H);
                else memset(dc + (size_t)r * H, 0, sizeof(nn_real) * H);
            }
        } else if (kind == RNN_CELL_GRU) {
            /* the direct path h' = ... + z h */
            const nn_real *zg = cache + (size_t)r * S + H;
            for (int u = 0; u < H; u++) dhr[u] += dho[u] * zg[u];
        }
    }
}
