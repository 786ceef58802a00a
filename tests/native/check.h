/* A tiny header-only harness for the native C tests.
 *
 *   CHECK(cond, fmt, ...)                   one check; prints fmt on failure
 *   CHECK_CLOSE(got, want, atol, rtol, what) |got - want| <= atol + rtol |want|
 *   CHECK_ARRAY(got, want, n, cols, atol, rtol, what)    nn_real vs double
 *   CHECK_ARRAY_R(got, want, n, cols, atol, rtol, what)  nn_real vs nn_real
 *   check_case("fmt", ...)                  names the case printed with failures
 *   check_summary()                         prints "N passed, N failed", exit code
 *
 * Only failures are printed (with the largest difference and where), then the
 * summary line. An infinite `want` must be matched exactly; NaN never passes.
 * Also here: a seeded RNG (the engine's splitmix64, base/rng.h) and exact-size allocations, poisoned
 * with NaN, so ASan sees any overrun and unwritten outputs show up as NaN. */
#ifndef ATTNLAB_TESTS_CHECK_H
#define ATTNLAB_TESTS_CHECK_H

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab/nn.h"
#include "base/rng.h"

/* Unit roundoff of nn_real and the default forward tolerance against a
 * float64 reference (atol + rtol |ref|). */
#ifdef NN_DOUBLE
#define TOL_EPS 2.220446049250313e-16
#define TOL_FWD_ATOL 1e-10
#define TOL_FWD_RTOL 1e-9
#else
#define TOL_EPS 1.1920928955078125e-07
#define TOL_FWD_ATOL 1e-5
#define TOL_FWD_RTOL 1e-4
#endif

#ifdef NN_DOUBLE
#define CHECK_VARIANT "double"
#elif defined(NN_SCALAR)
#define CHECK_VARIANT "scalar"
#else
#define CHECK_VARIANT "simd"
#endif

static int check_n_passed;
static int check_n_failed;
static char check_case_name[256];

#if defined(__GNUC__) || defined(__clang__)
#define CHECK_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define CHECK_PRINTF(a, b)
#endif

/* Names the case under test; printed with every failure until changed. */
static inline void check_case(const char *fmt, ...) CHECK_PRINTF(1, 2);
static inline void check_case(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(check_case_name, sizeof check_case_name, fmt, ap);
    va_end(ap);
}

static inline void check_fail_head(const char *file, int line) {
    printf("FAIL %s:%d [%s] %s: ", file, line, CHECK_VARIANT, check_case_name);
}

static inline int check_true_at(int ok, const char *file, int line, const char *fmt, ...)
    CHECK_PRINTF(4, 5);
static inline int check_true_at(int ok, const char *file, int line, const char *fmt, ...) {
    if (ok) {
        check_n_passed++;
        return 1;
    }
    check_n_failed++;
    check_fail_head(file, line);
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    return 0;
}
#define CHECK(cond, ...) check_true_at((cond) != 0, __FILE__, __LINE__, __VA_ARGS__)
/* CHECK that a call returned NN_OK; a failure says what failed and nn_last_error(). */
#define CHECK_OK(status, what) CHECK((status) == NN_OK, "%s: %s", what, nn_last_error())

/* Whether got is within atol + rtol |want| of want (exact for infinite want). */
static inline int check_near(double got, double want, double atol, double rtol) {
    if (isnan(got) || isnan(want)) return 0;
    if (isinf(want) || isinf(got)) return got == want;
    return fabs(got - want) <= atol + rtol * fabs(want);
}

static inline int check_close_at(const char *file, int line, double got, double want, double atol,
                                 double rtol, const char *what) {
    if (check_near(got, want, atol, rtol)) {
        check_n_passed++;
        return 1;
    }
    check_n_failed++;
    check_fail_head(file, line);
    printf("%s: got %.9g, want %.9g (|diff| %.3g > atol %.3g + rtol %.3g)\n", what, got, want,
           fabs(got - want), atol, rtol);
    return 0;
}
#define CHECK_CLOSE(got, want, atol, rtol, what)                                                   \
    check_close_at(__FILE__, __LINE__, (double)(got), (double)(want), (atol), (rtol), (what))

/* One check over n elements; want is read from want_d (double) or want_r. */
static inline int check_array_at(const char *file, int line, const nn_real *got, const double *want_d,
                                 const nn_real *want_r, size_t n, int cols, double atol, double rtol,
                                 const char *what) {
    size_t bad = 0, first_bad = 0, at_max = 0;
    double max_diff = 0;
    for (size_t i = 0; i < n; i++) {
        double g = (double)got[i], w = want_d ? want_d[i] : (double)want_r[i];
        int ok = check_near(g, w, atol, rtol);
        double d = (isinf(w) && g == w) ? 0 : fabs(g - w);
        if (isnan(d)) d = INFINITY;
        if (!ok && bad++ == 0) first_bad = i;
        if (i == 0 || d > max_diff) {
            max_diff = d;
            at_max = i;
        }
    }
    if (bad == 0) {
        check_n_passed++;
        return 1;
    }
    check_n_failed++;
    check_fail_head(file, line);
    size_t idx[2] = {first_bad, at_max};
    printf("%s: %zu of %zu elements off (atol %.3g, rtol %.3g); max |diff| %.3g", what, bad, n, atol,
           rtol, max_diff);
    for (int t = 0; t < 2; t++) {
        size_t i = idx[t];
        double w = want_d ? want_d[i] : (double)want_r[i];
        printf(t == 0 ? "; first off at " : "; max at ");
        if (cols > 0) printf("[%zu,%zu]", i / (size_t)cols, i % (size_t)cols);
        else printf("[%zu]", i);
        printf(" got %.9g want %.9g", (double)got[i], w);
    }
    printf("\n");
    return 0;
}
#define CHECK_ARRAY(got, want, n, cols, atol, rtol, what)                                          \
    check_array_at(__FILE__, __LINE__, (got), (want), NULL, (n), (cols), (atol), (rtol), (what))
#define CHECK_ARRAY_R(got, want, n, cols, atol, rtol, what)                                        \
    check_array_at(__FILE__, __LINE__, (got), NULL, (want), (n), (cols), (atol), (rtol), (what))

/* ---- allocations: one malloc per array, exact size, freed by mark -------- */

static void **check_allocs;
static size_t check_n_allocs, check_cap_allocs;

static inline void *check_track(void *p) {
    if (!p) {
        printf("out of memory\n");
        exit(2);
    }
    if (check_n_allocs == check_cap_allocs) {
        check_cap_allocs = check_cap_allocs ? 2 * check_cap_allocs : 256;
        void **grown = realloc(check_allocs, check_cap_allocs * sizeof *grown);
        if (!grown) {
            printf("out of memory\n");
            exit(2);
        }
        check_allocs = grown;
    }
    check_allocs[check_n_allocs++] = p;
    return p;
}

/* n reals, each NaN: outputs a function fails to write stay visible. */
static inline nn_real *alloc_reals(size_t n) {
    nn_real *p = check_track(malloc((n ? n : 1) * sizeof(nn_real)));
    for (size_t i = 0; i < n; i++) p[i] = (nn_real)NAN;
    return p;
}
static inline nn_real *alloc_zeros(size_t n) {
    nn_real *p = check_track(malloc((n ? n : 1) * sizeof(nn_real)));
    for (size_t i = 0; i < n; i++) p[i] = 0;
    return p;
}
static inline double *alloc_doubles(size_t n) {
    double *p = check_track(malloc((n ? n : 1) * sizeof(double)));
    for (size_t i = 0; i < n; i++) p[i] = 0;
    return p;
}
static inline int32_t *alloc_ints(size_t n) {
    int32_t *p = check_track(malloc((n ? n : 1) * sizeof(int32_t)));
    for (size_t i = 0; i < n; i++) p[i] = 0;
    return p;
}

/* alloc_release(alloc_mark()) frees everything allocated after the mark. */
static inline size_t alloc_mark(void) { return check_n_allocs; }
static inline void alloc_release(size_t mark) {
    while (check_n_allocs > mark) free(check_allocs[--check_n_allocs]);
}

/* Prints the one summary line, frees every tracked allocation and returns
 * the process exit code (1 on any failure). */
static inline int check_summary(void) {
    alloc_release(0);
    free(check_allocs);
    check_allocs = NULL;
    check_cap_allocs = 0;
    printf("%d passed, %d failed\n", check_n_passed, check_n_failed);
    fflush(stdout);
    return check_n_failed ? 1 : 0;
}

/* ---- deterministic RNG (splitmix64) ------------------------------------- */

typedef struct {
    uint64_t s;
} Rng;

static inline uint64_t rng_next(Rng *r) { return nn_rng_next(&r->s); }
/* uniform in [lo, hi) */
static inline double rng_uniform(Rng *r, double lo, double hi) {
    return lo + (hi - lo) * ((double)(rng_next(r) >> 11) * 0x1.0p-53);
}
/* uniform integer in [lo, hi] */
static inline int rng_int(Rng *r, int lo, int hi) {
    return lo + (int)(rng_next(r) % (uint64_t)(hi - lo + 1));
}
static inline void rng_fill(Rng *r, nn_real *x, size_t n, double lo, double hi) {
    for (size_t i = 0; i < n; i++) x[i] = (nn_real)rng_uniform(r, lo, hi);
}
static inline nn_real *alloc_random(Rng *r, size_t n, double lo, double hi) {
    nn_real *p = alloc_reals(n);
    rng_fill(r, p, n, lo, hi);
    return p;
}

#endif
