/* Eigenvalues of a real nonsymmetric matrix (eigen.h): Householder
 * Hessenberg reduction, then the Francis double-shift QR iteration with
 * exceptional shifts, as EISPACK's hqr (Wilkinson and Reinsch, Handbook for
 * Automatic Computation II, 1971). All in double. */
#include <math.h>

#include "core/eigen.h"

/* a (n, n) -> H = Q^T a Q upper Hessenberg, Q a product of reflections
 * I - 2 v v^T / (v^T v), one per column: column k's entries below the
 * subdiagonal are sent to zero. */
static void hessenberg(double *a, int n, double *v) {
    for (int k = 0; k + 2 < n; k++) {
        double norm = 0;
        for (int i = k + 1; i < n; i++) norm += a[i * n + k] * a[i * n + k];
        norm = sqrt(norm);
        if (norm == 0) continue;
        double x0 = a[(k + 1) * n + k], alpha = x0 >= 0 ? -norm : norm;
        for (int i = k + 1; i < n; i++) v[i] = a[i * n + k];
        v[k + 1] -= alpha;
        double vtv = 0;
        for (int i = k + 1; i < n; i++) vtv += v[i] * v[i];
        if (vtv == 0) continue;
        /* a = (I - 2 v v^T / vtv) a (I - 2 v v^T / vtv) on rows and columns k + 1.. */
        for (int j = k; j < n; j++) {
            double s = 0;
            for (int i = k + 1; i < n; i++) s += v[i] * a[i * n + j];
            s *= 2 / vtv;
            for (int i = k + 1; i < n; i++) a[i * n + j] -= s * v[i];
        }
        for (int i = 0; i < n; i++) {
            double s = 0;
            for (int j = k + 1; j < n; j++) s += a[i * n + j] * v[j];
            s *= 2 / vtv;
            for (int j = k + 1; j < n; j++) a[i * n + j] -= s * v[j];
        }
        a[(k + 1) * n + k] = alpha;
        for (int i = k + 2; i < n; i++) a[i * n + k] = 0;
    }
}

static double sign_of(double x, double s) { return s >= 0 ? fabs(x) : -fabs(x); }

/* The eigenvalues of an upper Hessenberg h (n, n), destroyed. Written
 * 1-based as the algorithm is published: H(i, j) is h[i-1][j-1]. */
static int hqr(double *h, int n, double *re, double *im) {
#define H(i, j) h[((i) - 1) * n + (j) - 1]
#define WR(i) re[(i) - 1]
#define WI(i) im[(i) - 1]
    double anorm = 0, t = 0;
    for (int i = 1; i <= n; i++)
        for (int j = i > 1 ? i - 1 : 1; j <= n; j++) anorm += fabs(H(i, j));
    int nn = n;
    while (nn >= 1) {
        int its = 0, l;
        do {
            /* the lowest l above which the subdiagonal is negligible */
            for (l = nn; l >= 2; l--) {
                double s = fabs(H(l - 1, l - 1)) + fabs(H(l, l));
                if (s == 0) s = anorm;
                if (fabs(H(l, l - 1)) + s == s) {
                    H(l, l - 1) = 0;
                    break;
                }
            }
            double x = H(nn, nn);
            if (l == nn) { /* one root */
                WR(nn) = x + t;
                WI(nn) = 0;
                nn--;
            } else {
                double y = H(nn - 1, nn - 1), w = H(nn, nn - 1) * H(nn - 1, nn);
                if (l == nn - 1) { /* two roots: the 2x2 block's */
                    double p = 0.5 * (y - x), q = p * p + w, z = sqrt(fabs(q));
                    x += t;
                    if (q >= 0) {
                        z = p + sign_of(z, p);
                        WR(nn - 1) = WR(nn) = x + z;
                        if (z != 0) WR(nn) = x - w / z;
                        WI(nn - 1) = WI(nn) = 0;
                    } else {
                        WR(nn - 1) = WR(nn) = x + p;
                        WI(nn - 1) = z;
                        WI(nn) = -z;
                    }
                    nn -= 2;
                } else {
                    if (its == EIG_MAX_ITERATIONS) return 0;
                    if (its > 0 && its % 10 == 0) { /* an exceptional shift */
                        t += x;
                        for (int i = 1; i <= nn; i++) H(i, i) -= x;
                        double s = fabs(H(nn, nn - 1)) + fabs(H(nn - 1, nn - 2));
                        y = x = 0.75 * s;
                        w = -0.4375 * s * s;
                    }
                    its++;
                    /* where two consecutive small subdiagonals let the double shift start */
                    int m;
                    double p = 0, q = 0, r = 0, z;
                    for (m = nn - 2; m >= l; m--) {
                        z = H(m, m);
                        r = x - z;
                        double s = y - z;
                        p = (r * s - w) / H(m + 1, m) + H(m, m + 1);
                        q = H(m + 1, m + 1) - z - r - s;
                        r = H(m + 2, m + 1);
                        s = fabs(p) + fabs(q) + fabs(r);
                        p /= s;
                        q /= s;
                        r /= s;
                        if (m == l) break;
                        double u = fabs(H(m, m - 1)) * (fabs(q) + fabs(r));
                        double v = fabs(p) * (fabs(H(m - 1, m - 1)) + fabs(z) + fabs(H(m + 1, m + 1)));
                        if (u + v == v) break;
                    }
                    for (int i = m + 2; i <= nn; i++) {
                        H(i, i - 2) = 0;
                        if (i != m + 2) H(i, i - 3) = 0;
                    }
                    /* the double-shift QR step on rows and columns l..nn, by 3x3 reflections */
                    for (int k = m; k <= nn - 1; k++) {
                        if (k != m) {
                            p = H(k, k - 1);
                            q = H(k + 1, k - 1);
                            r = k != nn - 1 ? H(k + 2, k - 1) : 0;
                            if ((x = fabs(p) + fabs(q) + fabs(r)) != 0) {
                                p /= x;
                                q /= x;
                                r /= x;
                            }
                        }
                        double s = sign_of(sqrt(p * p + q * q + r * r), p);
                        if (s == 0) continue;
                        if (k == m) {
                            if (l != m) H(k, k - 1) = -H(k, k - 1);
                        } else {
                            H(k, k - 1) = -s * x;
                        }
                        p += s;
                        x = p / s;
                        y = q / s;
                        z = r / s;
                        q /= p;
                        r /= p;
                        for (int j = k; j <= nn; j++) {
                            p = H(k, j) + q * H(k + 1, j);
                            if (k != nn - 1) {
                                p += r * H(k + 2, j);
                                H(k + 2, j) -= p * z;
                            }
                            H(k + 1, j) -= p * y;
                            H(k, j) -= p * x;
                        }
                        int last = nn < k + 3 ? nn : k + 3;
                        for (int i = l; i <= last; i++) {
                            p = x * H(i, k) + y * H(i, k + 1);
                            if (k != nn - 1) {
                                p += z * H(i, k + 2);
                                H(i, k + 2) -= p * r;
                            }
                            H(i, k + 1) -= p * q;
                            H(i, k) -= p;
                        }
                    }
                }
            }
        } while (nn >= 1 && l < nn - 1);
    }
    return 1;
#undef H
#undef WR
#undef WI
}

int eig_real(double *a, int n, double *re, double *im) {
    for (int i = 0; i < n; i++) re[i] = im[i] = 0;
    /* scaled to a largest entry of 1: the spectrum scales with it, and no step overflows */
    double most = 0;
    for (int i = 0; i < n * n; i++) {
        if (!isfinite(a[i])) return 0;
        if (fabs(a[i]) > most) most = fabs(a[i]);
    }
    if (most == 0) return 1;
    for (int i = 0; i < n * n; i++) a[i] /= most;
    /* the reflections' vector: the subdiagonal column's entries below row k, in place of re's room */
    hessenberg(a, n, re);
    for (int i = 0; i < n; i++) re[i] = 0;
    int ok = hqr(a, n, re, im);
    for (int i = 0; i < n; i++) {
        re[i] *= most;
        im[i] *= most;
    }
    return ok;
}
