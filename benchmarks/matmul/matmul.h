/*
 * matmul.h - what the OpenMP and MPI forms of the matrix multiply share:
 * the entries of A and B, and the check of C.
 *
 * Entries are small integers (|a|, |b| <= 6), so every product and sum is
 * exact in double precision for N up to millions: C and its checksum are
 * the same bit for bit in every form, whatever the order of the sums.  gen
 * (0 or 1) changes the matrices between repetitions.
 */
#ifndef MATMUL_H
#define MATMUL_H

#include <stdio.h>
#include <stdlib.h>

static inline double mm_a(long i, long k, int gen) { return (double)((i * 3 + k + gen) % 11 - 5); }
static inline double mm_b(long k, long j, int gen) { return (double)((k * 5 + j * 2 + gen) % 13 - 6); }

/* Check C against direct dot products of the formulas on a sample of 64
 * entries (corners included); return a weighted sum of all entries (exact).  A mismatch
 * is fatal. */
static inline double mm_check(const double *a, const double *b, const double *c, long n,
                              int gen, const char *what)
{
    (void)a; (void)b;
    for (int s = 0; s < 64; s++) {
        long i = s == 0 ? 0 : s == 1 ? n - 1 : (s * 7919L) % n;
        long j = s == 0 ? 0 : s == 1 ? n - 1 : (s * 104729L) % n;
        double want = 0;
        for (long k = 0; k < n; k++)
            want += mm_a(i, k, gen) * mm_b(k, j, gen);
        if (c[i * n + j] != want) {
            fprintf(stderr, "matmul %s: C[%ld][%ld] = %.17g, expected %.17g\n", what, i, j,
                    c[i * n + j], want);
            exit(1);
        }
    }
    double sum = 0;
    for (long i = 0; i < n * n; i++)
        sum += c[i] * (double)(i % 7 + 1);     /* weighted: a swap shows */
    return sum;
}

#endif /* MATMUL_H */
