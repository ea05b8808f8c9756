/*
 * cholesky_omp.c - a tiled Cholesky factorisation with OpenMP tasks and
 * depend clauses, as a plain OpenMP program (no MPI, no DSM call).  Built
 * twice from this file, cholesky_omp.gomp (gcc -fopenmp, libgomp: the
 * baseline) and cholesky_omp.dsm (tools/dsmcc, omp-shim under
 * tools/dsmrun); benchmarks/bench.sh tasks runs both (see its header).
 *
 * The matrix: symmetric positive definite, N = NT x B (--tiles NT, --block
 * B), a(i,j) = a(j,i) a hash of (i,j) in [-0.5, 0.5) off the diagonal and N
 * on it (diagonally dominant).  Only the lower triangle is stored, as
 * NT(NT+1)/2 tiles of B x B doubles (row-major), each its own malloc.  The
 * right-looking algorithm overwrites it with L (A = L L^T), one task per
 * tile operation:
 *   for k:  potrf  L(k,k) = chol(A(k,k))              depend(inout: A(k,k))
 *     i>k:  trsm   A(i,k) = A(i,k) L(k,k)^-T          depend(in: A(k,k)) depend(inout: A(i,k))
 *     i>k:  syrk   A(i,i) -= A(i,k) A(i,k)^T          depend(in: A(i,k)) depend(inout: A(i,i))
 *     k<j<i: gemm  A(i,j) -= A(i,k) A(j,k)^T          depend(in: A(i,k), A(j,k)) depend(inout: A(i,j))
 * NT + NT(NT-1) + NT(NT-1)(NT-2)/6 tasks in all; the kernels are plain
 * loops (no BLAS).  Every update of a tile is ordered after the one before
 * it by its inout dependence, in the order of the serial algorithm, so the
 * factor is the same bit for bit whatever the team or the schedule: the
 * checksum (the sum of L's entries in storage order) of any run equals the
 * sequential one's.
 *
 * Verification, after the timed factorisations: with x(i) = 1 + (i mod 7)/8,
 * r = A x - L (L^T x), A's entries regenerated from the hash;
 * max |r| / (max row sum |A| * max |x|) must be below 1e-12 (Cholesky is
 * backward stable: about N * 1e-16 here), and every repetition must give
 * the same checksum.  A run that does not verify prints
 * "verification: FAILED" and exits 1 after its result lines.
 *
 * Grain: a gemm costs 2 B^3 flops, and the mean task about as much; the
 * mean time per task printed is the timed run's wall time / tasks, and
 * beside it the CPU time per task: this process's CPU time (all its
 * threads; under dsmrun rank 0's) over the timed repetitions /
 * (repetitions x tasks), on one thread the grain whatever share of the
 * CPU other programs take.  --tiles 12 --block 128 (the default) is
 * bench.sh's "coarse" size (364 tasks, 0.96 ms of CPU each on the 2-vCPU
 * VM), --tiles 24 --block 48 the "fine" one (2600 tasks, 49 us each).
 *
 * Threads: the initial thread parses options, allocates the tiles, times
 * and verifies; the team fills the tiles (omp for over the tiles, before
 * each repetition, not timed) and runs the tasks that one thread creates
 * in a "single" (under libgomp any thread, under today's omp-shim the
 * creating thread at once); the implicit barrier at the end of the
 * parallel region waits for them all.
 */
#include "../omp_common.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <omp.h>

static long opt_tiles = 12;
static long opt_block = 128;
static long opt_reps = 3;

static const struct obench_opt opts[] = {
    { "tiles", OBENCH_LONG, &opt_tiles, "tiles per dimension NT (1..64)" },
    { "block", OBENCH_LONG, &opt_block, "tile size B (4..512): N = NT x B" },
    { "reps", OBENCH_LONG, &opt_reps, "timed repetitions (the median is the result)" },
    { 0, 0, 0, 0 }
};

static int nt, b;
static long n;
static double **tile;           /* tile(i,j), j <= i, at tile[i * (i + 1) / 2 + j] */

#define T(i, j) tile[(long)(i) * ((i) + 1) / 2 + (j)]

/* a(i,j) of the input matrix (i, j global indices). */
static double a_of(long i, long j)
{
    uint64_t h;

    if (i == j)
        return (double)n;
    if (i < j) {
        long t = i;
        i = j;
        j = t;
    }
    h = (uint64_t)i * 0x9e3779b97f4a7c15ull ^ ((uint64_t)j + 0x632be59bd9b4e019ull);
    h ^= h >> 31;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 29;
    h *= 0x94d049bb133111ebull;
    h ^= h >> 32;
    return (double)(h >> 11) / 9007199254740992.0 - 0.5;
}

static void fill(void)
{
    long t, ntiles = (long)nt * (nt + 1) / 2;

#pragma omp parallel for schedule(static)
    for (t = 0; t < ntiles; t++) {
        /* tile t is (ti, tj) with ti * (ti + 1) / 2 + tj = t */
        long ti = 0, tj, r, c;
        double *p = tile[t];
        while ((ti + 1) * (ti + 2) / 2 <= t)
            ti++;
        tj = t - ti * (ti + 1) / 2;
        for (r = 0; r < b; r++)
            for (c = 0; c < b; c++)
                p[r * b + c] = a_of(ti * b + r, tj * b + c);
    }
}

/* ---- the tile kernels (B x B, row-major) ---- */

/* A = L, lower, with L L^T = A (upper part left as it is). */
static void potrf(double *a)
{
    int i, j, k;
    double s;

    for (j = 0; j < b; j++) {
        s = a[j * b + j];
        for (k = 0; k < j; k++)
            s -= a[j * b + k] * a[j * b + k];
        if (!(s > 0))
            s = NAN;          /* not positive definite: the verification fails */
        a[j * b + j] = sqrt(s);
        for (i = j + 1; i < b; i++) {
            s = a[i * b + j];
            for (k = 0; k < j; k++)
                s -= a[i * b + k] * a[j * b + k];
            a[i * b + j] = s / a[j * b + j];
        }
    }
}

/* X = X L^-T, L lower (the diagonal tile): row r of X solves L y = x_r. */
static void trsm(const double *l, double *x)
{
    int r, j, k;
    double s;

    for (r = 0; r < b; r++)
        for (j = 0; j < b; j++) {
            s = x[r * b + j];
            for (k = 0; k < j; k++)
                s -= x[r * b + k] * l[j * b + k];
            x[r * b + j] = s / l[j * b + j];
        }
}

/* C -= A A^T, lower part of C only. */
static void syrk(const double *a, double *c)
{
    int i, j, k;
    double s;

    for (i = 0; i < b; i++)
        for (j = 0; j <= i; j++) {
            s = 0;
            for (k = 0; k < b; k++)
                s += a[i * b + k] * a[j * b + k];
            c[i * b + j] -= s;
        }
}

/* C -= A B^T. */
static void gemm(const double *a, const double *bt, double *c)
{
    int i, j, k;
    double s;

    for (i = 0; i < b; i++)
        for (j = 0; j < b; j++) {
            s = 0;
            for (k = 0; k < b; k++)
                s += a[i * b + k] * bt[j * b + k];
            c[i * b + j] -= s;
        }
}

/* The task graph (one thread creates, the team runs). */
static void factor(void)
{
    int i, j, k;

#pragma omp parallel default(none) shared(tile, nt) private(i, j, k)
#pragma omp single
    for (k = 0; k < nt; k++) {
        double *akk = T(k, k);
#pragma omp task default(none) firstprivate(akk) depend(inout: akk[0])
        potrf(akk);
        for (i = k + 1; i < nt; i++) {
            double *aik = T(i, k);
#pragma omp task default(none) firstprivate(akk, aik) depend(in: akk[0]) depend(inout: aik[0])
            trsm(akk, aik);
        }
        for (i = k + 1; i < nt; i++) {
            double *aik = T(i, k), *aii = T(i, i);
#pragma omp task default(none) firstprivate(aik, aii) depend(in: aik[0]) depend(inout: aii[0])
            syrk(aik, aii);
            for (j = k + 1; j < i; j++) {
                double *ajk = T(j, k), *aij = T(i, j);
#pragma omp task default(none) firstprivate(aik, ajk, aij) \
    depend(in: aik[0], ajk[0]) depend(inout: aij[0])
                gemm(aik, ajk, aij);
            }
        }
    }
}

/* l(i,j) of the factor, 0 above the diagonal. */
static double l_of(long i, long j)
{
    if (j > i)
        return 0.0;
    return T(i / b, j / b)[(i % b) * b + j % b];
}

static double checksum(void)
{
    long t, e, ntiles = (long)nt * (nt + 1) / 2;
    double sum = 0.0;
    int ti = 0, tj = 0;

    for (t = 0; t < ntiles; t++) {
        for (e = 0; e < (long)b * b; e++)
            if (ti != tj || e % b <= e / b)   /* a diagonal tile: its lower part */
                sum += tile[t][e];
        if (++tj > ti) {
            ti++;
            tj = 0;
        }
    }
    return sum;
}

/* max |A x - L L^T x| / (||A||_inf ||x||_inf), O(N^2). */
static double residual(void)
{
    double *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)n * sizeof *y);
    double rmax = 0.0, anorm = 0.0, s, ax, row;
    long i, j;

    if (!x || !y)
        obench_fatal("malloc of 2 x %ld doubles failed", n);
    for (i = 0; i < n; i++)
        x[i] = 1.0 + (double)(i % 7) / 8.0;
    for (i = 0; i < n; i++) {           /* y = L^T x */
        s = 0.0;
        for (j = i; j < n; j++)
            s += l_of(j, i) * x[j];
        y[i] = s;
    }
    for (i = 0; i < n; i++) {           /* (L y)(i) against (A x)(i) */
        s = 0.0;
        ax = 0.0;
        row = 0.0;
        for (j = 0; j <= i; j++)
            s += l_of(i, j) * y[j];
        for (j = 0; j < n; j++) {
            double a = a_of(i, j);
            ax += a * x[j];
            row += fabs(a);
        }
        if (!(fabs(ax - s) <= rmax))
            rmax = fabs(ax - s);        /* also takes a NaN */
        if (row > anorm)
            anorm = row;
    }
    free(x);
    free(y);
    return rmax / (anorm * (1.0 + 6.0 / 8.0));
}

/* CPU time of this process (all its threads; under dsmrun rank 0's). */
static double cpu_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    double *times, t0, c0, cpu_s = 0, cpu_us, med, min, sum = 0, s, res;
    long rep, tasks, t, ntiles;
    int team, ok = 1;
    char metric[64];

    obench_start(argc, argv, "cholesky_omp",
                 "Tiled Cholesky factorisation of an SPD matrix: potrf/trsm/syrk/gemm tasks on\n"
                 "separately allocated tiles, ordered by depend clauses; verified by a residual.",
                 opts);
    if (opt_tiles < 1 || opt_tiles > 64 || opt_block < 4 || opt_block > 512 || opt_reps < 1)
        obench_fatal("--tiles %ld --block %ld --reps %ld: need 1 <= NT <= 64, 4 <= B <= 512 "
                     "and at least one repetition", opt_tiles, opt_block, opt_reps);
    nt = (int)opt_tiles;
    b = (int)opt_block;
    n = (long)nt * b;
    team = obench_team_size();
    tasks = nt + (long)nt * (nt - 1) + (long)nt * (nt - 1) * (nt - 2) / 6;
    printf("cholesky_omp: N %ld = %d tiles of %d, %ld tasks per repetition, %ld repetitions, "
           "%d threads, runtime %s\n", n, nt, b, tasks, opt_reps, team, BENCH_OMP_RUNTIME);
    fflush(stdout);

    ntiles = (long)nt * (nt + 1) / 2;
    tile = malloc((size_t)ntiles * sizeof *tile);
    times = malloc((size_t)opt_reps * sizeof *times);
    if (!tile || !times)
        obench_fatal("malloc failed");
    for (t = 0; t < ntiles; t++)
        if (!(tile[t] = malloc((size_t)b * b * sizeof **tile)))
            obench_fatal("malloc of tile %ld (%zu bytes) failed", t, (size_t)b * b * sizeof **tile);

    for (rep = 0; rep < opt_reps; rep++) {
        fill();
        c0 = cpu_now();
        t0 = omp_get_wtime();
        factor();
        times[rep] = omp_get_wtime() - t0;
        cpu_s += cpu_now() - c0;
        s = checksum();
        if (rep == 0)
            sum = s;
        else if (s != sum)
            ok = 0;
    }
    min = obench_min(times, (size_t)opt_reps);
    med = obench_median(times, (size_t)opt_reps);
    cpu_us = cpu_s / (double)opt_reps / (double)tasks * 1e6;
    res = residual();
    if (!(res < 1e-12))
        ok = 0;

    printf("  %s: %10.4f s (median of %ld, min %.4f)  %ld tasks  %.2f us per task "
           "(CPU %.2f us)  %.3f Gflop/s\n", BENCH_OMP_RUNTIME, med, opt_reps, min, tasks,
           med / (double)tasks * 1e6, cpu_us, (double)n * n * n / 3.0 / med * 1e-9);
    printf("  verification: %s (residual %.3g, limit 1e-12; checksum %.17g)\n",
           ok ? "SUCCESSFUL" : "FAILED", res, sum);

    obench_param("tiles", nt);
    obench_param("block", b);
    obench_param("reps", opt_reps);
    snprintf(metric, sizeof metric, "cholesky_%s_s", BENCH_OMP_RUNTIME);
    obench_result(metric, med, "s");
    obench_extra("min_s", min);
    obench_result("tasks", (double)tasks, "count");
    obench_result("us_per_task", med / (double)tasks * 1e6, "us");
    obench_result("cpu_us_per_task", cpu_us, "us");
    obench_result_exact("checksum", sum, "sum");
    obench_result("residual", res, "ratio");
    obench_result("verified", ok, "bool");
    obench_emit();
    for (t = 0; t < ntiles; t++)
        free(tile[t]);
    free(tile);
    free(times);
    return ok ? 0 : 1;
}
