/* Vector primitives and matrix products of core/vec.h against double math,
 * and the fast gemm kernels against their naive references, on many shapes:
 * lengths around the vector width (tails), odd sizes, leading dimensions
 * larger than the widths, accumulate 0 and 1; and NaN through min, max and
 * clamp, the same on every build. */
#include "check.h"
#include "core/simd.h"
#include "core/vec.h"

/* Rounding bound of an n-term sum of products whose magnitudes add to abs_sum. */
static double sum_tol(int n, double abs_sum) { return (n + 4) * TOL_EPS * abs_sum + 1e-300; }

static const int lengths[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13, 15, 16, 17, 23, 31, 32, 33, 63, 64, 65, 257, 1000};
#define N_LENGTHS ((int)(sizeof lengths / sizeof lengths[0]))

static void test_dot_sum(Rng *r) {
    for (int t = 0; t < N_LENGTHS; t++) {
        int n = lengths[t];
        size_t mark = alloc_mark();
        nn_real *x = alloc_random(r, (size_t)n, -1, 1), *y = alloc_random(r, (size_t)n, -1, 1);
        double want = 0, abs_sum = 0, s_want = 0, s_abs = 0;
        for (int i = 0; i < n; i++) {
            want += (double)x[i] * y[i];
            abs_sum += fabs((double)x[i] * y[i]);
            s_want += x[i];
            s_abs += fabs((double)x[i]);
        }
        check_case("n=%d", n);
        CHECK_CLOSE(vec_dot(x, y, n), want, sum_tol(n, abs_sum), 0, "vec_dot");
        CHECK_CLOSE(vec_sum(x, n), s_want, sum_tol(n, s_abs), 0, "vec_sum");
        /* unaligned start */
        if (n > 1) {
            double w1 = 0, a1 = 0;
            for (int i = 1; i < n; i++) {
                w1 += (double)x[i] * y[i - 1];
                a1 += fabs((double)x[i] * y[i - 1]);
            }
            CHECK_CLOSE(vec_dot(x + 1, y, n - 1), w1, sum_tol(n, a1), 0, "vec_dot (offset by 1)");
        }
        /* small integers: every partial sum is exact, so the result is too */
        for (int i = 0; i < n; i++) {
            x[i] = (nn_real)(i % 7 - 3);
            y[i] = (nn_real)((i * 5) % 11 - 5);
        }
        double exact = 0, exact_sum = 0;
        for (int i = 0; i < n; i++) {
            exact += (double)x[i] * y[i];
            exact_sum += x[i];
        }
        CHECK(vec_dot(x, y, n) == exact, "vec_dot of small integers: got %.17g, want %.17g",
              (double)vec_dot(x, y, n), exact);
        CHECK(vec_sum(x, n) == exact_sum, "vec_sum of small integers: got %.17g, want %.17g",
              (double)vec_sum(x, n), exact_sum);
        alloc_release(mark);
    }
    nn_real one = 1;
    check_case("n=0");
    CHECK(vec_dot(&one, &one, 0) == 0, "vec_dot of 0 elements is %g", (double)vec_dot(&one, &one, 0));
    CHECK(vec_sum(&one, 0) == 0, "vec_sum of 0 elements is %g", (double)vec_sum(&one, 0));
}

static void test_axpy_scale(Rng *r) {
    for (int t = 0; t < N_LENGTHS; t++) {
        int n = lengths[t];
        size_t mark = alloc_mark();
        nn_real *x = alloc_random(r, (size_t)n, -2, 2), *y = alloc_random(r, (size_t)n, -2, 2);
        nn_real a = (nn_real)rng_uniform(r, -3, 3);
        double *want = alloc_doubles((size_t)n);
        double tol = 0;
        for (int i = 0; i < n; i++) {
            want[i] = (double)y[i] + (double)a * x[i];
            double b = 3 * TOL_EPS * (fabs((double)y[i]) + fabs((double)a * x[i]));
            if (b > tol) tol = b;
        }
        check_case("n=%d", n);
        vec_axpy(y, a, x, n);
        CHECK_ARRAY(y, want, (size_t)n, 0, tol, 0, "vec_axpy");

        for (int i = 0; i < n; i++) want[i] = (double)x[i] * a;
        vec_scale(x, a, n);
        CHECK_ARRAY(x, want, (size_t)n, 0, 0, 2 * TOL_EPS, "vec_scale");

        /* a window in the middle: neighbours stay untouched */
        if (n >= 4) {
            nn_real *z = alloc_random(r, (size_t)n, -1, 1), *zc = alloc_reals((size_t)n);
            memcpy(zc, z, sizeof(nn_real) * (size_t)n);
            vec_axpy(z + 1, 2, x + 1, n - 2);
            vec_scale(z + 1, 3, n - 2);
            CHECK(z[0] == zc[0] && z[n - 1] == zc[n - 1], "axpy/scale on [1, n-1) wrote outside the window");
            for (int i = 1; i < n - 1; i++) want[i] = ((double)zc[i] + 2.0 * x[i]) * 3;
            CHECK_ARRAY(z + 1, want + 1, (size_t)n - 2, 0, 8 * TOL_EPS * 40, 0, "axpy then scale, offset 1");
        }
        alloc_release(mark);
    }
    nn_real one = 1, two = 2;
    check_case("n=0");
    vec_axpy(&one, 5, &two, 0);
    vec_scale(&two, 5, 0);
    CHECK(one == 1 && two == 2, "axpy/scale of 0 elements changed memory");
}

static void test_max(Rng *r) {
    for (int t = 0; t < N_LENGTHS; t++) {
        int n = lengths[t];
        size_t mark = alloc_mark();
        /* all negative: a max that starts from 0 would be wrong */
        nn_real *x = alloc_random(r, (size_t)n, -9, -1);
        int positions[4] = {0, n - 1, n / 2, n > 4 ? 4 * ((n - 1) / 4) : 0};
        check_case("n=%d", n);
        for (int p = 0; p < 4; p++) {
            nn_real keep = x[positions[p]];
            x[positions[p]] = (nn_real)-0.5;
            CHECK(vec_max(x, n) == (nn_real)-0.5, "vec_max with the max at %d: got %g", positions[p],
                  (double)vec_max(x, n));
            x[positions[p]] = keep;
        }
        double m = -INFINITY;
        for (int i = 0; i < n; i++) m = x[i] > m ? x[i] : m;
        CHECK(vec_max(x, n) == m, "vec_max of random values: got %g, want %g", (double)vec_max(x, n), m);
        /* -inf entries (masked scores) are ignored unless all are -inf */
        for (int i = 0; i < n; i += 2) x[i] = -INFINITY;
        m = -INFINITY;
        for (int i = 0; i < n; i++) m = x[i] > m ? x[i] : m;
        CHECK(vec_max(x, n) == m, "vec_max with -inf entries: got %g, want %g", (double)vec_max(x, n), m);
        alloc_release(mark);
    }
}

/* vec_max_abs: max |x_i| of finite values, not finite when any x_i is not */
static void test_max_abs(Rng *r) {
    const nn_real bad[3] = {NAN, INFINITY, -INFINITY};
    for (int t = 0; t < N_LENGTHS; t++) {
        int n = lengths[t];
        size_t mark = alloc_mark();
        nn_real *x = alloc_random(r, (size_t)n, -100, 100);
        double m = 0;
        for (int i = 0; i < n; i++) m = fabs((double)x[i]) > m ? fabs((double)x[i]) : m;
        check_case("n=%d", n);
        CHECK(vec_max_abs(x, (size_t)n) == m, "vec_max_abs: got %g, want %g", (double)vec_max_abs(x, (size_t)n), m);
        for (int at = 0; at < n; at += (n > 40 ? 37 : 1))
            for (int b = 0; b < 3; b++) {
                nn_real keep = x[at];
                x[at] = bad[b];
                CHECK(!isfinite(vec_max_abs(x, (size_t)n)), "%g at %d: got %g", (double)bad[b], at,
                      (double)vec_max_abs(x, (size_t)n));
                x[at] = keep;
            }
        alloc_release(mark);
    }
    nn_real edge[4] = {-0.0f, (nn_real)-3e38, 1e-40f, 0};
    check_case("edges");
    CHECK(vec_max_abs(edge, 4) == (nn_real)3e38, "got %g", (double)vec_max_abs(edge, 4));
    CHECK(vec_max_abs(edge, 1) == 0 && vec_max_abs(edge + 2, 1) == (nn_real)1e-40f && vec_max_abs(edge, 0) == 0,
          "zero, a subnormal, no values");
}

/* A case of an elementwise kernel y = f(x): n inputs in [lo, hi), the output
 * (x itself when in place) and room for the float64 expected values. */
typedef struct {
    nn_real *x, *y;
    double *want;
} Elementwise;

static Elementwise elementwise_case(Rng *r, int n, int inplace, double lo, double hi) {
    Elementwise c = {alloc_random(r, (size_t)n, lo, hi), NULL, alloc_doubles((size_t)n)};
    c.y = inplace ? c.x : alloc_reals((size_t)n);
    return c;
}

static void test_exp_sum(Rng *r) {
    /* exp of the float argument x - shift: relative error of a few ulps, plus
     * the rounding of x - shift itself (|x - shift| eps) */
    for (int t = 0; t < N_LENGTHS; t++) {
        int n = lengths[t];
        for (int inplace = 0; inplace < 2; inplace++) {
            size_t mark = alloc_mark();
            Elementwise c = elementwise_case(r, n, inplace, -20, 8);
            nn_real shift = inplace ? vec_max(c.x, n) : (nn_real)rng_uniform(r, -2, 2);
            double s = 0;
            for (int i = 0; i < n; i++) s += c.want[i] = exp((double)c.x[i] - (double)shift);
            check_case("n=%d in-place=%d shift=%g", n, inplace, (double)shift);
            nn_real got_s = vec_exp_sum(c.y, c.x, shift, n);
            CHECK_ARRAY(c.y, c.want, (size_t)n, 0, 1e-300, 40 * TOL_EPS, "vec_exp_sum values");
            CHECK_CLOSE(got_s, s, 0, (n + 40) * TOL_EPS, "vec_exp_sum sum");
            alloc_release(mark);
        }
    }
    /* the whole float range above the subnormals, densely: a few ulps */
    {
        size_t mark = alloc_mark();
        int n = 17501;
        nn_real *x = alloc_reals((size_t)n), *y = alloc_reals((size_t)n);
        for (int i = 0; i < n; i++) x[i] = (nn_real)(-87.0 + 175.0 * i / (n - 1));
        vec_exp_sum(y, x, 0, n);
        double worst = 0;
        int at = 0;
        for (int i = 0; i < n; i++) {
            double e = fabs(y[i] / exp((double)x[i]) - 1);
            if (!(e <= worst)) worst = e, at = i;
        }
        check_case("exp over [-87, 88]");
        CHECK(worst <= 4 * TOL_EPS, "relative error %.3g (%.2f ulp) at x = %.9g", worst, worst / TOL_EPS,
              (double)x[at]);
        alloc_release(mark);
    }
    /* far below the range: ~0, never negative or NaN; exp(0) = 1 */
    nn_real x[5] = {-200, -1000, 0, -87, 3};
    nn_real y[5];
    check_case("extremes");
    nn_real s = vec_exp_sum(y, x, 0, 5);
    CHECK(y[0] >= 0 && y[0] < 1e-30 && y[1] >= 0 && y[1] < 1e-30, "exp(-200), exp(-1000) = %g, %g",
          (double)y[0], (double)y[1]);
    CHECK_CLOSE(y[2], 1, 0, 2 * TOL_EPS, "exp(0)");
    CHECK_CLOSE(y[3], exp(-87.0), 0, 40 * TOL_EPS, "exp(-87)");
    CHECK_CLOSE(y[4], exp(3.0), 0, 40 * TOL_EPS, "exp(3)");
    CHECK_CLOSE(s, exp(-87.0) + 1 + exp(3.0), 0, 40 * TOL_EPS, "sum over extremes");
    nn_real one = 1;
    CHECK(vec_exp_sum(&one, &one, 0, 0) == 0 && one == 1, "vec_exp_sum of 0 elements");
}

static void test_tanh(Rng *r) {
    /* 1 - 2 / (exp(2x) + 1) has an absolute (not relative) error of ~1 ulp of 1 */
    for (int t = 0; t < N_LENGTHS; t++) {
        int n = lengths[t];
        for (int inplace = 0; inplace < 2; inplace++) {
            size_t mark = alloc_mark();
            Elementwise c = elementwise_case(r, n, inplace, -6, 6);
            for (int i = 0; i < n; i++) c.want[i] = tanh((double)c.x[i]);
            check_case("n=%d in-place=%d", n, inplace);
            vec_tanh(c.y, c.x, n);
            CHECK_ARRAY(c.y, c.want, (size_t)n, 0, 8 * TOL_EPS, 8 * TOL_EPS, "vec_tanh");
            alloc_release(mark);
        }
    }
    nn_real x[9] = {0, 1e-6f, -1e-6f, 20, -20, 100, -100, (nn_real)1e30, (nn_real)-1e30};
    nn_real y[9];
    double want[9];
    for (int i = 0; i < 9; i++) want[i] = tanh((double)x[i]);
    check_case("extremes");
    vec_tanh(y, x, 9);
    CHECK_ARRAY(y, want, 9, 0, 8 * TOL_EPS, 0, "vec_tanh extremes");
    int bounded = 1;
    for (int i = 0; i < 9; i++) bounded &= fabs((double)y[i]) <= 1;
    CHECK(bounded, "vec_tanh leaves [-1, 1]");
    CHECK(y[5] == 1 && y[6] == -1 && y[7] == 1 && y[8] == -1, "tanh(+-100), tanh(+-1e30) = %g %g %g %g",
          (double)y[5], (double)y[6], (double)y[7], (double)y[8]);
}

/* ---- NaN through min, max and clamp ----------------------------------------
 * Every branch of simd.h follows SIMD128's pmax / pmin (a < b ? b : a and
 * b < a ? b : a), so each build is checked lane by lane against that rule:
 * the simd (SSE) and scalar variants here, the WASM builds through
 * tests/js/edges.test.mjs. A NaN that reaches a clamp, exp, tanh or sigmoid
 * comes out NaN. */

static int same_real(double got, double want) {
    return isnan(want) ? isnan(got) : got == want && signbit(got) == signbit(want);
}

static double max_rule(double a, double b) { return a < b ? b : a; }
static double min_rule(double a, double b) { return b < a ? b : a; }

static void test_nan_min_max(void) {
    const nn_real v[] = {NAN, INFINITY, -INFINITY, 0.0, -0.0, 1, -88, 88, (nn_real)3e38, (nn_real)-3e38};
    const int n = (int)(sizeof v / sizeof v[0]);
    nn_real t[NN_VLEN];
    check_case("vf_max, vf_min, clamp on lanes");
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            /* lanes hold (a, b), (b, a), (a, a), (b, b): both orders in one vector */
            const nn_real x[NN_VLEN] = {v[i], v[j], v[i], v[j]}, y[NN_VLEN] = {v[j], v[i], v[i], v[j]};
            VecF a = vf_load(x), b = vf_load(y);
            vf_store(t, vf_max(a, b));
            for (int l = 0; l < NN_VLEN; l++)
                CHECK(same_real(t[l], max_rule(x[l], y[l])), "vf_max(%g, %g) = %g, want %g", (double)x[l],
                      (double)y[l], (double)t[l], max_rule(x[l], y[l]));
            vf_store(t, vf_min(a, b));
            for (int l = 0; l < NN_VLEN; l++)
                CHECK(same_real(t[l], min_rule(x[l], y[l])), "vf_min(%g, %g) = %g, want %g", (double)x[l],
                      (double)y[l], (double)t[l], min_rule(x[l], y[l]));
        }
    for (int i = 0; i < n; i++) {
        /* vf_exp's clamp to [-88, 88] */
        vf_store(t, vf_min(vf_max(vf_splat(v[i]), vf_splat(-88)), vf_splat(88)));
        double want = isnan(v[i]) ? NAN : v[i] < -88 ? -88 : v[i] > 88 ? 88 : v[i];
        CHECK(same_real(t[0], want), "clamp(%g, -88, 88) = %g, want %g", (double)v[i], (double)t[0], want);
    }
    check_case("vf_hmax");
    for (int i = 0; i < n; i++)
        for (int l = 0; l < NN_VLEN; l++) {
            nn_real x[NN_VLEN] = {1, 2, 3, 4};
            x[l] = v[i];
            double want = max_rule(max_rule(x[0], x[1]), max_rule(x[2], x[3]));
            double got = vf_hmax(vf_load(x));
            CHECK(same_real(got, want), "vf_hmax with %g in lane %d = %g, want %g", (double)v[i], l, got, want);
        }
    check_case("NaN through exp, tanh, sigmoid");
    for (int len = 1; len <= 9; len++)
        for (int at = 0; at < len; at++) { /* the vector body and the tail */
            nn_real x[9] = {0.5f, -1, 2, 0, -3, 1, 0.25f, -0.5f, 3}, y[9];
            x[at] = NAN;
            vec_exp_sum(y, x, 0, len);
            CHECK(isnan(y[at]), "exp(NaN) at %d of %d = %g", at, len, (double)y[at]);
            vec_tanh(y, x, len);
            CHECK(isnan(y[at]), "tanh(NaN) at %d of %d = %g", at, len, (double)y[at]);
            vec_sigmoid(y, x, len);
            CHECK(isnan(y[at]), "sigmoid(NaN) at %d of %d = %g", at, len, (double)y[at]);
        }
}

/* ---- gemm ---------------------------------------------------------------- */

typedef enum { GEMM_NN, GEMM_TN, GEMM_NT } GemmKind;
static const char *const gemm_names[3] = {"nn", "tn", "nt"};

/* A row-major matrix of `rows` rows of `width` values, stride ld, allocated to
 * exactly its last element; the padding between width and ld is NaN so a
 * kernel that reads it poisons its result. */
static nn_real *alloc_matrix(Rng *r, int rows, int width, int ld) {
    size_t n = rows > 0 ? (size_t)(rows - 1) * ld + width : 0;
    nn_real *m = alloc_reals(n);
    for (int i = 0; i < rows; i++) rng_fill(r, m + (size_t)i * ld, (size_t)width, -1, 1);
    return m;
}

static void test_gemm_case(Rng *r, GemmKind kind, int M, int N, int K, int pad, int accumulate) {
    size_t mark = alloc_mark();
    /* A is (M,K) for nn/nt, (K,M) for tn; B is (K,N) for nn/tn, (N,K) for nt */
    int a_rows = kind == GEMM_TN ? K : M, a_w = kind == GEMM_TN ? M : K;
    int b_rows = kind == GEMM_NT ? N : K, b_w = kind == GEMM_NT ? K : N;
    int lda = a_w + pad, ldb = b_w + 2 * pad, ldc = N + pad;
    nn_real *A = alloc_matrix(r, a_rows, a_w, lda), *B = alloc_matrix(r, b_rows, b_w, ldb);
    size_t c_n = (size_t)(M - 1) * ldc + N;
    nn_real *C = alloc_reals(c_n), *Cref = alloc_reals(c_n);
    double *want = alloc_doubles(c_n);
    nn_real sentinel = (nn_real)12345.5;
    for (size_t i = 0; i < c_n; i++) C[i] = sentinel;
    for (int i = 0; i < M; i++) rng_fill(r, C + (size_t)i * ldc, (size_t)N, -1, 1);
    memcpy(Cref, C, sizeof(nn_real) * c_n);

    double max_abs = 0;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double s = 0, s_abs = 0;
            for (int p = 0; p < K; p++) {
                double a = kind == GEMM_TN ? A[(size_t)p * lda + i] : A[(size_t)i * lda + p];
                double b = kind == GEMM_NT ? B[(size_t)j * ldb + p] : B[(size_t)p * ldb + j];
                s += a * b;
                s_abs += fabs(a * b);
            }
            double c0 = C[(size_t)i * ldc + j];
            want[(size_t)i * ldc + j] = accumulate ? c0 + s : s;
            s_abs += accumulate ? fabs(c0) : 0;
            if (s_abs > max_abs) max_abs = s_abs;
        }
    for (size_t i = 0; i < c_n; i++)
        if ((int)(i % (size_t)ldc) >= N) want[i] = sentinel;

    switch (kind) {
    case GEMM_NN:
        vec_gemm_nn(C, ldc, A, lda, B, ldb, M, N, K, accumulate);
        vec_gemm_nn_ref(Cref, ldc, A, lda, B, ldb, M, N, K, accumulate);
        break;
    case GEMM_TN:
        vec_gemm_tn(C, ldc, A, lda, B, ldb, M, N, K, accumulate);
        vec_gemm_tn_ref(Cref, ldc, A, lda, B, ldb, M, N, K, accumulate);
        break;
    case GEMM_NT:
        vec_gemm_nt(C, ldc, A, lda, B, ldb, M, N, K, accumulate);
        vec_gemm_nt_ref(Cref, ldc, A, lda, B, ldb, M, N, K, accumulate);
        break;
    }
    check_case("gemm_%s M=%d N=%d K=%d pad=%d accumulate=%d", gemm_names[kind], M, N, K, pad, accumulate);
    /* the padding columns of C hold the sentinel, compared exactly */
    double tol = sum_tol(K, max_abs);
    CHECK_ARRAY(C, want, c_n, ldc, tol, 0, "fast kernel vs double");
    CHECK_ARRAY(Cref, want, c_n, ldc, tol, 0, "naive reference vs double");
    CHECK_ARRAY_R(C, Cref, c_n, ldc, 2 * tol, 0, "fast kernel vs naive reference");
    alloc_release(mark);
}

static void test_gemm(Rng *r) {
    static const int shapes[][3] = {
        {1, 1, 1},   {1, 8, 1},   {2, 3, 4},   {6, 8, 5},   {7, 9, 3},    {5, 16, 7},
        {13, 17, 19}, {1, 33, 2},  {31, 1, 9},  {6, 7, 8},   {4, 4, 4},    {8, 8, 8},
        {9, 15, 1},  {12, 24, 6}, {3, 5, 64},  {67, 45, 33}, {33, 67, 45}, {45, 33, 67},
        {11, 12, 1}, {6, 16, 2},  {2, 32, 3},  {7, 19, 300}, {3, 40, 513}, {1, 1, 257},
    };
    int n_shapes = (int)(sizeof shapes / sizeof shapes[0]);
    for (int kind = 0; kind < 3; kind++)
        for (int s = 0; s < n_shapes; s++)
            for (int pad = 0; pad <= 3; pad += 3)
                for (int acc = 0; acc < 2; acc++)
                    test_gemm_case(r, (GemmKind)kind, shapes[s][0], shapes[s][1], shapes[s][2], pad, acc);
    /* K = 0: C = 0, or unchanged when accumulating */
    for (int kind = 0; kind < 3; kind++)
        for (int acc = 0; acc < 2; acc++) test_gemm_case(r, (GemmKind)kind, 5, 9, 0, 1, acc);
}

/* vec_pack + vec_gemm_packed: scale B, B (Kp,N) or B^T (N,Kp), packed once with
 * Kp >= K rows, then C = [C +] A (M,K) . scale B[:K] */
static void test_gemm_packed_case(Rng *r, int M, int N, int K, int Kp, int transposed, int pad, int accumulate,
                                  double scale) {
    size_t mark = alloc_mark();
    int lda = K + pad, ldb = (transposed ? Kp : N) + pad, ldc = N + 2 * pad;
    nn_real *A = alloc_matrix(r, M, K, lda);
    nn_real *B = transposed ? alloc_matrix(r, N, Kp, ldb) : alloc_matrix(r, Kp, N, ldb);
    size_t c_n = (size_t)(M - 1) * ldc + N;
    nn_real *C = alloc_reals(c_n);
    double *want = alloc_doubles(c_n);
    nn_real sentinel = (nn_real)-777.25;
    for (size_t i = 0; i < c_n; i++) C[i] = sentinel;
    for (int i = 0; i < M; i++) rng_fill(r, C + (size_t)i * ldc, (size_t)N, -1, 1);
    double max_abs = 0;
    for (size_t i = 0; i < c_n; i++) want[i] = sentinel;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double s = 0, s_abs = 0, c0 = C[(size_t)i * ldc + j];
            for (int p = 0; p < K; p++) {
                double b = scale * (transposed ? B[(size_t)j * ldb + p] : B[(size_t)p * ldb + j]);
                s += A[(size_t)i * lda + p] * b;
                s_abs += fabs(A[(size_t)i * lda + p] * b);
            }
            want[(size_t)i * ldc + j] = accumulate ? c0 + s : s;
            s_abs += accumulate ? fabs(c0) : 0;
            if (s_abs > max_abs) max_abs = s_abs;
        }
    size_t packed_n = vec_packed_size(N, Kp);
    nn_real *packed = alloc_reals(packed_n);
    vec_pack(packed, B, ldb, N, Kp, transposed, (nn_real)scale);
    vec_gemm_packed(C, ldc, A, lda, packed, Kp, M, N, K, accumulate);
    check_case("gemm_packed M=%d N=%d K=%d packed_k=%d transposed=%d pad=%d accumulate=%d scale=%g", M, N, K, Kp,
               transposed, pad, accumulate, scale);
    CHECK(packed_n >= (size_t)N * Kp, "vec_packed_size(%d, %d) = %zu < N K", N, Kp, packed_n);
    /* one more rounding per term: scale B(p, j) */
    CHECK_ARRAY(C, want, c_n, ldc, sum_tol(K + 1, max_abs), 0, "packed product vs double");
    alloc_release(mark);
}

static void test_gemm_packed(Rng *r) {
    static const int shapes[][4] = {/* M, N, K, packed_k */
                                    {1, 1, 1, 1},   {3, 5, 4, 4},    {6, 16, 7, 9},  {5, 17, 3, 3},
                                    {9, 33, 12, 20}, {2, 8, 1, 5},   {67, 45, 33, 33}, {4, 20, 260, 300},
                                    {7, 3, 0, 2}};
    int n_shapes = (int)(sizeof shapes / sizeof shapes[0]);
    for (int s = 0; s < n_shapes; s++)
        for (int tr = 0; tr < 2; tr++)
            for (int pad = 0; pad <= 2; pad += 2)
                for (int acc = 0; acc < 2; acc++)
                    test_gemm_packed_case(r, shapes[s][0], shapes[s][1], shapes[s][2], shapes[s][3], tr, pad, acc,
                                          1);
    /* the scale rides on the packed panel (attention packs K^T / sqrt(d_k)) */
    for (int s = 0; s < n_shapes; s++) {
        test_gemm_packed_case(r, shapes[s][0], shapes[s][1], shapes[s][2], shapes[s][3], 1, 0, 0, 0.125);
        test_gemm_packed_case(r, shapes[s][0], shapes[s][1], shapes[s][2], shapes[s][3], 0, 2, 1, 1 / sqrt(3.0));
    }
}

/* vec_packed_transpose: B (K, N) packed, turned into B^T (N, K) packed, is
 * bit for bit vec_pack of B transposed (padding zeros included), for
 * widths that fill panels exactly, leave a part panel, or are one column. */
static void test_packed_transpose(Rng *r) {
    static const int shapes[][2] = {{1, 1}, {3, 5}, {16, 16}, {17, 9}, {40, 33}, {7, 64}, {100, 1}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        size_t mark = alloc_mark();
        int K = shapes[s][0], N = shapes[s][1];
        nn_real *B = alloc_matrix(r, K, N, N);
        nn_real *packed = alloc_reals(vec_packed_size(N, K));
        size_t size = vec_packed_size(K, N);
        nn_real *got = alloc_reals(size), *want = alloc_reals(size);
        for (size_t i = 0; i < size; i++) got[i] = (nn_real)-777.25;
        vec_pack(packed, B, N, N, K, 0, 1);
        int panels = vec_pack_panels(K), half = panels / 2; /* in two strips, as a backward pass takes them */
        vec_packed_transpose(got, packed, N, K, 0, half);
        vec_packed_transpose(got + (size_t)half * N * vec_panel_width(), packed, N, K, half, panels);
        vec_pack(want, B, N, K, N, 1, 1);
        check_case("packed_transpose K=%d N=%d", K, N);
        CHECK(memcmp(got, want, sizeof(nn_real) * size) == 0, "B^T's panels differ from vec_pack of B transposed");
        alloc_release(mark);
    }
}

int main(void) {
    Rng r = {20240601};
    test_dot_sum(&r);
    test_axpy_scale(&r);
    test_max(&r);
    test_max_abs(&r);
    test_exp_sum(&r);
    test_tanh(&r);
    test_nan_min_max();
    test_gemm(&r);
    test_gemm_packed(&r);
    test_packed_transpose(&r);
    return check_summary();
}
