/*
 * laplace_omp.c - the laplace benchmark (laplace.c) written as an ordinary
 * OpenMP program: no MPI, no DSM call, only "#pragma omp parallel for".
 * Built twice from this file with the same flags: laplace_omp.gomp with
 * gcc -fopenmp (libgomp: the baseline, OMP_NUM_THREADS threads on this
 * machine) and laplace_omp.dsm with tools/dsmcc (omp-shim: the same team
 * spread over the ranks of tools/dsmrun).  benchmarks/bench.sh laplace_omp
 * runs both and laplace.c's sequential form, and compares them.
 *
 * The computation is laplace.c's, to the bit: N x N doubles (--size,
 * default 4096), top row 1.0, the other edges 0.0, interior
 * ((i + 2*j) % 5) * 0.25; each sweep sets unew[i][j] = 0.25 * (u[i-1][j] +
 * u[i+1][j] + u[i][j-1] + u[i][j+1]) for 1 <= i, j <= N-2 (the same
 * expression in the same order, so the same rounding), then u and unew
 * swap; --warmup untimed sweeps (default 1) then --iter timed ones (default
 * 10).  The checksum is laplace.c's (the sum over rows, in order, of each
 * row's sum, computed by the initial thread after the loop) and so is the
 * hash (64-bit FNV-1a of the bytes of every row, then FNV-1a of those row
 * hashes), so the three results can be compared bitwise.
 *
 * The grids are malloc'd, as a user who takes the size from the command
 * line writes them.  (The classic Omni/SCASH laplace used fixed-size global
 * arrays; the shim shares .bss as well, but a size fixed at compile time
 * would not follow --size.)  Under the shim the program's malloc comes from
 * the DSM heap, and the two grids take 16*N*N bytes of it: 256 MiB for N =
 * 4096; from N = 8192 on, raise DSM_HEAP_SIZE.
 *
 * Placement: the grids are initialised by a parallel loop over the same
 * rows, with the same static schedule, as the sweeps, so each thread first
 * touches the rows it will compute: with first-touch homes (the shim) a
 * row's pages live on the rank that writes them, and with libgomp they sit
 * on the thread's NUMA node; the boundary rows 0 and N-1 are written by the
 * initial thread.  Only the timed sweeps are timed (omp_get_wtime() around
 * them, on the initial thread); every "parallel for" ends in its join, so
 * that time covers all threads' work.  The initialisation is timed on its
 * own (init_s): under the DSM it includes the first-touch faults.
 */
#include "../omp_common.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

static long opt_size = 4096;
static long opt_iter = 10;
static long opt_warmup = 1;

static const struct obench_opt opts[] = {
    { "size", OBENCH_LONG, &opt_size, "grid size N (N x N doubles)" },
    { "iter", OBENCH_LONG, &opt_iter, "timed Jacobi iterations" },
    { "warmup", OBENCH_LONG, &opt_warmup, "untimed iterations before the timed ones" },
    { 0, 0, 0, 0 }
};

static long n;
static double *u, *unew;

static double initial(long i, long j)
{
    if (i == 0)
        return 1.0;
    if (i == n - 1 || j == 0 || j == n - 1)
        return 0.0;
    return (double)((i + 2 * j) % 5) * 0.25;
}

static void init(void)
{
    long i, j;

#pragma omp parallel for schedule(static) private(j)
    for (i = 1; i < n - 1; i++)
        for (j = 0; j < n; j++)
            u[i * n + j] = unew[i * n + j] = initial(i, j);
    for (j = 0; j < n; j++) {
        u[j] = unew[j] = initial(0, j);
        u[(n - 1) * n + j] = unew[(n - 1) * n + j] = initial(n - 1, j);
    }
}

/* One Jacobi sweep from a into b. */
static void sweep(const double *a, double *b)
{
    long i, j;

#pragma omp parallel for schedule(static) private(j)
    for (i = 1; i < n - 1; i++)
        for (j = 1; j < n - 1; j++)
            b[i * n + j] = 0.25 * (a[(i - 1) * n + j] + a[(i + 1) * n + j] +
                                   a[i * n + j - 1] + a[i * n + j + 1]);
}

static double checksum(const double *a)
{
    double total = 0.0, row;
    long i, j;

    for (i = 0; i < n; i++) {
        row = 0.0;
        for (j = 0; j < n; j++)
            row += a[i * n + j];
        total += row;
    }
    return total;
}

static uint64_t fnv1a(uint64_t x, const void *p, size_t len)
{
    const unsigned char *b = p;
    size_t k;

    for (k = 0; k < len; k++)
        x = (x ^ b[k]) * 1099511628211ULL;
    return x;
}

/* laplace.c's row hashes, then a hash of them: one number for the grid. */
static uint64_t grid_hash(const double *a)
{
    uint64_t g = 1469598103934665603ULL, h;
    long i;

    for (i = 0; i < n; i++) {
        h = fnv1a(1469598103934665603ULL, a + i * n, (size_t)n * sizeof(double));
        g = fnv1a(g, &h, sizeof h);
    }
    return g;
}

int main(int argc, char **argv)
{
    double t0, init_s, loop_s, sum, *t;
    char metric[64];
    uint64_t hash;
    long it;
    int team;

    obench_start(argc, argv, "laplace_omp",
                 "Jacobi on an N x N grid with '#pragma omp parallel for' (laplace.c's\n"
                 "computation, checksum and hash).", opts);
    n = opt_size;
    if (n < 3 || opt_iter < 1)
        obench_fatal("--size %ld --iter %ld: need N >= 3 and at least one iteration",
                     n, opt_iter);
    team = obench_team_size();
    printf("laplace_omp: %ld x %ld, %ld iterations (+%ld warm-up), %d threads, runtime %s\n",
           n, n, opt_iter, opt_warmup, team, BENCH_OMP_RUNTIME);
    fflush(stdout);

    u = malloc((size_t)n * n * sizeof *u);
    unew = malloc((size_t)n * n * sizeof *unew);
    if (!u || !unew)
        obench_fatal("malloc of 2 x %zu bytes failed", (size_t)n * n * sizeof *u);

    t0 = omp_get_wtime();
    init();
    init_s = omp_get_wtime() - t0;

    t0 = omp_get_wtime();
    for (it = 0; it < opt_warmup + opt_iter; it++) {
        if (it == opt_warmup)
            t0 = omp_get_wtime();
        sweep(u, unew);
        t = u; u = unew; unew = t;
    }
    loop_s = omp_get_wtime() - t0;

    sum = checksum(u);
    hash = grid_hash(u);
    printf("  %s: %10.4f s  checksum %.17g  hash %016llx\n", BENCH_OMP_RUNTIME, loop_s,
           sum, (unsigned long long)hash);
    printf("  init (parallel first touch): %.4f s\n", init_s);

    obench_param("size", n);
    obench_param("iter", opt_iter);
    obench_param("warmup", opt_warmup);
    snprintf(metric, sizeof metric, "omp_%s_s", BENCH_OMP_RUNTIME);
    obench_result(metric, loop_s, "s");
    snprintf(metric, sizeof metric, "omp_%s_init_s", BENCH_OMP_RUNTIME);
    obench_result(metric, init_s, "s");
    obench_result_exact("checksum", sum, "sum");
    obench_emit();
    free(u);
    free(unew);
    return 0;
}
