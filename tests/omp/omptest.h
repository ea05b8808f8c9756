/*
 * omptest.h - helpers shared by the OpenMP tests in tests/omp.
 *
 * Each test is a plain OpenMP C program (no DSM call) built twice: with
 * gcc -fopenmp against the stock libgomp (PROG.gomp) and with dsmcc against
 * omp-shim (PROG.dsm).  run-omp-test.sh runs both with the same team size
 * and compares their standard output byte for byte, so every test keeps
 * three rules:
 *   - stdout is written only by the initial thread outside parallel regions
 *     (ot_print), and only with values that depend on the team size alone,
 *     never on the schedule, the timing or which thread did what;
 *   - a check that fails, in any thread (under the shim: on any rank), counts
 *     an error and says on stderr what was expected and what was found;
 *   - main returns ot_finish(): 0 when every check passed, 1 otherwise.
 * A test that cannot run with the team it was given (more threads than its
 * per-thread arrays hold) exits 77 with the reason, which the harness shows
 * as a skip.
 *
 * The error counter is a global updated with "omp atomic", so that under the
 * shim an error seen on another rank reaches rank 0 by the join barrier.
 * The helpers are static inline so that each test is one file plus this
 * header.
 * Define OT_NAME (the program's name, used as the prefix of every line)
 * before including this file.
 */
#ifndef OMPTEST_H
#define OMPTEST_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include <omp.h>

#ifndef OT_NAME
#error "define OT_NAME before including omptest.h"
#endif

/* Per-thread arrays in the tests have this many slots. */
#define OT_MAX_THREADS 64

/* At most this many failed checks are printed; all are counted. */
#define OT_MAX_REPORTS 10

static int ot_errors;

/* Count a failed check and print it (the first OT_MAX_REPORTS of them).
 * Any thread may call it, inside or outside a parallel region. */
static inline void ot_error(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));
static inline void ot_error(const char *fmt, ...)
{
    char line[512];
    va_list ap;
    int k;

#pragma omp atomic capture
    k = ot_errors++;
    if (k >= OT_MAX_REPORTS)
        return;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    /* One fprintf per line, so that lines of different threads do not mix. */
    fprintf(stderr, "%s: FAIL: %s (thread %d of %d)\n", OT_NAME, line,
            omp_get_thread_num(), omp_get_num_threads());
    fflush(stderr);
}

/* Check a condition; the message says what was expected and what was found. */
#define OT_CHECK(cond, ...)                                                   \
    do {                                                                      \
        if (!(cond))                                                          \
            ot_error(__VA_ARGS__);                                            \
    } while (0)

/* One line of the test's deterministic output: "NAME: text".  Only the
 * initial thread outside parallel regions calls it. */
static inline void ot_print(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));
static inline void ot_print(const char *fmt, ...)
{
    va_list ap;

    fputs(OT_NAME ": ", stdout);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
}

/* The team size of a parallel region without num_threads: the value of
 * omp_get_max_threads() in the initial thread.  Exits 77 (skip) when the
 * per-thread arrays of the tests are too small for it. */
static inline int ot_team_size(void)
{
    int n = omp_get_max_threads();

    if (n < 1 || n > OT_MAX_THREADS) {
        printf("%s: SKIP: team size %d is outside 1..%d, the size of the "
               "test's per-thread arrays\n", OT_NAME, n, OT_MAX_THREADS);
        exit(77);
    }
    return n;
}

/* Check that hits[0..count) are all 1: every iteration of a loop ran
 * exactly once.  Returns the number of wrong entries. */
static inline long ot_check_once(const char *what, const int *hits,
                                 long count)
{
    long i, bad = 0;

    for (i = 0; i < count; i++) {
        if (hits[i] != 1) {
            if (bad < 3)
                ot_error("%s: iteration %ld ran %d times, expected once",
                         what, i, hits[i]);
            bad++;
        }
    }
    if (bad > 3)
        ot_error("%s: %ld iterations in all ran other than once", what, bad);
    return bad;
}

/*
 * Loop recorder, for the tests of worksharing loops: define OT_LOOP_MAX (the
 * largest iteration count) before including this file.  The loop body calls
 * ot_loop_hit(k) with the logical iteration number k (0 for the first
 * iteration of the sequential loop, 1 for the next, ...); the checks after
 * the loop compare what was recorded with what the schedule promises.
 */
#ifdef OT_LOOP_MAX
static int ot_hits[OT_LOOP_MAX];
static int ot_owner[OT_LOOP_MAX];
static long ot_last[OT_MAX_THREADS];

static inline void ot_loop_reset(void)
{
    long k;
    int t;

    for (k = 0; k < OT_LOOP_MAX; k++) {
        ot_hits[k] = 0;
        ot_owner[k] = -1;
    }
    for (t = 0; t < OT_MAX_THREADS; t++)
        ot_last[t] = -1;
}

/* Record that logical iteration k ran, in the calling thread. */
static inline void ot_loop_hit(long k)
{
    int me = omp_get_thread_num();

    if (k < 0 || k >= OT_LOOP_MAX) {
        ot_error("logical iteration %ld outside 0..%d", k, OT_LOOP_MAX - 1);
        return;
    }
    ot_hits[k]++;
    ot_owner[k] = me;
}

/* The same, and check that the thread's iterations come in increasing
 * order (the monotonic modifier, implied for static schedules). */
static inline void ot_loop_hit_monotonic(long k)
{
    int me = omp_get_thread_num();

    if (me >= 0 && me < OT_MAX_THREADS) {
        if (k <= ot_last[me])
            ot_error("logical iteration %ld ran after %ld in the same "
                     "thread: not monotonic", k, ot_last[me]);
        ot_last[me] = k;
    }
    ot_loop_hit(k);
}

/* Every one of the count iterations ran exactly once, in a thread of a team
 * of nthreads. */
static inline void ot_loop_check(const char *what, long count, int nthreads)
{
    long k;

    if (ot_check_once(what, ot_hits, count) != 0)
        return;
    for (k = 0; k < count; k++) {
        if (ot_owner[k] < 0 || ot_owner[k] >= nthreads) {
            ot_error("%s: iteration %ld ran in thread %d of a team of %d",
                     what, k, ot_owner[k], nthreads);
            return;
        }
    }
    for (; k < OT_LOOP_MAX; k++) {
        if (ot_hits[k] != 0) {
            ot_error("%s: iteration %ld ran, but the loop has %ld", what, k,
                     count);
            return;
        }
    }
}

/* schedule(static, chunk): chunk j of the iterations belongs to thread
 * j % nthreads (the round robin the specification prescribes). */
static inline void ot_loop_check_static_chunk(const char *what, long count,
                                              long chunk, int nthreads)
{
    long k;

    for (k = 0; k < count; k++) {
        int want = (int)((k / chunk) % nthreads);

        if (ot_owner[k] != want) {
            ot_error("%s: iteration %ld ran in thread %d, static chunk %ld "
                     "belongs to thread %d", what, k, ot_owner[k], chunk,
                     want);
            return;
        }
    }
}

/* schedule(static) without a chunk: each thread gets at most one chunk,
 * i.e. its iterations are contiguous.  The sizes are unspecified. */
static inline void ot_loop_check_blocks(const char *what, long count)
{
    int seen[OT_MAX_THREADS] = { 0 };
    long k;

    for (k = 0; k < count; k++) {
        int t = ot_owner[k];

        if (t < 0 || t >= OT_MAX_THREADS)
            return;                     /* reported by ot_loop_check */
        if (k == 0 || ot_owner[k - 1] != t) {
            if (seen[t]) {
                ot_error("%s: thread %d got a second chunk at iteration "
                         "%ld", what, t, k);
                return;
            }
            seen[t] = 1;
        }
    }
}

/* Chunks of a fixed size (dynamic with a chunk): the iterations
 * [j*chunk, (j+1)*chunk) all ran in one thread. */
static inline void ot_loop_check_chunks(const char *what, long count,
                                        long chunk)
{
    long k;

    for (k = 0; k < count; k++) {
        if (k % chunk != 0 && ot_owner[k] != ot_owner[k - 1]) {
            ot_error("%s: iteration %ld ran in thread %d, %ld in thread %d: "
                     "chunk %ld split", what, k - 1, ot_owner[k - 1], k,
                     ot_owner[k], k / chunk);
            return;
        }
    }
}

/* guided with a minimum chunk: every run of iterations in one thread is at
 * least min_chunk long, except the run that ends the loop. */
static inline void ot_loop_check_min_runs(const char *what, long count,
                                          long min_chunk)
{
    long k, start = 0;

    for (k = 1; k <= count; k++) {
        if (k == count || ot_owner[k] != ot_owner[k - 1]) {
            if (k < count && k - start < min_chunk) {
                ot_error("%s: iterations %ld..%ld ran in thread %d, a "
                         "chunk smaller than %ld", what, start, k - 1,
                         ot_owner[start], min_chunk);
                return;
            }
            start = k;
        }
    }
}
#endif /* OT_LOOP_MAX */

/*
 * Reduction check: run a loop of count iterations whose body is
 * UPDATE(acc, i) twice with reduction(op: acc), once as a parallel for with
 * schedule(static) and once as a for with schedule(dynamic, 500) inside a
 * parallel region, and once sequentially; both parallel results must equal
 * the sequential one (the tests choose values for which every order of
 * combination gives the same result, e.g. integers in floating point).
 * Prints "label: reduction(op)=value" with printf format fmt, the value
 * converted with the cast given (e.g. (double) for a float).
 */
#define OT_PRAGMA(text) _Pragma(#text)
#define OT_REDUCTION(label, type, fmt, cast, op, init, count, UPDATE)        \
    do {                                                                      \
        type ot_x = (init), ot_y = (init), ot_ref = (init);                   \
        long ot_i;                                                            \
                                                                              \
        OT_PRAGMA(omp parallel for schedule(static) reduction(op: ot_x))      \
        for (ot_i = 0; ot_i < (count); ot_i++)                                \
            UPDATE(ot_x, ot_i);                                               \
        OT_PRAGMA(omp parallel)                                               \
        {                                                                     \
            OT_PRAGMA(omp for schedule(dynamic, 500) reduction(op: ot_y))     \
            for (ot_i = 0; ot_i < (count); ot_i++)                            \
                UPDATE(ot_y, ot_i);                                           \
        }                                                                     \
        for (ot_i = 0; ot_i < (count); ot_i++)                                \
            UPDATE(ot_ref, ot_i);                                             \
        OT_CHECK(ot_x == ot_ref, label ": reduction(" #op ") in a parallel "  \
                 "for gave " fmt ", expected " fmt, cast ot_x, cast ot_ref);  \
        OT_CHECK(ot_y == ot_ref, label ": reduction(" #op ") in a for gave "  \
                 fmt ", expected " fmt, cast ot_y, cast ot_ref);              \
        ot_print(label ": reduction(" #op ")=" fmt, cast ot_x);               \
    } while (0)

/* The number of failed checks so far.  Read with an atomic read, as it is
 * written with atomics: the test's own bookkeeping must not depend on how
 * the runtime orders plain and atomic accesses to one variable. */
static inline int ot_error_count(void)
{
    int k;

#pragma omp atomic read
    k = ot_errors;
    return k;
}

/* Computation that takes time without sleeping (a task long enough that
 * idle threads take some): steps of a 64-bit linear congruential chain from
 * seed; the same value in every thread and under every runtime. */
static inline unsigned long ot_chain(long seed, long steps)
{
    unsigned long x = (unsigned long)seed + 1;

    for (long i = 0; i < steps; i++)
        x = x * 6364136223846793005UL + 1442695040888963407UL;
    return x;
}

/* End of the test: the exit status for main. */
static inline int ot_finish(void)
{
    int errors = ot_error_count();

    fflush(stdout);
    if (errors != 0) {
        fprintf(stderr, "%s: FAIL: %d check(s) failed\n", OT_NAME, errors);
        return 1;
    }
    return 0;
}

#endif /* OMPTEST_H */
