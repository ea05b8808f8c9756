/*
 * matmul_mpi.c - C = AB in plain MPI, the baseline of paper 001's Fig. 3:
 * rank 0 fills A and B, MPI_Bcast sends both to every rank (MPICH's tree
 * broadcast), each rank multiplies its block of rows of C, and MPI_Gatherv
 * collects C on rank 0.  No libdsm.
 *
 * Time split as in matmul_omp.c: "bcast" = MPI_Bcast of A and B followed by
 * MPI_Barrier (until the slowest rank has them); "multiply" = the multiply
 * and the gather of C.  Medians of --reps repetitions.  Output: human lines,
 * then one JSON line per result (bench "matmul_mpi"; metrics mpi_bcast_s,
 * mpi_multiply_s, mpi_total_s, mpi_checksum, and mpi_bcast_bytes).
 *
 * Usage: mpiexec -n R matmul_mpi [--size N] [--reps K]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../json.h"
#include "matmul.h"

static void result(int ranks, long n, long reps, const char *metric, double v,
                   const char *unit, int exact)
{
    printf("{\"bench\":\"matmul_mpi\",\"metric\":");
    json_string(metric);
    printf(",\"value\":");
    json_number(v, exact);
    printf(",\"unit\":");
    json_string(unit);
    printf(",\"ranks\":%d,\"size\":%ld,\"reps\":%ld}\n", ranks, n, reps);
}

int main(int argc, char **argv)
{
    long n = 2000, reps = 3;
    int rank, size;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--size") && i + 1 < argc)
            n = atol(argv[++i]);
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atol(argv[++i]);
        else {
            if (rank == 0)
                fprintf(stderr, "usage: matmul_mpi [--size N] [--reps K]\n");
            MPI_Finalize();
            return 2;
        }
    }
    if (n < 1 || reps < 1 || n * n > 0x7fffffffL) {
        if (rank == 0)
            fprintf(stderr, "matmul_mpi: need 1 <= N <= 46340 and reps >= 1\n");
        MPI_Finalize();
        return 2;
    }
    size_t nn = (size_t)n * (size_t)n;
    double *a = malloc(nn * sizeof *a), *b = malloc(nn * sizeof *b);
    double *c = malloc(nn * sizeof *c);
    int *counts = malloc((size_t)size * sizeof *counts);
    int *displs = malloc((size_t)size * sizeof *displs);
    double *tb = malloc((size_t)reps * sizeof *tb), *tm = malloc((size_t)reps * sizeof *tm);
    double *tt = malloc((size_t)reps * sizeof *tt);
    if (!a || !b || !c || !counts || !displs || !tb || !tm || !tt) {
        fprintf(stderr, "matmul_mpi: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    /* The same split of rows as schedule(static) over the OpenMP team. */
    for (int r = 0; r < size; r++) {
        long lo = n * r / size, hi = n * (r + 1) / size;
        counts[r] = (int)((hi - lo) * n);
        displs[r] = (int)(lo * n);
    }
    long lo = n * rank / size, hi = n * (rank + 1) / size;
    int gen = 0;
    for (long rep = 0; rep < reps; rep++) {
        gen = (int)(rep % 2);
        if (rank == 0)
            for (long i = 0; i < n; i++)
                for (long k = 0; k < n; k++) {
                    a[i * n + k] = mm_a(i, k, gen);
                    b[i * n + k] = mm_b(i, k, gen);
                }
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        MPI_Bcast(a, (int)nn, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        MPI_Bcast(b, (int)nn, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);
        double t1 = MPI_Wtime();
        for (long i = lo; i < hi; i++) {
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
        if (rank == 0)
            MPI_Gatherv(MPI_IN_PLACE, 0, MPI_DOUBLE, c, counts, displs, MPI_DOUBLE, 0,
                        MPI_COMM_WORLD);
        else
            MPI_Gatherv(c + lo * n, counts[rank], MPI_DOUBLE, NULL, NULL, NULL, MPI_DOUBLE,
                        0, MPI_COMM_WORLD);
        double t2 = MPI_Wtime();
        tb[rep] = t1 - t0;
        tm[rep] = t2 - t1;
        tt[rep] = t2 - t0;
    }
    if (rank == 0) {
        double sum = mm_check(a, b, c, n, gen, "mpi");
        double mb = stats_median(tb, (size_t)reps), mm = stats_median(tm, (size_t)reps);
        double mt = stats_median(tt, (size_t)reps);
        printf("matmul_mpi: %d ranks, size %ld, bcast %.4f s, multiply %.4f s, total %.4f s "
               "(medians of %ld), checksum %.17g\n", size, n, mb, mm, mt, reps, sum);
        result(size, n, reps, "mpi_bcast_s", mb, "s", 0);
        result(size, n, reps, "mpi_multiply_s", mm, "s", 0);
        result(size, n, reps, "mpi_total_s", mt, "s", 0);
        result(size, n, reps, "mpi_checksum", sum, "sum", 1);
        result(size, n, reps, "mpi_bcast_bytes", (double)(2 * nn * sizeof(double)), "B", 0);
    }
    MPI_Finalize();
    return 0;
}
