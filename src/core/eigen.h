/* Eigenvalues of a real nonsymmetric matrix, in double: Householder
 * reduction to upper Hessenberg form, then the Francis double-shift QR
 * iteration (the EISPACK hqr scheme) deflating 1x1 and 2x2 blocks, a 2x2
 * block's pair read off as real or complex conjugates. The circuits'
 * copying scores (src/models/circuits.c) read a head's OV eigenvalues. */
#ifndef ATTNLAB_CORE_EIGEN_H
#define ATTNLAB_CORE_EIGEN_H

/* QR sweeps one eigenvalue may take before the iteration gives up. */
#define EIG_MAX_ITERATIONS 60

/* The n eigenvalues of a (n, n) row-major, which is overwritten: re[i] +
 * i im[i], a complex pair as consecutive entries (+im first). Returns 1, or
 * 0 when an eigenvalue did not converge within EIG_MAX_ITERATIONS sweeps
 * (re, im then hold what converged, the rest 0) or a is not finite. */
int eig_real(double *a, int n, double *re, double *im);

#endif
