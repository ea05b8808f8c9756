/*
 * matmul_omp.c - C = AB for N x N doubles (paper 001, Fig. 3), as a plain
 * OpenMP program: built as matmul_omp.gomp (gcc -fopenmp, libgomp) and
 * matmul_omp.dsm (tools/dsmcc, the OpenMP shim on libdsm).
 *
 * The sequential code fills A and B (under the shim: on rank 0, whose heap
 * holds them), then the multiply runs as one parallel loop over the rows of
 * C (schedule(static)).  Every rank needs all of B and its rows of A.  Two
 * ways to get them there are timed, each --reps times:
 *   ondemand   every rank faults the pages it needs in from their home
 *              (rank 0), all ranks at once;
 *   bcast      dsm_bcast (dsm_omp.h) sends A and B to every rank with one
 *              tree broadcast first, then the multiply reads local copies.
 * Before each repetition rank 0 writes A and B again, which invalidates the
 * copies the other ranks hold (the write notices of the next fork).
 *
 * Time split as in the paper: "bcast" is getting A and B to every rank:
 * under bcast from the first dsm_bcast to the end of an empty parallel
 * region after it (so that it counts the slowest rank having its copy, like
 * MPI_Bcast followed by MPI_Barrier in matmul_mpi.c); under ondemand a
 * parallel region that reads, with the multiply's schedule, one word of
 * every page each thread's rows of the multiply will read (touch()): the
 * same faults the multiply would take, one page at a time from rank 0.
 * "multiply" = the multiply region, fork to join, then without faults on A
 * and B in both modes.  Under libgomp dsm_omp_bcast does nothing.
 *
 * Entries are small integers, so C is exact and its checksum is the same
 * in every form (matmul_mpi.c, libgomp, the shim, both modes); a sample of
 * entries is also checked against a direct dot product.
 */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dsm_omp.h"
#include "omp_common.h"
#include "matmul.h"

static long opt_size = 2000, opt_reps = 3;
static volatile double sink;
static const char *opt_mode = "both";

static const struct obench_opt opts[] = {
    { "size", OBENCH_LONG, &opt_size, "N: the matrices are N x N doubles (2000)" },
    { "reps", OBENCH_LONG, &opt_reps, "repetitions of each mode; medians are reported (3)" },
    { "mode", OBENCH_STRING, &opt_mode, "ondemand, bcast or both (both)" },
    { NULL, 0, NULL, NULL }
};

static void fill(double *a, double *b, long n, int gen)
{
    for (long i = 0; i < n; i++)
        for (long k = 0; k < n; k++) {
            a[i * n + k] = mm_a(i, k, gen);
            b[i * n + k] = mm_b(i, k, gen);
        }
}

static void multiply(const double *a, const double *b, double *c, long n)
{
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; i++) {
        double *ci = c + i * n;
        for (long j = 0; j < n; j++)
            ci[j] = 0;
        for (long k = 0; k < n; k++) {
            double aik = a[i * n + k];
            const double *bk = b + k * n;
            for (long j = 0; j < n; j++)
                ci[j] += aik * bk[j];
        }
    }
}

/* The on-demand "get": with the multiply's schedule, each thread reads one
 * word of every page of its rows of A and of all of B, which faults them in
 * from their home one after the other, as the multiply would; the multiply
 * then finds them local, as after a broadcast, so the two phases compare
 * like for like.  Returns a sum so that the reads are not dropped. */
static double touch(const double *a, const double *b, long n)
{
    const long step = 512;           /* 4 KiB of doubles: every page of any size */
    double s = 0;
#pragma omp parallel for schedule(static) reduction(+:s)
    for (long i = 0; i < n; i++) {
        for (long k = 0; k < n; k += step)
            s += a[i * n + k];
        s += a[i * n + n - 1];
    }
    double t = 0;
#pragma omp parallel reduction(+:t)
    {
        for (long j = 0; j < n * n; j += step)
            t += b[j];
    }
    return s + t;
}

static void empty_region(void)
{
    int x = 0;
#pragma omp parallel
    {
        if (omp_get_thread_num() == 0)
            x = 1;
    }
    (void)x;
}

/* One mode, opt_reps times: medians of the two phases, and the checksum. */
static void run(const char *mode, double *a, double *b, double *c, long n)
{
    int use_bcast = strcmp(mode, "bcast") == 0;
    double *tb = malloc((size_t)opt_reps * sizeof *tb);
    double *tm = malloc((size_t)opt_reps * sizeof *tm);
    double *tt = malloc((size_t)opt_reps * sizeof *tt);
    double sum = 0;
    int gen = 0;

    if (!tb || !tm || !tt)
        obench_fatal("out of memory");
    for (long r = 0; r < opt_reps; r++) {
        gen = (int)(r % 2);
        fill(a, b, n, gen);
        empty_region();        /* A and B released; copies elsewhere invalid */
        double t0 = omp_get_wtime();
        if (use_bcast) {
            dsm_omp_bcast(a, (size_t)n * n * sizeof *a);
            dsm_omp_bcast(b, (size_t)n * n * sizeof *b);
            empty_region();
        } else {
            sink += touch(a, b, n);
        }
        double t1 = omp_get_wtime();
        multiply(a, b, c, n);
        double t2 = omp_get_wtime();
        tb[r] = t1 - t0;
        tm[r] = t2 - t1;
        tt[r] = t2 - t0;
    }
    sum = mm_check(a, b, c, n, gen, mode);
    printf("matmul_omp %s: size %ld, bcast %.4f s, multiply %.4f s, total %.4f s "
           "(medians of %ld), checksum %.17g\n", mode, n, obench_median(tb, (size_t)opt_reps),
           obench_median(tm, (size_t)opt_reps), obench_median(tt, (size_t)opt_reps),
           opt_reps, sum);
    char metric[64];
    snprintf(metric, sizeof metric, "%s_bcast_s", mode);
    obench_result(metric, obench_median(tb, (size_t)opt_reps), "s");
    snprintf(metric, sizeof metric, "%s_multiply_s", mode);
    obench_result(metric, obench_median(tm, (size_t)opt_reps), "s");
    snprintf(metric, sizeof metric, "%s_total_s", mode);
    obench_result(metric, obench_median(tt, (size_t)opt_reps), "s");
    snprintf(metric, sizeof metric, "%s_checksum", mode);
    obench_result_exact(metric, sum, "sum");
    free(tb);
    free(tm);
    free(tt);
}

int main(int argc, char **argv)
{
    obench_start(argc, argv, "matmul_omp",
                 "C = AB with A and B fetched on demand or broadcast (paper 001 Fig. 3)",
                 opts);
    long n = opt_size;
    if (n < 1 || opt_reps < 1)
        obench_fatal("--size %ld --reps %ld: need N >= 1 and at least one repetition",
                     n, opt_reps);
    if (strcmp(opt_mode, "ondemand") && strcmp(opt_mode, "bcast") && strcmp(opt_mode, "both"))
        obench_fatal("--mode %s: use ondemand, bcast or both", opt_mode);
    obench_team_size();
    size_t bytes = (size_t)n * (size_t)n * sizeof(double);
    double *a = malloc(bytes), *b = malloc(bytes), *c = malloc(bytes);
    if (!a || !b || !c)
        obench_fatal("malloc of 3 x %zu bytes failed", bytes);
    obench_param("size", n);
    obench_param("reps", opt_reps);
    if (strcmp(opt_mode, "bcast") != 0)
        run("ondemand", a, b, c, n);
    if (strcmp(opt_mode, "ondemand") != 0)
        run("bcast", a, b, c, n);
    obench_emit();
    free(a);
    free(b);
    free(c);
    return 0;
}
