/*
 * grayscott_mpi.c - Gray-Scott (gs.h) with MPI: the interior rows split in
 * blocks over the ranks, one halo row exchanged with each neighbour per
 * step (MPI_Sendrecv).  Built twice from this file: grayscott_mpi (flat
 * MPI, one process per core) and, with -fopenmp, grayscott_hybrid (the
 * notes' gs_hybrid: the same plus "omp parallel for" on each rank's rows).
 * Rank 0 gathers the grid at the end for the checksum.
 *
 * Usage: mpiexec -n R grayscott_mpi [--size L] [--steps S]
 * Output: a human line, then JSON (bench "grayscott_mpi" or
 * "grayscott_hybrid"; metrics mpi_s (the steps), checksum).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#define GS_NAME "grayscott_hybrid"
#else
#define GS_NAME "grayscott_mpi"
#endif

#include "../json.h"
#include "gs.h"

static void result(int ranks, int threads, long L, long steps, const char *metric,
                   double v, const char *unit, int exact)
{
    printf("{\"bench\":\"" GS_NAME "\",\"metric\":");
    json_string(metric);
    printf(",\"value\":");
    json_number(v, exact);
    printf(",\"unit\":");
    json_string(unit);
    printf(",\"ranks\":%d,\"threads\":%d,\"size\":%ld,\"steps\":%ld}\n", ranks, threads,
           L, steps);
}

int main(int argc, char **argv)
{
    long L = 324, steps = 2000;
    int rank, size, threads = 1, prov;

    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &prov);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
#ifdef _OPENMP
    threads = omp_get_max_threads();
#endif
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--size") && i + 1 < argc)
            L = atol(argv[++i]);
        else if (!strcmp(argv[i], "--steps") && i + 1 < argc)
            steps = atol(argv[++i]);
        else {
            if (rank == 0)
                fprintf(stderr, "usage: " GS_NAME " [--size L] [--steps S]\n");
            MPI_Finalize();
            return 2;
        }
    }
    if (L < 3 || steps < 0 || L - 2 < size || L * L > 0x7fffffffL) {
        if (rank == 0)
            fprintf(stderr, GS_NAME ": need L >= ranks + 2 (and L*L < 2^31), steps >= 0\n");
        MPI_Finalize();
        return 2;
    }
    /* Interior rows 1..L-2: this rank updates [lo, hi); it holds rows
     * lo-1 .. hi (halos included) at local rows 0 .. hi-lo+1. */
    long lo = 1 + (L - 2) * rank / size, hi = 1 + (L - 2) * (rank + 1) / size;
    long rows = hi - lo + 2;
    size_t n = (size_t)rows * (size_t)L;
    double *u = malloc(n * sizeof *u), *v = malloc(n * sizeof *v);
    double *u2 = malloc(n * sizeof *u2), *v2 = malloc(n * sizeof *v2);
    if (!u || !v || !u2 || !v2) {
        fprintf(stderr, GS_NAME ": out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (long r = 0; r < rows; r++)
        for (long x = 0; x < L; x++) {
            gs_init_cell(L, x, lo - 1 + r, &u[r * L + x], &v[r * L + x]);
            u2[r * L + x] = u[r * L + x];
            v2[r * L + x] = v[r * L + x];
        }
    int up = rank > 0 ? rank - 1 : MPI_PROC_NULL;
    int down = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (long s = 0; s < steps; s++) {
        /* Halos: my first row goes up, my last row down. */
        MPI_Sendrecv(u + L, (int)L, MPI_DOUBLE, up, 0, u + (rows - 1) * L, (int)L,
                     MPI_DOUBLE, down, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Sendrecv(u + (rows - 2) * L, (int)L, MPI_DOUBLE, down, 1, u, (int)L,
                     MPI_DOUBLE, up, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Sendrecv(v + L, (int)L, MPI_DOUBLE, up, 2, v + (rows - 1) * L, (int)L,
                     MPI_DOUBLE, down, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Sendrecv(v + (rows - 2) * L, (int)L, MPI_DOUBLE, down, 3, v, (int)L,
                     MPI_DOUBLE, up, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
#pragma omp parallel for schedule(static)
        for (long r = 1; r < rows - 1; r++)
            gs_row(L, u + (r - 1) * L, u + r * L, u + (r + 1) * L,
                   v + (r - 1) * L, v + r * L, v + (r + 1) * L, u2 + r * L, v2 + r * L);
        double *t = u; u = u2; u2 = t;
        t = v; v = v2; v2 = t;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double t1 = MPI_Wtime();

    /* Gather the interior rows (and the fixed first and last rows) on 0. */
    double *gu = NULL, *gv = NULL;
    int *cnt = NULL, *dsp = NULL;
    if (rank == 0) {
        gu = malloc((size_t)L * L * sizeof *gu);
        gv = malloc((size_t)L * L * sizeof *gv);
        cnt = malloc((size_t)size * sizeof *cnt);
        dsp = malloc((size_t)size * sizeof *dsp);
        if (!gu || !gv || !cnt || !dsp) {
            fprintf(stderr, GS_NAME ": out of memory\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        for (int r = 0; r < size; r++) {
            long a = 1 + (L - 2) * r / size, b = 1 + (L - 2) * (r + 1) / size;
            cnt[r] = (int)((b - a) * L);
            dsp[r] = (int)(a * L);
        }
    }
    MPI_Gatherv(u + L, (int)((hi - lo) * L), MPI_DOUBLE, gu, cnt, dsp, MPI_DOUBLE, 0,
                MPI_COMM_WORLD);
    MPI_Gatherv(v + L, (int)((hi - lo) * L), MPI_DOUBLE, gv, cnt, dsp, MPI_DOUBLE, 0,
                MPI_COMM_WORLD);
    if (rank == 0) {
        for (long x = 0; x < L; x++) {
            gs_init_cell(L, x, 0, &gu[x], &gv[x]);
            gs_init_cell(L, x, L - 1, &gu[(L - 1) * L + x], &gv[(L - 1) * L + x]);
        }
        double sum = 0;
        for (long y = 0; y < L; y++)
            sum += gs_row_sum(L, y, gu + y * L, gv + y * L);
        printf(GS_NAME ": %d ranks x %d threads, L %ld, %ld steps, %.4f s, checksum %.17g\n",
               size, threads, L, steps, t1 - t0, sum);
        result(size, threads, L, steps, "mpi_s", t1 - t0, "s", 0);
        result(size, threads, L, steps, "checksum", sum, "sum", 1);
    }
    MPI_Finalize();
    return 0;
}
