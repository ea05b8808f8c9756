/*
 * json.h - the pieces of the benchmarks' result lines and statistics that
 * need neither MPI nor libdsm, shared by common.c (libdsm benchmarks) and
 * omp_common.c (plain OpenMP benchmarks).  Rank 0 / the main thread only.
 */
#ifndef BENCH_JSON_H
#define BENCH_JSON_H

#include <stddef.h>

/* Print s as a JSON string to stdout (escaping quotes, backslashes and
 * control characters: some values come from the environment). */
void json_string(const char *s);
/* Print v as a JSON number: null when not finite, integers without a
 * fraction, others with 17 significant digits (exact) or 6. */
void json_number(double v, int exact);
/* Mean and median (sorts v) of n values; NaN when n is 0. */
double stats_mean(const double *v, size_t n);
double stats_median(double *v, size_t n);

#endif /* BENCH_JSON_H */
