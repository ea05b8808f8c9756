/*
 * planes_omp.c - the "barrier per plane" shape of line-relaxation solvers,
 * as a plain OpenMP program (no MPI, no DSM call).  Built twice from this
 * file, planes_omp.gomp (gcc -fopenmp, libgomp: the baseline) and
 * planes_omp.dsm (tools/dsmcc, omp-shim under tools/dsmrun);
 * benchmarks/bench.sh planes runs the .gomp with one thread (the
 * sequential form), the .gomp with the team, and the .dsm, and compares.
 *
 * The shape: a 3-D grid of N^3 doubles (--size, 24..64, default 32), u and
 * a read-only rhs, stored u[k][j][i] (i fastest).  Each time step sweeps in
 * x, y and z.  A sweep is a sequential loop over the planes of one
 * dimension, and inside it a "#pragma omp for" over the lines of the
 * plane; every thread relaxes its lines from the neighbouring planes (the
 * previous one, already updated by this sweep, and the next one, not yet)
 * and along the line itself (a Gauss-Seidel recurrence, as the forward pass
 * of an implicit line solver).  The plane loop runs inside one
 * "#pragma omp parallel" per time step, so each plane costs one implicit
 * barrier (the end of its omp for) and a step 3 * (N - 2) of them, with
 * small pieces of u written by every thread between them: the pattern that
 * a page DSM pays for with a barrier and page faults per plane.
 *
 * Each element is computed by one thread from values that the barriers
 * order (planes before it, its own line, its old value), always by the
 * same expression in the same order, so the result does not depend on the
 * team or the schedule: any team gives the sequential form's checksum (the
 * sum of u in storage order, by the initial thread), bit for bit.
 *
 * Threads: the initial thread parses options, allocates (malloc: under the
 * shim the DSM heap), times and sums; the team runs init() (first touch by
 * the same static schedule as the x sweep) and the sweeps.
 */
#include "../omp_common.h"

#include <stdio.h>
#include <stdlib.h>

#include <omp.h>

static long opt_size = 32;
static long opt_iter = 10;
static long opt_warmup = 1;

static const struct obench_opt opts[] = {
    { "size", OBENCH_LONG, &opt_size, "grid size N (N^3 doubles per array, 24..64)" },
    { "iter", OBENCH_LONG, &opt_iter, "timed time steps (each: x, y and z sweeps)" },
    { "warmup", OBENCH_LONG, &opt_warmup, "untimed time steps before the timed ones" },
    { 0, 0, 0, 0 }
};

static long n;
static double *u, *rhs;

#define AT(k, j, i) (((k) * n + (j)) * n + (i))

/* Relaxation weights: 4 * 0.2 + 0.1 < 1, so u stays bounded. */
#define W_NB 0.2
#define W_RHS 0.1

static void init(void)
{
    long k, j, i;

#pragma omp parallel private(k, i)
    for (k = 0; k < n; k++) {
#pragma omp for schedule(static)
        for (j = 0; j < n; j++)
            for (i = 0; i < n; i++) {
                u[AT(k, j, i)] = (double)((i + 2 * j + 3 * k) % 7) * 0.125;
                rhs[AT(k, j, i)] = (double)((3 * i + j + 5 * k) % 11) * 0.0625;
            }
    }
}

/* One time step: the three sweeps, one barrier per plane. */
static void step(void)
{
    long k, j, i;

#pragma omp parallel private(k, j, i)
    {
        /* x sweep: planes k, lines j of plane k, recurrence along i. */
        for (k = 1; k < n - 1; k++) {
#pragma omp for schedule(static)
            for (j = 1; j < n - 1; j++)
                for (i = 1; i < n - 1; i++)
                    u[AT(k, j, i)] = W_RHS * rhs[AT(k, j, i)] +
                        W_NB * (u[AT(k - 1, j, i)] + u[AT(k + 1, j, i)] +
                                u[AT(k, j, i - 1)] + u[AT(k, j, i + 1)]);
        }
        /* y sweep: planes j, lines k of plane j, recurrence along i. */
        for (j = 1; j < n - 1; j++) {
#pragma omp for schedule(static)
            for (k = 1; k < n - 1; k++)
                for (i = 1; i < n - 1; i++)
                    u[AT(k, j, i)] = W_RHS * rhs[AT(k, j, i)] +
                        W_NB * (u[AT(k, j - 1, i)] + u[AT(k, j + 1, i)] +
                                u[AT(k, j, i - 1)] + u[AT(k, j, i + 1)]);
        }
        /* z sweep: planes i, lines k of plane i, recurrence along j. */
        for (i = 1; i < n - 1; i++) {
#pragma omp for schedule(static)
            for (k = 1; k < n - 1; k++)
                for (j = 1; j < n - 1; j++)
                    u[AT(k, j, i)] = W_RHS * rhs[AT(k, j, i)] +
                        W_NB * (u[AT(k, j, i - 1)] + u[AT(k, j, i + 1)] +
                                u[AT(k, j - 1, i)] + u[AT(k, j + 1, i)]);
        }
    }
}

static double checksum(void)
{
    double total = 0.0;
    long e;

    for (e = 0; e < n * n * n; e++)
        total += u[e];
    return total;
}

int main(int argc, char **argv)
{
    double t0, init_s, loop_s, sum;
    char metric[64];
    long it, barriers;
    int team;

    obench_start(argc, argv, "planes_omp",
                 "Line relaxation on an N^3 grid: x, y and z sweeps, each a sequential\n"
                 "loop over planes with an '#pragma omp for' inside (a barrier per plane).",
                 opts);
    n = opt_size;
    if (n < 24 || n > 64 || opt_iter < 1 || opt_warmup < 0)
        obench_fatal("--size %ld --iter %ld --warmup %ld: need 24 <= N <= 64, at least one "
                     "step and no negative warm-up", n, opt_iter, opt_warmup);
    team = obench_team_size();
    barriers = opt_iter * 3 * (n - 2);
    printf("planes_omp: %ld^3, %ld steps (+%ld warm-up), %ld plane barriers timed, "
           "%d threads, runtime %s\n", n, opt_iter, opt_warmup, barriers, team,
           BENCH_OMP_RUNTIME);
    fflush(stdout);

    u = malloc((size_t)n * n * n * sizeof *u);
    rhs = malloc((size_t)n * n * n * sizeof *rhs);
    if (!u || !rhs)
        obench_fatal("malloc of 2 x %zu bytes failed", (size_t)n * n * n * sizeof *u);

    t0 = omp_get_wtime();
    init();
    init_s = omp_get_wtime() - t0;

    t0 = omp_get_wtime();
    for (it = 0; it < opt_warmup + opt_iter; it++) {
        if (it == opt_warmup)
            t0 = omp_get_wtime();
        step();
    }
    loop_s = omp_get_wtime() - t0;

    sum = checksum();
    printf("  %s: %10.4f s  checksum %.17g  %.2f us per plane barrier\n", BENCH_OMP_RUNTIME,
           loop_s, sum, loop_s / (double)barriers * 1e6);
    printf("  init (parallel first touch): %.4f s\n", init_s);

    obench_param("size", n);
    obench_param("iter", opt_iter);
    obench_param("warmup", opt_warmup);
    snprintf(metric, sizeof metric, "planes_%s_s", BENCH_OMP_RUNTIME);
    obench_result(metric, loop_s, "s");
    snprintf(metric, sizeof metric, "planes_%s_init_s", BENCH_OMP_RUNTIME);
    obench_result(metric, init_s, "s");
    obench_result_exact("checksum", sum, "sum");
    obench_result("barriers", (double)barriers, "count");
    obench_emit();
    free(u);
    free(rhs);
    return 0;
}
