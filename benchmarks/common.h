/*
 * common.h - what every libdsm benchmark shares: start-up (MPI with
 * MPI_THREAD_MULTIPLE, a private communicator, option parsing), a monotonic
 * clock, small statistics helpers, sums of dsm_stats over ranks, and the
 * result lines.
 *
 * Output contract (benchmarks/bench.sh and docs/RESULTS.md rely on it): only
 * rank 0 prints.  Human-readable lines come first; the LAST lines on stdout
 * are one JSON object per result, written by bench_emit():
 *
 *   {"bench":"rmr","metric":"rmr_us","value":98.1,"unit":"us","ranks":2,
 *    "comm":"direct","poll":"adaptive","page_size":16384,"pages":256,...}
 *
 * "comm" and "poll" are DSM_COMM and DSM_POLL as the environment gives them
 * (or the library defaults "direct" and "adaptive"); "page_size" is
 * dsm_page_size(); any parameters the benchmark registered with
 * bench_param() follow.  bench_emit() is meant to be called after
 * dsm_finalize(), so that nothing the library prints at exit (DSM_STATS=1)
 * can come after the JSON lines.
 *
 * Every benchmark calls MPI_Init_thread() itself (through bench_start())
 * before dsm_init(), so that it may use MPI next to the DSM; its own
 * messages go over bench.comm, a duplicate of MPI_COMM_WORLD, so that they
 * can never be matched by a receive the library posted.
 */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include <mpi.h>

#include "dsm.h"

/* The state of the running benchmark (one per process). */
struct bench_state {
    const char *name;      /* "rmr", "barrier", "laplace" */
    int rank;              /* rank in MPI_COMM_WORLD */
    int size;              /* number of ranks */
    MPI_Comm comm;         /* the benchmark's own duplicate of MPI_COMM_WORLD */
    const char *comm_var;  /* DSM_COMM or "direct" */
    const char *poll_var;  /* DSM_POLL or "adaptive" */
    size_t page_size;      /* dsm_page_size(), set by bench_settings() */
};
extern struct bench_state bench;

/* Command-line options: "--name VALUE" or "--name=VALUE". */
#define BENCH_LIST_MAX 32
struct bench_list {
    int n;
    long v[BENCH_LIST_MAX];
};
enum bench_opt_type {
    BENCH_OPT_LONG,     /* value points to a long; must be >= 1 */
    BENCH_OPT_LIST,     /* value points to a struct bench_list; "1,16,64" */
    BENCH_OPT_STRING    /* value points to a const char *; kept as given */
};
struct bench_opt {
    const char *name;          /* without the leading "--" */
    enum bench_opt_type type;
    void *value;               /* holds the default on entry */
    const char *help;
};

/* Initialise MPI with MPI_THREAD_MULTIPLE (fatal if the library gives less),
 * duplicate the communicator and parse the options (a table ended by a zero
 * entry).  On --help, rank 0 prints the usage and every rank exits 0; on a
 * bad option, rank 0 says what is wrong and every rank exits 2. */
void bench_start(int *argc, char ***argv, const char *name,
                 const char *what, const struct bench_opt *opts);

/* Record the DSM settings for the result lines; call after dsm_init().
 * With BENCH_BUSY=N in the environment it also starts N threads per rank
 * that compute until bench_end() (busy compute threads; result key "busy"). */
void bench_settings(void);

/* Add "key":value to every result line (parameters of the run). */
void bench_param(const char *key, long value);
/* The same with a string value ("key":"value"); value must outlive the run. */
void bench_param_str(const char *key, const char *value);

/* Record one result.  Values that are whole numbers print as integers,
 * others with 6 significant digits (bench_result_exact: 17, enough to
 * round-trip a double); NaN and infinities print as null. */
void bench_result(const char *metric, double value, const char *unit);
void bench_result_exact(const char *metric, double value, const char *unit);

/* Rank 0 prints every recorded result as one JSON line on stdout.  Call it
 * last, after dsm_finalize(); then MPI_Finalize(). */
void bench_emit(void);

/* Finish: free the communicator and finalize MPI; returns 0 for main(). */
int bench_end(void);

/* Print "bench NAME (rank R): message" on stderr and abort the whole job. */
void bench_fatal(const char *fmt, ...)
    __attribute__((format(printf, 1, 2), noreturn));

/* Rank 0's human-readable lines (printf that only rank 0 does, flushed). */
void bench_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Seconds from a monotonic clock (CLOCK_MONOTONIC). */
double bench_now(void);

/* Mean of v[0..n); median of v[0..n) (sorts v; mean of the two middle
 * values when n is even).  Both return NaN for n == 0. */
double bench_mean(const double *v, size_t n);
double bench_median(double *v, size_t n);

/* A barrier over bench.comm that does not spin: ranks that have nothing to
 * do while rank 0 (or ranks 0 and 1) measure something wait here, sleeping
 * between tests, so that they do not take a core from the measurement. */
void bench_idle_barrier(void);

/* Sums over ranks, valid on rank 0 only. */
double   bench_sum_double(double x);
uint64_t bench_sum_u64(uint64_t x);
double   bench_max_double(double x);

/* Every counter of this node's dsm_stats summed over ranks into *sum (valid
 * on rank 0).  Collective over bench.comm. */
void bench_stats_sum(const struct dsm_stats *mine, struct dsm_stats *sum);

#endif /* BENCH_COMMON_H */
