/*
 * omp_common.h - what the plain OpenMP benchmarks (laplace_omp, epcc, bt) share:
 * option parsing, small statistics helpers and the result lines.
 *
 * These programs contain no MPI and no DSM call: each is built twice from
 * the same source with the same flags, NAME.gomp with gcc -fopenmp (libgomp,
 * the baseline) and NAME.dsm with tools/dsmcc (omp-shim on libdsm, run under
 * tools/dsmrun).  Under the shim only rank 0 runs main(), so everything here
 * runs on the initial thread of rank 0 and nothing needs to know about ranks.
 *
 * The Makefile passes -DBENCH_OMP_RUNTIME='"libgomp"' or '"dsm"', so that a
 * result line says which runtime produced it ("omp" when built by hand
 * without it).  Output contract, the same as common.h's: human-readable
 * lines first, then, last on stdout, one JSON object per result:
 *
 *   {"bench":"laplace_omp","metric":"omp_dsm_s","value":0.41,"unit":"s",
 *    "runtime":"dsm","ranks":2,"threads":2,"comm":"direct","poll":"adaptive",
 *    "page_size":16384,"size":4096,...}
 *
 * "threads" is the team size the runtime gave a parallel region; "ranks"
 * is BENCH_RANKS from the environment if set (benchmarks/bench.sh sets it
 * for both builds, so that a libgomp baseline and the DSM run it belongs to
 * share a row of its tables), else PMI_SIZE (set by MPICH's launcher under
 * dsmrun), else 1.  "comm", "poll" and "page_size" are DSM_COMM, DSM_POLL
 * and DSM_PAGE_SIZE as the environment gives them, or libdsm's defaults:
 * labels of the run, also on the libgomp lines, which the DSM does not
 * affect.  Extra per-result fields (obench_extra) come after those, then
 * the parameters (obench_param).
 */
#ifndef BENCH_OMP_COMMON_H
#define BENCH_OMP_COMMON_H

#include <stddef.h>

#ifndef BENCH_OMP_RUNTIME
#define BENCH_OMP_RUNTIME "omp"
#endif

/* Command-line options: "--name VALUE" or "--name=VALUE". */
enum obench_opt_type {
    OBENCH_LONG,     /* value points to a long; must be >= 0 */
    OBENCH_DOUBLE,   /* value points to a double; must be > 0 */
    OBENCH_STRING    /* value points to a const char *; kept as given */
};
struct obench_opt {
    const char *name;          /* without the leading "--" */
    enum obench_opt_type type;
    void *value;               /* holds the default on entry */
    const char *help;
};

/* Parse the options (a table ended by a zero entry).  On --help print the
 * usage and exit 0; on a bad option say what is wrong and exit 2. */
void obench_start(int argc, char **argv, const char *name, const char *what,
                  const struct obench_opt *opts);

/* The team size of a parallel region without a num_threads clause (one
 * parallel region, so call it before timing anything); stored for the
 * result lines. */
int obench_team_size(void);

/* Add "key":value to every result line. */
void obench_param(const char *key, long value);

/* Record one result (printed by obench_emit).  Whole numbers print as
 * integers, others with 6 significant digits (_exact: 17); NaN and
 * infinities print as null. */
void obench_result(const char *metric, double value, const char *unit);
void obench_result_exact(const char *metric, double value, const char *unit);

/* Add "key":value to the result recorded last. */
void obench_extra(const char *key, double value);

/* Print every recorded result as one JSON line on stdout. */
void obench_emit(void);

/* Print "NAME: message" on stderr and exit 1. */
void obench_fatal(const char *fmt, ...)
    __attribute__((format(printf, 1, 2), noreturn));

/* Mean of v[0..n); median of v[0..n) (sorts v); minimum; standard
 * deviation (n - 1 in the denominator; 0 for n < 2).  NaN for n == 0. */
double obench_mean(const double *v, size_t n);
double obench_median(double *v, size_t n);
double obench_min(const double *v, size_t n);
double obench_sd(const double *v, size_t n);

#endif /* BENCH_OMP_COMMON_H */
