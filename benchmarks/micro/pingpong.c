/*
 * pingpong.c - MPI ping-pong between ranks 0 and 1, no DSM: the half round
 * trip time per message size, the network part of dsmtool calibrate's
 * model of this machine (latency and per-byte cost).  Plain MPI, one
 * thread per process; rank 0 prints.
 *
 *   pingpong [--iters N] [--sizes 8,1024,16384,65536]
 *
 * Prints, last, one JSON line per size:
 *   {"bench":"pingpong","metric":"half_rtt_us","value":..,"unit":"us",
 *    "ranks":2,"bytes":16384,"iters":..,"mean_us":..}
 * value is the median over the timed round trips (the machine is shared:
 * the median resists descheduling), mean_us the mean.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mpi.h>

#include "../json.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    int rank, size, iters = 1000;
    const char *sizes = "8,1024,16384,65536";
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--iters") && i + 1 < argc) iters = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--sizes") && i + 1 < argc) sizes = argv[++i];
        else {
            if (rank == 0)
                fprintf(stderr, "pingpong: unknown option %s; usage: pingpong [--iters N] "
                        "[--sizes 8,1024,...]\n", argv[i]);
            MPI_Finalize();
            return 2;
        }
    }
    if (size < 2 || iters < 10) {
        if (rank == 0)
            fprintf(stderr, "pingpong: needs 2 ranks (mpiexec -n 2) and --iters >= 10\n");
        MPI_Finalize();
        return 2;
    }
    int bytes[16], ns = 0;
    char list[256];
    snprintf(list, sizeof list, "%s", sizes);
    for (char *tok = strtok(list, ","); tok && ns < 16; tok = strtok(NULL, ",")) {
        int b = atoi(tok);
        if (b >= 0 && b <= (1 << 22))
            bytes[ns++] = b;
    }
    double *t = malloc((size_t)iters * (size_t)(ns ? ns : 1) * sizeof *t);
    char *buf = malloc(1 << 22);
    /* The sizes take turns, so that a busy spell of the shared machine
     * touches them all alike; 100 untimed rounds first. */
    for (int i = -100; i < iters; i++)
        for (int k = 0; k < ns; k++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = now();
            if (rank == 0) {
                MPI_Send(buf, bytes[k], MPI_BYTE, 1, 1, MPI_COMM_WORLD);
                MPI_Recv(buf, bytes[k], MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else if (rank == 1) {
                MPI_Recv(buf, bytes[k], MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(buf, bytes[k], MPI_BYTE, 0, 1, MPI_COMM_WORLD);
            }
            if (i >= 0)
                t[(size_t)k * (size_t)iters + (size_t)i] = (now() - t0) * 0.5e6;
        }
    for (int k = 0; k < ns && rank == 0; k++) {
        double *v = t + (size_t)k * (size_t)iters;
        double mean = stats_mean(v, (size_t)iters), med = stats_median(v, (size_t)iters);
        printf("{\"bench\":\"pingpong\",\"metric\":\"half_rtt_us\",\"value\":");
        json_number(med, 0);
        printf(",\"unit\":\"us\",\"ranks\":%d,\"bytes\":%d,\"iters\":%d,\"mean_us\":",
               size, bytes[k], iters);
        json_number(mean, 0);
        printf("}\n");
    }
    free(t);
    free(buf);
    MPI_Finalize();
    return 0;
}
