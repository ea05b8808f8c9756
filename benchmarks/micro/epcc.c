/*
 * epcc.c - overheads of the OpenMP synchronisation constructs, in the
 * manner of the EPCC OpenMP micro-benchmarks (syncbench, J. M. Bull et al.).
 * A plain OpenMP program, built twice: epcc.gomp (libgomp, the baseline)
 * and epcc.dsm (omp-shim on libdsm, under tools/dsmrun);
 * benchmarks/bench.sh epcc runs both and prints the ratios.
 *
 * Method (EPCC's): a delay loop, calibrated to take --delay-us (default
 * 0.1 us), stands for a little work.  Each test runs `inner` repetitions
 * of a construct wrapped around that delay; its reference runs the same
 * delay loop `inner` times sequentially.  The time per repetition of a
 * test minus the reference's time per repetition (its median over the
 * outer runs; EPCC takes the mean) is the overhead of one construct.  The tests, as in syncbench:
 *
 *   parallel      inner x { #pragma omp parallel { delay } }
 *   for           one parallel region: inner x { #pragma omp for over
 *                 team-size iterations, one delay each }
 *   parallel_for  inner x { #pragma omp parallel for over team-size
 *                 iterations, one delay each }
 *   barrier       one parallel region: inner x { delay; #pragma omp barrier }
 *   single        one parallel region: inner x { #pragma omp single delay }
 *   critical      one parallel region: each thread inner/team times
 *                 { #pragma omp critical delay }
 *   lock          the same with omp_set_lock/omp_unset_lock
 *   atomic        each thread inner/team times { #pragma omp atomic
 *                 x += b; b *= c } on a shared double x; reference: the
 *                 same loop sequentially, without atomic
 *   reduction     inner x { #pragma omp parallel reduction(+:x)
 *                 { delay; x += 1 } }; reference: delay and x += 1
 *   flush         one parallel region: inner x { delay; #pragma omp flush }
 *                 in every thread, which writes nothing shared (not in
 *                 syncbench: under the shim a flush is a trap and a
 *                 dsm_flush, see ompshim(7))
 *   flag          one parallel region: inner x a round trip of two flags
 *                 between thread 0 and the last thread, each set after a
 *                 delay and a flush, awaited with a flush in the loop and
 *                 once after it (OpenMP's flag idiom); the other threads
 *                 wait at the end; with one thread, a delay and two flushes
 *
 * The tests inside one parallel region include that region's fork and join
 * once per run, spread over `inner` repetitions (EPCC's choice too); where
 * a fork costs much more than the construct (the DSM), raise --target-us so
 * that `inner` grows and the share shrinks.
 *
 * Repetitions: unless --inner is given, `inner` starts at the team size
 * and doubles until one run of the test takes --target-us (default 1000
 * us, EPCC's); it stays a multiple of the team size, so the tests that
 * divide it among the threads do the same total work.  Then --outer + 1
 * runs (default 21); the first is dropped as warm-up.  The spread over the
 * --outer runs is printed: the JSON value is the median overhead (steadier
 * than EPCC's mean on a shared machine), with mean, min, max and standard
 * deviation as extra fields.  A run time is about --outer x max(target,
 * one repetition's cost) per construct; for long runs (estimate over a
 * second) progress goes to stderr.
 *
 * The atomic and reduction tests check their results (a lost update is a
 * runtime bug, not an overhead): the program says what is wrong and exits
 * 1 after printing the results.
 */
#include "../omp_common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

static long opt_outer = 20;
static double opt_target_us = 1000.0;
static double opt_delay_us = 0.1;
static long opt_inner = 0;
static const char *opt_tests = "all";

static const struct obench_opt opts[] = {
    { "outer", OBENCH_LONG, &opt_outer, "timed runs of each test (one more as warm-up)" },
    { "target-us", OBENCH_DOUBLE, &opt_target_us,
      "calibrate inner repetitions so that one run takes this long" },
    { "inner", OBENCH_LONG, &opt_inner,
      "inner repetitions, fixed for every test (0: calibrate; rounded up to\n"
      "               a multiple of the team size)" },
    { "delay-us", OBENCH_DOUBLE, &opt_delay_us, "work inside each construct, in us" },
    { "tests", OBENCH_STRING, &opt_tests,
      "comma-separated, from parallel,for,parallel_for,barrier,single,\n"
      "               critical,lock,atomic,reduction,flush,flag, or all" },
    { 0, 0, 0, 0 }
};

/* Read by every thread inside the tests; written by the initial thread
 * only between tests. */
static int nthreads;
static long innerreps;
static int delaylength;
static omp_lock_t lock;

static int wrong;          /* a test computed a wrong result */
static double start_time;  /* omp_get_wtime() at start, for progress lines */

/* EPCC's delay: a float sum the compiler cannot fold, and a use of it. */
__attribute__((noinline))
static void delay(int len)
{
    float a = 0.0f;
    int i;

    for (i = 0; i < len; i++)
        a += (float)i;
    if (a < 0.0f)
        printf("%f\n", a);
}

/* --- references -------------------------------------------------------- */

static void refer(void)
{
    long j;

    for (j = 0; j < innerreps; j++)
        delay(delaylength);
}

static void refer_atomic(void)
{
    double x = 0.0, b = 1.0, c = 1.0 + 1.0e-15;
    long j;

    for (j = 0; j < innerreps; j++) {
        x += b;
        b *= c;
    }
    if (x < 0.0)
        printf("%f\n", x);
}

static void refer_reduction(void)
{
    long j;
    int x = 0;

    for (j = 0; j < innerreps; j++) {
        delay(delaylength);
        x += 1;
    }
    if (x < 0)
        printf("%d\n", x);
}

/* --- tests ------------------------------------------------------------- */

static void test_parallel(void)
{
    long j;

    for (j = 0; j < innerreps; j++) {
#pragma omp parallel
        delay(delaylength);
    }
}

static void test_for(void)
{
#pragma omp parallel
    {
        long j;
        int i;

        for (j = 0; j < innerreps; j++) {
#pragma omp for
            for (i = 0; i < nthreads; i++)
                delay(delaylength);
        }
    }
}

static void test_parallel_for(void)
{
    long j;
    int i;

    for (j = 0; j < innerreps; j++) {
#pragma omp parallel for
        for (i = 0; i < nthreads; i++)
            delay(delaylength);
    }
}

static void test_barrier(void)
{
#pragma omp parallel
    {
        long j;

        for (j = 0; j < innerreps; j++) {
            delay(delaylength);
#pragma omp barrier
        }
    }
}

static void test_single(void)
{
#pragma omp parallel
    {
        long j;

        for (j = 0; j < innerreps; j++) {
#pragma omp single
            delay(delaylength);
        }
    }
}

static void test_critical(void)
{
#pragma omp parallel
    {
        long j;

        for (j = 0; j < innerreps / nthreads; j++) {
#pragma omp critical
            delay(delaylength);
        }
    }
}

static void test_lock(void)
{
#pragma omp parallel
    {
        long j;

        for (j = 0; j < innerreps / nthreads; j++) {
            omp_set_lock(&lock);
            delay(delaylength);
            omp_unset_lock(&lock);
        }
    }
}

static void test_atomic(void)
{
    double x = 0.0, b = 1.0, c = 1.0 + 1.0e-15, expect = 0.0;
    long j, per = innerreps / nthreads;

#pragma omp parallel firstprivate(b)
    {
        long k;

        for (k = 0; k < per; k++) {
#pragma omp atomic
            x += b;
            b *= c;
        }
    }
    /* Every thread adds the same per values; the order of the additions
     * moves the sum by far less than 0.5, a lost update by about 1. */
    for (j = 0, b = 1.0; j < per; j++) {
        expect += b;
        b *= c;
    }
    expect *= nthreads;
    if (fabs(x - expect) > 0.5) {
        fprintf(stderr, "epcc: atomic: the shared sum is %.17g, expected %.17g "
                "(%d threads x %ld updates): lost updates\n", x, expect, nthreads, per);
        wrong = 1;
    }
}

static void test_reduction(void)
{
    long j;
    int x = 0;

    for (j = 0; j < innerreps; j++) {
#pragma omp parallel reduction(+:x)
        {
            delay(delaylength);
            x += 1;
        }
    }
    if (x != innerreps * nthreads) {
        fprintf(stderr, "epcc: reduction: the sum is %d, expected %ld (%ld regions of %d "
                "threads)\n", x, innerreps * nthreads, innerreps, nthreads);
        wrong = 1;
    }
}

static void test_flush(void)
{
#pragma omp parallel
    {
        long j;

        for (j = 0; j < innerreps; j++) {
            delay(delaylength);
#pragma omp flush
        }
    }
}

/* The flags live apart from the test's other data, one per page. */
static int flag_ping[4096] __attribute__((aligned(65536)));
static int flag_pong[4096] __attribute__((aligned(65536)));

static void test_flag(void)
{
    int late = 0;

    flag_ping[0] = flag_pong[0] = 0;
#pragma omp parallel reduction(+:late)
    {
        int me = omp_get_thread_num(), last = omp_get_num_threads() - 1;
        long j;

        for (j = 1; j <= innerreps; j++) {
            if (me == 0) {
                delay(delaylength);
#pragma omp flush
                flag_ping[0] = (int)j;
#pragma omp flush
                if (last > 0) {
                    while (1) {
#pragma omp flush
                        if (flag_pong[0] == (int)j)
                            break;
                    }
#pragma omp flush
                }
            } else if (me == last) {
                while (1) {
#pragma omp flush
                    if (flag_ping[0] == (int)j)
                        break;
                }
#pragma omp flush
                late += flag_ping[0] != (int)j;
                flag_pong[0] = (int)j;
#pragma omp flush
            }
        }
    }
    if (late) {
        fprintf(stderr, "epcc: flag: %d handoffs saw another value after the flag\n", late);
        wrong = 1;
    }
}

/* --- measuring --------------------------------------------------------- */

enum ref_kind { REF_DELAY, REF_ATOMIC, REF_REDUCTION, NREFS };

static const struct test {
    const char *name;
    void (*fn)(void);
    enum ref_kind ref;
} tests[] = {
    { "parallel", test_parallel, REF_DELAY },
    { "for", test_for, REF_DELAY },
    { "parallel_for", test_parallel_for, REF_DELAY },
    { "barrier", test_barrier, REF_DELAY },
    { "single", test_single, REF_DELAY },
    { "critical", test_critical, REF_DELAY },
    { "lock", test_lock, REF_DELAY },
    { "atomic", test_atomic, REF_ATOMIC },
    { "reduction", test_reduction, REF_REDUCTION },
    { "flush", test_flush, REF_DELAY },
    { "flag", test_flag, REF_DELAY },
};
#define NTESTS (sizeof tests / sizeof tests[0])

static const struct test refs[NREFS] = {
    { "reference", refer, REF_DELAY },
    { "reference_atomic", refer_atomic, REF_ATOMIC },
    { "reference_reduction", refer_reduction, REF_REDUCTION },
};

static double seconds(void (*fn)(void))
{
    double t0 = omp_get_wtime();

    fn();
    return omp_get_wtime() - t0;
}

/* EPCC's calibration: the delay length whose loop takes opt_delay_us, the
 * mean over 1000 calls, growing the length by 10% at a time. */
static int calibrate_delay(void)
{
    double t0, per = 0.0;
    int len = 0, i;

    while (per < opt_delay_us * 1e-6) {
        len = (int)(len * 1.1) + 1;
        t0 = omp_get_wtime();
        for (i = 0; i < 1000; i++)
            delay(len);
        per = (omp_get_wtime() - t0) / 1000.0;
        if (len > 1000000000)
            obench_fatal("the delay loop takes no time: was it optimised away?");
    }
    return len;
}

/* Set innerreps: fixed, or doubled from the team size (after one run that
 * is not counted) until one run takes opt_target_us.  Returns the last
 * run's time in seconds. */
static double calibrate_inner(const struct test *t)
{
    double s;

    if (opt_inner > 0) {
        innerreps = (opt_inner + nthreads - 1) / nthreads * nthreads;
        return seconds(t->fn);
    }
    /* One run first: a one-time cost (a page's first fetch, the DSM's set-up
     * at its first flush, about 1 ms) must not set the repetition count. */
    innerreps = nthreads;
    (void)seconds(t->fn);
    for (innerreps = nthreads;; innerreps *= 2) {
        s = seconds(t->fn);
        if (s * 1e6 >= opt_target_us)
            return s;
        if (s >= 1.0)
            fprintf(stderr, "epcc: %s: calibrating, %ld repetitions took %.1f s\n",
                    t->name, innerreps, s);
        if (innerreps > (1L << 40))
            obench_fatal("%s: %ld repetitions take %g s: was the loop optimised away?",
                         t->name, innerreps, s);
    }
}

/* The outer runs of one test; times[k] = us per repetition of run k. */
static void run_test(const struct test *t, double *times)
{
    double s, est, last = omp_get_wtime(), now;
    long k;

    s = calibrate_inner(t);
    est = s * (double)(opt_outer + 1);
    if (est >= 1.0)
        fprintf(stderr, "epcc: %s: %ld repetitions per run, %ld runs, about %.0f s "
                "(%.0f s so far)\n", t->name, innerreps, opt_outer + 1, est,
                omp_get_wtime() - start_time);
    for (k = 0; k <= opt_outer; k++) {
        s = seconds(t->fn);
        if (k > 0)
            times[k - 1] = s * 1e6 / (double)innerreps;
        now = omp_get_wtime();
        if (est >= 1.0 && now - last >= 5.0) {
            fprintf(stderr, "epcc: %s: %ld of %ld runs done\n", t->name, k + 1,
                    opt_outer + 1);
            last = now;
        }
    }
}

static int selected(const char *name)
{
    const char *p = opt_tests;
    size_t len = strlen(name);

    if (strcmp(opt_tests, "all") == 0)
        return 1;
    while ((p = strstr(p, name)) != NULL) {
        if ((p == opt_tests || p[-1] == ',') && (p[len] == ',' || p[len] == '\0'))
            return 1;
        p += len;
    }
    return 0;
}

/* Every name in --tests must be known. */
static void check_tests(void)
{
    char buf[256], *tok, *save;
    size_t i;

    if (strcmp(opt_tests, "all") == 0)
        return;
    if (strlen(opt_tests) >= sizeof buf)
        obench_fatal("--tests: too long");
    strcpy(buf, opt_tests);
    for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        for (i = 0; i < NTESTS; i++)
            if (strcmp(tok, tests[i].name) == 0)
                break;
        if (i == NTESTS)
            obench_fatal("--tests: unknown test '%s' (see --help)", tok);
    }
}

int main(int argc, char **argv)
{
    double ref_us[NREFS], ref_sd[NREFS], *times, *ov, med, mean, min, sd;
    int need[NREFS] = { 0 };
    char metric[64];
    size_t i;
    long k;

    obench_start(argc, argv, "epcc",
                 "Overheads of OpenMP constructs (EPCC syncbench method): per construct,\n"
                 "(time with the construct - sequential reference) / repetitions.", opts);
    if (opt_outer < 1)
        obench_fatal("--outer must be at least 1");
    check_tests();
    start_time = omp_get_wtime();
    nthreads = obench_team_size();
    omp_init_lock(&lock);
    delaylength = calibrate_delay();
    times = malloc((size_t)opt_outer * sizeof *times);
    ov = malloc((size_t)opt_outer * sizeof *ov);
    if (!times || !ov)
        obench_fatal("out of memory");

    printf("epcc: %d threads, runtime %s, delay %g us (length %d), target %g us per run, "
           "%ld runs per test + 1 warm-up\n", nthreads, BENCH_OMP_RUNTIME, opt_delay_us,
           delaylength, opt_target_us, opt_outer);
    obench_param("outer", opt_outer);
    obench_param("delay_length", delaylength);

    for (i = 0; i < NTESTS; i++)
        if (selected(tests[i].name))
            need[tests[i].ref] = 1;
    for (i = 0; i < NREFS; i++) {
        if (!need[i])
            continue;
        run_test(&refs[i], times);
        ref_sd[i] = obench_sd(times, (size_t)opt_outer);
        ref_us[i] = obench_median(times, (size_t)opt_outer);
        printf("  %-20s %10.4f us per repetition (median; sd %.4f, %ld repetitions)\n",
               refs[i].name, ref_us[i], ref_sd[i], innerreps);
    }
    fflush(stdout);

    printf("  %-13s %10s %12s %12s %12s %12s   (overhead, us)\n", "construct", "inner",
           "median", "mean", "min", "sd");
    for (i = 0; i < NTESTS; i++) {
        const struct test *t = &tests[i];

        if (!selected(t->name))
            continue;
        run_test(t, times);
        for (k = 0; k < opt_outer; k++)
            ov[k] = times[k] - ref_us[t->ref];
        mean = obench_mean(ov, (size_t)opt_outer);
        min = obench_min(ov, (size_t)opt_outer);
        sd = obench_sd(ov, (size_t)opt_outer);
        med = obench_median(ov, (size_t)opt_outer);  /* sorts ov */
        printf("  %-13s %10ld %12.4f %12.4f %12.4f %12.4f\n", t->name, innerreps, med,
               mean, min, sd);
        fflush(stdout);
        snprintf(metric, sizeof metric, "%s_%s_us", t->name, BENCH_OMP_RUNTIME);
        obench_result(metric, med, "us");
        obench_extra("mean_us", mean);
        obench_extra("min_us", min);
        obench_extra("max_us", ov[opt_outer - 1]);
        obench_extra("sd_us", sd);
        obench_extra("test_us", obench_mean(times, (size_t)opt_outer));
        obench_extra("ref_us", ref_us[t->ref]);
        obench_extra("inner", (double)innerreps);
    }
    omp_destroy_lock(&lock);
    if (wrong)
        printf("  WRONG RESULTS: see stderr\n");
    obench_emit();
    free(times);
    free(ov);
    return wrong ? 1 : 0;
}
